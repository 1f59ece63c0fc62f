"""``%memory help [SUBCOMMAND]`` and the ``%memory`` help text, built from the
definitions (the command line's ``--help`` comes from argparse over the same ones)."""

from __future__ import annotations

import argparse

from ..errors import CommandUsageError
from ..views import MessageView
from .context import Context, View
from .spec import GLOBAL_ARGS, SECTIONS, Command, arg, command, offered, synopsis

__all__ = ["handle_help", "magic_help", "subcommand_help"]

_SYNOPSIS_WIDTH = 26

_EXAMPLES = (
    "%memory list",
    "%memory select where are pipeline bugs tracked",
    "%memory show prefers-tabs",
    "%memory commit --reject draft-note",
    "%memory --dir ../other-project status",
    "%memory help commit",
)


def magic_help() -> str:
    """The ``%memory`` help: usage, every subcommand by section, examples."""
    commands = offered("notebook").values()
    # A long synopsis (commit's options) gets its own line rather than widening all.
    width = min(max(len(c.synopsis()) for c in commands), _SYNOPSIS_WIDTH)
    lines = [
        f"%memory {synopsis('', GLOBAL_ARGS).strip()} SUBCOMMAND [ARGS]",
        "",
        "Inspect and change the long-term memory in DIRECTORY/.memory (default: the",
        "notebook's directory; or %config IPyMemory.directory, or IPYMEMORY_DIR).",
    ]
    for section, title in SECTIONS.items():
        chosen = [c for c in commands if c.section == section]
        if chosen:
            lines += ["", f"{title}:"]
            lines += [_entry(c.synopsis(), c.help, width) for c in chosen]
    lines += ["", "Examples:", *(f"  {e}" for e in _EXAMPLES)]
    lines += [
        "",
        "Settings: %config IPyMemory (commit_mode, model, side_model, directory, …).",
        'A %memory line may end with "?" (it stays part of the query); %memory? shows this help.',
    ]
    return "\n".join(lines)


def _entry(synopsis_: str, help_: str, width: int) -> str:
    if len(synopsis_) <= width:
        return f"  {synopsis_.ljust(width)}  {help_}"
    return f"  {synopsis_}\n  {' ' * width}  {help_}"


def subcommand_help(command: Command) -> str:
    """``%memory help NAME``: the synopsis, what it does, and its arguments."""
    lines = [f"%memory {command.synopsis()}", "", command.full_description()]
    if command.args:
        lines += ["", "Arguments:"]
        width = max(len(a.usage()) for a in command.args)
        lines += [
            f"  {a.usage().strip('[]').ljust(width)}  {a.options.get('help', '')}"
            for a in command.args
        ]
    return "\n".join(lines)


@command(
    "help",
    "this help; help SUBCOMMAND: one subcommand in full",
    arg("topic", nargs="?", metavar="SUBCOMMAND", help="the subcommand to describe"),
    section="help",
    cli=False,
)
def handle_help(ctx: Context, args: argparse.Namespace) -> View:
    """Every subcommand with its arguments; ``%memory help NAME`` for one of them."""
    if args.topic is None:
        return MessageView(magic_help(), kind="help")
    chosen = offered("notebook").get(args.topic)
    if chosen is None:
        raise CommandUsageError(
            f"no subcommand {args.topic!r}; one of: {', '.join(offered('notebook'))}"
        )
    return MessageView(subcommand_help(chosen), kind="help")
