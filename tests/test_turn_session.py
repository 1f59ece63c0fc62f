"""The agent turn end to end: real SDK -> local Messages-API server, real store on disk."""

from __future__ import annotations

import datetime
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from messages_server import MessagesServer, Scripted, error, text, tool_use
from record_support import rec
from turn_support import (
    MAIN_MODEL,
    OLD_SELECTION,
    SIDE_MODEL,
    assert_alternates,
    assert_pairs_intact,
    count_manifest_replaces,
    memory_text,
    model_for,
    other_process,
    plan_reply,
    records_reply,
    requests_of,
    role_of,
    split_extraction,
    system_text,
)

from ipymemory import (
    AgentSession,
    BatchError,
    BatchStatus,
    MemoryFormatError,
    MemoryStore,
    ModelAPIError,
    ModelNotConfigured,
    PendingBatch,
    SessionConfig,
    SideQueryError,
    TurnError,
    TurnEvent,
    Usage,
)
from ipymemory._dates import today_text
from ipymemory.sidequery import LAST_ERROR_CONSOLIDATE, LAST_ERROR_EXTRACT, LAST_ERROR_SELECT
from ipymemory.sidequery.extract import extractor_request
from ipymemory.turn.session import LAST_ERROR_COMMIT


def _session(srv: MessagesServer, workspace: str, **config: Any) -> AgentSession:
    return AgentSession(
        workspace,
        model=model_for(srv.base_url),
        config=SessionConfig(**{**OLD_SELECTION, **config}),
    )


def _names(workspace: str) -> list[str]:
    return [r.name for r in MemoryStore(workspace).records()]


def _snapshot(workspace: str) -> dict[str, bytes]:
    root = Path(workspace, ".memory")
    if not root.exists():
        return {}
    return {
        p.name: p.read_bytes()
        for p in sorted(root.iterdir())
        if p.is_file() and not p.name.startswith(".lock")
    }


SECRET = "SECRET-MEMORY-BODY-7f3a"


