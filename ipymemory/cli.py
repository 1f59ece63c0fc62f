"""The ``ipymemory`` command: inspect and maintain a workspace's ``.memory`` (SPEC §5).

``ipymemory [--dir DIR] [--json] COMMAND ...``. Exit status: 0 ok, 1 a problem was found
or the operation failed (one line on stderr naming the file and the rule), 2 bad usage.

The subcommands are defined once, in :mod:`ipymemory.commands` (adding one is one
decorated handler there); this module is the command line's front end: argparse
subparsers from those definitions, settings resolved as everywhere (``--dir`` >
``IPYMEMORY_DIR`` > the current directory), the handler's view printed as text
(``cli_text``) or JSON (``cli_json``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TextIO

from ._text import TerminalWriter, TextSink
from .commands import GLOBAL_ARGS, Command, Context, add_arguments, offered, static_form
from .config import resolve
from .errors import CommandUsageError, IPyMemoryError, MemoryConfigError
from .store.layout import MemoryDir
from .views import StaticView

__all__ = ["COMMANDS", "main"]

# The subcommands the command line offers (the rest need a notebook's session).
COMMANDS: dict[str, Command] = offered("cli")

_PROG = "ipymemory"


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: a value given before the subcommand is not reset by the subparser.
    for a in GLOBAL_ARGS:
        common.add_argument(*a.names, **{**a.options, "default": argparse.SUPPRESS})
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print data as JSON"
    )
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description="Inspect and maintain the .memory directory of a workspace.",
        epilog="Exit status: 0 ok, 1 a problem was found or the operation failed, "
        "2 bad usage. `ipymemory COMMAND --help` describes one command.",
        parents=[common],
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    children = {}
    for name, command in offered("cli").items():
        child = sub.add_parser(
            name, help=command.help, description=command.full_description(), parents=[common]
        )
        add_arguments(child, command.args)
        children[name] = child
    return parser, children


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _print(view: StaticView, as_json: bool, out: TextSink, err: TextSink) -> int:
    failure = view.failure()
    if failure is not None:
        err.write(f"{_PROG}: error: {_one_line(failure)}\n")
        return 1
    problem = view.found_problem()
    if as_json:
        out.write(json.dumps(view.cli_json(), ensure_ascii=False, indent=2) + "\n")
    else:
        text = view.cli_text()
        if text:
            (err if problem else out).write(text + "\n")
    warnings = view.cli_warnings()
    for warning in warnings:
        err.write(f"{_PROG}: error: {_one_line(warning)}\n")
    return 1 if problem or warnings else 0


def main(
    argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Run the CLI; returns the exit status (0 ok, 1 problem, 2 bad usage)."""
    # The one point where the CLI's text reaches a terminal: every write is escaped
    # (control and format characters made visible, SPEC §7), so a record's text cannot
    # send escape sequences (an OSC-52 clipboard write, a line erase); JSON stays valid.
    out = TerminalWriter(stdout or sys.stdout)
    err = TerminalWriter(stderr or sys.stderr)
    parser, children = _parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as e:  # argparse: --help (0) or bad usage (2)
        return e.code if isinstance(e.code, int) else 2
    try:
        settings = resolve(None, {"directory": getattr(args, "dir", None)})
    except MemoryConfigError as e:
        err.write(f"{_PROG}: error: {_one_line(str(e))}\n")
        return 1
    directory = settings.directory
    problem = MemoryDir.of(directory).workspace_problem()
    if problem is not None:
        err.write(f"{_PROG}: error: {directory}: {problem}\n")
        return 2
    try:
        view = offered("cli")[args.command].handler(Context(settings), args)
    except CommandUsageError as e:
        child = children[args.command]
        err.write(child.format_usage())
        err.write(f"{child.prog}: error: {e}\n")
        return 2
    except (IPyMemoryError, OSError) as e:
        err.write(f"{_PROG}: error: {_one_line(str(e))}\n")
        return 1
    return _print(static_form(view), bool(getattr(args, "json", False)), out, err)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
