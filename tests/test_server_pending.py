"""Issue 14 #9: the memory endpoint lists the batches awaiting review (read only: an
expired one is left out, never deleted), and a new one changes the etag."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from jupyter_support import RunningJupyter, run_jupyter
from record_support import rec

from ipymemory import MemoryStore
from ipymemory.turn.batch import BatchRegistry, PendingBatch
from ipymemory.turn.pending import PendingFiles

LIST = "ipymemory/api/memory"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningJupyter]:
    root = tmp_path_factory.mktemp("root")
    home = tmp_path_factory.mktemp("home")
    with run_jupyter("server", root, home) as srv:
        yield srv


def test_pending_batches_are_listed_read_only(server: RunningJupyter) -> None:
    project = server.root / f"proj-{uuid.uuid4().hex[:8]}"
    project.mkdir()
    MemoryStore(project).extend([rec("kept")])
    path = project.relative_to(server.root).as_posix()
    before = server.get(LIST, {"path": path}).json()
    assert before["pending"] == []

    files = PendingFiles(MemoryStore(project).root)
    registry = BatchRegistry()
    files.follow(registry)
    registry.add(PendingBatch("aaa111", (rec("new-one"), rec("new-two")), None, ()))
    registry.add(PendingBatch("bbb222", (rec("old-one"),), None, ()))
    old = files.directory / "bbb222.json"
    data = json.loads(old.read_text())
    data["saved_at"] = time.time() - 365 * 86400  # long expired
    old.write_text(json.dumps(data))

    after = server.get(LIST, {"path": path}).json()
    assert after["pending"] == [
        {
            "id": "aaa111",
            "names": ["new-one", "new-two"],
            "plan": None,
            "saved_at": after["pending"][0]["saved_at"],
        }
    ]
    assert after["etag"] != before["etag"]
    assert old.exists()  # the server never deletes: the kernel prunes
    assert sorted(p.name for p in Path(files.directory).iterdir()) == ["aaa111.json", "bbb222.json"]
