"""Who holds the store lock (SPEC §4): the owner record, what is known about a holder
(for timeout messages and progress reports) and what ``check`` reports about the lock.

The owner record ``.lock.owner`` is one fixed-size JSON object rewritten in place:
host, boot id, pid and process start time of the process that made (or adopted) the
``.lock`` directory with inode ``(dev, ino)``, since when, and whether it still holds it
(``held`` is cleared before ``.lock`` is removed, as the inode may then be reused by
anyone's ``mkdir``). It names holders and may veto adopting a directory whose recorded
holder is provably alive; it never licenses a takeover (see :mod:`.lock`).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .. import _constants as C
from .._json import loads
from .layout import LOCK_DIR_NAME, LOCK_FLOCK_NAME, LOCK_OWNER_NAME

__all__ = [
    "BOOT_ID",
    "HOST",
    "MARK",
    "STALE_SECONDS",
    "HolderKind",
    "LockFinding",
    "LockHolder",
    "OwnerRecord",
    "clock",
    "holder_of",
    "inspect_lock",
    "is_marked",
    "kind_of",
    "lock_findings",
    "open_owner",
    "process_start",
    "read_owner",
    "side_file_findings",
    "write_owner",
]

# proper-lockfile's stale window as the reference agent uses it: a lock directory not
# refreshed for this long is abandoned.
STALE_SECONDS = C.LOCK_STALE_SECONDS
MARK = stat.S_ISVTX  # the sticky bit: set on every .lock we make, never by the reference
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def is_marked(st: os.stat_result) -> bool:
    """True if ``st`` is a ``.lock`` directory one of ours made."""
    return stat.S_ISDIR(st.st_mode) and bool(st.st_mode & MARK)


# --- the owner record ---------------------------------------------------------------------

HOST = socket.gethostname()


def _read_small(path: str, size: int = 128) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except OSError:
        return None


BOOT_ID = (_read_small("/proc/sys/kernel/random/boot_id") or b"").strip().decode() or None


def process_start(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (Linux), to tell a reused pid from its original."""
    data = _read_small(f"/proc/{pid}/stat", 4096)
    if data is None:
        return None
    # Field 22, counted after the parenthesised command name (which may hold spaces).
    fields = data[data.rfind(b")") + 2 :].split()
    return fields[19].decode() if len(fields) > 19 else None


_own_start_cache: tuple[int, str | None] = (0, None)


def _own_start() -> str | None:
    global _own_start_cache
    pid = os.getpid()
    if _own_start_cache[0] != pid:  # computed once per process (a fork changes the pid)
        _own_start_cache = (pid, process_start(pid))
    return _own_start_cache[1]


def _pid_alive(pid: int, start: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    if start is not None:
        now = process_start(pid)
        if now is not None and now != start:
            return False  # the pid was reused by another process
    return True


OWNER_SIZE = 512  # fixed record length: rewritten in place, never truncated


@dataclass(frozen=True)
class OwnerRecord:
    """Who made the ``.lock`` directory ``(dev, ino)``, and whether it still holds it."""

    held: bool
    host: str
    boot: str | None
    pid: int
    start: str | None
    dev: int
    ino: int
    since: float

    def matches(self, st: os.stat_result) -> bool:
        return self.held and (self.dev, self.ino) == (st.st_dev, st.st_ino)

    def alive(self) -> bool | None:
        """True/False if this host can tell whether the recorded process runs; else None."""
        if self.host != HOST:
            return None
        if self.boot is not None and BOOT_ID is not None and self.boot != BOOT_ID:
            return False  # recorded before the last reboot
        return _pid_alive(self.pid, self.start)


def open_owner(path: Path) -> int | None:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _O_NOFOLLOW | _O_CLOEXEC | os.O_NONBLOCK, 0o644)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # e.g. a FIFO planted there
        os.close(fd)
        return None
    return fd


def write_owner(fd: int, dev: int, ino: int, since: float, *, released: bool) -> None:
    """Best effort: the record only names the holder and can veto (see the module doc).

    One pwrite on a descriptor kept open per process (opening and truncating the file on
    every acquisition costs more than the rest of the lock).
    """
    info = {
        "held": not released,
        "host": HOST,
        "boot": BOOT_ID,
        "pid": os.getpid(),
        "start": _own_start(),
        "dev": dev,
        "ino": ino,
        "since": since,
    }
    data = json.dumps(info, sort_keys=True).encode()
    with contextlib.suppress(OSError):
        os.pwrite(fd, data.ljust(OWNER_SIZE), 0)


