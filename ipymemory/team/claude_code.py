"""Claude Code's auto memory, in and out.

Claude Code keeps a directory with a ``MEMORY.md`` index (one Markdown link per topic
file) and topic files whose YAML frontmatter holds ``name`` (a free title),
``description`` and ``type`` (user, feedback, project, reference), the body below it.

**Import** (:func:`read_directory`, :func:`plan_import`): every ``*.md`` topic file of the
directory (the index's links only report what is missing: the files are the data). A
title becomes a slug (``"Prefers Tabs"`` → ``prefers-tabs``; files are taken in the
index's order, then by file name, and a second file with the same slug gets ``-2``,
``-3``). Frontmatter that is not valid YAML but plain ``key: value`` lines (an unquoted
title with a colon) is read as such. Invalid files (no frontmatter, a missing key, an unknown
type, an empty body, too large) and index links without a file are reported, never
imported. The records are another agent's (SPEC §13, issue 39): screened as origin
``agent`` -- credentials redacted, and the agent rules (a destination, a command, a
secret, a rule about answers, a language the screen does not read …) -- and what needs a
person is reported with its reasons and kept apart (:attr:`ImportPlan.waiting`): the
import command keeps it as a pending batch, never commits it on its own. A name the set
already holds is skipped when the record is the same (importing twice adds nothing) and
reported when it differs; a name the user scope holds is reported, never imported into a
project (the project's record would hide the user's:
:class:`~ipymemory.review.scopes.AgentNames`), and nothing new is imported while the user
scope cannot be read.

**Export** (:func:`export_directory`): the current set, one ``<name>.md`` per record
and a ``MEMORY.md``. Which files it wrote (and their sha256) is kept in
``.ipymemory-export.json`` in that directory: a file there that export did not write,
or that changed since, is never overwritten (nor removed) without ``force``; a file it
wrote for a record that has left the set is removed.

**Files, not links** (both directions): a topic file or index that is a symlink, a FIFO
or anything but a regular file is reported and never read (a link could carry a file
from outside the directory into the set; a FIFO would hang the import). Export never
writes through a symlink, not even with ``force`` (it would change a file outside the
directory): a ``<name>.md`` that is a link stops the export before anything is written.
Files are written to a temp name and renamed into place. Every name read back from
``.ipymemory-export.json`` must be a plain ``*.md`` file name inside the directory
(no ``/``, no ``..``, not absolute); a state file naming anything else is refused as a
whole and nothing is written or removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .._json import loads
from ..errors import CommandError, MemoryFormatError, MemoryStoreError
from ..review.scopes import AgentNames
from ..review.screened import NOTHING_SCREENED, ScreenedItems, keep_screened
from ..screen import Origin, Screening, Verdict, screen_records
from ..store.durable import fsync_dir, replace_atomic
from ..store.layout import MAX_FILE_NAME_BYTES, read_regular
from ..store.names import is_valid_name
from ..store.record import (
    FRONTMATTER_KEYS,
    MAX_RECORD_BYTES,
    MemoryRecord,
    MemoryType,
    render_record,
)

__all__ = [
    "EXPORT_STATE_NAME",
    "ExportReport",
    "ImportPlan",
    "Invalid",
    "TopicFile",
    "export_directory",
    "plan_import",
    "read_directory",
    "slug",
]

INDEX_NAME = "MEMORY.md"
EXPORT_STATE_NAME = ".ipymemory-export.json"
_PLAIN_PAIR = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):[ \t]+(.*)")
_LINK = re.compile(r"\[([^\]]*)\]\(([^()\s]+\.md)\)")
# A topic file larger than a record can hold is not read whole.
_MAX_TOPIC_BYTES = 4 * MAX_RECORD_BYTES
# The export state lists one short line per exported file.
_MAX_STATE_BYTES = 4 << 20


def slug(title: str) -> str:
    """A record name for a free title: ASCII-folded, lowercase, words joined by ``-``."""
    folded = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    out = re.sub(r"[^a-z0-9]+", "-", folded.lower()).strip("-")
    if out and not is_valid_name(out):  # a reserved device name such as "con"
        out = f"{out}-memory"
    return out


@dataclass(frozen=True)
class Invalid:
    """A file (or index line) not imported, and why."""

    file: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: {self.reason}"


@dataclass(frozen=True)
class TopicFile:
    """A valid topic file: its file name, its title and the record it becomes."""

    file: str
    title: str
    record: MemoryRecord


def _frontmatter(text: str, where: str) -> tuple[dict[str, Any], str]:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[0].strip() != "---":
        raise MemoryFormatError(f"{where}: no frontmatter (the file must start with '---')")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise MemoryFormatError(f"{where}: frontmatter is not closed by a '---' line") from None
    front = lines[1:end]
    try:
        meta = yaml.safe_load("\n".join(front))
    except yaml.YAMLError as e:
        # Hand- or model-written frontmatter often leaves a title such as "DB: tests"
        # unquoted: read plain "key: value" lines as they read to a person.
        pairs = [_PLAIN_PAIR.fullmatch(line) for line in front if line.strip()]
        if not pairs or any(m is None for m in pairs):
            raise MemoryFormatError(f"{where}: frontmatter is not valid YAML ({e})") from e
        meta = {m.group(1): m.group(2).strip() for m in pairs if m is not None}
    if not isinstance(meta, dict):
        raise MemoryFormatError(f"{where}: frontmatter must be a mapping")
    return meta, "\n".join(lines[end + 1 :])


def _read_topic(path: Path) -> str:
    """The text of one topic file: a regular file (no link followed, no FIFO waited on),
    at most ``_MAX_TOPIC_BYTES``, UTF-8."""
    where = path.name
    try:
        raw = read_regular(str(path), _MAX_TOPIC_BYTES, where)
    except FileNotFoundError as e:
        raise MemoryFormatError(f"{where}: cannot read (it is gone)") from e
    except MemoryStoreError as e:  # a symlink, a FIFO, over the bound, unreadable
        raise MemoryFormatError(str(e)) from e
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise MemoryFormatError(f"{where}: not valid UTF-8") from e


def _topic(text: str, where: str, name: str) -> MemoryRecord:
    meta, body = _frontmatter(text, where)
    for key in FRONTMATTER_KEYS:
        if not isinstance(meta.get(key), str) or not meta[key].strip():
            raise MemoryFormatError(f"{where}: frontmatter needs a text {key}")
    kinds = ", ".join(t.value for t in MemoryType)
    if meta["type"] not in {t.value for t in MemoryType}:
        raise MemoryFormatError(f"{where}: type {meta['type']!r} is not one of {kinds}")
    return MemoryRecord(name, meta["type"], " ".join(meta["description"].split()), body)


def _is_plain_file(path: Path) -> bool:
    """A regular file itself, not a symlink to one (lstat: the link is not followed)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _index_text(index: Path) -> str | None:
    try:
        raw = read_regular(str(index), _MAX_TOPIC_BYTES, INDEX_NAME)
    except (FileNotFoundError, MemoryStoreError):
        return None
    return raw.decode("utf-8", errors="replace")


