"""Property test: no bytes in ``.memory/`` make ipymemory fail with anything but its own
errors (issue 10, finding 2).

Each example starts from a valid set of three records with a history journal (two real
commits), then mutates record files, the manifest, MEMORY.md, the history journal and its
kept files, saved pending batches, lock files, or the directory itself: byte edits,
generated YAML frontmatter (complex keys, anchors/aliases and alias bombs, tags,
duplicate keys, nesting, several documents, YAML 1.1 scalars), generated JSON, other
encodings (UTF-16/32, Latin-1, BOM, surrogates, NUL), sizes around and far over the
bounds, and non-files (directories, symlinks, FIFOs, unreadable files). The lock wait
is cut to 0.5 s (a lock artefact costs that, not the 45 s default). Then it runs:

* ``MemoryStore.records()``, ``maintenance.check`` and ``PendingFiles.load`` (``%memory
  pending``) — they return or raise an ``IPyMemoryError``; read-only operations change
  no byte;
* CLI subcommands in process (``ipymemory.cli.main(argv)``, text or ``--json``; a few
  drawn per example, every one hundreds of times over the run) — exit status 0, 1 or 2,
  an error is one ``ipymemory: error:`` line, no traceback;
* ``AgentSession.run_turn`` through the real SDK against the scripted Messages-API
  server (selector, answer, extraction in auto mode: a commit is attempted) — it ALWAYS
  returns the model's answer.

A few fixed cases also go through the installed console script in a real subprocess.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from messages_server import MessagesServer, Scripted, text
from turn_support import model_for, plan_reply, records_reply, role_of

from ipymemory import (
    AgentSession,
    AnthropicModel,
    IPyMemoryError,
    MemoryRecord,
    MemoryStore,
    MemoryType,
    SessionConfig,
    cli,
)
from ipymemory.review.pending import PendingFiles
from ipymemory.store import maintenance
from ipymemory.store.record import render_record

ANSWER = "The answer, whatever the memory holds."
NAMES = ("alpha-note", "beta-note", "gamma-note")
BASE = tuple(
    MemoryRecord(
        name=name,
        type=list(MemoryType)[i],
        description=f"{name.split('-')[0]} project details and parsing",
        body=f"Body of {name}.\nSecond line.",
    )
    for i, name in enumerate(NAMES)
)
FILES = tuple(f"{name}-{i:032x}.md" for i, name in enumerate(NAMES, start=1))
SETTINGS = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}

# --- the directory ---------------------------------------------------------------------


def _base_files() -> dict[str, bytes]:
    files = {f: render_record(r) for f, r in zip(FILES, BASE, strict=True)}
    files["manifest.json"] = json.dumps(
        {"version": 1, "files": list(FILES)}, separators=(",", ":")
    ).encode()
    files["MEMORY.md"] = "".join(
        f"- [{r.name}]({f}) - {r.description}\n" for f, r in zip(FILES, BASE, strict=True)
    ).encode()
    return files


BASE_FILES = _base_files()


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    """Where each example's workspace is made: tmpfs when there is one (speed only)."""
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    path = Path(tempfile.mkdtemp(prefix="ipymemory-fuzz-", dir=base))
    try:
        yield path
    finally:
        _make_removable(path)
        shutil.rmtree(path, ignore_errors=True)


def _make_removable(path: Path) -> None:
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            with contextlib.suppress(OSError):
                if not os.path.islink(os.path.join(root, name)):
                    os.chmod(os.path.join(root, name), 0o700)


@contextlib.contextmanager
def workspace_with(scratch: Path, mutations: list[Mutation]) -> Iterator[Path]:
    ws = Path(tempfile.mkdtemp(dir=scratch))
    shutil.copytree(_template(scratch), ws, dirs_exist_ok=True, symlinks=True)
    for mutate in mutations:
        with contextlib.suppress(OSError):  # e.g. .memory was made a file by an earlier one
            mutate(ws)
    try:
        yield ws
    finally:
        _make_removable(ws)
        shutil.rmtree(ws, ignore_errors=True)


def _template(scratch: Path) -> Path:
    """The three base records as files, then two real commits (an add and a forget), so
    the history journal and its kept files exist too. Made once per scratch directory."""
    template = scratch / "template"
    if not template.exists():
        mem = template / ".memory"
        mem.mkdir(parents=True)
        for name, data in BASE_FILES.items():
            (mem / name).write_bytes(data)
        (template / "outside.md").write_bytes(BASE_FILES[FILES[0]])
        (template / "claude").mkdir()  # a Claude Code memory directory, for `import`
        (template / "claude" / "tabs.md").write_bytes(
            b"---\nname: Tabs\ndescription: indent with tabs\ntype: user\n---\n\nTabs.\n"
        )
        (template / "claude" / "MEMORY.md").write_bytes(b"- [Tabs](tabs.md) - indent with tabs\n")
        store = MemoryStore(template)
        store.extend([MemoryRecord(name="extra-note", type="user", description="x", body="y")])
        store.forget(["extra-note"])
        assert [r.name for r in store.records()] == list(NAMES)
    return template


