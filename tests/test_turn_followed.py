"""Followed memories in real turns (SPEC §14): an ``AgentSession`` over the real SDK and
the scripted server, the check in the turn's memory work, the follow log, the next
turn's mark, failures reported like every memory failure, and nothing else changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from follow_support import PANDAS_CODE, POLARS, POLARS_CODE, REASONING, F
from messages_server import MessagesServer, Scripted, error, text
from record_support import rec
from turn_support import memory_text, model_for, requests_of, role_of

from ipymemory import AgentSession, MemoryRecord, MemoryStore, SessionConfig
from ipymemory.store.follow_log import FollowLog
from ipymemory.store.maintenance import check
from ipymemory.turn.followed import LAST_ERROR_FOLLOW, MISSED_NOTE

LABELS = MemoryRecord(
    name="labels-in-german",
    type="feedback",
    description="Chart labels in German",
    body="Axis titles, legends and chart titles are always written in German.",
)
PROJECT = rec("q3-report", "The Q3 report is due Friday", type="project")


class Script:
    """Replies by role: the agent's answers in order, the extractor nothing, the
    checker what ``verdicts`` says (or ``checker`` verbatim)."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.verdicts: dict[str, tuple[str, str]] = {}
        self.checker: Scripted | None = None

    def __call__(self, body: dict[str, Any]) -> Scripted:
        role = role_of(body)
        if role == "extractor":
            return text("[]")
        if role == "checker":
            if self.checker is not None:
                return self.checker
            memories = json.loads(body["messages"][0]["content"])["memories"]
            return text(
                json.dumps(
                    [
                        {"name": m["name"], "verdict": v, "reason": r}
                        for m in memories
                        for v, r in [self.verdicts[m["name"]]]
                    ]
                ),
                usage={"input_tokens": 120, "output_tokens": 30},
            )
        assert role == "main", role
        return text(self.answers.pop(0))


def _session(srv: MessagesServer, workspace: str, **config: Any) -> AgentSession:
    return AgentSession(workspace, model=model_for(srv.base_url), config=SessionConfig(**config))


def _log(workspace: str) -> list[dict[str, Any]]:
    journal = MemoryStore(workspace).journal()
    assert journal is not None
    entries, skipped = FollowLog(journal).read()
    assert skipped == 0
    return [e.to_json() for e in entries]


def _tree(workspace: str) -> dict[str, bytes]:
    root = Path(workspace, ".memory")
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "followed.jsonl" and not p.name.startswith(".lock")
    }


def test_a_banned_import_is_found_kept_and_marked_in_the_next_turn(
    messages_server: MessagesServer, workspace: str
) -> None:
    store = MemoryStore(workspace)
    store.extend([POLARS, PROJECT])
    before = _tree(workspace)
    script = Script(PANDAS_CODE, POLARS_CODE, POLARS_CODE)
    messages_server.responder = script
    session = _session(messages_server, workspace, commit_mode="review")
    session.caller = lambda: {"notebook": "sales.ipynb", "cell_id": "c-7"}

    first = session.run_turn("revenue per region from sales.csv?")
    assert first.followed is not None
    [judged] = first.followed.missed
    assert (judged.name, judged.verdict.reason, judged.verdict.by) == (
        "prefers-polars",
        "imports pandas",
        "code",
    )
    assert first.last_error is None and first.memory_errors == ()
    # Decided exactly: no checker call; the project memory is not checked at all.
    assert requests_of(messages_server.requests, "checker") == []
    # The log keeps the verdict with the turn; the set, the journal and check are as before.
    [entry] = _log(workspace)
    assert entry["session"] == session.id and entry["turn"] == 1
    assert entry["actor"]["cell_id"] == "c-7" and entry["actor"]["session"] == session.id
    assert entry["journal_seq"] == 1  # the commit that wrote the two records
    [verdict] = entry["verdicts"]
    file = next(e.file for e in store.entries() if e.record.name == "prefers-polars")
    assert verdict == {
        "by": "code",
        "file": file,
        "name": "prefers-polars",
        "reason": "imports pandas",
        "verdict": "contradicts",
    }
    assert _tree(workspace) == before
    assert [e.seq for e in store.history()] == [1]
    assert [p for p in check(workspace) if p.severity == "error"] == []

    # The next turn's block says the memory was missed, and why (its own line, escaped).
    second = session.run_turn("and per month?")
    block = memory_text(requests_of(messages_server.requests, "main")[1])
    assert f"{MISSED_NOTE}: it imports pandas" in block
    assert block.index("## prefers-polars") < block.index(MISSED_NOTE)
    assert second.followed is not None and second.followed.missed == ()
    # Followed this time: the turn after carries no mark.
    session.run_turn("and per week?")
    assert MISSED_NOTE not in memory_text(requests_of(messages_server.requests, "main")[2])
    assert [e["verdicts"][0]["verdict"] for e in _log(workspace)] == [
        "contradicts",
        "follows",
        "follows",
    ]
    tally = session.followed.counts()["prefers-polars"]
    assert (tally.follows, tally.contradicts, tally.untouched) == (2, 1, 0)
    assert tally.last_miss == "imports pandas"


def test_mark_missed_off_leaves_the_block_as_it_was(
    messages_server: MessagesServer, workspace: str
) -> None:
    MemoryStore(workspace).extend([POLARS])
    messages_server.responder = Script(PANDAS_CODE, POLARS_CODE)
    session = _session(messages_server, workspace, mark_missed=False)
    assert session.run_turn("revenue?").followed.missed  # type: ignore[union-attr]
    session.run_turn("again?")
    assert MISSED_NOTE not in memory_text(requests_of(messages_server.requests, "main")[1])


