"""The magics in a real IPython InteractiveShell: %%agent, every %memory subcommand,
every UsageError, %config resolution, load/unload."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from messages_server import MessagesServer, error, text, tool_use
from notebook_support import ctrl_c_raises, items_json, memory
from record_support import rec
from turn_support import memory_text

import ipymemory
from ipymemory import MemoryRecord, MemoryStore, ScriptedModel
from ipymemory.notebook import get_session, use_model
from ipymemory.notebook.output import TurnOutput
from ipymemory.views import (
    MIME_TYPE,
    BatchReview,
    BatchView,
    CheckView,
    ErrorView,
    ManifestView,
    ManifestWidget,
    MessageView,
    RecordView,
    ScopedWidget,
    SelectionWidget,
    StatusView,
)


@pytest.fixture
def ip(workspace: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.chdir(workspace)
    shell = InteractiveShell.instance()
    # %config writes into the shell's config (it outlives a reload): start clean.
    shell.config.pop("IPyMemory", None)
    shell.run_line_magic("load_ext", "ipymemory")
    try:
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "ipymemory")
        shell.config.pop("IPyMemory", None)


@pytest.fixture
def api(
    ip: InteractiveShell, messages_server: MessagesServer, monkeypatch: pytest.MonkeyPatch
) -> MessagesServer:
    """The real SDK against the scripted server, configured the way a user would."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.base_url)
    ip.run_line_magic("config", "IPyMemory.max_retries = 0")
    return messages_server


SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def agent(ip: InteractiveShell, line: str, cell: str) -> Any:
    return ip.run_cell_magic("agent", line, cell)


def names(workspace: str | Path) -> list[str]:
    return [r.name for r in MemoryStore(workspace).records()]


# More records than max_selected (5) beside the ones a test is about: the selector has
# a choice to make (a set that fits is injected whole without one, SPEC §12).
FILLERS = tuple(rec(f"filler-{i}", description=f"unrelated note {i}") for i in range(5))


def seed(workspace: str | Path, *records: MemoryRecord) -> MemoryStore:
    store = MemoryStore(workspace)
    store.extend(records)
    return store


# --- loading -------------------------------------------------------------------------


def test_load_is_idempotent_and_unload_cleans_up(ip: InteractiveShell) -> None:
    mine = [c for c in ip.configurables if type(c).__module__.startswith("ipymemory")]
    assert len(mine) == 2  # the IPyMemory config and the magics
    ip.run_line_magic("load_ext", "ipymemory")
    ipymemory.load_ipython_extension(ip)  # direct second call: still one of each
    assert [c for c in ip.configurables if type(c).__module__.startswith("ipymemory")] == mine
    widget = memory(ip, "manifest")
    assert widget.comm is not None

    ip.run_line_magic("unload_ext", "ipymemory")
    assert "memory" not in ip.magics_manager.magics["line"]
    assert "agent" not in ip.magics_manager.magics["cell"]
    assert not [c for c in ip.configurables if type(c).__module__.startswith("ipymemory")]
    assert widget.comm is None  # closed
    with pytest.raises(RuntimeError, match="load_ext"):
        get_session()
    result = ip.run_cell("%memory list")
    assert isinstance(result.error_in_exec, UsageError)
    ip.run_line_magic("load_ext", "ipymemory")  # the fixture unloads again
    assert isinstance(memory(ip, "status"), StatusView)


# --- %memory: reading ----------------------------------------------------------------


def test_help_and_docstrings(ip: InteractiveShell) -> None:
    for view in (memory(ip, "help"), memory(ip, "")):
        assert isinstance(view, MessageView)
        for sub in (
            "list",
            "manifest",
            "show NAME",
            "select QUERY",
            "status",
            "consolidate",
            "commit",
            "discard",
            "forget NAME",
            "check",
            "help",
        ):
            assert sub in view.to_text()
    doc = ip.object_inspect("%memory")["docstring"]
    assert "select QUERY" in doc and "Examples:" in doc
    agent_doc = ip.object_inspect("%%agent")["docstring"]
    for option in ("--model", "--commit", "--python", "--no-memory", "--dir", "Examples"):
        assert option in agent_doc


def test_list_manifest_show(ip: InteractiveShell, workspace: str) -> None:
    seed(workspace, rec("prefers-tabs", description="indents with tabs", body="Tabs, not spaces."))
    listed = memory(ip, "list")
    assert isinstance(listed, ManifestView)
    data = listed._repr_mimebundle_()[MIME_TYPE]
    assert data["directory"] == str(Path(workspace, ".memory"))
    assert [r["name"] for r in data["records"]] == ["prefers-tabs"]

    widget = memory(ip, "manifest")
    assert isinstance(widget, ManifestWidget)
    assert widget.rows.titles == ("prefers-tabs (project) — indents with tabs",)

    shown = memory(ip, "show prefers-tabs")
    assert isinstance(shown, RecordView)
    assert shown.to_json()["record"]["body"] == "Tabs, not spaces."


