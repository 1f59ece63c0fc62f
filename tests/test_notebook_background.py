"""The memory work after the cell (SPEC §12, issue 23) through a real InteractiveShell:
the real SDK against the scripted server, whose extractor reply is held behind a gate
the test opens. Orderings come from events (the gate, what was published, which
request the server finished), never from wall-clock thresholds."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from messages_server import MessagesServer, Scripted, text
from notebook_support import ctrl_c_raises, items_json, use_api
from record_support import rec
from turn_support import role_of, split_extraction

from ipymemory import MemoryStore
from ipymemory.notebook import get_session, last_turn
from ipymemory.notebook.output import TurnOutput
from ipymemory.views import MIME_TYPE, BatchReview, MessageView
from ipymemory.views.pending import PendingView

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
GATE_SECONDS = 30.0  # only reached when the code under test is wrong (it waited)


class Publisher(CapturingDisplayPublisher):
    """Keeps every output and update (from any thread) and signals the first output
    whose text starts with ``watch_for``."""

    def __init__(self) -> None:
        super().__init__()
        self.watch_for = "\0"
        self.seen = threading.Event()
        self.fail_on: str | None = None  # the first output holding this text raises
        self.failed = 0

    def publish(self, data: Any, metadata: Any = None, *a: Any, **kw: Any) -> None:
        if self.fail_on is not None and self.fail_on in str(data.get("text/plain", "")):
            self.fail_on = None
            self.failed += 1
            raise RuntimeError("the display channel broke")
        super().publish(data, metadata, *a, **kw)
        if str(data.get("text/plain", "")).startswith(self.watch_for):
            self.seen.set()

    def ids(self, start: int = 0, end: int | None = None) -> list[str]:
        """Display ids of the outputs created (not updated) in outputs[start:end]."""
        return [
            o["transient"]["display_id"]
            for o in self.outputs[start:end]
            if o["transient"] and not o["update"]
        ]


@pytest.fixture
def pub(ip: InteractiveShell) -> Iterator[Publisher]:
    saved = ip.display_pub
    ip.display_pub = publisher = Publisher()
    try:
        yield publisher
    finally:
        ip.display_pub = saved


class Gate:
    """The extractor's reply waits until the test opens the gate."""

    def __init__(self, srv: MessagesServer, *replies: Scripted) -> None:
        self.open = threading.Event()
        self.replies = list(replies)
        self.srv = srv
        self.since = len(srv.requests)  # earlier requests are not the gate's
        srv.responder = self._respond

    def _respond(self, body: dict[str, Any]) -> Scripted:
        assert role_of(body) == "extractor", role_of(body)
        self.open.wait(GATE_SECONDS)
        return self.replies.pop(0)

    def extractor_done(self) -> bool:
        return any(
            role_of(self.srv.requests[i]) == "extractor"
            for i in dict(self.srv.finished)
            if i >= self.since
        )


@pytest.fixture
def api(ip: InteractiveShell, messages_server: MessagesServer, monkeypatch: Any) -> MessagesServer:
    use_api(ip, messages_server.base_url, monkeypatch)
    ip.run_line_magic("config", "IPyMemory.background_memory = True")
    return messages_server


def _after(event: threading.Event, action: Any) -> threading.Thread:
    """Run ``action`` on a helper thread once ``event`` is set."""

    def run() -> None:
        if event.wait(GATE_SECONDS):
            action()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


BOLD = rec("likes-bold", description="likes bold answers", type="user")


