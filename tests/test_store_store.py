"""MemoryStore (SPEC §1, §4): API behaviour, bad input on disk, symlinks, rollback."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from record_support import rec

from ipymemory import MemoryConflictError, MemoryFormatError, MemoryStore, MemoryStoreError
from ipymemory.store import plan as plan_module
from ipymemory.store.index import index_line
from ipymemory.store.maintenance import check
from ipymemory.store.record import render_record
from ipymemory.store.store import COMMIT_STEPS

FILE_RE = re.compile(r"([a-z0-9-]+)-[0-9a-f]{32}\.md")


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file in .memory except the lock's side files (not store content)."""
    if not root.exists():
        return {}
    out = {}
    for p in sorted(root.iterdir()):
        if p.name.startswith(".lock."):
            continue
        assert p.name != ".lock", "the lock directory was left behind"
        out[p.name] = p.read_bytes() if p.is_file() else b"<dir>"
    return out


@pytest.fixture
def store(workspace: str) -> MemoryStore:
    return MemoryStore(workspace)


@pytest.fixture
def root(workspace: str) -> Path:
    return Path(workspace) / ".memory"


# --- basic API ------------------------------------------------------------------------


def test_empty_store_reads_without_creating(store: MemoryStore, root: Path) -> None:
    assert store.records() == () and store.entries() == () and store.catalog() == ""
    assert not root.exists()
    assert store.root == root


def test_extend_writes_exact_files(store: MemoryStore, root: Path) -> None:
    a, b = rec("alpha", type="user"), rec("beta", description="second one")
    added = store.extend([a, b])
    assert [e.record for e in added] == [a, b]
    files = [e.file for e in added]
    for e in added:
        m = FILE_RE.fullmatch(e.file)
        assert m and m.group(1) == e.record.name
        assert (root / e.file).read_bytes() == render_record(e.record)
    assert (root / "manifest.json").read_bytes() == (
        b'{"version":1,"files":["' + files[0].encode() + b'","' + files[1].encode() + b'"]}'
    )
    assert (root / "MEMORY.md").read_bytes() == (
        f"- [alpha]({files[0]}) - about alpha\n- [beta]({files[1]}) - second one\n".encode()
    )
    assert store.records() == (a, b)
    assert store.catalog() == (root / "MEMORY.md").read_text()
    assert MemoryStore(store.workspace).entries() == added
    # Nothing but the set, its index, the history (SPEC §6) and the lock's side files.
    assert set(snapshot(root)) == {*files, "manifest.json", "MEMORY.md", "history"}
    assert os.listdir(root / "history") == ["journal.jsonl"]


def test_extend_keeps_order_and_fresh_ids(store: MemoryStore) -> None:
    store.extend([rec("a")])
    store.extend([rec("b"), rec("c")])
    assert [r.name for r in store.records()] == ["a", "b", "c"]
    store.forget(["a"])
    again = store.extend([rec("a")])
    assert [r.name for r in store.records()] == ["b", "c", "a"]
    assert again[0].file not in {e.file for e in store.entries()[:2]}


def test_extend_refuses_existing_and_duplicate_names(store: MemoryStore, root: Path) -> None:
    store.extend([rec("a"), rec("b")])
    before = snapshot(root)
    with pytest.raises(MemoryStoreError, match="already holds a record named 'b'"):
        store.extend([rec("c"), rec("b", body="other")])
    with pytest.raises(MemoryStoreError, match="'c' appears twice"):
        store.extend([rec("c"), rec("c", body="other")])
    with pytest.raises(MemoryStoreError, match="expected MemoryRecord"):
        store.extend([{"name": "x"}])  # type: ignore[list-item]
    with pytest.raises(MemoryStoreError, match="collection"):
        store.extend(rec("x"))  # type: ignore[arg-type]
    assert snapshot(root) == before


def test_extend_nothing_is_a_noop(store: MemoryStore, root: Path) -> None:
    assert store.extend([]) == ()
    assert not root.exists()


