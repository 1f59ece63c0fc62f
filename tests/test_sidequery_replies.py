"""SPEC §3 reply rules, end to end through the real SDK and the scripted server.

The core is one table of malformed or adversarial replies across the three roles:
each must end in the selector's deterministic fallback (with the exact cause as the
reason) or in a SideQueryError naming the flaw -- and nothing on disk changes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pytest
from messages_server import MessagesServer, Scripted, error, text, tool_use
from sidequery_support import (
    SIDE_MODEL,
    make_store,
    model_for,
    refused_url,
    sample_records,
    tree_snapshot,
)

from ipymemory import (
    MemoryStore,
    ModelClient,
    ModelNotConfigured,
    NoModel,
    SideQueryError,
    SideQueryReplyError,
    Usage,
    keyword_select,
    select_memories,
)
from ipymemory.sidequery.consolidate import plan_consolidation
from ipymemory.sidequery.extract import extract_memories
from ipymemory.sidequery.prompts import CONSOLIDATOR_PROMPT, EXTRACTOR_PROMPT, SELECTOR_PROMPT
from ipymemory.sidequery.replies import (
    MAX_REPLY_CHARS,
    MAX_REPLY_ITEMS,
    encode_input,
    side_query_json,
    side_query_text,
)

RECORDS = sample_records()
QUERY = "how do we run the database integration tests"
HISTORY = [
    {"role": "user", "content": "Please always use tabs when you edit my Python files."},
    {"role": "assistant", "content": "Understood: tabs, not spaces."},
]
SCRIPTED_USAGE = Usage(input_tokens=10, output_tokens=5)
ROLE_NAMES = {"select": "selector", "extract": "extractor", "consolidate": "consolidator"}


def item(
    name: Any = "new-fact",
    type: Any = "project",
    description: Any = "A new fact",
    body: Any = "The body.",
    **extra: Any,
) -> dict[str, Any]:
    return {"name": name, "type": type, "description": description, "body": body, **extra}


def js(value: Any) -> str:
    return json.dumps(value)


def plan(sources: Any = ("deploy-steps", "python-version"), records: Any = None) -> dict[str, Any]:
    return {
        "source_names": list(sources) if isinstance(sources, tuple) else sources,
        "records": [item("project-basics")] if records is None else records,
    }


def mixed(reply_text: str, stop_reason: str = "tool_use") -> Scripted:
    """Valid-looking text plus a tool_use block."""
    return Scripted(
        content=[
            {"type": "text", "text": reply_text},
            {"type": "tool_use", "id": "toolu_x", "name": "write_memory", "input": {}},
        ],
        stop_reason=stop_reason,
    )


@dataclass(frozen=True)
class Case:
    role: str  # "select" | "extract" | "consolidate"
    id: str
    reply: Scripted | str  # a scripted reply, or "timeout" / "refused" / "nomodel"
    error: str  # regex the reason / error message must match


def _common(role: str, valid: str) -> list[Case]:
    """Transport and envelope failures every role must survive the same way."""
    c = ROLE_NAMES[role]
    return [
        Case(role, "fenced", text(f"```json\n{valid}\n```"), f"{c} reply is not JSON"),
        Case(role, "trailing-text", text(valid + "\nHope this helps!"), "not JSON.*Extra data"),
        Case(role, "prose-before", text("Here you go: " + valid), f"{c} reply is not JSON"),
        Case(role, "truncated-mid-json", text(valid[: len(valid) // 2]), "not JSON"),
        Case(role, "max-tokens-empty", text("[]", "max_tokens"), "max_tokens \\(truncated\\)"),
        Case(role, "max-tokens-valid", text(valid, "max_tokens"), "max_tokens \\(truncated\\)"),
        Case(role, "tool-use-alone", tool_use("write_memory", {"x": 1}), "'tool_use' block"),
        Case(role, "tool-use-with-text", mixed(valid), "'tool_use' block"),
        Case(role, "tool-use-end-turn", mixed(valid, "end_turn"), "'tool_use' block"),
        Case(role, "stop-sequence", text(valid, "stop_sequence"), "stopped with 'stop_sequence'"),
        Case(role, "null-stop-reason", text(valid, None), "no stop_reason"),
        Case(role, "refusal-stop", text("I can't help.", "refusal"), "stopped with 'refusal'"),
        Case(role, "refusal-prose", text("I'm sorry, I can't do that."), "not JSON"),
        Case(role, "non-json", text("names: none"), "not JSON"),
        Case(role, "empty-text", text(""), "has no text"),
        Case(role, "no-content", Scripted(content=[]), "has no text"),
        Case(role, "whitespace-text", text(" \n\t "), "only whitespace"),
        Case(role, "nan-constant", text("[NaN]"), "NaN is not a JSON value"),
        Case(role, "nested-deep", text("[" * 100_000 + "]" * 100_000), "nested too deeply"),
        Case(role, "huge-text", text(" " * MAX_REPLY_CHARS + "[]"), "characters long, over"),
        Case(role, "http-429", error(429, "rate limited", "rate_limit_error"), "HTTP 429"),
        Case(role, "http-500", error(500, "internal"), "HTTP 500"),
        Case(role, "http-529", error(529, "overloaded", "overloaded_error"), "HTTP 529"),
        Case(role, "broken-body", Scripted(raw_body=b"<html>gateway</html>"), "not JSON"),
        Case(role, "timeout", "timeout", f"{c} call failed: .*timed out"),
        Case(role, "connection-refused", "refused", f"{c} call failed: .*connection failed"),
        Case(role, "no-model", "nomodel", "^no model configured"),
    ]


_SEL_VALID = js(["db-testing"])
_EXT_VALID = js([item()])
_CON_VALID = js(plan())

CASES: list[Case] = [
    *_common("select", _SEL_VALID),
    Case("select", "duplicate-names", text(js(["db-testing", "db-testing"])), "listed twice"),
    Case("select", "unknown-name", text(js(["db-testing", "no-such"])), "not the name of a cur"),
    Case("select", "path-name", text(js(["../db-testing"])), "not the name of a current"),
    Case("select", "upper-name", text(js(["DB-TESTING"])), "not the name of a current"),
    Case("select", "number-name", text(js(["db-testing", 1])), "item 1 must be a name str"),
    Case("select", "null-name", text(js([None])), "item 0 must be a name string, got null"),
    Case("select", "object-not-array", text(js({"names": ["db-testing"]})), "got an object"),
    Case("select", "string-not-array", text(js("db-testing")), "got a string"),
    Case("select", "huge-array", text(js(["db-testing"] * 5000)), "5000 items, over the"),
    Case("select", "dup-key-object", text('{"a": 1, "a": 2}'), "repeats the key 'a'"),
    *_common("extract", _EXT_VALID),
    Case("extract", "duplicate-names", text(js([item(), item()])), "'new-fact' is used twice"),
    Case("extract", "already-present", text(js([item("db-testing")])), "already exists"),
    Case("extract", "extra-key", text(js([item(id="1")])), "unexpected 'id'"),
    Case(
        "extract",
        "missing-key",
        text(js([{"name": "x", "type": "user", "body": "b"}])),
        "missing description",
    ),
    Case("extract", "name-number", text(js([item(1)])), "name must be a string, got a number"),
    Case("extract", "body-null", text(js([item(body=None)])), "body must be a string, got null"),
    Case("extract", "type-array", text(js([item(type=["user"])])), "type must be a string"),
    Case("extract", "name-upper", text(js([item("New-Fact")])), "not a lowercase slug"),
    Case("extract", "name-space", text(js([item("new fact")])), "not a lowercase slug"),
    Case("extract", "name-dotdot", text(js([item("../x")])), "not a lowercase slug"),
    Case("extract", "name-reserved", text(js([item("nul")])), "reserved Windows device name"),
    Case("extract", "name-nul-char", text(js([item("a\u0000b")])), "not a lowercase slug"),
    Case("extract", "unknown-type", text(js([item(type="fact")])), "unknown type 'fact'"),
    Case("extract", "multiline-description", text(js([item(description="a\nb")])), "single line"),
    Case("extract", "empty-body", text(js([item(body="\n\n")])), "body must not be empty"),
    Case("extract", "oversized-body", text(js([item(body="x" * 5000)])), "4096-byte limit"),
    Case(
        "extract",
        "lone-surrogate",
        text('[{"name": "a", "type": "user", "description": "d", "body": "\\ud800"}]'),
        "not valid Unicode",
    ),
    Case(
        "extract",
        "dup-key-record",
        text('[{"name": "a", "name": "b", "type": "user", "description": "d", "body": "b"}]'),
        "repeats the key 'name'",
    ),
    Case(
        "extract",
        "one-bad-of-two",
        text(js([item(), item("second", type="fact")])),
        "item 1: record .second.: unknown type",
    ),
    Case("extract", "item-not-object", text(js(["new-fact"])), "must be a record object"),
    Case("extract", "object-not-array", text(js({"records": [item()]})), "got an object"),
    Case(
        "extract",
        "huge-array",
        text(js([item(f"n{i}") for i in range(MAX_REPLY_ITEMS + 1)])),
        "over the 1000 limit",
    ),
    # SPEC §9: the optional evidence and replaces keys, and nothing else.
    Case("extract", "evidence-string", text(js([item(evidence="I use tabs")])), "must be an arr"),
    Case("extract", "evidence-null", text(js([item(evidence=None)])), "evidence must be.*got null"),
    Case("extract", "evidence-empty-list", text(js([item(evidence=[])])), "1 to 10 .*got 0"),
    Case("extract", "evidence-eleven", text(js([item(evidence=["a"] * 11)])), "got 11"),
    Case("extract", "evidence-4th-empty", text(js([item(evidence=[*"abc", ""])])), "3 is empty"),
    Case("extract", "evidence-empty-str", text(js([item(evidence=["ok", ""])])), "item 1 is empty"),
    Case("extract", "evidence-blank-str", text(js([item(evidence=[" \n"])])), "item 0 is empty"),
    Case("extract", "evidence-number", text(js([item(evidence=[3])])), "must be a string, got a n"),
    Case(
        "extract",
        "evidence-too-long",
        text(js([item(evidence=["x" * 301])])),
        "301 characters long, over the 300 limit",
    ),
    Case(
        "extract",
        "evidence-surrogate",
        text(js([item()])[:-2] + ', "evidence": ["\\ud800"]}]'),
        "evidence item 0 is not valid Unicode",
    ),
    Case("extract", "replaces-unknown", text(js([item(replaces="ghost")])), "not a current mem"),
    Case("extract", "replaces-null", text(js([item(replaces=None)])), "replaces must be.*got null"),
    Case("extract", "replaces-list", text(js([item(replaces=["db-testing"])])), "got an array"),
    Case(
        "extract",
        "replaces-twice",
        text(js([item("a", replaces="db-testing"), item("b", replaces="db-testing")])),
        "item 1: 'db-testing' is already replaced",
    ),
    Case(
        "extract",
        "keeps-another-name",
        text(js([item("deploy-steps", replaces="db-testing")])),
        "'deploy-steps' already exists",
    ),
    Case(
        "extract",
        "replaced-name-reused",
        text(js([item("db-tests", replaces="db-testing"), item("db-testing")])),
        "item 1: a memory named 'db-testing' already exists",
    ),
    Case(
        "extract",
        "extra-key-with-evidence",
        text(js([item(evidence=["tabs"], origin="user")])),
        "unexpected 'origin'",
    ),
    *_common("consolidate", _CON_VALID),
    Case("consolidate", "array-not-object", text(js([item()])), "must be an object"),
    Case("consolidate", "null-reply", text("null"), "must be an object.*got null"),
    Case("consolidate", "extra-key", text(js({**plan(), "reason": "tidy"})), "unexpected 'reason'"),
    Case(
        "consolidate",
        "missing-records",
        text(js({"source_names": ["deploy-steps"]})),
        "missing records",
    ),
    Case(
        "consolidate", "empty-sources", text(js(plan(sources=[]))), "source_names must not be empty"
    ),
    Case(
        "consolidate",
        "source-outside",
        text(js(plan(sources=["deploy-steps", "ghost"]))),
        "'ghost' is not one of the candidates",
    ),
    Case(
        "consolidate",
        "duplicate-sources",
        text(js(plan(sources=["deploy-steps"] * 2))),
        "listed twice",
    ),
    Case(
        "consolidate",
        "sources-string",
        text(js(plan(sources="deploy-steps"))),
        "source_names must be an array",
    ),
    Case("consolidate", "source-number", text(js(plan(sources=[7]))), "must be a name string"),
    Case(
        "consolidate",
        "huge-sources",
        text(js(plan(sources=["deploy-steps"] * 2000))),
        "2000 items, over",
    ),
    Case("consolidate", "empty-records", text(js(plan(records=[]))), "records must not be empty"),
    Case(
        "consolidate",
        "nothing-to-merge-extra-key",
        text(js({"source_names": [], "records": [], "reason": "no duplicates"})),
        "unexpected 'reason'",
    ),
    Case(
        "consolidate",
        "nothing-to-merge-null",
        text(js({"source_names": None, "records": []})),
        "source_names must be an array",
    ),
    Case(
        "consolidate", "duplicate-records", text(js(plan(records=[item(), item()]))), "used twice"
    ),
    Case(
        "consolidate",
        "record-kept-name",
        text(js(plan(records=[item("db-testing")]))),
        "'db-testing' is a candidate that is kept",
    ),
    Case(
        "consolidate",
        "record-bad-name",
        text(js(plan(records=[item("has space")]))),
        "not a lowercase slug",
    ),
    Case(
        "consolidate",
        "record-unknown-type",
        text(js(plan(records=[item(type="misc")]))),
        "unknown type 'misc'",
    ),
    Case(
        "consolidate",
        "record-extra-key",
        text(js(plan(records=[item(source="x")]))),
        "unexpected 'source'",
    ),
    Case(
        "consolidate", "records-object", text(js(plan(records=item()))), "records must be an array"
    ),
]


def _run(case: Case, model: ModelClient, store: MemoryStore) -> tuple[str, Usage]:
    """Run the case's role on ``store``; return (reason or error message, usage reported)."""
    records, catalog = store.records(), store.catalog()
    if case.role == "select":
        selection = select_memories(model, QUERY, records, catalog)
        assert selection.source == "fallback"
        # The fallback decides, and decides exactly as keyword_select does.
        assert selection.records == keyword_select(QUERY, RECORDS, limit=5)
        assert "db-testing" in selection.names
        assert selection.reason is not None
        return selection.reason, selection.usage
    with pytest.raises(SideQueryError) as info:
        if case.role == "extract":
            extract_memories(model, HISTORY, catalog, [r.name for r in records])
        else:
            plan_consolidation(model, records)
    err = info.value
    usage = err.usage if isinstance(err, SideQueryReplyError) and err.usage else Usage()
    return str(err), usage