def snapshot(path: Path) -> dict[str, Any]:
    """Everything in ``path`` (names, kinds, bytes, link targets), lock files excluded."""
    out: dict[str, Any] = {}
    if not os.path.lexists(path):
        return out
    if path.is_symlink() or not path.is_dir():
        return {"": os.readlink(path) if path.is_symlink() else "file"}
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if entry.name.startswith(".lock"):
            continue
        if entry.is_dir(follow_symlinks=False):
            out[entry.name] = snapshot(Path(entry.path))
            continue
        st_ = entry.stat(follow_symlinks=False)
        if stat.S_ISLNK(st_.st_mode):
            out[entry.name] = ("link", os.readlink(entry.path))
        elif stat.S_ISREG(st_.st_mode):
            try:
                out[entry.name] = ("file", Path(entry.path).read_bytes())
            except PermissionError:
                out[entry.name] = ("unreadable", st_.st_size)
        else:
            out[entry.name] = ("other", stat.S_IFMT(st_.st_mode))
    return out


# --- mutations -------------------------------------------------------------------------

Mutation = Callable[[Path], None]

INTERESTING_BYTES = [
    b"\x00",
    b"\xef\xbb\xbf",  # BOM
    b"\xed\xa0\x80",  # an encoded surrogate (invalid UTF-8)
    b"\xc0\xaf",  # overlong
    b"\xff\xfe",
    b"\r",
    b"\r\n",
    b"\n---\n",
    b"---",
    b"...",
    b"? [a, b]: x\n",
    b"? {a: 1}: x\n",
    b"&a ",
    b"*a",
    b"!!binary ",
    b"!!python/object/apply:os.system ",
    b"\xc2\x85",  # NEL
    b"\xe2\x80\xa8",  # LS
    b"\x0b",
    b"\x0c",
    b"\x1f",
    b"\x7f",
    b"{",
    b"[",
    b'"',
    b"'",
    b"\t",
    b"%YAML 1.1\n",
    b": ",
    b"- ",
    b"<<: ",
    b"\\ud800",
    b'"\\ud800"',
    b"\n" * 200,
    b"x" * 4096,
]


def _byte_edit(kind: str, where: float, payload: bytes, count: int) -> Callable[[bytes], bytes]:
    def edit(data: bytes) -> bytes:
        at = int(where * len(data))
        if kind == "flip" and data:
            at = min(at, len(data) - 1)
            return data[:at] + bytes([data[at] ^ (count % 255 + 1)]) + data[at + 1 :]
        if kind == "insert":
            return data[:at] + payload * max(1, count % 4) + data[at:]
        if kind == "delete":
            return data[:at] + data[at + count :]
        if kind == "truncate":
            return data[:at]
        return data + payload  # append

    return edit


byte_edits = st.lists(
    st.builds(
        _byte_edit,
        st.sampled_from(["flip", "insert", "delete", "truncate", "append"]),
        st.floats(0, 1),
        st.one_of(st.sampled_from(INTERESTING_BYTES), st.binary(min_size=1, max_size=12)),
        st.integers(1, 64),
    ),
    min_size=1,
    max_size=4,
)

# YAML pieces that are known trouble for loaders (or for what is done with their result).
YAML_VALUES = [
    "alpha-note",
    "",
    "~",
    "null",
    "yes",
    "no",
    "on",
    "1",
    "0x1f",
    "1e3",
    ".inf",
    "2024-01-01",
    "2024-01-01 10:00:00",
    "!!int 1",
    "!!int x",
    "!!float x",
    "!!bool maybe",
    "!!timestamp not-a-date",
    "!!binary aGk=",
    "!!binary ***",
    "!!str text",
    "!!null ''",
    "!!set {a, b}",
    "!!omap [a: 1]",
    "!foo bar",
    "!<tag:example.com,2000:x> y",
    "!!python/object/apply:os.system ['true']",
    "!!python/name:os.system",
    "&anchor value",
    "*anchor",
    "*undefined",
    "[a, b]",
    "{a: b}",
    "[[[[[[]]]]]]",
    "{? [a]: b}",
    "|\n  block text",
    ">-\n  folded\n  text",
    '"\\ud800"',
    '"\\udfff\\ud800"',
    '"\\x00"',
    '"\\0"',
    '"\\u2028"',
    '"\\N"',
    '"\\v\\f"',
    '"\\x1c\\x1d\\x1e"',
    '"\\x1f"',
    '"\\ufeff"',
    '"\\t"',
    "'\ufeff'",
    "\ufeff",
    "\u2029",
    "\x85",
    "a\u2028b",
    "'it''s'",
    "a: b",
    "- item",
    "# comment",
    "%x",
    "@reserved",
    "`tick",
]
YAML_KEYS = [
    "name",
    "description",
    "type",
    "extra",
    "? [a, b]",
    "? {a: 1}",
    "? - a\n  - b\n",
    "[a]",
    "{a: b}",
    "<<",
    "!!int 1",
    "!!binary aGk=",
    "&k name",
    "*k",
    '"name"',
    "? name",
    "1",
    "null",
    "~",
    '"\\ud800"',
]
STRUCTURE_LINES = [
    "--- x",
    "...",
    "%YAML 1.1",
    "%TAG ! tag:example.com,2000:",
    "- item",
    "  nested: value",
    "\tx: y",
    "? complex\n: value",
    "<<: {name: a}",
    "<<: *k",
    "name: alpha-note",
    "description: d",
    "type: user",
]


