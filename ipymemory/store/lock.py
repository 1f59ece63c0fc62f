"""The store lock: writers exclude each other across threads, processes and agents (SPEC §4).

Three layers, taken in this order and released in reverse:

1. an in-process lock per resolved ``.memory`` path, so two ``MemoryStore`` objects (or
   threads) in one process exclude each other; re-entrant for the holding thread;
2. an OS lock (``filelock``, flock) on the side file ``.memory/.lock.flock``; the kernel
   drops it the moment a holder dies, even by SIGKILL;
3. the reference TypeScript agent's proper-lockfile protocol on ``.memory/.lock`` as a
   *directory*: created with ``mkdir``, its mtime refreshed every ``refresh`` seconds by a
   daemon thread while held, removed on release. An existing directory whose mtime is
   within the ``stale`` window is a held lock; an older one is taken over.

A SIGKILLed holder of ours leaves ``.lock`` behind. Because every process of ours creates
``.lock`` only while holding the OS lock, finding ``.lock`` when we have the OS lock means
its creator is dead or is not one of ours. The side file ``.lock.owner`` records who made
the directory (host, pid, process start time, the directory's inode and last mtime); when
that process is gone and the directory is untouched since, it is taken over at once
instead of after the stale window. Nothing is ever written *inside* ``.lock`` (the
reference agent removes it with rmdir) and ``.lock`` is never a plain file.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from ..errors import MemoryLockTimeout, MemoryStoreError

__all__ = [
    "DEFAULT_LOCK_TIMEOUT",
    "LOCK_DIR_NAME",
    "LOCK_FLOCK_NAME",
    "LOCK_OWNER_NAME",
    "REFRESH_SECONDS",
    "STALE_SECONDS",
    "StoreLock",
    "is_lock_artefact",
]

LOCK_DIR_NAME = ".lock"
LOCK_FLOCK_NAME = ".lock.flock"
LOCK_OWNER_NAME = ".lock.owner"
_STALE_PREFIX = ".lock.stale-"
STALE_SECONDS = 30.0
REFRESH_SECONDS = 10.0
DEFAULT_LOCK_TIMEOUT = 10.0

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

if TYPE_CHECKING:
    import filelock


def is_lock_artefact(name: str) -> bool:
    """True for the names the lock uses in ``.memory/`` (never part of the set)."""
    return name == LOCK_DIR_NAME or name.startswith(".lock.")


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
    """The ``.lock`` directory we created: identity, for refresh and release."""

    path: Path
    dev: int
    ino: int
    mtime_ns: int
    refresh: float
    next_refresh: float
    owner_fd: int | None = None
    compromised: str | None = None


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
        if (st.st_dev, st.st_ino) != (held.dev, held.ino):
            held.compromised = f"{held.path} was replaced by another process"
            return
        now = time.time_ns()
        os.utime(held.path, ns=(now, now), follow_symlinks=False)
        held.mtime_ns = os.stat(held.path, follow_symlinks=False).st_mtime_ns
        _write_owner(held)
    except FileNotFoundError:
        held.compromised = f"{held.path} was removed by another process"
    except OSError:
        pass  # a missed refresh is retried; the stale window is three refreshes long


# --- owner record -----------------------------------------------------------------------

_HOST = socket.gethostname()


def _process_start(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (Linux), to tell a reused pid from its original."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    # Field 22, counted after the parenthesised command name (which may hold spaces).
    fields = data[data.rfind(b")") + 2 :].split()
    return fields[19].decode() if len(fields) > 19 else None


_own_start_cache: tuple[int, str | None] = (0, None)


def _own_start() -> str | None:
    global _own_start_cache
    pid = os.getpid()
    if _own_start_cache[0] != pid:  # computed once per process (a fork changes the pid)
        _own_start_cache = (pid, _process_start(pid))
    return _own_start_cache[1]


def _pid_alive(pid: int, start: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return True
    if start is not None:
        now = _process_start(pid)
        if now is not None and now != start:
            return False  # the pid was reused by another process
    return True


_OWNER_SIZE = 512  # fixed record length: rewritten in place, never truncated


def _open_owner(path: Path) -> int | None:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | _O_NOFOLLOW | _O_CLOEXEC, 0o644)
    except OSError:
        return None


def _write_owner(held: _HeldDir) -> None:
    """Best effort: the owner record only speeds up recovery from a dead holder.

    One pwrite on a descriptor kept open per process (opening and truncating the file on
    every acquisition costs more than the rest of the lock).
    """
    fd = held.owner_fd
    if fd is None:
        return
    info = {
        "host": _HOST,
        "pid": os.getpid(),
        "start": _own_start(),
        "dev": held.dev,
        "ino": held.ino,
        "mtime_ns": held.mtime_ns,
    }
    data = json.dumps(info, sort_keys=True).encode()
    with contextlib.suppress(OSError):
        os.pwrite(fd, data.ljust(_OWNER_SIZE), 0)


def _read_owner(path: Path) -> dict[str, object] | None:
    try:
        fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        raw = os.read(fd, _OWNER_SIZE)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        info = json.loads(raw)
    except ValueError:
        return None
    return info if isinstance(info, dict) else None


def _describe_owner(info: dict[str, object] | None) -> str:
    if not info:
        return "unknown holder"
    return f"process {info.get('pid')} on host {info.get('host')}"


# --- the lock -----------------------------------------------------------------------------


class StoreLock:
    """Exclusive writer lock on one ``.memory`` directory (which must exist).

    Use as a context manager. ``timeout`` bounds the total wait and raises
    :class:`MemoryLockTimeout` naming the lock and, if known, its holder.
    """

    def __init__(
        self,
        memory_dir: str | os.PathLike[str],
        *,
        timeout: float = DEFAULT_LOCK_TIMEOUT,
        stale: float = STALE_SECONDS,
        refresh: float = REFRESH_SECONDS,
        poll: float = 0.002,
    ) -> None:
        self.memory_dir = Path(memory_dir)
        self.lock_dir = self.memory_dir / LOCK_DIR_NAME
        self.timeout = timeout
        self.stale = stale
        self.refresh = refresh
        self.poll = poll
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
        deadline = time.monotonic() + self.timeout
        if not shared.mutex.acquire(timeout=max(self.timeout, 0.0)):
            raise MemoryLockTimeout(
                f"{self.lock_dir}: timed out after {self.timeout:g}s waiting for the memory "
                "store lock, held by another thread of this process"
            )
        try:
            self._acquire_os(shared, deadline)
            try:
                shared.held = self._acquire_dir(deadline)
            except BaseException:
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
        # error. A .lock left behind is ours (pid recorded), so the next acquisition in
        # this process takes it at once; others see it go stale.
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
                if (st.st_dev, st.st_ino) != (held.dev, held.ino):
                    held.compromised = f"{held.path} was replaced by another process"
        if held.compromised is not None:
            raise MemoryStoreError(
                f"{self.lock_dir}: the store lock was lost ({held.compromised}); "
                "commit abandoned before its commit point"
            )

    # --- layer 2: OS lock ---------------------------------------------------------

    def _acquire_os(self, shared: _Shared, deadline: float) -> None:
        import filelock  # here, not at the top: `import ipymemory` stays light

        if shared.flock is None:
            shared.flock = filelock.FileLock(
                str(self.memory_dir / LOCK_FLOCK_NAME), thread_local=False
            )
        remaining = max(0.0, deadline - time.monotonic())
        try:
            shared.flock.acquire(timeout=remaining, poll_interval=self.poll)
        except filelock.Timeout as e:
            holder = _describe_owner(_read_owner(self.memory_dir / LOCK_OWNER_NAME))
            raise MemoryLockTimeout(
                f"{self.lock_dir}: timed out after {self.timeout:g}s waiting for the memory "
                f"store lock ({self.memory_dir / LOCK_FLOCK_NAME} is held; last recorded "
                f"holder: {holder})"
            ) from e
        except OSError as e:
            raise MemoryStoreError(
                f"{self.memory_dir / LOCK_FLOCK_NAME}: cannot take the OS lock ({e})"
            ) from e

    # --- layer 3: the reference agent's lock directory ---------------------------

    def _acquire_dir(self, deadline: float) -> _HeldDir:
        delay = self.poll
        while True:
            try:
                os.mkdir(self.lock_dir, 0o755)
            except FileExistsError:
                pass
            except OSError as e:
                raise MemoryStoreError(f"{self.lock_dir}: cannot create the lock ({e})") from e
            else:
                return self._took(self.lock_dir)
            try:
                st = os.stat(self.lock_dir, follow_symlinks=False)
            except FileNotFoundError:
                continue  # released just now: try again at once
            age = time.time() - st.st_mtime
            if age > self.stale or self._owner_dead(st):
                self._take_over(st)
                continue
            if time.monotonic() >= deadline:
                kind = "directory" if stat.S_ISDIR(st.st_mode) else "file"
                raise MemoryLockTimeout(
                    f"{self.lock_dir}: timed out after {self.timeout:g}s waiting for the "
                    f"memory store lock: the lock {kind} is held by another agent "
                    f"(refreshed {age:.1f}s ago; it is stale after {self.stale:g}s)"
                )
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 2, 0.05)

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
            shared.owner_fd = _open_owner(path)
            if shared.owner_fd is not None:
                st = os.fstat(shared.owner_fd)
                shared.owner_id = (st.st_dev, st.st_ino)
        return shared.owner_fd

    def _took(self, path: Path) -> _HeldDir:
        st = os.stat(path, follow_symlinks=False)
        held = _HeldDir(
            path=path,
            dev=st.st_dev,
            ino=st.st_ino,
            mtime_ns=st.st_mtime_ns,
            refresh=self.refresh,
            next_refresh=time.monotonic() + self.refresh,
            owner_fd=self._owner_fd(),
        )
        _write_owner(held)
        _Heartbeat.get().add(held)
        return held

    def _owner_dead(self, st: os.stat_result) -> bool:
        """True if ``.lock`` was made by a process of ours on this host that is now dead
        and nobody has touched the directory since."""
        info = _read_owner(self.memory_dir / LOCK_OWNER_NAME)
        if not info or info.get("host") != _HOST:
            return False
        if (info.get("dev"), info.get("ino"), info.get("mtime_ns")) != (
            st.st_dev,
            st.st_ino,
            st.st_mtime_ns,
        ):
            return False
        pid = info.get("pid")
        start = info.get("start")
        if not isinstance(pid, int) or pid <= 0:
            return False
        if pid == os.getpid():
            return True  # a leftover of this process: we hold the in-process lock now
        return not _pid_alive(pid, start if isinstance(start, str) else None)

    def _take_over(self, seen: os.stat_result) -> None:
        """Move a stale lock aside (atomic rename), then remove it."""
        aside = self.memory_dir / f"{_STALE_PREFIX}{uuid.uuid4().hex}"
        try:
            os.rename(self.lock_dir, aside)
        except FileNotFoundError:
            return
        except OSError as e:
            if not stat.S_ISDIR(seen.st_mode):
                # A plain file at .lock (not the reference protocol): remove it.
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
        if stat.S_ISDIR(now.st_mode):
            with contextlib.suppress(OSError):
                os.rmdir(aside)
        else:
            with contextlib.suppress(OSError):
                os.unlink(aside)

    def _release_dir(self, held: _HeldDir) -> None:
        _Heartbeat.get().remove(held)
        try:
            st = os.stat(held.path, follow_symlinks=False)
        except FileNotFoundError:
            return
        if (st.st_dev, st.st_ino) != (held.dev, held.ino):
            return  # not ours any more: leave the new holder's lock alone
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(held.path)
