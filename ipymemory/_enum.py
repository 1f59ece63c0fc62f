"""A string enum that prints as its value (``enum.StrEnum`` needs Python 3.11; we support 3.10)."""

from __future__ import annotations

from enum import Enum

__all__ = ["StrEnum"]


class StrEnum(str, Enum):
    """Members are ``str``s: they compare equal to, print as and serialise to their value."""

    def __str__(self) -> str:
        return str(self.value)
