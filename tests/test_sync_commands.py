"""``ipymemory sync push|pull|status`` and ``%memory sync …`` (one command layer): the
settings and arguments, exit statuses, conflicts side by side in a terminal, dry runs
that write nothing, and ``%memory status`` saying when the last sync was and what waits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from memory_store_server import MemoryStoreServer
from notebook_support import loaded_shell, memory
from record_support import rec
from sync_support import STORE_ID, Project, project, record_text, text_of

from ipymemory.views.sync import SyncView, side_by_side

RECORDS = [rec("prefers-tabs"), rec("deadline")]


@pytest.fixture
def proj(
    memory_store_server: MemoryStoreServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Project:
    return project(memory_store_server, tmp_path, monkeypatch, RECORDS)


def test_push_and_pull_on_the_command_line(proj: Project) -> None:
    code, out, err = proj.cli("sync", "push")
    assert code == 0, err
    assert out.startswith(f"Pushed to memory store {STORE_ID} at {proj.prefix} (project scope)")
    assert "+ created  deadline" in out
    proj.agent_writes("uses-polars", record_text("uses-polars", "Polars now."))
    code, out, err = proj.cli("sync", "pull")
    assert code == 0, err
    assert "+ add      uses-polars  (memver_" in out and "by agent session" in out
    assert "ipymemory commit --batch" in out
    data = proj.cli_json("sync", "status")
    assert data["view"] == "sync" and data["action"] == "status"
    assert data["waiting"] and data["to_push"] == [] and data["pushed"] == []


def test_the_store_comes_from_the_argument_or_the_setting_and_is_required(
    proj: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("IPYMEMORY_MEMORY_STORE")
    code, _, err = proj.cli("sync", "push")
    assert code == 2 and "no memory store: give --store MEMSTORE_ID" in err
    code, _, err = proj.cli("sync", "push", "--store", STORE_ID)
    assert code == 0, err
    code, _, err = proj.cli("sync", "push", "--store", "memstore_unknown")
    assert code == 1 and "no memory store memstore_unknown" in err


def test_without_a_key_nothing_is_sent(proj: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    code, _, err = proj.cli("sync", "push")
    assert code == 1 and "set ANTHROPIC_API_KEY" in err
    assert proj.server.count() == 0


@pytest.mark.parametrize("prefix", ["no-slash", "/a/../b/", "/trailing"])
def test_a_prefix_the_store_would_refuse_is_a_usage_error(proj: Project, prefix: str) -> None:
    code, _, err = proj.cli("sync", "push", "--prefix", prefix)
    assert code == 2 and "--prefix:" in err
    assert proj.server.count() == 0


def test_the_prefix_setting_places_the_projects_memories(
    proj: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IPYMEMORY_MEMORY_STORE_PREFIX", "/team/churn/")
    assert proj.cli("sync", "push")[0] == 0
    assert set(proj.server.contents(STORE_ID)) == {
        "/team/churn/prefers-tabs.md",
        "/team/churn/deadline.md",
    }


def test_a_dry_run_writes_nothing_either_side(proj: Project) -> None:
    proj.agent_writes("uses-polars", record_text("uses-polars", "Polars now."))
    for action in ("push", "pull"):
        code, out, err = proj.cli("sync", action, "--dry-run")
        assert code == 0, err
        assert out.startswith("Would ")
    assert set(proj.there()) == {"uses-polars"}
    assert not (proj.store.root / "sync").exists() and not (proj.store.root / "pending").exists()
    assert proj.server.count("POST") == proj.server.count("DELETE") == 0


def test_status_shows_a_conflict_side_by_side_and_exits_1(proj: Project) -> None:
    proj.cli("sync", "push")
    proj.edit("deadline", "Ours: Friday 2026-08-07.")
    proj.agent_writes("deadline", record_text("deadline", "Theirs: Monday 2026-08-10."))
    code, out, err = proj.cli("sync", "status")
    assert code == 1  # a problem found: a conflict
    shown = out + err
    assert "Conflict: deadline — changed here and there since the last sync" in shown
    line = next(row for row in shown.splitlines() if "Ours: Friday" in row)
    assert "│" in line and "Theirs: Monday" in line  # the two versions on one row
    assert "there (memver_" in shown and "by agent session" in shown


def test_side_by_side_wraps_each_side_in_its_column() -> None:
    conflict = {
        "name": "x",
        "why": "changed",
        "here": {"record": {"name": "x", "type": "project", "description": "d", "body": "a " * 40}},
        "there": None,
    }
    lines = side_by_side(conflict, width=20)
    assert all(row.index("│") == 2 + 20 + 1 for row in lines)  # "  ", 20 columns, " "
    assert all(len(row.split("│")[0]) <= 23 for row in lines) and len(lines) > 4  # wrapped
    assert [row.split("│ ")[1] for row in lines[2:4]] == ["(not fetched: sync", "status shows it)"]


def test_record_text_reaches_html_escaped() -> None:
    data = {
        "action": "status",
        "memory_store": STORE_ID,
        "prefix": "/p/",
        "scope": "project",
        "pushed": [],
        "pulled": [],
        "conflicts": [
            {
                "name": "x",
                "why": "changed",
                "here": {
                    "record": {
                        "name": "x",
                        "type": "project",
                        "description": "<b>d</b>",
                        "body": "<script>",
                    }
                },
                "there": {
                    "record": None,
                    "text": "<img src=x onerror=1>",
                    "version": "v",
                    "by": "a",
                },
            }
        ],
        "in_sync": 0,
    }
    html = SyncView(data).to_html()
    assert "<script>" not in html and "<img" not in html and "&lt;script&gt;" in html
    shown = json.loads(json.dumps(SyncView(data).to_json()))
    assert shown["view"] == "sync"
    # What the Lab's renderer shows: the same words, both sides as lines.
    (conflict,) = shown["shown"]["conflicts"]
    assert conflict["here"] == ["x (project)", "<b>d</b>", "", "<script>"]
    assert conflict["there"][0] == "(not a valid record file)"
    assert conflict["there_title"] == "there (v, by a)"
    assert shown["shown"]["headline"].startswith("Sync with memory store")


def test_the_magic_and_status_in_a_notebook(proj: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(proj.workspace)
    with loaded_shell() as ip:
        view = memory(ip, "sync push")
        assert isinstance(view, SyncView) and len(view.data["pushed"]) == 2
        proj.agent_writes("uses-polars", record_text("uses-polars", "Polars now."))
        view = memory(ip, "sync pull")
        (batch,) = view.data["batches"]
        status = memory(ip, "status").to_text()
        assert f"synced with memory store {STORE_ID} at {proj.prefix}: last push 20" in status
        assert f"pulled batch {batch} waits (1 change): %memory pending --open {batch}" in status
        # Decided in the notebook like any saved batch.
        memory(ip, f"pending --open {batch}")
        memory(ip, f"commit --batch {batch}")
        assert "uses-polars" in proj.names()
        status = memory(ip, "status").to_text()
        assert "waits" not in status.split("synced with memory store")[1]
        monkeypatch.delenv("IPYMEMORY_MEMORY_STORE")
        with pytest.raises(UsageError, match="no memory store"):
            memory(ip, "sync push")
        ip.run_line_magic("config", f"IPyMemory.memory_store = {STORE_ID!r}")
        assert memory(ip, "sync push").data["note"] == "nothing changed here since the last sync"


def test_a_dry_run_says_what_would_move_each_way(proj: Project) -> None:
    proj.cli("sync", "push")
    proj.agent_writes("uses-polars", record_text("uses-polars", "Polars now."))
    proj.edit("deadline", "Moved to Friday.")
    push = proj.cli_json("sync", "push", "--dry-run")
    assert [p["name"] for p in push["pushed"]] == ["deadline"] and push["to_pull"] == [
        "uses-polars"
    ]
    pull = proj.cli_json("sync", "pull", "--dry-run")
    assert [p["name"] for p in pull["pulled"]] == ["uses-polars"] and pull["to_push"] == [
        "deadline"
    ]
    assert proj.there()["deadline"] != text_of(proj.store.get("deadline"))  # nothing moved
    assert not (proj.store.root / "pending").exists()
