"""store/recency.py: the spacing count, saved dates, and the journal cache that reads
only what was appended since the last turn."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from record_support import rec

from ipymemory import MemoryStore
from ipymemory.store.history import Journal
from ipymemory.store.recency import JournalCache, saved_dates, spacing


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ``start`` of every Journal.read from now on."""
    starts: list[int] = []
    real = Journal.read

    def counting(self: Journal, start: int = 0) -> Any:
        starts.append(start)
        return real(self, start)

    monkeypatch.setattr(Journal, "read", counting)
    return starts


def _two_commits(workspace: str) -> tuple[MemoryStore, Journal]:
    store = MemoryStore(workspace)
    store.extend([rec("a-note")])
    store.extend([rec("b-note")])
    journal = store.journal()
    assert journal is not None
    return store, journal


def test_the_cache_reads_only_what_was_appended(
    workspace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, journal = _two_commits(workspace)
    cache = JournalCache()
    starts = _reads(monkeypatch)
    first = cache.entries(journal)
    assert [e.seq for e in first] == [1, 2] and starts == [0]
    assert cache.entries(journal) is first and starts == [0]  # unchanged: not read
    size = os.path.getsize(journal.path)
    store.extend([rec("c-note")])
    later = cache.entries(journal)
    assert starts == [0, size]  # only the new line
    assert later == journal.read().entries and [e.seq for e in later] == [1, 2, 3]


def test_a_rewritten_or_shorter_journal_is_read_whole_again(workspace: str) -> None:
    _store, journal = _two_commits(workspace)
    cache = JournalCache()
    assert len(cache.entries(journal)) == 2
    path = Path(journal.path)
    lines = path.read_text().splitlines(keepends=True)
    # Edited by hand: the first line changes, and a line is added.
    edited = json.loads(lines[0])
    edited["at"] = "2026-01-01T12:00:00+00:00"
    path.write_text(json.dumps(edited, sort_keys=True) + "\n" + "".join(lines[1:]) + lines[1])
    assert cache.entries(journal)[0].at == "2026-01-01T12:00:00+00:00"
    path.write_text(lines[0])  # shorter
    assert [e.seq for e in cache.entries(journal)] == [1]
    path.unlink()
    assert cache.entries(journal) == ()


def test_spacing_and_saved_dates(workspace: str) -> None:
    store = MemoryStore(workspace)
    store.extend([rec("a-note"), rec("b-note")])
    store.apply_consolidation(base_records=(), source_names=(), replacements=())
    store.extend([rec("c-note")])
    entries = store.history()[::-1]
    counted = spacing(entries)
    assert (counted.added, counted.since, counted.last_seq) == (1, 2, 3)
    assert spacing(entries, after_seq=3).added == 0
    files = [e.file for e in store.entries()]
    assert (
        spacing(entries, current=[*files, "theirs-00000000000000000000000000000001.md"]).added == 2
    )
    dates = saved_dates(entries, files)
    assert set(dates) == set(files) and all(len(d) == 10 for d in dates.values())
    assert saved_dates(entries, ["unknown-00000000000000000000000000000001.md"]) == {}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_at_the_journal_path_never_blocks(workspace: str) -> None:
    store = MemoryStore(workspace)
    store.extend([rec("a-note")])
    journal = store.journal()
    assert journal is not None
    cache = JournalCache()
    cache.entries(journal)
    os.unlink(journal.path)
    os.mkfifo(journal.path)
    # Another file now: read whole, without waiting for a writer.
    assert cache.entries(journal) == ()