def read_directory(directory: str | os.PathLike[str]) -> tuple[list[TopicFile], list[Invalid]]:
    """The valid topic files of a Claude Code memory directory, and what is not valid."""
    root = Path(directory)
    if not root.is_dir():
        raise CommandError(f"{root}: not a directory (expected a Claude Code memory directory)")
    files = sorted(p for p in root.iterdir() if p.suffix == ".md" and p.name != INDEX_NAME)
    invalid: list[Invalid] = []
    listed: list[str] = []
    index = root / INDEX_NAME
    text = _index_text(index) if os.path.lexists(index) else None
    if text is None and os.path.lexists(index):
        invalid.append(Invalid(INDEX_NAME, "not a regular file (a symlink?); not read"))
    for number, line in enumerate((text or "").splitlines(), start=1):
        for _text, target in _LINK.findall(line):
            listed.append(target)
            inside = "/" not in target and "\\" not in target
            if inside and not os.path.lexists(root / target):
                why = f"links {target}, which is missing"
            elif not inside or not _is_plain_file(root / target):
                why = f"links {target}, which is not a file of this directory"
            else:
                continue
            invalid.append(Invalid(f"{INDEX_NAME} line {number}", why))
    # The index's order first (so of two equal titles the listed one keeps the slug).
    rank = {name: i for i, name in reversed(list(enumerate(listed)))}
    files.sort(key=lambda p: (rank.get(p.name, len(rank)), p.name))
    topics: list[TopicFile] = []
    used: set[str] = set()
    for path in files:
        if not _is_plain_file(path):
            if os.path.islink(path) or os.path.exists(path):
                why = "a symlink; not followed" if os.path.islink(path) else "not a regular file"
                invalid.append(Invalid(path.name, why))
            continue
        try:
            text = _read_topic(path)
            title = _title(text, path)
            base = slug(title) or slug(path.stem)
            if not base:
                raise MemoryFormatError(f"{path.name}: title {title!r} has no letters or digits")
            name, n = base, 1
            while name in used:
                n += 1
                name = f"{base}-{n}"
            record = _topic(text, path.name, name)
        except MemoryFormatError as e:
            invalid.append(Invalid(path.name, _without_where(str(e), path.name)))
            continue
        used.add(name)
        topics.append(TopicFile(path.name, title, record))
    return topics, invalid


