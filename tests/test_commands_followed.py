"""``ipymemory followed`` / ``%memory followed`` (SPEC §14): the follow logs of real turns
read back across sessions, per memory, with the memories never followed flagged."""

from __future__ import annotations

import json

import pytest
from follow_support import PANDAS_CODE, POLARS, POLARS_CODE
from IPython.core.interactiveshell import InteractiveShell
from messages_server import MessagesServer, Scripted, text
from turn_support import model_for, role_of

from ipymemory import AgentSession, MemoryRecord, MemoryStore, SessionConfig
from ipymemory.cli import main


def _turns(srv: MessagesServer, workspace: str, *answers: str) -> None:
    """One session per answer (several kernels, one after the other)."""
    for answer in answers:

        def respond(body: dict[str, object], answer: str = answer) -> Scripted:
            return text("[]") if role_of(body) == "extractor" else text(answer)

        srv.responder = respond
        AgentSession(workspace, model=model_for(srv.base_url), config=SessionConfig()).run_turn(
            "revenue per region?"
        )


def test_the_cli_counts_every_session_and_flags_a_memory_never_followed(
    messages_server: MessagesServer, workspace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    MemoryStore(workspace).extend([POLARS])
    _turns(messages_server, workspace, PANDAS_CODE, PANDAS_CODE)
    code = main(["--dir", workspace, "--json", "followed"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1  # a current memory never followed: a problem found
    assert report["turns"] == {"project": 2}
    assert report["memories"] == [
        {
            "scope": "project",
            "name": "prefers-polars",
            "follows": 0,
            "contradicts": 2,
            "untouched": 0,
            "unjudged": 0,
            "last_miss": "imports pandas",
            "current": True,
            "reword": True,
        }
    ]
    _turns(messages_server, workspace, POLARS_CODE)
    assert main(["--dir", workspace, "followed"]) == 0
    out = capsys.readouterr().out
    assert "prefers-polars (project): followed 1, not followed 2, untouched 0" in out
    # Forgotten since: still listed, said to be gone, no longer a problem.
    MemoryStore(workspace).forget(["prefers-polars"])
    _turns(messages_server, workspace)
    assert main(["--dir", workspace, "followed"]) == 0
    assert "[no longer in the set]" in capsys.readouterr().out


def test_the_magic_shows_the_same(
    ip: InteractiveShell, messages_server: MessagesServer, workspace: str
) -> None:
    MemoryStore(workspace).extend([POLARS])
    _turns(messages_server, workspace, PANDAS_CODE)
    view = ip.run_line_magic("memory", "followed")
    assert view.to_json()["memories"][0]["contradicts"] == 1
    assert "last miss: it imports pandas" in view.to_text()
    empty = ip.run_line_magic("memory", "followed --scope project")
    assert empty.to_json()["turns"] == {"project": 1}


def test_a_turn_whose_check_failed_is_counted_as_not_judged(
    messages_server: MessagesServer, workspace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 44: the side model's reply is broken, so the memory it was to judge gets no
    verdict: ``followed`` counts that turn as "not judged" instead of not at all."""
    reasoning = MemoryRecord(
        name="reasoning-first",
        type="feedback",
        description="Explain the reasoning before giving code",
        body="Say why before showing how: the user reviews the approach first.",
    )
    MemoryStore(workspace).extend([POLARS, reasoning])

    def respond(body: dict[str, object]) -> Scripted:
        role = role_of(body)
        if role == "extractor":
            return text("[]")
        if role == "checker":
            return text("Both memories look followed to me.")  # prose: not the JSON asked
        return text(POLARS_CODE)

    messages_server.responder = respond
    session = AgentSession(workspace, model=model_for(messages_server.base_url))
    result = session.run_turn("revenue per region?")
    assert result.last_error == "Memory follow-up check failed"
    code = main(["--dir", workspace, "--json", "followed"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["turns"] == {"project": 1}
    rows = {row["name"]: row for row in report["memories"]}
    assert rows["prefers-polars"]["follows"] == 1  # the exact check's verdict stands
    assert rows["reasoning-first"]["unjudged"] == 1
    assert rows["reasoning-first"]["follows"] + rows["reasoning-first"]["untouched"] == 0
    assert main(["--dir", workspace, "followed"]) == 0
    shown = capsys.readouterr().out
    assert "reasoning-first (project): followed 0, not followed 0, untouched 0, not judged 1" in (
        shown
    )
