"""The on-disk layout of a memory directory: every name in it, once, and bounded reads.

``<workspace>/.memory`` holds the set (SPEC §1: ``manifest.json``, ``MEMORY.md``, record
files), the lock's files (SPEC §4) and local state that is never part of the set
(SPEC §6: ``history/``, ``pending/``; SPEC §14: ``sync/``). Everything that looks at the
directory — the store, ``check``/``gc``, the server endpoint, the teaching notebook's
reset — takes the names from here and reads files through :meth:`MemoryDir.read`,
which refuses a file larger than its known bound before reading it (a 1 GB manifest
must not cost 1 GB).

Every other read of a file we did not just write (a pending batch, a kept history file,
an export's state file, a Claude Code topic file) goes through :func:`open_regular` /
:func:`read_regular`: opened without blocking and without following a symlink, then
checked to be a regular file, so a FIFO planted there is refused instead of hanging the
kernel or the server, and a symlink never leads the read elsewhere.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import MemoryFormatError, MemoryStoreError

__all__ = [
    "FOLLOW_LOG_NAME",
    "HISTORY_DIR_NAME",
    "INDEX_NAME",
    "JOURNAL_NAME",
    "KEPT_DIR_NAME",
    "LOCAL_STATE_NAMES",
    "LOCK_DIR_NAME",
    "LOCK_FLOCK_NAME",
    "LOCK_OWNER_NAME",
    "LOCK_PREFIX",
    "MANIFEST_NAME",
    "MAX_FILE_NAME_BYTES",
    "MEMORY_DIR_NAME",
    "PENDING_DIR_NAME",
    "SET_ASIDE_PREFIX",
    "STALE_LOCK_PREFIX",
    "SYNC_DIR_NAME",
    "TEMP_PREFIX",
    "MemoryDir",
    "manifest_byte_bound",
    "open_regular",
    "read_bounded",
    "read_regular",
]

MEMORY_DIR_NAME = ".memory"
MANIFEST_NAME = "manifest.json"
INDEX_NAME = "MEMORY.md"
# Where ``recover`` moves a manifest path it cannot replace (a directory, a FIFO).
SET_ASIDE_PREFIX = "manifest.json.unreadable-"
# The lock (SPEC §4): the reference agent's lock directory, our OS-lock side file, the
# record of who made the directory, and lock directories moved aside as stale.
LOCK_DIR_NAME = ".lock"
LOCK_PREFIX = ".lock."
LOCK_FLOCK_NAME = ".lock.flock"
LOCK_OWNER_NAME = ".lock.owner"
STALE_LOCK_PREFIX = ".lock.stale-"
# Our temp files start with a dot, so they never match the record file pattern.
TEMP_PREFIX = ".tmp-"
# Local state (SPEC §6), never part of the set.
HISTORY_DIR_NAME = "history"
JOURNAL_NAME = "journal.jsonl"
FOLLOW_LOG_NAME = "followed.jsonl"  # the follow-up verdicts, beside the journal (SPEC §14)
KEPT_DIR_NAME = "files"
PENDING_DIR_NAME = "pending"
SYNC_DIR_NAME = "sync"  # what a sync with a memory store last saw there (SPEC §14)
LOCAL_STATE_NAMES = frozenset({HISTORY_DIR_NAME, PENDING_DIR_NAME, SYNC_DIR_NAME})

# The longest file name most file systems take (NAME_MAX): bounds a manifest entry.
MAX_FILE_NAME_BYTES = 255

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_MAX_LINK_HOPS = 40  # the kernel's own limit on a symlink chain
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: opening a FIFO planted at a listed name must not hang the reader.
_READ_FLAGS = os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | os.O_NONBLOCK


def manifest_byte_bound(max_entries: int) -> int:
    """The largest manifest worth reading for ``max_entries`` entries.

    Each entry is a quoted file name and a comma; the slack allows an indented,
    hand-edited manifest. Anything larger cannot be a valid manifest of that bound.
    """
    return 4096 + max_entries * (MAX_FILE_NAME_BYTES + 64)


def read_bounded(fd: int, limit: int, where: str) -> tuple[bytes, os.stat_result]:
    """The bytes of the open regular file ``fd``, refusing one over ``limit`` bytes.

    The size is checked before reading, and reading stops after ``limit + 1`` bytes
    whatever the file does meanwhile (it may grow), so no more than that is ever read.
    """
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise MemoryFormatError(f"{where}: is not a regular file")
    if st.st_size > limit:
        raise MemoryFormatError(
            f"{where}: is {st.st_size} bytes, over the {limit}-byte limit; not read"
        )
    chunks: list[bytes] = []
    left = limit + 1
    while left > 0:
        want = min(left, max(st.st_size + 1, 4096))
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
        if len(chunk) < want:
            break  # a short read of a regular file is its end: no extra syscall
    data = b"".join(chunks)
    if len(data) > limit:
        raise MemoryFormatError(f"{where}: grew over the {limit}-byte limit while read")
    return data, st


def open_regular(path: str, where: str | None = None) -> int:
    """An fd of the regular file ``path``, opened for reading without blocking (a FIFO
    would wait for a writer) and without following a symlink.

    :class:`FileNotFoundError` if it is missing (callers treat that as "absent");
    :class:`MemoryFormatError` if it is a symlink, a FIFO, a device or a directory;
    :class:`MemoryStoreError` for any other failure to open it.
    """
    where = path if where is None else where
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        raise
    except OSError as e:
        if e.errno == errno.ELOOP or _is_link(path):
            raise MemoryFormatError(f"{where}: is a symlink; not followed") from e
        if e.errno in (errno.EISDIR, errno.ENXIO, errno.ENODEV):
            raise MemoryFormatError(f"{where}: is not a regular file") from e
        raise MemoryStoreError(f"{where}: cannot open ({e.strerror or e})") from e
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise MemoryFormatError(f"{where}: is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _is_link(path: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def read_regular(path: str, limit: int, where: str | None = None) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``), opened as
    :func:`open_regular` does; the same errors, and a file over ``limit`` refused."""
    where = path if where is None else where
    fd = open_regular(path, where)
    try:
        return read_bounded(fd, limit, where)[0]
    except OSError as e:
        raise MemoryStoreError(f"{where}: cannot read ({e.strerror or e})") from e
    finally:
        os.close(fd)


