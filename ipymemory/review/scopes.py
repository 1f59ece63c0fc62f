"""The two scopes a turn reads (SPEC §11): the project's ``.memory/`` and the user's.

The user scope lives in ``<user_dir>/.memory/`` (same format, lock, journal and
screening) and holds who the user is: what they said in one project is known in the
next. A turn selects over both: the catalog lists the project's lines, then the
user's; a name held in both is the project's, and the user's record of that name is
not offered. The user scope may sit on a slow or absent network home: reading it is
bounded in time, and any failure leaves the turn with the project's set and an error
that names the scope.

**An agent's item and the user's names** (:class:`AgentNames`, issue 41): every door
that brings in another agent's item -- MCP ``memory_propose``, the memory tool, a sync's
pull, an import of another tool's memory -- asks this ONE check before anything is
kept: an item may neither take the name of a user-wide record the project lacks (the
project's record would hide the user's, everywhere in this project) nor replace one.
When the user scope cannot be read now, nothing is known of its names: the check says
so, and the door holds the item for a person instead of passing it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .. import _constants as C
from .._text import counted
from ..errors import MemoryRecordUnreadable, MemoryStoreError
from ..store.index import render_catalog
from ..store.record import MemoryRecord, StoredRecord
from ..store.store import MemoryStore

__all__ = [
    "PROJECT",
    "SCOPES",
    "USER",
    "AgentNames",
    "Scope",
    "ScopedSet",
    "prepare_user_scope",
    "read_scopes",
    "read_user_scope",
    "unreadable_note",
    "user_store_for",
]

Scope = Literal["project", "user"]
PROJECT: Scope = "project"
USER: Scope = "user"
SCOPES: tuple[Scope, ...] = (PROJECT, USER)


@dataclass(frozen=True)
class ScopedSet:
    """The records a turn may select from, over both scopes: those that load. A listed
    record file that does not load is left out and named (``unreadable``, ``error``):
    reading goes on without it, writing to that scope refuses until it is fixed."""

    project: tuple[StoredRecord, ...]
    user: tuple[StoredRecord, ...] = ()  # the user's records not shadowed by the project's
    # Why the user scope could not be read whole (``user`` then holds what did load).
    error: str | None = None
    # The project's listed record files that do not load.
    unreadable: tuple[MemoryRecordUnreadable, ...] = ()

    @property
    def unreadable_note(self) -> str | None:
        """The project's unreadable record files, what to do, and what happens until
        then (one text: a turn says it once); None when every file loads."""
        if not self.unreadable:
            return None
        return unreadable_note(self.unreadable, len(self.project))

    @property
    def records(self) -> tuple[MemoryRecord, ...]:
        return tuple(e.record for e in (*self.project, *self.user))

    @property
    def catalog(self) -> str:
        return render_catalog((*self.project, *self.user))

    @property
    def user_names(self) -> frozenset[str]:
        return frozenset(e.record.name for e in self.user)

    def scope_of(self, name: str) -> Scope:
        return USER if name in self.user_names else PROJECT


def read_scopes(
    project: MemoryStore,
    user: MemoryStore | None,
    *,
    timeout: float = C.USER_SCOPE_READ_TIMEOUT,
    reuse: bool = False,
) -> ScopedSet:
    """Both scopes' current sets. A project that cannot be read raises
    :class:`MemoryStoreError` (as a one-scope turn did); the user scope's failure or
    slowness is in ``error``. ``reuse``: each store's last read while its set did not
    change (a turn's first request; ``MemoryStore.entries``)."""
    readable = project.readable(reuse=reuse)
    entries = readable.entries
    if user is None:
        return ScopedSet(entries, unreadable=readable.unreadable)
    theirs, error = read_user_scope(user, timeout, reuse=reuse)
    taken = {e.record.name for e in entries}
    return ScopedSet(
        entries,
        tuple(e for e in theirs if e.record.name not in taken),
        error,
        readable.unreadable,
    )


def unreadable_note(errors: Sequence[MemoryRecordUnreadable], used: int) -> str:
    """Each record file that does not load (its error names the file, the rule and the
    fix), then what holds until it is fixed."""
    files = " ".join(f"{e}." for e in errors)
    it = "it is" if len(errors) == 1 else "they are"
    return (
        f"{files} Until {it} fixed, memory goes on with the other "
        f"{counted(used, 'record')} and writes nothing."
    )


def read_user_scope(
    user: MemoryStore, timeout: float = C.USER_SCOPE_READ_TIMEOUT, *, reuse: bool = False
) -> tuple[tuple[StoredRecord, ...], str | None]:
    """The user scope's entries, or ``()`` and why not, within ``timeout`` seconds; a
    record file that does not load is left out and named in the second value.

    The read runs on a daemon thread: a home directory on a hung network mount blocks
    that thread, never the turn (nor the interpreter's exit)."""
    result: list[tuple[StoredRecord, ...]] = []
    failure: list[BaseException] = []
    done = threading.Event()

    def read() -> None:
        try:
            readable = user.readable(reuse=reuse)
            result.append(readable.entries)
            if readable.unreadable:
                failure.append(_Partial(unreadable_note(readable.unreadable, len(result[0]))))
        except BaseException as e:  # reported below, whatever it is
            failure.append(e)
        finally:
            done.set()

    threading.Thread(target=read, name="ipymemory-user-scope", daemon=True).start()
    where = f"the user scope ({user.root})"
    if not done.wait(timeout):
        return (), f"{where} did not answer within {timeout:g} s; used the project's only"
    if failure:
        e = failure[0]
        if isinstance(e, _Partial):  # the records that load are used
            return result[0], f"{where}: {e}"
        if isinstance(e, MemoryStoreError):
            return (), f"{where} could not be read: {e}"
        return (), f"{where} could not be read: {type(e).__name__}: {e}"
    return result[0], None


@dataclass(frozen=True)
class AgentNames:
    """What another agent's items may be named (see the module docstring): ``user`` the
    user scope's names, ``unchecked`` why they are unknown now (the user scope is on
    but could not be read)."""

    user: frozenset[str] = frozenset()
    unchecked: str | None = None

    @classmethod
    def of(cls, user: MemoryStore | None) -> AgentNames:
        """The check for items entering a project whose user scope is ``user`` (None:
        off, or the items enter the user scope itself)."""
        if user is None:
            return cls()
        entries, error = read_user_scope(user)
        if error is not None:
            return cls(unchecked=error)
        return cls(frozenset(e.record.name for e in entries))

    def user_wide(self, project: Collection[str]) -> frozenset[str]:
        """The user's names a turn in a project holding ``project`` sees as user-wide
        (a name in both is the project's)."""
        return self.user - set(project)

    def refusal(self, name: str, project: Collection[str]) -> str | None:
        """Why an agent's item may not bring a record named ``name`` into a project
        holding ``project`` (None: it may)."""
        if name not in self.user_wide(project):
            return None
        return (
            f"{name!r} is a user-wide record (the user's own, for every project); a project "
            "record of that name would hide it: choose another name"
        )

    def replace_refusal(self, name: str, project: Collection[str]) -> str | None:
        """Why an agent's item may not replace the record ``name`` (None: it may)."""
        if name not in self.user_wide(project):
            return None
        return (
            f"{name!r} is a user-wide record (the user's own, for every project): an agent "
            "does not change it; a person does"
        )

    @property
    def hold(self) -> str | None:
        """Why a person must look at each item before it is kept (None: no need)."""
        if self.unchecked is None:
            return None
        return f"the names of the user's own memory could not be checked ({self.unchecked})"


class _Partial(Exception):
    """The user scope read, but for record files that do not load (said in its text)."""


def user_store_for(
    user_dir: Path | None, current: MemoryStore | None, lock_timeout: float
) -> MemoryStore | None:
    """The user scope's store for ``user_dir`` (``current`` when it is that one)."""
    if user_dir is None:
        return None
    if current is not None and current.workspace == Path(user_dir).absolute():
        current.lock_timeout = lock_timeout
        return current
    return MemoryStore(user_dir, lock_timeout=lock_timeout)


def prepare_user_scope(user: MemoryStore) -> None:
    """Create the user scope's directory (``user_dir``, private to the user) before its
    first commit; :class:`MemoryStoreError` naming it when that is not possible."""
    try:
        os.makedirs(user.workspace, mode=0o700, exist_ok=True)
    except OSError as e:
        raise MemoryStoreError(
            f"{user.workspace}: cannot create the user scope's directory ({e.strerror})"
        ) from e
