"""A pull larger than ``pending/``'s 4 MiB bound on a file (issue 41).

    python benchmarks/sync_large_pull.py [--records 1100] [--baseline 100] [--json]

One run, one machine, the real ``anthropic`` SDK against the local memory-store server
of ``tests/memory_store_server.py`` on 127.0.0.1. An agent session wrote ``--records``
plain memories of about 4 KB each (the record file's bound) -- 1,100 of them are over
4 MiB as one pending batch, which used to fail every pull ("the set here changed while
pulling"). Reported: the seconds of that pull into an empty project, the batches it
kept and the largest file among them, the changes the sync state holds as waiting, and
a second pull right after (nothing new there: one request). The baseline, in the same
run, is a pull of ``--baseline`` such memories (one batch): seconds per memory of both,
and their ratio (near 1: the split costs nothing per memory).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the local memory-store server

import anthropic  # noqa: E402
from memory_store_server import API_KEY, MemoryStoreServer, session_actor  # noqa: E402

from ipymemory import MemoryStore  # noqa: E402
from ipymemory.sync.remote import RemoteStore  # noqa: E402
from ipymemory.sync.run import Sync  # noqa: E402
from ipymemory.sync.state import read_state  # noqa: E402

STORE = "memstore_01Benchmark"
WORDS = "The quarterly report lists revenue per region and the analysts' notes. "


def memory(name: str, i: int) -> str:
    body = f"Note {i}. " + WORDS * 54  # about 3.9 KB: a record file near its 4 KB bound
    return f"---\nname: {name}\ndescription: about {name}\ntype: project\n---\n\n{body}\n"


def pull(server: MemoryStoreServer, root: Path, count: int, name: str) -> dict[str, Any]:
    prefix = f"/bench/{name}/"
    for i in range(count):
        server.write(
            STORE, f"{prefix}note-{i:04d}.md", memory(f"note-{i:04d}", i), by=session_actor()
        )
    workspace = root / name
    workspace.mkdir()
    store = MemoryStore(workspace, max_index_lines=100_000, max_index_bytes=1 << 26)
    client = anthropic.Anthropic(api_key=API_KEY, base_url=server.base_url)
    sync = Sync(store, RemoteStore(STORE, client), prefix, user_store=None)
    start = time.perf_counter()
    report = sync.pull()
    seconds = time.perf_counter() - start
    if report.stopped is not None:
        raise SystemExit(f"{name}: the pull stopped: {report.stopped}")
    files = list((store.root / "pending").glob("*.json"))
    state = read_state(store.root, STORE, prefix)
    before = server.count()
    start = time.perf_counter()
    again = sync.pull()
    return {
        "memories": count,
        "seconds": seconds,
        "seconds_per_memory": seconds / count,
        "batches": len(report.batches),
        "largest_batch_bytes": max(f.stat().st_size for f in files),
        "waiting_in_state": len(state.pulled),
        "second_pull_seconds": time.perf_counter() - start,
        "second_pull_requests": server.count() - before,
        "second_pull_changes": len(again.pulled),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1100)
    parser.add_argument("--baseline", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    server = MemoryStoreServer().start()
    server.add_store(STORE)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            baseline = pull(server, Path(tmp), args.baseline, "baseline")
            large = pull(server, Path(tmp), args.records, "large")
    finally:
        server.stop()
    ratio = large["seconds_per_memory"] / baseline["seconds_per_memory"]
    out = {"baseline": baseline, "large": large, "per_memory_ratio": ratio}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for name, row in (("baseline", baseline), ("large", large)):
        print(
            f"{name:<9} {row['memories']:>5} memories  {row['seconds']:7.1f} s  "
            f"{row['batches']} batch(es), largest {row['largest_batch_bytes']:,} bytes, "
            f"{row['waiting_in_state']} waiting in the state; next pull "
            f"{row['second_pull_requests']} request(s), {row['second_pull_changes']} changes"
        )
    print(f"seconds per memory, large / baseline: {ratio:.2f}x")


if __name__ == "__main__":
    main()