def test_forget(store: MemoryStore, root: Path) -> None:
    added = store.extend([rec("a"), rec("b"), rec("c")])
    store.forget(["a", "c"])
    assert [r.name for r in store.records()] == ["b"]
    assert not (root / added[0].file).exists() and not (root / added[2].file).exists()
    assert (root / "MEMORY.md").read_text() == f"- [b]({added[1].file}) - about b\n"
    store.forget("b")  # one name as a plain string
    assert store.records() == ()
    assert (root / "MEMORY.md").read_bytes() == b""
    assert (root / "manifest.json").read_bytes() == b'{"version":1,"files":[]}'
    store.forget([])  # nothing to do


def test_forget_unknown_name_changes_nothing(store: MemoryStore, root: Path) -> None:
    store.extend([rec("a"), rec("b")])
    before = snapshot(root)
    with pytest.raises(MemoryStoreError, match="no record named 'zzz'"):
        store.forget(["a", "zzz"])
    assert snapshot(root) == before


def test_constructor_validates_bounds(workspace: str) -> None:
    for kwargs in ({"max_index_lines": 0}, {"max_index_bytes": -1}, {"lock_timeout": -1}):
        with pytest.raises(MemoryStoreError):
            MemoryStore(workspace, **kwargs)  # type: ignore[arg-type]


def test_missing_workspace(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "nope")
    assert store.records() == ()
    with pytest.raises(MemoryStoreError, match="workspace directory does not exist"):
        store.extend([rec("a")])


# --- index bounds -----------------------------------------------------------------------


def test_a_set_over_the_index_line_bound_commits_and_the_index_lists_the_newest(
    workspace: str, root: Path
) -> None:
    # Issue 31: the bound shapes MEMORY.md, it never refuses a record.
    store = MemoryStore(workspace, max_index_lines=3)
    store.extend([rec("a"), rec("b")])
    store.extend([rec("c"), rec("d")])
    assert [r.name for r in store.records()] == ["a", "b", "c", "d"]
    entries = store.entries()
    index = (root / "MEMORY.md").read_text()
    assert index == (
        "".join(index_line(e) for e in entries[2:])
        + "<!-- 2 more records are listed only in manifest.json (MEMORY.md is bounded) -->\n"
    )
    assert index.count("\n") == 3


def test_a_set_over_the_index_byte_bound_commits_and_the_index_stays_within_it(
    workspace: str, root: Path
) -> None:
    store = MemoryStore(workspace, max_index_bytes=400)
    store.extend([rec("a")])
    store.extend([rec(f"long-{i}", description="x" * 80) for i in range(5)])
    assert len(store.records()) == 6
    data = (root / "MEMORY.md").read_bytes()
    assert len(data) <= 400
    assert data.endswith(b"(MEMORY.md is bounded) -->\n")
    assert data.startswith(index_line(store.entries()[-2]).encode())  # the newest that fit
    assert b"- [a](" not in data
    # The whole set still fits a bigger bound: the same set, its full catalog.
    assert MemoryStore(workspace).catalog().count("\n") == 6


def test_five_hundred_records_commit_one_by_one(workspace: str, root: Path) -> None:
    # Issue 31: neither MEMORY.md's 4096 bytes nor the manifest's 200 entries refuse one.
    store = MemoryStore(workspace)
    for i in range(0, 500, 50):
        store.extend(
            [
                rec(
                    f"fact-{j}",
                    description=f"A fact of about a hundred characters, number {j:03d}, "
                    "about the pipeline's exports",
                )
                for j in range(i, i + 50)
            ]
        )
    assert len(MemoryStore(workspace).records()) == 500
    assert len((root / "MEMORY.md").read_bytes()) <= 4096
    assert check(workspace).ok


# --- apply_consolidation ----------------------------------------------------------------


