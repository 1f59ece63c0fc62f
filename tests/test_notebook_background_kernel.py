"""The memory work after the cell (SPEC §12) through a real kernel: nbclient runs the
cells one at a time in ipykernel (where background_memory is on by default), the real
SDK talks to the scripted server of this process, whose extractor reply waits behind a
gate. Orderings come from events (the gate, the outputs nbclient saved), never from
wall-clock thresholds."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from messages_server import MessagesServer, Scripted, text
from nbclient import NotebookClient
from notebook_support import items_json
from record_support import rec
from turn_support import role_of

from ipymemory import MemoryStore
from ipymemory.config import without_settings
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
    nb = nbformat.v4.new_notebook()
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": workspace}}
    )
    env = without_settings(os.environ)  # background_memory: the kernel's default
    env.update(
        ANTHROPIC_API_KEY="test",
        ANTHROPIC_BASE_URL=messages_server.base_url,
        IPYMEMORY_USER_DIR="off",
    )
    with client.setup_kernel(env=env):
        yield client, nb


def _open_when_said(log: Path, gate: Gate) -> None:
    """Open the gate once the kernel's log says it waits for the memory work."""
    while not gate.open.is_set():
        if "ipymemory: waiting for the memory work" in log.read_text():
            gate.open.set()
        else:
            threading.Event().wait(0.05)


def _run(client: NotebookClient, nb: nbformat.NotebookNode, source: str) -> Any:
    cell = nbformat.v4.new_code_cell(source)
    nb.cells.append(cell)
    client.execute_cell(cell, len(nb.cells) - 1)
    return cell


BOLD = rec("likes-bold", description="likes bold answers", type="user")


def test_in_a_kernel_the_cell_ends_first_and_the_review_lands_in_its_saved_output(
    kernel: tuple[NotebookClient, nbformat.NotebookNode],
    messages_server: MessagesServer,
    workspace: str,
) -> None:
    client, nb = kernel
    _run(client, nb, SETUP)
    messages_server.enqueue(text("Use **tabs**."))
    gate = Gate(messages_server, text(items_json(BOLD)))
    agent = _run(client, nb, AGENT)
    # The cell ended while the extractor's reply was still held: nbclient got its reply.
    assert not gate.open.is_set()
    assert any(o.get("data", {}).get("text/markdown") == "Use **tabs**." for o in agent.outputs)
    assert MemoryStore(workspace).records() == ()
    gate.open.set()
    pending = _run(client, nb, "%memory pending")
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
