"""Syncing with an Anthropic memory store: requests made and seconds (issue 29).

    python benchmarks/memory_store_sync.py [--records 500] [--changed 50] [--json]

One run, one machine, the real ``anthropic`` SDK against the local memory-store server
of ``tests/memory_store_server.py`` on 127.0.0.1 (so the seconds are this code's and
the SDK's, not a network's; the requests are what a real store would be asked).
Requests are counted by the server. Scenarios, each against a baseline in the same run:

* **push** ``--records`` records to an empty prefix (every record a create), against
  the bare SDK making the same creates in a loop;
* **pull** ``--records`` memories an agent session wrote, into an empty project (one
  pending batch, screened), then **commit** that batch, against the bare SDK listing the
  memories and reading each one's version;
* **pull changed**: ``--changed`` of them modified there, pulled (requests grow with the
  changes, not the set);
* **idle**: push and pull again with nothing changed, against a naive idle check that
  lists the memories and reads each one to compare.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the local memory-store server

import anthropic  # noqa: E402
from memory_store_server import API_KEY, MemoryStoreServer, session_actor  # noqa: E402

from ipymemory import BatchRegistry, MemoryRecord, MemoryStore  # noqa: E402
from ipymemory.review.pending import PendingFiles  # noqa: E402
from ipymemory.store.record import render_record  # noqa: E402
from ipymemory.sync.remote import RemoteStore  # noqa: E402
from ipymemory.sync.run import Sync  # noqa: E402

STORE = "memstore_01Benchmark"
BIG = {"max_index_lines": 100_000, "max_index_bytes": 1 << 26}


def records(n: int, tag: str = "") -> list[MemoryRecord]:
    return [
        MemoryRecord(
            name=f"note-{i:04d}",
            type="project",  # type: ignore[arg-type]  # MemoryRecord coerces it
            description=f"what the team decided about topic {i}{tag}",
            body=f"Topic {i}: the decision{tag} was recorded on 2026-07-{i % 28 + 1:02d}.",
        )
        for i in range(n)
    ]


class Bench:
    def __init__(self) -> None:
        self.server = MemoryStoreServer().start()
        self.server.add_store(STORE)
        self.tmp = Path(tempfile.mkdtemp(prefix="ipymemory-sync-bench-"))

    def client(self) -> Any:
        return anthropic.Anthropic(api_key=API_KEY, base_url=self.server.base_url)

    def sync(self, name: str) -> Sync:
        ws = self.tmp / name
        ws.mkdir(exist_ok=True)
        store = MemoryStore(ws, **BIG)
        return Sync(store, RemoteStore(STORE, self.client()), f"/bench/{name}/", user_store=None)

    def measure(self, run: Callable[[], Any]) -> tuple[Any, int, float]:
        """What ``run`` returned, the requests the server got meanwhile, the seconds."""
        before = self.server.count()
        started = time.perf_counter()
        out = run()
        return out, self.server.count() - before, time.perf_counter() - started


def bare_creates(bench: Bench, prefix: str, texts: list[str]) -> None:
    client = bench.client().with_options(max_retries=0)
    for i, text in enumerate(texts):
        client.beta.memory_stores.memories.create(STORE, path=f"{prefix}r{i}.md", content=text)


def bare_reads(bench: Bench, prefix: str) -> int:
    """A listing, then each memory's version read (what a pull fetches at least)."""
    client = bench.client()
    n = 0
    for memory in client.beta.memory_stores.memories.list(STORE, path_prefix=prefix, limit=100):
        client.beta.memory_stores.memory_versions.retrieve(
            memory.memory_version_id, memory_store_id=STORE, view="full"
        )
        n += 1
    return n


def naive_idle(bench: Bench, prefix: str) -> int:
    """An idle check without hashes: list, then read every memory to compare."""
    client = bench.client()
    n = 0
    for memory in client.beta.memory_stores.memories.list(STORE, path_prefix=prefix, limit=100):
        client.beta.memory_stores.memories.retrieve(memory.id, memory_store_id=STORE)
        n += 1
    return n


