"""Claude Code's auto memory in and out (CLI and %memory), and `git setup` in both front
ends: a Claude Code-style directory made here (titles with spaces and capitals, a bad
type, an index line without a file, a credential), one commit, the round trip, export
never overwriting what it did not write."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from team_support import git

import ipymemory
from ipymemory import MemoryStore
from ipymemory.cli import main as cli
from ipymemory.commands import static_form
from ipymemory.notebook import get_session
from ipymemory.team.claude_code import slug

TOKEN = "ghp_" + "a1B2" * 9  # a GitHub token shape the screening knows


def topic(title: str, description: str, type: str, body: str) -> str:
    return f"---\nname: {title}\ndescription: {description}\ntype: {type}\n---\n\n{body}\n"


@pytest.fixture
def cc_dir(tmp_path: Path) -> Path:
    d = tmp_path / "cc-memory"
    d.mkdir()
    files = {
        "prefers_tabs.md": topic("Prefers Tabs", "Indents with tabs", "user", "Tabs, width 4."),
        "db.md": topic("DB Tests: Real Postgres", "No mocks", "feedback", "Use the real db.\n"),
        "ingest.md": topic("Ingest bugs", "Tracked in Linear", "reference", "Project INGEST"),
        "again.md": topic("prefers tabs", "Same title again", "user", "A second file."),
        "opinion.md": topic("An opinion", "Bad type", "opinion", "Whatever."),
        "plain.md": "just text, no frontmatter\n",
        "secret.md": topic("Deploy token", "The token", "project", f"token {TOKEN}"),
    }
    for name, text in files.items():
        (d / name).write_text(text)
    (d / "MEMORY.md").write_text(
        "- [Prefers Tabs](prefers_tabs.md) — tabs\n"
        "- [DB](db.md) — db\n"
        "- [Gone](gone.md) — this file does not exist\n"
    )
    return d


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def imported(workspace: str, cc_dir: Path, tmp_path: Path) -> Path:
    """Import ``cc_dir`` into ``workspace``; the (not yet made) directory to export to."""
    assert run("--dir", workspace, "import", "claude-code", str(cc_dir), "--yes")[0] == 0
    return tmp_path / "exported"


def test_slug() -> None:
    assert slug("Prefers Tabs") == "prefers-tabs"
    assert slug("DB Tests: Real Postgres") == "db-tests-real-postgres"
    assert slug("Café Ünïcode") == "cafe-unicode"
    assert slug("CON") == "con-memory"
    assert slug("!!!") == ""


def test_import_reports_commits_once_and_is_idempotent(workspace: str, cc_dir: Path) -> None:
    code, out, _ = run("--dir", workspace, "import", "claude-code", str(cc_dir))
    assert code == 0
    assert "nothing written: add --yes" in out
    assert MemoryStore(workspace).records() == ()

    code, out, _ = run("--dir", workspace, "import", "claude-code", str(cc_dir), "--yes")
    assert code == 0, out
    store = MemoryStore(workspace)
    names = sorted(r.name for r in store.records())
    assert names == ["db-tests-real-postgres", "ingest-bugs", "prefers-tabs", "prefers-tabs-2"]
    assert store.get("prefers-tabs").body == "Tabs, width 4."
    assert store.get("prefers-tabs-2").description == "Same title again"
    assert str(store.get("db-tests-real-postgres").type) == "feedback"
    assert len(store.history()) == 1  # one commit
    # Another tool's memory is another agent's (issue 39): origin agent, screened as such.
    assert store.history()[0].provenance["ingest-bugs"]["origin"] == "agent"
    assert "opinion.md: type 'opinion' is not one of" in out
    assert "plain.md: no frontmatter" in out
    assert "MEMORY.md line 3: links gone.md, which is missing" in out
    assert "secret.md: holds a credential (github-token)" in out
    assert TOKEN not in out
    assert all(TOKEN not in r.body for r in store.records())

    code, out, _ = run("--dir", workspace, "import", "claude-code", str(cc_dir), "--yes")
    assert code == 0
    assert "nothing to import" in out
    assert len(store.history()) == 1


def test_import_reports_a_different_record_under_a_taken_name(workspace: str, cc_dir: Path) -> None:
    from record_support import rec

    MemoryStore(workspace).extend([rec("ingest-bugs", body="ours")])
    code, out, _ = run("--dir", workspace, "import", "claude-code", str(cc_dir), "--yes")
    assert code == 0
    assert "ingest.md: the set already holds a different 'ingest-bugs'" in out
    assert MemoryStore(workspace).get("ingest-bugs").body == "ours"


def test_import_of_a_missing_directory_fails(workspace: str, tmp_path: Path) -> None:
    code, _, err = run("--dir", workspace, "import", "claude-code", str(tmp_path / "nope"))
    assert code == 1
    assert "not a directory" in err


def test_round_trip(workspace: str, cc_dir: Path, tmp_path: Path) -> None:
    out_dir = imported(workspace, cc_dir, tmp_path)
    code, _, err = run("--dir", workspace, "export", "claude-code", str(out_dir))
    assert code == 0, err
    index = (out_dir / "MEMORY.md").read_text()
    assert "- [prefers-tabs](prefers-tabs.md) — Indents with tabs\n" in index
    other = tmp_path / "other"
    other.mkdir()
    code, _, err = run("--dir", str(other), "import", "claude-code", str(out_dir), "--yes")
    assert code == 0, err
    assert MemoryStore(other).records() == MemoryStore(workspace).records()


def test_export_never_overwrites_what_it_did_not_write(
    workspace: str, cc_dir: Path, tmp_path: Path
) -> None:
    out_dir = imported(workspace, cc_dir, tmp_path)
    out_dir.mkdir()
    mine = out_dir / "ingest-bugs.md"
    mine.write_text("my own notes\n")
    code, _, err = run("--dir", workspace, "export", "claude-code", str(out_dir))
    assert code == 1
    assert "ingest-bugs.md" in err and "--force" in err
    assert mine.read_text() == "my own notes\n"
    assert sorted(p.name for p in out_dir.iterdir()) == ["ingest-bugs.md"]  # nothing written

    assert run("--dir", workspace, "export", "claude-code", str(out_dir), "--force")[0] == 0
    assert "name: ingest-bugs" in mine.read_text()
    # Its own files it rewrites; a file it wrote that was edited since, it does not.
    assert run("--dir", workspace, "export", "claude-code", str(out_dir))[0] == 0
    (out_dir / "prefers-tabs.md").write_text("edited by hand\n")
    assert run("--dir", workspace, "export", "claude-code", str(out_dir))[0] == 1
    assert (out_dir / "prefers-tabs.md").read_text() == "edited by hand\n"
    (out_dir / "prefers-tabs.md").unlink()
    # A record that left the set: the file export wrote for it goes too.
    MemoryStore(workspace).forget(["ingest-bugs"])
    code, out, err = run("--dir", workspace, "export", "claude-code", str(out_dir))
    assert code == 0, err
    assert "removed ingest-bugs.md" in out
    assert not mine.exists()
    assert (out_dir / "prefers-tabs.md").exists()


@pytest.mark.parametrize("force", [False, True])
def test_export_state_naming_files_outside_the_directory_is_refused(
    workspace: str, cc_dir: Path, tmp_path: Path, force: bool
) -> None:
    """Issue 19 #2: names read from .ipymemory-export.json are files inside DIR or the
    state is refused; nothing outside (nor inside) is removed, even with --force."""
    out_dir = imported(workspace, cc_dir, tmp_path)
    assert run("--dir", workspace, "export", "claude-code", str(out_dir))[0] == 0
    victim = tmp_path / "victim.md"
    victim.write_text("not export's\n")
    absolute = tmp_path / "absolute.md"
    absolute.write_text("nor this\n")
    state_path = out_dir / ".ipymemory-export.json"
    state = json.loads(state_path.read_text())
    digest = hashlib.sha256(victim.read_bytes()).hexdigest()  # "unchanged since written"
    for name in ("../victim.md", str(absolute), "sub/../../victim.md"):
        state["files"] = {**state["files"], name: digest}
        state_path.write_text(json.dumps(state))
        before = sorted(p.name for p in out_dir.iterdir())
        argv = ["--dir", workspace, "export", "claude-code", str(out_dir)]
        code, _, err = run(*argv, *(["--force"] if force else []))
        assert code == 1 and "not a file name inside" in err and name in err, err
        assert victim.read_text() == "not export's\n" and absolute.read_text() == "nor this\n"
        assert sorted(p.name for p in out_dir.iterdir()) == before
        del state["files"][name]


@pytest.mark.timeout(30)
def test_export_state_that_is_a_fifo_is_refused_not_waited_on(
    workspace: str, cc_dir: Path, tmp_path: Path
) -> None:
    out_dir = imported(workspace, cc_dir, tmp_path)
    out_dir.mkdir()
    os.mkfifo(out_dir / ".ipymemory-export.json")
    code, _, err = run("--dir", workspace, "export", "claude-code", str(out_dir))
    assert code == 1 and "not a regular file" in err, err


@pytest.mark.parametrize("force", [False, True])
def test_export_never_writes_through_a_symlink(
    workspace: str, cc_dir: Path, tmp_path: Path, force: bool
) -> None:
    """Issue 19 #11: a symlinked <name>.md (or index) stops the export, --force too."""
    out_dir = imported(workspace, cc_dir, tmp_path)
    assert run("--dir", workspace, "export", "claude-code", str(out_dir))[0] == 0
    outside = tmp_path / "outside.txt"
    for link in ("ingest-bugs.md", "MEMORY.md"):
        outside.write_text("outside the export\n")
        (out_dir / link).unlink()
        (out_dir / link).symlink_to(outside)
        argv = ["--dir", workspace, "export", "claude-code", str(out_dir)]
        code, _, err = run(*argv, *(["--force"] if force else []))
        assert code == 1 and "symlink" in err and link in err, err
        assert outside.read_text() == "outside the export\n"
        assert (out_dir / link).is_symlink()
        (out_dir / link).unlink()


