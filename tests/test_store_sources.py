"""Staleness from sources (SPEC §11, issue 26): a record keeps the sha256 of the files it
depends on -- those it names or whose words it carries, not every file its turn read --
and ``check`` and ``%memory status`` say when one changed or vanished.

Real turns: the real ``anthropic`` SDK against the scripted Messages-API server, real
``read_file`` over files on disk, a real IPython shell for ``%memory status``."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from messages_server import MessagesServer, text, tool_use
from record_support import rec
from turn_support import memory_text, model_for, records_reply

from ipymemory import AgentSession, MemoryStore, SessionConfig
from ipymemory import _constants as C
from ipymemory.cli import main as cli_main
from ipymemory.store import maintenance
from ipymemory.store.sources import SourceChange, file_sha256, stale_records

CONVENTIONS = "# Conventions\n\nIndent with tabs. Dates in ISO 8601.\n"
SALES = "region,amount_keur\nnorth,1200\nsouth,980\n"

#: A record about CONVENTIONS.md (it names the file), and a preference said in the same
#: turn, which depends on no file.
ABOUT_FILE = rec(
    "indent-tabs",
    type="project",
    description="CONVENTIONS.md: tabs and ISO dates",
    body="Follow CONVENTIONS.md: indent with tabs, write dates in ISO 8601.",
)
SHORT = rec(
    "short-answers", type="feedback", description="Keep answers short", body="Answer briefly."
)


TOOL_FLAG = "comes from tool output (a file read or code output), not from the user"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def remembered_turn(messages_server: MessagesServer, workspace: str) -> None:
    """One turn in which the agent reads CONVENTIONS.md and the records proposed from
    it are committed on review."""
    Path(workspace, "CONVENTIONS.md").write_text(CONVENTIONS)
    messages_server.enqueue(
        tool_use("read_file", {"path": "CONVENTIONS.md"}),
        text("The conventions say tabs."),
        records_reply(ABOUT_FILE, SHORT),
    )
    session = AgentSession(workspace, model=model_for(messages_server.base_url))
    result = session.run_turn("Keep answers short. What do CONVENTIONS.md say?")
    assert result.batch is not None
    # What the file says is tool output (a question does not vouch for it): held, and
    # committed by naming it, as a person's tick does (SPEC §7).
    assert result.batch.flags == {"indent-tabs": (TOOL_FLAG,)}
    assert session.commit(result.batch, accept=["indent-tabs"]).ok


def test_the_journal_keeps_the_hash_of_each_file_read(
    messages_server: MessagesServer, workspace: str
) -> None:
    remembered_turn(messages_server, workspace)
    entry = MemoryStore(workspace).history(1)[0]
    assert entry.provenance["indent-tabs"]["files_sha256"] == {
        "CONVENTIONS.md": digest(CONVENTIONS)
    }
    # Read in the same turn, not a source: a preference depends on no file.
    assert entry.provenance["short-answers"]["files_read"] == ["CONVENTIONS.md"]
    assert "files_sha256" not in entry.provenance["short-answers"]
    assert stale_records(MemoryStore(workspace)) == {}
    assert maintenance.check(workspace) == []


def test_a_rewritten_source_is_reported_by_check_and_a_removed_one_as_vanished(
    messages_server: MessagesServer, workspace: str
) -> None:
    remembered_turn(messages_server, workspace)
    Path(workspace, "CONVENTIONS.md").write_text(CONVENTIONS.replace("tabs", "spaces"))
    store = MemoryStore(workspace)
    assert stale_records(store) == {"indent-tabs": (SourceChange("CONVENTIONS.md", "changed"),)}
    report = maintenance.check(workspace)
    assert report.ok  # a warning, not an error
    [problem] = report
    assert problem.severity == "warning" and not problem.leftover
    assert "source changed since saved: CONVENTIONS.md (changed)" in problem.reason

    os.unlink(Path(workspace, "CONVENTIONS.md"))
    assert stale_records(store) == {"indent-tabs": (SourceChange("CONVENTIONS.md", "vanished"),)}
    # Put back as it was: nothing to report.
    Path(workspace, "CONVENTIONS.md").write_text(CONVENTIONS)
    assert stale_records(store) == {}


def test_a_batch_decided_later_from_the_command_line_keeps_its_sources_hashes(
    messages_server: MessagesServer, workspace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33 #5: a batch saved in pending/ and committed with `ipymemory commit
    --batch` lost the hashes: never reported stale. The file is read back as untrusted:
    per-item sources that are not {path: sha256} make it unreadable, said by pending."""
    Path(workspace, "CONVENTIONS.md").write_text(CONVENTIONS)
    messages_server.enqueue(
        tool_use("read_file", {"path": "CONVENTIONS.md"}),
        text("The conventions say tabs."),
        records_reply(ABOUT_FILE),
    )
    session = AgentSession(workspace, model=model_for(messages_server.base_url))
    result = session.run_turn("What do CONVENTIONS.md say?")
    assert result.batch is not None and result.batch.status == "pending"
    saved = Path(workspace, ".memory", "pending", f"{result.batch.id}.json")
    good = saved.read_text()
    data = json.loads(good)
    assert data["sources"] == {"indent-tabs": {"CONVENTIONS.md": digest(CONVENTIONS)}}
    data["sources"]["indent-tabs"]["bad.md"] = "not a hash"
    saved.write_text(json.dumps(data))
    cli_main(["--dir", workspace, "pending"])
    assert "unreadable" in (out := capsys.readouterr().out) and "sources must map" in out
    saved.write_text(good)
    assert (
        cli_main(
            ["--dir", workspace, "commit", "--batch", result.batch.id, "--accept", "indent-tabs"]
        )
        == 0
    )
    assert "Committed: indent-tabs" in capsys.readouterr().out
    entry = MemoryStore(workspace).history(1)[0]
    assert entry.provenance["indent-tabs"]["files_sha256"] == {
        "CONVENTIONS.md": digest(CONVENTIONS)
    }
    Path(workspace, "CONVENTIONS.md").write_text("# rewritten\n")
    assert stale_records(MemoryStore(workspace)) == {
        "indent-tabs": (SourceChange("CONVENTIONS.md", "changed"),)
    }


