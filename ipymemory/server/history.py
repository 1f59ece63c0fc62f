"""The endpoint's read-only view of the history journal: the newest entries only.

Bounded like every read of the endpoint: at most :data:`HISTORY_MAX_BYTES` from the end
of ``.memory/history/journal.jsonl`` are read (opened without following a link, a
non-regular file refused), whatever the journal's size, and at most ``limit`` entries
answered. Each entry is reduced to its timeline row (when, op, names added and removed,
by which notebook and cell, the turn's query): no hashes, no hosts or pids.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from .._json import loads
from ..errors import MemoryFormatError, MemoryStoreError
from ..store.history import HistoryEntry
from ..store.layout import HISTORY_DIR_NAME, JOURNAL_NAME, open_regular
from ..views.history import entry_row
from .listing import Workspace, escaping_link

__all__ = ["HISTORY_DEFAULT_LIMIT", "HISTORY_MAX_BYTES", "HISTORY_MAX_LIMIT", "read_history"]

HISTORY_DEFAULT_LIMIT = 20
HISTORY_MAX_LIMIT = 100
# Journal lines are a few hundred bytes; this holds far more than HISTORY_MAX_LIMIT.
HISTORY_MAX_BYTES = 512 * 1024


def _tail(path: str, max_bytes: int) -> tuple[bytes, bool]:
    """The last ``max_bytes`` of the file and whether it starts mid-file."""
    fd = open_regular(path, JOURNAL_NAME)
    try:
        info = os.fstat(fd)
        start = max(0, info.st_size - max_bytes)
        return os.pread(fd, info.st_size - start, start), start > 0
    finally:
        os.close(fd)


def _entries(data: bytes, cut: bool) -> tuple[list[HistoryEntry], int]:
    """Complete, valid lines as entries (oldest first) and how many lines were bad."""
    lines = data.split(b"\n")
    lines.pop()  # after the last newline: empty, or a line still being written
    if cut and lines:
        lines.pop(0)  # begins mid-line
    entries, bad = [], 0
    for raw in lines:
        try:
            entries.append(HistoryEntry.from_json(loads(raw), "journal"))
        except (ValueError, MemoryFormatError):
            bad += 1
    return entries, bad


def read_history(ws: Workspace, limit: int = HISTORY_DEFAULT_LIMIT) -> tuple[int, dict[str, Any]]:
    """The newest ``limit`` timeline rows of ``ws``'s journal as ``(status, payload)``.

    ``more`` says older entries exist; ``etag`` changes when the rows would.
    """
    limit = max(1, min(limit, HISTORY_MAX_LIMIT))
    base: dict[str, Any] = {"directory": ws.rel, "entries": [], "more": False, "error": None}
    refusal = escaping_link(ws)
    if refusal is not None:
        return refusal.status, {**base, "error": refusal.message}
    history = ws.memory_dir / HISTORY_DIR_NAME
    if history.is_symlink() and not history.resolve().is_relative_to(ws.root):
        return 403, {**base, "error": f"{ws.rel_memory}/{HISTORY_DIR_NAME} links outside the root"}
    try:
        data, cut = _tail(str(history / JOURNAL_NAME), HISTORY_MAX_BYTES)
    except FileNotFoundError:
        data, cut = b"", False
    except (OSError, MemoryStoreError) as e:
        return 200, {**base, "error": ws.scrub(f"cannot read the history journal: {e}")}
    entries, bad = _entries(data, cut)
    newest = entries[::-1][:limit]
    payload = {
        **base,
        "entries": [entry_row(e) for e in newest],
        "more": cut or len(entries) > limit,
        "skipped_lines": bad,
    }
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8"))
    payload["etag"] = digest.hexdigest()[:20]
    return 200, payload
