from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from messages_server import MessagesServer, text, tool_use
from turn_support import model_for

from ipymemory import AgentSession, SessionConfig
from ipymemory.turn.tools import ToolBox, tool_definitions


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "notes.md").write_text("hello notes\n")
    (ws / "sub" / "data.csv").write_text("a,b\n1,2\n")
    (ws / ".hidden").write_text("x")
    (ws / ".memory").mkdir()
    (ws / ".memory" / "manifest.json").write_text("{}")
    (tmp_path / "secret.txt").write_text("TOP SECRET")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.txt").write_text("OUTSIDE")
    return ws


def test_list_files_is_recursive_relative_and_skips_hidden(tree: Path) -> None:
    out = ToolBox(tree).run("list_files", {})
    assert not out.is_error
    assert out.content.splitlines() == ["notes.md", "sub/data.csv"]
    assert ToolBox(tree).run("list_files", {"path": "sub"}).content == "sub/data.csv"


def test_list_files_is_bounded(tree: Path) -> None:
    for i in range(30):
        (tree / f"f{i:02d}.txt").write_text("x")
    out = ToolBox(tree, list_limit=10).run("list_files", {})
    lines = out.content.splitlines()
    assert len(lines) == 11 and "22 more files not shown" in lines[-1]


def test_read_file_reads_inside(tree: Path) -> None:
    box = ToolBox(tree)
    assert box.run("read_file", {"path": "notes.md"}).content == "hello notes\n"
    assert box.run("read_file", {"path": str(tree / "sub" / "data.csv")}).content == "a,b\n1,2\n"
    assert box.run("read_file", {"path": "sub/../notes.md"}).content == "hello notes\n"


@pytest.mark.parametrize(
    "path",
    ["../secret.txt", "sub/../../secret.txt", "../outside/x.txt", "/etc/passwd", "..", "/"],
)
def test_read_file_refuses_paths_outside(tree: Path, path: str) -> None:
    out = ToolBox(tree).run("read_file", {"path": path})
    assert out.is_error and "outside the workspace" in out.content
    assert "SECRET" not in out.content and "root:" not in out.content


def test_symlinks_out_of_the_workspace_are_refused(tree: Path) -> None:
    (tree / "link.txt").symlink_to(tree.parent / "secret.txt")
    (tree / "linkdir").symlink_to(tree.parent / "outside")
    box = ToolBox(tree)
    for path in ("link.txt", "linkdir/x.txt", str(tree / "link.txt")):
        out = box.run("read_file", {"path": path})
        assert out.is_error and "outside the workspace" in out.content, path
    listed = box.run("list_files", {"path": "linkdir"})
    assert listed.is_error and "outside the workspace" in listed.content
    # A symlink that stays inside is fine.
    (tree / "inner").symlink_to(tree / "notes.md")
    assert box.run("read_file", {"path": "inner"}).content == "hello notes\n"


def test_workspace_given_through_a_symlink_still_confines(tree: Path) -> None:
    alias = tree.parent / "alias"
    alias.symlink_to(tree)
    box = ToolBox(alias)
    assert box.run("read_file", {"path": "notes.md"}).content == "hello notes\n"
    assert box.run("read_file", {"path": "../secret.txt"}).is_error


