"""What a turn costs and when its answer shows (issue 13), on a scripted session.

A 40-turn session runs through the real ``anthropic`` SDK against the local scripted
Messages-API server (``tests/messages_server.py``), with model delays: side-queries
answer after ``--side-delay`` s, the main model's first token comes after
``--main-delay`` s and its text then streams over ``--stream-seconds`` s. Every third
turn reads a file (3-6 KB) first; the selector picks a different pair of memories on
most turns; every fourth turn the extractor proposes a record (commit mode auto), so
the set crosses the consolidation threshold.

From the requests the server received, the same run also builds what the previous
behaviour would have sent for the same transcript (the memory block in the system
prompt after the cached instructions, one breakpoint on the request's last message;
the extractor re-reading the whole canonical history every turn; consolidation on
every extracting turn at the threshold), and prices both under Anthropic's documented
prompt-caching rules: tools, system and messages form one prefix in that order; a
``cache_control`` breakpoint caches the prefix up to its block if that prefix has at
least the model's minimum cacheable length (``--min-main`` / ``--min-side`` tokens); a
request reads the longest cached prefix that ends at one of its breakpoints or at one
of the 20 block boundaries before it; read tokens cost 0.1x, written ones 1.25x, the
rest 1x (5-minute TTL, never reached here). Tokens = bytes / 4 (no tokenizer).

Each turn is an ``%%agent`` cell run by a real IPython ``InteractiveShell`` (the
extension loaded, the model pinned with ``use_model``), whose display publisher notes
when each output is published. Times per turn, from one clock: the server's moment the
last main reply was fully sent (the model's last token), the moment the cell published
the complete answer as Markdown (the answer visible), the cell's end: before the
answer, to the answer visible, after the answer (the memory work).

Issue 18: the extractor's input cost over the agent's (main calls), priced the same
way in the same run, and the same over the same cursor's requests rebuilt with every
tool input and output whole (what was sent before they were bounded).

Exit status 1 if a target is missed: extractor bytes <= 0.25x whole-history
extraction, main-call input cost <= 0.4x the block-in-system placement, answer visible
<= 50 ms after the model's last token on every turn, extractor input cost <= 0.4x the
agent's.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import hashlib
import io
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the scripted server and its helpers

import anthropic  # noqa: E402
from IPython.core.displaypub import CapturingDisplayPublisher  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from messages_server import MessagesServer, Scripted, text, tool_use  # noqa: E402
from turn_support import role_of, selector_input  # noqa: E402

from ipymemory import MemoryRecord, MemoryStore  # noqa: E402
from ipymemory import _constants as C  # noqa: E402
from ipymemory.model import AnthropicModel  # noqa: E402
from ipymemory.notebook import get_session, use_model  # noqa: E402
from ipymemory.sidequery.extract import extractor_messages  # noqa: E402
from ipymemory.store.index import render_catalog  # noqa: E402

TARGET_EXTRACT_BYTES = 0.25
TARGET_MAIN_COST = 0.4
TARGET_VISIBLE_MS = 50.0
TARGET_EXTRACT_VS_AGENT = 0.4  # issue 18: extractor input cost / the agent's, same units
LOOKBACK_BLOCKS = 20
WORDS = [
    "the",
    "data",
    "pipeline",
    "loads",
    "daily",
    "exports",
    "from",
    "the",
    "warehouse",
    "and",
    "checks",
    "every",
    "column",
    "against",
    "the",
    "schema",
    "before",
    "the",
    "report",
    "job",
    "aggregates",
    "revenue",
    "by",
    "region",
    "and",
    "month",
    "while",
    "the",
    "notebook",
    "keeps",
    "a",
    "cache",
    "of",
    "intermediate",
    "frames",
    "for",
    "quick",
    "iteration",
]


def prose(seed: int, chars: int) -> str:
    words, n = [], seed
    while sum(len(w) + 1 for w in words) < chars:
        n = (n * 1103515245 + 12345) % 2**31
        words.append(WORDS[n % len(WORDS)])
    return " ".join(words)


# --- the priced cache ----------------------------------------------------------------


def _blocks(request: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request's prefix blocks in cache order (tools, system, messages): each one's
    JSON without its cache mark, and whether it carries a breakpoint."""
    out: list[tuple[str, bool]] = []

    def add(block: Any) -> None:
        if isinstance(block, dict):
            mark = "cache_control" in block
            block = {k: v for k, v in block.items() if k != "cache_control"}
        else:
            mark = False
        out.append((json.dumps(block, sort_keys=True, ensure_ascii=False), mark))

    for tool in request.get("tools") or []:
        add(tool)
    system = request.get("system")
    for block in [system] if isinstance(system, str) else system or []:
        add(block)
    for message in request["messages"]:
        content = message["content"]
        # A string is the API's shorthand for one text block: the same prefix either way.
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            add(block)
    return out


