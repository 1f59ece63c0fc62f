"""Rules for record names and record file names (SPEC §1), in one place."""

from __future__ import annotations

import re

from ..errors import MemoryFormatError

__all__ = ["check_name", "is_valid_file_name", "is_valid_name"]

_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_FILE = re.compile(r"([a-z0-9]+(?:-[a-z0-9]+)*)\.md")
# Windows device names: a file called e.g. "nul.md" cannot be opened there, so a store
# written here must never contain one.
_RESERVED = frozenset(
    ["con", "prn", "aux", "nul"]
    + [f"com{i}" for i in range(1, 10)]
    + [f"lpt{i}" for i in range(1, 10)]
)


def is_valid_name(name: object) -> bool:
    """True if ``name`` is a lowercase slug that is not a Windows reserved name."""
    return isinstance(name, str) and _SLUG.fullmatch(name) is not None and name not in _RESERVED


def check_name(name: object, where: str = "record name") -> str:
    """Return ``name`` if valid, else raise :class:`MemoryFormatError` naming the rule."""
    if not isinstance(name, str):
        raise MemoryFormatError(f"{where}: must be a string, got {type(name).__name__}")
    if _SLUG.fullmatch(name) is None:
        raise MemoryFormatError(
            f"{where}: {name!r} is not a lowercase slug "
            "(only a-z, 0-9 and single hyphens between words)"
        )
    if name in _RESERVED:
        raise MemoryFormatError(f"{where}: {name!r} is a reserved Windows device name")
    return name


def is_valid_file_name(file_name: object) -> bool:
    """True if ``file_name`` is a safe record file name (``<slug>.md``, not reserved)."""
    if not isinstance(file_name, str):
        return False
    match = _FILE.fullmatch(file_name)
    return match is not None and match.group(1) not in _RESERVED
