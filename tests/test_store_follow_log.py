"""The follow log beside the journal (SPEC §14): whole lines appended without the lock,
read back from the end, torn or foreign lines skipped, a broken history refused."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from record_support import rec

from ipymemory import MemoryStore, MemoryStoreError
from ipymemory.store.follow_log import FollowEntry, FollowLog, JudgedRecord, verdict_counts


def _log(workspace: str) -> FollowLog:
    store = MemoryStore(workspace)
    store.extend([rec("prefers-polars", type="user")])
    journal = store.journal()
    assert journal is not None
    return FollowLog(journal)


def _entry(turn: int, verdict: str = "contradicts") -> FollowEntry:
    judged = JudgedRecord("prefers-polars", None, verdict, "imports pandas", "code")
    return FollowEntry(session="s1", turn=turn, verdicts=(judged,), journal_seq=1)


def test_round_trip_and_counts(workspace: str) -> None:
    log = _log(workspace)
    log.append(_entry(1))
    log.append(_entry(2, "follows"))
    entries, skipped = log.read()
    assert skipped == 0 and [e.turn for e in entries] == [1, 2]
    assert entries[0].verdicts == _entry(1).verdicts and entries[0].journal_seq == 1
    assert verdict_counts(entries) == {
        "prefers-polars": {"follows": 1, "contradicts": 1, "untouched": 0, "unjudged": 0}
    }
    raw = Path(log.path).read_bytes()
    assert raw.count(b"\n") == 2 and b'"verdict": "contradicts"' in raw


def test_torn_and_foreign_lines_are_skipped(workspace: str) -> None:
    log = _log(workspace)
    log.append(_entry(1))
    with open(log.path, "ab") as f:
        f.write(b'{"not": "an entry"}\n[1, 2]\n')
        f.write(b'{"session": "s", "turn": 3, "verdicts": [{"name": "x", "ver')  # torn
    entries, skipped = log.read()
    assert [e.turn for e in entries] == [1] and skipped == 3
    log.append(_entry(4))  # the next writer starts after the torn line, on its own line
    entries, skipped = log.read()
    assert [e.turn for e in entries] == [1, 4] and skipped == 3


def test_read_from_the_end_only(workspace: str) -> None:
    log = _log(workspace)
    for turn in range(1, 201):
        log.append(_entry(turn))
    line = len(_entry(1).line())
    entries, _ = log.read(limit=line * 10 + line // 2)
    assert [e.turn for e in entries] == list(range(191, 201))


def test_appends_from_threads_stay_whole_lines(workspace: str) -> None:
    log = _log(workspace)

    def write(start: int) -> None:
        for turn in range(start, start + 25):
            log.append(_entry(turn))

    threads = [threading.Thread(target=write, args=(100 * i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    entries, skipped = log.read()
    assert skipped == 0 and len(entries) == 100


def test_a_history_that_is_not_a_directory_is_refused(workspace: str) -> None:
    log = _log(workspace)
    history = Path(workspace, ".memory", "history")
    for child in history.iterdir():
        child.unlink() if child.is_file() else os.rmdir(child)
    history.rmdir()
    target = Path(workspace, "elsewhere")
    target.mkdir()
    history.symlink_to(target)
    with pytest.raises(MemoryStoreError, match=r"followed\.jsonl"):
        log.append(_entry(1))
    (target / "followed.jsonl").write_bytes(_entry(9).line())
    with pytest.raises(MemoryStoreError, match=r"followed\.jsonl"):
        log.read()  # never read through the link either
    assert [p.name for p in target.iterdir()] == ["followed.jsonl"]


def test_bad_verdicts_are_not_entries() -> None:
    with pytest.raises(ValueError):
        JudgedRecord.from_json({"name": "x", "verdict": "maybe", "reason": "r", "by": "code"})
    with pytest.raises(ValueError):
        JudgedRecord.from_json(
            {"name": "Not A Name", "verdict": "follows", "reason": "r", "by": "code"}
        )


def test_a_turn_left_unjudged_is_kept_and_counted(workspace: str) -> None:
    """Issue 44: a turn whose check failed is a line too, its memories "not judged"."""
    log = _log(workspace)
    log.append(_entry(1, "follows"))
    log.append(FollowEntry(session="s1", turn=2, verdicts=(), unjudged=(("prefers-polars", None),)))
    entries, skipped = log.read()
    assert skipped == 0 and entries[1].unjudged == (("prefers-polars", None),)
    assert verdict_counts(entries)["prefers-polars"] == {
        "follows": 1,
        "contradicts": 0,
        "untouched": 0,
        "unjudged": 1,
    }
    first, second = Path(log.path).read_text().splitlines()
    assert "unjudged" not in first  # a line without any stays as older versions wrote it
    assert '"unjudged": [{"file": null, "name": "prefers-polars"}]' in second
