"""Error sweep (SPEC §4): every I/O call of a commit fails in turn, with ENOSPC or EIO.

For each operation (extend, forget, apply_consolidation), each patched ``os`` function and
each errno, the n-th call (n = 1, 2, … until the commit goes through without reaching an
n-th call) raises ``OSError`` — either only that call ("once") or that call and every
later one ("persistent"). After each attempt:

* if the commit raised: it raised a :class:`MemoryStoreError`; ``records()``, the manifest,
  MEMORY.md and every old file are byte-identical to before, and when the failure was a
  single one ("once"), nothing else is there either (this commit's files were removed). A
  persistent failure may leave files the rollback itself could not remove (unlinks keep
  failing, or the restored manifest cannot be made durable); those must be unreferenced.
* if the commit returned: the new set is committed completely; leftovers (a replaced file
  whose deletion failed) are unreferenced.
* in every case every listed file is present and valid, and the next commit without
  injected failures succeeds (no lock is left held, in-process or on disk).
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from record_support import rec
from store_support import listed_files, snapshot, verify_listed

from ipymemory import MemoryRecord, MemoryStore, MemoryStoreError

# mkdir/rmdir: the reference agent's `.lock` directory, taken and released per commit.
FUNCS = ("open", "write", "fsync", "replace", "unlink", "link", "mkdir", "rmdir")
ERRNOS = (errno.ENOSPC, errno.EIO)
MODES = ("once", "persistent")
MAX_N = 400  # far above the number of calls one commit makes; bounds the loop

Op = Callable[[MemoryStore], Any]

BASE4 = tuple(rec(f"base-{i}") for i in range(4))
ADDED = rec("added", type="feedback")
MERGED = rec("merged", body="base-0 and base-2 together.")
OPS: dict[str, tuple[tuple[MemoryRecord, ...], Op]] = {
    "extend": (
        BASE4[:3],
        lambda s: s.extend([rec("new-a"), rec("new-b", type="user")]),
    ),
    "forget": (BASE4[:3], lambda s: s.forget(["base-0", "base-2"])),
    "consolidate": (
        BASE4,
        lambda s: s.apply_consolidation(
            base_records=BASE4,
            additions=[ADDED],
            source_names=["base-0", "base-2"],
            replacements=[MERGED],
        ),
    ),
}


class Injector:
    """Replaces ``os.<name>``: the n-th call (and, if persistent, every later one) fails.

    Only calls from the thread running the commit count, so the lock's heartbeat thread
    cannot make the sweep nondeterministic.
    """

    def __init__(self, name: str, n: int, persistent: bool, err: int) -> None:
        self.name = name
        self.real: Callable[..., Any] = getattr(os, name)
        self.n = n
        self.persistent = persistent
        self.err = err
        self.calls = 0
        self.failures = 0
        self.thread = threading.get_ident()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == self.thread:
            self.calls += 1
            if self.calls == self.n or (self.persistent and self.calls > self.n):
                self.failures += 1
                raise OSError(self.err, f"{os.strerror(self.err)} (injected into os.{self.name})")
        return self.real(*args, **kwargs)


@dataclass
class Outcome:
    n: int
    raised: BaseException | None
    failures: int
    leftovers: tuple[str, ...]


@pytest.fixture
def fast_dir() -> Iterator[Path]:
    """A scratch directory, on tmpfs when there is one: the sweep makes ~2000 commits and
    the failure semantics do not depend on the disk (the crash sweep uses the real disk)."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    path = Path(tempfile.mkdtemp(prefix="ipymemory-errors-", dir=base))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _unreferenced(names: set[str], root: Path) -> set[str]:
    listed = set(listed_files(root))
    stray = {n for n in names if n in listed}
    assert not stray, f"files listed but not expected: {stray}"
    return names