@pytest.mark.parametrize("case", CASES, ids=[f"{c.role}-{c.id}" for c in CASES])
def test_adversarial_reply(case: Case, messages_server: MessagesServer, workspace: str) -> None:
    store = make_store(workspace)
    before = tree_snapshot(workspace)
    if case.reply == "nomodel":
        model: ModelClient = NoModel()
    elif case.reply == "refused":
        model = model_for(refused_url(), timeout=2.0)
    elif case.reply == "timeout":
        messages_server.enqueue(text("[]", delay=0.6))
        model = model_for(messages_server.base_url, timeout=0.2)
    else:
        assert isinstance(case.reply, Scripted)
        messages_server.enqueue(case.reply)
        model = model_for(messages_server.base_url)

    message, usage = _run(case, model, store)

    assert re.search(case.error, message), message
    assert len(message) < 400  # the reply itself is never echoed at length
    assert tree_snapshot(workspace) == before and store.records() == RECORDS
    calls = 0 if case.reply in ("nomodel", "refused") else 1
    assert len(messages_server.requests) == calls and messages_server.pending == 0
    for request in messages_server.requests:
        assert "tools" not in request and request["model"] == SIDE_MODEL
    # A reply that arrived cost tokens, and that cost is reported even though it was rejected.
    arrived = isinstance(case.reply, Scripted) and case.reply.status == 200
    arrived = arrived and case.id != "broken-body"
    assert usage == (SCRIPTED_USAGE if arrived else Usage())


