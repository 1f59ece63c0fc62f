"""Issue 14 #3, #4, #6: the review widget's layout, the net change of the set, a plan
re-checked against the decisions, what a decided batch shows per item, and "commit the
rest" after another session took a name. Real traits and click()."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from notebook_support import items_json
from record_support import rec

from ipymemory import (
    AgentSession,
    ConsolidationPlan,
    MemoryStore,
    PendingBatch,
    ScriptedModel,
    SessionConfig,
)
from ipymemory.review import Decision, PlanChoice
from ipymemory.review.commit import apply_batch, commit_effect
from ipymemory.views import MIME_TYPE, BatchReview, BatchView


def _review(workspace: str, *items: object, plan: str | None = None, **config: int) -> BatchReview:
    # The selector is asked only when there is a choice: more records than max_selected.
    limit = config.get("max_selected", SessionConfig().max_selected)
    selector = ["[]"] if len(MemoryStore(workspace).records()) > limit else []
    replies = [*selector, "Noted.", items_json(*items)]  # type: ignore[arg-type]
    if plan is not None:
        replies.append(plan)
    session = AgentSession(workspace, model=ScriptedModel(replies), config=SessionConfig(**config))
    batch = session.run_turn("remember").batch
    assert batch is not None and batch.open
    return BatchReview(session, batch)


def test_item_controls_sit_in_a_fixed_column_and_the_text_wraps_beside_them(
    workspace: str,
) -> None:
    review = _review(workspace, rec("a", description="word " * 60))
    rows = [c for c in review.children if hasattr(c, "children") and c.children]
    row = next(
        r.children[0]
        for r in rows
        if "ipymemory-review-row" in getattr(r.children[0], "_dom_classes", ())
    )
    controls, label = row.children
    assert row.layout.flex_flow == "row nowrap"
    assert controls.layout.flex == "0 0 auto" and controls.layout.flex_flow == "row nowrap"
    toggle, _outcome, body = controls.children
    assert toggle.layout.min_width == toggle.layout.width  # never narrower: no stacking
    assert body.layout.min_width == body.layout.width and body.description == "body"
    assert label.layout.flex == "1 1 0%" and label.layout.min_width == "0"
    assert "white-space:normal" in label.value


def test_the_summary_shows_the_net_change_of_the_set(workspace: str) -> None:
    store = MemoryStore(workspace)
    store.extend([rec(f"old-{i}") for i in range(4)])
    items = [rec(f"new-{i}") for i in range(6)]
    merged = [rec("new-ab"), rec("new-cd")]
    plan = json.dumps(
        {
            "source_names": ["new-0", "new-1", "new-2", "new-3"],
            "records": [r.to_json() for r in merged],
        }
    )
    review = _review(workspace, *items, plan=plan, consolidate_threshold=3, consolidate_every=1)
    # Not "writes 6 of 6": four of the six are merged into two at once.
    assert (
        "Commit: 4 → 8 records (writes 4; merges 4 new items into the plan)" in review.summary.value
    )
    review.commit_button.click()
    assert len(store.records()) == 8


def test_rejecting_an_item_the_plan_merges_says_what_happens_and_blocks_commit(
    workspace: str,
) -> None:
    plan = json.dumps({"source_names": ["a", "b"], "records": [rec("ab").to_json()]})
    review = _review(
        workspace, rec("a"), rec("b"), plan=plan, consolidate_threshold=2, consolidate_every=1
    )
    assert not review.commit_button.disabled
    review.decisions["b"].value = "reject"
    assert "The plan merges b, which you rejected" in review.summary.value
    assert review.commit_button.disabled
    assert review.plan_decision is not None
    review.plan_decision.value = "reject"
    assert not review.commit_button.disabled
    assert "Commit: 0 → 1 record (writes 1; rejects 1; skips the plan)" in review.summary.value
    review.commit_button.click()
    assert [r.name for r in review._session.store.records()] == ["a"]


def test_a_discarded_batch_shows_every_item_discarded(workspace: str) -> None:
    review = _review(workspace, rec("a"), rec("b"))
    review.discard_button.click()
    for name in ("a", "b"):
        assert review.decisions[name].layout.display == "none"  # no "accept" left
        assert review.outcomes[name].layout.display == ""
        assert "discarded" in review.outcomes[name].value
        assert "line-through" in review._labels[name].value
    data = review._repr_mimebundle_()[MIME_TYPE]
    assert [i["decision"] for i in data["items"]] == ["discarded", "discarded"]
    assert "accept" not in BatchView.of(review.batch).to_text().split("Decision")[1]


def test_committed_items_say_written_merged_or_rejected(workspace: str) -> None:
    plan = json.dumps({"source_names": ["a", "b"], "records": [rec("ab").to_json()]})
    review = _review(
        workspace,
        rec("a"),
        rec("b"),
        rec("c"),
        rec("d"),
        plan=plan,
        consolidate_threshold=2,
        consolidate_every=1,
    )
    review.decisions["d"].value = "reject"
    review.commit_button.click()
    assert review.status == "committed"
    decisions = {n: review.outcomes[n].value for n in "abcd"}
    assert "merged" in decisions["a"] and "merged" in decisions["b"]
    assert "written" in decisions["c"] and "rejected" in decisions["d"]


def test_a_name_taken_by_another_session_offers_commit_the_rest(workspace: str) -> None:
    review = _review(workspace, rec("shared"), rec("mine"))
    assert review.commit_rest_button.layout.display == "none"
    MemoryStore(workspace).extend([rec("shared", description="the other kernel's")])
    review.commit_button.click()
    assert review.status in ("pending", "failed") and "refused" in review.result.value
    assert review.clashes == ("shared",)
    assert review.commit_rest_button.layout.display == ""
    assert "another session committed shared" in review.result.value
    review.commit_rest_button.click()
    assert review.status == "committed" and review.committed == ("mine",)
    store = MemoryStore(workspace)
    assert [r.name for r in store.records()] == ["shared", "mine"]
    assert store.records()[0].description == "the other kernel's"  # theirs untouched
    assert review.commit_rest_button.layout.display == "none"


# --- the summary never disagrees with the commit --------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    n_base=st.integers(0, 4),
    n_items=st.integers(0, 4),
    merged=st.sets(st.integers(0, 7), max_size=5),
    n_new=st.integers(1, 2),
    reject=st.sets(st.integers(0, 3), max_size=4),
    with_plan=st.booleans(),
    accept_plan=st.booleans(),
)
def test_commit_effect_matches_what_the_commit_does(
    tmp_path_factory: object,
    n_base: int,
    n_items: int,
    merged: set[int],
    n_new: int,
    reject: set[int],
    with_plan: bool,
    accept_plan: bool,
) -> None:
    workspace = tmp_path_factory.mktemp("fx")  # type: ignore[attr-defined]
    store = MemoryStore(workspace)
    if n_base:
        store.extend([rec(f"base-{i}") for i in range(n_base)])
    base = store.records()
    items = tuple(rec(f"item-{i}") for i in range(n_items))
    candidates = [*(r.name for r in base), *(r.name for r in items)]
    sources = tuple(candidates[i] for i in sorted(merged) if i < len(candidates))
    plan = None
    if with_plan and sources:
        plan = ConsolidationPlan(sources, tuple(rec(f"merged-{i}") for i in range(n_new)))
    batch = PendingBatch("b1", items, plan, base)
    rejected = [f"item-{i}" for i in reject if i < n_items]
    decision = Decision(reject=rejected, plan=PlanChoice.APPLY if accept_plan else PlanChoice.LEAVE)
    effect = commit_effect(batch, decision)
    if effect.conflict is not None:
        return  # apply_batch refuses the same decision (tested in test_views)
    added, removed = apply_batch(store, batch, decision)
    after = store.records()
    assert len(after) == effect.after and effect.before == n_base
    assert sorted(added) == sorted(effect.added) and sorted(removed) == sorted(effect.replaced)


def test_a_saved_pending_plan_shows_the_net_change_of_the_set(workspace: str) -> None:
    MemoryStore(workspace).extend([rec("old-a"), rec("old-b")])
    plan = json.dumps({"source_names": ["old-a", "old-b"], "records": [rec("ab").to_json()]})
    review = _review(workspace, rec("c"), plan=plan, consolidate_threshold=2, consolidate_every=1)
    bundle = review._repr_mimebundle_()
    assert bundle[MIME_TYPE]["net"] == {"before": 2, "after": 2}
    assert "Commit as chosen: 2 → 2 records" in bundle["text/plain"]
    assert "Commit as chosen: 2 → 2 records" in bundle["text/html"]
    assert review.plan_decision is not None
    review.plan_decision.value = "reject"  # the saved form follows the choices
    assert review._repr_mimebundle_()[MIME_TYPE]["net"] == {"before": 2, "after": 3}
    review.commit_button.click()
    assert "net" not in review._repr_mimebundle_()[MIME_TYPE]  # decided: the outcome says it
