"""The user scope in a turn (SPEC §11): selection over the project's and the user's
sets, the project's name winning a clash, ``user-wide`` in the injected block, a user
scope that cannot be read, and a source that changed since a record was saved.

Real turns: the real ``anthropic`` SDK against the scripted Messages-API server, real
stores on disk (a project directory and a separate user directory)."""

from __future__ import annotations

import json
from pathlib import Path

from messages_server import MessagesServer, text, tool_use
from record_support import rec
from turn_support import memory_text, model_for, records_reply, requests_of

from ipymemory import AgentSession, MemoryStore, SessionConfig

# More records than max_selected (5), so every turn has a choice to make.
PROJECT = [rec(f"project-note-{i}", description=f"project fact number {i}") for i in range(6)]


def dirs(tmp_path: Path) -> tuple[Path, Path]:
    project, user = tmp_path / "project", tmp_path / "home" / ".ipymemory"
    project.mkdir()
    MemoryStore(project).extend(PROJECT)
    return project, user


def session(messages_server: MessagesServer, project: Path, user: Path | None) -> AgentSession:
    return AgentSession(
        project,
        model=model_for(messages_server.base_url),
        config=SessionConfig(user_dir=user, commit_mode="off"),
    )


def selector_input(messages_server: MessagesServer) -> dict[str, str]:
    [request] = requests_of(messages_server.requests, "selector")
    content = request["messages"][0]["content"]
    return json.loads(content if isinstance(content, str) else content[0]["text"])


def test_the_selector_sees_the_project_then_the_user_and_the_block_says_user_wide(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, user = dirs(tmp_path)
    user.mkdir(parents=True)
    MemoryStore(user).extend(
        [rec("prefers-polars", type="user", description="uses polars, not pandas")]
    )
    messages_server.enqueue(
        text(json.dumps(["prefers-polars", "project-note-1"])), text("Use polars.")
    )
    result = session(messages_server, project, user).run_turn("Load the CSV for me")
    assert result.selection.names == ("prefers-polars", "project-note-1")
    catalog = selector_input(messages_server)["catalog"].splitlines()
    assert [line.split("]")[0][3:] for line in catalog] == [
        *(r.name for r in PROJECT),
        "prefers-polars",
    ]
    block = memory_text(requests_of(messages_server.requests, "main")[0])
    assert "## prefers-polars (user, user-wide)" in block
    assert "## project-note-1 (project, saved " in block  # the project's journal knows it


def test_a_name_in_both_scopes_is_the_projects(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, user = dirs(tmp_path)
    user.mkdir(parents=True)
    MemoryStore(user).extend([rec("project-note-0", type="user", body="THE USER'S COPY")])
    messages_server.enqueue(text(json.dumps(["project-note-0"])), text("ok"))
    result = session(messages_server, project, user).run_turn("What is fact 0?")
    [record] = result.selection.records
    assert record == PROJECT[0]
    assert selector_input(messages_server)["catalog"].count("[project-note-0]") == 1
    assert "THE USER'S COPY" not in memory_text(requests_of(messages_server.requests, "main")[0])


def test_an_unreadable_user_scope_leaves_the_project_and_names_the_scope(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, user = dirs(tmp_path)
    user.mkdir(parents=True)
    (user / ".memory").write_text("not a directory")
    messages_server.enqueue(text(json.dumps(["project-note-2"])), text("Fact 2 it is."))
    turn = session(messages_server, project, user)
    result = turn.run_turn("What is fact 2?")
    assert result.answer == "Fact 2 it is."
    assert result.selection.names == ("project-note-2",)
    assert turn.last_error == "Memory could not be read"
    assert turn.last_error_cause is not None and "the user scope (" in turn.last_error_cause
    assert str(user / ".memory") in turn.last_error_cause


def test_an_absent_user_directory_is_an_empty_scope(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, user = dirs(tmp_path)
    messages_server.enqueue(text(json.dumps(["project-note-3"])), text("ok"))
    turn = session(messages_server, project, user)
    turn.run_turn("fact 3?")
    assert turn.last_error is None
    assert not user.exists()  # reading never creates it


def test_without_user_dir_a_session_reads_its_workspace_only(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, user = dirs(tmp_path)
    user.mkdir(parents=True)
    MemoryStore(user).extend([rec("prefers-polars", type="user")])
    messages_server.enqueue(text(json.dumps([])), text("ok"))
    session(messages_server, project, None).run_turn("polars?")
    assert "prefers-polars" not in selector_input(messages_server)["catalog"]


def test_a_record_whose_source_changed_says_so_in_the_block(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, _ = dirs(tmp_path)
    (project / "CONVENTIONS.md").write_text("Indent with tabs.\n")
    messages_server.enqueue(
        text(json.dumps([])),
        tool_use("read_file", {"path": "CONVENTIONS.md"}),
        text("Tabs."),
        records_reply(rec("indent-rule", description="the indent rule", body="Tabs.")),
    )
    first = AgentSession(project, model=model_for(messages_server.base_url))
    result = first.run_turn("How do we indent? See CONVENTIONS.md")
    assert result.batch is not None and first.commit(result.batch).ok
    (project / "CONVENTIONS.md").write_text("Indent with four spaces.\n")
    messages_server.enqueue(text(json.dumps(["indent-rule", "project-note-0"])), text("ok"))
    AgentSession(project, model=model_for(messages_server.base_url)).run_turn("indent?")
    block = memory_text(requests_of(messages_server.requests, "main")[-1])
    section = block.split("## indent-rule (project, saved ", 1)[1].split("\n\n", 1)[1]
    assert section.startswith("source changed since saved: CONVENTIONS.md\n\nthe indent rule")
    assert "source changed" not in block.split("## project-note-0", 1)[1]
