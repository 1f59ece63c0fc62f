"""What screening one extracted batch costs, against a baseline tree in the same run.

    python benchmarks/screen_cost.py                        # this tree only
    python benchmarks/screen_cost.py --baseline-ref main    # and a git ref, interleaved
    python benchmarks/screen_cost.py --corpus benchmarks/corpora/heldout.jsonl --json

Every scene of the corpora (default: every scene corpus of ``benchmarks/corpora``)
becomes the canonical history a real turn would give the screening -- the user's
message, a ``read_file`` call per file with the file's text as its result, a
``run_python`` call with the script's output, the answer -- and its item one batch.
Measured: ``ipymemory.review.screened.screen_items`` on that batch (origin, evidence,
instructions, credentials, sources), with the extractor's evidence and without, each
batch on a fresh history (nothing cached between batches but the word lists, which load
once per process); and apart (``large``) two batches whose turn read a 100 KB file
(prose in four languages, and Python with comments), the most a read returns. With
``--baseline-ref``, the ref's ``ipymemory`` is exported (``git archive``) and timed by
the same code in a separate process; the two trees alternate in rounds and each batch's
time is the median of its rounds, so a noisy machine slows both alike. Reported: mean
and 95th percentile ms per batch, and the ratio of the sums (target, issue 39: within 2x
of the baseline)."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_CORPORA = (
    *("real_model", "heldout", "heldout2", "heldout3"),
    *("origin5", "origin5b", "origin5c"),
)


def _history(scene: Any) -> list[dict[str, Any]]:
    """The canonical history of a scene's turn (what the extractor read)."""
    out: list[dict[str, Any]] = [{"role": "user", "content": scene.query}]
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("read_file", {"path": path}, text) for path, text in scene.files
    ]
    if scene.script is not None:
        path, printed = scene.script
        calls.append(("run_python", {"code": f"exec(open({path!r}).read())"}, printed))
    for i, (name, tool_input, result) in enumerate(calls):
        use = {"type": "tool_use", "id": f"t{i}", "name": name, "input": tool_input}
        out.append({"role": "assistant", "content": [use]})
        block = {"type": "tool_result", "tool_use_id": f"t{i}", "content": result}
        out.append({"role": "user", "content": [block]})
    out.append({"role": "assistant", "content": [{"type": "text", "text": scene.answer}]})
    if scene.follow_up is not None:
        out.append({"role": "user", "content": scene.follow_up})
        out.append({"role": "assistant", "content": [{"type": "text", "text": "Noted."}]})
    return out


_PROSE = (
    "the training pipeline reads the raw events and writes a daily table for the reports",
    "die Pipeline liest die Rohdaten und schreibt jeden Tag eine Tabelle für die Berichte",
    "конвейер читает сырые события и каждый день пишет таблицу для отчётов",
    "パイプラインは生のイベントを読み込み、毎日レポート用のテーブルを書き出します",
)
_CODE = (
    "def step_{i}(df):\n    # normalise the amounts before the join, see the notes\n    return df\n"
)


def _large_batches() -> list[tuple[str, str, str]]:
    """(key, query, file text) of the turns that read a 100 KB file."""
    prose = "\n".join(_PROSE[i % 4] + f" ({i})." for i in range(2000))[:100_000]
    code = "".join(_CODE.format(i=i) for i in range(2000))[:100_000]
    query = "We always rebuild the daily table before the reports. Summarise {}."
    return [
        ("large/prose", query.format("NOTES.md"), prose),
        ("large/code", query.format("pipeline.py"), code),
    ]


def _screen_items() -> Any:
    """``screen_items`` of the tree on the path, called the same in every tree: one
    record, its history, the extractor's evidence and the files read."""
    try:
        from ipymemory.review.screened import FilesRead, screen_items
    except ImportError:  # a baseline from before issue 42 (the queue was in turn/)
        from ipymemory.turn.screened import screen_items as old  # type: ignore[import-not-found]

        return lambda r, h, e, reads: old([r], h, set(), evidence=e, reads=reads)
    return lambda r, h, e, reads: screen_items([r], h, set(), evidence=e, files=FilesRead(reads))


