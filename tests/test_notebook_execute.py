"""The teaching notebook: one file, stored without outputs, valid, and it executes offline
under nbclient (the main-job runner) with widget state saved. Its demo memory is the
.memory/ of its own directory, reset only when it holds demo records only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

from ipymemory import MemoryRecord, MemoryStore, MemoryType
from ipymemory.notebook.run_teaching import NOTEBOOK_NAME, execute, main, packaged_notebook
from ipymemory.views import MIME_TYPE

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
# The editable install's package data is a plain file in the clone.
PACKAGED = Path(str(packaged_notebook()))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def test_the_committed_notebook_is_valid_python_without_outputs() -> None:
    # Edited in Jupyter, it must be saved with outputs cleared (Edit > Clear Outputs of All
    # Cells): the executed copy is the runner's product, not the source.
    nb = nbformat.read(str(PACKAGED), as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, "the notebook has no code cells"
    for index, cell in enumerate(code):
        where = f"code cell {index} ({cell.id})"
        assert cell.outputs == [] and cell.execution_count is None, f"{where} has outputs"
        # Magics become Python as IPython would run them; a syntax error fails here,
        # before any kernel starts (ruff lints the cells: `ruff check ipymemory`).
        compile(TransformerManager().transform_cell(cell.source), where, "exec")
    assert "widgets" not in nb.metadata


def test_the_clone_notebook_is_a_link_to_the_packaged_one() -> None:
    # One source: the file users open from notebooks/ is the package data itself.
    link = NOTEBOOKS / NOTEBOOK_NAME
    assert link.is_symlink() and link.resolve() == PACKAGED.resolve()
    assert sorted(p.name for p in NOTEBOOKS.iterdir() if not p.name.startswith(".")) == [
        NOTEBOOK_NAME
    ]


def _tree(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in sorted(root.rglob("*"))}


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> nbformat.NotebookNode:
    output = tmp_path_factory.mktemp("run") / "executed.ipynb"
    before = _tree(NOTEBOOKS), _tree(PACKAGED.parent)
    # The main job exactly as the README runs it (the runner strips ANTHROPIC_* itself).
    assert main(["--output", str(output), "--timeout", "240"]) == 0
    # It ran from a temporary copy: no .memory/ or scratch files next to the real notebook.
    assert (_tree(NOTEBOOKS), _tree(PACKAGED.parent)) == before
    return nbformat.read(str(output), as_version=4)


def _outputs(nb: nbformat.NotebookNode, source_start: str) -> list[Any]:
    cells = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(source_start)]
    assert cells, f"no code cell starts with {source_start!r}"
    return [o for c in cells for o in c.outputs]


def _views(nb: nbformat.NotebookNode, view: str) -> list[dict[str, Any]]:
    found = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {}).get(MIME_TYPE)
            if data and data.get("view") == view:
                found.append(data)
    return found


def _stream(nb: nbformat.NotebookNode, source_start: str) -> str:
    return "".join(
        o.get("text", "") for o in _outputs(nb, source_start) if o.output_type == "stream"
    )


def test_runs_without_errors_and_saves_widget_state(executed: nbformat.NotebookNode) -> None:
    errors = [o for c in executed.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert errors == []
    code = [c for c in executed.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code)
    state = executed.metadata["widgets"][WIDGET_STATE]["state"]
    manifest = _outputs(executed, "%memory manifest")
    assert len(manifest) == 1
    data = manifest[0]["data"]
    # The widget view and its static fallback travel together; the model is saved.
    assert data[WIDGET_VIEW]["model_id"] in state
    assert data[MIME_TYPE]["view"] == "manifest" and "text/html" in data
    assert len(data[MIME_TYPE]["records"]) == 4


def test_authority_section(executed: nbformat.NotebookNode) -> None:
    checks = _views(executed, "check")
    assert checks and checks[0]["ok"] is False
    reasons = " ".join(p["reason"] for p in checks[0]["problems"])
    assert "does not match manifest.json" in reasons and "not listed in manifest.json" in reasons
    repaired = _stream(executed, "# Repair with the command-line tool")
    # The unlisted valid record is kept in history/files/, never deleted (issue 19 #1).
    assert "0 file(s) removed, 1 kept" in repaired and repaired.rstrip().endswith(": ok")
    assert "kept sneaky-" in repaired
    ignored = _stream(executed, "memdir = ")
    assert "sneaky" not in ignored.split("catalog sent")[0] and "ghost" not in ignored


def test_selection_section_shows_model_and_fallback_with_reasons(
    executed: nbformat.NotebookNode,
) -> None:
    selections = _views(executed, "selection")
    # SPEC §13: the first request's choice is the keyword ranking's; the side model's
    # pick, asked beside it, adds to it -- or fails, and the ranking stands.
    assert {s["source"] for s in selections} <= {"keyword", "all", "none"}
    picks = [s["model_pick"] for s in selections]
    assert "model" in picks and picks.count("fallback") >= 3
    reasons = " | ".join(s["model_reason"] or "" for s in selections)
    assert "not JSON" in reasons and "max_tokens" in reasons and "prefers-spaces" in reasons
    # A set that fits the limit is taken whole, without asking the selector (SPEC §12).
    whole = [s for s in selections if s["source"] == "all"]
    assert whole and whole[0]["reason"] == "all 4 records: the set fits"
    assert len(whole[0]["records"]) == 4
    seen = json.loads(_stream(executed, "# What the selector saw"))
    # SPEC §9: the selector also knows today's date.
    assert set(seen) == {"catalog", "given", "query", "today"}
    assert "every language" not in seen["catalog"]
    status = _views(executed, "status")
    assert any(
        s["last_error"] == "Memory selection failed; deterministic fallback used" for s in status
    )


def test_extraction_and_review_section(executed: nbformat.NotebookNode) -> None:
    history = _stream(executed, "session = get_session()")
    assert "['tool_use']" in history and "['tool_result']" in history
    assert "memories in the canonical history: False" in history
    assert "memories in the request sent to the model: True" in history
    # SPEC §13: the trace of the turn's requests and of the model's pick.
    assert "request 1: added " in history and "request 2: added nothing new" in history
    assert "pipeline-bugs-linear, nothing the requests lacked" in history
    batches = _views(executed, "batch")
    reviewed = [b for b in batches if b["items"] and b["status"] == "committed"]
    assert reviewed and reviewed[0]["committed"] == [
        "friday-deploy-freeze",
        "deploy-notes-location",
    ]
    assert [i["accepted"] for i in reviewed[0]["items"]] == [True, True, False]
    # The two items only the file says were held, and committed on an explicit accept.
    decided = _stream(executed, "review = last_turn().review")
    assert "held for review: ['friday-deploy-freeze', 'deploy-notes-location']" in decided
    failed = [e for e in _views(executed, "error") if e["outcome"] == "Memory extraction failed"]
    assert failed and "priority" in failed[0]["error"]


def test_consolidation_and_crash_section(executed: nbformat.NotebookNode) -> None:
    refused = [e for e in _views(executed, "error") if e["where"] == "Consolidation"]
    assert refused and "source_names" in refused[0]["error"]
    plans = [b for b in _views(executed, "batch") if b["consolidation"]]
    assert plans and plans[-1]["status"] == "committed"
    assert plans[-1]["consolidation"]["source_names"] == [
        "prefers-tabs",
        "tabs-in-python",
        "tabs-in-js",
    ]
    table = _stream(executed, "from ipymemory.store.store import COMMIT_STEPS")
    rows = [line.split() for line in table.splitlines()[1:] if line.strip()]
    assert len(rows) >= 10 and all(row[1] == "killed" for row in rows)
    outcomes = [" ".join(row[2:]) for row in rows]
    assert set(outcomes) == {"old set", "new set"}
    # Old set up to the manifest swap, the new set from it on.
    first_new = outcomes.index("new set")
    assert rows[first_new][0] == "manifest-replaced"
    assert outcomes[:first_new] == ["old set"] * first_new


def test_history_section_proposes_the_undo_commits_it_then_undoes_that(
    executed: nbformat.NotebookNode,
) -> None:
    merged = ["prefers-tabs", "tabs-in-python", "tabs-in-js"]
    [history] = _views(executed, "history")
    newest = history["entries"][0]
    assert newest["op"] == "consolidate" and newest["removed"] == merged
    assert newest["added"] == ["indent-with-tabs"]
    # %memory undo proposes; %memory commit applies that very batch.
    change, done = _views(executed, "history-change")
    assert (change["op"], change["seq"]) == ("undo", newest["seq"])
    assert change["returning"] == merged and change["leaving"] == ["indent-with-tabs"]
    # The commit reports what the change did, not "0 extracted memories" (issue 19 #12).
    assert (done["batch"], done["status"]) == (change["batch"], "committed")
    assert done["returning"] == merged and done["leaving"] == ["indent-with-tabs"]
    assert not [b for b in _views(executed, "batch") if b["id"] == change["batch"]]
    names, body = _stream(executed, "# The sources are back").splitlines()[:2]
    assert all(repr(name) in names for name in merged) and "'indent-with-tabs'" not in names
    assert body == "JavaScript files: tabs."  # the source's body, as it was
    redone = _stream(executed, "# An undo is a commit").strip()
    seq = newest["seq"]
    assert redone.startswith(f"#{seq + 2} undo of #{seq + 1}: ")
    assert "'indent-with-tabs'" in redone and not any(repr(name) in redone for name in merged)


def test_session_memory_section_and_real_model_hint(executed: nbformat.NotebookNode) -> None:
    text = _stream(executed, "class TwoScripts")
    assert "canonical history: 8 messages" in text
    assert (
        "last request sent:  1 message(s)" in text and "Summary of the earlier conversation" in text
    )
    # Issue 43 item 3: the model's own summary, not the truncation fallback taught as if
    # it were the summary; and no failure hidden behind it.
    assert "The user loaded sales.csv (columns: month, revenue, region)" in text
    assert "Automatic truncation" not in text and "last error: None" in text
    tomorrow = _stream(executed, "# Memory outlives the session")
    assert "history: 0 messages" in tomorrow and "indent-with-tabs" in tomorrow
    final = [s for s in _views(executed, "status")][-1]
    assert final["model"] is None and final["records"] == 6
    assert any("ANTHROPIC_API_KEY" in c.source for c in executed.cells if c.cell_type == "markdown")


def _manifest_names(nb: nbformat.NotebookNode) -> list[str]:
    """The record names of the notebook's last ``%memory list`` output (the final set)."""
    data = [o["data"][MIME_TYPE] for o in _outputs(nb, "%memory list") if "data" in o]
    return [r["name"] for r in data[-1]["records"]]