def _laughs(levels: int) -> str:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        refs = ",".join([f"*l{i - 1}"] * 9)
        lines.append(f"l{i}: &l{i} [{refs}]")
    lines.append(f"description: *l{levels - 1}")
    return "\n".join(lines)


yaml_line = st.one_of(
    st.builds(
        "{}: {}".format,
        st.sampled_from(YAML_KEYS),
        st.one_of(st.sampled_from(YAML_VALUES), st.text(max_size=20)),
    ),
    st.sampled_from(STRUCTURE_LINES),
)
yaml_fronts = st.one_of(
    st.lists(yaml_line, min_size=0, max_size=8).map("\n".join),
    st.integers(1, 9).map(_laughs),
    st.integers(1, 5000).map(lambda n: "description: " + "[" * n + "]" * n),
    st.integers(1, 2000).map(
        lambda n: "description:" + "".join(f"\n{' ' * i}- " for i in range(n))
    ),
    st.integers(1, 3000).map(lambda n: "? " * n + "x: y"),
    st.text(max_size=60),
)
bodies = st.one_of(
    st.just("Body."),
    st.text(max_size=80),
    st.sampled_from(
        ["---", "---\nname: evil\n---", "\ufeff", "\x1f", "\x85", "\u2028", " ", "\x00"]
    ),
)
ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "utf-16-be", "utf-32", "latin-1", "cp1252"]


def _encode(text_: str, encoding: str) -> bytes:
    return text_.encode(encoding, errors="surrogatepass" if "utf" in encoding else "replace")


def _record_file_text(front: str, body: str, newline: str) -> str:
    return f"---\n{front}\n---\n\n{body}\n".replace("\n", newline)


record_contents = st.one_of(
    # generated frontmatter, encoded in some way
    st.builds(
        lambda front, body, newline, encoding: _encode(
            _record_file_text(front, body, newline), encoding
        ),
        yaml_fronts,
        bodies,
        st.sampled_from(["\n", "\r\n", "\r"]),
        st.sampled_from(ENCODINGS),
    ),
    st.binary(max_size=300),
    st.just(b""),
)


def set_file(name: str, content: bytes) -> Mutation:
    def mutate(ws: Path) -> None:
        path = ws / ".memory" / name
        _remove(path)
        path.write_bytes(content)

    return mutate


def edit_file(name: str, edits: list[Callable[[bytes], bytes]]) -> Mutation:
    def mutate(ws: Path) -> None:
        path = ws / ".memory" / name
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        for edit in edits:
            data = edit(data)
        _remove(path)
        path.write_bytes(data)

    return mutate


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def replace_with(name: str, kind: str) -> Mutation:
    """Make ``.memory/<name>`` (or ``.memory`` itself for name "") something else."""

    def mutate(ws: Path) -> None:
        path = ws / ".memory" / name if name else ws / ".memory"
        if kind == "chmod-000":
            if os.path.lexists(path) and not path.is_symlink():
                os.chmod(path, 0)
            return
        _remove(path)
        if kind == "directory":
            path.mkdir()
            (path / "inner.md").write_bytes(b"x")
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "symlink-inside":
            path.symlink_to(FILES[1])
        elif kind == "symlink-outside":
            path.symlink_to(ws / "outside.md")
        elif kind == "symlink-dangling":
            path.symlink_to("nowhere.md")
        elif kind == "symlink-loop":
            path.symlink_to(path.name)
        elif kind == "file":
            path.write_bytes(b"not a directory")
        # "deleted": nothing more

    return mutate


NON_FILES = [
    "deleted",
    "directory",
    "fifo",
    "symlink-inside",
    "symlink-outside",
    "symlink-dangling",
    "symlink-loop",
    "chmod-000",
]


class Sized:
    """``head + unit * count + tail``, made only when written (keeps examples small)."""

    def __init__(self, head: bytes, unit: bytes, count: int, tail: bytes = b"") -> None:
        self.head, self.unit, self.count, self.tail = head, unit, count, tail

    def __repr__(self) -> str:
        return f"Sized({self.head[:20]!r}..., {self.unit!r} * {self.count})"

    def make(self) -> bytes:
        return self.head + self.unit * self.count + self.tail


