"""The issue 15 benchmark scripts keep running and report every measure (tiny sizes;
nothing about the machine's speed is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _json(*argv: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, *argv, "--json"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def test_merge_driver_benchmark_reports_ratios() -> None:
    report = _json(str(BENCH / "merge_driver.py"), "--repeat", "1")
    assert report["driver_correct_sets"] == "1/1"
    assert report["git_merge_file_files_with_markers"] == "2/2"
    for key in ("ratio_processes", "ratio_python_m", "ratio_in_process"):
        assert isinstance(report[key], float) and report[key] > 0


def test_team_sync_benchmark_runs() -> None:
    report = _json(str(BENCH / "team_sync.py"), "--runs", "1")
    assert report["runs"] == 1 and report["failures"] == 0