def test_import_never_follows_a_symlink(workspace: str, cc_dir: Path, tmp_path: Path) -> None:
    """Issue 19 #11: a topic file (or the index) that is a symlink to a file outside
    the directory is reported and never read into the set."""
    outside = tmp_path / "private.md"
    outside.write_text(topic("Private notes", "From elsewhere", "user", "outside body"))
    (cc_dir / "linked.md").symlink_to(outside)
    (cc_dir / "pipe.md").unlink(missing_ok=True)
    os.mkfifo(cc_dir / "pipe.md")
    index = cc_dir / "MEMORY.md"
    index.rename(tmp_path / "index-elsewhere.md")
    index.symlink_to(tmp_path / "index-elsewhere.md")
    code, out, err = run("--dir", workspace, "import", "claude-code", str(cc_dir), "--yes")
    assert code == 0, err
    assert "linked.md: a symlink; not followed" in out
    assert "pipe.md: not a regular file" in out
    assert "MEMORY.md: not a regular file" in out
    records = MemoryStore(workspace).records()
    assert records and all("outside body" not in r.body for r in records)
    assert "private-notes" not in {r.name for r in records}


# --- git setup ---------------------------------------------------------------------


def test_git_setup_refuses_outside_a_repository(workspace: str) -> None:
    code, _, err = run("--dir", workspace, "git", "setup")
    assert code == 1
    assert "not inside a git repository" in err