def test_the_cell_ends_first_a_command_waits_and_the_review_lands_in_the_turn(
    ip: InteractiveShell, api: MessagesServer, pub: Publisher, workspace: str
) -> None:
    api.enqueue(text("Use **tabs**."))
    gate = Gate(api, text(items_json(BOLD)))
    result = ip.run_cell("%%agent\nI like bold answers. How should I indent?")
    # The cell is over and its answer shown, while the extractor's reply is still held.
    assert result.error_in_exec is None and result.result is None
    assert not gate.extractor_done()
    ended = len(pub.outputs)
    turn_outputs = pub.ids(0, ended)
    assert any(o["data"].get("text/markdown") == "Use **tabs**." for o in pub.outputs[:ended])
    assert any("Memories injected" in str(o["data"].get("text/plain")) for o in pub.outputs[:ended])

    # %memory waits for the memory work, says so, and runs once it is done.
    pub.watch_for = "⏳ waiting for the memory work of"
    opener = _after(pub.seen, gate.open.set)
    pending = ip.run_line_magic("memory", "pending")
    opener.join()
    assert isinstance(pending, PendingView)
    assert [b["names"] for b in pending.to_json()["batches"]] == [["likes-bold"]]
    waited = [i for i, o in enumerate(pub.outputs) if not o["update"] and i >= ended]
    assert str(pub.outputs[waited[0]]["data"]["text/plain"]).startswith("⏳ waiting")

    # The review arrived in an output the agent cell created (not in the waiting cell).
    reviews = [
        o
        for o in pub.outputs[ended:]
        if o["update"] and WIDGET_VIEW in o["data"] and o["data"][MIME_TYPE]["view"] == "batch"
    ]
    assert reviews and {o["transient"]["display_id"] for o in reviews} <= set(turn_outputs)
    slot = reviews[0]["transient"]["display_id"]
    summaries = [
        o["data"]["text/plain"]
        for o in pub.outputs[ended:]
        if o["update"] and str(o["data"].get("text/plain", "")).startswith("✓ answered in")
    ]
    assert summaries and " · memory in " in summaries[-1]

    # Deciding in that widget replaces the same output with the outcome.
    turn = last_turn()
    assert turn is not None and isinstance(turn.review, BatchReview)
    turn.review.commit_button.click()
    assert [r.name for r in MemoryStore(workspace).records()] == ["likes-bold"]
    last = [o for o in pub.outputs if o["transient"] and o["transient"]["display_id"] == slot]
    assert last[-1]["data"][MIME_TYPE]["status"] == "committed"


def test_interrupting_the_wait_stops_the_memory_work_and_the_next_turn_reads_it_again(
    ip: InteractiveShell, api: MessagesServer, pub: Publisher, workspace: str
) -> None:
    MemoryStore(workspace).extend([rec("old-note")])
    before = sorted(p.name for p in Path(workspace, ".memory").rglob("*"))
    api.enqueue(text("Noted."))
    gate = Gate(api, text(items_json(BOLD)))
    ip.run_cell("%%agent\nI like bold answers.")
    main = threading.main_thread().ident
    assert main is not None
    pub.watch_for = "⏳ waiting for the memory work of"
    interrupter = _after(pub.seen, lambda: signal.pthread_kill(main, signal.SIGINT))
    stopping = threading.Event()
    opener = _after(stopping, gate.open.set)  # the reply arrives once the stop was asked

    def watch_stop(data: Any) -> None:
        if str(data.get("text/plain", "")).startswith("■ stopping"):
            stopping.set()

    publish = pub.publish
    pub.publish = lambda data, *a, **kw: (publish(data, *a, **kw), watch_stop(data))  # type: ignore[method-assign]
    with ctrl_c_raises():
        stopped = ip.run_line_magic("memory", "pending")
    interrupter.join()
    opener.join()
    assert isinstance(stopped, MessageView) and stopped.kind == "interrupted"
    assert "nothing partial was written" in stopped.to_text()
    # The turn's own cell says its memory work was interrupted; nothing was kept.
    notices = [o["data"] for o in pub.outputs if o["update"] and MIME_TYPE in o["data"]]
    assert any(n[MIME_TYPE].get("kind") == "interrupted" for n in notices)
    session = get_session()
    assert session.pending == ()
    assert sorted(p.name for p in Path(workspace, ".memory").rglob("*")) == before
    # The extraction cursor did not move: the next turn's extractor reads that turn.
    api.responder = None
    api.enqueue(text("Sure."), text("[]"))
    ip.run_line_magic("config", "IPyMemory.background_memory = False")
    ip.run_cell("%%agent\nAnd dark mode too.")
    extract = [r for r in api.requests if role_of(r) == "extractor"][-1]
    assert "I like bold answers." in json.dumps(extract["messages"])
    assert "And dark mode too." in json.dumps(extract["messages"])


