"""Phase 1, choosing the memories (``ipymemory/turn/choosing.py``): one selection over
both scopes, shared by the turn, ``%memory select`` and MCP ``memory_select`` (SPEC
§12), through a real InteractiveShell, the real SDK against the scripted server, and the
real MCP server over stdio."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from agents_support import McpClient, data, with_mcp
from IPython.core.interactiveshell import InteractiveShell
from messages_server import MessagesServer, text
from notebook_support import memory, use_api
from record_support import rec
from turn_support import records_reply, requests_of, session_for

from ipymemory import MemoryStore, NoModel, SessionConfig
from ipymemory import _constants as C
from ipymemory.notebook import get_session
from ipymemory.notebook.output import TurnOutput
from ipymemory.review.scopes import read_scopes
from ipymemory.store.maintenance import check
from ipymemory.turn.choosing import block_tokens, choose_memories, fill_by_rank, select_from
from ipymemory.turn.question import Question
from ipymemory.views import SelectionWidget

PROJECT = [
    rec("deploy-friday", "deploys go out on Fridays"),
    rec("ci-matrix", "the CI tests three Python versions"),
    rec("shared", "the project's own note", body="the project's"),
]
USER = [
    rec("prefers-tabs", "indents Python with tabs", type="user"),
    rec("answers-in-german", "wants answers in German", type="user"),
    rec("shared", "the user's note of the same name", body="the user's", type="user"),
]


@pytest.fixture
def user_dir(workspace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Three project records and a user scope of three, one named like a project's."""
    user = tmp_path / "me"
    user.mkdir()
    MemoryStore(workspace).extend(PROJECT)
    MemoryStore(user).extend(USER)
    monkeypatch.setenv("IPYMEMORY_USER_DIR", str(user))
    return user


def catalog_of(request: dict[str, Any]) -> str:
    return str(json.loads(request["messages"][0]["content"])["catalog"])


def selected(view: Any) -> tuple[str, ...]:
    assert isinstance(view, SelectionWidget)
    return tuple(view.static_view().names)