def test_the_demo_memory_is_the_notebook_directory_and_a_rerun_starts_over(
    tmp_path: Path,
) -> None:
    # "Run All" twice in one kernel: the second reset accepts the set the first left, and
    # %reload_ext gives the second run fresh sessions (nothing rejected before is skipped).
    nb = nbformat.read(str(PACKAGED), as_version=4)
    half = len(nb.cells)
    nb.cells += [nbformat.from_dict({**c, "id": f"again-{c['id']}"}) for c in nb.cells]
    twice = tmp_path / "twice.ipynb"
    nbformat.write(nb, str(twice))
    nbdir = tmp_path / "nbdir"
    nbdir.mkdir()
    output = tmp_path / "twice.executed.ipynb"
    execute(twice, output, timeout=240, workdir=nbdir)
    ran = nbformat.read(str(output), as_version=4)
    names = [r.name for r in MemoryStore(nbdir).records()]
    first, second = (
        nbformat.from_dict({**ran, "cells": cells})
        for cells in (ran.cells[:half], ran.cells[half:])
    )
    assert names and _manifest_names(first) == _manifest_names(second) == names
    assert _views(second, "status")[-1]["directory"] == str(nbdir / ".memory")
    # Only what .gitignore lists for notebooks/ is made next to the notebook.
    assert sorted(p.name for p in nbdir.iterdir()) == [".memory", "ipymemory-demo"]