def test_consolidation_semantics(store: MemoryStore, root: Path) -> None:
    base = store.extend([rec("a"), rec("b"), rec("c"), rec("d")])
    base_records = [e.record for e in base]
    # Committed by someone else after the plan was made: must be kept.
    MemoryStore(store.workspace).extend([rec("late")])
    merged = rec("ab", body="a and b together")
    new = store.apply_consolidation(
        base_records=base_records,
        additions=[rec("x"), rec("y")],
        source_names=["a", "b", "y"],
        replacements=[merged],
    )
    assert [e.record.name for e in new] == ["x", "ab"]
    assert [r.name for r in store.records()] == ["c", "d", "late", "x", "ab"]
    assert store.records()[-1] == merged
    for e in base[:2]:
        assert not (root / e.file).exists()
    listed = {e.file for e in store.entries()}
    assert {p.name for p in root.glob("*.md")} - {"MEMORY.md"} == listed
    assert store.catalog() == (root / "MEMORY.md").read_text()


def test_consolidation_conflict_changes_nothing(store: MemoryStore, root: Path) -> None:
    base = [e.record for e in store.extend([rec("a"), rec("b"), rec("c")])]
    other = MemoryStore(store.workspace)
    other.forget(["b"])
    before = snapshot(root)
    with pytest.raises(MemoryConflictError, match="memory collection changed during consolidation"):
        store.apply_consolidation(
            base_records=base, source_names=["a", "c"], replacements=[rec("ac")]
        )
    assert snapshot(root) == before
    # A base record changed in content (same name) is a conflict too.
    other.forget(["c"])
    other.extend([rec("c", body="changed")])
    with pytest.raises(MemoryConflictError, match="'c'"):
        store.apply_consolidation(
            base_records=[base[0], base[2]], source_names=["a"], replacements=[rec("a2")]
        )


@pytest.mark.parametrize(
    ("kwargs", "rule"),
    [
        # Empty sources with records is no plan ("nothing to merge" is both empty).
        ({"source_names": []}, "replacements without source_names"),
        ({"source_names": ["a"], "replacements": []}, "source_names without replacements"),
        ({"source_names": ["a", "a"]}, "more than once"),
        ({"source_names": ["zz"]}, "'zz' are not among"),
        ({"source_names": "a"}, "not a string"),
        ({"source_names": ["a"], "additions": [rec("b")]}, "additions repeat base record names"),
        ({"source_names": ["a"], "replacements": [rec("b")]}, "two records named 'b'"),
        ({"source_names": ["a"], "replacements": [rec("z"), rec("z")]}, "'z' appears twice"),
        (
            {"source_names": ["a"], "additions": [rec("z")], "replacements": [rec("z")]},
            "two records named 'z'",
        ),
    ],
)
def test_consolidation_bad_plans_change_nothing(
    store: MemoryStore, root: Path, kwargs: dict[str, Any], rule: str
) -> None:
    base = [e.record for e in store.extend([rec("a"), rec("b")])]
    before = snapshot(root)
    args: dict[str, Any] = {"base_records": base, "replacements": [rec("m")], **kwargs}
    with pytest.raises(MemoryStoreError) as info:
        store.apply_consolidation(**args)
    assert rule in str(info.value)
    assert not isinstance(info.value, MemoryConflictError)  # a bad plan, not a race
    assert snapshot(root) == before


def test_consolidation_addition_clashing_with_concurrent_record(store: MemoryStore) -> None:
    base = [e.record for e in store.extend([rec("a")])]
    MemoryStore(store.workspace).extend([rec("x")])
    with pytest.raises(MemoryConflictError, match="two records named 'x'"):
        store.apply_consolidation(
            base_records=base, additions=[rec("x")], source_names=["a"], replacements=[rec("m")]
        )


# --- bad input on disk --------------------------------------------------------------------

Corrupt = Callable[[Path, list[str]], None]


def _write(path: Path, data: bytes) -> None:
    path.write_bytes(data)


def _record_text(front: str, body: str = "Body.") -> bytes:
    return f"---\n{front}---\n\n{body}\n".encode()


