"""The user scope in a turn (SPEC §11): selection over the project's and the user's
sets, the project's name winning a clash, ``user-wide`` in the injected block, a user
scope that cannot be read, and a source that changed since a record was saved.

Real turns: the real ``anthropic`` SDK against the scripted Messages-API server, real
stores on disk (a project directory and a separate user directory)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from messages_server import MessagesServer, text, tool_use
from record_support import rec
from turn_support import (
    MODEL_PICK,
    OLD_SELECTION,
    memory_text,
    model_for,
    records_reply,
    requests_of,
)
from turn_support import selector_input as selector_request

from ipymemory import AgentSession, MemoryStore, SessionConfig
from ipymemory.store import maintenance

WORKER = Path(__file__).with_name("scope_worker.py")

# More records than max_selected (5), so every turn has a choice to make.
PROJECT = [rec(f"project-note-{i}", description=f"project fact number {i}") for i in range(6)]


def dirs(tmp_path: Path) -> tuple[Path, Path]:
    project, user = tmp_path / "project", tmp_path / "home" / ".ipymemory"
    project.mkdir()
    MemoryStore(project).extend(PROJECT)
    return project, user


def session(
    messages_server: MessagesServer, project: Path, user: Path | None, *, pick: bool = False
) -> AgentSession:
    """A session over ``project`` and ``user``; ``pick``: the model's pick beside the
    agent's call too (its replies: ``enqueue_for("selector", …)``)."""
    selection = MODEL_PICK if pick else OLD_SELECTION
    return AgentSession(
        project,
        model=model_for(messages_server.base_url),
        config=SessionConfig(**selection, user_dir=user, commit_mode="off"),
    )


def selector_input(messages_server: MessagesServer) -> dict[str, str]:
    [request] = requests_of(messages_server.requests, "selector")
    return selector_request(request)