def test_select_uses_the_fallback_without_a_model_and_says_why(
    ip: InteractiveShell, workspace: str
) -> None:
    seed(
        workspace,
        rec("prefers-tabs", description="indents with tabs"),
        rec("db-tests", description="never mock the database"),
    )
    widget = memory(ip, "select --limit 1 how should I indent with tabs?")
    assert isinstance(widget, SelectionWidget)
    data = widget._repr_mimebundle_()[MIME_TYPE]
    assert data["source"] == "fallback" and "no model configured" in data["reason"]
    assert [r["name"] for r in data["records"]] == ["prefers-tabs"]
    assert data["query"] == "how should I indent with tabs?"
    assert get_session().last_error is None  # a preview does not touch the session


@pytest.mark.parametrize(
    ("line", "query", "limit"),
    [
        ("select tabs --limit 1", "tabs", 1),
        ("select tabs  --limit=2", "tabs", 2),
        ("select --limit 1 tabs --limit 2", "tabs", 2),
        ("select what is --limit? tabs", "what is --limit? tabs", 5),
        ("select it's 'tabs' --limit 1", "it's 'tabs'", 1),
    ],
)
def test_select_takes_its_options_after_the_query_too(
    ip: InteractiveShell, workspace: str, line: str, query: str, limit: int
) -> None:
    """Issue 33 #2: the query swallowed a trailing --limit ("Query: tabs --limit 1")."""
    seed(workspace, *(rec(f"tabs-{i}", description=f"tabs rule {i}") for i in range(7)))
    data = memory(ip, line)._repr_mimebundle_()[MIME_TYPE]
    assert data["query"] == query
    assert len(data["records"]) == limit


def test_select_with_a_trailing_option_missing_its_value_says_so(ip: InteractiveShell) -> None:
    with pytest.raises(UsageError, match="--limit needs a n"):
        memory(ip, "select tabs --limit")


def test_select_with_max_selected_0_says_so(ip: InteractiveShell, workspace: str) -> None:
    """Issue 33 #8: with max_selected = 0 the selection read as "no model configured"."""
    seed(workspace, rec("tabs", description="tabs rule"))
    ip.run_line_magic("config", "IPyMemory.max_selected = 0")
    data = memory(ip, "select tabs")._repr_mimebundle_()[MIME_TYPE]
    assert (data["source"], data["records"], data["reason"]) == ("none", [], "max_selected is 0")


