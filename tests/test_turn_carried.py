"""Where a conversation's memory blocks go (``ipymemory/turn/carried.py``) and the model's
pick beside the main call (``turn/beside.py``, ``turn/memory_feed.py``): the placement
rules alone, then through real turns (the real SDK against the scripted server)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from messages_server import MessagesServer, text
from record_support import rec
from turn_support import carried_names, memory_blocks, other_process, requests_of, session_for

from ipymemory import AgentSession, MemoryStore, NoModel, Selection, SessionConfig
from ipymemory.turn.beside import BesidePick
from ipymemory.turn.carried import CarriedMemory, Given
from ipymemory.turn.choosing import block_tokens
from ipymemory.turn.history import estimate_tokens
from ipymemory.turn.injection import BLOCK_OPEN, sections_of


def sec(name: str, text: str = "") -> tuple[str, str]:
    return name, f"## {name} (project)\n\n{text or 'about ' + name}\n\nbody"


def test_a_turn_adds_only_what_no_block_holds_and_blocks_stay_where_given() -> None:
    carried = CarriedMemory()
    first = carried.give(0, [sec("a"), sec("b")], {}, cap=10_000)
    assert first.added == ("a", "b") and not first.rebased
    assert sections_of(first.block) == dict([sec("a"), sec("b")])
    # The next turn wants a, b and c: only c is new, at its own message.
    now = dict([sec("a"), sec("b")])
    second = carried.give(2, [sec("a"), sec("c"), sec("b")], now, cap=10_000)
    assert second.added == ("c",)
    kept, before = carried.placed(0)
    assert list(kept) == [0, 2] and before == []
    assert kept[0] == [first.block] and BLOCK_OPEN in kept[2][0]
    # Nothing new: nothing added, nothing moved.
    third = carried.give(4, [sec("c")], dict([sec("a"), sec("b"), sec("c")]), cap=10_000)
    assert third.added == () and third.block == "" and carried.names == ("a", "b", "c")


def test_a_record_that_changed_or_left_the_set_starts_the_blocks_again() -> None:
    for now in (
        {"a": sec("a", "a new text")[1], "b": sec("b")[1]},  # a reads differently now
        {"a": None, "b": sec("b")[1]},  # a was forgotten
        {"b": sec("b")[1]},  # a is not known at all
    ):
        carried = CarriedMemory()
        carried.give(0, [sec("a"), sec("b")], {}, cap=10_000)
        wanted = [(n, s) for n, s in now.items() if s is not None]
        again = carried.give(2, wanted, now, cap=10_000)
        assert again.rebased and again.added == tuple(n for n, _ in wanted)
        # One block, at the turn's own message: the old one (and what it said) is gone.
        kept, _ = carried.placed(0)
        assert list(kept) == [2] and "about a\n" not in kept[2][0]


def test_blocks_past_the_cap_start_again_from_the_turns_own() -> None:
    carried = CarriedMemory()
    carried.give(0, [sec("a"), sec("b")], {}, cap=10_000)
    size = sum(estimate_tokens(s) for _, s in (sec("a"), sec("b"), sec("c")))
    now = dict([sec("a"), sec("b")])
    kept = carried.give(2, [sec("c")], now, cap=size)  # all three fit: added
    assert kept.added == ("c",) and not kept.rebased
    now = dict([sec("a"), sec("b"), sec("c")])
    moved = carried.give(4, [sec("d")], now, cap=size)  # four do not: only the turn's
    assert moved.rebased and moved.added == ("d",) and carried.names == ("d",)


def test_a_block_whose_message_was_summarised_follows_the_summary() -> None:
    carried = CarriedMemory()
    first = carried.give(0, [sec("a")], {}, cap=10_000)
    late = carried.join(3, [sec("b"), sec("a")])  # the pick: a is carried already
    assert late.added == ("b",)
    kept, before = carried.placed(2)  # messages 0 and 1 were summarised away
    assert before == [first.block] and list(kept) == [3]


def test_a_pick_that_raises_is_a_fallback_that_says_why() -> None:
    started = time.monotonic()
    release = threading.Event()

    def slow() -> Selection:
        release.wait(5)
        raise RuntimeError("boom")

    pick = BesidePick(slow, started=started)
    assert pick.poll() is None and pick.seconds is None  # never waits
    release.set()
    got = pick.wait(5)
    assert got is not None and got.source == "fallback" and got.records == ()
    assert got.reason == "the model's pick failed: RuntimeError: boom"
    assert pick.seconds is not None and pick.seconds >= 0


def test_a_pick_that_arrives_after_the_answer_joins_the_next_turn(
    messages_server: MessagesServer, workspace: str
) -> None:
    # SPEC §13: the answer ended first (no tool step): the pick is noted in the trace
    # and the next turn's first request brings what it added.
    records = [rec("deploy-friday", "deploys go out on Fridays"), rec("lint-rule", "run ruff")]
    MemoryStore(workspace).extend(records)
    # A budget one record fits and two do not (so there is a choice), whose bound on the
    # carried blocks (twice it) holds both.
    budget = block_tokens(records) - 1
    session = session_for(
        messages_server.base_url,
        workspace,
        max_selected=1,
        selector="model",
        follow_check=False,
        memory_budget=budget,
    )
    messages_server.enqueue_for(
        "selector", text('["deploy-friday"]', delay=0.4), text('["lint-rule"]')
    )
    messages_server.enqueue(text("Fridays."), text("[]"), text("Yes."), text("[]"))
    first = session.run_turn("which weekday do releases ship?")
    assert first.trace is not None and first.trace.pick is not None
    pick = first.trace.pick
    assert (pick.added, pick.joined, pick.carried_over) == (
        ("deploy-friday",),
        None,
        ("deploy-friday",),
    )
    assert pick.seconds is not None and pick.seconds > first.answer_seconds
    assert "after the answer: deploy-friday join the next turn" in pick.text()
    second = session.run_turn("and the linter?")
    assert second.trace is not None and second.trace.carried_in == ("deploy-friday",)
    main = requests_of(messages_server.requests, "main")
    assert carried_names(main[0]) == ["lint-rule"]
    # The pick's record comes in the turn's own block, after the earlier one.
    [(first_at, _), (at, own)] = memory_blocks(main[1])
    assert first_at == 0
    assert at == 2 and list(sections_of(own)) == ["deploy-friday"]
    assert second.trace.requests[0].added == ("deploy-friday",)


def test_a_turn_without_memory_sends_no_block_and_the_next_one_carries_them_again(
    messages_server: MessagesServer, workspace: str
) -> None:
    Path(workspace, "notes.md").write_text("x")
    MemoryStore(workspace).extend([rec("alpha", "about alpha"), rec("beta", "about beta")])
    session = session_for(messages_server.base_url, workspace, memory_budget=3000)
    messages_server.enqueue(text("One."), text("[]"), text("Two."), text("Three."), text("[]"))
    session.run_turn("first")
    session.run_turn("second", use_memory=False)
    session.run_turn("third")
    main = requests_of(messages_server.requests, "main")
    assert carried_names(main[0]) == ["alpha", "beta"]
    assert memory_blocks(main[1]) == []  # --no-memory: no block at all
    assert memory_blocks(main[2]) == memory_blocks(main[0])  # where it was given


_names = st.sampled_from([f"r{i}" for i in range(8)])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_names, unique=True, max_size=5),  # what the turn wants
            st.dictionaries(_names, st.sampled_from(["v1", "v2", None])),  # changes
            st.integers(0, 2),  # tool rounds before the answer
        ),
        min_size=1,
        max_size=6,
    ),
    st.integers(40, 400),
)
def test_every_record_is_carried_once_as_it_reads_now_and_requests_extend_each_other(
    turns: list[tuple[list[str], dict[str, str | None], int]], cap: int
) -> None:
    """Any turns, any changes between them: a request carries each record at most once,
    as it reads now, and all its turn wanted; each request's blocks are the previous
    request's plus new ones, unless the turn started them again (a change, or the cap)."""
    version: dict[str, str | None] = {}
    carried = CarriedMemory()
    history = 0
    previous: dict[int, list[str]] | None = None
    for wanted, changes, rounds in turns:
        version.update(changes)
        now = {n: sec(n, v)[1] if v else None for n, v in version.items()}
        for name in carried.names:
            now.setdefault(name, sec(name)[1])
        want = [(n, now.get(n) or sec(n)[1]) for n in wanted if now.get(n, "") is not None]
        got = carried.give(history, want, now, cap=cap)
        history += 1
        for _ in range(rounds + 1):
            kept, before = carried.placed(0)
            assert before == []
            blocks = [b for at in sorted(kept) for b in kept[at]]
            sections = [s for b in blocks for s in sections_of(b).items()]
            names = [n for n, _ in sections]
            assert len(names) == len(set(names))  # each record at most once
            assert {n for n, _ in want} <= set(names)  # all the turn wanted
            for name, section in sections:  # as it reads now
                assert section == (now.get(name) or sec(name)[1])
            if previous is not None and not got.rebased:
                assert all(kept.get(at, [])[: len(b)] == b for at, b in previous.items())
            previous = kept
            got = Given()  # the turn's later requests add nothing here
            history += 2


def test_a_turn_reads_its_set_again_without_a_stat_per_record_until_it_changes(
    workspace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 40: before its first request a turn reuses its store's last read while neither
    # the directory nor its manifest changed (records are immutable, SPEC §1); any
    # commit -- this kernel's or another's -- is read at once; other reads stat each file.
    MemoryStore(workspace).extend([rec(f"note-{i}", f"note {i}") for i in range(30)])
    session = AgentSession(workspace, model=NoModel(), config=SessionConfig(user_dir=None))
    loads: list[str] = []
    real_load = MemoryStore._load

    def counting(self: MemoryStore, real: str, file: str, present: object) -> object:
        loads.append(file)
        return real_load(self, real, file, present)  # type: ignore[arg-type]

    monkeypatch.setattr(MemoryStore, "_load", counting)
    session.begin_turn("note 3")
    assert len(loads) == 30  # the first read looks at every file
    loads.clear()
    session.begin_turn("note 4")
    assert loads == []  # nothing changed: the same set, no file looked at
    other_process("store.extend([rec('note-new')])", workspace)
    assert "note-new" in session.begin_turn("note-new").names  # a commit elsewhere: seen
    loads.clear()
    assert len(session.store.records()) == 31 and len(loads) == 31  # a plain read: every file
