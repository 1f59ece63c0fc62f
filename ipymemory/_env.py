"""Parsing of setting text (``IPYMEMORY_*`` variables, command-line values).

One parser per kind of value, so ``model_from_env``, :func:`ipymemory.config.resolve`
and the CLI accept the same texts and word their complaints the same way. Each raises
``ValueError`` with a phrase (what was expected, what was given); the caller prefixes
it with the variable or option it read.
"""

from __future__ import annotations

import math

__all__ = ["check_seconds", "parse_int", "parse_seconds"]


def parse_int(raw: str, minimum: int) -> int:
    """``raw`` as an integer ``>= minimum``."""
    try:
        value = int(raw.strip())
    except ValueError:
        raise ValueError(f"expected an integer, got {raw!r}") from None
    if value < minimum:
        raise ValueError(f"expected an integer >= {minimum}, got {value}")
    return value


def parse_seconds(raw: str, *, allow_zero: bool = False) -> float:
    """``raw`` as a finite number of seconds, positive (or ``>= 0`` with ``allow_zero``)."""
    try:
        value = float(raw.strip())
    except ValueError:
        raise ValueError(f"expected a number of seconds, got {raw!r}") from None
    return check_seconds(value, allow_zero=allow_zero)


def check_seconds(value: float, *, allow_zero: bool = False) -> float:
    """``value`` if it is a finite positive (or, with ``allow_zero``, >= 0) number."""
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        what = "a number of seconds >= 0" if allow_zero else "a positive number of seconds"
        raise ValueError(f"expected {what}, got {value}")
    return float(value)
