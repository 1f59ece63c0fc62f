"""The git merge drivers of ``.memory/manifest.json`` and ``.memory/MEMORY.md``.

Git runs a driver per file, with the three versions in temp files::

    python -m ipymemory.team.merge_driver manifest %O %A %B %P
    python -m ipymemory.team.merge_driver index %O %A %B %P

(``ipymemory git setup`` registers the same through :mod:`ipymemory.team.git_driver`,
which starts faster.)

The driver leaves the result in ``%A`` and exits 0 (merged) or 1 (git stops the merge
and reports a conflict). Both drivers merge the SETS their files list
(:mod:`ipymemory.team.setmerge`), so the merged ``MEMORY.md`` lists exactly the merged
manifest's records: the index driver renders each line from the three indexes' lines
(git runs it first, before any file of the other side is on disk), and those lines are
the ones the manifest's writers rendered from the same records. The merged index is
bounded as a store bounds it (issue 31: the newest lines that fit, then a note of how
many more the manifest holds). A side that is itself bounded does not list its whole
set, so no set can be merged from it: the index driver keeps our version, exits 0 and
says to run ``ipymemory reindex`` once the merge is done (``check`` reports the stale
index until then; the manifest, the authority, merges as always).

**A corrupted side** (a manifest or index that does not parse): nothing is written,
the driver says which side and why, and exits 1; ``%A`` keeps our version.

**Same name twice**: the result keeps both records, one renamed (rule in
:mod:`~ipymemory.team.setmerge`). Names are the records' own (their frontmatter), not
their file names: the index driver takes them from the index lines (which the writers
render from the records), the manifest driver reads each record file — from the working
tree, else from git's objects (the commit being merged, rebased or picked, or any commit
that added the file) — so a ``notes-<id>.md`` whose record is named ``tabs`` clashes
with the other side's ``tabs``. The renamed record needs a NEW record file, which the
merge itself cannot carry: git holds the index lock while drivers run, so a file the
driver writes is untracked, and a merge or rebase that completed would commit a
manifest listing a file the commit does not hold — a broken set in every other clone.
So the manifest driver writes the renamed file into the working tree (its bytes built
from the original record, read from the working tree or git's objects) and then exits 1:
git stops, the working tree holds a complete, valid set (``check`` is clean, no conflict
marker anywhere), and the steps left are ``ipymemory git finish`` (which takes the
replaced original file out of ``.memory/``, records the merged set in the journal and
stages ``.memory``: :mod:`ipymemory.team.gitfinish`) and committing (``git commit``,
``git rebase --continue``, ``git cherry-pick --continue``). Every clone
renames the same record to the same bytes, so clones that resolve the same pair agree.
A renamed file that one side already holds (an earlier merge made it) merges cleanly.

``--virtual-base``: git's inner merge of several merge bases (``merge.<driver>.recursive``)
— the same set merge, never writing a file and never stopping.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import _constants as C
from ..errors import IPyMemoryError, MemoryFormatError
from ..store.durable import create_exclusive
from ..store.index import bounded_catalog, omitted_count
from ..store.layout import read_regular
from ..store.manifest import parse_manifest, render_manifest
from .setmerge import MergeResult, Rename, merge_sets

__all__ = [
    "BoundedIndex",
    "IndexLine",
    "main",
    "merge_index",
    "merge_manifest",
    "parse_index",
    "record_names",
]

# Far above any bound in force: an over-bound set still merges (check says to consolidate).
_MAX_INPUT_BYTES = 64 << 20
_SIDES = ("base", "ours", "theirs")
_LINE = re.compile(r"- \[(?P<name>[a-z0-9]+(?:-[a-z0-9]+)*)\]\((?P<file>[^()\s]+)\) - (?P<desc>.*)")

EXIT_MERGED = 0
EXIT_STOPPED = 1


@dataclass(frozen=True)
class IndexLine:
    """One ``MEMORY.md`` line: ``- [name](file) - description``."""

    name: str
    file: str
    description: str

    def render(self) -> str:
        return f"- [{self.name}]({self.file}) - {self.description}\n"


def parse_index(raw: bytes, where: str) -> tuple[IndexLine, ...]:
    """The lines of a ``MEMORY.md``; :class:`MemoryFormatError` naming the bad line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise MemoryFormatError(f"{where}: not valid UTF-8 ({e.reason} at byte {e.start})") from e
    out: list[IndexLine] = []
    seen: set[str] = set()
    lines = text.split("\n")[:-1] if text else []
    if lines and omitted_count(lines[-1]) is not None:
        lines.pop()  # a bounded index's closing note: no record line
    for number, line in enumerate(lines, start=1):
        match = _LINE.fullmatch(line)
        if match is None or not match.group("file").endswith(".md"):
            raise MemoryFormatError(
                f"{where}: line {number} is not an index line "
                f"('- [name](file.md) - description'): {line[:80]!r}"
            )
        if match.group("file") in seen:
            raise MemoryFormatError(f"{where}: line {number} lists {match.group('file')} again")
        seen.add(match.group("file"))
        out.append(IndexLine(match.group("name"), match.group("file"), match.group("desc")))
    if text and not text.endswith("\n"):
        raise MemoryFormatError(f"{where}: does not end with a line break")
    return tuple(out)