def test_memory_select_and_the_turn_choose_the_same_records_over_both_scopes(
    ip: InteractiveShell,
    user_dir: Path,
    messages_server: MessagesServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_api(ip, messages_server.base_url, monkeypatch)
    ip.run_line_magic("config", "IPyMemory.max_selected = 2")  # a choice to make...
    ip.run_line_magic("config", "IPyMemory.memory_budget = 0")  # ...though the set is small
    ip.run_line_magic("config", "IPyMemory.selector = 'model'")  # by the side model
    question = "how should I indent this Python file before Friday's deploy?"
    chosen = '["prefers-tabs", "deploy-friday"]'  # one user-wide record, one project's
    messages_server.enqueue(text(chosen))  # %memory select's selector
    messages_server.enqueue(text(chosen), text("Use tabs."), text("[]"))  # the turn's

    view = memory(ip, f"select {question}")
    turn = ip.run_cell_magic("agent", "", question)

    assert isinstance(turn, TurnOutput)
    assert selected(view) == turn.result.selection.names == ("prefers-tabs", "deploy-friday")
    assert view.static_view().source == turn.result.selection.source == "model"
    assert get_session().selected == turn.result.selection.records
    # Both asked the selector over the same catalog: the project's lines, then the user's
    # records the project does not shadow (its own 'shared' is offered, the user's not).
    first, second = requests_of(messages_server.requests, "selector")
    assert catalog_of(first) == catalog_of(second)
    lines = catalog_of(first).splitlines()
    assert [line.split("]")[0] for line in lines if line.startswith("- [")] == [
        "- [deploy-friday",
        "- [ci-matrix",
        "- [shared",
        "- [prefers-tabs",
        "- [answers-in-german",
    ]
    assert "the user's note of the same name" not in catalog_of(first)


@pytest.mark.parametrize("selector", ["model", "keyword"])
def test_without_a_model_select_the_turn_and_mcp_rank_by_keyword_alike(
    ip: InteractiveShell, workspace: str, user_dir: Path, selector: str
) -> None:
    # selector "model" without a model falls back; "keyword" asks no model at all.
    ip.run_line_magic("config", "IPyMemory.max_selected = 1")
    ip.run_line_magic("config", "IPyMemory.memory_budget = 0")
    ip.run_line_magic("config", f"IPyMemory.selector = {selector!r}")
    question = "indents Python with tabs"  # the words of a user-wide record only
    view = memory(ip, f"select {question}")
    turn = get_session().begin_turn(question)

    async def use(client: McpClient) -> Any:
        return await client.call_tool("memory_select", {"query": question, "limit": 1})

    env = {
        "IPYMEMORY_USER_DIR": str(user_dir),
        "IPYMEMORY_MEMORY_BUDGET": "0",
        "IPYMEMORY_SELECTOR": selector,
    }
    mcp = data(with_mcp(workspace, use, env=env))
    assert selected(view) == turn.names == ("prefers-tabs",)
    assert [r["name"] for r in mcp["records"]] == ["prefers-tabs"]
    source = "fallback" if selector == "model" else "keyword"
    assert view.static_view().source == turn.source == mcp["chosen_by"] == source
    assert (get_session().last_error is None) == (selector == "keyword")


def test_a_set_that_fits_the_memory_budget_is_taken_whole_by_the_turn_select_and_mcp(
    ip: InteractiveShell,
    workspace: str,
    user_dir: Path,
    messages_server: MessagesServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Issue 31: five short records are over max_selected but far under the budget: no
    # side-query, every record, the same for the three (SPEC §12).
    use_api(ip, messages_server.base_url, monkeypatch)
    ip.run_line_magic("config", "IPyMemory.max_selected = 2")
    ip.run_line_magic("config", "IPyMemory.memory_budget = 3000")  # the default
    ip.run_line_magic("config", "IPyMemory.follow_check = False")
    question = "how should I indent this Python file?"
    messages_server.enqueue(text("Use tabs."), text("[]"))
    view = memory(ip, f"select {question}")
    turn = ip.run_cell_magic("agent", "", question)

    async def use(client: McpClient) -> Any:
        # Without a limit, the turn's own selection; a limit is a count asked for.
        return [
            await client.call_tool("memory_select", {"query": question}),
            await client.call_tool("memory_select", {"query": question, "limit": 2}),
        ]

    env = {"IPYMEMORY_USER_DIR": str(user_dir), "IPYMEMORY_MEMORY_BUDGET": "3000"}
    mcp, limited = (data(r) for r in with_mcp(workspace, use, env=env))
    assert isinstance(turn, TurnOutput)
    names = ("deploy-friday", "ci-matrix", "shared", "prefers-tabs", "answers-in-german")
    assert selected(view) == turn.result.selection.names == names
    assert tuple(r["name"] for r in mcp["records"]) == names
    assert view.static_view().source == turn.result.selection.source == mcp["chosen_by"] == "all"
    assert "they fit the memory budget" in str(turn.result.selection.reason)
    assert requests_of(messages_server.requests, "selector") == []
    assert len(limited["records"]) == 2 and limited["chosen_by"] == "keyword"  # the default
    # One token less than the block: the turn chooses again (the side model, as set).
    size = int(str(turn.result.selection.reason).split("(")[1].split(" of")[0])
    ip.run_line_magic("config", f"IPyMemory.memory_budget = {size - 1}")
    messages_server.enqueue(text('["prefers-tabs"]'), text("Tabs."), text("[]"))
    again = ip.run_cell_magic("agent", "", question)
    assert isinstance(again, TurnOutput)
    assert again.result.selection.names == ("prefers-tabs",)
    assert len(requests_of(messages_server.requests, "selector")) == 1


def test_a_user_scope_that_cannot_be_read_is_said_and_the_projects_set_is_ranked(
    ip: InteractiveShell, user_dir: Path
) -> None:
    (user_dir / ".memory" / "manifest.json").write_text("{not json", encoding="utf-8")
    view = memory(ip, "select deploys go out on Fridays").static_view()
    assert view.names == ("deploy-friday", "ci-matrix", "shared")  # the project's fit
    assert view.source == "all"
    assert "the user scope" in str(view.reason) and "could not be read" in str(view.reason)
    # The turn goes on with the project's set too, and says why in its last error.
    session = get_session()
    assert session.begin_turn("deploys go out on Fridays").names == view.names
    assert session.last_error == "Memory could not be read"
    assert "the user scope" in str(session.last_error_cause)


def test_choose_memories_reads_both_scopes_and_a_limit_of_0_chooses_none(
    workspace: str, user_dir: Path
) -> None:
    project, user = MemoryStore(workspace), MemoryStore(user_dir)
    question = Question.of("tabs \ud83d")  # a lone surrogate: made encodable once, here
    assert question.text == "tabs \ufffd"
    chosen = choose_memories(NoModel(), question, project, user, SessionConfig(), limit=9)
    assert chosen.selection.source == "all"  # five records fit a limit of nine
    assert chosen.selection.names == (
        "deploy-friday",
        "ci-matrix",
        "shared",
        "prefers-tabs",
        "answers-in-german",
    )
    assert chosen.scoped.user_names == {"prefers-tabs", "answers-in-german"}
    none = select_from(NoModel(), question, read_scopes(project, user), side_model=None, limit=0)
    assert (none.records, none.source, none.reason) == ((), "none", "max_selected is 0")


def test_five_hundred_records_commit_through_real_turns_and_selection_stays_bounded(
    messages_server: MessagesServer, workspace: str
) -> None:
    # Issue 31: ten turns, each extracting 50 records of ~100-character descriptions,
    # committed after review: none refused by MEMORY.md's 4096 bytes or the manifest's
    # former 200 entries; check warns about the reference agent's bounds only.
    session = session_for(
        messages_server.base_url, workspace, consolidate_threshold=10_000, selector="keyword"
    )
    for turn in range(10):
        items = [
            rec(
                f"fact-{turn}-{i}",
                f"Pipeline fact {turn}.{i}: the nightly export of zone{i:03d} runs after the "
                "warehouse load and before the report",
            )
            for i in range(50)
        ]
        messages_server.enqueue(text(f"Answer {turn}."), records_reply(*items))
        result = session.run_turn(f"turn {turn}: what happens to the nightly export?")
        assert result.batch is not None and len(result.batch.items) == 50
        assert session.commit(result.batch).ok, session.last_error_cause
    store = MemoryStore(workspace)
    assert len(store.records()) == 500
    assert len((store.root / "MEMORY.md").read_bytes()) <= 4096
    report = check(workspace)
    assert report.ok and [p.severity for p in report] == ["warning"]
    # The model selector is shown select_candidates of the 500, the keyword one none.
    assert requests_of(messages_server.requests, "selector") == []
    session.config = replace(session.config, selector="model")
    before = len(messages_server.requests)
    messages_server.enqueue(text('["fact-9-7"]'))
    chosen = session.begin_turn("what about zone007's export?")
    assert chosen.names == ("fact-9-7",)
    [asked] = requests_of(messages_server.requests[before:], "selector")
    assert catalog_of(asked).count("\n") == C.DEFAULT_SELECT_CANDIDATES
    session.config = replace(session.config, selector="keyword")
    keyword = session.begin_turn("what about zone007's export?")
    assert keyword.source == "keyword" and len(keyword.names) == 5
    assert all(name.endswith("-7") for name in keyword.names)
    assert len(requests_of(messages_server.requests, "selector")) == 1
    # With the default budget, the keyword selector fills it at once: the ten records
    # about zone007 first, then the newest, the block within the budget; no request.
    session.config = replace(session.config, memory_budget=C.DEFAULT_MEMORY_BUDGET)
    filled = session.begin_turn("zone007")
    assert filled.source == "keyword" and 10 < len(filled.names) < 500
    assert {n for n in filled.names[:10]} == {f"fact-{t}-7" for t in range(10)}
    assert filled.names[10:13] == ("fact-9-49", "fact-9-48", "fact-9-47")
    assert block_tokens(filled.records) <= C.DEFAULT_MEMORY_BUDGET
    assert "as many as fit the memory budget" in str(filled.reason)
    assert len(requests_of(messages_server.requests, "selector")) == 1


def _long(name: str, words: str, size: int) -> Any:
    return rec(name, f"notes about {words}", body=f"{words} " + "detail " * size)


def test_the_keyword_selector_fills_the_budget_best_first_then_the_newest() -> None:
    records = [
        _long("old-unrelated", "gardening", 40),
        _long("export-a", "the export", 40),
        _long("middle-unrelated", "birthdays", 40),
        _long("export-b", "the nightly export", 40),
        _long("newest-unrelated", "holidays", 40),
    ]
    one = block_tokens(records[:1]) - block_tokens([])
    # Room for four records: both matches (best first), then the newest two others.
    budget = block_tokens(records[:4])
    filled = fill_by_rank("nightly export", records, limit=1, budget=budget)
    assert filled.names == ("export-b", "export-a", "newest-unrelated", "middle-unrelated")
    assert filled.source == "keyword" and f"({block_tokens(filled.records)} of" in str(
        filled.reason
    )
    # The limit is a floor: two records over a one-record budget are still both taken.
    tight = fill_by_rank("nightly export", records, limit=2, budget=one)
    assert tight.names == ("export-b", "export-a")
    assert "as many as fit" not in str(tight.reason)
    # A query that matches nothing gets the newest records, as many as fit.
    assert fill_by_rank("quantum", records, limit=1, budget=budget).names == (
        "newest-unrelated",
        "export-b",
        "middle-unrelated",
        "export-a",
    )


def test_the_default_selector_past_the_budget_asks_no_model_and_a_limit_is_a_count(
    ip: InteractiveShell,
    workspace: str,
    messages_server: MessagesServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("IPYMEMORY_SELECTOR", "IPYMEMORY_MEMORY_BUDGET"):  # the defaults
        monkeypatch.delenv(name)
    use_api(ip, messages_server.base_url, monkeypatch)
    ip.run_line_magic("config", "IPyMemory.follow_check = False")
    MemoryStore(workspace).extend(
        [_long(f"note-{i:02d}", f"topic{i} of the pipeline", 120) for i in range(40)]
    )
    question = "what do we know about topic7?"
    messages_server.enqueue(text("Topic 7 is ..."), text("[]"))
    view = memory(ip, f"select {question}")
    turn = ip.run_cell_magic("agent", "", question)
    assert isinstance(turn, TurnOutput)
    chosen = turn.result.selection
    assert selected(view) == chosen.names and chosen.source == "keyword"
    assert chosen.names[0] == "note-07" and 5 < len(chosen.names) < 40
    assert block_tokens(chosen.records) <= C.DEFAULT_MEMORY_BUDGET
    assert requests_of(messages_server.requests, "selector") == []
    assert get_session().last_error is None
    # An explicit limit is a count asked for: the keyword selector fills nothing.
    assert selected(memory(ip, f"select --limit 2 {question}"))[0] == "note-07"
    assert len(selected(memory(ip, f"select --limit 2 {question}"))) == 2
