"""Selection over two scopes (SPEC §11) against the same records in one store.

    python benchmarks/scope_select.py            # every *.jsonl in ../shared/bench/
    python benchmarks/scope_select.py --quick    # CI-sized: one set, few queries
    python benchmarks/scope_select.py --json

(a) quality: each bench set is written to one real store, and again split in two real
    stores: a held-out share (``--share``, default 0.5, a seeded random choice) moved to
    a user scope. Each query is selected the way a turn does it -- ``read_scopes`` over
    the project and the user store, then ``select_memories`` (no model configured: the
    deterministic fallback) -- and recall@5 is compared with the one-store selection.
(b) time: 400 records (LoCoMo observations, renamed apart) in one store against 200 +
    200 in a project and a user store; the whole selection path (reading the sets, the
    catalog, the ranking) per query, the two alternating in one loop, medians. Target:
    two scopes <= 1.5x one store.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ipymemory import MemoryStore, NoModel
from ipymemory.review.scopes import read_scopes
from ipymemory.sidequery import select_memories
from ipymemory.store.record import MemoryRecord, MemoryType

DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "bench"
BIG: dict[str, Any] = {"max_index_lines": 5000, "max_index_bytes": 1 << 24}
K = 5


def records_of(raw: dict[str, Any], prefix: str = "") -> list[MemoryRecord]:
    out = []
    for item in raw["memories"]:
        try:
            out.append(
                MemoryRecord(
                    name=f"{prefix}{item['name']}",
                    type=MemoryType.REFERENCE,
                    description=item["description"],
                    body=item.get("body") or item["description"],
                )
            )
        except ValueError:
            continue  # not a valid record (too long): no store would hold it
    return out


def store(root: Path, records: list[MemoryRecord]) -> MemoryStore:
    root.mkdir(parents=True)
    made = MemoryStore(root, **BIG)
    made.extend(records)
    return made


def selected(project: MemoryStore, user: MemoryStore | None, query: str) -> list[str]:
    scoped = read_scopes(project, user)
    selection = select_memories(NoModel(), query, scoped.records, scoped.catalog, limit=K)
    return list(selection.names)


def quality(files: list[Path], share: float, max_queries: int | None, tmp: Path) -> dict[str, Any]:
    report: dict[str, Any] = {}
    rng = random.Random(20261201)
    for path in files:
        one_total = two_total = 0.0
        n = same = 0
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if not line.strip():
                continue
            raw = json.loads(line)
            records = records_of(raw)
            moved = {r.name for r in records if rng.random() < share}
            base = tmp / f"{path.stem}-{number}"
            one = store(base / "one", records)
            project = store(base / "project", [r for r in records if r.name not in moved])
            user = store(base / "user", [r for r in records if r.name in moved])
            known = {r.name for r in records}
            for q in raw["queries"][:max_queries]:
                gold = set(q["gold"]) & known
                if not gold:
                    continue
                a, b = selected(one, None, q["q"]), selected(project, user, q["q"])
                one_total += len(gold & set(a)) / len(gold)
                two_total += len(gold & set(b)) / len(gold)
                same += a == b
                n += 1
        report[path.name] = {
            "queries": n,
            "recall_one_store": one_total / max(n, 1),
            "recall_two_scopes": two_total / max(n, 1),
            "identical_selections": same,
        }
    return report


def timing(files: list[Path], rounds: int, tmp: Path) -> dict[str, float]:
    locomo = next((p for p in files if "locomo" in p.name), files[0])
    lines = [json.loads(line) for line in locomo.read_text(encoding="utf-8").splitlines() if line]
    pool: list[MemoryRecord] = []
    queries: list[str] = []
    for i, raw in enumerate(lines):
        pool.extend(records_of(raw, prefix=f"s{i}-"))
        queries.extend(q["q"] for q in raw["queries"])
    pool = pool[:400]
    if len(pool) < 400:
        raise SystemExit(f"{locomo}: fewer than 400 valid records")
    one = store(tmp / "t-one", pool)
    project, user = store(tmp / "t-project", pool[:200]), store(tmp / "t-user", pool[200:])
    sample = queries[:rounds]
    one_times, two_times = [], []
    for query in sample:
        start = time.perf_counter()
        selected(one, None, query)
        one_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        selected(project, user, query)
        two_times.append(time.perf_counter() - start)
    a, b = statistics.median(one_times) * 1000, statistics.median(two_times) * 1000
    return {"one_store_400_ms": a, "two_scopes_200_200_ms": b, "ratio": b / a}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", nargs="+", type=Path, help="bench files (default: all)")
    parser.add_argument("--share", type=float, default=0.5, help="share moved to the user scope")
    parser.add_argument("--quick", action="store_true", help="a CI-sized run")
    parser.add_argument("--json", action="store_true", help="machine-readable results")
    args = parser.parse_args()
    files = args.data or sorted(DATA_DIR.glob("*.jsonl"))
    if not files:
        raise SystemExit(f"no bench files in {DATA_DIR}")
    if args.quick:
        files = files[:1]
    with tempfile.TemporaryDirectory() as tmp:
        q = quality(files, args.share, 10 if args.quick else None, Path(tmp))
        t = timing(files, 20 if args.quick else 200, Path(tmp))
    if args.json:
        print(json.dumps({"quality": q, "timing": t}))
        return
    for name, row in q.items():
        print(
            f"(a) {name}: recall@5 one store {row['recall_one_store']:.3f}, two scopes "
            f"{row['recall_two_scopes']:.3f} ({row['identical_selections']}/{row['queries']} "
            "selections identical)"
        )
    print(
        f"(b) selection path: one store of 400 {t['one_store_400_ms']:.2f} ms, 200 + 200 "
        f"{t['two_scopes_200_200_ms']:.2f} ms, ratio {t['ratio']:.2f}x (target <= 1.5x)"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
