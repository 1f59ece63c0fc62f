"""history / diff / undo / restore and show's provenance, through both front ends: the
CLI (``ipymemory.cli.main`` and the console script in a subprocess) and ``%memory`` in
a real IPython InteractiveShell (undo/restore proposed as a batch, confirmed by
``%memory commit`` or the widget's button)."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from notebook_support import loaded_shell, memory
from record_support import rec

from ipymemory import MemoryStore
from ipymemory.cli import main
from ipymemory.notebook import get_session
from ipymemory.views import MIME_TYPE, MessageView, RecordView
from ipymemory.views.history import HistoryChangeView, HistoryDiffView, HistoryView
from ipymemory.views.history_widgets import HistoryChangeReview, HistoryWidget


def names(workspace: str) -> list[str]:
    return [r.name for r in MemoryStore(workspace).records()]


@pytest.fixture
def ws(workspace: str) -> str:
    """Four entries: #1 add a, b (from a notebook cell) · #2 consolidate a, b -> ab ·
    #3 add c · #4 forget c."""
    store = MemoryStore(workspace)
    store.extend(
        [rec("a", body="Alpha body.\nsecond line"), rec("b", body="Beta body.")],
        provenance={"a": {"query": "Which region sells most?", "origin": "user"}},
        actor={"notebook": "/home/u/analysis.ipynb", "execution_count": 12, "session": "s1"},
    )
    store.apply_consolidation(
        base_records=store.records(),
        source_names=["a", "b"],
        replacements=[rec("ab", body="Alpha and beta body.\nsecond line")],
    )
    store.extend([rec("c")])
    store.forget(["c"])
    return workspace


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- the command line ----------------------------------------------------------------


