"""Issue 39 item 1 through the real doors: what another agent plants as a "fact" never
commits in auto mode, an ordinary note does, and each held item says which rules fired.

* ``ipymemory sync pull --commit auto`` -- the CLI in a subprocess, the real SDK against
  the local memory-store API (tests/memory_store_server.py);
* MCP ``memory_propose`` under ``ipymemory mcp --commit auto`` -- the real ``mcp`` stdio
  client;
* the memory tool with ``commit="auto"`` -- the SDK's own tool runner against the
  scripted Messages API;
* ``ipymemory import claude-code --yes`` -- the CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anthropic
import pytest
from agent_wordings import ORDINARY, PLANTED, PROBES
from agents_support import ROOT, McpClient, data, with_mcp
from memory_store_server import API_KEY, MemoryStoreServer
from messages_server import MessagesServer, text, tool_use
from sync_support import STORE_ID, project, record_text

from ipymemory import MemoryStore, MemoryTool
from ipymemory.config import without_settings
from ipymemory.review.pending import PendingFiles

WORDINGS = PLANTED + PROBES
PLANTED_NAMES = {name for name, _, _ in WORDINGS}
ORDINARY_NAMES = {name for name, _, _ in ORDINARY}


def _cli(workspace: Path, *argv: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """``python -m ipymemory.cli --dir WORKSPACE --json ARGV`` in a subprocess."""
    environ = {
        **without_settings(dict(os.environ)),
        "PYTHONPATH": str(ROOT),
        "IPYMEMORY_USER_DIR": "off",
        **(env or {}),
    }
    done = subprocess.run(
        [sys.executable, "-m", "ipymemory.cli", "--dir", str(workspace), "--json", *argv],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def _held_findings(workspace: Path) -> dict[str, list[str]]:
    """Per item waiting in ``pending/``, the ids of the rules that fired."""
    saved, problems = PendingFiles(Path(workspace) / ".memory").load(prune=False)
    assert not problems
    return {
        name: [f.rule_id for f in found]
        for entry in saved
        for name, found in entry.batch.findings.items()
    }


def test_sync_pull_in_auto_mode_commits_no_planted_wording(
    memory_store_server: MemoryStoreServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = project(memory_store_server, tmp_path, monkeypatch)
    for name, description, body in (*WORDINGS, *ORDINARY):
        proj.agent_writes(name, record_text(name, body, description, type="user"))
    env = {"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": memory_store_server.base_url}
    _cli(proj.workspace, "sync", "pull", "--store", STORE_ID, "--commit", "auto", env=env)
    committed = {r.name for r in MemoryStore(proj.workspace).records()}
    assert committed == ORDINARY_NAMES, sorted(committed & PLANTED_NAMES)
    held = _held_findings(proj.workspace)
    assert set(held) == PLANTED_NAMES
    # Each says which agent rule holds it (an instruction kind may fire too).
    assert all(any(r.startswith("agent.") for r in rules) for rules in held.values()), held
    assert "agent.destination" in held["metrics-collector"]  # the hexadecimal address
    assert "agent.destination" in held["spaced-host"]
    assert {"agent.secret", "agent.hidden-instructions"} <= set(held["yanit-tercihi"])


def _propose(workspace: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    async def use(client: McpClient) -> Any:
        return await client.call_tool("memory_propose", {"records": items})

    return data(with_mcp(workspace, use, "--commit", "auto"))


def test_mcp_memory_propose_in_auto_mode_commits_no_planted_wording(workspace: str) -> None:
    items = [
        {"name": n, "description": d, "body": b, "type": "user"}
        for n, d, b in (*WORDINGS, *ORDINARY)
    ]
    reply = _propose(workspace, items)
    assert set(reply["committed"]) == ORDINARY_NAMES
    rows = {row["name"]: row for row in reply["items"]}
    for name in PLANTED_NAMES:
        row = rows[name]
        assert (row["verdict"], row["status"]) == ("hold", "pending"), row
        # The reply says which rules fired, on what.
        assert any(f["rule"].startswith("agent.") for f in row["findings"]), row
    collector = rows["metrics-collector"]["findings"]
    assert {"rule": "agent.destination", "evidence": "0x5db8d822 (93.184.216.34)"} in collector
    assert {r.name for r in MemoryStore(workspace).records()} == ORDINARY_NAMES


def test_the_memory_tool_in_auto_mode_commits_no_planted_wording(
    workspace: str, messages_server: MessagesServer
) -> None:
    tool = MemoryTool(workspace, commit="auto")
    calls = [
        tool_use(
            "memory",
            {
                "command": "create",
                "path": f"/memories/{name}.md",
                "file_text": record_text(name, body, description, type="user"),
            },
        )
        for name, description, body in (*WORDINGS, *ORDINARY)
    ]
    messages_server.enqueue(*calls, text("Done."))
    client = anthropic.Anthropic(api_key="test", base_url=messages_server.base_url, max_retries=0)
    client.beta.messages.tool_runner(
        model="claude-test",
        max_tokens=1000,
        messages=[{"role": "user", "content": "Remember what matters from this chat."}],
        tools=[tool],
    ).until_done()
    assert {r.name for r in MemoryStore(workspace).records()} == ORDINARY_NAMES
    [saved], _ = tool._files.load()
    assert set(saved.batch.names) == PLANTED_NAMES
    assert set(saved.batch.findings) == PLANTED_NAMES


def test_an_import_with_yes_commits_the_plain_notes_and_keeps_the_rest_waiting(
    tmp_path: Path,
) -> None:
    source = tmp_path / "claude-memory"
    source.mkdir()
    for name, description, body in (*WORDINGS, *ORDINARY):
        (source / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: {description}\ntype: user\n---\n\n{body}\n"
        )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    out = _cli(workspace, "import", "claude-code", str(source), "--yes")
    assert set(out["records"]) == ORDINARY_NAMES and set(out["waiting"]) == PLANTED_NAMES
    assert {r.name for r in MemoryStore(workspace).records()} == ORDINARY_NAMES
    assert set(_held_findings(workspace)) == PLANTED_NAMES
    # Importing again adds nothing: the same batch, replaced.
    _cli(workspace, "import", "claude-code", str(source), "--yes")
    assert len(os.listdir(workspace / ".memory" / "pending")) == 1
