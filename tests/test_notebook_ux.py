"""Issue 14 #5, #7, #8 in a real InteractiveShell: status with every setting and its
origin, the list's short id, the one line of %load_ext, conversation control, and the
notebook context of a prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from notebook_support import memory, use_api
from record_support import rec

from ipymemory import MemoryStore
from ipymemory.config import Settings
from ipymemory.views import MIME_TYPE, ManifestView, StatusView

# --- #5 ------------------------------------------------------------------------------


def test_status_lists_every_setting_with_where_it_came_from(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IPYMEMORY_MAX_SELECTED", "3")
    monkeypatch.setenv("IPYMEMORY_BASE_URL", "https://bob:hunter2-Very-Secret-9x@example.com/v1")
    ip.run_line_magic("config", "IPyMemory.commit_mode = 'auto'")
    view = memory(ip, "status")
    assert isinstance(view, StatusView)
    rows = {name: (value, origin) for name, value, origin in view.settings}
    # every setting is there, none forgotten
    assert set(rows) == {f for f in Settings.__dataclass_fields__ if f != "origin"}
    assert rows["commit_mode"] == ("auto", "%config")
    assert rows["max_selected"] == ("3", "env IPYMEMORY_MAX_SELECTED")
    assert rows["pending_expiry_days"] == ("7", "default")
    assert "hunter2-Very-Secret-9x" not in rows["base_url"][0]  # a password is redacted
    text = view.to_text()
    assert "Setting" in text and "From" in text and "env IPYMEMORY_MAX_SELECTED" in text
    data = view._repr_mimebundle_()[MIME_TYPE]
    assert {"name": "commit_mode", "value": "auto", "origin": "%config"} in data["settings"]
    assert "hunter2-Very-Secret-9x" not in view._repr_mimebundle_()["text/html"]


def test_list_shows_a_short_id_and_the_full_file_name_on_hover(
    ip: InteractiveShell, workspace: str
) -> None:
    [entry] = MemoryStore(workspace).extend([rec("uses-tabs")])
    view = memory(ip, "list")
    assert isinstance(view, ManifestView)
    short = entry.file.removeprefix("uses-tabs-")[:8]
    text = view.to_text()
    assert short in text and entry.file not in text
    html = view.to_html()
    assert f'title="{entry.file}"' in html and f">{short}<" in html
    row = view.to_json()["records"][0]
    assert (row["file"], row["id"]) == (entry.file, short)
    assert entry.file in memory(ip, "show uses-tabs").to_text()  # the full name in show


def test_load_ext_prints_one_line(workspace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workspace)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    MemoryStore(workspace).extend([rec("a"), rec("b")])
    shell = InteractiveShell.instance()
    shell.config.pop("IPyMemory", None)
    try:
        with capture_output() as out:
            shell.run_line_magic("load_ext", "ipymemory")
        lines = out.stdout.strip().splitlines()
        assert len(lines) == 1
        assert str(Path(workspace) / ".memory") in lines[0] and "2 records" in lines[0]
        assert "no model (set ANTHROPIC_API_KEY)" in lines[0]
    finally:
        shell.run_line_magic("unload_ext", "ipymemory")


def test_load_ext_counts_the_user_wide_records_turns_inject_too(
    workspace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 44: the banner said "2 records" while turns also injected the user's own."""
    monkeypatch.chdir(workspace)
    user_dir = tmp_path / "user-home"
    user_dir.mkdir()
    monkeypatch.setenv("IPYMEMORY_USER_DIR", str(user_dir))
    MemoryStore(workspace).extend([rec("a"), rec("b")])
    MemoryStore(user_dir).extend(
        [
            rec("prefers-tabs", type="user"),
            rec("writes-german", type="user"),
            rec("short", type="user"),
        ]
    )
    shell = InteractiveShell.instance()
    shell.config.pop("IPyMemory", None)
    try:
        with capture_output() as out:
            shell.run_line_magic("load_ext", "ipymemory")
        [line] = out.stdout.strip().splitlines()
        assert "2 records + 3 user-wide" in line
    finally:
        shell.run_line_magic("unload_ext", "ipymemory")


# --- #7 ------------------------------------------------------------------------------


