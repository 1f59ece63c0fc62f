"""The store lock: writers exclude each other across threads, processes and agents (SPEC §4).

Three layers, taken in this order and released in reverse:

1. an in-process lock per resolved ``.memory`` path, so two ``MemoryStore`` objects (or
   threads) in one process exclude each other; re-entrant for the holding thread;
2. an OS lock (``filelock``, flock) on the side file ``.memory/.lock.flock``; the kernel
   drops it the moment a holder dies, even by SIGKILL;
3. the reference TypeScript agent's proper-lockfile protocol on ``.memory/.lock`` as a
   *directory*: created with ``mkdir``, its mtime refreshed every ``refresh`` seconds by a
   daemon thread while held, removed on release. A directory refreshed within the
   ``stale`` window is a held lock; an older one is taken over.

Who made a ``.lock`` is decided from the directory itself, never from a side record: we
create it with the sticky bit in the ``mkdir`` mode (one atomic step; Linux honours it,
elsewhere it is added right after), and the reference agent never sets that bit. A
reused inode gets a fresh mode, so a marked ``.lock`` is always one of ours. Since ours
make ``.lock`` only while holding the OS lock, a marked ``.lock`` found by a process that
now holds the OS lock was left by a dead holder (or by a release cut short): it is
adopted at once, whatever instant its maker died. An unmarked ``.lock`` is the reference
agent's: honoured while fresh, taken over once stale — by its mtime, or after being seen
unchanged for the whole stale window (an mtime in the future must not block forever).

``.lock.owner`` (:mod:`.lock_holder`) records who holds the lock (host, boot, pid,
process start, inode, since). It only names the holder in messages, in ``check`` and in
progress reports, and can *veto* adopting a marked ``.lock`` whose recorded holder is
provably alive (should the OS lock ever be bypassed, e.g. ``.lock.flock`` deleted under a
holder); it never licenses a takeover. It is marked released before ``.lock`` is removed.
Nothing is ever written *inside* ``.lock`` (the reference agent removes it with rmdir),
and ``.lock`` is never a plain file.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import functools
import os
import stat
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from .. import _constants as C
from ..errors import MemoryLockTimeout, MemoryStoreError
from .layout import (
    LOCK_DIR_NAME,
    LOCK_FLOCK_NAME,
    LOCK_OWNER_NAME,
    LOCK_PREFIX,
    STALE_LOCK_PREFIX,
)
from .lock_holder import (
    BOOT_ID,
    HOST,
    MARK,
    STALE_SECONDS,
    HolderKind,
    LockFinding,
    LockHolder,
    OwnerRecord,
    clock,
    holder_of,
    inspect_lock,
    is_marked,
    kind_of,
    lock_findings,
    open_owner,
    read_owner,
    side_file_findings,
    write_owner,
)

__all__ = [
    "DEFAULT_LOCK_TIMEOUT",
    "LOCK_DIR_NAME",
    "LOCK_FLOCK_NAME",
    "LOCK_OWNER_NAME",
    "REFRESH_SECONDS",
    "STALE_SECONDS",
    "LockFinding",
    "LockHolder",
    "LockWait",
    "LockWaitListener",
    "StoreLock",
    "inspect_lock",
    "is_lock_artefact",
    "lock_findings",
    "reporting_lock_waits",
]

REFRESH_SECONDS = C.LOCK_REFRESH_SECONDS
# Longer than the stale window: a lock left by a dead foreign holder means a wait (it
# goes stale within STALE_SECONDS), never an error.
DEFAULT_LOCK_TIMEOUT = C.DEFAULT_LOCK_TIMEOUT
WAIT_REPORT_SECONDS = C.LOCK_WAIT_REPORT_SECONDS

_DIR_MODE = 0o755 | MARK

if TYPE_CHECKING:
    import filelock


def is_lock_artefact(name: str) -> bool:
    """True for the names the lock uses in ``.memory/`` (never part of the set)."""
    return name == LOCK_DIR_NAME or name.startswith(LOCK_PREFIX)


@dataclass(frozen=True)
class LockWait:
    """A progress report while waiting for the lock (see :func:`reporting_lock_waits`)."""

    lock: Path
    waited: float
    timeout: float
    holder: LockHolder

    def __str__(self) -> str:
        holder = self.holder
        since = f" (held since {clock(holder.since)})" if holder.since is not None else ""
        return (
            f"waiting for the memory lock{since}: {holder.describe()} — "
            f"{self.waited:.0f}s of at most {self.timeout:g}s"
        )


LockWaitListener = Callable[[LockWait], None]
_listener: contextvars.ContextVar[LockWaitListener | None] = contextvars.ContextVar(
    "ipymemory_lock_wait_listener", default=None
)


@contextlib.contextmanager
def reporting_lock_waits(listener: LockWaitListener | None) -> Iterator[None]:
    """Within the block, a lock wait in this context calls ``listener`` about once a second
    (after the first second), unless the lock was given its own ``on_wait``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