def run(n: int, changed: int) -> dict[str, Any]:
    bench = Bench()
    out: dict[str, Any] = {"records": n, "changed": changed}
    try:
        # push: n records, first push.
        pusher = bench.sync("pushed")
        pusher.store.extend(records(n))
        report, requests, seconds = bench.measure(pusher.push)
        assert len(report.pushed) == n and not report.failed, report
        texts = [render_record(r).decode() for r in records(n)]
        _, base_requests, base_seconds = bench.measure(lambda: bare_creates(bench, "/bare/", texts))
        out["push"] = {
            "requests": requests,
            "seconds": seconds,
            "baseline_requests": base_requests,
            "baseline_seconds": base_seconds,
        }

        # pull: n memories an agent wrote, into an empty project; then commit the batch.
        puller = bench.sync("pulled")
        for r in records(n, " there"):
            bench.server.write(
                STORE, f"/bench/pulled/{r.name}.md", render_record(r).decode(), by=session_actor()
            )
        report, requests, seconds = bench.measure(puller.pull)
        (batch_id,) = report.batches
        assert len(report.pulled) == n, report

        def commit() -> Any:
            files = PendingFiles(puller.store.root)
            saved = next(s for s in files.load()[0] if s.batch.id == batch_id)
            registry = BatchRegistry()
            files.follow(registry)  # as a session does: the decided batch leaves pending/
            batch = files.reopen(saved, puller.store.records(), registry, puller.store)
            return registry.commit(puller.store, batch)

        result, _, commit_seconds = bench.measure(commit)
        assert result.ok and len(result.committed) == n, result
        _, base_requests, base_seconds = bench.measure(lambda: bare_reads(bench, "/bench/pulled/"))
        out["pull"] = {
            "requests": requests,
            "seconds": seconds,
            "commit_seconds": commit_seconds,
            "baseline_requests": base_requests,
            "baseline_seconds": base_seconds,
        }
        puller.pull()  # the decided batch is taken into account (one listing)

        # pull changed: `changed` of them modified there.
        for r in records(changed, " changed there"):
            bench.server.write(
                STORE, f"/bench/pulled/{r.name}.md", render_record(r).decode(), by=session_actor()
            )
        report, requests, seconds = bench.measure(puller.pull)
        assert len(report.pulled) == changed, report
        out["pull_changed"] = {"requests": requests, "seconds": seconds}
        # Decide it (discard) so the set and the store are back in sync for "idle".
        (batch_id,) = report.batches
        PendingFiles(puller.store.root).remove(batch_id)
        puller.push()  # the declined changes go back there
        puller.pull()

        # idle: nothing changed on either side.
        push_report, push_requests, push_seconds = bench.measure(puller.push)
        pull_report, pull_requests, pull_seconds = bench.measure(puller.pull)
        assert not push_report.pushed and not pull_report.pulled, (push_report, pull_report)
        _, naive_requests, naive_seconds = bench.measure(
            lambda: naive_idle(bench, "/bench/pulled/")
        )
        out["idle"] = {
            "push_requests": push_requests,
            "push_seconds": push_seconds,
            "pull_requests": pull_requests,
            "pull_seconds": pull_seconds,
            "baseline_requests": naive_requests,
            "baseline_seconds": naive_seconds,
        }
    finally:
        bench.server.stop()
    return out


def text(result: dict[str, Any]) -> str:
    n = result["records"]
    push, pull, changed, idle = (
        result["push"],
        result["pull"],
        result["pull_changed"],
        result["idle"],
    )
    rows = [
        ("scenario", "requests", "seconds", "baseline requests", "baseline s", "time ratio"),
        (
            f"push {n} (first)",
            push["requests"],
            f"{push['seconds']:.2f}",
            push["baseline_requests"],
            f"{push['baseline_seconds']:.2f}",
            f"{push['seconds'] / push['baseline_seconds']:.2f}x",
        ),
        (
            f"pull {n} (one batch)",
            pull["requests"],
            f"{pull['seconds']:.2f}",
            pull["baseline_requests"],
            f"{pull['baseline_seconds']:.2f}",
            f"{pull['seconds'] / pull['baseline_seconds']:.2f}x",
        ),
        ("commit that batch", 0, f"{pull['commit_seconds']:.2f}", "", "", ""),
        (
            f"pull {result['changed']} changed of {n}",
            changed["requests"],
            f"{changed['seconds']:.2f}",
            "",
            "",
            "",
        ),
        (
            f"idle push ({n} in sync)",
            idle["push_requests"],
            f"{idle['push_seconds']:.3f}",
            "",
            "",
            "",
        ),
        (
            f"idle pull ({n} in sync)",
            idle["pull_requests"],
            f"{idle['pull_seconds']:.3f}",
            idle["baseline_requests"],
            f"{idle['baseline_seconds']:.2f}",
            f"{idle['pull_seconds'] / idle['baseline_seconds']:.3f}x",
        ),
    ]
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=500)
    parser.add_argument("--changed", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.records, args.changed)
    print(json.dumps(result, indent=2) if args.json else text(result))
    return result


if __name__ == "__main__":
    main()
