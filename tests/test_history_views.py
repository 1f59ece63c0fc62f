"""The history views and the endpoint's journal reader on open input: whatever the
journal's actor and provenance hold (they are written by other tools too, and hold the
user's question), the views render, escape it, and never raise."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ipymemory.server.history import _entries
from ipymemory.store.history import Added, HistoryEntry, Removed
from ipymemory.views.history import (
    HistoryDiffView,
    HistoryView,
    describe_actor,
    entry_row,
    record_origin,
)

NAMES = st.from_regex(r"[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,6})?", fullmatch=True)
EVIL = "<ipm-evil>"  # markup that only unescaped journal text could put in the HTML
TEXT = st.text(max_size=30) | st.builds(
    lambda a, b: a + EVIL + b, st.text(max_size=8), st.text(max_size=8)
)
JSONISH: Any = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
FIELDS = ("notebook", "execution_count", "cell_id", "tool", "via", "pid", "session")


@st.composite
def entries(draw: Any) -> HistoryEntry:
    added = draw(st.lists(NAMES, max_size=3, unique=True))
    removed = draw(st.lists(NAMES, max_size=3, unique=True))
    actor = draw(st.dictionaries(st.sampled_from(FIELDS), JSONISH, max_size=5))
    prov = {
        name: draw(st.dictionaries(st.sampled_from(("query", "origin", "files_read")), JSONISH))
        for name in added
    }
    return HistoryEntry(
        seq=draw(st.integers(1, 10_000)),
        at=draw(TEXT),
        op=draw(st.sampled_from(("add", "forget", "consolidate", "undo", "restore", "external"))),
        before=None,
        after=None,
        added=tuple(Added(n, f"{n}-{'0' * 32}.md", None) for n in added),
        removed=tuple(Removed(n, f"{n}-{'1' * 32}.md", True) for n in removed),
        undoes=draw(st.none() | st.integers(1, 99)),
        actor=actor,
        provenance=prov,
    )


@settings(max_examples=80, deadline=None)
@given(st.lists(entries(), max_size=4))
def test_views_render_any_journal_content_escaped(history: list[HistoryEntry]) -> None:
    view = HistoryView("/w/.memory", history)
    assert isinstance(view.to_text(), str) and EVIL not in view.to_html()
    json.dumps(view.to_json())
    for entry in history:
        assert isinstance(describe_actor(entry.actor), str)
        json.dumps(entry_row(entry))
        assert EVIL not in HistoryDiffView(entry, (), ()).to_html()
        for added in entry.added:
            origin = record_origin(history, added.file, added.name)
            assert origin is not None and isinstance(origin["text"], str)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400), st.booleans())
def test_the_endpoint_reader_never_raises_on_any_bytes(data: bytes, cut: bool) -> None:
    entries, bad = _entries(data, cut)
    assert bad >= 0 and all(isinstance(e, HistoryEntry) for e in entries)
