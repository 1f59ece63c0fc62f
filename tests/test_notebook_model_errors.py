"""Issue 43 item 8: a failed model call says what to check, and a turn with no key
says so at once. Through ``%%agent`` in a real InteractiveShell, the real SDK against
the local Messages API (``tests/messages_server.py``) answering 401 and 404."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from messages_server import MessagesServer, error, text
from notebook_support import loaded_shell, memory, use_api
from record_support import rec

from ipymemory import MemoryStore
from ipymemory.views import ErrorView


@pytest.fixture
def ip(workspace: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.chdir(workspace)
    with loaded_shell() as shell:
        shell.run_line_magic("config", "IPyMemory.follow_check = False")
        yield shell


def _agent(ip: InteractiveShell, cell: str) -> tuple[Any, str]:
    """Run the cell as a person does; what it returned, and everything it showed."""
    with capture_output() as captured:
        view = ip.run_cell(f"%%agent\n{cell}").result
    texts = [o.data.get("text/plain", "") for o in captured.outputs]
    return view, "\n".join([captured.stdout, *texts])


def test_no_key_is_said_at_once(ip: InteractiveShell, workspace: str) -> None:
    MemoryStore(workspace).extend([rec(f"note-{i}") for i in range(8)])
    view, shown = _agent(ip, "How should I indent?")
    assert isinstance(view, ErrorView)
    text_ = view.to_text()
    assert "no model configured" in text_ and "ANTHROPIC_API_KEY" in text_
    # Nothing walked through selecting memories or waiting for a model first.
    assert "selecting memories" not in shown and "waiting for the model" not in shown
    status = memory(ip, "status")
    assert status.to_json()["last_error"] == "The agent turn failed"


@pytest.mark.parametrize(
    ("status", "says"),
    [
        (401, "check ANTHROPIC_API_KEY"),
        (403, "permissions of ANTHROPIC_API_KEY"),
        (404, "%config IPyMemory.model"),
    ],
)
def test_a_refused_call_names_what_to_check(
    ip: InteractiveShell,
    messages_server: MessagesServer,
    monkeypatch: pytest.MonkeyPatch,
    status: int,
    says: str,
) -> None:
    use_api(ip, messages_server.base_url, monkeypatch)
    ip.run_line_magic("config", "IPyMemory.model = 'claude-nope-1'")
    messages_server.enqueue(error(status, "not allowed", "authentication_error"))
    view, _ = _agent(ip, "How should I indent?")
    assert isinstance(view, ErrorView)
    assert f"HTTP {status}" in view.to_text() and says in view.to_text()
    if status == 404:
        assert "'claude-nope-1'" in view.to_text()


def test_a_refused_memory_call_names_the_side_model(
    ip: InteractiveShell, messages_server: MessagesServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer came; the extractor's model is unknown: the memory error says which
    setting to change."""
    use_api(ip, messages_server.base_url, monkeypatch)
    ip.run_line_magic("config", "IPyMemory.side_model = 'claude-gone-0'")
    messages_server.enqueue(text("Tabs."), error(404, "model: claude-gone-0", "not_found_error"))
    _, shown = _agent(ip, "I like tabs.")
    assert "Memory extraction failed" in shown
    assert "memory: 'claude-gone-0'" in shown and "IPyMemory.side_model" in shown
