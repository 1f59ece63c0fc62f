"""What the journal costs a turn (SPEC §9: spacing counted from the journal, each
injected record's saved date).

    python benchmarks/journal_per_turn.py            # 5,000 entries (~30 s)
    python benchmarks/journal_per_turn.py --quick    # CI-sized run

A journal of N entries (the lines our commits write: one record added each) and 200
current records. Per simulated turn, one entry is appended (another commit), then:

- baseline: ``Journal.read()`` of the whole file, what reading it afresh every turn costs;
- ours: the session's ``JournalCache`` (the lines appended since the last turn only),
  then ``spacing`` and ``saved_dates`` for 5 selected records, i.e. all the journal work
  of a turn.

Both alternate in one loop; medians. Target: ours <= 0.1x the baseline at 5,000 entries.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from ipymemory.store.history import Added, HistoryEntry, Journal, now_utc
from ipymemory.store.recency import JournalCache, saved_dates, spacing


def _entry(seq: int) -> HistoryEntry:
    name = f"note-{seq}"
    file = f"{name}-{seq:032x}.md"
    return HistoryEntry(
        seq=seq,
        at=now_utc(),
        op="add",
        before="0" * 64,
        after="1" * 64,
        added=(Added(name, file, "2" * 64),),
        actor={"tool": "bench", "session": "s", "notebook": "a.ipynb", "cell_id": "c"},
        provenance={name: {"origin": "user", "query": "a question " * 5, "files_read": []}},
    )


def run(entries: int, turns: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        real = Path(tmp, ".memory")
        (real / "history").mkdir(parents=True)
        journal = Journal(str(real), str(real / "history" / "journal.jsonl"))
        with open(journal.path, "wb") as f:
            for seq in range(1, entries + 1):
                f.write(_entry(seq).line())
        current = [f"note-{s}-{s:032x}.md" for s in range(entries - 199, entries + 1)]
        selected = current[-5:]
        cache = JournalCache()
        cache.entries(journal)  # the session's first turn read it whole
        base: list[float] = []
        ours: list[float] = []
        seq = entries
        for _ in range(turns):
            seq += 1
            journal.append(_entry(seq))
            t0 = time.perf_counter()
            journal.read()
            t1 = time.perf_counter()
            read = cache.entries(journal)
            counted = spacing(read, current=current)
            dates = saved_dates(read, selected)
            t2 = time.perf_counter()
            assert counted.last_seq == seq and len(dates) == 5
            base.append(t1 - t0)
            ours.append(t2 - t1)
        b, o = statistics.median(base), statistics.median(ours)
        return {
            "entries": entries,
            "turns": turns,
            "baseline_ms": round(b * 1000, 2),
            "ours_ms": round(o * 1000, 2),
            "ratio": round(o / b, 3),
            "ok": o / b <= 0.1,
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=5000)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="500 entries, 5 turns")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    entries, turns = (500, 5) if args.quick else (args.entries, args.turns)
    report = run(entries, turns)
    if args.json:
        print(json.dumps(report))
    else:
        print(
            f"journal of {report['entries']} entries, {report['turns']} turns: "
            f"read whole {report['baseline_ms']} ms, ours {report['ours_ms']} ms "
            f"({report['ratio']}x) {'OK' if report['ok'] else 'OVER TARGET'}"
        )
    # The CI-sized run only shows the script works; the target is the full run's.
    return 0 if report["ok"] or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