def test_the_undecided_memories_go_to_the_model_in_one_request(
    messages_server: MessagesServer, workspace: str
) -> None:
    MemoryStore(workspace).extend([POLARS, LABELS, REASONING])
    chart = (
        f"{F}python\nimport plotly.express as px\nimport polars as pl\n\n"
        f'df = pl.read_csv("sales.csv")\n'
        f'fig = px.bar(df, x="region", y="revenue", title="Revenue by region")\n{F}'
    )
    script = Script(chart)
    script.verdicts = {
        "labels-in-german": ("contradicts", "titles the chart in English"),
        "reasoning-first": ("untouched", "is a chart, no approach to review"),
    }
    messages_server.responder = script
    result = _session(messages_server, workspace).run_turn("bar chart of revenue by region")
    [request] = requests_of(messages_server.requests, "checker")
    sent = json.loads(request["messages"][0]["content"])
    assert [m["name"] for m in sent["memories"]] == ["labels-in-german", "reasoning-first"]
    assert sent["query"] == "bar chart of revenue by region" and "plotly" in sent["answer"]
    assert result.followed is not None
    verdicts = {m.name: (m.verdict.verdict, m.verdict.by) for m in result.followed.memories}
    assert verdicts == {
        "prefers-polars": ("follows", "code"),  # decided exactly, never sent
        "labels-in-german": ("contradicts", "model"),
        "reasoning-first": ("untouched", "model"),
    }
    assert [m.name for m in result.followed.missed] == ["labels-in-german"]
    # Its cost is counted, under its own role, as memory work.
    assert result.usage.by_role("checker").input_tokens == 120
    assert result.usage.memory.input_tokens >= 120


def test_a_failing_check_never_breaks_the_turn_and_is_reported(
    messages_server: MessagesServer, workspace: str
) -> None:
    MemoryStore(workspace).extend([POLARS, LABELS])
    script = Script(PANDAS_CODE, PANDAS_CODE)
    script.checker = text("```json\n[]\n```")  # not strict JSON: the whole reply is refused
    messages_server.responder = script
    session = _session(messages_server, workspace)
    result = session.run_turn("revenue?")
    assert result.answer == PANDAS_CODE
    [failure] = result.memory_errors
    assert failure.message == LAST_ERROR_FOLLOW == result.last_error
    assert "not JSON" in failure.cause
    # The exact verdict stands; the model's memory has none, and says so.
    assert result.followed is not None
    assert [m.name for m in result.followed.missed] == ["prefers-polars"]
    assert result.followed.unjudged == ("labels-in-german",)
    assert session.followed.counts()["labels-in-german"].unjudged == 1
    # An API failure too.
    script.checker = error(529, "Overloaded", "overloaded_error")
    again = session.run_turn("again?")
    assert [f.message for f in again.memory_errors] == [LAST_ERROR_FOLLOW]
    assert "checker call failed" in (again.last_error_cause or "")


def test_commit_mode_off_judges_but_writes_nothing(
    messages_server: MessagesServer, workspace: str
) -> None:
    MemoryStore(workspace).extend([POLARS])
    before = _tree(workspace)
    messages_server.responder = Script(PANDAS_CODE)
    result = _session(messages_server, workspace, commit_mode="off").run_turn("revenue?")
    assert result.followed is not None and result.followed.missed
    assert not Path(workspace, ".memory", "history", "followed.jsonl").exists()
    assert _tree(workspace) == before


def test_the_check_off_or_no_memory_asks_nothing(
    messages_server: MessagesServer, workspace: str
) -> None:
    MemoryStore(workspace).extend([LABELS])
    messages_server.responder = Script(PANDAS_CODE, PANDAS_CODE)
    off = _session(messages_server, workspace, follow_check=False).run_turn("revenue?")
    plain = _session(messages_server, workspace).run_turn("revenue?", use_memory=False)
    assert off.followed is None and plain.followed is None
    assert [role_of(r) for r in messages_server.requests if role_of(r) == "checker"] == []


def test_a_user_wide_memory_is_logged_in_the_user_scope(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    project, user = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    user.mkdir()
    MemoryStore(project).extend([PROJECT])
    MemoryStore(user).extend([POLARS])
    messages_server.responder = Script(PANDAS_CODE)
    session = _session(messages_server, str(project), user_dir=user)
    result = session.run_turn("revenue?")
    assert result.followed is not None
    [judged] = result.followed.memories
    assert (judged.name, judged.scope) == ("prefers-polars", "user")
    assert [e["verdicts"][0]["name"] for e in _log(str(user))] == ["prefers-polars"]
    assert not Path(project, ".memory", "history", "followed.jsonl").exists()


def test_undo_and_history_still_work_beside_the_follow_log(
    messages_server: MessagesServer, workspace: str
) -> None:
    store = MemoryStore(workspace)
    store.extend([POLARS])
    messages_server.responder = Script(PANDAS_CODE)
    _session(messages_server, workspace).run_turn("revenue?")
    store.forget(["prefers-polars"])
    assert [e.op for e in store.history()] == ["forget", "add"]
    store.undo(2)
    assert [r.name for r in store.records()] == ["prefers-polars"]
    assert len(_log(workspace)) == 1
    assert [p for p in check(workspace) if p.severity == "error"] == []
