"""``--scope`` on the reading and changing commands, and both directories in
``%memory status`` (SPEC §11): through the CLI's ``main`` and a real InteractiveShell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from notebook_support import memory
from record_support import rec

from ipymemory import MemoryStore
from ipymemory.cli import main


@pytest.fixture
def scopes(workspace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    """A project with two records and a user scope with two, one named like a project's."""
    user = tmp_path / "me"
    user.mkdir()
    MemoryStore(workspace).extend([rec("alpha"), rec("shared", body="the project's")])
    MemoryStore(user).extend(
        [rec("polars", type="user"), rec("shared", type="user", body="the user's")]
    )
    monkeypatch.setenv("IPYMEMORY_USER_DIR", str(user))
    return workspace, user


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_reads_both_scopes_by_default_and_one_with_scope(
    scopes: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    ws, user = scopes
    code, out, _ = run(capsys, "--dir", ws, "list")
    assert code == 0
    assert out.splitlines() == [
        "[project]",
        "alpha (project) - about alpha",
        "shared (project) - about shared",
        "[user]",
        "polars (user) - about polars",
        "shared (user) - about shared",
    ]
    code, out, _ = run(capsys, "--dir", ws, "--json", "list", "--scope", "user")
    data = json.loads(out)
    assert data["directory"] == str(user / ".memory")
    assert [r["name"] for r in data["records"]] == ["polars", "shared"]
    code, out, _ = run(capsys, "--dir", ws, "--json", "list")
    assert set(json.loads(out)) == {"project", "user"}


def test_show_takes_the_projects_record_first_and_the_users_on_request(
    scopes: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    ws, _ = scopes
    assert run(capsys, "--dir", ws, "show", "shared")[1].endswith("the project's\n")
    assert run(capsys, "--dir", ws, "show", "shared", "--scope", "user")[1].endswith("the user's\n")
    assert run(capsys, "--dir", ws, "show", "polars")[0] == 0  # found in the user scope
    code, _, err = run(capsys, "--dir", ws, "show", "polars", "--scope", "project")
    assert code == 1 and "no memory named 'polars'" in err


def test_forget_and_undo_in_the_user_scope_leave_the_project_alone(
    scopes: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    ws, user = scopes
    code, _, err = run(capsys, "--dir", ws, "forget", "polars")
    assert code == 1 and "no memory named 'polars'" in err  # changes default to the project
    code, out, _ = run(capsys, "--dir", ws, "--json", "forget", "shared", "--scope", "user")
    assert code == 0 and json.loads(out) == {"forgotten": ["shared"], "scope": "user"}
    assert [r.name for r in MemoryStore(user).records()] == ["polars"]
    assert [r.name for r in MemoryStore(ws).records()] == ["alpha", "shared"]
    forget_seq = MemoryStore(user).history(1)[0].seq
    code, out, _ = run(capsys, "--dir", ws, "history", "--scope", "user")
    assert code == 0 and "forget" in out
    code, _, err = run(capsys, "--dir", ws, "undo", str(forget_seq), "--scope", "user")
    assert code == 0, err
    assert [r.name for r in MemoryStore(user).records()] == ["polars", "shared"]
    assert MemoryStore(user).get("shared").body == "the user's"
    assert len(MemoryStore(ws).history()) == 1  # the project's journal did not move


def test_scope_user_when_the_scope_is_off_says_how_to_turn_it_on(
    workspace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "--dir", workspace, "list", "--scope", "user")
    assert code == 1 and "the user scope is off" in err and "IPYMEMORY_USER_DIR" in err
    code, _, err = run(capsys, "--dir", workspace, "forget", "x", "--scope", "all")
    assert code == 2 and "invalid choice" in err  # changes name one scope


def test_status_shows_both_directories_and_list_takes_scope_in_the_notebook(
    scopes: tuple[str, Path], ip: InteractiveShell
) -> None:
    _, user = scopes
    status = memory(ip, "status")
    assert f"User scope       {user / '.memory'} (2 records)" in status.to_text()
    assert status.to_json()["user_scope"] == {"directory": str(user / ".memory"), "records": 2}
    listed = memory(ip, "list --scope user")
    assert [e.record.name for e in listed.entries] == ["polars", "shared"]
    ip.run_line_magic("config", "IPyMemory.user_dir = 'off'")
    assert "User scope       off (user_dir)" in memory(ip, "status").to_text()


def test_commit_to_project_and_to_user_in_the_notebook(
    ip: InteractiveShell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json as _json

    from ipymemory import ScriptedModel
    from ipymemory.notebook import get_session, use_model

    user = tmp_path / "me"
    monkeypatch.setenv("IPYMEMORY_USER_DIR", str(user))
    items = [
        rec("likes-dark", type="user", body="I like dark mode.").to_json(),
        rec("team-uses-tabs", type="user", body="I like dark mode; the team uses tabs.").to_json(),
    ]
    use_model(ScriptedModel(["Noted.", _json.dumps(items)]))
    ip.run_cell_magic("agent", "", "I like dark mode; the team uses tabs.")
    [batch] = get_session().pending
    assert batch.scope_of("likes-dark") == batch.scope_of("team-uses-tabs") == "user"
    with pytest.raises(Exception, match="named in both"):
        memory(ip, "commit --to-user likes-dark --to-project likes-dark")
    view = memory(ip, f"commit --batch {batch.id} --to-project team-uses-tabs")
    assert view.to_json()["status"] == "committed"
    assert [r.name for r in MemoryStore(user).records()] == ["likes-dark"]
    assert "team-uses-tabs" in [r.name for r in get_session().store.records()]


def test_move_is_one_commit_in_each_scope_journalled_in_both_and_undoable(
    scopes: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    ws, user = scopes
    code, out, err = run(capsys, "--dir", ws, "--json", "move", "alpha", "--to", "user")
    assert code == 0, err
    assert json.loads(out)["moved"] == ["alpha"]
    assert "alpha" in [r.name for r in MemoryStore(user).records()]
    assert "alpha" not in [r.name for r in MemoryStore(ws).records()]
    into, out_of = MemoryStore(user).history(1)[0], MemoryStore(ws).history(1)[0]
    assert into.op == "add" and into.actor["via"] == "move"
    assert into.provenance["alpha"]["moved_from"] == str(Path(ws) / ".memory")
    assert out_of.op == "forget" and [r.name for r in out_of.removed] == ["alpha"]
    # Each side undoes in its own scope.
    MemoryStore(ws).undo(out_of.seq)
    assert "alpha" in [r.name for r in MemoryStore(ws).records()]
    # A name the target holds is refused, nothing moved.
    code, _, err = run(capsys, "--dir", ws, "move", "shared", "--to", "user")
    assert code == 1 and "already in the user scope" in err
    assert "shared" in [r.name for r in MemoryStore(ws).records()]
    code, _, err = run(capsys, "--dir", ws, "move", "polars", "--to", "project")
    assert code == 0, err
    assert "polars" in [r.name for r in MemoryStore(ws).records()]
    code, _, err = run(capsys, "--dir", ws, "move", "alpha")
    assert code == 2 and "--to" in err


def test_forgetting_a_user_wide_name_in_the_project_points_to_scope_user(
    scopes: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33 #6: "no memory named 'polars' … known: alpha, shared" said nothing of
    where it is."""
    ws, user = scopes
    code, _, err = run(capsys, "--dir", ws, "forget", "polars")
    assert code == 1
    assert "no memory named 'polars'" in err
    assert "('polars' is user-wide: add --scope user)" in err
    code, _, err = run(capsys, "--dir", ws, "forget", "alpha", "--scope", "user")
    assert code == 1 and "('alpha' is in the project: add --scope project)" in err
    code, _, err = run(capsys, "--dir", ws, "forget", "nowhere")
    assert code == 1 and "add --scope" not in err
    assert [r.name for r in MemoryStore(user).records()] == ["polars", "shared"]


@pytest.mark.parametrize("half", ["project", "user"])
def test_a_move_reads_as_a_move_and_undoing_either_half_moves_it_back(
    scopes: tuple[str, Path], capsys: pytest.CaptureFixture[str], half: str
) -> None:
    """Issue 33 #6: a move was journalled as a plain add and forget, and undoing one
    half left the record in both scopes."""
    ws, user = scopes
    assert run(capsys, "--dir", ws, "move", "alpha", "--to", "user")[0] == 0
    code, out, _ = run(capsys, "--dir", ws, "history", "--limit", "1")
    assert code == 0
    project_part, user_part = out.split("[user]")
    [project_row] = [line for line in project_part.splitlines() if line.startswith("#2 ")]
    [user_row] = [line for line in user_part.splitlines() if line.startswith("#2 ")]
    assert " move " in project_row and "-alpha (to user)" in project_row
    assert " move " in user_row and "+alpha (from project)" in user_row
    assert "the command line" in project_row and "the command line" in user_row
    seq = 2
    code, out, err = run(capsys, "--dir", ws, "undo", str(seq), "--scope", half)
    assert code == 0, err
    assert f"Undid the move #{seq}: alpha back in the project scope" in out
    assert "alpha" in [r.name for r in MemoryStore(ws).records()]
    assert "alpha" not in [r.name for r in MemoryStore(user).records()]
    code, out, _ = run(capsys, "--dir", ws, "history", "--limit", "1", "--scope", "project")
    assert f"(undo of move #{seq}) +alpha (from user)" in out
