"""Consolidation plans (SPEC §3) through the real SDK, applied by the real store."""

from __future__ import annotations

import json

import pytest
from messages_server import MessagesServer, text
from record_support import rec
from sidequery_support import (
    SIDE_MODEL,
    TODAY,
    make_store,
    model_for,
    sample_records,
    tree_snapshot,
)

from ipymemory import ConsolidationPlan, SideQueryError, Usage
from ipymemory.sidequery.consolidate import CONSOLIDATE_MAX_TOKENS, plan_consolidation
from ipymemory.sidequery.prompts import CONSOLIDATOR_PROMPT

RECORDS = sample_records()

MERGED = {
    "name": "deploy-steps",
    "type": "feedback",
    "description": "Deploys: release script, Python 3.10+ runtime",
    "body": "Run the release script for staging.\nThe runtime is Python 3.10 or newer.",
}


def test_request_shape(messages_server: MessagesServer, workspace: str) -> None:
    store = make_store(workspace)
    candidates = store.records()
    messages_server.enqueue(
        text(
            json.dumps(
                {"source_names": ["db-testing"], "records": [{**MERGED, "name": "db-tests"}]}
            )
        )
    )
    plan_consolidation(model_for(messages_server.base_url), candidates, today=TODAY)
    (request,) = messages_server.requests
    assert request["model"] == SIDE_MODEL and request["max_tokens"] == CONSOLIDATE_MAX_TOKENS
    assert "tools" not in request and "tool_choice" not in request
    assert request["system"] == [
        {"type": "text", "text": CONSOLIDATOR_PROMPT, "cache_control": {"type": "ephemeral"}}
    ]
    (message,) = request["messages"]
    assert message["role"] == "user"
    expected = [
        {"body": r.body, "description": r.description, "name": r.name, "type": r.type.value}
        for r in candidates
    ]
    assert message["content"] == json.dumps(
        {"candidates": expected, "today": TODAY}, sort_keys=True, ensure_ascii=False
    )
    assert message["content"].index('"candidates"') < message["content"].index('"today"')
    # Sorted keys in every candidate object: body, description, name, type.
    first = message["content"][: message["content"].index("}")]
    assert [first.index(f'"{k}"') for k in ("body", "description", "name", "type")] == sorted(
        first.index(f'"{k}"') for k in ("body", "description", "name", "type")
    )


def test_valid_plan_applies_in_one_commit(messages_server: MessagesServer, workspace: str) -> None:
    store = make_store(workspace)
    base = store.records()
    extracted = (rec("vpn-for-deploys", "Deploys need the VPN", type="feedback"),)
    candidates = base + extracted
    reply = {
        "source_names": ["deploy-steps", "python-version", "vpn-for-deploys"],
        "records": [MERGED, {**MERGED, "name": "deploy-vpn", "description": "Deploys need VPN"}],
    }
    messages_server.enqueue(text(json.dumps(reply), usage={"input_tokens": 40, "output_tokens": 9}))
    plan, usage = plan_consolidation(model_for(messages_server.base_url), candidates)
    assert plan.source_names == ("deploy-steps", "python-version", "vpn-for-deploys")
    assert [r.name for r in plan.records] == ["deploy-steps", "deploy-vpn"]  # a source name reused
    assert usage == Usage(40, 9)
    assert plan.to_json() == {
        "source_names": list(plan.source_names),
        "records": [r.to_json() for r in plan.records],
    }

    store.apply_consolidation(
        base_records=base,
        additions=extracted,
        source_names=plan.source_names,
        replacements=plan.records,
    )
    names = [r.name for r in store.records()]
    assert sorted(names) == sorted(
        [
            "prefers-tabs",
            "db-testing",
            "auth-rewrite",
            "ingest-bugs",
            "style-guide",
            "deploy-steps",
            "deploy-vpn",
        ]
    )
    assert store.get("deploy-steps").description == MERGED["description"]


def test_side_model_argument_wins(messages_server: MessagesServer) -> None:
    messages_server.enqueue(
        text(
            json.dumps(
                {"source_names": ["db-testing"], "records": [{**MERGED, "name": "db-tests"}]}
            )
        )
    )
    plan, _ = plan_consolidation(model_for(messages_server.base_url), RECORDS, side_model="s2")
    assert plan == ConsolidationPlan(("db-testing",), plan.records)
    assert messages_server.requests[0]["model"] == "s2"


@pytest.mark.parametrize(
    ("candidates", "message"),
    [
        ((), "consolidation has no candidates"),
        ((RECORDS[0], RECORDS[1], RECORDS[0]), "repeat the name 'prefers-tabs'"),
    ],
)
def test_bad_candidates_are_refused_without_a_call(
    candidates: tuple[object, ...], message: str, messages_server: MessagesServer, workspace: str
) -> None:
    make_store(workspace)
    before = tree_snapshot(workspace)
    with pytest.raises(SideQueryError, match=message):
        plan_consolidation(model_for(messages_server.base_url), candidates)  # type: ignore[arg-type]
    assert messages_server.requests == []
    assert tree_snapshot(workspace) == before


def test_nothing_to_merge_is_a_valid_empty_plan(
    messages_server: MessagesServer, workspace: str
) -> None:
    # SPEC §9: both arrays empty is the consolidator's honest "no change".
    store = make_store(workspace)
    before = tree_snapshot(workspace)
    messages_server.enqueue(text('{"records": [], "source_names": []}'))
    plan, usage = plan_consolidation(model_for(messages_server.base_url), store.records())
    assert plan == ConsolidationPlan((), ())
    assert plan.is_empty and usage == Usage(10, 5)
    assert plan.to_json() == {"source_names": [], "records": []}
    assert tree_snapshot(workspace) == before
    assert not ConsolidationPlan(("db-testing",), (rec("db-tests"),)).is_empty


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ({"source_names": ["db-testing"], "records": []}, "records must not be empty when sou"),
        ({"source_names": [], "records": [MERGED]}, "source_names must not be empty when rec"),
    ],
)
def test_half_empty_plan_is_invalid(
    reply: dict[str, object], message: str, messages_server: MessagesServer, workspace: str
) -> None:
    store = make_store(workspace)
    before = tree_snapshot(workspace)
    messages_server.enqueue(text(json.dumps(reply)))
    with pytest.raises(SideQueryError, match=message):
        plan_consolidation(model_for(messages_server.base_url), store.records())
    assert tree_snapshot(workspace) == before
