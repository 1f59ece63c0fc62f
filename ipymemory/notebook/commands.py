"""``%memory``'s front end over :mod:`ipymemory.commands`: parse the line with the
subcommands' own definitions, run the handler in the kernel's context, return its view.

``%memory [--dir DIRECTORY] SUBCOMMAND [ARGS]``. The line is split as a shell would
(quotes group words); a subcommand with a ``literal_tail`` (``select QUERY``) takes the
rest of the line verbatim after its options. Bad usage and command errors raise
IPython's ``UsageError`` (a message, no traceback); store, model and settings failures
become an :class:`~ipymemory.views.ErrorView`.
"""

from __future__ import annotations

import argparse
import io
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from IPython.core.error import UsageError

from ..commands import GLOBAL_ARGS, Arg, Command, Context, View, add_arguments, offered
from ..commands.help import magic_help
from ..errors import CommandError, CommandUsageError, IPyMemoryError, MemoryConfigError
from ..store.layout import MemoryDir
from ..views import ErrorView, MessageView
from ..views._widgetbase import StaticBundleBox
from ._tail import trailing_options

if TYPE_CHECKING:
    from ..config import Settings
    from ..model import ModelClient
    from ..review import PendingBatch
    from ..store.store import MemoryStore
    from ..turn import AgentSession
    from ..views import StaticView
    from .state import NotebookState

__all__ = ["MagicCall", "NotebookContext", "check_dir_argument", "parse_line", "run_line"]

_PROG = "%memory"


class NotebookContext(Context):
    """The kernel's context: settings resolved on first use (``overrides`` → %config →
    env → default), the session of that directory, widgets kept for unloading."""

    proposes = True
    front = "%memory"

    def __init__(self, state: NotebookState, overrides: Mapping[str, object]) -> None:
        self.state = state
        self._overrides = dict(overrides)
        self._resolved: Settings | None = None
        self._session: AgentSession | None = None

    @property
    def settings(self) -> Settings:
        if self._resolved is None:
            self._resolved = self.state.settings(self._overrides)
        return self._resolved

    @property
    def session(self) -> AgentSession:
        if self._session is None:
            self._session = self.state.session(self.settings)
        return self._session

    @property
    def store(self) -> MemoryStore:
        return self.session.store

    @property
    def user_store(self) -> MemoryStore | None:
        return self.session.user_store

    @property
    def model(self) -> ModelClient:
        return self.session.model

    @property
    def model_pinned(self) -> bool:
        return self.state.pinned_model is not None

    def caller(self) -> dict[str, object]:
        # The session's: the notebook and the cell running this %memory line.
        return dict(self.session.caller_context())

    def widget(self, view: StaticView, make: Callable[[], StaticBundleBox]) -> View:
        widget = make()
        self.state.keep(widget)
        return widget

    def review(self, batch: PendingBatch) -> View:
        return self.state.review(self.session, batch)


@dataclass(frozen=True)
class MagicCall:
    """A parsed ``%memory`` line."""

    command: Command
    args: argparse.Namespace
    directory: str | None = None


class _Help(Exception):
    """``--help`` was given to a subcommand."""


class _Parser(argparse.ArgumentParser):
    """Raises instead of printing and exiting."""

    def error(self, message: str) -> NoReturn:
        raise CommandUsageError(message)

    def print_help(self, file: Any = None) -> None:
        raise _Help


class _Words:
    """Shell words read one at a time, so the text after them stays verbatim."""

    def __init__(self, text: str) -> None:
        self._stream = io.StringIO(text)
        self._lexer = shlex.shlex(self._stream, posix=True)
        self._lexer.whitespace_split = True
        self._lexer.commenters = ""  # "#" is text here (a query may mention #tags)

    def next(self) -> str | None:
        """The next word (quotes removed), or None at the end."""
        return self._lexer.get_token()

    def rest(self) -> str:
        """The text not read yet, verbatim (stripped), without reading it."""
        start = self._stream.tell()
        text = self._stream.read()
        self._stream.seek(start)
        return text.strip()


def _options(args: tuple[Arg, ...]) -> dict[str, Arg]:
    return {name: a for a in args if not a.positional for name in a.names}


