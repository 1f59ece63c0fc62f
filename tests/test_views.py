"""Views: static mime bundles (escaped) and the ipywidgets forms, driven by traits and click()."""

from __future__ import annotations

import json
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from notebook_support import items_json
from record_support import rec

from ipymemory import (
    AgentSession,
    MemoryRecord,
    MemoryStore,
    ScriptedModel,
    SessionConfig,
    StoredRecord,
)
from ipymemory.review import Decision
from ipymemory.views import (
    MIME_TYPE,
    BatchReview,
    BatchView,
    CheckView,
    ConsolidationPlanView,
    ErrorView,
    ManifestView,
    ManifestWidget,
    MessageView,
    RecordView,
    SelectionView,
    SelectionWidget,
    StatusView,
)

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
EVIL = '<img src=x onerror="alert(1)"> & <script>alert(2)</script>'


def assert_escaped(html: str) -> None:
    assert "<img" not in html and "<script>" not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html


# --- static bundles ------------------------------------------------------------------


def test_manifest_bundle_has_the_agreed_json_and_escaped_html() -> None:
    entry = StoredRecord("evil-0123.md", rec("evil", description=EVIL, body=EVIL))
    bundle = ManifestView("/w/.memory", [entry])._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", MIME_TYPE}
    assert bundle[MIME_TYPE] == {
        "view": "manifest",
        "directory": "/w/.memory",
        "error": None,
        "unreadable": None,
        "records": [
            {
                "name": "evil",
                "type": "project",
                "description": EVIL,
                "file": "evil-0123.md",
                "id": "evil-0123.md",  # (no 32-hex id to shorten)
                "body": EVIL,
            }
        ],
    }
    assert_escaped(bundle["text/html"])
    assert "evil-0123.md" in bundle["text/plain"] and "1 record" in bundle["text/plain"]
    json.dumps(bundle[MIME_TYPE])


def test_manifest_load_turns_a_store_error_into_the_view_error(workspace: str) -> None:
    store = MemoryStore(workspace)
    store.extend([rec("prefers-tabs")])
    (store.root / "manifest.json").write_text('{"version": 1, "files": [1]}')
    view = ManifestView.load(store)
    data = view.to_json()
    assert data["records"] == [] and data["error"] and "manifest" in data["error"]
    assert "Error:" in view.to_text()
    # An unreadable set is not an empty one: no "0 records" headline.
    for shown in (view.to_text(), view.to_html()):
        assert "0 records" not in shown and "cannot read" in shown


def test_manifest_html_puts_the_body_under_the_description() -> None:
    entry = StoredRecord("a-0123.md", rec("a", description="the description", body="the body"))
    html = ManifestView("/w/.memory", [entry]).to_html()
    description_cell = html.split("the description", 1)[1].split("</td>", 1)[0]
    assert "<details>" in description_cell and "the body" in description_cell
    file_cell = html.split("a-0123.md", 1)[1].split("</td>", 1)[0]
    assert "<details>" not in file_cell


def test_selection_headline_says_when_the_model_chose_nothing() -> None:
    view = SelectionView("q", [], "model", compact=True)
    assert view.to_text() == "Memories injected: none (the model found none relevant)"
    assert "chosen by the model" in SelectionView("q", [rec("a")], "model").to_text()


def test_selection_bundle_escapes_query_and_reason() -> None:
    view = SelectionView(EVIL, [rec("a", description=EVIL)], "fallback", reason=EVIL)
    bundle = view._repr_mimebundle_()
    assert bundle[MIME_TYPE] == {
        "view": "selection",
        "query": EVIL,
        "source": "fallback",
        "reason": EVIL,
        "records": [{"name": "a", "type": "project", "description": EVIL}],
        "model_pick": None,
        "model_added": [],
        "model_reason": None,
    }
    assert_escaped(bundle["text/html"])
    assert "fallback" in bundle["text/plain"] and "Why:" in bundle["text/plain"]
    # What the model's pick added, or why it failed (SPEC §13), escaped the same way.
    added = SelectionView(
        EVIL, [rec("a")], "keyword", EVIL, added=[rec("b", description=EVIL)], pick="model"
    )._repr_mimebundle_()
    assert added[MIME_TYPE]["model_added"] == [
        {"name": "b", "type": "project", "description": EVIL}
    ]
    assert_escaped(added["text/html"])
    assert "The model's pick adds: b" in added["text/plain"]
    failed = SelectionView(EVIL, [rec("a")], "keyword", pick="fallback", pick_reason=EVIL)
    assert_escaped(failed._repr_mimebundle_()["text/html"])
    assert failed.to_json()["model_reason"] == EVIL