def _worker(root: Path, corpora: list[Path], rounds: int) -> dict[str, list[float]]:
    """Seconds per batch (key: scene/mode), one list of ``rounds`` times each."""
    sys.path.insert(0, str(root))
    sys.path.insert(0, str(HERE))
    from scenes import load_scenes

    screen = _screen_items()

    from ipymemory import MemoryRecord

    scenes = [s for path in corpora for s in load_scenes(path)]
    batches = []
    for scene in scenes:
        record = MemoryRecord.from_json(dict(scene.item))
        reads = {path: "0" * 64 for path, _ in scene.files}
        for mode in ("evidence", "plain"):
            evidence = {record.name: list(scene.evidence)} if mode == "evidence" else None
            batches.append((f"{scene.name}/{mode}", record, _history(scene), evidence, reads))
    daily = {"name": "daily-table", "type": "project", "description": "Daily table first"}
    record = MemoryRecord.from_json({**daily, "body": "The daily table is rebuilt before reports."})
    for key, query, text in _large_batches():
        path = "NOTES.md" if key.endswith("prose") else "pipeline.py"
        history = [
            {"role": "user", "content": query},
            {"role": "assistant", "content": [_call(path)]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t0", "content": text}],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "It is a pipeline."}]},
        ]
        evidence = {record.name: ["We always rebuild the daily table before the reports."]}
        batches.append((key, record, history, evidence, {path: "0" * 64}))
    for _, record, history, evidence, reads in batches:  # word lists load once
        screen(record, history, evidence, reads)
    times: dict[str, list[float]] = {key: [] for key, *_ in batches}
    for _ in range(rounds):
        for key, record, history, evidence, reads in batches:
            start = time.perf_counter()
            screen(record, history, evidence, reads)
            times[key].append(time.perf_counter() - start)
    return times


def _call(path: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": "t0", "name": "read_file", "input": {"path": path}}


def _run_worker(root: Path, corpora: list[Path], rounds: int) -> dict[str, list[float]]:
    argv = [sys.executable, __file__, "--worker", str(root), "--rounds", str(rounds)]
    for path in corpora:
        argv += ["--corpus", str(path)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=root)
    if done.returncode:
        raise RuntimeError(f"worker on {root} failed:\n{done.stderr}")
    result: dict[str, list[float]] = json.loads(done.stdout)
    return result


def _export(ref: str, into: Path) -> Path:
    """``ref``'s tree (its ``ipymemory`` package) exported into ``into``."""
    archive = subprocess.run(
        ["git", "archive", ref, "ipymemory"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _summary(times: dict[str, list[float]]) -> dict[str, float]:
    per_batch = sorted(
        statistics.median(v) * 1000 for k, v in times.items() if not k.startswith("large/")
    )
    large = [statistics.median(v) * 1000 for k, v in times.items() if k.startswith("large/")]
    return {
        "large_ms": round(statistics.fmean(large), 1),
        "batches": len(per_batch),
        "mean_ms": round(statistics.fmean(per_batch), 3),
        "p95_ms": round(per_batch[int(0.95 * (len(per_batch) - 1))], 3),
        "max_ms": round(per_batch[-1], 3),
        "total_ms": round(sum(per_batch), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, action="append")
    parser.add_argument("--baseline-ref", help="a git ref to compare with (e.g. main)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per tree")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    corpora = args.corpus or [HERE / "corpora" / f"{name}.jsonl" for name in DEFAULT_CORPORA]
    corpora = [path.resolve() for path in corpora]
    if args.worker is not None:
        print(json.dumps(_worker(args.worker, corpora, args.rounds)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this tree": ROOT}
        if args.baseline_ref:
            trees[f"baseline {args.baseline_ref}"] = _export(args.baseline_ref, Path(tmp))
        times: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
        for _ in range(args.rounds):  # alternate the trees, one round each at a time
            for name, root in trees.items():
                for key, value in _run_worker(root, corpora, 1).items():
                    times[name].setdefault(key, []).extend(value)
    data: dict[str, Any] = {name: _summary(t) for name, t in times.items()}
    if args.baseline_ref:
        base = data[f"baseline {args.baseline_ref}"]
        data["ratio_total"] = round(data["this tree"]["total_ms"] / base["total_ms"], 2)
        data["ratio_p95"] = round(data["this tree"]["p95_ms"] / base["p95_ms"], 2)
        data["ratio_large"] = round(data["this tree"]["large_ms"] / base["large_ms"], 2)
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        print("| tree | batches | mean ms | p95 ms | max ms | total ms | 100 KB read, ms |")
        print("|---|---|---|---|---|---|---|")
        for name in trees:
            d = data[name]
            print(
                f"| {name} | {d['batches']} | {d['mean_ms']} | {d['p95_ms']} | {d['max_ms']}"
                f" | {d['total_ms']} | {d['large_ms']} |"
            )
        if args.baseline_ref:
            print(
                f"\nratio (sum of batches): {data['ratio_total']}x; p95: {data['ratio_p95']}x;"
                f" 100 KB read: {data['ratio_large']}x"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
