"""Where a record lives in a memory store: one memory ``<prefix><name>.md`` per record.

The prefix is checked once, here, against the store's path rules (the SDK's
``memory_create_params``: a path starts with ``/``, has 1 to 20 segments, none empty,
``.`` or ``..``; no control or format characters nor U+2028/U+2029; NFC; at most 1,024
UTF-8 bytes), with room for the longest record name below it, so no push can be
refused for its path. A prefix also ends with ``/``: the store's ``path_prefix``
matches whole segments only then.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from .. import _constants as C
from ..errors import MemoryConfigError
from ..store.names import is_valid_name

__all__ = ["SUFFIX", "check_prefix", "default_prefix", "name_of", "path_of"]

SUFFIX = ".md"
# The longest record file stem we must fit below a prefix: a record name is bounded by
# the file name limit (NAME_MAX 255, minus "-<32 hex>.md").
_LONGEST_NAME = 255 - 36


def _bad_character(text: str) -> str | None:
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            return f"U+{ord(ch):04X}"
    return None


def check_prefix(prefix: str, where: str = "prefix") -> str:
    """``prefix`` if the store takes paths below it; else :class:`MemoryConfigError`
    saying why (``where`` names the argument or setting)."""
    if not isinstance(prefix, str) or not prefix.startswith("/") or not prefix.endswith("/"):
        raise MemoryConfigError(f"{where}: {prefix!r} must start and end with '/'")
    segments = prefix[1:-1].split("/") if prefix != "/" else []
    if any(s in ("", ".", "..") for s in segments):
        raise MemoryConfigError(f"{where}: {prefix!r} has an empty, '.' or '..' segment")
    bad = _bad_character(prefix)
    if bad is not None:
        raise MemoryConfigError(f"{where}: {prefix!r} holds a control or format character ({bad})")
    if unicodedata.normalize("NFC", prefix) != prefix:
        raise MemoryConfigError(f"{where}: {prefix!r} is not in Unicode NFC form")
    if len(segments) + 1 > C.MEMORY_PATH_MAX_SEGMENTS:
        raise MemoryConfigError(
            f"{where}: {prefix!r} has {len(segments)} segments; a memory path has at most "
            f"{C.MEMORY_PATH_MAX_SEGMENTS}, the record's own included"
        )
    room = C.MEMORY_PATH_MAX_BYTES - len(prefix.encode("utf-8")) - len(SUFFIX)
    if room < _LONGEST_NAME:
        raise MemoryConfigError(
            f"{where}: {prefix!r} is too long: a memory path is at most "
            f"{C.MEMORY_PATH_MAX_BYTES} bytes and a record name needs {_LONGEST_NAME}"
        )
    return prefix


def default_prefix(scope: str, workspace: Path) -> str:
    """``/ipymemory/<project directory name>/`` for the project, ``/ipymemory-user/``
    for the user scope; :class:`MemoryConfigError` when the directory's name cannot be a
    path segment (then a prefix must be given)."""
    if scope == "user":
        return C.SYNC_USER_PREFIX
    name = unicodedata.normalize("NFC", Path(workspace).name)
    prefix = f"{C.SYNC_PREFIX_ROOT}{name}/"
    try:
        return check_prefix(prefix)
    except MemoryConfigError as e:
        raise MemoryConfigError(
            f"the project directory's name cannot be a memory store path ({e}); "
            "give one with --prefix or the memory_store_prefix setting"
        ) from None


def path_of(prefix: str, name: str) -> str:
    """The memory path of record ``name``."""
    return f"{prefix}{name}{SUFFIX}"


def name_of(prefix: str, path: str) -> str | None:
    """The record name whose memory ``path`` is (directly below ``prefix``, a record
    name plus ``.md``); None for any other path."""
    if not path.startswith(prefix) or not path.endswith(SUFFIX):
        return None
    stem = path[len(prefix) : -len(SUFFIX)]
    return stem if is_valid_name(stem) else None