@pytest.mark.timeout(30)
@pytest.mark.parametrize("planted", [".gitattributes", ".gitignore"])
def test_git_setup_refuses_a_fifo_instead_of_waiting_on_it(workspace: str, planted: str) -> None:
    """Issue 19 #6: the files git setup reads are opened without blocking too."""
    git(workspace, "init", "-q")
    os.mkfifo(Path(workspace) / planted)
    code, _, err = run("--dir", workspace, "git", "setup")
    assert code == 1 and "not a regular file" in err, err


def test_git_setup_is_idempotent(workspace: str) -> None:
    git(workspace, "init", "-q")
    (Path(workspace) / ".gitignore").write_text("*.pyc")  # no final newline
    code, out, err = run("--dir", workspace, "git", "setup")
    assert code == 0, err
    attributes = (Path(workspace) / ".gitattributes").read_text()
    ignore = (Path(workspace) / ".gitignore").read_text()
    assert "**/.memory/manifest.json merge=ipymemory-manifest" in attributes
    assert ignore.startswith("*.pyc\n") and "**/.memory/history/" in ignore
    driver = git(workspace, "config", "merge.ipymemory-manifest.driver").stdout
    launcher = Path(ipymemory.__file__).parent / "team" / "git_driver.py"
    assert driver.startswith(f"{sys.executable} {launcher} manifest %O %A %B %P")
    assert "git config merge.ipymemory-index.driver" in out

    code, out, _ = run("--dir", workspace, "git", "setup")
    assert code == 0
    assert "already set up" in out
    assert (Path(workspace) / ".gitattributes").read_text() == attributes
    assert (Path(workspace) / ".gitignore").read_text() == ignore
    # git really applies it to a .memory in a subdirectory.
    sub = Path(workspace) / "nb" / ".memory"
    sub.mkdir(parents=True)
    got = git(workspace, "check-attr", "merge", "nb/.memory/MEMORY.md").stdout
    assert got.strip().endswith("merge: ipymemory-index")
    assert git(workspace, "check-ignore", "-q", "nb/.memory/history/x", check=False).returncode == 0


