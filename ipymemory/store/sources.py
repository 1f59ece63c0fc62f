"""Has what a record was drawn from changed since it was saved? (SPEC §11)

A turn's provenance keeps, per added name, the sha256 of every workspace file the agent
read (``files_sha256``: workspace-relative path -> hex digest). A current record whose
source file now hashes differently, or is gone, may state something that is no longer
true: ``check`` and ``%memory status`` warn about it, and the injected section says so,
so the model can weigh it. Nothing here changes the set.

The journal is local state anyone can edit, so its paths are untrusted: a path that is
absolute, climbs out of the workspace, goes through a symlink, or names anything but a
regular file is never opened (it counts as vanished). Files are opened without blocking
(a FIFO must not hang ``check``), never read past ``SOURCE_HASH_LIMIT`` (a file larger
than that is not read at all), and hashed once per call however many records cite them.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .. import _constants as C
from .history import HistoryEntry
from .record import StoredRecord
from .store import MemoryStore

__all__ = [
    "SavedFrom",
    "SourceChange",
    "file_sha256",
    "saved_from",
    "source_changes",
    "stale_records",
]

_O_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 20


@dataclass(frozen=True)
class SavedFrom:
    """What the journal says a record file was drawn from (its saved date is
    :func:`ipymemory.store.recency.saved_dates`'s)."""

    sources: Mapping[str, str] | None = None  # path -> sha256 when saved; None: unknown


@dataclass(frozen=True)
class SourceChange:
    """One source file of a record that is not as it was when the record was saved."""

    path: str
    state: Literal["changed", "vanished"]

    def __str__(self) -> str:
        return f"{self.path} ({self.state})"


def saved_from(entries: Iterable[HistoryEntry]) -> dict[str, SavedFrom]:
    """Per record file, what the newest journal entry that added it says (oldest first
    ``entries``; a file added again, by undo or restore, takes the later entry)."""
    out: dict[str, SavedFrom] = {}
    for entry in entries:
        for added in entry.added:
            meta = entry.provenance.get(added.name)
            out[added.file] = SavedFrom(_sources(meta))
    return out


# The last journal's saved_from, by the identity of its entries (a turn passes the
# session's JournalCache tuple, the same object until the journal grows): each turn
# otherwise walks every entry of a 10,000-record journal for a few records (issue 40).
_saved_memo: list[tuple[Sequence[HistoryEntry], dict[str, SavedFrom]]] = []


def _saved_of(journal: Sequence[HistoryEntry]) -> dict[str, SavedFrom]:
    for kept, saved in tuple(_saved_memo):
        if kept is journal:
            return saved
    saved = saved_from(journal)
    _saved_memo[:] = [(journal, saved)]  # keeps the tuple alive: its identity stays its own
    return saved


def _sources(meta: Mapping[str, Any] | None) -> Mapping[str, str] | None:
    hashes = meta.get("files_sha256") if isinstance(meta, Mapping) else None
    if not isinstance(hashes, Mapping):
        return None
    return {
        path: digest
        for path, digest in hashes.items()
        if isinstance(path, str) and isinstance(digest, str)
    }


def source_changes(
    workspace: str | os.PathLike[str],
    saved: Mapping[str, SavedFrom],
    files: Sequence[str],
) -> dict[str, tuple[SourceChange, ...]]:
    """For each of ``files`` (record files of the current set) whose sources are known,
    the sources that changed or vanished since it was saved (files with none left out)."""
    root = Path(workspace)
    digests: dict[str, str | None] = {}
    out: dict[str, tuple[SourceChange, ...]] = {}
    for file in files:
        sources = saved.get(file, SavedFrom()).sources
        if not sources:
            continue
        changes = []
        for path in sorted(sources):
            if path not in digests:
                digests[path] = file_sha256(root, path)
            now = digests[path]
            if now != sources[path]:
                changes.append(SourceChange(path, "vanished" if now is None else "changed"))
        if changes:
            out[file] = tuple(changes)
    return out


def file_sha256(root: Path, path: str, limit: int = C.SOURCE_HASH_LIMIT) -> str | None:
    """The sha256 of ``root/path`` (a workspace-relative POSIX path), or None when it
    cannot be an intact source: gone, unreadable, outside ``root``, reached through a
    symlink, not a regular file, or over ``limit`` bytes."""
    # The path as written, not normalised: "./x" or "a//b" is not how we record one.
    parts = path.split("/")
    if any(p in ("..", ".", "") for p in parts) or "\x00" in path:
        return None
    try:
        fd = _open_below(root, parts)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        # Not a regular file (a FIFO, a device) or too big to hash: nothing is read.
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        digest = hashlib.sha256()
        size = 0
        while chunk := os.read(fd, _CHUNK):
            size += len(chunk)
            if size > limit:
                return None
            digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


def _open_below(root: Path, parts: Sequence[str]) -> int:
    """Open ``parts`` under ``root`` one component at a time, following no symlink."""
    directory = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for part in parts[:-1]:
            step = os.open(part, _O_FLAGS | getattr(os, "O_DIRECTORY", 0), dir_fd=directory)
            os.close(directory)
            directory = step
        return os.open(parts[-1], _O_FLAGS, dir_fd=directory)
    finally:
        os.close(directory)


def stale_records(
    store: MemoryStore,
    names: Iterable[str] | None = None,
    *,
    journal: Sequence[HistoryEntry] | None = None,
    current: Sequence[StoredRecord] | None = None,
) -> dict[str, tuple[SourceChange, ...]]:
    """Record name -> its changed or vanished sources, over ``store``'s current set
    (or the records of it called ``names``); records without known sources, or whose
    sources are intact, are left out. ``journal`` (its entries, oldest first) and
    ``current`` (the set's entries): what the caller has read already (a turn reads
    each once)."""
    entries = tuple(current) if current is not None else store.entries()
    if names is not None:
        wanted = set(names)
        entries = tuple(e for e in entries if e.record.name in wanted)
    if not entries:
        return {}
    saved = _saved_of(journal) if journal is not None else saved_from(reversed(store.history()))
    changes = source_changes(store.workspace, saved, [e.file for e in entries])
    return {e.record.name: changes[e.file] for e in entries if e.file in changes}