BAD_DISK: dict[str, tuple[Corrupt, str, str]] = {
    "truncated manifest": (
        lambda r, f: _write(r / "manifest.json", (r / "manifest.json").read_bytes()[:-5]),
        "manifest.json",
        "not valid JSON",
    ),
    "non-utf8 manifest": (
        lambda r, f: _write(r / "manifest.json", b'{"version":1,"files":["\xff.md"]}'),
        "manifest.json",
        "not valid UTF-8",
    ),
    "extra key": (
        lambda r, f: _write(r / "manifest.json", b'{"version":1,"files":[],"x":1}'),
        "manifest.json",
        "extra",
    ),
    "version true": (
        lambda r, f: _write(r / "manifest.json", b'{"version":true,"files":[]}'),
        "manifest.json",
        "version must be the JSON number 1",
    ),
    "duplicate file": (
        lambda r, f: _write(
            r / "manifest.json", f'{{"version":1,"files":["{f[0]}","{f[0]}"]}}'.encode()
        ),
        "manifest.json",
        "more than once",
    ),
    "parent path": (
        lambda r, f: _write(r / "manifest.json", b'{"version":1,"files":["../x.md"]}'),
        "manifest.json",
        "not a safe record file name",
    ),
    "reserved name": (
        lambda r, f: _write(r / "manifest.json", b'{"version":1,"files":["NUL.md"]}'),
        "manifest.json",
        "not a safe record file name",
    ),
    "stream name": (
        lambda r, f: _write(r / "manifest.json", b'{"version":1,"files":["a.md:stream"]}'),
        "manifest.json",
        "not a safe record file name",
    ),
    "absolute path": (
        lambda r, f: _write(r / "manifest.json", b'{"version":1,"files":["/tmp/a.md"]}'),
        "manifest.json",
        "not a safe record file name",
    ),
    "missing listed file": (
        lambda r, f: (r / f[1]).unlink(),
        "{1}",
        "listed in manifest.json but missing",
    ),
    "over 200 lines": (
        lambda r, f: _write(
            r / f[0], _record_text("name: a\ndescription: d\ntype: user\n", "x\n" * 200)
        ),
        "{0}",
        "over the 200-line limit",
    ),
    "over 4096 bytes": (
        lambda r, f: _write(
            r / f[0], _record_text("name: a\ndescription: d\ntype: user\n", "x" * 4096)
        ),
        "{0}",
        "over the 4096-byte limit",
    ),
    "extra frontmatter key": (
        lambda r, f: _write(r / f[0], _record_text("name: a\ndescription: d\ntype: user\nx: y\n")),
        "{0}",
        "extra: x",
    ),
    "missing frontmatter key": (
        lambda r, f: _write(r / f[0], _record_text("name: a\ntype: user\n")),
        "{0}",
        "missing: description",
    ),
    "list value": (
        lambda r, f: _write(r / f[0], _record_text("name: a\ndescription: [x]\ntype: user\n")),
        "{0}",
        "must be a string, got list",
    ),
    "mapping value": (
        lambda r, f: _write(r / f[0], _record_text("name: a\ndescription: {x: y}\ntype: user\n")),
        "{0}",
        "must be a string, got dict",
    ),
    "type 1": (
        lambda r, f: _write(r / f[0], _record_text("name: a\ndescription: d\ntype: 1\n")),
        "{0}",
        "unknown type '1'",
    ),
    "python tag": (
        lambda r, f: _write(
            r / f[0],
            _record_text("name: a\ndescription: !!python/object/apply:os.system [x]\ntype: user\n"),
        ),
        "{0}",
        "not valid safe YAML",
    ),
    "unclosed frontmatter": (
        lambda r, f: _write(r / f[0], b"---\nname: a\ndescription: d\ntype: user\n\nBody\n"),
        "{0}",
        "frontmatter is not closed",
    ),
    "non-utf8 record": (
        lambda r, f: _write(
            r / f[0], _record_text("name: a\ndescription: d\ntype: user\n") + b"\xff"
        ),
        "{0}",
        "not valid UTF-8",
    ),
    "bad record name": (
        lambda r, f: _write(
            r / f[0], _record_text("name: ../escape\ndescription: d\ntype: user\n")
        ),
        "{0}",
        "'../escape' is not a lowercase slug",
    ),
    "duplicate record names": (
        lambda r, f: _write(r / f[1], (r / f[0]).read_bytes()),
        "manifest.json",
        "record name 'a' appears twice",
    ),
    "manifest is a directory": (
        lambda r, f: ((r / "manifest.json").unlink(), (r / "manifest.json").mkdir()),
        "manifest.json",
        "",
    ),
}