@dataclass(frozen=True)
class MemoryDir:
    """The ``.memory`` directory of one workspace: its paths and checked access."""

    workspace: Path

    @classmethod
    def of(cls, workspace: str | os.PathLike[str]) -> MemoryDir:
        return cls(Path(os.path.abspath(os.fspath(workspace))))

    @property
    def root(self) -> Path:
        return self.workspace / MEMORY_DIR_NAME

    def where(self, *parts: str) -> str:
        """A file in the directory as shown in messages (not resolved)."""
        return os.sep.join((str(self.root), *parts))

    def workspace_problem(self) -> str | None:
        """Why the workspace cannot hold a ``.memory`` (None if it can): it is not there,
        not a directory, or is a ``.memory`` directory itself (a common slip: ``--dir
        proj/.memory``, which would show an empty set kept in ``proj/.memory/.memory``)."""
        workspace = self.workspace
        if not workspace.is_dir():
            return "not a directory" if workspace.exists() else "no such directory"
        if workspace.name == MEMORY_DIR_NAME and not os.path.lexists(self.root):
            return (
                f"a memory directory itself, not a workspace; give the directory that "
                f"holds {MEMORY_DIR_NAME}/ ({workspace.parent})"
            )
        return None

    def resolve(self, *, create: bool = False) -> str | None:
        """The resolved ``.memory`` directory, checked; None if absent and not ``create``.

        A symlink is followed only if it leads to a directory inside the workspace.
        """
        root = str(self.root)
        try:
            st = os.lstat(root)
        except FileNotFoundError:
            if not create:
                return None
            if not self.workspace.is_dir():
                raise MemoryStoreError(
                    f"{self.workspace}: the workspace directory does not exist"
                ) from None
            try:
                os.mkdir(root, 0o755)
            except FileExistsError:
                pass
            except OSError as e:
                raise MemoryStoreError(f"{root}: cannot create the memory directory ({e})") from e
            st = os.lstat(root)
        except OSError as e:
            raise MemoryStoreError(f"{root}: cannot access the memory directory ({e})") from e
        if stat.S_ISLNK(st.st_mode):
            target = os.path.realpath(root)
            workspace = os.path.realpath(self.workspace)
            if not target.startswith(workspace + os.sep):
                raise MemoryFormatError(
                    f"{root}: is a symlink pointing outside the workspace ({target})"
                )
            if not os.path.isdir(target):
                raise MemoryFormatError(f"{root}: is a symlink to a non-directory ({target})")
            return target
        if not stat.S_ISDIR(st.st_mode):
            raise MemoryFormatError(f"{root}: exists but is not a directory")
        return root

    def names(self, real: str) -> list[str]:
        """The names directly in the resolved directory ``real``."""
        try:
            return os.listdir(real)
        except OSError as e:
            raise MemoryStoreError(f"{self.root}: cannot list the memory directory ({e})") from e

    def referenced(self, real: str, listed: Iterable[str]) -> set[str]:
        """``listed`` plus the files its symlinks lead to: :meth:`read` follows a listed
        symlink that resolves directly inside ``real``, so its target holds a record of
        the set too and is never a leftover (gc removing it would lose that record)."""
        out = set(listed)
        inside = os.path.realpath(real)
        for name in tuple(out):
            path = f"{real}/{name}"
            for _ in range(_MAX_LINK_HOPS):  # each link of a chain is needed too
                try:
                    path = os.path.join(os.path.dirname(path), os.readlink(path))
                except OSError:
                    break  # not a link (or gone): the chain ends here
                target = os.path.realpath(os.path.dirname(path))
                if target != inside:
                    break
                out.add(os.path.basename(path))
        return out

    def read(self, real: str, name: str, limit: int) -> tuple[bytes, os.stat_result] | None:
        """Bytes and stat of ``real/name`` (at most ``limit`` bytes); None if missing.

        ``name`` may be a path below ``real`` (``history/journal.jsonl``). A symlink is
        followed only if it resolves directly inside ``real``; anything that is not a
        regular file, or is larger than ``limit``, is a :class:`MemoryFormatError`.
        """
        where = self.where(*name.split("/"))
        try:
            fd = os.open(f"{real}/{name}", _READ_FLAGS)
        except FileNotFoundError:
            return None
        except OSError as e:
            fd = self._open_symlink(real, name, where, e)
        try:
            return read_bounded(fd, limit, where)
        except OSError as e:
            raise MemoryStoreError(f"{where}: cannot read ({e})") from e
        finally:
            os.close(fd)

    def _open_symlink(self, real: str, name: str, where: str, error: OSError) -> int:
        """Open a name that is a symlink, if it resolves directly inside ``real``."""
        path = f"{real}/{name}"
        try:
            is_link = stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:
            is_link = False
        if not is_link:
            if error.errno == errno.ENOTDIR:  # a parent (e.g. history) is not a directory
                raise MemoryFormatError(f"{where}: a parent is not a directory") from error
            raise MemoryStoreError(f"{where}: cannot open ({error})") from error
        target = os.path.realpath(path)
        if os.path.dirname(target) != os.path.realpath(os.path.dirname(path)):
            raise MemoryFormatError(
                f"{where}: is a symlink pointing outside {self.root} ({target})"
            )
        try:
            return os.open(target, _READ_FLAGS)
        except FileNotFoundError:
            raise MemoryFormatError(f"{where}: is a dangling symlink") from None
        except OSError as e:
            raise MemoryStoreError(f"{where}: cannot open ({e})") from e