# --- in-process registry ------------------------------------------------------------


@dataclass
class _Shared:
    """Per-path state shared by every StoreLock of this process."""

    mutex: threading.Lock = field(default_factory=threading.Lock)
    owner: int | None = None  # thread ident of the holder
    depth: int = 0
    flock: filelock.BaseFileLock | None = None
    held: _HeldDir | None = None
    owner_fd: int | None = None
    owner_id: tuple[int, int] | None = None


@dataclass
class _HeldDir:
    """The ``.lock`` directory we hold: identity, for refresh, check and release."""

    path: Path
    dev: int
    ino: int
    marked: bool
    refresh: float
    next_refresh: float
    since: float
    owner_fd: int | None = None
    compromised: str | None = None

    def is_ours(self, st: os.stat_result) -> bool:
        # The mark matters: the reference agent's mkdir may reuse our freed inode.
        return (st.st_dev, st.st_ino) == (self.dev, self.ino) and (not self.marked or is_marked(st))


_registry: dict[str, _Shared] = {}
_registry_guard = threading.Lock()


def _shared_for(key: str) -> _Shared:
    with _registry_guard:
        shared = _registry.get(key)
        if shared is None:
            shared = _registry[key] = _Shared()
        return shared


def _reset_after_fork() -> None:
    # A forked child inherits the parent's locks' state but not its threads: start clean.
    global _registry_guard
    _registry.clear()
    _registry_guard = threading.Lock()
    _Heartbeat.instance = None
    _Heartbeat._guard = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


# --- heartbeat ------------------------------------------------------------------------


