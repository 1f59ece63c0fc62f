"""The memory store through the real SDK (ipymemory/sync/remote.py) against the local
server: the endpoints and shapes, pagination, the beta header, preconditions that fail
with 409 and are never retried, who wrote each version, and every error typed."""

from __future__ import annotations

import socket

import anthropic
import pytest
from memory_store_server import (
    API_KEY,
    API_KEY_ID,
    MemoryStoreServer,
    session_actor,
    sha256,
    user_actor,
)
from sync_support import STORE_ID

from ipymemory import SyncNotConfigured, SyncPreconditionFailed, SyncRemoteError
from ipymemory.sync.remote import Author, RemoteStore


def remote(server: MemoryStoreServer, **kw: object) -> RemoteStore:
    client = anthropic.Anthropic(api_key=API_KEY, base_url=server.base_url, **kw)  # type: ignore[arg-type]
    return RemoteStore(STORE_ID, client)


def test_a_listing_is_basic_pages_of_a_hundred_with_the_beta_header(
    memory_store_server: MemoryStoreServer,
) -> None:
    srv = memory_store_server
    for i in range(250):
        srv.write(STORE_ID, f"/p/r{i:03d}.md", f"content {i}")
    srv.write(STORE_ID, "/elsewhere/x.md", "not ours")
    r = remote(srv)
    got = r.memories("/p/")
    assert len(got) == 250 and {m.path for m in got} == {f"/p/r{i:03d}.md" for i in range(250)}
    assert all(m.sha256 == sha256(f"content {int(m.path[4:7])}") for m in got)
    assert r.requests == 3 == srv.count("GET", "memories")
    for _method, _route, query in srv.requests:
        assert query == {"path_prefix": "/p/", "limit": "100", "view": "basic"} or "page" in query


def test_a_failed_precondition_is_409_and_never_retried(
    memory_store_server: MemoryStoreServer,
) -> None:
    srv = memory_store_server
    r = remote(srv)  # a client with the SDK's default retries (2)
    mine = r.create("/p/a.md", "mine")
    srv.write(STORE_ID, "/p/a.md", "theirs")  # someone else, between our read and update
    with pytest.raises(SyncPreconditionFailed) as caught:
        r.update(mine.id, "mine again", mine.sha256)
    assert caught.value.status_code == 409 and "precondition" in str(caught.value)
    assert srv.count("POST", "memory") == 1  # one attempt, not three
    assert srv.contents(STORE_ID)["/p/a.md"] == "theirs"  # nothing written
    with pytest.raises(SyncPreconditionFailed):
        r.delete(mine.id, mine.sha256)
    assert srv.count("DELETE", "memory") == 1 and "/p/a.md" in srv.contents(STORE_ID)
    with pytest.raises(SyncPreconditionFailed, match="already exists"):
        r.create("/p/a.md", "a second one at the same path")
    # The premise: left to itself, the SDK retries a 409 (as a lock timeout).
    client = anthropic.Anthropic(api_key=API_KEY, base_url=srv.base_url, max_retries=2)
    with pytest.raises(anthropic.ConflictError):
        client.beta.memory_stores.memories.update(
            mine.id,
            memory_store_id=STORE_ID,
            content="x",
            precondition={"type": "content_sha256", "content_sha256": mine.sha256},
        )
    assert srv.count("POST", "memory") == 1 + 3


def test_writes_with_the_hash_still_there_apply(memory_store_server: MemoryStoreServer) -> None:
    srv = memory_store_server
    r = remote(srv)
    created = r.create("/p/a.md", "one")
    updated = r.update(created.id, "two", created.sha256)
    assert (updated.id, updated.sha256) == (created.id, sha256("two"))
    assert updated.version_id != created.version_id
    r.delete(created.id, updated.sha256)
    assert srv.contents(STORE_ID) == {}
    deletion = r.deletion(created.id)
    assert deletion is not None and deletion.operation == "deleted"
    assert deletion.author == Author("api_key", API_KEY_ID)


def test_a_version_says_who_wrote_it_and_a_redacted_one_holds_nothing(
    memory_store_server: MemoryStoreServer,
) -> None:
    srv = memory_store_server
    r = remote(srv)
    agent = srv.write(STORE_ID, "/p/a.md", "from the mount", by=session_actor("sesn_01abc"))
    person = srv.write(STORE_ID, "/p/b.md", "from the Console", by=user_actor("user_01me"))
    v = r.version(agent.version_id)
    assert (v.content, v.operation, v.author) == (
        "from the mount",
        "created",
        Author("session", "sesn_01abc"),
    )
    assert v.author is not None and v.author.describe() == "agent session sesn_01abc"
    assert r.version(person.version_id).author == Author("user", "user_01me")
    srv.redact_version(STORE_ID, agent.version_id, by=user_actor("user_01admin"))
    redacted = r.version(agent.version_id)
    assert redacted.redacted_at is not None and redacted.redacted_by == Author(
        "user", "user_01admin"
    )
    assert (redacted.content, redacted.sha256, redacted.path) == (None, None, None)


def test_versions_since_a_time_and_whether_that_was_all(
    memory_store_server: MemoryStoreServer,
) -> None:
    srv = memory_store_server
    first = srv.write(STORE_ID, "/p/a.md", "one")
    for i in range(250):
        srv.write(STORE_ID, f"/q/{i}.md", "x")
    r = remote(srv)
    every, complete = r.versions_since(first.created_at.isoformat(), max_pages=5)
    assert complete and len(every) == 251
    some, complete = r.versions_since(first.created_at.isoformat(), max_pages=2)
    assert not complete and len(some) == 200
    assert r.requests == 3 + 2


def test_every_failure_is_a_typed_sync_error(
    memory_store_server: MemoryStoreServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    srv = memory_store_server
    wrong_key = RemoteStore(
        STORE_ID, anthropic.Anthropic(api_key="sk-wrong", base_url=srv.base_url)
    )
    with pytest.raises(SyncRemoteError) as caught:
        wrong_key.memories("/p/")
    assert caught.value.status_code == 401
    with pytest.raises(SyncRemoteError, match="no memory store memstore_missing") as caught:
        RemoteStore(
            "memstore_missing", anthropic.Anthropic(api_key=API_KEY, base_url=srv.base_url)
        ).memories("/p/")
    assert caught.value.status_code == 404
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    gone = anthropic.Anthropic(api_key=API_KEY, base_url=f"http://127.0.0.1:{port}", max_retries=0)
    with pytest.raises(SyncRemoteError, match="could not be reached") as caught:
        RemoteStore(STORE_ID, gone).memories("/p/")
    assert caught.value.status_code is None
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(SyncNotConfigured, match="ANTHROPIC_API_KEY"):
        RemoteStore.connect(STORE_ID, base_url=srv.base_url)
    with pytest.raises(SyncNotConfigured):
        RemoteStore("../etc", gone)
