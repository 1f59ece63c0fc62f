"""The memory work after the cell (SPEC §12) through a real kernel: nbclient runs the
cells one at a time in ipykernel (where background_memory is on by default), the real
SDK talks to the scripted server of this process, whose extractor reply waits behind a
gate. Orderings come from events (the gate, the outputs nbclient saved, what the kernel
logged), never from wall-clock thresholds; the kill test kills a real kernel process."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_core.utils import run_sync
from kernel_support import kernel_env, notebook_in, run_cell
from messages_server import MessagesServer, Scripted, text
from nbclient import NotebookClient
from notebook_support import items_json
from record_support import rec
from turn_support import role_of

from ipymemory import MemoryStore
from ipymemory.views import MIME_TYPE

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
GATE_SECONDS = 60.0

SETUP = """\
%load_ext ipymemory
%config IPyMemory.max_retries = 0
"""
AGENT = "%%agent\nI like bold answers. How should I indent?"


class Gate:
    """Hold the extractor's reply until ``open`` is set; note when it was asked."""

    def __init__(self, srv: MessagesServer, reply: Scripted) -> None:
        self.open = threading.Event()
        self.asked = threading.Event()
        self.reply = reply
        srv.responder = self._respond

    def _respond(self, body: dict[str, Any]) -> Scripted:
        assert role_of(body) == "extractor", role_of(body)
        self.asked.set()
        self.open.wait(GATE_SECONDS)
        return self.reply


@pytest.fixture
def kernel(
    messages_server: MessagesServer, workspace: str
) -> Iterator[tuple[NotebookClient, nbformat.NotebookNode]]:
    client, nb = notebook_in(workspace)
    # background_memory: the kernel's default
    env = kernel_env(ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=messages_server.base_url)
    with client.setup_kernel(env=env):
        yield client, nb


def _open_when_said(log: Path, gate: Gate) -> None:
    """Open the gate once the kernel's log says it waits for the memory work."""
    pause = threading.Event()
    for _ in range(int(GATE_SECONDS / 0.05)):  # bounded: a missing line fails the test
        if "ipymemory: waiting for the memory work" in log.read_text():
            gate.open.set()
            return
        pause.wait(0.05)


BOLD = rec("likes-bold", description="likes bold answers", type="user")


def test_in_a_kernel_the_cell_ends_first_and_the_review_lands_in_its_saved_output(
    kernel: tuple[NotebookClient, nbformat.NotebookNode],
    messages_server: MessagesServer,
    workspace: str,
) -> None:
    client, nb = kernel
    run_cell(client, nb, SETUP)
    messages_server.enqueue(text("Use **tabs**."))
    gate = Gate(messages_server, text(items_json(BOLD)))
    agent = run_cell(client, nb, AGENT)
    # The cell ended (nbclient got its reply) while the extractor's reply was still held:
    # the answer is there, the review not yet -- the memory work runs on (the kernel's
    # default). A cell that waited for it would end only once the gate timed out.
    extractor = [i for i, r in enumerate(messages_server.requests) if role_of(r) == "extractor"]
    assert not any(i in messages_server.finished for i in extractor)
    assert any(o.get("data", {}).get("text/markdown") == "Use **tabs**." for o in agent.outputs)
    assert not any(WIDGET_VIEW in o.get("data", {}) for o in agent.outputs)
    assert MemoryStore(workspace).records() == ()
    gate.open.set()
    pending = run_cell(client, nb, "%memory pending")
    waited = "".join(json.dumps(o.get("data", {})) for o in pending.outputs)
    assert "likes-bold" in waited
    # The review is in the agent cell's own saved outputs (updated in place), not here.
    batch = [o["data"] for o in agent.outputs if MIME_TYPE in o.get("data", {})]
    reviews = [d for d in batch if d[MIME_TYPE]["view"] == "batch" and WIDGET_VIEW in d]
    assert reviews and [i["name"] for i in reviews[0][MIME_TYPE]["items"]] == ["likes-bold"]
    assert not any(
        o.get("data", {}).get(MIME_TYPE, {}).get("view") == "batch" for o in pending.outputs
    )
    lines = [str(o.get("data", {}).get("text/plain", "")) for o in agent.outputs]
    assert any(line.startswith("✓ answered in") and " · memory in " in line for line in lines)


def test_kernel_shutdown_waits_and_a_killed_kernel_leaves_nothing_half_written(
    messages_server: MessagesServer, workspace: str
) -> None:
    """A graceful shutdown waits for the memory work (its batch is kept in pending/);
    a kernel killed while the work runs leaves the set and pending/ as they were."""
    store = MemoryStore(workspace)
    store.extend([rec("old-note")])
    before = sorted(p.name for p in Path(workspace, ".memory").rglob("*"))
    for graceful in (False, True):
        client, nb = notebook_in(workspace)
        env = kernel_env(ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=messages_server.base_url)
        messages_server.enqueue(text("Noted."))
        gate = Gate(messages_server, text(items_json(BOLD)))
        log = Path(workspace).parent / f"kernel-{graceful}.log"
        with log.open("w") as stderr, client.setup_kernel(env=env, stderr=stderr):
            run_cell(client, nb, SETUP)
            run_cell(client, nb, AGENT)
            assert gate.asked.wait(GATE_SECONDS)  # the worker waits for the extractor
            assert client.km is not None
            if graceful:
                # The reply comes once the shutting-down kernel says it is waiting.
                opener = threading.Thread(target=_open_when_said, args=(log, gate), daemon=True)
                opener.start()
                client.km.shutdown_wait_time = GATE_SECONDS
                # nbclient's manager is asynchronous; this returns once the kernel exited.
                run_sync(client.km.shutdown_kernel)(now=False)
                opener.join()
                assert gate.open.is_set(), log.read_text()
            else:
                process = client.km.provisioner.process  # type: ignore[union-attr]
                process.kill()  # SIGKILL, mid memory work
                process.wait()
                gate.open.set()
        after = sorted(p.name for p in Path(workspace, ".memory").rglob("*"))
        if not graceful:
            assert after == before
        else:
            saved = list(Path(workspace, ".memory", "pending").glob("*.json"))
            assert len(saved) == 1
            assert [r["name"] for r in json.loads(saved[0].read_text())["items"]] == ["likes-bold"]
        assert [r.name for r in store.records()] == ["old-note"]


def test_in_a_kernel_select_takes_its_limit_after_the_query(
    kernel: tuple[NotebookClient, nbformat.NotebookNode],
    messages_server: MessagesServer,
    workspace: str,
) -> None:
    """Issue 33 #2, in ipykernel: `%memory select tabs --limit 1` read the flag as part
    of the query ("Query: tabs --limit 1")."""
    client, nb = kernel
    MemoryStore(workspace).extend([rec(f"tabs-{i}", description=f"tabs {i}") for i in range(7)])
    messages_server.responder = lambda body: text('["tabs-1"]')
    run_cell(client, nb, SETUP)
    # The side model chooses here (the default past the budget is keyword): its request
    # shows the query it was given.
    run_cell(client, nb, "%config IPyMemory.selector = 'model'")
    cell = run_cell(client, nb, "%memory select tabs --limit 1")
    [shown] = [o["data"][MIME_TYPE] for o in cell.outputs if MIME_TYPE in o.get("data", {})]
    assert shown["query"] == "tabs"
    assert [r["name"] for r in shown["records"]] == ["tabs-1"]
    [asked] = messages_server.requests
    assert role_of(asked) == "selector"