def test_an_error_in_the_worker_is_shown_in_the_turn_and_kept_in_last_error(
    ip: InteractiveShell, api: MessagesServer, pub: Publisher, workspace: str
) -> None:
    # The worker's first progress update fails (a display channel that broke): the
    # exception escapes the session's memory work, on the worker, after the cell ended.
    pub.fail_on = "extracting memories"
    api.enqueue(text("Noted."), text(items_json(BOLD)))
    result = ip.run_cell("%%agent\nI like bold answers.")
    assert result.error_in_exec is None  # the cell itself ended with its answer
    ip.run_line_magic("memory", "status")
    assert pub.failed == 1
    ended = next(i for i, o in enumerate(pub.outputs) if "Memories injected" in str(o["data"]))
    turn_outputs = pub.ids(0, ended + 4)  # up to the three memory outputs under it
    session = get_session()
    assert session.last_error == "Memory work failed"
    assert session.last_error_cause == "RuntimeError: the display channel broke"
    errors = [
        o
        for o in pub.outputs[ended:]
        if o["update"] and o["data"].get(MIME_TYPE, {}).get("view") == "error"
    ]
    assert errors and {o["transient"]["display_id"] for o in errors} <= set(turn_outputs)
    shown = errors[-1]["data"][MIME_TYPE]
    assert shown["outcome"] == "Memory work failed" and "display channel" in shown["error"]
    failed = [o for o in pub.outputs if str(o["data"].get("text/plain")).startswith("✗ failed")]
    assert failed  # the turn's progress line says so
    assert session.pending == ()  # nothing was kept from the broken memory work


def test_a_terminal_shell_runs_the_memory_work_in_the_cell_unless_set(
    ip: InteractiveShell, messages_server: MessagesServer, monkeypatch: Any
) -> None:
    use_api(ip, messages_server.base_url, monkeypatch)  # no background_memory setting
    messages_server.enqueue(text("Noted."), text(items_json(BOLD)))
    result = ip.run_cell("%%agent\nI like bold answers.")
    # No kernel here: the cell ended after its extractor's reply, with the whole turn.
    assert [role_of(r) for r in messages_server.requests] == ["main", "extractor"]
    assert 1 in messages_server.finished
    assert isinstance(result.result, TurnOutput) and result.result.review is not None
    # The environment turns it on, as for every setting.
    monkeypatch.setenv("IPYMEMORY_BACKGROUND_MEMORY", "1")
    messages_server.enqueue(text("Sure."))
    gate = Gate(messages_server, text("[]"))
    assert ip.run_cell("%%agent\nAnd dark mode.").result is None
    assert not gate.extractor_done()
    gate.open.set()
    assert get_session().pending != ()


class RoleGate:
    """Requests of role ``role`` wait until the test opens the gate (and signal that
    one arrived); every other role is answered from ``replies`` by role."""

    def __init__(self, srv: MessagesServer, role: str, replies: dict[str, list[Scripted]]) -> None:
        self.role = role
        self.open = threading.Event()
        self.arrived = threading.Event()
        self.replies = replies
        srv.responder = self._respond

    def _respond(self, body: dict[str, Any]) -> Scripted:
        role = role_of(body)
        if role == self.role:
            self.arrived.set()
            self.open.wait(GATE_SECONDS)
        return self.replies[role].pop(0)


