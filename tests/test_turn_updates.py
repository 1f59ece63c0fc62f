"""SPEC §9 updates: an extracted item with ``replaces`` is committed as one swap with
the record it replaces (a ``consolidate`` entry marked ``updates``), undo brings the
old record back, rejecting it keeps the old record, a concurrent change to the old
record fails the commit cleanly, and every part of a batch is still ONE manifest swap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from record_support import rec
from turn_support import count_manifest_replaces

from ipymemory import (
    AgentSession,
    ConsolidationPlan,
    MemoryStore,
    PendingBatch,
    ScriptedModel,
    SessionConfig,
)
from ipymemory.review import Item
from ipymemory.store.recency import spacing
from ipymemory.views import BatchView
from ipymemory.views.history import HistoryDiffView, HistoryView

OLD = rec("report-deadline", "when the report is due", "Due Fri 2026-12-04.")
NEW = rec("report-deadline", "when the report is due (moved)", "Due Wed 2026-12-02.")


def _snapshot(workspace: str) -> dict[str, bytes]:
    root = Path(workspace, ".memory")
    return {
        p.name: p.read_bytes()
        for p in sorted(root.iterdir())
        if p.is_file() and not p.name.startswith(".lock")
    }


def _proposed(
    workspace: str,
    items: tuple[Any, ...],
    replaces: dict[str, str],
    plan: ConsolidationPlan | None = None,
) -> tuple[AgentSession, PendingBatch]:
    session = AgentSession(workspace, model=ScriptedModel([]), config=SessionConfig())
    base = session.store.records()
    batch = session.batch_registry.add(
        PendingBatch("b1", tuple(Item(i, replaces=replaces.get(i.name)) for i in items), plan, base)
    )
    return session, batch


def _names(workspace: str) -> list[str]:
    return [r.name for r in MemoryStore(workspace).records()]


def test_an_update_is_one_swap_journalled_as_an_update_and_undo_brings_the_old_back(
    workspace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemoryStore(workspace)
    store.extend([OLD, rec("other-note")])
    old_file = store.entries()[0].file
    added = rec("new-fact")
    session, batch = _proposed(workspace, (NEW, added), {"report-deadline": "report-deadline"})
    swaps = count_manifest_replaces(monkeypatch)
    done = session.commit(batch)
    assert done.ok and len(swaps) == 1
    assert done.committed == ("new-fact", "report-deadline")
    assert done.removed == ("report-deadline",)
    assert store.records() == (rec("other-note"), added, NEW)
    entry = store.history()[0]
    assert entry.op == "consolidate" and entry.updates == {"report-deadline": "report-deadline"}
    assert entry.source_names == ("report-deadline",) and not entry.consolidates
    assert [r.file for r in entry.removed] == [old_file]
    assert set(entry.provenance) == {"new-fact", "report-deadline"}  # as for an add
    assert entry.actor["plan_accepted"] is False
    # The timeline and the diff say it is an update.
    assert "(update) +new-fact +report-deadline -report-deadline" in (
        HistoryView.load(store).to_text()
    )
    diff = HistoryDiffView.load(store, entry).to_text()
    assert "updated report-deadline" in diff and "merged" not in diff
    assert "Due Wed 2026-12-02." in diff and "Due Fri 2026-12-04." in diff
    # An update is not a consolidation: the spacing count goes on (new-fact counts).
    assert spacing(store.history()[::-1]).added == 3  # other-note, report-deadline, new-fact
    # Undo: the old record comes back byte-identical, the update leaves.
    store.undo(entry.seq)
    assert store.records() == (rec("other-note"), OLD)
    assert Path(workspace, ".memory", old_file).exists() is False  # a new id: a new file
    back = store.entries()[1]
    assert (
        Path(workspace, ".memory", back.file).read_bytes()
        == Path(workspace, ".memory", "history", "files", old_file).read_bytes()
    )


def test_rejecting_an_update_keeps_the_old_record(workspace: str) -> None:
    MemoryStore(workspace).extend([OLD])
    session, batch = _proposed(workspace, (NEW, rec("b-note")), {"report-deadline": OLD.name})
    view = BatchView.of(batch)
    assert "\u21bb report-deadline updates report-deadline" in view.to_text()
    assert view.to_json()["items"][0]["replaces"] == "report-deadline"
    done = session.commit(batch, reject=["report-deadline"])
    assert done.ok and done.committed == ("b-note",) and done.removed == ()
    assert MemoryStore(workspace).records() == (OLD, rec("b-note"))
    assert MemoryStore(workspace).history()[0].op == "add"


def test_an_update_under_another_name_replaces_the_old_one(workspace: str) -> None:
    MemoryStore(workspace).extend([rec("uses-pandas", "dataframe library", "Uses pandas.")])
    polars = rec("uses-polars", "dataframe library (changed)", "Uses polars, not pandas.", "user")
    session, batch = _proposed(workspace, (polars,), {"uses-polars": "uses-pandas"})
    assert session.commit(batch).ok
    assert _names(workspace) == ["uses-polars"]
    assert MemoryStore(workspace).history()[0].updates == {"uses-polars": "uses-pandas"}


def test_a_concurrent_change_to_the_replaced_record_fails_cleanly(workspace: str) -> None:
    store = MemoryStore(workspace)
    store.extend([OLD, rec("other-note")])
    session, batch = _proposed(workspace, (NEW,), {"report-deadline": OLD.name})
    # Another kernel forgets the old record and writes its own version.
    store.forget(["report-deadline"])
    store.extend([rec("report-deadline", "theirs", "Due Thu 2026-12-03.")])
    before = _snapshot(workspace)
    failed = session.commit(batch)
    assert failed.error is not None and "changed during consolidation" in failed.error
    assert _snapshot(workspace) == before
    assert failed.batch is not None and failed.batch.status == "failed"


def test_an_unrelated_concurrent_change_does_not_stop_an_update(workspace: str) -> None:
    store = MemoryStore(workspace)
    store.extend([OLD, rec("other-note")])
    session, batch = _proposed(workspace, (NEW,), {"report-deadline": OLD.name})
    store.forget(["other-note"])  # another kernel; the update does not rest on it
    store.extend([rec("their-note")])
    assert session.commit(batch).ok
    assert _names(workspace) == ["their-note", "report-deadline"]


def test_updates_adds_and_a_plan_are_one_manifest_swap(
    workspace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    MemoryStore(workspace).extend([OLD, rec("x-note"), rec("y-note")])
    plan = ConsolidationPlan(("x-note", "y-note"), (rec("xy-note"),))
    session, batch = _proposed(
        workspace, (NEW, rec("fresh")), {"report-deadline": OLD.name}, plan=plan
    )
    swaps = count_manifest_replaces(monkeypatch)
    done = session.commit(batch)
    assert done.ok and len(swaps) == 1
    assert set(done.removed) == {"x-note", "y-note", "report-deadline"}
    assert _names(workspace) == ["fresh", "xy-note", "report-deadline"]
    entry = MemoryStore(workspace).history()[0]
    assert entry.updates == {"report-deadline": "report-deadline"} and entry.consolidates
    assert spacing(MemoryStore(workspace).history()[::-1]).added == 0


def test_nothing_to_merge_with_items_is_an_add_then_an_empty_consolidation(
    workspace: str,
) -> None:
    """Issue 44: a plain add whose consolidation found nothing is an ``add``; the
    consolidation is its own entry after it, changing nothing (the spacing's mark)."""
    MemoryStore(workspace).extend([OLD])
    session, batch = _proposed(workspace, (rec("fresh"),), {}, plan=ConsolidationPlan((), ()))
    view = BatchView.of(batch)
    assert "Consolidation (accepted): nothing to merge" in view.to_text()
    done = session.commit(batch)
    assert done.ok and done.committed == ("fresh",)
    marked, added = MemoryStore(workspace).history(2)
    assert added.op == "add" and [a.name for a in added.added] == ["fresh"]
    assert added.actor["batch"] == marked.actor["batch"] == batch.id
    assert marked.op == "consolidate" and marked.consolidates and marked.source_names == ()
    assert marked.added == () and marked.removed == () and marked.before == marked.after
    assert marked.seq == added.seq + 1
    assert spacing(MemoryStore(workspace).history()[::-1]).added == 0


def test_nothing_to_merge_alone_is_journalled_and_the_batch_is_committed(workspace: str) -> None:
    MemoryStore(workspace).extend([OLD])
    before = _snapshot(workspace)
    session, batch = _proposed(workspace, (), {}, plan=ConsolidationPlan((), ()))
    done = session.commit(batch)
    assert done.ok and done.batch is not None and done.batch.status == "committed"
    assert _snapshot(workspace) == before  # the set's files are untouched
    entry = MemoryStore(workspace).history()[0]
    assert entry.op == "consolidate" and entry.before == entry.after
    assert "(nothing to merge)" in HistoryView.load(MemoryStore(workspace)).to_text()
