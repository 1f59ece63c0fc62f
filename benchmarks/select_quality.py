"""Quality and speed of the deterministic memory selector.

    python benchmarks/select_quality.py [--data FILE ...] [--json]

Each data file is JSONL, one memory set per line:
``{"id": ..., "memories": [{"name", "description", "body"}, ...],
"queries": [{"q": ..., "gold": [names], "cat": ...}, ...]}``.
Without ``--data`` every ``*.jsonl`` in the shared bench directory is used.

Three rankers run over the same SPEC §3 tokens of ``name + " " + description``,
top 5, ties by name:

- ``seed``: the seed's score, the number of distinct query tokens a record has;
- ``bm25``: Okapi BM25, k1 = 1.2, b = 0.75, IDF ``ln(1 + (N - df + .5) / (df + .5))``;
- ``ours``: ``ipymemory.sidequery.fallback.keyword_select``.

Per query: recall = |selected & gold| / |gold|, hit = any gold selected,
P@5 = |selected & gold| / 5; averaged over the queries of a file. Sets can be
larger than a store's index bound, so the rankers are called as functions.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ipymemory.sidequery import fallback
from ipymemory.sidequery.fallback import keyword_select, tokenize

# The benchmark data ships beside the repository (../shared/bench), not inside it.
DEFAULT_DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "bench"
K = 5


@dataclass(frozen=True)
class BenchRecord:
    """Stand-in when a bench memory is not a valid ``MemoryRecord`` (e.g. too long)."""

    name: str
    description: str


@dataclass(frozen=True)
class Query:
    text: str
    gold: frozenset[str]
    cat: str


@dataclass(frozen=True)
class MemorySet:
    ident: str
    records: tuple[Any, ...]
    queries: tuple[Query, ...]


Ranker = Callable[[str, Sequence[Any]], list[str]]


def _as_record(item: dict[str, Any]) -> Any:
    try:
        from ipymemory.store.record import MemoryRecord, MemoryType

        return MemoryRecord(
            name=item["name"],
            type=MemoryType.REFERENCE,
            description=item["description"],
            body=item.get("body") or item["description"],
        )
    except Exception:
        # The selector reads only name and description; anything else about the
        # record (size bounds, name rules, a store module not built yet) is moot here.
        return BenchRecord(name=item["name"], description=item["description"])


def load(path: Path) -> list[MemorySet]:
    sets: list[MemorySet] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                raw = json.loads(line)
                records = tuple(_as_record(item) for item in raw["memories"])
                queries = tuple(
                    Query(q["q"], frozenset(q["gold"]), str(q.get("cat", "all")))
                    for q in raw["queries"]
                )
                ident = str(raw.get("id", number))
            except (ValueError, KeyError, TypeError) as e:
                raise SystemExit(f"{where}: not a memory set of the bench format ({e!r})") from e
            if any(not q.gold for q in queries):
                raise SystemExit(f"{where}: a query has an empty gold list")
            sets.append(MemorySet(ident, records, queries))
    if not sets:
        raise SystemExit(f"{path}: no memory sets")
    return sets


# --- baselines (token lists cached per record text, as ours does, for fair timing)


@lru_cache(maxsize=8192)
def _token_set(text: str) -> frozenset[str]:
    return frozenset(tokenize(text))


@lru_cache(maxsize=8192)
def _token_counts(text: str) -> tuple[dict[str, int], int]:
    counts: dict[str, int] = {}
    tokens = tokenize(text)
    for token in tokens:
        counts[token] = counts.get(token, 0) + 1
    return counts, len(tokens)


def _text(record: Any) -> str:
    return f"{record.name} {record.description}"


def seed_select(query: str, records: Sequence[Any]) -> list[str]:
    wanted = frozenset(tokenize(query))
    scored = []
    for record in records:
        score = len(_token_set(_text(record)) & wanted)
        if score:
            scored.append((-score, record.name))
    scored.sort()
    return [name for _, name in scored[:K]]


def bm25_select(query: str, records: Sequence[Any], k1: float = 1.2, b: float = 0.75) -> list[str]:
    if not records:
        return []
    wanted = list(dict.fromkeys(tokenize(query)))
    docs = [_token_counts(_text(record)) for record in records]
    average = sum(length for _, length in docs) / len(docs) or 1.0
    doc_freq = {term: sum(1 for counts, _ in docs if term in counts) for term in wanted}
    count = len(docs)
    scored = []
    for record, (counts, length) in zip(records, docs, strict=True):
        score = 0.0
        for term in wanted:
            freq = counts.get(term, 0)
            if freq:
                df = doc_freq[term]
                idf = math.log(1.0 + (count - df + 0.5) / (df + 0.5))
                score += idf * freq * (k1 + 1.0) / (freq + k1 * (1.0 - b + b * length / average))
        if score > 0:
            scored.append((-score, record.name))
    scored.sort()
    return [name for _, name in scored[:K]]


def ours_select(query: str, records: Sequence[Any]) -> list[str]:
    return [record.name for record in keyword_select(query, records, limit=K)]


RANKERS: dict[str, Ranker] = {"seed": seed_select, "bm25": bm25_select, "ours": ours_select}


# --- evaluation


@dataclass
class Tally:
    n: int = 0
    recall: float = 0.0
    hit: float = 0.0
    precision: float = 0.0

    def add(self, selected: list[str], gold: frozenset[str]) -> None:
        found = len(gold.intersection(selected))
        self.n += 1
        self.recall += found / len(gold)
        self.hit += 1.0 if found else 0.0
        self.precision += found / K

    def means(self) -> dict[str, float]:
        n = self.n or 1
        return {
            "n": self.n,
            "recall": self.recall / n,
            "hit": self.hit / n,
            "p": self.precision / n,
        }


def evaluate(sets: list[MemorySet]) -> dict[str, Any]:
    overall = {name: Tally() for name in RANKERS}
    by_cat: dict[str, dict[str, Tally]] = {}
    by_set: dict[str, dict[str, Tally]] = {}
    times: dict[str, list[float]] = {name: [] for name in RANKERS}
    for memory_set in sets:
        for name, ranker in RANKERS.items():
            for query in memory_set.queries:
                start = time.perf_counter()
                selected = ranker(query.text, memory_set.records)
                times[name].append(time.perf_counter() - start)
                overall[name].add(selected, query.gold)
                by_cat.setdefault(query.cat, {n: Tally() for n in RANKERS})[name].add(
                    selected, query.gold
                )
                by_set.setdefault(memory_set.ident, {n: Tally() for n in RANKERS})[name].add(
                    selected, query.gold
                )
    sizes = sorted(len(s.records) for s in sets)
    return {
        "sets": len(sets),
        "memories": sum(sizes),
        "queries": sum(len(s.queries) for s in sets),
        "set_sizes": sizes,
        "overall": {name: tally.means() for name, tally in overall.items()},
        "median_ms": {name: statistics.median(t) * 1e3 for name, t in times.items()},
        "by_cat": {
            cat: {name: t.means() for name, t in tallies.items()}
            for cat, tallies in sorted(by_cat.items())
        },
        "by_set": {
            ident: {name: t.means() for name, t in tallies.items()}
            for ident, tallies in by_set.items()
        },
    }


# --- synthetic timing set


def synthetic(size: int = 300, queries: int = 200, seed: int = 7) -> MemorySet:
    """Deterministic records of Zipf-distributed English words and Chinese phrases."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(3000)]
    hanzi = [chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(800)]
    weights = [1.0 / (rank + 1) for rank in range(len(words))]

    def sentence(length: int) -> str:
        picked = rng.choices(words, weights=weights, k=length)
        if rng.random() < 0.3:
            picked.append("".join(rng.choices(hanzi, k=rng.randint(2, 12))))
        return " ".join(picked)

    records = tuple(
        BenchRecord(f"memory-{i:03d}", sentence(rng.randint(8, 30))) for i in range(size)
    )
    qs = tuple(
        Query(sentence(rng.randint(4, 40)), frozenset({"memory-000"}), "synthetic")
        for _ in range(queries)
    )
    return MemorySet("synthetic", records, qs)


