"""The read-only history endpoint (``ipymemory/api/memory/history``) against a real
``jupyter server`` subprocess: same rules as the set endpoint (token, confinement,
hidden policy, links out of the root), bounded reads, timeline rows only."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from jupyter_support import RunningJupyter
from record_support import rec

from ipymemory import MemoryStore
from ipymemory.server.history import HISTORY_MAX_BYTES

pytestmark = pytest.mark.timeout(120)

HISTORY = "ipymemory/api/memory/history"


def journal(directory: Path) -> Path:
    return directory / ".memory" / "history" / "journal.jsonl"


def test_newest_entries_as_timeline_rows(server: RunningJupyter, project: Path) -> None:
    store = MemoryStore(project)
    store.extend(
        [rec("a"), rec("b")],
        provenance={"a": {"query": "Which region?", "origin": "user"}},
        actor={"notebook": "/w/analysis.ipynb", "execution_count": 4},
    )
    store.forget(["b"])
    reply = server.get(HISTORY, {"path": server.rel(project)})
    assert reply.status == 200, reply.text
    data = reply.json()
    assert data["error"] is None and data["more"] is False
    rows = data["entries"]
    assert [r["seq"] for r in rows] == [2, 1]
    assert rows[0]["op"] == "forget" and rows[0]["removed"] == ["b"]
    assert rows[1]["added"] == ["a", "b"] and rows[1]["by"] == "analysis.ipynb cell [4]"
    assert rows[1]["query"] == "Which region?" and rows[1]["origins"] == ["manual", "user"]
    # Rows only: no hashes, hosts or pids leave the server.
    text = reply.text
    assert "sha256" not in text and "pid" not in text and os.uname().nodename not in text
    limited = server.get(HISTORY, {"path": server.rel(project), "limit": "1"}).json()
    assert [r["seq"] for r in limited["entries"]] == [2] and limited["more"] is True
    assert server.get(HISTORY, {"path": server.rel(project), "limit": "x"}).status == 400
    assert data["etag"] != limited["etag"]


def test_no_journal_is_an_empty_history(server: RunningJupyter, project: Path) -> None:
    data = server.get(HISTORY, {"path": server.rel(project)}).json()
    assert data["entries"] == [] and data["error"] is None


def test_same_refusals_as_the_set_endpoint(
    server: RunningJupyter, project: Path, tmp_path: Path
) -> None:
    assert server.get(HISTORY, {"path": server.rel(project)}, token=None).status == 403
    assert server.get(HISTORY, {"path": "../"}).status == 403
    assert server.get(HISTORY, {"path": str(project)}).status == 400
    hidden = project / ".hidden"
    hidden.mkdir()
    MemoryStore(hidden).extend([rec("a")])
    assert server.get(HISTORY, {"path": server.rel(hidden)}).status == 404
    # history/ (or the journal) leading out of the root is never read.
    outside = tmp_path / "outside"
    outside.mkdir()
    MemoryStore(outside).extend([rec("secret-outside")])
    MemoryStore(project).extend([rec("a")])
    history = project / ".memory" / "history"
    journal(project).unlink()
    os.rmdir(history)
    history.symlink_to(outside / ".memory" / "history")
    reply = server.get(HISTORY, {"path": server.rel(project)})
    assert reply.status == 403 and "secret-outside" not in reply.text
    history.unlink()
    history.mkdir()
    journal(project).symlink_to(journal(outside))
    reply = server.get(HISTORY, {"path": server.rel(project)})
    assert "secret-outside" not in reply.text and reply.json()["entries"] == []
    assert reply.json()["error"]


def test_a_huge_journal_is_read_from_its_end_only(server: RunningJupyter, project: Path) -> None:
    store = MemoryStore(project)
    store.extend([rec("a")])
    path = journal(project)
    last = path.read_bytes()
    # 1 GB of holes before the real last line: only the tail is ever read.
    with path.open("r+b") as f:
        f.truncate(1 << 30)
        f.seek(1 << 30)
        f.write(b"\n" + last)
    reply = server.get(HISTORY, {"path": server.rel(project)})
    data = reply.json()
    assert reply.status == 200 and [r["seq"] for r in data["entries"]] == [1]
    assert data["more"] is True
    assert HISTORY_MAX_BYTES < 1 << 20


def test_bad_and_torn_lines_are_skipped(server: RunningJupyter, project: Path) -> None:
    store = MemoryStore(project)
    store.extend([rec("a")])
    with journal(project).open("ab") as f:
        f.write(b'{"not": "an entry"}\n<b>x</b>\n{"seq": 9, "op": "add"')  # torn tail
    data = server.get(HISTORY, {"path": server.rel(project)}).json()
    assert [r["seq"] for r in data["entries"]] == [1]
    assert data["skipped_lines"] == 2
    assert "<b>" not in json.dumps(data)
