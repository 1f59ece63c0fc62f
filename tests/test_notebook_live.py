"""The live ``%%agent`` cell (issue 13) in a real InteractiveShell, the real SDK against
the scripted server: the answer streams in and is complete before any memory work, the
progress clock ticks with no event, the tool steps sit collapsed under the answer, and
an interrupt during the memory work keeps the answer and writes nothing partial."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from messages_server import HOLD_SECONDS, MessagesServer, Scripted, text, tool_use
from notebook_support import ctrl_c_raises, items_json
from record_support import rec
from turn_support import requests_of, role_of

from ipymemory import MemoryStore
from ipymemory import _constants as C
from ipymemory.notebook import get_session, use_model
from ipymemory.notebook.output import LiveAnswer, TurnOutput
from ipymemory.views import MessageView

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


@pytest.fixture
def api(
    ip: InteractiveShell, messages_server: MessagesServer, monkeypatch: pytest.MonkeyPatch
) -> MessagesServer:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.base_url)
    ip.run_line_magic("config", "IPyMemory.max_retries = 0")
    return messages_server


def _markdown(outputs: list[Any]) -> list[str]:
    return [o.data["text/markdown"] for o in outputs if "text/markdown" in o.data]


def _progress(outputs: list[Any]) -> list[str]:
    return [
        str(o.data["text/plain"])
        for o in outputs
        if o.update and "ipymemory-progress" in str(o.data.get("text/html", ""))
    ]


def test_the_answer_is_shown_whole_before_the_extractor_is_asked(
    api: MessagesServer, ip: InteractiveShell
) -> None:
    answer = "First line of the answer.\n\nA **second** paragraph, with more words in it."
    seen_at_extraction: list[list[str]] = []
    shown: list[Any] = []

    def respond(body: dict[str, Any]) -> Scripted:
        if role_of(body) == "extractor":
            # What the cell showed when the memory work began.
            seen_at_extraction.append(
                [o["data"]["text/markdown"] for o in list(shown) if "text/markdown" in o["data"]]
            )
            return text("[]", delay=0.3)
        return text(answer, chunk_delay=0.01)

    api.responder = respond
    with capture_output() as captured:
        shown = ip.display_pub.outputs  # type: ignore[attr-defined]
        result = ip.run_cell("%%agent\nexplain")
    assert isinstance(result.result, TurnOutput) and result.result.answer == answer
    (markdown,) = seen_at_extraction
    assert markdown[0] == "" and markdown[-1] == answer  # complete, before extraction
    assert len(markdown) >= 3  # and it grew while streaming: re-rendered progressively
    assert all(answer.startswith(m) for m in markdown)
    # TurnOutput does not show the answer a second time.
    assert _markdown(list(captured.outputs)).count(answer) == 1
    # No tool ran: no steps view at all (not even an empty output).
    assert not [o for o in captured.outputs if "tool step" in str(o.data.get("text/plain"))]
    assert not [
        o
        for o in captured.outputs
        if o.data == {"text/plain": ""}  # an empty steps view
    ]
    summary = _progress(list(captured.outputs))[-1]
    assert summary.startswith("✓ answered in ") and " · memory in " in summary


def test_the_clock_ticks_while_nothing_happens(
    api: MessagesServer, ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(C, "PROGRESS_TICK_SECONDS", 0.05)
    redrawn = threading.Event()  # the reply waits until the line was redrawn 5 times

    def respond(body: dict[str, Any]) -> Scripted:
        redrawn.wait(HOLD_SECONDS)
        return text("Slow.")

    api.responder = respond
    with capture_output() as captured:
        publish = ip.display_pub.publish

        def counting(data: Any, *args: Any, **kwargs: Any) -> None:
            publish(data, *args, **kwargs)
            if sum("waiting for the model" in line for line in _progress(captured.outputs)) >= 5:
                redrawn.set()

        ip.display_pub.publish = counting  # type: ignore[method-assign]
        ip.run_cell("%%agent --commit off\nslow")
    waiting = [
        line.lstrip(SPINNER + " ")
        for line in _progress(list(captured.outputs))
        if "waiting for the model" in line
    ]
    # One event ("model") but many redraws, each with a later clock.
    assert len(waiting) >= 5
    clocks = [float(line.rsplit("(", 1)[1].split(" s)")[0]) for line in waiting]
    assert clocks == sorted(clocks) and clocks[-1] > clocks[0]


def test_the_steps_are_collapsed_under_the_answer(
    api: MessagesServer, ip: InteractiveShell, workspace: str
) -> None:
    Path(workspace, "notes.md").write_text("tabs\n" * 10)
    api.enqueue(
        tool_use("read_file", {"path": "notes.md"}, id="t1", text_before="Reading."),
        tool_use("read_file", {"path": "missing.md"}, id="t2"),
        text("Tabs."),
    )
    with capture_output() as captured:
        ip.run_cell("%%agent --commit off\nindent?")
    outputs = list(captured.outputs)
    first = [o.data for o in outputs if not o.update]
    kinds = [
        "answer"
        if "text/markdown" in data
        else "steps"
        if "ipymemory-steps" in str(data.get("text/html", ""))
        else "progress"
        if "ipymemory-progress" in str(data.get("text/html", ""))
        else "other"
        for data in first
    ]
    assert kinds[:3] == ["progress", "answer", "steps"]  # the steps under the answer
    steps = [o.data for o in outputs if "ipymemory-steps" in str(o.data.get("text/html", ""))]
    final = steps[-1]
    assert final["text/html"].startswith("<details")  # collapsed until clicked
    assert "<details open" not in final["text/html"]
    assert "2 tool steps, 1 failed" in final["text/plain"]
    assert "read_file notes.md -> 50 chars" in final["text/plain"]
    assert "read_file missing.md -> error:" in final["text/plain"]
    # The text before the first tool call was not left standing as the answer.
    assert _markdown(outputs)[-1] == "Tabs."


def test_interrupting_the_memory_work_keeps_the_answer_and_writes_nothing(
    api: MessagesServer, ip: InteractiveShell, workspace: str
) -> None:
    main_thread = threading.get_ident()
    release = threading.Event()  # the extractor's reply waits until the cell returned

    def respond(body: dict[str, Any]) -> Scripted:
        if role_of(body) == "extractor":
            # The answer is out; interrupt the kernel while the extractor thinks.
            signal.pthread_kill(main_thread, signal.SIGINT)
            release.wait(HOLD_SECONDS)
            return text(items_json(rec("never-written")))
        return text("The answer.")

    api.responder = respond
    with ctrl_c_raises(), capture_output() as captured:
        result = ip.run_cell("%%agent --commit auto\nremember that I like tabs")
    release.set()
    assert result.error_in_exec is None
    view = result.result
    assert isinstance(view, MessageView) and "answer above is complete" in view.to_text()
    assert _markdown(list(captured.outputs))[-1] == "The answer."
    assert _progress(list(captured.outputs))[-1].startswith("■ memory work interrupted")
    assert MemoryStore(workspace).records() == ()
    history = get_session().history
    assert [m["role"] for m in history] == ["user", "assistant"]
    # The cursor did not move: the next turn's extraction reads the interrupted turn.
    api.responder = None
    api.enqueue(text("Again."), text("[]"))
    ip.run_cell("%%agent --commit auto\nand now?")
    extract = [r for r in api.requests if role_of(r) == "extractor"][-1]
    assert "remember that I like tabs" in json.dumps(extract["messages"])


def test_a_throttled_piece_is_flushed_by_the_clock(ip: InteractiveShell) -> None:
    with capture_output() as captured:
        live = LiveAnswer(interval=3600)  # after the first render, only flush() renders
        live.start()
        live.add("a ")
        live.add("b")
        shown_before_flush = _markdown(list(captured.outputs))
        live.flush()
        live.flush()  # nothing new: no output
        live.finish("a b c")
        live.add(" late")  # nothing after the final answer
        live.flush()
    assert shown_before_flush == ["", "a "]
    assert _markdown(list(captured.outputs)) == ["", "a ", "a b", "a b c"]


class _Broken:
    """A model client with a bug (not a ModelError)."""

    def create(self, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in a custom client")


def test_an_unexpected_error_stops_the_clock(ip: InteractiveShell) -> None:
    use_model(_Broken())
    try:
        with capture_output() as captured:
            result = ip.run_cell("%%agent --no-memory\nq")
    finally:
        use_model(None)
    assert isinstance(result.error_in_exec, RuntimeError)
    assert _progress(list(captured.outputs))[-1].startswith("✗ failed after")
    assert not [t for t in threading.enumerate() if t.name == "ipymemory-progress"]


def test_ctrl_c_while_the_answer_streams_stops_the_stream(
    api: MessagesServer, ip: InteractiveShell
) -> None:
    answer = "one two three four five six seven eight nine ten eleven twelve"
    # The stream stops after its first three words (message_start, the block's start,
    # three deltas) until the cell returned; Ctrl-C comes once the first word is shown
    # (the answer streams then): it always lands mid-answer.
    reply = text(answer, hold_after=5, release=threading.Event())
    api.enqueue(reply)
    shown_first = threading.Event()
    main_thread = threading.get_ident()
    interrupter = threading.Thread(
        target=lambda: (
            shown_first.wait(HOLD_SECONDS) and signal.pthread_kill(main_thread, signal.SIGINT)
        )
    )
    interrupter.start()
    with ctrl_c_raises(), capture_output() as captured:
        publish = ip.display_pub.publish

        def watching(data: Any, *args: Any, **kwargs: Any) -> None:
            publish(data, *args, **kwargs)
            if str(data.get("text/markdown", "")).startswith("one"):
                shown_first.set()

        ip.display_pub.publish = watching  # type: ignore[method-assign]
        result = ip.run_cell("%%agent --commit off\ncount")
    interrupter.join()
    assert reply.release is not None
    reply.release.set()
    assert result.error_in_exec is None
    assert isinstance(result.result, MessageView) and "interrupted" in result.result.to_text()
    assert requests_of(api.requests, "main")[0]["stream"] is True
    shown = _markdown(list(captured.outputs))[-1]
    assert "one two three ".startswith(shown)  # a part, as far as it came
    # The client closed the stream: the held rest of the answer finds it hung up.
    deadline = time.monotonic() + HOLD_SECONDS
    while 0 not in api.aborted and 0 not in api.finished and time.monotonic() < deadline:
        time.sleep(0.05)
    assert 0 in api.aborted and 0 not in api.finished
    history = get_session().history
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert _progress(list(captured.outputs))[-1].startswith("■ interrupted after")