@pytest.mark.parametrize("case", list(BAD_DISK))
def test_bad_input_on_disk(workspace: str, root: Path, case: str) -> None:
    corrupt, file_fmt, rule = BAD_DISK[case]
    store = MemoryStore(workspace)
    files = [e.file for e in store.extend([rec("a"), rec("b")])]
    corrupt(root, files)
    before = snapshot(root)
    expected_file = str(root / file_fmt.format(*files))
    for op in (
        store.records,
        store.catalog,
        lambda: store.extend([rec("c")]),
        lambda: store.forget(["a"]),
        lambda: store.apply_consolidation(
            base_records=[rec("a")], source_names=["a"], replacements=[rec("m")]
        ),
        lambda: MemoryStore(workspace).records(),  # a fresh instance (no cache)
    ):
        with pytest.raises(MemoryStoreError) as info:
            op()
        message = str(info.value)
        assert message.startswith(expected_file), message
        assert rule in message
        assert snapshot(root) == before, f"{case}: the directory changed"


def test_unreferenced_and_temp_files_are_ignored(store: MemoryStore, root: Path) -> None:
    store.extend([rec("a")])
    (root / "ghost-0123456789abcdef0123456789abcdef.md").write_bytes(b"not even a record")
    (root / ".tmp-0123456789abcdef0123456789abcdef").write_bytes(b"{")
    (root / "notes.txt").write_text("hi")
    assert [r.name for r in store.records()] == ["a"]
    store.extend([rec("b")])
    assert [r.name for r in MemoryStore(store.workspace).records()] == ["a", "b"]


def test_reference_agent_store_loads(workspace: str, root: Path) -> None:
    """A directory as the reference agent writes it: unquoted YAML 1.2 scalars."""
    root.mkdir()
    fid = "0123456789abcdef0123456789abcdef"
    (root / f"no-{fid}.md").write_bytes(
        b"---\nname: no\ndescription: yes\ntype: feedback\n---\n\nnull\n"
    )
    (root / f"one-{fid}.md").write_bytes(b"---\nname: one\ndescription: 1\ntype: user\n---\n\non\n")
    (root / "manifest.json").write_bytes(
        f'{{"version":1,"files":["no-{fid}.md","one-{fid}.md"]}}'.encode()
    )
    got = MemoryStore(workspace).records()
    assert [(r.name, r.description, r.body) for r in got] == [
        ("no", "yes", "null"),
        ("one", "1", "on"),
    ]


def test_changed_record_file_is_reread(store: MemoryStore, root: Path) -> None:
    """The parse cache keys on the file's identity: an in-place edit is seen."""
    (entry,) = store.extend([rec("a")])
    assert store.records()[0].body == "The body of a."
    path = root / entry.file
    path.write_bytes(render_record(rec("a", body="Edited body, a bit longer.")))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert store.records()[0].body == "Edited body, a bit longer."


# --- symlinks ---------------------------------------------------------------------------