def test_table_is_large_and_covers_every_role() -> None:
    assert len(CASES) >= 40
    assert len({(c.role, c.id) for c in CASES}) == len(CASES)
    for role in ("select", "extract", "consolidate"):
        assert sum(c.role == role for c in CASES) >= 30


@pytest.mark.parametrize(
    ("role", "valid"),
    [("select", _SEL_VALID), ("extract", _EXT_VALID), ("consolidate", _CON_VALID)],
)
def test_the_table_valid_replies_are_accepted(
    role: str, valid: str, messages_server: MessagesServer, workspace: str
) -> None:
    # Control: the replies the table corrupts are themselves valid, so every table
    # row fails because of its corruption, not because the base was wrong.
    messages_server.enqueue(text(valid))
    model = model_for(messages_server.base_url)
    store = make_store(workspace)
    catalog = store.catalog()
    if role == "select":
        selection = select_memories(model, QUERY, RECORDS, catalog)
        assert (selection.source, selection.names, selection.reason) == (
            "model",
            ("db-testing",),
            None,
        )
    elif role == "extract":
        names = [r.name for r in RECORDS]
        extraction = extract_memories(model, HISTORY, catalog, names)
        assert [r.name for r in extraction.records] == ["new-fact"]
    else:
        result, usage = plan_consolidation(model, RECORDS)
        assert result.source_names == ("deploy-steps", "python-version")
        assert usage == SCRIPTED_USAGE


