"""Crash sweep (SPEC §4, §6): a child process is SIGKILLed at every step of a commit.

For each scenario, a dry run (in a copy of the store) records the exact sequence of
checkpoint calls; then, for each position in that sequence, a fresh copy of the store is
given to a child process (tests/crash_child.py) that kills itself at that position. After
each kill: the store loads, its set is exactly the old or the new one, every listed file is
present and valid, the directory check finds nothing but unreferenced leftovers, and the
next commit succeeds without waiting out the dead child's lock.

The journal (SPEC §6) is checked too: it never claims a commit that did not happen (its
complete lines are the old ones, plus at most this commit's line when the set is the new
one), and after the next commit ``check`` finds it consistent with the set (a cut torn
line, an ``external`` entry for a commit whose line was lost, moves finished).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from record_support import rec
from store_support import listed_files, one_of, snapshot, verify_listed

from ipymemory import MemoryRecord, MemoryRecoveryNeeded, MemoryStore
from ipymemory.store.index import render_index
from ipymemory.store.maintenance import check, gc, reindex
from ipymemory.store.manifest import render_manifest
from ipymemory.store.store import COMMIT_STEPS

CHILD = str(Path(__file__).with_name("crash_child.py"))
# The next commit after a kill must not wait out the 30 s stale window of the dead
# child's lock: it gets this long at most, then MemoryLockTimeout fails the test.
NEXT_COMMIT_LOCK_TIMEOUT = 5.0


@dataclass(frozen=True)
class Scenario:
    name: str
    base: tuple[MemoryRecord, ...]
    op: dict[str, Any]
    # The expected new set, as names in order (records are checked by the dry run).
    new_names: tuple[str, ...]
    extra: dict[str, Any] = field(default_factory=dict)
    # What happens to the store after its base is committed (see _make_base).
    prepare: str = ""


def _base(n: int) -> tuple[MemoryRecord, ...]:
    return tuple(rec(f"base-{i}") for i in range(n))


def _js(records: Sequence[MemoryRecord]) -> list[dict[str, str]]:
    return [r.to_json() for r in records]


def _scenarios() -> list[Scenario]:
    out = []
    for k in (0, 1, 3):
        base = _base(3)
        new = tuple(rec(f"new-{i}", type="user") for i in range(k))
        out.append(
            Scenario(
                f"extend-{k}",
                base,
                {"op": "extend", "records": _js(new)},
                tuple(r.name for r in base + new),
            )
        )
    # The first set of a directory: its empty manifest goes first (SPEC §6: record files
    # without a manifest would read as a lost set).
    first = (rec("first-0"), rec("first-1"))
    out.append(
        Scenario(
            "extend-into-empty",
            (),
            {"op": "extend", "records": _js(first)},
            tuple(r.name for r in first),
        )
    )
    base4 = _base(4)
    merged = rec("merged-0-1", body="base-0 and base-1, merged.")
    out.append(
        Scenario(
            "consolidate-2-of-4",
            base4,
            {
                "op": "consolidate",
                "base": _js(base4),
                "additions": [],
                "source_names": ["base-0", "base-1"],
                "replacements": _js([merged]),
            },
            ("base-2", "base-3", "merged-0-1"),
        )
    )
    # A turn's extraction and its consolidation in ONE manifest swap (SPEC §2).
    added = rec("added", type="feedback")
    out.append(
        Scenario(
            "consolidate-with-addition",
            base4,
            {
                "op": "consolidate",
                "base": _js(base4),
                "additions": _js([added]),
                "source_names": ["base-1", "base-3"],
                "replacements": _js([rec("merged-1-3"), rec("merged-extra")]),
            },
            ("base-0", "base-2", "added", "merged-1-3", "merged-extra"),
        )
    )
    out.append(
        Scenario(
            "forget-1",
            _base(3),
            {"op": "forget", "names": ["base-1"]},
            ("base-0", "base-2"),
        )
    )
    # SPEC §6: undo, restore and recover are commits too, and a change made by another
    # tool is recorded (external-appended) before the commit that finds it.
    history: list[tuple[str, dict[str, Any], tuple[str, ...], str]] = [
        ("undo-forget", {"op": "undo", "seq": 2}, ("base-0", "base-2", "base-1"), "forget-1"),
        ("restore-1", {"op": "restore", "seq": 1}, ("base-1", "base-2", "base-0"), "history"),
        (
            "extend-after-external",
            {"op": "extend", "records": _js([rec("new-0")])},
            ("base-0", "base-1", "new-0"),
            "external",
        ),
        (
            "recover-lost-manifest",
            {"op": "recover"},
            ("base-0", "base-1", "base-2"),
            "lost-manifest",
        ),
    ]
    out += [Scenario(name, _base(3), op, new, prepare=how) for name, op, new, how in history]
    return out


SCENARIOS = _scenarios()


def _make_base(ws: Path, base: Sequence[MemoryRecord], prepare: str = "") -> None:
    ws.mkdir()
    store = MemoryStore(ws)
    store.extend(base)
    root = ws / ".memory"
    if prepare == "forget-1":  # entry 2 forgets base-1: something to undo
        store.forget("base-1")
    elif prepare == "history":  # 2 forgets base-0, 3 adds x: restore 1 brings base-0 back
        store.forget("base-0")
        store.extend([rec("x")])
    elif prepare == "external":  # another tool dropped base-2: the journal is behind
        *keep, dropped = store.entries()
        (root / "manifest.json").write_bytes(render_manifest([e.file for e in keep]))
        (root / "MEMORY.md").write_bytes(render_index(keep, 200, 4096))
        (root / dropped.file).unlink()
    elif prepare == "lost-manifest":
        (root / "manifest.json").unlink()


def _run_child(ws: Path, sc: Scenario, kill_at: int | None, log: Path) -> int:
    spec = {"workspace": str(ws), "kill_at": kill_at, "log": str(log), **sc.op}
    proc = subprocess.run(
        [sys.executable, CHILD, json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(ws),
    )
    if proc.returncode not in (0, -signal.SIGKILL):
        pytest.fail(f"child failed ({proc.returncode}): {proc.stderr}")
    return proc.returncode


def _steps(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def _leftover(name: str, listed: set[str]) -> bool:
    """An unreferenced file a crash may leave: a record file or a temp file, not listed;
    or local state (SPEC §6: the journal, kept files)."""
    if name.startswith("history/"):
        return True
    return name not in listed and (name.endswith(".md") or name.startswith(".tmp-"))


def _journal(ws: Path) -> tuple[list[dict[str, Any]], bytes]:
    """The journal's complete lines (parsed) and its incomplete tail, read raw."""
    path = ws / ".memory" / "history" / "journal.jsonl"
    raw = path.read_bytes() if path.exists() else b""
    complete, _, tail = raw.rpartition(b"\n")
    return [json.loads(line) for line in complete.splitlines() if line], tail


