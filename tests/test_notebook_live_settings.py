"""Issue 18's notebook items, through a real InteractiveShell: every setting a running
session reads follows ``%config``; ``%memory commit --batch ID`` takes a batch an
earlier kernel saved; ``%memory pending`` shows when this kernel's batches were saved;
a ``%memory`` query may end with ``?``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from messages_server import MessagesServer, Scripted, text
from notebook_support import memory, use_api
from record_support import rec
from test_config import SAMPLES
from turn_support import requests_of, role_of, selector_input

from ipymemory import AgentSession, MemoryStore, ScriptedModel
from ipymemory.config import SETTINGS, IPyMemory
from ipymemory.notebook import get_session, use_model
from ipymemory.notebook.output import TurnOutput
from ipymemory.views import MIME_TYPE, BatchReview, MessageView


def _config(name: str) -> Callable[[AgentSession], object]:
    return lambda session: getattr(session.config, name)


# How a running session reads each setting. Reading the session's own objects (not the
# settings it was given) is the point: a value copied once at start would not follow.
LIVE: dict[str, Callable[[AgentSession], object]] = {
    "model": lambda s: (s.config.model, getattr(s.model, "model", None)),
    "side_model": lambda s: (s.config.side_model, getattr(s.model, "side_model", None)),
    "max_tokens": lambda s: (s.config.max_tokens, getattr(s.model, "max_tokens", None)),
    "timeout": lambda s: getattr(s.model, "timeout", None),
    "max_retries": lambda s: getattr(s.model, "max_retries", None),
    "base_url": lambda s: str(s.model._client.base_url).rstrip("/"),  # type: ignore[attr-defined]
    "commit_mode": _config("commit_mode"),
    "consolidate_threshold": _config("consolidate_threshold"),
    "consolidate_every": _config("consolidate_every"),
    "max_selected": _config("max_selected"),
    "memory_budget": _config("memory_budget"),
    "selector": _config("selector"),
    "select_candidates": _config("select_candidates"),
    "max_tool_steps": _config("max_tool_steps"),
    "python_timeout": _config("python_timeout"),
    "allow_hidden": _config("allow_hidden"),
    "follow_check": _config("follow_check"),
    "mark_missed": _config("mark_missed"),
    # The bug of issue 18: the request history kept the budget it was built with.
    "history_token_budget": lambda s: (
        s.config.history_token_budget,
        s._request_history.budget,
    ),
    "lock_timeout": lambda s: s.store.lock_timeout,
    "pending_expiry_days": lambda s: s.pending_files.expiry_days,
    # (the user scope's store, built from the setting when used)
    "user_dir": lambda s: None if s.user_store is None else s.user_store.workspace.name,
}
# Read where they are used, never kept by a session: which directory's session a cell
# gets, gc's retention (resolved by each `%memory gc`), and whether an `%%agent` cell's
# memory work runs after it (resolved by each cell).
PER_COMMAND = {
    "directory",
    "jupyter_mcp_tools",  # read when the Jupyter server starts
    "history_retention_days",
    "history_retention_bytes",
    "background_memory",
    "memory_store",  # each `%memory sync` resolves them (SPEC §14)
    "memory_store_prefix",
}

TWICE = {"model", "side_model", "max_tokens", "history_token_budget"}


def test_every_setting_is_live_or_read_per_command() -> None:
    """A new setting must say how a running session follows it."""
    assert set(IPyMemory.class_traits(config=True)) == set(LIVE) | PER_COMMAND
    # The table's readers say the same: only a command or the notebook reads these.
    per_command = {n for n, s in SETTINGS.items() if s.readers <= {"command", "notebook"}}
    assert per_command == PER_COMMAND


@pytest.mark.parametrize("name", sorted(LIVE))
def test_a_config_change_reaches_the_running_session(
    name: str, ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")  # a real SDK client is built
    memory(ip, "status")
    session = get_session()

    def expected(value: object) -> object:
        return (value, value) if name in TWICE else value

    # A sample value that differs from the one the session runs with now.
    value = next(v for v in SAMPLES[name][2:] if LIVE[name](session) != expected(v))
    ip.run_line_magic("config", f"IPyMemory.{name} = {value!r}")
    shown = memory(ip, "status").to_text()
    assert re.search(rf"^{name} .*%config$", shown, re.MULTILINE), shown
    assert get_session() is session  # the same live session, not a new one
    assert LIVE[name](session) == expected(value)


def _compressed_turn(
    ip: InteractiveShell,
    messages_server: MessagesServer,
    monkeypatch: pytest.MonkeyPatch,
    summary: str,
    topic: str,
    query: str,
) -> tuple[Any, dict[str, Any]]:
    """Three %%agent turns about ``topic``, then a budget of 200 tokens and ``query``:
    the cell's output and the main request that compressed the history."""
    use_api(ip, messages_server.base_url, monkeypatch)
    ip.run_line_magic("config", "IPyMemory.commit_mode = 'off'")

    def respond(body: dict[str, Any]) -> Scripted:
        if role_of(body) == "summarizer":
            return text(summary)
        return text(f"A long answer about {topic}. " * 20)

    messages_server.responder = respond
    for i in range(3):
        ip.run_cell_magic("agent", "--no-memory", f"question {i} about {topic}")
    assert requests_of(messages_server.requests, "summarizer") == []
    ip.run_line_magic("config", "IPyMemory.history_token_budget = 200")
    out = ip.run_cell_magic("agent", "--no-memory", query)
    assert len(requests_of(messages_server.requests, "summarizer")) == 1
    return out, requests_of(messages_server.requests, "main")[-1]