def test_record_status_error_message_views() -> None:
    record = RecordView(StoredRecord("a-1.md", rec("a", description=EVIL, body=EVIL)))
    data = record._repr_mimebundle_()
    assert data[MIME_TYPE] == {
        "view": "record",
        "file": "a-1.md",
        "record": rec("a", EVIL, EVIL).to_json(),
        "history": None,
    }
    assert_escaped(data["text/html"])

    status = StatusView("/w/.memory", model=None, records=3, pending=1, last_error=EVIL)
    data = status._repr_mimebundle_()
    assert data[MIME_TYPE] == {
        "view": "status",
        "directory": "/w/.memory",
        "model": None,
        "pending": 1,
        "last_error": EVIL,
        "records": 3,
        "user_scope": None,
        "settings": [],
    }
    assert_escaped(data["text/html"])
    assert "not configured" in data["text/plain"]
    # The last error appears once, highlighted in its row (not also above the table).
    assert data["text/html"].count("&lt;script&gt;alert(2)") == 1
    assert 'class="ipm-error"' in data["text/html"]

    error = ErrorView(EVIL, where="%memory list")._repr_mimebundle_()
    assert error[MIME_TYPE]["view"] == "error" and error[MIME_TYPE]["error"] == EVIL
    assert_escaped(error["text/html"])
    assert error["text/plain"].startswith("%memory list failed:")

    message = MessageView(EVIL)._repr_mimebundle_()
    assert_escaped(message["text/html"])

    problem = {"file": EVIL, "reason": EVIL, "severity": "error", "leftover": False}
    check = CheckView("/w/.memory", [problem])._repr_mimebundle_()
    assert check[MIME_TYPE] == {
        "view": "check",
        "directory": "/w/.memory",
        "ok": False,
        "exists": True,
        "problems": [problem],
    }
    assert_escaped(check["text/html"])
    assert CheckView("/w/.memory", []).to_text().startswith("OK:")


def test_batch_bundle_with_plan_is_a_diff() -> None:
    old = rec("old-note", description="old description")
    new = rec("merged", description=EVIL, body=EVIL)
    plan = ConsolidationPlanView(["old-note"], [new], sources=[old])
    view = BatchView([rec("x"), rec("y")], plan=plan, decision=Decision(reject=["y"]))
    data = view._repr_mimebundle_()
    assert data[MIME_TYPE] == {
        "view": "batch",
        "status": "pending",
        "items": [
            {**rec("x").to_json(), "accepted": True, "decision": "accept"},
            {**rec("y").to_json(), "accepted": False, "decision": "reject"},
        ],
        "consolidation": {
            "source_names": ["old-note"],
            # the replaced records themselves, so a renderer can show them after the commit
            "sources": [old.to_json()],
            "records": [new.to_json()],
            "accepted": True,
        },
        "committed": [],
        "notes": [],
        "outcome": None,
        "error": None,
        "id": None,
        "hint": "Review it: %memory commit [--reject NAME …] [--no-plan]  or  %memory discard",
    }
    assert_escaped(data["text/html"])
    text = data["text/plain"]
    assert "- old-note: old description" in text and "+ merged (project)" in text
    assert "reject    y" in text and "%memory commit" in text
    assert "2 extracted memories + a consolidation plan" in text
    assert "%memory commit" in data["text/html"]  # the hint without widgets, too


def test_batch_headline_of_a_plan_alone_does_not_count_zero_items() -> None:
    plan = ConsolidationPlanView(["a", "b"], [rec("ab")], sources=[rec("a"), rec("b")])
    view = BatchView([], plan=plan)
    assert view.to_text().splitlines()[0] == "Memory batch (pending): a consolidation plan"
    assert "0 extracted" not in view.to_html()


# --- widgets -------------------------------------------------------------------------


def test_manifest_widget_rows_expand_and_carry_the_static_bundle(workspace: str) -> None:
    store = MemoryStore(workspace)
    store.extend([rec("first", body="first body"), rec("second", description=EVIL, body=EVIL)])
    widget = ManifestWidget(ManifestView.load(store), store)
    bundle = widget._repr_mimebundle_()
    assert {WIDGET_MIME, MIME_TYPE, "text/html", "text/plain"} <= set(bundle)
    assert [r["name"] for r in bundle[MIME_TYPE]["records"]] == ["first", "second"]
    assert widget.rows.titles[1].startswith("second (project)")  # rendered as text
    assert widget.rows.selected_index is None
    widget.rows.selected_index = 1  # expand the second row: its panel holds the body
    panel = widget.rows.children[widget.rows.selected_index]
    texts = " ".join(child.value for child in panel.children)
    assert "second-" in texts and ".md" in texts
    assert_escaped(texts)

    store.forget(["first"])
    widget.refresh_button.click()
    assert [r["name"] for r in widget._repr_mimebundle_()[MIME_TYPE]["records"]] == ["second"]