def _manifest_sha(ws: Path) -> str | None:
    path = ws / ".memory" / "manifest.json"
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def _problems(ws: Path) -> list[str]:
    """Every problem in ``ws/.memory`` except unreferenced leftovers of a crash.

    Two opinions: an independent one (the manifest and listed files are checked by
    ``verify_listed``; here, nothing else may be there but MEMORY.md and leftovers), and
    ``ipymemory check``'s (its errors; leftovers are warnings there).
    """
    root = ws / ".memory"
    listed = set(listed_files(root))
    problems = [
        f"{name}: unexpected file"
        for name in snapshot(root)
        if name not in ("manifest.json", "MEMORY.md")
        and name not in listed
        and not _leftover(name, listed)
    ]
    report = check(ws)
    journal = f"{os.sep}history{os.sep}"
    # Journal warnings right after a kill (a torn line, a missing line) are repaired by
    # the next commit, after which check must find nothing at all (asserted below).
    # A dead child's lock is reported as orphaned until the next commit takes it over.
    assert all(
        p.leftover or journal in p.file or os.path.basename(p.file).startswith(".lock")
        for p in report
        if p.severity == "warning"
    ), report
    return problems + [str(p) for p in report.errors]


def _sweep(sc: Scenario, tmp_path: Path) -> list[str]:
    """Run the whole sweep for one scenario; returns the steps the child died at."""
    pristine = tmp_path / "pristine"
    _make_base(pristine, sc.base, sc.prepare)
    lost = sc.prepare == "lost-manifest"
    old = () if lost else MemoryStore(pristine).records()
    old_journal, _ = _journal(pristine)

    # Dry run: the commit completes, and tells us the checkpoint sequence.
    dry = tmp_path / "dry"
    shutil.copytree(pristine, dry)
    dry_log = tmp_path / "dry.log"
    assert _run_child(dry, sc, None, dry_log) == 0
    sequence = _steps(dry_log)
    new = MemoryStore(dry).records()
    assert tuple(r.name for r in new) == sc.new_names
    assert verify_listed(dry / ".memory") == new
    if old == new:
        assert sequence == [], "a commit that changes nothing must not touch the store"
        assert snapshot(dry / ".memory") == snapshot(pristine / ".memory")

    # The children work on separate copies, so they run side by side (one per core);
    # every kill is then checked in order.
    for i in range(len(sequence)):
        shutil.copytree(pristine, tmp_path / f"kill-{i}")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        codes = list(
            pool.map(
                lambda i: _run_child(tmp_path / f"kill-{i}", sc, i, tmp_path / f"kill-{i}.log"),
                range(len(sequence)),
            )
        )
    killed_at = []
    for i, expected_step in enumerate(sequence):
        ws = tmp_path / f"kill-{i}"
        code = codes[i]
        steps = _steps(tmp_path / f"kill-{i}.log")
        where = f"{sc.name}: killed at #{i} ({expected_step})"
        assert code == -signal.SIGKILL, f"{where}: child was not killed"
        assert steps == sequence[: i + 1], f"{where}: child took another path: {steps}"
        killed_at.append(expected_step)

        root = ws / ".memory"
        store = MemoryStore(ws)
        try:
            got = store.records()
        except MemoryRecoveryNeeded:
            # Killed before a recover's commit point: still lost, and recoverable.
            assert lost, f"{where}: the set was lost"
            assert MemoryStore(ws).recover().applied, where
            got = store.records()
            assert got == new, where
        which = one_of(got, old, new)
        assert verify_listed(root) == got, where
        _check_journal(ws, old_journal, which, sc.op["op"], where, recovered=lost)
        problems = _problems(ws)
        # A first commit killed before its index swap leaves no MEMORY.md: an empty set.
        index = (root / "MEMORY.md").read_text() if (root / "MEMORY.md").exists() else ""
        if index != store.catalog():
            # SPEC §4 swaps MEMORY.md before the manifest: only a kill between the two
            # leaves MEMORY.md ahead of the (old) set. check reports exactly that, and
            # reindex (or the next commit, below) repairs it.
            assert which == 0, f"{where}: MEMORY.md does not match the new set"
            window = sequence[
                sequence.index("index-replaced") : sequence.index("manifest-replaced")
            ]
            assert expected_step in window, f"{where}: MEMORY.md is stale"
            assert len(problems) == 1 and "MEMORY.md: does not match" in problems[0], problems
            if i % 2:  # alternate: repair by reindex, or leave it to the next commit
                reindex(ws)
                assert (root / "MEMORY.md").read_text() == store.catalog()
                assert _problems(ws) == [], where
        else:
            assert problems == [], f"{where}: {problems}"

        # The next commit goes through at once (the dead child's lock is no obstacle).
        t0 = time.monotonic()
        after = rec("after-crash")
        MemoryStore(ws, lock_timeout=NEXT_COMMIT_LOCK_TIMEOUT).extend([after])
        elapsed = time.monotonic() - t0
        assert elapsed < NEXT_COMMIT_LOCK_TIMEOUT, where
        assert MemoryStore(ws).records() == (*got, after), where
        assert verify_listed(root) == (*got, after), where
        assert (root / "MEMORY.md").read_text() == MemoryStore(ws).catalog(), where
        assert _problems(ws) == [], where
        # gc removes the crash's leftovers (age limit 0 here) and nothing else.
        removed = gc(ws, stale_seconds=0)
        assert not set(removed) & set(listed_files(root)), where
        left = {n for n in snapshot(root) if not n.startswith("history/")}
        assert left == {"manifest.json", "MEMORY.md", *listed_files(root)}, where
        # The journal describes the set exactly (check verified the chain and hashes).
        lines, tail = _journal(ws)
        assert tail == b"" and lines[-1]["after"] == _manifest_sha(ws), where
        assert [e["seq"] for e in lines] == list(range(1, len(lines) + 1)), where
        assert check(ws) == [], where
        assert MemoryStore(ws).records() == (*got, after), where
    return killed_at