def test_read_file_is_size_capped_and_rejects_non_files(tree: Path) -> None:
    (tree / "big.txt").write_text("x" * 5000)
    out = ToolBox(tree, read_limit=100).run("read_file", {"path": "big.txt"})
    assert not out.is_error
    assert out.content.startswith("x" * 100) and "truncated: big.txt is 5000 bytes" in out.content
    box = ToolBox(tree)
    assert "is not a regular file" in box.run("read_file", {"path": "sub"}).content
    assert "does not exist" in box.run("read_file", {"path": "nope.txt"}).content
    (tree / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    assert "looks binary" in box.run("read_file", {"path": "blob.bin"}).content
    for bad in ({}, {"path": ""}, {"path": 3}, {"path": "a\x00b"}):
        assert box.run("read_file", bad).is_error
    assert box.run("read_file", "notes.md").is_error  # input must be an object


def test_unknown_tools_and_disabled_python_are_error_results(tree: Path) -> None:
    box = ToolBox(tree)
    assert [t["name"] for t in box.definitions] == ["list_files", "read_file"]
    out = box.run("run_python", {"code": "1"})
    assert out.is_error and "not enabled for this turn" in out.content
    out = box.run("rm_rf", {})
    assert out.is_error and "unknown tool 'rm_rf'" in out.content


def test_run_python_captures_output_result_and_keeps_namespace(tree: Path) -> None:
    ns: dict[str, object] = {}
    box = ToolBox(tree, allow_python=True, namespace=ns)
    assert [t["name"] for t in box.definitions][-1] == "run_python"
    assert tool_definitions(allow_python=True)[-1]["input_schema"]["required"] == ["code"]
    out = box.run(
        "run_python",
        {"code": "import sys\nx = 21\nprint('hi')\nprint('warn', file=sys.stderr)\nx * 2"},
    )
    assert not out.is_error
    assert out.content == "stdout:\nhi\n\nstderr:\nwarn\n\nresult:\n42"
    assert ns["x"] == 21
    assert box.run("run_python", {"code": "x = 5"}).content == "(no output)"
    assert box.run("run_python", {"code": "x"}).content == "result:\n5"


def test_run_python_errors_are_results_with_traceback(tree: Path) -> None:
    box = ToolBox(tree, allow_python=True)
    out = box.run("run_python", {"code": "print('before')\n1/0"})
    assert out.is_error
    assert "ZeroDivisionError" in out.content and "stdout:\nbefore" in out.content
    out = box.run("run_python", {"code": "def f(:\n  pass"})
    assert out.is_error and "syntax error" in out.content
    assert box.run("run_python", {"code": 7}).is_error


def test_run_python_output_is_bounded(tree: Path) -> None:
    box = ToolBox(tree, allow_python=True, output_limit=50)
    out = box.run("run_python", {"code": "print('y' * 10_000)"})
    assert len(out.content) < 120 and "output truncated at 50 characters" in out.content


def test_keyboard_interrupt_in_python_propagates_and_restores_streams(tree: Path) -> None:
    import sys

    stdout = sys.stdout
    box = ToolBox(tree, allow_python=True)
    with pytest.raises(KeyboardInterrupt):
        box.run("run_python", {"code": "raise KeyboardInterrupt"})
    assert sys.stdout is stdout


def test_fifo_is_refused_without_blocking(tree: Path) -> None:
    os.mkfifo(tree / "pipe")
    out = ToolBox(tree).run("read_file", {"path": "pipe"})
    assert out.is_error and "not a regular file" in out.content


# --- hidden files (issue 10 #7) ------------------------------------------------------


@pytest.fixture
def secrets(tree: Path) -> Path:
    (tree / ".env").write_text("ANTHROPIC_API_KEY=sk-not-real\n")
    (tree / ".git").mkdir()
    (tree / ".git" / "config").write_text("[remote] url = https://token@example\n")
    (tree / "sub" / ".ssh").mkdir()
    (tree / "sub" / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (tree / "innocent.txt").symlink_to(tree / ".env")
    (tree / "cfg").symlink_to(tree / ".git")
    (tree / "sub" / "keys").symlink_to(tree / "sub" / ".ssh")
    return tree


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        ".hidden",
        ".git/config",
        "sub/.ssh/id_ed25519",
        ".memory/manifest.json",
        "./.env",
        "sub/../.env",
        ".git/../notes.md",
        "innocent.txt",  # a symlink to .env
        "cfg/config",  # through a symlink to .git
        "sub/keys/id_ed25519",
    ],
)
def test_hidden_files_are_refused(secrets: Path, path: str) -> None:
    out = ToolBox(secrets).run("read_file", {"path": path})
    assert out.is_error and "hidden" in out.content and "allows them" in out.content
    assert "sk-not-real" not in out.content and "PRIVATE" not in out.content
    absolute = ToolBox(secrets).run("read_file", {"path": str(secrets / path)})
    assert absolute.is_error and "hidden" in absolute.content


@pytest.mark.parametrize("path", [".git", ".memory", "cfg", "sub/keys"])
def test_hidden_directories_are_not_listed(secrets: Path, path: str) -> None:
    out = ToolBox(secrets).run("list_files", {"path": path})
    assert out.is_error and "hidden" in out.content


def test_hidden_files_are_allowed_when_the_user_opts_in(secrets: Path) -> None:
    box = ToolBox(secrets, allow_hidden=True)
    assert box.run("read_file", {"path": ".env"}).content == "ANTHROPIC_API_KEY=sk-not-real\n"
    assert box.run("read_file", {"path": "cfg/config"}).content.startswith("[remote]")
    listed = box.run("list_files", {}).content.splitlines()
    assert {".env", ".git/config", ".memory/manifest.json", "sub/.ssh/id_ed25519"} <= set(listed)
    assert ".env" not in ToolBox(secrets).run("list_files", {}).content


# --- run_python: time limit and output capture (issue 10 #7) ------------------------