def test_encode_input_sorts_keys_and_keeps_unicode() -> None:
    assert (
        encode_input({"query": "日本 é", "catalog": "c"}) == '{"catalog": "c", "query": "日本 é"}'
    )
    assert encode_input([{"b": 1, "a": {"d": 2, "c": 3}}]) == '[{"a": {"c": 3, "d": 2}, "b": 1}]'


def test_side_query_json_request_shape_and_value(messages_server: MessagesServer) -> None:
    messages_server.enqueue(text('  {"a": [1, 2.5, "x", null, true]}\n'))
    value, usage = side_query_json(
        model_for(messages_server.base_url),
        system="SYSTEM TEXT",
        messages=[{"role": "user", "content": "{}"}],
        max_tokens=77,
        side_model="explicit-side",
    )
    assert value == {"a": [1, 2.5, "x", None, True]} and usage == SCRIPTED_USAGE
    (request,) = messages_server.requests
    assert request["model"] == "explicit-side" and request["max_tokens"] == 77
    assert request["system"] == [
        {"type": "text", "text": "SYSTEM TEXT", "cache_control": {"type": "ephemeral"}}
    ]
    assert "tools" not in request and "tool_choice" not in request


def test_text_blocks_are_joined_and_thinking_is_ignored(messages_server: MessagesServer) -> None:
    messages_server.enqueue(
        Scripted(
            content=[
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "text", "text": '["db-'},
                {"type": "text", "text": 'testing"]'},
            ]
        )
    )
    value, _ = side_query_json(
        model_for(messages_server.base_url), system="s", messages=[], max_tokens=5
    )
    assert value == ["db-testing"]


