"""Helpers shared by the turn tests: models over the scripted server, request roles,
history invariants."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import anthropic
import pytest
from messages_server import Scripted, text

from ipymemory import AgentSession, AnthropicModel, MemoryRecord, SessionConfig
from ipymemory.sidequery.extract import turn_mark
from ipymemory.sidequery.prompts import (
    CONSOLIDATOR_PROMPT,
    EXTRACTOR_PROMPT,
    FOLLOW_PROMPT,
    SCREENER_PROMPT,
    SELECTOR_PROMPT,
)
from ipymemory.turn.history import SUMMARIZER_PROMPT

MAIN_MODEL = "claude-sonnet-under-test"
SIDE_MODEL = "claude-haiku-under-test"


def model_for(base_url: str, *, timeout: float = 10.0) -> AnthropicModel:
    client = anthropic.Anthropic(base_url=base_url, api_key="test", max_retries=0, timeout=timeout)
    return AnthropicModel(MAIN_MODEL, side_model=SIDE_MODEL, client=client)


#: Selection as before issue 31 (no memory budget: max_selected of a larger set), by the
#: keyword ranking; a test of the model's pick (issue 40) asks for it (see conftest).
OLD_SELECTION: dict[str, Any] = {"memory_budget": 0}
#: ... and with the model's pick beside the agent's call (its replies: enqueue_for).
MODEL_PICK: dict[str, Any] = {"memory_budget": 0, "selector": "model"}


def session_for(srv_url: str, workspace: str, **config: Any) -> AgentSession:
    """An AgentSession over ``workspace`` whose model is the real SDK against the
    scripted server at ``srv_url``. Unless ``config`` says otherwise it selects as
    before issue 31 (no memory budget: see conftest), by keyword."""
    config = {**OLD_SELECTION, **config}
    return AgentSession(workspace, model=model_for(srv_url), config=SessionConfig(**config))


def records_reply(*records: MemoryRecord, **kw: Any) -> Scripted:
    """An extractor reply proposing ``records``."""
    return text(json.dumps([r.to_json() for r in records]), **kw)


def plan_reply(sources: Sequence[str], records: Sequence[MemoryRecord], **kw: Any) -> Scripted:
    return text(
        json.dumps({"source_names": list(sources), "records": [r.to_json() for r in records]}),
        **kw,
    )


# The package's role names (ipymemory.model.usage.ROLES), so tests and benchmarks
# label requests the way usage and errors do.
_ROLES = {
    SELECTOR_PROMPT: "selector",
    EXTRACTOR_PROMPT: "extractor",
    CONSOLIDATOR_PROMPT: "consolidator",
    SUMMARIZER_PROMPT: "summarizer",
    FOLLOW_PROMPT: "checker",
    SCREENER_PROMPT: "screener",
}


def role_of(request: dict[str, Any]) -> str:
    """Which call a request body was: main, selector, extractor, consolidator,
    summarizer, checker or screener."""
    system = request.get("system")
    first = system[0]["text"] if isinstance(system, list) and system else system
    return _ROLES.get(first, "main") if isinstance(first, str) else "main"


def requests_of(requests: Sequence[dict[str, Any]], role: str) -> list[dict[str, Any]]:
    return [r for r in requests if role_of(r) == role]


def system_text(request: dict[str, Any]) -> str:
    system = request.get("system")
    if isinstance(system, str):
        return system
    return "\n".join(block.get("text", "") for block in system or [])


def memory_blocks(request: dict[str, Any]) -> list[tuple[int, str]]:
    """Every ``<relevant_memories>`` block a main request carries, with the index of its
    message (SPEC §8, §13: a text block of a user message -- before a turn's query, or
    after a request's tool results -- each where it was first given); asserts they are
    nowhere else."""
    found = []
    for i, message in enumerate(request["messages"]):
        content = message["content"]
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            if block.get("type") == "text" and block["text"].startswith("<relevant_memories>"):
                assert message["role"] == "user"
                later = content[j + 1 :]
                results = any(b.get("type") == "tool_result" for b in content[:j])
                # Before the query (the message's last text), or after the tool results.
                assert results or (later and later[-1].get("type") == "text"), content
                found.append((i, str(block["text"])))
    assert "</relevant_memories>" not in system_text(request)
    return found


def memory_text(request: dict[str, Any]) -> str:
    """The memory blocks a main request carries (:func:`memory_blocks`), joined; ``""``
    when it carries none."""
    return "\n\n".join(text for _, text in memory_blocks(request))


def carried_names(request: dict[str, Any]) -> list[str]:
    """The names of the records a main request carries, in the order it gives them."""
    return re.findall(r"^## ([a-z0-9-]+) \(", memory_text(request), re.M)


def selector_input(request: dict[str, Any]) -> dict[str, Any]:
    """A selector request's input: its catalog block and its per-call block, merged."""
    (message,) = request["messages"]
    content = message["content"]
    blocks = [content] if isinstance(content, str) else [b["text"] for b in content]
    merged: dict[str, Any] = {}
    for block in blocks:
        merged.update(json.loads(block))
    return merged


def split_extraction(request: dict[str, Any]) -> tuple[str, str]:
    """An extractor request's history as JSON text, cut where its new turns start (the
    ``[turn N]`` mark its last text names as ``new_from_turn``): (processed, new)."""
    last = request["messages"][-1]["content"][-1]["text"]
    mark = turn_mark(json.loads(last)["new_from_turn"])
    sent = json.dumps(request["messages"])
    assert sent.count(mark) == 1, mark
    processed, new = sent.split(mark, 1)
    return processed, new


def assert_pairs_intact(messages: Sequence[dict[str, Any]]) -> None:
    """Every tool_use is answered by the very next (user) message, and every
    tool_result answers a tool_use of the message right before it."""

    def ids(message: dict[str, Any], kind: str, key: str) -> list[str]:
        content = message.get("content")
        if not isinstance(content, list):
            return []
        return [b[key] for b in content if isinstance(b, dict) and b.get("type") == kind]

    for i, message in enumerate(messages):
        uses = ids(message, "tool_use", "id")
        if uses:
            assert message["role"] == "assistant"
            assert i + 1 < len(messages), f"message {i}: tool_use without a following result"
            assert sorted(ids(messages[i + 1], "tool_result", "tool_use_id")) == sorted(uses)
        results = ids(message, "tool_result", "tool_use_id")
        if results:
            assert message["role"] == "user" and i > 0
            assert sorted(results) == sorted(ids(messages[i - 1], "tool_use", "id"))


def assert_alternates(messages: Sequence[dict[str, Any]]) -> None:
    assert messages and messages[0]["role"] == "user"
    for a, b in itertools.pairwise(messages):
        assert a["role"] != b["role"], (a, b)


def other_process(code: str, workspace: str) -> None:
    """Run ``code`` (with ``store = MemoryStore(workspace)`` and ``rec``) in a fresh
    Python process: a second kernel sharing the same ``.memory/``."""
    prelude = (
        "import sys\n"
        "from ipymemory.store.store import MemoryStore\n"
        "from ipymemory.store.record import MemoryRecord\n"
        "def rec(name, body=None):\n"
        "    return MemoryRecord(name=name, type='project', description='about ' + name,\n"
        "                        body=body or 'The body of ' + name + '.')\n"
        "store = MemoryStore(sys.argv[1])\n"
    )
    subprocess.run(
        [sys.executable, "-c", prelude + code, workspace],
        check=True,
        timeout=60,
        capture_output=True,
    )


def count_manifest_replaces(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A list that gets one entry per manifest swap (``os.replace`` onto manifest.json)
    from now on."""
    replaced: list[str] = []
    real = os.replace

    def counting(src: Any, dst: Any, *a: Any, **kw: Any) -> None:
        if str(dst).endswith("/manifest.json"):
            replaced.append(str(dst))
        real(src, dst, *a, **kw)

    monkeypatch.setattr(os, "replace", counting)
    return replaced
