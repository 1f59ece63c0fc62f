"""Maintenance of a ``.memory`` directory: check, gc, reindex (``ipymemory`` CLI).

``check`` reports every problem with the file and the reason. Two severities:

* ``error`` — the directory is not consistent: a bad manifest, a listed file missing
  or invalid, a broken lock (anything but a directory at
  ``.lock``, files inside it, a lock side file that is not a regular file), or a MEMORY.md
  missing or out of date with the manifest (a commit killed between its index swap and
  its manifest swap leaves it ahead; readers never trust it, and ``ipymemory reindex``
  or the next commit rebuilds it). ``ipymemory check`` exits 1.
* ``warning`` — harmless files readers ignore, reported with exit status 0: record or
  temp files no manifest lists (``leftover``s of interrupted commits, which
  ``ipymemory gc`` removes), files that are not part of the format, and locks that
  make commits wait (an orphaned lock of ours, another agent's live or stale lock),
  and records whose source files (those the agent read in the turn that saved them)
  changed or vanished since (SPEC §11); and a set beyond the reference agent's own
  bounds (more records than ``max_index_lines``, or a whole catalog over
  ``max_index_bytes``): MEMORY.md then lists only the newest records, and the reference
  agent refuses to commit onto the set until a consolidation brings it back (issue 31).
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from .. import _constants as C
from .._secrets import redact
from ..errors import MemoryRecordUnreadable, MemoryStoreError
from . import durable
from .history import Journal, journal_findings, prune_kept
from .index import render_catalog, render_index
from .layout import (
    HISTORY_DIR_NAME,
    INDEX_NAME,
    KEPT_DIR_NAME,
    LOCAL_STATE_NAMES,
    MANIFEST_NAME,
    STALE_LOCK_PREFIX,
    manifest_byte_bound,
    read_regular,
)
from .lock import DEFAULT_LOCK_TIMEOUT, is_lock_artefact, lock_findings
from .names import is_valid_file_name
from .record import MAX_RECORD_BYTES, StoredRecord, record_secrets
from .sources import saved_from, source_changes
from .store import UNREADABLE_HINT, MemoryStore, name_clashes

__all__ = ["CheckReport", "GcResult", "Problem", "check", "gc", "reindex"]


@dataclass(frozen=True)
class Problem:
    """One finding of :func:`check`: the file concerned and why."""

    file: str
    reason: str
    severity: Literal["error", "warning"] = "error"
    # False when the file's status is unknown (the manifest is unreadable): not a leftover.
    collectable: bool = True

    def __str__(self) -> str:
        return f"{self.file}: {self.reason}"

    @property
    def leftover(self) -> bool:
        """True for an unreferenced file an interrupted commit leaves (``gc`` removes it)."""
        return (
            self.collectable
            and self.severity == "warning"
            and is_collectable(os.path.basename(self.file))
        )

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "reason": self.reason,
            "severity": self.severity,
            "leftover": self.leftover,
        }


class CheckReport(list[Problem]):
    """The result of :func:`check`: a list of problems, errors first."""

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self if p.severity == "error"]

    @property
    def ok(self) -> bool:
        """True if no problem is an error (warnings only)."""
        return not self.errors


def check(
    workspace: str | os.PathLike[str],
    *,
    max_index_lines: int = C.DEFAULT_MAX_INDEX_LINES,
    max_index_bytes: int = C.DEFAULT_MAX_INDEX_BYTES,
) -> CheckReport:
    """Verify the whole ``.memory`` directory; return every problem found (errors first).

    ``max_index_lines`` / ``max_index_bytes`` are MEMORY.md's bounds in force (the
    store's or the resolved settings', by default the reference agent's); a set beyond
    them is a warning (MEMORY.md lists what fits; the reference agent cannot commit onto
    it), never a broken manifest.
    """
    store = MemoryStore(workspace, max_index_lines, max_index_bytes)
    where = store.dir.where
    try:
        real = store.directory()
    except MemoryStoreError as e:
        return CheckReport([Problem(str(store.root), _reason(e, str(store.root)))])
    if real is None:
        return CheckReport()

    out: list[Problem] = []
    listed: tuple[str, ...] = ()
    entries: list[StoredRecord] = []
    try:
        listed = store.listed_files()
        manifest_ok = True
    except MemoryStoreError as e:
        out.append(Problem(where(MANIFEST_NAME), _reason(e, where(MANIFEST_NAME))))
        manifest_ok = False
    all_valid = manifest_ok
    for file in listed:
        try:
            entries.append(store.read_entry(file))
        except MemoryRecordUnreadable as e:  # its message ends with UNREADABLE_HINT
            out.append(Problem(where(file), _reason(e, where(file))))
            all_valid = False
        except MemoryStoreError as e:
            out.append(Problem(where(file), f"{_reason(e, where(file))} ({UNREADABLE_HINT})"))
            all_valid = False
    for name, first, second in name_clashes(entries):
        out.append(
            Problem(
                where(MANIFEST_NAME), f"record name {name!r} appears twice ({first} and {second})"
            )
        )
        all_valid = False
    out.extend(_check_secrets(entries, where))
    out.extend(_check_sources(store, entries, where))
    if all_valid:
        out.extend(_check_index(store, real, entries, max_index_lines, max_index_bytes))
    out.extend(
        _check_extras(store, real, store.dir.referenced(real, listed), manifest_ok=manifest_ok)
    )
    out.extend(_check_history(store, real, listed if manifest_ok else None))
    out.extend(
        Problem(where(f.name) if f.name != "." else str(store.root), f.reason, f.severity)
        for f in lock_findings(real)
    )
    out.sort(key=lambda p: p.severity != "error")
    return CheckReport(out)


def _check_secrets(entries: list[StoredRecord], where: Callable[..., str]) -> list[Problem]:
    """Stored records holding a credential (SPEC §7): named by kind and field, the
    credential never printed (a name or file name holding one is shown redacted)."""
    out = []
    for entry in entries:
        kinds = sorted(
            {f"{hit.kind} in its {field}" for field, hit in record_secrets(entry.record)}
        )
        if kinds:
            name = redact(entry.record.name)
            out.append(
                Problem(
                    redact(where(entry.file)),
                    f"record {name!r} holds a credential ({'; '.join(kinds)}): rotate it, "
                    f"then `ipymemory forget {name}` or rewrite the record without it",
                )
            )
    return out


def _check_sources(
    store: MemoryStore, entries: list[StoredRecord], where: Callable[..., str]
) -> list[Problem]:
    """Records whose source files changed or vanished since they were saved (SPEC §11):
    a warning, the record may still be true."""
    if not entries:
        return []
    try:
        saved = saved_from(reversed(store.history()))
    except MemoryStoreError:
        return []  # the journal's own problems are reported by _check_history
    changes = source_changes(store.workspace, saved, [e.file for e in entries])
    return [
        Problem(
            where(e.file),
            f"record {e.record.name!r}: source changed since saved: "
            + ", ".join(str(c) for c in changes[e.file]),
            "warning",
            collectable=False,
        )
        for e in entries
        if e.file in changes
    ]


def _check_history(store: MemoryStore, real: str, listed: tuple[str, ...] | None) -> list[Problem]:
    journal = store.journal()
    if journal is None:
        return []
    broken = journal.broken()
    if broken is not None:
        return [Problem(store.dir.where(HISTORY_DIR_NAME), broken, collectable=False)]
    if not journal.exists():
        return []
    try:
        got = store.dir.read(real, MANIFEST_NAME, manifest_byte_bound(C.MAX_SET_RECORDS))
    except MemoryStoreError:
        got = None
    findings = journal_findings(journal, got and got[0], listed, C.HISTORY_KEEP_ENTRIES)
    return [
        Problem(
            store.dir.where(*f.file.split("/")), f.reason, _SEVERITY[f.severity], collectable=False
        )
        for f in findings
    ]


_SEVERITY: dict[str, Literal["error", "warning"]] = {"error": "error", "warning": "warning"}


_NL = b"\n"


def _check_index(
    store: MemoryStore, real: str, entries: list[StoredRecord], max_lines: int, max_bytes: int
) -> list[Problem]:
    where = store.dir.where(INDEX_NAME)
    expected = render_index(entries, max_lines, max_bytes)
    whole = len(render_catalog(entries).encode("utf-8"))
    over: list[Problem] = []
    if len(entries) > max_lines or whole > max_bytes:
        listed = expected.count(_NL) - (1 if expected else 0)
        beyond = [
            f"{len(entries)} records > {max_lines}" if len(entries) > max_lines else None,
            f"a whole catalog of {whole} bytes > {max_bytes}" if whole > max_bytes else None,
        ]
        reason = (
            f"the set is beyond the reference agent's bounds "
            f"({'; '.join(b for b in beyond if b)}): "
            f"{INDEX_NAME} lists the newest {listed} of {len(entries)} records, and the "
            "reference agent refuses to commit onto this set; consolidate "
            "(`%memory consolidate`) to share it with the reference agent"
        )
        over.append(Problem(where, reason, "warning", collectable=False))
    return over + _compare_index(store, real, entries, expected)


def _compare_index(
    store: MemoryStore, real: str, entries: list[StoredRecord], expected: bytes
) -> list[Problem]:
    where = store.dir.where(INDEX_NAME)
    try:
        got = store.dir.read(real, INDEX_NAME, max(len(expected), store.max_index_bytes))
    except MemoryStoreError as e:
        return [Problem(where, _reason(e, where) + " (run `ipymemory reindex` to rebuild it)")]
    if got is None:
        if entries:
            return [Problem(where, "missing (run `ipymemory reindex` to rebuild it)")]
        return []
    if got[0] != expected:
        found = got[0].count(b"\n")
        return [
            Problem(
                where,
                f"does not match {MANIFEST_NAME} (run `ipymemory reindex` to rebuild it): "
                f"expected {expected.count(_NL)} lines, {len(expected)} bytes; "
                f"found {found} lines, {len(got[0])} bytes",
            )
        ]
    return []


def _check_extras(
    store: MemoryStore, real: str, listed: set[str], *, manifest_ok: bool = True
) -> list[Problem]:
    out: list[Problem] = []
    for name in sorted(store.dir.names(real)):
        if name in listed or name in (MANIFEST_NAME, INDEX_NAME) or name in LOCAL_STATE_NAMES:
            continue
        where = store.dir.where(name)
        if is_lock_artefact(name) and not name.startswith(STALE_LOCK_PREFIX):
            continue  # the lock's own files: lock_findings (in check) looks at them
        if not manifest_ok and is_valid_file_name(name):
            # Without a readable manifest nobody can tell set members from leftovers.
            reason = (
                f"not checked: {MANIFEST_NAME} is missing or unreadable, so whether this "
                "record belongs to the set is unknown (`ipymemory recover` rebuilds it)"
            )
            out.append(Problem(where, reason, "warning", collectable=False))
            continue
        if name.startswith(STALE_LOCK_PREFIX) and _has_entries(f"{real}/{name}"):
            reason = (
                "a stale lock moved aside, with files someone put inside it; look at "
                "them, then remove it (`ipymemory gc` leaves it)"
            )
            out.append(Problem(where, reason, "warning", collectable=False))
            continue
        if name.startswith(STALE_LOCK_PREFIX):
            reason = "a stale lock moved aside; `ipymemory gc` removes it"
        elif is_collectable(name) and is_valid_file_name(name):
            reason = (
                f"not listed in {MANIFEST_NAME} (left by an interrupted commit, or taken "
                "out of the set by another tool; `ipymemory gc` moves a valid record into "
                "history/files/ and removes anything else)"
            )
        elif is_collectable(name):
            reason = (
                f"not listed in {MANIFEST_NAME} (left by an interrupted commit; "
                "`ipymemory gc` removes it)"
            )
        elif is_valid_file_name(name):
            reason = (
                f"not listed in {MANIFEST_NAME}; not a generated record file name "
                "(<name>-<32 hex>.md), so `ipymemory gc` leaves it alone"
            )
        else:
            reason = "not part of the memory format; ignored by readers"
        out.append(Problem(where, reason, "warning"))
    return out


def _has_entries(path: str) -> bool:
    try:
        return os.path.isdir(path) and not os.path.islink(path) and bool(os.listdir(path))
    except OSError:
        return False


def _reason(error: MemoryStoreError, where: str) -> str:
    """The error's message without its leading ``<file>: `` or ``<file> `` (the Problem
    names the file)."""
    text = str(error)
    if not text.startswith(where):
        return text
    rest = text[len(where) :]
    if rest.startswith(": "):
        return rest[2:]
    return rest.lstrip() if rest[:1] == " " else text


# What a crashed writer can leave behind: record files with a generated id (ours and the
# reference agent's default: a UUID4 without dashes), our temp files, the reference
# agent's temp files (".<uuid>.tmp") and stale lock directories we moved aside. Only
# these are ever removed by gc: any other file (e.g. notes a user keeps here) is left.
_GENERATED_RECORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*-[0-9a-f]{32}\.md")
_REFERENCE_TEMP = re.compile(r"\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp")


def is_collectable(name: str) -> bool:
    """True if ``name``, when no manifest lists it, is a crash leftover gc may remove."""
    return (
        (_GENERATED_RECORD.fullmatch(name) is not None and is_valid_file_name(name))
        or durable.is_temp_name(name)
        or _REFERENCE_TEMP.fullmatch(name) is not None
        or name.startswith(STALE_LOCK_PREFIX)
    )


class GcResult(list[str]):
    """What :func:`gc` did: the names it removed (a list, kept files pruned from
    ``history/files/`` as ``history/files/<name>``), and in ``kept`` the valid record
    files no manifest lists that it moved into ``history/files/`` instead."""

    def __init__(self, removed: list[str], kept: list[str]) -> None:
        super().__init__(removed)
        self.kept = tuple(kept)


def gc(
    workspace: str | os.PathLike[str],
    stale_seconds: float = C.GC_MIN_AGE_SECONDS,
    *,
    max_index_lines: int = C.DEFAULT_MAX_INDEX_LINES,
    max_index_bytes: int = C.DEFAULT_MAX_INDEX_BYTES,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    retention_days: float = C.DEFAULT_HISTORY_RETENTION_DAYS,
    retention_bytes: int = C.DEFAULT_HISTORY_RETENTION_BYTES,
) -> GcResult:
    """Clear out files no manifest references (older than ``stale_seconds``), under the
    store lock, and prune kept files in ``history/files/`` past the retention
    (``retention_days`` since they left the set, then oldest first beyond
    ``retention_bytes``; never one the newest entries reference).

    A valid record file is never destroyed: first the journal is brought up to date
    (a set changed by another tool, or a manifest replaced by hand, becomes an
    ``external`` entry and the records it dropped move into ``history/files/``), then
    any other valid record file no manifest lists is moved into ``history/files/``
    too (its retention counted from the move). Only temp files, unreadable leftovers
    with a generated record name and stale lock directories are removed.

    Refuses (raises) if the current set does not load: without a valid manifest there is
    no telling which files are referenced (a missing one says to run ``recover``).
    """
    store = MemoryStore(workspace, max_index_lines, max_index_bytes, lock_timeout)
    if store.directory() is None:
        return GcResult([], [])
    removed: list[str] = []
    kept: list[str] = []
    with store.locked() as real:
        listed = store.dir.referenced(real, store.listed_files())
        store.entries()  # the whole set must load before anything is removed
        journal = store.journal()
        assert journal is not None
        if journal.exists():
            store.sync_journal()
        entries = journal.read().entries
        claimed = {r.file for e in entries for r in e.removed if r.kept}
        now = time.time()
        for name in sorted(store.dir.names(real)):
            if name in listed or not is_collectable(name):
                continue
            if name in claimed and not journal.kept(name):
                journal.keep(name)  # its move was interrupted: finish it
                continue
            path = f"{real}/{name}"
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            if now - st.st_mtime < stale_seconds:
                continue  # may belong to a commit in progress elsewhere
            try:
                if stat.S_ISDIR(st.st_mode):
                    if not name.startswith(STALE_LOCK_PREFIX):
                        continue  # a directory named like a record: not ours to remove
                    if os.listdir(path):
                        continue  # someone put files in that lock: check reports it
                    os.rmdir(path)
                elif _is_valid_record(store, real, name, st):
                    if _keep_leftover(journal, name, now):
                        kept.append(name)
                    continue
                else:
                    os.unlink(path)
            except FileNotFoundError:
                continue
            except OSError as e:
                raise MemoryStoreError(f"{store.dir.where(name)}: cannot remove ({e})") from e
            removed.append(name)
        pruned = prune_kept(
            journal,
            entries,
            now=now,
            max_age_days=retention_days,
            max_bytes=retention_bytes,
            keep_entries=C.HISTORY_KEEP_ENTRIES,
        )
        removed += [f"{HISTORY_DIR_NAME}/{KEPT_DIR_NAME}/{name}" for name in pruned]
    return GcResult(removed, kept)


def _is_valid_record(store: MemoryStore, real: str, name: str, st: os.stat_result) -> bool:
    """True if ``name`` (a regular file, no symlink) holds a record that parses."""
    if not stat.S_ISREG(st.st_mode) or not is_valid_file_name(name):
        return False
    try:
        store.read_entry(name)
    except MemoryStoreError:
        return False
    return True


def _keep_leftover(journal: Journal, name: str, now: float) -> bool:
    """Move a valid record file no manifest lists into ``history/files/``, dated now
    (the retention counts from when it left ``.memory/``). A kept file of that name
    with other bytes is never replaced: the leftover then stays (False)."""
    source = f"{journal.real}/{name}"
    if journal.kept(name):
        # Opened as every read under .memory is (never blocking, no link followed).
        mine = read_regular(source, MAX_RECORD_BYTES)
        same = mine == journal.read_kept(name, MAX_RECORD_BYTES)
        if same:
            os.unlink(source)  # the same bytes are kept already
            return True
        return False
    os.utime(source, (now, now), follow_symlinks=False)
    return journal.keep(name)


def reindex(
    workspace: str | os.PathLike[str],
    *,
    max_index_lines: int = C.DEFAULT_MAX_INDEX_LINES,
    max_index_bytes: int = C.DEFAULT_MAX_INDEX_BYTES,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
) -> int:
    """Rebuild MEMORY.md from the manifest, atomically, under the lock.

    Returns the number of records in the set (MEMORY.md lists those that fit its
    bounds). Raises if the set does not load (a missing manifest says to run
    ``recover``); then MEMORY.md is left as it was.
    """
    store = MemoryStore(workspace, max_index_lines, max_index_bytes, lock_timeout)
    return store.rebuild_index()
