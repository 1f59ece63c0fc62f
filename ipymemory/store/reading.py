"""Reading the current set without a lock (SPEC §1, §6): the manifest, then the files it
lists, each parsed and validated once per file identity.

The manifest is replaced atomically and record files are immutable, so a reader reads
the manifest, then the files it lists; if one vanished (a concurrent commit moved it
away after its commit point) the reader starts over from the new manifest. A missing or
unreadable manifest beside record files (or a journal) is
:class:`~ipymemory.errors.MemoryRecoveryNeeded`, never an empty set.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .. import _constants as C
from ..errors import (
    MemoryConflictError,
    MemoryFormatError,
    MemoryRecordUnreadable,
    MemoryRecoveryNeeded,
    MemoryStoreError,
)
from .layout import HISTORY_DIR_NAME, JOURNAL_NAME, MANIFEST_NAME, MemoryDir, manifest_byte_bound
from .manifest import parse_manifest
from .names import is_valid_file_name
from .record import MAX_RECORD_BYTES, MemoryRecord, StoredRecord, parse_record

__all__ = ["RECOVER_HINT", "UNREADABLE_HINT", "Loader", "ReadableSet", "SetReader", "name_clashes"]

#: Appended to every error that leaves the set unknown.
RECOVER_HINT = (
    "run `ipymemory recover --dry-run` to see how the set would be rebuilt, "
    "then `ipymemory recover`"
)

#: Appended to the error of one listed record file that does not load.
UNREADABLE_HINT = "fix the file, or `ipymemory recover` rebuilds the set without it"

#: How one listed file is read: ``(real directory, file, present)`` -> its entry.
Loader = Callable[[str, str, "set[str] | None"], StoredRecord]

_READ_RETRIES = 50

# Parsed records by (directory, file name), with the file's stat identity. Record files
# are immutable once written, so a warm read is a stat per file instead of a parse
# (~125 µs each). Shared by every store in the process.
_StatKey = tuple[int, int, int, int, int]
_record_cache: dict[tuple[str, str], tuple[_StatKey, StoredRecord]] = {}
_RECORD_CACHE_MAX = 20_000


def _stat_key(st: os.stat_result) -> _StatKey:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


# A turn reads its set again cheaply (issue 40: a turn over thousands of records must not
# stat each file before its first request). Every change to a set swaps the manifest (a
# new file renamed into ``.memory``, which moves the directory's times too), and record
# files are immutable once written (SPEC §1): while the stat identities of the directory
# and of its manifest are those of this reader's last unlocked read, that read is the set
# (``reuse=True``). Per store, and only when asked: every other read still stats each
# file, so a record edited in place by hand is seen there (and by the next turn after
# any change to the set).
_SetKey = tuple[_StatKey, _StatKey]
_Read = tuple[bytes | None, tuple[StoredRecord, ...], tuple[MemoryRecordUnreadable, ...]]


def _set_key(real: str) -> _SetKey | None:
    """The stat identities of ``real`` and its manifest (None: one cannot be read)."""
    try:
        directory = os.stat(real)
        manifest = os.stat(f"{real}/{MANIFEST_NAME}", follow_symlinks=False)
    except OSError:
        return None
    return _stat_key(directory), _stat_key(manifest)


class Vanished(Exception):
    """A listed file disappeared while reading (a concurrent commit may have removed it)."""

    def __init__(self, file: str) -> None:
        super().__init__(file)
        self.file = file


@dataclass(frozen=True)
class ReadableSet:
    """The current set as far as it reads (``MemoryStore.readable``): the entries that
    load, in manifest order, and one error per listed file that does not."""

    entries: tuple[StoredRecord, ...]
    unreadable: tuple[MemoryRecordUnreadable, ...] = ()


class SetReader:
    """The reads of one ``.memory`` directory (see the module docstring); keeps the
    last manifest it parsed."""

    def __init__(self, memory_dir: MemoryDir) -> None:
        self.dir = memory_dir
        self._manifest_cache: tuple[bytes, tuple[str, ...]] | None = None
        # The last unlocked read, with the stat identities that vouch for it.
        self._set_seen: tuple[str, _SetKey, _Read] | None = None

    def manifest(self, real: str) -> tuple[bytes | None, tuple[str, ...]]:
        """The manifest's bytes and the files it lists (``None, ()``: no set yet)."""
        where = self.dir.where(MANIFEST_NAME)
        bound = manifest_byte_bound(C.MAX_SET_RECORDS)
        try:
            got = self.dir.read(real, MANIFEST_NAME, bound)
            if got is None:
                lost = self.lost_set(real)
                if lost is None:
                    return None, ()  # a directory that never had a set: no records
                # A first commit writes an empty manifest before any record file, so a
                # record file seen after a missing manifest may be that commit's: look again.
                got = self.dir.read(real, MANIFEST_NAME, bound)
                if got is None:
                    raise MemoryRecoveryNeeded(f"{where}: missing, yet the directory holds {lost}")
            raw = got[0]
            cached = self._manifest_cache
            if cached is not None and cached[0] == raw:
                return raw, cached[1]
            files = parse_manifest(raw, where, C.MAX_SET_RECORDS)
        except MemoryRecoveryNeeded as e:
            raise MemoryRecoveryNeeded(f"{e}; {RECOVER_HINT}") from None
        except MemoryStoreError as e:
            raise MemoryRecoveryNeeded(f"{e}; {RECOVER_HINT}") from e
        self._manifest_cache = (raw, files)
        return raw, files

    def raw_manifest(self, real: str) -> bytes | None:
        """The manifest's bytes if it is a readable regular file (whatever they say)."""
        try:
            got = self.dir.read(real, MANIFEST_NAME, manifest_byte_bound(C.MAX_SET_RECORDS))
        except MemoryStoreError:
            return None
        return None if got is None else got[0]

    def record_file(self, real: str, file: str) -> tuple[bytes, os.stat_result] | None:
        """A listed record file's bytes and stat (None: missing); one that is not a
        readable regular file within the size bound is :class:`MemoryRecordUnreadable`."""
        try:
            return self.dir.read(real, file, MAX_RECORD_BYTES)
        except MemoryFormatError as e:
            raise MemoryRecordUnreadable(f"{e}; {UNREADABLE_HINT}", file) from e

    def parse(self, file: str, raw: bytes) -> MemoryRecord:
        """The record in ``raw`` (of ``file``); :class:`MemoryRecordUnreadable` if it
        breaks the format."""
        try:
            return parse_record(raw, self.dir.where(file))
        except MemoryFormatError as e:
            raise MemoryRecordUnreadable(f"{e}; {UNREADABLE_HINT}", file) from e

    def lost_set(self, real: str) -> str | None:
        """What shows a set existed here (record files, a journal), or None if nothing."""
        records = sum(1 for n in self.dir.names(real) if is_valid_file_name(n))
        journal = os.path.lexists(f"{real}/{HISTORY_DIR_NAME}/{JOURNAL_NAME}")
        found = [f"{records} record file{'s' * (records != 1)}"] if records else []
        found += ["a history journal"] if journal else []
        return " and ".join(found) or None

    def load(self, real: str, file: str, present: set[str] | None) -> StoredRecord:
        """The entry for a listed ``file``.

        ``present`` (the directory listing, taken under the lock) means: trust a cached
        parse -- record files are immutable -- after checking only that the file exists.
        Otherwise a cached parse is used only if the file's stat identity is unchanged.
        """
        key = (real, file)
        if present is not None:
            if file not in present:
                raise Vanished(file)
            hit = _record_cache.get(key)
            if hit is not None:
                return hit[1]
        else:
            hit = _record_cache.get(key)
            if hit is not None:  # nothing cached: skip the stat, read the file
                try:
                    st = os.stat(f"{real}/{file}", follow_symlinks=False)
                except FileNotFoundError:
                    raise Vanished(file) from None
                except OSError as e:
                    raise MemoryStoreError(f"{self.dir.where(file)}: cannot stat ({e})") from e
                if hit[0] == _stat_key(st):
                    return hit[1]
        got = self.record_file(real, file)
        if got is None:
            raise Vanished(file)
        raw, st = got
        entry = StoredRecord(file, self.parse(file, raw))
        if len(_record_cache) >= _RECORD_CACHE_MAX:
            _record_cache.clear()
        _record_cache[key] = (_stat_key(st), entry)
        return entry

    def read_set(
        self, real: str, load: Loader, *, locked: bool = False, reuse: bool = False
    ) -> tuple[bytes | None, tuple[StoredRecord, ...]]:
        """The manifest's bytes and the full, validated set it lists, each file read by
        ``load`` (retrying if a concurrent commit removes a file under us). ``locked``:
        the caller holds the writer lock. ``reuse``: the last read while the set did not
        change (see ``_SetKey``)."""
        raw, entries, _ = self._read(real, load, locked, partial=False, reuse=reuse)
        return raw, entries

    def readable(self, real: str, load: Loader, *, reuse: bool = False) -> ReadableSet:
        """The set without the listed files that do not load, each named (see
        ``MemoryStore.readable``); ``reuse`` as for :meth:`read_set`."""
        _, entries, unreadable = self._read(real, load, False, partial=True, reuse=reuse)
        return ReadableSet(entries, unreadable)

    def _read(
        self, real: str, load: Loader, locked: bool, *, partial: bool, reuse: bool = False
    ) -> _Read:
        """:meth:`read_set`; with ``partial``, a listed file that does not load is left
        out and its error returned third, instead of raised."""
        key = None if locked else _set_key(real)  # taken before the read it vouches for
        seen = self._set_seen
        # A whole read must still raise for a file that does not load: reuse a partial
        # read for it only when nothing was left out.
        fresh = reuse and key is not None and seen is not None and seen[:2] == (real, key)
        if fresh and seen is not None and (partial or not seen[2][2]):
            return seen[2]
        got = self._read_fresh(real, load, locked, partial=partial)
        if key is not None:
            self._set_seen = (real, key, got)
        return got

    def _read_fresh(self, real: str, load: Loader, locked: bool, *, partial: bool) -> _Read:
        for _ in range(_READ_RETRIES):
            raw, files = self.manifest(real)
            present = set(self.dir.names(real)) if locked and files else None
            unreadable: list[MemoryRecordUnreadable] | None = [] if partial else None
            try:
                entries = tuple(
                    entry
                    for f in files
                    if (entry := _load_or_note(load, (real, f, present), unreadable)) is not None
                )
            except Vanished as gone:
                if locked or self.manifest(real)[0] == raw:
                    # Same set (or nobody else can change it): the file is really missing.
                    raise MemoryRecoveryNeeded(
                        f"{self.dir.where(gone.file)}: listed in {MANIFEST_NAME} but "
                        f"missing; {RECOVER_HINT}"
                    ) from None
                continue
            clashes = name_clashes(entries) if len(entries) > 1 else []
            if clashes:
                name, first, second = clashes[0]
                raise MemoryFormatError(
                    f"{self.dir.where(MANIFEST_NAME)}: record name {name!r} "
                    f"appears twice ({first} and {second})"
                )
            return raw, entries, tuple(unreadable or ())
        raise MemoryConflictError(
            f"{self.dir.where(MANIFEST_NAME)}: the set kept changing while reading; try again"
        )


def _load_or_note(
    load: Loader,
    where: tuple[str, str, set[str] | None],
    unreadable: list[MemoryRecordUnreadable] | None,
) -> StoredRecord | None:
    """``load(*where)``; a file that does not load is noted in ``unreadable`` (None
    returned) when given, else raised."""
    try:
        return load(*where)
    except MemoryRecordUnreadable as e:
        if unreadable is None:
            raise
        unreadable.append(e)
        return None


def name_clashes(entries: Iterable[StoredRecord]) -> list[tuple[str, str, str]]:
    """Every record name held by two files: ``(name, first file, other file)``."""
    seen: dict[str, str] = {}
    out = []
    for entry in entries:
        other = seen.setdefault(entry.record.name, entry.file)
        if other != entry.file:
            out.append((entry.record.name, other, entry.file))
    return out
