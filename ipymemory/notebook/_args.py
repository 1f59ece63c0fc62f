"""Typed shims over IPython's (untyped) ``magic_arguments`` decorators (``%%agent``)."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable
from typing import Any, TypeVar, cast

from IPython.core import magic_arguments as _ma
from IPython.core.error import UsageError

__all__ = ["arg", "arguments", "parse_magic_args", "with_text"]

F = TypeVar("F", bound=Callable[..., Any])


def arguments(name: str | None = None) -> Callable[[F], F]:
    """``@magic_arguments(name)``: build the parser (and the help text) of a magic."""
    return cast("Callable[[F], F]", _ma.magic_arguments(name))  # type: ignore[no-untyped-call]


def arg(*names: str, **options: Any) -> Callable[[F], F]:
    """``@argument(...)``: one argparse argument of the magic."""
    return cast("Callable[[F], F]", _ma.argument(*names, **options))  # type: ignore[no-untyped-call]


def with_text(marker: str, text: str) -> Callable[[F], F]:
    """Put ``text`` (wrapped as the docstring around it is) where the docstring says
    ``marker``; below ``@arguments``, so its help holds the text (one wording reused,
    e.g. :data:`~ipymemory.config.SELECTION_RULE`)."""

    def put(func: F) -> F:
        doc = func.__doc__ or ""
        line = next(line for line in doc.splitlines() if marker in line)
        indent = line[: len(line) - len(line.lstrip())]
        wrapped = textwrap.fill(text, 84, initial_indent=indent, subsequent_indent=indent)
        wrapped = wrapped.lstrip()  # the marker line has its indent already
        func.__doc__ = doc.replace(marker, wrapped)
        return func

    return put


def parse_magic_args(func: Any, line: str) -> argparse.Namespace:
    """Parse ``line`` with ``func``'s magic_arguments parser; errors → UsageError."""
    parser = func.parser
    try:
        return parser.parse_argstring(line)  # type: ignore[no-any-return]
    except UsageError as e:  # argparse's message lacks the command and its usage
        # IPython's formatter wraps the usage in a reST literal block: flatten it.
        usage = " ".join(parser.format_usage().replace("::", " ").split())
        raise UsageError(f"%{parser.prog}: {e}\nusage: {usage}") from None
    except ValueError as e:  # unbalanced quotes from the splitter
        raise UsageError(f"%{parser.prog}: cannot split the arguments: {e}") from None
