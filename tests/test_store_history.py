"""The history layer (SPEC §6): the journal, kept files, undo, restore, retention, check."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest
from record_support import rec
from store_support import snapshot

from ipymemory import MemoryConflictError, MemoryStore, MemoryStoreError
from ipymemory.store import reversal
from ipymemory.store.maintenance import check, gc


def journal_lines(root: Path) -> list[dict[str, Any]]:
    """The journal read raw, independently of the store code."""
    path = root / "history" / "journal.jsonl"
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    out = []
    for line in raw.splitlines():
        data = json.loads(line)
        # Sorted keys, one object a line (SPEC §6).
        assert line.decode() == json.dumps(data, sort_keys=True, ensure_ascii=False)
        out.append(data)
    return out


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def store(workspace: str) -> MemoryStore:
    return MemoryStore(workspace)


def test_every_commit_appends_one_entry(store: MemoryStore) -> None:
    root = store.root
    added = store.extend(
        [rec("alpha"), rec("beta")],
        provenance={"alpha": {"query": "Which region?", "files_read": ["data.csv"]}},
        actor={"session": "s1", "notebook": "analysis.ipynb", "cell": {"id": "c7", "count": 12}},
    )
    manifest_1 = (root / "manifest.json").read_bytes()
    (first,) = journal_lines(root)
    assert first["seq"] == 1 and first["op"] == "add" and first["before"] is None
    assert first["after"] == sha(manifest_1)
    assert first["added"] == [
        {"name": e.record.name, "file": e.file, "sha256": sha((root / e.file).read_bytes())}
        for e in added
    ]
    assert first["removed"] == [] and first["undoes"] is None
    assert first["actor"]["notebook"] == "analysis.ipynb" and first["actor"]["pid"] == os.getpid()
    assert first["actor"]["tool"].startswith("ipymemory ")
    assert first["provenance"] == {
        "alpha": {"origin": "manual", "query": "Which region?", "files_read": ["data.csv"]},
        "beta": {"origin": "manual"},
    }
    assert "The body of alpha" not in (root / "history" / "journal.jsonl").read_text()

    store.forget("alpha")
    alpha_file = added[0].file
    assert not (root / alpha_file).exists()
    assert (root / "history" / "files" / alpha_file).read_bytes() == render(added[0])
    store.apply_consolidation(
        base_records=store.records(), source_names=["beta"], replacements=[rec("gamma")]
    )
    lines = journal_lines(root)
    assert [e["seq"] for e in lines] == [1, 2, 3]
    assert [e["op"] for e in lines] == ["add", "forget", "consolidate"]
    assert lines[1]["removed"] == [{"name": "alpha", "file": alpha_file, "kept": True}]
    assert lines[2]["source_names"] == ["beta"]
    assert [a["name"] for a in lines[2]["added"]] == ["gamma"]
    # A hash chain: each entry starts from the set the one before left.
    assert all(b["before"] == a["after"] for a, b in itertools.pairwise(lines))
    assert lines[-1]["after"] == sha((root / "manifest.json").read_bytes())
    # history(): the same entries, newest first.
    assert [e.seq for e in store.history()] == [3, 2, 1]
    assert [e.seq for e in store.history(limit=1)] == [3]
    assert store.history()[2].to_json() == lines[0]
    assert check(store.workspace) == []


def render(entry: Any) -> bytes:
    from ipymemory.store.record import render_record

    return render_record(entry.record)


def test_bad_provenance_is_refused_before_anything_is_written(store: MemoryStore) -> None:
    store.extend([rec("alpha")])
    before = snapshot(store.root)
    with pytest.raises(MemoryStoreError, match="does not add"):
        store.extend([rec("beta")], provenance={"other": {"query": "q"}})
    with pytest.raises(MemoryStoreError, match="JSON data"):
        store.extend([rec("beta")], actor={"cell": object()})
    with pytest.raises(MemoryStoreError, match="over the journal line's budget"):
        store.extend([rec("beta")], provenance={"beta": {"files_read": ["x" * 600_000]}})
    assert snapshot(store.root) == before


def test_undo_brings_records_back_byte_identical(store: MemoryStore) -> None:
    root = store.root
    store.extend([rec("alpha", body="  Alpha\twith  spaces  "), rec("beta")])
    old = {e.record.name: (root / e.file).read_bytes() for e in store.entries()}
    store.forget(["alpha"])
    merged = store.apply_consolidation(
        base_records=store.records(),
        additions=[rec("delta")],
        source_names=["beta"],
        replacements=[rec("beta-gamma")],
    )
    assert [r.name for r in store.records()] == ["delta", "beta-gamma"]

    entry = store.undo(3)  # the consolidation: beta back, its additions leave
    assert entry.op == "undo" and entry.undoes == 3 and entry.seq == 4
    assert [r.name for r in store.records()] == ["beta"]
    assert {a.file for a in store.history()[0].removed} == {e.file for e in merged}
    store.undo(2)  # the forget: alpha back
    names = {e.record.name: e for e in store.entries()}
    assert set(names) == {"alpha", "beta"}
    for name, entry_ in names.items():
        assert (root / entry_.file).read_bytes() == old[name]  # byte-identical
    assert names["alpha"].file not in {a["file"] for a in journal_lines(root)[0]["added"]}
    assert check(store.workspace) == []


def test_undo_that_is_not_clean_is_refused_and_writes_nothing(store: MemoryStore) -> None:
    store.extend([rec("alpha")])
    store.forget("alpha")
    store.extend([rec("alpha", body="another alpha")])  # the name is taken again
    before = snapshot(store.root)
    with pytest.raises(MemoryConflictError, match="'alpha' is now held by another record"):
        store.undo(2)
    assert snapshot(store.root) == before
    # An added record since replaced cannot leave.
    store.apply_consolidation(
        base_records=store.records(), source_names=["alpha"], replacements=[rec("omega")]
    )
    before = snapshot(store.root)
    with pytest.raises(MemoryConflictError, match="since been replaced or removed"):
        store.undo(3)
    # A kept file gone (pruned): refused too.
    kept = store.root / "history" / "files"
    for p in kept.iterdir():
        p.unlink()
    before = snapshot(store.root)
    with pytest.raises(MemoryConflictError, match="no longer kept"):
        store.undo(4)
    assert snapshot(store.root) == before
    with pytest.raises(MemoryStoreError, match="no history entry #99"):
        store.undo(99)


def test_restore_makes_the_set_exactly_the_set_after_an_entry(store: MemoryStore) -> None:
    store.extend([rec("alpha"), rec("beta")])
    at_1 = store.records()
    store.forget("alpha")
    store.extend([rec("gamma")])
    store.apply_consolidation(
        base_records=store.records(), source_names=["beta", "gamma"], replacements=[rec("bg")]
    )
    entry = store.restore(1)
    assert entry.op == "restore" and entry.restores == 1
    assert sorted(store.records(), key=lambda r: r.name) == sorted(at_1, key=lambda r: r.name)
    store.restore(4)
    assert [r.name for r in store.records()] == ["bg"]
    assert check(store.workspace) == []


def test_a_torn_last_line_is_cut_by_the_next_writer(store: MemoryStore) -> None:
    store.extend([rec("alpha")])
    journal = store.root / "history" / "journal.jsonl"
    good = journal.read_bytes()
    journal.write_bytes(good + b'{"seq": 2, "op": "ad')
    report = check(store.workspace)
    assert report.ok and any("incomplete" in p.reason for p in report)
    assert [e.seq for e in store.history()] == [1]
    store.extend([rec("beta")])
    lines = journal_lines(store.root)
    assert [e["seq"] for e in lines] == [1, 2]
    assert journal.read_bytes().startswith(good)
    assert check(store.workspace) == []


def test_a_change_not_ours_becomes_an_external_entry(store: MemoryStore) -> None:
    root = store.root
    store.extend([rec("alpha"), rec("beta")])
    alpha = store.entries()[0].file
    # Another tool (the reference agent) removes alpha and adds its own record.
    theirs = "zeta-0123456789abcdef0123456789abcdef.md"
    (root / theirs).write_bytes(render_bytes("zeta"))
    files = [e.file for e in store.entries()[1:]] + [theirs]
    (root / "manifest.json").write_bytes(
        json.dumps({"version": 1, "files": files}, separators=(",", ":")).encode()
    )
    (root / alpha).unlink()
    assert any("external" in p.reason for p in check(store.workspace))
    store.extend([rec("gamma")])
    ext, add = store.history()[1], store.history()[0]
    assert ext.op == "external" and ext.seq == 2 and add.seq == 3
    assert [(a.name, a.file) for a in ext.added] == [("zeta", theirs)]
    assert ext.added[0].sha256 == sha((root / theirs).read_bytes())
    assert [(r.name, r.kept) for r in ext.removed] == [("alpha", False)]
    assert ext.after == add.before
    assert check(store.workspace) == []


def render_bytes(name: str) -> bytes:
    from ipymemory.store.record import render_record

    return render_record(rec(name))


def test_a_store_without_a_journal_gets_a_baseline(store: MemoryStore) -> None:
    store.extend([rec("alpha")])
    (store.root / "history" / "journal.jsonl").unlink()
    store.extend([rec("beta")])
    base, add = store.history()[::-1]
    assert base.op == "external" and [a.name for a in base.added] == ["alpha"]
    assert add.op == "add" and add.before == base.after


def test_gc_prunes_by_age_and_size_never_what_the_newest_entries_need(
    store: MemoryStore,
) -> None:
    kept = store.root / "history" / "files"
    store.extend([rec("old-0"), rec("old-1"), rec("old-2")])
    store.forget(["old-0"])
    store.forget(["old-1"])
    # Entries 2 and 3 are among the newest 50: nothing is pruned, whatever the limits.
    assert gc(store.workspace, retention_days=0, retention_bytes=0) == []
    assert len(list(kept.iterdir())) == 2
    for i in range(50):
        store.extend([rec(f"n-{i}")])
    # Now they are not; by size, the oldest goes first until the total fits.
    size = next(kept.iterdir()).stat().st_size
    removed = gc(store.workspace, retention_bytes=size)
    assert len(removed) == 1 and "old-0-" in removed[0]
    assert removed[0].startswith("history/files/")
    # By age: everything older than 0 days.
    store.forget(["old-2"])  # newest: protected
    removed = gc(store.workspace, retention_days=0)
    assert len(removed) == 1 and "old-1-" in removed[0]
    assert [p.name.split("-")[1] for p in kept.iterdir()] == ["2"]
    assert check(store.workspace).ok


def test_gc_finishes_an_interrupted_move(store: MemoryStore) -> None:
    store.extend([rec("alpha"), rec("beta")])
    alpha = store.entries()[0].file
    store.forget("alpha")
    kept = store.root / "history" / "files" / alpha
    os.rename(kept, store.root / alpha)  # as if killed before the move
    assert any("next commit moves it" in p.reason for p in check(store.workspace))
    assert gc(store.workspace, stale_seconds=0) == []
    assert kept.exists() and not (store.root / alpha).exists()


def test_check_reports_a_broken_journal(store: MemoryStore) -> None:
    store.extend([rec("alpha")])
    store.forget("alpha")
    journal = store.root / "history" / "journal.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    second = json.loads(lines[1])
    second["seq"] = 5
    journal.write_bytes(lines[0] + b"not json\n" + json.dumps(second).encode() + b"\n")
    for p in (store.root / "history" / "files").iterdir():
        p.unlink()
    report = check(store.workspace)
    reasons = [p.reason for p in report]
    assert not report.ok
    assert any("line 2:" in r for r in reasons)
    assert any("seq must go up by one" in r for r in reasons)
    assert any("undo of #5 cannot bring 'alpha' back" in r for r in reasons)


def test_a_broken_history_directory_refuses_commits_and_is_reported(store: MemoryStore) -> None:
    store.extend([rec("alpha")])
    history = store.root / "history"
    for p in sorted(history.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    history.rmdir()
    history.write_text("not a directory")
    before = snapshot(store.root)
    with pytest.raises(MemoryStoreError, match="history"):
        store.extend([rec("beta")])
    assert snapshot(store.root) == before
    report = check(store.workspace)
    assert not report.ok and any("not a directory" in p.reason for p in report.errors)
    assert [r.name for r in store.records()] == ["alpha"]  # reading is not affected


def test_a_garbled_last_line_does_not_stop_commits(store: MemoryStore) -> None:
    store.extend([rec("alpha")])
    journal = store.root / "history" / "journal.jsonl"
    journal.write_bytes(journal.read_bytes() + b"garbage that is not json\n")
    assert not check(store.workspace).ok  # reported as a bad line
    store.extend([rec("beta")])
    assert [e.seq for e in store.history()] == [2, 1]
    assert store.history()[0].before == store.history()[1].after


def test_preview_is_the_commit_s_own_plan(store: MemoryStore) -> None:
    store.extend([rec("alpha"), rec("beta")])
    store.forget("alpha")
    store.apply_consolidation(
        base_records=store.records(), source_names=["beta"], replacements=[rec("gamma")]
    )
    before = snapshot(store.root)
    undo_3 = store.preview("undo", 3)
    assert (undo_3.leaving, undo_3.returning, undo_3.conflict) == (("gamma",), ("beta",), None)
    restore_1 = store.preview("restore", 1)
    assert sorted(restore_1.returning) == ["alpha", "beta"] and restore_1.leaving == ("gamma",)
    store.extend([rec("alpha", body="a new alpha")])
    refused = store.preview("undo", 2)
    assert refused.conflict is not None and "'alpha' is now held" in refused.conflict
    assert snapshot(store.root) != before  # (the extend above) ...
    middle = snapshot(store.root)
    store.preview("undo", 2)
    assert snapshot(store.root) == middle  # ... a preview writes nothing
    with pytest.raises(MemoryConflictError) as info:
        store.undo(2)
    assert str(info.value) == refused.conflict
    store.undo(3)
    assert sorted(r.name for r in store.records()) == ["alpha", "beta"]


# --- issue 19: everything that can fail fails before the commit point (item 3) ---------


@pytest.mark.parametrize("where", ["provenance", "actor"])
def test_text_that_does_not_encode_refuses_the_commit_before_its_commit_point(
    store: MemoryStore, where: str
) -> None:
    """A lone surrogate passed the (ASCII JSON) check, failed the journal write after the
    commit point: the set changed without an entry and the replaced file was left for gc
    to delete. Now the entry is made first, and the commit is refused."""
    store.extend([rec("alpha")])
    before = snapshot(store.root)
    meta: dict[str, Any] = (
        {"provenance": {"alpha": {"query": "half an emoji: \ud83d"}}}
        if where == "provenance"
        else {"actor": {"notebook": "caf\udce9.ipynb"}}
    )
    with pytest.raises(MemoryStoreError, match=r"encodable as UTF-8.*nothing changed"):
        store.apply_consolidation(
            base_records=store.records(),
            source_names=["alpha"],
            replacements=[rec("alpha", body="Alpha, merged.")],
            **meta,
        )
    assert snapshot(store.root) == before
    assert check(store.workspace) == []


def test_an_interrupt_after_the_commit_point_still_keeps_the_replaced_files(
    store: MemoryStore,
) -> None:
    """Ctrl-C (any exception) right after the journal line: the replaced file still goes
    into history/files/, so gc cannot delete it and undo still works."""
    store.extend([rec("alpha")])
    old = store.entries()[0].file

    def interrupt(step: str) -> None:
        if step == "journal-appended":
            raise KeyboardInterrupt

    store._checkpoint = interrupt  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        store.forget(["alpha"])
    store._checkpoint = lambda step: None  # type: ignore[method-assign]
    assert store.records() == ()
    assert (store.root / "history" / "files" / old).is_file()
    assert not (store.root / old).exists()
    assert gc(store.workspace, stale_seconds=0) == []
    store.undo(2)
    assert [r.name for r in store.records()] == ["alpha"]


# --- item 8: every commit checks the new set as a whole ------------------------------


def test_undo_decides_a_name_clash_by_the_record_in_the_kept_file(store: MemoryStore) -> None:
    """The journal says the kept file holds 'alpha'; the file itself holds 'beta', a name
    the set has (a journal line without the file's hash, so no bytes check): undo used to
    commit two records named 'beta', and then no command could read the set."""
    store.extend([rec("alpha")])
    store.forget(["alpha"])
    store.extend([rec("beta")])
    kept = next((store.root / "history" / "files").iterdir())
    kept.write_bytes(kept.read_bytes().replace(b"name: alpha", b"name: beta"))
    journal = store.root / "history" / "journal.jsonl"
    lines = [json.loads(line) for line in journal.read_bytes().splitlines()]
    del lines[0]["added"][0]["sha256"]
    journal.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
    before = snapshot(store.root)
    with pytest.raises(MemoryConflictError, match="'beta' is now held by another record"):
        store.undo(2)
    assert snapshot(store.root) == before
    assert [r.name for r in store.records()] == ["beta"]
    assert store.preview("undo", 2).conflict is not None


def test_the_commit_itself_refuses_a_set_with_a_name_twice(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever the planner says (here a planner that checks no clashes), the commit
    checks the new set as a whole before its commit point (SPEC §4 step 3)."""
    store.extend([rec("alpha")])
    store.forget(["alpha"])
    store.extend([rec("alpha", body="Another alpha.")])
    blind = reversal._bring_back

    def no_clash_check(files: Any, wanted: Any, *rest: Any) -> Any:
        return blind(files, wanted, (), *rest[1:])  # sees no record staying

    monkeypatch.setattr(reversal, "_bring_back", no_clash_check)
    before = snapshot(store.root)
    with pytest.raises(MemoryConflictError, match="two records named 'alpha'"):
        store.undo(2)
    assert snapshot(store.root) == before


# --- item 10: undo and restore plan on an up-to-date journal -------------------------


@pytest.mark.parametrize("op", ["undo", "restore"])
def test_undo_and_restore_right_after_an_external_edit(store: MemoryStore, op: str) -> None:
    """Another tool takes 'alpha' out of the manifest (its file stays in .memory/). Undo
    and restore used to refuse ("no longer kept") until an unrelated commit wrote the
    `external` entry; now they record it first, then plan."""
    store.extend([rec("alpha"), rec("beta")])
    manifest = store.root / "manifest.json"
    data = json.loads(manifest.read_text())
    alpha = data["files"].pop(0)
    manifest.write_text(json.dumps(data))
    assert [r.name for r in store.records()] == ["beta"]
    preview = store.preview("restore", 1)
    assert preview.conflict is None and preview.returning == ("alpha",)
    assert (store.root / alpha).exists()  # the preview wrote nothing
    if op == "restore":
        entry = store.restore(1)
    else:
        # The external entry is #2 once recorded: undoing it brings alpha back.
        assert store.preview("undo", 2).returning == ("alpha",)
        entry = store.undo(2)
    assert [e.op for e in store.history()] == [op, "external", "add"]
    assert entry.seq == 3 and sorted(r.name for r in store.records()) == ["alpha", "beta"]
    assert (store.root / "history" / "files" / alpha).is_file()
    assert check(store.workspace) == []


# --- item 12: an undo run twice is refused, not an empty entry ------------------------


def test_an_undo_run_twice_is_refused_with_nothing_to_undo(store: MemoryStore) -> None:
    store.extend([rec("alpha"), rec("beta")])
    store.forget(["alpha"])
    store.undo(2)
    entries = store.history()
    before = snapshot(store.root)
    with pytest.raises(MemoryConflictError, match="undo #2: nothing to undo"):
        store.undo(2)
    with pytest.raises(MemoryConflictError, match="restore #3: nothing to restore"):
        store.restore(3)
    assert snapshot(store.root) == before and store.history() == entries
    # The preview says so without a conflict: there is simply nothing to do.
    preview = store.preview("undo", 2)
    assert preview.conflict is None and preview.leaving == preview.returning == ()
