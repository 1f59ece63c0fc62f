"""Round-trip time of ``ipymemory mcp`` over stdio vs a bare MCP tool (issue 20).

    python benchmarks/mcp_roundtrip.py [--records 200] [--calls 200] [--json]

One run, one machine: a workspace with ``--records`` records; the real server
(``python -m ipymemory.cli --dir WS mcp``) and a bare server (this file with ``--bare``:
the same ``mcp`` SDK, one tool returning a constant string) are each started as a
subprocess and driven with the SDK's stdio client, the calls alternating between the two
servers so that load on the machine hits both alike. Measured per call (after 10 warm-up
calls each): ``memory_select`` (a query of 6 words; no model configured, so the
deterministic fallback selects, as with no API key), ``memory_read`` (5 names) and the
bare tool. Reported: median and p95 ms, and each ipymemory tool's median over the bare
tool's median (the protocol and process cost is the bare tool's; the ratio is what
reading the store and selecting add on top).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORDS = [
    "deploy",
    "release",
    "staging",
    "database",
    "schema",
    "migration",
    "parser",
    "tokenizer",
    "lint",
    "format",
    "notebook",
    "kernel",
    "plot",
    "dataframe",
    "column",
    "index",
    "cache",
    "token",
    "budget",
    "review",
    "commit",
    "python",
    "tabs",
    "spaces",
    "docker",
    "image",
    "cluster",
    "queue",
    "worker",
    "retry",
    "timeout",
    "latency",
    "metric",
]


def bare_server() -> None:
    sys.path.insert(0, str(ROOT))
    from ipymemory.agents.mcp_server import mcp_sdk

    server_class, _ = mcp_sdk()  # the same SDK class the real server is built on
    server: Any = server_class("bare")

    @server.tool()
    def constant() -> str:
        """A constant."""
        return "ok"

    server.run("stdio")


def seed(workspace: Path, count: int) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from ipymemory import MemoryRecord, MemoryStore

    rng = random.Random(20)
    # The default MEMORY.md bound (4096 bytes) holds ~60 records; a 200-record set
    # needs a larger bound when written (reading takes any size the manifest allows).
    store = MemoryStore(workspace, max_index_bytes=1 << 20)
    records = []
    for i in range(count):
        words = rng.sample(WORDS, 4)
        records.append(
            MemoryRecord(
                name=f"{words[0]}-{words[1]}-{i}",
                type="project",
                description=" ".join(words),
                body=" ".join(rng.choice(WORDS) for _ in range(60)),
            )
        )
    store.extend(records)
    return [r.name for r in records]


async def measure(workspace: Path, names: list[str], calls: int) -> dict[str, list[float]]:
    from contextlib import AsyncExitStack

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {"PYTHONPATH": str(ROOT)}
    ours = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ipymemory.cli", "--dir", str(workspace), "mcp"],
        env=env,
    )
    bare = StdioServerParameters(command=sys.executable, args=[__file__, "--bare"], env=env)
    rng = random.Random(7)
    times: dict[str, list[float]] = {"memory_select": [], "memory_read": [], "bare": []}
    async with AsyncExitStack() as stack:

        async def connect(params: StdioServerParameters) -> ClientSession:
            read, write = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            return session

        client, baseline = await connect(ours), await connect(bare)

        async def one(kind: str) -> float:
            if kind == "bare":
                call = baseline.call_tool("constant", {})
            elif kind == "memory_select":
                query = " ".join(rng.sample(WORDS, 6))
                call = client.call_tool("memory_select", {"query": query})
            else:
                call = client.call_tool("memory_read", {"names": rng.sample(names, 5)})
            start = time.perf_counter()
            result = await call
            elapsed = time.perf_counter() - start
            if result.model_dump(by_alias=True)["isError"]:  # the wire name: mcp 1.x and 2.x
                raise SystemExit(f"{kind} failed: {result.content}")
            return elapsed * 1000

        for _ in range(10):  # warm-up: imports, first reads, caches
            for kind in times:
                await one(kind)
        for _ in range(calls):
            for kind in times:
                times[kind].append(await one(kind))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--bare", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare:
        bare_server()
        return
    import anyio

    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        names = seed(workspace, args.records)
        os.environ.pop("ANTHROPIC_API_KEY", None)
        times = anyio.run(measure, workspace, names, args.calls)
    bare = statistics.median(times["bare"])
    rows = {
        kind: {
            "median_ms": statistics.median(values),
            "p95_ms": sorted(values)[int(0.95 * (len(values) - 1))],
            "ratio_to_bare": statistics.median(values) / bare,
        }
        for kind, values in times.items()
    }
    out = {"records": args.records, "calls": args.calls, "results": rows}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{args.records} records, {args.calls} calls each (after 10 warm-up calls)")
    print(f"{'tool':<15} {'median ms':>10} {'p95 ms':>8} {'/ bare':>7}")
    for kind, row in rows.items():
        print(
            f"{kind:<15} {row['median_ms']:>10.2f} {row['p95_ms']:>8.2f} "
            f"{row['ratio_to_bare']:>7.2f}"
        )


if __name__ == "__main__":
    main()
