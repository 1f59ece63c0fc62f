from __future__ import annotations

import json
from pathlib import Path

import pytest
from record_support import rec
from turn_support import OLD_SELECTION, assert_alternates, assert_pairs_intact, memory_text

from ipymemory import (
    AgentSession,
    MemoryStore,
    ModelError,
    ModelReply,
    ScriptedModel,
    ScriptExhausted,
    SessionConfig,
    SideQueryError,
    TurnEvent,
    Usage,
)
from ipymemory.model import calling_as
from ipymemory.sidequery import LAST_ERROR_SELECT


def _call(model: ScriptedModel, **kw: object) -> ModelReply:
    return model.create(
        system="s",
        messages=[{"role": "user", "content": "q"}],
        max_tokens=10,
        **kw,  # type: ignore[arg-type]
    )


def test_reply_forms() -> None:
    given = ModelReply(({"type": "text", "text": "as is"},), "end_turn", Usage(1, 2), "m")
    model = ScriptedModel(
        [
            "plain",
            {"type": "tool_use", "name": "read_file", "input": {"path": "a"}},
            {"type": "text", "text": "block"},
            {"content": "msg", "stop_reason": "max_tokens", "usage": {"output_tokens": 9}},
            {"content": [{"type": "tool_use", "name": "list_files", "id": "t1"}]},
            given,
        ]
    )
    first = _call(model)
    assert (first.text, first.stop_reason, first.usage) == ("plain", "end_turn", Usage())
    tool = _call(model)
    assert tool.stop_reason == "tool_use"
    assert tool.tool_uses[0]["name"] == "read_file" and tool.tool_uses[0]["id"].startswith("toolu_")
    assert _call(model).text == "block"
    cut = _call(model)
    assert (cut.stop_reason, cut.usage.output_tokens) == ("max_tokens", 9)
    listed = _call(model)
    assert listed.tool_uses == (
        {"type": "tool_use", "name": "list_files", "id": "t1", "input": {}},
    )
    assert _call(model) is given
    assert model.remaining == 0


def test_records_requests_as_copies_and_says_when_it_runs_out() -> None:
    model = ScriptedModel(["one"])
    messages = [{"role": "user", "content": "q"}]
    model.create(system="sys", messages=messages, max_tokens=5, tools=[{"name": "t"}], model="x")
    messages.append({"role": "assistant", "content": "mutated later"})
    assert model.requests == [
        {
            "system": "sys",
            "messages": [{"role": "user", "content": "q"}],
            "max_tokens": 5,
            "tools": [{"name": "t"}],
            "model": "x",
            "output_schema": None,
        }
    ]
    with pytest.raises(
        ScriptExhausted, match=r"no reply left for call 2 \(agent; it was given 1 in call order"
    ):
        _call(model)
    assert issubclass(ScriptExhausted, ModelError)
    model.add("two")
    assert _call(model).text == "two"


@pytest.mark.parametrize(
    "bad",
    [
        3,
        None,
        {"foo": 1},
        {"type": "tool_use"},
        {"content": 5},
        {"type": "text"},
        {"content": "x", "usage": 3},
    ],
)
def test_bad_script_entries_fail_when_given(bad: object) -> None:
    with pytest.raises(TypeError, match="ScriptedModel reply 1"):
        ScriptedModel(["fine", bad])  # type: ignore[list-item]


def test_a_whole_offline_turn(workspace: str) -> None:
    Path(workspace, "notes.md").write_text("indent with tabs")
    MemoryStore(workspace).extend([rec("prefers-tabs", "indentation preference", "Tabs.", "user")])
    model = ScriptedModel(
        [  # (no selector reply: the one record fits)
            {"type": "tool_use", "name": "read_file", "input": {"path": "notes.md"}},
            "Tabs, as your notes say.",
            # What the user said (an item from the file alone would wait for review).
            json.dumps(
                [rec("notes-file", "the user keeps notes in notes.md", "Notes: notes.md").to_json()]
            ),
            # The follow-up check of the user memory injected (SPEC §14).
            json.dumps([{"name": "prefers-tabs", "verdict": "follows", "reason": "says tabs"}]),
        ]
    )
    session = AgentSession(
        workspace, model=model, config=SessionConfig(**OLD_SELECTION, commit_mode="auto")
    )
    result = session.run_turn("how should I indent? I keep my notes in notes.md")
    assert result.answer == "Tabs, as your notes say."
    assert result.tool_calls == 1 and result.last_error is None
    assert result.followed is not None
    assert [(m.name, m.verdict.verdict) for m in result.followed.memories] == [
        ("prefers-tabs", "follows")
    ]
    assert result.committed == ("notes-file",)
    assert [r.name for r in MemoryStore(workspace).records()] == ["prefers-tabs", "notes-file"]
    assert "## prefers-tabs (user, saved " in memory_text(model.requests[0])
    assert model.requests[1]["messages"][2]["content"][0]["content"] == "indent with tabs"
    assert_pairs_intact(session.history)
    assert_alternates(session.history)