def test_selection_widget_lists_selected_records() -> None:
    view = SelectionView("tabs?", [rec("prefers-tabs", body="uses tabs")], "model")
    widget = SelectionWidget(view)
    assert widget.rows.titles == ("prefers-tabs (project) — about prefers-tabs",)
    assert widget._repr_mimebundle_()[MIME_TYPE]["source"] == "model"


def _session_with_batch(
    workspace: str, *items: MemoryRecord, **config: Any
) -> tuple[AgentSession, Any]:
    model = ScriptedModel(["The answer.", items_json(*items)])
    session = AgentSession(workspace, model=model, config=SessionConfig(**config))
    result = session.run_turn("Remember things")
    assert result.batch is not None and result.batch.status == "pending"
    return session, result.batch


def test_review_reject_two_of_three_commits_exactly_one(workspace: str) -> None:
    session, batch = _session_with_batch(
        workspace, rec("keep-me"), rec("drop-one"), rec("drop-two")
    )
    review = BatchReview(session, batch)
    assert "Commit: 0 → 3 records (writes 3)" in review.summary.value
    review.decisions["drop-one"].value = "reject"
    review.decisions["drop-two"].value = "reject"
    assert review.rejected == ("drop-one", "drop-two")
    # The choice shows before the click: what Commit will write, rejected rows struck out.
    assert "Commit: 0 → 1 record (writes 1; rejects 2)" in review.summary.value
    struck = [n for n, label in review._labels.items() if "line-through" in label.value]
    assert struck == ["drop-one", "drop-two"]
    review.commit_button.click()

    assert [r.name for r in session.store.records()] == ["keep-me"]
    assert review.status == "committed" and review.committed == ("keep-me",)
    assert "Committed: keep-me" in review.result.value
    assert review.commit_button.disabled and review.discard_button.disabled
    assert all(t.disabled for t in review.decisions.values())
    data = review._repr_mimebundle_()[MIME_TYPE]
    assert data["status"] == "committed" and data["committed"] == ["keep-me"]
    assert [i["accepted"] for i in data["items"]] == [True, False, False]
    assert session.pending == ()
    review.commit_button.click()  # a second click does nothing
    assert [r.name for r in session.store.records()] == ["keep-me"]


def test_review_discard_writes_nothing(workspace: str) -> None:
    session, batch = _session_with_batch(workspace, rec("a"), rec("b"))
    review = BatchReview(session, batch)
    review.discard_button.click()
    assert session.store.records() == ()
    assert review.status == "discarded" and "Discarded" in review.result.value
    assert review.commit_button.disabled


def test_review_plan_accept_reject_and_a_refused_decision(workspace: str) -> None:
    store = MemoryStore(workspace)
    store.extend(
        [rec("tabs-a", description="tabs in python"), rec("tabs-b", description="tabs in js")]
    )
    merged = rec("prefers-tabs", description="tabs everywhere", body="Tabs in every language.")
    plan = json.dumps(
        {"source_names": ["tabs-a", "tabs-b", "tabs-c"], "records": [merged.to_json()]}
    )
    model = ScriptedModel(
        [  # (no selector reply: the two records fit)
            "Noted.",
            items_json(rec("tabs-c", description="tabs in go"), rec("other")),
            plan,
        ]
    )
    config = SessionConfig(consolidate_threshold=3, consolidate_every=1)
    session = AgentSession(workspace, model=model, config=config)
    batch = session.run_turn("tabs").batch
    assert batch is not None and batch.plan is not None
    review = BatchReview(session, batch)
    assert review.plan_decision is not None
    html = review._repr_mimebundle_()["text/html"]
    assert "tabs-a" in html and "prefers-tabs" in html
    # The net change of the set: 2 records before, 2 after (issue 14 #4).
    assert (
        "Commit: 2 → 2 records (writes 2; replaces 2 of the set; merges 1 new item into the plan)"
        in review.summary.value
    )

    # Rejecting an item the accepted plan merges: the plan is checked again at once,
    # what would happen is said and Commit is disabled; a commit anyway is refused.
    review.decisions["tabs-c"].value = "reject"
    assert "The plan merges tabs-c, which you rejected" in review.summary.value
    assert review.commit_button.disabled
    review.commit_button.click()
    assert "refused" in review.result.value and review.status == "pending"
    assert [r.name for r in store.records()] == ["tabs-a", "tabs-b"]

    # Rejecting the plan too makes the decision valid: only "other" is added.
    review.plan_decision.value = "reject"
    assert "(writes 1; rejects 1; skips the plan)" in review.summary.value
    assert not review.commit_button.disabled
    review.commit_button.click()
    assert review.status == "committed"
    assert [r.name for r in store.records()] == ["tabs-a", "tabs-b", "other"]
    assert review._repr_mimebundle_()[MIME_TYPE]["consolidation"]["accepted"] is False


