"""The store lock (SPEC §4): threads, processes, SIGKILLed holders, the reference agent's
``.lock`` directory, heartbeat, timeouts."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from record_support import rec
from store_support import raised_in_thread

from ipymemory import MemoryLockTimeout, MemoryStore, MemoryStoreError
from ipymemory.store.lock import (
    DEFAULT_LOCK_TIMEOUT,
    STALE_SECONDS,
    LockWait,
    StoreLock,
    lock_findings,
    reporting_lock_waits,
)
from ipymemory.store.lock_holder import BOOT_ID, process_start, read_owner
from ipymemory.store.maintenance import check

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


BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
HolderWs = subprocess.Popen[str]


@contextlib.contextmanager
def holding(mem: Path) -> Iterator[subprocess.Popen[str]]:
    """A real process holding the lock until a line is written to its stdin."""
    mem.mkdir(exist_ok=True)
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


@pytest.fixture
def holder(mem: Path) -> Iterator[subprocess.Popen[str]]:
    with holding(mem) as proc:
        yield proc


@pytest.fixture
def holder_ws(workspace: str) -> Iterator[subprocess.Popen[str]]:
    with holding(Path(workspace) / ".memory") as proc:
        yield proc


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


# --- a holder killed at any instant (issue 10 #3, #9c) -------------------------------------

# A committing child that stops at a chosen point of the lock protocol and says so: the
# parent kills it there. The hook replaces a module function in the child only.
PAUSED_LOCK = """
import sys, time
import ipymemory.store.lock as lock
from ipymemory.store.record import MemoryRecord
from ipymemory.store.store import MemoryStore

where = sys.argv[2]
real = lock._write_owner

def write_owner(held, **kwargs):
    if where == ("released" if kwargs.get("released") else "made"):
        print(where, flush=True)  # made: .lock exists, its owner record is not written yet
        time.sleep(120)
    real(held, **kwargs)

lock._write_owner = write_owner
record = MemoryRecord(name="killed", type="user", description="d", body="b")
MemoryStore(sys.argv[1]).extend([record])
"""

# A fresh process: one commit that may wait at most 2 s for the lock.
FRESH_COMMIT = """
import sys
from ipymemory.store.record import MemoryRecord
from ipymemory.store.store import MemoryStore

