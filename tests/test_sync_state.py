"""What a sync last saw, kept in .memory/sync/ (ipymemory/sync/state.py): round trip,
every field checked on reading (the error names the file and the field), decided pulled
batches reconciled, written atomically under the store's lock and never the key."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from record_support import rec

from ipymemory import MemoryLockTimeout, MemoryStore, SyncStateError
from ipymemory.store.layout import LOCAL_STATE_NAMES
from ipymemory.store.maintenance import check
from ipymemory.sync.state import (
    Pulled,
    Skipped,
    Synced,
    SyncState,
    read_state,
    reconcile,
    saved_states,
    state_path,
    write_state,
)

STORE, PREFIX = "memstore_01X", "/ipymemory/p/"
SHA_A, SHA_B = "a" * 64, "b" * 64


def full_state() -> SyncState:
    return SyncState(
        STORE,
        PREFIX,
        records={"alpha": Synced("mem_1", "memver_1", SHA_A, SHA_B)},
        pulled={
            "beta": Pulled("b1c2d3", "update", "mem_2", "memver_2", SHA_A, SHA_B, "beta", "x"),
            "gamma": Pulled("b9", "forget", "mem_3", "memver_3", replaces="gamma"),
        },
        skipped={"mem_4": Skipped(f"{PREFIX}bad.md", "memver_4", "not a valid record file")},
        last_push="2026-07-23T09:00:00+00:00",
        last_pull="2026-07-23T09:05:00+00:00",
        feed_mark="2026-07-23T09:04:59.123000+00:00",
        listed_at=1234.5,
    )


def test_a_state_round_trips_through_its_file(workspace: str) -> None:
    store = MemoryStore(workspace)
    store.extend([rec("alpha")])
    path = write_state(store, full_state())
    assert path == state_path(store.root, STORE, PREFIX) and path.parent.name == "sync"
    assert read_state(store.root, STORE, PREFIX) == full_state()
    assert full_state().last_sync == "2026-07-23T09:05:00+00:00"
    # Another store or prefix has its own file; none yet is an empty state.
    assert read_state(store.root, STORE, "/other/") == SyncState(STORE, "/other/")
    assert [s for _, s in saved_states(store.root)] == [full_state()]


def test_the_state_is_local_and_nothing_checks_or_shares_it_as_the_set(workspace: str) -> None:
    store = MemoryStore(workspace)
    store.extend([rec("alpha")])
    write_state(store, full_state())
    assert "sync" in LOCAL_STATE_NAMES
    assert [p.to_json() for p in check(workspace)] == []  # not a stray file for `check`
    text = state_path(store.root, STORE, PREFIX).read_text(encoding="utf-8")
    assert "sk-ant" not in text and "api_key" not in text  # never a credential


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda d: d.update(version=2), "version"),
        (lambda d: d.update(version=True), "version"),
        (
            lambda d: d["records"]["alpha"].update(remote_sha256="nothex"),
            "records.alpha.remote_sha256",
        ),
        (
            lambda d: d["records"].update({"Not A Name": d["records"]["alpha"]}),
            "records.Not A Name",
        ),
        (lambda d: d["records"]["alpha"].pop("memory_id"), "records.alpha.memory_id"),
        (lambda d: d["pulled"]["beta"].update(kind="merge"), "pulled.beta.kind"),
        (lambda d: d["pulled"]["beta"].update(batch="../../x"), "pulled.beta.batch"),
        (lambda d: d["pulled"]["gamma"].update(remote_sha256=SHA_A), "pulled.gamma"),
        (lambda d: d["skipped"]["mem_4"].update(reason=7), "skipped.mem_4.reason"),
        (lambda d: d.update(listed_at="soon"), "listed_at"),
        (lambda d: d.update(records=[]), "records"),
    ],
)
def test_a_state_file_that_breaks_its_format_is_refused_naming_the_field(
    workspace: str, edit: object, where: str
) -> None:
    store = MemoryStore(workspace)
    path = write_state(store, full_state())
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)  # type: ignore[operator]
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SyncStateError) as caught:
        read_state(store.root, STORE, PREFIX)
    message = str(caught.value)
    assert message.startswith(f"{path}: {where}") and "remove the file to start over" in message


@pytest.mark.parametrize("raw", [b"", b"{", b"\xff\xfe", b'{"version": 1, "version": 1}', b"[]"])
def test_an_unreadable_state_file_is_refused(workspace: str, raw: bytes) -> None:
    store = MemoryStore(workspace)
    path = write_state(store, full_state())
    path.write_bytes(raw)
    with pytest.raises(SyncStateError, match=str(path)):
        read_state(store.root, STORE, PREFIX)


def test_a_state_file_of_another_store_under_this_name_is_refused(workspace: str) -> None:
    store = MemoryStore(workspace)
    path = write_state(store, full_state())
    data = json.loads(path.read_text(encoding="utf-8"))
    data["memory_store"] = "memstore_other"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SyncStateError, match="describes memstore_other"):
        read_state(store.root, STORE, PREFIX)


def test_a_symlinked_sync_directory_is_never_written_through(
    workspace: str, tmp_path: Path
) -> None:
    store = MemoryStore(workspace)
    store.extend([rec("alpha")])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, store.root / "sync")
    with pytest.raises(SyncStateError, match="not a directory"):
        write_state(store, full_state())
    with pytest.raises(SyncStateError, match="not a directory"):
        read_state(store.root, STORE, PREFIX)
    assert list(elsewhere.iterdir()) == []


def test_the_state_is_written_under_the_store_lock(workspace: str) -> None:
    MemoryStore(workspace).extend([rec("alpha")])
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with MemoryStore(workspace).locked():
            holding.set()
            release.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait()
    try:
        # A writer that may not wait is refused while another holds the lock.
        impatient = MemoryStore(workspace, lock_timeout=0)
        with pytest.raises(MemoryLockTimeout):
            write_state(impatient, full_state())
        assert not state_path(impatient.root, STORE, PREFIX).exists()
    finally:
        release.set()
        holder.join()
    write_state(MemoryStore(workspace, lock_timeout=0), full_state())
    assert read_state(MemoryStore(workspace).root, STORE, PREFIX) == full_state()


def test_a_decided_pulled_batch_counts_as_taken() -> None:
    state = full_state()
    open_ = {"b1c2d3"}
    # Both still open: nothing moves.
    assert reconcile(state, lambda b: b in {"b1c2d3", "b9"}) is state
    got = reconcile(state, lambda b: b in open_)
    assert set(got.pulled) == {"beta"}  # gamma's batch was decided: a forget is no record
    assert "gamma" not in got.records
    got = reconcile(state, lambda b: False)
    assert got.pulled == {}
    assert got.records["beta"] == Synced("mem_2", "memver_2", SHA_A, SHA_B)
    assert got.records["alpha"] == state.records["alpha"]