def test_a_smaller_history_budget_compresses_the_next_turn(
    ip: InteractiveShell, messages_server: MessagesServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, last = _compressed_turn(
        ip,
        messages_server,
        monkeypatch,
        "Earlier: the user asked about the weather three times.",
        "the weather",
        "question 3 about the weather",
    )
    assert isinstance(out, TurnOutput)
    sent = json.dumps(last["messages"])
    assert "question 0" not in sent and "the user asked about the weather" in sent


def test_a_query_may_end_with_a_question_mark(ip: InteractiveShell, workspace: str) -> None:
    MemoryStore(workspace).extend(
        [
            rec("slides-style", "how the user builds slides", "Use reveal.js for slides."),
            *(rec(f"other-{i}") for i in range(5)),  # more than fit: the selector is asked
        ]
    )
    ip.run_line_magic("config", "IPyMemory.selector = 'model'")  # the side model's pick too
    use_model(ScriptedModel(selector=['["slides-style"]']))
    model = get_session().model
    assert isinstance(model, ScriptedModel)
    got = ip.run_cell("%memory select --limit 1 which tool for my slides?")
    assert got.error_in_exec is None and got.error_before_exec is None
    data = got.result._repr_mimebundle_()[MIME_TYPE]
    assert data["query"] == "which tool for my slides?" and data["source"] == "model"
    assert [r["name"] for r in data["records"]] == ["slides-style"]
    # The query reached the selector verbatim, "?" included.
    assert selector_input(model.requests[-1])["query"] == "which tool for my slides?"
    # `%memory?` alone is still IPython's help on the magic; a %%agent body is its text.
    shown = ip.run_cell("%memory?")
    assert shown.error_in_exec is None and shown.result is None
    agent_cell = ip.transform_cell("%%agent\n%memory select which?\n")
    assert agent_cell.startswith("get_ipython().run_cell_magic('agent', ''")
    assert "run_line_magic" not in agent_cell


def test_a_question_mark_line_that_is_not_a_query_is_left_to_ipython(
    ip: InteractiveShell,
) -> None:
    assert ip.transform_cell("x = 1\n") == "x = 1\n"
    assert "pinfo" in ip.transform_cell("len?\n")
    # A subcommand that takes no query: the magic says what is wrong.
    got = ip.run_cell("%memory show slides?")
    assert got.error_in_exec is not None and "slides?" in str(got.error_in_exec)
    assert isinstance(memory(ip, "help select"), MessageView)


def test_consolidate_with_nothing_to_merge_is_shown_and_journalled(
    ip: InteractiveShell, workspace: str
) -> None:
    store = MemoryStore(workspace)
    store.extend([rec("x-note"), rec("y-note")])
    use_model(ScriptedModel(['{"source_names": [], "records": []}']))
    review = memory(ip, "consolidate")
    assert isinstance(review, BatchReview)
    text_view = review.static_view().to_text()
    assert "nothing to merge" in text_view.lower()
    review.commit_button.click()
    assert review.status == "committed"
    entry = store.history()[0]
    assert entry.op == "consolidate" and entry.before == entry.after and entry.consolidates
    assert [r.name for r in store.records()] == ["x-note", "y-note"]
    assert "(nothing to merge)" in memory(ip, "history").static_view().to_text()


def test_the_compressed_history_says_where_the_summary_ends_and_the_user_begins(
    ip: InteractiveShell, messages_server: MessagesServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 44: "…<summary>\\nUpdate: the board moved…" ran together. The summary is its
    own block, closed, with a line saying the user's message follows, then the user's
    words in a block of their own."""
    _, last = _compressed_turn(
        ip,
        messages_server,
        monkeypatch,
        "The user is preparing the board deck for Thursday.",
        "the deck",
        "Update: the board moved to Friday.",
    )
    first = last["messages"][0]
    assert first["role"] == "user"
    summary, *rest = first["content"]
    assert summary["text"].startswith("<session_summary>\n")
    assert "The user is preparing the board deck for Thursday." in summary["text"]
    assert summary["text"].endswith(
        "</session_summary>\nThe summary ends here. The user's new message follows."
    )
    assert [b["text"] for b in rest if b.get("type") == "text"] == [
        "Update: the board moved to Friday."
    ]