def set_sized(name: str, sized: Sized) -> Mutation:
    def mutate(ws: Path) -> None:
        set_file(name, sized.make())(ws)

    return mutate


# Sizes around and far over the 4096-byte / 200-line bounds.
sized_records = st.builds(
    Sized,
    st.just(render_record(BASE[0])[:-1]),
    st.sampled_from([b"x", b"\n", b"\xe8\xa8\x98", b"\r\n"]),
    st.one_of(st.integers(1, 5000), st.integers(1, 300_000)),
    st.just(b"\n"),
)

record_mutations = st.one_of(
    st.builds(set_file, st.sampled_from(FILES), record_contents),
    st.builds(set_sized, st.sampled_from(FILES), sized_records),
    st.builds(edit_file, st.sampled_from(FILES), byte_edits),
    st.builds(replace_with, st.sampled_from(FILES), st.sampled_from(NON_FILES)),
)

# Text with a lone surrogate (half an emoji, a non-UTF-8 file name decoded by Python):
# valid JSON once escaped, never encodable as UTF-8 (issue 19 item 3).
surrogate_text = st.builds(
    lambda before, half, after: before + half + after,
    st.text(max_size=4),
    st.sampled_from(["\ud83d", "\ude00", "\udce9", "\ud800\ud800"]),
    st.text(max_size=4),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12) | surrogate_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
manifest_names = st.one_of(
    st.sampled_from(FILES),
    st.sampled_from(
        [
            "MEMORY.md",
            "manifest.json",
            ".lock",
            "../outside.md",
            "missing-0000.md",
            "con.md",
            "a" * 300 + ".md",
            "x" * 250 + ".md",
            "Alpha.md",
            "alpha-note.MD",
            "inner.md",
        ]
    ),
    st.text(max_size=20),
    json_values,
)
manifest_docs = st.one_of(
    st.builds(
        lambda version, files, extra: {"version": version, "files": files, **extra},
        st.one_of(st.sampled_from([1, 1.0, True, "1", 2, 0, -1, None, 10**30, [1]]), json_values),
        st.one_of(st.lists(manifest_names, max_size=6), json_values),
        st.one_of(st.just({}), st.dictionaries(st.text(max_size=8), json_values, max_size=2)),
    ),
    json_values,
)
manifest_contents = st.one_of(
    st.builds(
        lambda doc, ascii_, encoding: _encode(json.dumps(doc, ensure_ascii=ascii_), encoding),
        manifest_docs,
        st.booleans(),
        st.sampled_from(ENCODINGS),
    ),
    st.sampled_from(
        [
            b'{"version":1,"files":[],"version":1}',
            b'{"version":1,"files":[],"files":[]}',
            b'{"version":NaN,"files":[]}',
            b'{"version":1,"files":["' + FILES[0].encode() + b'","' + FILES[0].encode() + b'"]}',
            b'{"version":1e400,"files":[]}',
            b"\xef\xbb\xbf" + BASE_FILES["manifest.json"],
        ]
    ),
    st.integers(1, 2000).map(
        lambda n: json.dumps({"version": 1, "files": [f"r{i}-x.md" for i in range(n)]}).encode()
    ),
    st.binary(max_size=200),
)
sized_manifests = st.one_of(
    st.builds(Sized, st.just(b""), st.just(b"["), st.integers(1, 200_000)),
    st.builds(
        Sized,
        st.just(b""),
        st.just(b" "),
        st.integers(1, 300_000),
        st.just(BASE_FILES["manifest.json"]),
    ),
    st.builds(
        Sized,
        st.just(b'{"version":1,"files":['),
        st.just(b'"a.md",'),
        st.integers(1, 50_000),
        st.just(b'"b.md"]}'),
    ),
)
manifest_mutations = st.one_of(
    st.builds(set_file, st.just("manifest.json"), manifest_contents),
    st.builds(set_sized, st.just("manifest.json"), sized_manifests),
    st.builds(edit_file, st.just("manifest.json"), byte_edits),
    st.builds(replace_with, st.just("manifest.json"), st.sampled_from(NON_FILES)),
)


def add_file(name: str, content: bytes) -> Mutation:
    def mutate(ws: Path) -> None:
        with contextlib.suppress(OSError):  # a name the file system refuses: no file
            (ws / ".memory" / name).write_bytes(content)

    return mutate


JOURNAL = "history/journal.jsonl"


def edit_kept(edits: list[Callable[[bytes], bytes]]) -> Mutation:
    """Byte edits on every file the history keeps (history/files/)."""

    def mutate(ws: Path) -> None:
        for path in sorted((ws / ".memory" / "history" / "files").iterdir()):
            edit_file(f"history/files/{path.name}", edits)(ws)

    return mutate