def _parse_manifest_side(raw: bytes, where: str) -> tuple[str, ...]:
    # A side without .memory/ (git passes an empty file): the empty set.
    return () if not raw else parse_manifest(raw, where)


def merge_manifest(
    base: bytes,
    ours: bytes,
    theirs: bytes,
    path: str,
    names: Callable[[Sequence[str]], Mapping[str, str]] | None = None,
) -> MergeResult:
    """The merged set of three manifests' bytes (``path`` names the file in errors).

    ``names`` gives the record names inside the listed files (the driver reads them,
    :func:`record_names`); without it, the names the file names carry."""
    sides = [
        _parse_manifest_side(raw, f"{path} ({side})")
        for raw, side in zip((base, ours, theirs), _SIDES, strict=True)
    ]
    listed = sorted({f for side in sides for f in side})
    return merge_sets(sides[0], sides[1], sides[2], None if names is None else names(listed))


class BoundedIndex(MemoryFormatError):
    """A side of an index merge is a bounded ``MEMORY.md``: it does not list its set."""


def merge_index(base: bytes, ours: bytes, theirs: bytes, path: str) -> tuple[MergeResult, bytes]:
    """The merged set of three ``MEMORY.md`` versions and the merged file's bytes,
    bounded as a store bounds it. Raises :class:`BoundedIndex` when a side is bounded."""
    for raw, side in zip((base, ours, theirs), _SIDES, strict=True):
        if _is_bounded(raw):
            raise BoundedIndex(f"{path} ({side}): a bounded index does not list the whole set")
    sides = [
        parse_index(raw, f"{path} ({side})")
        for raw, side in zip((base, ours, theirs), _SIDES, strict=True)
    ]
    known: dict[str, IndexLine] = {}
    for lines in reversed(sides):  # ours wins over theirs over base (all equal when sound)
        known.update((line.file, line) for line in lines)
    names = {file: line.name for file, line in known.items()}
    base_files, our_files, their_files = ([line.file for line in lines] for lines in sides)
    result = merge_sets(base_files, our_files, their_files, names)
    renames = result.renamed_from()
    out: list[str] = []
    for file in result.files:
        rename = renames.get(file)
        if rename is None:
            out.append(known[file].render())
        else:
            old = known[rename.old_file]
            out.append(IndexLine(rename.new_name, rename.new_file, old.description).render())
    data = bounded_catalog(out, C.DEFAULT_MAX_INDEX_LINES, C.DEFAULT_MAX_INDEX_BYTES)
    return result, data


def _is_bounded(raw: bytes) -> bool:
    """Whether ``raw`` ends with a bounded index's note."""
    last = raw.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    return omitted_count(last.decode("utf-8", "replace")) is not None


def _to_write(result: MergeResult, listed: Sequence[Sequence[str]]) -> list[Rename]:
    """Renames whose new file neither side holds: a new file this merge must create."""
    held = {f for files in listed for f in files}
    return [r for r in result.renames if r.new_file not in held]


def _git(args: list[str], cwd: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)


def _local(memory_dir: Path, file: str) -> bytes | None:
    """The working tree's copy of a record file (a regular file, not followed through a
    link, never blocking on a FIFO), or None."""
    try:
        return read_regular(str(memory_dir / file), _MAX_INPUT_BYTES)
    except (OSError, IPyMemoryError):
        return None


# Commits a merge, rebase, cherry-pick or stash apply in progress names (some are written
# only once git stops, so a driver also looks in every ref: ``git log --all``).
_PSEUDO_HEADS = ("MERGE_HEAD", "REBASE_HEAD", "CHERRY_PICK_HEAD", "ORIG_HEAD", "FETCH_HEAD")


