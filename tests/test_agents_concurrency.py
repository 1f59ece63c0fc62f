"""Issue 20: two agents on one memory at once. An MCP client proposes (the real server in
a subprocess) while notebook turns commit in a real InteractiveShell (the real SDK
against the scripted Messages-API server) and ``ipymemory undo`` runs from a terminal,
for a few seconds. Then: nothing lost (every proposal is a pending batch, every turn's
commit is journalled), every batch decidable, the set is what the journal says, and
``check`` is clean."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import time
from typing import Any

import anyio
import pytest
from agents_support import ROOT, McpClient, item, server_params
from IPython.core.interactiveshell import InteractiveShell
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from messages_server import MessagesServer, Scripted, text
from notebook_support import use_api
from record_support import rec
from turn_support import records_reply, role_of

from ipymemory import MemoryStore
from ipymemory.cli import main
from ipymemory.notebook import get_session

SECONDS = 3.0  # of notebook turns, with the MCP client and the undos going on
# At most this many turns and proposals: every record fits MEMORY.md's 4096-byte bound
# however fast the machine runs them (past it, each commit is refused, as it should be).
MAX_TURNS = 15
MAX_PROPOSALS = 20


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ipymemory.cli", *argv],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )


def test_an_mcp_client_a_notebook_turn_and_a_cli_undo_at_once(
    ip: InteractiveShell,
    workspace: str,
    messages_server: MessagesServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = MemoryStore(workspace)
    store.extend([rec("seed-one"), rec("seed-two")])
    use_api(ip, messages_server.base_url, monkeypatch)
    ip.run_line_magic("config", "IPyMemory.consolidate_threshold = 1000")  # not this test's
    turns = itertools.count()

    def respond(request: dict[str, Any]) -> Scripted:
        role = role_of(request)
        if role == "selector":
            return text("[]")
        if role == "extractor":
            return records_reply(rec(f"n{next(turns)}", "a note"))
        return text("Noted.")

    messages_server.responder = respond
    stop = threading.Event()
    ready = threading.Event()
    proposed: list[str] = []
    failures: list[str] = []

    def agent() -> None:
        async def run() -> None:
            params = server_params(workspace)
            async with stdio_client(params) as streams, ClientSession(*streams) as session:
                await session.initialize()
                client = McpClient(session)
                for i in itertools.count():
                    if i >= MAX_PROPOSALS:
                        await anyio.sleep(0.05)  # connected, idle, until the end
                        if stop.is_set():
                            return
                        continue
                    call = {"records": [item(f"a{i}", description="an agent note")]}
                    result = await client.call_tool("memory_propose", call)
                    if result["isError"]:
                        failures.append(str(result["content"]))
                    else:
                        proposed.append(str((result["structuredContent"] or {})["batch_id"]))
                    ready.set()
                    if stop.is_set():
                        return
                    await anyio.sleep(0.1)  # an agent's pace; the set's index stays in bounds

        try:
            anyio.run(run)
        finally:
            ready.set()

    undone: list[int] = []

    def terminal() -> None:
        while not stop.is_set():
            seq = MemoryStore(workspace).history(1)[0].seq
            done = _cli("--dir", workspace, "undo", str(seq))
            if done.returncode == 0:
                undone.append(seq)
            elif "error" not in done.stderr:  # a refusal says why; anything else is a bug
                failures.append(done.stderr)

    agent_thread = threading.Thread(target=agent)
    agent_thread.start()
    assert ready.wait(60), "the MCP server did not answer"
    terminal_thread = threading.Thread(target=terminal)
    terminal_thread.start()
    ran = 0
    deadline = time.monotonic() + SECONDS
    while (time.monotonic() < deadline and ran < MAX_TURNS) or ran < 2:
        ip.run_cell_magic("agent", "--commit auto", f"Turn {ran}: note this.")
        ran += 1
    stop.set()
    agent_thread.join(60)
    terminal_thread.join(120)
    assert not agent_thread.is_alive() and not terminal_thread.is_alive()
    assert failures == []
    assert len(proposed) >= 2 and ran >= 2 and undone  # all three really ran

    # A turn whose commit the store refused meanwhile (a lock wait past its timeout on
    # a loaded machine) keeps its batch, failed and retryable: deciding it works now.
    session = get_session(workspace)
    for batch in session.pending:
        result = session.commit(batch)
        assert result.ok, result.error
    # Nothing lost: each turn's item was committed (journalled), each proposal waits.
    history = sorted(store.history(), key=lambda e: e.seq)
    added = {a.name for e in history if e.op == "add" for a in e.added}
    assert {f"n{j}" for j in range(ran)} <= added
    capsys.readouterr()
    assert main(["--dir", workspace, "--json", "pending"]) == 0
    waiting = {batch["id"] for batch in json.loads(capsys.readouterr().out)["batches"]}
    assert set(proposed) <= waiting

    # Every batch decidable: each agent batch commits from the terminal.
    for batch_id in proposed:
        assert main(["--dir", workspace, "commit", "--batch", batch_id]) == 0, batch_id
    names = {r.name for r in store.records()}
    assert {f"a{i}" for i in range(len(proposed))} <= names

    # The set is what the journal says, and check finds nothing wrong.
    replay: set[str] = set()
    for entry in sorted(store.history(), key=lambda e: e.seq):
        replay -= {r.name for r in entry.removed}
        replay |= {a.name for a in entry.added}
    assert replay == names
    assert main(["--dir", workspace, "check"]) == 0
