"""What a sync last saw on both sides, kept in ``.memory/sync/`` (SPEC §13).

One file per memory store and prefix, ``.memory/sync/<digest>.json`` (local state
beside ``history/`` and ``pending/``, never part of the set, never shared through git):

* ``records`` -- per record name, what both sides held at the last sync: the memory's
  id, its version id and ``content_sha256``, and the sha256 of the record file here.
  A side "changed since the last sync" when its hash differs from this one;
* ``pulled`` -- changes a pull proposed that wait in a pending batch (name -> batch id,
  the version pulled, the file a commit as pulled writes, who wrote it there). Once the
  batch is decided (its file is gone from ``pending/``), :func:`reconcile` moves each
  into ``records`` as if it was taken: a change the person took is then in sync, one
  they declined (or redacted, or undid later) is a local change the next push sends.
  A pull writes its changes here as ``tentative`` just before it keeps their batch, and
  again once kept: a tentative change whose batch is not in ``pending/`` was never kept
  (the pull was killed in between) and is forgotten, never counted as taken;
* ``skipped`` -- remote memories reported and not imported (not a valid record file, a
  redacted version), by memory id, until their version changes;
* when the last push and pull ran, and ``feed_mark``: the newest server time seen, from
  which an idle pull asks for new versions only.

Never the API key. The store id is an identifier, not a credential: the file names the
store it describes. A file read back is checked field by field; anything off is
:class:`~ipymemory.errors.SyncStateError` naming the file and the field, and the sync
stops before sending anything. Removing the file is always safe: the next sync compares
contents (the same content on both sides is in sync; different content is a conflict
for a person).

Written atomically (temp file, fsync, rename) under the store's lock.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from .._json import loads
from ..errors import MemoryStoreError, SyncStateError
from ..store.durable import fsync_dir, replace_atomic
from ..store.layout import SYNC_DIR_NAME, read_regular
from ..store.names import is_valid_name
from ..store.store import MemoryStore

__all__ = [
    "STATE_VERSION",
    "PullKind",
    "Pulled",
    "Skipped",
    "SyncState",
    "Synced",
    "read_state",
    "reconcile",
    "saved_states",
    "state_path",
    "sync_directory",
    "write_state",
]

STATE_VERSION = 1
_MAX_STATE_BYTES = 16 << 20
_SHA = re.compile(r"^[0-9a-f]{64}$")
_ID = re.compile(r"^[A-Za-z0-9_-]{1,200}$")
_BATCH = re.compile(r"^[a-z0-9]{1,64}$")

PullKind = Literal["add", "update", "rename", "forget"]
_KINDS: tuple[PullKind, ...] = ("add", "update", "rename", "forget")


@dataclass(frozen=True)
class Synced:
    """Both sides of one record at the last sync."""

    memory_id: str
    version_id: str
    remote_sha256: str
    local_sha256: str


@dataclass(frozen=True)
class Pulled:
    """A pulled change waiting in pending batch ``batch``.

    ``kind`` is what committing it does here: ``add`` / ``update`` (of ``replaces``,
    the same name) / ``rename`` (of ``replaces``) write the pulled version, whose
    content is ``remote_sha256`` there and whose record file will be ``local_sha256``
    here; ``forget`` removes the record (the memory was deleted there: no hashes).
    """

    batch: str
    kind: PullKind
    memory_id: str
    version_id: str
    remote_sha256: str | None = None
    local_sha256: str | None = None
    replaces: str | None = None
    by: str | None = None
    #: Written just before its batch is kept: until the batch is seen in ``pending/``
    #: the change is not known to wait (a pull killed in between brings it again).
    tentative: bool = False

    def synced(self) -> Synced | None:
        """What both sides hold once the change is taken (None: no record)."""
        if self.kind == "forget" or self.remote_sha256 is None or self.local_sha256 is None:
            return None
        return Synced(self.memory_id, self.version_id, self.remote_sha256, self.local_sha256)


@dataclass(frozen=True)
class Skipped:
    """A remote memory reported and not imported while its version stays ``version_id``."""

    path: str
    version_id: str
    reason: str


@dataclass(frozen=True)
class SyncState:
    """The sync state of one (memory store, prefix) pair; see the module docstring."""

    memory_store: str
    prefix: str
    records: Mapping[str, Synced] = field(default_factory=dict)
    pulled: Mapping[str, Pulled] = field(default_factory=dict)
    skipped: Mapping[str, Skipped] = field(default_factory=dict)
    last_push: str | None = None
    last_pull: str | None = None
    #: The newest time (the server's, RFC 3339) of anything this sync saw there.
    feed_mark: str | None = None
    #: When (our clock, UNIX seconds) the memories were last listed in full.
    listed_at: float | None = None

    @property
    def last_sync(self) -> str | None:
        """The later of the last push and the last pull (ISO times compare as text)."""
        times = [t for t in (self.last_push, self.last_pull) if t]
        return max(times) if times else None

    def known_versions(self) -> set[str]:
        """The version ids this state has seen as current."""
        return (
            {s.version_id for s in self.records.values()}
            | {p.version_id for p in self.pulled.values()}
            | {s.version_id for s in self.skipped.values()}
        )

    def known_memories(self) -> set[str]:
        return (
            {s.memory_id for s in self.records.values()}
            | {p.memory_id for p in self.pulled.values()}
            | set(self.skipped)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "memory_store": self.memory_store,
            "prefix": self.prefix,
            "last_push": self.last_push,
            "last_pull": self.last_pull,
            "feed_mark": self.feed_mark,
            "listed_at": self.listed_at,
            "records": {
                name: {
                    "memory_id": s.memory_id,
                    "version_id": s.version_id,
                    "remote_sha256": s.remote_sha256,
                    "local_sha256": s.local_sha256,
                }
                for name, s in sorted(self.records.items())
            },
            "pulled": {
                name: {
                    "batch": p.batch,
                    "kind": p.kind,
                    "memory_id": p.memory_id,
                    "version_id": p.version_id,
                    "remote_sha256": p.remote_sha256,
                    "local_sha256": p.local_sha256,
                    "replaces": p.replaces,
                    "by": p.by,
                    **({"tentative": True} if p.tentative else {}),
                }
                for name, p in sorted(self.pulled.items())
            },
            "skipped": {
                memory_id: {"path": s.path, "version_id": s.version_id, "reason": s.reason}
                for memory_id, s in sorted(self.skipped.items())
            },
        }


def reconcile(state: SyncState, is_open: Callable[[str], bool]) -> SyncState:
    """``state`` with every pulled change whose batch is no longer open (``is_open``:
    its file is still in ``pending/``) counted as taken (see the module docstring); a
    tentative change is confirmed when its batch is there, else forgotten (never
    kept: the next pull brings it again)."""
    records = dict(state.records)
    pulled = {}
    changed = False
    for name, change in state.pulled.items():
        if is_open(change.batch):
            pulled[name] = replace(change, tentative=False)
            changed = changed or change.tentative
            continue
        if change.tentative:
            changed = True
            continue
        if change.replaces is not None:
            records.pop(change.replaces, None)
        synced = change.synced()
        if synced is None:
            records.pop(name, None)
        else:
            records[name] = synced
    if not changed and len(pulled) == len(state.pulled):
        return state
    return replace(state, records=records, pulled=pulled)


# --- the file ------------------------------------------------------------------------


def state_path(root: Path, memory_store: str, prefix: str) -> Path:
    """``.memory/sync/<digest>.json`` of this store and prefix (``root``: ``.memory``)."""
    digest = hashlib.sha256(f"{memory_store}\n{prefix}".encode()).hexdigest()[:16]
    return root / SYNC_DIR_NAME / f"{digest}.json"


def _odd_directory(directory: Path) -> str | None:
    """Why ``sync/`` must not be used (a symlink or a file there), or None."""
    try:
        mode = os.lstat(directory).st_mode
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"{directory}: cannot be examined ({e})"
    if stat.S_ISDIR(mode):
        return None
    return f"{directory}: not a directory (a symlink or a file); move it away"


def read_state(root: Path, memory_store: str, prefix: str) -> SyncState:
    """The state of ``memory_store`` / ``prefix`` in ``root`` (``.memory``); an empty one
    when none was saved. :class:`SyncStateError` for a file that cannot be trusted."""
    path = state_path(root, memory_store, prefix)
    odd = _odd_directory(path.parent)
    if odd is not None:
        raise SyncStateError(odd)
    if not os.path.lexists(path):
        return SyncState(memory_store, prefix)
    state = _load(path)
    if (state.memory_store, state.prefix) != (memory_store, prefix):
        raise SyncStateError(
            f"{path}: describes {state.memory_store} {state.prefix}, not "
            f"{memory_store} {prefix}; {_START_OVER}"
        )
    return state


def saved_states(root: Path) -> Iterator[tuple[Path, SyncState | SyncStateError]]:
    """Every state file in ``root``'s ``sync/``, read (or the error reading it)."""
    directory = root / SYNC_DIR_NAME
    if _odd_directory(directory) is not None or not directory.is_dir():
        return
    for name in sorted(os.listdir(directory)):
        if name.endswith(".json") and not name.startswith("."):
            path = directory / name
            try:
                yield path, _load(path)
            except SyncStateError as e:
                yield path, e


