"""benchmarks/memory_store_sync.py keeps running: a small set, checking the requests it
reports (the machine's speed is the benchmark's business, not a test's)."""

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
            "130",
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
    pages = 2  # 130 memories: two list pages of 100
    assert got["push"]["requests"] == 1 + 130  # one (empty) listing, then one create each
    assert got["pull"]["requests"] == pages + 130  # a listing, then each version once
    # Changes cost requests, the set does not: the versions since, a listing, the 7.
    assert got["pull_changed"]["requests"] == 1 + pages + 7
    assert got["idle"]["push_requests"] == 0
    assert got["idle"]["pull_requests"] == 1  # one page of versions, whatever the set's size
    assert got["idle"]["baseline_requests"] == pages + 130
