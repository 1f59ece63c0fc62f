"""Child process of the crash sweep (tests/test_store_crash.py): run one commit, die mid-way.

Usage: ``python crash_child.py SPEC_JSON`` where the spec is a JSON object::

    {"workspace": "...",
     "op": "extend" | "consolidate" | "forget" | "undo" | "restore" | "recover",
     "records": [...], "names": [...],                  # extend / forget
     "seq": int,                                        # undo / restore
     "base": [...], "additions": [...], "source_names": [...], "replacements": [...],
     "kill_at": null | int,   # SIGKILL ourselves at the kill_at-th checkpoint call (0-based)
     "log": "path"}           # every checkpoint step reached is appended here, one per line

The store instance's ``_checkpoint`` is replaced (no test logic lives in production code).
The log line is written (unbuffered, no fsync: SIGKILL keeps the page cache) *before* the
kill, so the parent knows exactly which step the child died at. Exit status: 0 if the commit
completed, -SIGKILL if killed, 3 if the commit raised (the error is printed on stderr).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from ipymemory import MemoryRecord, MemoryStore


def _records(items: list[dict[str, str]]) -> list[MemoryRecord]:
    return [MemoryRecord(**item) for item in items]  # type: ignore[arg-type]


def main(spec: dict[str, Any]) -> int:
    store = MemoryStore(spec["workspace"], **spec.get("store_kwargs", {}))
    kill_at: int | None = spec.get("kill_at")
    log_fd = os.open(spec["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    calls = 0

    def checkpoint(step: str) -> None:
        nonlocal calls
        os.write(log_fd, step.encode() + b"\n")
        if kill_at is not None and calls == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        calls += 1

    store._checkpoint = checkpoint  # type: ignore[method-assign]
    op = spec["op"]
    try:
        if op == "extend":
            store.extend(_records(spec["records"]))
        elif op == "forget":
            store.forget(spec["names"])
        elif op == "undo":
            store.undo(spec["seq"])
        elif op == "restore":
            store.restore(spec["seq"])
        elif op == "recover":
            store.recover()
        elif op == "consolidate":
            store.apply_consolidation(
                base_records=_records(spec["base"]),
                additions=_records(spec["additions"]),
                source_names=spec["source_names"],
                replacements=_records(spec["replacements"]),
            )
        else:
            raise SystemExit(f"unknown op {op!r}")
    except Exception as e:
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
