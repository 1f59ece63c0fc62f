"""The store lock (SPEC §4): threads, processes, SIGKILLed holders, the reference agent's
``.lock`` directory, heartbeat, timeouts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_support import raised_in_thread

from ipymemory import MemoryLockTimeout, MemoryRecord, MemoryStore, MemoryStoreError
from ipymemory.store.lock import StoreLock

HOLDER = """
import sys
from ipymemory.store.lock import StoreLock
lock = StoreLock(sys.argv[1], timeout=10)
lock.acquire()
print("held", flush=True)
sys.stdin.readline()
lock.release()
print("released", flush=True)
"""


@pytest.fixture
def mem(tmp_path: Path) -> Path:
    path = tmp_path / ".memory"
    path.mkdir()
    return path


def rec(name: str) -> MemoryRecord:
    return MemoryRecord(name=name, type="user", description=f"about {name}", body="b")  # type: ignore[arg-type]


@pytest.fixture
def holder(mem: Path) -> Iterator[subprocess.Popen[str]]:
    """A real process holding the lock until a line is written to its stdin."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(mem)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()


# --- in-process ----------------------------------------------------------------------


def test_threads_exclude_each_other(mem: Path) -> None:
    inside = 0
    overlaps = 0
    guard = threading.Lock()

    def work() -> None:
        nonlocal inside, overlaps
        for _ in range(20):
            with StoreLock(mem):  # a new lock object each time, as separate stores would
                with guard:
                    inside += 1
                    overlaps += inside > 1
                time.sleep(0.001)  # widen the window an overlap would need
                with guard:
                    inside -= 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert overlaps == 0 and inside == 0
    assert not (mem / ".lock").exists()


def test_reentrant_for_the_holding_thread(mem: Path) -> None:
    outer = StoreLock(mem)
    with outer:
        with StoreLock(mem) as inner:
            assert inner.held and (mem / ".lock").is_dir()
        assert (mem / ".lock").is_dir()  # still held by the outer acquisition
    assert not (mem / ".lock").exists()
    assert not outer.held


def test_other_thread_times_out_naming_the_lock(mem: Path) -> None:
    with StoreLock(mem):
        errors = raised_in_thread(StoreLock(mem, timeout=0.2).acquire)
    assert len(errors) == 1 and isinstance(errors[0], MemoryLockTimeout)
    assert str(mem / ".lock") in str(errors[0])
    assert "another thread of this process" in str(errors[0])