def sync_directory(real: str) -> Path:
    """``<real>/sync``, made if missing (``real``: the resolved ``.memory``);
    :class:`SyncStateError` when a symlink or a file is there instead."""
    directory = Path(real) / SYNC_DIR_NAME
    odd = _odd_directory(directory)
    if odd is not None:
        raise SyncStateError(odd)
    try:
        directory.mkdir(exist_ok=True)
    except OSError as e:
        raise SyncStateError(f"{directory}: cannot be made ({e})") from e
    return directory


def write_state(store: MemoryStore, state: SyncState) -> Path:
    """Save ``state`` in ``store``'s ``.memory/sync/``, atomically, under the store lock."""
    data = json.dumps(state.to_json(), sort_keys=True, ensure_ascii=False).encode("utf-8")
    try:
        with store.locked() as real:
            directory = sync_directory(real)
            target = state_path(Path(real), state.memory_store, state.prefix).name
            replace_atomic(str(directory), target, data, _no_step, "sync-state")
            fsync_dir(str(directory))
            return directory / target
    except OSError as e:
        raise SyncStateError(f"{store.root / SYNC_DIR_NAME}: cannot save ({e})") from e


def _no_step(_: str) -> None:
    pass


# --- reading it back -------------------------------------------------------------------

_START_OVER = (
    "remove the file to start over (the next sync compares contents: the same on both "
    "sides is in sync, different is a conflict for you to decide)"
)


