"""Child process of the sync kill tests (tests/test_sync_kill.py): run one ``ipymemory``
command line, maybe die mid-way.

Usage: ``python sync_child.py SPEC_JSON`` where the spec is a JSON object::

    {"argv": [...],            # the command line after `ipymemory`
     "bound": null | int,      # pending/'s bound on a file (small: a pull of tens of
                               # memories is kept in several batches)
     "kill_save": null | {"at": int, "when": "before" | "after"},
                               # SIGKILL ourselves at the at-th (0-based) save of a
                               # pending batch, before it is written or after
     "log": "path"}            # each save reached is appended here, one per line

``PendingFiles.save`` is wrapped here (no test logic lives in production code); the log
line is written before the kill. Exit status: the command line's, or -SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from ipymemory import _constants as C
from ipymemory.cli import main
from ipymemory.review.pending import PendingFiles


def run(spec: dict[str, Any]) -> int:
    if spec.get("bound") is not None:
        C.MAX_PENDING_FILE_BYTES = int(spec["bound"])  # type: ignore[misc]
    kill = spec.get("kill_save")
    if kill is not None:
        log_fd = os.open(spec["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        save = PendingFiles.save
        calls = 0

        def killing_save(self: PendingFiles, batch: Any) -> bool:
            nonlocal calls
            at, calls = calls, calls + 1
            os.write(log_fd, f"save {at} {batch.id}\n".encode())
            if at == kill["at"] and kill["when"] == "before":
                os.kill(os.getpid(), signal.SIGKILL)
            kept = save(self, batch)
            if at == kill["at"] and kill["when"] == "after":
                os.kill(os.getpid(), signal.SIGKILL)
            return kept

        PendingFiles.save = killing_save  # type: ignore[method-assign]
    return main(spec["argv"])


if __name__ == "__main__":
    sys.exit(run(json.loads(sys.argv[1])))
