"""What choosing costs at any size (issue 31): the selector's input, recall, records injected.

    python benchmarks/select_budget.py            # every table, ~20 s
    python benchmarks/select_budget.py --json

(a) **The selector's input at 200 records**, today's request (the whole catalog, SPEC §3)
    against the bounded one (``select_candidates`` = 30 of the keyword ranking's best,
    ``selector="model"``) and the keyword selector (no request), for the queries of a
    LoCoMo set cut to 200 records; priced like ``turn_cost.py`` (tokens = bytes / 4,
    cache writes 1.25x, reads 0.1x, at the side model's minimum cacheable length, 2,048
    and 4,096 tokens), the requests in order through one cache.
(b) **Quality at 50 and at 500 records** for the same LoCoMo queries: each query's 50-set
    is its gold records and a seeded sample of its own conversation; its 500-set is the
    whole conversation padded with the other conversations' records (renamed). Per
    option: recall@5 of what is injected, the records injected and their estimated
    tokens (the main call's input): ``keyword`` (the default beyond the budget: the
    ranking's best ``max_selected``), ``fill`` (the ranking's best until the block
    reaches ``memory_budget``), and ``candidates`` (recall of the 30 the model selector
    is shown: the ceiling of any model's pick).
(c) **The memory budget**: how many of the bench's records (and of ``latency.py``'s) a
    block of ``memory_budget`` tokens holds, i.e. up to which size a set is injected whole.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from select_quality import DEFAULT_DATA_DIR, load  # noqa: E402
from turn_cost import PromptCache, prose  # noqa: E402

from ipymemory import _constants as C  # noqa: E402
from ipymemory.model import cached_system  # noqa: E402
from ipymemory.sidequery.fallback import keyword_select  # noqa: E402
from ipymemory.sidequery.prompts import SELECTOR_PROMPT  # noqa: E402
from ipymemory.sidequery.replies import encode_input  # noqa: E402
from ipymemory.sidequery.select import newest_shown, shortlist  # noqa: E402
from ipymemory.store.index import render_catalog  # noqa: E402
from ipymemory.store.record import MemoryRecord, MemoryType, StoredRecord  # noqa: E402
from ipymemory.turn.choosing import block_tokens, fill_by_rank  # noqa: E402

TODAY = "2026-12-01 (Tuesday)"
K = 5
OLD_CANDIDATES = 30  # what the model selector was shown before issue 40: its ceiling
DATASETS = {
    "LoCoMo": "locomo_obs_dev.jsonl",
    "MADial en": "madial_en_dev.jsonl",
    "MADial zh": "madial_zh_dev.jsonl",
}


def _records(raw: list[Any], prefix: str = "") -> list[MemoryRecord]:
    return [
        MemoryRecord(
            name=f"{prefix}{r.name}",
            type=MemoryType.REFERENCE,
            description=r.description,
            body=r.description,
        )
        for r in raw
    ]


def _entries(records: list[MemoryRecord]) -> list[StoredRecord]:
    return [StoredRecord(f"{r.name}-{i:032x}.md", r) for i, r in enumerate(records)]


def _request(catalog: str, query: str) -> dict[str, Any]:
    payload = encode_input({"catalog": catalog, "query": query, "today": TODAY})
    return {
        "system": cached_system(SELECTOR_PROMPT),
        "messages": [{"role": "user", "content": payload}],
    }


def _cached_request(catalog: str, query: str) -> dict[str, Any]:
    """The request as issue 40 sends it: the catalog in a cached block, then the query."""
    asked = encode_input({"given": [], "query": query, "today": TODAY})
    return {
        "system": cached_system(SELECTOR_PROMPT),
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": encode_input({"catalog": catalog}),
                        "cache_control": {"type": "ephemeral"},
                    },
                    {"type": "text", "text": asked},
                ],
            }
        ],
    }


def selector_cost(sets: list[Any], size: int, queries: int) -> dict[str, Any]:
    """(a): the same queries, the whole catalog uncached (before issue 31), the bounded
    30 candidates (issue 31) and the whole catalog in a cached block (issue 40), priced."""
    memory_set = max(sets, key=lambda s: len(s.records))
    records = _records(list(memory_set.records)[:size])
    catalog = render_catalog(_entries(records))
    asked = [q.text for q in memory_set.queries[:queries]]
    out: dict[str, Any] = {"records": len(records), "queries": len(asked)}
    for minimum in (2048, 4096):
        old_cache, new_cache, cached_cache = (PromptCache(minimum) for _ in range(3))
        old = new = cached = 0.0
        for query in asked:
            old += old_cache.price(_request(catalog, query))[0]
            _, shown = shortlist(query, records, catalog, OLD_CANDIDATES)
            new += new_cache.price(_request(shown, query))[0]
            cached += cached_cache.price(_cached_request(catalog, query))[0]
        out[f"min_{minimum}"] = {
            "today_tokens_per_call": old / len(asked),
            "bounded_tokens_per_call": new / len(asked),
            "cached_tokens_per_call": cached / len(asked),
            "ratio": new / old,
            "cached_ratio": cached / old,
            "keyword_tokens_per_call": 0.0,
        }
    return out


def _fill(query: str, records: list[MemoryRecord], budget: int) -> list[MemoryRecord]:
    # The default selector past the budget, as the turn runs it (issue 31).
    return list(fill_by_rank(query, records, limit=C.DEFAULT_MAX_SELECTED, budget=budget).records)


def quality(sets: list[Any], budget: int, pad: list[Any] | None = None) -> dict[str, Any]:
    """(b): recall and what is injected, at 50 and at 500 records, the same queries. A
    set's 500 is its own records padded with the other sets' (renamed), then with
    ``pad``'s (another bench file's records) when they are too few."""
    rows: dict[int, dict[str, list[float]]] = {}
    for memory_set in sets:
        own = _records(list(memory_set.records))
        others = [
            r
            for other in [*sets, *(pad or [])]
            if other is not memory_set
            for r in _records(list(other.records), f"{other.ident}-")
        ]
        random.Random(memory_set.ident).shuffle(others)
        big = own + others[: 500 - len(own)]
        big_catalog = render_catalog(_entries(big))
        for number, query in enumerate(memory_set.queries):
            rng = random.Random(f"{memory_set.ident}-{number}")
            pool = [r for r in own if r.name not in query.gold]
            small = [r for r in own if r.name in query.gold] + rng.sample(
                pool, min(50 - len(query.gold), len(pool))
            )
            small.sort(key=lambda r: r.name)
            for size, records in ((50, small), (500, big)):
                row = rows.setdefault(size, {})
                catalog = big_catalog if size == 500 else render_catalog(_entries(records))
                picks = {
                    "keyword": list(keyword_select(query.text, records, limit=K)),
                    "fill": _fill(query.text, records, budget),
                    "candidates": list(shortlist(query.text, records, catalog, OLD_CANDIDATES)[0]),
                    "shown": list(newest_shown(records, catalog, C.DEFAULT_SELECT_CANDIDATES)[0]),
                }
                for option, chosen in picks.items():
                    found = len(query.gold & {r.name for r in chosen}) / len(query.gold)
                    row.setdefault(f"{option}_recall", []).append(found)
                    row.setdefault(f"{option}_records", []).append(len(chosen))
                    row.setdefault(f"{option}_tokens", []).append(block_tokens(chosen))
    return {
        str(size): {key: statistics.mean(values) for key, values in row.items()}
        for size, row in rows.items()
    }


def budget_reach(sets: list[Any], budget: int) -> dict[str, int]:
    """(c): the most records of each kind whose whole block fits ``budget``."""
    bench = _records([r for s in sets for r in s.records])
    latency_like = [
        MemoryRecord(
            name=f"fact-{i}",
            type=MemoryType.PROJECT,
            description=f"Pipeline fact number {i} about exports, reports and owners",
            body=prose(300 + i, 300),
        )
        for i in range(100)
    ]
    out = {}
    for label, records in (("locomo observations", bench), ("latency.py records", latency_like)):
        n = 0
        while n < len(records) and block_tokens(records[: n + 1], budget) <= budget:
            n += 1
        out[label] = n
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100, help="queries for (a)")
    parser.add_argument("--budget", type=int, default=C.DEFAULT_MEMORY_BUDGET)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA_DIR, help="the bench folder")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sets = load(args.data / "locomo_obs_dev.jsonl")
    loaded = {label: load(args.data / name) for label, name in DATASETS.items()}
    result = {
        "selector_input": selector_cost(sets, 200, args.queries),
        "quality": {
            label: quality(found, args.budget, pad=sets if label != "LoCoMo" else None)
            for label, found in loaded.items()
        },
        "budget_reach": budget_reach(sets, args.budget),
        "budget": args.budget,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    a = result["selector_input"]
    print(f"(a) selector input, {a['records']} records, {a['queries']} queries (cost units/call)")
    print(
        "| side model's cache minimum | whole catalog, uncached | 30 candidates (issue 31) "
        "| whole catalog, cached block (issue 40) |"
    )
    print("|---|---|---|---|")
    for minimum in (2048, 4096):
        row = a[f"min_{minimum}"]
        print(
            f"| {minimum} | {row['today_tokens_per_call']:.0f} | "
            f"{row['bounded_tokens_per_call']:.0f} ({row['ratio']:.3f}x) | "
            f"**{row['cached_tokens_per_call']:.0f}** ({row['cached_ratio']:.3f}x) |"
        )
    print("selector keyword: no request (0)\n")
    print(
        f"(b) recall of the gold records over 50 and over 500 records (budget {args.budget}): "
        "keyword top 5; the keyword fill (what a turn's first request carries, the default "
        "agent's by its answer); the 30 candidates the model selector was shown before "
        "issue 40 (its ceiling); the catalog it is shown now (the newest "
        f"{C.DEFAULT_SELECT_CANDIDATES})"
    )
    print("| data | option | recall, 50 | recall, 500 | records, 50 / 500 | tokens, 50 / 500 |")
    print("|---|---|---|---|---|---|")
    for label, q in result["quality"].items():
        for option in ("keyword", "fill", "candidates", "shown"):
            print(
                f"| {label} | {option} | {q['50'][f'{option}_recall']:.3f} "
                f"| {q['500'][f'{option}_recall']:.3f} "
                f"| {q['50'][f'{option}_records']:.1f} / {q['500'][f'{option}_records']:.1f} "
                f"| {q['50'][f'{option}_tokens']:.0f} / {q['500'][f'{option}_tokens']:.0f} |"
            )
    reach = result["budget_reach"]
    print(
        f"\n(c) a {args.budget}-token block holds "
        + "; ".join(f"{n} {label}" for label, n in reach.items())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