def test_manifest_takes_a_scope(
    ip: InteractiveShell, workspace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33 #8: `%memory manifest --scope all` was "unrecognized arguments"."""
    user = tmp_path / "me"
    user.mkdir()
    seed(workspace, rec("tabs"))
    MemoryStore(user).extend([rec("polars", type="user")])
    monkeypatch.setenv("IPYMEMORY_USER_DIR", str(user))
    widget = memory(ip, "manifest --scope all")
    assert isinstance(widget, ScopedWidget)  # each scope's widget, expandable rows
    assert [type(w) for _, w in widget.parts] == [ManifestWidget, ManifestWidget]
    both = widget._repr_mimebundle_()[MIME_TYPE]
    assert both["view"] == "scoped"
    assert [r["name"] for r in both["scopes"]["project"]["records"]] == ["tabs"]
    assert [r["name"] for r in both["scopes"]["user"]["records"]] == ["polars"]
    default = memory(ip, "manifest")._repr_mimebundle_()[MIME_TYPE]
    assert default["view"] == "scoped"  # both by default, as list
    mine = memory(ip, "manifest --scope user")
    assert isinstance(mine, ManifestWidget)
    assert [r["name"] for r in mine._repr_mimebundle_()[MIME_TYPE]["records"]] == ["polars"]


def test_select_with_the_model(api: MessagesServer, ip: InteractiveShell, workspace: str) -> None:
    seed(workspace, rec("prefers-tabs"), rec("db-tests"))
    api.enqueue(text('["db-tests"]'))
    data = memory(ip, "select --limit 1 what about tests?")._repr_mimebundle_()[MIME_TYPE]
    assert data["source"] == "model" and data["reason"] is None
    assert [r["name"] for r in data["records"]] == ["db-tests"]
    sent = json.loads(api.requests[0]["messages"][0]["content"])
    assert sent["query"] == "what about tests?" and "db-tests" in sent["catalog"]
    assert api.requests[0]["model"] == "claude-haiku-5-5"  # the side model


def test_status_reports_model_pending_and_last_error(
    api: MessagesServer, ip: InteractiveShell, workspace: str
) -> None:
    seed(workspace, rec("a"), *FILLERS)
    status = memory(ip, "status")._repr_mimebundle_()[MIME_TYPE]
    assert status["model"] and "claude-sonnet-5-5" in status["model"]
    assert status["records"] == 6 and status["pending"] == 0 and status["last_error"] is None

    # A turn whose selection fails (HTTP 500) and whose extraction proposes one item.
    api.enqueue(error(500), text("Answer."), text(items_json(rec("b"))))
    agent(ip, "", "question about a")
    status = memory(ip, "status")
    data = status._repr_mimebundle_()[MIME_TYPE]
    assert data["pending"] == 1
    assert data["last_error"] == "Memory selection failed; deterministic fallback used"
    assert "HTTP 500" in status.to_text()


def test_status_after_a_failed_turn_names_its_error(ip: InteractiveShell) -> None:
    """Issue 33 #3: "Last error none" right after a turn failed (no key)."""
    agent(ip, "", "How should I format the config loader?")
    status = memory(ip, "status")
    assert status.to_json()["last_error"] == "The agent turn failed"
    assert "last error cause: no model configured (set ANTHROPIC_API_KEY)" in status.to_text()
    # The next turn starts clean: its own errors only.
    use_model(ScriptedModel(agent=["Tabs."], extractor=["[]"]))
    agent(ip, "", "And now?")
    assert memory(ip, "status").to_json()["last_error"] is None
    use_model(None)


def test_status_without_a_key_says_not_configured(ip: InteractiveShell) -> None:
    data = memory(ip, "status")._repr_mimebundle_()[MIME_TYPE]
    assert data["model"] is None and "not configured" in memory(ip, "status").to_text()
    rows = {row["name"]: row for row in data["settings"]}
    assert rows["background_memory"] == {
        "name": "background_memory",
        "value": "on in a Jupyter kernel, else off",
        "origin": "default",
    }


def test_check(ip: InteractiveShell, workspace: str) -> None:
    seed(workspace, rec("a"))
    ok = memory(ip, "check")
    assert isinstance(ok, CheckView) and ok.ok and ok.problems == []
    Path(workspace, ".memory", "stray-0123.md").write_text("left over")
    warned = memory(ip, "check")
    assert warned.ok and warned.problems[0]["severity"] == "warning"
    assert "gc" in warned.to_text()
    Path(workspace, ".memory", "manifest.json").write_text("{broken")
    bad = memory(ip, "check").to_json()
    assert bad["view"] == "check" and bad["ok"] is False
    assert any("manifest.json" in p["file"] for p in bad["problems"])


def test_store_errors_are_views_not_tracebacks(
    ip: InteractiveShell, workspace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    seed(workspace, rec("a"))
    Path(workspace, ".memory", "manifest.json").write_text('{"version": true, "files": []}')
    listed = memory(ip, "list")
    assert isinstance(listed, ManifestView) and listed.error and "version" in listed.error
    shown = memory(ip, "show a")
    assert isinstance(shown, ErrorView) and "%memory show" in shown.to_text()
    result = ip.run_cell("%memory forget a")
    assert result.error_in_exec is None and isinstance(result.result, ErrorView)
    assert "Traceback" not in capsys.readouterr().out


# --- %memory: changing ---------------------------------------------------------------


def test_forget(ip: InteractiveShell, workspace: str) -> None:
    seed(workspace, rec("a"), rec("b"), rec("c"))
    view = memory(ip, "forget a c")
    assert isinstance(view, MessageView) and "a, c" in view.to_text()
    assert names(workspace) == ["b"]


def _pending_turn(ip: InteractiveShell, *items: MemoryRecord) -> TurnOutput:
    model = ScriptedModel(["Answer.", items_json(*items)])
    use_model(model)
    out = agent(ip, "", "remember this")
    assert isinstance(out, TurnOutput) and out.review is not None
    return out


def test_commit_with_reject_and_it_updates_the_review_widget(
    ip: InteractiveShell, workspace: str
) -> None:
    out = _pending_turn(ip, rec("a"), rec("b"), rec("c"))
    view = memory(ip, "commit --reject b c")
    assert isinstance(view, BatchView) and view.status == "committed"
    assert names(workspace) == ["a"]
    assert out.review is not None and out.review.status == "committed"
    assert out.review.commit_button.disabled and "Committed: a" in out.review.result.value
    assert isinstance(memory(ip, "commit"), MessageView)  # nothing pending any more


def test_discard_and_batch_ids(ip: InteractiveShell, workspace: str) -> None:
    first = _pending_turn(ip, rec("a"))
    second = _pending_turn(ip, rec("b"))
    assert first.result.batch is not None and second.result.batch is not None
    view = memory(ip, f"discard --batch {first.result.batch.id}")
    assert isinstance(view, BatchView) and view.status == "discarded"
    assert first.review is not None and first.review.status == "discarded"
    memory(ip, "commit")  # the latest: the second batch
    assert names(workspace) == ["b"]
    assert isinstance(memory(ip, "discard"), MessageView)


def test_consolidate_shows_the_plan_and_commit_applies_it(
    api: MessagesServer, ip: InteractiveShell, workspace: str
) -> None:
    seed(
        workspace,
        rec("tabs-py", description="tabs in python"),
        rec("tabs-js", description="tabs in js"),
        rec("other"),
    )
    merged = rec("prefers-tabs", description="tabs everywhere")
    api.enqueue(
        text(json.dumps({"source_names": ["tabs-py", "tabs-js"], "records": [merged.to_json()]}))
    )
    review = memory(ip, "consolidate")
    assert isinstance(review, BatchReview) and review.plan_decision is not None
    text_view = review.static_view().to_text()
    assert "- tabs-py: tabs in python" in text_view and "+ prefers-tabs (project)" in text_view
    assert names(workspace) == ["tabs-py", "tabs-js", "other"]  # nothing before confirmation
    view = memory(ip, "commit")
    assert isinstance(view, BatchView) and view.status == "committed"
    assert sorted(names(workspace)) == ["other", "prefers-tabs"]
    assert review.status == "committed"


def test_commit_no_plan(api: MessagesServer, ip: InteractiveShell, workspace: str) -> None:
    seed(workspace, rec("tabs-py"), rec("tabs-js"))
    merged = rec("prefers-tabs")
    api.enqueue(
        text(json.dumps({"source_names": ["tabs-py", "tabs-js"], "records": [merged.to_json()]}))
    )
    memory(ip, "consolidate")
    view = memory(ip, "commit --no-plan")
    assert names(workspace) == ["tabs-py", "tabs-js"]
    assert view.status == "discarded"  # nothing accepted: nothing written


def test_consolidate_failure_is_an_error_view(
    api: MessagesServer, ip: InteractiveShell, workspace: str
) -> None:
    seed(workspace, rec("a"), rec("b"))
    api.enqueue(text("not json"))
    view = memory(ip, "consolidate")
    assert isinstance(view, ErrorView) and "Consolidation" in view.to_text()
    assert names(workspace) == ["a", "b"]
    assert memory(ip, "status").to_json()["last_error"] == "Memory consolidation failed"
    (Path(workspace) / "sub").mkdir()
    empty = memory(ip, "--dir sub consolidate")
    assert isinstance(empty, ErrorView) and "empty" in empty.to_text()


def test_dir_option_selects_another_workspace(
    ip: InteractiveShell, workspace: str, tmp_path: Path
) -> None:
    other = tmp_path / "other project"
    other.mkdir()
    seed(other, rec("elsewhere"))
    data = memory(ip, f'--dir "{other}" list').to_json()
    assert [r["name"] for r in data["records"]] == ["elsewhere"]
    assert memory(ip, f"--dir='{other}' show elsewhere").to_json()["file"].startswith("elsewhere-")
    assert memory(ip, "list").to_json()["records"] == []


def test_a_missing_directory_is_an_error_not_an_empty_set(
    ip: InteractiveShell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A --dir naming no workspace is a mistake in the line: a UsageError (issue 43),
    from %memory and %%agent alike; a .memory directory given for its workspace too."""
    missing = tmp_path / "no-such-project"
    for run in (
        lambda: memory(ip, f"--dir {missing} list"),
        lambda: memory(ip, f"--dir {missing} status"),
        lambda: agent(ip, f"--dir {missing}", "hello"),
    ):
        with pytest.raises(UsageError, match=f"--dir {missing}: no such directory"):
            run()
    assert not missing.exists()
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    with pytest.raises(UsageError, match=f"{a_file}: not a directory"):
        memory(ip, f"--dir {a_file} list")
    project = tmp_path / "proj"
    project.mkdir()
    seed(project, rec("kept"))
    with pytest.raises(UsageError, match="a memory directory itself") as raised:
        memory(ip, f"--dir {project / '.memory'} list")
    assert f"({project})" in str(raised.value)
    assert not (project / ".memory" / ".memory").exists()
    # Set elsewhere than the line (IPYMEMORY_DIR, %config), it is a settings error.
    monkeypatch.setenv("IPYMEMORY_DIR", str(missing))
    view = memory(ip, "list")
    assert isinstance(view, ErrorView)
    assert f"{missing}: no such directory" in view.to_text()
    assert "set by env IPYMEMORY_DIR" in view.to_text()


# --- UsageErrors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("bogus", "unknown subcommand 'bogus'"),
        ("lst", "unknown subcommand"),
        ("show", "missing NAME"),
        ("show nope", "no memory named 'nope'"),
        ("show Not-A-Name", "not a memory name"),
        ("forget", "missing NAME"),
        ("forget nope", "no memory named 'nope'"),
        ("forget 'unbalanced", "cannot split"),
        ("select", "missing QUERY"),
        ("select   ", "missing QUERY"),
        ("list extra", "unrecognized arguments"),
        ("status --verbose", "unrecognized arguments"),
        ("commit --reject", "expected at least one argument"),
        ("commit --batch nope", "no pending batch 'nope'"),
        ("discard --batch nope", "no pending batch 'nope'"),
        ("--dir", "--dir needs a directory"),
    ],
)
def test_memory_usage_errors(ip: InteractiveShell, workspace: str, line: str, message: str) -> None:
    seed(workspace, rec("a"))
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        memory(ip, line)
    assert names(workspace) == ["a"]


def test_commit_rejecting_an_unknown_item_is_a_usage_error(
    ip: InteractiveShell, workspace: str
) -> None:
    _pending_turn(ip, rec("a"))
    with pytest.raises(UsageError, match="not an item"):
        memory(ip, "commit --reject zzz")
    assert names(workspace) == [] and len(get_session().pending) == 1


@pytest.mark.parametrize(
    ("line", "cell", "message"),
    [
        ("--commit sometimes", "hi", "invalid choice: 'sometimes'"),
        ("--bogus", "hi", "unrecognized arguments"),
        ("--model", "hi", "expected one argument"),
        ("", "   \n\n", "the cell is empty"),
    ],
)
def test_agent_usage_errors(ip: InteractiveShell, line: str, cell: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        agent(ip, line, cell)


def test_usage_error_prints_no_traceback(
    ip: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    result = ip.run_cell("%%agent --commit never\nhello")
    assert isinstance(result.error_in_exec, UsageError)
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert "invalid choice" in out and "Traceback" not in out


# --- %%agent -------------------------------------------------------------------------


def test_agent_with_the_real_sdk_review_mode(
    api: MessagesServer, ip: InteractiveShell, workspace: str
) -> None:
    seed(
        workspace,
        rec("prefers-tabs", description="indents with tabs", body="Tabs, not spaces."),
        *FILLERS,
    )
    api.enqueue(
        text('["prefers-tabs"]'),
        text("Use **tabs**."),
        text(items_json(rec("likes-bold", description="likes bold answers"))),
    )
    with capture_output() as captured:
        result = ip.run_cell("%%agent\nHow should I indent?")
    out = result.result
    assert isinstance(out, TurnOutput) and out.answer == "Use **tabs**."
    # The turn's request carried the selected memory; the extractor saw the history.
    main_request = api.requests[1]
    assert "Tabs, not spaces." in memory_text(main_request)  # SPEC §8: before the query
    assert main_request["stream"] is True  # the answer streams into the cell
    assert main_request["model"] == "claude-sonnet-5-5"
    assert "Use **tabs**." in json.dumps(api.requests[2])
    # Outputs: progress line, answer (Markdown), memories injected, the review widget.
    bundles = [o.data for o in captured.outputs]
    assert any(b.get("text/markdown") == "Use **tabs**." for b in bundles)
    selection = [b[MIME_TYPE] for b in bundles if b.get(MIME_TYPE, {}).get("view") == "selection"]
    assert selection and selection[0]["source"] == "model"
    assert [r["name"] for r in selection[0]["records"]] == ["prefers-tabs"]
    review = [b for b in bundles if "application/vnd.jupyter.widget-view+json" in b]
    assert review and review[0][MIME_TYPE]["view"] == "batch"
    progress = [o for o in captured.outputs if o.update and "text/html" in o.data]
    summary = progress[-1].data["text/plain"]
    assert summary.startswith("✓ answered in ") and " · memory in " in summary
    # The live answer: an empty Markdown output first, then updates ending with the
    # whole answer, shown before the memory work's progress ("memory: ...").
    outputs = list(captured.outputs)
    updates = [i for i, o in enumerate(outputs) if "text/markdown" in o.data]
    assert outputs[updates[0]].data["text/markdown"] == "" and not outputs[updates[0]].update
    last = outputs[updates[-1]]
    assert last.update and last.data["text/markdown"] == "Use **tabs**."
    memory_lines = [
        i
        for i, o in enumerate(outputs)
        if o.update
        and str(o.data.get("text/plain", "")).lstrip(SPINNER + " ").startswith("memory:")
    ]
    assert memory_lines and updates[-1] < memory_lines[0]
    # Review mode: nothing written until the user decides.
    fillers = [r.name for r in FILLERS]
    assert names(workspace) == ["prefers-tabs", *fillers]
    assert out.review is not None
    out.review.commit_button.click()
    assert names(workspace) == ["prefers-tabs", *fillers, "likes-bold"]


def test_agent_model_option_and_commit_auto(
    api: MessagesServer, ip: InteractiveShell, workspace: str
) -> None:
    api.enqueue(text("Done."), text(items_json(rec("fact-one"))))
    out = agent(ip, "--model claude-other-1 --commit auto", "Remember fact one.")
    assert api.requests[0]["model"] == "claude-other-1"
    assert names(workspace) == ["fact-one"]
    assert out.review is None
    parts = out.parts()
    assert any(isinstance(p, BatchView) and p.status == "committed" for p in parts)


def test_agent_commit_off_extracts_nothing(
    api: MessagesServer, ip: InteractiveShell, workspace: str
) -> None:
    api.enqueue(text("Done."))
    out = agent(ip, "--commit off", "Hello")
    assert out.answer == "Done." and len(api.requests) == 1 and out.result.batch is None
    assert api.unexpected == 0


def test_agent_no_memory(api: MessagesServer, ip: InteractiveShell, workspace: str) -> None:
    seed(workspace, rec("secret-pref", body="SECRET BODY"))
    api.enqueue(text("Plain answer."))
    out = agent(ip, "--no-memory", "hello secret")
    assert len(api.requests) == 1  # no selection, no extraction
    assert "SECRET BODY" not in json.dumps(api.requests[0])
    assert out.selection_view.used is False
    assert "memory off" in out.selection_view.to_text()


def test_agent_python_runs_in_the_user_namespace(api: MessagesServer, ip: InteractiveShell) -> None:
    ip.user_ns["base"] = 41
    api.enqueue(
        tool_use("run_python", {"code": "answer = base + 1\nprint(answer)"}), text("It is 42.")
    )
    out = agent(ip, "--python --commit off", "compute")
    assert ip.user_ns["answer"] == 42 and out.answer == "It is 42."
    assert [t["name"] for t in api.requests[0]["tools"]].count("run_python") == 1
    tool_result = api.requests[1]["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result" and "42" in json.dumps(tool_result)


def test_agent_without_python_offers_no_python_tool(
    api: MessagesServer, ip: InteractiveShell
) -> None:
    api.enqueue(text("ok"))
    agent(ip, "--commit off", "compute")
    assert "run_python" not in [t["name"] for t in api.requests[0].get("tools", [])]


def test_agent_dir_option(
    api: MessagesServer, ip: InteractiveShell, tmp_path: Path, workspace: str
) -> None:
    other = tmp_path / "proj"
    other.mkdir()
    api.enqueue(text("ok"), text(items_json(rec("there"))))
    agent(ip, f"--dir {other} --commit auto", "note")
    assert names(other) == ["there"] and names(workspace) == []


def test_agent_api_failure_is_an_error_view(
    api: MessagesServer, ip: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    api.enqueue(error(529, "overloaded", "overloaded_error"))
    result = ip.run_cell("%%agent --commit off\nhello")
    assert result.error_in_exec is None
    assert isinstance(result.result, ErrorView) and "529" in result.result.to_text()
    assert "Traceback" not in capsys.readouterr().out


def test_agent_without_a_key_explains_how_to_configure(ip: InteractiveShell) -> None:
    view = agent(ip, "", "hello")
    assert isinstance(view, ErrorView)
    assert "ANTHROPIC_API_KEY" in view.to_text()


def test_agent_with_scripted_model(ip: InteractiveShell, workspace: str) -> None:
    seed(workspace, rec("prefers-tabs", description="indents with tabs"), *FILLERS)
    model = ScriptedModel(["not json", "Tabs.", "[]"])
    use_model(model)
    out = agent(ip, "", "how to indent with tabs")
    assert out.answer == "Tabs."
    assert out.selection_view.source == "fallback"  # the selector reply was invalid
    assert out.result.last_error == "Memory selection failed; deterministic fallback used"
    assert out.result.batch is None
    assert model.remaining == 0
    use_model(None)
    assert "Scripted" not in repr(get_session().model)


def test_agent_history_carries_across_cells(ip: InteractiveShell) -> None:
    use_model(ScriptedModel(["first answer", "[]", "second answer", "[]"]))
    agent(ip, "", "first question")
    agent(ip, "", "second question")
    history = get_session().history
    assert [m["content"] for m in history if m["role"] == "user"][:2] == [
        "first question",
        "second question",
    ]


def test_ctrl_c_stops_the_turn_cleanly(
    api: MessagesServer, ip: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    asked, release = threading.Event(), threading.Event()

    def respond(body: dict[str, Any]) -> Any:
        asked.set()  # the SDK waits for this reply: interrupt it there
        release.wait(30)
        return text("late")

    api.responder = respond
    main_thread = threading.get_ident()
    interrupter = threading.Thread(
        target=lambda: asked.wait(30) and signal.pthread_kill(main_thread, signal.SIGINT)
    )
    interrupter.start()
    with ctrl_c_raises():
        result = ip.run_cell("%%agent --commit off\nslow question")
    interrupter.join()
    # The cell returned while the reply was still held: the interrupt stopped the wait.
    assert 0 not in api.finished
    release.set()
    assert result.error_in_exec is None
    assert isinstance(result.result, MessageView) and "interrupted" in result.result.to_text()
    assert "Traceback" not in capsys.readouterr().out
    history = get_session().history
    assert history[0] == {"role": "user", "content": "slow question"}
    assert history[-1]["role"] == "assistant"  # the partial turn was closed


# --- settings ------------------------------------------------------------------------


def test_resolution_order_argument_config_env_default(
    api: MessagesServer, ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    assert get_session().config.commit_mode == "review"  # default
    monkeypatch.setenv("IPYMEMORY_COMMIT_MODE", "off")
    assert (
        memory(ip, "status").to_text().count("commit mode: off (from env IPYMEMORY_COMMIT_MODE)")
        == 1
    )
    ip.run_line_magic("config", "IPyMemory.commit_mode = 'auto'")
    assert "commit mode: auto (from %config)" in memory(ip, "status").to_text()
    # The argument wins for this turn: review → a pending batch, nothing written.
    api.enqueue(text("ok"), text(items_json(rec("x"))))
    out = agent(ip, "--commit review", "q")
    assert out.review is not None and names(workspace) == []
    # Without the argument %config (auto) applies.
    api.enqueue(text("ok"), text(items_json(rec("y"))))
    agent(ip, "", "q2")
    assert names(workspace) == ["y"]


def test_config_directory_and_bad_env_value(
    ip: InteractiveShell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "configured"
    target.mkdir()
    seed(target, rec("configured-note"))
    monkeypatch.setenv("IPYMEMORY_DIR", str(target))
    assert [r["name"] for r in memory(ip, "list").to_json()["records"]] == ["configured-note"]
    # %config beats the environment; --dir beats %config.
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    seed(chosen, rec("chosen-note"))
    ip.run_line_magic("config", f"IPyMemory.directory = {str(chosen)!r}")
    assert [r["name"] for r in memory(ip, "list").to_json()["records"]] == ["chosen-note"]
    assert "directory from: %config" in memory(ip, "status").to_text()
    listed = memory(ip, f"--dir {target} list").to_json()["records"]
    assert [r["name"] for r in listed] == ["configured-note"]
    monkeypatch.setenv("IPYMEMORY_MAX_TOKENS", "lots")
    view = memory(ip, "list")
    assert isinstance(view, ErrorView)
    assert "IPYMEMORY_MAX_TOKENS: expected an integer, got 'lots'" in view.to_text()
    assert isinstance(agent(ip, "", "q"), ErrorView)


def test_config_rejects_bad_values(ip: InteractiveShell) -> None:
    ip.run_line_magic("config", "IPyMemory.commit_mode = 'sometimes'")
    assert "commit mode: review" in memory(ip, "status").to_text()


# --- one command layer ---------------------------------------------------------------


def test_select_takes_the_rest_of_the_line_verbatim_after_its_options(
    ip: InteractiveShell, workspace: str
) -> None:
    seed(
        workspace,
        rec("prefers-tabs", description="indents with tabs"),
        rec("tabs-js", description="tabs in js"),
        rec("db-tests", description="never mock the database"),
    )
    widget = memory(ip, 'select --limit 1 what\'s the #1 rule for "tabs"')
    data = widget._repr_mimebundle_()[MIME_TYPE]
    assert data["query"] == 'what\'s the #1 rule for "tabs"'
    assert len(data["records"]) == 1
    # Three records fit the default limit (5): all of them, no choice made (SPEC §12).
    whole = memory(ip, "select tabs").view.to_json()
    assert (whole["source"], len(whole["records"])) == ("all", 3)
    with pytest.raises(UsageError, match="missing QUERY"):
        memory(ip, "select --limit 2")
    with pytest.raises(UsageError, match="--limit: expected an integer >= 1, got 0"):
        memory(ip, "select --limit 0 tabs")


def test_help_of_each_subcommand_comes_from_its_definition(ip: InteractiveShell) -> None:
    from ipymemory.commands import offered

    for name, command in offered("notebook").items():
        view = memory(ip, f"help {name}")
        assert isinstance(view, MessageView)
        text = " ".join(view.to_text().split())
        assert f"%memory {command.synopsis()}" in text and command.help[1:] in text
        for a in command.args:
            assert " ".join(a.options["help"].split()) in text
        assert command.synopsis() in memory(ip, "help").to_text()
    assert memory(ip, "show --help").to_text() == memory(ip, "help show").to_text()
    with pytest.raises(UsageError, match="no subcommand 'nope'"):
        memory(ip, "help nope")


def test_a_subcommand_is_added_in_one_place(
    ip: InteractiveShell, workspace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from ipymemory.cli import main
    from ipymemory.commands import COMMANDS, Context, arg, command

    @command(
        "echo-test",
        "repeat WORDS",
        arg("words", nargs="+", help="what to repeat"),
        arg("--upper", action="store_true", help="shout them"),
    )
    def handle_echo(ctx: Context, args: argparse.Namespace) -> MessageView:
        said = " ".join(args.words)
        data = {"words": args.words, "dir": str(ctx.settings.directory)}
        return MessageView(said.upper() if args.upper else said, data=data)

    try:
        assert memory(ip, "echo-test --upper a 'b c'").to_text() == "A B C"
        assert "echo-test WORDS …" in memory(ip, "help").to_text()
        capsys.readouterr()
        assert main(["--json", "echo-test", "x"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["words"] == ["x"] and Path(data["dir"]) == Path(workspace).resolve()
        assert main(["echo-test", "--help"]) == 0 and "shout them" in capsys.readouterr().out
        with pytest.raises(UsageError, match="the following arguments are required: words"):
            memory(ip, "echo-test --upper")
    finally:
        del COMMANDS["echo-test"]


def test_gc_and_reindex_in_the_notebook(ip: InteractiveShell, workspace: str) -> None:
    seed(workspace, rec("a"))
    root = Path(workspace, ".memory")
    (root / "MEMORY.md").write_text("stale")
    view = memory(ip, "reindex")
    assert isinstance(view, MessageView) and view.to_json()["records"] == 1
    assert (root / "MEMORY.md").read_text() == MemoryStore(workspace).catalog()
    ghost = root / f"ghost-{'0' * 32}.md"
    ghost.write_text("x")
    old = time.time() - 120
    os.utime(ghost, (old, old))
    view = memory(ip, "gc")
    assert view.to_json()["removed"] == [ghost.name] and not ghost.exists()
    assert f"removed {ghost.name}" in view.to_text()


def test_options_before_the_subcommand(ip: InteractiveShell) -> None:
    with pytest.raises(UsageError, match="unknown option '--bogus'"):
        memory(ip, "--bogus list")
    with pytest.raises(UsageError, match="cannot split"):
        memory(ip, "--dir 'unbalanced list")
    assert isinstance(memory(ip, "--dir ."), MessageView)  # no subcommand: the help


def test_agent_hidden_lets_the_file_tools_read_hidden_files_for_one_turn(
    api: MessagesServer, ip: InteractiveShell, workspace: str
) -> None:
    Path(workspace, ".env").write_text("TOKEN=not-real\n")
    for line, shown in (("--commit off", False), ("--hidden --commit off", True)):
        api.enqueue(tool_use("read_file", {"path": ".env"}), text("ok"))
        agent(ip, line, "what is in .env?")
        result = api.requests[-1]["messages"][-1]["content"][0]
        assert ("TOKEN=not-real" in json.dumps(result)) is shown
        assert bool(result.get("is_error")) is not shown


def test_the_help_names_only_columns_the_list_shows(ip: InteractiveShell, workspace: str) -> None:
    """Issue 43: `%memory help` listed a "file" column the list does not have."""
    seed(workspace, rec("uses-tabs"))
    line = next(
        x for x in memory(ip, "help").to_text().splitlines() if x.strip().startswith("list")
    )
    said = line.split("(", 1)[1].split(")", 1)[0].split(", ")
    header = memory(ip, "list").to_text().splitlines()[1].lower().split()
    assert said == ["name", "type", "description"] and all(c in header for c in said)
