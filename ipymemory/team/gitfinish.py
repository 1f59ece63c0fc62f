"""``ipymemory git finish``: conclude a merge of ``.memory/`` that git stopped.

The manifest driver stops a merge when two records share a name: it writes the renamed
copy of one of them (``tabs`` -> ``tabs-3f2a9c1e``, the same id, type, description and
body) into the working tree, and the merged manifest lists the copy, not the original.
The original file is still there, though: ours was in the tree before, and git checks
theirs out after the driver ran; staging ``.memory`` as it is would commit a record file
the set does not list, in every clone. Finishing

* takes each replaced original out of ``.memory/`` (a file no manifest lists whose
  renamed copy, the same id and record but for its name, the manifest does list) -- it
  stays in git's history, and in ``history/files/`` when our journal knew it;
* brings the history journal up to the merged set (one ``external`` entry, so
  ``check`` finds the set and the journal agree);
* stages ``.memory`` (``git add``), so the merge is concluded by ``git commit`` (or
  ``git rebase --continue``, ``git cherry-pick --continue``).

Nothing else in the directory is touched; run outside a merge it only records and
stages the set as it is.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CommandError, MemoryStoreError
from ..store.layout import INDEX_NAME, read_regular
from ..store.record import MAX_RECORD_BYTES, StoredRecord, parse_record
from ..store.store import MemoryStore
from .gitsetup import find_repository

__all__ = ["FinishReport", "finish", "replaced_originals"]

_ID = re.compile(r"-([0-9a-f]{32})\.md\Z")


@dataclass(frozen=True)
class FinishReport:
    """What ``finish`` did."""

    repository: Path
    removed: tuple[str, ...]  # replaced originals taken out of .memory/
    entry: int | None  # the journal's newest entry after it (None: no journal)

    def text(self) -> str:
        lines = [f"git repository: {self.repository}"]
        for file in self.removed:
            lines.append(f"took out {file}: replaced by its renamed copy in the merged set")
        if self.entry is not None:
            lines.append(f"history journal up to date (entry #{self.entry})")
        lines.append(
            "staged .memory; now commit: git commit (or git rebase --continue, "
            "git cherry-pick --continue)"
        )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "repository": str(self.repository),
            "removed": list(self.removed),
            "entry": self.entry,
        }


def replaced_originals(store: MemoryStore) -> list[str]:
    """The record files in ``.memory/`` the manifest does not list whose renamed copy
    (the same id in its file name, the same record but for its name) it lists."""
    by_id: dict[str, StoredRecord] = {}
    for entry in store.entries():
        found = _ID.search(entry.file)
        if found:
            by_id[found.group(1)] = entry
    out = []
    for path in sorted(store.root.glob("*.md")):
        found = _ID.search(path.name)
        copy = by_id.get(found.group(1)) if found else None
        if copy is None or copy.file == path.name or path.name == INDEX_NAME:
            continue
        try:  # a symlink or anything but a valid record file is not ours to remove
            original = parse_record(read_regular(str(path), MAX_RECORD_BYTES + 1), str(path))
        except MemoryStoreError:
            continue
        kept = copy.record
        same = (original.type, original.description, original.body) == (
            kept.type,
            kept.description,
            kept.body,
        )
        if same and kept.name != original.name:
            out.append(path.name)
    return out


def finish(workspace: str | Path) -> FinishReport:
    """Conclude a stopped merge of ``workspace``'s ``.memory/`` (see the module
    docstring); :class:`CommandError` outside a git repository."""
    repository = find_repository(Path(workspace), "finish")
    store = MemoryStore(workspace)
    if store.directory() is None:
        raise CommandError(f"{store.root}: no memory directory here, nothing to finish")
    originals = replaced_originals(store)
    newest = store.sync_journal()  # also keeps in history/files/ the originals it knew
    for file in originals:
        (store.root / file).unlink(missing_ok=True)
    done = subprocess.run(
        ["git", "add", "-A", "--", str(store.root)],
        cwd=repository,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise CommandError(f"git add {store.root} failed: {done.stderr.strip()}")
    return FinishReport(repository, tuple(originals), None if newest is None else newest.seq)
