"""benchmarks/agent_doors.py and the issue-39 corpora: the corpus files load, a malformed
door item is refused with its file and line, and one planted and one benign item go
through each real door (``sync pull --commit auto`` as a subprocess against the local
memory store, ``mcp --commit auto`` over the stdio client, the memory tool in the SDK's
tool runner), so the runner keeps working."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from screen_support import BENCHMARKS, load_benchmark

from ipymemory import MemoryRecord
from ipymemory.store.record import parse_record

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


#: The second held-out round (written apart from the rules; the coordinator runs it first).
HELDOUT5 = CORPORA / "heldout5.jsonl"
DOORS2 = CORPORA / "agent_doors2.jsonl"


@pytest.mark.parametrize(
    ("corpus", "languages", "fewest"),
    [
        (HELDOUT5, 26, 15),  # 19 languages, 6 code-mixed, English
        (CORPORA / "heldout6.jsonl", 22, 6),  # round 3: new styles, 21 languages
        (CORPORA / "heldout7.jsonl", 26, 5),  # round 3: user and file in one language
    ],
)
def test_the_held_out_scenes_are_what_they_claim(corpus: Path, languages: int, fewest: int) -> None:
    loaded = scenes.load_scenes(corpus)
    assert len(loaded) >= 120
    assert {s.group for s in loaded} == {"genuine", "attack", "update"}
    assert len({s.lang for s in loaded}) >= languages
    for s in loaded:
        MemoryRecord.from_json(s.item, s.name)  # what the extractor proposes is a record
        for record in s.existing:
            MemoryRecord.from_json(record, s.name)
        user = [s.query, s.follow_up or ""]
        tools = [text for _, text in s.files] + ([s.script[1]] if s.script else [])
        # An excerpt the extractor cites is in what the turn saw, verbatim; a planted
        # item's excerpts are all from a file or an output, never the user's words.
        assert s.evidence and all(any(e in t for t in user + tools) for e in s.evidence), s.name
        if s.planted:
            assert tools and not any(e in t for e in s.evidence for t in user), s.name
        if s.replaces is not None or s.group == "update":
            assert s.group == "update", s.name
            assert s.replaces in {r["name"] for r in s.existing}, s.name
        for path, text in s.files:
            if path.endswith(".ipynb"):
                assert json.loads(text)["cells"], s.name
    kinds = Counter((s.planted, s.replaces is not None) for s in loaded)
    assert len(kinds) == 4 and min(kinds.values()) >= fewest, kinds  # (planted?, update?)
    # A planted item "beside a genuine one" shares its turn with a genuine scene.
    turns = {(s.query, s.files, s.script) for s in loaded if not s.planted}
    beside = [s for s in loaded if s.category == "beside-genuine"]
    assert len(beside) >= 10 and all((s.query, s.files, s.script) in turns for s in beside)


@pytest.mark.parametrize(
    ("corpus", "scripts"),
    [
        (DOORS2, {"ka", "hy", "am", "ta", "bn"}),  # planted in scripts the screen cannot read
        (CORPORA / "agent_doors3.jsonl", {"el", "he", "fa", "th", "cs"}),
    ],
)
def test_the_held_out_door_corpora_are_what_they_claim(corpus: Path, scripts: set[str]) -> None:
    items = doors.load_items(corpus)
    planted = [i for i in items if i.planted]
    assert len(planted) == len(items) - len(planted) == 80
    assert scripts <= {i.lang for i in items}
    assert len({i.lang for i in planted}) >= 20
    assert len({i.category for i in planted}) >= 12 and all(i.why for i in planted)
    assert len({i.category for i in items if not i.planted}) >= 10
    for i in items:
        # The record file every door writes reads back as the item: a door that holds
        # one holds it for what it says, not for a file that does not parse.
        record = parse_record(i.record_file().encode(), i.name)
        assert record.to_json() == i.item, i.name


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


def test_the_screen_door_decides_as_every_door_screens(tmp_path: Path) -> None:
    # ``--door screen`` applies in-process what the doors apply: the same two items.
    by_name = {i.name: i for i in doors.load_items()}
    outcomes = doors.run_items([by_name[PLANTED], by_name[BENIGN]], (doors.SCREEN,), tmp_path)
    assert [(o.item.name, o.committed) for o in outcomes] == [(PLANTED, False), (BENIGN, True)]
    assert outcomes[0].reasons and all(":" in r for r in outcomes[0].reasons)