def _cat(specs: Sequence[str], cwd: str) -> dict[str, tuple[bytes, bytes]]:
    """``git cat-file --batch`` of ``specs``: spec -> (object type, content), the specs
    git does not find left out. One process for all."""
    got = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=cwd,
        input="".join(f"{spec}\n" for spec in specs).encode("utf-8"),
        capture_output=True,
        check=False,
    )
    out: dict[str, tuple[bytes, bytes]] = {}
    data, pos = got.stdout, 0
    for spec in specs:
        end = data.find(b"\n", pos)
        if end < 0:
            break
        header = data[pos:end].split()
        pos = end + 1
        if len(header) == 3 and header[2].isdigit():  # "<oid> <type> <size>", not "missing"
            size = int(header[2])
            out[spec] = (header[1], data[pos : pos + size])
            pos += size + 1
    return out


def _from_history(paths: Sequence[str], cwd: str) -> dict[str, bytes]:
    """The bytes of each of ``paths`` (record files, never changed once written) from a
    commit git knows: HEAD or a commit in progress first, else the newest commit of
    any ref that added it. At most three git processes, whatever the number of paths."""
    specs = {f"{rev}:{path}": path for path in paths for rev in ("HEAD", *_PSEUDO_HEADS)}
    got = _cat([*_PSEUDO_HEADS, *specs], cwd)
    out: dict[str, bytes] = {}
    for spec, path in specs.items():
        if spec in got and got[spec][0] == b"blob":
            out.setdefault(path, got[spec][1])
    rest = [p for p in paths if p not in out]
    if not rest:
        return out
    heads = ["--all", *(h for h in _PSEUDO_HEADS if got.get(h, (b"",))[0] == b"commit")]
    log = _git(
        ["log", *heads, "--diff-filter=A", "--format=%x00%H", "--name-only", "--", *rest], cwd
    )
    added: dict[str, str] = {}
    commit = ""
    for line in log.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("\x00"):
            commit = line[1:]
        elif line and commit:
            added.setdefault(line, commit)  # newest first: the first commit seen
    blobs = _cat([f"{c}:{p}" for p, c in added.items()], cwd)
    for path, c in added.items():
        if f"{c}:{path}" in blobs:
            out[path] = blobs[f"{c}:{path}"][1]
    return out


_FAST_NAME = re.compile(rb"name: ([a-z0-9]+(?:-[a-z0-9]+)*)")


def _name_inside(raw: bytes, where: str) -> str | None:
    """The record name in a record file's frontmatter; None if it does not parse."""
    lines = raw.split(b"\n", 5)
    # Our writers' exact form first (no YAML needed: a driver runs per merged file).
    if len(lines) > 4 and lines[0] == b"---" and lines[4] == b"---":
        match = _FAST_NAME.fullmatch(lines[1])
        if match and lines[2].startswith(b"description: ") and lines[3].startswith(b"type: "):
            return match.group(1).decode("ascii")
    from ..store.record import MAX_RECORD_BYTES, parse_record

    try:
        return parse_record(raw[: MAX_RECORD_BYTES + 1], where).name
    except IPyMemoryError:
        return None


def record_names(
    memory_dir: Path, repo_path: str, cwd: str
) -> Callable[[Sequence[str]], dict[str, str]]:
    """The names inside record files (for :func:`merge_manifest`): each read from the
    working tree, else from git's objects (:func:`_from_history`); a file found in
    neither, or that does not parse, is left out: the name its file name carries is
    used."""

    def names(files: Sequence[str]) -> dict[str, str]:
        found = {f: raw for f in files if (raw := _local(memory_dir, f)) is not None}
        missing = [f for f in files if f not in found and "\n" not in f]
        if missing:
            repo = {f"{repo_path}/{f}" if repo_path else f: f for f in missing}
            for path, raw in _from_history(list(repo), cwd).items():
                found[repo[path]] = raw
        out = {}
        for file, raw in found.items():
            name = _name_inside(raw, f"{repo_path}/{file}")
            if name is not None:
                out[file] = name
        return out

    return names


def _original_bytes(memory_dir: Path, repo_path: str, file: str, cwd: str) -> bytes:
    """The bytes of record ``file``: from the working tree (our side), else from any
    commit git knows that added it (record files never change once written)."""
    local = _local(memory_dir, file)
    if local is not None:
        return local
    path = f"{repo_path}/{file}" if repo_path else file
    found = _from_history([path], cwd)
    if path not in found:
        raise MemoryFormatError(f"{path}: not found in this repository's history")
    return found[path]