def _title(text: str, path: Path) -> str:
    """The file's frontmatter ``name`` (its title), or its stem when there is none."""
    try:
        meta, _ = _frontmatter(text, path.name)
    except MemoryFormatError:
        return path.stem
    name = meta.get("name")
    return name if isinstance(name, str) else path.stem


def _without_where(message: str, where: str) -> str:
    return message[len(where) + 2 :] if message.startswith(f"{where}: ") else message


@dataclass(frozen=True)
class ImportPlan:
    """What an import would commit, and what it leaves out (and why)."""

    records: tuple[MemoryRecord, ...]
    sources: dict[str, str] = field(default_factory=dict)  # name -> topic file
    invalid: tuple[Invalid, ...] = ()
    held: tuple[Invalid, ...] = ()  # screening held back
    skipped: tuple[str, ...] = ()  # already in the set, identical
    conflicts: tuple[Invalid, ...] = ()  # a different record holds the name
    #: What screening holds for a person, as it may be kept (redacted, flagged, with
    #: the rules that fired): a pending batch's items.
    waiting: ScreenedItems = NOTHING_SCREENED

    def lines(self) -> list[str]:
        out = [f"import {r.name} ({self.sources[r.name]})" for r in self.records]
        out += [f"already present: {name}" for name in self.skipped]
        out += [f"not imported: {x}" for x in (*self.conflicts, *self.invalid)]
        out += [f"held for a person: {x}" for x in self.held]
        return out

    def to_json(self) -> dict[str, Any]:
        def listing(items: Iterable[Invalid]) -> list[dict[str, str]]:
            return [{"file": x.file, "reason": x.reason} for x in items]

        return {
            "records": [r.name for r in self.records],
            "sources": dict(self.sources),
            "skipped": list(self.skipped),
            "conflicts": listing(self.conflicts),
            "held": listing(self.held),
            "invalid": listing(self.invalid),
        }


def plan_import(
    directory: str | os.PathLike[str], current: Sequence[MemoryRecord], names: AgentNames
) -> ImportPlan:
    """Read ``directory`` and decide, against the ``current`` set and ``names`` (the
    user scope's, the check every door bringing in an agent's item asks), what to
    import."""
    topics, invalid = read_directory(directory)
    have = {r.name: r for r in current}
    fresh: list[TopicFile] = []
    skipped: list[str] = []
    conflicts: list[Invalid] = []
    for topic in topics:
        old = have.get(topic.record.name)
        refused = names.refusal(topic.record.name, have) or (old is None and names.hold)
        if refused:
            conflicts.append(Invalid(topic.file, refused))
        elif old is None:
            fresh.append(topic)
        elif old == topic.record:
            skipped.append(old.name)
        else:
            conflicts.append(Invalid(topic.file, f"the set already holds a different {old.name!r}"))
    held: list[Invalid] = []
    keep: list[TopicFile] = []
    waiting: list[Screening] = []
    for topic, screening in zip(
        fresh, screen_records([t.record for t in fresh], Origin.AGENT), strict=True
    ):
        if screening.verdict is Verdict.COMMIT:
            keep.append(topic)
        else:
            held.append(Invalid(topic.file, "; ".join(screening.reasons())))
            waiting.append(screening)
    taken = set(have) | {t.record.name for t in fresh}
    return ImportPlan(
        records=tuple(t.record for t in keep),
        sources={t.record.name: t.file for t in keep},
        invalid=tuple(invalid),
        held=tuple(held),
        skipped=tuple(skipped),
        conflicts=tuple(conflicts),
        waiting=keep_screened(waiting, taken),
    )


# --- export ------------------------------------------------------------------------


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_for(name: str) -> str:
    # "memory.md" would be MEMORY.md on a case-insensitive file system.
    return f"{name}-record.md" if name == "memory" else f"{name}.md"


