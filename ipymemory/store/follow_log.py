"""The follow log: each turn's verdicts on the memories injected into it (SPEC §14).

``.memory/history/followed.jsonl`` lies beside the journal and, like it, is local state
that readers of the set ignore. One JSON object a line, sorted keys, per judged turn::

    {"actor": {...}, "at": "<UTC ISO-8601>", "journal_seq": 12, "session": "…",
     "turn": 3, "verdicts": [{"by": "code", "file": "prefers-polars-<id>.md",
     "name": "prefers-polars", "reason": "imports pandas", "verdict": "contradicts"}]}

plus, on a turn whose side-query failed, ``"unjudged": [{"file": …, "name": …}]``: the
memories checked but left without a verdict (issue 44: counted as not judged).

``session``, ``turn`` and ``actor`` (notebook, cell) say which turn it was; ``journal_seq``
is the journal's newest entry when it was judged, so the line sits in the journal's
timeline; ``file`` names the record's version (a reworded memory is a new file, whose
count starts again). It changes no record and no set: it is appended without the store
lock, one ``O_APPEND`` write of a whole line (a crash leaves at most a torn last line,
which readers skip and the next writer starts a new line after). It is not the journal:
``history``, ``undo``, ``gc``'s retention and the spacing of consolidations never see it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import _constants as C
from .._json import loads
from ..errors import MemoryFormatError, MemoryStoreError
from .history import Journal, now_utc
from .layout import FOLLOW_LOG_NAME
from .names import is_valid_file_name, is_valid_name

__all__ = ["FollowEntry", "FollowLog", "JudgedRecord", "verdict_counts"]

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True)
class JudgedRecord:
    """One memory's verdict in a turn: its name and file, the verdict, why, by what."""

    name: str
    file: str | None
    verdict: str
    reason: str
    by: str

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "file": self.file,
            "verdict": self.verdict,
            "reason": self.reason,
            "by": self.by,
        }

    @classmethod
    def from_json(cls, data: object) -> JudgedRecord:
        if not isinstance(data, dict):
            raise TypeError("a verdict is not an object")
        name, file = data["name"], data.get("file")
        if not is_valid_name(name):
            raise ValueError(f"record name {name!r}")
        if file is not None and not is_valid_file_name(file):
            raise ValueError(f"file {file!r}")
        verdict, reason, by = data["verdict"], data["reason"], data["by"]
        if verdict not in C.FOLLOW_VERDICTS or by not in C.FOLLOW_DECIDERS:
            raise ValueError(f"verdict {verdict!r} by {by!r}")
        if not isinstance(reason, str):
            raise TypeError("reason")
        return cls(name, file, verdict, reason, by)


@dataclass(frozen=True)
class FollowEntry:
    """One judged turn (see the module docstring)."""

    session: str
    turn: int
    verdicts: tuple[JudgedRecord, ...]
    at: str = field(default_factory=now_utc)
    journal_seq: int | None = None
    actor: Mapping[str, Any] = field(default_factory=dict)
    #: The memories the check could not judge (its side-query failed): name and file.
    unjudged: tuple[tuple[str, str | None], ...] = ()

    def to_json(self) -> dict[str, Any]:
        out = {
            "at": self.at,
            "session": self.session,
            "turn": self.turn,
            "journal_seq": self.journal_seq,
            "actor": dict(self.actor),
            "verdicts": [v.to_json() for v in self.verdicts],
        }
        if self.unjudged:  # only on lines that have them: older readers ignore the key
            out["unjudged"] = [{"name": name, "file": file} for name, file in self.unjudged]
        return out

    def line(self) -> bytes:
        return (json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False) + "\n").encode()

    @classmethod
    def from_json(cls, data: object) -> FollowEntry:
        if not isinstance(data, dict):
            raise TypeError("not an object")
        turn, seq = data["turn"], data.get("journal_seq")
        if type(turn) is not int or (seq is not None and type(seq) is not int):
            raise TypeError("turn/journal_seq")
        actor = data.get("actor") or {}
        if not isinstance(actor, dict) or not isinstance(data["verdicts"], list):
            raise TypeError("actor/verdicts")
        unjudged = data.get("unjudged") or []
        if not isinstance(unjudged, list):
            raise TypeError("unjudged")
        return cls(
            session=str(data["session"]),
            turn=turn,
            verdicts=tuple(JudgedRecord.from_json(v) for v in data["verdicts"]),
            at=str(data["at"]),
            journal_seq=seq,
            actor=actor,
            unjudged=tuple(_unjudged(u) for u in unjudged),
        )