def test_running_out_is_reported_like_an_api_failure(workspace: str) -> None:
    MemoryStore(workspace).extend(
        [rec("prefers-tabs", "indentation preference", "Tabs.", "user"), rec("lint-rule")]
    )
    # The model's pick (one of two to choose, beside the agent's call: scripted per
    # role) gets prose (invalid), the agent its answer; the extractor and the follow-up
    # checker find their scripts empty: all are memory failures, the answer still comes.
    model = ScriptedModel(agent=["use tabs"], selector=["let me think"], extractor=[], checker=[])
    session = AgentSession(
        workspace,
        model=model,
        config=SessionConfig(**OLD_SELECTION, max_selected=1, selector="model"),
    )
    result = session.run_turn("indentation?")
    assert result.answer == "use tabs"
    # The first request carried the keyword ranking's best, which stands.
    assert result.selection.source == "keyword" and result.selection.names == ("prefers-tabs",)
    assert result.trace is not None and result.trace.pick is not None
    assert result.trace.pick.source == "fallback"
    assert [f.message for f in result.memory_errors] == [
        LAST_ERROR_SELECT,
        "Memory extraction failed",
        "Memory follow-up check failed",
    ]
    assert "no checker reply left for call 4" in (result.last_error_cause or "")
    # Each failure keeps its typed error: the fallback raised none, the extractor's and
    # the checker's script ran out (a SideQueryError caused by ScriptExhausted).
    selecting, extracting, checking = result.memory_errors
    assert selecting.error is None and "let me think" in selecting.cause
    assert "no extractor reply left for call 3" in extracting.cause
    for failure in (extracting, checking):
        assert isinstance(failure.error, SideQueryError)
        assert failure.cause == str(failure.error)
    # The agent itself running out is a failed turn; the history stays a valid dialogue.
    with pytest.raises(ScriptExhausted, match="no agent reply left"):
        session.run_turn("and now?")
    assert_pairs_intact(session.history)
    assert_alternates(session.history)
    assert session.history[-1]["content"][0]["text"].startswith("(The turn failed:")


# --- replies per role (issue 33 #1) -----------------------------------------------------


def test_replies_per_role_do_not_depend_on_how_many_calls_a_turn_makes(workspace: str) -> None:
    """The README's offline script: a fresh set never calls the selector (it fits), so
    a script in call order would hand its reply to the agent; per role it cannot."""
    item = rec("prefers-tabs", "Indents with tabs, not spaces", "Always tabs.", "user")
    model = ScriptedModel(
        selector=['["prefers-tabs"]'],
        agent=["Use tabs.", "Tabs there too."],
        extractor=[json.dumps([item.to_json()]), "[]"],
    )
    session = AgentSession(
        workspace, model=model, config=SessionConfig(**OLD_SELECTION, commit_mode="auto")
    )
    first = session.run_turn("I always indent with tabs, not spaces. How do I format it?")
    assert (first.answer, first.last_error, first.committed) == (
        "Use tabs.",
        None,
        ("prefers-tabs",),
    )
    second = session.run_turn("And the tests?")
    assert (second.answer, second.last_error) == ("Tabs there too.", None)
    assert second.selection.names == ("prefers-tabs",)  # the whole set, no selector call
    assert model.remaining == 1  # the selector's reply, never needed


def test_the_role_that_ran_out_is_named(workspace: str) -> None:
    events: list[TurnEvent] = []
    model = ScriptedModel(agent=["one"], extractor=[])
    session = AgentSession(workspace, model=model, config=SessionConfig(**OLD_SELECTION))
    result = session.run_turn("q", on_event=events.append)
    assert result.answer == "one" and result.last_error == "Memory extraction failed"
    assert "no extractor reply left for call 2 (it was given 0 extractor replies)" in (
        result.last_error_cause or ""
    )
    # The progress line does not call a failed extraction "no new memories".
    done = [e.detail for e in events if e.kind == "done"]
    assert done == ["0 tool call(s); memory work failed: Memory extraction failed"]
    with pytest.raises(
        ScriptExhausted, match=r"no agent reply left for call 3 \(it was given 1 agent reply\)"
    ):
        session.run_turn("again")


def test_a_role_without_its_own_script_takes_the_replies_in_call_order() -> None:
    model = ScriptedModel(["in order"], extractor=["[]"])
    with calling_as("extractor"):
        assert _call(model).text == "[]"
    assert _call(model).text == "in order"  # the agent: no script of its own
    with (
        calling_as("consolidator"),
        pytest.raises(
            ScriptExhausted, match=r"call 3 \(consolidator; it was given 1 in call order"
        ),
    ):
        _call(model)
    model.add("later", role="agent")
    assert _call(model).text == "later" and model.remaining == 0
    with pytest.raises(ValueError, match="no role 'main'; one of agent, selector, extractor"):
        model.add("x", role="main")
    with pytest.raises(TypeError, match="ScriptedModel summarizer reply 0"):
        ScriptedModel(summarizer=[3])  # type: ignore[list-item]