_JOURNAL_OP = {"extend": "add"}


def _check_journal(
    ws: Path, old: list[dict[str, Any]], which: int, op: str, where: str, *, recovered: bool
) -> None:
    """The journal after a kill never claims a commit that did not happen."""
    lines, _tail = _journal(ws)
    assert lines[: len(old)] == old, f"{where}: the journal lost or changed lines"
    ours = [e for e in lines[len(old) :] if e["op"] != "external"]
    if recovered:
        return  # the parent's own recover wrote a line too
    if which == 0:
        assert ours == [], f"{where}: the journal claims a commit that did not happen"
    else:
        assert len(ours) <= 1, where
        if ours:
            assert ours[0]["op"] == _JOURNAL_OP.get(op, op), where
            assert ours[0]["after"] == _manifest_sha(ws), where
    # An external entry is recorded before the commit's own writes: it comes first.
    new_ops = [e["op"] for e in lines[len(old) :]]
    assert new_ops == sorted(new_ops, key=lambda op: op != "external"), where


_reached: dict[str, list[str]] = {}


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_kill_at_every_step(sc: Scenario, tmp_path: Path) -> None:
    killed_at = _sweep(sc, tmp_path)
    _reached[sc.name] = killed_at
    if sc.name != "extend-0":
        assert killed_at, f"{sc.name}: no checkpoint reached"