def test_full_turn_with_a_tool_call(messages_server: MessagesServer, workspace: str) -> None:
    Path(workspace, "notes.md").write_text("indent with tabs\n")
    store = MemoryStore(workspace)
    store.extend(
        [
            rec("prefers-tabs", "indentation preference", f"Use tabs. {SECRET}", "user"),
            rec("db-testing", "testing rule", "Never mock the database.", "feedback"),
        ]
    )
    catalog = store.catalog()
    # The model's pick, beside the agent's first call (SPEC §13), arrives before it ends.
    messages_server.enqueue_for(
        "selector", text('["prefers-tabs"]', usage={"input_tokens": 50, "output_tokens": 4})
    )
    messages_server.enqueue(
        tool_use(
            "read_file",
            {"path": "notes.md"},
            id="toolu_a",
            usage={"input_tokens": 300, "output_tokens": 20},
            delay=0.5,
        ),
        text("Your notes say: tabs.", usage={"input_tokens": 400, "output_tokens": 9}),
        text("[]", usage={"input_tokens": 70, "output_tokens": 2}),
    )
    events: list[TurnEvent] = []
    # One of two: a choice (a set that fits needs none, SPEC §12). "indent" matches no
    # record's words, so the first request carries the newest; the model's pick joins
    # the next request. The follow-up check has its own tests (test_turn_followed).
    session = _session(
        messages_server, workspace, max_selected=1, follow_check=False, selector="model"
    )
    result = session.run_turn("how should I indent?", on_event=events.append)

    assert result.answer == "Your notes say: tabs."
    assert result.tool_calls == 1 and result.last_error is None and result.batch is None
    assert result.selection.source == "keyword" and result.selection.names == ("db-testing",)
    assert session.selected == result.selection.records
    assert result.trace is not None and result.trace.pick is not None
    pick = result.trace.pick
    assert (pick.source, pick.names, pick.added, pick.joined) == (
        "model",
        ("prefers-tabs",),
        ("prefers-tabs",),
        2,
    )
    assert pick.seconds is not None and 0 < pick.seconds < result.answer_seconds
    assert [(r.request, r.added, r.carried) for r in result.trace.requests] == [
        (1, ("db-testing",), 1),
        (2, ("prefers-tabs",), 2),
    ]
    reqs = messages_server.requests
    assert [role_of(r) for r in reqs if role_of(r) != "selector"] == ["main", "main", "extractor"]
    assert [r["model"] for r in reqs] == [
        SIDE_MODEL if role_of(r) != "main" else MAIN_MODEL for r in reqs
    ]
    main = requests_of(reqs, "main")
    for request in main:
        assert [t["name"] for t in request["tools"]] == ["list_files", "read_file"]
        assert_pairs_intact(request["messages"])
    # SPEC §8: the first block is a content block of this turn's user message, right
    # before the query; never in the system prompt, never in the history.
    block = main[0]["messages"][0]["content"][0]["text"]
    assert main[0]["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": block},
                {
                    "type": "text",
                    "text": "how should I indent?",
                    "cache_control": {"type": "ephemeral"},  # the next step reads it
                },
            ],
        }
    ]
    assert block.startswith("<relevant_memories>") and block.endswith("</relevant_memories>")
    assert "## db-testing (feedback, saved " in block and "prefers-tabs" not in block
    # The tool really ran and its result went back under the protocol; the model's pick
    # follows it in the same message (SPEC §13), a block of its own.
    late = main[1]["messages"][-1]["content"][1]["text"]
    assert main[1]["messages"][-1] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "indent with tabs\n"},
            {"type": "text", "text": late, "cache_control": {"type": "ephemeral"}},
        ],
    }
    # SPEC §9: the header says when the record was saved (the journal's local date).
    saved = datetime.datetime.now().astimezone().date().isoformat()
    assert late.startswith("<relevant_memories>") and late.endswith("</relevant_memories>")
    assert f"## prefers-tabs (user, saved {saved})" in late and SECRET in late
    assert "db-testing" not in late
    assert main[1]["messages"][0]["content"][0] == main[0]["messages"][0]["content"][0]
    for request in main:
        assert request["system"] == [
            {
                "type": "text",
                "text": session.config.system_prompt,
                "cache_control": {"type": "ephemeral"},
            },
            {"type": "text", "text": f"Today is {today_text()}."},
        ]
        assert "</relevant_memories>" not in system_text(request)
    assert memory_text(main[0]) == block and memory_text(main[1]) == f"{block}\n\n{late}"
    # The canonical history: query, tool_use, tool_result, answer.
    history = session.history
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
    assert history[0] == {"role": "user", "content": "how should I indent?"}
    assert history[1]["content"][0]["name"] == "read_file"
    assert_pairs_intact(history)
    assert SECRET not in json.dumps(history)
    assert session.memory_block == ""  # cleared after the turn

    # Extraction input = the canonical history (adapted for a tool-free call) + catalog.
    extract = requests_of(reqs, "extractor")[0]
    assert "tools" not in extract
    assert extract["messages"] == extractor_request(list(history), catalog)
    assert SECRET not in json.dumps(extract["messages"])

    # Usage per role, from the API's numbers.
    usage = result.usage
    assert usage.main == Usage(700, 29)
    assert usage.by_role("selector") == Usage(50, 4)
    assert usage.by_role("extractor") == Usage(70, 2)
    assert usage.memory == Usage(120, 6) and usage.total == Usage(820, 35)
    assert session.usage.last_turn == usage and session.usage.total.total == Usage(820, 35)
    assert usage.estimated_cost is not None and usage.estimated_cost > 0
    assert usage.to_json()["roles"]["selector"]["input_tokens"] == 50  # type: ignore[index]

    # With a listener the main calls stream: the answer arrives as text events, then
    # "answered" (before any memory work), then extraction.
    kinds = [e.kind for e in events if e.kind != "text"]
    assert kinds == [
        "selecting",
        "model",
        "tool",
        "step",
        "model",
        "answered",
        "extracting",
        "done",
    ]
    assert all(r.get("stream") is True for r in main)
    assert not any("stream" in r for r in reqs if role_of(r) != "main")
    assert "".join(e.detail for e in events if e.kind == "text") == result.answer
    assert len([e for e in events if e.kind == "text"]) > 1
    assert events[2].detail.startswith("read_file")
    (step,) = [e.step for e in events if e.kind == "step"]
    assert step is not None and result.steps == (step,)
    assert (step.name, step.summary, step.result_chars, step.error) == (
        "read_file",
        "notes.md",
        len("indent with tabs\n"),
        None,
    )
    answered = next(e for e in events if e.kind == "answered")
    assert answered.detail == result.answer
    assert result.answer_seconds > 0 and result.memory_seconds > 0


def test_review_mode_commits_exactly_the_accepted_items(
    messages_server: MessagesServer, workspace: str
) -> None:
    a, b, c = rec("alpha-fact"), rec("beta-fact"), rec("gamma-fact")
    messages_server.enqueue(text("Noted."), records_reply(a, b, c))
    session = _session(messages_server, workspace)
    result = session.run_turn("here are three facts")
    batch = result.batch
    assert (
        batch is not None and batch.status == "pending" and batch.names == (a.name, b.name, c.name)
    )
    assert result.committed == () and _names(workspace) == []
    assert session.pending == (batch,)

    with pytest.raises(BatchError, match="not an item of this batch"):
        session.commit(batch, reject=["nope"])
    with pytest.raises(BatchError, match="not one string"):
        session.commit(batch, reject="beta-fact")
    assert _names(workspace) == []

    done = session.commit(batch, reject=["beta-fact"])
    assert done.ok and done.committed == ("alpha-fact", "gamma-fact") and done.removed == ()
    assert _names(workspace) == ["alpha-fact", "gamma-fact"]
    assert MemoryStore(workspace).records() == (a, c)
    assert done.batch is not None and done.batch.status == "committed"
    assert done.batch.rejected == ("beta-fact",)
    assert session.pending == ()
    with pytest.raises(BatchError, match="already committed"):
        session.commit(batch)


def test_discard_writes_nothing(messages_server: MessagesServer, workspace: str) -> None:
    messages_server.enqueue(text("Noted."), records_reply(rec("alpha-fact")))
    session = _session(messages_server, workspace)
    batch = session.run_turn("a fact").batch
    assert batch is not None
    session.discard(batch)
    assert session.pending == () and session.batches[0].status == "discarded"
    assert _snapshot(workspace) == {}
    with pytest.raises(BatchError, match="already discarded"):
        session.commit(batch)