def test_other_threads_output_still_reaches_stdout_during_run_python(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    started, printed = threading.Event(), threading.Event()

    def other_thread() -> None:
        started.wait(10)
        print("from another thread")
        sys.stderr.write("another thread's warning\n")
        printed.set()

    ns: dict[str, object] = {"started": started, "printed": printed}
    other = threading.Thread(target=other_thread)
    other.start()
    stdout = sys.stdout
    out = ToolBox(tree, allow_python=True, namespace=ns).run(
        "run_python",
        {"code": "print('tool before')\nstarted.set()\nprinted.wait(10)\nprint('tool after')"},
    )
    other.join()
    assert sys.stdout is stdout  # the router is gone again
    assert out.content == "stdout:\ntool before\ntool after\n"
    captured = capsys.readouterr()
    assert captured.out == "from another thread\n"
    assert captured.err == "another thread's warning\n"


def _run_python_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "ipymemory-run_python"]


def test_an_infinite_loop_is_stopped_at_the_time_limit(tree: Path) -> None:
    ns: dict[str, object] = {}
    box = ToolBox(tree, allow_python=True, namespace=ns, python_timeout=0.3)
    out = box.run("run_python", {"code": "print('looping')\ni = 0\nwhile True:\n    i += 1"})
    assert out.is_error
    assert out.content == (
        "run_python: timed out after 0.3 s; the code was stopped\nstdout:\nlooping\n"
    )
    assert not _run_python_threads()  # interrupted, not left running
    assert box.run("run_python", {"code": "i > 0"}).content == "result:\nTrue"


def test_code_blocked_outside_python_is_reported_as_still_running(tree: Path) -> None:
    release = threading.Event()
    ns: dict[str, object] = {"release": release}
    box = ToolBox(tree, allow_python=True, namespace=ns, python_timeout=0.2)
    out = box.run("run_python", {"code": "release.wait()\nfinished = True"})
    try:
        assert out.is_error and "timed out after 0.2 s and could not be stopped" in out.content
        assert "still running in the background" in out.content
        assert [t.is_alive() for t in _run_python_threads()] == [True]
    finally:
        release.set()
        for thread in _run_python_threads():
            thread.join(10)
    # The interrupt was delivered once the code came back to Python: it did not finish.
    assert "finished" not in ns


def _read_env_in_a_turn(
    server: MessagesServer, workspace: Path, config: SessionConfig, **turn: Any
) -> dict[str, Any]:
    server.enqueue(tool_use("read_file", {"path": ".env"}), text("done"))
    session = AgentSession(workspace, model=model_for(server.base_url), config=config)
    session.run_turn("what is in .env?", use_memory=False, **turn)
    result: dict[str, Any] = server.requests[-1]["messages"][-1]["content"][0]
    return result


def test_a_turn_refuses_hidden_files_unless_the_user_opts_in(
    messages_server: MessagesServer, workspace: str
) -> None:
    ws = Path(workspace)
    (ws / ".env").write_text("TOKEN=not-real\n")
    refused = _read_env_in_a_turn(messages_server, ws, SessionConfig(commit_mode="off"))
    assert refused["is_error"] is True and "not-real" not in json.dumps(refused)
    allowed = _read_env_in_a_turn(
        messages_server, ws, SessionConfig(commit_mode="off"), allow_hidden=True
    )
    assert "TOKEN=not-real" in json.dumps(allowed) and not allowed.get("is_error")
    by_setting = _read_env_in_a_turn(
        messages_server, ws, SessionConfig(commit_mode="off", allow_hidden=True)
    )
    assert "TOKEN=not-real" in json.dumps(by_setting)
    overridden = _read_env_in_a_turn(
        messages_server, ws, SessionConfig(commit_mode="off", allow_hidden=True), allow_hidden=False
    )
    assert overridden["is_error"] is True


def test_a_turn_gives_run_python_the_configured_time_limit(
    messages_server: MessagesServer, workspace: str
) -> None:
    messages_server.enqueue(tool_use("run_python", {"code": "while True:\n    pass"}), text("ok"))
    session = AgentSession(
        workspace,
        model=model_for(messages_server.base_url),
        config=SessionConfig(commit_mode="off", python_timeout=0.2),
    )
    session.run_turn("loop", use_memory=False, allow_python=True)
    result = messages_server.requests[-1]["messages"][-1]["content"][0]
    assert result["is_error"] is True and "timed out after 0.2 s" in json.dumps(result)


def test_list_files_leaves_out_links_that_read_file_would_refuse(secrets: Path) -> None:
    (secrets / "out.txt").symlink_to(secrets.parent / "secret.txt")
    (secrets / "ok.txt").symlink_to(secrets / "notes.md")
    listed = ToolBox(secrets).run("list_files", {}).content.splitlines()
    assert "innocent.txt" not in listed and "out.txt" not in listed
    assert "ok.txt" in listed and "notes.md" in listed
    assert "innocent.txt" in ToolBox(secrets, allow_hidden=True).run("list_files", {}).content
