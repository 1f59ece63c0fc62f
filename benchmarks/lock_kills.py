"""How long a commit waits after a writer was SIGKILLed at a random instant (issue 10 #3).

Each round forks a worker that commits in a loop (extend + forget), or runs ``gc`` or
``reindex`` in a loop, kills it with SIGKILL after a random delay, reaps it, then forks a
fresh process that commits one record and reports how long that commit took. The
workers and committers are forked from this process, which never takes the lock itself
(so a child starts with no lock state, like a new interpreter, without the 0.3 s start).

    python benchmarks/lock_kills.py                 # 200 kills, prints percentiles
    python benchmarks/lock_kills.py --kills 20      # the size tests/test_store_lock.py runs
    python benchmarks/lock_kills.py --json          # machine-readable
    python benchmarks/lock_kills.py --timeout 2     # a commit waiting longer fails

Exit status 1 if any fresh commit failed (with ``--timeout 2``: waited over 2 s), lost
its record, or ``check`` finds an error at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from typing import Any, NoReturn

from ipymemory.errors import MemoryStoreError
from ipymemory.store.lock import DEFAULT_LOCK_TIMEOUT, LOCK_DIR_NAME
from ipymemory.store.maintenance import check, gc, reindex
from ipymemory.store.record import MemoryRecord, MemoryType
from ipymemory.store.store import MemoryStore

OPS = ("commit", "commit", "gc", "reindex")  # half the kills during commits


def _record(name: str) -> MemoryRecord:
    return MemoryRecord(
        name=name, type=MemoryType.PROJECT, description=f"about {name}", body="body"
    )


def _work(workspace: str, op: str) -> NoReturn:
    """A forked worker: run ``op`` until killed."""
    try:
        store = MemoryStore(workspace)
        i = 0
        while True:
            i += 1
            if op == "commit":
                name = f"w{os.getpid()}-{i}"
                store.extend([_record(name)])
                store.forget([name])
            elif op == "gc":
                gc(workspace, 0.0)
            else:
                reindex(workspace)
    finally:
        os._exit(3)  # only reached on an error: the parent reports the exit status


def _fresh_commit(workspace: str, name: str, timeout: float, out: int) -> NoReturn:
    """A forked fresh process: one timed commit; report it on ``out``; then reset the set."""
    result: dict[str, Any]
    try:
        store = MemoryStore(workspace, lock_timeout=timeout)
        locked_at: list[float] = []

        def checkpoint(step: str) -> None:
            if step == "locked":  # the commit's first step: the lock is held
                locked_at.append(time.perf_counter())

        store._checkpoint = checkpoint  # type: ignore[method-assign]
        t0 = time.perf_counter()
        try:
            store.extend([_record(name)])
        except MemoryStoreError as e:
            result = {"seconds": time.perf_counter() - t0, "error": f"{type(e).__name__}: {e}"}
        else:
            result = {"seconds": time.perf_counter() - t0, "lock": locked_at[0] - t0}
            names = [r.name for r in store.records()]
            result["landed"] = name in names
            store.forget(names)  # untimed: keeps the set (and MEMORY.md) small
        os.write(out, json.dumps(result).encode())
    finally:
        os._exit(0)


def _fork(target: Any, *args: Any) -> int:
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        target(*args)
    return pid


def _left_behind(workspace: str) -> str:
    """What the killed worker left at ``.lock``: none / ours (marked) / foreign."""
    try:
        st = os.lstat(MemoryStore(workspace).root / LOCK_DIR_NAME)
    except FileNotFoundError:
        return "none"
    return "ours" if st.st_mode & 0o1000 else "unmarked"


def measure(
    workspace: str, kills: int, *, seed: int = 0, max_delay: float = 0.03, timeout: float
) -> dict[str, Any]:
    rng = random.Random(seed)
    MemoryStore(workspace).extend([_record("seed")])
    waits: list[float] = []
    lock_waits: list[float] = []
    failures: list[str] = []
    left: dict[str, int] = {}
    by_op: dict[str, list[float]] = {}
    baseline: list[float] = []
    # Baseline rounds (the first quarter, interleaved): the same fresh commit, no kill
    # before it, so the figures after a kill read as ratios to an undisturbed commit.
    for k in range(kills + kills // 4):
        op = "none" if k % 5 == 4 else rng.choice(OPS)
        if op != "none":
            worker = _fork(_work, workspace, op)
            time.sleep(rng.uniform(0.0, max_delay))
            os.kill(worker, signal.SIGKILL)
            _, status = os.waitpid(worker, 0)
            if not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL):
                failures.append(f"round {k}: the {op} worker ended on its own ({status})")
            state = _left_behind(workspace)
            left[state] = left.get(state, 0) + 1
        r, w = os.pipe()
        committer = _fork(_fresh_commit, workspace, f"fresh-{k}", timeout, w)
        os.close(w)
        with os.fdopen(r, "rb") as pipe:
            raw = pipe.read()
        os.waitpid(committer, 0)
        try:
            result = json.loads(raw)
        except ValueError:
            failures.append(f"round {k}: the fresh committer reported nothing")
            continue
        if op == "none":
            baseline.append(result.get("lock", result["seconds"]))
            if "error" in result:
                failures.append(f"round {k} (no kill): {result['error']}")
            continue
        waits.append(result["seconds"])
        by_op.setdefault(op, []).append(result["seconds"])
        if "lock" in result:
            lock_waits.append(result["lock"])
        if "error" in result:
            failures.append(f"round {k} (after killing {op}): {result['error']}")
        elif not result["landed"]:
            failures.append(f"round {k} (after killing {op}): the committed record is missing")
    errors = [str(p) for p in check(workspace) if p.severity == "error"]
    failures.extend(f"check: {e}" for e in errors)
    return {
        "kills": kills,
        "timeout": timeout,
        "waits": _summary(waits),
        "lock_waits": _summary(lock_waits),
        "baseline_lock_waits": _summary(baseline),
        "by_op": {op: _summary(v) for op, v in sorted(by_op.items())},
        "over_2s": sum(w > 2.0 for w in waits),
        "left_behind": left,
        "failures": failures,
    }


def _summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    return {
        "n": len(ordered),
        "max_ms": ordered[-1] * 1000,
        "p50_ms": statistics.median(ordered) * 1000,
        "p90_ms": pct(0.90) * 1000,
        "p99_ms": pct(0.99) * 1000,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-delay", type=float, default=0.03, help="seconds (default 0.03)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_LOCK_TIMEOUT,
        help=f"lock timeout of each fresh commit (default {DEFAULT_LOCK_TIMEOUT:g})",
    )
    parser.add_argument("--dir", help="where to make the workspace (default: a temp dir)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.dir) as workspace:
        report = measure(
            workspace, args.kills, seed=args.seed, max_delay=args.max_delay, timeout=args.timeout
        )
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        w = report["waits"]
        lw = report["lock_waits"]
        print(f"{report['kills']} SIGKILLs; the next commit by a fresh process took:")
        print(
            f"  max {w['max_ms']:.1f} ms, p50 {w['p50_ms']:.1f}, p90 {w['p90_ms']:.1f}, "
            f"p99 {w['p99_ms']:.1f}; over 2 s: {report['over_2s']}"
        )
        print(
            f"  of which waiting for the lock: max {lw['max_ms']:.1f} ms, p50 "
            f"{lw['p50_ms']:.2f}, p90 {lw['p90_ms']:.2f}, p99 {lw['p99_ms']:.2f}"
        )
        b = report["baseline_lock_waits"]
        print(
            f"  baseline, no kill before: waiting for the lock p50 {b['p50_ms']:.2f} ms, max "
            f"{b['max_ms']:.1f} (n={b['n']}); after a kill p50 is "
            f"{lw['p50_ms'] / b['p50_ms']:.2f}x that"
        )
        for op, s in report["by_op"].items():
            print(f"  after killing {op:8} n={s['n']:3}  max {s['max_ms']:.1f} ms")
        print(f"  .lock left by the killed worker: {report['left_behind']}")
        for failure in report["failures"]:
            print(f"FAIL {failure}")
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
