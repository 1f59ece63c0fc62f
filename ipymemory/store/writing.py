"""Writing a new set up to its commit point (SPEC §4 steps 3-6): the checks of the set as
a whole, then the new record files, MEMORY.md and the manifest, each step reported by
name; anything failing before the commit point is rolled back."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import _constants as C
from ..errors import MemoryConflictError, MemoryStoreError
from . import durable
from .layout import INDEX_NAME, MANIFEST_NAME, manifest_byte_bound
from .lock import StoreLock
from .reading import name_clashes
from .record import StoredRecord

__all__ = ["NewSet", "SetWriter", "check_new_set"]


def check_new_set(new_set: Sequence[StoredRecord], root: Path) -> None:
    """SPEC §4 step 3 on the set about to be committed in ``root``: each file once, each
    record name once, at most ``MAX_SET_RECORDS`` records (MEMORY.md's bounds refuse
    nothing: the index lists what fits)."""
    if len(new_set) > C.MAX_SET_RECORDS:
        raise MemoryStoreError(
            f"{root / MANIFEST_NAME}: the new set would hold {len(new_set)} records, "
            f"over the limit of {C.MAX_SET_RECORDS}; consolidate first, nothing changed"
        )
    seen: set[str] = set()
    for entry in new_set:
        if entry.file in seen:
            raise MemoryStoreError(
                f"{root / MANIFEST_NAME}: the new set would list {entry.file} twice; "
                "nothing changed"
            )
        seen.add(entry.file)
    clashes = name_clashes(new_set)
    if clashes:
        name, first, second = clashes[0]
        raise MemoryConflictError(
            f"{root / MANIFEST_NAME}: the new set would hold two records named "
            f"{name!r} ({first} and {second}); nothing changed"
        )


@dataclass(frozen=True)
class NewSet:
    """The bytes of one commit: each new record file (its path, its bytes), MEMORY.md
    and the manifest."""

    payloads: Sequence[tuple[str, bytes]]
    index: bytes
    manifest: bytes


@dataclass(frozen=True)
class SetWriter:
    """Writes new sets into the real ``.memory`` directory ``real`` of the store at
    ``root``; ``step`` hears each step of the commit protocol by name."""

    real: str
    root: Path
    max_index_bytes: int
    step: Callable[[str], None]

    def write(self, lock: StoreLock, new: NewSet) -> tuple[durable.Backup, durable.Backup]:
        """SPEC §4 steps 4-6: the new record files, MEMORY.md, then the manifest, up to
        the commit point; anything failing before it is rolled back. Returns the
        backups of the old index and manifest (to discard once the commit is done)."""
        real, step = self.real, self.step
        made: list[str] = []
        backups: list[durable.Backup] = []
        replaced = 0  # how many of (index, manifest) are replaced
        try:
            for path, data in new.payloads:
                durable.create_exclusive(path, data, step, made)
            durable.fsync_dir(real)
            step("dir-synced")
            backups.append(durable.take_backup(real, INDEX_NAME, self.max_index_bytes))
            durable.replace_atomic(real, INDEX_NAME, new.index, step, "index")
            replaced = 1
            bound = manifest_byte_bound(C.MAX_SET_RECORDS)
            backups.append(durable.take_backup(real, MANIFEST_NAME, bound))
            lock.check_held()
            durable.replace_atomic(real, MANIFEST_NAME, new.manifest, step, "manifest")
            replaced = 2
            durable.fsync_dir(real)
            step("commit-dir-synced")
        except BaseException as e:
            self._rollback(made, backups, replaced)
            if isinstance(e, OSError):
                # Callers handle MemoryStoreError (a full disk must not break a turn); the
                # rollback has put the old manifest back, so the set is the old one.
                raise MemoryStoreError(
                    f"{self.root}: commit failed before its commit point and was rolled "
                    f"back; the set is unchanged ({e})"
                ) from e
            raise
        return backups[0], backups[1]

    def _rollback(self, made: list[str], backups: list[durable.Backup], replaced: int) -> None:
        """Undo a commit that failed before its commit point (best effort, never raises):
        ``backups`` of the index and the manifest as far as taken, ``replaced`` how many
        of them were replaced."""
        durable_undo = True
        if replaced == 2:
            try:
                backups[1].restore()
                durable.fsync_dir(self.real)
            except OSError:
                # The old manifest may not be durable again: keep the new files, so
                # whichever manifest survives a crash lists only complete files.
                durable_undo = False
        if replaced >= 1:
            with contextlib.suppress(OSError):
                backups[0].restore(in_place=True)
        for backup in backups:
            backup.discard()
        if durable_undo:
            for path in made:
                durable.unlink_quietly(path)
