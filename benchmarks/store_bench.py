"""Speed of the memory store: commit cost vs the durable-write floor, reads, contention.

    python benchmarks/store_bench.py            # full run (~1 min)
    python benchmarks/store_bench.py --quick    # CI-sized run (~10 s)
    python benchmarks/store_bench.py --json     # machine-readable results
    python benchmarks/store_bench.py --dir DIR  # put the stores under DIR (its file system)

(a) ``extend`` of one record onto a 10-record store, against two floors measured in the
    same loop, on the same file system, with the same bytes:

    * ``floor-files`` — each file the commit writes (the record, MEMORY.md, manifest.json)
      written with the minimal durable sequence: create a temp file, write, fsync, rename,
      fsync the directory. This is "the same bytes written durably"; the target is
      extend <= 2x this floor.
    * ``floor-one`` — all those bytes in ONE file with that sequence (2 flushes instead of
      5): the least any durable commit could cost; shown for scale.

    Each round runs extend, then both floors, then (untimed) forgets the record again,
    so the store stays at 10 records; medians over the rounds.
(a2) the history journal (SPEC §6): the same one-record ``extend`` (and ``forget``) with
    the journal and without it (a store whose journal is a no-op and whose step 7
    deletes), alternating in one loop; target with/without <= 1.25x.
(b) ``records()`` at 10, 50 and 200 records: warm (repeated calls on one store in one
    process, as in a kernel) and cold (the first call in a fresh process, every file
    parsed); target ≤ 5 ms at 200.
(c) commit throughput: the same number of one-record ``extend`` calls made by 1 process
    and by 8 processes at once (started together); commits/s over the wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ipymemory.store.history import HistoryEntry, Journal
from ipymemory.store.record import MemoryRecord, MemoryType
from ipymemory.store.store import MemoryStore

BIG: dict[str, Any] = {"max_index_lines": 2000, "max_index_bytes": 1 << 22, "lock_timeout": 120}
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def rec(name: str) -> MemoryRecord:
    return MemoryRecord(
        name=name,
        type=MemoryType.PROJECT,
        description=f"what {name} is about, in one line",
        body=f"The body of {name}.\nIt has a second line, and some more text on it.",
    )


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


# --- (a) extend vs the floor ---------------------------------------------------------


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | _O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _durable_write(directory: str, target: str, data: bytes) -> None:
    """The minimal durable sequence: create temp, write, fsync, rename, fsync dir."""
    tmp = f"{directory}/.floor-{uuid.uuid4().hex}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, f"{directory}/{target}")
    _fsync_dir(directory)


def bench_extend(base: Path, rounds: int) -> dict[str, Any]:
    ws = base / "extend"
    ws.mkdir()
    store = MemoryStore(ws)
    store.extend([rec(f"base-{i}") for i in range(10)])
    floor_dir = str(base / "floor")
    os.mkdir(floor_dir)
    root = str(store.root)
    ext: list[float] = []
    files: list[float] = []
    one: list[float] = []
    for i in range(rounds + 3):
        r = rec(f"new-{i}")
        t0 = time.perf_counter()
        (entry,) = store.extend([r])
        t1 = time.perf_counter()
        # The exact bytes that commit wrote.
        blobs = [
            (name, Path(root, name).read_bytes())
            for name in (entry.file, "MEMORY.md", "manifest.json")
        ]
        t2 = time.perf_counter()
        for name, data in blobs:
            _durable_write(floor_dir, name, data)
        t3 = time.perf_counter()
        _durable_write(floor_dir, "one", b"".join(d for _, d in blobs))
        t4 = time.perf_counter()
        for name, _ in blobs:
            os.unlink(f"{floor_dir}/{name}")
        store.forget([r.name])
        if i >= 3:  # warm-up rounds are not counted
            ext.append(t1 - t0)
            files.append(t3 - t2)
            one.append(t4 - t3)
    out: dict[str, Any] = {
        "rounds": rounds,
        "extend_ms": _median_ms(ext),
        "floor_files_ms": _median_ms(files),
        "floor_one_ms": _median_ms(one),
    }
    out["ratio_files"] = out["extend_ms"] / out["floor_files_ms"]
    out["ratio_one"] = out["extend_ms"] / out["floor_one_ms"]
    # Per-round ratios, to show the spread under a noisy disk.
    per_round = sorted(e / f for e, f in zip(ext, files, strict=True))
    out["ratio_files_p25_p75"] = (
        per_round[len(per_round) // 4],
        per_round[(3 * len(per_round)) // 4],
    )
    return out


# --- (a2) the history journal's cost ----------------------------------------------------


class _NullJournal(Journal):
    """No journal: nothing read or appended, replaced files deleted (the old step 7)."""

    def cut_torn_tail(self) -> bool:
        return False

    def last(self) -> HistoryEntry | None:
        return None

    def append(self, entry: HistoryEntry, data: bytes | None = None) -> None:
        pass

    def keep(self, file: str) -> bool:
        os.unlink(f"{self.real}/{file}")
        return False


class _NoJournalStore(MemoryStore):
    """The same commit path without the SPEC §6 journal (the baseline)."""

    def _journal(self, real: str) -> Journal:
        return _NullJournal(real, "no journal")

    def _sync_journal(self, *args: Any) -> HistoryEntry | None:
        return None


def bench_journal(base: Path, rounds: int) -> dict[str, Any]:
    """One-record extend (and forget) onto 10 records, with and without the journal,
    alternating in the same loop on the same file system; medians."""
    stores = {}
    for label, cls in (("with", MemoryStore), ("without", _NoJournalStore)):
        ws = base / f"journal-{label}"
        ws.mkdir()
        stores[label] = cls(ws)
        stores[label].extend([rec(f"base-{i}") for i in range(10)])
    times: dict[str, list[float]] = {
        "with": [],
        "without": [],
        "forget_with": [],
        "forget_without": [],
    }
    for i in range(rounds + 3):
        order = ("with", "without") if i % 2 else ("without", "with")
        for label in order:
            store = stores[label]
            t0 = time.perf_counter()
            store.extend([rec(f"new-{i}")])
            t1 = time.perf_counter()
            store.forget([f"new-{i}"])
            t2 = time.perf_counter()
            if i >= 3:
                times[label].append(t1 - t0)
                times[f"forget_{label}"].append(t2 - t1)
    out: dict[str, Any] = {"rounds": rounds}
    for key, samples in times.items():
        out[f"{key}_ms"] = _median_ms(samples)
    out["ratio"] = out["with_ms"] / out["without_ms"]
    out["forget_ratio"] = out["forget_with_ms"] / out["forget_without_ms"]
    assert len(stores["with"].history()) == 1 + 2 * (rounds + 3)
    assert stores["without"].history() == ()
    return out


# --- (b) records() ---------------------------------------------------------------------

_COLD_SNIPPET = """
import sys, time
from ipymemory.store.store import MemoryStore
store = MemoryStore(sys.argv[1], max_index_lines=2000, max_index_bytes=1 << 22)
t0, c0 = time.perf_counter(), time.process_time()
n = len(store.records())
print(time.perf_counter() - t0, time.process_time() - c0, n)
"""


def bench_records(
    base: Path, sizes: list[int], warm_calls: int, cold_runs: int
) -> list[dict[str, Any]]:
    out = []
    for size in sizes:
        ws = base / f"read-{size}"
        ws.mkdir()
        MemoryStore(ws, **BIG).extend([rec(f"r-{i}") for i in range(size)])
        store = MemoryStore(ws, **BIG)
        assert len(store.records()) == size
        warm = []
        for _ in range(warm_calls):
            t0 = time.perf_counter()
            store.records()
            warm.append(time.perf_counter() - t0)
        cold = []
        cold_cpu = []
        for _ in range(cold_runs):
            proc = subprocess.run(
                [sys.executable, "-c", _COLD_SNIPPET, str(ws)],
                capture_output=True,
                text=True,
                check=True,
            )
            seconds, cpu, n = proc.stdout.split()
            assert int(n) == size
            cold.append(float(seconds))
            cold_cpu.append(float(cpu))
        out.append(
            {
                "records": size,
                "warm_ms": _median_ms(warm),
                "cold_ms": _median_ms(cold),
                "cold_cpu_ms": _median_ms(cold_cpu),
                "cold_min_ms": min(cold) * 1e3,
            }
        )
    return out


# --- (c) throughput ----------------------------------------------------------------------


def _worker(spec: dict[str, Any]) -> None:
    store = MemoryStore(spec["workspace"], **BIG)
    records = [rec(f"{spec['prefix']}-{i}") for i in range(spec["count"])]
    Path(spec["ready"]).touch()
    deadline = time.monotonic() + 60
    while not os.path.exists(spec["go"]):
        if time.monotonic() > deadline:
            raise SystemExit("never released")
        time.sleep(0.0005)
    t0 = time.time()
    for r in records:
        store.extend([r])
    t1 = time.time()
    print(json.dumps({"start": t0, "end": t1}))


def _run_workers(base: Path, label: str, procs: int, total: int) -> dict[str, Any]:
    ws = base / label
    ws.mkdir()
    MemoryStore(ws, **BIG).extend([rec("seed")])
    go = base / f"{label}.go"
    running = []
    for p in range(procs):
        spec: dict[str, Any] = {
            "workspace": str(ws),
            "prefix": f"p{p}",
            "count": total // procs,
            "ready": str(base / f"{label}.{p}.ready"),
            "go": str(go),
        }
        running.append(
            (
                spec,
                subprocess.Popen(
                    [sys.executable, __file__, "--worker", json.dumps(spec)],
                    stdout=subprocess.PIPE,
                    text=True,
                ),
            )
        )
    deadline = time.monotonic() + 120
    for spec, proc in running:
        while not os.path.exists(spec["ready"]):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"worker {spec['prefix']} failed to start")
            time.sleep(0.002)
    go.touch()
    spans = []
    for _spec, proc in running:
        stdout, _ = proc.communicate(timeout=300)
        if proc.returncode != 0:
            raise SystemExit(f"worker failed with exit {proc.returncode}")
        spans.append(json.loads(stdout))
    wall = max(s["end"] for s in spans) - min(s["start"] for s in spans)
    n = len(MemoryStore(ws, **BIG).records()) - 1
    assert n == (total // procs) * procs
    return {"processes": procs, "commits": n, "seconds": wall, "commits_per_s": n / wall}


def bench_throughput(base: Path, total: int, rounds: int) -> dict[str, Any]:
    """1 process vs 8, alternated ``rounds`` times (the disk may be shared and noisy)."""
    ones, eights = [], []
    for r in range(rounds):
        ones.append(_run_workers(base, f"tp1-{r}", 1, total))
        eights.append(_run_workers(base, f"tp8-{r}", 8, total))
    one = statistics.median(x["commits_per_s"] for x in ones)
    eight = statistics.median(x["commits_per_s"] for x in eights)
    ratios = [e["commits_per_s"] / o["commits_per_s"] for o, e in zip(ones, eights, strict=True)]
    return {
        "commits": total,
        "rounds": rounds,
        "one_per_s": one,
        "eight_per_s": eight,
        "ratio": statistics.median(ratios),
        "ratios": ratios,
    }


# --- main -------------------------------------------------------------------------------


def _fs_type(path: Path) -> str:
    try:
        out = (
            subprocess.run(["df", "-PT", str(path)], capture_output=True, text=True, check=True)
            .stdout.splitlines()[-1]
            .split()
        )
        return out[1]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown"


def run(base: Path, quick: bool) -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    timed: Callable[[str], None] = lambda label: print(f"... {label}", file=sys.stderr)  # noqa: E731
    timed("extend vs floor")
    extend = bench_extend(base, rounds=40 if quick else 200)
    timed("journal on / off")
    journal = bench_journal(base, rounds=40 if quick else 200)
    timed("records()")
    reads = bench_records(
        base, [10, 50, 200], warm_calls=50 if quick else 300, cold_runs=3 if quick else 21
    )
    timed("throughput")
    throughput = bench_throughput(base, total=80 if quick else 200, rounds=1 if quick else 5)
    return {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "fs": _fs_type(base),
            "dir": str(base),
            # 1-minute load average before / after: the disk and CPUs may be shared.
            "load": (load_before, os.getloadavg()[0]),
        },
        "quick": quick,
        "extend": extend,
        "journal": journal,
        "records": reads,
        "throughput": throughput,
    }


def report(res: dict[str, Any]) -> str:
    e = res["extend"]
    j = res["journal"]
    t = res["throughput"]
    m = res["machine"]
    lines = [
        f"store benchmark ({'quick' if res['quick'] else 'full'}; python {m['python']}, "
        f"{m['cpus']} CPUs, {m['fs']} at {m['dir']}; load average "
        f"{m['load'][0]:.1f} -> {m['load'][1]:.1f})",
        "",
        f"(a) extend of one record onto 10, median of {e['rounds']} rounds",
        f"    extend                 {e['extend_ms']:7.3f} ms",
        f"    floor-files (3 files)  {e['floor_files_ms']:7.3f} ms   "
        f"ratio {e['ratio_files']:.2f}x (target <= 2x; per-round p25-p75 "
        f"{e['ratio_files_p25_p75'][0]:.2f}-{e['ratio_files_p25_p75'][1]:.2f})",
        f"    floor-one (1 file)     {e['floor_one_ms']:7.3f} ms   ratio {e['ratio_one']:.2f}x",
        "",
        f"(a2) the history journal (SPEC §6), median of {j['rounds']} alternating rounds",
        f"    extend with journal    {j['with_ms']:7.3f} ms   without {j['without_ms']:7.3f} ms"
        f"   ratio {j['ratio']:.2f}x (target <= 1.25x)",
        f"    forget with journal    {j['forget_with_ms']:7.3f} ms   without "
        f"{j['forget_without_ms']:7.3f} ms   ratio {j['forget_ratio']:.2f}x "
        "(kept in history/files/ vs deleted)",
        "",
        "(b) records()          warm (same process)   cold (fresh process): median, min, CPU",
    ]
    for r in res["records"]:
        lines.append(
            f"    {r['records']:4d} records        {r['warm_ms']:7.3f} ms            "
            f"{r['cold_ms']:7.3f} ms, {r['cold_min_ms']:.3f} ms, {r['cold_cpu_ms']:.3f} ms"
        )
    lines += [
        "",
        f"(c) throughput, {t['commits']} one-record commits, median of {t['rounds']} "
        "alternating rounds",
        f"    1 process   {t['one_per_s']:8.1f} commits/s",
        f"    8 processes {t['eight_per_s']:8.1f} commits/s   ratio {t['ratio']:.2f}x "
        f"(per round: {', '.join(f'{x:.2f}' for x in t['ratios'])})",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (CI speed)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--dir", help="directory for the stores (default: system temp dir)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(json.loads(args.worker))
        return 0
    base = Path(tempfile.mkdtemp(prefix="ipymemory-bench-", dir=args.dir))
    try:
        res = run(base, args.quick)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(json.dumps(res, indent=2) if args.json else report(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