store = MemoryStore(sys.argv[1], lock_timeout=2.0)
store.extend([MemoryRecord(name=sys.argv[2], type="user", description="d", body="b")])
"""


def fresh_commit(workspace: str, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", FRESH_COMMIT, workspace, name],
        capture_output=True,
        text=True,
        timeout=60,
    )


def kill_paused(workspace: str, where: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", PAUSED_LOCK, workspace, where], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == where
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        proc.stdout.close()


@pytest.mark.parametrize("where", ["made", "released"])
def test_holder_killed_between_lock_steps_is_taken_over_at_once(workspace: str, where: str) -> None:
    """Killed right after ``mkdir .lock`` (before its owner record), or after the record
    says released but before ``rmdir``: a fresh process commits within 2 s of lock wait."""
    MemoryStore(workspace).extend([rec("a")])
    mem = Path(workspace) / ".memory"
    kill_paused(workspace, where)
    assert (mem / ".lock").is_dir()  # left behind, fresh
    report = check(workspace)
    assert report.ok and any(p.file.endswith(".lock") and "orphaned" in p.reason for p in report), (
        report
    )
    done = fresh_commit(workspace, "b")
    assert done.returncode == 0, done.stderr
    names = [r.name for r in MemoryStore(workspace).records()]
    assert names[0] == "a" and names[-1] == "b" and set(names) <= {"a", "killed", "b"}
    assert not os.path.lexists(mem / ".lock")


def test_random_kills_never_block_the_next_commit(tmp_path: Path) -> None:
    """20 SIGKILLs at random instants of commits, gc and reindex: each next commit by a
    fresh process gets the lock within its 2 s timeout (benchmarks/lock_kills.py runs 200)."""
    args = ("--kills", "20", "--timeout", "2", "--json", "--dir", str(tmp_path))
    done = subprocess.run(
        [sys.executable, str(BENCH / "lock_kills.py"), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert report["failures"] == []
    assert report["waits"]["n"] == 20 and report["over_2s"] == 0
    assert done.returncode == 0


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)
    return proc.pid


def forge_owner_record(
    mem: Path, pid: int, *, start: str | None = None, boot: str | None = BOOT_ID
) -> None:
    """An owner record claiming the current ``.lock`` for ``pid`` on this host, as a
    record left uncleared would look once another agent's mkdir reused the inode (with
    coarse timestamps the mtime matches too). Old and new record keys both."""
    st = os.stat(mem / ".lock")
    info = {
        "held": True,
        "host": socket.gethostname(),
        "boot": boot,
        "pid": pid,
        "start": start,
        "dev": st.st_dev,
        "ino": st.st_ino,
        "mtime_ns": st.st_mtime_ns,
        "since": time.time(),
    }
    (mem / ".lock.owner").write_bytes(json.dumps(info).encode().ljust(512))


def test_foreign_lock_is_never_taken_over_on_a_stale_owner_record(mem: Path) -> None:
    with StoreLock(mem):
        pass
    (mem / ".lock").mkdir()  # the reference agent's fresh lock (may reuse our inode)
    forge_owner_record(mem, dead_pid())
    with pytest.raises(MemoryLockTimeout, match="held by another agent"):
        StoreLock(mem, timeout=0.3).acquire()
    assert (mem / ".lock").is_dir()


def test_release_invalidates_the_owner_record(mem: Path) -> None:
    with StoreLock(mem):
        during = read_owner(mem / ".lock.owner")
    after = read_owner(mem / ".lock.owner")
    assert during is not None and during.held and during.pid == os.getpid()
    assert after is not None and not after.held


def test_live_holder_is_not_adopted_when_its_os_lock_file_is_replaced(
    mem: Path, holder: subprocess.Popen[str]
) -> None:
    """Should the OS lock be bypassed (``.lock.flock`` deleted under a holder), the owner
    record still vetoes adopting a live holder's directory."""
    os.unlink(mem / ".lock.flock")
    with pytest.raises(MemoryLockTimeout) as info:
        StoreLock(mem, timeout=0.3).acquire()
    assert f"process {holder.pid}" in str(info.value) and "alive" in str(info.value)


def test_foreign_lock_with_mtime_in_the_future_is_taken_over_once_seen_unchanged(
    mem: Path,
) -> None:
    (mem / ".lock").mkdir()
    future = time.time() + 3600  # clock skew: by its mtime it would never go stale
    os.utime(mem / ".lock", (future, future))
    with StoreLock(mem, stale=0.5, timeout=5) as lock:
        assert lock.held
    assert not os.path.lexists(mem / ".lock")


def test_foreign_lock_refreshed_while_we_wait_is_honoured(mem: Path) -> None:
    (mem / ".lock").mkdir()
    stop = threading.Event()

    def refresh() -> None:  # a live holder whose clock runs an hour ahead
        while not stop.wait(0.05):
            future = time.time() + 3600
            os.utime(mem / ".lock", (future, future))

    t = threading.Thread(target=refresh)
    t.start()
    try:
        with pytest.raises(MemoryLockTimeout) as info:
            StoreLock(mem, stale=1.0, timeout=2.5).acquire()
    finally:
        stop.set()
        t.join()
    assert "in the future" in str(info.value) and (mem / ".lock").is_dir()