def _read_options(
    words_in: _Words, args: tuple[Arg, ...], *, strict: bool
) -> tuple[list[str], str]:
    """Read leading options (and their values) of ``args``; return them and the text
    after them, verbatim. The first word that is not one of these options starts it
    (``strict``: a word that looks like another option is an error instead). Only
    options are split as shell words: the text after them may hold any quote."""
    known = _options(args)
    words: list[str] = []
    while True:
        rest = words_in.rest()
        if not rest.startswith("-"):
            return words, rest
        word = words_in.next() or ""
        if word == "--":
            return words, words_in.rest()
        name = word.split("=", 1)[0]
        option = known.get(name)
        if option is None:
            if strict:
                raise CommandUsageError(f"unknown option {word!r}")
            return words, rest
        words.append(word)
        if option.takes_value and "=" not in word:
            value = words_in.next()
            if value is None:
                raise CommandUsageError(f"{name} needs a {option.metavar.lower()}")
            words.append(value)


def parse_line(line: str) -> MagicCall | None:
    """Parse a ``%memory`` line; None when it names no subcommand (show the help)."""
    top = _Parser(prog=_PROG, add_help=False)
    add_arguments(top, GLOBAL_ARGS)
    try:
        words, rest = _read_options(_Words(line), GLOBAL_ARGS, strict=True)
        directory = top.parse_args(words).dir
    except CommandUsageError as e:
        raise UsageError(f"{_PROG}: {e}; see {_PROG} help") from None
    except ValueError as e:  # unbalanced quotes
        raise UsageError(f"{_PROG}: cannot split the arguments: {e}") from None
    if not rest:
        return None
    name, *more = rest.split(None, 1)
    tail = more[0] if more else ""
    commands = offered("notebook")
    command = commands.get(name)
    if command is None:
        close = [s for s in commands if s.startswith(name[:2])]
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        raise UsageError(
            f"{_PROG}: unknown subcommand {name!r}{hint}; "
            f"one of: {', '.join(commands)}. See {_PROG} help."
        )
    try:
        return MagicCall(command, _parse_args(command, tail), directory)
    except _Help:  # `%memory show --help` is `%memory help show`
        return MagicCall(commands["help"], argparse.Namespace(topic=name), directory)
    except CommandUsageError as e:
        raise _usage_error(command, e) from None
    except ValueError as e:  # unbalanced quotes
        raise UsageError(f"{_PROG} {name}: cannot split the arguments: {e}") from None


def _parse_args(command: Command, text: str) -> argparse.Namespace:
    parser = _Parser(prog=f"{_PROG} {command.name}", description=command.full_description())
    add_arguments(parser, command.args)
    if command.literal_tail is None:
        return parser.parse_args(shlex.split(text))
    words, tail = _read_options(_Words(text), command.args, strict=False)
    tail, after = trailing_options(tail, command.args)  # `select tabs --limit 1`
    words += after
    if not tail:
        metavar = next(a.metavar for a in command.args if a.names[0] == command.literal_tail)
        raise CommandUsageError(f"missing {metavar} (the rest of the line)")
    return parser.parse_args([*words, "--", tail])


def _usage_error(command: Command, error: CommandUsageError) -> UsageError:
    return UsageError(f"{_PROG} {command.name}: {error}\nusage: {_PROG} {command.synopsis()}")


def check_dir_argument(directory: Path) -> None:
    """A ``--dir`` that names no workspace is a mistake in the line (``UsageError``),
    not an empty set nor a failure of memory (issue 43)."""
    problem = MemoryDir.of(directory).workspace_problem()
    if problem is not None:
        raise UsageError(f"--dir {directory}: {problem}")


def run_line(state: NotebookState, line: str) -> Any:
    """Run one ``%memory`` line in ``state``'s kernel; the view (or widget) to display."""
    call = parse_line(line)
    if call is None:
        return MessageView(magic_help(), kind="help")
    command = call.command
    ctx = NotebookContext(state, {"directory": call.directory})
    try:
        if call.directory is not None:
            check_dir_argument(ctx.settings.directory)
        return command.handler(ctx, call.args)
    except CommandUsageError as e:
        raise _usage_error(command, e) from None
    except CommandError as e:
        raise UsageError(f"{_PROG} {command.name}: {e}") from None
    except MemoryConfigError as e:
        return ErrorView.of(e, where=f"{_PROG} settings")
    except IPyMemoryError as e:
        return ErrorView.of(e, where=f"{_PROG} {command.name}")