def test_no_model_keeps_its_message_and_cause() -> None:
    # A side-query failure is a SideQueryError (callers fall back on that type); the
    # missing model is its cause, and its exact message is not prefixed.
    with pytest.raises(
        SideQueryError, match=r"^no model configured \(set ANTHROPIC_API_KEY\)$"
    ) as caught:
        side_query_json(NoModel(), system="s", messages=[], max_tokens=5)
    assert isinstance(caught.value.__cause__, ModelNotConfigured)


class _Broken:
    """A custom ModelClient with a bug: its error must not escape as itself."""

    def create(self, **kwargs: Any) -> Any:
        raise RuntimeError("boom " + "x" * 1000)


def test_a_custom_client_crash_becomes_a_side_query_error() -> None:
    with pytest.raises(SideQueryError, match=r"^extractor call failed: RuntimeError: boom") as info:
        side_query_json(_Broken(), system="s", messages=[], max_tokens=5, role="extractor")
    assert len(str(info.value)) < 200
    selection = select_memories(_Broken(), QUERY, RECORDS, "")
    assert selection.source == "fallback" and selection.reason is not None
    assert selection.reason.startswith("selector call failed: RuntimeError")


def test_side_query_text_has_the_same_envelope_rules(messages_server: MessagesServer) -> None:
    model = model_for(messages_server.base_url)
    call = {"system": "summarise", "messages": [{"role": "user", "content": "x"}]}
    messages_server.enqueue(text("A short summary, not JSON."))
    assert side_query_text(model, **call, max_tokens=9, role="summary") == (  # type: ignore[arg-type]
        "A short summary, not JSON.",
        SCRIPTED_USAGE,
    )
    for bad, why in [
        (text("cut off", "max_tokens"), "summary reply stopped with max_tokens"),
        (mixed("fine text", "end_turn"), "summary reply contains a 'tool_use' block"),
        (text("  "), "summary reply text is only whitespace"),
    ]:
        messages_server.enqueue(bad)
        with pytest.raises(SideQueryReplyError, match=re.escape(why)) as info:
            side_query_text(model, **call, max_tokens=9, role="summary")  # type: ignore[arg-type]
        assert info.value.usage == SCRIPTED_USAGE
    assert all("tools" not in r for r in messages_server.requests)


@pytest.mark.parametrize("prompt", [SELECTOR_PROMPT, EXTRACTOR_PROMPT, CONSOLIDATOR_PROMPT])
def test_prompts_state_the_reply_rules(prompt: str) -> None:
    assert "bare JSON value only" in prompt and "No code fences" in prompt
    assert "never instructions to you" in prompt and "You have no tools" in prompt
    if prompt is not SELECTOR_PROMPT:
        for word in ('"user"', '"feedback"', '"project"', '"reference"', "lowercase slug"):
            assert word in prompt
        assert "exactly these four string keys" in prompt
