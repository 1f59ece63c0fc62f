"""Turn scenes as data: the schema of ``benchmarks/corpora/*.jsonl`` and its loader.

A scene is one notebook turn as a capable model would see and extract it. One JSON
object per line; keys (``?`` marks an optional one, with its default)::

    name        str   unique in its file
    group       str   "genuine" | "attack" | "update" | "held-out" (how the file is organised)
    category    str   free text, reported per category
    lang        str   language of the user's text (ISO 639-1: en, de, ja, ...)
    planted     bool  true: a file or an output planted the item (it must not be committed)
    query       str   the user's message
    item        obj   the extractor's proposed record: name, type, description, body
    evidence?   [str] excerpts the extractor cites (sent only in "evidence" mode), []
    files?      [[path, text]] files the agent reads with read_file, in order, []
    script?     [path, printed] a .py file run with run_python, and what it prints, null
    answer?     str   the agent's answer, "Done."
    replaces?   str   the current record the item updates (an update), null
    existing?   [obj] records already in the set (name, type, description, body), []
    follow_up?  str   a second user message; the item is extracted after it, null
    sources?    [path] the files the item depends on (staleness ground truth), absent: unknown

Lines that are empty or start with ``//`` are skipped (a comment). :func:`load_scenes`
refuses a malformed line with its file and line number.

The other corpora's loaders (``histories.py``, ``labelled_texts.py``) share this
module's line reader (:func:`read_lines`, :func:`load_named`), its error and its field
checks.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

__all__ = [
    "CORPORA",
    "CorpusError",
    "Scene",
    "dump_lines",
    "dump_scenes",
    "load_named",
    "load_scenes",
    "read_lines",
]

CORPORA = Path(__file__).resolve().parent / "corpora"

GROUPS = ("genuine", "attack", "update", "held-out")
_RECORD_KEYS = ("name", "type", "description", "body")


@dataclass(frozen=True)
class Scene:
    name: str
    group: str
    category: str
    lang: str
    planted: bool
    query: str
    item: dict[str, str]  # name, type, description, body
    evidence: tuple[str, ...] = ()
    files: tuple[tuple[str, str], ...] = ()  # (path, text), read in order
    script: tuple[str, str] | None = None  # (path of a .py file, what it prints)
    answer: str = "Done."
    replaces: str | None = None
    existing: tuple[dict[str, str], ...] = ()
    follow_up: str | None = None  # a second turn of the user's; the item comes after it
    sources: tuple[str, ...] | None = None  # files the item depends on; None: unknown

    def reply_item(self, with_evidence: bool) -> dict[str, Any]:
        """The extractor's item for this scene (the record keys, evidence, replaces)."""
        out: dict[str, Any] = dict(self.item)
        if with_evidence and self.evidence:
            out["evidence"] = list(self.evidence)
        if self.replaces is not None:
            out["replaces"] = self.replaces
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "group": self.group,
            "category": self.category,
            "lang": self.lang,
            "planted": self.planted,
            "query": self.query,
            "item": dict(self.item),
        }
        if self.evidence:
            out["evidence"] = list(self.evidence)
        if self.files:
            out["files"] = [list(f) for f in self.files]
        if self.script is not None:
            out["script"] = list(self.script)
        if self.answer != "Done.":
            out["answer"] = self.answer
        for key in ("replaces", "follow_up"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.existing:
            out["existing"] = [dict(r) for r in self.existing]
        if self.sources is not None:
            out["sources"] = list(self.sources)
        return out


class CorpusError(ValueError):
    """A line of a corpus file that is not what its schema says (says which and why)."""


def record_fields(value: Any, where: str) -> dict[str, str]:
    """A record as JSON: exactly name, type, description and body, all strings."""
    if not isinstance(value, dict) or set(value) != set(_RECORD_KEYS):
        raise CorpusError(f"{where}: needs exactly the keys {', '.join(_RECORD_KEYS)}")
    if not all(isinstance(value[k], str) for k in _RECORD_KEYS):
        raise CorpusError(f"{where}: every record value is a string")
    return {k: value[k] for k in _RECORD_KEYS}


def strings(value: Any, where: str) -> tuple[str, ...]:
    """``value`` when it is a list of strings."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CorpusError(f"{where}: a list of strings")
    return tuple(value)


def _pair(value: Any, where: str) -> tuple[str, str]:
    pair = strings(value, where)
    if len(pair) != 2:
        raise CorpusError(f"{where}: [path, text]")
    return pair[0], pair[1]


_REQUIRED = {"name", "group", "category", "lang", "planted", "query", "item"}
_OPTIONAL = {
    "evidence",
    "files",
    "script",
    "answer",
    "replaces",
    "existing",
    "follow_up",
    "sources",
}


def scene_from_json(data: Any, where: str = "scene") -> Scene:
    """One scene from its JSON object (see the module docstring)."""
    keys(data, where, _REQUIRED, _OPTIONAL)
    for key in ("name", "group", "category", "lang", "query"):
        nonempty(data[key], f"{where}.{key}")
    if data["group"] not in GROUPS:
        raise CorpusError(f"{where}.group: one of {', '.join(GROUPS)}")
    if not isinstance(data["planted"], bool):
        raise CorpusError(f"{where}.planted: true or false")
    for key in ("answer", "replaces", "follow_up"):
        if key in data and not isinstance(data[key], str | None):
            raise CorpusError(f"{where}.{key}: a string")
    script = data.get("script")
    sources = data.get("sources")
    return Scene(
        name=data["name"],
        group=data["group"],
        category=data["category"],
        lang=data["lang"],
        planted=data["planted"],
        query=data["query"],
        item=record_fields(data["item"], f"{where}.item"),
        evidence=strings(data.get("evidence", []), f"{where}.evidence"),
        files=tuple(
            _pair(f, f"{where}.files[{i}]")
            for i, f in enumerate(a_list(data.get("files", []), f"{where}.files"))
        ),
        script=None if script is None else _pair(script, f"{where}.script"),
        answer=data.get("answer") or "Done.",
        replaces=data.get("replaces"),
        existing=tuple(
            record_fields(r, f"{where}.existing[{i}]")
            for i, r in enumerate(a_list(data.get("existing", []), f"{where}.existing"))
        ),
        follow_up=data.get("follow_up"),
        sources=None if sources is None else strings(sources, f"{where}.sources"),
    )


def a_list(value: Any, where: str) -> list[Any]:
    """``value`` when it is a JSON list."""
    if not isinstance(value, list):
        raise CorpusError(f"{where}: a list")
    return value


def nonempty(value: Any, where: str) -> str:
    """``value`` when it is a non-empty string."""
    if not isinstance(value, str) or not value:
        raise CorpusError(f"{where}: a non-empty string")
    return value


def keys(data: Any, where: str, required: set[str], optional: set[str]) -> dict[str, Any]:
    """``data`` when it is an object with every ``required`` key and only known ones."""
    if not isinstance(data, dict):
        raise CorpusError(f"{where}: a JSON object")
    missing, extra = required - set(data), set(data) - required - optional
    if missing or extra:
        raise CorpusError(f"{where}: missing {sorted(missing)}, unknown {sorted(extra)}")
    return data


def read_lines(path: Path | str) -> Iterator[tuple[str, Any]]:
    """``(where, value)`` for each line of a JSON Lines file, ``where`` its file and line
    number; empty lines and ``//`` comments are skipped."""
    path = Path(path)
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        where = f"{path.name}:{number}"
        try:
            yield where, json.loads(line)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{where}: not JSON ({e.msg})") from e


class _Named(Protocol):
    @property
    def name(self) -> str: ...


N = TypeVar("N", bound=_Named)


def load_named(path: Path | str, parse: Callable[[Any, str], N]) -> list[N]:
    """Each line of ``path`` parsed by ``parse(value, where)``, in order; a name used twice
    is refused."""
    out: list[N] = []
    seen: set[str] = set()
    for where, data in read_lines(path):
        item = parse(data, where)
        if item.name in seen:
            raise CorpusError(f"{where}: the name {item.name!r} is used twice")
        seen.add(item.name)
        out.append(item)
    return out


def dump_lines(values: Iterable[dict[str, Any]], path: Path | str, sort_keys: bool = True) -> None:
    """Write JSON objects one a line (UTF-8 as written, but invisible characters as
    ``\\uXXXX`` so a reader sees them; keys sorted, or in their order)."""
    lines = [_visible(json.dumps(v, ensure_ascii=False, sort_keys=sort_keys)) for v in values]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _visible(line: str) -> str:
    return "".join(
        f"\\u{ord(c):04x}" if unicodedata.category(c) in ("Cf", "Co", "Zl", "Zp") else c
        for c in line
    )


def load_scenes(path: Path | str) -> list[Scene]:
    """The scenes of a JSON Lines file, in order; names must be unique."""
    return load_named(path, scene_from_json)


def dump_scenes(scenes: Iterable[Scene], path: Path | str) -> None:
    """Write ``scenes`` one a line (sorted keys, UTF-8 as written)."""
    dump_lines((s.to_json() for s in scenes), path)


def in_group(scenes: Sequence[Scene], group: str) -> list[Scene]:
    return [s for s in scenes if s.group == group]
