"""Two kernels, one ``.memory/``: sessions in separate processes share the set safely."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from messages_server import MessagesServer, Scripted, text
from record_support import rec
from turn_support import memory_text, model_for, plan_reply, records_reply, role_of

from ipymemory import AgentSession, MemoryStore, NoModel, SessionConfig
from ipymemory.turn.session import LAST_ERROR_COMMIT

_CHILD_SESSION = """
import json, sys
import anthropic
from ipymemory import AnthropicModel
from ipymemory.turn import AgentSession, SessionConfig

workspace, base_url, query = sys.argv[1:4]
client = anthropic.Anthropic(base_url=base_url, api_key="test", max_retries=0, timeout=30)
model = AnthropicModel("child-main", side_model="child-side", client=client)
session = AgentSession(workspace, model=model, config=SessionConfig(commit_mode="auto"))
result = session.run_turn(query)
print(json.dumps({"answer": result.answer, "committed": list(result.committed),
                  "last_error": result.last_error}))
"""

_CHILD_EXTEND = """
import sys
from ipymemory.store.record import MemoryRecord
from ipymemory.store.store import MemoryStore
MemoryStore(sys.argv[1]).extend([MemoryRecord(name=sys.argv[2], type="reference",
    description="added by another kernel", body=sys.argv[3])])
"""

_CHILD_FORGET = """
import sys
from ipymemory.store.store import MemoryStore
MemoryStore(sys.argv[1]).forget([sys.argv[2]])
"""


def _run(code: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_one_kernel_writes_the_other_selects_it(
    messages_server: MessagesServer, workspace: str
) -> None:
    # Kernel A is running before kernel B writes anything.
    session_a = AgentSession(workspace, model=model_for(messages_server.base_url))
    deploy = rec(
        "deploy-day", "team deploys to production on Fridays", "Deploys go out on Fridays."
    )
    messages_server.enqueue(text("Noted."), records_reply(deploy))  # B: answer, extraction
    out = json.loads(_run(_CHILD_SESSION, workspace, messages_server.base_url, "we deploy Fridays"))
    assert out == {"answer": "Noted.", "committed": ["deploy-day"], "last_error": None}
    assert [role_of(r) for r in messages_server.requests] == ["main", "extractor"]
    assert messages_server.requests[0]["model"] == "child-main"

    # A reads the set again: B's record, the whole set, is injected (it fits, SPEC §12).
    messages_server.enqueue(text("On Friday."), text("[]"))
    result = session_a.run_turn("when do we deploy?")
    assert result.selection.source == "all" and result.selection.names == ("deploy-day",)
    assert [role_of(r) for r in messages_server.requests[2:]] == ["main", "extractor"]
    assert "Deploys go out on Fridays." in memory_text(messages_server.requests[2])
    # With a choice to make and no model, kernel A finds it with the keyword ranking (the
    # first request's, which needs no model: SPEC §13).
    MemoryStore(workspace).extend([rec("lint-rule", "run the linter before a commit")])
    offline = AgentSession(
        workspace,
        model=NoModel(),
        config=SessionConfig(max_selected=1, memory_budget=0, selector="model"),
    )
    selection = offline.begin_turn("which day do we deploy to production?")
    assert selection.source == "keyword" and selection.names == ("deploy-day",)


def _consolidation_responder(srv: MessagesServer, other: str, *args: str, plan: Scripted) -> None:
    """When the consolidator is asked, another process changes the store first."""

    def respond(body: dict[str, Any]) -> Scripted:
        assert role_of(body) == "consolidator"
        _run(other, *args)
        return plan

    srv.responder = respond


def _turn_with_consolidation(srv: MessagesServer, workspace: str) -> AgentSession:
    MemoryStore(workspace).extend([rec("x-note"), rec("y-note")])
    srv.enqueue(text("Done."), records_reply(rec("a-note")))  # (no selector: the set fits)
    return AgentSession(
        workspace,
        model=model_for(srv.base_url),
        config=SessionConfig(commit_mode="auto", consolidate_threshold=3, consolidate_every=1),
    )


def test_a_record_committed_while_the_consolidator_thinks_survives(
    messages_server: MessagesServer, workspace: str
) -> None:
    session = _turn_with_consolidation(messages_server, workspace)
    _consolidation_responder(
        messages_server,
        _CHILD_EXTEND,
        workspace,
        "concurrent-note",
        "Written by kernel B mid-consolidation.",
        plan=plan_reply(["x-note", "a-note"], [rec("xa-merged")]),
    )
    result = session.run_turn("work")
    assert result.answer == "Done." and result.last_error is None
    assert result.committed == ("xa-merged",)
    records = MemoryStore(workspace).records()
    assert [r.name for r in records] == ["y-note", "concurrent-note", "xa-merged"]
    assert records[1].body == "Written by kernel B mid-consolidation."
    # Only files of the current set (plus the manifest and index) remain.
    listed = json.loads(Path(workspace, ".memory", "manifest.json").read_text())["files"]
    on_disk = sorted(
        p.name for p in Path(workspace, ".memory").glob("*.md") if p.name != "MEMORY.md"
    )
    assert sorted(listed) == on_disk


def test_a_base_record_removed_while_the_consolidator_thinks_fails_cleanly(
    messages_server: MessagesServer, workspace: str
) -> None:
    session = _turn_with_consolidation(messages_server, workspace)
    _consolidation_responder(
        messages_server,
        _CHILD_FORGET,
        workspace,
        "x-note",
        plan=plan_reply(["x-note", "a-note"], [rec("xa-merged")]),
    )
    result = session.run_turn("work")
    assert result.answer == "Done." and result.committed == ()
    assert result.last_error == LAST_ERROR_COMMIT
    assert "changed during consolidation" in (result.last_error_cause or "")
    # Kernel B's change stands; nothing of this turn was committed (no mix).
    assert [r.name for r in MemoryStore(workspace).records()] == ["y-note"]
    assert result.batch is not None and result.batch.status == "failed"
    assert session.pending == (result.batch,)
