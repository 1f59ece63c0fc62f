"""A decision is one value (ipymemory/review/decision.py, issue 42): what a person or auto
mode decided, the plan's choice as its own field, built the same way by every front end."""

from __future__ import annotations

import pytest
from record_support import rec

from ipymemory import BatchError, BatchRegistry, ConsolidationPlan, MemoryStore, PendingBatch
from ipymemory.review import AUTO, DecidedBy, Decision, Item, PlanChoice
from ipymemory.review.decision import PLAN_NAME


def test_the_default_commits_what_screening_let_through_with_the_plan() -> None:
    decision = Decision()
    assert decision.plan is PlanChoice.APPLY and decision.applies_plan
    assert not decision.accepts_plan and decision.decided_by is DecidedBy.REVIEW
    assert AUTO.decided_by is DecidedBy.AUTO
    assert not Decision(plan=PlanChoice.LEAVE).applies_plan
    assert Decision(plan="accept").accepts_plan  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["reject", "accept", "redacted"])
def test_one_string_is_not_a_list_of_names(field: str) -> None:
    with pytest.raises(BatchError, match=f"{field} must be a collection of item names"):
        Decision(**{field: "uses-ruff"})  # type: ignore[arg-type]


def test_not_a_decision_is_refused() -> None:
    with pytest.raises(BatchError, match="not a decision"):
        Decision(plan="maybe")  # type: ignore[arg-type]
    with pytest.raises(BatchError, match="scopes must map"):
        Decision(scopes="user")  # type: ignore[arg-type]


def test_the_keywords_of_earlier_versions_say_the_same() -> None:
    said = Decision.from_keywords
    assert said({}) == Decision()
    assert said({"accept_plan": False, "reject": ["a"]}) == Decision(
        reject=("a",), plan=PlanChoice.LEAVE
    )
    # The plan named among the accepted, as callers before PlanChoice did.
    assert said({"accept": [PLAN_NAME, "b"]}) == Decision(accept=("b",), plan=PlanChoice.ACCEPT)
    assert said({"accept": [PLAN_NAME], "accept_plan": False}).plan is PlanChoice.LEAVE
    assert said({"scopes": None, "decided_by": "lab-panel"}).decided_by is DecidedBy.LAB_PANEL
    with pytest.raises(TypeError, match="unknown decision keyword"):
        said({"reject_plan": True})


def test_within_keeps_the_part_about_some_items() -> None:
    decision = Decision(
        reject=("a", "b"), accept=("c",), redacted=("d",), scopes={"a": "user", "c": "user"}
    )
    part = decision.within({"a", "c"})
    assert (part.reject, part.accept, part.redacted) == (("a",), ("c",), ())
    assert part.scopes == {"a": "user", "c": "user"}
    assert decision.rejecting(["e"]).reject == ("a", "b", "e")


def _held_plan_batch(workspace: str) -> tuple[MemoryStore, BatchRegistry, PendingBatch]:
    store = MemoryStore(workspace)
    store.extend([rec("x"), rec("y")])
    registry = BatchRegistry()
    plan = ConsolidationPlan(("x", "y"), (rec("xy"),))
    batch = registry.add(
        PendingBatch(
            "p1",
            (Item(rec("new")),),
            plan,
            store.records(),
            plan_flags=("it would replace 2 of the 2 records",),
        )
    )
    return store, registry, batch


def test_a_held_plan_goes_in_only_when_the_decision_accepts_it(workspace: str) -> None:
    store, registry, batch = _held_plan_batch(workspace)
    refused = registry.commit(store, batch)
    assert (
        refused.error is not None and "the consolidation plan is held for review" in refused.error
    )
    assert [r.name for r in store.records()] == ["x", "y"]
    left = registry.commit(store, batch, Decision(plan=PlanChoice.LEAVE))
    assert left.ok and left.committed == ("new",) and left.removed == ()
    entry = store.history(1)[0]
    assert entry.actor["plan_accepted"] is False and entry.actor["decided_by"] == "review"


def test_accepting_the_held_plan_applies_it(workspace: str) -> None:
    store, registry, batch = _held_plan_batch(workspace)
    done = registry.commit(store, batch, Decision(plan=PlanChoice.ACCEPT))
    assert done.ok and sorted(done.removed) == ["x", "y"]
    assert sorted(r.name for r in store.records()) == ["new", "xy"]


def test_accepting_a_plan_nobody_holds_is_refused(workspace: str) -> None:
    store = MemoryStore(workspace)
    registry = BatchRegistry()
    batch = registry.add(PendingBatch("p2", (rec("a"),), None, ()))
    with pytest.raises(BatchError, match="the plan: not held for review"):
        registry.commit(store, batch, Decision(plan=PlanChoice.ACCEPT))
    assert store.records() == ()
