"""The main model call streams (SDK ``messages.stream`` against the scripted server's
server-sent events): text as it arrives, through the tool loop, a clean stop on an
interrupt, a typed error when the stream breaks off."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from messages_server import MessagesServer, text, tool_use
from turn_support import assert_pairs_intact, model_for, role_of

from ipymemory import AgentSession, ModelAPIError, ScriptedModel, SessionConfig, TurnEvent


def _session(srv: MessagesServer, workspace: str) -> AgentSession:
    return AgentSession(
        workspace, model=model_for(srv.base_url), config=SessionConfig(commit_mode="off")
    )


def test_text_streams_in_pieces_through_the_tool_loop(
    messages_server: MessagesServer, workspace: str
) -> None:
    Path(workspace, "a.txt").write_text("alpha\n")
    messages_server.enqueue(
        tool_use("read_file", {"path": "a.txt"}, id="t1", text_before="Let me read a.txt first."),
        text("The file says alpha, and nothing else at all."),
    )
    events: list[TurnEvent] = []
    result = _session(messages_server, workspace).run_turn(
        "what is in a.txt?", on_event=events.append
    )
    # Each step's text arrives piece by piece, in order, the step boundary between.
    kinds = [e.kind for e in events if e.kind in ("model", "text", "step", "answered")]
    first, second = kinds.index("model"), kinds.index("model", 1)
    assert set(kinds[first + 1 : second]) == {"text", "step"}
    streamed = [e.detail for e in events if e.kind == "text"]
    assert "".join(streamed) == "Let me read a.txt first." + result.answer
    assert len(streamed) >= 10
    assert result.answer == "The file says alpha, and nothing else at all."
    assert kinds[-1] == "answered"
    # The streamed tool call ran like a whole one: its input arrived as JSON deltas.
    assert result.tool_calls == 1 and result.steps[0].summary == "a.txt"
    assert result.steps[0].result_chars == len("alpha\n")
    assert all(r["stream"] is True for r in messages_server.requests if role_of(r) == "main")


def test_interrupting_a_stream_closes_the_turn_and_the_connection(
    messages_server: MessagesServer, workspace: str
) -> None:
    messages_server.enqueue(text("one two three four five six seven eight", chunk_delay=0.05))
    seen: list[str] = []

    def stop_after_three(event: TurnEvent) -> None:
        if event.kind == "text":
            seen.append(event.detail)
            if len(seen) == 3:
                raise KeyboardInterrupt

    session = _session(messages_server, workspace)
    with pytest.raises(KeyboardInterrupt):
        session.run_turn("count", on_event=stop_after_three)
    assert seen == ["one ", "two ", "three "]
    history = session.history
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert_pairs_intact(history)
    # The client closed the stream: the server's next write failed.
    deadline = time.monotonic() + 30
    while 0 not in messages_server.aborted and time.monotonic() < deadline:
        time.sleep(0.05)
    assert 0 in messages_server.aborted and 0 not in messages_server.finished
    # The session goes on: the next turn is a valid conversation.
    messages_server.enqueue(text("Fine."))
    assert session.run_turn("again", on_event=lambda e: None).answer == "Fine."
    last = messages_server.requests[-1]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user"]


def test_a_stream_that_breaks_off_is_a_typed_model_error(
    messages_server: MessagesServer, workspace: str
) -> None:
    messages_server.enqueue(text("partial answer", stream_error="overloaded mid-stream"))
    session = _session(messages_server, workspace)
    with pytest.raises(ModelAPIError, match="overloaded mid-stream"):
        session.run_turn("q", on_event=lambda e: None)
    assert_pairs_intact(session.history)
    assert session.history[-1]["role"] == "assistant"


def test_without_a_listener_nothing_streams(
    messages_server: MessagesServer, workspace: str
) -> None:
    messages_server.enqueue(text("Plain."))
    assert _session(messages_server, workspace).run_turn("q").answer == "Plain."
    assert "stream" not in messages_server.requests[0]


def test_the_scripted_model_streams_word_by_word(workspace: str) -> None:
    model = ScriptedModel(["Tabs, as your notes say."])
    session = AgentSession(workspace, model=model, config=SessionConfig(commit_mode="off"))
    pieces: list[str] = []

    def listen(event: Any) -> None:
        if event.kind == "text":
            pieces.append(event.detail)

    result = session.run_turn("indent?", use_memory=False, on_event=listen)
    assert pieces == ["Tabs, ", "as ", "your ", "notes ", "say."]
    assert result.answer == "".join(pieces)
