"""The teaching notebook's reset: start its demo memory empty, never delete anyone else's.

The notebook demonstrates on the ``.memory/`` of its own directory (where
``%load_ext ipymemory`` looks by default). A user may open it in a directory whose
``.memory/`` holds real memories, so :func:`reset_demo_memory` removes the directory
only when every record in it — listed in the manifest, left over by an interrupted
commit, kept for undo in ``history/`` or proposed by an undecided batch in ``pending/``
— carries one of the notebook's demo names.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Collection
from pathlib import Path
from typing import NoReturn

from IPython.core.error import UsageError

from ..errors import MemoryStoreError
from ..review.pending import PendingFiles
from ..store.durable import is_temp_name
from ..store.layout import (
    HISTORY_DIR_NAME,
    INDEX_NAME,
    KEPT_DIR_NAME,
    MANIFEST_NAME,
    PENDING_DIR_NAME,
    MemoryDir,
)
from ..store.lock import is_lock_artefact
from ..store.names import is_valid_file_name
from ..store.record import MAX_RECORD_BYTES, parse_record

__all__ = ["reset_demo_memory"]

_SHOWN = 5  # foreign entries named in the message; more are counted
_HOW = (
    "Run the notebook from a copy in an empty directory, or headless with "
    "`python -m ipymemory.notebook.run_teaching`."
)


def reset_demo_memory(workspace: str | os.PathLike[str], demo_names: Collection[str]) -> Path:
    """Remove ``workspace/.memory`` if it is absent or holds only ``demo_names`` records.

    Returns the ``.memory`` path. Anything else there — a record with another name, a
    file that cannot be read or is not part of the format, a symlink — raises
    ``UsageError`` (IPython prints its message without a traceback, and "Run All"
    stops before any demo cell writes) and nothing is removed.
    """
    memory = MemoryDir.of(workspace)
    root = memory.root
    try:
        st = os.lstat(root)
    except FileNotFoundError:
        return root
    if not stat.S_ISDIR(st.st_mode):
        _refuse(root, "it is not a plain directory")
    demo = set(demo_names)
    foreign: list[str] = []
    real = str(root)
    for name in sorted(memory.names(real)):
        if name in (MANIFEST_NAME, INDEX_NAME) or is_lock_artefact(name) or is_temp_name(name):
            continue
        if (
            name == HISTORY_DIR_NAME
            and os.path.isdir(root / name)
            and not os.path.islink(root / name)
        ):
            # The journal holds no bodies; the records kept for undo are judged like the
            # current ones (a user's forgotten record is still theirs).
            kept = f"{HISTORY_DIR_NAME}/{KEPT_DIR_NAME}"
            names = memory.names(f"{real}/{kept}") if os.path.isdir(f"{real}/{kept}") else []
            foreign += _foreign_records(memory, real, [f"{kept}/{n}" for n in sorted(names)], demo)
            continue
        if (
            name == PENDING_DIR_NAME
            and os.path.isdir(root / name)
            and not os.path.islink(root / name)
        ):
            foreign += _foreign_batches(memory, root, demo)
            continue
        foreign += _foreign_records(memory, real, [name], demo)
    foreign = list(dict.fromkeys(foreign))  # a name can have an old file and a current one
    if foreign:
        more = f" and {len(foreign) - _SHOWN} more" if len(foreign) > _SHOWN else ""
        shown = ", ".join(foreign[:_SHOWN])
        _refuse(root, f"it holds more than this notebook's demo records: {shown}{more}")
    shutil.rmtree(root)
    return root


def _foreign_records(memory: MemoryDir, real: str, names: list[str], demo: set[str]) -> list[str]:
    """The entries among ``names`` (paths below ``real``) that are not demo records."""
    foreign = []
    for name in names:
        # Every record file, listed in the manifest or not (an interrupted commit, the
        # notebook's "sneaky" demo): the names decide, whatever the manifest says.
        path = f"{real}/{name}"
        if not (is_valid_file_name(os.path.basename(name)) and os.path.isfile(path)) or (
            os.path.islink(path)
        ):
            foreign.append(f"{name!r} (not part of the memory format)")
            continue
        try:
            got = memory.read(real, name, MAX_RECORD_BYTES)
            if got is None:
                continue  # removed meanwhile
            record = parse_record(got[0], memory.where(*name.split("/")))
        except MemoryStoreError:
            foreign.append(f"{name!r} (an unreadable record file)")
            continue
        if record.name not in demo:
            foreign.append(f"record {record.name!r}")
    return foreign


def _foreign_batches(memory: MemoryDir, root: Path, demo: set[str]) -> list[str]:
    """Entries of ``pending/`` other than undecided batches proposing demo records only."""
    pending = PendingFiles(root)
    # now=0: no batch counts as expired, so reading them deletes nothing.
    saved, _ = pending.load(now=0.0)
    batches = {s.path.name for s in saved}
    foreign = [
        f"{f'{PENDING_DIR_NAME}/{name}'!r} (not a pending batch)"
        for name in sorted(memory.names(str(pending.directory)))
        if name not in batches
    ]
    for entry in saved:
        plan = entry.batch.plan
        proposed = [*entry.batch.items, *(plan.records if plan is not None else ())]
        foreign += [f"pending record {r.name!r}" for r in proposed if r.name not in demo]
        change = entry.batch.history  # an undo/restore proposal moves names, holds no text
        moved = () if change is None else (*change.leaving, *change.returning)
        foreign += [f"pending {change.op} of {n!r}" for n in moved if change and n not in demo]
    return foreign


def _refuse(root: Path, why: str) -> NoReturn:
    raise UsageError(f"Not resetting {root}: {why}. Nothing was deleted. {_HOW}")
