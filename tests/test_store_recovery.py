"""A missing or unreadable manifest (issue 10 finding 1, SPEC §6 ``recover``).

The set is then unknown: reading it is an error, never an empty set; ``check`` says so;
``gc`` and ``reindex`` refuse (they would otherwise delete or hide every record) and
point to ``recover``, which rebuilds the manifest without deleting anything.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from record_support import rec

from ipymemory import MemoryRecoveryNeeded, MemoryStore, MemoryStoreError
from ipymemory.store.maintenance import check, gc, reindex

RECORDS = (rec("alpha"), rec("beta", body="Beta's body.\n\n  indented"), rec("gamma"))


def tree(root: Path) -> dict[str, object]:
    """Everything under ``root`` (lock files aside): file bytes, directories, links."""
    out: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            rel = str(path.relative_to(root))
            if rel.startswith(".lock"):
                continue
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = "dir"
            elif path.is_file() and path.stat().st_size > 1 << 20:
                out[rel] = ("big", path.stat().st_size)  # the sparse 1 GB manifest
            elif path.is_file():
                out[rel] = path.read_bytes()
            else:
                out[rel] = "special"
    return out


@pytest.fixture
def store(workspace: str) -> MemoryStore:
    s = MemoryStore(workspace)
    s.extend(RECORDS)
    return s


def _refuses_everything(store: MemoryStore) -> None:
    """Reads raise, check reports an error, gc/reindex/extend refuse; nothing changes."""
    before = tree(store.root)
    with pytest.raises(MemoryStoreError) as info:
        store.records()
    assert "recover" in str(info.value)
    report = check(store.workspace)
    assert not report.ok
    assert any("recover" in p.reason for p in report.errors), report
    assert not any(p.leftover for p in report if p.file.endswith(".md")), report
    for op in (
        lambda: gc(store.workspace, stale_seconds=0),
        lambda: reindex(store.workspace),
        lambda: store.extend([rec("delta")]),
    ):
        with pytest.raises(MemoryStoreError, match="recover"):
            op()
        assert tree(store.root) == before
    assert store.recover(dry_run=True).needed
    assert tree(store.root) == before, "a dry run writes nothing"


def test_missing_manifest_is_an_error_not_an_empty_set(store: MemoryStore) -> None:
    (store.root / "manifest.json").unlink()
    with pytest.raises(MemoryRecoveryNeeded, match=r"manifest\.json: missing, yet .* 3 record"):
        store.records()
    _refuses_everything(store)
    files = [e.file for e in store.history()[0].added]
    plan = store.recover(dry_run=True)
    assert plan.source == "journal" and list(plan.files) == files and not plan.applied
    assert "would rebuild the set from the journal" in str(plan)
    done = store.recover()
    assert done.applied and done.names == ("alpha", "beta", "gamma")
    assert store.records() == RECORDS  # the journal knows the order too
    assert check(store.workspace) == []
    assert not store.recover().needed  # the second time there is nothing to do
    last = store.history()[0]
    assert last.op == "recover" and last.before is None and last.added == ()
    assert last.seq == 2 and last.removed == ()


def test_a_workspace_that_never_had_memory_has_no_records(tmp_path: Path) -> None:
    for setup in (
        lambda root: None,  # no .memory at all
        lambda root: root.mkdir(),  # an empty one
        lambda root: (root.mkdir(), (root / "MEMORY.md").write_text("")),
        lambda root: (root.mkdir(), (root / ".tmp-0123").write_text("{")),
    ):
        ws = tmp_path / f"ws-{len(list(tmp_path.iterdir()))}"
        ws.mkdir()
        setup(ws / ".memory")
        store = MemoryStore(ws)
        assert store.records() == ()
        assert check(ws).ok
        assert gc(ws) == []
        assert not store.recover(dry_run=True).needed
        store.extend([rec("first")])
        assert [r.name for r in store.records()] == ["first"]


def _sparse(path: Path) -> None:
    with open(path, "wb") as f:
        f.truncate(1 << 30)


def _corruptions() -> dict[str, Callable[[Path], None]]:
    def replace_with(make: Callable[[Path], None]) -> Callable[[Path], None]:
        def apply(root: Path) -> None:
            (root / "manifest.json").unlink()
            make(root / "manifest.json")

        return apply

    return {
        "deleted": lambda root: (root / "manifest.json").unlink(),
        "empty": lambda root: (root / "manifest.json").write_bytes(b""),
        "truncated": lambda root: (root / "manifest.json").write_bytes(b'{"version":1,"fi'),
        "not-utf8": lambda root: (root / "manifest.json").write_bytes(b"\xff\xfe{}"),
        "wrong-version": lambda root: (root / "manifest.json").write_bytes(
            b'{"version":2,"files":[]}'
        ),
        "a-directory": replace_with(lambda p: p.mkdir()),
        "a-fifo": replace_with(lambda p: os.mkfifo(p)),
        "dangling-symlink": replace_with(lambda p: p.symlink_to("nowhere.json")),
        "symlink-outside": replace_with(lambda p: p.symlink_to("/etc/hostname")),
        "1-gb-sparse": replace_with(_sparse),
    }


@pytest.mark.parametrize("journal", ["journal", "no-journal"])
@pytest.mark.parametrize("how", list(_corruptions()))
def test_recover_from_every_broken_manifest(store: MemoryStore, how: str, journal: str) -> None:
    _corruptions()[how](store.root)
    if journal == "no-journal":
        (store.root / "history" / "journal.jsonl").unlink()
    _refuses_everything(store)
    before = tree(store.root)
    plan = store.recover()
    assert plan.applied and plan.source == ("journal" if journal == "journal" else "files")
    assert sorted(store.records(), key=lambda r: r.name) == list(RECORDS)
    assert check(store.workspace).ok
    # Nothing deleted: every path there before is still there (a manifest that could not
    # be replaced was moved aside under a name of its own, with its contents).
    after = tree(store.root)
    for rel, value in before.items():
        if rel == "manifest.json" or rel.startswith("manifest.json/"):
            continue
        if rel == "history/journal.jsonl":  # append-only: one recover line more
            assert isinstance(value, bytes) and after[rel].startswith(value)  # type: ignore[union-attr]
            continue
        assert after.get(rel) == value, rel
    if plan.set_aside is not None:
        assert how in ("a-directory", "a-fifo")
        assert plan.set_aside in after and plan.set_aside.startswith("manifest.json.")


def test_recover_a_listed_file_missing_or_invalid(store: MemoryStore) -> None:
    alpha, beta, _gamma = (e.file for e in store.entries())
    (store.root / alpha).unlink()
    (store.root / beta).write_bytes(b"---\nname: beta\n---\n")
    _refuses_everything(store)
    plan = store.recover()
    assert plan.source == "manifest" and plan.missing == (alpha,)
    assert [f for f, _ in plan.skipped] == [beta]
    assert [r.name for r in store.records()] == ["gamma"]
    assert (store.root / beta).exists(), "an invalid file is reported, never deleted"


def test_recover_from_files_keeps_the_newest_per_name(store: MemoryStore) -> None:
    old = {e.record.name: e.file for e in store.entries()}
    store.apply_consolidation(
        base_records=store.records(),
        source_names=["alpha"],
        replacements=[rec("alpha", body="Alpha, newer.")],
    )
    # A crash left the replaced file behind (as if step 7 never ran).
    (store.root / old["alpha"]).write_bytes(
        (store.root / "history" / "files" / old["alpha"]).read_bytes()
        if (store.root / "history" / "files" / old["alpha"]).exists()
        else (b"---\nname: alpha\ndescription: about alpha\ntype: project\n---\n\nold\n")
    )
    past = time.time() - 100
    os.utime(store.root / old["alpha"], (past, past))
    (store.root / "notes.md").write_text("not a record")
    (store.root / "manifest.json").unlink()
    for journal in store.root.glob("history/journal.jsonl"):
        journal.unlink()  # the journal gone too: only the files are left
    plan = store.recover()
    assert plan.source == "files"
    assert store.get("alpha").body == "Alpha, newer."
    skipped = dict(plan.skipped)
    assert "older file of 'alpha'" in skipped[old["alpha"]]
    assert "notes.md" in skipped
    assert (store.root / old["alpha"]).exists() and (store.root / "notes.md").exists()


def test_cli_list_fails_and_recover_rebuilds(store: MemoryStore) -> None:
    """Through the command line: `list` is an error (exit 1, not an empty list), `gc` and
    `reindex` refuse, `recover --dry-run` writes nothing, `recover` rebuilds."""
    import io
    import json

    from ipymemory.cli import main

    def run(*argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = main(["--dir", str(store.workspace), *argv], stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    (store.root / "manifest.json").unlink()
    before = tree(store.root)
    for argv in (["list"], ["gc"], ["reindex"], ["check"]):
        code, out, err = run(*argv)
        assert code == 1 and "recover" in out + err, (argv, out, err)
    assert tree(store.root) == before
    code, out, _ = run("recover", "--dry-run")
    assert code == 0 and "would rebuild the set from the journal" in out
    assert tree(store.root) == before
    code, out, _ = run("--json", "recover")
    assert code == 0 and json.loads(out)["applied"] is True
    code, out, _ = run("list")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == [
        "alpha",
        "beta",
        "gamma",
    ]


def test_recover_over_the_index_bounds_rebuilds_the_set_and_bounds_the_index(
    store: MemoryStore,
) -> None:
    # Issue 31: the bounds shape MEMORY.md; they refuse no set, a recovered one neither.
    names = [r.name for r in store.records()]
    (store.root / "manifest.json").unlink()
    (store.root / "manifest.json").mkdir()  # recover moves this aside
    small = MemoryStore(store.workspace, max_index_lines=2)
    assert small.recover().applied
    assert [r.name for r in small.records()] == names
    index = (store.root / "MEMORY.md").read_text()
    assert index.count("\n") <= 2 and index.endswith("(MEMORY.md is bounded) -->\n")


def test_an_unreadable_manifest_is_not_an_empty_set(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EACCES on the manifest (chmod 000 does not stop root, who runs CI here, so the
    refusal is injected at the open): an error pointing to recover, never an empty set."""
    import errno

    from ipymemory.store import layout

    real_open = os.open

    def denied(path: str, *args: object, **kwargs: object) -> int:
        if str(path).endswith("manifest.json"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(layout.os, "open", denied)
    with pytest.raises(MemoryRecoveryNeeded, match=r"cannot open .*Permission denied.*recover"):
        MemoryStore(store.workspace).records()
    before = tree(store.root)
    with pytest.raises(MemoryRecoveryNeeded):
        gc(store.workspace, stale_seconds=0)
    assert not check(store.workspace).ok
    assert tree(store.root) == before


def test_a_journal_alone_is_enough_to_know_a_set_existed(store: MemoryStore) -> None:
    store.forget(["alpha", "beta", "gamma"])  # every record file now in history/files/
    (store.root / "manifest.json").unlink()
    assert not list(store.root.glob("*-*.md"))
    with pytest.raises(MemoryRecoveryNeeded, match="a history journal"):
        store.records()
    plan = store.recover()
    assert plan.source == "journal" and plan.files == () and store.records() == ()
    store.undo(2)  # the forget, undone: every record comes back from history/files/
    assert sorted(store.records(), key=lambda r: r.name) == list(RECORDS)


def test_recover_brings_a_listed_file_back_from_history(store: MemoryStore) -> None:
    alpha = store.entries()[0].file
    kept = store.root / "history" / "files"
    kept.mkdir()
    os.rename(store.root / alpha, kept / alpha)  # listed, yet moved away
    _refuses_everything(store)
    plan = store.recover()
    assert plan.source == "manifest" and plan.from_history == (alpha,) and plan.missing == ()
    assert store.records() == RECORDS and (store.root / alpha).exists()
    assert not (kept / alpha).exists()
    assert check(store.workspace) == []


# --- issue 19 item 1: every valid record file is accounted for; gc never destroys one ---


def _kill_at_commit_point(ws: str, record: dict[str, str]) -> None:
    """A real process commits ``record`` and is SIGKILLed right after the commit point,
    before its journal line (SPEC §6: the journal never saw that commit)."""
    import json
    import signal
    import subprocess
    import sys

    child = str(Path(__file__).with_name("crash_child.py"))

    def run(kill_at: int | None, log: Path) -> int:
        spec = {"workspace": ws, "op": "extend", "records": [record], "kill_at": kill_at}
        spec["log"] = str(log)
        done = subprocess.run([sys.executable, child, json.dumps(spec)], timeout=60)
        return done.returncode

    probe = Path(ws).parent / "probe"
    shutil.copytree(ws, probe / "ws")
    spec_ws = ws
    ws = str(probe / "ws")
    assert run(None, probe / "steps.log") == 0  # the steps of the same commit, in a copy
    ws = spec_ws
    steps = (probe / "steps.log").read_text().split()
    log = Path(ws).parent / "steps.log"
    assert run(steps.index("commit-dir-synced"), log) == -signal.SIGKILL
    assert log.read_text().split()[-1] == "commit-dir-synced"


def test_recover_accounts_for_a_commit_the_journal_never_saw(store: MemoryStore) -> None:
    """The reported case: a commit killed between its commit point and its journal line,
    then the manifest lost. recover keeps that record (saying why), and gc after it
    destroys nothing."""
    delta = {"name": "delta", "type": "user", "description": "about delta", "body": "D."}
    _kill_at_commit_point(str(store.workspace), delta)
    assert [r.name for r in store.records()][-1] == "delta"
    assert [e.op for e in store.history()] == ["add"]  # no line for that commit
    (store.root / "manifest.json").unlink()
    plan = store.recover(dry_run=True)
    assert plan.source == "journal" and plan.names == ("alpha", "beta", "gamma", "delta")
    why = dict(zip(plan.names, plan.reasons, strict=True))
    assert why["alpha"] == "in the journal's last set"
    assert "the journal never saw" in why["delta"] and "delta" in str(plan)
    assert plan.to_json()["reasons"] == list(plan.reasons)
    done = store.recover()
    assert [r.name for r in store.records()] == ["alpha", "beta", "gamma", "delta"]
    assert [a.name for a in store.history()[0].added] == ["delta"]  # the recover entry
    removed = gc(store.workspace, stale_seconds=0)  # the killed commit's temp files only
    assert removed and all(name.startswith(".tmp-") for name in removed), removed
    assert store.get("delta").body == "D." and done.applied
    assert check(store.workspace).ok


def test_recover_says_why_each_other_record_file_is_left_out(store: MemoryStore) -> None:
    from ipymemory.store.record import render_record

    files = {e.record.name: e.file for e in store.entries()}
    store.forget(["gamma"])
    kept = store.root / "history" / "files" / files["gamma"]
    os.rename(kept, store.root / files["gamma"])  # its move was interrupted
    second = f"alpha-{'1' * 32}.md"  # another file holding a name the journal's set has
    (store.root / second).write_bytes(render_record(rec("alpha", body="Another alpha.")))
    old, new = f"epsilon-{'2' * 32}.md", f"epsilon-{'3' * 32}.md"
    (store.root / old).write_bytes(render_record(rec("epsilon", body="Older.")))
    (store.root / new).write_bytes(render_record(rec("epsilon", body="Newer.")))
    os.utime(store.root / old, (1, 1))
    torn = f"zeta-{'4' * 32}.md"
    (store.root / torn).write_bytes(b"---\nname: zeta\n")
    (store.root / "manifest.json").unlink()

    plan = store.recover()
    assert plan.names == ("alpha", "beta", "epsilon") and new in plan.files
    out = dict(plan.skipped)
    assert set(out) == {files["gamma"], second, old, torn}
    assert "left the set in #2 (forget)" in out[files["gamma"]]
    assert "a second record named 'alpha'" in out[second]
    assert "an older file of 'epsilon'" in out[old]
    assert "zeta" in out[torn] or torn in out[torn]
    assert store.get("epsilon").body == "Newer."
    # gc then keeps every valid record file: the forgotten one goes back where the
    # journal says it is, the others into history/files/; only the torn file goes.
    removed = gc(store.workspace, stale_seconds=0)
    assert removed == [torn] and sorted(removed.kept) == sorted([second, old])
    history_files = store.root / "history" / "files"
    for name in (files["gamma"], second, old):
        assert (history_files / name).is_file(), name
    assert check(store.workspace).ok


def test_gc_after_a_manifest_emptied_by_hand_destroys_no_record(store: MemoryStore) -> None:
    """Was: every record file deleted. Now the change is journalled as `external`, the
    records move into history/files/, and undo brings them back."""
    before = {e.file: (store.root / e.file).read_bytes() for e in store.entries()}
    (store.root / "manifest.json").write_text('{"version": 1, "files": []}')
    for file in before:
        os.utime(store.root / file, (1, 1))  # old enough for any age limit
    assert gc(store.workspace, stale_seconds=0) == []
    entry = store.history()[0]
    assert entry.op == "external" and sorted(r.file for r in entry.removed) == sorted(before)
    assert all(r.kept for r in entry.removed)
    for file, data in before.items():
        assert (store.root / "history" / "files" / file).read_bytes() == data
    store.undo(entry.seq)
    assert sorted(r.name for r in store.records()) == ["alpha", "beta", "gamma"]


def test_gc_moves_an_unknown_valid_record_into_history_instead_of_deleting_it(
    store: MemoryStore,
) -> None:
    from ipymemory.store.record import render_record

    stray = f"omega-{'5' * 32}.md"
    data = render_record(rec("omega"))
    (store.root / stray).write_bytes(data)
    os.utime(store.root / stray, (1, 1))  # far past any retention by its own mtime
    removed = gc(store.workspace, stale_seconds=0)
    assert removed == [] and removed.kept == (stray,)
    kept = store.root / "history" / "files" / stray
    assert kept.read_bytes() == data
    # Its retention counts from the move, not from the file's old mtime.
    assert gc(store.workspace, stale_seconds=0) == [] and kept.exists()
    assert gc(store.workspace, retention_days=0) == ["history/files/" + stray]