def test_memory_dir_symlink_outside_refused(tmp_path: Path, workspace: str, root: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root.symlink_to(outside)
    store = MemoryStore(workspace)
    for op in (store.records, lambda: store.extend([rec("a")])):
        with pytest.raises(MemoryFormatError, match=r"\.memory: is a symlink pointing outside"):
            op()
    assert list(outside.iterdir()) == []


def test_memory_dir_symlink_inside_workspace_allowed(workspace: str, root: Path) -> None:
    real = Path(workspace) / "store-data"
    real.mkdir()
    root.symlink_to(real)
    store = MemoryStore(workspace)
    store.extend([rec("a")])
    assert [r.name for r in MemoryStore(workspace).records()] == ["a"]
    assert (real / "manifest.json").exists()


def test_record_symlink_outside_refused(tmp_path: Path, store: MemoryStore, root: Path) -> None:
    (entry,) = store.extend([rec("a")])
    outside = tmp_path / "secret.md"
    outside.write_bytes(render_record(rec("a")))
    (root / entry.file).unlink()
    (root / entry.file).symlink_to(outside)
    before = snapshot(root)
    for op in (
        store.records,
        lambda: MemoryStore(store.workspace).records(),
        lambda: store.extend([rec("b")]),
    ):
        with pytest.raises(MemoryFormatError, match="is a symlink pointing outside"):
            op()
    assert snapshot(root) == before


def test_record_symlink_inside_allowed(store: MemoryStore, root: Path) -> None:
    (entry,) = store.extend([rec("a")])
    target = root / "a-target-0123456789abcdef0123456789abcdef.md"
    (root / entry.file).rename(target)
    (root / entry.file).symlink_to(target.name)
    assert [r.name for r in MemoryStore(store.workspace).records()] == ["a"]


def test_manifest_symlink_outside_refused(tmp_path: Path, store: MemoryStore, root: Path) -> None:
    store.extend([rec("a")])
    outside = tmp_path / "manifest.json"
    outside.write_bytes((root / "manifest.json").read_bytes())
    (root / "manifest.json").unlink()
    (root / "manifest.json").symlink_to(outside)
    with pytest.raises(MemoryFormatError, match=r"manifest\.json: is a symlink pointing outside"):
        MemoryStore(store.workspace).records()


# --- readers and races ------------------------------------------------------------------


def test_reader_retries_when_a_listed_file_vanishes(store: MemoryStore) -> None:
    """A consolidation committing between the reader's manifest read and its file reads
    deletes files the reader was about to read: it must start over, not fail."""
    base = [e.record for e in store.extend([rec("a"), rec("b"), rec("c")])]

    class Racing(MemoryStore):
        raced = False

        def _load(self, real: str, file: str, present: set[str] | None) -> Any:
            if not self.raced:
                self.raced = True
                MemoryStore(self.workspace).apply_consolidation(
                    base_records=base, source_names=["b", "c"], replacements=[rec("bc")]
                )
            return super()._load(real, file, present)

    reader = Racing(store.workspace)
    assert [r.name for r in reader.records()] == ["a", "bc"]
    assert reader.raced


# --- commit protocol --------------------------------------------------------------------


def test_checkpoints_follow_commit_steps(store: MemoryStore) -> None:
    store.extend([rec("a"), rec("b")])
    seen: list[str] = []
    store._checkpoint = seen.append  # type: ignore[method-assign]
    store.apply_consolidation(
        base_records=store.records(),
        additions=[rec("x")],
        source_names=["a", "b"],
        replacements=[rec("ab")],
    )
    per_record = ["record-created", "record-written", "record-synced", "record-verified"]
    assert seen == [
        "locked",
        "manifest-read",
        *per_record,
        *per_record,
        "dir-synced",
        "index-temp-written",
        "index-replaced",
        "manifest-temp-written",
        "manifest-replaced",
        "commit-dir-synced",
        "journal-appended",
        "old-kept",
        "old-kept",
    ]
    # The two empty-manifest steps belong to a directory's first set only, and an
    # external entry to a change made by another tool.
    first = {"empty-manifest-temp-written", "empty-manifest-replaced", "external-appended"}
    assert set(seen) == set(COMMIT_STEPS) - first


def test_failure_before_commit_point_rolls_back(
    store: MemoryStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.extend([rec("a")])
    before = snapshot(root)
    real_replace = os.replace

    def failing_replace(src: Any, dst: Any) -> None:
        if str(dst).endswith("manifest.json"):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(MemoryStoreError, match=r"rolled back.*No space"):
        store.extend([rec("b")])
    monkeypatch.undo()
    assert snapshot(root) == before  # new record removed, MEMORY.md restored, no temp left
    store.extend([rec("b")])
    assert [r.name for r in store.records()] == ["a", "b"]


def test_record_files_are_created_exclusively(
    store: MemoryStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC §1: a new set never overwrites an old file (O_CREAT|O_EXCL). Forced id clash:
    the commit is refused and the file already at that path keeps its bytes."""
    store.extend([rec("b")])
    fixed = uuid.UUID(int=0xABC)
    monkeypatch.setattr(plan_module, "uuid", SimpleNamespace(uuid4=lambda: fixed))
    taken = root / f"a-{fixed.hex}.md"
    taken.write_bytes(b"someone else's bytes")
    before = snapshot(root)
    with pytest.raises(MemoryStoreError, match=r"rolled back.*File exists"):
        store.extend([rec("a")])
    assert snapshot(root) == before
    assert [r.name for r in store.records()] == ["b"]


def test_lost_lock_abandons_commit(store: MemoryStore, root: Path) -> None:
    """If another agent took the .lock directory from a stalled holder, do not commit."""
    store.extend([rec("a")])
    before = snapshot(root)

    def steal(step: str) -> None:
        if step == "index-replaced":
            os.rename(root / ".lock", root / ".lock.stolen")
            os.mkdir(root / ".lock")

    store._checkpoint = steal  # type: ignore[method-assign]
    with pytest.raises(MemoryStoreError, match="the store lock was lost"):
        store.extend([rec("b")])
    os.rmdir(root / ".lock")  # the "other agent" releases its lock
    os.rmdir(root / ".lock.stolen")
    assert snapshot(root) == before


# --- bounded reads (issue 10 #5) -----------------------------------------------------


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Patch the layout module's os.read to record how many bytes each call returned."""
    from ipymemory.store import layout

    got: list[int] = []
    real_read = os.read

    def counting(fd: int, n: int) -> bytes:
        data = real_read(fd, n)
        got.append(len(data))
        return data

    monkeypatch.setattr(layout.os, "read", counting)
    return got


def _sparse(path: Path, size: int = 1 << 30) -> None:
    path.unlink()
    with open(path, "wb") as f:
        f.truncate(size)


@pytest.mark.parametrize("which", ["manifest", "record", "index"])
def test_a_huge_file_is_refused_before_it_is_read(
    store: MemoryStore, root: Path, monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    from ipymemory.store.maintenance import check

    store.extend([rec("a"), rec("b")])
    target = {
        "manifest": root / "manifest.json",
        "record": root / store.entries()[0].file,
        "index": root / "MEMORY.md",
    }[which]
    _sparse(target)
    reads = _count_reads(monkeypatch)
    if which != "index":  # MEMORY.md is never read to load the set
        with pytest.raises(MemoryFormatError, match=r"is 1073741824 bytes, over the \d+-byte"):
            MemoryStore(store.workspace).records()
    report = check(store.workspace)
    assert any("1073741824 bytes" in p.reason for p in report.errors), report
    # Refused on its size: not one byte of the huge file was read.
    assert sum(reads) < 64 * 1024, sum(reads)


def test_reads_stop_at_the_bound_plus_one_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that grows after its size was checked is still read at most bound+1 bytes."""
    from ipymemory.store import layout

    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    real_fstat = os.fstat
    # The size seen is small (as if checked before a writer appended to it).
    monkeypatch.setattr(
        layout.os,
        "fstat",
        lambda fd: os.stat_result((*real_fstat(fd)[:6], 10, *real_fstat(fd)[7:])),
    )
    reads = _count_reads(monkeypatch)
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(MemoryFormatError, match="grew over the 50-byte limit"):
            layout.read_bounded(fd, 50, "f")
    finally:
        os.close(fd)
    assert sum(reads) == 51
    fd = os.open(path, os.O_RDONLY)
    try:
        assert layout.read_bounded(fd, 100, "f")[0] == b"x" * 100
    finally:
        os.close(fd)
