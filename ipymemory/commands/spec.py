"""How a subcommand is declared (:class:`Arg`, :class:`Command`, :func:`command`) and
the argparse parsers both front ends build from one declaration."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
    from .context import Context, View

__all__ = [
    "COMMANDS",
    "GLOBAL_ARGS",
    "SECTIONS",
    "Arg",
    "Command",
    "Handler",
    "add_arguments",
    "arg",
    "command",
    "offered",
    "synopsis",
]

Section = Literal["read", "change", "maintain", "help"]
# Help lists the subcommands by section, in this order.
SECTIONS: Mapping[Section, str] = {
    "read": "Reading",
    "change": "Changing",
    "maintain": "Maintenance",
    "help": "Help",
}

Handler = Callable[["Context", argparse.Namespace], "View"]
H = TypeVar("H", bound=Handler)

_FLAG_ACTIONS = frozenset({"store_true", "store_false", "count"})


@dataclass(frozen=True)
class Arg:
    """One argparse argument: ``names`` and the keyword options of ``add_argument``.

    ``required`` marks a positional that argparse sees as optional (``nargs="?"`` or
    ``"*"``) but the handler requires (with :func:`~ipymemory.commands.common.require`,
    whose message names what is missing); help then shows it without brackets.
    """

    names: tuple[str, ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    required: bool = False

    @property
    def positional(self) -> bool:
        return not self.names[0].startswith("-")

    @property
    def takes_value(self) -> bool:
        """Whether an option reads the next word as its value."""
        return not self.positional and self.options.get("action") not in _FLAG_ACTIONS

    @property
    def metavar(self) -> str:
        name = self.names[-1].lstrip("-")
        return str(self.options.get("metavar") or name.upper())

    def usage(self) -> str:
        """The argument in a synopsis: ``NAME``, ``NAME …``, ``[--limit N]``, ``[--no-plan]``."""
        nargs = self.options.get("nargs")
        many = " …" if nargs in ("+", "*") else ""
        if self.positional:
            optional = nargs in ("?", "*") and not self.required
            return f"[{self.metavar}{many}]" if optional else f"{self.metavar}{many}"
        value = f" {self.metavar}{many}" if self.takes_value else ""
        return f"[{self.names[0]}{value}]"


def arg(*names: str, required: bool = False, **options: Any) -> Arg:
    """``arg("--limit", type=int, help=...)``: the arguments of ``add_argument``
    (``required``: see :class:`Arg`)."""
    return Arg(names, options, required)


@dataclass(frozen=True)
class Command:
    """One subcommand (see the package docstring).

    ``help`` is the one-line summary (lists, and the first sentence of ``--help``);
    ``description`` the rest of ``--help``; ``args`` its arguments; ``handler`` returns a
    view. ``cli`` / ``notebook`` say which front ends offer it. ``literal_tail`` names a
    positional that ``%memory`` takes verbatim from the rest of the line (a query), so
    quotes and apostrophes in it need no escaping.
    """

    name: str
    help: str
    handler: Handler
    args: tuple[Arg, ...] = ()
    description: str = ""
    section: Section = "read"
    cli: bool = True
    notebook: bool = True
    literal_tail: str | None = None

    def synopsis(self) -> str:
        return synopsis(self.name, self.args)

    def full_description(self) -> str:
        first = f"{self.help[0].upper()}{self.help[1:]}."
        return f"{first}\n\n{self.description}" if self.description else first


# name -> Command, in registration order; filled by @command as the modules load.
COMMANDS: dict[str, Command] = {}

# Options before the subcommand, in both front ends (the CLI adds --json).
GLOBAL_ARGS: tuple[Arg, ...] = (
    arg(
        "--dir",
        metavar="DIRECTORY",
        help="workspace holding .memory/ (default: IPYMEMORY_DIR, else the current directory)",
    ),
)


def command(
    name: str,
    help: str,
    *args: Arg,
    section: Section = "read",
    cli: bool = True,
    notebook: bool = True,
    literal_tail: str | None = None,
    before: str = "",
) -> Callable[[H], H]:
    """Register the decorated ``handle_<name>(ctx, args) -> View`` as subcommand
    ``name``; its docstring is the longer description of ``--help``, after ``before``
    (a text said in several places, e.g. :data:`~ipymemory.config.SELECTION_RULE`)."""

    def register(handler: H) -> H:
        if name in COMMANDS:
            raise RuntimeError(f"subcommand {name!r} is defined twice")
        COMMANDS[name] = Command(
            name=name,
            help=help,
            handler=handler,
            args=args,
            description=" ".join(f"{before} {handler.__doc__ or ''}".split()),
            section=section,
            cli=cli,
            notebook=notebook,
            literal_tail=literal_tail,
        )
        return handler

    return register


def offered(frontend: Literal["cli", "notebook"]) -> dict[str, Command]:
    """The subcommands ``frontend`` offers, by name, in registration order."""
    chosen = [c for c in COMMANDS.values() if (c.cli if frontend == "cli" else c.notebook)]
    order = list(SECTIONS)
    chosen.sort(key=lambda c: order.index(c.section))  # stable: registration order within
    return {c.name: c for c in chosen}


def add_arguments(parser: argparse.ArgumentParser, args: tuple[Arg, ...]) -> None:
    """Add ``args`` to ``parser``."""
    for a in args:
        parser.add_argument(*a.names, **a.options)


def synopsis(name: str, args: tuple[Arg, ...]) -> str:
    return " ".join([name, *(a.usage() for a in args)])
