"""Every ``%memory`` line of a cell shows its view where it runs
(``ipymemory/notebook/shown.py``, issue 32): through a real kernel (nbclient runs the
cells in ipykernel and keeps their outputs) and a real InteractiveShell printing to a
terminal's stdout, where each view is printed exactly once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell
from kernel_support import kernel_env, notebook_in, run_cell
from nbclient import NotebookClient
from record_support import rec

from ipymemory import MemoryStore
from ipymemory.notebook.shown import ShowEachLine
from ipymemory.views import MIME_TYPE, ManifestView, StatusView


@pytest.fixture
def seeded(workspace: str) -> MemoryStore:
    """Two records, then one forgotten: history entries #1 (add) and #2 (forget)."""
    store = MemoryStore(workspace)
    store.extend([rec("alpha"), rec("beta")])
    store.forget(["beta"])
    return store


@pytest.fixture
def kernel(
    seeded: MemoryStore, workspace: str
) -> Iterator[tuple[NotebookClient, nbformat.NotebookNode]]:
    client, nb = notebook_in(workspace)
    with client.setup_kernel(env=kernel_env()):
        yield client, nb


def views(cell: Any) -> list[tuple[str, str]]:
    """(output type, ipymemory view) of each output of ``cell`` that is a view."""
    return [
        (o["output_type"], o["data"][MIME_TYPE]["view"])
        for o in cell.outputs
        if MIME_TYPE in o.get("data", {})
    ]


def test_in_a_kernel_every_memory_line_of_a_cell_shows_its_view(
    kernel: tuple[NotebookClient, nbformat.NotebookNode],
) -> None:
    client, nb = kernel
    run_cell(client, nb, "%load_ext ipymemory")
    cell = run_cell(client, nb, "%memory list\n%memory history\n%memory status")
    # Each where it ran; the last one is the cell's result, as before.
    assert views(cell) == [
        ("display_data", "manifest"),
        ("display_data", "history"),
        ("execute_result", "status"),
    ]
    assert cell.outputs[-1]["execution_count"] == cell["execution_count"]
    looped = run_cell(client, nb, "for _ in range(2):\n    %memory check\n'done'")
    assert views(looped) == [("display_data", "check")] * 2
    # An assignment shows nothing: the name holds the view.
    assigned = run_cell(client, nb, "x = %memory list\ny = %memory status")
    assert assigned.outputs == []
    told = run_cell(client, nb, "print(type(x).__name__, type(y).__name__)")
    assert told.outputs[0]["text"].split() == ["ManifestView", "StatusView"]


def test_in_a_kernel_a_commit_shows_its_view_once_and_the_review_changes_in_place(
    kernel: tuple[NotebookClient, nbformat.NotebookNode], seeded: MemoryStore
) -> None:
    client, nb = kernel
    run_cell(client, nb, "%load_ext ipymemory")
    proposed = run_cell(client, nb, "%memory undo 2")
    committed = run_cell(client, nb, "%memory check\n%memory commit")
    assert views(committed) == [("display_data", "check"), ("execute_result", "history-change")]
    assert committed.outputs[-1]["data"][MIME_TYPE]["status"] == "committed"
    # The proposal's own output still reads as the proposal and says what the later cell
    # decided (a saved notebook keeps it; issue 43: not a second copy of the commit).
    [(_, view)] = views(proposed)
    assert view == "history-change"
    shown = proposed.outputs[0]["data"]
    assert shown[MIME_TYPE]["status"] == "pending" and shown[MIME_TYPE]["later"].startswith("Done")
    assert "Proposed here; decided later, in another cell: Done" in shown["text/plain"]
    assert [r.name for r in seeded.records()] == ["alpha", "beta"]


@pytest.fixture
def terminal(ip: InteractiveShell, seeded: MemoryStore) -> InteractiveShell:
    """The real InteractiveShell: IPython's own display publisher prints to stdout, as
    in a terminal (no capture_output: that one records instead of printing)."""
    return ip


def printed(ip: InteractiveShell, capsys: pytest.CaptureFixture[str], source: str) -> str:
    capsys.readouterr()
    ip.run_cell(source, store_history=True)
    return capsys.readouterr().out


def test_in_a_terminal_every_memory_line_is_printed_once_in_order(
    terminal: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    out = printed(terminal, capsys, "%memory list\n%memory check\n%memory status")
    heads = ["Memory: 1 record in", "OK: ", "Directory  "]
    assert [out.count(head) for head in heads] == [1, 1, 1]
    assert out.index(heads[0]) < out.index(heads[1]) < out.index(heads[2])


def test_in_a_terminal_commit_and_discard_print_once(
    terminal: InteractiveShell, capsys: pytest.CaptureFixture[str], seeded: MemoryStore
) -> None:
    assert printed(terminal, capsys, "%memory undo 2").count("brings back: beta") == 1
    out = printed(terminal, capsys, "%memory commit")
    assert out.count("Done (a new history entry records it") == 1
    assert out.count("brings back: beta") == 1
    # Proposed and decided in one cell: the proposal, then its outcome, each once.
    out = printed(terminal, capsys, "%memory undo 3\n%memory discard")
    assert out.count("Pending: nothing is written until you commit it") == 1
    assert out.count("Discarded: nothing was written.") == 1
    assert [r.name for r in seeded.records()] == ["alpha", "beta"]


def test_the_last_line_stays_the_cells_result_and_an_assignment_shows_nothing(
    terminal: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    result = terminal.run_cell("%memory check\n%memory status", store_history=True)
    assert isinstance(result.result, StatusView)
    assert isinstance(terminal.user_ns["_"], StatusView)
    assert printed(terminal, capsys, "x = %memory list") == ""
    assert isinstance(terminal.user_ns["x"], ManifestView)
    # Unloaded, the transformer is gone with the magic.
    terminal.run_line_magic("unload_ext", "ipymemory")
    assert not any(isinstance(t, ShowEachLine) for t in terminal.ast_transformers)
    terminal.run_line_magic("load_ext", "ipymemory")
    assert sum(isinstance(t, ShowEachLine) for t in terminal.ast_transformers) == 1
