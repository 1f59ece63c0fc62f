"""Interop with the reference TypeScript agent's stack (SPEC §1, §4): a ``.memory/`` written
or locked by either side must load / be honoured by the other.

The other side is ``tests/interop/node_store.mjs``, a small Node CLI of ours that uses the
npm packages the reference agent uses, the way it uses them: ``yaml`` v2 (default options)
for frontmatter, compact ``JSON.stringify`` for the manifest, and ``proper-lockfile`` v4 on
``.memory/.lock``. ``npm ci`` runs once per session if ``node_modules`` is missing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_store_lock import dead_pid, forge_owner_record

from ipymemory import MemoryFormatError, MemoryLockTimeout, MemoryRecord, MemoryStore, MemoryType
from ipymemory.store.lock_holder import read_owner
from ipymemory.store.maintenance import reindex
from ipymemory.store.manifest import render_manifest

INTEROP = Path(__file__).parent / "interop"
SCRIPT = INTEROP / "node_store.mjs"
NODE_PACKAGES = ("yaml", "proper-lockfile")
BIG = 10**6  # index bounds out of the way: these tests are about the format

NodeRun = Callable[..., str]


# --- the Node side -----------------------------------------------------------------------


@pytest.fixture(scope="session")
def node_bin() -> str:
    """The node executable, after ``npm ci`` in tests/interop if its packages are missing."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail(
            "the interop tests need Node.js (>= 20) and npm on PATH to run the reference "
            f"agent's npm packages ({', '.join(NODE_PACKAGES)}); install them, then rerun"
        )
    modules = INTEROP / "node_modules"
    if not all((modules / name / "package.json").is_file() for name in NODE_PACKAGES):
        import filelock

        # Serialised: parallel test sessions must not run npm ci into one directory at once.
        lock = Path(tempfile.gettempdir()) / f"ipymemory-npm-ci-{os.getuid()}.lock"
        with filelock.FileLock(str(lock), timeout=600):
            if not all((modules / name / "package.json").is_file() for name in NODE_PACKAGES):
                done = subprocess.run(
                    [npm, "ci", "--no-audit", "--no-fund"],
                    cwd=INTEROP,
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
                if done.returncode != 0:
                    pytest.fail(
                        f"`npm ci` in {INTEROP} failed (exit {done.returncode}):\n"
                        f"{done.stdout}\n{done.stderr}"
                    )
    return node


@pytest.fixture
def node(node_bin: str) -> NodeRun:
    """Run node_store.mjs; returns stdout; a non-zero exit fails with its stderr."""

    def run(*args: str, input: str | None = None, expect_fail: bool = False) -> str:
        done = subprocess.run(
            [node_bin, str(SCRIPT), *args],
            input=input,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if expect_fail:
            assert done.returncode == 1, f"node {args[0]} should fail: {done.stdout}"
            return done.stderr
        assert done.returncode == 0, f"node {args[0]} failed ({done.returncode}):\n{done.stderr}"
        return done.stdout

    return run


def node_read(node: NodeRun, mem: Path) -> list[dict[str, str]]:
    data = json.loads(node("read", str(mem)))
    assert isinstance(data, list)
    return data


def node_write(node: NodeRun, mem: Path, records: Sequence[MemoryRecord]) -> None:
    node("write-batch", str(mem), input=json.dumps([r.to_json() for r in records]))


def as_entries(store: MemoryStore) -> list[dict[str, str]]:
    return [{"file": e.file, **e.record.to_json()} for e in store.entries()]


# --- values YAML likes to misread ---------------------------------------------------------

TRICKY_NAMES = ("no", "yes", "on", "off", "null", "1", "1e3", "0o17", "true", "false", "0x1f", "y")
LONG_WORDS = " ".join(["memory"] * 20)  # 139 characters with spaces: folded at 80 columns
TRICKY_DESCRIPTIONS = (
    "key: value inside",
    "not a comment # really",
    "- looks like a list item",
    "[looks like a flow sequence",
    "{looks like a flow mapping",
    "'single quoted'",
    "it's an apostrophe",
    '"double quoted"',
    "say \"hi\" and 'bye'",
    "%directive-like",
    "@reserved indicator",
    "`backtick` indicator",
    "? question indicator",
    "! tag indicator",
    "& anchor indicator",
    "* alias indicator",
    "| pipe indicator",
    "> fold indicator",
    "#hash at the start",
    "no",
    "null",
    "~",
    "true",
    "1e3",
    "0o17",
    "2024-01-02",
    "中文描述\uff1a记忆 与 测试",
    "emoji 😀🎉 and ünïcödé",
    "trailing spaces   ",
    "  leading spaces",
    "tab\tinside and back\\slash",
    "no-break\u00a0space",
    "C1 \x97, DEL \x7f, BOM \ufeff, non-characters \ufffe \uffff",  # written raw by `yaml`
    LONG_WORDS,
    "x" * 120,  # long, no space to fold at
    f"{LONG_WORDS}: with a colon, 'quotes' and \"more\" # and a hash",
    "長" * 90,
    "mixed 長い説明 " * 12,
)
TRICKY_BODIES = (
    "---",
    "!!binary |\n  R0lGODlhDAAMAIQAAP",
    "&a [*a]",
    "---\nname: forged\ndescription: x\ntype: user\n---",
    "  indented first line\n\ttab line\ntrailing spaces  ",
    "a\n\n\nb",
    "# heading\n\n- item: value\n- [link](x.md)",
    "中文正文 😀",
)


def tricky_records() -> list[MemoryRecord]:
    out = []
    for i, description in enumerate(TRICKY_DESCRIPTIONS):
        name = TRICKY_NAMES[i] if i < len(TRICKY_NAMES) else f"d{i}"
        body = TRICKY_BODIES[i % len(TRICKY_BODIES)]
        kind = list(MemoryType)[i % len(MemoryType)]
        out.append(MemoryRecord(name=name, type=kind, description=description, body=body))
    return out


def expected(records: Sequence[MemoryRecord]) -> list[dict[str, str]]:
    return [r.to_json() for r in records]


def without_files(entries: list[dict[str, str]]) -> list[dict[str, str]]:
    return [{k: v for k, v in e.items() if k != "file"} for e in entries]


@pytest.fixture
def mem(workspace: str) -> Path:
    return Path(workspace) / ".memory"


# --- (1) our files load in the reference stack -------------------------------------------


def test_our_records_load_in_the_reference_reader(workspace: str, mem: Path, node: NodeRun) -> None:
    store = MemoryStore(workspace, max_index_bytes=BIG)
    records = tricky_records()
    store.extend(records)
    seen = node_read(node, mem)
    assert without_files(seen) == expected(records)
    assert seen == as_entries(store)


# --- (2) the reference stack's files load in ours -----------------------------------------


def test_reference_records_load_in_our_store(workspace: str, mem: Path, node: NodeRun) -> None:
    records = tricky_records()
    node_write(node, mem, records)
    raw = {p.name: p.read_text("utf-8") for p in mem.glob("*.md") if p.name != "MEMORY.md"}
    # The case this test is about really occurs: plain YAML 1.1 keywords and folded lines.
    fronts = [text.split("\n---\n", 1)[0] for text in raw.values()]
    assert any("\nname: no\n" in f for f in fronts) and any("\nname: on\n" in f for f in fronts)
    assert any(len(f.split("\n")) > 4 for f in fronts), "no description was folded"
    store = MemoryStore(workspace, max_index_bytes=BIG)
    assert expected(store.records()) == expected(records)
    assert as_entries(store) == node_read(node, mem)


def test_reference_cli_write_loads_in_our_store(workspace: str, mem: Path, node: NodeRun) -> None:
    description = f"{LONG_WORDS}: and 'quotes'"
    node("write", str(mem), "null", "feedback", description, "first", "&a [*a]")
    (record,) = MemoryStore(workspace).records()
    assert record == MemoryRecord(
        name="null", type=MemoryType.FEEDBACK, description=description, body="first &a [*a]"
    )


# SPEC §1 (issue 10 #9b): the reference writes these in a description; only CR/LF break
# a description when reading, so its set loads here, text exact.
REFERENCE_DESCRIPTION_BREAKS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


@pytest.mark.parametrize("separator", REFERENCE_DESCRIPTION_BREAKS, ids=lambda c: f"U+{ord(c):04X}")
def test_reference_line_breaks_in_a_description_load_exactly(
    workspace: str, mem: Path, node: NodeRun, separator: str
) -> None:
    # `yaml` writes NEL/LS/PS raw (YAML 1.2 content), the others as escapes; PyYAML alone
    # would fold NEL/LS/PS into a space. Our writer refuses them all.
    node("write", str(mem), "a", "user", f"one{separator}two", "b")
    (record,) = MemoryStore(workspace).records()
    assert record.description == f"one{separator}two"
    with pytest.raises(MemoryFormatError, match="single line"):
        MemoryRecord(name="b", type=MemoryType.USER, description=f"one{separator}two", body="b")


@pytest.mark.parametrize("text", ["\x1f", "\x1c", "\x85"], ids=lambda c: f"U+{ord(c):04X}")
def test_reference_text_blank_only_to_python_loads(
    workspace: str, mem: Path, node: NodeRun, text: str
) -> None:
    # Not blank to JavaScript's trim, so the reference writes (and reads) it as a body or
    # a description; Python's strip would call it empty.
    node("write", str(mem), "a", "user", text, text)
    (record,) = MemoryStore(workspace).records()
    assert (record.description, record.body) == (text, text)
    assert node_read(node, mem)[0]["body"] == text


# Every character JavaScript's trim removes, and those only Python's strip removes.
JS_TRIM = "\t\n\x0b\x0c\r \xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
JS_TRIM += "\u2028\u2029\u202f\u205f\u3000\ufeff"
PY_ONLY_BLANK = "\x1c\x1d\x1e\x1f\x85"


def test_nothing_we_write_is_blank_or_broken_to_the_reference(
    workspace: str, mem: Path, node: NodeRun
) -> None:
    # issue 10 #9a: a BOM-only description or body written by us made the reference refuse
    # the whole set. Every whitespace-like text is either refused by our writer or loads
    # there exactly; the BOM-only ones are among the refused.
    texts = [t for ch in JS_TRIM + PY_ONLY_BLANK for t in (ch, ch * 2, f"x{ch}", f"{ch}x{ch}")]
    written: list[MemoryRecord] = []
    refused: set[str] = set()
    for i, text in enumerate(texts):
        for field in ("description", "body"):
            fields = {"description": "d", "body": "b", field: text}
            try:
                record = MemoryRecord(name=f"w{i}-{field}", type=MemoryType.USER, **fields)
            except MemoryFormatError:
                refused.add(text)
                continue
            written.append(record)
    assert {"\ufeff", "\ufeff" * 2, "\x1f", "\x85", " "} <= refused
    MemoryStore(workspace, max_index_lines=BIG, max_index_bytes=BIG).extend(written)
    assert without_files(node_read(node, mem)) == expected(written)


def test_reference_reader_is_strict(mem: Path, node: NodeRun) -> None:
    # The Node reader validates like the reference agent (so the tests above could fail).
    mem.mkdir()
    (mem / "a-0.md").write_text("---\nname: a\ndescription: d\ntype: user\nextra: x\n---\n\nb\n")
    (mem / "manifest.json").write_text('{"version":1,"files":["a-0.md"]}')
    assert "frontmatter keys" in node("read", str(mem), expect_fail=True)
    (mem / "a-0.md").write_text("---\nname: 1\ndescription: d\ntype: user\n---\n\nb\n")
    assert "name is not a string" in node("read", str(mem), expect_fail=True)
    (mem / "a-0.md").write_text("---\nname: a\ndescription: d\ntype: person\n---\n\nb\n")
    assert "unknown type" in node("read", str(mem), expect_fail=True)
    (mem / "a-0.md").write_text("---\nname: a\ndescription: d\ntype: user\n---\n\n\ufeff\n")
    assert "body is empty" in node("read", str(mem), expect_fail=True)
    (mem / "a-0.md").write_text('---\nname: a\ndescription: "\\ufeff"\ntype: user\n---\n\nb\n')
    assert "description is empty" in node("read", str(mem), expect_fail=True)


# --- (3) manifest.json and MEMORY.md bytes are the same from both writers ----------------


def test_manifest_and_index_bytes_identical(workspace: str, mem: Path, node: NodeRun) -> None:
    # Ours first: the reference stack's rewrite of the same set changes no byte.
    MemoryStore(workspace, max_index_bytes=BIG).extend(tricky_records())
    ours = {n: (mem / n).read_bytes() for n in ("manifest.json", "MEMORY.md")}
    node("reindex", str(mem))
    assert {n: (mem / n).read_bytes() for n in ours} == ours

    # Theirs first: our rendering of their set, file names kept, is byte for byte theirs.
    other = Path(workspace) / "other"
    other.mkdir()
    theirs_mem = other / ".memory"
    node_write(node, theirs_mem, tricky_records())
    theirs = {n: (theirs_mem / n).read_bytes() for n in ("manifest.json", "MEMORY.md")}
    files = [e.file for e in MemoryStore(other, max_index_bytes=BIG).entries()]
    assert render_manifest(files) == theirs["manifest.json"]
    assert theirs["manifest.json"].startswith(b'{"version":1,"files":[')
    reindex(other, max_index_bytes=BIG)  # our MEMORY.md writer over their set
    assert (theirs_mem / "MEMORY.md").read_bytes() == theirs["MEMORY.md"]


# --- generated descriptions and bodies, both ways, one node call per direction ------------

_LINE_BOUNDARIES = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_chars = st.characters(codec="utf-8", exclude_characters=_LINE_BOUNDARIES)
_pieces = st.one_of(
    st.sampled_from(
        [": ", " #", "- ", "[", "{", "'", '"', "%", "@", "`", "\\", "no", "null", "1e3", "~"]
    ),
    st.sampled_from([" ", "  ", "\t", "word ", "長い"]),
    st.text(_chars, max_size=8),
)
_descriptions = st.lists(_pieces, min_size=1, max_size=25).map("".join)
_bodies = st.lists(
    st.one_of(_pieces, st.sampled_from(["\n", "---\n", "\n---\n", "!!binary ", "&a [*a]"])),
    min_size=1,
    max_size=25,
).map("".join)


def generated_records(count: int) -> list[MemoryRecord]:
    """``count`` valid records drawn by hypothesis (invalid draws are skipped)."""
    out: list[MemoryRecord] = []

    # Derandomized: a failure surfaces outside @given (in one node call), so it must replay.
    @settings(max_examples=count, database=None, deadline=None, derandomize=True)
    @given(description=_descriptions, body=_bodies, kind=st.sampled_from(list(MemoryType)))
    def draw(description: str, body: str, kind: MemoryType) -> None:
        try:
            record = MemoryRecord(
                name=f"g{len(out)}", type=kind, description=description, body=body
            )
        except MemoryFormatError:
            return  # blank description or body: not a record either side would write
        out.append(record)

    draw()
    assert len(out) > count // 2, "the strategies produce too few valid records"
    return out


def mismatches(want: Sequence[dict[str, str]], got: Sequence[dict[str, str]]) -> list[Any]:
    return [(w, g) for w, g in zip(want, got, strict=True) if w != g]


@pytest.fixture(scope="module")
def generated() -> list[MemoryRecord]:
    return generated_records(150)


def test_generated_ours_load_in_reference(
    workspace: str, mem: Path, node: NodeRun, generated: list[MemoryRecord]
) -> None:
    MemoryStore(workspace, max_index_bytes=BIG).extend(generated)
    seen = without_files(node_read(node, mem))
    assert len(seen) == len(generated)
    assert not mismatches(expected(generated), seen)


def test_generated_reference_load_in_ours(
    workspace: str, mem: Path, node: NodeRun, generated: list[MemoryRecord]
) -> None:
    node_write(node, mem, generated)
    loaded = expected(MemoryStore(workspace, max_index_bytes=BIG).records())
    assert len(loaded) == len(generated)
    assert not mismatches(expected(generated), loaded)


# --- (4) locking, both ways ---------------------------------------------------------------


@pytest.fixture
def node_holder(mem: Path, node_bin: str) -> Iterator[subprocess.Popen[str]]:
    with reference_holding(mem, node_bin) as proc:
        yield proc


@contextlib.contextmanager
def reference_holding(mem: Path, node_bin: str) -> Iterator[subprocess.Popen[str]]:
    """The reference stack holding the lock (proper-lockfile) until a line on its stdin."""
    mem.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [node_bin, str(SCRIPT), "hold-lock", str(mem), "60"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    try:
        line = proc.stdout.readline().strip()
        assert line == "locked", f"node hold-lock said {line!r}"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_reference_lock_makes_our_commit_wait(
    workspace: str, mem: Path, node: NodeRun, node_holder: subprocess.Popen[str]
) -> None:
    assert (mem / ".lock").is_dir()  # proper-lockfile's lock is a directory
    store = MemoryStore(workspace, lock_timeout=0.4)
    with pytest.raises(MemoryLockTimeout) as info:
        store.extend([MemoryRecord(name="a", type=MemoryType.USER, description="d", body="b")])
    assert str(mem / ".lock") in str(info.value)
    assert store.records() == ()
    assert (mem / ".lock").is_dir()  # theirs, left alone

    assert node_holder.stdin is not None and node_holder.stdout is not None
    node_holder.stdin.write("release\n")
    node_holder.stdin.flush()
    assert node_holder.stdout.readline().strip() == "released"
    assert node_holder.wait(timeout=10) == 0  # proper-lockfile saw no compromise
    assert not os.path.lexists(mem / ".lock")

    store.extend([MemoryRecord(name="a", type=MemoryType.USER, description="d", body="b")])
    assert [r["name"] for r in node_read(node, mem)] == ["a"]


PAUSED_COMMIT = """
import sys
from ipymemory.store.record import MemoryRecord
from ipymemory.store.store import MemoryStore

store = MemoryStore(sys.argv[1])

def checkpoint(step: str) -> None:
    print(step, flush=True)
    if step == sys.argv[2]:
        sys.stdin.readline()  # paused inside the commit, holding the lock

store._checkpoint = checkpoint
store.extend([MemoryRecord(name="ours", type="project", description="d: x", body="b")])
print("done", flush=True)
"""


@pytest.mark.parametrize("pause_at", ["locked", "record-verified", "manifest-replaced"])
def test_our_lock_makes_the_reference_agent_wait(
    workspace: str, mem: Path, node: NodeRun, pause_at: str
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", PAUSED_COMMIT, workspace, pause_at],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        for line in child.stdout:
            if line.strip() == pause_at:
                break
        else:
            pytest.fail(f"the committing child never reached {pause_at}")
        assert (mem / ".lock").is_dir()
        assert node("try-lock", str(mem)).strip() == "busy"
        assert "ELOCKED" in node("write", str(mem), "theirs", "user", "d", "b", expect_fail=True)

        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.read().split()[-1] == "done"
        assert child.wait(timeout=10) == 0
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=10)
        child.stdin.close()
        child.stdout.close()

    assert not os.path.lexists(mem / ".lock")  # no plain file (nor directory) left at .lock
    assert node("try-lock", str(mem)).strip() == "locked"
    node("write", str(mem), "theirs", "user", "d", "b")
    assert [r["name"] for r in node_read(node, mem)] == ["ours", "theirs"]
    assert [r.name for r in MemoryStore(workspace).records()] == ["ours", "theirs"]


def test_killed_reference_holder_goes_stale_and_is_taken_over(
    workspace: str, mem: Path, node: NodeRun, node_holder: subprocess.Popen[str]
) -> None:
    node_holder.kill()  # SIGKILL: proper-lockfile leaves its directory behind
    node_holder.wait(timeout=10)
    assert (mem / ".lock").is_dir()
    record = MemoryRecord(name="a", type=MemoryType.USER, description="d", body="b")
    with pytest.raises(MemoryLockTimeout):  # still fresh: honoured
        MemoryStore(workspace, lock_timeout=0.2).extend([record])
    past = time.time() - 31  # older than proper-lockfile's 30 s stale window
    os.utime(mem / ".lock", (past, past))
    MemoryStore(workspace, lock_timeout=2).extend([record])
    assert not os.path.lexists(mem / ".lock")
    assert node("try-lock", str(mem)).strip() == "locked"


def test_live_reference_lock_on_our_old_inode_is_never_taken_over(
    workspace: str, mem: Path, node: NodeRun, node_bin: str
) -> None:
    """Issue 10 #9c: after our commit, proper-lockfile's mkdir tends to reuse the inode of
    our removed ``.lock``. Its LIVE lock is honoured — with our owner record as released
    (as we leave it), and even with a stale record that claims that inode and mtime for a
    dead process of ours (as an uncleared record with coarse timestamps would)."""
    first = MemoryRecord(name="a", type=MemoryType.USER, description="d", body="b")
    MemoryStore(workspace).extend([first])
    ours = read_owner(mem / ".lock.owner")
    assert ours is not None and not ours.held  # invalidated on release
    with reference_holding(mem, node_bin) as holder:
        theirs = os.stat(mem / ".lock")
        assert not theirs.st_mode & 0o1000  # not our mark
        second = MemoryRecord(name="b", type=MemoryType.USER, description="d", body="b")
        with pytest.raises(MemoryLockTimeout, match="held by another agent"):
            MemoryStore(workspace, lock_timeout=0.3).extend([second])
        forge_owner_record(mem, dead_pid())
        with pytest.raises(MemoryLockTimeout, match="held by another agent"):
            MemoryStore(workspace, lock_timeout=0.3).extend([second])
        assert os.stat(mem / ".lock").st_ino == theirs.st_ino  # theirs, untouched
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.write("release\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "released"
        assert holder.wait(timeout=10) == 0  # proper-lockfile saw no compromise
    MemoryStore(workspace, lock_timeout=2).extend([second])
    assert [r["name"] for r in node_read(node, mem)] == ["a", "b"]


# --- (4) the history layer (SPEC §6) --------------------------------------------------------


def test_reference_ignores_history_and_pending_and_its_commits_become_external(
    workspace: str, mem: Path, node: NodeRun
) -> None:
    from ipymemory.store.maintenance import check

    store = MemoryStore(workspace, max_index_bytes=BIG)
    store.extend([MemoryRecord(name="ours", type="user", description="d", body="b")])
    store.forget("ours")  # history/files/ now holds a record file the set does not list
    store.extend([MemoryRecord(name="kept", type="user", description="d", body="b")])
    (mem / "pending").mkdir()
    (mem / "pending" / "batch-1.json").write_text('{"items": []}')
    assert (mem / "history" / "journal.jsonl").is_file()
    assert list((mem / "history" / "files").iterdir())

    # The reference reads exactly the set: history/ and pending/ are not part of it.
    assert node_read(node, mem) == as_entries(store)
    # It commits into the same directory (its own lock, manifest and index).
    theirs = [MemoryRecord(name="theirs", type="project", description="t", body="x")]
    node_write(node, mem, theirs)
    node("reindex", str(mem))
    assert [r.name for r in store.records()] == ["kept", "theirs"]
    assert [e["name"] for e in node_read(node, mem)] == ["kept", "theirs"]
    assert any("external" in p.reason for p in check(workspace))

    # Our next commit records the reference's commit first, as an external entry.
    store.extend([MemoryRecord(name="next", type="user", description="d", body="b")])
    add, ext = store.history()[:2]
    assert ext.op == "external" and [a.name for a in ext.added] == ["theirs"]
    assert ext.removed == () and ext.before == store.history()[2].after
    assert add.op == "add" and add.before == ext.after
    assert check(workspace, max_index_bytes=BIG) == []
    assert (mem / "pending" / "batch-1.json").read_text() == '{"items": []}'
    # And the reference still reads the whole set after ours.
    assert [e["name"] for e in node_read(node, mem)] == ["kept", "theirs", "next"]