def test_the_batch_registry_is_where_batch_state_changes(
    messages_server: MessagesServer, workspace: str
) -> None:
    messages_server.enqueue(
        text("Noted."), records_reply(rec("alpha-fact")), text("More."), records_reply(rec("b-f"))
    )
    session = _session(messages_server, workspace)
    first = session.run_turn("one").batch
    second = session.run_turn("two").batch
    assert first is not None and second is not None
    registry = session.batch_registry
    seen: list[tuple[str, str]] = []
    registry.observe(
        lambda change: seen.extend(
            (b.id, str(b.status)) for b in change["new"].values() if change["old"].get(b.id) != b
        ),
        names="state",
    )
    assert registry.choose() == second and registry.choose(first.id) == first
    with pytest.raises(BatchError, match="no pending batch 'nope'"):
        registry.choose("nope")
    session.commit(first)
    session.discard(second)
    assert seen == [(first.id, "committed"), (second.id, "discarded")]
    assert [b.status for b in session.batches] == [BatchStatus.COMMITTED, BatchStatus.DISCARDED]
    assert registry.pending == () and registry.choose() is None
    # Every change is checked in the registry: decided, unknown or duplicate batches.
    with pytest.raises(BatchError, match="already discarded"):
        registry.discard(second.id)
    with pytest.raises(BatchError, match="does not belong to this session"):
        registry.lookup("0123abcd")
    with pytest.raises(BatchError, match="already registered"):
        registry.add(replace(second, status="pending"))
    with pytest.raises(BatchError, match="must await a decision"):
        registry.add(replace(second, id="fresh", status=BatchStatus.COMMITTED))
    with pytest.raises(BatchError, match="'later' is not one of pending, committed"):
        replace(second, status="later")
    assert len(seen) == 2  # refused changes notify no one


def test_batch_status_is_one_enum_open_until_decided() -> None:
    assert [s.value for s in BatchStatus] == ["pending", "committed", "discarded", "failed"]
    assert [s.open for s in BatchStatus] == [True, False, False, True]
    assert BatchStatus.FAILED == "failed" and f"{BatchStatus.FAILED}" == "failed"
    assert json.dumps({"status": BatchStatus.PENDING}) == '{"status": "pending"}'
    assert PendingBatch("b1", (), None, (), "failed").status is BatchStatus.FAILED


def _base_and_plan_turn(
    srv: MessagesServer, workspace: str, **config: Any
) -> tuple[AgentSession, PendingBatch]:
    """Base set x, y; the turn extracts a, b; threshold 3 -> plan merges x and a."""
    MemoryStore(workspace).extend([rec("x-note"), rec("y-note")])
    srv.enqueue(
        text("Done."),  # (no selector: the two records fit)
        records_reply(rec("a-note"), rec("b-note")),
        plan_reply(["x-note", "a-note"], [rec("xa-merged", body="x and a together")]),
    )
    session = _session(srv, workspace, consolidate_threshold=3, consolidate_every=1, **config)
    batch = session.run_turn("work").batch
    assert batch is not None and batch.status == "pending"
    return session, batch