def test_a_directory_with_other_memories_is_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = MemoryStore(tmp_path)
    store.extend(
        [
            MemoryRecord(
                name="prefers-tabs",  # a demo name: alone it would be reset
                type=MemoryType.USER,
                description="Indents with tabs",
                body="Tabs.",
            ),
            MemoryRecord(
                name="real-preference",
                type=MemoryType.FEEDBACK,
                description="Someone's real memory",
                body="Keep me.",
            ),
        ]
    )
    before = {p.name: p.read_bytes() for p in store.root.iterdir() if p.is_file()}
    output = tmp_path / "refused.ipynb"
    assert main(["--output", str(output), "--workdir", str(tmp_path)]) == 1
    assert "FAILED" in capsys.readouterr().err
    nb = nbformat.read(str(output), as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    # A short message, no traceback; no later cell ran.
    [message] = first.outputs
    assert message["output_type"] == "stream" and message["name"] == "stderr"
    assert message["text"].startswith(f"UsageError: Not resetting {store.root}: ")
    assert "record 'real-preference'" in message["text"] and "Traceback" not in message["text"]
    later = [c for c in nb.cells if c.cell_type == "code"][1:]
    assert all(c.execution_count is None for c in later)
    after = {p.name: p.read_bytes() for p in store.root.iterdir() if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".memory", "refused.ipynb"]


def test_scopes_and_staleness_section(executed: nbformat.NotebookNode) -> None:
    """SPEC §11 in the teaching notebook: a user item kept user-wide, both scopes listed,
    a changed source reported by check and said in the injected block."""
    assert "kept in: {'prefers-polars': 'user'}" in _stream(executed, "review = last_turn()")
    [scoped] = _views(executed, "scoped")
    assert [r["name"] for r in scoped["scopes"]["user"]["records"]] == ["prefers-polars"]
    assert "prefers-polars" not in [r["name"] for r in scoped["scopes"]["project"]["records"]]
    assert scoped["scopes"]["user"]["directory"].endswith("ipymemory-demo/user/.memory")
    check = _views(executed, "check")[-1]
    stale = [p for p in check["problems"] if "source changed since saved" in p["reason"]]
    assert stale and all(p["severity"] == "warning" for p in stale)
    assert all("ipymemory-demo/deploy.md (changed)" in p["reason"] for p in stale)
    block = _stream(executed, "# The block the next turn would send")
    assert "## prefers-polars (user, user-wide, saved " in block
    assert "source changed since saved: ipymemory-demo/deploy.md" in block


def _plain(nb: nbformat.NotebookNode, source_start: str) -> str:
    """The text/plain of the outputs of the cells starting with ``source_start``."""
    return "\n".join(
        "".join(o["data"].get("text/plain", "")) for o in _outputs(nb, source_start) if "data" in o
    )


def test_a_proposal_decided_by_a_later_cell_reads_as_a_proposal(
    executed: nbformat.NotebookNode,
) -> None:
    """Issue 43 item 11: the saved %memory consolidate and %memory undo cells show what
    they proposed and that a later cell decided it -- not "committed" / "Done" as if they
    had committed, with the %memory commit cell after them showing the same block."""
    proposals = [
        c for c in executed.cells if c.cell_type == "code" and c.source == "%memory consolidate"
    ]
    plan = "\n".join("".join(o["data"]["text/plain"]) for o in proposals[-1].outputs)
    assert plan.startswith("Memory batch (proposed here): a consolidation plan")
    assert "Proposed here; decided later, in another cell: Committed" in plan
    commits = [c for c in executed.cells if c.cell_type == "code" and c.source == "%memory commit"]
    committed = "".join(commits[0].outputs[0]["data"]["text/plain"])
    assert committed.startswith("Memory batch (committed)") and committed != plan
    undo = _plain(executed, "# Propose undoing the consolidation")
    assert "Proposed here; decided later, in another cell: Done" in undo
    assert "".join(commits[1].outputs[0]["data"]["text/plain"]).endswith(
        "Done (a new history entry records it; it can be undone too)."
    )
