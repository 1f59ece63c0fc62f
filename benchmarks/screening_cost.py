"""What screening another agent's batch costs, this tree against a baseline tree (issue 39).

The items are the model-written items of the held-out corpora (``benchmarks/corpora/
heldout*.jsonl``: 502 items in 14 languages, ordinary notes and planted ones alike),
proposed by another agent in batches of 20 and screened as ``keep_proposals`` screens them
(``review.proposals.screen_proposals``, auto mode, against an empty set). Each tree is
measured in fresh processes, alternately, in the same run (the machine is shared and
noisy): the **first batch** of a process (what a one-off ``ipymemory sync pull`` or
``memory_propose`` pays, loading included) and the **steady** cost of a batch after it.

    python benchmarks/screening_cost.py                  # baseline: the tree of `main`
    python benchmarks/screening_cost.py --baseline-ref HEAD~3 --runs 5
    python benchmarks/screening_cost.py --json

The baseline is ``git archive <ref>`` of this repository, unpacked into a temporary
directory and imported ahead of the installed package.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ("heldout.jsonl", "heldout2.jsonl", "heldout3.jsonl")
BATCH = 20


def _items() -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for name in CORPORA:
        for line in (ROOT / "benchmarks" / "corpora" / name).read_text("utf-8").splitlines():
            if not line.strip() or line.startswith("//"):
                continue
            item = json.loads(line)["item"]
            if item["name"] in seen:
                continue
            seen.add(item["name"])
            out.append({k: item[k] for k in ("name", "description", "body", "type")})
    return out


def child(rounds: int) -> dict[str, Any]:
    """Measured inside a fresh process whose ``sys.path`` starts with the tree."""
    start = time.perf_counter()
    from ipymemory.review.proposals import ProposalScreen, parse_items, screen_proposals

    imported = time.perf_counter() - start
    items = _items()
    batches = [parse_items(items[i : i + BATCH]) for i in range(0, len(items), BATCH)]
    t = time.perf_counter()
    screen_proposals(batches[0], (), ProposalScreen(auto=True))
    first = time.perf_counter() - t
    steady: list[float] = []
    held = 0
    for _ in range(rounds):
        for batch in batches:
            t = time.perf_counter()
            screened = screen_proposals(batch, (), ProposalScreen(auto=True))
            steady.append(time.perf_counter() - t)
            held += sum(1 for s in screened if s.held)
    return {
        "import_s": imported,
        "first_batch_s": first,
        "steady_batch_s": statistics.median(steady),
        "batches": len(batches),
        "items": len(items),
        "held_share": held / (rounds * len(items)),
    }


def _export(ref: str, into: Path) -> Path:
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "ipymemory"], capture_output=True, check=True
    ).stdout
    archive = into / "tree.tar"
    archive.write_bytes(data)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into


def _run(tree: Path, rounds: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, __file__, "--child", "--rounds", str(rounds)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=tree,
    )
    return dict(json.loads(done.stdout))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-ref", default="main", help="git ref of the baseline tree")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per tree")
    parser.add_argument("--rounds", type=int, default=3, help="passes over the items per process")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.rounds)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        base = _export(args.baseline_ref, Path(tmp))
        results: dict[str, list[dict[str, Any]]] = {"baseline": [], "this tree": []}
        for _ in range(args.runs):  # alternately: both see the same load
            results["baseline"].append(_run(base, args.rounds))
            results["this tree"].append(_run(ROOT, args.rounds))
    summary = {
        tree: {
            key: statistics.median(r[key] for r in runs)
            for key in ("import_s", "first_batch_s", "steady_batch_s", "held_share")
        }
        for tree, runs in results.items()
    }
    first = summary["this tree"]["first_batch_s"] / summary["baseline"]["first_batch_s"]
    steady = summary["this tree"]["steady_batch_s"] / summary["baseline"]["steady_batch_s"]
    if args.json:
        print(json.dumps({"summary": summary, "first_ratio": first, "steady_ratio": steady}))
        return 0
    items = results["this tree"][0]["items"]
    print(f"{items} corpus items, batches of {BATCH}, {args.runs} processes per tree")
    print(f"{'':12} {'import s':>9} {'1st batch s':>12} {'batch s':>9} {'held':>6}")
    for tree, row in summary.items():
        print(
            f"{tree:12} {row['import_s']:9.3f} {row['first_batch_s']:12.3f} "
            f"{row['steady_batch_s']:9.4f} {row['held_share']:6.1%}"
        )
    print(f"first batch: {first:.2f}x the baseline; a batch after it: {steady:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
