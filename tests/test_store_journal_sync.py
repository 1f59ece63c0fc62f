"""The history side beside the store (``ipymemory/store/journal_sync.py``, issue 32):
bringing the journal up to the set is planned by a pure function -- reading the set,
the journal's entries and the record files, writing nothing -- and the store applies
exactly that plan under its lock."""

from __future__ import annotations

import hashlib
import json

import pytest
from record_support import rec
from store_support import record_files, snapshot

from ipymemory import MemoryStore, MemoryStoreError
from ipymemory.store.history import MAX_LINE_BYTES
from ipymemory.store.journal_sync import (
    commit_entry,
    newest,
    newest_first,
    plan_sync,
    unchanged_entry,
)
from ipymemory.store.plan import CommitPlan, new_entry
from ipymemory.store.record import render_record


@pytest.fixture
def store(workspace: str) -> MemoryStore:
    return MemoryStore(workspace)


def another_tool_swaps(store: MemoryStore, gone: str, name: str) -> str:
    """Another tool (the reference agent) takes ``gone`` out of the manifest -- leaving
    its file in .memory/ -- and adds a record file of its own; its file name."""
    theirs = f"{name}-0123456789abcdef0123456789abcdef.md"
    (store.root / theirs).write_bytes(render_record(rec(name)))
    files = [e.file for e in store.entries() if e.file != gone] + [theirs]
    (store.root / "manifest.json").write_bytes(
        json.dumps({"version": 1, "files": files}, separators=(",", ":")).encode()
    )
    return theirs


def manifest_bytes(store: MemoryStore) -> bytes:
    return (store.root / "manifest.json").read_bytes()


def test_a_change_not_ours_is_planned_without_writing_then_applied_as_planned(
    store: MemoryStore,
) -> None:
    alpha, _beta = store.extend([rec("alpha"), rec("beta")])
    theirs = another_tool_swaps(store, alpha.file, "zeta")
    before = snapshot(store.root)
    journal = store.journal()
    assert journal is not None
    entries = journal.read().entries

    plan = plan_sync(
        entries, newest(entries), manifest_bytes(store), store.entries(), record_files(store)
    )

    assert snapshot(store.root) == before  # planning wrote nothing
    assert plan.external is not None and plan.external.op == "external"
    assert plan.external.seq == 2 and plan.external.before == entries[-1].after
    assert plan.external.after == hashlib.sha256(manifest_bytes(store)).hexdigest()
    assert [(a.name, a.file) for a in plan.external.added] == [("zeta", theirs)]
    assert plan.external.added[0].sha256 == hashlib.sha256(before[theirs]).hexdigest()
    # alpha's file is still in .memory/: kept, and moved into history/files/.
    assert [(r.name, r.file, r.kept) for r in plan.external.removed] == [
        ("alpha", alpha.file, True)
    ]
    assert plan.moving == {alpha.file}

    synced = store.sync_journal()
    assert synced is not None
    assert (synced.op, synced.seq, synced.before, synced.after) == (
        "external",
        2,
        plan.external.before,
        plan.external.after,
    )
    assert (synced.added, synced.removed) == (plan.external.added, plan.external.removed)
    assert not (store.root / alpha.file).exists()
    assert (store.root / "history" / "files" / alpha.file).read_bytes() == before[alpha.file]
    # Now up to date: nothing more to write.
    entries = journal.read().entries
    again = plan_sync(
        entries, newest(entries), manifest_bytes(store), store.entries(), record_files(store)
    )
    assert (again.external, again.moving) == (None, frozenset())


def test_an_interrupted_move_is_planned_to_be_finished(store: MemoryStore) -> None:
    """A crash between a forget's journal line and its file move: the file is still in
    .memory/, the journal says it was kept; the plan finishes the move, no entry."""
    alpha, _beta = store.extend([rec("alpha"), rec("beta")])
    store.forget(["alpha"])
    kept = store.root / "history" / "files" / alpha.file
    (store.root / alpha.file).write_bytes(kept.read_bytes())
    kept.unlink()
    journal = store.journal()
    assert journal is not None
    entries = journal.read().entries
    plan = plan_sync(
        entries, newest(entries), manifest_bytes(store), store.entries(), record_files(store)
    )
    assert (plan.external, plan.moving) == (None, {alpha.file})


def test_a_commit_entry_that_could_not_be_written_is_refused_before_anything_is(
    store: MemoryStore,
) -> None:
    store.extend([rec("alpha")])
    journal = store.journal()
    assert journal is not None
    last = newest(journal.read().entries)
    added = new_entry(rec("beta"))
    plan = CommitPlan("add", store.entries(), (added,))
    line, data = commit_entry(journal, last, manifest_bytes(store), b"new", plan, plan.meta())
    assert (line.seq, line.op, data) == (2, "add", line.line())
    before = snapshot(store.root)
    # A lone surrogate (half an emoji) in the actor: no UTF-8 line can hold it.
    with pytest.raises(MemoryStoreError, match="the journal entry cannot be written"):
        commit_entry(journal, last, manifest_bytes(store), b"new", plan, ({"who": "\ud83d"}, {}))
    long = ({"note": "x" * (MAX_LINE_BYTES + 1)}, {})  # over what one line may hold
    with pytest.raises(MemoryStoreError, match=r"the journal entry would be \d+ bytes"):
        commit_entry(journal, last, manifest_bytes(store), b"new", plan, long)
    assert snapshot(store.root) == before
    same = unchanged_entry(last, manifest_bytes(store), CommitPlan("consolidate", ()), ({}, {}))
    assert same.before == same.after and same.seq == 2
    assert [e.seq for e in newest_first(journal)] == [1]
