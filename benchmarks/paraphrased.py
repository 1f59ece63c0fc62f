"""What reaches the agent when the question is in other words or another language than
its record (issue 40, SPEC §13), through real turns.

    python benchmarks/paraphrased.py            # 42 scenes x 2 selectors x 2 shapes, ~6 min
    python benchmarks/paraphrased.py --quick    # 8 scenes, short delays (what the test runs)
    python benchmarks/paraphrased.py --json

The corpus, ``benchmarks/corpora/paraphrased.jsonl``, one scene a line (``//`` lines are
comments)::

    id        str   unique in the file
    lang      str   the question's language (ISO 639-1)
    kind      str   "paraphrase" (other words, the record's language) | "translated"
                    (the question, or the record, in another language)
    record    obj   the one record that answers it: name, type, description, body
    question  str   the user's message

Each scene is a set past the memory budget: ``--fillers`` project records (200: notes
on exports, tests, dashboards, owners ... in a data team's words) with the scene's
record among the older ones. Every turn is an ``AgentSession`` turn with the package's
settings but the selector, through the real ``anthropic`` SDK against the scripted
Messages-API server of ``tests/messages_server.py``: side-queries answer after
``--side-delay`` s, the agent's first token after ``--main-delay`` s. The side model's
pick is scripted as a capable model's: it names the scene's record when its catalog
shows it (and one filler). Two shapes of turn: the agent answers at once
(``answer``), or reads the directory first (``tool``: a second request follows its
tool result), then the user asks a follow-up (the next turn).

Per selector (``keyword``: the ranking alone; ``model``: the ranking at once and the
model's pick beside the agent's call) and shape, the share of scenes whose record
reached the agent: in the turn's first request, by its final answer (any request of
the turn), and by the next turn's first request; and the first visible token (the
first streamed text) with the selector against ``keyword``, medians.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # the scripted server and its helpers
sys.path.insert(0, str(HERE))

import anthropic  # noqa: E402
from messages_server import MessagesServer, Scripted, text, tool_use  # noqa: E402
from scenes import CORPORA, CorpusError, keys, load_named, nonempty  # noqa: E402
from turn_support import carried_names, role_of, selector_input  # noqa: E402

from ipymemory import AgentSession, AnthropicModel, MemoryRecord, MemoryStore  # noqa: E402
from ipymemory.turn.config import SessionConfig  # noqa: E402

KINDS = ("paraphrase", "translated")
SHAPES = ("answer", "tool")
SELECTORS = ("keyword", "model")

_SUBJECTS = (
    "nightly export", "revenue dashboard", "customer churn model", "invoice loader",
    "marketing attribution", "warehouse schema", "survey cleaning", "forecast notebook",
    "sensor ingest", "pricing experiment", "support ticket triage", "inventory sync",
)  # fmt: skip
_FACTS = (
    ("writes parquet files to s3://lake/{s}", "The {s} job writes partitioned parquet."),
    ("runs after the warehouse load finishes", "The {s} waits for the 03:00 load."),
    ("is owned by the analytics guild", "Questions about the {s} go to the analytics guild."),
    ("reads its parameters from environment variables", "No config file: the {s} uses env."),
    ("has a smoke test in tests/smoke", "Run the {s} smoke test before merging."),
    ("drops rows with missing identifiers", "The {s} silently drops null ids; log counts."),
    ("caches intermediate frames in .cache", "Delete .cache when the {s} schema changes."),
    ("was rewritten in the spring sprint", "The old {s} code lives on the legacy branch."),
    ("exposes metrics on the Grafana board", "Watch the {s} panel for lag."),
    ("must finish before 07:00", "Downstream reports read the {s} output at 07:00."),
    ("uses a fixed random seed of 42", "Reproducibility: the {s} seeds numpy with 42."),
    ("is documented in docs/{s}.md", "The {s} runbook is docs/{s}.md."),
    ("logs to the shared ELK index", "Search the {s} logs in the data-* index."),
    ("retries three times on network errors", "The {s} gives up after three retries."),
    ("deduplicates on the event hash", "The {s} keeps the first row per event hash."),
    ("samples ten percent in staging", "Staging runs of the {s} use a 10% sample."),
    ("is scheduled by Airflow", "The {s} DAG is in dags/; trigger it there."),
)  # fmt: skip


@dataclass(frozen=True)
class Scene:
    id: str
    lang: str
    kind: str
    record: MemoryRecord
    question: str

    @property
    def name(self) -> str:  # what load_named keeps unique
        return self.id


def scene_from_json(data: Any, where: str) -> Scene:
    """One scene from its JSON object (see the module docstring)."""
    keys(data, where, {"id", "lang", "kind", "record", "question"}, set())
    if data["kind"] not in KINDS:
        raise CorpusError(f"{where}.kind: one of {', '.join(KINDS)}")
    try:
        record = MemoryRecord(**data["record"])
    except (TypeError, ValueError) as e:
        raise CorpusError(f"{where}.record: {e}") from e
    return Scene(
        nonempty(data["id"], f"{where}.id"),
        nonempty(data["lang"], f"{where}.lang"),
        data["kind"],
        record,
        nonempty(data["question"], f"{where}.question"),
    )


def fillers(n: int) -> list[MemoryRecord]:
    """``n`` distinct project notes in a data team's words (deterministic)."""
    out = []
    for i in range(n):
        subject = _SUBJECTS[i % len(_SUBJECTS)]
        fact, body = _FACTS[(i // len(_SUBJECTS)) % len(_FACTS)]
        slug = re.sub(r"[^a-z0-9]+", "-", subject).strip("-")
        out.append(
            MemoryRecord(
                name=f"{slug}-{i}",
                type="project",
                description=f"The {subject} {fact.format(s=slug)}",
                body=body.format(s=subject) + f" (note {i})",
            )
        )
    return out


@dataclass
class Script:
    """The scripted models of one scene's turns."""

    gold: str
    shape: str
    side: float
    main: float
    stream: float

    def respond(self, body: dict[str, Any]) -> Scripted:
        role = role_of(body)
        if role == "selector":
            shown = re.findall(r"^- \[([a-z0-9-]+)\]", selector_input(body)["catalog"], re.M)
            picks = [name for name in (self.gold, shown[0]) if name in shown]
            return text(json.dumps(picks), delay=self.side)
        if role == "checker":
            memories = json.loads(body["messages"][0]["content"])["memories"]
            verdicts = [
                {"name": m["name"], "verdict": "untouched", "reason": "-"} for m in memories
            ]
            return text(json.dumps(verdicts), delay=self.side)
        if role != "main":
            return text("[]", delay=self.side)  # the extractor: nothing new
        answer = "Here is what I found in your notes, briefly."
        pieces = len(answer.split())
        timing = {"delay": self.main, "chunk_delay": self.stream / pieces}
        last = body["messages"][-1]["content"]
        after_tool = isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)
        if self.shape == "tool" and not after_tool and len(body["messages"]) == 1:
            return tool_use("list_files", {}, **timing)
        return text(answer, **timing)


def run_scene(
    scene: Scene, selector: str, shape: str, args: argparse.Namespace, server: MessagesServer
) -> dict[str, Any]:
    gold = scene.record.name
    script = Script(gold, shape, args.side_delay, args.main_delay, args.stream_seconds)
    server.responder = script.respond
    with tempfile.TemporaryDirectory() as tmp:
        notes = fillers(args.fillers)
        at = random.Random(scene.id).randrange(args.fillers // 5, args.fillers // 2)
        MemoryStore(tmp).extend([*notes[:at], scene.record, *notes[at:]])
        client = anthropic.Anthropic(
            base_url=server.base_url, api_key="bench", max_retries=0, timeout=30
        )
        model = AnthropicModel(
            "claude-sonnet-bench", side_model="claude-haiku-bench", client=client
        )
        config = SessionConfig(commit_mode="off", selector=selector, user_dir=None)
        session = AgentSession(tmp, model=model, config=config)
        first_text: list[float] = []
        start = time.monotonic()
        before = len(server.requests)

        def listen(event: Any) -> None:
            if event.kind == "text" and not first_text:
                first_text.append(time.monotonic() - start)

        result = session.run_turn(scene.question, on_event=listen)
        mains = [r for r in server.requests[before:] if role_of(r) == "main"]
        first = gold in carried_names(mains[0])
        seen = any(gold in carried_names(r) for r in mains)
        before = len(server.requests)
        session.run_turn("Thanks. Anything else I should keep in mind?")
        nxt = next(r for r in server.requests[before:] if role_of(r) == "main")
        pick = result.trace.pick if result.trace is not None else None
        return {
            "first": first,
            "seen": seen,
            "next": gold in carried_names(nxt),
            "first_token_s": first_text[0] if first_text else None,
            "pick_s": pick.seconds if pick is not None else None,
            "joined": pick.joined if pick is not None else None,
        }


def run(args: argparse.Namespace) -> dict[str, Any]:
    scenes = load_named(args.corpus, scene_from_json)
    if args.quick:
        scenes = scenes[:: max(len(scenes) // 8, 1)][:8]
    server = MessagesServer().start()
    rows: dict[str, list[dict[str, Any]]] = {}
    try:
        for scene in scenes:
            for shape in SHAPES:
                for selector in SELECTORS:
                    got = run_scene(scene, selector, shape, args, server)
                    rows.setdefault(f"{selector} {shape}", []).append(
                        {**got, "id": scene.id, "kind": scene.kind, "lang": scene.lang}
                    )
    finally:
        server.stop()
    return report(rows, len(scenes), args)


def _share(rows: list[dict[str, Any]], key: str) -> float:
    return sum(1 for r in rows if r[key]) / len(rows) if rows else 0.0


def report(
    rows: dict[str, list[dict[str, Any]]], scenes: int, args: argparse.Namespace
) -> dict[str, Any]:
    out: dict[str, Any] = {"scenes": scenes, "fillers": args.fillers, "rows": {}}
    for label, found in rows.items():
        tokens = [r["first_token_s"] for r in found if r["first_token_s"] is not None]
        picks = [r["pick_s"] for r in found if r["pick_s"] is not None]
        out["rows"][label] = {
            "first_request": _share(found, "first"),
            "by_the_answer": _share(found, "seen"),
            "next_turn": _share(found, "next"),
            "first_token_s": statistics.median(tokens) if tokens else None,
            "pick_arrived_s": statistics.median(picks) if picks else None,
            "per_kind": {
                kind: {
                    "by_the_answer": _share([r for r in found if r["kind"] == kind], "seen"),
                    "next_turn": _share([r for r in found if r["kind"] == kind], "next"),
                }
                for kind in KINDS
            },
            "missed_by_the_answer": [r["id"] for r in found if not r["seen"]],
        }
    for shape in SHAPES:
        model, keyword = out["rows"][f"model {shape}"], out["rows"][f"keyword {shape}"]
        if model["first_token_s"] and keyword["first_token_s"]:
            model["first_token_vs_keyword"] = model["first_token_s"] / keyword["first_token_s"]
    return out


def print_report(result: dict[str, Any]) -> None:
    print(
        f"{result['scenes']} scenes, each in a set of {result['fillers'] + 1} records; "
        "share of scenes whose record reached the agent\n"
    )
    print(
        "| selector | turn | first request | by the answer | next turn's first request "
        "| first token | pick arrived |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, row in result["rows"].items():
        selector, shape = label.split()
        token = row["first_token_s"]
        pick = row["pick_arrived_s"]
        ratio = row.get("first_token_vs_keyword")
        print(
            f"| {selector} | {shape} | {row['first_request']:.2f} | **{row['by_the_answer']:.2f}** "
            f"| {row['next_turn']:.2f} | {token:.3f} s"
            + (f" ({ratio:.3f}x keyword)" if ratio else "")
            + f" | {'-' if pick is None else f'{pick:.3f} s'} |"
        )
    print()
    for label, row in result["rows"].items():
        kinds = ", ".join(
            f"{kind} {v['by_the_answer']:.2f} / next {v['next_turn']:.2f}"
            for kind, v in row["per_kind"].items()
        )
        print(f"{label}: {kinds}; missed by the answer: {', '.join(row['missed_by_the_answer'])}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPORA / "paraphrased.jsonl")
    parser.add_argument("--fillers", type=int, default=200, help="other records in each set")
    parser.add_argument("--side-delay", type=float, default=0.3, help="seconds per side-query")
    parser.add_argument("--main-delay", type=float, default=0.8, help="agent's first token, s")
    parser.add_argument("--stream-seconds", type=float, default=0.3, help="streaming, s")
    parser.add_argument("--quick", action="store_true", help="8 scenes, short delays (the test)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    if args.quick:
        args.side_delay, args.main_delay, args.stream_seconds = 0.05, 0.15, 0.05
    result = run(args)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_report(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
