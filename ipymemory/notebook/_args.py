"""Typed shims over IPython's (untyped) ``magic_arguments`` decorators."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from IPython.core import magic_arguments as _ma

__all__ = ["arg", "arguments"]

F = TypeVar("F", bound=Callable[..., Any])


def arguments(name: str | None = None) -> Callable[[F], F]:
    """``@magic_arguments(name)``: build the parser (and the help text) of a magic."""
    return cast("Callable[[F], F]", _ma.magic_arguments(name))  # type: ignore[no-untyped-call]


def arg(*names: str, **options: Any) -> Callable[[F], F]:
    """``@argument(...)``: one argparse argument of the magic."""
    return cast("Callable[[F], F]", _ma.argument(*names, **options))  # type: ignore[no-untyped-call]
