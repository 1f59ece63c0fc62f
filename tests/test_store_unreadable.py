"""Issue 43 item 7: one hand-edited record file does not switch memory off.

A record file the manifest lists but that does not load (a bad ``type:``, an unquoted
colon in a description, a hand-edit past the size bound) is named -- with its position
counted from the file's first line and the ``recover`` hint -- once per turn; reading
(a turn's selection, ``%memory list``, ``ipymemory list``, ``select``, ``status``) goes
on with the rest of the set, and every write refuses until the file is fixed or
``recover`` rebuilds the set without it. The on-disk format is unchanged.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from messages_server import MessagesServer, text
from notebook_support import items_json, loaded_shell, memory, use_api
from record_support import rec
from store_support import snapshot
from turn_support import requests_of

from ipymemory import MemoryFormatError, MemoryRecordUnreadable, MemoryStore
from ipymemory.review.scopes import read_scopes
from ipymemory.store.record import parse_record
from ipymemory.views import ErrorView, ManifestView

HINT = "fix the file, or `ipymemory recover` rebuilds the set without it"


def _edit(store: MemoryStore, name: str, old: str, new: str) -> Path:
    """Hand-edit the record file of ``name`` (files are written read-only)."""
    [path] = store.root.glob(f"{name}-*.md")
    os.chmod(path, 0o644)
    path.write_text(path.read_text().replace(old, new))
    return path


@pytest.fixture
def broken(workspace: str) -> tuple[MemoryStore, Path, Path]:
    """Three records; one with a bad type, one with an unquoted colon (line 3)."""
    store = MemoryStore(workspace)
    store.extend(
        [
            rec("uses-tabs", description="indents with tabs", type="user"),
            rec("deploy-day", description="we deploy on Thursdays"),
            rec("lint-tool", description="lints with ruff", type="feedback"),
        ]
    )
    bad_type = _edit(store, "deploy-day", "type: project", "type: projet")
    colon = _edit(store, "lint-tool", "description: lints with ruff", "description: lint: ruff")
    return store, bad_type, colon


def test_the_rest_of_the_set_reads_and_each_bad_file_is_named(
    broken: tuple[MemoryStore, Path, Path],
) -> None:
    store, bad_type, colon = broken
    readable = store.readable()
    assert [e.record.name for e in readable.entries] == ["uses-tabs"]
    assert [e.file for e in readable.unreadable] == [bad_type.name, colon.name]
    first, second = (str(e) for e in readable.unreadable)
    assert first.startswith(f"{bad_type}") and "unknown type 'projet'" in first
    # The position is the file's: the description is on line 3 of the file.
    assert second.startswith(f"{colon}") and "at line 3, column 18" in second
    assert "must be quoted" in second
    assert first.endswith(HINT) and second.endswith(HINT)
    # The strict readers and every write refuse, naming the first bad file.
    with pytest.raises(MemoryRecordUnreadable, match="projet") as raised:
        store.records()
    assert raised.value.file == bad_type.name
    before = snapshot(store.root)
    with pytest.raises(MemoryRecordUnreadable, match=HINT.replace("`", ".")):
        store.extend([rec("new-note")])
    with pytest.raises(MemoryRecordUnreadable):
        store.forget(["uses-tabs"])
    assert snapshot(store.root) == before
    # Fixed by hand: everything reads and writes again.
    _edit(store, "deploy-day", "type: projet", "type: project")
    _edit(store, "lint-tool", "description: lint: ruff", "description: 'lint: ruff'")
    assert [r.name for r in store.records()] == ["uses-tabs", "deploy-day", "lint-tool"]
    store.extend([rec("new-note")])


def test_recover_sets_the_bad_files_aside_and_writes_work_again(
    broken: tuple[MemoryStore, Path, Path],
) -> None:
    store, _, _ = broken
    store.recover()
    assert [r.name for r in store.records()] == ["uses-tabs"]
    store.extend([rec("new-note")])
    assert store.readable().unreadable == ()


@given(
    st.integers(min_value=0, max_value=2),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=30),
    st.integers(min_value=0, max_value=5),
)
def test_a_yaml_position_is_the_files(line: int, value: str, body_lines: int) -> None:
    """Wherever an unquoted ': ' breaks the frontmatter, the position said is the one
    an editor shows for the file (line 1 is the opening ``---``)."""
    front = ["name: a-note", "description: fine", "type: user"]
    key = front[line].split(":")[0]
    front[line] = f"{key}: {value}: more"
    raw = ("---\n" + "\n".join(front) + "\n---\n\n" + "body\n" * (body_lines + 1)).encode()
    with pytest.raises(MemoryFormatError) as raised:
        parse_record(raw, "f.md")
    column = len(key) + 2 + len(value) + 1  # the second colon, 1-based
    assert f"at line {line + 2}, column {column}" in str(raised.value)
    assert "must be quoted" in str(raised.value)


# --- the notebook: a real InteractiveShell, the real SDK on the local Messages API ---


@pytest.fixture
def ip(workspace: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.chdir(workspace)
    with loaded_shell() as shell:
        yield shell


def _outputs(ip: InteractiveShell, cell: str) -> list[Any]:
    with capture_output() as captured:
        ip.run_cell(cell)
    return [o.data.get("text/plain", "") for o in captured.outputs] + [captured.stdout]


def test_a_turn_goes_on_with_the_rest_and_says_so_once(
    broken: tuple[MemoryStore, Path, Path],
    ip: InteractiveShell,
    messages_server: MessagesServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, bad_type, colon = broken
    use_api(ip, messages_server.base_url, monkeypatch)
    messages_server.enqueue(text("Use tabs."))
    shown = "\n".join(_outputs(ip, "%%agent\nHow should I indent?\n"))
    # The readable record was used (the set is not "empty").
    assert "Memories injected: uses-tabs" in shown and "no memories stored" not in shown
    # Both files named once, with the file's position and the hint; not garbled.
    assert shown.count(str(bad_type)) == 1 and shown.count(str(colon)) == 1
    assert "at line 3, column 18" in shown and HINT in shown
    assert "could not be read failed" not in shown
    assert "nothing" in shown.lower() or "writes nothing" in shown
    # The memory work wrote nothing and asked no extractor: the next turn after the fix
    # reads this turn's messages too (the cursor stayed).
    assert [r for r in requests_of(messages_server.requests, "extractor")] == []
    _edit(store, "deploy-day", "type: projet", "type: project")
    _edit(store, "lint-tool", "description: lint: ruff", "description: 'lint: ruff'")
    messages_server.enqueue(text("Noted."), text(items_json(rec("likes-short", type="user"))))
    ip.run_cell("%%agent\nKeep answers short.\n")
    [extraction] = requests_of(messages_server.requests, "extractor")
    assert "How should I indent?" in str(extraction["messages"])


def test_list_and_writes_in_the_notebook(
    broken: tuple[MemoryStore, Path, Path], ip: InteractiveShell
) -> None:
    store, bad_type, _ = broken
    view = memory(ip, "list")
    assert isinstance(view, ManifestView)
    assert [e.record.name for e in view.entries] == ["uses-tabs"]
    assert str(bad_type) in view.to_text() and HINT in view.to_text()
    before = snapshot(store.root)
    refused = memory(ip, "forget uses-tabs")
    assert isinstance(refused, ErrorView) and str(bad_type) in refused.to_text()
    assert snapshot(store.root) == before
    status = memory(ip, "status").to_text()
    assert "Records          1" in status and str(bad_type) in status


def test_the_command_line_lists_the_rest_and_refuses_writes(
    broken: tuple[MemoryStore, Path, Path],
) -> None:
    store, bad_type, _ = broken

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ipymemory.cli", "--dir", str(store.workspace), *argv],
            capture_output=True,
            text=True,
            env={**os.environ, "IPYMEMORY_USER_DIR": "off"},
        )

    listed = cli("list")
    assert listed.returncode == 1
    assert listed.stdout == "uses-tabs (user) - indents with tabs\n"
    assert str(bad_type) in listed.stderr and "at line 3, column 18" in listed.stderr
    selected = cli("select", "indent")
    assert "uses-tabs" in selected.stdout
    shown = cli("show", "uses-tabs")
    assert shown.returncode == 0 and "indents with tabs" in shown.stdout
    before = snapshot(store.root)
    forgot = cli("forget", "uses-tabs")
    assert forgot.returncode == 1 and str(bad_type) in forgot.stderr and HINT in forgot.stderr
    assert snapshot(store.root) == before
    assert cli("recover").returncode == 0
    assert cli("list").returncode == 0


def test_selection_reads_both_scopes_without_the_bad_files(
    broken: tuple[MemoryStore, Path, Path], tmp_path: Path
) -> None:
    store, _, _ = broken
    (tmp_path / "me").mkdir()
    user = MemoryStore(tmp_path / "me")
    user.extend([rec("prefers-polars", type="user"), rec("old-habit", type="user")])
    _edit(user, "old-habit", "type: user", "type: usr")
    scoped = read_scopes(store, user)
    assert [e.record.name for e in scoped.project] == ["uses-tabs"]
    assert [e.record.name for e in scoped.user] == ["prefers-polars"]
    assert scoped.unreadable_note is not None and "deploy-day" in scoped.unreadable_note
    assert scoped.error is not None and "old-habit" in scoped.error