def test_cli_history_text_json_and_limit(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--dir", ws, "history")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].endswith("4 entries (newest first)")
    rows = [line for line in lines if line.startswith("#")]
    assert [r.split()[0] for r in rows] == ["#4", "#3", "#2", "#1"]
    assert "forget" in rows[0] and "-c" in rows[0]
    assert "+ab -a -b" in rows[2]
    assert "analysis.ipynb cell [12]" in rows[3] and "Which region sells most?" in rows[3]
    code, out, _ = run(capsys, "--dir", ws, "--json", "history", "--limit", "2")
    data = json.loads(out)
    assert code == 0 and [e["seq"] for e in data] == [4, 3]
    assert data[0]["op"] == "forget" and data[0]["removed"][0]["name"] == "c"
    code, _, err = run(capsys, "--dir", ws, "history", "--limit", "0")
    assert code == 2 and "--limit" in err


def test_cli_history_of_an_empty_workspace(
    workspace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "--dir", workspace, "history")
    assert code == 0 and "No history" in out


def test_cli_diff_shows_names_and_the_consolidation_body_diff(
    ws: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "--dir", ws, "diff", "2")
    assert code == 0
    assert out.startswith("#2 consolidate at ")
    assert "+ ab — about ab" in out and "- a — about a" in out and "- b — about b" in out
    assert "body diff (replaced):" in out
    assert "-Alpha body." in out and "+Alpha and beta body." in out
    assert " second line" in out  # unchanged context line
    code, out, _ = run(capsys, "--dir", ws, "--json", "diff", "4")
    data = json.loads(out)
    assert data["removed"][0]["record"]["name"] == "c"  # read back from history/files
    assert data["diffs"] == []
    code, _, err = run(capsys, "--dir", ws, "diff", "9")
    assert code == 1 and "no history entry #9" in err
    code, _, err = run(capsys, "--dir", ws, "diff")
    assert code == 2 and "SEQ" in err


def test_cli_undo_applies_at_once_and_is_itself_recorded(
    ws: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "--dir", ws, "undo", "2")
    assert code == 0
    assert "brings back: a, b" in out and "removes: ab" in out and "entry #5" in out
    assert sorted(names(ws)) == ["a", "b"]
    entry = MemoryStore(ws).history(1)[0]
    assert entry.op == "undo" and entry.undoes == 2 and entry.actor["via"] == "cli"
    # The brought-back record's bytes are the original ones.
    assert MemoryStore(ws).get("a").body == "Alpha body.\nsecond line"
    # Undoing the undo puts the consolidation back.
    code, out, _ = run(capsys, "--dir", ws, "--json", "undo", "5")
    assert code == 0 and json.loads(out)["entry"] == 6
    assert names(ws) == ["ab"]


def test_cli_undo_a_second_time_is_nothing_to_do_whichever_entry(
    ws: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33 #8: `undo 1` a second time exited 1 (its records "since been replaced or
    removed") while `undo 2` said "nothing to do" and exited 0."""
    for seq in ("2", "1"):
        code, _, err = run(capsys, "--dir", ws, "undo", seq)
        assert code == 0, err
        before = MemoryStore(ws).history()
        code, out, err = run(capsys, "--dir", ws, "undo", seq)
        assert (code, err) == (0, "")
        assert "the current set already is that way; nothing to do" in out
        assert MemoryStore(ws).history() == before  # no entry written
    assert names(ws) == []
    # #4 forgot c: its add (#3) needs no undoing either.
    code, out, _ = run(capsys, "--dir", ws, "undo", "3")
    assert code == 0 and "nothing to do" in out


def test_cli_forget_and_undo_are_by_the_command_line_in_history(
    ws: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's history sample: a forget made here reads `the command line`."""
    assert run(capsys, "--dir", ws, "forget", "ab")[0] == 0
    code, out, _ = run(capsys, "--dir", ws, "history", "--limit", "1")
    assert code == 0
    [row] = [line for line in out.splitlines() if line.startswith("#5")]
    assert row.split()[3:] == ["forget", "-ab", "the", "command", "line"]


def test_cli_undo_conflict_is_exit_1_and_writes_nothing(
    ws: str, capsys: pytest.CaptureFixture[str]
) -> None:
    MemoryStore(ws).extend([rec("c", body="another c")])
    before = MemoryStore(ws).history()
    code, _out, err = run(capsys, "--dir", ws, "undo", "4")  # would bring back the old c
    assert code == 1 and "'c'" in err and "nothing changed" in err
    assert MemoryStore(ws).history() == before


def test_cli_restore(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--dir", ws, "restore", "1")
    assert code == 0 and "brings back: a, b" in out and "removes: ab" in out
    assert sorted(names(ws)) == ["a", "b"]
    code, out, _ = run(capsys, "--dir", ws, "restore", "1")
    assert code == 0 and "nothing to do" in out
    assert MemoryStore(ws).history(1)[0].op == "restore"  # the no-op wrote no entry


def test_cli_show_says_where_a_record_came_from(
    ws: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "--dir", ws, "undo", "2")
    code, out, _ = run(capsys, "--dir", ws, "show", "a")
    assert code == 0
    assert "from: brought back by undo of #2" in out
    run(capsys, "--dir", ws, "undo", "5")
    run(capsys, "--dir", ws, "undo", "6")  # a and b again, by undo of the undo's undo
    store = MemoryStore(ws)
    store.forget(["a", "b"])
    store.extend(
        [rec("a")],
        provenance={"a": {"query": "Which region sells most? " * 5, "origin": "user"}},
        actor={"notebook": "work/analysis.ipynb", "execution_count": 7},
    )
    code, out, _ = run(capsys, "--dir", ws, "show", "a")
    line = next(x for x in out.splitlines() if x.startswith("from: "))
    assert line.startswith("from: added 20") and "from analysis.ipynb cell [7]" in line
    assert "turn 'Which region sells most? Which region" in line and "…'" in line
    assert "origin: user" in line
    code, out, _ = run(capsys, "--dir", ws, "--json", "show", "a")
    assert json.loads(out)["history"]["origin"] == "user"


def test_show_without_a_journal_entry(workspace: str, capsys: pytest.CaptureFixture[str]) -> None:
    MemoryStore(workspace).extend([rec("a")])
    journal = Path(workspace, ".memory", "history", "journal.jsonl")
    journal.unlink()
    code, out, _ = run(capsys, "--dir", workspace, "show", "a")
    assert code == 0 and "from: history: no entry added it" in out


def console(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IPYMEMORY_", "ANTHROPIC_"))}
    return subprocess.run(
        [sys.executable, "-m", "ipymemory.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_console_script_in_a_subprocess(ws: str) -> None:
    done = console("--dir", ws, "--json", "history")
    assert done.returncode == 0, done.stderr
    assert [e["seq"] for e in json.loads(done.stdout)] == [4, 3, 2, 1]
    done = console("--dir", ws, "undo", "4")
    assert done.returncode == 0 and "brings back: c" in done.stdout
    assert "c" in names(ws)


# --- %memory in a real shell ---------------------------------------------------------


@pytest.fixture
def ip(ws: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.chdir(ws)
    with loaded_shell() as shell:
        yield shell


def test_magic_history_is_a_widget_with_a_static_form(ip: InteractiveShell, ws: str) -> None:
    widget = memory(ip, "history")
    assert isinstance(widget, HistoryWidget)
    bundle = widget._repr_mimebundle_()
    assert bundle[MIME_TYPE]["view"] == "history"
    assert [r["seq"] for r in bundle[MIME_TYPE]["entries"]] == [4, 3, 2, 1]
    assert "analysis.ipynb cell [12]" in bundle["text/html"]
    assert len(widget.rows.children) == 4
    assert widget.rows.children[2].children == ()  # diffs load when a row opens
    widget.rows.selected_index = 2
    html = widget.rows.children[2].children[0].value
    assert "body diff" in html and "Alpha and beta body." in html


def test_magic_diff_and_usage_errors(ip: InteractiveShell) -> None:
    view = memory(ip, "diff 2")
    assert isinstance(view, HistoryDiffView) and view.diffs
    with pytest.raises(UsageError, match="no history entry #7"):
        memory(ip, "diff 7")
    with pytest.raises(UsageError, match="SEQ"):
        memory(ip, "undo")
    with pytest.raises(UsageError, match="integer"):
        memory(ip, "undo two")


def test_magic_undo_is_proposed_then_committed(ip: InteractiveShell, ws: str) -> None:
    review = memory(ip, "undo 2")
    assert isinstance(review, HistoryChangeReview) and review.status == "pending"
    static = review.static_view()
    assert isinstance(static, HistoryChangeView)
    text = static.to_text()
    assert "Undo #2" in text and "brings back: a, b" in text and "removes: ab" in text
    assert "Pending" in text
    assert names(ws) == ["ab"]  # nothing before confirmation
    history = memory(ip, "history")  # a widget following the session's commits
    view = memory(ip, "commit")
    assert isinstance(view, HistoryChangeView) and view.status == "committed"
    assert "brings back: a, b" in view.to_text() and "removes: ab" in view.to_text()
    assert sorted(names(ws)) == ["a", "b"]
    assert review.status == "committed" and review.commit_button.disabled
    assert "Done" in review.body.value
    assert [r["op"] for r in history.view.rows][:1] == ["undo"]  # refreshed itself
    entry = MemoryStore(ws).history(1)[0]
    session = get_session()
    assert entry.undoes == 2 and entry.actor["session"] == session.id
    assert entry.actor["batch"] == session.batches[-1].id


def test_magic_restore_by_button_and_discard(ip: InteractiveShell, ws: str) -> None:
    first = memory(ip, "restore 1")
    assert isinstance(first, HistoryChangeReview)
    memory(ip, "discard")
    assert first.status == "discarded" and first.commit_button.disabled
    assert names(ws) == ["ab"]
    second = memory(ip, "restore 1")
    second.commit_button.click()
    assert second.status == "committed"
    assert sorted(names(ws)) == ["a", "b"]
    assert isinstance(memory(ip, "restore 1"), MessageView)  # already that set


def test_magic_undo_conflict_at_commit_time_is_shown_and_nothing_written(
    ip: InteractiveShell, ws: str
) -> None:
    review = memory(ip, "undo 4")  # brings back c
    MemoryStore(ws).extend([rec("c", body="a different c")])  # another kernel, meanwhile
    before = MemoryStore(ws).history()
    review.commit_button.click()
    assert review.status == "failed" and review.commit_button.description == "Retry"
    shown = html.unescape(review.body.value)
    assert "Refused, nothing was written:" in shown and "'c'" in shown
    assert MemoryStore(ws).history() == before


def test_magic_show_has_the_provenance_line(ip: InteractiveShell) -> None:
    view = memory(ip, "show ab")
    assert isinstance(view, RecordView)
    assert view.origin is not None and view.origin["op"] == "consolidate"
    assert "added by a consolidation" in view.to_text()
    assert "added by a consolidation" in view.to_html()


def test_static_history_view_escapes_journal_text(workspace: str) -> None:
    MemoryStore(workspace).extend(
        [rec("x")],
        provenance={"x": {"query": "<script>alert(1)</script>", "origin": "user"}},
        actor={"notebook": "<b>nb</b>.ipynb"},
    )
    view = HistoryView.load(MemoryStore(workspace))
    html = view.to_html()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<b>nb</b>" not in html


def test_a_displayed_proposal_is_replaced_by_its_outcome(ip: InteractiveShell, ws: str) -> None:
    """What a saved notebook keeps where the undo was proposed: the proposal, then what
    the later %memory commit decided -- not a stale 'pending', and not read as the
    commit itself (issue 43); the commit's own cell shows the commit."""
    with capture_output() as captured:
        ip.run_cell("%memory undo 2", store_history=True)
        done = memory(ip, "commit")
    first = captured.outputs[0].data[MIME_TYPE]
    assert first["view"] == "history-change" and first["status"] == "pending"
    updates = [o for o in captured.outputs if o.update]
    assert updates and updates[-1].data[MIME_TYPE]["status"] == "pending"
    assert updates[-1].data[MIME_TYPE]["later"].startswith("Done")
    shown = updates[-1].data["text/plain"]
    assert "Proposed here; decided later, in another cell: Done" in shown
    assert done.status == "committed" and "Done" in done.to_text()
    assert "decided later" not in done.to_text()


def test_a_proposal_decided_by_its_own_button_shows_the_outcome(
    ip: InteractiveShell, ws: str
) -> None:
    with capture_output() as captured:
        review = memory(ip, "undo 2")
        from IPython.display import display

        display(review)
        review.commit_button.click()
    updates = [o for o in captured.outputs if o.update]
    assert updates and updates[-1].data[MIME_TYPE]["status"] == "committed"
    assert "decided later" not in updates[-1].data["text/plain"]


def test_history_widget_entry_buttons_propose_undo_and_restore(
    ip: InteractiveShell, ws: str
) -> None:
    widget = memory(ip, "history")
    widget.rows.selected_index = 2  # entry #2, the consolidation
    panel = widget.rows.children[2]
    undo, restore = panel.children[1].children
    assert (undo.description, restore.description) == ("Undo #2", "Restore to #2")
    undo.click()
    review = panel.children[2]
    assert isinstance(review, HistoryChangeReview) and review.status == "pending"
    assert names(ws) == ["ab"]  # proposed, not applied
    review.commit_button.click()
    assert sorted(names(ws)) == ["a", "b"]
    # The widget followed the commit: the undo is the newest row now.
    assert widget.view.rows[0]["op"] == "undo" and widget.view.rows[0]["undoes"] == 2
    # Restore to #1 is now the current set: said, not proposed.
    widget.rows.selected_index = len(widget.rows.children) - 1
    last = widget.rows.children[-1]
    last.children[1].children[1].click()
    assert "nothing to do" in last.children[2].value
    # A change the store would refuse is not proposed: the row says why.
    widget.rows.selected_index = 1  # #4 forget c ... rows are newest first: #5 #4 #3 #2 #1
    row = widget.rows.children[1]
    MemoryStore(ws).extend([rec("c", body="a new c")])
    pending = len(get_session().pending)
    row.children[1].children[0].click()  # undo #4 would bring back the old c
    shown = html.unescape(row.children[2].value)
    assert "Refused, nothing was written:" in shown and "'c'" in shown
    assert len(get_session().pending) == pending
    assert MemoryStore(ws).get("c").body == "a new c"


def test_the_widget_shows_the_newest_entries_and_says_older_exist(
    ip: InteractiveShell, ws: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    widget = memory(ip, "history --limit 3")
    assert [r["seq"] for r in widget.view.rows] == [4, 3, 2] and widget.view.more
    assert "the newest 3" in widget.static_view().to_text()
    assert "Older entries: history --limit 6." in widget.static_view().to_text()
    assert not memory(ip, "history --limit 4").view.more
    monkeypatch.setattr("ipymemory._constants.HISTORY_WIDGET_LIMIT", 2)
    assert [r["seq"] for r in memory(ip, "history").view.rows] == [4, 3]


def test_undo_is_applied_in_commit_mode_off(ip: InteractiveShell, ws: str) -> None:
    """Mode off stops writing what turns extract; an undo asked for is applied (as forget)."""
    ip.run_line_magic("config", "IPyMemory.commit_mode = 'off'")
    review = memory(ip, "undo 4")
    review.commit_button.click()
    assert review.status == "committed" and "c" in names(ws)


def test_a_refresh_keeps_the_open_entry_and_its_outcome(ip: InteractiveShell) -> None:
    widget = memory(ip, "history")
    widget.rows.selected_index = 2  # #2
    panel = widget.rows.children[2]
    panel.children[1].children[0].click()  # Undo #2
    panel.children[2].commit_button.click()
    # The commit refreshed the timeline (#5 on top); #2 is still open, showing "Done".
    assert [r["seq"] for r in widget.view.rows] == [5, 4, 3, 2, 1]
    assert widget.rows.selected_index == 3 and widget.rows.children[3] is panel
    assert "Done" in panel.children[2].body.value


def test_history_says_a_notebook_cell_made_a_command_change(ip: InteractiveShell, ws: str) -> None:
    """Issue 43: a %memory forget in a cell is by that cell (or "a notebook"), never by
    "ipymemory 0.1.0"."""
    MemoryStore(ws).extend([rec("d")])
    ip.run_cell("%memory forget d", store_history=True)
    view = memory(ip, "history --limit 1")
    [row] = view.static_view().to_json()["entries"]
    assert row["op"] == "forget"
    assert row["by"].startswith("cell [") or row["by"] == "a notebook", row["by"]
    assert "ipymemory" not in row["by"]