def test_status_says_which_record_has_a_changed_source(
    messages_server: MessagesServer, workspace: str, ip: InteractiveShell
) -> None:
    remembered_turn(messages_server, workspace)
    Path(workspace, "CONVENTIONS.md").write_text("# rewritten\n")
    view = ip.run_line_magic("memory", "status")
    assert "source changed since saved: indent-tabs (CONVENTIONS.md (changed))" in view.to_text()


def test_a_source_too_big_to_hash_is_listed_without_a_hash_and_never_stale(
    messages_server: MessagesServer, workspace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(C, "SOURCE_HASH_LIMIT", len(CONVENTIONS) - 1)
    remembered_turn(messages_server, workspace)
    prov = MemoryStore(workspace).history(1)[0].provenance["indent-tabs"]
    assert prov["files_read"] == ["CONVENTIONS.md"]
    assert "files_sha256" not in prov
    Path(workspace, "CONVENTIONS.md").write_text("# rewritten\n")
    assert stale_records(MemoryStore(workspace)) == {}


def test_journal_paths_are_untrusted(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.md").write_text("a")
    (tmp_path / "outside.md").write_text("secret")
    (root / "sub").mkdir()
    (root / "sub" / "b.md").write_text("b")
    os.symlink(tmp_path / "outside.md", root / "link.md")
    os.symlink(tmp_path, root / "linkdir")
    os.mkfifo(root / "pipe")
    assert file_sha256(root, "a.md") == digest("a")
    assert file_sha256(root, "sub/b.md") == digest("b")
    for bad in (
        "../outside.md",
        str(tmp_path / "outside.md"),
        "link.md",
        "linkdir/outside.md",
        "sub/../a.md",
        "./a.md",
        "",
        "pipe",  # a FIFO: opened without blocking, then refused
        "sub",
        "missing.md",
    ):
        assert file_sha256(root, bad) is None, bad


def test_a_hand_edited_journal_cannot_make_check_read_outside_the_workspace(
    messages_server: MessagesServer, workspace: str, tmp_path: Path
) -> None:
    remembered_turn(messages_server, workspace)
    journal = Path(workspace, ".memory", "history", "journal.jsonl")
    lines = journal.read_text().splitlines()
    entry = json.loads(lines[-1])
    entry["provenance"]["indent-tabs"]["files_sha256"] = {
        "../../etc/passwd": "0" * 64,
        "CONVENTIONS.md": digest(CONVENTIONS),
    }
    journal.write_text("\n".join([*lines[:-1], json.dumps(entry, sort_keys=True)]) + "\n")
    stale = stale_records(MemoryStore(workspace))
    # The escaping path is never opened: it counts as vanished.
    assert stale == {"indent-tabs": (SourceChange("../../etc/passwd", "vanished"),)}


def test_only_the_record_that_depends_on_a_changed_file_is_stale(
    messages_server: MessagesServer, workspace: str
) -> None:
    remembered_turn(messages_server, workspace)
    Path(workspace, "CONVENTIONS.md").write_text(CONVENTIONS.replace("tabs", "spaces"))
    stale = stale_records(MemoryStore(workspace))
    assert stale == {"indent-tabs": (SourceChange("CONVENTIONS.md", "changed"),)}
    assert "short-answers" not in stale


def test_a_record_about_a_file_an_earlier_turn_read_is_stale_when_it_changes(
    messages_server: MessagesServer, workspace: str
) -> None:
    Path(workspace, "sales.csv").write_text(SALES)
    units = rec(
        "sales-units",
        type="project",
        description="sales.csv amounts are in thousands of euros",
        body="The amount_keur column of sales.csv holds thousands of euros.",
    )
    messages_server.enqueue(
        tool_use("read_file", {"path": "sales.csv"}),
        text("Two regions, north and south."),
        records_reply(),
        # The second turn reads nothing; the record is about the file the first read.
        text("Noted: thousands of euros."),
        records_reply(units),
    )
    session = AgentSession(
        workspace,
        model=model_for(messages_server.base_url),
        config=SessionConfig(commit_mode="auto"),
    )
    session.run_turn("What is in sales.csv?")
    session.run_turn("Its amounts are thousands of euros, remember that.")
    entry = MemoryStore(workspace).history(1)[0]
    assert entry.provenance["sales-units"]["files_read"] == []
    assert entry.provenance["sales-units"]["files_sha256"] == {"sales.csv": digest(SALES)}
    Path(workspace, "sales.csv").write_text(SALES + "east,700\n")
    assert stale_records(MemoryStore(workspace)) == {
        "sales-units": (SourceChange("sales.csv", "changed"),)
    }


def test_a_record_that_names_a_file_as_context_is_not_stale_when_a_row_is_added(
    messages_server: MessagesServer, workspace: str
) -> None:
    """Issue 44: after one row was appended to the sales CSV, only the record about the
    file is stale -- not the deadline whose body names the CSV as context, nor the
    personnel change the extractor elaborated with two of the CSV's words."""
    orders = (
        "order_id,region,rep,revenue_eur\n1001,NORTH,T. Brandt,1820.00\n1002,SOUTH,A. Ruiz,940.50\n"
    )
    Path(workspace, "sales.csv").write_text(orders)
    deadline = rec(
        "q4-report-due",
        type="project",
        description="Q4 board report due Fri 2026-12-11",
        body="The Q4 board report is due Fri 2026-12-11 (said as 'next Friday'); it is built "
        "from sales.csv.",
    )
    layout = rec(
        "sales-layout",
        type="reference",
        description="sales.csv: one row per order, revenue_eur net of VAT",
        body="sales.csv has one row per order with order_id, region, rep and revenue_eur; "
        "revenue_eur is net of VAT.",
    )
    handover = rec(
        "maria-north",
        type="project",
        description="Maria Keller takes over the northern accounts in January",
        body="From January 2027 Maria Keller takes over the northern accounts (region NORTH) "
        "from Tom (T. Brandt in the rep column).",
    )
    messages_server.enqueue(
        tool_use("read_file", {"path": "sales.csv"}),
        text("One row per order; two so far."),
        records_reply(deadline, layout),
        text("Noted: Maria takes over the northern accounts in January."),
        records_reply(handover),
    )
    session = AgentSession(
        workspace,
        model=model_for(messages_server.base_url),
        config=SessionConfig(commit_mode="auto"),
    )
    first = session.run_turn(
        "read sales.csv. The Q4 board report is built from this file and is due next "
        "Friday. revenue_eur is net of VAT"
    )
    if first.held is not None:  # what the file says is held: a person accepts it
        assert session.commit(first.held, accept=first.held.names).ok
    session.run_turn("Maria Keller takes over the northern accounts from Tom in January.")
    assert {r.name for r in session.store.records()} == {
        "q4-report-due",
        "sales-layout",
        "maria-north",
    }
    Path(workspace, "sales.csv").write_text(orders + "1003,SOUTH,A. Ruiz,1130.00\n")
    assert stale_records(MemoryStore(workspace)) == {
        "sales-layout": (SourceChange("sales.csv", "changed"),)
    }
    warned = [p for p in maintenance.check(workspace) if p.severity == "warning"]
    assert ["sales.csv (changed)" in p.reason for p in warned] == [True]


# --- issue 41: sources that would hang a reader, or lead out of the workspace ------------


def crafted_sources(tmp_path: Path) -> tuple[Path, dict[str, str], str]:
    """A workspace whose record ``uses-data`` names, as its sources, what a careless
    reader would hang on or read out of the workspace -- each given the hash it has (or
    would have), so one opened would show as unchanged -- and one honest source. The
    workspace, the sources, and the outside file's text."""
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside.txt"
    secret = "salary table, not for the agent\n"
    outside.write_text(secret)
    os.mkfifo(tmp_path / "outside-pipe")  # opened blocking, a reader would hang
    os.mkfifo(ws / "pipe")
    huge = ws / "huge.bin"
    with huge.open("wb") as f:  # sparse, past the hash limit
        f.truncate(C.SOURCE_HASH_LIMIT + 1)
    os.symlink("loop-b", ws / "loop-a")
    os.symlink("loop-a", ws / "loop-b")
    os.symlink("loopdir", ws / "loopdir")
    os.symlink(outside, ws / "out-link")
    os.symlink(tmp_path / "outside-pipe", ws / "pipe-link")
    (ws / "sub").mkdir()
    (ws / "data.csv").write_text(SALES)
    sources = {
        "pipe": "0" * 64,
        "huge.bin": "1" * 64,
        "loop-a": "2" * 64,
        "loopdir/x": "3" * 64,
        "out-link": digest(secret),
        "pipe-link": "4" * 64,
        "../outside.txt": digest(secret),
        str(outside): digest(secret),
        "../outside-pipe": "5" * 64,
        "sub": "6" * 64,
        "data.csv": digest(SALES),
    }
    MemoryStore(ws).extend(
        [rec("uses-data", "reads the sales data", "The sales figures are in data.csv.")],
        provenance={"uses-data": {"origin": "user", "files_sha256": sources}},
    )
    return ws, sources, secret


def test_check_neither_hangs_nor_reads_out_of_the_workspace_on_crafted_sources(
    tmp_path: Path,
) -> None:
    """``ipymemory check`` (a real process, bounded in time): every source that is not a
    regular file reached inside the workspace without a symlink counts as vanished,
    even when the hash given is the outside file's own; the honest one is intact."""
    ws, sources, _secret = crafted_sources(tmp_path)
    env = {**os.environ, "IPYMEMORY_USER_DIR": "off"}
    done = subprocess.run(
        [sys.executable, "-m", "ipymemory.cli", "--dir", str(ws), "check", "--json"],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = done.stdout
    for path in sources:
        if path == "data.csv":
            assert "data.csv" not in said
        else:
            assert json.dumps(f"{path} (vanished)")[1:-1] in said, path


def test_a_turn_over_crafted_sources_answers_and_reads_nothing_outside(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    """The turn marks the record's sources for the model (as vanished) and answers: no
    FIFO, loop or huge file holds it up, and no source out of the workspace is taken
    for intact (it would be, were it read: its hash is the real one)."""
    ws, sources, secret = crafted_sources(tmp_path)
    messages_server.enqueue(text("The sales figures are in data.csv."), text("[]"))
    session = AgentSession(ws, model=model_for(messages_server.base_url))

    result = session.run_turn("Where are the sales figures?")

    assert result.answer == "The sales figures are in data.csv."
    block = memory_text(messages_server.requests[0])
    for path in sources:
        shown = f"source changed since saved: {path}" in block
        assert shown == (path != "data.csv"), path
    assert secret.strip() not in json.dumps(messages_server.requests)