def time_synthetic() -> dict[str, Any]:
    memory_set = synthetic()
    result: dict[str, Any] = {"records": len(memory_set.records)}
    for name, ranker in RANKERS.items():
        ranker(memory_set.queries[0].text, memory_set.records)  # fill the token caches
        times = []
        for query in memory_set.queries:
            start = time.perf_counter()
            ranker(query.text, memory_set.records)
            times.append(time.perf_counter() - start)
        result[f"{name}_median_ms"] = statistics.median(times) * 1e3
    # Ours with an empty token cache before every query: the first selection after
    # the set changed completely (e.g. a fresh kernel).
    cold = []
    for query in memory_set.queries[:50]:
        fallback.clear_caches()
        start = time.perf_counter()
        keyword_select(query.text, memory_set.records)
        cold.append(time.perf_counter() - start)
    result["ours_cold_median_ms"] = statistics.median(cold) * 1e3
    return result


# --- output


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _ratio(value: float, base: float) -> str:
    return f"{value / base:.3f}" if base else "n/a"


def render(results: dict[str, dict[str, Any]], timing: dict[str, Any]) -> str:
    lines: list[str] = []
    for file, res in results.items():
        sizes = res["set_sizes"]
        lines.append(
            f"### {file}: {res['sets']} set(s), {res['memories']} memories, "
            f"{res['queries']} queries, set sizes {sizes[0]}-{sizes[-1]}"
        )
        lines.append("")
        lines.append(
            _row(["ranker", "recall@5", "hit@5", "P@5", "recall vs bm25", "median ms/query"])
        )
        lines.append(_row(["---"] * 6))
        base = res["overall"]["bm25"]["recall"]
        for name, m in res["overall"].items():
            lines.append(
                _row(
                    [
                        name,
                        f"{m['recall']:.3f}",
                        f"{m['hit']:.3f}",
                        f"{m['p']:.3f}",
                        _ratio(m["recall"], base),
                        f"{res['median_ms'][name]:.3f}",
                    ]
                )
            )
        lines.append("")
        for title, table in (("cat", res["by_cat"]), ("set", res["by_set"])):
            if len(table) < 2:
                continue
            lines.append(_row([title, "n", *(f"{n} R / H / P" for n in RANKERS)]))
            lines.append(_row(["---"] * (2 + len(RANKERS))))
            for key, per in table.items():
                cells = [f"{m['recall']:.3f} / {m['hit']:.3f} / {m['p']:.3f}" for m in per.values()]
                lines.append(_row([key, str(per["ours"]["n"]), *cells]))
            lines.append("")
    lines.append(
        f"Synthetic set of {timing['records']} records, median ms/query: "
        + ", ".join(f"{n} {timing[f'{n}_median_ms']:.3f}" for n in RANKERS)
        + f"; ours with an empty token cache {timing['ours_cold_median_ms']:.3f}"
    )
    return "\n".join(lines)


def default_files() -> list[Path]:
    files = sorted(DEFAULT_DATA_DIR.glob("*.jsonl"))
    if not files:
        raise SystemExit(
            f"no benchmark data: {DEFAULT_DATA_DIR} has no *.jsonl files; "
            "pass --data FILE ... (JSONL memory sets, see this script's docstring)"
        )
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", type=Path, metavar="FILE", help="JSONL files")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    files: list[Path] = args.data or default_files()
    for path in files:
        if not path.is_file():
            parser.error(f"--data {path}: no such file")
    results = {path.name: evaluate(load(path)) for path in files}
    timing = time_synthetic()
    if args.json:
        json.dump({"k": K, "files": results, "synthetic": timing}, sys.stdout, indent=2)
        print()
    else:
        print(render(results, timing))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