class _Heartbeat:
    """One daemon thread refreshing the mtime of every ``.lock`` directory we hold."""

    instance: _Heartbeat | None = None
    _guard = threading.Lock()

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._held: list[_HeldDir] = []
        self._wake_at = time.monotonic() + REFRESH_SECONDS
        self._thread = threading.Thread(target=self._run, name="ipymemory-lock", daemon=True)
        self._thread.start()

    @classmethod
    def get(cls) -> _Heartbeat:
        with cls._guard:
            if cls.instance is None:
                cls.instance = cls()
            return cls.instance

    def add(self, held: _HeldDir) -> None:
        with self._cond:
            self._held.append(held)
            # Wake the thread only if it would sleep past this lock's first refresh:
            # a wake-up per commit would cost more than the commit's own lock work.
            if held.next_refresh < self._wake_at:
                self._cond.notify()

    def remove(self, held: _HeldDir) -> None:
        with self._cond, contextlib.suppress(ValueError):
            self._held.remove(held)

    def remove_path(self, path: Path) -> None:
        """Stop refreshing ``path`` (an acquisition interrupted after making it): an
        orphan kept fresh would block the reference agent for as long as we run."""
        with self._cond:
            self._held = [h for h in self._held if h.path != path]

    def _run(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                for held in self._held:
                    if held.next_refresh <= now:
                        _refresh(held)
                        held.next_refresh = time.monotonic() + held.refresh
                now = time.monotonic()
                self._wake_at = min(
                    [h.next_refresh for h in self._held], default=now + REFRESH_SECONDS
                )
                self._cond.wait(timeout=max(0.0, self._wake_at - now))


def _refresh(held: _HeldDir) -> None:
    """Touch our ``.lock`` directory, unless it is no longer ours (then mark compromised)."""
    try:
        st = os.stat(held.path, follow_symlinks=False)
        if not held.is_ours(st):
            held.compromised = f"{held.path} was replaced by another process"
            return
        now = time.time_ns()
        os.utime(held.path, ns=(now, now), follow_symlinks=False)
    except FileNotFoundError:
        held.compromised = f"{held.path} was removed by another process"
    except OSError:
        pass  # a missed refresh is retried; the stale window is three refreshes long


def _write_owner(held: _HeldDir, *, released: bool = False) -> None:
    """Record (or clear) ``held`` in ``.lock.owner``, if that file could be opened."""
    if held.owner_fd is not None:
        write_owner(held.owner_fd, held.dev, held.ino, held.since, released=released)


# --- the lock -----------------------------------------------------------------------------


class StoreLock:
    """Exclusive writer lock on one ``.memory`` directory (which must exist).

    Use as a context manager. ``timeout`` bounds the total wait and raises
    :class:`MemoryLockTimeout` naming the lock and what is known about its holder.
    ``on_wait`` (default: the listener of :func:`reporting_lock_waits`) hears about a wait
    once it has lasted :data:`WAIT_REPORT_SECONDS`, then about as often.
    """

    def __init__(
        self,
        memory_dir: str | os.PathLike[str],
        *,
        timeout: float = DEFAULT_LOCK_TIMEOUT,
        stale: float = STALE_SECONDS,
        refresh: float = REFRESH_SECONDS,
        poll: float = 0.002,
        on_wait: LockWaitListener | None = None,
    ) -> None:
        self.memory_dir = Path(memory_dir)
        self.lock_dir = self.memory_dir / LOCK_DIR_NAME
        self.timeout = timeout
        self.stale = stale
        self.refresh = refresh
        self.poll = poll
        self.on_wait = on_wait
        self._shared = _shared_for(os.path.realpath(self.memory_dir))

    # context manager
    def __enter__(self) -> StoreLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    @property
    def held(self) -> bool:
        """True if the calling thread holds this lock."""
        return self._shared.owner == threading.get_ident()

    def acquire(self) -> None:
        shared = self._shared
        me = threading.get_ident()
        if shared.owner == me:
            shared.depth += 1
            return
        wait = _Waiter(self)
        while not shared.mutex.acquire(timeout=wait.slice()):
            wait.report(lambda: LockHolder("thread"))
            if wait.over():
                raise wait.timeout_error(LockHolder("thread"))
        try:
            self._acquire_os(shared, wait)
            try:
                shared.held = self._acquire_dir(wait)
            except BaseException:
                # E.g. KeyboardInterrupt right after .lock was made: it stays behind
                # marked (our next holder adopts it), but must not be kept fresh.
                if _Heartbeat.instance is not None:
                    _Heartbeat.instance.remove_path(self.lock_dir)
                assert shared.flock is not None
                shared.flock.release()
                raise
        except BaseException:
            shared.mutex.release()
            raise
        shared.owner = me
        shared.depth = 1

    def release(self) -> None:
        shared = self._shared
        if shared.owner != threading.get_ident():
            raise RuntimeError(f"{self.lock_dir}: released by a thread that does not hold it")
        shared.depth -= 1
        if shared.depth:
            return
        held, shared.held = shared.held, None
        shared.owner = None
        # Best effort throughout: a failure here must not turn a finished commit into an
        # error. A .lock left behind carries our mark, so the next holder adopts it.
        try:
            if held is not None:
                with contextlib.suppress(OSError):
                    self._release_dir(held)
        finally:
            try:
                if shared.flock is not None:
                    with contextlib.suppress(OSError):
                        shared.flock.release()
            finally:
                shared.mutex.release()

    def check_held(self) -> None:
        """Raise :class:`MemoryStoreError` if our ``.lock`` directory was taken from us.

        Called just before a commit point: a holder stalled past the stale window may have
        lost the lock to another agent, and must not then commit.
        """
        held = self._shared.held
        if held is None:
            raise MemoryStoreError(f"{self.lock_dir}: the store lock is not held")
        if held.compromised is None:
            try:
                st = os.stat(held.path, follow_symlinks=False)
            except FileNotFoundError:
                held.compromised = f"{held.path} was removed by another process"
            else:
                if not held.is_ours(st):
                    held.compromised = f"{held.path} was replaced by another process"
        if held.compromised is not None:
            raise MemoryStoreError(
                f"{self.lock_dir}: the store lock was lost ({held.compromised}); "
                "commit abandoned before its commit point"
            )

    # --- layer 2: OS lock ---------------------------------------------------------

    def _acquire_os(self, shared: _Shared, wait: _Waiter) -> None:
        import filelock  # here, not at the top: `import ipymemory` stays light

        flock_path = self.memory_dir / LOCK_FLOCK_NAME
        if shared.flock is None:
            shared.flock = filelock.FileLock(str(flock_path), thread_local=False)
        while True:
            try:
                shared.flock.acquire(timeout=wait.slice(), poll_interval=self.poll)
                return
            except filelock.Timeout as e:
                holder = functools.partial(
                    inspect_lock, self.memory_dir, os_lock_held=True, stale=self.stale
                )
                wait.report(holder)  # a report due is made even if the time is up
                if wait.over():
                    raise wait.timeout_error(holder()) from e
            except OSError as e:
                found = side_file_findings(self.memory_dir)
                why = next((f.reason for f in found if f.name == LOCK_FLOCK_NAME), str(e))
                raise MemoryStoreError(f"{flock_path}: cannot take the OS lock: {why}") from e

    # --- layer 3: the reference agent's lock directory ---------------------------

    def _acquire_dir(self, wait: _Waiter) -> _HeldDir:
        """Under the OS lock: make ``.lock``, adopt one of ours, or wait for a foreign one."""
        seen: tuple[tuple[int, int, int, int, int], float] | None = None
        holder: LockHolder | None = None
        while True:
            try:
                os.mkdir(self.lock_dir, _DIR_MODE)
            except FileExistsError:
                pass
            except OSError as e:
                raise MemoryStoreError(f"{self.lock_dir}: cannot create the lock ({e})") from e
            else:
                return self._took(made=True)
            try:
                st = os.stat(self.lock_dir, follow_symlinks=False)
            except FileNotFoundError:
                continue  # released just now: try again at once
            except OSError as e:
                raise MemoryStoreError(f"{self.lock_dir}: cannot examine the lock ({e})") from e
            now = time.monotonic()
            key = (st.st_dev, st.st_ino, st.st_mode, st.st_mtime_ns, st.st_ctime_ns)
            changed = seen is not None and seen[0] != key
            if seen is None or changed:
                seen = (key, now)
            unchanged_for = now - seen[1]
            age = time.time() - st.st_mtime
            stale = age > self.stale or unchanged_for > self.stale
            if is_marked(st):
                # Ours, made under the OS lock we now hold: its maker is gone.
                vetoed = self._holder_alive(st)
                if not vetoed or stale:
                    adopted = self._adopt(st)
                    if adopted is not None:
                        return adopted
                    continue
                holder = holder_of(vetoed, age, self.stale)
            elif stale or not stat.S_ISDIR(st.st_mode):
                # A file, FIFO or symlink at .lock is nobody's lock (both tools make a
                # directory there): waiting out the stale window would only stall us.
                self._take_over(st)
                continue
            else:
                alive = True if changed else (holder.alive if holder is not None else None)
                kind: HolderKind = "foreign" if stat.S_ISDIR(st.st_mode) else "other"
                holder = LockHolder(
                    kind,
                    alive=alive,
                    refreshed_ago=age,
                    stale_after=self.stale,
                    what=kind_of(st),
                )
            wait.report(holder)
            if wait.over():
                raise wait.timeout_error(holder)
            wait.sleep()

    def _owner_fd(self) -> int | None:
        """The per-process descriptor of ``.lock.owner`` (re-opened if the file was replaced)."""
        shared = self._shared
        path = self.memory_dir / LOCK_OWNER_NAME
        try:
            st = os.stat(path, follow_symlinks=False)
            current: tuple[int, int] | None = (st.st_dev, st.st_ino)
        except OSError:
            current = None
        if shared.owner_fd is not None and current != shared.owner_id:
            with contextlib.suppress(OSError):
                os.close(shared.owner_fd)
            shared.owner_fd = None
        if shared.owner_fd is None:
            shared.owner_fd = open_owner(path)
            if shared.owner_fd is not None:
                st = os.fstat(shared.owner_fd)
                shared.owner_id = (st.st_dev, st.st_ino)
        return shared.owner_fd

    def _took(self, *, made: bool) -> _HeldDir:
        try:
            st = os.stat(self.lock_dir, follow_symlinks=False)
        except OSError as e:
            raise MemoryStoreError(f"{self.lock_dir}: cannot examine the lock ({e})") from e
        if made and not is_marked(st):
            # mkdir dropped the sticky bit (not Linux): add it. A kill right here leaves
            # an unmarked .lock, which waits out the stale window like a foreign one.
            with contextlib.suppress(OSError):
                os.chmod(self.lock_dir, stat.S_IMODE(st.st_mode) | MARK)
                st = os.stat(self.lock_dir, follow_symlinks=False)
        held = _HeldDir(
            path=self.lock_dir,
            dev=st.st_dev,
            ino=st.st_ino,
            marked=is_marked(st),
            refresh=self.refresh,
            next_refresh=time.monotonic() + self.refresh,
            since=time.time(),
            owner_fd=self._owner_fd(),
        )
        _write_owner(held)
        _Heartbeat.get().add(held)
        return held

    def _holder_alive(self, st: os.stat_result) -> OwnerRecord | None:
        """The owner record of the marked ``.lock`` ``st`` if it names a live process other
        than us on this host (a veto on adopting it); None otherwise."""
        record = read_owner(self.memory_dir / LOCK_OWNER_NAME)
        if record is None or not record.matches(st):
            return None
        if record.host == HOST and record.pid == os.getpid() and record.boot == BOOT_ID:
            return None  # a leftover of this process: we hold the in-process lock now
        return record if record.alive() is not False else None

    def _adopt(self, seen: os.stat_result) -> _HeldDir | None:
        """Take over our own dead holder's ``.lock`` in place (no window without a lock)."""
        now = time.time_ns()
        try:
            os.utime(self.lock_dir, ns=(now, now), follow_symlinks=False)
            st = os.stat(self.lock_dir, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise MemoryStoreError(f"{self.lock_dir}: cannot take over a dead lock ({e})") from e
        if (st.st_dev, st.st_ino) != (seen.st_dev, seen.st_ino) or not is_marked(st):
            return None  # replaced meanwhile (the reference agent took it): look again
        return self._took(made=False)

    def _take_over(self, seen: os.stat_result) -> None:
        """Move a stale foreign lock aside (atomic rename), then remove it."""
        aside = self.memory_dir / f"{STALE_LOCK_PREFIX}{uuid.uuid4().hex}"
        try:
            os.rename(self.lock_dir, aside)
        except FileNotFoundError:
            return
        except OSError as e:
            if not stat.S_ISDIR(seen.st_mode):
                # Not a directory (a file, a symlink): it is nobody's lock; remove it.
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.lock_dir)
                return
            raise MemoryStoreError(f"{self.lock_dir}: cannot take over a stale lock ({e})") from e
        try:
            now = os.stat(aside, follow_symlinks=False)
        except OSError:
            return
        if (now.st_dev, now.st_ino) != (seen.st_dev, seen.st_ino):
            # Someone re-created the lock between our check and the rename: give it back.
            with contextlib.suppress(OSError):
                if not os.path.lexists(self.lock_dir):
                    os.rename(aside, self.lock_dir)
                    return
        _remove(aside, now)

    def _release_dir(self, held: _HeldDir) -> None:
        _Heartbeat.get().remove(held)
        # The record first: once .lock is gone its inode may be reused by anyone's mkdir.
        _write_owner(held, released=True)
        try:
            st = os.stat(held.path, follow_symlinks=False)
        except FileNotFoundError:
            return
        if not held.is_ours(st):
            return  # not ours any more: leave the new holder's lock alone
        try:
            os.rmdir(held.path)
        except FileNotFoundError:
            pass
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            # Someone wrote inside it: move it aside, so nobody waits on it.
            aside = self.memory_dir / f"{STALE_LOCK_PREFIX}{uuid.uuid4().hex}"
            os.rename(held.path, aside)


def _remove(path: Path, st: os.stat_result) -> None:
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(st.st_mode):
            os.rmdir(path)
        else:
            os.unlink(path)


class _Waiter:
    """The deadline of one acquisition, its progress reports and its polling."""

    def __init__(self, lock: StoreLock) -> None:
        self.lock = lock
        self.start = time.monotonic()
        self.deadline = self.start + max(lock.timeout, 0.0)
        self.listener = lock.on_wait if lock.on_wait is not None else _listener.get()
        self.next_report = self.start + WAIT_REPORT_SECONDS
        self.delay = lock.poll

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def over(self) -> bool:
        return time.monotonic() >= self.deadline

    def slice(self) -> float:
        """How long the next blocking wait may last: to the deadline, or to the next
        progress report if someone listens."""
        if self.listener is None:
            return self.remaining()
        return min(self.remaining(), max(0.0, self.next_report - time.monotonic()) or 0.001)

    def report(self, holder: LockHolder | Callable[[], LockHolder]) -> None:
        """Tell the listener, if one listens and a report is due (``holder`` may be a
        function: inspecting the holder costs syscalls only worth paying then)."""
        now = time.monotonic()
        if self.listener is None or now < self.next_report:
            return
        self.next_report = now + WAIT_REPORT_SECONDS
        known = holder if isinstance(holder, LockHolder) else holder()
        wait = LockWait(self.lock.lock_dir, now - self.start, self.lock.timeout, known)
        with contextlib.suppress(Exception):  # a display failure must not break the commit
            self.listener(wait)

    def sleep(self) -> None:
        time.sleep(min(self.delay, self.remaining()))
        self.delay = min(self.delay * 2, 0.05)

    def timeout_error(self, holder: LockHolder) -> MemoryLockTimeout:
        return MemoryLockTimeout(
            f"{self.lock.lock_dir}: timed out after {self.lock.timeout:g}s waiting for the "
            f"memory store lock: {holder.describe()}"
        )
