"""Recovery of a set whose manifest is missing or unreadable (SPEC §6 ``recover``).

:func:`plan_recovery` decides, without writing anything, which files the rebuilt
manifest would list and why, from what the store read (why the set does not load, the
files the manifest lists if it parses, the journal's entries) and the record files it
reads through :class:`~.kept.RecordFiles`; ``MemoryStore.recover`` applies the plan in
one commit (:func:`recovery_commit`).
Sources, in order of trust:

1. ``manifest`` — the manifest parses, but some file it lists is missing or invalid:
   keep the files that load, bring back a missing one still kept in ``history/files/``.
2. ``journal`` — the manifest is gone or unreadable: the journal's last known set, with
   the files of it that exist (or are kept in ``history/files/``), plus every valid
   record file the journal never saw whose name that set does not hold (a commit by
   another tool such as the reference agent, or one interrupted between its commit
   point and its journal line: SPEC §6 names both), the newest of each name.
3. ``files`` — no usable journal either: every valid record file in ``.memory/``. Where
   two files hold the same name the newest (modification time, then file name) wins.
   This may bring back a record that was replaced or forgotten while its file was
   left behind by a crash; the dry run lists every file so the user can judge.

Every record file present is accounted for: in the plan with the reason it is in, or
in ``skipped`` with the reason it is out. Nothing is ever deleted: files left out stay
where they are (``gc`` later moves a valid record file no manifest lists into
``history/files/``, never deletes it).
"""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..errors import MemoryStoreError
from .history import Added, HistoryEntry, Removed, replay, sha256_hex
from .kept import RecordFiles
from .layout import HISTORY_DIR_NAME, KEPT_DIR_NAME, MANIFEST_NAME, SET_ASIDE_PREFIX
from .names import is_valid_file_name
from .plan import CommitPlan
from .record import StoredRecord, parse_record

__all__ = ["RecoveryPlan", "plan_recovery", "recovery_commit"]

Source = Literal["none", "manifest", "journal", "files"]


@dataclass(frozen=True)
class RecoveryPlan:
    """What ``recover`` does (or did): the set it rebuilds and what it leaves out."""

    source: Source
    problem: str | None  # why the set does not load; None: nothing to recover
    files: tuple[str, ...] = ()  # the rebuilt manifest, in set order
    names: tuple[str, ...] = ()  # the record names of ``files``
    reasons: tuple[str, ...] = ()  # why each of ``files`` is in the set
    from_history: tuple[str, ...] = ()  # files moved back from history/files/
    missing: tuple[str, ...] = ()  # files of the known set found nowhere
    skipped: tuple[tuple[str, str], ...] = ()  # (file, why) left out, never deleted
    set_aside: str | None = None  # where an unreplaceable manifest path is moved
    applied: bool = False
    entries: tuple[StoredRecord, ...] = field(default=(), repr=False, compare=False)

    @property
    def needed(self) -> bool:
        return self.problem is not None

    def to_json(self) -> dict[str, object]:
        return {
            "needed": self.needed,
            "applied": self.applied,
            "source": self.source,
            "problem": self.problem,
            "files": list(self.files),
            "names": list(self.names),
            "reasons": list(self.reasons),
            "from_history": list(self.from_history),
            "missing": list(self.missing),
            "skipped": [{"file": f, "reason": r} for f, r in self.skipped],
            "set_aside": self.set_aside,
        }

    def __str__(self) -> str:
        if not self.needed:
            return "the set loads; nothing to recover"
        verb = "rebuilt" if self.applied else "would rebuild"
        lines = [f"problem: {self.problem}", f"{verb} the set from the {self.source}:"]
        lines += [
            f"  {name} ({file}): {why}"
            for name, file, why in zip(self.names, self.files, self.reasons, strict=True)
        ]
        if not self.files:
            lines.append("  (an empty set)")
        lines += [f"  from history: {f}" for f in self.from_history]
        lines += [f"missing (left out): {f}" for f in self.missing]
        lines += [f"left alone: {f}: {why}" for f, why in self.skipped]
        if self.set_aside:
            lines.append(f"the unreadable {MANIFEST_NAME} is moved to {self.set_aside}")
        return "\n".join(lines)