def _sweep_one(
    tmp: Path, op_name: str, func: str, err: int, persistent: bool, unlinks_fail: bool = False
) -> list[Outcome]:
    """Sweep n for one combination. ``unlinks_fail``: additionally every ``os.unlink``
    fails, so the rollback after the injected failure cannot remove anything."""
    base, op = OPS[op_name]
    pristine = tmp / "pristine"
    pristine.mkdir()
    MemoryStore(pristine).extend(base)
    old = MemoryStore(pristine).records()
    before = snapshot(pristine / ".memory")

    ref = tmp / "reference"
    shutil.copytree(pristine, ref)
    op(MemoryStore(ref))
    new = MemoryStore(ref).records()
    assert new != old

    outcomes: list[Outcome] = []
    for n in range(1, MAX_N + 1):
        ws = tmp / f"n{n}"
        shutil.copytree(pristine, ws)
        root = ws / ".memory"
        store = MemoryStore(ws, lock_timeout=2.0)
        inj = Injector(func, n, persistent, err)
        no_unlink = Injector("unlink", 1, True, err) if unlinks_fail else None
        raised: BaseException | None = None
        setattr(os, func, inj)
        if no_unlink is not None:
            os.unlink = no_unlink
        try:
            op(store)
        except BaseException as e:
            raised = e
        finally:
            setattr(os, func, inj.real)
            if no_unlink is not None:
                os.unlink = no_unlink.real
        mode = "persistent" if persistent else "once"
        where = (
            f"{op_name} os.{func} {errno.errorcode[err]} {mode} n={n} unlinks_fail={unlinks_fail}"
        )

        after = snapshot(root)
        got = MemoryStore(ws).records()
        assert verify_listed(root) == got, where
        added = set(after) - set(before)
        if raised is not None:
            assert inj.failures, f"{where}: raised without an injected failure: {raised!r}"
            assert isinstance(raised, MemoryStoreError), f"{where}: {raised!r} is not wrapped"
            assert got == old, f"{where}: the set changed although the commit failed"
            for name, data in before.items():
                assert after.get(name) == data, f"{where}: {name} changed or vanished"
            if not persistent and not unlinks_fail:
                assert not added, f"{where}: a single failure left files behind: {added}"
            _unreferenced(added, root)
        else:
            assert got == new, f"{where}: commit returned but the set is not the new one"
            assert (root / "MEMORY.md").read_text() == MemoryStore(ws).catalog(), where
            kept_files = set(listed_files(root))
            # history/ (SPEC §6) is local state: the journal and the files it keeps.
            leftovers = {n for n in after if not n.startswith("history/")}
            leftovers -= kept_files | {"manifest.json", "MEMORY.md"}
            assert all(n.endswith(".md") or n.startswith(".tmp-") for n in leftovers), where
            if not inj.failures and not unlinks_fail:
                assert not leftovers, f"{where}: a clean commit left {leftovers}"
        outcomes.append(
            Outcome(n, raised, inj.failures, tuple(sorted(added - set(listed_files(root)))))
        )

        # Nothing is left locked: the next commit (same object, then a fresh one) works.
        store.extend([rec("next")])
        assert MemoryStore(ws).records() == (*got, rec("next")), where
        shutil.rmtree(ws)
        if not inj.failures:
            return outcomes  # the commit got through without reaching an n-th call
    pytest.fail(f"{op_name} os.{func}: still reaching call {MAX_N}")


CASES = [(op, func, err, mode) for op in OPS for func in FUNCS for err in ERRNOS for mode in MODES]


@pytest.mark.parametrize(
    ("op_name", "func", "err", "mode"),
    CASES,
    ids=[f"{o}-{f}-{errno.errorcode[e]}-{m}" for o, f, e, m in CASES],
)
def test_error_sweep(fast_dir: Path, op_name: str, func: str, err: int, mode: str) -> None:
    outcomes = _sweep_one(fast_dir, op_name, func, err, mode == "persistent")
    # The sweep really injected failures into this commit (every function is used by it).
    failed = [o for o in outcomes if o.failures]
    assert failed, f"os.{func} is never called by {op_name}"
    # And a failure before the commit point made the commit fail (it was not ignored).
    # Unlinks only clean up (rollback, backups, replaced files after the commit point) and
    # rmdir only releases the lock directory after the commit, so their failures never
    # fail a commit (a `.lock` left by this process is taken over by the next commit).
    if func not in ("unlink", "rmdir"):
        assert any(o.raised is not None for o in failed), f"{op_name}: no os.{func} failure raised"


COMPOUND = [(op, func) for op in OPS for func in ("write", "fsync", "replace", "link")]


@pytest.mark.parametrize(("op_name", "func"), COMPOUND, ids=[f"{o}-{f}" for o, f in COMPOUND])
def test_error_sweep_rollback_cannot_unlink(fast_dir: Path, op_name: str, func: str) -> None:
    """A failure, then every unlink of the rollback fails too: the set is still the old
    one and whatever the rollback could not remove is unreferenced."""
    outcomes = _sweep_one(fast_dir, op_name, func, errno.EIO, True, unlinks_fail=True)
    assert any(o.raised is not None for o in outcomes)


def test_disk_full_is_a_memory_store_error(workspace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: an OSError inside a commit used to escape as a bare OSError, which the
    turn (catching MemoryStoreError) would not handle. Now it is wrapped, cause kept."""
    store = MemoryStore(workspace)
    store.extend([rec("first")])
    before = snapshot(store.root)
    real_fsync = os.fsync

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(MemoryStoreError, match="rolled back; the set is unchanged") as info:
        store.extend([rec("second")])
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert isinstance(info.value.__cause__, OSError)
    assert info.value.__cause__.errno == errno.ENOSPC
    assert snapshot(store.root) == before
    assert store.records() == (rec("first"),)