def test_the_selector_sees_the_project_then_the_user_and_the_block_says_user_wide(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, user = dirs(tmp_path)
    user.mkdir(parents=True)
    MemoryStore(user).extend(
        [rec("prefers-polars", type="user", description="uses polars, not pandas")]
    )
    messages_server.enqueue_for("selector", text(json.dumps(["prefers-polars", "project-note-1"])))
    messages_server.enqueue(text("Use polars."))
    result = session(messages_server, project, user, pick=True).run_turn("Load the CSV for me")
    # No record's words match: the first request carries the newest, the user's last.
    assert result.selection.names == (
        "prefers-polars",
        "project-note-5",
        "project-note-4",
        "project-note-3",
        "project-note-2",
    )
    catalog = selector_input(messages_server)["catalog"].splitlines()
    assert [line.split("]")[0][3:] for line in catalog] == [
        *(r.name for r in PROJECT),
        "prefers-polars",
    ]
    block = memory_text(requests_of(messages_server.requests, "main")[0])
    assert "## prefers-polars (user, user-wide, saved " in block  # its own journal
    assert "## project-note-5 (project, saved " in block  # the project's journal knows it
    # The answer came first (no tool step): the pick's new record joins the next turn.
    assert result.trace is not None and result.trace.pick is not None
    assert result.trace.pick.carried_over == ("project-note-1",)


def test_a_name_in_both_scopes_is_the_projects(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, user = dirs(tmp_path)
    user.mkdir(parents=True)
    MemoryStore(user).extend([rec("project-note-0", type="user", body="THE USER'S COPY")])
    messages_server.enqueue_for("selector", text(json.dumps(["project-note-0"])))
    messages_server.enqueue(text("ok"))
    result = session(messages_server, project, user, pick=True).run_turn("What is fact 0?")
    assert result.trace is not None and result.trace.pick is not None
    [record] = [r for r in result.selection.records if r.name == "project-note-0"]
    assert record == PROJECT[0]
    assert selector_input(messages_server)["catalog"].count("[project-note-0]") == 1
    assert "THE USER'S COPY" not in memory_text(requests_of(messages_server.requests, "main")[0])


def test_an_unreadable_user_scope_leaves_the_project_and_names_the_scope(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, user = dirs(tmp_path)
    user.mkdir(parents=True)
    (user / ".memory").write_text("not a directory")
    messages_server.enqueue(text("Fact 2 it is."))
    turn = session(messages_server, project, user)
    result = turn.run_turn("What is fact 2?")
    assert result.answer == "Fact 2 it is."
    assert set(result.selection.names) <= {r.name for r in PROJECT}
    assert len(result.selection.names) == 5
    assert turn.last_error == "Memory could not be read"
    assert turn.last_error_cause is not None and "the user scope (" in turn.last_error_cause
    assert str(user / ".memory") in turn.last_error_cause


def test_an_absent_user_directory_is_an_empty_scope(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, user = dirs(tmp_path)
    messages_server.enqueue(text("ok"))
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
    messages_server.enqueue_for("selector", text(json.dumps([])))
    messages_server.enqueue(text("ok"))
    session(messages_server, project, None, pick=True).run_turn("polars?")
    assert "prefers-polars" not in selector_input(messages_server)["catalog"]


def test_a_record_whose_source_changed_says_so_in_the_block(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, _ = dirs(tmp_path)
    (project / "CONVENTIONS.md").write_text("Indent with tabs.\n")
    messages_server.enqueue(
        tool_use("read_file", {"path": "CONVENTIONS.md"}),
        text("Tabs."),
        # It names the file it is about: its source (SPEC §11 as of issue 26).
        records_reply(
            rec("indent-rule", description="the indent rule", body="CONVENTIONS.md: tabs.")
        ),
    )
    first = AgentSession(
        project, model=model_for(messages_server.base_url), config=SessionConfig(**OLD_SELECTION)
    )
    result = first.run_turn("How do we indent? See CONVENTIONS.md")
    assert result.batch is not None and first.commit(result.batch).ok
    (project / "CONVENTIONS.md").write_text("Indent with four spaces.\n")
    messages_server.enqueue(text("ok"))
    AgentSession(
        project, model=model_for(messages_server.base_url), config=SessionConfig(**OLD_SELECTION)
    ).run_turn("indent?")
    block = memory_text(requests_of(messages_server.requests, "main")[-1])
    assert block.index("## indent-rule") < block.index("## project-note-5")  # best first
    section = block.split("## indent-rule (project, saved ", 1)[1].split("\n\n", 1)[1]
    assert section.startswith("source changed since saved: CONVENTIONS.md\n\nthe indent rule")
    assert "source changed" not in block.split("## project-note-5", 1)[1]


# --- where new records go (SPEC §11) ---------------------------------------------------

PREFERENCE = rec(
    "prefers-polars",
    type="user",
    description="uses polars, not pandas",
    body="I always use polars, not pandas.",
)
FACT = rec("ingest-deadline", description="the ingest rewrite is due Friday", body="Due Friday.")


def extracting_session(
    messages_server: MessagesServer, project: Path, user: Path | None, mode: str = "review"
) -> AgentSession:
    messages_server.enqueue(
        text("Noted: polars, and Friday."),
        records_reply(PREFERENCE, FACT),
    )
    turn = AgentSession(
        project,
        model=model_for(messages_server.base_url),
        config=SessionConfig(**OLD_SELECTION, user_dir=user, commit_mode=mode),  # type: ignore[arg-type]
    )
    turn.run_turn("I always use polars, not pandas. The ingest rewrite is due Friday.")
    return turn


def test_a_user_item_goes_to_the_user_scope_and_the_rest_to_the_project(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, user = dirs(tmp_path)
    turn = extracting_session(messages_server, project, user)
    [batch] = turn.pending
    assert dict(batch.scopes) == {"prefers-polars": "user"}
    # The extractor saw both catalogs' names.
    request = requests_of(messages_server.requests, "extractor")[0]
    assert "project-note-0" in json.dumps(request["messages"])
    result = turn.commit(batch)
    assert result.ok, result.error
    assert set(result.committed) == {"prefers-polars", "ingest-deadline"}
    assert [r.name for r in MemoryStore(user).records()] == ["prefers-polars"]
    assert "ingest-deadline" in [r.name for r in MemoryStore(project).records()]
    assert "prefers-polars" not in [r.name for r in MemoryStore(project).records()]
    # Journalled in each scope, with the turn's provenance (no project file hashes in
    # the user's: they could not be compared there).
    [entry] = MemoryStore(user).history()
    assert entry.op == "add" and entry.provenance["prefers-polars"]["origin"] == "user"
    assert "files_sha256" not in entry.provenance["prefers-polars"]
    assert MemoryStore(project).history(1)[0].added[0].name == "ingest-deadline"


def test_the_review_shows_the_scope_and_the_person_can_switch_it(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    from ipymemory.views import BatchReview

    project, user = dirs(tmp_path)
    turn = extracting_session(messages_server, project, user)
    [batch] = turn.pending
    review = BatchReview(turn, batch)
    assert review.chosen_scopes == {"prefers-polars": "user", "ingest-deadline": "project"}
    assert "user-wide (your own memory, every project): prefers-polars" in (
        review.static_view().to_text()
    )
    review.scope_choices["prefers-polars"].value = "project"
    review.scope_choices["ingest-deadline"].value = "user"
    review.commit_button.click()
    assert review.status.value == "committed", review.error
    assert [r.name for r in MemoryStore(user).records()] == ["ingest-deadline"]
    assert "prefers-polars" in [r.name for r in MemoryStore(project).records()]
    assert all(t.disabled for t in review.scope_choices.values())


def test_without_a_user_scope_everything_goes_to_the_project(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, _ = dirs(tmp_path)
    turn = extracting_session(messages_server, project, None, mode="auto")
    names = [r.name for r in MemoryStore(project).records()]
    assert {"prefers-polars", "ingest-deadline"} <= set(names)
    assert not turn.batches[-1].scopes


def test_auto_mode_commits_a_users_preference_to_the_user_scope(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, user = dirs(tmp_path)
    extracting_session(messages_server, project, user, mode="auto")
    assert [r.name for r in MemoryStore(user).records()] == ["prefers-polars"]
    assert "ingest-deadline" in [r.name for r in MemoryStore(project).records()]


def test_an_update_of_a_user_wide_record_is_an_update_there_and_undoable(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, user = dirs(tmp_path)
    user.mkdir(parents=True)
    MemoryStore(user).extend([rec("prefers-pandas", type="user", body="I use pandas.")])
    changed = {
        **rec("prefers-polars", type="user", body="I switched to polars.").to_json(),
        "replaces": "prefers-pandas",
    }
    messages_server.enqueue(text("Noted."), text(json.dumps([changed])))
    turn = AgentSession(
        project,
        model=model_for(messages_server.base_url),
        config=SessionConfig(**OLD_SELECTION, user_dir=user),
    )
    turn.run_turn("I switched to polars, no more pandas.")
    [batch] = turn.pending
    assert dict(batch.replaces) == {"prefers-polars": "prefers-pandas"}
    assert batch.scope_of("prefers-polars") == "user"
    assert turn.commit(batch).ok
    store = MemoryStore(user)
    assert [r.name for r in store.records()] == ["prefers-polars"]
    update = store.history(1)[0]
    store.undo(update.seq)
    assert [r.body for r in store.records()] == ["I use pandas."]
    assert len(MemoryStore(project).history()) == 1  # the project only has its own add


def test_commit_to_project_moves_an_item_and_an_update_cannot_move(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    from ipymemory import BatchError

    project, user = dirs(tmp_path)
    turn = extracting_session(messages_server, project, user)
    [batch] = turn.pending
    with pytest.raises(BatchError, match="not an item"):
        turn.commit(batch, scopes={"nope": "user"})
    with pytest.raises(BatchError, match="is not project or user"):
        turn.commit(batch, scopes={"prefers-polars": "elsewhere"})
    assert turn.commit(batch, scopes={"prefers-polars": "project"}).ok
    assert not MemoryStore(user).directory()  # nothing was written there


def test_two_kernels_of_two_projects_commit_to_one_user_scope_at_once(tmp_path: Path) -> None:
    """SPEC §11: the user scope's lock covers kernels of different projects."""
    user = tmp_path / "me"
    workers = []
    for tag in ("alpha", "beta"):
        (tmp_path / tag).mkdir()
        workers.append(
            subprocess.Popen(
                [sys.executable, str(WORKER), str(tmp_path / tag), str(user), tag, "6"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    outputs = [w.communicate(timeout=240) for w in workers]
    for worker, (_out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
    committed = {line for out, _ in outputs for line in out.split()}
    expected_user = {f"{tag}-pref-{i}" for tag in ("alpha", "beta") for i in range(6)}
    assert expected_user <= committed
    assert {r.name for r in MemoryStore(user).records()} == expected_user
    for tag in ("alpha", "beta"):
        facts = {r.name for r in MemoryStore(tmp_path / tag).records()}
        assert facts == {f"{tag}-fact-{i}" for i in range(6)}
    seqs = [e.seq for e in reversed(MemoryStore(user).history())]
    assert seqs == list(range(1, 13))  # one add per turn, none lost, in order
    assert maintenance.check(user) == []


_HALF_COMMIT = """
import os, signal, sys
from ipymemory import AgentSession, SessionConfig
from ipymemory.model import NoModel
from ipymemory.review.scopes import read_scopes

project, user = sys.argv[1:3]
session = AgentSession(project, model=NoModel(), config=SessionConfig(user_dir=user))
(saved,), _ = session.pending_files.load()
current = read_scopes(session.store, session.user_store).records
batch = session.pending_files.reopen(saved, current, session.batch_registry, session.store)

def die(step):  # the project's commit never starts: killed after the user scope's
    print("killed at", step, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

session.store._checkpoint = die
session.commit(batch)
print("not killed", flush=True)
"""


def test_a_batch_killed_between_its_two_commits_resumes_with_what_is_left(
    messages_server: MessagesServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 28 item 8: a kill between a batch's user-scope and project commits left a
    batch whose every retry failed "'X' was added by another session meanwhile"."""
    from ipymemory.cli import main

    project, user = dirs(tmp_path)
    turn = extracting_session(messages_server, project, user)
    [batch] = turn.pending
    child = subprocess.run(
        [sys.executable, "-c", _HALF_COMMIT, str(project), str(user)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == -9 and "killed at" in child.stdout, child.stderr
    # Half applied: the user scope holds its item, the project not yet its own.
    assert [r.name for r in MemoryStore(user).records()] == ["prefers-polars"]
    assert "ingest-deadline" not in [r.name for r in MemoryStore(project).records()]
    capsys.readouterr()
    monkeypatch.setenv("IPYMEMORY_USER_DIR", str(user))
    code = main(["--dir", str(project), "commit", "--batch", batch.id])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert [r.name for r in MemoryStore(user).records()] == ["prefers-polars"]
    assert "ingest-deadline" in [r.name for r in MemoryStore(project).records()]
    assert len(MemoryStore(user).history()) == 1  # not committed there twice
    assert not (project / ".memory" / "pending" / f"{batch.id}.json").exists()
