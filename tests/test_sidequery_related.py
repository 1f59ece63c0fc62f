"""The extractor's catalog and the consolidator's candidates past their bound (issue 40):
through real turns (an ``AgentSession`` over the real SDK and the scripted server), a set
over the bound sends a bounded part holding the related record and says so; an item
whose name is taken by a record the extractor was not shown is dropped alone and named;
a small set's request is what it was. And the part itself at 10,000 records."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from messages_server import MessagesServer, Scripted, text
from record_support import rec
from turn_support import plan_reply, records_reply, role_of, session_for

from ipymemory import MemoryRecord, MemoryStore, StoredRecord
from ipymemory import _constants as C
from ipymemory._tokens import estimate_tokens
from ipymemory.sidequery import LAST_ERROR_CONSOLIDATE, LAST_ERROR_EXTRACT
from ipymemory.sidequery.consolidate import bounded_candidates
from ipymemory.sidequery.related import catalog_part, related_part
from ipymemory.sidequery.replies import encode_input
from ipymemory.store.index import render_catalog
from ipymemory.turn.memory_work import LAST_ERROR_EXTRACT_DROPPED

QUERY = "How do the integration tests load their postgres fixtures?"
ANSWER = "They load them from tests/data with a session-scoped pytest fixture."
RELATED = rec("db-fixtures", "Integration tests load postgres fixtures from tests/data")
NEW = rec("fixtures-scope", "The postgres fixtures are loaded once per pytest session")


def big_set(n: int = 300) -> list[MemoryRecord]:
    """``n`` unrelated records (their catalog far over the bound), the related one early:
    the newest records alone would not hold it."""
    records = [
        rec(f"fact-{i}", f"Note {i} about the quarterly export of sales figures to finance")
        for i in range(n)
    ]
    records.insert(3, RELATED)
    return records


def responder(extractor: Scripted, consolidator: Scripted | None = None) -> Any:
    def respond(body: dict[str, Any]) -> Scripted:
        role = role_of(body)
        if role == "extractor":
            return extractor
        if role == "consolidator" and consolidator is not None:
            return consolidator
        assert role == "main", role
        return text(ANSWER)

    return respond


def side_input(srv: MessagesServer, role: str) -> dict[str, Any]:
    [request] = [r for r in srv.requests if role_of(r) == role]
    content = request["messages"][-1]["content"]
    value = json.loads(content if isinstance(content, str) else content[-1]["text"])
    assert isinstance(value, dict)
    return value


def lines_of(workspace: str) -> list[str]:
    return render_catalog(MemoryStore(workspace).readable().entries).splitlines()


NO_CONSOLIDATION: dict[str, Any] = {"consolidate_threshold": 10**6}


def test_a_set_over_the_bound_shows_the_extractor_the_related_part_and_says_so(
    messages_server: MessagesServer, workspace: str
) -> None:
    MemoryStore(workspace).extend(big_set())
    messages_server.responder = responder(records_reply(NEW))
    session = session_for(messages_server.base_url, workspace, **NO_CONSOLIDATION)
    result = session.run_turn(QUERY)
    assert result.batch is not None and [r.name for r in result.batch.items] == [NEW.name]
    payload = side_input(messages_server, "extractor")
    shown = payload["existing_catalog"].splitlines()
    whole = lines_of(workspace)
    assert next(line for line in whole if line.startswith("- [db-fixtures](")) in shown
    assert 1 < len(shown) < len(whole)
    assert estimate_tokens(payload["existing_catalog"]) <= C.EXTRACT_CATALOG_TOKENS
    assert shown == [line for line in whole if line in set(shown)]  # in set order
    note = payload["existing_catalog_note"]
    assert f"lists {len(shown)} of the 301 memories" in note
    assert sorted(payload) == [
        "existing_catalog",
        "existing_catalog_note",
        "new_from_turn",
        "today",
    ]


def test_an_item_named_like_a_record_it_was_not_shown_is_dropped_alone_and_named(
    messages_server: MessagesServer, workspace: str
) -> None:
    MemoryStore(workspace).extend(big_set())
    before = {r.name: r for r in MemoryStore(workspace).records()}
    clash = rec("fact-7", "Fixtures are loaded per session (a name taken elsewhere)")
    messages_server.responder = responder(records_reply(clash, NEW))
    session = session_for(messages_server.base_url, workspace, **NO_CONSOLIDATION)
    result = session.run_turn(QUERY)
    assert "[fact-7]" not in side_input(messages_server, "extractor")["existing_catalog"]
    # The batch's other item is kept; the dropped one is said, by name.
    assert result.batch is not None and [r.name for r in result.batch.items] == [NEW.name]
    [failure] = result.memory_errors
    assert failure.message == LAST_ERROR_EXTRACT_DROPPED == result.last_error
    assert "'fact-7'" in failure.cause and "was not shown" in failure.cause
    assert {r.name: r for r in MemoryStore(workspace).records()} == before  # review mode


def test_a_name_taken_by_a_record_it_was_shown_still_rejects_the_batch(
    messages_server: MessagesServer, workspace: str
) -> None:
    MemoryStore(workspace).extend(big_set())
    clash = rec("db-fixtures", "Fixtures are loaded per session")
    messages_server.responder = responder(records_reply(NEW, clash))
    session = session_for(messages_server.base_url, workspace, **NO_CONSOLIDATION)
    result = session.run_turn(QUERY)
    assert "[db-fixtures]" in side_input(messages_server, "extractor")["existing_catalog"]
    assert result.batch is None and result.last_error == LAST_ERROR_EXTRACT
    assert "'db-fixtures' already exists" in (result.last_error_cause or "")


def test_replaces_may_name_a_record_the_extractor_was_not_shown(
    messages_server: MessagesServer, workspace: str
) -> None:
    MemoryStore(workspace).extend(big_set())
    update = {**rec("fact-7", "Note 7, corrected: exports go to finance weekly").to_json()}
    update["replaces"] = "fact-7"
    messages_server.responder = responder(text(json.dumps([update])))
    session = session_for(messages_server.base_url, workspace, **NO_CONSOLIDATION)
    result = session.run_turn(QUERY)
    assert result.last_error is None
    assert result.batch is not None and [i.replaces for i in result.batch.proposed] == ["fact-7"]


def test_a_small_set_sends_the_extractor_the_request_it_always_did(
    messages_server: MessagesServer, workspace: str
) -> None:
    MemoryStore(workspace).extend([rec(f"small-{i}") for i in range(5)])
    messages_server.responder = responder(text("[]"))
    session = session_for(messages_server.base_url, workspace, **NO_CONSOLIDATION)
    session.run_turn(QUERY)
    [request] = [r for r in messages_server.requests if role_of(r) == "extractor"]
    payload = side_input(messages_server, "extractor")
    expected = {
        "existing_catalog": render_catalog(MemoryStore(workspace).readable().entries),
        "new_from_turn": 1,
        "today": payload["today"],
    }
    assert request["messages"][-1]["content"][-1]["text"] == encode_input(expected)


def test_the_consolidator_gets_the_related_part_and_no_name_of_the_rest(
    messages_server: MessagesServer, workspace: str
) -> None:
    records = [
        rec(f"fact-{i}", f"Note {i} about the quarterly export of sales figures", "x " * 300)
        for i in range(300)
    ]
    records.insert(3, RELATED)
    MemoryStore(workspace).extend(records)
    # A plan whose record takes the name of a record it was not shown: rejected whole.
    plan = plan_reply(["db-fixtures", NEW.name], [rec("fact-9", "Merged fixture notes")])
    messages_server.responder = responder(records_reply(NEW), plan)
    session = session_for(messages_server.base_url, workspace, consolidate_every=1)
    result = session.run_turn(QUERY)
    candidates = side_input(messages_server, "consolidator")["candidates"]
    names = [c["name"] for c in candidates]
    assert "db-fixtures" in names and names[-1] == NEW.name and len(names) < 302
    assert "fact-9" not in names
    assert estimate_tokens(encode_input(candidates)) <= C.CONSOLIDATE_CANDIDATE_TOKENS + 50
    # The turn's item is not held back by the failed plan.
    assert result.batch is not None and [r.name for r in result.batch.items] == [NEW.name]
    assert result.batch.plan is None and "'fact-9'" in (result.batch.plan_error or "")
    assert result.last_error == LAST_ERROR_CONSOLIDATE


def entries(n: int) -> list[StoredRecord]:
    records = big_set(n)
    return [StoredRecord(f"{r.name}.md", r) for r in records]


def test_at_ten_thousand_records_what_the_side_queries_get_stays_bounded() -> None:
    stored = entries(C.MAX_SET_RECORDS - 1)
    part = catalog_part(stored, QUERY)
    assert part.total == C.MAX_SET_RECORDS and not part.whole
    assert "db-fixtures" in part.names
    assert estimate_tokens(part.text) <= C.EXTRACT_CATALOG_TOKENS
    candidates = bounded_candidates([e.record for e in stored], [NEW])
    assert RELATED in candidates and candidates[-1] == NEW
    cost = sum(estimate_tokens(encode_input(r.to_json())) for r in candidates)
    assert cost <= C.CONSOLIDATE_CANDIDATE_TOKENS


@given(
    costs=st.lists(st.integers(1, 50), max_size=40),
    budget=st.integers(0, 400),
    query=st.sampled_from(["", "note 3", "sales figures", "nothing here"]),
)
def test_related_part_fits_its_budget_in_set_order(
    costs: list[int], budget: int, query: str
) -> None:
    records = [rec(f"r-{i}", f"note {i} about sales figures") for i in range(len(costs))]
    keep = related_part(query, records, costs, budget)
    assert list(keep) == sorted(set(keep))
    if sum(costs) <= budget:
        assert keep == tuple(range(len(records)))
    else:
        assert sum(costs[i] for i in keep) <= budget
        # Nothing left out would still fit: the room is used.
        left = [costs[i] for i in range(len(records)) if i not in keep]
        assert not left or min(left) > budget - sum(costs[i] for i in keep)