@dataclass
class PromptCache:
    """One model's cache: prefix digests written so far (see the module docstring)."""

    min_tokens: int
    written: set[str] = field(default_factory=set)

    def price(self, request: dict[str, Any]) -> tuple[float, int, int, int]:
        """(cost in input-token units, uncached, written, read tokens) of a request."""
        blocks = _blocks(request)
        digest, digests, tokens, cumulative = hashlib.sha256(), [], 0, []
        for body, _ in blocks:
            digest.update(body.encode())
            digests.append(digest.copy().hexdigest())
            tokens += len(body.encode()) / 4
            cumulative.append(tokens)
        marks = [i for i, (_, mark) in enumerate(blocks) if mark]
        hit = -1
        for b in marks:
            for k in range(b, max(b - LOOKBACK_BLOCKS, 0) - 1, -1):
                if digests[k] in self.written:
                    hit = max(hit, k)
                    break
        read = cumulative[hit] if hit >= 0 else 0.0
        eligible = [b for b in marks if cumulative[b] >= self.min_tokens]
        last = max(eligible, default=-1)
        write = cumulative[last] - read if last > hit else 0.0
        self.written.update(digests[b] for b in eligible)
        uncached = tokens - read - write
        cost = uncached + 1.25 * write + 0.1 * read
        return cost, round(uncached), round(write), round(read)


# --- the previous behaviour, rebuilt from the requests sent ----------------------------


def _is_block(block: Any) -> bool:
    return isinstance(block, dict) and str(block.get("text", "")).startswith("<relevant_memories>")


_OPEN, _CLOSE = "<relevant_memories>", "</relevant_memories>"


def sections_of(block: str) -> dict[str, str]:
    """Name -> section of a memory block (record text cannot forge a header line)."""
    inner = block[len(_OPEN) : len(block) - len(_CLOSE)].strip("\n")
    parts = ("\n\n" + inner).split("\n\n## ")[1:]
    return {part.split(" ", 1)[0]: f"## {part}" for part in parts}


def render_block(sections: list[str]) -> str:
    return "\n\n".join([_OPEN, *sections, _CLOSE]) if sections else ""


def carried_block(request: dict[str, Any]) -> str:
    """The records a request carries, as one block (each record once, as last given)."""
    sections: dict[str, str] = {}
    for message in request["messages"]:
        if isinstance(message["content"], list):
            for block in message["content"]:
                if _is_block(block):
                    sections.update(sections_of(block["text"]))
    return render_block(list(sections.values()))


def old_main_request(request: dict[str, Any], history: list[dict[str, Any]]) -> dict[str, Any]:
    """The same request as round 1's placement sent it: the canonical messages (no
    compression happens in this run) with a breakpoint on the last one, and the records
    the request carries in one block after the cached system prompt."""
    block = carried_block(request)
    messages = copy.deepcopy(history[: len(request["messages"])])
    last = messages[-1]
    content = last["content"]
    marked = [{"type": "text", "text": content}] if isinstance(content, str) else content
    marked[-1] = {**marked[-1], "cache_control": {"type": "ephemeral"}}
    messages[-1] = {**last, "content": marked}
    system = [*request["system"], *([{"type": "text", "text": block}] if block else [])]
    return {**request, "system": system, "messages": messages}


# --- issue 40's other option: a compact catalog in the cached prefix, and a read tool --


READ_TOOL = {
    "name": "memory_read",
    "description": "Read memories by name (their bodies); the catalog is in the system prompt.",
    "input_schema": {
        "type": "object",
        "properties": {"names": {"type": "array", "items": {"type": "string"}}},
        "required": ["names"],
    },
}


