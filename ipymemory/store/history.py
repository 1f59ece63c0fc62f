"""The journal of commits and the files they let go (SPEC §6).

``.memory/history/journal.jsonl`` holds one JSON object a line, sorted keys, for every
commit of ours (and an ``external`` entry for every change we find that is not ours).
It is appended under the store lock right after a commit's commit point, one write and
one fsync, so it never claims a commit that did not happen; a line torn by a crash is
cut off by the next writer. Record files that leave the set are moved into
``history/files/`` (after the journal line), which is what makes ``undo`` possible.
Bodies are never copied into the journal: it names files and their sha256.

This module reads and writes the journal; the store decides what goes into it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import hashlib
import json
import os
import socket
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._json import loads
from .._version import __version__
from ..errors import MemoryFormatError, MemoryStoreError
from .layout import HISTORY_DIR_NAME, JOURNAL_NAME, KEPT_DIR_NAME, read_regular
from .names import is_valid_file_name, is_valid_name

__all__ = [
    "JOURNAL_PATH",
    "MAX_LINE_BYTES",
    "OPS",
    "Added",
    "Finding",
    "HistoryEntry",
    "Journal",
    "JournalReport",
    "Removed",
    "actor_info",
    "journal_findings",
    "prune_kept",
    "replay",
    "sha256_hex",
]

OPS = ("add", "forget", "consolidate", "undo", "restore", "recover", "external")
# A journal line is small (names, hashes, provenance); a longer one is not ours.
MAX_LINE_BYTES = 1 << 20
_TAIL = 64 * 1024  # bytes read from the end to find the last entry

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_HOST = socket.gethostname()


def sha256_hex(data: bytes | None) -> str | None:
    """The journal's hash of manifest (or record) bytes; None for an absent file."""
    return None if data is None else hashlib.sha256(data).hexdigest()


def actor_info(given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Who commits: this tool and process, plus what the caller knows (session, notebook,
    cell). The caller's keys win, except that the process facts are always ours."""
    out: dict[str, Any] = dict(given or {})
    out.update(tool=f"ipymemory {__version__}", pid=os.getpid(), host=_HOST)
    return out


@dataclass(frozen=True)
class Added:
    name: str
    file: str
    sha256: str | None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "file": self.file, "sha256": self.sha256}


@dataclass(frozen=True)
class Removed:
    name: str
    file: str
    kept: bool

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "file": self.file, "kept": self.kept}


@dataclass(frozen=True)
class HistoryEntry:
    """One journal line: a commit, what it added and removed, who made it and why."""

    seq: int
    at: str
    op: str
    before: str | None
    after: str | None
    added: tuple[Added, ...] = ()
    removed: tuple[Removed, ...] = ()
    source_names: tuple[str, ...] = ()
    undoes: int | None = None
    restores: int | None = None
    actor: Mapping[str, Any] = field(default_factory=dict)
    provenance: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: A ``consolidate`` entry that applied extractor updates (SPEC §9 ``replaces``):
    #: new name -> the name of the record it replaced (also in ``source_names``).
    updates: Mapping[str, str] = field(default_factory=dict)

    @property
    def consolidates(self) -> bool:
        """Whether this entry is a consolidation (the consolidator's plan, "nothing to
        merge" included), which restarts the spacing count of SPEC §8/§9. An entry that
        only applies extractor updates is a ``consolidate`` swap too, but no plan ran:
        its actor says ``plan_accepted: false``."""
        if self.op != "consolidate":
            return False
        return not self.updates or self.actor.get("plan_accepted") is not False

    def to_json(self) -> dict[str, Any]:
        out = self._json()
        if self.updates:  # only on entries that have them: older lines stay as they were
            out["updates"] = dict(self.updates)
        return out

    def _json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "at": self.at,
            "op": self.op,
            "before": self.before,
            "after": self.after,
            "added": [a.to_json() for a in self.added],
            "removed": [r.to_json() for r in self.removed],
            "source_names": list(self.source_names),
            "undoes": self.undoes,
            "restores": self.restores,
            "actor": dict(self.actor),
            "provenance": {k: dict(v) for k, v in self.provenance.items()},
        }

    def line(self) -> bytes:
        text = json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False)
        return (text + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, data: object, where: str) -> HistoryEntry:
        """Validate one parsed line; :class:`MemoryFormatError` naming what is wrong."""
        try:
            return _entry(data)
        except (KeyError, TypeError, ValueError) as e:
            raise MemoryFormatError(f"{where}: not a journal entry ({e})") from None


