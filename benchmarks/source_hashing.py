"""The cost of knowing when a record's source changed (SPEC §11).

    python benchmarks/source_hashing.py            # full run (~20 s)
    python benchmarks/source_hashing.py --quick    # CI-sized run

(a) a turn's reads: ``read_file`` of 20 files of 100 KB through the turn's real
    ``ToolBox``, with source hashing and without it (hashing off: ``SOURCE_HASH_LIMIT``
    = 0), alternating in one loop; medians of the 20-file total. The ratio is large (a
    read of a cached file is a memcpy; sha256 is ~0.5 GB/s), so the target is on what
    the turn pays: the added time for the 2 MB read <= 10 ms, i.e. <= 1% of one model
    round trip of 1 s (a turn that reads 20 files makes several).
(b) ``check`` over 200 records, each saved with the hashes of 5 source files (40
    distinct files of 100 KB), against the same 200 records saved without sources, in
    one loop; medians. Each distinct file is hashed once per check.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from ipymemory import _constants as C
from ipymemory.store import maintenance
from ipymemory.store.record import MemoryRecord, MemoryType
from ipymemory.store.sources import file_sha256
from ipymemory.store.store import MemoryStore
from ipymemory.turn.tools import ToolBox

FILE_BYTES = 100 * 1024


def write_files(root: Path, count: int) -> list[str]:
    names = []
    for i in range(count):
        name = f"src/file{i:03d}.txt"
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        line = f"line of source file {i} with some words in it\n"
        path.write_text(line * (FILE_BYTES // len(line)))
        names.append(name)
    return names


def time_reads(root: Path, names: list[str], hash_limit: int) -> float:
    saved = C.SOURCE_HASH_LIMIT
    C.SOURCE_HASH_LIMIT = hash_limit  # type: ignore[misc]  # the benchmark's switch
    try:
        tools = ToolBox(root, read_limit=FILE_BYTES * 2)
        start = time.perf_counter()
        for name in names:
            outcome = tools.run("read_file", {"path": name})
            assert not outcome.is_error, outcome.content
        elapsed = time.perf_counter() - start
        assert bool(tools.files_sha256) == (hash_limit > 0)
        return elapsed
    finally:
        C.SOURCE_HASH_LIMIT = saved  # type: ignore[misc]


def store_of(root: Path, sources: list[str] | None, count: int) -> MemoryStore:
    root.mkdir(parents=True, exist_ok=True)
    store = MemoryStore(root, max_index_lines=1000, max_index_bytes=1 << 20)
    records = [
        MemoryRecord(
            name=f"note-{i:03d}",
            type=MemoryType.PROJECT,
            description=f"note {i} drawn from the sources",
            body=f"Body of note {i}.",
        )
        for i in range(count)
    ]
    provenance = None
    if sources is not None:
        provenance = {}
        for i, record in enumerate(records):
            mine = [sources[(i + k) % len(sources)] for k in range(5)]
            hashes = {p: file_sha256(root, p) for p in mine}
            provenance[record.name] = {"files_read": mine, "files_sha256": hashes}
    store.extend(records, provenance=provenance)
    return store


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a CI-sized run")
    parser.add_argument("--json", action="store_true", help="machine-readable results")
    args = parser.parse_args()
    say = (lambda _text: None) if args.json else print
    rounds = 3 if args.quick else 15
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "reads")
        names = write_files(root, 20)
        with_hash, without = [], []
        for _ in range(rounds):
            with_hash.append(time_reads(root, names, C.SOURCE_HASH_LIMIT))
            without.append(time_reads(root, names, 0))
        a_with, a_without = median_ms(with_hash), median_ms(without)
        say(
            f"(a) read_file x20 of 100 KB: with hashing {a_with:.2f} ms, without "
            f"{a_without:.2f} ms, ratio {a_with / a_without:.2f}x; added per turn "
            f"{a_with - a_without:.2f} ms (target <= 10 ms)"
        )

        count = 50 if args.quick else 200
        with_root, bare_root = Path(tmp, "with"), Path(tmp, "bare")
        sources = write_files(with_root, 40)
        store_of(with_root, sources, count)
        store_of(bare_root, None, count)
        checked, bare = [], []
        for _ in range(rounds):
            start = time.perf_counter()
            report = maintenance.check(with_root, max_index_lines=1000, max_index_bytes=1 << 20)
            checked.append(time.perf_counter() - start)
            assert report == [], report
            start = time.perf_counter()
            maintenance.check(bare_root, max_index_lines=1000, max_index_bytes=1 << 20)
            bare.append(time.perf_counter() - start)
        b_with, b_bare = median_ms(checked), median_ms(bare)
        say(
            f"(b) check over {count} records: with sources (40 files of 100 KB) "
            f"{b_with:.1f} ms, without {b_bare:.1f} ms, ratio {b_with / b_bare:.2f}x"
        )

    if args.json:
        print(
            json.dumps(
                {
                    "reads_ms": {"with": a_with, "without": a_without},
                    "check_ms": {"with": b_with, "without": b_bare, "records": count},
                }
            )
        )


if __name__ == "__main__":
    main()