def test_agent_new_starts_a_fresh_conversation_and_session_reports_it(
    ip: InteractiveShell, workspace: str
) -> None:
    from ipymemory import ScriptedModel
    from ipymemory.notebook import get_session, use_model
    from ipymemory.views.conversation import ConversationView

    MemoryStore(workspace).extend([rec("kept-fact")])
    use_model(ScriptedModel(["[]", "First.", "[]", "[]", "Second.", "[]", "[]", "Third.", "[]"]))
    ip.run_cell_magic("agent", "--commit off", "one")
    ip.run_cell_magic("agent", "--commit off", "two")
    session = get_session()
    assert len(session.history) == 4  # two turns: question and answer each
    view = memory(ip, "session")
    assert isinstance(view, ConversationView)
    assert (view.turns, view.messages) == (2, 4)
    ip.run_cell_magic("agent", "--new --commit off", "three")
    assert [m["role"] for m in session.history] == ["user", "assistant"]  # only "three"
    assert "three" in str(session.history[0]["content"])
    assert [r.name for r in MemoryStore(workspace).records()] == ["kept-fact"]  # memory stays
    view = memory(ip, "session")
    assert (view.turns, view.messages) == (3, 2)
    assert "Turns" in view.to_text() and view.to_json()["turns"] == 3


def test_session_reports_tokens_and_cost_from_the_api(
    ip: InteractiveShell, messages_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from messages_server import text

    use_api(ip, messages_server.base_url, monkeypatch)
    messages_server.enqueue(text("Hello."))
    ip.run_cell_magic("agent", "--commit off", "hi")
    view = memory(ip, "session")
    data = view.to_json()
    assert data["turns"] == 1 and data["main"]["input_tokens"] > 0
    assert data["estimated_cost_usd"] is not None and data["estimated_cost_usd"] > 0
    assert "$" in view.to_text()


# --- #8 ------------------------------------------------------------------------------


def _agent_prompt(ip: InteractiveShell, line: str, cell: str, answer: str = "Ok.") -> str:
    """Run %%agent with a scripted model; the user message the model received."""
    from ipymemory import ScriptedModel
    from ipymemory.notebook import get_session, use_model

    use_model(ScriptedModel([answer]))
    ip.run_cell_magic("agent", f"--commit off --new {line}", cell)
    first = get_session().history[0]["content"]
    return first if isinstance(first, str) else " ".join(b.get("text", "") for b in first)


def test_prompt_interpolates_names_cells_and_the_last_error(ip: InteractiveShell) -> None:
    ip.run_cell("rows = 1234\nlabel = 'sales'", store_history=True)
    ip.run_cell("rows * 2", store_history=True)
    count = ip.execution_count - 1
    prompt = _agent_prompt(
        ip,
        "",
        f"{{label}} has {{rows}} rows; {{In[{count}]}} = {{Out[{count}]}}; {{undefined}} stays",
    )
    assert "sales has 1234 rows" in prompt
    assert "rows * 2 = 2468" in prompt
    assert "{undefined} stays" in prompt
    ip.run_cell("1 / 0")
    prompt = _agent_prompt(ip, "", "why: {Err}")
    assert "ZeroDivisionError" in prompt and "Traceback" in prompt


def test_raw_sends_the_cell_as_written_and_bad_references_are_usage_errors(
    ip: InteractiveShell,
) -> None:
    from IPython.core.error import UsageError

    ip.run_cell("rows = 1234")
    assert "{rows}" in _agent_prompt(ip, "--raw", "keep {rows} and {In[999]}")
    with pytest.raises(UsageError, match=r"cell 999 has no input"):
        ip.run_cell_magic("agent", "", "see {In[999]}")
    with pytest.raises(UsageError, match=r"cell 999 has no output"):
        ip.run_cell_magic("agent", "", "see {Out[999]}")


def test_format_code_puts_the_code_into_a_new_cell_not_run(ip: InteractiveShell) -> None:
    received: list[tuple[str, bool]] = []
    ip.set_next_input = lambda text, replace=False: received.append((text, replace))  # type: ignore[method-assign]
    try:
        answer = "Here:\n```python\nimport math\nprint(math.pi)\n```\nDone."
        prompt = _agent_prompt(ip, "--format code", "print pi", answer=answer)
    finally:
        del ip.set_next_input
    assert "Answer with Python code only" in prompt
    assert received == [("import math\nprint(math.pi)", False)]
    assert "math" not in ip.user_ns  # not run
