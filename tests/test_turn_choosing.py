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
from messages_server import MessagesServer, text, tool_use
from notebook_support import memory, use_api
from record_support import rec
from turn_support import carried_names, records_reply, requests_of, selector_input, session_for

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


def selected(view: Any) -> tuple[str, ...]:
    assert isinstance(view, SelectionWidget)
    return tuple(view.static_view().names)


def test_select_the_turn_and_mcp_agree_on_the_first_request_and_the_models_pick(
    ip: InteractiveShell,
    workspace: str,
    user_dir: Path,
    messages_server: MessagesServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # SPEC §13: the first request carries the keyword ranking's best at once; the side
    # model's pick, beside the agent's call, adds what the question says in other words
    # ("releases ship" for "deploys go out"). %memory select, the turn and MCP
    # memory_select make the same selection and the same pick over both scopes.
    use_api(ip, messages_server.base_url, monkeypatch)
    ip.run_line_magic("config", "IPyMemory.max_selected = 2")  # a choice to make...
    ip.run_line_magic("config", "IPyMemory.memory_budget = 0")  # ...though the set is small
    ip.run_line_magic("config", "IPyMemory.selector = 'model'")  # and the model's pick
    ip.run_line_magic("config", "IPyMemory.follow_check = False")
    question = "which weekday do releases ship, and tabs or spaces for my code?"
    picked = '["deploy-friday", "prefers-tabs"]'  # one project record, one user-wide
    messages_server.enqueue_for("selector", text(picked), text(picked), text(picked))
    # The agent reads the directory first: its next request is where the pick joins.
    messages_server.enqueue(
        tool_use("list_files", {}, delay=0.5), text("Fridays; tabs."), text("[]")
    )

    view = memory(ip, f"select {question}")
    turn = ip.run_cell_magic("agent", "", question)

    async def use(client: McpClient) -> Any:
        return await client.call_tool("memory_select", {"query": question})

    env = {
        "ANTHROPIC_API_KEY": "test",
        "ANTHROPIC_BASE_URL": messages_server.base_url,
        "IPYMEMORY_MAX_RETRIES": "0",
        "IPYMEMORY_USER_DIR": str(user_dir),
        "IPYMEMORY_MEMORY_BUDGET": "0",
        "IPYMEMORY_MAX_SELECTED": "2",
        "IPYMEMORY_SELECTOR": "model",
    }
    mcp = data(with_mcp(workspace, use, env=env))

    assert isinstance(turn, TurnOutput)
    result = turn.result
    first = result.selection.names
    assert first[0] == "prefers-tabs" and "deploy-friday" not in first  # keyword: "tabs"
    assert result.selection.source == view.static_view().source == mcp["chosen_by"] == "keyword"
    assert view.static_view().records == result.selection.records
    # The pick adds deploy-friday: the turn's second request carries it; select and MCP
    # name it as the model's addition.
    assert result.trace is not None and result.trace.pick is not None
    assert result.trace.pick.added == ("deploy-friday",) and result.trace.pick.joined == 2
    assert [r.added for r in result.trace.requests] == [first, ("deploy-friday",)]
    assert selected(view) == result.trace.seen == (*first, "deploy-friday")
    assert [r["name"] for r in mcp["records"]] == list(result.trace.seen)
    assert mcp["model_added"] == ["deploy-friday"] and mcp["model"] == C.DEFAULT_SIDE_MODEL
    main = requests_of(messages_server.requests, "main")
    assert carried_names(main[0]) == list(first)
    assert carried_names(main[1]) == list(result.trace.seen)
    # All three asked the model over the same catalog -- the project's lines, then the
    # user's records the project does not shadow -- told what the first request has.
    asked = [selector_input(r) for r in requests_of(messages_server.requests, "selector")]
    assert len(asked) == 3 and all(a == asked[0] for a in asked)
    assert asked[0]["given"] == list(first)
    lines = asked[0]["catalog"].splitlines()
    assert [line.split("]")[0] for line in lines if line.startswith("- [")] == [
        "- [deploy-friday",
        "- [ci-matrix",
        "- [shared",
        "- [prefers-tabs",
        "- [answers-in-german",
    ]
    assert "the user's note of the same name" not in asked[0]["catalog"]
    # The trace says it: %memory session, the line under the answer, the journal.
    said = memory(ip, "session")
    assert said.to_json()["memory_traces"] == [{"turn": 1, **result.trace.to_json()}]
    text_form = said.to_text()
    assert f"request 1: added {', '.join(first)}; {len(first)} carried" in text_form
    assert "deploy-friday joined request 2" in text_form
    [line] = [v for v in turn.memory_parts() if getattr(v, "kind", None) == "memory-pick"]
    assert line.to_text() == result.trace.pick.text()


@pytest.mark.parametrize("selector", ["model", "keyword"])
def test_without_a_model_select_the_turn_and_mcp_rank_by_keyword_alike(
    ip: InteractiveShell, workspace: str, user_dir: Path, selector: str
) -> None:
    # The first request's selection asks no model; without one, selector "model"'s
    # pick falls back (nothing added), and a count asked for is the fallback's.
    ip.run_line_magic("config", "IPyMemory.max_selected = 1")
    ip.run_line_magic("config", "IPyMemory.memory_budget = 0")
    ip.run_line_magic("config", f"IPyMemory.selector = {selector!r}")
    question = "indents Python with tabs"  # the words of a user-wide record only
    view = memory(ip, f"select {question}")
    counted = memory(ip, f"select --limit 1 {question}")
    turn = get_session().begin_turn(question)

    async def use(client: McpClient) -> Any:
        return [
            await client.call_tool("memory_select", {"query": question}),
            await client.call_tool("memory_select", {"query": question, "limit": 1}),
        ]

    env = {
        "IPYMEMORY_USER_DIR": str(user_dir),
        "IPYMEMORY_MEMORY_BUDGET": "0",
        "IPYMEMORY_MAX_SELECTED": "1",
        "IPYMEMORY_SELECTOR": selector,
    }
    mcp, limited = (data(r) for r in with_mcp(workspace, use, env=env))
    assert selected(view) == selected(counted) == turn.names == ("prefers-tabs",)
    assert [r["name"] for r in mcp["records"]] == ["prefers-tabs"]
    assert [r["name"] for r in limited["records"]] == ["prefers-tabs"]
    assert view.static_view().source == turn.source == mcp["chosen_by"] == "keyword"
    pick = "fallback" if selector == "model" else None
    assert view.static_view().pick == pick and mcp["model_added"] == []
    assert counted.static_view().source == limited["chosen_by"] == (pick or "keyword")
    assert get_session().last_error is None  # select changes no session's error


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
    # One token less than the block: the turn chooses again, the model beside it.
    size = int(str(turn.result.selection.reason).split("(")[1].split(" of")[0])
    ip.run_line_magic("config", f"IPyMemory.memory_budget = {size - 1}")
    ip.run_line_magic("config", "IPyMemory.selector = 'model'")
    messages_server.enqueue_for("selector", text('["prefers-tabs"]'))
    messages_server.enqueue(text("Tabs."), text("[]"))
    again = ip.run_cell_magic("agent", "", question)
    assert isinstance(again, TurnOutput)
    assert again.result.selection.source == "keyword" and 2 <= len(again.result.selection.names) < 5
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
    none = select_from(question, read_scopes(project, user), limit=0)
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
    # The model's pick is shown the newest select_candidates of the 500, in set order;
    # the keyword selector asks nothing.
    assert requests_of(messages_server.requests, "selector") == []
    session.config = replace(session.config, selector="model", select_candidates=30)
    before = len(messages_server.requests)
    messages_server.enqueue_for("selector", text('["fact-9-27"]'))
    chosen = choose_memories(
        session.model,
        Question.of("what about zone007's export?"),
        session.store,
        None,
        session.config,
    )
    assert chosen.pick is not None and chosen.pick.names == ("fact-9-27",)
    [asked] = requests_of(messages_server.requests[before:], "selector")
    lines = selector_input(asked)["catalog"].splitlines()
    assert [line.split("]")[0][3:] for line in lines] == [f"fact-9-{i}" for i in range(20, 50)]
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
    budget = block_tokens([records[i] for i in (3, 1, 4, 2)])
    assert block_tokens(records) > budget
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
    monkeypatch.delenv("IPYMEMORY_MEMORY_BUDGET")  # the defaults
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


def test_the_journal_keeps_what_each_request_carried_and_when_the_pick_arrived(
    messages_server: MessagesServer, workspace: str
) -> None:
    # SPEC §13: the trace of a turn goes with its batch into the journal (actor.memories).
    MemoryStore(workspace).extend(
        [rec("deploy-friday", "deploys go out on Fridays"), rec("lint-rule", "run ruff")]
    )
    session = session_for(
        messages_server.base_url, workspace, max_selected=1, selector="model", follow_check=False
    )
    messages_server.enqueue_for("selector", text('["deploy-friday"]'))
    messages_server.enqueue(
        tool_use("list_files", {}, delay=0.5),
        text("On Fridays."),
        records_reply(rec("ship-day", "we ship on Fridays")),
    )
    result = session.run_turn("which weekday do releases ship?")
    assert result.batch is not None and result.trace is not None
    assert session.commit(result.batch, accept=["ship-day"]).committed == ("ship-day",)
    [entry] = MemoryStore(workspace).history(1)
    memories = entry.actor["memories"]
    assert memories == json.loads(json.dumps(result.trace.to_json()))
    assert [r["added"] for r in memories["requests"]] == [["lint-rule"], ["deploy-friday"]]
    pick = memories["model_pick"]
    assert (pick["names"], pick["joined_request"], pick["carried_over"]) == (
        ["deploy-friday"],
        2,
        [],
    )
    assert 0 < pick["seconds"] < result.answer_seconds
