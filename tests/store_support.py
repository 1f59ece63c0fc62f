"""Helpers shared by the store stress tests (crash, error, concurrency, state machine)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ipymemory import MemoryRecord, MemoryStore
from ipymemory.store.kept import RecordFiles
from ipymemory.store.record import parse_record

__all__ = [
    "is_lock_artefact",
    "listed_files",
    "record_files",
    "snapshot",
    "verify_listed",
]


def record_files(store: MemoryStore) -> RecordFiles:
    """The record files of ``store``'s directory, as the planners read them."""
    journal = store.journal()
    assert journal is not None
    return RecordFiles(store.dir, journal)


def is_lock_artefact(name: str) -> bool:
    """Lock files/directories are not part of the stored state (SPEC §4 locking)."""
    return name.startswith(".lock") or name.endswith(".lock")


def snapshot(root: str | os.PathLike[str]) -> dict[str, bytes]:
    """Every file's bytes in ``.memory/`` (lock artefacts excluded); {} if it is missing.

    Files of the local state directories (SPEC §6: ``history/``, ``pending/``) are keyed
    by their relative path, e.g. ``history/journal.jsonl``.
    """
    root = Path(root)
    if not root.exists():
        return {}
    out: dict[str, bytes] = {}
    for path in sorted(root.iterdir()):
        if is_lock_artefact(path.name):
            continue
        if path.name in ("history", "pending") and path.is_dir() and not path.is_symlink():
            for sub in sorted(path.rglob("*")):
                if sub.is_file():
                    out[sub.relative_to(root).as_posix()] = sub.read_bytes()
            continue
        assert path.is_file(), f"unexpected non-file {path} in .memory"
        out[path.name] = path.read_bytes()
    return out


def listed_files(root: str | os.PathLike[str]) -> list[str]:
    """The ``files`` of manifest.json, read raw (independently of the store code)."""
    path = Path(root) / "manifest.json"
    if not path.exists():
        return []
    data = json.loads(path.read_bytes().decode("utf-8"))
    assert (
        set(data) == {"version", "files"} and data["version"] == 1 and data["version"] is not True
    )
    files = data["files"]
    assert isinstance(files, list) and all(isinstance(f, str) for f in files)
    assert len(set(files)) == len(files), f"duplicate files in manifest: {files}"
    return files


def verify_listed(root: str | os.PathLike[str]) -> tuple[MemoryRecord, ...]:
    """Every listed file is present and valid; returns the records in manifest order."""
    root = Path(root)
    out = []
    for name in listed_files(root):
        path = root / name
        assert path.is_file(), f"listed file {name} is missing"
        out.append(parse_record(path.read_bytes(), str(path)))
    names = [r.name for r in out]
    assert len(set(names)) == len(names), f"duplicate record names listed: {names}"
    return tuple(out)


def names_of(records: Iterable[MemoryRecord]) -> list[str]:
    return [r.name for r in records]


def one_of(actual: Sequence[MemoryRecord], *candidates: Sequence[MemoryRecord]) -> int:
    """Index of the candidate set equal to ``actual`` (as tuples); AssertionError if none."""
    for i, cand in enumerate(candidates):
        if tuple(actual) == tuple(cand):
            return i
    raise AssertionError(
        f"torn set: {names_of(actual)} is none of {[names_of(c) for c in candidates]}"
    )


def raised_in_thread(call: Callable[[], object], join: float = 30.0) -> list[BaseException]:
    """Run ``call`` in another thread; return what it raised (empty if it returned)."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as e:
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join(timeout=join)
    return errors
