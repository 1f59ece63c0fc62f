"""benchmarks/memory_store_sync.py keeps running, at the issue's 500 records each way:
the requests it reports are checked (the machine's speed is the benchmark's business,
not a test's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def test_the_sync_benchmark_reports_requests_per_scenario() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "memory_store_sync.py"),
            "--records",
            "500",
            "--changed",
            "7",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=BENCH.parent,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    n, pages = 500, 5  # 500 memories: five list pages of 100
    assert got["push"]["requests"] == 1 + n  # one (empty) listing, then one create each
    assert got["pull"]["requests"] == pages + n  # a listing, then each version once
    # Changes cost requests, the set does not: the versions since, a listing, the 7.
    assert got["pull_changed"]["requests"] == 1 + pages + 7
    assert got["idle"]["push_requests"] == 0
    assert got["idle"]["pull_requests"] == 1  # one page of versions, whatever the set's size
    assert got["idle"]["baseline_requests"] == pages + n
