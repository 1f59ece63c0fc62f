"""Scenarios as data: a turn's history and the item an extractor proposes from it.

The schema of ``benchmarks/corpora/poisoning.jsonl`` (and any file given to
``poisoning.py --corpus``). One JSON object per line::

    name      str       unique in its file
    category  str       free text, reported per category
    planted   bool      true: a file or an output planted the item (it must be held);
                        false: the user stated it (it must pass)
    item      obj       the extractor's proposed record: name, type, description, body
    history   [message] the turn as Messages-API messages, as ``AgentSession`` keeps them:
                        the user's query {"role": "user", "content": str}, then the
                        assistant's messages (content: "text" blocks {"type", "text"} and
                        "tool_use" blocks {"type", "id", "name", "input"}) and, after one
                        with tool calls, the user's message of one "tool_result" block
                        {"type", "tool_use_id", "content": str} per call, in order; the
                        last message is the assistant's answer (text blocks only)

A replayed turn (``poisoning.py --turns``) writes each ``read_file`` result into the
workspace as that file and has ``run_python`` print each of its results. Empty lines and
``//`` comments are skipped; :func:`load_histories` refuses a malformed line with its
file and line number (the line reader and field checks are ``scenes.py``'s).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scenes import CorpusError, a_list, dump_lines, keys, load_named, nonempty, record_fields

__all__ = ["Message", "Scenario", "dump_histories", "load_histories"]

Message = dict[str, Any]

_BLOCKS = {
    "text": {"type", "text"},
    "tool_use": {"type", "id", "name", "input"},
}


@dataclass(frozen=True)
class Scenario:
    name: str
    category: str
    planted: bool
    history: tuple[Message, ...]
    item: dict[str, str]  # name, type, description, body

    @property
    def query(self) -> str:
        content = self.history[0]["content"]
        assert isinstance(content, str)
        return content

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "category": self.category,
            "planted": self.planted,
            "item": dict(self.item),
            "history": list(self.history),
        }


def _assistant(message: Any, where: str) -> list[str]:
    """Check an assistant message; the ids of its tool calls."""
    keys(message, where, {"role", "content"}, set())
    calls = []
    for i, block in enumerate(a_list(message["content"], f"{where}.content")):
        at = f"{where}.content[{i}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind not in _BLOCKS:
            raise CorpusError(f"{at}: a text or tool_use block")
        keys(block, at, _BLOCKS[kind], set())
        if kind == "text" and not isinstance(block["text"], str):
            raise CorpusError(f"{at}.text: a string")
        if kind == "tool_use":
            calls.append(nonempty(block["id"], f"{at}.id"))
            nonempty(block["name"], f"{at}.name")
            if not isinstance(block["input"], dict):
                raise CorpusError(f"{at}.input: a JSON object")
    return calls


def _results(message: Any, where: str, calls: list[str]) -> None:
    """Check a user message answering ``calls``, one tool_result each, in order."""
    keys(message, where, {"role", "content"}, set())
    blocks = a_list(message["content"], f"{where}.content")
    if message["role"] != "user" or len(blocks) != len(calls):
        raise CorpusError(f"{where}: the user's message of {len(calls)} tool_result block(s)")
    for i, (block, call) in enumerate(zip(blocks, calls, strict=True)):
        at = f"{where}.content[{i}]"
        keys(block, at, {"type", "tool_use_id", "content"}, set())
        if block["type"] != "tool_result" or block["tool_use_id"] != call:
            raise CorpusError(f"{at}: the tool_result of {call!r}")
        if not isinstance(block["content"], str):
            raise CorpusError(f"{at}.content: a string")


def _history(value: Any, where: str) -> tuple[Message, ...]:
    messages = a_list(value, where)
    if len(messages) < 2:
        raise CorpusError(f"{where}: the user's query and the assistant's answer at least")
    first = keys(messages[0], f"{where}[0]", {"role", "content"}, set())
    if first["role"] != "user" or not isinstance(first["content"], str):
        raise CorpusError(f"{where}[0]: the user's query, a string")
    i = 1
    while i < len(messages):
        at = f"{where}[{i}]"
        if not isinstance(messages[i], dict) or messages[i].get("role") != "assistant":
            raise CorpusError(f"{at}: an assistant message")
        calls = _assistant(messages[i], at)
        if not calls:
            if i != len(messages) - 1:
                raise CorpusError(f"{at}: a message without tool calls ends the history")
            break
        if i + 1 == len(messages):
            raise CorpusError(f"{at}: tool calls without results end the history")
        _results(messages[i + 1], f"{where}[{i + 1}]", calls)
        i += 2
    else:
        raise CorpusError(f"{where}: the last message is the assistant's answer")
    return tuple(messages)


def scenario_from_json(data: Any, where: str = "scenario") -> Scenario:
    """One scenario from its JSON object (see the module docstring)."""
    keys(data, where, {"name", "category", "planted", "item", "history"}, set())
    if not isinstance(data["planted"], bool):
        raise CorpusError(f"{where}.planted: true or false")
    return Scenario(
        name=nonempty(data["name"], f"{where}.name"),
        category=nonempty(data["category"], f"{where}.category"),
        planted=data["planted"],
        history=_history(data["history"], f"{where}.history"),
        item=record_fields(data["item"], f"{where}.item"),
    )


def load_histories(path: Path | str) -> list[Scenario]:
    """The scenarios of a JSON Lines file, in order; names must be unique."""
    return load_named(path, scenario_from_json)


def dump_histories(scenarios: Iterable[Scenario], path: Path | str) -> None:
    """Write ``scenarios`` one a line (keys in the schema's order, UTF-8 as written)."""
    dump_lines((s.to_json() for s in scenarios), path, sort_keys=False)
