"""What moves each way: the three-way comparison of the set, the store and the last sync.

A pure function of three inputs -- the records here (:class:`LocalRecord`: the file's
bytes and their sha256), the memories under the prefix there (a ``basic`` listing:
hashes, no content) and the :class:`~ipymemory.sync.state.SyncState` -- so every case
is tested without a network. Per record name, a side *changed* when its hash (or its
absence) differs from what the last sync recorded for it:

=================  =================  ==============================================
here               there              what happens
=================  =================  ==============================================
unchanged          unchanged          nothing (in sync)
changed            unchanged          push: create / update / delete, each with the
                                      hash the last sync saw there as precondition
unchanged          changed            pull: add / update / forget, proposed as a
                                      pending batch
changed            changed            the same content now on both sides: in sync
                                      (nothing sent; what a killed push left done);
                                      else a **conflict**: pulled, held for a person
=================  =================  ==============================================

A memory that moved to another record's path with its id (a rename there) is pulled as
a rename when nothing else claims either name. Names a pending pulled batch still holds
wait for it; a remote memory reported as not importable waits for its next version;
memories under the prefix that are not ``<name>.md`` are reported, never touched.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..errors import MemoryFormatError
from ..store.record import MemoryRecord, StoredRecord, parse_record, render_record
from .paths import name_of, path_of
from .remote import RemoteMemory
from .state import PullKind, Skipped, Synced, SyncState

__all__ = [
    "LocalRecord",
    "PullChange",
    "PushOp",
    "SyncPlan",
    "local_changes",
    "local_records",
    "make_plan",
    "parse_remote",
    "sha256_text",
]

PushKind = Literal["create", "update", "delete"]

CONFLICT_BOTH = "changed here and there since the last sync"
CONFLICT_NEW = "new here and there, with different content"
CONFLICT_GONE_HERE = "forgotten here, changed there since the last sync"
CONFLICT_GONE_THERE = "changed here, deleted there since the last sync"


def sha256_text(text: str) -> str:
    """The store's ``content_sha256`` of ``text``: sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class LocalRecord:
    """A record of the set as the store will hold it: its file's text and hash."""

    record: MemoryRecord
    content: str
    sha256: str

    @property
    def name(self) -> str:
        return self.record.name

    @classmethod
    def of(cls, record: MemoryRecord) -> LocalRecord:
        content = render_record(record).decode("utf-8")
        return cls(record, content, sha256_text(content))


def local_records(
    entries: Sequence[StoredRecord],
) -> tuple[dict[str, LocalRecord], dict[str, str]]:
    """The set as :class:`LocalRecord` by name, and the records that cannot be pushed
    (name -> why: text only the reading rules allow, which no file we write holds)."""
    out: dict[str, LocalRecord] = {}
    refused: dict[str, str] = {}
    for entry in entries:
        try:
            out[entry.record.name] = LocalRecord.of(entry.record)
        except MemoryFormatError as e:
            refused[entry.record.name] = str(e)
    return out, refused


def parse_remote(prefix: str, path: str, content: str) -> MemoryRecord:
    """The record a memory's ``content`` is, when it is a valid record file (SPEC §1)
    named as its path says and writable here; else :class:`MemoryFormatError` why."""
    record = parse_record(content.encode("utf-8"), path)
    expected = name_of(prefix, path)
    if record.name != expected:
        raise MemoryFormatError(
            f"{path}: its frontmatter names {record.name!r}, its path {expected!r}"
        )
    render_record(record)  # refuses text no file we write may hold
    return record


@dataclass(frozen=True)
class PushOp:
    """One write there: ``create`` at ``path``; ``update`` / ``delete`` of
    ``memory_id`` only if its content is still ``expected_sha256``."""

    kind: PushKind
    name: str
    path: str
    memory_id: str | None = None
    expected_sha256: str | None = None
    local: LocalRecord | None = None


@dataclass(frozen=True)
class PullChange:
    """One change there to propose here: ``add`` / ``update`` / ``rename`` (of
    ``replaces``) of ``memory``'s current version, or ``forget`` (``base`` is what the
    last sync saw). ``conflict`` says why a person must decide (both sides changed)."""

    kind: PullKind
    name: str
    memory: RemoteMemory | None
    replaces: str | None = None
    conflict: str | None = None
    base: Synced | None = None


@dataclass(frozen=True)
class SyncPlan:
    """Everything :func:`make_plan` found; see the module docstring."""

    pushes: tuple[PushOp, ...] = ()
    pulls: tuple[PullChange, ...] = ()
    #: Both sides now hold the same content: recorded as synced, nothing sent.
    converged: Mapping[str, Synced] = field(default_factory=dict)
    #: Gone on both sides: the last sync's record of them is dropped.
    dropped: tuple[str, ...] = ()
    #: Names a pending pulled batch holds -> its id.
    waiting: Mapping[str, str] = field(default_factory=dict)
    #: Names whose memory there was reported and is unchanged since -> why.
    held: Mapping[str, Skipped] = field(default_factory=dict)
    #: Memories under the prefix that are not a record's path: (path, why).
    foreign: tuple[tuple[str, str], ...] = ()
    in_sync: int = 0

    @property
    def conflicts(self) -> tuple[PullChange, ...]:
        return tuple(p for p in self.pulls if p.conflict is not None)

    @property
    def remote_changes(self) -> tuple[PullChange, ...]:
        """What a pull would bring (conflicts included)."""
        return self.pulls


