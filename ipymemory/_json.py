"""Strict JSON reading, shared by the manifest reader and the side-query reply checks.

Python's ``json.loads`` accepts more than JSON: a repeated object key silently keeps
the last value, and ``NaN`` / ``Infinity`` parse as floats. Both files on disk and
model replies must be exactly JSON, so :func:`loads_strict` rejects those too. Each
caller turns the exceptions below into its own error naming what and where.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["DuplicateKeyError", "NonJSONConstantError", "TooDeepError", "loads", "loads_strict"]


class DuplicateKeyError(ValueError):
    """An object repeats ``key``."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice")
        self.key = key


class NonJSONConstantError(ValueError):
    """``constant`` (NaN, Infinity, -Infinity) is Python's extension, not JSON."""

    def __init__(self, constant: str) -> None:
        super().__init__(f"{constant} is not a JSON value")
        self.constant = constant


class TooDeepError(ValueError):
    """Nesting deeper than the parser's recursion limit."""

    def __init__(self) -> None:
        super().__init__("nested too deeply")


def loads(data: str | bytes) -> Any:
    """``json.loads`` for data read from a file: a deep ``[[[[…`` is :class:`TooDeepError`
    (a ``ValueError``, so a bad line or file), never a ``RecursionError`` crash."""
    try:
        return json.loads(data)
    except RecursionError:
        raise TooDeepError() from None


def loads_strict(text: str) -> Any:
    """``json.loads`` of the whole ``text``, minus what Python accepts beyond JSON.

    Raises :class:`DuplicateKeyError`, :class:`NonJSONConstantError`,
    :class:`TooDeepError` or ``json.JSONDecodeError`` (all ``ValueError``).
    """
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except RecursionError:
        # A deep "[[[[…" is a bad value, not a crash of the reader.
        raise TooDeepError() from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DuplicateKeyError(key)
        result[key] = value
    return result


def _no_constant(constant: str) -> Any:
    raise NonJSONConstantError(constant)