def plan_recovery(
    problem: str | None,
    listed: Sequence[str] | None,
    journal: Sequence[HistoryEntry] | None,
    files: RecordFiles,
) -> RecoveryPlan:
    """The plan for a set that does not load because of ``problem`` (None: it loads, and
    there is nothing to recover), writing nothing (the caller holds the lock to apply
    it). ``listed``: the files the manifest lists when it parses (None when it does
    not); ``journal``: the journal's entries (None if there are none); ``files``: the
    directory's record files, read through it."""
    if problem is None:
        return RecoveryPlan("none", None)
    if listed is not None:
        plan = _from_list(files, "manifest", problem, listed, f"listed in {MANIFEST_NAME}")
        plan = _account_for_the_rest(files, plan, None)
    elif journal is not None:
        plan = _from_list(
            files, "journal", problem, list(replay(journal)), "in the journal's last set"
        )
        plan = _account_for_the_rest(files, plan, journal)
    else:
        plan = _from_files(files, problem)
    return replace(plan, set_aside=_to_set_aside(files.real))


def recovery_commit(
    plan: RecoveryPlan,
    entries: Sequence[HistoryEntry],
    files: RecordFiles,
    *,
    actor: Mapping[str, Any] | None = None,
) -> CommitPlan:
    """The commit that applies ``plan`` once its files are back in ``.memory/``. The set
    it replaces is unknown, so its journal entry says what changed against the last set
    of the journal's ``entries``: files of that set left out (kept or not), and files
    it never saw, with the sha256 of their bytes as they are now."""
    known = replay(entries)
    listed = {e.file for e in plan.entries}
    removed = tuple(Removed(a.name, f, files.kept(f)) for f, a in known.items() if f not in listed)
    added = tuple(
        Added(e.record.name, e.file, sha256_hex(_bytes_now(files, e.file)))
        for e in plan.entries
        if e.file not in known
    )
    return CommitPlan("recover", plan.entries, actor=actor, recorded=(added, removed))


def _bytes_now(files: RecordFiles, file: str) -> bytes:
    try:
        got = files.read(file)
    except MemoryStoreError:
        got = None
    return got.data if got else b""


def _to_set_aside(real: str) -> str | None:
    """A manifest path holding something no rename can replace (a directory, a FIFO):
    recover moves it aside, to a name of its own, instead of deleting it."""
    try:
        mode = os.lstat(f"{real}/{MANIFEST_NAME}").st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
        return None
    return f"{SET_ASIDE_PREFIX}{uuid.uuid4().hex[:8]}"


def _from_list(
    records: RecordFiles, source: Source, problem: str, files: Sequence[str], why: str
) -> RecoveryPlan:
    present = set(records.names())
    kept_dir = f"{HISTORY_DIR_NAME}/{KEPT_DIR_NAME}"
    entries: list[StoredRecord] = []
    reasons: list[str] = []
    from_history: list[str] = []
    missing: list[str] = []
    skipped: list[tuple[str, str]] = []
    taken: set[str] = set()
    for file in files:
        path = file if file in present else f"{kept_dir}/{file}"
        try:
            got = records.read(file, in_set=file in present)
            if got is None:
                missing.append(file)
                continue
            entry = StoredRecord(file, got.record())
        except MemoryStoreError as e:
            skipped.append((path, str(e)))
            continue
        path = f"{kept_dir}/{file}" if got.from_history else file
        if entry.record.name in taken:
            skipped.append((path, f"a second record named {entry.record.name!r}"))
            continue
        taken.add(entry.record.name)
        entries.append(entry)
        reasons.append(f"{why}; brought back from {kept_dir}/" if got.from_history else why)
        if got.from_history:
            from_history.append(file)
    return _plan(source, problem, entries, reasons, from_history, missing, skipped)