def _entry(data: object) -> HistoryEntry:
    if not isinstance(data, dict):
        raise TypeError("not an object")
    seq, op = data["seq"], data["op"]
    if type(seq) is not int or seq < 1:
        raise ValueError(f"seq {seq!r}")
    if op not in OPS:
        raise ValueError(f"op {op!r}")
    for key in ("before", "after"):
        if data[key] is not None and not isinstance(data[key], str):
            raise TypeError(key)
    added = tuple(
        Added(_name(a["name"]), _file(a["file"]), _digest(a.get("sha256")))
        for a in data.get("added", [])
    )
    removed = tuple(
        Removed(_name(r["name"]), _file(r["file"]), r.get("kept") is True)
        for r in data.get("removed", [])
    )
    actor = data.get("actor") or {}
    provenance = data.get("provenance") or {}
    if not isinstance(actor, dict) or not isinstance(provenance, dict):
        raise TypeError("actor/provenance")
    undoes, restores = data.get("undoes"), data.get("restores")
    for value in (undoes, restores):
        if value is not None and type(value) is not int:
            raise TypeError("undoes/restores")
    updates = data.get("updates") or {}
    if not isinstance(updates, dict):
        raise TypeError("updates")
    return HistoryEntry(
        seq=seq,
        at=str(data["at"]),
        op=op,
        before=data["before"],
        after=data["after"],
        added=added,
        removed=removed,
        source_names=tuple(str(n) for n in data.get("source_names") or ()),
        undoes=undoes,
        restores=restores,
        actor=actor,
        provenance={str(k): v for k, v in provenance.items() if isinstance(v, dict)},
        updates={_name(k): _name(v) for k, v in updates.items()},
    )


def _name(value: object) -> str:
    if not is_valid_name(value):
        raise ValueError(f"record name {value!r}")
    assert isinstance(value, str)
    return value


def _digest(value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"sha256 {value!r}")
    return value


def _file(value: object) -> str:
    if not is_valid_file_name(value):
        raise ValueError(f"file {value!r}")
    assert isinstance(value, str)
    return value


def now_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def replay(entries: Iterable[HistoryEntry]) -> dict[str, Added]:
    """The set the entries describe, as ``{file: Added}`` in set order.

    Each entry removes its ``removed`` files and appends its ``added`` ones, which is
    how every commit of ours builds its new set from the current one.
    """
    files: dict[str, Added] = {}
    for entry in entries:
        for r in entry.removed:
            files.pop(r.file, None)
        for a in entry.added:
            files.pop(a.file, None)
            files[a.file] = a
    return files


@dataclass(frozen=True)
class JournalReport:
    """What reading the whole journal found: its valid entries and every problem."""

    entries: tuple[HistoryEntry, ...]
    bad_lines: tuple[tuple[int, str], ...] = ()  # (line number, why)
    torn_tail: bool = False
    end: int = 0  # the byte offset after the last complete line read


