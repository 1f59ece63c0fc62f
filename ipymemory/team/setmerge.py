"""The three-way merge of two memory sets (base, ours, theirs): sets, not lines.

Both git merge drivers (``manifest.json`` and ``MEMORY.md``) call :func:`merge_sets` on
the record files their three versions list, so both files of one merge agree.

Rules (the contract documented in the README, "Sharing memory with your team"):

* **membership** — a record is in the result if it is in ours or theirs and was not
  removed by the other side since the base: ``(ours & theirs) | (ours - base) |
  (theirs - base)``, records identified by the id in their file names (record files
  are immutable and carry unique ids; a record renamed by a merge keeps its id, so a
  record one side removed stays removed even if a merge elsewhere renamed it). A record
  held under two file names (one side renamed it) takes the side that changed it.
* **order** — deterministic and independent of who merges: the base's records that
  survive, in base order, then every added record ordered by file name. Two teammates
  who merge the same pair get byte-identical files.
* **same name twice** — two different records with one name: the one whose file name
  sorts later (for our files: the later id) is renamed to ``<name>-<first 8 hex of
  its id>`` (more hex if that is taken too), in the file ``<new name>-<id>.md``. The
  rule does not depend on which side is "incoming", so every clone renames the same
  record to the same bytes. A record's name is the one INSIDE it (its frontmatter;
  the callers pass ``names``): a file name only says what its writer meant, and a set
  holding ``notes-<id>.md`` named ``tabs`` beside ``tabs-<id>.md`` does not load. Only
  a file whose name is not known falls back to the name its file name carries.
* The index bound is not enforced: a merge never loses a record; ``check`` then says
  to consolidate.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import MemoryFormatError
from ..store.layout import MAX_FILE_NAME_BYTES
from ..store.names import is_valid_file_name, is_valid_name

__all__ = ["MergeResult", "Rename", "merge_sets", "name_of", "record_key", "renamed"]

# <name>-<32 hex id>.md: the file name every writer of the format generates (SPEC §1).
_GENERATED = re.compile(r"(?P<name>[a-z0-9]+(?:-[a-z0-9]+)*)-(?P<id>[0-9a-f]{32})\.md")
_ID_PREFIX = 8


@functools.lru_cache(maxsize=8192)
def _parts(file: str) -> tuple[str, str]:
    """(record name, record key) of a file name; one regex match per file per process."""
    match = _GENERATED.fullmatch(file)
    if match is not None:
        return match.group("name"), match.group("id")
    return (file[: -len(".md")] if file.endswith(".md") else file), file


def name_of(file: str) -> str:
    """The record name a file name carries (``<name>-<id>.md``); for a file not named
    that way (hand-made), its stem."""
    return _parts(file)[0]


@dataclass(frozen=True)
class Rename:
    """One record renamed by a merge: ``old_file`` (name ``old_name``) becomes
    ``new_file`` (name ``new_name``), same type, description and body."""

    old_file: str
    old_name: str
    new_file: str
    new_name: str


@dataclass(frozen=True)
class MergeResult:
    """The merged set (file names, in set order) and the renames it needed."""

    files: tuple[str, ...]
    renames: tuple[Rename, ...] = ()

    def renamed_from(self) -> Mapping[str, Rename]:
        return {r.new_file: r for r in self.renames}


def renamed(file: str, owner: Mapping[str, str], name: str | None = None) -> Rename:
    """The rename of ``file`` (record name ``name``, by default the one its file name
    carries) whose name clashes: ``<name>-<id prefix>`` in ``<new name>-<id>.md``.
    ``owner`` maps the names in use to their files: a name is free, or already held by
    exactly the renamed file (an earlier merge renamed it)."""
    match = _GENERATED.fullmatch(file)
    name = name_of(file) if name is None else name
    if match is not None:
        ident = match.group("id")
    else:  # a hand-named file has no id: take one from its name, deterministically
        ident = hashlib.sha256(file.encode("utf-8")).hexdigest()[:32]
    for width in range(_ID_PREFIX, len(ident) + 1):
        new_name = f"{name}-{ident[:width]}"
        new_file = f"{new_name}-{ident}.md"
        if len(new_file.encode("utf-8")) > MAX_FILE_NAME_BYTES:
            break
        free = owner.get(new_name, new_file) == new_file
        if free and is_valid_name(new_name) and is_valid_file_name(new_file):
            return Rename(file, name, new_file, new_name)
    raise MemoryFormatError(
        f"{file}: shares its name with another record and cannot be renamed "
        f"(no free name of the form {name}-<id prefix> fits in a file name)"
    )


def record_key(file: str) -> str:
    """What identifies a record across merges: the id in its file name (a renamed copy
    keeps it), or the whole name of a hand-named file."""
    return _parts(file)[1]


def _by_key(files: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for file in files:
        out.setdefault(record_key(file), file)
    return out


def merge_sets(
    base: Sequence[str],
    ours: Sequence[str],
    theirs: Sequence[str],
    names: Mapping[str, str] | None = None,
) -> MergeResult:
    """The three-way merge of the sets of record files ``base``, ``ours``, ``theirs``;
    ``names`` maps files to the record names inside them (see the module docstring)."""
    b, o, t = _by_key(base), _by_key(ours), _by_key(theirs)
    keep = (o.keys() & t.keys()) | (o.keys() - b.keys()) | (t.keys() - b.keys())
    chosen = {key: _choose(b.get(key), o.get(key), t.get(key)) for key in keep}
    kept = [chosen[key] for key in b if key in keep]
    added = sorted(chosen[key] for key in keep - b.keys())
    return _resolve_names(kept + added, names or {})


def _choose(base: str | None, ours: str | None, theirs: str | None) -> str:
    """The file of one record both sides may hold under different names (one renamed
    it in a merge): the side that changed it since the base wins."""
    if ours is None or theirs is None:
        found = ours or theirs
        assert found is not None
        return found
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    return max(ours, theirs)


def _resolve_names(files: list[str], names: Mapping[str, str]) -> MergeResult:
    """Rename every record whose name an earlier-sorted file already holds."""

    def name(file: str) -> str:
        return names.get(file) or name_of(file)

    owner: dict[str, str] = {}
    for file in sorted(files):
        owner.setdefault(name(file), file)
    if len(owner) == len(files):
        return MergeResult(tuple(files))
    present = set(files)
    out: list[str] = []
    renames: list[Rename] = []
    for file in files:
        if owner[name(file)] == file:
            out.append(file)
            continue
        rename = renamed(file, owner, name(file))
        if rename.new_file in present:
            continue  # this merge already holds the renamed copy (an earlier merge made it)
        owner[rename.new_name] = rename.new_file
        present.add(rename.new_file)
        out.append(rename.new_file)
        renames.append(rename)
    return MergeResult(tuple(out), tuple(renames))
