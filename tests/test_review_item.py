"""An item of a batch carries its own facts (ipymemory/review/item.py, issue 42): whatever
filters, splits or joins a batch keeps each item's origin, flags, findings, redaction,
update, scope, evidence and sources with it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from record_support import rec

from ipymemory import BatchError, PendingBatch
from ipymemory.review import Item
from ipymemory.review.batch import scope_parts
from ipymemory.review.pending import PendingFiles
from ipymemory.review.screened import split_for_auto
from ipymemory.screen import Origin
from ipymemory.screen.rules import Finding


def test_a_bare_record_is_a_plain_item_of_the_project() -> None:
    item = Item(rec("a"))
    assert (item.name, item.origin, item.scope) == ("a", Origin.USER, "project")
    assert not item.flagged and not item.held and item.rules == ()
    assert Item.of(rec("a")) == item and Item.of(item) is item


def test_an_origin_is_taken_by_value_and_a_scope_is_checked() -> None:
    assert Item(rec("a"), "tool").origin is Origin.TOOL  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Item(rec("a"), "the internet")  # type: ignore[arg-type]
    with pytest.raises(BatchError, match="'a': scope 'team' is not project or user"):
        Item(rec("a"), scope="team")  # type: ignore[arg-type]


def test_held_redacted_and_rules() -> None:
    held = Item(rec("a"), flags=("instructs the assistant",))
    redacted = Item(rec("b"), flags=("holds a credential (github-token)",), redacted=True)
    found = Item(rec("c"), flags=("x",), findings=(Finding("agent.secret", "api key"),))
    assert held.held and held.flagged
    assert redacted.flagged and not redacted.held  # chosen as redacted, not accepted
    assert found.rules == (Finding("agent.secret", "api key"),)
    assert held.rules and all(isinstance(f, Finding) for f in held.rules)  # from its reason


def _items(draw: st.DrawFn) -> list[Item]:
    n = draw(st.integers(1, 6))
    out = []
    for i in range(n):
        out.append(
            Item(
                rec(f"item-{i}"),
                draw(st.sampled_from(list(Origin))),
                flags=tuple(
                    draw(st.lists(st.sampled_from(["from tool output", "instructs"]), max_size=2))
                ),
                redacted=draw(st.booleans()),
                replaces=draw(st.sampled_from([None, f"old-{i}"])),
                scope=draw(st.sampled_from(["project", "user"])),
                evidence=tuple(draw(st.lists(st.text(min_size=1, max_size=5), max_size=2))),
                sources=draw(st.sampled_from([{}, {f"f{i}.py": "0" * 64}])),
            )
        )
    return out


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_way_of_cutting_a_batch_keeps_each_items_facts(data: st.DataObject) -> None:
    """The class of bug the seven maps made possible: a cut that forgot one of them."""
    items = _items(data.draw)
    by_name = {item.name: item for item in items}
    batch = PendingBatch("b1", tuple(items), None, ())
    keep = data.draw(st.sets(st.sampled_from(list(by_name))))
    cuts = [batch.restricted(keep)]
    project, user = scope_parts(batch)
    cuts += [project, *([user] if user is not None else [])]
    cuts += [part for part in split_for_auto(batch) if part is not None]
    for cut in cuts:
        for item in cut.proposed:
            original = by_name[item.name]
            if cut is user:  # the user's part: this project's files are not its sources
                assert item == original.but(sources={})
            else:
                assert item == original
    assert {i.name for i in project.proposed} == {i.name for i in items if i.scope == "project"}


def test_the_maps_older_code_read_are_computed_from_the_items() -> None:
    batch = PendingBatch(
        "b1",
        (
            Item(rec("a"), Origin.TOOL, flags=("from tool output",), evidence=("q",)),
            Item(rec("b"), replaces="old-b", scope="user", sources={"x.py": "0" * 64}),
            rec("c"),
        ),
        None,
        (),
    )
    assert batch.items == (rec("a"), rec("b"), rec("c"))
    assert batch.origins == {"a": "tool", "b": "user", "c": "user"}
    assert batch.flags == {"a": ("from tool output",)}
    assert (batch.replaces, batch.scopes) == ({"b": "old-b"}, {"b": "user"})
    assert (batch.evidence, batch.sources) == ({"a": ("q",)}, {"b": {"x.py": "0" * 64}})
    assert batch.item("b").scope == "user" and batch.scope_of("b") == "user"
    with pytest.raises(BatchError, match="'z' is not an item of this batch"):
        batch.item("z")


def test_a_pending_file_keeps_the_format_it_always_had(tmp_path: Path) -> None:
    """Issue 42 changed the value, not the file: the same keys by item name, the plan's
    flags under its pseudo name, so a file written now opens in an earlier version."""
    memory = tmp_path / ".memory"
    batch = PendingBatch(
        "f1",
        (
            Item(rec("a"), Origin.TOOL, flags=("comes from tool output",), evidence=("e",)),
            Item(rec("b"), replaces="old-b", scope="user"),
        ),
        None,
        (),
    )
    files = PendingFiles(memory)
    assert files.save(batch), files.last_error
    data = json.loads((memory / "pending" / "f1.json").read_text(encoding="utf-8"))
    assert data["origins"] == {"a": "tool", "b": "user"}
    assert data["flags"] == {"a": ["comes from tool output"]}
    assert (data["replaces"], data["scopes"]) == ({"b": "old-b"}, {"b": "user"})
    assert data["evidence"] == {"a": ["e"]} and data["redacted"] == []
    [saved], problems = files.load(now=time.time())
    assert problems == [] and saved.batch.item("b").replaces == "old-b"
    assert saved.batch.item("a").origin is Origin.TOOL