def test_every_step_is_reachable(tmp_path: Path) -> None:
    """The sweep is exhaustive: the scenarios' commits pass through every named step.

    Checked in-process (recording, not killing) so it does not depend on test order.
    """
    seen: set[str] = set()
    for i, sc in enumerate(SCENARIOS):
        ws = tmp_path / f"ws-{i}"
        _make_base(ws, sc.base, sc.prepare)
        store = MemoryStore(ws)
        store._checkpoint = lambda step: seen.add(step)  # type: ignore[method-assign]
        op = dict(sc.op)
        kind = op.pop("op")
        if kind == "extend":
            store.extend([MemoryRecord(**r) for r in op["records"]])
        elif kind == "forget":
            store.forget(op["names"])
        elif kind == "undo":
            store.undo(op["seq"])
        elif kind == "restore":
            store.restore(op["seq"])
        elif kind == "recover":
            store.recover()
        else:
            store.apply_consolidation(
                base_records=[MemoryRecord(**r) for r in op["base"]],
                additions=[MemoryRecord(**r) for r in op["additions"]],
                source_names=op["source_names"],
                replacements=[MemoryRecord(**r) for r in op["replacements"]],
            )
    assert seen == set(COMMIT_STEPS), f"never reached: {set(COMMIT_STEPS) - seen}"
    # And the subprocess sweep did kill at each of them (when it ran in this session).
    if len(_reached) == len(SCENARIOS):
        assert {s for steps in _reached.values() for s in steps} == set(COMMIT_STEPS)


def test_child_lock_artefacts_do_not_block(tmp_path: Path) -> None:
    """A child killed while holding the lock leaves `.lock` behind; it is taken over at once."""
    ws = tmp_path / "ws"
    _make_base(ws, _base(2))
    log = tmp_path / "log"
    sc = SCENARIOS[1]  # extend-1
    assert _run_child(ws, sc, 0, log) == -signal.SIGKILL
    assert _steps(log) == ["locked"]
    assert (ws / ".memory" / ".lock").is_dir(), "the dead child's lock directory should remain"
    t0 = time.monotonic()
    MemoryStore(ws, lock_timeout=NEXT_COMMIT_LOCK_TIMEOUT).extend([rec("next")])
    assert time.monotonic() - t0 < NEXT_COMMIT_LOCK_TIMEOUT
    assert not (ws / ".memory" / ".lock").exists(), "released lock directory must be removed"
    assert os.path.exists(ws / ".memory" / "manifest.json")
