"""Followed memories (issue 30, SPEC §14): how well "not followed" is found, and what the
check costs a turn.

**Quality.** ``benchmarks/corpora/followed.jsonl`` holds turns as capable models answer
them: a query, the answer (Markdown, code blocks, prose in English, German, French,
Spanish or Chinese) and the feedback/user memories injected into it, each labelled
``follows``, ``contradicts`` or ``untouched`` (``expected``), near misses among them
(pandas named only to say it is not used, the old code shown before its conversion, a
query that asks for the exception). Every (memory, answer) pair is judged twice:

* by the exact checks alone (:mod:`ipymemory.follow`; a memory they leave undecided has
  no verdict, so it is not found "not followed");
* by the whole check (:func:`ipymemory.turn.followed.judge`): the exact checks, then the
  side-query for the rest, through the real ``anthropic`` SDK against the scripted
  Messages-API server of ``tests/messages_server.py``. The server answers each checker
  request as a capable model would for the pairs it is sent: the label, or where the
  corpus says a model would slip (``model``), that verdict. So the second figure measures
  the routing, batching and validation around a model that is right most of the time,
  not the model.

"Not followed" is the verdict ``contradicts``: precision = found and true / found,
recall = found and true / true.

**Near misses** (issue 44). ``benchmarks/corpora/followed_near.jsonl``, same format:
memories that ask more than a check tests -- the right currency in the wrong unit or
precision ("€ M with one decimal" against "€388,910"), the right library through the
wrong API (polars read eagerly under "polars lazy frames"), the right language in the
wrong register or variety ("per Sie", "de usted", 简体/繁體, British spelling), a
number beside a style ("4 spaces", "two sentences"), a second ask joined to the first,
an ask that holds only somewhere ("for the German subsidiary", "in migration files") --
each beside an answer that keeps the whole ask. Reported for both corpora: precision
and recall of the exact checks' ``follows`` (an exact ``follows`` whose label is not
``follows`` is a missed memory logged as followed).

**Cost.** A 40-turn session like ``benchmarks/turn_cost.py``: an ``AgentSession`` over the
real SDK against the same server, the corpus's memories in the set (with six project notes
and ``memory_budget`` 0, so each turn's first request carries the keyword ranking's best
five), each turn one corpus query, the agent answering with that turn's answer (every
third turn reads a 3-6 KB file first), the extractor finding nothing, and each turn's own
follow-up check in its memory work. Every request is priced under the prompt-caching rules
of ``turn_cost.py`` (reads 0.1x, writes 1.25x, minimum cacheable 1024 tokens for the main
model and 2048 for the side model; tokens = bytes / 4). Reported: the checker's input cost
over the agent's (main calls), the same run.

Exit status 1 if a target is missed: precision of "not followed" >= 0.9 and recall >= 0.8
with the side model; precision of the exact checks' "follows" >= 0.98 on each corpus;
checker cost <= 0.1x the agent's input cost.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # the scripted server and its helpers
sys.path.insert(0, str(HERE))

import anthropic  # noqa: E402
from messages_server import MessagesServer, Scripted, text, tool_use  # noqa: E402
from turn_cost import PromptCache, prose  # noqa: E402
from turn_support import role_of  # noqa: E402

from ipymemory import AgentSession, AnthropicModel, MemoryRecord, MemoryStore  # noqa: E402
from ipymemory.follow import check_answer  # noqa: E402
from ipymemory.turn.config import SessionConfig  # noqa: E402
from ipymemory.turn.followed import judge  # noqa: E402

CORPUS = HERE / "corpora" / "followed.jsonl"
NEAR_CORPUS = HERE / "corpora" / "followed_near.jsonl"
TARGET_PRECISION = 0.9
TARGET_FOLLOWS_PRECISION = 0.98
TARGET_RECALL = 0.8
TARGET_COST = 0.1
_REASONS = {
    "contradicts": "goes against what it asks",
    "follows": "does what it asks",
    "untouched": "is about something else",
}


@dataclass(frozen=True)
class Pair:
    turn: str
    lang: str
    record: MemoryRecord
    expected: str
    model: str  # what the scripted model says when asked
    note: str


def load(path: Path) -> list[dict[str, Any]]:
    turns = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    for turn in turns:
        turn["records"] = [
            MemoryRecord(
                name=m["name"], type=m["type"], description=m["description"], body=m["body"]
            )
            for m in turn["memories"]
        ]
    return turns


def pairs_of(turn: dict[str, Any]) -> list[Pair]:
    return [
        Pair(
            turn["id"],
            turn["lang"],
            record,
            m["expected"],
            m.get("model", m["expected"]),
            m.get("note", ""),
        )
        for m, record in zip(turn["memories"], turn["records"], strict=True)
    ]


class CheckerScript:
    """The scripted model's checker replies: per asked memory, the corpus's verdict."""

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        self.by_answer: dict[tuple[str, str], dict[str, Pair]] = {}
        for t in turns:  # turns may share an answer and query, never a memory
            self.by_answer.setdefault((t["answer"], t["query"]), {}).update(
                {p.record.name: p for p in pairs_of(t)}
            )
        self.asked: list[int] = []

    def reply(self, body: dict[str, Any]) -> Scripted:
        data = json.loads(body["messages"][0]["content"])
        query = re.sub(r"^turn \d+: ", "", data["query"])  # the cost session's queries
        pairs = self.by_answer[(data["answer"], query)]
        self.asked.append(len(data["memories"]))
        verdicts = []
        for memory in data["memories"]:
            pair = pairs.get(memory["name"])
            if pair is None:  # the cost session's ranking brought another turn's memory
                verdicts.append({"name": memory["name"], "verdict": "untouched", "reason": "-"})
                continue
            reason = pair.note if pair.model == pair.expected and pair.note else ""
            verdicts.append(
                {
                    "name": memory["name"],
                    "verdict": pair.model,
                    "reason": reason or _REASONS[pair.model],
                }
            )
        tokens = 16 * len(verdicts) + 4
        return text(
            json.dumps(verdicts, ensure_ascii=False),
            usage={"input_tokens": len(body["messages"][0]["content"]) // 4,
                   "output_tokens": tokens},
        )  # fmt: skip


# --- quality --------------------------------------------------------------------------


def quality(turns: list[dict[str, Any]], model: AnthropicModel) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for turn in turns:
        exact, _ = check_answer(turn["records"], turn["answer"], turn["query"])
        whole = judge(model, turn["records"], turn["answer"], turn["query"])
        assert whole.error is None, whole.error
        full = {v.name: v for v in whole.verdicts}
        for pair in pairs_of(turn):
            alone = exact.get(pair.record.name)
            both = full[pair.record.name]
            rows.append(
                {
                    "turn": pair.turn,
                    "lang": pair.lang,
                    "name": pair.record.name,
                    "expected": pair.expected,
                    "exact": alone.verdict if alone else None,
                    "whole": both.verdict,
                    "by": both.by,
                    "reason": both.reason,
                }
            )
    return {
        "pairs": len(rows),
        "turns": len(turns),
        "labels": dict(Counter(r["expected"] for r in rows)),
        "languages": dict(Counter(r["lang"] for r in rows)),
        "exact": _scores(rows, "exact"),
        "whole": _scores(rows, "whole"),
        "exact_follows": _scores(rows, "exact", "follows"),
        "decided_by": dict(Counter(r["by"] for r in rows)),
        "exact_wrong": [r for r in rows if r["exact"] and r["exact"] != r["expected"]],
        "whole_wrong": [r for r in rows if r["whole"] != r["expected"]],
        "by_language": {
            lang: _scores([r for r in rows if r["lang"] == lang], "whole")
            for lang in sorted({r["lang"] for r in rows})
        },
    }


def _scores(rows: list[dict[str, Any]], key: str, verdict: str = "contradicts") -> dict[str, Any]:
    found = [r for r in rows if r[key] == verdict]
    true = [r for r in rows if r["expected"] == verdict]
    hit = [r for r in found if r["expected"] == verdict]
    return {
        "found": len(found),
        "true": len(true),
        "hit": len(hit),
        "precision": len(hit) / len(found) if found else 1.0,
        "recall": len(hit) / len(true) if true else 1.0,
        "decided": sum(1 for r in rows if r[key] is not None),
        "agree": sum(1 for r in rows if r[key] == r["expected"]),
    }


# --- cost -----------------------------------------------------------------------------


@dataclass
class SessionScript:
    """The session's model: the agent answers with the turn's answer, the extractor
    finds nothing, the checker as above."""

    turns: list[dict[str, Any]]
    checker: CheckerScript

    def respond(self, body: dict[str, Any]) -> Scripted:
        kind = role_of(body)
        if kind == "checker":
            return self.checker.reply(body)
        if kind == "extractor":
            return text("[]")
        assert kind == "main", kind
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            query = _query_of(body)
            return text(self._turn(query)["answer"])
        query = _query_of(body)
        turn = self._turn(query)
        n = int(query.split(":", 1)[0].removeprefix("turn "))
        if n % 3 == 0:
            return tool_use("read_file", {"path": f"doc{n % 5}.md"}, text_before="Let me check.")
        return text(turn["answer"])

    def _turn(self, query: str) -> dict[str, Any]:
        n = int(query.split(":", 1)[0].removeprefix("turn "))
        return self.turns[n % len(self.turns)]


def _query_of(body: dict[str, Any]) -> str:
    for message in reversed(body["messages"]):
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str) and content.startswith("turn "):
            return content
        if isinstance(content, list):
            for block in content:
                t = block.get("text", "")
                if block.get("type") == "text" and t.startswith("turn "):
                    return str(t)
    raise AssertionError("no query in the request")


def cost(turns: list[dict[str, Any]], count: int, server: MessagesServer) -> dict[str, Any]:
    checker = CheckerScript(turns)
    script = SessionScript(turns, checker)
    server.responder = script.respond
    first = len(server.requests)
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        for i in range(5):
            (workspace / f"doc{i}.md").write_text(prose(100 + i, 3000 + 700 * i))
        memories = {r.name: r for t in turns for r in t["records"]}
        facts = [
            MemoryRecord(
                name=f"fact-{i}",
                type="project",
                description=f"Pipeline fact number {i} about exports and reports",
                body=prose(200 + i, 300),
            )
            for i in range(6)
        ]
        MemoryStore(workspace, max_index_bytes=16 * 1024).extend([*memories.values(), *facts])
        client = anthropic.Anthropic(
            base_url=server.base_url, api_key="bench", max_retries=0, timeout=30
        )
        model = AnthropicModel(
            "claude-sonnet-bench", side_model="claude-haiku-bench", client=client
        )
        session = AgentSession(
            # memory_budget 0: each turn's first request carries the keyword ranking's
            # best max_selected (issue 40: no side-query before the answer).
            workspace, model=model,
            config=SessionConfig(commit_mode="auto", memory_budget=0),
            store=MemoryStore(workspace, max_index_bytes=16 * 1024),
        )  # fmt: skip
        called = 0
        for n in range(count):
            turn = turns[n % len(turns)]
            before = len(server.requests)
            # The turn runs its own check, in its memory work (SPEC §14), when its first
            # request carried a feedback or user memory.
            result = session.run_turn(f"turn {n}: {turn['query']}")
            assert not result.memory_errors
            called += any(role_of(r) == "checker" for r in server.requests[before:])
    requests = server.requests[first:]
    caches = {"main": PromptCache(1024), "side": PromptCache(2048)}
    units: dict[str, float] = defaultdict(float)
    counts: Counter[str] = Counter()
    for request in requests:
        kind = role_of(request)
        units[kind] += caches["main" if kind == "main" else "side"].price(request)[0]
        counts[kind] += 1
    return {
        "turns": count,
        "checker_calls": called,
        "memories_per_call": sum(checker.asked) / len(checker.asked) if checker.asked else 0,
        "requests": dict(counts),
        "input_cost": dict(units),
        "checker_vs_agent": units["checker"] / units["main"],
        "per_turn": {kind: value / count for kind, value in units.items()},
    }


# --- report ---------------------------------------------------------------------------


def run(args: argparse.Namespace) -> dict[str, Any]:
    turns = load(Path(args.corpus))
    near = load(Path(args.near)) if args.near else []
    server = MessagesServer().start()
    try:
        checker = CheckerScript(turns)
        server.responder = checker.reply
        client = anthropic.Anthropic(
            base_url=server.base_url, api_key="bench", max_retries=0, timeout=30
        )
        model = AnthropicModel(
            "claude-sonnet-bench", side_model="claude-haiku-bench", client=client
        )
        result = {"quality": quality(turns, model), "checker_calls": len(checker.asked)}
        if near:
            server.responder = CheckerScript(near).reply
            result["near"] = quality(near, model)
        result["cost"] = cost(turns, args.turns, server)
    finally:
        server.stop()
    q, c = result["quality"]["whole"], result["cost"]
    corpora = [result["quality"], *([result["near"]] if near else [])]
    result["ok"] = {
        "precision": q["precision"] >= TARGET_PRECISION,
        "recall": q["recall"] >= TARGET_RECALL,
        "follows_precision": all(
            k["exact_follows"]["precision"] >= TARGET_FOLLOWS_PRECISION for k in corpora
        ),
        "cost": c["checker_vs_agent"] <= TARGET_COST,
    }
    return result


def print_report(result: dict[str, Any]) -> None:
    q = result["quality"]
    print(
        f"{q['pairs']} (memory, answer) pairs in {q['turns']} turns; labels {q['labels']}; "
        f"languages {q['languages']}"
    )
    print()
    print('| judged by | decided | "not followed" found | true | precision | recall | agree |')
    print("|---|---|---|---|---|---|---|")
    for label, key in (("exact checks alone", "exact"), ("exact + side model", "whole")):
        s = q[key]
        print(
            f"| {label} | {s['decided']} | {s['found']} | {s['true']} | "
            f"**{s['precision']:.3f}** | **{s['recall']:.3f}** | {s['agree']} |"
        )
    print(f"\nfinal verdicts by: {q['decided_by']}; checker requests: {result['checker_calls']}")
    print("per language (exact + side model):")
    for lang, s in q["by_language"].items():
        print(
            f"  {lang}: precision {s['precision']:.3f}, recall {s['recall']:.3f} "
            f"({s['hit']}/{s['true']} found, {s['found'] - s['hit']} false)"
        )
    if q["exact_wrong"]:
        print("exact verdicts that disagree with the label:")
        for r in q["exact_wrong"]:
            print(f"  {r['turn']} {r['name']}: {r['exact']} (label {r['expected']})")
    misses = [r for r in q["whole_wrong"] if "contradicts" in (r["whole"], r["expected"])]
    print(f'final verdicts that disagree on "not followed": {len(misses)}')
    for r in misses:
        print(f"  {r['turn']} {r['name']}: {r['whole']} by {r['by']} (label {r['expected']})")
    near = result.get("near")
    if near is not None:
        print(
            f"\nnear misses: {near['pairs']} pairs in {near['turns']} turns; labels "
            f"{near['labels']}; languages {near['languages']}"
        )
        print(
            f'"not followed" -- exact checks alone: precision {near["exact"]["precision"]:.3f}, '
            f"recall {near['exact']['recall']:.3f}; exact + side model: precision "
            f"{near['whole']['precision']:.3f}, recall {near['whole']['recall']:.3f}"
        )
    print('\n| exact "follows" | found | true follows | precision | recall |')
    print("|---|---|---|---|---|")
    for label, data in (("corpus", q), ("near misses", near)):
        if data is not None:
            f = data["exact_follows"]
            print(
                f"| {label} | {f['found']} | {f['true']} | **{f['precision']:.3f}** | "
                f"{f['recall']:.3f} |"
            )
    if near is not None:
        for r in near["exact_wrong"]:
            print(f"  near {r['turn']} {r['name']}: exact {r['exact']} (label {r['expected']})")
    c = result["cost"]
    print()
    print(
        f"{c['turns']}-turn session: checker called on {c['checker_calls']} turns, "
        f"{c['memories_per_call']:.1f} memories a call; requests {c['requests']}"
    )
    per = c["per_turn"]
    print(
        "input cost per turn (tokens, cache-priced): "
        + ", ".join(f"{k} {v:.0f}" for k, v in sorted(per.items()))
    )
    ok = result["ok"]
    mark = {True: "ok", False: "MISSED"}
    print(
        f"\ntargets: precision >= {TARGET_PRECISION} {mark[ok['precision']]}; recall >= "
        f"{TARGET_RECALL} {mark[ok['recall']]}; exact follows precision >= "
        f"{TARGET_FOLLOWS_PRECISION} {mark[ok['follows_precision']]}; checker / agent input "
        f"cost {c['checker_vs_agent']:.3f} <= {TARGET_COST} {mark[ok['cost']]}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=str(CORPUS))
    parser.add_argument(
        "--near", default=str(NEAR_CORPUS), help="the near misses ('' to leave them out)"
    )
    parser.add_argument("--turns", type=int, default=40, help="turns of the cost session")
    parser.add_argument("--quick", action="store_true", help="an 8-turn cost session (the test)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.turns = 8
    result = run(args)
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        print_report(result)
    return 0 if all(result["ok"].values()) or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
