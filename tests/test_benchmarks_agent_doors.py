"""benchmarks/agent_doors.py and the issue-39 corpora: the corpus files load, a malformed
door item is refused with its file and line, and one planted and one benign item go
through each real door (``sync pull --commit auto`` as a subprocess against the local
memory store, ``mcp --commit auto`` over the stdio client, the memory tool in the SDK's
tool runner), so the runner keeps working."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from screen_support import BENCHMARKS, load_benchmark

scenes = load_benchmark("scenes")
doors = load_benchmark("agent_doors")

CORPORA = BENCHMARKS / "corpora"
#: Held today by every door and expected to stay held: a download piped into a shell.
PLANTED = "p-en-env-bootstrap"
#: Committed today by every door: a team's tool preference, nothing that can act.
BENIGN = "b-en-prefers-polars"


def test_the_issue_39_corpora_load_with_their_loaders() -> None:
    heldout4 = scenes.load_scenes(CORPORA / "heldout4.jsonl")
    assert len(heldout4) >= 120
    assert {s.group for s in heldout4} == {"genuine", "attack", "update"}
    planted_updates = [s for s in heldout4 if s.planted and s.replaces is not None]
    assert planted_updates and all(s.existing for s in planted_updates)
    assert len({s.lang for s in heldout4}) >= 19  # 14 languages, 5 code-mixed, English

    items = doors.load_items()
    planted = [i for i in items if i.planted]
    assert len(planted) == len(items) - len(planted) >= 60  # as many benign as planted
    assert len({i.lang for i in planted}) >= 12
    assert {i.name for i in items} >= {PLANTED, BENIGN}


def test_a_malformed_door_item_is_refused_with_its_file_and_line(tmp_path: Path) -> None:
    good = {"name": "a", "category": "c", "lang": "en", "planted": False, "item": {
        "name": "a", "type": "project", "description": "d", "body": "b"}}  # fmt: skip
    path = tmp_path / "doors.jsonl"
    lines = [good, {**good, "name": "b", "planted": "yes"}]
    path.write_text("// comment\n" + "".join(json.dumps(v) + "\n" for v in lines))
    with pytest.raises(scenes.CorpusError, match=r"doors.jsonl:3\.planted: true or false"):
        doors.load_items(path)
    path.write_text(json.dumps({**good, "item": {"name": "a"}}) + "\n")
    with pytest.raises(scenes.CorpusError, match=r"doors.jsonl:1\.item: needs exactly the keys"):
        doors.load_items(path)


def test_one_planted_and_one_benign_item_through_each_real_door(tmp_path: Path) -> None:
    by_name = {i.name: i for i in doors.load_items()}
    outcomes = doors.run_items([by_name[PLANTED], by_name[BENIGN]], workdir=tmp_path)
    assert [(o.item.name, o.door) for o in outcomes] == [
        (name, door) for name in (PLANTED, BENIGN) for door in doors.DOORS
    ]
    for o in outcomes:
        if o.item.planted:
            assert (o.committed, o.status) == (False, "pending"), o
            assert o.reasons, o  # each door says why it waits
        else:
            assert (o.committed, o.status, o.reasons) == (True, "committed", ()), o
        assert not o.wrong
    report = doors.report(outcomes)
    assert list(report) == list(doors.DOORS)
    for row in report.values():
        assert (row["planted"], row["planted_committed"], row["benign"], row["benign_held"]) == (
            1,
            0,
            1,
            0,
        )
        assert row["rows"]["language en"] == {
            "planted": {"n": 1, "wrong": 0},
            "benign": {"n": 1, "wrong": 0},
        }
        assert row["wrong"] == []
