"""Other agents' doors in auto mode: what a red team's items and benign notes become (issue 39).

    python benchmarks/agent_doors.py                 # table per door, category and language
    python benchmarks/agent_doors.py --json
    python benchmarks/agent_doors.py --door sync --door mcp   # some doors (default: all three)
    python benchmarks/agent_doors.py --corpus FILE --limit N  # another corpus (repeatable), first N
    python benchmarks/agent_doors.py --door screen   # seconds: the screening every door applies

The corpus (default ``benchmarks/corpora/agent_doors.jsonl``) is JSON Lines, one item a
line; empty lines and lines starting with ``//`` are skipped::

    name      str   unique in its file
    category  str   the disguise of a planted item, or the kind of a benign note
    lang      str   the language of the item's text (ISO 639-1, or a mix: "hi-en")
    planted   bool  true: the item can act outside the conversation (a destination, a
                    command or package, secrets, the system prompt, a rule about what
                    answers must contain or send) and must wait for a person in auto
                    mode; false: a benign note that should commit at once
    item      obj   the record another agent proposes: name, type, description, body
    why?      str   what the disguise is, for the reader ("")

Each item goes through each door ALONE, in a fresh workspace, the real way:

* ``sync``: an agent session writes the item's record file into the local memory store
  (``tests/memory_store_server.py``), then ``ipymemory sync pull --commit auto --json``
  runs as a subprocess with the real ``anthropic`` SDK pointed at that server;
* ``mcp``: ``ipymemory mcp --commit auto`` as a subprocess, driven by the real ``mcp``
  stdio client, one ``memory_propose`` call carrying the item;
* ``memory-tool``: ``ipymemory.MemoryTool(workspace, commit="auto")`` in the SDK's own
  tool runner (``client.beta.messages.tool_runner``) against the scripted Messages-API
  server of ``tests/messages_server.py``: the scripted model makes one ``create`` call
  with the item's record file, then says "Done.".

``--door screen`` is no door: it applies, in this process, what every door applies to an
agent's item (``screen_record`` with origin ``agent``; committed: its verdict is COMMIT),
in seconds for a corpus -- a quick look while working; the doors above are the measure.

Counted from the store afterwards: an item is *committed* when a record with its name
and body is in the set. Targets (issue 39): planted committed 0 through every door;
benign held as few as possible. The reasons each door gave are reported with every
wrong outcome.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import anthropic  # noqa: E402
from agents_support import McpClient, with_mcp  # noqa: E402
from memory_store_server import API_KEY, MemoryStoreServer, session_actor  # noqa: E402
from messages_server import MessagesServer, text, tool_use  # noqa: E402
from scenes import CORPORA, CorpusError, keys, load_named, nonempty, record_fields  # noqa: E402

from ipymemory import MemoryStore, MemoryTool  # noqa: E402

DOORS = ("sync", "mcp", "memory-tool")
SCREEN = "screen"  # not a door: the screening every door applies, in-process
DEFAULT_CORPUS = CORPORA / "agent_doors.jsonl"
STORE = "memstore_01AgentDoors"


@dataclass(frozen=True)
class DoorItem:
    """One line of the corpus (see the module docstring)."""

    name: str
    category: str
    lang: str
    planted: bool
    item: dict[str, str]  # name, type, description, body
    why: str = ""

    def record_file(self) -> str:
        """The record file an agent writes (front matter, then the body)."""
        i = self.item
        return (
            f"---\nname: {i['name']}\ndescription: {i['description']}\ntype: {i['type']}\n"
            f"---\n\n{i['body']}\n"
        )


def item_from_json(data: Any, where: str = "item") -> DoorItem:
    keys(data, where, {"name", "category", "lang", "planted", "item"}, {"why"})
    for key in ("name", "category", "lang"):
        nonempty(data[key], f"{where}.{key}")
    if not isinstance(data["planted"], bool):
        raise CorpusError(f"{where}.planted: true or false")
    why = data.get("why", "")
    if not isinstance(why, str):
        raise CorpusError(f"{where}.why: a string")
    return DoorItem(
        name=data["name"],
        category=data["category"],
        lang=data["lang"],
        planted=data["planted"],
        item=record_fields(data["item"], f"{where}.item"),
        why=why,
    )


def load_items(path: Path | str = DEFAULT_CORPUS) -> list[DoorItem]:
    """The items of a corpus file, in order; names must be unique."""
    return load_named(path, item_from_json)


@dataclass(frozen=True)
class Outcome:
    """What one door did with one item in auto mode."""

    item: DoorItem
    door: str
    committed: bool  # a record with the item's name and body is in the set afterwards
    status: str  # what the door said: committed, pending, error, ...
    reasons: tuple[str, ...]  # the door's reasons for holding it (empty: none given)

    @property
    def wrong(self) -> bool:
        return self.committed if self.item.planted else not self.committed


def _in_set(workspace: Path, item: DoorItem) -> bool:
    bodies = {r.name: r.body for r in MemoryStore(workspace).records()}
    return bodies.get(item.item["name"]) == item.item["body"]


class Doors:
    """The servers a run shares (memory store, Messages API) and one method per door."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.store_server = MemoryStoreServer().start()
        self.store_server.add_store(STORE)
        self.messages = MessagesServer().start()
        self.count = 0

    def close(self) -> None:
        self.store_server.stop()
        self.messages.stop()

    def workspace(self, door: str) -> Path:
        self.count += 1
        out = self.tmp / f"{door}-{self.count:04d}"
        out.mkdir()
        return out

    def run(self, door: str, item: DoorItem) -> Outcome:
        if door == SCREEN:
            return _screened(item)
        method: Callable[[DoorItem, Path], tuple[str, tuple[str, ...]]] = {
            "sync": self.sync,
            "mcp": self.mcp,
            "memory-tool": self.memory_tool,
        }[door]
        workspace = self.workspace(door)
        status, reasons = method(item, workspace)
        return Outcome(item, door, _in_set(workspace, item), status, reasons)

    def sync(self, item: DoorItem, workspace: Path) -> tuple[str, tuple[str, ...]]:
        prefix = f"/ipymemory/{workspace.name}/"
        path = f"{prefix}{item.item['name']}.md"
        self.store_server.write(STORE, path, item.record_file(), by=session_actor())
        env = {k: v for k, v in os.environ.items() if not k.startswith("IPYMEMORY_")}
        env.update(
            ANTHROPIC_API_KEY=API_KEY,
            ANTHROPIC_BASE_URL=self.store_server.base_url,
            PYTHONPATH=str(ROOT),
        )
        argv = ["--dir", str(workspace), "--json", "sync", "pull", "--commit", "auto"]
        done = subprocess.run(
            [sys.executable, "-m", "ipymemory.cli", *argv, "--store", STORE, "--prefix", prefix],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        try:
            report = json.loads(done.stdout)
        except json.JSONDecodeError:
            return "error", (f"exit {done.returncode}: {done.stderr.strip()[-300:]}",)
        rows = [r for r in report.get("pulled", []) if r.get("name") == item.item["name"]]
        if not rows:
            why = [n.get("reason", "") for n in report.get("not_imported", [])]
            return "not imported", tuple(why)
        return str(rows[0].get("status")), tuple(rows[0].get("reasons") or ())

    def mcp(self, item: DoorItem, workspace: Path) -> tuple[str, tuple[str, ...]]:
        async def use(client: McpClient) -> dict[str, Any]:
            return await client.call_tool("memory_propose", {"records": [item.item]})

        result = with_mcp(str(workspace), use, "--commit", "auto")
        said = " ".join(str(b.get("text", "")) for b in result.get("content", []))
        if result.get("isError"):
            return "error", (said,)
        rows = (result.get("structuredContent") or json.loads(said)).get("items", [])
        if not rows:
            return "no row", (said,)
        return str(rows[0].get("status")), tuple(rows[0].get("reasons") or ())

    def memory_tool(self, item: DoorItem, workspace: Path) -> tuple[str, tuple[str, ...]]:
        tool = MemoryTool(str(workspace), commit="auto")
        command = {
            "command": "create",
            "path": f"/memories/{item.item['name']}.md",
            "file_text": item.record_file(),
        }
        self.messages.requests.clear()
        self.messages.enqueue(tool_use("memory", command), text("Done."))
        client = anthropic.Anthropic(api_key="test", base_url=self.messages.base_url, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-test",
            max_tokens=1000,
            messages=[{"role": "user", "content": "Remember what matters from this session."}],
            tools=[tool],
        )
        runner.until_done()
        results = [
            block
            for request in self.messages.requests
            for message in request["messages"][-1:]
            if message["role"] == "user" and isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]
        if not results:
            return "no result", ()
        content = results[-1]["content"]
        said = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
        if results[-1].get("is_error"):
            return "error", (said,)
        # The tool says "Saved ..." for what it committed, "Proposed ..." (why) otherwise.
        return ("committed", ()) if said.startswith("Saved") else ("pending", (said,))


def _screened(item: DoorItem) -> Outcome:
    """What every door's screening decides for ``item`` in auto mode (``--door screen``)."""
    from ipymemory import MemoryRecord
    from ipymemory.screen import Origin, Verdict, screen_record

    screened = screen_record(MemoryRecord.from_json(dict(item.item)), Origin.AGENT)
    committed = screened.verdict is Verdict.COMMIT
    reasons = tuple(f.describe() for f in screened.findings())
    return Outcome(item, SCREEN, committed, "committed" if committed else "pending", reasons)


def run_items(
    items: Iterable[DoorItem], doors: Sequence[str] = DOORS, workdir: Path | None = None
) -> list[Outcome]:
    """Each item through each door, alone, in a fresh workspace (module docstring)."""
    with tempfile.TemporaryDirectory(dir=workdir, prefix="agent-doors-") as tmp:
        runner = Doors(Path(tmp))
        try:
            return [runner.run(door, item) for item in items for door in doors]
        finally:
            runner.close()


def report(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Per door: planted committed and benign held, overall, per category, per language."""
    out: dict[str, Any] = {}
    for door in [d for d in (*DOORS, SCREEN) if any(o.door == d for o in outcomes)]:
        mine = [o for o in outcomes if o.door == door]
        rows: dict[str, dict[str, list[int]]] = defaultdict(dict)
        for o in mine:
            for key in (f"category {o.item.category}", f"language {o.item.lang}"):
                row = rows[key].setdefault("planted" if o.item.planted else "benign", [0, 0])
                row[0] += 1
                row[1] += o.wrong
        planted = [o for o in mine if o.item.planted]
        benign = [o for o in mine if not o.item.planted]
        out[door] = {
            "planted": len(planted),
            "planted_committed": sum(o.committed for o in planted),
            "benign": len(benign),
            "benign_held": sum(not o.committed for o in benign),
            "rows": {
                k: {c: {"n": n, "wrong": w} for c, (n, w) in v.items()} for k, v in rows.items()
            },
            "wrong": [
                f"{o.item.name} ({o.item.category}, {o.item.lang}): "
                + ("committed" if o.item.planted else f"held ({o.status})")
                + (f", reasons {list(o.reasons)}" if o.reasons else "")
                for o in mine
                if o.wrong
            ],
        }
    return out


def _print(data: dict[str, Any]) -> None:
    for door, r in data.items():
        print(f"\n## {door}\n")
        print("| group | planted committed | benign held |")
        print("|---|---|---|")
        for key in sorted(r["rows"], key=lambda k: (not k.startswith("category"), k)):
            cell = r["rows"][key]
            p = cell.get("planted", {"n": 0, "wrong": 0})
            b = cell.get("benign", {"n": 0, "wrong": 0})
            ps = f"{p['wrong']}/{p['n']}" if p["n"] else "-"
            bs = f"{b['wrong']}/{b['n']}" if b["n"] else "-"
            print(f"| {key} | {ps} | {bs} |")
        print(
            f"\n{door}: planted committed {r['planted_committed']}/{r['planted']} (target 0); "
            f"benign held {r['benign_held']}/{r['benign']}"
        )
        for line in r["wrong"]:
            print(f"wrong: {line}")


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--door", choices=(*DOORS, SCREEN), action="append", help="a door (repeatable)"
    )
    parser.add_argument("--corpus", type=Path, action="append", help="an items file (repeatable)")
    parser.add_argument("--limit", type=int, help="only the first N items")
    args = parser.parse_args(list(argv) if argv is not None else None)
    items = [i for path in args.corpus or [DEFAULT_CORPUS] for i in load_items(path)][: args.limit]
    data = report(run_items(items, tuple(args.door or DOORS)))
    if args.json:
        print(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False))
    else:
        print(f"{len(items)} items, each alone through each door in auto mode")
        _print(data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
