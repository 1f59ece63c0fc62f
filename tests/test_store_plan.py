"""The planners (issue 21): undo, restore and recover are decided as one CommitPlan,
reading the set, the journal and the record files and writing nothing."""

from __future__ import annotations

import hashlib
import os

import pytest
from record_support import rec
from store_support import record_files, snapshot

from ipymemory import MemoryConflictError, MemoryStore
from ipymemory.store.plan import CommitPlan, new_entry
from ipymemory.store.record import render_record
from ipymemory.store.recovery import plan_recovery, recovery_commit
from ipymemory.store.reversal import plan_reversal


@pytest.fixture
def store(workspace: str) -> MemoryStore:
    return MemoryStore(workspace)


def test_an_undo_is_planned_without_writing(store: MemoryStore) -> None:
    store.extend([rec("alpha"), rec("beta")])
    store.forget(["alpha"])
    kept_bytes = {n: d for n, d in snapshot(store.root).items() if n.startswith("history/files/")}
    [(kept_name, alpha_bytes)] = kept_bytes.items()
    before = snapshot(store.root)
    current = store.entries()
    plan = plan_reversal("undo", 2, current, store.history()[::-1], record_files(store))
    assert snapshot(store.root) == before
    assert (plan.op, plan.undoes, plan.restores) == ("undo", 2, None)
    assert plan.kept == current and plan.removals == ()
    [back] = plan.additions
    assert back.record.name == "alpha"
    assert back.file != kept_name.rsplit("/", 1)[1]  # a new id
    assert plan.payload(back) == alpha_bytes  # the kept bytes, unchanged
    assert [e.record.name for e in plan.new_set] == ["beta", "alpha"]


def test_an_undo_plan_refuses_a_name_now_held_by_another_record(store: MemoryStore) -> None:
    store.extend([rec("alpha")])
    store.forget(["alpha"])
    store.extend([rec("alpha", body="Another alpha.")])
    with pytest.raises(MemoryConflictError, match="'alpha' is now held by another record"):
        plan_reversal("undo", 2, store.entries(), store.history()[::-1], record_files(store))


def test_journal_lines_of_a_plan_are_its_files() -> None:
    gone, added = new_entry(rec("old")), new_entry(rec("new"))
    plan = CommitPlan("consolidate", (), (added,), (gone,))
    [a], [r] = plan.journal_lines()
    assert (a.name, a.file) == ("new", added.file)
    assert a.sha256 == hashlib.sha256(render_record(added.record)).hexdigest()
    assert (r.name, r.file, r.kept) == ("old", gone.file, True)


def test_recovery_commit_says_what_changed_against_the_journals_last_set(
    store: MemoryStore,
) -> None:
    """The manifest is lost; a record file the journal never saw is in .memory/, and
    one of the journal's set is missing everywhere."""
    [alpha, beta] = store.extend([rec("alpha"), rec("beta")])
    os.unlink(store.root / "manifest.json")
    os.unlink(store.root / beta.file)
    stray = new_entry(rec("gamma"))
    stray_bytes = render_record(stray.record)
    (store.root / stray.file).write_bytes(stray_bytes)
    entries = store.history()[::-1]
    before = snapshot(store.root)
    problem = "the manifest is missing"
    plan = plan_recovery(problem, None, entries, record_files(store))
    assert (plan.source, plan.problem) == ("journal", problem)
    commit = recovery_commit(plan, entries, record_files(store))
    assert snapshot(store.root) == before
    assert commit.op == "recover" and commit.additions == () and commit.removals == ()
    assert [e.file for e in commit.new_set] == [alpha.file, stray.file]
    added, removed = commit.journal_lines()
    assert [(a.name, a.file, a.sha256) for a in added] == [
        ("gamma", stray.file, hashlib.sha256(stray_bytes).hexdigest())
    ]
    assert [(r.name, r.file, r.kept) for r in removed] == [("beta", beta.file, False)]
