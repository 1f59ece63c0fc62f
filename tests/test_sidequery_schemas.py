"""Structured outputs (SPEC §9): the schema each side-query sends, through the real SDK,
and the one-time fallback for endpoints that refuse ``output_config``.

Refusals are remembered per (endpoint, model) for the whole process, and a later test's
server may get a port an earlier one used: every test that makes an endpoint refuse
uses model names of its own (``_fresh``), so no other test sees its refusal.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Iterator
from typing import Any

import anthropic
import jsonschema
import pytest
from anthropic.lib._parse._transform import transform_schema
from messages_server import OUTPUT_CONFIG_REFUSAL, MessagesServer, error, text
from sidequery_support import SIDE_MODEL, TODAY, make_store, model_for, sample_records

from ipymemory import AnthropicModel, MemoryType, ScriptedModel, SideQueryError, select_memories
from ipymemory.model.anthropic import refused_output_config
from ipymemory.sidequery.consolidate import plan_consolidation
from ipymemory.sidequery.extract import extract_memories
from ipymemory.sidequery.followed import judge_followed
from ipymemory.sidequery.replies import side_query_text
from ipymemory.sidequery.schemas import (
    CONSOLIDATOR_SCHEMA,
    EXTRACTOR_SCHEMA,
    FOLLOW_SCHEMA,
    SELECTOR_SCHEMA,
)

RECORDS = sample_records()
NAMES = [r.name for r in RECORDS]
HISTORY = [
    {"role": "user", "content": "From now on never mock the database; use the docker one."},
    {"role": "assistant", "content": "Noted."},
]
ITEM = {"name": "n", "type": "feedback", "description": "d", "body": "b"}
PLAN = {"source_names": ["db-testing"], "records": [{**ITEM, "name": "db-tests"}]}
VERDICT = {"name": "prefers-tabs", "verdict": "follows", "reason": "indents with tabs"}


def _structured(schema: dict[str, Any]) -> dict[str, Any]:
    return {"format": {"type": "json_schema", "schema": schema}}


def _fresh() -> str:
    return f"side-{uuid.uuid4().hex[:12]}"


def _model(srv: MessagesServer, side_model: str) -> AnthropicModel:
    client = anthropic.Anthropic(base_url=srv.base_url, api_key="test", max_retries=0, timeout=5)
    return AnthropicModel("main", side_model=side_model, client=client)


def _run(role: str, model: AnthropicModel, srv: MessagesServer) -> Any:
    """One side-query of ``role``, its (valid) reply scripted; returns its result."""
    if role == "selector":
        srv.enqueue(text('["db-testing"]'))
        selection = select_memories(model, "database tests", RECORDS, "catalog", today=TODAY)
        assert (selection.source, selection.names) == ("model", ("db-testing",))
        return selection
    if role == "extractor":
        srv.enqueue(text(json.dumps([{**ITEM, "evidence": ["never mock the database"]}])))
        extraction = extract_memories(model, HISTORY, "catalog", NAMES, today=TODAY)
        assert [r.name for r in extraction.records] == ["n"]
        return extraction
    if role == "checker":
        srv.enqueue(text(json.dumps([VERDICT])))
        verdicts, _ = judge_followed(model, RECORDS[:1], "An answer.", "A query.")
        assert verdicts == (("prefers-tabs", "follows", "indents with tabs"),)
        return verdicts
    srv.enqueue(text(json.dumps(PLAN)))
    plan, _ = plan_consolidation(model, RECORDS, today=TODAY)
    assert plan.source_names == ("db-testing",)
    return plan


SCHEMAS = {
    "selector": SELECTOR_SCHEMA,
    "extractor": EXTRACTOR_SCHEMA,
    "consolidator": CONSOLIDATOR_SCHEMA,
    "checker": FOLLOW_SCHEMA,
}


@pytest.mark.parametrize("role", list(SCHEMAS))
def test_each_side_query_sends_its_schema(role: str, messages_server: MessagesServer) -> None:
    _run(role, model_for(messages_server.base_url), messages_server)
    (request,) = messages_server.requests
    assert request["model"] == SIDE_MODEL
    assert request["output_config"] == _structured(SCHEMAS[role])


def test_the_summary_and_the_agent_send_no_schema(messages_server: MessagesServer) -> None:
    model = model_for(messages_server.base_url)
    messages_server.enqueue(text("A summary."), text("An answer."))
    side_query_text(
        model, system="summarise", messages=[{"role": "user", "content": "x"}], max_tokens=9
    )
    model.create(system="agent", messages=[{"role": "user", "content": "q"}], max_tokens=9)
    assert ["output_config" in r for r in messages_server.requests] == [False, False]


_ENFORCED = {
    "type",
    "enum",
    "items",
    "properties",
    "required",
    "additionalProperties",
    "minItems",
    "description",
}


def _subschemas(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield schema
    if "items" in schema:
        yield from _subschemas(schema["items"])
    for sub in schema.get("properties", {}).values():
        yield from _subschemas(sub)


@pytest.mark.parametrize("role", list(SCHEMAS))
def test_schemas_use_only_keywords_the_api_enforces(role: str) -> None:
    for sub in _subschemas(SCHEMAS[role]):
        assert set(sub) <= _ENFORCED, sub
        assert sub.get("minItems", 0) in (0, 1)
        if sub.get("type") == "object":
            assert sub["additionalProperties"] is False
            assert set(sub["required"]) <= set(sub["properties"])
    jsonschema.Draft202012Validator.check_schema(SCHEMAS[role])
    # What the SDK's own helper would send for this schema is the schema itself (its
    # transform drops or moves what the API does not take; a private module, pinned by
    # the installed SDK version).
    assert transform_schema(SCHEMAS[role]) == SCHEMAS[role]


def test_record_schemas_say_exactly_the_record_shape() -> None:
    item = EXTRACTOR_SCHEMA["items"]
    assert set(item["properties"]) == {
        "body",
        "description",
        "name",
        "type",
        "evidence",
        "replaces",
    }
    assert sorted(item["required"]) == ["body", "description", "name", "type"]
    assert item["properties"]["type"]["enum"] == [t.value for t in MemoryType]
    plan_record = CONSOLIDATOR_SCHEMA["properties"]["records"]["items"]
    assert set(plan_record["properties"]) == {"body", "description", "name", "type"}
    assert sorted(CONSOLIDATOR_SCHEMA["required"]) == ["records", "source_names"]


@pytest.mark.parametrize(
    ("role", "reply", "valid"),
    [
        ("selector", ["a", "b"], True),
        ("selector", [], True),
        ("selector", [1], False),
        ("extractor", [], True),
        ("extractor", [{**ITEM, "evidence": ["x"], "replaces": "db-testing"}], True),
        ("extractor", [{**ITEM, "evidence": []}], False),
        ("extractor", [{**ITEM, "origin": "user"}], False),
        ("extractor", [{**ITEM, "type": "fact"}], False),
        ("extractor", [{"name": "n", "type": "user", "body": "b"}], False),
        ("consolidator", {"source_names": [], "records": []}, True),
        ("consolidator", PLAN, True),
        ("consolidator", {**PLAN, "reason": "tidy"}, False),
        ("consolidator", {"records": []}, False),
        ("checker", [VERDICT], True),
        ("checker", [], True),  # the validator requires every asked name; the schema cannot
        ("checker", [{**VERDICT, "verdict": "maybe"}], False),
        ("checker", [{**VERDICT, "confidence": 0.9}], False),
        ("checker", [{"name": "prefers-tabs", "verdict": "follows"}], False),
    ],
)
def test_schemas_agree_with_the_validators(role: str, reply: Any, valid: bool) -> None:
    errors = list(jsonschema.Draft202012Validator(SCHEMAS[role]).iter_errors(reply))
    assert (not errors) is valid, errors


def test_a_refusing_endpoint_costs_one_extra_round_trip_per_model(
    messages_server: MessagesServer,
) -> None:
    messages_server.refuse_output_config = True
    side = _fresh()
    model = _model(messages_server, side)
    _run("selector", model, messages_server)
    # The refused request, then the same request without output_config.
    first, second = messages_server.requests
    assert messages_server.refused == [0]
    assert first["output_config"] == _structured(SELECTOR_SCHEMA)
    without = copy.deepcopy(first)
    del without["output_config"]
    assert second == without
    assert refused_output_config(messages_server.base_url, side)
    # Remembered for the pair: every later side-query there goes without it at once.
    for role in ("extractor", "consolidator", "selector"):
        _run(role, model, messages_server)
    assert len(messages_server.requests) == 5 and messages_server.refused == [0]
    assert not any("output_config" in r for r in messages_server.requests[1:])
    # Another model on the same endpoint gets its own try.
    other = _fresh()
    _run("extractor", _model(messages_server, other), messages_server)
    assert messages_server.refused == [0, 5] and len(messages_server.requests) == 7
    assert messages_server.requests[5]["model"] == other
    assert "output_config" not in messages_server.requests[6]
    assert messages_server.pending == 0


def test_a_refusal_is_per_model(messages_server: MessagesServer) -> None:
    refusing, taking = _fresh(), _fresh()
    messages_server.refuse_output_config = {refusing}
    _run("consolidator", _model(messages_server, taking), messages_server)
    _run("consolidator", _model(messages_server, refusing), messages_server)
    _run("consolidator", _model(messages_server, taking), messages_server)
    sent = [(r["model"], "output_config" in r) for r in messages_server.requests]
    assert sent == [(taking, True), (refusing, True), (refusing, False), (taking, True)]
    assert not refused_output_config(messages_server.base_url, taking)


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "output_config.format.schema: unsupported keyword"),
        (400, "Unknown parameter: output_config"),
        (422, "body.output_config: Extra inputs are not permitted"),
        (400, "extra_forbidden"),
    ],
)
def test_refusal_forms_that_count(
    status: int, message: str, messages_server: MessagesServer
) -> None:
    side = _fresh()
    messages_server.enqueue(error(status, message, "invalid_request_error"))
    _run("extractor", _model(messages_server, side), messages_server)
    assert ["output_config" in r for r in messages_server.requests] == [True, False]
    assert refused_output_config(messages_server.base_url, side)


def test_another_bad_request_is_not_a_refusal(messages_server: MessagesServer) -> None:
    side = _fresh()
    model = _model(messages_server, side)
    messages_server.enqueue(error(400, "prompt is too long", "invalid_request_error"))
    with pytest.raises(SideQueryError, match=r"HTTP 400.*prompt is too long"):
        extract_memories(model, HISTORY, "catalog", NAMES, today=TODAY)
    assert len(messages_server.requests) == 1  # no second try
    assert not refused_output_config(messages_server.base_url, side)
    _run("extractor", model, messages_server)
    assert "output_config" in messages_server.requests[1]


def test_the_retry_failing_is_that_failure(messages_server: MessagesServer) -> None:
    side = _fresh()
    messages_server.enqueue(
        error(400, OUTPUT_CONFIG_REFUSAL, "invalid_request_error"), error(529, "overloaded")
    )
    with pytest.raises(SideQueryError, match="HTTP 529"):
        plan_consolidation(_model(messages_server, side), RECORDS, today=TODAY)
    assert len(messages_server.requests) == 2
    assert refused_output_config(messages_server.base_url, side)  # the refusal still counts


def test_a_fenced_reply_is_rejected_even_with_a_schema(
    messages_server: MessagesServer, workspace: str
) -> None:
    # The schema asks; validation of SPEC §3 still decides, on the whole text.
    store = make_store(workspace)
    messages_server.enqueue(text("```json\n" + json.dumps([ITEM]) + "\n```"))
    with pytest.raises(SideQueryError, match="extractor reply is not JSON"):
        extract_memories(
            model_for(messages_server.base_url), HISTORY, store.catalog(), NAMES, today=TODAY
        )
    assert messages_server.requests[0]["output_config"] == _structured(EXTRACTOR_SCHEMA)
    assert store.records() == RECORDS


def test_the_scripted_model_records_the_schema() -> None:
    model = ScriptedModel(['["db-testing"]'])
    selection = select_memories(model, "database", RECORDS, "catalog", today=TODAY)
    assert selection.source == "model"
    assert model.requests[0]["output_schema"] == SELECTOR_SCHEMA
