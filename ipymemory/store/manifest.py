"""manifest.json: the only authority on which record files form the current set (SPEC §1).

The file is exactly ``{"version":1,"files":[...]}`` in compact JSON without a trailing
newline, the bytes the reference agent writes. Reading is strict: anything else is a
:class:`MemoryFormatError` naming the file and the rule broken.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .._json import DuplicateKeyError, loads_strict
from ..errors import MemoryFormatError
from .layout import MANIFEST_NAME
from .names import is_valid_file_name

__all__ = ["MANIFEST_NAME", "MANIFEST_VERSION", "parse_manifest", "render_manifest"]

MANIFEST_VERSION = 1
_KEYS = frozenset({"version", "files"})


def render_manifest(files: Sequence[str]) -> bytes:
    """The exact bytes of a manifest listing ``files`` in set order."""
    return json.dumps(
        {"version": MANIFEST_VERSION, "files": list(files)},
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode("utf-8")


def parse_manifest(raw: bytes, where: str, max_entries: int | None = None) -> tuple[str, ...]:
    """Validate a manifest's bytes; return its file names in set order.

    ``where`` names the file in errors; ``max_entries`` bounds the number of files.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise MemoryFormatError(f"{where}: not valid UTF-8 ({e.reason} at byte {e.start})") from e
    try:
        data = loads_strict(text)
    except DuplicateKeyError as e:
        raise MemoryFormatError(f"{where}: {e}") from e
    except ValueError as e:  # JSONDecodeError, NaN/Infinity, too deep
        raise MemoryFormatError(f"{where}: not valid JSON ({e})") from e
    if not isinstance(data, dict):
        raise MemoryFormatError(
            f'{where}: must be a JSON object {{"version": 1, "files": [...]}}, '
            f"got {type(data).__name__}"
        )
    keys = set(data)
    if keys != _KEYS:
        extra = sorted(keys - _KEYS)
        missing = sorted(_KEYS - keys)
        raise MemoryFormatError(
            f"{where}: keys must be exactly version and files"
            + (f"; extra: {', '.join(map(repr, extra))}" if extra else "")
            + (f"; missing: {', '.join(missing)}" if missing else "")
        )
    version = data["version"]
    # bool is an int subclass and 1.0 == 1: only the JSON integer 1 is version 1.
    if type(version) is not int or version != MANIFEST_VERSION:
        raise MemoryFormatError(
            f"{where}: version must be the JSON number {MANIFEST_VERSION}, "
            f"got {json.dumps(version)}"
        )
    files = data["files"]
    if not isinstance(files, list):
        raise MemoryFormatError(f"{where}: files must be an array, got {type(files).__name__}")
    if max_entries is not None and len(files) > max_entries:
        raise MemoryFormatError(
            f"{where}: lists {len(files)} files, over the limit of {max_entries} entries"
        )
    seen: set[str] = set()
    for i, name in enumerate(files):
        if not isinstance(name, str):
            raise MemoryFormatError(
                f"{where}: files[{i}] must be a string, got {type(name).__name__}"
            )
        if not is_valid_file_name(name):
            raise MemoryFormatError(
                f"{where}: files[{i}] {name!r} is not a safe record file name "
                "(a lowercase slug followed by .md, not a reserved device name, "
                "no directories)"
            )
        if name in seen:
            raise MemoryFormatError(f"{where}: files lists {name!r} more than once")
        seen.add(name)
    return tuple(files)
