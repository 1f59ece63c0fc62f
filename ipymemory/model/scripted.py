"""``ScriptedModel``: a model that replays prepared replies, for offline notebooks.

Give it the replies in the order the calls will happen -- the selector, the agent
(one reply per tool step), the extractor, the consolidator -- and it answers each
call with the next one, recording every request it got in ``requests`` (its
arguments, ``output_schema`` included: a script does not have to follow it)::

    model = ScriptedModel([
        '["prefers-tabs"]',                                    # selector
        {"type": "tool_use", "name": "read_file", "input": {"path": "notes.md"}},
        "Your notes say to indent with tabs.",                 # final answer
        "[]",                                                  # extractor: nothing new
    ])
    session = AgentSession(".", model=model)

A reply may be:

* a :class:`ModelReply` -- used as is;
* a ``str`` -- one text block, ``stop_reason="end_turn"``;
* a content-block ``dict`` with a ``"type"``: a ``tool_use`` block (``id`` is filled
  in when missing) gives ``stop_reason="tool_use"``, any other block ``"end_turn"``;
* a message ``dict`` with ``"content"`` (a string or a list of blocks) and optional
  ``"stop_reason"``, ``"usage"`` (a dict of token counts) and ``"model"``.

``stream`` replays the same way, handing the reply's text to its ``on_text`` word by
word (the agent's answer then appears progressively in a notebook, as with the API).

Usage is all zeros unless a reply says otherwise: nothing is estimated. When the
script runs out, the call raises :class:`ScriptExhausted` (a ``ModelError``, so a
side-query falls back or records ``last_error`` exactly as on an API failure),
naming how many replies were scripted. It is a teaching and testing aid, not a
stand-in for the real API (whose path is tested against a Messages-API server).
"""

from __future__ import annotations

import copy
import itertools
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ScriptExhausted
from .client import ModelReply
from .usage import Usage

__all__ = ["ScriptedModel"]

ScriptedReply = ModelReply | str | dict[str, Any]


class ScriptedModel:
    """A :class:`~ipymemory.model.client.ModelClient` replaying ``replies`` in order."""

    def __init__(
        self,
        replies: Iterable[ScriptedReply] = (),
        *,
        model: str = "scripted",
        side_model: str | None = None,
    ) -> None:
        self.model = model
        self.side_model = side_model or model
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._queue: deque[ModelReply] = deque()
        self._scripted = 0
        self.add(*replies)

    def add(self, *replies: ScriptedReply) -> None:
        """Append more replies to the script (each checked now, not when replayed)."""
        converted = [self._convert(reply, self._scripted + i) for i, reply in enumerate(replies)]
        with self._lock:
            self._queue.extend(converted)
            self._scripted += len(converted)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._queue)

    def create(
        self,
        *,
        system: str | list[dict[str, Any]],
        messages: list[dict[str, Any]],
        max_tokens: int,
        tools: list[dict[str, Any]] | None = None,
        model: str | None = None,
        output_schema: dict[str, Any] | None = None,
    ) -> ModelReply:
        with self._lock:
            self.requests.append(
                copy.deepcopy(
                    {
                        "system": system,
                        "messages": messages,
                        "max_tokens": max_tokens,
                        "tools": tools,
                        "model": model or self.model,
                        "output_schema": output_schema,
                    }
                )
            )
            if not self._queue:
                raise ScriptExhausted(
                    f"ScriptedModel has no reply left for call {len(self.requests)} "
                    f"(it was given {self._scripted})"
                )
            return self._queue.popleft()

    def stream(
        self,
        *,
        system: str | list[dict[str, Any]],
        messages: list[dict[str, Any]],
        max_tokens: int,
        on_text: Callable[[str], None],
        tools: list[dict[str, Any]] | None = None,
        model: str | None = None,
    ) -> ModelReply:
        """:meth:`create`, with the reply's text handed to ``on_text`` word by word."""
        reply = self.create(
            system=system, messages=messages, max_tokens=max_tokens, tools=tools, model=model
        )
        for piece in re.findall(r"\S*\s*", reply.text):
            if piece:
                on_text(piece)
        return reply

    def _convert(self, reply: Any, index: int) -> ModelReply:
        where = f"ScriptedModel reply {index}"
        if isinstance(reply, ModelReply):
            return reply
        if isinstance(reply, str):
            return ModelReply(({"type": "text", "text": reply},), "end_turn", Usage(), self.model)
        if not isinstance(reply, dict):
            raise TypeError(
                f"{where}: expected a ModelReply, str or dict, got {type(reply).__name__}"
            )
        if "content" in reply:
            content = reply["content"]
            if isinstance(content, str):
                blocks = [{"type": "text", "text": content}]
            elif isinstance(content, list) and all(isinstance(b, dict) for b in content):
                blocks = [self._block(b, where) for b in content]
            else:
                raise TypeError(f"{where}: content must be a string or a list of block dicts")
            default_stop = (
                "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
            )
            usage = reply.get("usage") or {}
            if not isinstance(usage, dict):
                raise TypeError(f"{where}: usage must be a dict of token counts")
            return ModelReply(
                tuple(blocks),
                reply.get("stop_reason", default_stop),
                Usage.from_api(usage),
                str(reply.get("model") or self.model),
            )
        if "type" in reply:
            block = self._block(reply, where)
            stop = "tool_use" if block["type"] == "tool_use" else "end_turn"
            return ModelReply((block,), stop, Usage(), self.model)
        raise TypeError(f"{where}: a dict reply needs a 'content' or a 'type' key")

    def _block(self, block: dict[str, Any], where: str) -> dict[str, Any]:
        kind = block.get("type")
        if not isinstance(kind, str):
            raise TypeError(f"{where}: every content block needs a string 'type'")
        block = copy.deepcopy(block)
        if kind == "tool_use":
            if not isinstance(block.get("name"), str):
                raise TypeError(f"{where}: a tool_use block needs a string 'name'")
            block.setdefault("id", f"toolu_scripted_{next(self._ids):04d}")
            block.setdefault("input", {})
        elif kind == "text" and not isinstance(block.get("text"), str):
            raise TypeError(f"{where}: a text block needs a string 'text'")
        return block

    def __repr__(self) -> str:
        return f"ScriptedModel({self.remaining} of {self._scripted} replies left)"
