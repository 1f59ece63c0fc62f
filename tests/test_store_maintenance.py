"""check / gc / reindex (the recovery half of SPEC §4)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from record_support import rec
from store_support import raised_in_thread

from ipymemory import MemoryFormatError, MemoryLockTimeout, MemoryStore, MemoryStoreError
from ipymemory.store.lock import StoreLock
from ipymemory.store.maintenance import Problem, check, gc, reindex

FID = "0123456789abcdef0123456789abcdef"


def age(path: Path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t), follow_symlinks=False)


@pytest.fixture
def store(workspace: str) -> MemoryStore:
    s = MemoryStore(workspace)
    s.extend([rec("a"), rec("b")])
    return s


def by_file(problems: list[Problem]) -> dict[str, Problem]:
    return {os.path.basename(p.file): p for p in problems}


# --- check ---------------------------------------------------------------------------


def test_check_clean_and_absent(store: MemoryStore, tmp_path: Path) -> None:
    report = check(store.workspace)
    assert report == [] and report.ok
    empty = tmp_path / "empty"
    empty.mkdir()
    assert check(empty) == []
    assert not (empty / ".memory").exists()


def test_check_reports_every_problem_with_file_and_reason(store: MemoryStore) -> None:
    root = store.root
    a, b = (e.file for e in store.entries())
    (root / a).write_bytes(b"---\nname: a\ndescription: d\ntype: 1\n---\n\nx\n")
    (root / b).unlink()
    (root / f"ghost-{FID}.md").write_text("junk")
    (root / f".tmp-{FID}").write_text("{")
    (root / "notes.txt").write_text("hi")
    report = check(store.workspace)
    found = by_file(report)
    assert set(found) == {a, b, f"ghost-{FID}.md", f".tmp-{FID}", "notes.txt"}
    assert "unknown type '1'" in found[a].reason and found[a].severity == "error"
    assert str(root) not in found[a].reason  # the file is named once, by the Problem
    assert found[b].reason.startswith("listed in manifest.json but missing (")
    assert "`ipymemory recover`" in found[b].reason
    assert found[f"ghost-{FID}.md"].severity == "warning" and found[f"ghost-{FID}.md"].leftover
    assert found[f".tmp-{FID}"].leftover
    assert found["notes.txt"].severity == "warning" and not found["notes.txt"].leftover
    assert not report.ok and [p.severity for p in report][:2] == ["error", "error"]
    assert str(found[a]).startswith(str(root / a) + ": ")
    assert found[a].to_json()["file"] == str(root / a)


def test_check_bad_manifest(store: MemoryStore) -> None:
    (store.root / "manifest.json").write_bytes(b'{"version":true,"files":[]}')
    report = check(store.workspace)
    assert [os.path.basename(p.file) for p in report.errors] == ["manifest.json"]
    assert "version must be the JSON number 1" in report.errors[0].reason
    # With no valid manifest nobody can tell members from leftovers: the record files
    # are reported as warnings, never as leftovers gc would remove.
    others = [p for p in report if p not in report.errors]
    assert len(others) == 2 and {p.severity for p in others} == {"warning"}
    assert not any(p.leftover for p in others)
    assert all("manifest.json is missing or unreadable" in p.reason for p in others)


def test_check_index_mismatch_and_missing(store: MemoryStore) -> None:
    index = store.root / "MEMORY.md"
    index.write_text(index.read_text() + "- [x](x.md) - forged\n")
    (problem,) = check(store.workspace)
    assert problem.file.endswith("MEMORY.md") and "does not match manifest.json" in problem.reason
    index.unlink()
    (problem,) = check(store.workspace)
    assert "missing" in problem.reason and problem.severity == "error"
    assert reindex(store.workspace) == 2
    assert check(store.workspace) == []


def test_check_plain_file_at_lock(store: MemoryStore) -> None:
    (store.root / ".lock").write_text("")
    (problem,) = check(store.workspace)
    assert problem.file.endswith(".lock") and "plain file" in problem.reason


def test_check_memory_symlink_outside(tmp_path: Path, workspace: str) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (Path(workspace) / ".memory").symlink_to(outside)
    (problem,) = check(workspace)
    assert "symlink pointing outside" in problem.reason


def test_a_set_beyond_the_reference_agents_bounds_is_a_warning(workspace: str) -> None:
    # Issue 31: a set past MEMORY.md's bounds (the reference agent's) commits; check says
    # the reference agent cannot commit onto it, as a warning, and how many are listed.
    store = MemoryStore(workspace, max_index_lines=3)
    store.extend([rec(f"r{i}") for i in range(5)])
    index = str(store.root / "MEMORY.md")
    report = check(workspace, max_index_lines=3)
    assert report.ok
    [warning] = [p for p in report if p.file == index]
    assert warning.severity == "warning" and not warning.leftover
    assert warning.reason.startswith(
        "the set is beyond the reference agent's bounds (5 records > 3): MEMORY.md lists "
        "the newest 2 of 5 records, and the reference agent refuses to commit onto this set"
    )
    assert "consolidate" in warning.reason
    # Checked against other bounds, the index is not the one those bounds give.
    report = check(workspace)
    assert [p.reason.split(" (")[0] for p in report.errors] == ["does not match manifest.json"]
    reindex(workspace)
    assert check(workspace).ok and not check(workspace)


def test_check_words_a_byte_bound_and_reads_a_set_committed_under_larger_bounds(
    workspace: str,
) -> None:
    big = MemoryStore(workspace, max_index_lines=500, max_index_bytes=100_000)
    big.extend([rec(f"r{i}") for i in range(250)])
    size = len(big.catalog().encode())
    report = check(workspace, max_index_lines=500, max_index_bytes=100_000)
    assert report.ok and not report
    reindex(workspace)  # under the default bounds: 200 lines, 4096 bytes
    report = check(workspace)
    assert report.ok
    [warning] = list(report)
    assert f"(250 records > 200; a whole catalog of {size} bytes > 4096)" in warning.reason
    assert len((big.root / "MEMORY.md").read_bytes()) <= 4096


# --- gc ------------------------------------------------------------------------------


def test_gc_removes_only_old_unreferenced_files(store: MemoryStore) -> None:
    root = store.root
    listed = {e.file for e in store.entries()}
    old_ghost, new_ghost = root / f"ghost-{FID}.md", root / f"fresh-{FID}.md"
    old_tmp, stale_lock = root / f".tmp-{FID}", root / f".lock.stale-{FID}"
    other = root / "notes.txt"
    for p in (old_ghost, new_ghost, old_tmp, other):
        p.write_text("x")
    stale_lock.mkdir()
    for p in (old_ghost, old_tmp, other, stale_lock, *(root / f for f in listed)):
        age(p, 120)
    removed = gc(store.workspace)
    assert removed == sorted([old_ghost.name, old_tmp.name, stale_lock.name])
    assert new_ghost.exists() and other.exists()
    assert all((root / f).exists() for f in listed)
    assert [r.name for r in store.records()] == ["a", "b"]
    assert gc(store.workspace, stale_seconds=0) == [new_ghost.name]
    assert not os.path.lexists(root / ".lock")


def test_gc_leaves_files_that_are_not_crash_leftovers(store: MemoryStore) -> None:
    # Only generated record names (<slug>-<32 hex>.md) and temp files are leftovers; a
    # user's own notes.md is reported but never deleted. The reference agent's temp
    # files (".<uuid>.tmp") are leftovers too.
    root = store.root
    notes, ref_tmp = root / "notes.md", root / ".0a1b2c3d-0000-4000-8000-0123456789ab.tmp"
    short_id = root / "thing-1234.md"
    for p in (notes, ref_tmp, short_id):
        p.write_text("x")
        age(p, 120)
    found = by_file(check(store.workspace))
    assert not found["notes.md"].leftover and "leaves it alone" in found["notes.md"].reason
    assert not found["thing-1234.md"].leftover
    assert found[ref_tmp.name].leftover
    assert gc(store.workspace) == [ref_tmp.name]
    assert notes.exists() and short_id.exists() and not ref_tmp.exists()
    assert [r.name for r in store.records()] == ["a", "b"]


def test_gc_refuses_when_the_set_does_not_load(store: MemoryStore) -> None:
    ghost = store.root / f"ghost-{FID}.md"
    ghost.write_text("x")
    age(ghost, 120)
    (store.root / "manifest.json").write_bytes(b"{")
    with pytest.raises(MemoryFormatError, match=r"manifest\.json: not valid JSON"):
        gc(store.workspace)
    assert ghost.exists()


def test_gc_waits_for_the_lock(store: MemoryStore) -> None:
    ghost = store.root / f"ghost-{FID}.md"
    ghost.write_text("x")
    age(ghost, 120)
    with StoreLock(store.root):
        errors = raised_in_thread(lambda: gc(store.workspace, lock_timeout=0.2))
    assert len(errors) == 1 and isinstance(errors[0], MemoryLockTimeout)
    assert ghost.exists()


def test_gc_without_store(tmp_path: Path) -> None:
    assert gc(tmp_path) == []


# --- reindex -------------------------------------------------------------------------


def test_reindex_rebuilds_exact_bytes(store: MemoryStore) -> None:
    index = store.root / "MEMORY.md"
    expected = index.read_bytes()
    index.write_text("garbage")
    assert reindex(store.workspace) == 2
    assert index.read_bytes() == expected == store.catalog().encode()
    assert not [p for p in store.root.iterdir() if p.name.startswith(".tmp-")]


def test_reindex_bounds_the_index_and_refuses_without_store(
    store: MemoryStore, tmp_path: Path
) -> None:
    index = store.root / "MEMORY.md"
    index.write_text("garbage")
    # Issue 31: a bound too small for one line leaves the note; too small for it, nothing.
    assert reindex(store.workspace, max_index_bytes=100) == 2
    assert index.read_text() == (
        "<!-- 2 more records are listed only in manifest.json (MEMORY.md is bounded) -->\n"
    )
    assert reindex(store.workspace, max_index_bytes=10) == 2
    assert index.read_text() == ""
    with pytest.raises(MemoryStoreError, match="no memory directory"):
        reindex(tmp_path)