class _Reader:
    """Field checks of one state file, each error naming the file and the field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, what: str) -> SyncStateError:
        return SyncStateError(f"{self.path}: {where}: {what}; {_START_OVER}")

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, "expected an object")
        return value

    def text(self, value: Any, where: str, pattern: re.Pattern[str] | None = None) -> str:
        if not isinstance(value, str) or not value or (pattern and not pattern.match(value)):
            raise self.fail(where, f"not a valid value: {value!r}")
        return value

    def maybe(self, value: Any, where: str, pattern: re.Pattern[str] | None = None) -> str | None:
        return None if value is None else self.text(value, where, pattern)

    def name(self, value: str, where: str) -> str:
        if not is_valid_name(value):
            raise self.fail(where, f"{value!r} is not a record name")
        return value


def _load(path: Path) -> SyncState:
    r = _Reader(path)
    try:
        data = loads(read_regular(str(path), _MAX_STATE_BYTES).decode("utf-8"))
    except (MemoryStoreError, UnicodeDecodeError, ValueError) as e:
        raise SyncStateError(f"{path}: unreadable ({e}); {_START_OVER}") from e
    top = r.obj(data, "the file")
    if top.get("version") != STATE_VERSION or type(top.get("version")) is not int:
        raise r.fail("version", f"expected {STATE_VERSION}")
    listed = top.get("listed_at")
    if listed is not None and (not isinstance(listed, int | float) or isinstance(listed, bool)):
        raise r.fail("listed_at", "expected a number")
    records = {
        r.name(name, f"records.{name}"): _synced(r, r.obj(v, f"records.{name}"), f"records.{name}")
        for name, v in r.obj(top.get("records", {}), "records").items()
    }
    pulled = {
        r.name(name, f"pulled.{name}"): _pulled(r, r.obj(v, f"pulled.{name}"), f"pulled.{name}")
        for name, v in r.obj(top.get("pulled", {}), "pulled").items()
    }
    skipped = {}
    for memory_id, v in r.obj(top.get("skipped", {}), "skipped").items():
        at = f"skipped.{memory_id}"
        item = r.obj(v, at)
        r.text(memory_id, at, _ID)
        skipped[memory_id] = Skipped(
            r.text(item.get("path"), f"{at}.path"),
            r.text(item.get("version_id"), f"{at}.version_id", _ID),
            r.text(item.get("reason"), f"{at}.reason"),
        )
    return SyncState(
        memory_store=r.text(top.get("memory_store"), "memory_store"),
        prefix=r.text(top.get("prefix"), "prefix"),
        records=records,
        pulled=pulled,
        skipped=skipped,
        last_push=r.maybe(top.get("last_push"), "last_push"),
        last_pull=r.maybe(top.get("last_pull"), "last_pull"),
        feed_mark=r.maybe(top.get("feed_mark"), "feed_mark"),
        listed_at=None if listed is None else float(listed),
    )


def _synced(r: _Reader, item: dict[str, Any], at: str) -> Synced:
    return Synced(
        r.text(item.get("memory_id"), f"{at}.memory_id", _ID),
        r.text(item.get("version_id"), f"{at}.version_id", _ID),
        r.text(item.get("remote_sha256"), f"{at}.remote_sha256", _SHA),
        r.text(item.get("local_sha256"), f"{at}.local_sha256", _SHA),
    )


def _flag(r: _Reader, value: Any, at: str) -> bool:
    if not isinstance(value, bool):
        raise r.fail(at, "expected true or false")
    return value


def _pulled(r: _Reader, item: dict[str, Any], at: str) -> Pulled:
    kind = item.get("kind")
    if kind not in _KINDS:
        raise r.fail(f"{at}.kind", f"expected one of {', '.join(_KINDS)}")
    replaces = r.maybe(item.get("replaces"), f"{at}.replaces")
    if replaces is not None:
        r.name(replaces, f"{at}.replaces")
    change = Pulled(
        batch=r.text(item.get("batch"), f"{at}.batch", _BATCH),
        kind=kind,
        memory_id=r.text(item.get("memory_id"), f"{at}.memory_id", _ID),
        version_id=r.text(item.get("version_id"), f"{at}.version_id", _ID),
        remote_sha256=r.maybe(item.get("remote_sha256"), f"{at}.remote_sha256", _SHA),
        local_sha256=r.maybe(item.get("local_sha256"), f"{at}.local_sha256", _SHA),
        replaces=replaces,
        by=r.maybe(item.get("by"), f"{at}.by"),
        tentative=_flag(r, item.get("tentative", False), f"{at}.tentative"),
    )
    hashes = (change.remote_sha256, change.local_sha256)
    if (hashes != (None, None)) if kind == "forget" else (None in hashes):
        raise r.fail(at, "a forget has no hashes; any other change has both")
    return change
