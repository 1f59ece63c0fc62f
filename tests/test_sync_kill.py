"""A push killed (SIGKILL, a real process) between two writes: the store has applied a
write the dead process never heard back about and its state file is behind. Running
push again finishes the job: every record there exactly once, none lost, nothing sent
twice. A pull killed part-way (issue 41): what it kept waits and the state says so,
the next pull brings the rest, each change once. Two syncs of one .memory at once: the
second is refused and sends nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from memory_store_server import MemoryStoreServer
from record_support import rec
from sync_support import STORE_ID, Project, project, record_text, text_of

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


# --- issue 41: a pull killed part-way, two syncs at once --------------------------------

CHILD = Path(__file__).with_name("sync_child.py")
BOUND = 64 * 1024  # pending/'s bound in the child: 12 memories are kept in several runs
PULLED = [f"note-{i:02d}" for i in range(12)]


def child_env(proj_store: str) -> dict[str, str]:
    return {
        **without_settings(dict(os.environ)),
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
        "IPYMEMORY_USER_DIR": "off",
        "IPYMEMORY_MEMORY_STORE": proj_store,
    }


def start_child(proj: Project, argv: list[str], **spec: object) -> subprocess.Popen[bytes]:
    full = {"argv": ["--dir", str(proj.workspace), *argv], "bound": BOUND, **spec}
    return subprocess.Popen(
        [sys.executable, str(CHILD), json.dumps(full)],
        env=child_env(STORE_ID),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def written_there(proj: Project) -> None:
    """The store gets ``PULLED``: memories near 4 KB, twice as long in JSON."""
    for i, name in enumerate(PULLED):
        proj.agent_writes(name, record_text(name, f"Note {i}: " + '"\\' * 1890))


def each_pulled_once(proj: Project) -> None:
    """Every pulled change waits in exactly one batch, the state says which (and is
    not tentative), and every batch in pending/ is one the state knows."""
    state = read_state(proj.store.root, STORE_ID, proj.prefix)
    assert not [n for n, p in state.pulled.items() if p.tentative]
    seen: dict[str, str] = {}
    for path in sorted((proj.store.root / "pending").glob("*.json")):
        for item in json.loads(path.read_text())["items"]:
            assert item["name"] not in seen, (
                f"{item['name']} in {seen.get(item['name'])} and {path}"
            )
            seen[item["name"]] = path.stem
    assert seen == {name: p.batch for name, p in state.pulled.items()}
    assert set(seen) == set(PULLED)


def test_a_pull_killed_while_fetching_keeps_what_it_kept_and_the_next_brings_the_rest(
    memory_store_server: MemoryStoreServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL while the pull fetches its second run: the first run waits in its batch
    and the state says so; the next pull brings the others, each once."""
    proj = project(memory_store_server, tmp_path, monkeypatch, [rec("deadline")])
    proj.sync().push()
    written_there(proj)
    memory_store_server.hold_read("version", 7)  # in the second run
    child = start_child(proj, ["sync", "pull"])
    try:
        assert memory_store_server.held.wait(120), "the child never reached the held read"
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(60) == -signal.SIGKILL
    finally:
        memory_store_server.release()
        if child.poll() is None:
            child.kill()
    state = read_state(proj.store.root, STORE_ID, proj.prefix)
    first = set(state.pulled)
    assert first and first < set(PULLED)  # one run kept, not all
    assert not [n for n, p in state.pulled.items() if p.tentative]
    assert len(list((proj.store.root / "pending").glob("*.json"))) == 1

    report = proj.sync().pull()
    assert report.stopped is None
    assert {r["name"] for r in report.pulled} == set(PULLED) - first
    each_pulled_once(proj)


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_pull_killed_as_it_keeps_a_batch_never_loses_or_doubles_a_change(
    memory_store_server: MemoryStoreServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    when: str,
) -> None:
    """SIGKILL just before the second batch's file is written, or just after (before
    the state says it was kept): the next pull proposes each change exactly once, and
    no change is counted as taken that no batch holds."""
    proj = project(memory_store_server, tmp_path, monkeypatch, [rec("deadline")])
    proj.sync().push()
    written_there(proj)
    log = tmp_path / "saves.log"
    child = start_child(proj, ["sync", "pull"], kill_save={"at": 1, "when": when}, log=str(log))
    assert child.wait(300) == -signal.SIGKILL, child.stderr.read() if child.stderr else ""
    assert log.read_text().count("save ") == 2
    batches = {p.stem for p in (proj.store.root / "pending").glob("*.json")}
    assert len(batches) == (1 if when == "before" else 2)

    report = proj.sync().pull()
    assert report.stopped is None
    each_pulled_once(proj)
    # Deciding them all leaves both sides in sync: nothing to push, nothing to pull.
    for batch in sorted({p.stem for p in (proj.store.root / "pending").glob("*.json")}):
        proj.decide(batch)
    assert set(PULLED) <= set(proj.names())
    assert proj.sync().push().pushed == ()
    assert proj.sync().pull().pulled == ()


def test_two_pushes_at_once_one_waits_its_turn_and_nothing_is_sent_twice(
    memory_store_server: MemoryStoreServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second push (or a pull) of the same .memory while one runs is refused at once,
    sending nothing; the first finishes, and the state matches the store."""
    records = [rec(f"note-{i:03d}") for i in range(20)]
    proj = project(memory_store_server, tmp_path, monkeypatch, records)
    srv = memory_store_server
    srv.hold_after(5)
    first = start_child(proj, ["sync", "push"], bound=None)
    try:
        assert srv.held.wait(120), "the first push never reached the held write"
        writes = srv.count("POST", "memories")
        for argv in (["sync", "push"], ["sync", "pull"]):
            second = start_child(proj, argv, bound=None)
            out, err = second.communicate(timeout=120)
            assert second.returncode == 1, (argv, out, err)
            assert b"another sync of this .memory is running" in err
        assert srv.count("POST", "memories") == writes  # the others sent nothing
    finally:
        srv.release()
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert srv.count("POST", "memories") == len(records)  # each created once
    assert proj.there() == {r.name: text_of(r) for r in records}
    state = read_state(proj.store.root, STORE_ID, proj.prefix)
    assert set(state.records) == {r.name for r in records}
    assert proj.sync().push().requests == 0
