"""A record file read by its name, wherever it is now: in ``.memory/`` while the set
holds it (or until the journal's file moves reach it), else in ``history/files/`` once
it left the set (SPEC §6). Undo, restore, recover and the history views read it so."""

from __future__ import annotations

import os
from dataclasses import dataclass

from .history import Journal
from .layout import HISTORY_DIR_NAME, KEPT_DIR_NAME, MemoryDir
from .record import MAX_RECORD_BYTES, MemoryRecord, parse_record

__all__ = ["RecordFile", "RecordFiles", "read_record_file"]


@dataclass(frozen=True)
class RecordFile:
    """The bytes of one record file and where they were read."""

    file: str
    data: bytes
    where: str  # the path read, as messages show it
    from_history: bool  # read from history/files/

    def record(self) -> MemoryRecord:
        """The record in it; :class:`MemoryFormatError` naming the path if invalid."""
        return parse_record(self.data, self.where)


def read_record_file(
    folder: MemoryDir, journal: Journal, file: str, *, in_set: bool = True
) -> RecordFile | None:
    """``.memory/<file>`` if ``in_set`` and it is there, else ``history/files/<file>``
    if it is kept there (never through a symlinked history); None if neither holds it.
    A file that cannot be read raises :class:`MemoryStoreError` naming it."""
    if in_set:
        got = folder.read(journal.real, file, MAX_RECORD_BYTES)
        if got is not None:
            return RecordFile(file, got[0], folder.where(file), False)
    if not journal.kept(file):
        return None
    where = folder.where(HISTORY_DIR_NAME, KEPT_DIR_NAME, file)
    return RecordFile(file, journal.read_kept(file, MAX_RECORD_BYTES), where, True)


@dataclass(frozen=True)
class RecordFiles:
    """The record files of one directory by name, in the set or kept in history: what a
    planner (:mod:`.reversal`, :mod:`.recovery`, :mod:`.journal_sync`) reads them
    through. It only reads."""

    folder: MemoryDir
    journal: Journal

    @property
    def real(self) -> str:
        """The resolved ``.memory`` directory."""
        return self.journal.real

    def read(self, file: str, *, in_set: bool = True) -> RecordFile | None:
        return read_record_file(self.folder, self.journal, file, in_set=in_set)

    def bytes_here(self, file: str) -> bytes | None:
        """The bytes of ``.memory/<file>`` (not history's copy); None if it is not there."""
        got = self.folder.read(self.real, file, MAX_RECORD_BYTES)
        return None if got is None else got[0]

    def here(self, file: str) -> bool:
        """True if ``.memory/<file>`` exists (whatever it is)."""
        return os.path.lexists(f"{self.real}/{file}")

    def kept(self, file: str) -> bool:
        """True if ``history/files/<file>`` holds it (:meth:`Journal.kept`)."""
        return self.journal.kept(file)

    def names(self) -> list[str]:
        """The names in ``.memory/`` (the directory listing)."""
        return self.folder.names(self.real)

    def mtime(self, file: str) -> int:
        """``.memory/<file>``'s modification time (ns); :class:`OSError` if it cannot."""
        return os.stat(f"{self.real}/{file}").st_mtime_ns