# --- the notebook ------------------------------------------------------------------


def test_notebook_import_waits_for_review(
    ip: InteractiveShell, workspace: str, cc_dir: Path
) -> None:
    view = ip.run_line_magic("memory", f"import claude-code {cc_dir}")
    assert MemoryStore(workspace).records() == ()  # nothing before the decision
    shown = json.dumps(static_form(view).to_json())
    assert "prefers-tabs-2" in shown and "db-tests-real-postgres" in shown
    ip.run_line_magic("memory", "commit --reject ingest-bugs")
    names = sorted(r.name for r in MemoryStore(workspace).records())
    assert names == ["db-tests-real-postgres", "prefers-tabs", "prefers-tabs-2"]


def test_notebook_import_with_yes_commits_at_once(
    ip: InteractiveShell, workspace: str, cc_dir: Path
) -> None:
    """Issue 33 #8: `%memory import … --yes` opened a review all the same."""
    view = ip.run_line_magic("memory", f"import claude-code {cc_dir} --yes")
    assert "committed 4 records in one commit" in view.to_text()
    names = sorted(r.name for r in MemoryStore(workspace).records())
    assert names == ["db-tests-real-postgres", "ingest-bugs", "prefers-tabs", "prefers-tabs-2"]
    assert not get_session().pending


def test_notebook_git_setup(ip: InteractiveShell, workspace: str) -> None:
    with pytest.raises(UsageError, match="not inside a git repository"):
        ip.run_line_magic("memory", "git setup")
    git(workspace, "init", "-q")
    view = ip.run_line_magic("memory", "git setup")
    assert "wrote .gitattributes" in view.to_text()
    assert (
        subprocess.run(
            ["git", "config", "merge.ipymemory-manifest.driver"], cwd=workspace, capture_output=True
        ).returncode
        == 0
    )
