"""Undo/restore proposals made in a notebook are kept in ``.memory/pending/`` like
extracted batches (SPEC §6): they survive a kernel restart, ``%memory pending`` lists
them, ``--open ID`` plans them again on the current set, and a decision removes the
file. Through a real IPython InteractiveShell; a restart unloads the extension."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from notebook_support import loaded_shell, memory
from record_support import rec

from ipymemory import MemoryStore
from ipymemory.notebook import get_session
from ipymemory.views import HistoryChangeView
from ipymemory.views.history_widgets import HistoryChangeReview
from ipymemory.views.pending import PendingView


@pytest.fixture
def ws(workspace: str) -> str:
    """#1 add a, b · #2 consolidate a, b -> ab · #3 add c · #4 forget c."""
    store = MemoryStore(workspace)
    store.extend([rec("a"), rec("b")])
    store.apply_consolidation(
        base_records=store.records(), source_names=["a", "b"], replacements=[rec("ab")]
    )
    store.extend([rec("c")])
    store.forget(["c"])
    return workspace


@pytest.fixture
def ip(ws: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.chdir(ws)
    with loaded_shell() as shell:
        yield shell


def restart(ip: InteractiveShell) -> None:
    """A new kernel, as far as ipymemory can tell: every session and widget is gone."""
    ip.run_line_magic("unload_ext", "ipymemory")
    ip.run_line_magic("load_ext", "ipymemory")


def names(ws: str) -> list[str]:
    return sorted(r.name for r in MemoryStore(ws).records())


def pending_files(ws: str) -> list[Path]:
    directory = Path(ws) / ".memory" / "pending"
    return sorted(directory.iterdir()) if directory.exists() else []


def propose(ip: InteractiveShell, line: str) -> str:
    review = memory(ip, line)
    assert isinstance(review, HistoryChangeReview) and review.status == "pending"
    return review.batch.id


def test_an_undo_proposal_survives_a_restart_and_is_committed(
    ip: InteractiveShell, ws: str
) -> None:
    batch_id = propose(ip, "undo 2")
    assert [p.name for p in pending_files(ws)] == [f"{batch_id}.json"]
    listing = memory(ip, "pending")
    assert [(e.id, e.live) for e in listing.entries] == [(batch_id, True)]

    restart(ip)
    listing = memory(ip, "pending")
    assert isinstance(listing, PendingView)
    [entry] = listing.entries
    assert (entry.id, entry.live) == (batch_id, False)
    assert entry.change is not None and entry.change.startswith("Undo #2")
    assert "Undo #2" in listing.to_text()
    assert names(ws) == ["ab"]  # proposing and restarting wrote nothing

    review = memory(ip, f"pending --open {batch_id}")
    assert isinstance(review, HistoryChangeReview) and review.status == "pending"
    text = review.static_view().to_text()
    assert "brings back: a, b" in text and "removes: ab" in text
    view = memory(ip, "commit")
    # What the change did to the set (was "0 extracted memories / Committed: nothing").
    assert isinstance(view, HistoryChangeView) and view.status == "committed"
    text = view.to_text()
    assert "brings back: a, b" in text and "removes: ab" in text and "Done" in text
    assert "extracted" not in text and "nothing" not in text
    assert names(ws) == ["a", "b"]
    entry_after = MemoryStore(ws).history(1)[0]
    assert entry_after.op == "undo" and entry_after.undoes == 2
    assert entry_after.actor["batch"] == batch_id
    assert pending_files(ws) == []  # decided: no longer pending
    assert memory(ip, "pending").entries == ()


def test_a_stale_proposal_reopens_with_its_conflict_and_writes_nothing(
    ip: InteractiveShell, ws: str
) -> None:
    batch_id = propose(ip, "undo 4")  # would bring back c
    restart(ip)
    MemoryStore(ws).extend([rec("c", body="a different c")])  # another kernel, meanwhile
    before = (MemoryStore(ws).history(), names(ws))

    review = memory(ip, f"pending --open {batch_id}")
    assert isinstance(review, HistoryChangeReview) and review.status == "failed"
    text = review.static_view().to_text()
    assert "'c'" in text and "brings back" not in text  # the conflict, not the old plan
    memory(ip, "commit")
    assert review.status == "failed"
    assert (MemoryStore(ws).history(), names(ws)) == before  # nothing written
    assert [p.name for p in pending_files(ws)] == [f"{batch_id}.json"]

    memory(ip, f"discard --batch {batch_id}")
    assert review.status == "discarded"
    assert pending_files(ws) == []
    assert (MemoryStore(ws).history(), names(ws)) == before


def test_a_proposal_replanned_on_reopen_shows_what_it_does_now(
    ip: InteractiveShell, ws: str
) -> None:
    """Proposed as "restore #1" over {ab}; meanwhile d was added: the reopened proposal
    removes d too (what the commit would do), not only what was shown at first."""
    batch_id = propose(ip, "restore 1")
    saved = json.loads(pending_files(ws)[0].read_text())
    assert saved["history"]["op"] == "restore" and saved["history"]["seq"] == 1
    assert saved["history"]["leaving"] == ["ab"]
    restart(ip)
    MemoryStore(ws).extend([rec("d")])
    review = memory(ip, f"pending --open {batch_id}")
    assert isinstance(review, HistoryChangeReview) and review.status == "pending"
    assert review.batch.history is not None
    assert sorted(review.batch.history.leaving) == ["ab", "d"]
    review.commit_button.click()
    assert review.status == "committed" and names(ws) == ["a", "b"]
    assert pending_files(ws) == []


def test_a_proposal_already_applied_elsewhere_is_not_committed_again(
    ip: InteractiveShell, ws: str
) -> None:
    batch_id = propose(ip, "restore 1")
    restart(ip)
    MemoryStore(ws).restore(1)  # the command line did it meanwhile
    before = MemoryStore(ws).history()
    review = memory(ip, f"pending --open {batch_id}")
    assert isinstance(review, HistoryChangeReview) and review.status == "failed"
    assert "nothing to do" in review.static_view().to_text()
    assert MemoryStore(ws).history() == before


def test_discarding_a_proposal_removes_its_file(ip: InteractiveShell, ws: str) -> None:
    batch_id = propose(ip, "restore 1")
    assert [p.name for p in pending_files(ws)] == [f"{batch_id}.json"]
    memory(ip, "discard")
    assert pending_files(ws) == []
    assert names(ws) == ["ab"]


def test_proposals_expire_like_other_batches(ip: InteractiveShell, ws: str) -> None:
    batch_id = propose(ip, "undo 2")
    [path] = pending_files(ws)
    data = json.loads(path.read_text())
    data["saved_at"] = time.time() - 40 * 86400
    path.write_text(json.dumps(data))
    restart(ip)
    ip.run_line_magic("config", "IPyMemory.pending_expiry_days = 2")
    listing = memory(ip, "pending")
    assert listing.entries == ()
    assert any("expired" in p and batch_id in p for p in listing.problems)
    assert not path.exists()


@pytest.mark.parametrize(
    "history",
    [
        {"op": "drop", "seq": 2},
        {"op": "undo", "seq": 0},
        {"op": "undo", "seq": True},
        {"op": "undo", "seq": 2, "target_op": 3, "target_at": "x"},
        ["undo", 2],
    ],
)
def test_a_damaged_proposal_file_is_reported_not_reopened(
    ip: InteractiveShell, ws: str, history: Any
) -> None:
    batch_id = propose(ip, "undo 2")
    [path] = pending_files(ws)
    data = json.loads(path.read_text())
    data["history"] = history
    path.write_text(json.dumps(data))
    restart(ip)
    listing = memory(ip, "pending")
    assert listing.entries == ()
    assert any(batch_id in p and "history" in p for p in listing.problems)
    assert names(ws) == ["ab"]


def test_an_undo_proposed_twice_commits_once_then_says_nothing_to_undo(
    ip: InteractiveShell, ws: str
) -> None:
    """Two proposals of "undo 4" (the forget of c), both committed: the second used to
    commit an empty `undo` entry. The review's hint points to pending/, where the
    proposal survives a restart (it said to run the undo again)."""
    first, second = propose(ip, "undo 4"), propose(ip, "undo 4")
    pending_text = memory(ip, "pending").to_text()
    assert first in pending_text and second in pending_text
    review = HistoryChangeView.of(get_session().batch_registry.lookup(first)).to_text()
    assert f"%memory pending --open {first}" in review and "again" not in review
    done = memory(ip, f"commit --batch {first}")
    assert isinstance(done, HistoryChangeView) and "brings back: c" in done.to_text()
    entries = MemoryStore(ws).history()
    refused = memory(ip, f"commit --batch {second}")
    assert "nothing to undo" in refused.to_text()
    assert MemoryStore(ws).history() == entries  # no empty entry
    assert names(ws) == ["ab", "c"]