def local_changes(
    local: Mapping[str, LocalRecord], state: SyncState, ignore: Collection[str] = ()
) -> tuple[str, ...]:
    """The names changed here since the last sync (no network needed), but those a
    pending pulled batch holds and ``ignore``."""
    waiting = set(state.pulled) | {p.replaces for p in state.pulled.values() if p.replaces}
    names = sorted((set(local) | set(state.records)) - waiting - set(ignore))
    out = []
    for name in names:
        here = local.get(name)
        base = state.records.get(name)
        if (here.sha256 if here else None) != (base.local_sha256 if base else None):
            out.append(name)
    return tuple(out)


def make_plan(
    local: Mapping[str, LocalRecord],
    remote: Sequence[RemoteMemory],
    state: SyncState,
    ignore: Collection[str] = (),
) -> SyncPlan:
    """Compare the set, the store's memories under ``state.prefix`` and the state.
    Names in ``ignore`` (records here that cannot be pushed) are left as they are on
    both sides: absent from ``local``, they must not read as forgotten here."""
    prefix = state.prefix
    there: dict[str, RemoteMemory] = {}
    foreign: list[tuple[str, str]] = []
    for listed in remote:
        name = name_of(prefix, listed.path)
        if name is None:
            foreign.append((listed.path, "not a record's path (<prefix><name>.md)"))
        else:
            there[name] = listed
    by_id = {m.id: name for name, m in there.items()}
    waiting = {name: p.batch for name, p in state.pulled.items()}
    waiting.update({p.replaces: p.batch for p in state.pulled.values() if p.replaces})

    pushes: list[PushOp] = []
    pulls: list[PullChange] = []
    converged: dict[str, Synced] = {}
    dropped: list[str] = []
    held: dict[str, Skipped] = {}
    in_sync = 0
    handled: set[str] = set()

    # A rename there: the memory a record was synced as now sits at another record's path.
    for old, synced in sorted(state.records.items()):
        new = by_id.get(synced.memory_id)
        kept = local.get(old)
        if (
            new is not None
            and new != old
            and old not in there
            and not ({old, new} & set(waiting))
            and new not in local
            and new not in state.records
            and kept is not None
            and kept.sha256 == synced.local_sha256
        ):
            pulls.append(PullChange("rename", new, there[new], replaces=old, base=synced))
            handled |= {old, new}

    handled |= set(ignore)
    for name in sorted(set(local) | set(state.records) | set(there) | set(waiting)):
        if name in handled or name in waiting:
            continue
        base, here, memory = state.records.get(name), local.get(name), there.get(name)
        skipped = state.skipped.get(memory.id) if memory is not None else None
        if memory is not None and skipped is not None and skipped.version_id == memory.version_id:
            held[name] = skipped
            continue
        ours = here.sha256 if here is not None else None
        theirs = memory.sha256 if memory is not None else None
        changed_here = ours != (base.local_sha256 if base else None)
        changed_there = theirs != (base.remote_sha256 if base else None)
        if not changed_here and not changed_there:
            in_sync += 1
        elif changed_here and not changed_there:
            pushes.append(_push(name, prefix, here, memory, base))
        elif changed_there and not changed_here:
            pulls.append(_pull(name, memory, base, None))
        elif ours == theirs:  # both changed, to the same content
            if memory is None or here is None:
                dropped.append(name)
            else:
                converged[name] = Synced(memory.id, memory.version_id, memory.sha256, here.sha256)
        else:
            pulls.append(_pull(name, memory, base, _conflict(here, memory, base)))
    return SyncPlan(
        pushes=tuple(pushes),
        pulls=tuple(pulls),
        converged=converged,
        dropped=tuple(dropped),
        waiting={n: b for n, b in waiting.items()},
        held=held,
        foreign=tuple(foreign),
        in_sync=in_sync,
    )


def _push(
    name: str,
    prefix: str,
    here: LocalRecord | None,
    memory: RemoteMemory | None,
    base: Synced | None,
) -> PushOp:
    path = path_of(prefix, name)
    if memory is None:
        return PushOp("create", name, path, local=here)
    assert base is not None  # unchanged there, so the last sync saw it
    if here is None:
        return PushOp("delete", name, path, memory.id, base.remote_sha256)
    return PushOp("update", name, path, memory.id, base.remote_sha256, here)


def _pull(
    name: str, memory: RemoteMemory | None, base: Synced | None, conflict: str | None
) -> PullChange:
    if memory is None:
        return PullChange("forget", name, None, replaces=name, conflict=conflict, base=base)
    if base is None and conflict is None:
        return PullChange("add", name, memory, base=base)
    if conflict == CONFLICT_GONE_HERE:
        return PullChange("add", name, memory, conflict=conflict, base=base)
    return PullChange("update", name, memory, replaces=name, conflict=conflict, base=base)


def _conflict(here: LocalRecord | None, memory: RemoteMemory | None, base: Synced | None) -> str:
    if here is None:
        return CONFLICT_GONE_HERE
    if memory is None:
        return CONFLICT_GONE_THERE
    return CONFLICT_BOTH if base is not None else CONFLICT_NEW
