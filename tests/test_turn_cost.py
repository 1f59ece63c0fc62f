"""SPEC §8, the cost of a turn, asserted on the requests the scripted server received:
the memory block after the request history with cache breakpoints on the stable
prefix, the extraction cursor, and the spacing between consolidations."""

from __future__ import annotations

import copy
import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from messages_server import MessagesServer, Scripted, error, text, tool_use
from record_support import rec
from turn_support import (
    OLD_SELECTION,
    assert_alternates,
    assert_pairs_intact,
    memory_blocks,
    model_for,
    records_reply,
    requests_of,
    role_of,
)

from ipymemory import AgentSession, MemoryStore, SessionConfig
from ipymemory._dates import today_text
from ipymemory.sidequery import LAST_ERROR_EXTRACT
from ipymemory.sidequery.extract import extractor_request, turn_mark
from ipymemory.turn.loop import request_messages

MARK = {"type": "ephemeral"}


def _session(srv: MessagesServer, workspace: str, **config: Any) -> AgentSession:
    config = {**OLD_SELECTION, **config}
    return AgentSession(workspace, model=model_for(srv.base_url), config=SessionConfig(**config))


def _marks(request: dict[str, Any]) -> list[tuple[int, int]]:
    """(message, block) positions of every cache breakpoint in a request's messages."""
    return [
        (i, j)
        for i, message in enumerate(request["messages"])
        if isinstance(message["content"], list)
        for j, block in enumerate(message["content"])
        if "cache_control" in block
    ]


