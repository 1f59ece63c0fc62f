"""The three-way comparison (ipymemory/sync/plan.py) case by case, without a network:
the set here, a listing there, what the last sync saw."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from record_support import rec

from ipymemory import MemoryFormatError, MemoryRecord
from ipymemory.sync.plan import (
    CONFLICT_BOTH,
    CONFLICT_GONE_HERE,
    CONFLICT_GONE_THERE,
    CONFLICT_NEW,
    LocalRecord,
    local_changes,
    make_plan,
    parse_remote,
    sha256_text,
)
from ipymemory.sync.remote import RemoteMemory
from ipymemory.sync.state import Pulled, Skipped, Synced, SyncState

PREFIX = "/ipymemory/proj/"
T = datetime(2026, 7, 23, 9, 0, tzinfo=timezone.utc)


def here(*records: MemoryRecord) -> dict[str, LocalRecord]:
    return {r.name: LocalRecord.of(r) for r in records}


def there(
    name: str, content: str, memory_id: str | None = None, version: str = "v1"
) -> RemoteMemory:
    return RemoteMemory(
        id=memory_id or f"mem_{name}",
        path=f"{PREFIX}{name}.md",
        sha256=sha256_text(content),
        size=len(content),
        version_id=f"memver_{name}_{version}",
        updated_at=T,
    )


def synced(record: MemoryRecord, version: str = "v1", memory_id: str | None = None) -> Synced:
    local = LocalRecord.of(record)
    return Synced(
        memory_id or f"mem_{record.name}",
        f"memver_{record.name}_{version}",
        local.sha256,
        local.sha256,
    )


def state(*records: MemoryRecord, **kw: object) -> SyncState:
    return SyncState("memstore_x", PREFIX, records={r.name: synced(r) for r in records}, **kw)  # type: ignore[arg-type]


A, B = rec("alpha"), rec("beta")
A2 = rec("alpha", body="The body of alpha, edited.")
A3 = rec("alpha", body="The body of alpha, edited elsewhere.")


def text(record: MemoryRecord) -> str:
    return LocalRecord.of(record).content


def test_nothing_changed_anywhere_is_in_sync() -> None:
    plan = make_plan(here(A, B), [there("alpha", text(A)), there("beta", text(B))], state(A, B))
    assert (plan.pushes, plan.pulls, plan.in_sync) == ((), (), 2)


def test_a_change_here_is_pushed_with_the_hash_seen_there_as_precondition() -> None:
    plan = make_plan(here(A2, B), [there("alpha", text(A)), there("beta", text(B))], state(A, B))
    (op,) = plan.pushes
    assert (op.kind, op.name, op.memory_id) == ("update", "alpha", "mem_alpha")
    assert op.expected_sha256 == sha256_text(text(A))  # what the last sync saw there
    assert op.local is not None and op.local.content == text(A2)
    assert plan.pulls == ()


def test_new_here_is_created_and_forgotten_here_is_deleted_if_unchanged_there() -> None:
    plan = make_plan(here(B), [there("alpha", text(A))], state(A))
    (create, delete) = sorted(plan.pushes, key=lambda op: op.kind)
    assert (create.kind, create.name, create.path) == ("create", "beta", f"{PREFIX}beta.md")
    assert (delete.kind, delete.name, delete.expected_sha256) == (
        "delete",
        "alpha",
        sha256_text(text(A)),
    )


def test_a_change_there_is_pulled() -> None:
    new = rec("gamma")
    plan = make_plan(
        here(A, B),
        [there("alpha", text(A2), version="v2"), there("gamma", text(new))],
        state(A, B),
    )
    kinds = {p.name: (p.kind, p.replaces, p.conflict) for p in plan.pulls}
    assert kinds == {
        "alpha": ("update", "alpha", None),
        "beta": ("forget", "beta", None),  # gone there, unchanged here
        "gamma": ("add", None, None),
    }
    assert plan.pushes == ()


@pytest.mark.parametrize(
    ("local", "remote", "why", "kind"),
    [
        ([A2], [("alpha", A3)], CONFLICT_BOTH, "update"),
        ([], [("alpha", A3)], CONFLICT_GONE_HERE, "add"),
        ([A2], [], CONFLICT_GONE_THERE, "forget"),
    ],
)
def test_changed_on_both_sides_is_a_conflict_pulled_for_a_person(
    local: list[MemoryRecord], remote: list[tuple[str, MemoryRecord]], why: str, kind: str
) -> None:
    memories = [there(n, text(r), version="v2") for n, r in remote]
    plan = make_plan(here(*local), memories, state(A))
    (change,) = plan.pulls
    assert (change.name, change.kind, change.conflict) == ("alpha", kind, why)
    assert plan.conflicts == (change,)
    assert plan.pushes == ()  # a push never overwrites either side


def test_new_on_both_sides_with_different_content_is_a_conflict() -> None:
    plan = make_plan(here(A), [there("alpha", text(A2))], state())
    (change,) = plan.pulls
    assert (change.kind, change.replaces, change.conflict) == ("update", "alpha", CONFLICT_NEW)


def test_the_same_content_on_both_sides_is_in_sync_without_a_request() -> None:
    """What a push killed after its write (before saving the state) leaves: done."""
    memory = there("alpha", text(A2), version="v2")
    plan = make_plan(here(A2), [memory], state(A))
    assert plan.pushes == () and plan.pulls == ()
    assert plan.converged == {
        "alpha": Synced(memory.id, memory.version_id, memory.sha256, sha256_text(text(A2)))
    }
    # Created on both sides alike (never synced before), or gone on both sides.
    assert set(make_plan(here(B), [there("beta", text(B))], state()).converged) == {"beta"}
    assert make_plan(here(), [], state(A)).dropped == ("alpha",)


def test_a_rename_there_is_pulled_as_a_rename() -> None:
    renamed = rec("alpha-notes", body=A.body, description=A.description)
    memory = there("alpha-notes", text(renamed), memory_id="mem_alpha", version="v2")
    plan = make_plan(here(A), [memory], state(A))
    (change,) = plan.pulls
    assert (change.kind, change.name, change.replaces) == ("rename", "alpha-notes", "alpha")


def test_names_a_pending_pulled_batch_holds_wait_for_it() -> None:
    waiting = Pulled("b1", "update", "mem_alpha", "memver_alpha_v2", "0" * 64, "1" * 64, "alpha")
    plan = make_plan(
        here(A2), [there("alpha", text(A3), version="v3")], state(A, pulled={"alpha": waiting})
    )
    assert plan.waiting == {"alpha": "b1"}
    assert (plan.pushes, plan.pulls) == ((), ())
    assert local_changes(here(A2), state(A, pulled={"alpha": waiting})) == ()


def test_a_memory_reported_before_is_not_fetched_again_until_its_version_changes() -> None:
    bad = there("alpha", "not a record", version="v2")
    skipped = {bad.id: Skipped(bad.path, bad.version_id, "not a valid record file")}
    plan = make_plan(here(A), [bad], state(A, skipped=skipped))
    assert set(plan.held) == {"alpha"} and plan.pulls == ()
    newer = there("alpha", "still not a record", version="v3")
    assert [p.name for p in make_plan(here(A), [newer], state(A, skipped=skipped)).pulls] == [
        "alpha"
    ]


def test_memories_that_are_not_a_records_path_are_reported_not_touched() -> None:
    odd = [
        RemoteMemory("mem_1", f"{PREFIX}notes/deep.md", "0" * 64, 1, "memver_1", T),
        RemoteMemory("mem_2", f"{PREFIX}Not A Slug.md", "0" * 64, 1, "memver_2", T),
        RemoteMemory("mem_3", f"{PREFIX}todo.txt", "0" * 64, 1, "memver_3", T),
    ]
    plan = make_plan(here(), odd, state())
    assert [path for path, _ in plan.foreign] == [m.path for m in odd]
    assert (plan.pushes, plan.pulls) == ((), ())


def test_local_changes_need_no_network() -> None:
    assert local_changes(here(A, B), state(A, B)) == ()
    assert local_changes(here(A2, rec("gamma")), state(A, B)) == ("alpha", "beta", "gamma")


@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        ("just notes, no frontmatter", "does not start with a '---'"),
        (text(B), "its frontmatter names 'beta', its path 'alpha'"),
        ("---\nname: alpha\ndescription: d\ntype: project\nextra: x\n---\n\nbody\n", "extra"),
        ("---\nname: alpha\ndescription: d\ntype: opinion\n---\n\nbody\n", "type"),
        ("---\nname: alpha\ndescription: d\ntype: project\n---\n\n" + "x" * 5000 + "\n", "4096"),
    ],
)
def test_a_remote_memory_is_a_record_only_if_a_valid_record_file_named_as_its_path(
    content: str, complaint: str
) -> None:
    with pytest.raises(MemoryFormatError) as caught:
        parse_remote(PREFIX, f"{PREFIX}alpha.md", content)
    assert complaint in str(caught.value)
    # A file another tool wrote in its own style (CRLF, quoted values) is one.
    crlf = "---\r\nname: 'alpha'\r\ndescription: \"about it\"\r\ntype: user\r\n---\r\n\r\nhi\r\n"
    assert parse_remote(PREFIX, f"{PREFIX}alpha.md", crlf).name == "alpha"