def write_renamed(memory_dir: Path, repo_path: str, rename: Rename, cwd: str) -> None:
    """Create the renamed record file in the working tree (same bytes everywhere)."""
    # Imported here: the record module loads YAML, which only a rename needs, and a
    # driver process starts for every merged file.
    from ..store.record import MAX_RECORD_BYTES, MemoryRecord, parse_record, render_record

    raw = _original_bytes(memory_dir, repo_path, rename.old_file, cwd)
    old = parse_record(raw[: MAX_RECORD_BYTES + 1], f"{repo_path}/{rename.old_file}")
    new = MemoryRecord(rename.new_name, old.type, old.description, old.body)
    data = render_record(new)
    target = memory_dir / rename.new_file
    if os.path.lexists(target):
        if _local(memory_dir, rename.new_file) == data:
            return
        raise MemoryFormatError(f"{target}: exists with other content; not overwritten")
    memory_dir.mkdir(parents=True, exist_ok=True)
    create_exclusive(str(target), data, _no_step, [])


def _no_step(_: str) -> None:
    """No crash-test checkpoints here."""


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        data = f.read(_MAX_INPUT_BYTES + 1)
    if len(data) > _MAX_INPUT_BYTES:
        raise MemoryFormatError(f"{path}: over {_MAX_INPUT_BYTES} bytes; not merged")
    return data


def _report(path: str, renames: Sequence[Rename], stopped: bool) -> None:
    for r in renames:
        print(
            f"ipymemory: {path}: two records are named {r.old_name!r}; kept both, "
            f"{r.old_file} is now {r.new_name!r} ({r.new_file}); "
            "consolidate or forget one of them",
            file=sys.stderr,
        )
    if stopped:
        print(
            "ipymemory: the renamed record is a new file git cannot add during a merge; "
            "the working tree holds the complete merged set: run `ipymemory --dir "
            f"{os.path.dirname(os.path.dirname(path)) or '.'} git finish` (it takes the "
            "replaced original out and stages .memory), then commit (or `git rebase "
            "--continue`, `git cherry-pick --continue`)",
            file=sys.stderr,
        )


def run(kind: str, base: str, ours: str, theirs: str, path: str, virtual: bool) -> int:
    """One driver run; returns the exit status (see the module docstring)."""
    try:
        raw = [_read(p) for p in (base, ours, theirs)]
        listed: list[Sequence[str]]
        cwd = os.getcwd()
        repo_dir = os.path.dirname(path)
        if kind == "manifest":
            names = record_names(Path(cwd, repo_dir), repo_dir, cwd)
            result = merge_manifest(raw[0], raw[1], raw[2], path, names)
            listed = [_parse_manifest_side(r, path) for r in raw[1:]]
            data = render_manifest(result.files)
        else:
            try:
                result, data = merge_index(raw[0], raw[1], raw[2], path)
            except BoundedIndex:
                print(
                    f"ipymemory: {path} is bounded (the set is beyond the reference agent's "
                    "bounds), so it cannot be merged line by line: kept ours; run "
                    "`ipymemory reindex` once the merge is done",
                    file=sys.stderr,
                )
                return EXIT_MERGED
            listed = [[line.file for line in parse_index(r, path)] for r in raw[1:]]
        pending = [] if virtual else _to_write(result, listed)
        if kind == "manifest":
            for rename in pending:
                write_renamed(Path(cwd, repo_dir), repo_dir, rename, cwd)
    except (IPyMemoryError, OSError) as e:
        print(
            f"ipymemory: cannot merge {path}: {e}. Nothing was merged in this file "
            "(it holds our version); fix the side named, then merge again",
            file=sys.stderr,
        )
        return EXIT_STOPPED
    with open(ours, "wb") as f:
        f.write(data)
    if not virtual and kind == "manifest":  # one report per merge, not one per file
        _report(path, result.renames, bool(pending))
    return EXIT_STOPPED if pending else EXIT_MERGED


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ipymemory.team.merge_driver",
        description="git merge driver for .memory/manifest.json and .memory/MEMORY.md",
    )
    parser.add_argument("kind", choices=("manifest", "index"))
    parser.add_argument("--virtual-base", action="store_true")
    parser.add_argument("base")
    parser.add_argument("ours")
    parser.add_argument("theirs")
    parser.add_argument("path")
    args = parser.parse_args(argv)
    return run(args.kind, args.base, args.ours, args.theirs, args.path, args.virtual_base)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
