"""Adversarial directory states (issue 10, further cases): maintenance and history
commands on a ``.memory/`` in odd shapes never delete or move anything outside it, never
lose a record the manifest lists, and never commit bytes the journal did not record."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from record_support import rec

from ipymemory import (
    MemoryConflictError,
    MemoryFormatError,
    MemoryStore,
    MemoryStoreError,
    PendingBatch,
)
from ipymemory.review.pending import PendingFiles
from ipymemory.store.maintenance import check, gc

OLD = (1, 1)  # an mtime far past every retention and gc age


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    """Three records, one forgotten and re-added (so history/files/ holds one file)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    s = MemoryStore(ws)
    s.extend([rec(f"n{i}", body=f"body {i}") for i in range(3)])
    s.forget(["n0"])
    s.extend([rec("n0", body="again")])
    return s


def _memory(store: MemoryStore) -> Path:
    return Path(store.root)


def _outside(tmp_path: Path) -> Path:
    """A directory outside the workspace holding a file gc would call old."""
    out = tmp_path / "outside"
    (out / "files").mkdir(parents=True)
    for path in (out / "precious.md", out / "files" / "precious.md"):
        path.write_text("not memory")
        os.utime(path, OLD)
    return out


@pytest.mark.parametrize("link", ["history", "history/files"])
def test_gc_never_removes_files_through_a_symlinked_history(
    store: MemoryStore, tmp_path: Path, link: str
) -> None:
    out = _outside(tmp_path)
    mem = _memory(store)
    shutil.copy(mem / "history" / "journal.jsonl", out / "journal.jsonl")
    shutil.rmtree(mem / link)
    os.symlink(out if link == "history" else out / "files", mem / link)
    before = sorted(p.name for p in out.rglob("*"))
    with pytest.raises(MemoryStoreError, match="not a directory"):
        gc(_memory(store).parent, stale_seconds=0)
    assert sorted(p.name for p in out.rglob("*")) == before
    assert any("not a directory" in p.reason for p in check(_memory(store).parent))


def test_recover_never_moves_files_in_through_a_symlinked_history(
    store: MemoryStore, tmp_path: Path
) -> None:
    mem = _memory(store)
    store.forget(["n2"])
    kept = next((mem / "history" / "files").glob("n2-*.md"))
    out = tmp_path / "outside"
    shutil.copytree(mem / "history", out)
    shutil.rmtree(mem / "history")
    os.symlink(out, mem / "history")
    listed = json.loads((mem / "manifest.json").read_text())["files"]
    # The manifest lists a file that exists only in the (symlinked) history.
    (mem / "manifest.json").write_text(json.dumps({"version": 1, "files": [*listed, kept.name]}))
    with pytest.raises(MemoryStoreError):
        store.recover()
    assert (out / "files" / kept.name).exists()
    assert not (mem / kept.name).exists()


def test_gc_keeps_the_file_a_listed_symlink_record_points_to(store: MemoryStore) -> None:
    # The record reader follows a symlink that resolves directly inside .memory, so the
    # file it points to holds a listed record even though the manifest names the link.
    mem = _memory(store)
    listed = json.loads((mem / "manifest.json").read_text())["files"]
    target = "n1-" + "f" * 32 + ".md"
    os.rename(mem / listed[0], mem / target)
    os.symlink(target, mem / listed[0])
    os.utime(mem / target, OLD)
    # ... and every link of a chain: listed -> middle -> end.
    middle, end = "n2-" + "e" * 32 + ".md", "n2-" + "d" * 32 + ".md"
    os.rename(mem / listed[1], mem / end)
    os.symlink(end, mem / middle)
    os.symlink(middle, mem / listed[1])
    for name in (middle, end):
        os.utime(mem / name, OLD, follow_symlinks=False)
    names = [r.name for r in store.records()]
    report = check(mem.parent)
    assert not any(
        any(n in p.file for n in (target, middle, end)) and "gc" in p.reason for p in report
    )
    gc(mem.parent, stale_seconds=0)
    assert [r.name for r in store.records()] == names


@pytest.mark.parametrize("op", ["undo", "restore"])
def test_undo_and_restore_bring_back_only_the_bytes_the_journal_recorded(
    store: MemoryStore, op: str
) -> None:
    # A kept file changed after it left the set (or a forged one) is not what was there.
    mem = _memory(store)
    store.forget(["n2"])
    seq = store.history(limit=1)[0].seq
    kept = next((mem / "history" / "files").glob("n2-*.md"))
    kept.write_text(kept.read_text().replace("body 2", "never in the set"))
    manifest = (mem / "manifest.json").read_bytes()
    with pytest.raises(MemoryConflictError, match="recorded"):
        if op == "undo":
            store.undo(seq)
        else:
            store.restore(seq - 1)
    assert (mem / "manifest.json").read_bytes() == manifest


