"""A push killed (SIGKILL, a real process) between two writes: the store has applied a
write the dead process never heard back about and its state file is behind. Running
push again finishes the job: every record there exactly once, none lost, nothing sent
twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from memory_store_server import MemoryStoreServer
from record_support import rec
from sync_support import STORE_ID, project, text_of

from ipymemory import _constants as C
from ipymemory.config import without_settings
from ipymemory.sync.state import read_state

ROOT = Path(__file__).resolve().parents[1]
N = 120
KILL_AT = C.SYNC_SAVE_EVERY + 10  # past one save of the state, before the next


def test_a_push_killed_between_two_writes_is_finished_by_the_next_without_doubles(
    memory_store_server: MemoryStoreServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [rec(f"note-{i:03d}") for i in range(N)]
    proj = project(memory_store_server, tmp_path, monkeypatch, records)
    srv = memory_store_server
    srv.hold_after(KILL_AT)  # the KILL_AT-th create applies, its answer never comes
    env = {
        **without_settings(dict(os.environ)),
        "PYTHONPATH": str(ROOT),
        "IPYMEMORY_USER_DIR": "off",
        "IPYMEMORY_MEMORY_STORE": STORE_ID,
    }
    child = subprocess.Popen(
        [sys.executable, "-m", "ipymemory.cli", "--dir", str(proj.workspace), "sync", "push"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert srv.held.wait(120), "the child never reached the held write"
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(60) == -signal.SIGKILL
    finally:
        srv.release()
        if child.poll() is None:
            child.kill()
    assert len(proj.there()) == KILL_AT  # applied there, some of it never recorded here
    saved = read_state(proj.store.root, STORE_ID, proj.prefix)
    assert len(saved.records) == C.SYNC_SAVE_EVERY  # the state is behind the store

    creates_before = srv.count("POST", "memories")
    report = proj.sync().push()
    assert report.stopped is None and report.failed == ()
    # Only what never reached the store is sent; what did is found done (same content).
    assert len(report.pushed) == N - KILL_AT
    assert srv.count("POST", "memories") - creates_before == N - KILL_AT
    assert srv.count("POST", "memories") == N  # no record was ever created twice
    assert proj.there() == {r.name: text_of(r) for r in records}
    state = read_state(proj.store.root, STORE_ID, proj.prefix)
    assert set(state.records) == {r.name for r in records}
    assert proj.sync().push().requests == 0  # and now it is all in sync
