"""Concurrency (SPEC §4): many writer processes, a racing consolidation, lock-free readers.

Workers are real processes (tests/concurrency_worker.py) released together by a "go"
file. Nothing here asserts on timing; every wait is bounded.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from record_support import rec
from store_support import listed_files, verify_listed

from ipymemory import MemoryStore
from ipymemory.store.layout import LOCAL_STATE_NAMES

WORKER = str(Path(__file__).with_name("concurrency_worker.py"))
BIG: dict[str, Any] = {"max_index_lines": 1000, "max_index_bytes": 1 << 20, "lock_timeout": 60.0}
PROC_TIMEOUT = 200.0


class Pool:
    """Start workers, release them together, collect their JSON results."""

    def __init__(self, tmp: Path, workspace: Path) -> None:
        self.tmp = tmp
        self.workspace = workspace
        self.go = tmp / "go"
        self.stop = tmp / "stop"
        self.procs: list[tuple[str, subprocess.Popen[bytes], Path, Path]] = []

    def start(self, label: str, role: str, **spec: Any) -> None:
        out = self.tmp / f"{label}.json"
        ready = self.tmp / f"{label}.ready"
        full = {
            "role": role,
            "workspace": str(self.workspace),
            "out": str(out),
            "ready": str(ready),
            "go": str(self.go),
            "stop": str(self.stop),
            "store_kwargs": BIG,
            **spec,
        }
        proc = subprocess.Popen(
            [sys.executable, WORKER, json.dumps(full)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.procs.append((label, proc, out, ready))

    def release(self) -> None:
        deadline = time.monotonic() + PROC_TIMEOUT
        for label, proc, _out, ready in self.procs:
            while not ready.exists():
                assert proc.poll() is None, (
                    f"{label} died: {proc.stderr.read() if proc.stderr else b''!r}"
                )
                assert time.monotonic() < deadline, f"{label} never got ready"
                time.sleep(0.005)
        self.go.touch()

    def join(self, labels: Sequence[str]) -> dict[str, dict[str, Any]]:
        results = {}
        for label, proc, out, _ready in self.procs:
            if label not in labels:
                continue
            _, err = proc.communicate(timeout=PROC_TIMEOUT)
            assert out.exists(), f"{label} wrote no result (exit {proc.returncode}): {err!r}"
            result = json.loads(out.read_text())
            assert "error" not in result, f"{label}: {result.get('traceback')}"
            assert proc.returncode == 0, f"{label} exited {proc.returncode}: {err!r}"
            results[label] = result
        return results

    def kill_all(self) -> None:
        for _label, proc, _out, _ready in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


_INDEXED = re.compile(r"(.+)-(\d+)")


def _check_read_sequence(
    label: str,
    seen: list[list[str]],
    written: set[str],
    consolidations: list[dict[str, Any]] = (),  # type: ignore[assignment]
) -> None:
    """Each set a reader saw is one that was committed at some point.

    * no unknown name, no duplicate;
    * per extending worker, the reader sees a prefix 0..k-1 of its names (commits of one
      worker are sequential), and k never goes down from one read to the next;
    * per consolidation, either all its sources and not its replacement, or the other way
      round — never both, never neither.
    """
    progress: dict[str, int] = {}
    for i, names in enumerate(seen):
        where = f"{label} read #{i}"
        assert len(set(names)) == len(names), f"{where}: duplicate names"
        unknown = set(names) - written
        assert not unknown, f"{where}: names never written: {sorted(unknown)}"
        counts: dict[str, list[int]] = {}
        for name in names:
            m = _INDEXED.fullmatch(name)
            if m and m.group(1).startswith("w"):
                counts.setdefault(m.group(1), []).append(int(m.group(2)))
        for prefix, idx in counts.items():
            assert sorted(idx) == list(range(len(idx))), f"{where}: {prefix} has a gap: {idx}"
            assert len(idx) >= progress.get(prefix, 0), f"{where}: {prefix} went backwards"
            progress[prefix] = len(idx)
        for prefix in progress:
            assert prefix in counts or progress[prefix] == 0, f"{where}: {prefix} vanished"
        present = set(names)
        for c in consolidations:
            sources = set(c["sources"])
            has_sources = sources <= present
            no_sources = not (sources & present)
            has_merged = c["merged"] in present
            assert (has_sources and not has_merged) or (no_sources and has_merged), (
                f"{where}: torn consolidation {c}: {sorted(present & (sources | {c['merged']}))}"
            )


def test_eight_processes_fifty_extends_each(tmp_path: Path, workspace: str) -> None:
    ws = Path(workspace)
    pool = Pool(tmp_path, ws)
    writers = [f"w{i}" for i in range(8)]
    try:
        for w in writers:
            pool.start(w, "extend", prefix=w, count=50)
        pool.start("reader", "read")
        pool.release()
        results = pool.join(writers)
        pool.stop.touch()
        reader = pool.join(["reader"])["reader"]
    finally:
        pool.kill_all()

    expected = {f"{w}-{i}" for w in writers for i in range(50)}
    assert {n for r in results.values() for n in r["names"]} == expected
    names = [r.name for r in MemoryStore(ws, **BIG).records()]
    assert len(names) == 400 and set(names) == expected  # each exactly once
    root = ws / ".memory"
    assert len(listed_files(root)) == 400
    assert [r.name for r in verify_listed(root)] == names
    # Each writer's records appear in the order it committed them.
    for w in writers:
        mine = [int(n.split("-")[1]) for n in names if n.startswith(f"{w}-")]
        assert mine == list(range(50))
    # Nothing but the set, MEMORY.md, the manifest, lock artefacts and local state is left.
    extra = (
        {p.name for p in root.iterdir() if not p.name.startswith(".lock")}
        - set(listed_files(root))
        - {"manifest.json", "MEMORY.md"}
        - LOCAL_STATE_NAMES  # history/ (SPEC §6), never part of the set
    )
    assert not extra, f"leftover files after clean commits: {sorted(extra)[:5]}"
    assert (root / "MEMORY.md").read_text() == MemoryStore(ws, **BIG).catalog()
    assert reader["reads"] >= 1
    _check_read_sequence("reader", reader["seen"], expected)
    assert reader["seen"][-1] == names


def test_consolidation_races_extends_and_readers(tmp_path: Path, workspace: str) -> None:
    ws = Path(workspace)
    seeds = [rec(f"seed-{i:02d}") for i in range(12)]
    MemoryStore(ws, **BIG).extend(seeds)
    pool = Pool(tmp_path, ws)
    writers = [f"w{i}" for i in range(4)]
    consolidators = ["c0", "c1"]
    readers = ["r0", "r1"]
    try:
        for w in writers:
            pool.start(w, "extend", prefix=w, count=20)
        for i, c in enumerate(consolidators):
            pool.start(c, "consolidate", who=i, rounds=3, max_attempts=50)
        for r in readers:
            pool.start(r, "read")
        pool.release()
        results = pool.join(writers + consolidators)
        pool.stop.touch()
        read_results = pool.join(readers)
    finally:
        pool.kill_all()

    extended = {f"{w}-{i}" for w in writers for i in range(20)}
    done = [c for label in consolidators for c in results[label]["done"]]
    failed = {n for label in consolidators for n in results[label]["failed"]}
    assert len(done) == 6  # 2 consolidators x 3 rounds, each eventually committed
    used = [s for c in done for s in c["sources"]]
    assert sorted(used) == sorted(r.name for r in seeds), "each seed consolidated exactly once"

    final = [r.name for r in MemoryStore(ws, **BIG).records()]
    assert len(final) == len(set(final))
    assert extended <= set(final), f"extended records lost: {sorted(extended - set(final))}"
    merged = {c["merged"] for c in done}
    assert set(final) == extended | merged
    assert not (failed & set(final)), "a conflicted consolidation left its record"
    assert [r.name for r in verify_listed(ws / ".memory")] == final

    written = extended | merged | failed | {r.name for r in seeds}
    for label, res in read_results.items():
        assert res["reads"] >= 1
        _check_read_sequence(label, res["seen"], written, done)
        assert res["seen"][-1] == final