def test_a_sparse_gigabyte_in_the_journal_is_skipped_not_read(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A line of 1 GB of zeros (a hole: no disk used) in the middle of the journal was
    # read byte by byte by history, check, gc, undo and restore (seconds per GiB).
    from ipymemory.store import history

    mem = _memory(store)
    journal = mem / "history" / "journal.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    with journal.open("wb") as f:
        f.writelines(lines[:-1])
        f.truncate(f.tell() + (1 << 30))
        f.seek(0, os.SEEK_END)
        f.write(b"\n" + lines[-1])
    read = [0]
    real_fdopen = os.fdopen

    class Counting(io.FileIO):
        def readinto(self, buffer: Any) -> int | None:
            got = super().readinto(buffer)
            read[0] += got or 0
            return got

    def counting_fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
        if args[:1] == ("rb",) and kwargs.get("closefd") is False:
            return io.BufferedReader(Counting(fd, "rb", closefd=False))
        return real_fdopen(fd, *args, **kwargs)

    monkeypatch.setattr(history.os, "fdopen", counting_fdopen)
    entries = store.history()
    assert [e.seq for e in entries] == [3, 2, 1]
    assert any("longer than" in p.reason for p in check(mem.parent))
    assert 0 < read[0] < 16 << 20


DEEP = b"[" * 100_000 + b"]" * 100_000  # well under a journal line's bound, past recursion


def test_a_deeply_nested_journal_line_is_a_bad_line_not_a_crash(store: MemoryStore) -> None:
    mem = _memory(store)
    journal = mem / "history" / "journal.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join([*lines[:-1], DEEP + b"\n", lines[-1]]))
    assert [e.seq for e in store.history()] == [3, 2, 1]
    assert any("line 3" in p.reason for p in check(mem.parent))
    journal.write_bytes(b"".join([*lines, DEEP + b"\n"]))  # the last line, read from the end
    store.forget(["n1"])
    assert [r.name for r in store.records()] == ["n2", "n0"]


def test_a_deeply_nested_pending_batch_is_reported_not_raised(store: MemoryStore) -> None:
    pending = _memory(store) / "pending"
    pending.mkdir()
    (pending / "b1.json").write_bytes(DEEP)
    saved, problems = PendingFiles(_memory(store)).load()
    assert saved == [] and "b1.json" in problems[0]


def test_the_server_tail_reader_skips_a_deeply_nested_line(store: MemoryStore) -> None:
    from ipymemory.server.history import _entries

    lines = (_memory(store) / "history" / "journal.jsonl").read_bytes()
    entries, bad = _entries(lines + DEEP + b"\n", False)
    assert [e.seq for e in entries] == [1, 2, 3] and bad == 1


@pytest.mark.parametrize("sha", [{"a": 1}, ["x"], 5, True])
def test_a_journal_entry_with_a_non_string_hash_is_a_bad_line(store: MemoryStore, sha: Any) -> None:
    # It was read as an entry, and undo/restore then raised TypeError (unhashable).
    mem = _memory(store)
    journal = mem / "history" / "journal.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    last = json.loads(lines[-1])
    last["added"][0]["sha256"] = sha
    journal.write_bytes(b"".join([*lines[:-1], json.dumps(last).encode() + b"\n"]))
    assert [e.seq for e in store.history()] == [2, 1]
    assert any("line 3" in p.reason for p in check(mem.parent))
    # Undo first brings the journal up to date: the commit the bad line stood for is
    # recorded as the `external` entry #3, which is what undo 3 then undoes.
    done = store.undo(3)
    assert [e.op for e in store.history()][1:3] == ["external", "forget"]
    assert done.undoes == 3 and [r.name for r in done.removed] == ["n0"]
    with pytest.raises(MemoryStoreError, match="no history entry #9"):
        store.undo(9)


def _expired_batch(batch_id: str) -> bytes:
    item = {"name": "p-note", "type": "user", "description": "d", "body": "b"}
    doc = {"version": 1, "id": batch_id, "saved_at": 1.0, "status": "pending", "error": None}
    doc.update(plan_error=None, items=[item], origins={"p-note": "user"}, plan=None, base=[])
    return json.dumps(doc).encode()


def test_pending_through_a_symlink_is_neither_written_nor_pruned(
    store: MemoryStore, tmp_path: Path
) -> None:
    # pending/ a symlink to a directory outside: saving a batch wrote the batch's text
    # there, and loading deleted (as "expired") batch files there.
    out = tmp_path / "elsewhere"
    out.mkdir()
    (out / "b1.json").write_bytes(_expired_batch("b1"))
    os.symlink(out, _memory(store) / "pending")
    files = PendingFiles(_memory(store))
    saved, problems = files.load()
    assert saved == [] and "not a directory" in problems[0]
    assert files.save(PendingBatch("b2", (rec("p-note"),), None, ())) is False
    assert "not a directory" in (files.last_error or "")
    # The typed error is kept beside the text (callers decide by type).
    assert files.last_failure is not None
    assert isinstance(files.last_failure.error, MemoryFormatError)
    files.remove("b1")
    assert sorted(p.name for p in out.iterdir()) == ["b1.json"]
