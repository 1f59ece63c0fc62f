"""How the deterministic selector's time grows with the size of the set (issue 13).

    python benchmarks/select_scale.py [--sizes 100,300,...] [--queries N] [--json]

For each set size: a synthetic set (``select_quality.synthetic``: Zipf-distributed words,
some Chinese, queries of 4-40 words), then the median ms per query with warm caches
(the same set queried again and again, as in a kernel), for

- ``ours``: ``ipymemory.sidequery.fallback.keyword_select``;
- ``old``: the implementation it replaced (per-record terms in a fixed 4,096-entry LRU
  cache, every record's terms intersected with the query's), rebuilt here from the same
  term functions so that only the caching and scoring loop differ.

Both must pick the same records for every query (checked). The ratio is old / ours.
Also printed: ``cold``, ours on a set it never saw (every record tokenized).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import chain
from typing import Any

from select_quality import BenchRecord, synthetic

from ipymemory.sidequery import fallback
from ipymemory.sidequery.fallback import keyword_select

DEFAULT_SIZES = (100, 300, 1000, 4000, 5000, 10000)


@lru_cache(maxsize=4096)
def _old_terms(name: str, description: str) -> Any:
    return fallback._record_terms(f"{name} {description}")


def old_keyword_select(
    query: str, records: Sequence[BenchRecord], limit: int = 5
) -> tuple[BenchRecord, ...]:
    """The replaced implementation (commit eedf4f0), for the ratio."""
    if limit <= 0 or not records:
        return ()
    weights, use_stop = fallback._query_weights(query)
    if not weights:
        return ()
    wanted = weights.keys()
    index = [_old_terms(record.name, record.description) for record in records]
    if use_stop:
        docs = [(entry.stop, entry.total_length) for entry in index]
    else:
        docs = [(entry.content, entry.content_length) for entry in index]
    count = len(docs)
    average_length = sum(length for _, length in docs) / count or 1.0
    overlaps = [counts.keys() & wanted for counts, _ in docs]
    matched = [(position, common) for position, common in enumerate(overlaps) if common]
    doc_freq = Counter(chain.from_iterable(overlaps))
    k1, b = fallback._K1, fallback._B
    factor = {
        term: weights[term] * math.log(1.0 + (count - df + 0.5) / (df + 0.5)) * (k1 + 1.0)
        for term, df in doc_freq.items()
    }
    ranked: list[tuple[float, str, str, int]] = []
    for position, common in matched:
        counts, length = docs[position]
        norm = k1 * (1.0 - b + b * length / average_length)
        score = math.fsum(factor[t] * counts[t] / (counts[t] + norm) for t in common)
        record = records[position]
        ranked.append((-score, record.name, record.description, position))
    return fallback._best_per_name(ranked, records, limit)


Ranker = Callable[[str, Sequence[BenchRecord]], tuple[BenchRecord, ...]]


def _warm_ms(ranker: Ranker, queries: Sequence[str], records: Sequence[BenchRecord]) -> float:
    ranker(queries[0], records)  # fill the caches
    times = []
    for query in queries:
        start = time.perf_counter()
        ranker(query, records)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def measure(size: int, queries: int) -> dict[str, Any]:
    memory_set = synthetic(size=size, queries=queries, seed=size)
    records = memory_set.records
    texts = [q.text for q in memory_set.queries]
    for query in texts:
        assert keyword_select(query, records) == old_keyword_select(query, records), query
    # Alternate the two, so load from other jobs hits both alike.
    ours, old = [], []
    for _ in range(2):
        ours.append(_warm_ms(keyword_select, texts, records))
        old.append(_warm_ms(old_keyword_select, texts, records))
    cold = []
    for query in texts[:5]:
        fallback.clear_caches()
        start = time.perf_counter()
        keyword_select(query, records)
        cold.append(time.perf_counter() - start)
    return {
        "records": size,
        "ours_ms": min(ours),
        "old_ms": min(old),
        "ratio": min(old) / min(ours),
        "ours_cold_ms": statistics.median(cold) * 1e3,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--queries", type=int, default=40, help="queries per size (40)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = [measure(size, args.queries) for size in sizes]
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print("| records | ours ms/query (warm) | old ms/query (warm) | old / ours | ours cold ms |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['records']:,} | {row['ours_ms']:.3f} | {row['old_ms']:.3f} | "
            f"{row['ratio']:.1f} | {row['ours_cold_ms']:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