def test_review_with_accepted_plan_swaps_in_one_commit(workspace: str) -> None:
    store = MemoryStore(workspace)
    store.extend([rec("tabs-a"), rec("tabs-b")])
    merged = rec("prefers-tabs", description="tabs everywhere")
    plan = json.dumps({"source_names": ["tabs-a", "tabs-b"], "records": [merged.to_json()]})
    model = ScriptedModel(["Noted.", items_json(rec("other")), plan])
    config = SessionConfig(consolidate_threshold=3, consolidate_every=1)
    session = AgentSession(workspace, model=model, config=config)
    batch = session.run_turn("tabs").batch
    review = BatchReview(session, batch)
    review.commit_button.click()
    assert sorted(r.name for r in store.records()) == ["other", "prefers-tabs"]
    assert "replaced: tabs-a, tabs-b" in review.result.value


def test_displayed_review_is_replaced_by_its_static_outcome(workspace: str) -> None:
    InteractiveShell.instance()
    session, batch = _session_with_batch(workspace, rec("one"))
    review = BatchReview(session, batch)
    with capture_output() as captured:
        from IPython.display import display

        display(review)
        review.commit_button.click()
    first, update = captured.outputs[0], captured.outputs[-1]
    assert WIDGET_MIME in first.data and first.data[MIME_TYPE]["status"] == "pending"
    assert update.update and WIDGET_MIME not in update.data
    assert update.data[MIME_TYPE]["status"] == "committed"
    assert update.transient["display_id"] == first.transient["display_id"]
    # Decided by its own button, here: the outcome, not "decided later" (issue 43).
    assert "decided later" not in update.data["text/plain"]


@pytest.mark.parametrize("status", ["committed", "discarded"])
def test_review_of_a_finished_batch_is_read_only(workspace: str, status: str) -> None:
    session, batch = _session_with_batch(workspace, rec("one"))
    if status == "committed":
        session.commit(batch)
    else:
        session.discard(batch)
    finished = next(b for b in session.batches if b.id == batch.id)
    review = BatchReview(session, finished)
    assert review.status == status and review.commit_button.disabled


def test_review_follows_its_batch_when_decided_elsewhere(workspace: str) -> None:
    InteractiveShell.instance()  # display() is captured through the shell's publisher
    session, batch = _session_with_batch(workspace, rec("one"), rec("two"))
    review = BatchReview(session, batch)
    with capture_output() as captured:
        from IPython.display import display

        display(review)
        # Decided by code (as %memory commit does), not by the widget's buttons.
        session.commit(batch, reject=["two"])
    assert review.status == "committed" and review.committed == ("one",)
    assert review.decisions["two"].value == "reject" and review.decisions["one"].value == "accept"
    assert all(t.disabled for t in review.decisions.values()) and review.commit_button.disabled
    assert "Committed: one" in review.result.value
    # Where it was proposed, the saved output reads as the proposal, then says what the
    # later cell decided (issue 43): not as a second copy of the commit.
    update = captured.outputs[-1]
    assert update.update and update.data[MIME_TYPE]["status"] == "pending"
    assert update.data[MIME_TYPE]["hint"] == (
        "Proposed here; decided later, in another cell: Committed: one"
    )
    assert update.data["text/plain"].startswith("Memory batch (proposed here)")


def test_review_shows_a_store_failure_and_stays_decidable(workspace: str) -> None:
    session, batch = _session_with_batch(workspace, rec("clash"), rec("other"))
    review = BatchReview(session, batch)
    MemoryStore(workspace).extend([rec("clash", body="written by another kernel")])
    review.commit_button.click()
    assert review.status == "failed" and "refused" in review.result.value
    assert "another session" in (review.error or "")
    assert not review.commit_button.disabled and session.pending != ()
    review.decisions["clash"].value = "reject"
    review.commit_button.click()
    assert review.status == "committed" and review.committed == ("other",)
    assert [r.name for r in session.store.records()] == ["clash", "other"]


def test_closed_review_no_longer_observes(workspace: str) -> None:
    session, batch = _session_with_batch(workspace, rec("one"))
    review = BatchReview(session, batch)
    review.close()
    session.discard(batch)  # the closed widget is not told (and nothing fails)
    assert session.pending == () and review.status == "pending"
    assert review.result.value == ""
