"""``sync push`` against the local memory-store server with the real SDK: one memory per
record, every write conditioned on what the last sync saw there, a 409 race refusing
that record alone (never retried, nothing half-applied), a stop on an unreachable store,
and idle pushes that send nothing."""

from __future__ import annotations

import json
from pathlib import Path

import filelock
import pytest
from memory_store_server import ApiError, MemoryStoreServer, sha256
from record_support import rec
from sync_support import STORE_ID, Project, project, text_of

from ipymemory import SyncBusy
from ipymemory.sync.state import read_state

RECORDS = [rec("prefers-tabs"), rec("db-notes"), rec("deadline")]


@pytest.fixture
def proj(
    memory_store_server: MemoryStoreServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Project:
    return project(memory_store_server, tmp_path, monkeypatch, RECORDS)


def test_the_first_push_makes_one_memory_per_record_holding_its_file(proj: Project) -> None:
    report = proj.sync().push()
    assert proj.there() == {r.name: text_of(r) for r in RECORDS}
    assert sorted(p["kind"] for p in report.pushed) == ["create"] * 3
    assert report.requests == 1 + 3 == proj.server.count()  # one listing page, three creates
    # Nothing else lives there: no catalog, no state file.
    assert set(proj.server.contents(STORE_ID)) == {proj.path(r.name) for r in RECORDS}
    state = read_state(proj.store.root, STORE_ID, proj.prefix)
    assert set(state.records) == {r.name for r in RECORDS} and state.last_push is not None
    for r in RECORDS:
        synced = state.records[r.name]
        assert synced.remote_sha256 == synced.local_sha256 == sha256(text_of(r))


def test_an_idle_push_sends_nothing(proj: Project) -> None:
    proj.sync().push()
    before = proj.server.count()
    report = proj.sync().push()
    assert report.requests == 0 and proj.server.count() == before
    assert report.note == "nothing changed here since the last sync"


def test_changes_here_go_out_as_update_delete_and_create_with_preconditions(
    proj: Project,
) -> None:
    proj.sync().push()
    store = proj.store
    edited = proj.edit("deadline", "The deadline moved to Friday 2026-08-07.")
    store.forget(["db-notes"])
    store.extend([rec("new-idea")])
    report = proj.sync().push()
    assert sorted((p["kind"], p["name"]) for p in report.pushed) == [
        ("create", "new-idea"),
        ("delete", "db-notes"),
        ("update", "deadline"),
    ]
    assert proj.there() == {
        "prefers-tabs": text_of(RECORDS[0]),
        "deadline": text_of(edited),
        "new-idea": text_of(rec("new-idea")),
    }
    # The update and the delete named the content the last sync saw there.
    update = next(q for m, r, q in proj.server.requests if (m, r) == ("DELETE", "memory"))
    assert update["expected_content_sha256"] == sha256(text_of(RECORDS[1]))


def test_a_second_writer_between_read_and_update_refuses_that_record_only(
    proj: Project,
) -> None:
    proj.sync().push()
    for name in ("prefers-tabs", "db-notes"):
        proj.edit(name, f"Edited here: {name}.")
    theirs = text_of(rec("prefers-tabs", body="Edited there by an agent."))
    memory_id = proj.server.memory_at(STORE_ID, proj.path("prefers-tabs")).id  # type: ignore[union-attr]

    def race(method: str, target: str) -> None:
        if target == memory_id and proj.there()["prefers-tabs"] != theirs:
            proj.agent_writes("prefers-tabs", theirs)  # after our listing, before our update

    proj.server.before_write = race
    report = proj.sync().push()
    (failed,) = report.failed
    assert (failed["name"], failed["conflict"]) == ("prefers-tabs", True)
    assert "HTTP 409" in failed["error"]
    assert [p["name"] for p in report.pushed] == ["db-notes"]  # the other one went out
    assert proj.there()["prefers-tabs"] == theirs  # nothing of ours written over theirs
    assert proj.there()["db-notes"] == text_of(rec("db-notes", body="Edited here: db-notes."))
    # One attempt at it, not the SDK's retries.
    updates = [q for m, r, q in proj.server.requests if (m, r) == ("POST", "memory")]
    assert len(updates) == 2
    # The state still holds what the last sync saw of it: the next pull shows a conflict.
    state = read_state(proj.store.root, STORE_ID, proj.prefix)
    assert state.records["prefers-tabs"].remote_sha256 == sha256(text_of(RECORDS[0]))
    pulled = proj.sync().pull()
    (conflict,) = pulled.conflicts
    assert conflict.name == "prefers-tabs"
    assert conflict.here.record is not None and conflict.there is not None
    assert conflict.here.record.body == "Edited here: prefers-tabs."
    assert conflict.there.record is not None
    assert conflict.there.record.body == "Edited there by an agent."


def test_an_unreachable_store_stops_the_push_and_a_rerun_finishes_it(proj: Project) -> None:
    writes = 0

    def flaky(method: str, target: str) -> None:
        nonlocal writes
        writes += 1
        if writes == 2:
            raise ApiError(503, "overloaded_error", "try later")

    proj.server.before_write = flaky
    report = proj.sync().push()
    assert report.stopped is not None and "HTTP 503" in report.stopped
    assert len(report.pushed) == 1 and len(proj.there()) == 1
    state = read_state(proj.store.root, STORE_ID, proj.prefix)
    assert set(state.records) == {report.pushed[0]["name"]}  # what was done is kept
    proj.server.before_write = None
    again = proj.sync().push()
    assert len(again.pushed) == 2 and again.stopped is None
    assert proj.there() == {r.name: text_of(r) for r in RECORDS}


def test_a_dry_run_says_what_would_go_and_writes_nothing(proj: Project) -> None:
    report = proj.sync().push(dry_run=True)
    assert report.dry_run and len(report.pushed) == 3
    assert proj.there() == {}
    assert not (proj.store.root / "sync").exists()
    assert proj.server.count("POST") == 0


def test_a_record_only_the_reading_rules_allow_is_reported_and_left_alone(proj: Project) -> None:
    """The reference agent may write a description with a VT in it: it loads here, but
    no file we write may hold it, so it cannot be the store's text. Replaced so by
    another program after a sync, it must not read as forgotten (and be deleted there)."""
    proj.sync().push()
    root = proj.store.root
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    old = next(f for f in manifest["files"] if f.startswith("deadline-"))
    odd = "deadline-" + "0" * 32 + ".md"
    text = (
        (root / old)
        .read_text(encoding="utf-8")
        .replace("description: about deadline", 'description: "about\\vdeadline"')  # a VT
    )
    (root / odd).write_text(text, encoding="utf-8")
    manifest["files"] = [odd if f == old else f for f in manifest["files"]]
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert "deadline" in proj.names()  # it loads
    report = proj.sync().push()
    assert [c["name"] for c in report.cannot_push] == ["deadline"]
    assert report.pushed == () and proj.server.count("DELETE") == 0
    assert proj.there()["deadline"] == text_of(RECORDS[2])
    assert proj.sync().pull().pulled == ()


def test_one_sync_of_a_memory_directory_at_a_time(proj: Project) -> None:
    proj.sync().push()
    lock = filelock.FileLock(str(proj.store.root / "sync" / ".lock"), timeout=0)
    with lock:  # another sync (another process would hold it the same way)
        with pytest.raises(SyncBusy, match=r"another sync of this \.memory is running"):
            proj.sync().push()
        with pytest.raises(SyncBusy):
            proj.sync().pull()
        assert proj.sync().push(dry_run=True).dry_run  # a dry run writes nothing: allowed
    assert proj.sync().push().stopped is None