def test_two_store_objects_in_one_process(workspace: str) -> None:
    """Two MemoryStore objects on the same directory, in threads: no lost update."""
    a, b = MemoryStore(workspace), MemoryStore(workspace)

    def add(store: MemoryStore, prefix: str) -> None:
        for i in range(15):
            store.extend([rec(f"{prefix}{i}")])

    threads = [threading.Thread(target=add, args=(s, p)) for s, p in ((a, "a"), (b, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    names = {r.name for r in MemoryStore(workspace).records()}
    assert names == {f"{p}{i}" for p in "ab" for i in range(15)}


# --- across processes ----------------------------------------------------------------


def test_other_process_holds_then_releases(mem: Path, holder: subprocess.Popen[str]) -> None:
    assert (mem / ".lock").is_dir()
    with pytest.raises(MemoryLockTimeout) as info:
        StoreLock(mem, timeout=0.3).acquire()
    message = str(info.value)
    assert str(mem / ".lock") in message and f"process {holder.pid}" in message
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.write("release\n")
    holder.stdin.flush()
    assert holder.stdout.readline().strip() == "released"
    with StoreLock(mem, timeout=5):
        pass
    assert not (mem / ".lock").exists()


def test_sigkilled_holder_does_not_block(mem: Path, holder: subprocess.Popen[str]) -> None:
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=10)
    assert (mem / ".lock").is_dir()  # left behind, with a fresh mtime
    start = time.monotonic()
    with StoreLock(mem, timeout=10):
        waited = time.monotonic() - start
    # Far below the 30 s stale window: the dead holder is recognised at once.
    assert waited < 3.0, waited
    assert not (mem / ".lock").exists()


def test_sigkilled_holder_store_commit(workspace: str) -> None:
    mem = Path(workspace) / ".memory"
    MemoryStore(workspace).extend([rec("a")])
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(mem)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"held"
    proc.kill()
    proc.wait(timeout=10)
    proc.stdout.close()
    assert proc.stdin is not None
    proc.stdin.close()
    MemoryStore(workspace, lock_timeout=5).extend([rec("b")])
    assert [r.name for r in MemoryStore(workspace).records()] == ["a", "b"]


# --- the reference agent's lock directory -----------------------------------------------


def test_fresh_reference_lock_dir_is_honoured(mem: Path) -> None:
    (mem / ".lock").mkdir()  # as proper-lockfile makes it: mkdir, fresh mtime
    start = time.monotonic()
    with pytest.raises(MemoryLockTimeout) as info:
        StoreLock(mem, timeout=0.3).acquire()
    assert time.monotonic() - start >= 0.3
    message = str(info.value)
    assert str(mem / ".lock") in message and "held by another agent" in message
    assert (mem / ".lock").is_dir()  # not touched


def test_fresh_reference_lock_blocks_a_commit(workspace: str) -> None:
    store = MemoryStore(workspace, lock_timeout=0.2)
    store.extend([rec("a")])
    mem = Path(workspace) / ".memory"
    (mem / ".lock").mkdir()
    manifest = (mem / "manifest.json").read_bytes()
    with pytest.raises(MemoryLockTimeout, match=r"\.lock"):
        store.extend([rec("b")])
    assert (mem / "manifest.json").read_bytes() == manifest
    assert [r.name for r in store.records()] == ["a"]  # reads take no lock


def test_stale_reference_lock_dir_is_taken_over(mem: Path) -> None:
    (mem / ".lock").mkdir()
    old = time.time() - 60
    os.utime(mem / ".lock", (old, old))
    with StoreLock(mem, timeout=1) as lock:
        assert lock.held
        st = os.stat(mem / ".lock")
        assert time.time() - st.st_mtime < 5  # a new, fresh directory of ours
    assert not (mem / ".lock").exists()
    assert not [p for p in mem.iterdir() if p.name.startswith(".lock.stale-")]


def test_stale_plain_file_at_lock_is_replaced_by_a_directory(mem: Path) -> None:
    (mem / ".lock").write_text("left by some tool")
    old = time.time() - 60
    os.utime(mem / ".lock", (old, old))
    with StoreLock(mem, timeout=1):
        assert (mem / ".lock").is_dir()
    assert not (mem / ".lock").exists()


def test_never_a_plain_file_at_lock(workspace: str) -> None:
    store = MemoryStore(workspace)
    mem = Path(workspace) / ".memory"
    seen: list[bool] = []
    store._checkpoint = lambda step: seen.append((mem / ".lock").is_dir())  # type: ignore[method-assign]
    store.extend([rec("a")])
    store.forget(["a"])
    assert seen and all(seen)  # a directory throughout every commit
    assert not os.path.lexists(mem / ".lock")
    for p in mem.iterdir():
        assert p.name != ".lock"


def test_slow_live_holder_keeps_the_lock(mem: Path) -> None:
    """The heartbeat refreshes the directory's mtime, so a proper-lockfile contender
    (stale after ``stale`` seconds) never sees a live holder's lock as stale."""
    stale, refresh = 1.0, 0.1
    ages: list[float] = []
    with StoreLock(mem, stale=stale, refresh=refresh):
        deadline = time.monotonic() + 2.5 * stale
        while time.monotonic() < deadline:
            ages.append(time.time() - os.stat(mem / ".lock").st_mtime)
            time.sleep(0.05)
        # Our own contender in another thread, with the same stale window, must wait.
        errors = raised_in_thread(StoreLock(mem, timeout=0.2, stale=stale).acquire)
    assert len(errors) == 1 and isinstance(errors[0], MemoryLockTimeout)
    assert max(ages) < stale, max(ages)
    assert not (mem / ".lock").exists()


def test_compromised_lock_is_detected(mem: Path) -> None:
    with StoreLock(mem) as lock:
        lock.check_held()
        os.rename(mem / ".lock", mem / ".lock.gone")
        os.mkdir(mem / ".lock")
        with pytest.raises(MemoryStoreError, match="the store lock was lost"):
            lock.check_held()
    # Release leaves the other agent's directory alone.
    assert (mem / ".lock").is_dir()


def test_zero_timeout_fails_fast(mem: Path) -> None:
    (mem / ".lock").mkdir()
    start = time.monotonic()
    with pytest.raises(MemoryLockTimeout):
        StoreLock(mem, timeout=0).acquire()
    assert time.monotonic() - start < 1.0
