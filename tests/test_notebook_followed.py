"""What the cell says about followed memories (SPEC §14), through a real
InteractiveShell: the real SDK against the scripted server, ``%%agent`` cells, the line
under the answer (in the cell, and filled in place by the kernel's worker), ``%memory
session``'s counts and the next turn's mark."""

from __future__ import annotations

import json
from typing import Any

import pytest
from follow_support import PANDAS_CODE, POLARS, POLARS_CODE, REASONING
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from messages_server import MessagesServer, Scripted, text
from notebook_support import use_api
from turn_support import memory_text, requests_of, role_of

from ipymemory import MemoryRecord, MemoryStore
from ipymemory.turn.followed import MISSED_NOTE
from ipymemory.views import MIME_TYPE

LINE = "⚠ this answer may not follow `prefers-polars`: it imports pandas"


def _respond(answers: list[str]) -> Any:
    def respond(body: dict[str, Any]) -> Scripted:
        role = role_of(body)
        if role == "extractor":
            return text("[]")
        if role == "checker":
            memories = json.loads(body["messages"][0]["content"])["memories"]
            return text(
                json.dumps(
                    [
                        {"name": m["name"], "verdict": "follows", "reason": "says why"}
                        for m in memories
                    ]
                )
            )
        return text(answers.pop(0))

    return respond


@pytest.fixture
def api(ip: InteractiveShell, messages_server: MessagesServer, monkeypatch: Any) -> MessagesServer:
    use_api(ip, messages_server.base_url, monkeypatch)
    return messages_server


class Publisher(CapturingDisplayPublisher):
    """Every output and update, from any thread."""


@pytest.fixture
def pub(ip: InteractiveShell) -> Any:
    saved = ip.display_pub
    ip.display_pub = publisher = Publisher()
    try:
        yield publisher
    finally:
        ip.display_pub = saved


def _lines(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in outputs if o["data"].get(MIME_TYPE, {}).get("kind") == "not-followed"]


def test_the_cell_says_which_memory_was_not_followed(
    ip: InteractiveShell, api: MessagesServer, pub: Publisher, workspace: str
) -> None:
    MemoryStore(workspace).extend([POLARS, REASONING])
    api.responder = _respond([PANDAS_CODE, POLARS_CODE])
    result = ip.run_cell("%%agent\nLoad sales.csv")
    assert result.error_in_exec is None
    [shown] = _lines(pub.outputs)
    assert shown["data"]["text/plain"] == LINE
    assert "<code>prefers-polars</code>: it imports pandas" in shown["data"]["text/html"]
    assert shown["data"][MIME_TYPE]["missed"] == [
        {"name": "prefers-polars", "reason": "imports pandas"}
    ]
    # Under the answer: after the answer's Markdown and the "memories injected" line.
    order = [i for i, o in enumerate(pub.outputs) if o["data"].get("text/markdown") == PANDAS_CODE]
    assert order and order[-1] < pub.outputs.index(shown)

    # The next turn's request marks it, and a followed answer shows no line.
    before = len(pub.outputs)
    ip.run_cell("%%agent\nAnd per region?")
    block = memory_text(requests_of(api.requests, "main")[1])
    assert f"{MISSED_NOTE}: it imports pandas" in block
    assert _lines(pub.outputs[before:]) == []

    # %memory session counts per memory.
    view = ip.run_line_magic("memory", "session")
    data = view.to_json()["followed"]
    assert data["prefers-polars"]["contradicts"] == 1 and data["prefers-polars"]["follows"] == 1
    assert data["reasoning-first"]["follows"] == 2  # judged by the side model, twice
    assert "prefers-polars: followed 1, not followed 1, untouched 0" in view.to_text()
    assert "(last miss: it imports pandas)" in view.to_text()


def test_the_worker_fills_the_line_in_the_turns_cell(
    ip: InteractiveShell, api: MessagesServer, pub: Publisher, workspace: str
) -> None:
    MemoryStore(workspace).extend([POLARS])
    ip.run_line_magic("config", "IPyMemory.background_memory = True")
    api.responder = _respond([PANDAS_CODE])
    ip.run_cell("%%agent\nLoad sales.csv")
    ended = len(pub.outputs)
    created = {o["transient"]["display_id"] for o in pub.outputs[:ended] if o["transient"]}
    ip.run_line_magic("memory", "session")  # waits for the memory work first
    filled = [o for o in _lines(pub.outputs) if o["update"]]
    assert filled and filled[-1]["data"]["text/plain"] == LINE
    # In an output the agent cell made, not in the cell that waited.
    assert {o["transient"]["display_id"] for o in filled} <= created


def test_setting_the_check_off_shows_nothing_and_asks_nothing(
    ip: InteractiveShell, api: MessagesServer, pub: Publisher, workspace: str
) -> None:
    MemoryStore(workspace).extend([POLARS, REASONING])
    ip.run_line_magic("config", "IPyMemory.follow_check = False")
    api.responder = _respond([PANDAS_CODE])
    ip.run_cell("%%agent\nLoad sales.csv")
    assert _lines(pub.outputs) == []
    assert requests_of(api.requests, "checker") == []
    assert ip.run_line_magic("memory", "session").to_json()["followed"] == {}


def test_a_check_that_tests_part_of_a_memory_leaves_it_to_the_model(
    ip: InteractiveShell, api: MessagesServer, pub: Publisher, workspace: str
) -> None:
    """Issue 44: "€ M with one decimal" against "€388,910". The currency check sees
    euros and nothing else; the memory goes to the checker, which finds the miss."""
    millions = MemoryRecord(
        name="eur-millions-one-decimal",
        type="user",
        description="Show amounts in € M with one decimal",
        body="Report money amounts in millions of euros with one decimal place, e.g. €12.4M.",
    )
    MemoryStore(workspace).extend([millions])
    answer = "Q3 revenue for DACH was **€388,910**, up from €351,200 in Q2."

    def respond(body: dict[str, Any]) -> Scripted:
        role = role_of(body)
        if role == "extractor":
            return text("[]")
        if role == "checker":  # as a capable model judges it
            verdict = {
                "name": "eur-millions-one-decimal",
                "verdict": "contradicts",
                "reason": "shows €388,910, not millions with one decimal",
            }
            return text(json.dumps([verdict], ensure_ascii=False))
        return text(answer)

    api.responder = respond
    assert ip.run_cell("%%agent\nWhat was Q3 revenue for DACH?").error_in_exec is None
    [asked] = requests_of(api.requests, "checker")
    sent = json.loads(asked["messages"][0]["content"])
    assert [m["name"] for m in sent["memories"]] == ["eur-millions-one-decimal"]
    [shown] = _lines(pub.outputs)
    assert shown["data"]["text/plain"] == (
        "⚠ this answer may not follow `eur-millions-one-decimal`: it shows €388,910, not "
        "millions with one decimal"
    )
    counts = ip.run_line_magic("memory", "session").to_json()["followed"]
    assert counts["eur-millions-one-decimal"]["contradicts"] == 1