def test_threshold_consolidation_joins_the_batch_and_commits_once(
    messages_server: MessagesServer, workspace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, batch = _base_and_plan_turn(messages_server, workspace)
    assert batch.plan is not None
    assert batch.plan.source_names == ("x-note", "a-note")
    assert [r.name for r in batch.base] == ["x-note", "y-note"]
    consolidate = requests_of(messages_server.requests, "consolidator")[0]
    sent = json.loads(consolidate["messages"][0]["content"])
    assert [c["name"] for c in sent["candidates"]] == [
        "x-note",
        "y-note",
        "a-note",
        "b-note",
    ]
    replaced = count_manifest_replaces(monkeypatch)
    done = session.commit(batch)
    assert done.ok and len(replaced) == 1  # ONE manifest swap for items + plan
    assert done.committed == ("b-note", "xa-merged") and done.removed == ("x-note",)
    assert _names(workspace) == ["y-note", "b-note", "xa-merged"]


def test_auto_mode_consolidation_is_one_commit(
    messages_server: MessagesServer, workspace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    replaced = count_manifest_replaces(monkeypatch)
    MemoryStore(workspace).extend([rec("x-note"), rec("y-note")])
    replaced.clear()
    messages_server.enqueue(
        text("Done."),
        records_reply(rec("a-note"), rec("b-note")),
        plan_reply(["x-note", "a-note"], [rec("xa-merged")]),
    )
    session = _session(
        messages_server, workspace, consolidate_threshold=3, consolidate_every=1, commit_mode="auto"
    )
    result = session.run_turn("work")
    assert result.committed == ("b-note", "xa-merged") and len(replaced) == 1
    assert result.batch is not None and result.batch.status == "committed"
    assert _names(workspace) == ["y-note", "b-note", "xa-merged"]
    assert session.pending == ()


def test_rejecting_an_item_the_plan_replaces(
    messages_server: MessagesServer, workspace: str
) -> None:
    session, batch = _base_and_plan_turn(messages_server, workspace)
    before = _snapshot(workspace)
    refused = session.commit(batch, reject=["a-note"])
    assert refused.error is not None and "'a-note'" in refused.error
    assert "accept_plan=False" in refused.error
    assert _snapshot(workspace) == before
    assert session.pending == (batch,)  # still waiting for a decision
    # Rejecting the plan too: only the accepted item lands.
    done = session.commit(batch, reject=["a-note"], accept_plan=False)
    assert done.ok and done.committed == ("b-note",)
    assert _names(workspace) == ["x-note", "y-note", "b-note"]
    assert done.batch is not None and done.batch.plan_accepted is False


def test_plan_merging_only_new_items_needs_no_base(
    messages_server: MessagesServer, workspace: str
) -> None:
    messages_server.enqueue(
        text("Done."),
        records_reply(rec("a-note"), rec("b-note")),
        plan_reply(["a-note", "b-note"], [rec("ab-merged")]),
    )
    session = _session(
        messages_server, workspace, consolidate_threshold=2, consolidate_every=1, commit_mode="auto"
    )
    result = session.run_turn("work")
    assert result.committed == ("ab-merged",) and _names(workspace) == ["ab-merged"]


# --- failure paths: the answer comes back, the set stays as it was ----------------


@pytest.mark.parametrize(
    "selector",
    [
        text('```json\n["x-note"]\n```'),  # fenced: not JSON as a whole
        text('["x-note"]', stop_reason="max_tokens"),
        text('["no-such-note"]'),
        error(500, "overloaded"),
    ],
    ids=["fenced", "max_tokens", "unknown-name", "http-500"],
)
def test_selection_failure_falls_back(
    messages_server: MessagesServer, workspace: str, selector: Scripted
) -> None:
    MemoryStore(workspace).extend(
        [rec("x-note", "deploy schedule", "Deploy on Fridays."), rec("y-note", "lint rule")]
    )
    before = _snapshot(workspace)
    messages_server.enqueue_for("selector", selector)  # beside the agent's call
    messages_server.enqueue(text("Fridays."), text("[]"))
    # One of two: the model's pick has a choice to make (and fails at it); the first
    # request carries the keyword ranking's best, which stands (SPEC §3, §13).
    session = _session(
        messages_server, workspace, commit_mode="auto", max_selected=1, selector="model"
    )
    result = session.run_turn("when do we deploy?")
    assert result.answer == "Fridays."
    assert result.last_error == LAST_ERROR_SELECT == session.last_error
    assert result.selection.source == "keyword" and result.selection.names == ("x-note",)
    assert result.trace is not None and result.trace.pick is not None
    assert result.trace.pick.source == "fallback" and result.trace.pick.added == ()
    assert result.last_error_cause and result.last_error_cause == result.trace.pick.reason
    assert "Deploy on Fridays." in memory_text(requests_of(messages_server.requests, "main")[0])
    assert len(requests_of(messages_server.requests, "selector")) == 1
    assert _snapshot(workspace) == before


def test_extraction_failure_keeps_answer_and_set(
    messages_server: MessagesServer, workspace: str
) -> None:
    MemoryStore(workspace).extend([rec("x-note")])
    before = _snapshot(workspace)
    bad = [rec("good-one").to_json(), {**rec("bad-one").to_json(), "name": "Bad Name"}]
    messages_server.enqueue(text("Answer."), text(json.dumps(bad)))
    session = _session(messages_server, workspace, commit_mode="auto")
    result = session.run_turn("q")
    assert result.answer == "Answer." and result.batch is None
    assert result.last_error == LAST_ERROR_EXTRACT
    assert result.last_error_cause is not None and "item 1" in result.last_error_cause
    assert _snapshot(workspace) == before and session.pending == ()
    # The next good turn clears last_error.
    messages_server.enqueue(text("Fine."), text("[]"))
    assert session.run_turn("q2").last_error is None and session.last_error is None


def test_consolidation_failure_never_holds_back_clean_items_in_auto_mode(
    messages_server: MessagesServer, workspace: str
) -> None:
    """SPEC §9: the items are committed, the failure goes to last_error, and the next
    eligible turn asks the consolidator again."""
    MemoryStore(workspace).extend([rec("x-note")])
    messages_server.enqueue(
        text("Answer."),
        records_reply(rec("a-note")),
        plan_reply(["x-note", "ghost-note"], [rec("merged")]),  # ghost: not a candidate
    )
    session = _session(
        messages_server, workspace, commit_mode="auto", consolidate_threshold=2, consolidate_every=1
    )
    result = session.run_turn("q")
    assert result.answer == "Answer." and result.committed == ("a-note",)
    assert result.last_error == LAST_ERROR_CONSOLIDATE
    assert "ghost-note" in (result.last_error_cause or "")
    assert _names(workspace) == ["x-note", "a-note"]
    batch = result.batch
    assert batch is not None and batch.status == "committed" and batch.plan is None
    assert batch.plan_error == result.last_error_cause
    assert session.pending == ()
    assert [e.op for e in MemoryStore(workspace).history()] == ["add", "add"]
    # The next turn is eligible (a-note was added since no consolidation) and asks again.
    messages_server.enqueue(
        text("Answer 2."),
        records_reply(rec("b-note")),
        plan_reply(["x-note", "b-note"], [rec("xb-merged", body="x and b together")]),
    )
    again = session.run_turn("q2")
    assert len(requests_of(messages_server.requests, "consolidator")) == 2
    assert again.last_error is None and again.committed == ("xb-merged",)
    assert _names(workspace) == ["a-note", "xb-merged"]


def test_commit_conflict_fails_cleanly_and_can_retry_without_plan(
    messages_server: MessagesServer, workspace: str
) -> None:
    session, batch = _base_and_plan_turn(messages_server, workspace)
    # Another kernel changes a base record the plan was made on.
    other_process("store.forget(['y-note'])", workspace)
    after_other = _snapshot(workspace)
    failed = session.commit(batch)
    assert failed.error is not None and "changed during consolidation" in failed.error
    assert session.last_error == LAST_ERROR_COMMIT and session.last_error_cause == failed.error
    assert _snapshot(workspace) == after_other  # no mix: nothing of the batch
    assert failed.batch is not None and failed.batch.status == "failed"
    assert session.pending == (failed.batch,)
    done = session.commit(batch, accept_plan=False)
    assert done.ok and done.committed == ("a-note", "b-note")
    assert _names(workspace) == ["x-note", "a-note", "b-note"]


def test_extend_conflict_when_the_name_appeared_meanwhile(
    messages_server: MessagesServer, workspace: str
) -> None:
    messages_server.enqueue(text("Noted."), records_reply(rec("a-note", body="mine")))
    session = _session(messages_server, workspace)
    batch = session.run_turn("q").batch
    assert batch is not None
    other_process("store.extend([rec('a-note', 'theirs')])", workspace)
    before = _snapshot(workspace)
    failed = session.commit(batch)
    assert failed.error is not None and "'a-note'" in failed.error
    assert "another session" in failed.error
    assert _snapshot(workspace) == before
    assert MemoryStore(workspace).records()[0].body == "theirs"


def test_unreadable_store_is_a_memory_failure(
    messages_server: MessagesServer, workspace: str
) -> None:
    root = Path(workspace, ".memory")
    root.mkdir()
    (root / "manifest.json").write_text('{"version": true, "files": []}')
    messages_server.enqueue(text("Still answering."))
    session = _session(messages_server, workspace, commit_mode="auto")
    result = session.run_turn("q")
    assert result.answer == "Still answering."
    assert [f.message for f in result.memory_errors] == [
        "Memory could not be read",
        LAST_ERROR_EXTRACT,
    ]
    # Callers decide by type: both failures keep the store's MemoryFormatError.
    assert all(isinstance(f.error, MemoryFormatError) for f in result.memory_errors)
    assert (root / "manifest.json").read_text() == '{"version": true, "files": []}'


# --- modes and switches ---------------------------------------------------------


def test_off_mode_selects_and_injects_but_never_extracts(
    messages_server: MessagesServer, workspace: str
) -> None:
    MemoryStore(workspace).extend([rec("x-note", body="X BODY")])
    before = _snapshot(workspace)
    messages_server.enqueue(text("Answer."))
    session = _session(messages_server, workspace, commit_mode="off")
    result = session.run_turn("q")
    assert result.batch is None and result.selection.names == ("x-note",)
    # The one record fits: injected without a selector call (SPEC §12).
    assert result.selection.source == "all"
    assert result.selection.reason == "all 1 record: the set fits"
    assert [role_of(r) for r in messages_server.requests] == ["main"]
    assert "X BODY" in memory_text(messages_server.requests[0])
    assert _snapshot(workspace) == before
    # Off mode refuses any commit, even of a plan the user asked for.
    messages_server.enqueue(plan_reply(["x-note"], [rec("x-new")]))
    planned = session.consolidate_now()
    refused = session.commit(planned)
    assert refused.error is not None and "'off'" in refused.error
    assert _snapshot(workspace) == before
    # A turn explicitly run in auto mode does write.
    messages_server.enqueue(text("Answer."), records_reply(rec("a-note")))
    assert session.run_turn("q", commit_mode="auto").committed == ("a-note",)
    assert _names(workspace) == ["x-note", "a-note"]


def test_per_turn_overrides(messages_server: MessagesServer, workspace: str) -> None:
    MemoryStore(workspace).extend([rec("x-note")])
    messages_server.enqueue(text("No memory used."))
    session = _session(messages_server, workspace)
    result = session.run_turn("q", use_memory=False)
    assert result.selection.source == "none" and result.batch is None
    assert [role_of(r) for r in messages_server.requests] == ["main"]
    # The system prompt and today's date, nothing else (no memory block).
    system = [b["text"] for b in messages_server.requests[0]["system"]]
    assert system == [session.config.system_prompt, f"Today is {today_text()}."]
    messages_server.enqueue(text("Auto."), records_reply(rec("a-note")))
    result = session.run_turn("q", commit_mode="auto")
    assert result.committed == ("a-note",) and _names(workspace) == ["x-note", "a-note"]
    with pytest.raises(BatchError, match="commit_mode"):
        session.run_turn("q", commit_mode="sometimes")
    with pytest.raises(TurnError, match="empty"):
        session.run_turn("   ")


def test_memory_costs_count_every_side_query_even_failed_ones(
    messages_server: MessagesServer, workspace: str
) -> None:
    """What memory costs: the selector, extractor and consolidator calls of a turn are
    in its usage -- also when their reply was invalid (the API still billed it)."""
    MemoryStore(workspace).extend([rec("x-note"), rec("y-note")])
    messages_server.enqueue_for(
        "selector",
        text('```json\n["x-note"]\n```', usage={"input_tokens": 11, "output_tokens": 1}),
        text('["x-note"]', usage={"input_tokens": 5, "output_tokens": 1}),
    )
    messages_server.enqueue(
        text("A.", usage={"input_tokens": 100, "output_tokens": 10}),
        records_reply(rec("a-note"), usage={"input_tokens": 22, "output_tokens": 2}),
        plan_reply(
            ["x-note", "a-note"], [rec("xa")], usage={"input_tokens": 33, "output_tokens": 3}
        ),
    )
    session = _session(
        messages_server,
        workspace,
        consolidate_threshold=3,
        consolidate_every=1,
        max_selected=1,
        selector="model",
    )
    first = session.run_turn("q1")
    assert first.last_error == LAST_ERROR_SELECT  # the fenced selector reply was refused
    assert first.usage.by_role("selector") == Usage(11, 1)
    assert first.usage.by_role("extractor") == Usage(22, 2)
    assert first.usage.by_role("consolidator") == Usage(33, 3)
    assert first.usage.memory == Usage(66, 6) and first.usage.main == Usage(100, 10)
    messages_server.enqueue(
        text("B.", usage={"input_tokens": 100, "output_tokens": 10}),
        text("not json", usage={"input_tokens": 44, "output_tokens": 4}),
    )
    second = session.run_turn("q2")
    assert second.last_error == LAST_ERROR_EXTRACT
    assert second.usage.by_role("extractor") == Usage(44, 4)
    assert second.usage.memory == Usage(49, 5)
    assert session.usage.total.memory == Usage(115, 11)
    assert session.usage.total.main == Usage(200, 20)


def test_consolidate_now_waits_for_review(messages_server: MessagesServer, workspace: str) -> None:
    MemoryStore(workspace).extend([rec("x-note"), rec("y-note")])
    messages_server.enqueue(plan_reply(["x-note", "y-note"], [rec("xy-note")]))
    session = _session(messages_server, workspace, commit_mode="auto")
    batch = session.consolidate_now()
    assert (
        batch.status == "pending"
        and batch.items == ()
        and _names(workspace) == ["x-note", "y-note"]
    )
    assert session.usage.other.by_role("consolidator") == Usage(10, 5)
    done = session.commit(batch)
    assert done.committed == ("xy-note",) and done.removed == ("x-note", "y-note")
    assert _names(workspace) == ["xy-note"]
    messages_server.enqueue(text("not a plan"))
    failed = session.consolidate_now()
    assert failed.status == "failed" and failed.plan is None
    assert session.last_error == LAST_ERROR_CONSOLIDATE and failed.plan_error
    assert session.pending == ()


# --- the tool loop ---------------------------------------------------------------


def test_run_python_only_when_enabled(messages_server: MessagesServer, workspace: str) -> None:
    ns: dict[str, Any] = {}
    messages_server.enqueue(
        tool_use("run_python", {"code": "x = 6 * 7\nx"}, id="t1"), text("Could not."), text("[]")
    )
    session = _session(messages_server, workspace)
    session.run_turn("compute", namespace=ns)
    first = messages_server.requests[0]
    assert "run_python" not in [t["name"] for t in first["tools"]]
    result_block = messages_server.requests[1]["messages"][-1]["content"][0]
    assert result_block["is_error"] is True and "not enabled" in result_block["content"]
    assert "x" not in ns

    messages_server.enqueue(
        tool_use("run_python", {"code": "x = 6 * 7\nx"}, id="t2"), text("42."), text("[]")
    )
    session.run_turn("compute", namespace=ns, allow_python=True)
    assert "run_python" in [t["name"] for t in messages_server.requests[3]["tools"]]
    assert messages_server.requests[4]["messages"][-1]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "t2",
        "content": "result:\n42",
        "cache_control": {"type": "ephemeral"},
    }
    assert ns["x"] == 42


def test_tool_errors_and_unknown_tools_are_results(
    messages_server: MessagesServer, workspace: str
) -> None:
    two = Scripted(
        content=[
            {
                "type": "tool_use",
                "id": "t1",
                "name": "read_file",
                "input": {"path": "../../etc/passwd"},
            },
            {"type": "tool_use", "id": "t2", "name": "delete_everything", "input": {}},
        ],
        stop_reason="tool_use",
    )
    messages_server.enqueue(two, text("Both failed."), text("[]"))
    session = _session(messages_server, workspace)
    result = session.run_turn("try")
    assert result.answer == "Both failed." and result.tool_calls == 2
    results = session.history[2]["content"]
    assert [r["tool_use_id"] for r in results] == ["t1", "t2"]
    assert all(r["is_error"] for r in results)
    assert "outside the workspace" in results[0]["content"]
    assert "unknown tool 'delete_everything'" in results[1]["content"]


def test_max_tool_steps_stops_with_a_note(messages_server: MessagesServer, workspace: str) -> None:
    messages_server.enqueue(*(tool_use("list_files", {}) for _ in range(3)), text("[]"))
    session = _session(messages_server, workspace, max_tool_steps=2)
    result = session.run_turn("loop forever")
    assert result.stopped_at_limit and "limit of 2 tool steps" in result.answer
    assert result.tool_calls == 2
    assert len(requests_of(messages_server.requests, "main")) == 3
    history = session.history
    assert_pairs_intact(history)
    assert_alternates(history)
    assert history[-2]["content"][0]["content"].startswith("not run:")
    assert history[-1]["role"] == "assistant"


def test_a_cut_off_answer_says_so(messages_server: MessagesServer, workspace: str) -> None:
    messages_server.enqueue(text("The answer is", stop_reason="max_tokens"), text("[]"))
    result = _session(messages_server, workspace).run_turn("q")
    assert result.answer.startswith("The answer is") and "cut off" in result.answer


def test_main_model_failure_raises_its_model_error_and_closes_history(
    messages_server: MessagesServer, workspace: str
) -> None:
    messages_server.enqueue(tool_use("list_files", {}, id="t1"), error(529, "overloaded"))
    session = _session(messages_server, workspace)
    # The main call's failure keeps its type: not a side-query error, not rewrapped.
    with pytest.raises(ModelAPIError, match="HTTP 529") as caught:
        session.run_turn("q")
    assert caught.value.status_code == 529 and not isinstance(caught.value, SideQueryError)
    history = session.history
    assert_pairs_intact(history)
    assert_alternates(history)
    assert history[-1]["content"][0]["text"].startswith("(The turn failed:")
    assert not requests_of(messages_server.requests, "extractor")
    assert len(session.usage.turns) == 1 and len(session.usage.turns[0].calls) == 1


# --- interrupts ------------------------------------------------------------------


def _next_turn_is_valid(srv: MessagesServer, session: AgentSession) -> None:
    srv.enqueue(text("Back."), text("[]"))
    assert session.run_turn("continue").answer == "Back."
    request = requests_of(srv.requests, "main")[-1]
    assert_pairs_intact(request["messages"])
    assert_alternates(request["messages"])


def test_interrupt_inside_run_python(messages_server: MessagesServer, workspace: str) -> None:
    Path(workspace, "a.txt").write_text("A")
    two = Scripted(
        content=[
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.txt"}},
            {
                "type": "tool_use",
                "id": "t2",
                "name": "run_python",
                "input": {"code": "raise KeyboardInterrupt"},
            },
        ],
        stop_reason="tool_use",
    )
    messages_server.enqueue(two)
    session = _session(messages_server, workspace)
    with pytest.raises(KeyboardInterrupt):
        session.run_turn("go", allow_python=True)
    history = session.history
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
    done, interrupted = history[2]["content"]
    assert done == {"type": "tool_result", "tool_use_id": "t1", "content": "A"}
    assert interrupted["is_error"] and "interrupted" in interrupted["content"]
    assert "interrupted by the user" in history[3]["content"][0]["text"]
    assert not requests_of(messages_server.requests, "extractor")
    assert len(session.usage.turns) == 1  # what was spent is still accounted
    _next_turn_is_valid(messages_server, session)


def test_interrupt_between_model_steps(messages_server: MessagesServer, workspace: str) -> None:
    messages_server.enqueue(tool_use("list_files", {}, id="t1"))

    def stop_at_step_two(event: TurnEvent) -> None:
        if event.kind == "model" and event.detail == "step 2":
            raise KeyboardInterrupt

    session = _session(messages_server, workspace)
    with pytest.raises(KeyboardInterrupt):
        session.run_turn("go", on_event=stop_at_step_two)
    history = session.history
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
    assert_pairs_intact(history)
    _next_turn_is_valid(messages_server, session)


def test_interrupt_during_selection_leaves_no_trace(
    messages_server: MessagesServer, workspace: str
) -> None:
    def stop(event: TurnEvent) -> None:
        if event.kind == "selecting":
            raise KeyboardInterrupt

    session = _session(messages_server, workspace)
    with pytest.raises(KeyboardInterrupt):
        session.run_turn("go", on_event=stop)
    assert session.history == () and messages_server.requests == []


@pytest.mark.parametrize("mode", ["review", "auto"])
def test_interrupt_in_the_consolidation_keeps_the_turn_for_the_next_extraction(
    messages_server: MessagesServer, workspace: str, mode: str
) -> None:
    """Issue 28 item 4 (run_turn): a KeyboardInterrupt once the consolidator is asked
    leaves the turn's items neither committed nor pending, and the cursor where it
    was: the next turn's extraction reads the interrupted turn as new."""
    MemoryStore(workspace).extend([rec(f"old-note-{i}") for i in range(9)])
    session = _session(
        messages_server, workspace, commit_mode=mode, consolidate_every=1, max_selected=20
    )
    messages_server.enqueue(text("Hello."), text("[]"))
    session.run_turn("Hi there.")

    def stop(event: TurnEvent) -> None:
        if event.kind == "consolidating":
            raise KeyboardInterrupt

    messages_server.enqueue(text("Noted."), records_reply(rec("likes-bold")))
    with pytest.raises(KeyboardInterrupt):
        session.run_turn("I like bold answers.", on_event=stop)
    assert session.pending == () and _names(workspace)[-1] == "old-note-8"
    messages_server.enqueue(text("Sure."), text("[]"))
    session.run_turn("And dark mode too.")
    [*_, extract] = requests_of(messages_server.requests, "extractor")
    processed, new = split_extraction(extract)
    assert "I like bold answers." in new and "Hi there." in processed


def test_history_is_a_read_only_copy(messages_server: MessagesServer, workspace: str) -> None:
    messages_server.enqueue(text("A."), text("[]"))
    session = _session(messages_server, workspace)
    session.run_turn("q")
    copy_ = session.history
    copy_[0]["content"] = "tampered"
    assert session.history[0]["content"] == "q"
    session.clear_history()
    assert session.history == ()


def test_items_pending_or_turned_down_are_not_proposed_again(
    messages_server: MessagesServer, workspace: str
) -> None:
    session = _session(messages_server, workspace)
    messages_server.enqueue(text("A."), records_reply(rec("a-note"), rec("b-note")))
    first = session.run_turn("one").batch
    assert first is not None
    # The next turn re-proposes a (still pending) and adds c.
    messages_server.enqueue(text("B."), records_reply(rec("a-note"), rec("c-note")))
    second = session.run_turn("two").batch
    assert second is not None and second.names == ("c-note",)
    session.commit(first, reject=["b-note"])
    session.discard(second)
    # b was rejected and c discarded: proposing them again yields no batch.
    messages_server.enqueue(text("C."), records_reply(rec("b-note"), rec("c-note")))
    assert session.run_turn("three").batch is None
    assert _names(workspace) == ["a-note"]


def test_without_a_key_the_session_has_no_model_but_still_selects(workspace: str) -> None:
    MemoryStore(workspace).extend(
        [rec("deploy-day", "deploys happen on Fridays"), rec("lint-rule", "run the linter")]
    )
    session = AgentSession(
        workspace, config=SessionConfig(**OLD_SELECTION, max_selected=1, selector="model")
    )
    # The first request's selection needs no model (SPEC §13): the keyword ranking.
    selection = session.begin_turn("which day do deploys happen?")
    assert selection.source == "keyword" and selection.names == ("deploy-day",)
    assert session.last_error is None
    with pytest.raises(ModelNotConfigured, match="no model configured"):
        session.run_turn("hello")
    assert_pairs_intact(session.history)
    assert session.history[-1]["role"] == "assistant"


# --- issue 19 item 3: a lone surrogate from the user or the model ----------------------


@pytest.mark.parametrize("mode", ["auto", "review"])
def test_a_lone_surrogate_from_the_user_or_the_model_never_breaks_a_turn(
    messages_server: MessagesServer, workspace: str, mode: str
) -> None:
    """Half an emoji in the question, and in the model's reply (a JSON escape the SDK
    decodes into a lone surrogate): the SDK could not send it, the journal and pending/
    could not store it, and run_turn raised (the answer lost). Each is made encodable
    where it enters, so the turn answers, commits or keeps its batch, and the next turn
    (which sends this one's history) works too."""
    from ipymemory.review.pending import PendingFiles

    def respond(request: dict[str, Any]) -> Scripted:
        role = role_of(request)
        if role == "extractor":
            return records_reply(rec("emoji-note"))
        if role == "selector":
            return text("[]")
        return text("Noted \ud83d, half an emoji.")

    messages_server.responder = respond
    session = _session(messages_server, workspace, commit_mode=mode)
    result = session.run_turn("What is this: \ud83d?")
    assert result.answer == "Noted \ufffd, half an emoji."
    assert result.memory_errors == ()
    if mode == "auto":
        assert result.committed == ("emoji-note",)
        entry = MemoryStore(workspace).history(1)[0]
        assert entry.provenance["emoji-note"]["query"] == "What is this: \ufffd?"
    else:
        assert result.batch is not None and result.batch.status == BatchStatus.PENDING
        assert session.pending_files.last_error is None
        [saved] = PendingFiles(Path(workspace, ".memory")).load()[0]
        assert saved.batch.provenance is not None
        assert saved.batch.provenance.query == "What is this: \ufffd?"
    sent = json.dumps(messages_server.requests[-1])
    assert "\\ud83d" not in sent
    again = session.run_turn("And now?")
    assert again.answer == "Noted \ufffd, half an emoji."


def test_a_file_name_that_is_not_utf8_in_tool_output_never_breaks_a_turn(
    messages_server: MessagesServer, workspace: str
) -> None:
    """``list_files`` over a Latin-1 file name (Python reads it as a lone surrogate):
    the tool's output is made encodable where it enters, so it can be sent back."""
    os.close(os.open(os.path.join(os.fsencode(workspace), b"caf\xe9.txt"), os.O_CREAT, 0o644))
    messages_server.enqueue(tool_use("list_files", {}), text("One file."))
    session = _session(messages_server, workspace, commit_mode="off")
    result = session.run_turn("Which files are there?")
    assert result.answer == "One file."
    [listing] = [
        block
        for message in messages_server.requests[-1]["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert "caf\ufffd.txt" in json.dumps(listing, ensure_ascii=False)