def _journal_lines(docs: list[Any]) -> bytes:
    lines = [json.dumps(doc) for doc in docs]
    return ("\n".join(lines) + "\n").encode()


journal_contents = st.one_of(
    st.builds(_journal_lines, st.lists(json_values, max_size=4)),
    st.builds(
        lambda seq, op: (
            json.dumps({"seq": seq, "op": op, "added": [], "removed": []}) + "\n"
        ).encode(),
        st.one_of(st.integers(), st.none(), st.text(max_size=4)),
        st.sampled_from(["add", "forget", "undo", "restore", "x", ""]),
    ),
    st.binary(max_size=200),
)
_SPLICE = "\x00splice"


def set_entry_field(key: str, value: str) -> Mutation:
    """The journal's last entry, well formed but for one field (``added.0.sha256``: a
    path into it) set to the JSON text ``value``: a forged or damaged entry."""

    def mutate(ws: Path) -> None:
        path = ws / ".memory" / JOURNAL
        *parents, last = key.split(".")
        if path.is_symlink() or not path.is_file():
            return  # replaced by a FIFO (reading it would block), a link, a directory
        # An earlier mutation may have left no entry, or no such part: then no change.
        with contextlib.suppress(OSError, LookupError, TypeError, ValueError, RecursionError):
            lines = path.read_bytes().splitlines(keepends=True)
            target = doc = json.loads(lines[-1])
            for part in parents:
                target = target[int(part)] if isinstance(target, list) else target[part]
            if isinstance(target, list):
                target[int(last)] = _SPLICE
            else:
                target[last] = _SPLICE
            # Spliced as text: a nesting too deep for json.dumps can still be written.
            lines[-1] = (json.dumps(doc).replace(json.dumps(_SPLICE), value) + "\n").encode()
            path.write_bytes(b"".join(lines))

    return mutate


entry_fields = st.sampled_from(
    [
        *("seq", "op", "at", "before", "after", "undoes", "restores", "source_names"),
        *("added", "removed", "actor", "provenance"),
        *("added.0.sha256", "added.0.file", "added.0.name", "removed.0.kept", "removed.0.file"),
    ]
)
entry_values = st.one_of(
    json_values.map(json.dumps),
    st.sampled_from([*map(json.dumps, [*FILES, "../outside.md", "x" * 64, 10**30, -1])]),
    st.integers(1, 100_000).map(lambda n: "[" * n + "]" * n),
)
history_mutations = st.one_of(
    st.builds(set_entry_field, entry_fields, entry_values),
    st.builds(edit_file, st.just(JOURNAL), byte_edits),
    st.builds(set_file, st.just(JOURNAL), journal_contents),
    st.builds(
        replace_with,
        st.sampled_from([JOURNAL, "history", "history/files"]),
        st.sampled_from(NON_FILES),
    ),
    st.builds(edit_kept, byte_edits),
)


def _pending_batch(overrides: dict[str, Any], batch_id: str) -> bytes:
    """A saved pending batch (``pending/<id>.json``) with some fields replaced."""
    item = {"name": "p-note", "type": "user", "description": "d", "body": "b"}
    doc: dict[str, Any] = {
        "version": 1,
        "id": batch_id,
        "saved_at": 4_000_000_000.0,
        "status": "pending",
        "error": None,
        "plan_error": None,
        "items": [item],
        "origins": {"p-note": "user"},
        "plan": {"source_names": ["p-note"], "records": [item]},
        "base": [{"name": "alpha-note", "sha256": "0" * 64}],
        "provenance": {
            "session": "s",
            "via": "turn",
            "query": "q",
            "models": {"main": "m"},
            "files_read": ["a.py"],
            "caller": {"cell": 1},
        },
    }
    for key, value in overrides.items():
        if key.startswith("provenance."):
            if isinstance(doc["provenance"], dict):
                doc["provenance"][key.split(".", 1)[1]] = value
        else:
            doc[key] = value
    return json.dumps(doc).encode()


BATCH_KEYS = ["version", "id", "saved_at", "status", "error", "plan_error", "items"]
BATCH_KEYS += ["origins", "plan", "base", "provenance"]
BATCH_KEYS += [f"provenance.{k}" for k in ("session", "via", "query", "models", "files_read")]
BATCH_KEYS += ["provenance.caller"]
pending_mutations = st.one_of(
    st.builds(
        lambda overrides, batch_id: set_file(
            f"pending/{batch_id}.json", _pending_batch(overrides, batch_id)
        ),
        st.dictionaries(st.sampled_from(BATCH_KEYS), json_values, max_size=3),
        st.sampled_from(["b1", "b2", "x" * 64]),
    ),
    st.builds(set_file, st.just("pending/b1.json"), st.binary(max_size=100)),
    st.builds(
        replace_with, st.sampled_from(["pending", "pending/b1.json"]), st.sampled_from(NON_FILES)
    ),
)