class Journal:
    """The journal and kept files of one resolved ``.memory`` directory."""

    def __init__(self, real: str, shown: str) -> None:
        self.real = real
        self.dir = f"{real}/{HISTORY_DIR_NAME}"
        self.path = f"{self.dir}/{JOURNAL_NAME}"
        self.kept_dir = f"{self.dir}/{KEPT_DIR_NAME}"
        self.shown = shown  # the journal's path as messages show it

    # --- reading ------------------------------------------------------------------

    def exists(self) -> bool:
        return os.path.lexists(self.path)

    def broken(self) -> str | None:
        """Why ``history`` (or the journal) cannot be used, or None."""
        checks = ((self.dir, "directory"), (self.kept_dir, "directory"), (self.path, "file"))
        for path, what in checks:
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            except OSError as e:
                return f"cannot be examined ({e})"
            want = stat.S_ISDIR if what == "directory" else stat.S_ISREG
            if not want(st.st_mode):
                name = os.path.relpath(path, self.real)
                return f"{name} is not a {what}; commits are refused until it is moved away"
        return None

    def read(self, start: int = 0) -> JournalReport:
        """Every entry, oldest first. A torn last line is not an entry (the next writer
        cuts it); any other bad line is reported and skipped. ``start``: a byte offset
        where a line begins (a report's ``end``), to read only what was appended since
        (line numbers then count from there)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | _O_CLOEXEC | _O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return JournalReport(())
        except OSError as e:
            raise MemoryStoreError(f"{self.shown}: cannot open ({e})") from e
        entries: list[HistoryEntry] = []
        bad: list[tuple[int, str]] = []
        torn = False
        end = start
        try:
            with os.fdopen(fd, "rb", closefd=False) as f:
                if start:
                    f.seek(start)
                number = 0
                while True:
                    raw = f.readline(MAX_LINE_BYTES + 1)
                    if not raw:
                        break
                    number += 1
                    if not raw.endswith(b"\n"):
                        if len(raw) > MAX_LINE_BYTES:
                            bad.append((number, f"longer than {MAX_LINE_BYTES} bytes"))
                            while raw and not raw.endswith(b"\n"):
                                _skip_hole(f, fd)
                                raw = f.readline(MAX_LINE_BYTES + 1)
                            end = f.tell()
                            continue
                        torn = True
                        break
                    end = f.tell()
                    try:
                        entry = HistoryEntry.from_json(loads(raw), f"line {number}")
                    except (ValueError, MemoryFormatError) as e:
                        bad.append((number, str(e)))
                        continue
                    entries.append(entry)
        except OSError as e:
            raise MemoryStoreError(f"{self.shown}: cannot read ({e})") from e
        finally:
            os.close(fd)
        return JournalReport(tuple(entries), tuple(bad), torn, end)

    def last(self) -> HistoryEntry | None:
        """The newest complete entry, read from the end of the file."""
        try:
            fd = os.open(self.path, os.O_RDONLY | _O_CLOEXEC | _O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise MemoryStoreError(f"{self.shown}: cannot open ({e})") from e
        try:
            size = os.fstat(fd).st_size
            span = _TAIL
            while True:
                start = max(0, size - span)
                tail = os.pread(fd, size - start, start)
                end = tail.rfind(b"\n")
                if end < 0 and start == 0:
                    return None
                begin = tail.rfind(b"\n", 0, end) if end >= 0 else -1
                if begin >= 0 or start == 0:
                    line = tail[begin + 1 : end + 1]
                    break
                if span > MAX_LINE_BYTES:
                    raise MemoryFormatError(f"{self.shown}: the last line is too long")
                span *= 4
        except OSError as e:
            raise MemoryStoreError(f"{self.shown}: cannot read ({e})") from e
        finally:
            os.close(fd)
        try:
            return HistoryEntry.from_json(loads(line), f"{self.shown}: last line")
        except ValueError as e:
            raise MemoryFormatError(f"{self.shown}: the last line is not JSON ({e})") from e

    def kept(self, file: str) -> bool:
        """True if ``history/files/<file>`` is a regular file reached without a symlink
        (a symlinked history would let undo, restore or recover take files from
        outside ``.memory``)."""
        if self.broken() is not None:
            return False
        try:
            return stat.S_ISREG(os.lstat(f"{self.kept_dir}/{file}").st_mode)
        except OSError:
            return False

    def read_kept(self, file: str, limit: int) -> bytes:
        """The bytes of a kept record file (at most ``limit``)."""
        where = f"{self.shown.rsplit(os.sep, 1)[0]}{os.sep}{KEPT_DIR_NAME}{os.sep}{file}"
        try:
            return read_regular(f"{self.kept_dir}/{file}", limit, where)
        except FileNotFoundError as e:
            raise MemoryStoreError(f"{where}: cannot open ({e})") from e

    # --- writing (under the store lock) --------------------------------------------

    def cut_torn_tail(self) -> bool:
        """Cut an incomplete last line (a writer killed mid-append); True if one was."""
        try:
            fd = os.open(self.path, os.O_RDWR | _O_CLOEXEC | _O_NOFOLLOW)
        except FileNotFoundError:
            return False
        try:
            size = os.fstat(fd).st_size
            if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
                return False
            keep = 0
            pos = size
            while pos > 0:
                start = max(0, pos - _TAIL)
                found = os.pread(fd, pos - start, start).rfind(b"\n")
                if found >= 0:
                    keep = start + found + 1
                    break
                pos = start
            os.ftruncate(fd, keep)
            os.fsync(fd)
            return True
        finally:
            os.close(fd)

    def append(self, entry: HistoryEntry, data: bytes | None = None) -> None:
        """Append one entry (``data``: its :meth:`HistoryEntry.line`, if made already):
        one write, one fsync."""
        self._ensure_dir(self.dir)
        data = entry.line() if data is None else data
        fd = os.open(
            self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _O_CLOEXEC | _O_NOFOLLOW, 0o644
        )
        try:
            written = os.write(fd, data)
            if written != len(data):  # pragma: no cover - a regular file writes it all
                raise OSError(errno.EIO, f"short journal write ({written} of {len(data)})")
            os.fsync(fd)
        finally:
            os.close(fd)

    def keep(self, file: str) -> bool:
        """Move ``.memory/<file>`` into ``history/files/``; True if it is there now."""
        self._ensure_dir(self.dir)
        self._ensure_dir(self.kept_dir)
        try:
            os.rename(f"{self.real}/{file}", f"{self.kept_dir}/{file}")
        except FileNotFoundError:
            return self.kept(file)
        return True

    def unkeep(self, file: str) -> None:
        """Move a kept file back into ``.memory/`` (recover)."""
        self._refuse_broken()
        os.rename(f"{self.kept_dir}/{file}", f"{self.real}/{file}")

    def kept_files(self) -> list[tuple[str, os.stat_result]]:
        """Every kept record file in ``history/files/`` (regular files with a record
        file name: anything else there is not ours to prune) with its stat.
        :class:`MemoryFormatError` if ``history`` is broken (e.g. a symlink)."""
        self._refuse_broken()
        out = []
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            for name in os.listdir(self.kept_dir):
                with contextlib.suppress(OSError):
                    st = os.lstat(f"{self.kept_dir}/{name}")
                    if stat.S_ISREG(st.st_mode) and is_valid_file_name(name):
                        out.append((name, st))
        return out

    def drop_kept(self, file: str) -> None:
        self._refuse_broken()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{self.kept_dir}/{file}")

    def _refuse_broken(self) -> None:
        broken = self.broken()
        if broken is not None:
            raise MemoryFormatError(f"{self.shown.rsplit(os.sep, 1)[0]}: {broken}")

    def _ensure_dir(self, path: str) -> None:
        try:
            os.mkdir(path, 0o755)
        except FileExistsError:
            if not os.path.isdir(path) or os.path.islink(path):
                raise MemoryFormatError(
                    f"{self.shown.rsplit(os.sep, 1)[0]}: {os.path.basename(path)} "
                    "is not a directory"
                ) from None
            return
        # New name: make it durable with its parent.
        fd = os.open(os.path.dirname(path), os.O_RDONLY | _O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _skip_hole(f: Any, fd: int) -> None:
    """Move ``f`` past a hole of a sparse file (zeros the disk does not hold, so no line
    end): an over-long line of a 1 GB sparse journal is skipped without reading it."""
    seek_data = getattr(os, "SEEK_DATA", None)
    if seek_data is None:  # pragma: no cover - every platform we run on has it
        return
    try:
        f.seek(os.lseek(fd, f.tell(), seek_data))
    except OSError as e:
        if e.errno == errno.ENXIO:  # nothing but a hole up to the end
            f.seek(0, os.SEEK_END)


def entries_referencing(entries: Sequence[HistoryEntry]) -> set[str]:
    """Every file the given entries name (added or removed)."""
    return {a.file for e in entries for a in e.added} | {r.file for e in entries for r in e.removed}


@dataclass(frozen=True)
class Finding:
    """A problem :func:`journal_findings` found: the file, why, and how bad."""

    file: str  # relative to .memory, e.g. history/journal.jsonl
    reason: str
    severity: str = "warning"


JOURNAL_PATH = f"{HISTORY_DIR_NAME}/{JOURNAL_NAME}"


def journal_findings(
    journal: Journal, manifest: bytes | None, listed: Sequence[str] | None, keep_entries: int
) -> list[Finding]:
    """Verify the journal against the set: lines, ``seq``, the hash chain, the last
    ``after`` against the current manifest, and the files the newest ``keep_entries``
    entries claim were kept. ``listed``: the manifest's files (None if unreadable)."""
    try:
        report = journal.read()
    except MemoryStoreError as e:
        return [Finding(JOURNAL_PATH, str(e), "error")]
    out = [Finding(JOURNAL_PATH, f"line {n}: {why}", "error") for n, why in report.bad_lines]
    if report.torn_tail:
        out.append(
            Finding(
                JOURNAL_PATH,
                "the last line is incomplete (a commit was interrupted while writing it); "
                "the next commit cuts it off",
            )
        )
    entries = report.entries
    if not entries:
        return out
    previous: HistoryEntry | None = None
    for entry in entries:
        if previous is not None:
            if entry.seq != previous.seq + 1:
                out.append(
                    Finding(
                        JOURNAL_PATH,
                        f"entry #{entry.seq} follows #{previous.seq}: seq must go up by one",
                        "error",
                    )
                )
            # A recover starts from a lost manifest, whatever the entry before left.
            if entry.before != previous.after and entry.op != "recover":
                out.append(
                    Finding(
                        JOURNAL_PATH,
                        f"entry #{entry.seq} starts from another set than #{previous.seq} "
                        "left (a change was not recorded)",
                    )
                )
        previous = entry
    last = entries[-1]
    if listed is None:
        pass  # the manifest itself is reported; comparing with it says nothing more
    elif last.after != sha256_hex(manifest):
        out.append(
            Finding(
                JOURNAL_PATH,
                f"the set changed after entry #{last.seq} without an entry (a commit "
                "interrupted before its journal line, or another tool); the next commit "
                "records it as `external`",
            )
        )
    elif set(replay(entries)) != set(listed):
        out.append(
            Finding(
                JOURNAL_PATH,
                f"the set the entries describe differs from {len(listed)} files the manifest lists",
            )
        )
    current = set(listed or ())
    for entry in entries[-keep_entries:]:
        for r in entry.removed:
            if not r.kept or journal.kept(r.file):
                continue
            if r.file not in current and os.path.lexists(f"{journal.real}/{r.file}"):
                why = "still in .memory/ (a commit was interrupted); the next commit moves it"
            else:
                why = f"missing: undo of #{entry.seq} cannot bring {r.name!r} back"
            out.append(
                Finding(
                    f"{HISTORY_DIR_NAME}/{KEPT_DIR_NAME}/{r.file}", f"kept by #{entry.seq}, {why}"
                )
            )
    return out


def prune_kept(
    journal: Journal,
    entries: Sequence[HistoryEntry],
    *,
    now: float,
    max_age_days: float,
    max_bytes: int,
    keep_entries: int,
) -> list[str]:
    """Remove kept files past the retention: older than ``max_age_days`` (since the entry
    that let them go; the file's mtime if no entry names it), then the oldest while all
    kept files together exceed ``max_bytes``. Never a file the newest ``keep_entries``
    entries reference. Returns the removed names."""
    protected = entries_referencing(entries[-keep_entries:]) if keep_entries > 0 else set()
    left_at: dict[str, float] = {}
    for entry in entries:
        for r in entry.removed:
            with contextlib.suppress(ValueError):
                left_at[r.file] = _dt.datetime.fromisoformat(entry.at).timestamp()
    files = journal.kept_files()
    total = sum(st.st_size for _, st in files)
    candidates = sorted(
        (left_at.get(name, st.st_mtime), name, st.st_size)
        for name, st in files
        if name not in protected
    )
    pruned = []
    for when, name, size in candidates:
        if now - when <= max_age_days * 86400 and total <= max_bytes:
            continue
        journal.drop_kept(name)
        total -= size
        pruned.append(name)
    return pruned
