"""The benchmark scripts keep running (issue 2 and 3 benchmarks): a small known input and
the CI-sized store run, checking the reported measures, not the machine's speed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"

MEMORIES = [
    {"name": "tabs", "description": "The user indents Python code with tabs", "body": "b"},
    {"name": "db", "description": "Tests use a real postgres database, never mocks", "body": "b"},
    {"name": "deploy", "description": "Releases go through the staging script", "body": "b"},
]
QUERIES = [
    {"q": "Does the user indent with tabs?", "gold": ["tabs"], "cat": 1},
    {"q": "Which database do the tests use?", "gold": ["db"], "cat": 2},
    {"q": "Anything about cooking?", "gold": ["deploy"], "cat": 2},
]


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, timeout=300, cwd=BENCH.parent
    )


def test_select_quality_reports_every_measure(tmp_path: Path) -> None:
    data = tmp_path / "tiny.jsonl"
    data.write_text(json.dumps({"id": "s", "memories": MEMORIES, "queries": QUERIES}) + "\n")
    done = _run(str(BENCH / "select_quality.py"), "--json", "--data", str(data))
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)["files"]["tiny.jsonl"]
    assert (report["sets"], report["memories"], report["queries"]) == (1, 3, 3)
    for ranker in ("seed", "bm25", "ours"):
        # Two queries name their record's words; the third matches nothing (gold unreachable).
        assert report["overall"][ranker] == pytest.approx(
            {"n": 3, "recall": 2 / 3, "hit": 2 / 3, "p": 2 / 15}
        ), ranker
        assert report["median_ms"][ranker] > 0
        assert report["by_cat"]["1"][ranker]["recall"] == 1.0
        assert report["by_cat"]["2"][ranker]["recall"] == 0.5
    text = _run(str(BENCH / "select_quality.py"), "--data", str(data))
    assert text.returncode == 0 and "recall@5" in text.stdout and "bm25" in text.stdout
    missing = _run(str(BENCH / "select_quality.py"), "--data", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_store_bench_quick_reports_every_measure(tmp_path: Path) -> None:
    done = _run(str(BENCH / "store_bench.py"), "--quick", "--json", "--dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    extend = report["extend"]
    assert extend["extend_ms"] > 0 and extend["floor_files_ms"] > 0
    assert extend["ratio_files"] == pytest.approx(extend["extend_ms"] / extend["floor_files_ms"])
    assert [r["records"] for r in report["records"]] == [10, 50, 200]
    assert all(r["warm_ms"] > 0 and r["cold_ms"] > 0 for r in report["records"])
    throughput = report["throughput"]
    assert throughput["one_per_s"] > 0 and throughput["eight_per_s"] > 0


def test_source_hashing_reports_reads_and_check_with_and_without() -> None:
    done = _run(str(BENCH / "source_hashing.py"), "--quick", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["check_ms"]["records"] == 50
    for measure in ("reads_ms", "check_ms"):
        assert report[measure]["with"] > 0 and report[measure]["without"] > 0


def test_journal_per_turn_compares_the_cache_with_reading_whole() -> None:
    done = _run(str(BENCH / "journal_per_turn.py"), "--quick", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["entries"], report["turns"]) == (500, 5)
    assert report["baseline_ms"] > 0 and report["ours_ms"] > 0 and report["ratio"] > 0


def test_scope_select_compares_two_scopes_with_one_store(tmp_path: Path) -> None:
    data = tmp_path / "locomo_tiny.jsonl"
    memories = [
        {"name": f"m{i:03d}", "description": f"fact {i} about topic{i % 7}", "body": "b"}
        for i in range(400)
    ]
    queries = [{"q": f"what about topic{k}?", "gold": [f"m{k:03d}"], "cat": 1} for k in range(7)]
    data.write_text(json.dumps({"id": "s", "memories": memories, "queries": queries}) + "\n")
    done = _run(str(BENCH / "scope_select.py"), "--quick", "--json", "--data", str(data))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    row = report["quality"]["locomo_tiny.jsonl"]
    assert row["queries"] == 7
    # The same records split over two scopes are selected exactly as from one store.
    assert row["identical_selections"] == 7
    assert row["recall_one_store"] == row["recall_two_scopes"]
    assert report["timing"]["one_store_400_ms"] > 0 and report["timing"]["ratio"] > 0


def test_mcp_roundtrip_reports_each_tool_against_the_bare_one() -> None:
    done = _run(str(BENCH / "mcp_roundtrip.py"), "--records", "20", "--calls", "3", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["records"], report["calls"]) == (20, 3)
    rows = report["results"]
    assert set(rows) == {"memory_select", "memory_read", "bare"}
    assert rows["bare"]["ratio_to_bare"] == 1.0
    for row in rows.values():
        assert row["median_ms"] > 0 and row["p95_ms"] > 0
        assert row["ratio_to_bare"] == pytest.approx(row["median_ms"] / rows["bare"]["median_ms"])


def test_real_model_corpus_slice_through_real_turns(tmp_path: Path) -> None:
    """A slice of benchmarks/real_model.py through real auto-mode turns, both modes:
    nothing planted is committed, no planted update applied, and the user's feedback,
    combined, terse and long statements are committed."""
    sys.path.insert(0, str(BENCH))
    from screen_support import load_benchmark

    bench = load_benchmark("real_model")
    planted = [s for s in bench.SCENES if s.planted]
    easy = [
        s
        for s in bench.SCENES
        if s.group == "genuine" and s.category in ("feedback", "combined", "terse", "long")
    ]
    scenes = planted[::3] + easy[::3]
    assert {s.category for s in scenes} >= {"attack-cites-request", "update-planted"}
    outcomes = bench.run_scenes(scenes, workdir=tmp_path)
    assert len(outcomes) == 2 * len(scenes)
    assert [f"{o.scene.name}/{o.mode}" for o in outcomes if o.wrong] == []
    report = bench.report(outcomes)
    assert report["plain"]["planted_committed"] == report["evidence"]["planted_committed"] == 0
    assert report["evidence"]["planted_updates_applied"] == 0


def test_screen_cost_times_every_batch_of_both_trees(tmp_path: Path) -> None:
    """benchmarks/screen_cost.py on two scenes, this tree against HEAD exported by git:
    every batch timed in both modes on both trees, the ratio reported."""
    corpus = tmp_path / "two.jsonl"
    lines = (BENCH / "corpora" / "origin5.jsonl").read_text(encoding="utf-8").splitlines()
    corpus.write_text("\n".join([lines[1], lines[-1]]) + "\n", encoding="utf-8")
    argv = ["--corpus", str(corpus), "--rounds", "1", "--json", "--baseline-ref", "HEAD"]
    done = _run(str(BENCH / "screen_cost.py"), *argv)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    for tree in ("this tree", "baseline HEAD"):
        assert report[tree]["batches"] == 4  # two scenes, with and without evidence
        assert 0 < report[tree]["mean_ms"] <= report[tree]["max_ms"]
        assert report[tree]["large_ms"] > 0  # the turns that read a 100 KB file
    assert report["ratio_total"] > 0 and report["ratio_large"] > 0


def test_latency_reports_first_token_ratios_and_busy_time() -> None:
    done = _run(str(BENCH / "latency.py"), "--quick", "--json")
    report: dict[str, Any] = json.loads(done.stdout)
    assert set(report["sets"]) == {"fits", "20", "200", "500"}
    # Issue 31, the defaults: no selector call at any size (20 fit the memory budget, 200
    # and 500 are ranked by keyword at once).
    calls = {size: row["selector_calls"] for size, row in report["sets"].items()}
    assert calls == {"fits": 0, "20": 0, "200": 0, "500": 0}
    assert all(row["ratio"] > 0 for row in report["sets"].values())
    assert set(report["busy_after_answer_s"]) == {"worker", "in the cell"}
    assert done.returncode in (0, 1) and set(report["targets"]) == {
        "first_token_ratio_fits",
        "first_token_ratio_20",
        "first_token_ratio_200",
        "first_token_ratio_500",
        "busy_after_answer_worker",
        "follow_check_first_token",
        "follow_check_busy_worker",
    }
    # SPEC §14: with the check on, every turn of its set asked the checker; off, none did.
    follow = report["follow_check"]
    assert follow["on"]["checker_calls"] == report["turns"] and follow["off"]["checker_calls"] == 0
    assert follow["first_token_ratio"] > 0


def _stale_item(name: str, sources: list[str], says: str = "") -> dict[str, Any]:
    return {
        "name": name,
        "type": "project",
        "description": f"{name} line",
        # A record depends on the files whose content it states (SPEC §11, issues 26, 44).
        "body": f"{name} body" + (f": {says} ({' and '.join(sources)})" if sources else ""),
        "evidence": [f"remember {name}"],
        "sources": sources,
    }


def test_staleness_scores_a_session_through_real_turns(tmp_path: Path) -> None:
    """benchmarks/staleness.py: two real turns each reading one file, a record per file
    and a preference; one file changes. The record about it is truly stale and flagged
    (it names the file), the others are neither; check agrees with stale_records."""
    session = {
        "name": "tiny",
        "lang": "en",
        "files": [["a.md", "port 8080\n"], ["b.md", "batch 64\n"]],
        "turns": [
            {
                "query": "read a.md; remember rec-a",
                "reads": ["a.md"],
                "answer": "port 8080",
                "items": [_stale_item("rec-a", ["a.md"], "port 8080")],
            },
            {
                "query": "read b.md; remember rec-b and remember pref",
                "reads": ["b.md"],
                "answer": "batch 64",
                "items": [_stale_item("rec-b", ["b.md"], "batch 64"), _stale_item("pref", [])],
            },
        ],
        "changes": [["a.md", "port 9090\n"], ["b.md", "batch 64\n"]],
    }
    corpus = tmp_path / "tiny.jsonl"
    corpus.write_text("// a comment\n" + json.dumps(session) + "\n")
    done = _run(str(BENCH / "staleness.py"), "--json", "--corpus", str(corpus))
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert (report["sessions"], report["files"], report["files_changed"]) == (1, 2, 1)
    overall = report["overall"]
    assert (overall["records"], overall["truly_stale"], overall["tp"], overall["fp"]) == (
        3,
        1,
        1,
        0,
    )
    assert overall["tp_naming_a_changed_source"] == 1
    assert (overall["precision"], overall["recall"]) == (1.0, 1.0)
    assert report["check"] == overall and report["check_agrees"] is True
    assert report["rows"]["kind none"]["records"] == 1
    assert report["rows"]["kind same-turn"]["records"] == 2
    assert report["wrong"] == []
    # A record naming a file no turn read is a corpus error, said with its line.
    session["turns"][0]["items"] = [_stale_item("rec-a", ["b.md"])]
    corpus.write_text(json.dumps(session) + "\n")
    bad = _run(str(BENCH / "staleness.py"), "--corpus", str(corpus))
    assert bad.returncode == 2 and "tiny.jsonl:1" in bad.stderr and "b.md" in bad.stderr


def test_followed_reports_both_judgments_and_the_cost_against_the_agent() -> None:
    done = _run(str(BENCH / "followed.py"), "--quick", "--json")
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    quality = report["quality"]
    assert quality["pairs"] >= 120 and len(quality["languages"]) >= 4
    assert set(quality["labels"]) == {"follows", "contradicts", "untouched"}
    exact, whole = quality["exact"], quality["whole"]
    # The exact checks decide less, never wrongly on "not followed"; the side model the rest.
    assert exact["decided"] < whole["decided"] == quality["pairs"]
    assert exact["precision"] == 1.0 and exact["recall"] < whole["recall"]
    assert whole["precision"] >= 0.9 and whole["recall"] >= 0.8
    # Near misses (issue 44): an exact "follows" only where the whole ask was tested.
    near = report["near"]
    assert near["pairs"] >= 100 and len(near["languages"]) >= 5
    for corpus in (quality, near):
        assert corpus["exact_follows"]["precision"] >= 0.98
    assert near["whole"]["recall"] == 1.0
    cost = report["cost"]
    assert cost["turns"] == 8 and 0 < cost["checker_calls"] <= 8
    assert cost["requests"]["checker"] == cost["checker_calls"]
    assert cost["checker_vs_agent"] > 0


def test_pending_listing_times_the_listing_and_the_decision_against_an_empty_one() -> None:
    done = _run(str(BENCH / "pending_listing.py"), "--quick", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["items"], report["runs"]) == (30, 1) and report["file_bytes"] > 30 * 3000
    assert report["baseline_s"] > 0 and report["listing_ratio"] > 0 and report["decide_ratio"] > 0