def _index_bytes(records: Sequence[MemoryRecord]) -> bytes:
    lines = (f"- [{r.name}]({_file_for(r.name)}) — {r.description}\n" for r in records)
    return "".join(lines).encode("utf-8")


@dataclass(frozen=True)
class ExportReport:
    directory: Path
    written: tuple[str, ...]
    removed: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "directory": str(self.directory),
            "written": list(self.written),
            "removed": list(self.removed),
        }


def _plain_name(file: str) -> bool:
    """A file name export may write or remove: ``*.md`` directly inside the directory."""
    return (
        file.endswith(".md")
        and len(file) > len(".md")
        and not any(c in file for c in "/\\\x00")
        and len(file.encode("utf-8", "surrogatepass")) <= MAX_FILE_NAME_BYTES
    )


def _state(root: Path) -> dict[str, str]:
    path = root / EXPORT_STATE_NAME
    try:
        data = loads(read_regular(str(path), _MAX_STATE_BYTES).decode("utf-8"))
    except FileNotFoundError:
        return {}
    except (MemoryStoreError, ValueError) as e:
        raise CommandError(f"{path}: unreadable ({e}); remove it or export with --force") from e
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        raise CommandError(f"{path}: not an export record; remove it or export with --force")
    odd = sorted(repr(k) for k in files if not isinstance(k, str) or not _plain_name(k))
    if odd:
        raise CommandError(
            f"{path}: names {', '.join(odd[:3])}, which {'is' if len(odd) == 1 else 'are'} "
            f"not a file name inside {root}; nothing written or removed "
            f"(remove {EXPORT_STATE_NAME})"
        )
    return {str(k): str(v) for k, v in files.items()}


def _ours(root: Path, file: str, state: dict[str, str]) -> bool | None:
    """None if ``file`` is absent; True if export wrote it and it is unchanged."""
    path = root / file
    if not os.path.lexists(path):
        return None
    try:
        return state.get(file) == _sha(read_regular(str(path), 4 * _MAX_TOPIC_BYTES))
    except (OSError, MemoryStoreError):
        return False  # a link, a FIFO, a directory: not a file export wrote


def _same(path: Path, data: bytes) -> bool:
    try:
        return read_regular(str(path), len(data)) == data
    except (OSError, MemoryStoreError):
        return False


def export_directory(
    directory: str | os.PathLike[str], records: Sequence[MemoryRecord], *, force: bool = False
) -> ExportReport:
    """Write ``records`` in Claude Code's layout (see the module docstring)."""
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise CommandError(f"{root}: exists and is not a directory")
    state_path = root / EXPORT_STATE_NAME
    state = {} if force and not os.path.lexists(state_path) else _state(root)
    wanted: dict[str, bytes] = {_file_for(r.name): render_record(r) for r in records}
    wanted[INDEX_NAME] = _index_bytes(records)
    stale = [f for f in state if f not in wanted]
    links = sorted(f for f in [*wanted, *stale, EXPORT_STATE_NAME] if os.path.islink(root / f))
    if links:
        raise CommandError(
            f"{root}: {', '.join(links)} {'is a symlink' if len(links) == 1 else 'are symlinks'}; "
            "export never writes through a link (it could change a file elsewhere); "
            "nothing written (remove the link)"
        )
    if not force:
        foreign = [f for f in [*wanted, *stale] if _ours(root, f, state) is False]
        if foreign:
            raise CommandError(
                f"{root}: export would overwrite or remove {', '.join(sorted(foreign))}, "
                "which it did not write (or which changed since); nothing written "
                "(--force overwrites)"
            )
    root.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    for file, data in wanted.items():
        if state.get(file) == _sha(data) and _same(root / file, data):
            continue
        # A temp file renamed over the name: replaces what is there, never writes into it.
        replace_atomic(str(root), file, data, _no_step, "export")
        written.append(file)
    removed: list[str] = []
    for file in stale:
        if _ours(root, file, state) or (force and _is_plain_file(root / file)):
            (root / file).unlink()
            removed.append(file)
    new_state = {"files": {f: _sha(d) for f, d in sorted(wanted.items())}}
    data = (json.dumps(new_state, indent=1) + "\n").encode("utf-8")
    replace_atomic(str(root), EXPORT_STATE_NAME, data, _no_step, "export")
    fsync_dir(str(root))
    return ExportReport(root, tuple(written), tuple(removed))


def _no_step(_: str) -> None:
    """No crash-test checkpoints here."""