def test_symlink_at_lock_is_never_followed(mem: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (mem / ".lock").symlink_to(target)
    assert lock_findings(mem)[0].severity == "error"
    # Nobody's lock (both tools make a directory): taken over at once, never followed.
    with StoreLock(mem, timeout=0.5):
        assert (mem / ".lock").is_dir() and not (mem / ".lock").is_symlink()
    assert target.is_dir()  # the link's target is left alone


@pytest.mark.parametrize("kind", ["file", "fifo", "dangling-symlink"])
def test_a_non_directory_at_lock_is_taken_over_at_once(mem: Path, kind: str) -> None:
    lock = mem / ".lock"
    if kind == "file":
        lock.write_text("not a lock")
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.symlink_to(mem / "missing")
    started = time.monotonic()
    MemoryStore(mem.parent, lock_timeout=5).extend([rec("a")])
    assert time.monotonic() - started < 4  # not the 30 s stale window
    assert [r.name for r in MemoryStore(mem.parent).records()] == ["a"]
    assert not lock.exists() and not lock.is_symlink()


def test_timeout_message_says_what_is_known_about_the_holder(
    mem: Path, holder: subprocess.Popen[str]
) -> None:
    with pytest.raises(MemoryLockTimeout) as info:
        StoreLock(mem, timeout=0.2).acquire()
    message = str(info.value)
    assert f"process {holder.pid} on host {socket.gethostname()} (ours) since " in message
    assert "alive" in message and "after 0.2s" in message


def test_default_timeout_outlasts_the_stale_window() -> None:
    """A lock left by a dead foreign holder goes stale within STALE_SECONDS: by default a
    commit waits that out instead of failing."""
    from ipymemory.config import Settings

    assert DEFAULT_LOCK_TIMEOUT > STALE_SECONDS + 5
    assert Settings(directory=Path(".")).lock_timeout == DEFAULT_LOCK_TIMEOUT
    assert MemoryStore(".").lock_timeout == DEFAULT_LOCK_TIMEOUT


def test_waits_are_reported_while_waiting(workspace: str, holder_ws: HolderWs) -> None:
    waits: list[LockWait] = []
    with pytest.raises(MemoryLockTimeout), reporting_lock_waits(waits.append):
        MemoryStore(workspace, lock_timeout=2.5).extend([rec("a")])
    assert 1 <= len(waits) <= 3
    text = str(waits[0])
    assert text.startswith("waiting for the memory lock (held since ")
    assert f"process {holder_ws.pid}" in text and waits[0].waited >= 1.0
    explicit: list[LockWait] = []
    with pytest.raises(MemoryLockTimeout), reporting_lock_waits(waits.append):
        MemoryStore(workspace, lock_timeout=1.5, on_lock_wait=explicit.append).extend([rec("a")])
    assert len(explicit) == 1 and len(waits) <= 3  # the store's own listener wins


def test_progress_line_shows_a_lock_wait(workspace: str, holder_ws: HolderWs) -> None:
    from ipymemory.notebook.progress import ProgressLine

    shown: list[str] = []
    progress = ProgressLine()
    progress._show = shown.append  # type: ignore[method-assign,assignment]
    progress.start()
    with pytest.raises(MemoryLockTimeout):
        MemoryStore(workspace, lock_timeout=1.5).extend([rec("a")])
    progress.finish("done")
    with pytest.raises(MemoryLockTimeout):
        MemoryStore(workspace, lock_timeout=1.5).extend([rec("a")])
    # The progress clock also ticks on its own; only lock-wait lines matter here.
    waits = [line for line in shown if "waiting for the memory lock" in line]
    assert waits and "waiting for the memory lock (held since" in waits[0]
    assert shown[-1] == "done"  # no reports after finish()


# --- check reports what makes commits fail or wait (issue 10 #4) ---------------------------


def _cli_check(workspace: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "ipymemory.cli", "--dir", workspace, "check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, done.stdout + done.stderr


def _break(mem: Path, how: str, tmp: Path) -> None:
    if how == "flock-symlink":
        (tmp / "target").write_text("")
        (mem / ".lock.flock").symlink_to(tmp / "target")
    elif how == "flock-dir":
        (mem / ".lock.flock").mkdir()
    elif how == "flock-fifo":
        os.mkfifo(mem / ".lock.flock")
    elif how == "lock-file":
        (mem / ".lock").write_text("x")
    elif how == "lock-symlink":
        (mem / ".lock").symlink_to(tmp)
    elif how == "lock-not-empty":
        (mem / ".lock").mkdir()
        (mem / ".lock" / "note").write_text("x")


@pytest.mark.parametrize(
    "how",
    ["flock-symlink", "flock-dir", "flock-fifo", "lock-file", "lock-symlink", "lock-not-empty"],
)
def test_check_reports_a_broken_lock(workspace: str, tmp_path: Path, how: str) -> None:
    MemoryStore(workspace).extend([rec("a")])
    mem = Path(workspace) / ".memory"
    for name in (".lock.flock", ".lock.owner"):
        (mem / name).unlink()
    _break(mem, how, tmp_path)
    report = check(workspace)
    assert not report.ok
    lock_name = ".lock.flock" if how.startswith("flock") else ".lock"
    assert any(p.file == str(mem / lock_name) for p in report.errors), report
    code, out = _cli_check(workspace)
    assert code == 1 and lock_name in out, out


@pytest.mark.parametrize("how", ["flock-symlink", "flock-dir"])
def test_commit_with_a_broken_os_lock_file_names_it(
    workspace: str, tmp_path: Path, how: str
) -> None:
    MemoryStore(workspace).extend([rec("a")])
    mem = Path(workspace) / ".memory"
    (mem / ".lock.flock").unlink()
    _break(mem, how, tmp_path)
    kind = "symbolic link" if how == "flock-symlink" else "directory"
    with pytest.raises(
        MemoryStoreError, match=rf"\.lock\.flock: cannot take the OS lock: is a {kind}"
    ):
        MemoryStore(workspace, lock_timeout=1).extend([rec("b")])
    assert [r.name for r in MemoryStore(workspace).records()] == ["a"]


def test_check_reports_foreign_and_orphaned_locks_as_warnings(workspace: str) -> None:
    MemoryStore(workspace).extend([rec("a")])
    mem = Path(workspace) / ".memory"
    assert check(workspace) == []
    (mem / ".lock").mkdir()  # the reference agent, live
    (live,) = check(workspace)
    assert live.severity == "warning" and "held by another agent" in live.reason
    old = time.time() - 60
    os.utime(mem / ".lock", (old, old))
    (stale,) = check(workspace)
    assert stale.severity == "warning" and "stale lock of another agent" in stale.reason
    os.rmdir(mem / ".lock")
    os.mkdir(mem / ".lock", 0o1755)  # ours, its maker gone (nobody holds the OS lock)
    (orphan,) = check(workspace)
    assert orphan.severity == "warning" and "orphaned" in orphan.reason
    code, out = _cli_check(workspace)
    assert code == 0 and "orphaned" in out


# --- further cases of the same kinds ---------------------------------------------------------


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """A live process that has nothing to do with the lock."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_orphaned_lock_whose_recorded_pid_was_reused_is_adopted(
    mem: Path, bystander: subprocess.Popen[bytes]
) -> None:
    """Our dead holder's pid now belongs to another process (another start time), or the
    record is from before a reboot: the lock is ours and orphaned, adopted at once."""
    start = process_start(bystander.pid)
    assert start is not None
    os.mkdir(mem / ".lock", 0o1755)  # ours (marked); nobody holds the OS lock
    forge_owner_record(mem, bystander.pid, start=start)  # really alive: vetoed
    with pytest.raises(MemoryLockTimeout, match=rf"process {bystander.pid} .*alive"):
        StoreLock(mem, timeout=0.3).acquire()
    for reused in ({"start": str(int(start) + 1)}, {"start": start, "boot": "an-earlier-boot"}):
        forge_owner_record(mem, bystander.pid, **reused)
        with StoreLock(mem, timeout=2) as lock:
            assert lock.held and (mem / ".lock").is_dir()
        assert not os.path.lexists(mem / ".lock")
        os.mkdir(mem / ".lock", 0o1755)


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory"])
def test_broken_owner_record_file_never_blocks_nor_is_written_through(
    workspace: str, tmp_path: Path, kind: str
) -> None:
    mem = Path(workspace) / ".memory"
    mem.mkdir()
    outside = tmp_path / "outside"
    outside.write_text("precious")
    if kind == "symlink":
        (mem / ".lock.owner").symlink_to(outside)
    elif kind == "fifo":
        os.mkfifo(mem / ".lock.owner")
    else:
        (mem / ".lock.owner").mkdir()
    MemoryStore(workspace, lock_timeout=2).extend([rec("a")])
    assert outside.read_text() == "precious"
    (finding,) = check(workspace)
    assert finding.file == str(mem / ".lock.owner") and finding.severity == "warning"


def test_lock_replaced_on_the_same_inode_is_detected(mem: Path) -> None:
    """Another agent removing our (stalled) lock and making its own may get the same
    inode back: the missing mark still tells it is not ours, so no commit and no rmdir."""
    with StoreLock(mem) as lock:
        os.rmdir(mem / ".lock")
        os.mkdir(mem / ".lock")  # on ext4/tmpfs usually the same inode; never our mark
        ino = os.stat(mem / ".lock").st_ino
        with pytest.raises(MemoryStoreError, match="the store lock was lost"):
            lock.check_held()
    assert os.stat(mem / ".lock").st_ino == ino  # the other agent's lock is left alone


def test_non_empty_lock_left_by_release_is_moved_aside(mem: Path) -> None:
    """Something wrote inside our lock directory: release moves it aside instead of leaving
    a directory the reference agent could never remove."""
    with StoreLock(mem):
        (mem / ".lock" / "stray").write_text("x")
    assert not os.path.lexists(mem / ".lock")
    (aside,) = [p for p in mem.iterdir() if p.name.startswith(".lock.stale-")]
    assert (aside / "stray").read_text() == "x"


FORK_THEN_DIE = """
import os, sys, time
from ipymemory.store.lock import StoreLock
StoreLock(sys.argv[1]).acquire()
child = os.fork()  # inherits the holder's descriptors, knows nothing of the lock
if child == 0:
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)  # let the parent's output pipe close
    os.dup2(null, 2)
    time.sleep(60)
    os._exit(0)
print(child, flush=True)
os.kill(os.getpid(), 9)
"""


def test_a_forked_child_of_a_killed_holder_does_not_keep_the_lock(mem: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", FORK_THEN_DIE, str(mem)], capture_output=True, text=True, timeout=30
    )
    child = int(done.stdout)
    try:
        os.kill(child, 0)  # still running, with the dead holder's descriptors
        with StoreLock(mem, timeout=2) as lock:
            assert lock.held
    finally:
        os.kill(child, signal.SIGKILL)


def test_interrupt_right_after_making_the_lock_leaves_it_unrefreshed(
    mem: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C between ``mkdir .lock`` and the acquisition's end: the directory stays (ours,
    marked: our next holder adopts it) but is no longer refreshed, else the reference
    agent would wait on it for as long as this process runs."""
    import ipymemory.store.lock as lock_module

    beat = lock_module._Heartbeat.get()
    real_add = beat.add

    def add_then_interrupt(held: object) -> None:
        real_add(held)  # type: ignore[arg-type]
        raise KeyboardInterrupt

    monkeypatch.setattr(beat, "add", add_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        StoreLock(mem).acquire()
    monkeypatch.undo()
    assert os.stat(mem / ".lock").st_mode & 0o1000  # left behind, marked
    assert all(h.path != mem / ".lock" for h in beat._held)

    def take() -> None:
        with StoreLock(mem, timeout=2):
            pass

    assert raised_in_thread(take) == []  # adopted at once, from another thread
    assert not os.path.lexists(mem / ".lock")


def test_gc_and_check_with_files_put_inside_a_lock(workspace: str) -> None:
    """Files put inside our lock directory: the release moves the directory aside; gc
    neither fails on it nor deletes those files; check says what to do."""
    from ipymemory.store.maintenance import gc

    store = MemoryStore(workspace)
    store.extend([rec("a")])
    mem = Path(workspace) / ".memory"
    with StoreLock(mem):
        (mem / ".lock" / "stray").write_text("x")
    (aside,) = [p for p in mem.iterdir() if p.name.startswith(".lock.stale-")]
    assert gc(workspace, 0.0) == []
    assert (aside / "stray").read_text() == "x"
    (problem,) = check(workspace)
    assert problem.file == str(aside) and "files someone put inside" in problem.reason
    assert problem.severity == "warning" and not problem.leftover
    store.extend([rec("b")])  # commits go on


def test_a_live_holder_of_ours_is_no_finding(mem: Path, holder: subprocess.Popen[str]) -> None:
    assert (mem / ".lock").is_dir()
    assert lock_findings(mem) == []  # a commit in progress elsewhere is normal
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=10)
    (orphan,) = lock_findings(mem)
    assert f"left by process {holder.pid}" in orphan.reason and orphan.severity == "warning"
    with StoreLock(mem):
        assert lock_findings(mem) == []  # held by this very process
