"""The memory endpoint shows the user scope (SPEC §11) beside the project's set: a real
``jupyter server`` subprocess on 127.0.0.1 whose environment sets IPYMEMORY_USER_DIR."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from jupyter_support import RunningJupyter, run_jupyter
from record_support import rec

from ipymemory import MemoryStore
from ipymemory.store.record import render_record

pytestmark = pytest.mark.timeout(120)

LIST = "ipymemory/api/memory"
RECORD = "ipymemory/api/memory/record"
KEY = "sk-ant-api03-" + "A1b2C3d4E5" * 9 + "AA"


@pytest.fixture(scope="module")
def scoped_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningJupyter]:
    root = tmp_path_factory.mktemp("root")
    user = tmp_path_factory.mktemp("me")
    (root / "proj").mkdir()
    MemoryStore(root / "proj").extend([rec("alpha")])
    # Written by hand: the store itself refuses a credential (another tool may not).
    records = [
        rec("prefers-polars", type="user", description="uses polars, not pandas"),
        rec("shared-key", type="user", description=f"the key {KEY}"),
    ]
    memory = user / ".memory"
    memory.mkdir()
    files = [f"{r.name}-{uuid.uuid4().hex}.md" for r in records]
    for record, file in zip(records, files, strict=True):
        (memory / file).write_bytes(render_record(record))
    (memory / "manifest.json").write_text(json.dumps({"version": 1, "files": files}))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IPYMEMORY_USER_DIR", str(user))
        with run_jupyter("server", root, tmp_path_factory.mktemp("home")) as srv:
            yield srv


def test_the_listing_has_the_user_scope_labelled_and_redacted(
    scoped_server: RunningJupyter,
) -> None:
    data = scoped_server.get(LIST, {"path": "proj"}).json()
    assert [r["name"] for r in data["records"]] == ["alpha"]
    user = data["user"]
    assert user["error"] is None and user["directory"].endswith("/.memory")
    assert [r["name"] for r in user["records"]] == ["prefers-polars", "shared-key"]
    assert KEY not in str(data)  # SPEC §7: never in the lab panel


def test_a_user_record_is_served_by_scope_and_a_project_file_name_is_not(
    scoped_server: RunningJupyter,
) -> None:
    user = scoped_server.get(LIST, {"path": "proj"}).json()["user"]
    file = user["records"][0]["file"]
    reply = scoped_server.get(RECORD, {"path": "proj", "file": file, "scope": "user"})
    assert reply.status == 200, reply.text
    record = reply.json()["record"]
    assert record["name"] == "prefers-polars" and record["body"] == "The body of prefers-polars."
    # The same file name asked of the project's set is not there.
    assert scoped_server.get(RECORD, {"path": "proj", "file": file}).status == 404
    bad = scoped_server.get(RECORD, {"path": "proj", "file": file, "scope": "nope"})
    assert bad.status == 400 and "bad scope" in bad.json()["error"]


@pytest.fixture(scope="module")
def unscoped_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningJupyter]:
    root = tmp_path_factory.mktemp("root-off")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IPYMEMORY_USER_DIR", "off")
        with run_jupyter("server", root, tmp_path_factory.mktemp("home-off")) as srv:
            yield srv


def test_without_a_user_scope_the_listing_says_none(unscoped_server: RunningJupyter) -> None:
    server = unscoped_server
    (Path(server.root) / "p2").mkdir()
    data = server.get(LIST, {"path": "p2"}).json()
    assert data["user"] is None
    reply = server.get(RECORD, {"path": "p2", "file": "x.md", "scope": "user"})
    assert reply.status == 404 and reply.json()["error"] == "the user scope is off"
