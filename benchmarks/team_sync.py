"""The team property of issue 15 at full size: 200+ hypothesis runs of random work in
three clones of a bare repository (the CI test, tests/test_team_sync.py, runs 15).

Each run: add, forget, consolidate, commit, fetch + merge, pull --rebase, push with
retry, in any order across the clones, then everyone syncs; the run passes when every
clone holds the same set, equal to the set algebra of what was added and removed,
``check`` is clean everywhere and no conflict marker appears (assertions in
tests/team_support.py). Stops are merges or rebases git stopped (a same-name rename
or git's rename detection) and that staging .memory concluded.

    python benchmarks/team_sync.py [--runs 200] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from hypothesis import HealthCheck, Phase, given, settings
from team_support import STATS, Op, run_team
from test_team_sync import operations


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    counts = {"runs": 0, "operations": 0, "records_added": 0, "records_removed": 0}
    started = time.perf_counter()

    @settings(
        max_examples=args.runs,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(operations)
    def one(ops: list[Op]) -> None:
        with tempfile.TemporaryDirectory() as root:
            try:
                _, ledger = run_team(Path(root), ops)
            except BaseException:
                print(f"FAILED on {ops!r}", file=sys.stderr)
                raise
        counts["runs"] += 1
        counts["operations"] += len(ops)
        counts["records_added"] += len(ledger.added)
        counts["records_removed"] += len(ledger.removed)

    one()
    report = {
        **counts,
        "failures": 0,
        **dict(sorted(STATS.items())),
        "seconds": round(time.perf_counter() - started, 1),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key:24} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
