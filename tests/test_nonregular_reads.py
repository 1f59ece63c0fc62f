"""Issue 19 #6: every file read under ``.memory/`` is opened without blocking and must be
a regular file — a FIFO, a directory, a socket or a symlink where a pending batch, a kept
history file or the journal goes is reported, never waited on (each test is bounded in
time: before the fix, each hung for ever)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from notebook_support import memory
from record_support import rec

from ipymemory import MemoryFormatError, MemoryStore, MemoryStoreError
from ipymemory.review.pending import PendingFiles
from ipymemory.store.layout import read_regular
from ipymemory.views.pending import PendingView

pytestmark = pytest.mark.timeout(60)


def _plant(path: Path, kind: str, outside: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    elif kind == "symlink-out":
        path.symlink_to(outside)
    elif kind == "dangling":
        path.symlink_to(outside.parent / "missing.json")
    else:
        raise AssertionError(kind)


KINDS = ("fifo", "directory", "socket", "symlink-out", "dangling")


@pytest.mark.parametrize("kind", KINDS)
def test_read_regular_refuses_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    path = tmp_path / "x.json"
    _plant(path, kind, outside)
    with pytest.raises(MemoryFormatError, match=r"not a regular file|symlink"):
        read_regular(str(path), 1000)


def test_memory_pending_with_a_fifo_reports_it_and_returns(
    ip: InteractiveShell, workspace: str
) -> None:
    pending = Path(workspace) / ".memory" / "pending"
    pending.mkdir(parents=True)
    os.mkfifo(pending / "abc123.json")
    listing = memory(ip, "pending")
    assert isinstance(listing, PendingView) and listing.entries == ()
    assert any("abc123.json" in p and "not a regular file" in p for p in listing.problems)
    assert (pending / "abc123.json").exists()  # reported, never removed


@pytest.mark.parametrize("kind", KINDS)
def test_pending_load_reports_every_kind_of_non_file(tmp_path: Path, kind: str) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"version": 1}')
    files = PendingFiles(tmp_path / ".memory")
    files.directory.mkdir(parents=True)
    _plant(files.directory / "abc.json", kind, outside)
    saved, problems = files.load(now=0.0)
    assert saved == [] and len(problems) == 1 and "abc.json" in problems[0]


def test_a_kept_history_file_replaced_by_a_fifo_fails_undo_cleanly(workspace: str) -> None:
    store = MemoryStore(workspace)
    store.extend([rec("a")])
    store.forget(["a"])
    kept = Path(store.root) / "history" / "files"
    [file] = list(kept.iterdir())
    file.unlink()
    os.mkfifo(file)
    before = sorted(p.name for p in Path(store.root).iterdir())
    with pytest.raises(MemoryStoreError) as caught:
        store.undo(2)
    assert "no longer kept" in str(caught.value) or "not a regular file" in str(caught.value)
    assert sorted(p.name for p in Path(store.root).iterdir()) == before
    assert store.records() == ()