def _unjudged(data: object) -> tuple[str, str | None]:
    if not isinstance(data, dict):
        raise TypeError("an unjudged memory is not an object")
    name, file = data["name"], data.get("file")
    if not is_valid_name(name):
        raise ValueError(f"record name {name!r}")
    if file is not None and not is_valid_file_name(file):
        raise ValueError(f"file {file!r}")
    return name, file


class FollowLog:
    """The follow log of one memory directory, beside its journal."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.path = f"{journal.dir}/{FOLLOW_LOG_NAME}"
        self.shown = journal.shown.rsplit(os.sep, 1)[0] + os.sep + FOLLOW_LOG_NAME

    def append(self, entry: FollowEntry) -> None:
        """Append one entry: one ``O_APPEND`` write (a whole line) and an fsync.
        :class:`MemoryStoreError` naming the log when it cannot be written."""
        broken = self.journal.broken()
        if broken is not None:
            raise MemoryFormatError(f"{self.shown}: {broken}")
        data = entry.line()
        try:
            _ensure_dir(self.journal.dir)
            fd = os.open(
                self.path,
                os.O_RDWR | os.O_APPEND | os.O_CREAT | _O_CLOEXEC | _O_NOFOLLOW,
                0o644,
            )
            try:
                # After a torn last line (a writer killed mid-write), start a new one.
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    data = b"\n" + data
                written = os.write(fd, data)
                if written != len(data):  # pragma: no cover - a regular file writes it all
                    raise OSError(f"short write ({written} of {len(data)} bytes)")
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as e:
            raise MemoryStoreError(f"{self.shown}: cannot append ({e})") from e

    def read(self, limit: int = C.FOLLOW_LOG_READ_BYTES) -> tuple[tuple[FollowEntry, ...], int]:
        """The entries of the last ``limit`` bytes, oldest first, and how many lines
        were skipped (torn, not JSON, not an entry). A broken history (a symlink, not a
        directory) is refused, never followed."""
        broken = self.journal.broken()
        if broken is not None:
            raise MemoryFormatError(f"{self.shown}: {broken}")
        try:
            fd = os.open(self.path, os.O_RDONLY | _O_CLOEXEC | _O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return (), 0
        except OSError as e:
            raise MemoryStoreError(f"{self.shown}: cannot open ({e})") from e
        try:
            size = os.fstat(fd).st_size
            start = max(0, size - limit)
            data = os.pread(fd, size - start, start)
        except OSError as e:
            raise MemoryStoreError(f"{self.shown}: cannot read ({e})") from e
        finally:
            os.close(fd)
        lines = data.split(b"\n")
        if start > 0:
            lines = lines[1:]  # begun mid-line
        entries: list[FollowEntry] = []
        skipped = 0
        for raw in lines[:-1]:  # the last piece has no line end: empty, or torn
            if not raw.strip():
                continue
            try:
                entries.append(FollowEntry.from_json(loads(raw)))
            except (ValueError, TypeError, KeyError):
                skipped += 1
        return tuple(entries), skipped + (1 if lines[-1].strip() else 0)


def _ensure_dir(path: str) -> None:
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        if not os.path.isdir(path) or os.path.islink(path):
            raise OSError(f"{os.path.basename(path)} is not a directory") from None


def verdict_counts(entries: Sequence[FollowEntry]) -> dict[str, dict[str, int]]:
    """Per record name, how many of its verdicts were each verdict, and how many of the
    turns it was checked in left it unjudged (key ``unjudged``)."""
    out: dict[str, dict[str, int]] = {}
    for entry in entries:
        for judged in entry.verdicts:
            counts = out.setdefault(judged.name, _zero())
            counts[judged.verdict] += 1
        for name, _ in entry.unjudged:
            out.setdefault(name, _zero())["unjudged"] += 1
    return out


def _zero() -> dict[str, int]:
    return {**dict.fromkeys(C.FOLLOW_VERDICTS, 0), "unjudged": 0}
