"""Typed shims over IPython's (untyped) ``magic_arguments`` decorators (``%%agent``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, TypeVar, cast

from IPython.core import magic_arguments as _ma
from IPython.core.error import UsageError

__all__ = ["arg", "arguments", "parse_magic_args"]

F = TypeVar("F", bound=Callable[..., Any])


def arguments(name: str | None = None) -> Callable[[F], F]:
    """``@magic_arguments(name)``: build the parser (and the help text) of a magic."""
    return cast("Callable[[F], F]", _ma.magic_arguments(name))  # type: ignore[no-untyped-call]


def arg(*names: str, **options: Any) -> Callable[[F], F]:
    """``@argument(...)``: one argparse argument of the magic."""
    return cast("Callable[[F], F]", _ma.argument(*names, **options))  # type: ignore[no-untyped-call]


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