def in_pending_dir(mutations: list[Mutation]) -> Mutation:
    def mutate(ws: Path) -> None:
        (ws / ".memory" / "pending").mkdir(exist_ok=True)
        for each in mutations:
            with contextlib.suppress(OSError):
                each(ws)

    return mutate


def export_state(names: list[str], link: str | None) -> Mutation:
    """A Claude Code export directory (``{ws}/exported``) whose state file names
    ``names`` (each "unchanged since written": the sha256 of ``outside.md``), and
    optionally a record file there that is a link to ``outside.md`` (issue 19 #2, #11)."""

    def mutate(ws: Path) -> None:
        exported = ws / "exported"
        exported.mkdir(exist_ok=True)
        digest = hashlib.sha256((ws / "outside.md").read_bytes()).hexdigest()
        names_ = [str(ws / "outside.md") if n == "{abs}" else n for n in names]
        state = {"files": {n: digest for n in names_}}
        (exported / ".ipymemory-export.json").write_text(json.dumps(state))
        if link is not None:
            _remove(exported / link)
            (exported / link).symlink_to(ws / "outside.md")

    return mutate


# Outside .memory/: the Claude Code directory `import` reads and the one `export` writes.
claude_code_mutations = st.one_of(
    st.builds(
        replace_with,
        st.sampled_from(["../claude/tabs.md", "../claude/MEMORY.md", "../claude/more.md"]),
        st.sampled_from(NON_FILES),
    ),
    st.builds(
        export_state,
        st.lists(
            st.sampled_from(["../outside.md", "{abs}", "sub/../../outside.md", "alpha-note.md"]),
            max_size=3,
        ),
        st.sampled_from([None, "alpha-note.md", "MEMORY.md", ".ipymemory-export.json"]),
    ),
)

directory_mutations = st.one_of(
    history_mutations,
    claude_code_mutations,
    st.builds(
        replace_with,
        st.sampled_from([".lock", ".lock.flock", ".lock.owner"]),
        st.sampled_from(NON_FILES),
    ),
    st.builds(in_pending_dir, st.lists(pending_mutations, min_size=1, max_size=3)),
    st.builds(set_file, st.just("MEMORY.md"), st.one_of(st.binary(max_size=200), record_contents)),
    st.builds(edit_file, st.just("MEMORY.md"), byte_edits),
    st.builds(replace_with, st.just("MEMORY.md"), st.sampled_from(NON_FILES)),
    st.builds(replace_with, st.just(""), st.sampled_from(["file", "symlink-dangling", "deleted"])),
    st.builds(
        add_file,
        st.one_of(
            st.sampled_from(
                [
                    "stray-" + "0" * 32 + ".md",
                    ".tmp-x",
                    "notes.txt",
                    "bad\nname.md",
                    "\u202ertl.md",
                    "\x1b[2J.md",
                    ".lock.stale-1",
                    ".lock",
                    ".lock.flock",
                    ".lock.owner",
                ]
            ),
            st.text(st.characters(exclude_characters="/\x00"), min_size=1, max_size=40),
        ),
        st.one_of(st.just(render_record(BASE[1])), st.binary(max_size=50)),
    ),
)

# --- the operations ------------------------------------------------------------------


