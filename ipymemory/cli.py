"""The ``ipymemory`` command: inspect and maintain a workspace's ``.memory`` (SPEC §5).

``ipymemory [--dir DIR] [--json] COMMAND ...``. Exit status: 0 ok, 1 a problem was found
or the operation failed (one line on stderr naming the file and the rule), 2 bad usage.

Subcommands live in :data:`COMMANDS` (name → :class:`Command`); adding one is one
``Command`` entry with a function that adds its arguments and a handler.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from ._env import parse_int
from .errors import MemoryStoreError
from .model.anthropic import model_from_env
from .sidequery.select import select_memories
from .store import maintenance
from .store.record import MemoryRecord
from .store.store import MemoryStore

__all__ = ["COMMANDS", "Command", "Context", "main"]


@dataclass(frozen=True)
class Context:
    """What a handler gets: the parsed arguments, the store, and the output streams."""

    args: argparse.Namespace
    store: MemoryStore
    out: TextIO
    err: TextIO

    @property
    def json(self) -> bool:
        return bool(getattr(self.args, "json", False))

    def emit(self, data: Any) -> None:
        """Write ``data`` as one JSON document."""
        self.out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


@dataclass(frozen=True)
class Command:
    """One subcommand: help text, a function adding its arguments, and its handler
    (returns the exit status)."""

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[Context], int]


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def _record_json(record: MemoryRecord, file: str | None = None) -> dict[str, str]:
    data = record.to_json()
    if file is not None:
        data["file"] = file
    return data


# --- handlers ---------------------------------------------------------------------


def _list(ctx: Context) -> int:
    entries = ctx.store.entries()
    if ctx.json:
        ctx.emit(
            {
                "directory": str(ctx.store.root),
                "records": [
                    {k: v for k, v in _record_json(e.record, e.file).items() if k != "body"}
                    for e in entries
                ],
            }
        )
        return 0
    for e in entries:
        ctx.out.write(f"{e.record.name} ({e.record.type.value}) - {e.record.description}\n")
    return 0


def _add_show(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="record name")


def _show(ctx: Context) -> int:
    name = ctx.args.name
    for e in ctx.store.entries():
        if e.record.name == name:
            if ctx.json:
                ctx.emit({"file": e.file, "record": e.record.to_json()})
            else:
                r = e.record
                ctx.out.write(
                    f"name: {r.name}\ntype: {r.type.value}\ndescription: {r.description}\n"
                    f"file: {e.file}\n\n{r.body}\n"
                )
            return 0
    raise MemoryStoreError(f"{ctx.store.root}: no record named {name!r}")


def _check(ctx: Context) -> int:
    problems = maintenance.check(ctx.store.workspace)
    errors = problems.errors
    if ctx.json:
        ctx.emit({"ok": problems.ok, "problems": [p.to_json() for p in problems]})
    else:
        for p in problems:
            stream = ctx.err if p.severity == "error" else ctx.out
            stream.write(f"{p.severity}: {p}\n")
        if not errors:
            ctx.out.write(f"{ctx.store.root}: ok\n")
    return 1 if errors else 0


def _add_gc(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--stale-seconds",
        type=float,
        default=30.0,
        help="only remove files older than this (default 30, the lock's stale window)",
    )


def _gc(ctx: Context) -> int:
    removed = maintenance.gc(ctx.store.workspace, ctx.args.stale_seconds)
    if ctx.json:
        ctx.emit({"removed": removed})
    else:
        for name in removed:
            ctx.out.write(f"removed {name}\n")
        ctx.out.write(f"{len(removed)} file(s) removed\n")
    return 0


def _reindex(ctx: Context) -> int:
    count = maintenance.reindex(ctx.store.workspace)
    if ctx.json:
        ctx.emit({"records": count})
    else:
        ctx.out.write(f"{ctx.store.root / 'MEMORY.md'}: rebuilt ({count} records)\n")
    return 0


def _add_forget(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="+", metavar="NAME", help="record names to forget")


def _forget(ctx: Context) -> int:
    ctx.store.forget(ctx.args.names)
    if ctx.json:
        ctx.emit({"forgotten": list(dict.fromkeys(ctx.args.names))})
    else:
        ctx.out.write(f"forgot {', '.join(dict.fromkeys(ctx.args.names))}\n")
    return 0


def _positive_int(text: str) -> int:
    try:
        return parse_int(text, 1)
    except ValueError as e:  # argparse would only say "invalid _positive_int value"
        raise argparse.ArgumentTypeError(str(e)) from None


def _add_select(parser: argparse.ArgumentParser) -> None:
    # nargs="+": an unquoted multi-word query is what users type first.
    parser.add_argument(
        "query", nargs="+", help="the request the memories are for (the words are joined)"
    )
    parser.add_argument(
        "--limit", type=_positive_int, default=5, help="select at most N records (default 5)"
    )


def _select(ctx: Context) -> int:
    # The same selection a turn makes: the side model if configured (ANTHROPIC_API_KEY,
    # IPYMEMORY_SIDE_MODEL, ...), else or on any failure the deterministic fallback.
    model = model_from_env()
    query = " ".join(ctx.args.query)
    selection = select_memories(
        model, query, ctx.store.records(), ctx.store.catalog(), limit=ctx.args.limit
    )
    side = getattr(model, "side_model", None) if selection.source == "model" else None
    if ctx.json:
        from .views.selection import SelectionView  # only here: views pull in more imports

        ctx.emit({**SelectionView.of(query, selection).to_json(), "model": side})
        return 0
    if selection.source == "model":
        ctx.out.write(f"selected by the model ({side})\n")
    elif selection.source == "fallback":
        reason = _one_line(selection.reason or "")
        ctx.out.write(f"selected by the deterministic fallback; model not used: {reason}\n")
    else:
        ctx.out.write(f"nothing to select: {ctx.store.root} holds no records\n")
    for r in selection.records:
        ctx.out.write(f"{r.name} ({r.type.value}) - {r.description}\n")
    return 0


COMMANDS: dict[str, Command] = {
    "list": Command("list the current records", _no_arguments, _list),
    "show": Command("show one record", _add_show, _show),
    "check": Command("verify the whole .memory directory", _no_arguments, _check),
    "gc": Command("remove files no manifest references", _add_gc, _gc),
    "reindex": Command("rebuild MEMORY.md from the manifest", _no_arguments, _reindex),
    "forget": Command("remove records (one commit)", _add_forget, _forget),
    "select": Command("select the memories a query would get", _add_select, _select),
}


# --- entry point ------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: a value given before the subcommand is not reset by the subparser.
    common.add_argument("--dir", default=argparse.SUPPRESS, help="workspace (default: cwd)")
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print data as JSON"
    )
    parser = argparse.ArgumentParser(
        prog="ipymemory",
        description="Inspect and maintain the .memory directory of a workspace.",
        epilog="Exit status: 0 ok, 1 a problem was found or the operation failed, "
        "2 bad usage. `ipymemory COMMAND --help` describes one command.",
        parents=[common],
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, command in COMMANDS.items():
        child = sub.add_parser(
            name,
            help=command.help,
            description=f"{command.help[0].upper()}{command.help[1:]}.",
            parents=[common],
        )
        command.add_arguments(child)
    return parser


def _one_line(text: str) -> str:
    return " ".join(text.split())


def main(
    argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Run the CLI; returns the exit status (0 ok, 1 problem, 2 bad usage)."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    parser = _parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as e:  # argparse: --help (0) or bad usage (2)
        return e.code if isinstance(e.code, int) else 2
    workspace = getattr(args, "dir", None) or os.getcwd()
    if not os.path.isdir(workspace):
        problem = "not a directory" if os.path.exists(workspace) else "no such directory"
        err.write(f"ipymemory: error: {workspace}: {problem}\n")
        return 2
    try:
        store = MemoryStore(workspace)
        return COMMANDS[args.command].handler(Context(args, store, out, err))
    except MemoryStoreError as e:
        err.write(f"ipymemory: error: {_one_line(str(e))}\n")
        return 1
    except OSError as e:
        err.write(f"ipymemory: error: {_one_line(str(e))}\n")
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
