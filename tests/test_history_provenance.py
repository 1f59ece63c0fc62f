"""Provenance in the journal after real turns: the real ``anthropic`` SDK against the
scripted Messages-API server (tests/messages_server.py), a real IPython shell for the
notebook and cell, a real in-process ipykernel for the cell id."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from messages_server import MessagesServer, text, tool_use
from notebook_support import loaded_shell
from record_support import rec
from turn_support import MAIN_MODEL, SIDE_MODEL, model_for, records_reply

from ipymemory import AgentSession, BatchRegistry, MemoryStore, PendingBatch, SessionConfig
from ipymemory.notebook.output import TurnOutput
from ipymemory.review import Item
from ipymemory.review.provenance import TurnProvenance
from ipymemory.screen import Origin
from ipymemory.store.history import HistoryEntry

ORIGINS = {"user", "tool", "assistant", "manual"}  # SPEC §7


def last_entry(workspace: str) -> HistoryEntry:
    return MemoryStore(workspace).history(1)[0]


def test_a_reviewed_turn_records_query_session_models_files_and_decision(
    messages_server: MessagesServer, workspace: str
) -> None:
    Path(workspace, "notes.md").write_text("indent with tabs\n")
    messages_server.enqueue(
        tool_use("read_file", {"path": "notes.md"}),
        tool_use("read_file", {"path": "notes.md"}),  # read twice: listed once
        text("Tabs, as your notes say."),
        records_reply(
            rec("prefers-tabs", description="the user prefers tabs", body="The user prefers tabs."),
            rec("draft-note", body="A note the user does not want."),
        ),
    )
    session = AgentSession(workspace, model=model_for(messages_server.base_url))
    session.caller = lambda: {"notebook": "/w/analysis.ipynb", "execution_count": 12}
    result = session.run_turn("I prefer tabs. How should I indent?")
    assert result.batch is not None and result.batch.open
    done = session.commit(result.batch, reject=["draft-note"])
    assert done.ok, done.error
    entry = last_entry(workspace)
    assert entry.op == "add" and [a.name for a in entry.added] == ["prefers-tabs"]
    assert entry.actor["notebook"] == "/w/analysis.ipynb"
    assert entry.actor["execution_count"] == 12
    assert entry.actor["session"] == session.id
    assert entry.actor["tool"].startswith("ipymemory ")  # the process facts stay ours
    prov = entry.provenance["prefers-tabs"]
    assert prov["query"] == "I prefer tabs. How should I indent?"
    assert prov["session"] == session.id and prov["via"] == "turn"
    assert prov["files_read"] == ["notes.md"]
    assert prov["models"] == {"main": MAIN_MODEL, "extractor": SIDE_MODEL}
    assert prov["origin"] in ORIGINS
    # The decision concerns the whole commit: once, in the actor.
    decision = {k: entry.actor[k] for k in ("batch", "decided_by", "accepted", "rejected")}
    assert decision == {
        "batch": result.batch.id,
        "decided_by": "review",
        "accepted": ["prefers-tabs"],
        "rejected": ["draft-note"],
    }
    assert entry.actor["plan_accepted"] is False
    assert "caller" not in prov and "review" not in prov
    # Bodies are never copied into the journal.
    journal = Path(workspace, ".memory", "history", "journal.jsonl").read_text()
    assert "The user prefers tabs." not in journal


def test_auto_mode_and_a_consolidation_plan_record_their_provenance(
    messages_server: MessagesServer, workspace: str
) -> None:
    MemoryStore(workspace).extend([rec("tabs-py"), rec("tabs-js")])
    merged = rec("prefers-tabs", description="tabs everywhere")
    messages_server.enqueue(
        text(json.dumps({"source_names": ["tabs-py", "tabs-js"], "records": [merged.to_json()]}))
    )
    session = AgentSession(
        workspace,
        model=model_for(messages_server.base_url),
        config=SessionConfig(commit_mode="auto"),
    )
    batch = session.consolidate_now()
    assert session.commit(batch).ok
    entry = last_entry(workspace)
    assert entry.op == "consolidate" and entry.source_names == ("tabs-py", "tabs-js")
    prov = entry.provenance["prefers-tabs"]
    assert prov["via"] == "consolidate" and prov["query"] is None
    assert prov["models"] == {"consolidator": SIDE_MODEL}
    assert entry.actor["plan_accepted"] is True and entry.actor["decided_by"] == "review"
    # Auto mode: the decision is recorded as automatic.
    messages_server.enqueue(
        text("Noted."),  # (no selector: the one record fits)
        records_reply(rec("likes-short", description="likes short answers")),
    )
    result = session.run_turn("Keep answers short, I like them short.")
    assert result.committed == ("likes-short",)
    entry = last_entry(workspace)
    prov = entry.provenance["likes-short"]
    assert entry.actor["decided_by"] == "auto" and prov["files_read"] == []
    # The models of the calls the turn made: no selector call, so none is named.
    assert prov["models"]["extractor"] == SIDE_MODEL and "selector" not in prov["models"]


def test_each_items_origin_reaches_the_journal(workspace: str) -> None:
    """Whatever decides an item's origin (screening), the batch carries it to the entry."""
    registry = BatchRegistry()
    batch = registry.add(
        PendingBatch(
            "b1",
            (Item(rec("from-tool"), Origin.TOOL), rec("from-user")),
            None,
            (),
            provenance=TurnProvenance("s1", query="q"),
        )
    )
    assert registry.commit(MemoryStore(workspace), batch).ok
    prov = last_entry(workspace).provenance
    assert prov["from-tool"]["origin"] == "tool"
    assert prov["from-user"]["origin"] == "user"  # the default until screening decides