def read_owner(path: Path) -> OwnerRecord | None:
    try:
        fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        raw = os.read(fd, OWNER_SIZE)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        info = loads(raw)
        record = OwnerRecord(
            held=info["held"],
            host=info["host"],
            boot=info.get("boot"),
            pid=info["pid"],
            start=info.get("start"),
            dev=info["dev"],
            ino=info["ino"],
            since=float(info["since"]),
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return None  # an older or damaged record: nothing known
    ok = (
        isinstance(record.held, bool)
        and isinstance(record.host, str)
        and type(record.pid) is int
        and record.pid > 0
        and type(record.dev) is int
        and type(record.ino) is int
        and isinstance(record.boot, (str, type(None)))
        and isinstance(record.start, (str, type(None)))
    )
    return record if ok else None


# --- what is known about a holder ---------------------------------------------------

HolderKind = Literal["thread", "ours", "foreign", "other", "none"]


@dataclass(frozen=True)
class LockHolder:
    """What is known about who holds (or last held) the lock.

    ``kind``: ``thread`` (another thread of this process), ``ours`` (a process of ours:
    the OS lock is held, or ``.lock`` carries our mark), ``foreign`` (an unmarked ``.lock``
    directory: the reference agent's), ``other`` (something that is not a directory at
    ``.lock``), ``none``. ``pid``/``host``/``since`` come from the owner record when it
    matches; ``alive`` is None when unknown; ``refreshed_ago`` is the age of ``.lock``'s
    mtime (negative: in the future).
    """

    kind: HolderKind
    pid: int | None = None
    host: str | None = None
    since: float | None = None
    alive: bool | None = None
    refreshed_ago: float | None = None
    stale_after: float = STALE_SECONDS
    what: str = ""  # for ``other``: what sits at .lock

    def describe(self) -> str:
        if self.kind == "thread":
            return "held by another thread of this process"
        if self.kind == "none":
            return "not held"
        refreshed = _refreshed_text(self.refreshed_ago, self.stale_after)
        if self.kind == "ours":
            if self.pid is None:
                who = "held by a process of ours (unknown: no current owner record)"
            else:
                who = f"held by process {self.pid} on host {self.host} (ours)"
            if self.since is not None:
                who += f" since {clock(self.since)}"
            state = {True: "alive", False: "not running", None: "liveness unknown"}[self.alive]
            return f"{who}, {state}" + (f"; {refreshed}" if refreshed else "")
        if self.kind == "foreign":
            alive = " and refreshed while we waited (alive)" if self.alive else ""
            return (
                "held by another agent (a lock directory not made by ipymemory: the "
                f"reference agent's{alive}); {refreshed}"
            )
        return f"a {self.what} sits at {LOCK_DIR_NAME}, not a lock directory; {refreshed}"


def clock(epoch: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(epoch))


def _refreshed_text(age: float | None, stale: float) -> str:
    if age is None:
        return ""
    if age < -1.0:
        return (
            f"its mtime is {-age:.1f}s in the future (clock skew); it is taken over once "
            f"seen unchanged for {stale:g}s"
        )
    age = max(age, 0.0)
    if age > stale:
        return f"refreshed {age:.1f}s ago: stale (after {stale:g}s), taken over by the next commit"
    return f"refreshed {age:.1f}s ago; stale after {stale:g}s, i.e. in {stale - age:.1f}s"


def inspect_lock(
    memory_dir: str | os.PathLike[str],
    *,
    os_lock_held: bool | None = None,
    stale: float = STALE_SECONDS,
) -> LockHolder:
    """What is known about the holder of the lock on ``memory_dir``, without taking it.

    ``os_lock_held``: whether another process holds the OS lock, if the caller knows.
    """
    root = Path(memory_dir)
    try:
        st: os.stat_result | None = os.stat(root / LOCK_DIR_NAME, follow_symlinks=False)
    except OSError:
        st = None
    record = read_owner(root / LOCK_OWNER_NAME)
    if st is None:
        if os_lock_held and record is not None and record.held:
            return holder_of(record, None, stale)
        if os_lock_held:  # the kernel keeps an OS lock only for a live process
            return LockHolder("ours", alive=True, stale_after=stale)
        return LockHolder("none", stale_after=stale)
    age = time.time() - st.st_mtime
    if is_marked(st):
        if record is not None and record.matches(st):
            return holder_of(record, age, stale)
        alive = True if os_lock_held else None if os_lock_held is None else False
        return LockHolder("ours", alive=alive, refreshed_ago=age, stale_after=stale)
    if stat.S_ISDIR(st.st_mode):
        return LockHolder("foreign", refreshed_ago=age, stale_after=stale)
    return LockHolder("other", refreshed_ago=age, stale_after=stale, what=kind_of(st))


def holder_of(record: OwnerRecord, age: float | None, stale: float) -> LockHolder:
    return LockHolder(
        "ours",
        pid=record.pid,
        host=record.host,
        since=record.since,
        alive=record.alive(),
        refreshed_ago=age,
        stale_after=stale,
    )


def kind_of(st: os.stat_result) -> str:
    if stat.S_ISLNK(st.st_mode):
        return "symbolic link"
    if stat.S_ISREG(st.st_mode):
        return "plain file"
    if stat.S_ISDIR(st.st_mode):
        return "directory"
    return "special file"


@contextlib.contextmanager
def _os_lock_probe(root: Path) -> Iterator[bool | None]:
    """Whether another process holds the OS lock (None: unknown). If none does, the probe
    holds it for the block (never waiting), so no writer of ours makes or removes
    ``.lock`` while it is inspected."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield None
        return
    try:
        fd = os.open(root / LOCK_FLOCK_NAME, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        yield False  # no writer of ours ever ran here
        return
    except OSError:
        yield None
        return
    busy: bool | None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        busy = False
    except BlockingIOError:
        busy = True
    except OSError:
        busy = None
    try:
        yield busy
    finally:
        os.close(fd)  # closing drops the probe's lock


# --- check ------------------------------------------------------------------------------


Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class LockFinding:
    """A problem with the lock's files: ``name`` (in ``.memory``), why, how bad."""

    name: str
    reason: str
    severity: Severity


def lock_findings(
    memory_dir: str | os.PathLike[str], *, stale: float = STALE_SECONDS
) -> list[LockFinding]:
    """Orphaned or stale locks, a live foreign holder, and broken side files that would
    make commits fail or wait (for ``check``). Reads only; never takes the lock."""
    root = Path(memory_dir)
    out: list[LockFinding] = []
    out.extend(side_file_findings(root))
    with _os_lock_probe(root) as busy:
        holder = inspect_lock(root, os_lock_held=busy, stale=stale)
    lock = root / LOCK_DIR_NAME
    if holder.kind == "other":
        out.append(
            LockFinding(
                LOCK_DIR_NAME,
                f"is a {holder.what}; the lock must be a directory (while it is there "
                "the reference agent can never take the lock); remove it",
                "error",
            )
        )
    elif holder.kind in ("ours", "foreign") and lock.is_dir() and not lock.is_symlink():
        try:
            inside = os.listdir(lock)
        except OSError:
            inside = []
        if inside:
            out.append(
                LockFinding(
                    LOCK_DIR_NAME,
                    f"the lock directory holds {len(inside)} file(s); nothing may be "
                    "written inside it (the reference agent removes it with rmdir and "
                    "fails); move them out",
                    "error",
                )
            )
    if holder.kind == "ours" and busy is False and os.path.lexists(lock):
        who = f"process {holder.pid} on host {holder.host}" if holder.pid else "a process"
        out.append(
            LockFinding(
                LOCK_DIR_NAME,
                f"orphaned: left by {who} of ours that died holding it; our next "
                "commit takes it over at once (the reference agent waits until it is "
                f"{stale:g}s stale)",
                "warning",
            )
        )
    elif holder.kind == "foreign":
        age = holder.refreshed_ago or 0.0
        if age > stale:
            reason = (
                f"a stale lock of another agent (not refreshed for {age:.0f}s); the next "
                "commit takes it over"
            )
        elif age < -1.0:
            reason = f"held by another agent; {_refreshed_text(age, stale)}"
        else:
            reason = (
                f"held by another agent (refreshed {age:.1f}s ago): commits wait until it "
                f"is released, or taken over once {stale:g}s stale"
            )
        out.append(LockFinding(LOCK_DIR_NAME, reason, "warning"))
    if not os.access(root, os.W_OK | os.X_OK):
        out.append(
            LockFinding(
                ".",
                "the memory directory is not writable by this user: commits cannot take the lock",
                "warning",
            )
        )
    return out


def side_file_findings(root: Path) -> list[LockFinding]:
    """``.lock.flock`` or ``.lock.owner`` present but not a usable regular file."""
    out: list[LockFinding] = []
    side: tuple[tuple[str, Severity, str], ...] = (
        (LOCK_FLOCK_NAME, "error", "every commit fails to take the OS lock"),
        (LOCK_OWNER_NAME, "warning", "lock holders cannot be named in messages"),
    )
    for name, needed, effect in side:
        path = root / name
        try:
            st = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            continue
        except OSError as e:
            out.append(LockFinding(name, f"cannot be examined ({e}): {effect}", needed))
            continue
        if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
            # Opens and locks, but is nothing ipymemory makes (planted?): say so, no more.
            problem, effect = f"is a {kind_of(st)}, not the regular file ipymemory makes", ""
        elif not stat.S_ISREG(st.st_mode):
            problem = f"is a {kind_of(st)}, not a regular file"
        elif not os.access(path, os.R_OK | os.W_OK):
            problem = "is not readable and writable by this user"
        else:
            continue
        out.append(
            LockFinding(
                name,
                f"{problem}{': ' + effect if effect else ''}; remove it (the next commit "
                "re-creates it)",
                needed,
            )
        )
    return out
