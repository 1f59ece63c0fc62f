"""Commit, selection and ``check`` at 500 and at 10,000 records (issue 40: the manifest's
bound), and the first request's block at each.

    python benchmarks/any_size.py            # ~2 min (seeding 10,000 records is most of it)
    python benchmarks/any_size.py --json

Each set is written in commits of 500 records of ~150 characters (a project's notes:
``fact-<i>``, "Pipeline fact <i> about zone<k> exports and the nightly report"), then
timed, in this process, with the package's defaults:

* **commit**: one more record added (``MemoryStore.extend``: lock, write, manifest swap,
  journal) by one store, as a kernel's session commits, the median of five; at 10,000
  the last one makes the set exactly 10,000;
* **selection**: what a turn does before its first request (``AgentSession.begin_turn``:
  read both scopes, rank, fill the memory budget, render the block with saved dates and
  source notes), the median over 20 different questions after one warm-up (a kernel
  selects over the same set turn after turn);
* **check**: ``ipymemory check``'s whole verification (``maintenance.check``), the median
  of three.

Reported: each time at both sizes and their ratio (target: within 3x), and the first
request's block tokens (target: within ``memory_budget``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ipymemory import AgentSession, MemoryRecord, MemoryStore, NoModel, SessionConfig
from ipymemory import _constants as C
from ipymemory.store.maintenance import check
from ipymemory.turn.choosing import block_tokens

SIZES = (500, C.MAX_SET_RECORDS)
TARGET = 3.0
BATCH = 500


def records(start: int, count: int) -> list[MemoryRecord]:
    return [
        MemoryRecord(
            name=f"fact-{i}",
            type="project",
            description=f"Pipeline fact {i} about zone{i % 97:03d} exports and the nightly report",
            body=f"The zone{i % 97:03d} export runs after the warehouse load. Detail {i}.",
        )
        for i in range(start, start + count)
    ]


def _timed(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(size: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        seeded = size - 5  # the five timed commits bring it to ``size``
        for start in range(0, seeded, BATCH):
            MemoryStore(tmp).extend(records(start, min(BATCH, seeded - start)))
        added = iter(range(seeded, size))
        store = MemoryStore(tmp)
        store.records()  # the session's store has read its set before it commits
        commit = _timed(lambda: store.extend(records(next(added), 1)), 5)
        assert len(MemoryStore(tmp).records()) == size
        session = AgentSession(tmp, model=NoModel(), config=SessionConfig(user_dir=None))
        session.begin_turn("warm-up: what about the exports?")
        questions = iter(f"what about zone{k:03d} exports?" for k in range(100))
        select = _timed(lambda: session.begin_turn(next(questions)), 20)
        chosen = session.selected
        checked = _timed(lambda: check(tmp), 3)
        return {
            "records": size,
            "commit_s": commit,
            "selection_s": select,
            "check_s": checked,
            "first_request_records": len(chosen),
            "first_request_block_tokens": block_tokens(chosen),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="50 and 200 records (the test)")
    args = parser.parse_args(argv)
    small, big = (measure(size) for size in ((50, 200) if args.quick else SIZES))
    ratios = {key: big[key] / small[key] for key in ("commit_s", "selection_s", "check_s")}
    ok = {key: ratio <= TARGET for key, ratio in ratios.items()}
    ok["first_request_within_budget"] = big["first_request_block_tokens"] <= C.DEFAULT_MEMORY_BUDGET
    result = {"sizes": [small, big], "ratios": ratios, "ok": ok}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"| | {small['records']:,} records | {big['records']:,} records | ratio |")
        print("|---|---|---|---|")
        for key, label in (
            ("commit_s", "commit"),
            ("selection_s", "selection"),
            ("check_s", "check"),
        ):
            print(
                f"| {label} | {small[key] * 1000:.1f} ms | {big[key] * 1000:.1f} ms "
                f"| **{ratios[key]:.2f}x** |"
            )
        print(
            f"\nfirst request at {big['records']:,} records: "
            f"{big['first_request_records']} records, "
            f"{big['first_request_block_tokens']} estimated tokens "
            f"(memory_budget {C.DEFAULT_MEMORY_BUDGET})"
        )
        print("targets:", ", ".join(f"{k} {'ok' if v else 'MISSED'}" for k, v in ok.items()))
    return 0 if all(ok.values()) else 1


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
