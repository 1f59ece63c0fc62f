"""Durable file primitives for the commit protocol (SPEC §4).

All I/O goes through ``os.open/os.write/os.fsync/os.replace/os.unlink`` (and ``os.link``,
``os.pread``) so tests can inject failures by patching those functions. Each primitive
reports its named steps through a ``step`` callback so crash tests can stop a process
between any two of them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import MemoryStoreError
from .layout import TEMP_PREFIX, read_regular

__all__ = [
    "TEMP_PREFIX",
    "Backup",
    "Step",
    "create_exclusive",
    "fsync_dir",
    "is_temp_name",
    "replace_atomic",
    "take_backup",
    "temp_name",
    "unlink_quietly",
    "write_all",
]

Step = Callable[[str], None]

_TEMP = re.compile(re.escape(TEMP_PREFIX) + "[0-9a-f]{32}")

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CREATE_FLAGS = os.O_CREAT | os.O_EXCL | os.O_RDWR | _O_NOFOLLOW | _O_CLOEXEC
_FILE_MODE = 0o644


def temp_name() -> str:
    """A fresh temp file name for ``.memory/``."""
    return f"{TEMP_PREFIX}{uuid.uuid4().hex}"


def is_temp_name(name: str) -> bool:
    """True for names made by :func:`temp_name`."""
    return _TEMP.fullmatch(name) is not None


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` (os.write may write less than asked)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:  # pragma: no cover - a regular file never does this
            raise OSError(f"os.write wrote {written} bytes")
        view = view[written:]


def create_exclusive(
    path: str, data: bytes, step: Step, created: list[str], *, verify: bool = True
) -> None:
    """Create ``path`` exclusively, write ``data``, fsync, and (if ``verify``) read it back.

    ``path`` is appended to ``created`` as soon as the file exists, so the caller can
    remove it if anything later fails. Steps: record-created, record-written,
    record-synced, record-verified.
    """
    fd = os.open(path, _CREATE_FLAGS, _FILE_MODE)
    created.append(path)
    try:
        step("record-created")
        write_all(fd, data)
        step("record-written")
        os.fsync(fd)
        step("record-synced")
        if verify:
            back = os.pread(fd, len(data) + 1, 0)
            if back != data:
                raise MemoryStoreError(
                    f"{path}: read-back after write does not match the bytes written"
                )
            step("record-verified")
    finally:
        os.close(fd)


def replace_atomic(directory: str, target: str, data: bytes, step: Step, label: str) -> None:
    """Atomically replace ``directory/target`` with ``data`` (temp file, fsync, rename).

    The caller fsyncs the directory afterwards. Steps: ``<label>-temp-written`` and
    ``<label>-replaced``. On failure the temp file is removed (best effort).
    """
    tmp = f"{directory}/{temp_name()}"
    fd = os.open(tmp, _CREATE_FLAGS, _FILE_MODE)
    try:
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        step(f"{label}-temp-written")
        os.replace(tmp, f"{directory}/{target}")
    except BaseException:
        unlink_quietly(tmp)
        raise
    step(f"{label}-replaced")


def fsync_dir(directory: str) -> None:
    """fsync a directory so the names created / renamed in it are durable."""
    if sys.platform == "win32":  # pragma: no cover - directories cannot be opened there;
        return  # NTFS journals its metadata, and a rename is durable with it.
    fd = os.open(directory, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Backup:
    """The previous state of one file, to put back if a commit fails before its commit point."""

    target: str
    link: str | None  # hard link to the old inode (None: the file did not exist)
    data: bytes | None = None  # the old bytes, when the file system has no hard links
    limit: int = 0  # the most bytes worth reading back from ``link``

    def restore(self, *, in_place: bool = False) -> None:
        """Put the old file back (or remove the new one if there was none).

        ``in_place``: if the rename fails, rewrite the file's bytes in place instead —
        not atomic, so only for files no reader trusts (MEMORY.md).
        """
        if self.link is not None:
            # The old inode is already durable: a rename is all it takes.
            try:
                os.replace(self.link, self.target)
            except OSError:
                if not in_place:
                    raise
                overwrite(self.target, read_all(self.link, self.limit))
                unlink_quietly(self.link)
        elif self.data is not None:
            directory, name = os.path.split(self.target)
            try:
                replace_atomic(directory, name, self.data, _no_step, "restore")
            except OSError:
                if not in_place:
                    raise
                overwrite(self.target, self.data)
        else:
            os.unlink(self.target)

    def discard(self) -> None:
        """Drop the backup after a successful commit (best effort)."""
        if self.link is not None:
            unlink_quietly(self.link)


def _no_step(_: str) -> None:
    pass


def read_all(path: str, limit: int) -> bytes:
    """The bytes of a regular file (no symlink followed, never blocking on a FIFO), at
    most ``limit`` of them."""
    return read_regular(path, limit)


def overwrite(path: str, data: bytes) -> None:
    """Rewrite ``path`` in place (truncate, write, fsync best effort)."""
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | _O_NOFOLLOW | _O_CLOEXEC)
    try:
        write_all(fd, data)
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def take_backup(directory: str, target: str, limit: int) -> Backup:
    """Remember ``directory/target`` before it is replaced.

    A hard link keeps the old, already durable inode, so restoring it after a failed
    commit needs only a rename — no write or fsync that could fail the same way again.
    Without hard links the old bytes are kept, if at most ``limit``.
    """
    path = f"{directory}/{target}"
    link = f"{directory}/{temp_name()}"
    try:
        os.link(path, link, follow_symlinks=False)
    except FileNotFoundError:
        return Backup(path, None, limit=limit)
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
            raise
        # No hard links here: keep the bytes instead.
        return Backup(path, None, read_all(path, limit), limit)
    return Backup(path, link, limit=limit)


def unlink_quietly(path: str) -> bool:
    """Remove ``path``; True if it is gone. Used for cleanup, where failing must not mask
    the error being handled."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True
