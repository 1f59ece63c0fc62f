"""Worker process of tests/test_store_concurrency.py and benchmarks/store_bench.py.

Usage: ``python concurrency_worker.py SPEC_JSON``; the spec is a JSON object with
``role`` ("extend" | "consolidate" | "read"), ``workspace``, ``out`` (a JSON result file),
``go`` (a file to wait for, so all workers start together), ``stop`` (readers run until it
exists), ``store_kwargs`` and role-specific keys. Every loop is bounded.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from typing import Any

from record_support import rec

from ipymemory import MemoryConflictError, MemoryStore

MAX_WAIT = 150.0  # seconds: a worker never waits longer than this for the go/stop files


def _wait_for(path: str) -> None:
    deadline = time.monotonic() + MAX_WAIT
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {path}")
        time.sleep(0.001)


def extend(store: MemoryStore, spec: dict[str, Any]) -> dict[str, Any]:
    names = [f"{spec['prefix']}-{i}" for i in range(spec["count"])]
    t0 = time.perf_counter()
    for name in names:
        store.extend([rec(name)])
    return {"names": names, "seconds": time.perf_counter() - t0}


def consolidate(store: MemoryStore, spec: dict[str, Any]) -> dict[str, Any]:
    """Merge two ``seed-*`` records into one ``merged-*`` record, ``rounds`` times.

    The plan's base is the whole set as read; a concurrent commit that removed one of its
    records (another consolidator) makes the commit fail with MemoryConflictError: re-read
    and re-plan, up to ``max_attempts`` times per round.
    """
    who = spec["who"]
    done: list[dict[str, Any]] = []
    failed_names: list[str] = []
    conflicts = 0
    attempt = 0
    for _ in range(spec["rounds"]):
        for _try in range(spec["max_attempts"]):
            attempt += 1
            base = store.records()
            seeds = sorted(r.name for r in base if r.name.startswith("seed-"))
            if len(seeds) < 2:
                return {"done": done, "failed": failed_names, "conflicts": conflicts}
            # Different consolidators prefer different seeds, but overlap often.
            pick = seeds[:2] if who % 2 == 0 else seeds[-2:]
            merged = f"merged-{who}-{attempt}"
            try:
                store.apply_consolidation(
                    base_records=base,
                    additions=[],
                    source_names=pick,
                    replacements=[rec(merged)],
                )
            except MemoryConflictError:
                conflicts += 1
                failed_names.append(merged)
                continue
            done.append({"sources": pick, "merged": merged})
            break
        else:
            raise SystemExit(f"consolidator {who}: no success in {spec['max_attempts']} tries")
    return {"done": done, "failed": failed_names, "conflicts": conflicts}


def read(store: MemoryStore, spec: dict[str, Any]) -> dict[str, Any]:
    """Read the set in a loop until ``stop`` exists; report every distinct set seen, in order."""
    seen: list[list[str]] = []
    reads = 0
    deadline = time.monotonic() + MAX_WAIT
    while time.monotonic() < deadline and reads < spec.get("max_reads", 1_000_000):
        stopping = os.path.exists(spec["stop"])
        names = [r.name for r in store.records()]
        reads += 1
        if not seen or seen[-1] != names:
            seen.append(names)
        if stopping:  # one last read after the writers finished
            break
    return {"seen": seen, "reads": reads}


ROLES = {"extend": extend, "consolidate": consolidate, "read": read}


def main(spec: dict[str, Any]) -> int:
    store = MemoryStore(spec["workspace"], **spec.get("store_kwargs", {}))
    if spec.get("ready"):
        with open(spec["ready"], "w"):
            pass
    if spec.get("go"):
        _wait_for(spec["go"])
    try:
        result = ROLES[spec["role"]](store, spec)
    except BaseException as e:
        result = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
        code = 1
    else:
        code = 0
    tmp = spec["out"] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f)
    os.replace(tmp, spec["out"])
    return code


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