def catalog_requests(
    request: dict[str, Any], history: list[dict[str, Any]], catalog: str
) -> list[dict[str, Any]]:
    """The same request under the catalog placement (Claude Code's own: MEMORY.md in the
    system prompt): the set's catalog after the cached system prompt, with a breakpoint
    (a commit changes it, and everything after it), and instead of each memory block
    the agent reading those records with a tool where the block was given -- a
    ``memory_read`` call and its result in the history. Returned: the request, after the
    requests that asked for each read of the turn's own (one more model call each)."""
    messages = copy.deepcopy(history[: len(request["messages"])])
    given: dict[int, list[str]] = {}
    for i, message in enumerate(request["messages"]):
        if isinstance(message["content"], list):
            found = [b["text"] for b in message["content"] if _is_block(b)]
            if found:
                given[i] = found
    out: list[dict[str, Any]] = []
    rebuilt: list[dict[str, Any]] = []
    system = [
        *request["system"],
        {"type": "text", "text": catalog, "cache_control": {"type": "ephemeral"}},
    ]
    tools = [*(request.get("tools") or []), READ_TOOL]
    last_turn = max(
        (
            i
            for i, m in enumerate(messages)
            if m["role"] == "user" and isinstance(m["content"], str)
        ),
        default=0,
    )
    for i, message in enumerate(messages):
        rebuilt.append(message)
        for j, block in enumerate(given.get(i, [])):
            names = list(sections_of(block))
            use_id = f"toolu_read_{i}_{j}"
            if i >= last_turn:  # this turn's read: the call that asked for it
                out.append(
                    {**request, "system": system, "tools": tools, "messages": _marked_last(rebuilt)}
                )
            rebuilt.append(
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": use_id,
                            "name": "memory_read",
                            "input": {"names": names},
                        }
                    ],
                }
            )
            rebuilt.append(
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": use_id, "content": block}],
                }
            )
    out.append({**request, "system": system, "tools": tools, "messages": _marked_last(rebuilt)})
    return out