def test_a_huge_query_and_many_files_never_make_a_commit_fail(workspace: str) -> None:
    """Provenance is bounded: a pasted 200 KB question, 500 files read and 150 items
    still commit (the store refuses a journal line's provenance over 512 KiB)."""
    query = "Why " + "é" * 200_000
    files = tuple(f"data/{'d' * 400}/{i}.csv" for i in range(500))
    items = tuple(rec(f"fact-{i}") for i in range(150))
    registry = BatchRegistry()
    batch = registry.add(
        PendingBatch(
            "big",
            items,
            None,
            (),
            provenance=TurnProvenance("s1", query=query, files_read=files),
        )
    )
    store = MemoryStore(workspace, max_index_bytes=100_000)  # 150 index lines
    result = registry.commit(store, batch)
    assert result.ok, result.error
    entry = last_entry(workspace)
    line = Path(workspace, ".memory", "history", "journal.jsonl").read_bytes().splitlines()[-1]
    assert len(line) < 256 * 1024
    prov = entry.provenance["fact-0"]
    assert prov["query_chars"] == len(query) and query.startswith(prov["query"][:-1])
    assert prov["query"].endswith("…")
    assert prov["files_read_count"] == 500 and len(prov["files_read"]) < 500
    assert all(len(f) <= 301 for f in prov["files_read"])
    assert len(entry.provenance) == 150 and entry.provenance["fact-149"]["origin"] == "user"


def test_api_writes_are_manual(workspace: str) -> None:
    MemoryStore(workspace).extend([rec("a")])
    assert last_entry(workspace).provenance["a"]["origin"] == "manual"


# --- the notebook: which notebook and cell ------------------------------------------


@pytest.fixture
def ip(workspace: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.chdir(workspace)
    with loaded_shell() as shell:
        try:
            yield shell
        finally:
            shell.user_ns.pop("__session__", None)


def test_agent_cell_records_notebook_and_execution_count_and_show_tells(
    ip: InteractiveShell,
    messages_server: MessagesServer,
    workspace: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.base_url)
    ip.run_line_magic("config", "IPyMemory.max_retries = 0")
    # ipykernel puts the notebook's path (JPY_SESSION_NAME) here.
    ip.user_ns["__session__"] = str(Path(workspace, "analysis.ipynb"))
    messages_server.enqueue(
        text("Noted."),
        records_reply(rec("region-west", description="the west region sells most")),
    )
    count = ip.execution_count
    out = ip.run_cell(
        "%%agent --commit auto\nWhich region sells most? I know it is the west.",
        store_history=True,
    ).result
    assert isinstance(out, TurnOutput) and out.result.committed == ("region-west",)
    entry = last_entry(workspace)
    assert entry.actor["notebook"].endswith("analysis.ipynb")
    assert entry.actor["execution_count"] == count
    shown = ip.run_line_magic("memory", "show region-west").to_text()
    line = next(x for x in shown.splitlines() if x.startswith("added "))
    assert f"from analysis.ipynb cell [{count}]" in line
    assert "turn 'Which region sells most? I know it is the west.'" in line
    assert "origin: " in line


def test_cell_id_comes_from_the_kernels_execute_request(tmp_path: Path) -> None:
    """A real in-process ipykernel: the cellId JupyterLab sends in the request's
    metadata is what the provenance records (in a child process: the kernel's shell
    is a singleton)."""
    code = (
        "from ipykernel.inprocess.ipkernel import InProcessKernel\n"
        "from ipymemory.notebook.caller import cell_context\n"
        "import builtins; builtins.cell_context = cell_context\n"
        "k = InProcessKernel()\n"
        "k.set_parent([], {'header': {'msg_type': 'execute_request'},"
        " 'metadata': {'cellId': 'c0ffee-1'}, 'content': {}})\n"
        "k.shell.run_cell('x = 1', store_history=True)\n"
        "k.shell.run_cell('got = cell_context(get_ipython())', store_history=True)\n"
        "import json; print(json.dumps(k.shell.user_ns['got']))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IPYMEMORY_", "JPY_"))}
    env["JPY_SESSION_NAME"] = "/w/report.ipynb"
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["cell_id"] == "c0ffee-1"
    assert got["notebook"] == "/w/report.ipynb"
    assert got["execution_count"] == 2  # the second cell run