@pytest.mark.parametrize(
    ("mode", "where"), [("review", "worker"), ("auto", "worker"), ("review", "cell")]
)
def test_a_ctrl_c_in_the_consolidator_call_loses_nothing_of_the_turn(
    ip: InteractiveShell, api: MessagesServer, pub: Publisher, workspace: str, mode: str, where: str
) -> None:
    """Issue 28 item 4: a Ctrl-C while the memory work waits for the consolidator --
    in the worker (a command waiting for it) or in the cell. The turn's items are
    neither committed nor pending, so the cursor stays: the next turn's extraction
    reads that turn as new again, after the NEW mark (not as ALREADY PROCESSED)."""
    MemoryStore(workspace).extend([rec(f"old-note-{i}") for i in range(9)])
    ip.run_line_magic("config", "IPyMemory.consolidate_every = 1")
    ip.run_line_magic("config", f"IPyMemory.commit_mode = {mode!r}")
    plan = json.dumps({"source_names": [], "records": []})
    gate = RoleGate(
        api,
        "consolidator",
        {
            "main": [text("Hello."), text("Noted."), text("Sure.")],
            "selector": [text('["old-note-0"]')] * 3,
            "extractor": [text("[]"), text(items_json(BOLD)), text("[]")],
            "consolidator": [text(plan), text(plan)],
            "checker": [text("[]")] * 3,
        },
    )
    ip.run_line_magic("config", "IPyMemory.background_memory = False")
    ip.run_cell("%%agent\nHi there.")  # extracted (nothing found): the cursor is past it
    main = threading.main_thread().ident
    assert main is not None
    interrupter = _after(gate.arrived, lambda: signal.pthread_kill(main, signal.SIGINT))
    if where == "cell":
        with ctrl_c_raises():
            ip.run_cell("%%agent\nI like bold answers.")
        gate.open.set()
    else:
        ip.run_line_magic("config", "IPyMemory.background_memory = True")
        ip.run_cell("%%agent\nI like bold answers.")
        pub.watch_for = "■ stopping"
        opener = _after(pub.seen, gate.open.set)  # the reply arrives once the stop was asked
        with ctrl_c_raises():
            stopped = ip.run_line_magic("memory", "pending")
        opener.join()
        assert isinstance(stopped, MessageView) and stopped.kind == "interrupted"
    interrupter.join()
    assert get_session().pending == ()
    assert [r.name for r in MemoryStore(workspace).records()][-1] == "old-note-8"
    ip.run_line_magic("config", "IPyMemory.background_memory = False")
    ip.run_cell("%%agent\nAnd dark mode too.")
    extract = [r for r in api.requests if role_of(r) == "extractor"][-1]
    _processed, new = split_extraction(extract)
    assert "I like bold answers." in new and "I like bold answers." not in _processed
    assert "Hi there." in _processed


def test_the_memory_work_fills_one_output_never_left_empty(
    ip: InteractiveShell, api: MessagesServer, pub: Publisher, workspace: str
) -> None:
    """Issue 43: the cell makes ONE output for what the memory work shows (it used to
    make four, saved empty by a headless run), and fills it even when there is nothing
    to keep."""
    for extracted, question in (("[]", "How should I indent?"), (items_json(BOLD), "Bold.")):
        start = len(pub.outputs)
        api.enqueue(text("Use tabs."))
        gate = Gate(api, text(extracted))
        gate.open.set()
        ip.run_cell(f"%%agent\n{question}")
        ended = len(pub.outputs)
        ip.run_line_magic("memory", "status")  # waits for the memory work first
        shown = next(
            i for i in range(start, len(pub.outputs)) if "Memories used" in str(pub.outputs[i])
        )
        # The outputs the cell created after "memories used": the one slot.
        [slot] = pub.ids(shown + 1, ended)
        filled = [
            o["data"]
            for o in pub.outputs[shown:]
            if o["update"] and o["transient"]["display_id"] == slot
        ]
        assert filled and filled[-1].get("text/plain"), filled
        if extracted == "[]":
            assert filled[-1]["text/plain"] == "Memory: nothing new to keep from this turn."
        else:
            assert filled[-1][MIME_TYPE]["view"] == "batch"
        api.responder = None