def _unmarked(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` without cache marks and memory blocks, strings for lone text blocks
    of user messages (the canonical form of a query)."""
    out = []
    for message in copy.deepcopy(messages):
        content = message["content"]
        if isinstance(content, list):
            content = [
                {k: v for k, v in b.items() if k != "cache_control"}
                for b in content
                if not str(b.get("text", "")).startswith("<relevant_memories>")
            ]
            if len(content) == 1 and content[0]["type"] == "text" and message["role"] == "user":
                content = content[0]["text"]
        out.append({**message, "content": content})
    return out


def _marks_off(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` without cache marks; a lone text block of a user message as the
    string it stands for (the Messages API reads them alike)."""
    out = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            content = [{k: v for k, v in b.items() if k != "cache_control"} for b in content]
            if len(content) == 1 and content[0]["type"] == "text" and message["role"] == "user":
                content = content[0]["text"]
        out.append({**message, "content": content})
    return out


def test_blocks_stay_where_given_and_breakpoints_mark_each_requests_end(
    messages_server: MessagesServer, workspace: str
) -> None:
    # Issue 40: a block stays with the message it was first given with, so the prompt
    # cache keeps it; a turn adds only what no block holds; a record that changed or
    # left the set starts the blocks again from the turn's own.
    Path(workspace, "notes.md").write_text("tabs\n")
    store = MemoryStore(workspace)
    store.extend(
        [rec("alpha", "about alpha", "ALPHA BODY"), rec("beta", "about beta", "BETA BODY")]
    )
    session = _session(messages_server, workspace, commit_mode="off", memory_budget=3000)
    messages_server.enqueue(text("One."))
    session.run_turn("first")
    messages_server.enqueue(tool_use("read_file", {"path": "notes.md"}, id="toolu_n"), text("Two."))
    session.run_turn("second")
    store.extend([rec("gamma", "about gamma", "GAMMA BODY")])
    messages_server.enqueue(text("Three."))
    third = session.run_turn("third")
    store.forget(["alpha"])
    messages_server.enqueue(text("Four."))
    fourth = session.run_turn("fourth")

    main = requests_of(messages_server.requests, "main")
    assert len(main) == 5
    # The system prompt: one cached block, no memories; then today's date after the
    # breakpoint (issue 26), so the prompt's cache survives the day changing.
    for request in main:
        assert request["system"] == [
            {"type": "text", "text": session.config.system_prompt, "cache_control": MARK},
            {"type": "text", "text": f"Today is {today_text()}."},
        ]
    # Turn 1: the whole set, before the query; the request's last message is marked.
    [(at, first)] = memory_blocks(main[0])
    assert at == 0 and "ALPHA BODY" in first and "BETA BODY" in first
    assert _marks(main[0]) == [(0, 1)]
    # Turn 2 adds nothing: both of its requests carry turn 1's block where it was, the
    # earlier history's end and the request's last message marked.
    for request in main[1:3]:
        assert memory_blocks(request) == [(0, first)]
        assert request["messages"][0] == {
            "role": "user",
            "content": [{"type": "text", "text": first}, {"type": "text", "text": "first"}],
        }
    assert _marks(main[1]) == [(1, 0), (2, 0)]
    assert _marks(main[2]) == [(1, 0), (4, 0)]
    # Turn 3: a record committed since is added at its own query, alone.
    [(_, kept), (at, added)] = memory_blocks(main[3])
    assert kept == first and at == 6
    assert "GAMMA BODY" in added and "ALPHA" not in added and "BETA" not in added
    assert third.trace is not None and third.trace.requests[0].added == ("gamma",)
    # Every request's messages before its last are the previous request's, as sent: the
    # prefix the cache keeps (marks aside).
    for before, after in itertools.pairwise(main[:4]):
        sent = before["messages"]
        assert _marks_off(after["messages"][: len(sent)]) == _marks_off(sent)
    # Turn 4: alpha was forgotten, so no request sends it again: one block, at its query.
    [(at, again)] = memory_blocks(main[4])
    assert at == 8 and "ALPHA" not in json.dumps(main[4])
    assert "BETA BODY" in again and "GAMMA BODY" in again
    assert fourth.trace is not None and fourth.trace.requests[0].rebased
    history = list(session.history)
    assert "relevant_memories>" not in json.dumps(history)
    assert _unmarked(main[4]["messages"][:8]) == _unmarked(history[:8])


def test_no_memories_means_no_block(messages_server: MessagesServer, workspace: str) -> None:
    session = _session(messages_server, workspace, commit_mode="off")
    messages_server.enqueue(text("Hi."))
    session.run_turn("hello")
    (request,) = messages_server.requests
    assert request["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hello", "cache_control": MARK}]}
    ]


_text_block = st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=8)})


@st.composite
def _turns(draw: st.DrawFn) -> tuple[list[dict[str, Any]], int]:
    """A request history (maybe starting with a summary note) ending with the turn in
    progress, and how many messages that turn has."""
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "user", "content": [{"type": "text", "text": "SUMMARY"}]})
        messages.append({"role": "assistant", "content": [draw(_text_block)]})
    for _ in range(draw(st.integers(0, 3))):
        messages.append({"role": "user", "content": draw(st.text(min_size=1, max_size=5))})
        messages.append({"role": "assistant", "content": [draw(_text_block)]})
    query: Any = draw(st.text(min_size=1, max_size=5))
    messages.append({"role": "user", "content": query})
    current = 1
    for step in range(draw(st.integers(0, 2))):
        tid = f"t{step}"
        messages.append(
            {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": "x"}]}
        )
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid}]})
        current += 2
    return messages, current


@settings(max_examples=300, deadline=None)
@given(_turns(), st.data())
def test_request_messages_adds_only_the_blocks_where_given_and_at_most_two_marks(
    turn: tuple[list[dict[str, Any]], int], data: st.DataObject
) -> None:
    messages, current = turn
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    at = data.draw(st.lists(st.sampled_from(users), unique=True, max_size=3))
    blocks = {i: [f"<relevant_memories>\n\nX{i}\n\n</relevant_memories>"] for i in at}
    # Blocks whose message was summarised away go after the summary note (cut > 0).
    summary = messages[0]["content"] == [{"type": "text", "text": "SUMMARY"}]
    summarised = ["<relevant_memories>\n\nS\n\n</relevant_memories>"] if summary else []
    before = copy.deepcopy(messages)
    request = request_messages(messages, current, blocks, summarised)
    assert messages == before  # the input is not changed
    assert _unmarked(request) == _unmarked(messages)
    assert_alternates(request)
    assert_pairs_intact(request)
    for i, message in enumerate(request):
        content = message["content"]
        texts = [b.get("text") for b in content] if isinstance(content, list) else [content]
        expected = [*(summarised if i == 0 else []), *blocks.get(i, [])]
        if not expected:
            assert not any(str(t).startswith("<relevant_memories>") for t in texts)
            continue
        original = messages[i]["content"]
        original = [original] if isinstance(original, str) else original
        if i == 0 and summarised:  # right after the summary note
            assert texts[1 : 1 + len(expected)] == expected
        elif original[-1].get("type") == "tool_result" if isinstance(original[-1], dict) else False:
            assert texts[-len(expected) :] == expected  # after the tool results
        else:
            assert texts[-1 - len(expected) : -1] == expected  # right before the query
        assert len(texts) == len(original) + len(expected)
    query = len(messages) - current
    marks = _marks({"messages": request})
    expected = []
    if query > 0:
        expected.append((query - 1, len(request[query - 1]["content"]) - 1))
    expected.append((len(request) - 1, len(request[-1]["content"]) - 1))
    assert marks == expected
    assert len(marks) + 1 <= 4  # with the system prompt's: within the API's limit


def _extract_requests(srv: MessagesServer) -> list[dict[str, Any]]:
    return requests_of(srv.requests, "extractor")


def test_the_extractor_reads_from_its_cursor(
    messages_server: MessagesServer, workspace: str
) -> None:
    Path(workspace, "notes.md").write_text("tabs\n")
    session = _session(messages_server, workspace)

    def turn_starts() -> list[int]:
        return [
            i
            for i, m in enumerate(session.history)
            if m["role"] == "user" and isinstance(m["content"], str)
        ]

    messages_server.enqueue(text("A."), text("[]"))
    session.run_turn("one")
    messages_server.enqueue(
        tool_use("read_file", {"path": "notes.md"}, id="toolu_r"), text("B."), text("[]")
    )
    session.run_turn("two")
    messages_server.enqueue(text("C."), error(500, "extractor down"))
    result = session.run_turn("three")
    assert result.last_error == LAST_ERROR_EXTRACT
    messages_server.enqueue(text("D."), records_reply(rec("d-note")))
    result = session.run_turn("four")
    assert result.batch is not None and result.batch.names == ("d-note",)

    history = list(session.history)
    one, two, three, _ = turn_starts()
    catalog = MemoryStore(workspace).catalog()
    extract = _extract_requests(messages_server)
    assert len(extract) == 4
    # Issue 31: append-only. Turn 1: nothing before it; its turn is new.
    assert extract[0]["messages"] == extractor_request(history[one:two], catalog)
    # Turn 2: turn 1 as processed context (the session's turns since its anchor), then
    # turn 2 with its tool pair; the input says where the new part starts.
    assert extract[1]["messages"] == extractor_request(
        history[two:three], catalog, earlier=history[one:two]
    )
    # Turn 3's extraction failed, so turn 4's reads turns 3 and 4 as new, after 1 and 2.
    assert extract[3]["messages"] == extractor_request(
        history[three:], catalog, earlier=history[one:three]
    )
    news = [json.loads(r["messages"][-1]["content"][-1]["text"])["new_from_turn"] for r in extract]
    assert news == [1, 2, 3, 3]
    sent = json.dumps(extract[3]["messages"])
    assert sent.count("toolu_r") == 2  # the context's tool call and its result, together
    for before, after in itertools.pairwise(extract):
        # Each request's history is a prefix of the next one's: cached once, then read.
        old = [b for m in before["messages"][:-1] for b in m["content"]]
        new = [b for m in after["messages"] for b in m["content"]]
        strip = [{k: v for k, v in b.items() if k != "cache_control"} for b in old]
        assert [{k: v for k, v in b.items() if k != "cache_control"} for b in new][
            : len(strip)
        ] == strip
        assert old[-1]["cache_control"] == {"type": "ephemeral"}
    for request in extract:
        texts = [b["text"] for m in request["messages"] for b in m["content"]]
        assert texts[0] == turn_mark(1)
        assert_alternates(request["messages"])


def test_turns_without_extraction_are_skipped_by_the_cursor(
    messages_server: MessagesServer, workspace: str
) -> None:
    session = _session(messages_server, workspace)
    messages_server.enqueue(text("A."))
    session.run_turn("private", use_memory=False)
    messages_server.enqueue(text("B."))
    session.run_turn("also private", commit_mode="off")
    messages_server.enqueue(text("C."), text("[]"))
    session.run_turn("three")
    (extract,) = _extract_requests(messages_server)
    sent = json.dumps(extract["messages"])
    assert "three" in sent and "also private" in sent  # the turn before, as context
    assert '"private"' not in sent and "A." not in sent


def test_an_interrupted_turn_is_read_by_the_next_extraction(
    messages_server: MessagesServer, workspace: str
) -> None:
    session = _session(messages_server, workspace)
    messages_server.enqueue(text("A."), text("[]"))
    session.run_turn("one")
    messages_server.enqueue(tool_use("list_files", {}, id="t1"))

    def stop_at_step_two(event: Any) -> None:
        if event.kind == "model" and event.detail == "step 2":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        session.run_turn("remember that I like tabs", on_event=stop_at_step_two)
    assert len(_extract_requests(messages_server)) == 1  # not extracted: interrupted
    messages_server.enqueue(text("C."), text("[]"))
    session.run_turn("three")
    last = json.dumps(_extract_requests(messages_server)[-1]["messages"])
    assert "remember that I like tabs" in last and "three" in last
    data = json.loads(_extract_requests(messages_server)[-1]["messages"][-1]["content"][-1]["text"])
    mark = turn_mark(data["new_from_turn"])
    assert last.index(mark) < last.index("remember that I like tabs")
    assert data["new_from_turn"] == 2


def _consolidated_set(workspace: str) -> None:
    """x, y, z, then a consolidation that had nothing to merge (the count starts at 0)."""
    store = MemoryStore(workspace)
    store.extend([rec("x-note"), rec("y-note"), rec("z-note")])
    store.apply_consolidation(base_records=(), source_names=(), replacements=())


def test_consolidation_waits_for_consolidate_every_new_records(
    messages_server: MessagesServer, workspace: str
) -> None:
    _consolidated_set(workspace)
    session = _session(
        messages_server, workspace, consolidate_threshold=3, consolidate_every=3, max_selected=0
    )

    def respond(body: dict[str, Any]) -> Scripted:
        role = role_of(body)
        if role == "main":
            return text("ok")
        if role == "extractor":
            n = len(requests_of(messages_server.requests, "extractor"))
            return records_reply(rec(f"new-{n}"))
        assert role == "consolidator"
        return text(json.dumps({"source_names": ["x-note"], "records": [rec("x2").to_json()]}))

    messages_server.responder = respond
    plans = []
    for i in range(7):
        batch = session.run_turn(f"turn {i}").batch
        assert batch is not None
        plans.append(batch.plan is not None)
    # Over the threshold from the start, but a plan only once 3 records were proposed
    # since the last one (review mode: none is committed): turns 3 and 6, not all 7.
    assert plans == [False, False, True, False, False, True, False]
    assert len(requests_of(messages_server.requests, "consolidator")) == 2


def test_the_turn_cost_benchmark_reports_every_measure() -> None:
    bench = Path(__file__).resolve().parents[1] / "benchmarks" / "turn_cost.py"
    done = subprocess.run(
        # The selector's requests as before issue 31 (the defaults send none).
        [
            *(sys.executable, str(bench), "--quick", "--json"),
            *("--memory-budget", "0", "--selector", "model"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["turns"] == 8
    kinds = report["kinds"]
    assert kinds["selector"]["requests"] == kinds["extractor"]["requests"] == 8
    assert kinds["main"]["requests"] == 8 + 3  # turns 0, 3 and 6 read a file first
    # Same transcript, two behaviours: the selector's requests are the same bytes, the
    # extractor sends less than whole-history extraction, the main call costs less.
    assert kinds["selector"]["bytes"] == kinds["selector"]["old_bytes"]
    assert kinds["extractor"]["bytes"] < kinds["extractor"]["old_bytes"]
    assert kinds["main"]["cost"] < kinds["main"]["old_cost"]
    ratios = report["ratios"]
    assert 0 < ratios["extractor_bytes"] < 1 and 0 < ratios["main_cost"] < 1
    times = report["times"]
    assert times["to_visible_ms"]["max"] >= 0 and times["after_answer_s"]["total"] > 0
    assert set(report["ok"]) == {"extractor_bytes", "main_cost", "visible", "extractor_vs_agent"}
    # Issue 18: the extractor sees a head of long tool outputs (turns 0, 3, 6 read 3-6 KB).
    assert 0 < ratios["extractor_vs_agent"] < ratios["whole_tools_extractor_vs_agent"]


def test_a_consolidation_on_demand_restarts_the_count(
    messages_server: MessagesServer, workspace: str
) -> None:
    _consolidated_set(workspace)
    session = _session(
        messages_server, workspace, consolidate_threshold=3, consolidate_every=3, max_selected=0
    )
    messages_server.enqueue(text("A."), records_reply(rec("a-note"), rec("b-note")))
    first = session.run_turn("one").batch
    assert first is not None and first.plan is None  # 2 added: not yet
    messages_server.enqueue(
        text(json.dumps({"source_names": ["x-note"], "records": [rec("x2").to_json()]}))
    )
    assert session.consolidate_now().plan is not None
    messages_server.enqueue(text("C."), records_reply(rec("c-note")))
    third = session.run_turn("three").batch
    # 3 added since the session began, but only 1 since the last consolidation.
    assert third is not None and third.plan is None
    assert len(requests_of(messages_server.requests, "consolidator")) == 1


BLOCK = "<relevant_memories>\n\nX\n\n</relevant_memories>"
NOTE = {"type": "text", "text": "SUMMARY"}


def test_the_block_follows_a_summary_that_opens_the_turn() -> None:
    # Compression cut exactly at this turn: its query message starts with the summary.
    messages = [{"role": "user", "content": [NOTE, {"type": "text", "text": "q"}]}]
    (request,) = request_messages(messages, 1, {0: [BLOCK]})
    assert request["content"] == [
        NOTE,
        {"type": "text", "text": BLOCK},
        {"type": "text", "text": "q", "cache_control": MARK},
    ]


def test_the_block_follows_the_summary_when_the_query_was_summarised() -> None:
    # Compression cut inside this turn: the query is in the summary; the request starts
    # with a summary message, then the turn's later messages.
    use = {"type": "tool_use", "id": "t", "name": "x", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "t", "content": "r"}
    messages = [
        {"role": "user", "content": [NOTE]},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [result]},
    ]
    request = request_messages(messages, 5, {}, [BLOCK])
    assert request[0]["content"] == [NOTE, {"type": "text", "text": BLOCK}]
    assert request[2]["content"][-1]["cache_control"] == MARK  # the step's prefix
    assert _marks({"messages": request}) == [(2, 0)]