LOCK_TIMEOUT = 0.5  # a lock artefact (a .lock file or directory) costs this, not 45 s


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``cli.main(argv)`` with its output captured and a short lock wait. (conftest
    clears IPYMEMORY_*/ANTHROPIC_* for each test: `select` uses the fallback.)"""
    out, err = io.StringIO(), io.StringIO()
    os.environ["IPYMEMORY_LOCK_TIMEOUT"] = str(LOCK_TIMEOUT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv)
    finally:
        del os.environ["IPYMEMORY_LOCK_TIMEOUT"]
    return code, out.getvalue(), err.getvalue()


# How each subcommand is called; one not listed here fails the test (add it). Writing
# commands run after the turn. Each example runs a drawn few (the parser alone costs
# ~10 ms a call); over the examples every subcommand runs hundreds of times.
READ_ONLY_ARGS: dict[str, list[str]] = {
    "list": ["list"],
    "show": ["show", NAMES[0]],
    "check": ["check"],
    "select": ["select", "alpha", "project", "\ud83d"],  # half an emoji in a query
    "show-surrogate": ["show", "alpha-note\udce9"],  # a name from non-UTF-8 argv bytes
    "history": ["history"],
    "diff": ["diff", "1"],
    "recover-dry-run": ["recover", "--dry-run"],
    "export": ["export", "claude-code", "{ws}/exported"],  # writes outside .memory only
    "pending": ["pending"],
    "followed": ["followed"],
    "status": ["status"],
    "sync-status": ["sync", "status"],  # no memory store configured: said, nothing read
    "mcp-bad-mode": ["mcp", "--commit", "bogus"],  # refused by its parser: never serves
}
WRITING_ARGS: dict[str, list[str]] = {
    "reindex": ["reindex"],
    "gc": ["gc", "--stale-seconds", "0"],
    "forget": ["forget", NAMES[1]],
    "forget-surrogate": ["forget", "x\udce9"],
    "move": ["move", NAMES[0], "--to", "user"],  # the user scope is off here: refused
    "commit": ["commit", "--batch", "0123456789ab"],
    "discard": ["discard", "--batch", "0123456789ab"],
    "undo": ["undo"],
    "restore": ["restore", "1"],
    "recover": ["recover"],
    "import": ["import", "claude-code", "{ws}/claude", "--yes"],
    "git": ["git", "setup"],  # the scratch directory is in no repository: refused
    "sync-push": ["sync", "push"],  # no memory store configured: refused, nothing sent
}
ALL_ARGS = {**READ_ONLY_ARGS, **WRITING_ARGS}
cli_picks = st.lists(
    st.tuples(st.sampled_from(sorted(ALL_ARGS)), st.booleans()),
    min_size=1,
    max_size=3,
    unique_by=lambda pick: pick[0],
)


def cli_commands() -> set[str]:
    return set(cli.COMMANDS)


def fuzzed_commands() -> set[str]:
    return {argv[0] for argv in ALL_ARGS.values()}


def check_cli(ws: Path, label: str, as_json: bool) -> None:
    command, *args = (arg.replace("{ws}", str(ws)) for arg in ALL_ARGS[label])
    argv = ["--dir", str(ws), *(["--json"] if as_json else []), command, *args]
    code, out, err = run_cli(argv)
    assert code in (0, 1, 2), (argv, code, err)
    assert "Traceback" not in out + err, (argv, err)
    if code == 1 and command != "check":
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("ipymemory: error: "), (argv, err)


def answer_server_for(srv: MessagesServer) -> None:
    """Every call answered by its role: the turn never runs out of script."""

    def respond(request: dict[str, Any]) -> Scripted:
        role = role_of(request)
        if role == "selector":
            return text(json.dumps([NAMES[0]]))
        if role == "extractor":
            return records_reply(
                MemoryRecord(name="fuzz-new", type="user", description="new", body="b")
            )
        if role == "consolidator":
            return plan_reply([NAMES[0]], [BASE[0]])
        if role == "summarizer":
            return text("summary")
        return text(ANSWER)

    srv.responder = respond


@pytest.fixture(scope="module")
def server() -> Iterator[MessagesServer]:
    srv = MessagesServer().start()
    answer_server_for(srv)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def model(server: MessagesServer) -> AnthropicModel:
    """One SDK client for every example (building one loads the CA bundle: ~60 ms)."""
    return model_for(server.base_url)


def battery(ws: Path, model: AnthropicModel, picks: list[tuple[str, bool]]) -> None:
    """Everything that reads the directory: only our errors, the turn always answers."""
    unknown = cli_commands() - fuzzed_commands()
    assert not unknown, f"add the new CLI subcommands {unknown} to the fuzz test"
    before = snapshot(ws / ".memory")
    outside = snapshot(ws).get("outside.md")  # no command may change a file outside
    with contextlib.suppress(IPyMemoryError):
        MemoryStore(ws).records()
    report = maintenance.check(ws)
    assert all(p.severity in ("error", "warning") for p in report)
    for command, as_json in picks:
        if command in READ_ONLY_ARGS:
            check_cli(ws, command, as_json)
    assert snapshot(ws / ".memory") == before, "a read-only operation changed the directory"
    with contextlib.suppress(IPyMemoryError):
        PendingFiles(ws / ".memory").load()  # %memory pending; drops expired batches

    store = MemoryStore(ws, lock_timeout=LOCK_TIMEOUT)
    session = AgentSession(ws, model=model, config=SessionConfig(commit_mode="auto"), store=store)
    result = session.run_turn("which project details matter for parsing? \ud83d")
    assert result.answer == ANSWER

    for command, as_json in picks:
        if command in WRITING_ARGS:
            check_cli(ws, command, as_json)
    assert snapshot(ws).get("outside.md") == outside, "a command changed a file outside"


@settings(max_examples=800, **SETTINGS)
@given(mutations=st.lists(record_mutations, min_size=1, max_size=3), picks=cli_picks)
def test_fuzz_record_files(
    scratch: Path, model: AnthropicModel, mutations: list[Mutation], picks: list[Any]
) -> None:
    with workspace_with(scratch, mutations) as ws:
        battery(ws, model, picks)


@settings(max_examples=600, **SETTINGS)
@given(
    mutations=st.lists(manifest_mutations, min_size=1, max_size=2),
    also=st.lists(record_mutations, max_size=1),
    picks=cli_picks,
)
def test_fuzz_manifest(
    scratch: Path,
    model: AnthropicModel,
    mutations: list[Mutation],
    also: list[Mutation],
    picks: list[Any],
) -> None:
    with workspace_with(scratch, mutations + also) as ws:
        battery(ws, model, picks)


@settings(max_examples=600, **SETTINGS)
@given(
    mutations=st.lists(
        st.one_of(directory_mutations, record_mutations, manifest_mutations),
        min_size=1,
        max_size=4,
    ),
    picks=cli_picks,
)
def test_fuzz_directory(
    scratch: Path, model: AnthropicModel, mutations: list[Mutation], picks: list[Any]
) -> None:
    with workspace_with(scratch, mutations) as ws:
        battery(ws, model, picks)


# --- fixed cases: the regression, and the console script in a real process -------------

COMPLEX_KEY = b"---\n? [a, b]: x\nname: alpha-note\ndescription: d\ntype: user\n---\n\nb\n"


def test_complex_key_is_a_format_error_everywhere(scratch: Path, model: AnthropicModel) -> None:
    """The reported case: was ``TypeError: unhashable type`` out of every reader."""
    with workspace_with(scratch, [set_file(FILES[0], COMPLEX_KEY)]) as ws:
        where = str(ws / ".memory" / FILES[0])
        with pytest.raises(IPyMemoryError, match="frontmatter keys must be plain strings"):
            MemoryStore(ws).records()
        assert [p.file for p in maintenance.check(ws).errors] == [where]
        code, _, err = run_cli(["--dir", str(ws), "list"])
        assert code == 1 and where in err
        config = SessionConfig(commit_mode="auto")
        result = AgentSession(ws, model=model, config=config).run_turn("anything")
        assert result.answer == ANSWER
        # The turn goes on with the rest of the set (issue 43); its failures name the file.
        assert any(where in failure.cause for failure in result.memory_errors)


def _console_script() -> str:
    script = Path(sys.executable).with_name("ipymemory")
    assert script.is_file(), f"the console script is not installed next to {sys.executable}"
    return str(script)


FIXED_CASES = {
    "complex-key": [set_file(FILES[0], COMPLEX_KEY)],
    "alias-bomb": [set_file(FILES[1], f"---\n{_laughs(9)}\n---\n\nb\n".encode())],
    "utf16-record": [set_file(FILES[2], _encode(BASE_FILES[FILES[2]].decode(), "utf-16"))],
    "deep-manifest": [set_file("manifest.json", b"[" * 100_000 + b"]" * 100_000)],
    "manifest-directory": [replace_with("manifest.json", "directory")],
}


@pytest.mark.parametrize("case", sorted(FIXED_CASES))
def test_console_script_prints_a_message_not_a_traceback(scratch: Path, case: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    with workspace_with(scratch, FIXED_CASES[case]) as ws:
        for command in (["list"], ["check"], ["select", "alpha"], ["show", NAMES[0]]):
            done = subprocess.run(
                [_console_script(), "--dir", str(ws), *command],
                capture_output=True,
                text=True,
                timeout=60,
                env=env,
            )
            assert "Traceback" not in done.stderr, done.stderr
            if command[0] == "show" and done.returncode == 0:
                # Issue 43: a record that loads is shown beside a file that does not.
                assert f"name: {NAMES[0]}" in done.stdout, done.stdout
                continue
            assert done.returncode == 1, (command, done.stdout, done.stderr)
            if command[0] != "check":
                assert done.stderr.startswith("ipymemory: error: "), done.stderr
                assert str(ws / ".memory") in done.stderr
            else:
                assert "error" in done.stdout + done.stderr


def test_fuzz_uses_every_subcommand() -> None:
    # A new subcommand must be added to the tables above, or the battery refuses to run.
    assert cli_commands() == fuzzed_commands()


@pytest.mark.parametrize(
    "overrides",
    [
        {"origins": [1]},
        {"provenance.models": [1]},
        {"provenance.files_read": 5},
        {"provenance.caller": "x"},
    ],
)
def test_damaged_pending_batch_is_reported_not_raised(
    scratch: Path, overrides: dict[str, Any]
) -> None:
    # Found by this fuzzer: these raised TypeError out of PendingFiles.load (%memory pending).
    mutation = in_pending_dir([set_file("pending/b1.json", _pending_batch(overrides, "b1"))])
    with workspace_with(scratch, [mutation]) as ws:
        saved, problems = PendingFiles(ws / ".memory").load()
        if "origins" in overrides:
            assert saved == [] and "origins must map item names" in problems[0]
        else:  # the provenance is dropped, the batch itself stays reviewable
            assert [s.batch.id for s in saved] == ["b1"] and problems == []
            assert saved[0].batch.provenance is None