def _account_for_the_rest(
    files: RecordFiles, plan: RecoveryPlan, journal: Sequence[HistoryEntry] | None
) -> RecoveryPlan:
    """``plan`` with every other record file in ``.memory/`` accounted for. Without a
    ``journal`` (the manifest is readable) the set is what it lists: the others are out.
    With one, a valid file the journal never saw comes in unless the journal's set holds
    its name (the newest file of each name); one the journal says left the set is out."""
    done = set(plan.files) | {f for f, _ in plan.skipped}
    left: dict[str, HistoryEntry] = {}
    for line in journal or ():
        for r in line.removed:
            left[r.file] = line
    holders = dict(zip(plan.names, plan.files, strict=True))
    skipped = list(plan.skipped)
    found: list[tuple[int, str, StoredRecord]] = []
    for mtime, name, entry in _record_files(files, done, skipped):
        record = entry.record.name
        if journal is None:
            skipped.append((name, f"not listed in {MANIFEST_NAME}, which is readable ({_GC})"))
        elif name in left:
            gone = left[name]
            why = f"it left the set in #{gone.seq} ({gone.op}) and was never moved ({_GC})"
            skipped.append((name, why))
        elif record in holders:
            held = holders[record]
            why = f"a second record named {record!r}: the journal's set holds it ({held})"
            skipped.append((name, f"{why} ({_GC})"))
        else:
            found.append((mtime, name, entry))
    extra = _newest_per_name(found, skipped, f" ({_GC})")
    return replace(
        plan,
        files=plan.files + tuple(e.file for e in extra),
        names=plan.names + tuple(e.record.name for e in extra),
        reasons=plan.reasons + (_UNSEEN,) * len(extra),
        skipped=tuple(skipped),
        entries=plan.entries + tuple(extra),
    )


_GC = "left where it is; `gc` moves it into history/files/"
_UNSEEN = (
    "a valid record the journal never saw (committed by another tool, or by a commit "
    "interrupted before its journal line)"
)


def _from_files(files: RecordFiles, problem: str) -> RecoveryPlan:
    skipped: list[tuple[str, str]] = []
    found = list(_record_files(files, set(), skipped))
    entries = _newest_per_name(found, skipped)
    reasons = ["a valid record file (no journal to say more)"] * len(entries)
    return _plan("files", problem, entries, reasons, [], [], sorted(skipped))


def _record_files(
    files: RecordFiles, done: set[str], skipped: list[tuple[str, str]]
) -> Iterator[tuple[int, str, StoredRecord]]:
    """``(mtime, file, entry)`` of each valid record file in ``.memory/`` not in
    ``done``, by file name; one with a record file name that does not load goes into
    ``skipped`` with the reason."""
    for name in sorted(files.names()):
        if name in done or not is_valid_file_name(name):
            continue
        try:
            entry = _read(files, name)
            mtime = files.mtime(name)
        except (MemoryStoreError, OSError) as e:
            skipped.append((name, str(e)))
            continue
        yield mtime, name, entry


def _newest_per_name(
    found: list[tuple[int, str, StoredRecord]], skipped: list[tuple[str, str]], note: str = ""
) -> list[StoredRecord]:
    """Of ``(mtime, file, entry)``s, the newest file of each record name (oldest first);
    each older one goes into ``skipped`` (with ``note`` after the reason)."""
    newest: dict[str, tuple[int, str, StoredRecord]] = {}
    for item in sorted(found):
        older = newest.get(item[2].record.name)
        if older is not None:
            why = f"an older file of {item[2].record.name!r} ({item[1]}){note}"
            skipped.append((older[1], why))
        newest[item[2].record.name] = item
    return [item[2] for item in sorted(newest.values())]


def _read(files: RecordFiles, file: str) -> StoredRecord:
    """The record file in ``.memory/`` (never history's copy), validated."""
    where = files.folder.where(file)
    data = files.bytes_here(file)
    if data is None:
        raise MemoryStoreError(f"{where}: missing")
    return StoredRecord(file, parse_record(data, where))


def _plan(
    source: Source,
    problem: str,
    entries: list[StoredRecord],
    reasons: list[str],
    from_history: list[str],
    missing: list[str],
    skipped: list[tuple[str, str]],
) -> RecoveryPlan:
    return RecoveryPlan(
        source,
        problem,
        files=tuple(e.file for e in entries),
        names=tuple(e.record.name for e in entries),
        reasons=tuple(reasons),
        from_history=tuple(from_history),
        missing=tuple(missing),
        skipped=tuple(skipped),
        entries=tuple(entries),
    )