def _marked_last(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    messages = copy.deepcopy(messages)
    last = messages[-1]
    content = last["content"]
    marked = [{"type": "text", "text": content}] if isinstance(content, str) else content
    marked[-1] = {**marked[-1], "cache_control": {"type": "ephemeral"}}
    messages[-1] = {**last, "content": marked}
    return messages


# --- the scripted session --------------------------------------------------------------


@dataclass
class Script:
    side_delay: float
    main_delay: float
    stream_seconds: float
    extracted: dict[int, int] = field(default_factory=dict)  # turn -> items proposed
    merges: int = 0
    # The set's whole catalog at each extractor request (its own may be a part, issue 40).
    catalogs: list[str] = field(default_factory=list)

    def respond(self, body: dict[str, Any]) -> Scripted:
        kind = role_of(body)
        side = {"delay": self.side_delay}
        if kind == "selector":
            data = selector_input(body)
            names = sorted(re.findall(r"^- \[([a-z0-9-]+)\]", data["catalog"], re.M))
            turn = int(re.search(r"turn (\d+):", data["query"]).group(1))  # type: ignore[union-attr]
            picks = {names[(turn * 2) % len(names)], names[(turn * 3 + 1) % len(names)]}
            return text(json.dumps(sorted(picks)), **side)
        if kind == "extractor":
            # The run's cwd is the workspace (the cell magic's notebook directory).
            self.catalogs.append(render_catalog(MemoryStore(Path.cwd()).readable().entries))
            turns = [int(t) for t in re.findall(r"turn (\d+):", json.dumps(body["messages"]))]
            turn = max(turns)
            if turn % 4 == 1:
                self.extracted[turn] = 1
                record = MemoryRecord(
                    name=f"note-{turn}",
                    type="project",
                    description=f"What turn {turn} settled about the pipeline",
                    body=prose(turn, 400),
                )
                return text(json.dumps([record.to_json()]), **side)
            self.extracted[turn] = 0
            return text("[]", **side)
        if kind == "consolidator":
            candidates = json.loads(body["messages"][0]["content"])["candidates"]
            self.merges += 1
            merged = MemoryRecord(
                name=f"merged-{self.merges}",
                type="project",
                description="Merged notes about the pipeline",
                body=prose(1000 + self.merges, 500),
            )
            sources = [candidates[0]["name"], candidates[1]["name"]]
            return text(
                json.dumps({"source_names": sources, "records": [merged.to_json()]}), **side
            )
        assert kind == "main", kind
        last = body["messages"][-1]["content"]
        query = (
            next((b["text"] for b in last if b.get("type") == "text" and not _is_block(b)), "")
            if isinstance(last, list)
            else last
        )
        match = re.search(r"turn (\d+):", query)
        answer = prose(7 * (int(match.group(1)) if match else 99) + 1, 700)
        pieces = max(len(answer.split()), 1)
        main = {"delay": self.main_delay, "chunk_delay": self.stream_seconds / pieces}
        if match and int(match.group(1)) % 3 == 0:
            turn = int(match.group(1))
            return tool_use(
                "read_file", {"path": f"doc{turn % 5}.md"}, text_before="Let me check.", **main
            )
        return text(answer, **main)


@dataclass
class TurnTimes:
    start: float
    visible: float
    end: float
    last_token: float


class TimedPublisher(CapturingDisplayPublisher):
    """Keeps every published output with the moment it was published."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.times: list[tuple[float, Any]] = []

    def publish(self, data: Any, *args: Any, **kwargs: Any) -> None:
        self.times.append((time.monotonic(), data))


def run(args: argparse.Namespace) -> dict[str, Any]:
    script = Script(args.side_delay, args.main_delay, args.stream_seconds)
    server = MessagesServer().start()
    server.responder = script.respond
    times: list[TurnTimes] = []
    ends: list[int] = []  # canonical history length after each turn
    shell = InteractiveShell.instance()
    publisher = TimedPublisher(shell=shell)
    shell.display_pub = publisher
    previous = Path.cwd()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            workspace = Path(tmp)
            for i in range(5):
                (workspace / f"doc{i}.md").write_text(prose(100 + i, 3000 + 700 * i))
            # In commits of 500: one journal line of 10,000 records passes its bound.
            for first in range(0, args.records, 500):
                MemoryStore(workspace).extend(
                    MemoryRecord(
                        name=f"fact-{i}",
                        type="project",
                        description=f"Pipeline fact number {i} about exports and reports",
                        body=prose(200 + i, 300),
                    )
                    for i in range(first, min(first + 500, args.records))
                )
            client = anthropic.Anthropic(
                base_url=server.base_url, api_key="bench", max_retries=0, timeout=30
            )
            os.chdir(workspace)
            with contextlib.redirect_stdout(io.StringIO()):  # the extension's banner
                shell.run_line_magic("load_ext", "ipymemory")
            use_model(
                AnthropicModel(
                    "claude-sonnet-bench", side_model="claude-haiku-bench", client=client
                )
            )
            # Issue 31's settings, as given (defaults: the package's).
            shell.run_line_magic("config", f"IPyMemory.memory_budget = {args.memory_budget}")
            shell.run_line_magic("config", f"IPyMemory.selector = {args.selector!r}")
            for turn in range(args.turns):
                before = len(server.requests)
                published = len(publisher.times)
                start = time.monotonic()
                # The cell magic itself: the cell's result is not echoed to stdout.
                output = shell.run_cell_magic(
                    "agent", "--commit auto", f"turn {turn}: {prose(turn, 160)}?"
                )
                end = time.monotonic()
                answer = output.answer
                visible = next(
                    t
                    for t, data in publisher.times[published:]
                    if isinstance(data, dict) and data.get("text/markdown") == answer
                )
                mains = [
                    i
                    for i in range(before, len(server.requests))
                    if role_of(server.requests[i]) == "main"
                ]
                times.append(TurnTimes(start, visible, end, server.finished[mains[-1]]))
                ends.append(len(get_session().history))
            history = list(get_session().history)
            shell.run_line_magic("unload_ext", "ipymemory")
    finally:
        os.chdir(previous)
        server.stop()
    return report(server.requests, history, ends, times, script, args)


def report(
    requests: list[dict[str, Any]],
    history: list[dict[str, Any]],
    ends: list[int],
    times: list[TurnTimes],
    script: Script,
    args: argparse.Namespace,
) -> dict[str, Any]:
    new_cache = {"main": PromptCache(args.min_main), "side": PromptCache(args.min_side)}
    old_cache = {"main": PromptCache(args.min_main), "side": PromptCache(args.min_side)}
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    whole_cache = PromptCache(args.min_side)
    catalog_cache = PromptCache(args.min_main)
    # Each main request's set, as the whole catalog when its turn's extractor ran.
    catalogs: list[str] = []
    pending = 0
    whole_catalogs = iter(script.catalogs)
    for request in requests:
        kind = role_of(request)
        if kind == "main":
            pending += 1
        elif kind == "extractor":
            catalogs += [next(whole_catalogs)] * pending
            pending = 0
    catalogs += [catalogs[-1] if catalogs else ""] * pending
    main_index = 0
    extract_turn = 0
    for request in requests:
        kind = role_of(request)
        cache = "main" if kind == "main" else "side"
        if kind == "main":
            old = old_main_request(request, history)
            for rebuilt in catalog_requests(request, history, catalogs[main_index]):
                rows["main"]["catalog_cost"] += catalog_cache.price(rebuilt)[0]
                rows["main"]["catalog_requests"] += 1
            main_index += 1
        elif kind == "extractor":
            # The whole canonical history at this turn's end, with the same catalog;
            # and the same cursor's messages with tool inputs and outputs whole.
            data = json.loads(request["messages"][-1]["content"][-1]["text"])
            catalog, today = data["existing_catalog"], data["today"]
            end = ends[extract_turn]
            start = ends[extract_turn - 1] if extract_turn else 0
            before = ends[extract_turn - 2] if extract_turn > 1 else 0
            old = {
                **request,
                "messages": extractor_messages(
                    history[:end], catalog, today=today, bounded_tools=False
                ),
            }
            whole = {
                **request,
                "messages": extractor_messages(
                    history[start:end],
                    catalog,
                    context=history[before:start],
                    today=today,
                    bounded_tools=False,
                ),
            }
            rows[kind]["whole_tools_cost"] += whole_cache.price(whole)[0]
            extract_turn += 1
        else:
            old = request
        row = rows[kind]
        row["requests"] += 1
        size = len(json.dumps(request, ensure_ascii=False).encode())
        row["bytes"] += size
        row["max_bytes"] = max(row["max_bytes"], size)  # one request's size (issue 40)
        row["old_bytes"] += len(json.dumps(old, ensure_ascii=False).encode())
        row["cost"] += new_cache[cache].price(request)[0]
        row["old_cost"] += old_cache[cache].price(old)[0]
    # The old rule consolidated on every extracting turn once the set was at the threshold.
    set_size, old_consolidations = args.records, 0
    for turn in sorted(script.extracted):
        items = script.extracted[turn]
        if items and set_size + items >= 10:
            old_consolidations += 1
        set_size += items
    before = [t.last_token - t.start for t in times]
    visible_ms = [(t.visible - t.last_token) * 1000 for t in times]
    after = [t.end - t.visible for t in times]
    old_visible_ms = [(t.end - t.last_token) * 1000 for t in times]
    result = {
        "turns": len(times),
        "kinds": {k: dict(v) for k, v in sorted(rows.items())},
        "consolidations": {
            "now": int(rows["consolidator"]["requests"]),
            "old_rule": old_consolidations,
        },
        "times": {
            "before_answer_s": _spread(before),
            "to_visible_ms": _spread(visible_ms),
            "after_answer_s": _spread(after),
            "old_to_visible_ms": _spread(old_visible_ms),
        },
    }
    extractor, main = rows["extractor"], rows["main"]
    result["ratios"] = {
        "extractor_bytes": extractor["bytes"] / extractor["old_bytes"],
        "main_cost": main["cost"] / main["old_cost"],
        "catalog_vs_blocks": main["catalog_cost"] / main["cost"],
        "max_visible_ms": max(visible_ms),
        "extractor_vs_agent": extractor["cost"] / main["cost"],
        "whole_tools_extractor_vs_agent": extractor["whole_tools_cost"] / main["cost"],
    }
    result["ok"] = {
        "extractor_bytes": result["ratios"]["extractor_bytes"] <= TARGET_EXTRACT_BYTES,
        "main_cost": result["ratios"]["main_cost"] <= TARGET_MAIN_COST,
        "visible": max(visible_ms) <= TARGET_VISIBLE_MS,
        "extractor_vs_agent": result["ratios"]["extractor_vs_agent"] <= TARGET_EXTRACT_VS_AGENT,
    }
    return result


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "median": statistics.median(values),
        "max": max(values),
        "total": sum(values),
    }


def print_report(result: dict[str, Any], args: argparse.Namespace) -> None:
    print(
        f"{result['turns']} turns; delays: side {args.side_delay} s, main first token "
        f"{args.main_delay} s + {args.stream_seconds} s of streaming; min cacheable "
        f"{args.min_main} (main) / {args.min_side} (side) tokens; tokens = bytes / 4"
    )
    print()
    head = f"{'kind':<13}{'requests':>9}{'KB sent':>10}{'old KB':>10}{'bytes x':>9}"
    head += f"{'cost (ktok)':>13}{'old cost':>10}{'cost x':>8}{'max KB':>8}"
    print(head)
    for kind, row in result["kinds"].items():
        print(
            f"{kind:<13}{int(row['requests']):>9}{row['bytes'] / 1024:>10.1f}"
            f"{row['old_bytes'] / 1024:>10.1f}{row['bytes'] / row['old_bytes']:>9.2f}"
            f"{row['cost'] / 1000:>13.1f}{row['old_cost'] / 1000:>10.1f}"
            f"{row['cost'] / row['old_cost']:>8.2f}{row['max_bytes'] / 1024:>8.1f}"
        )
    c = result["consolidations"]
    print(f"consolidations: {c['now']} (the old rule: {c['old_rule']})")
    print()
    t = result["times"]
    print("per turn            median      max     total")
    for label, key, unit in (
        ("before the answer", "before_answer_s", "s"),
        ("to answer visible", "to_visible_ms", "ms"),
        ("after the answer", "after_answer_s", "s"),
        ("old: to visible", "old_to_visible_ms", "ms"),
    ):
        row = t[key]
        print(f"{label:<18}{row['median']:>8.3f}{row['max']:>9.3f}{row['total']:>10.2f} {unit}")
    print()
    r, ok = result["ratios"], result["ok"]
    mark = {True: "ok", False: "MISSED"}
    print(
        f"extractor bytes / whole-history extraction: {r['extractor_bytes']:.3f} "
        f"(target <= {TARGET_EXTRACT_BYTES}) {mark[ok['extractor_bytes']]}"
    )
    print(
        f"main input cost / block in system: {r['main_cost']:.3f} "
        f"(target <= {TARGET_MAIN_COST}) {mark[ok['main_cost']]}"
    )
    m = result["kinds"]["main"]
    print(
        f"the catalog in the cached prefix with a read tool instead of the blocks: "
        f"{m['catalog_cost'] / 1000:.1f} k units in {int(m['catalog_requests'])} requests "
        f"({r['catalog_vs_blocks']:.2f}x the blocks')"
    )
    print(
        f"answer visible after the last token: max {r['max_visible_ms']:.1f} ms "
        f"(target <= {TARGET_VISIBLE_MS} ms on every turn) {mark[ok['visible']]}"
    )
    print(
        f"extractor input cost / the agent's: {r['extractor_vs_agent']:.3f} "
        f"(target <= {TARGET_EXTRACT_VS_AGENT}) {mark[ok['extractor_vs_agent']]}; "
        f"with tool outputs whole: {r['whole_tools_extractor_vs_agent']:.3f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--side-delay", type=float, default=0.3)
    parser.add_argument("--main-delay", type=float, default=0.3)
    parser.add_argument("--stream-seconds", type=float, default=0.5)
    parser.add_argument("--min-main", type=int, default=1024)
    parser.add_argument(
        "--min-side", type=int, default=2048, help="the side model's minimum cacheable tokens"
    )
    parser.add_argument(
        "--memory-budget",
        type=int,
        default=C.DEFAULT_MEMORY_BUDGET,
        help="the setting (0: choose every turn)",
    )
    parser.add_argument("--selector", choices=C.SELECTORS, default=C.DEFAULT_SELECTOR)
    parser.add_argument(
        "--records", type=int, default=6, help="records in the set at the start (6: it fits)"
    )
    parser.add_argument("--quick", action="store_true", help="8 turns, short delays (CI)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.turns, args.side_delay, args.main_delay, args.stream_seconds = 8, 0.01, 0.01, 0.02
    result = run(args)
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
    else:
        print_report(result, args)
    return 0 if all(result["ok"].values()) or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
