"""One listing of pending batches and one way of saying how to decide one, for every
front end (ipymemory/review/listing.py, issue 42): the notebook, the terminal, the Lab
panel and the doors that leave a batch waiting say the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from proposal_support import agent_batch
from record_support import rec

from ipymemory import ConsolidationPlan, MemoryStore, PendingBatch
from ipymemory.review.listing import (
    COMMIT_OPTIONS,
    Listed,
    decide_line,
    listing,
    reopen_line,
    where_to_decide,
)
from ipymemory.review.pending import PendingFiles
from ipymemory.server.listing import Workspace, confine, list_memory

RUFF = {"name": "uses-ruff", "type": "feedback", "description": "lint", "body": "Use ruff."}


def test_a_session_s_batches_come_first_then_the_saved_ones(tmp_path: Path) -> None:
    saved = agent_batch(tmp_path, RUFF)
    files = PendingFiles(tmp_path / ".memory")
    mine = PendingBatch("mine01", (rec("a"),), ConsolidationPlan(("x", "y"), (rec("xy"),)), ())
    assert files.save(mine)
    other = PendingBatch("live02", (rec("b"),), None, ())  # open here, not on disk
    listed, problems = listing(files, [mine, other])
    assert problems == []
    assert [(e.id, e.live) for e in listed] == [
        ("mine01", True),
        ("live02", True),
        (saved, False),
    ]
    assert listed[0].saved_at is not None and listed[1].saved_at is None
    assert listed[0].plan_text == "a plan: 2 → 1 record"
    assert listed[2].agent == "mcp" and listed[0].agent is None


def test_the_plan_reads_the_same_everywhere() -> None:
    assert Listed("b", (), (3, 2)).plan_text == "a plan: 3 → 2 records"
    assert Listed("b", (), (0, 0)).plan_text == "a plan: nothing to merge"
    assert Listed("b", (), None).plan_text is None


def test_the_lab_panel_and_the_terminal_list_the_same_batch_alike(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.extend([rec("x"), rec("y")])
    batch = PendingBatch("both01", (rec("a"),), ConsolidationPlan(("x", "y"), (rec("xy"),)), ())
    assert PendingFiles(store.root).save(batch)
    ws = confine(str(tmp_path.parent), tmp_path.name)
    assert isinstance(ws, Workspace)
    status, payload = list_memory(ws)
    assert status == 200
    [panel] = payload["pending"]
    done = subprocess.run(
        [sys.executable, "-m", "ipymemory.cli", "--dir", str(tmp_path), "pending"],
        capture_output=True,
        text=True,
        check=True,
        env={"IPYMEMORY_USER_DIR": "off", "PATH": "/usr/bin:/bin"},
    )
    assert panel["plan"] == "a plan: 2 → 1 record" and panel["plan"] in done.stdout
    assert decide_line() in done.stdout  # the terminal's one hint


def test_every_hint_names_the_same_commands() -> None:
    assert decide_line("%memory", "abc") == (
        f"%memory commit --batch abc {COMMIT_OPTIONS}, or %memory discard --batch abc"
    )
    assert reopen_line("abc") == "%memory pending --open abc"
    everywhere = where_to_decide("abc")
    assert "Lab's Memory panel" in everywhere and reopen_line("abc") in everywhere
    assert "ipymemory commit --batch abc" in everywhere
    assert "ipymemory discard --batch abc" in everywhere
