"""What one large saved batch costs ``ipymemory pending`` (issue 28 item 7).

    python benchmarks/pending_listing.py            # one 300-item batch, 3 runs each
    python benchmarks/pending_listing.py --quick    # CI-sized: 30 items, 1 run

A workspace holds one batch in ``.memory/pending/`` the way another agent's proposal
leaves it (origin ``agent``, evidence per item, every tenth item flagged), each item a
record of about 3.5 KB (300 items: a file of ~1.3 MB, under the 4 MiB read bound). Timed,
each as the real command in a fresh process (what a terminal or the Lab panel's
poll pays):

- baseline: ``ipymemory pending`` over an empty ``pending/`` (the process's start-up
  and the command itself);
- listing: ``ipymemory pending`` with the batch;
- reopening: ``ipymemory commit --batch ID --reject …`` of every item (the batch is
  read, screened and decided; nothing is written), where screening each item is due.

Medians of ``--runs`` runs; the listing's cost over the baseline is what the batch
adds. Target: the listing within 1.5x the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _batch(workspace: Path, items: int) -> str:
    from ipymemory.review import Item, PendingBatch
    from ipymemory.review.pending import PendingFiles
    from ipymemory.review.provenance import TurnProvenance
    from ipymemory.store.record import MemoryRecord

    words = ["the", "pipeline", "loads", "orders", "then", "joins", "customers", "by", "region"]
    records = []
    for i in range(items):
        body = " ".join(words[(i + j) % len(words)] for j in range(480))[:3400]
        records.append(
            MemoryRecord(
                name=f"agent-note-{i}",
                type="project",
                description=f"note {i} about the orders pipeline",
                body=body,
            )
        )
    why = ("instructs the assistant (how-to-work) and did not come from the user",)
    batch = PendingBatch(
        "bench300batch",
        tuple(
            Item(r, "agent", flags=why if i % 10 == 0 else (), evidence=(r.body[:300],))
            for i, r in enumerate(records)
        ),
        None,
        (),
        provenance=TurnProvenance("mcp-bench", via="mcp"),
    )
    files = PendingFiles(workspace / ".memory")
    if not files.save(batch):
        raise SystemExit(f"the batch was not kept: {files.last_error}")
    return batch.id


def _cli(workspace: Path, *argv: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "IPYMEMORY_USER_DIR": "off"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ipymemory.cli", "--dir", str(workspace), *argv],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr}")
    return seconds


def run(items: int, runs: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp, "empty")
        full = Path(tmp, "full")
        for ws in (empty, full):
            (ws / ".memory").mkdir(parents=True)
        batch_id = _batch(full, items)
        size = (full / ".memory" / "pending" / f"{batch_id}.json").stat().st_size
        reject = [f"agent-note-{i}" for i in range(items)]
        base: list[float] = []
        listing: list[float] = []
        deciding: list[float] = []
        for _ in range(runs):
            base.append(_cli(empty, "pending"))
            listing.append(_cli(full, "pending"))
            # Every item rejected: the batch is read and decided, nothing is written.
            # (A copy each run: the decision removes the file.)
            copy = Path(tmp, "copy")
            subprocess.run(["cp", "-r", str(full), str(copy)], check=True)
            deciding.append(_cli(copy, "commit", "--batch", batch_id, "--reject", *reject))
            subprocess.run(["rm", "-rf", str(copy)], check=True)
    b, lst, dec = (statistics.median(x) for x in (base, listing, deciding))
    return {
        "items": items,
        "file_bytes": size,
        "runs": runs,
        "baseline_s": round(b, 3),
        "listing_s": round(lst, 3),
        "listing_ratio": round(lst / b, 2),
        "decide_s": round(dec, 3),
        "decide_ratio": round(dec / b, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="30 items, one run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    items, runs = (30, 1) if args.quick else (args.items, args.runs)
    result = run(items, runs)
    if args.json:
        print(json.dumps(result))
        return
    print(f"one batch of {items} items ({result['file_bytes']:,} bytes), median of {runs}:")
    print(f"  ipymemory pending, empty pending/:  {result['baseline_s']:.3f} s")
    print(
        f"  ipymemory pending, the batch:       {result['listing_s']:.3f} s "
        f"({result['listing_ratio']}x)"
    )
    print(
        f"  ipymemory commit --batch (reject):  {result['decide_s']:.3f} s "
        f"({result['decide_ratio']}x)"
    )


if __name__ == "__main__":
    main()
