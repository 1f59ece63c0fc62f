"""``ScriptedModel``: a model that replays prepared replies, for offline notebooks.

Give it the replies of each role -- ``agent`` (one reply per tool step), ``selector``,
``extractor``, ``consolidator``, ``summarizer``, ``checker`` (the follow-up check),
``screener`` (the screen's translation check) -- and it answers each call with the
next reply of the caller's role, recording every request it got in ``requests`` (its
arguments, ``output_schema`` included: a script does not have to follow it)::

    model = ScriptedModel(
        agent=[
            {"type": "tool_use", "name": "read_file", "input": {"path": "notes.md"}},
            "Your notes say to indent with tabs.",             # final answer
        ],
        selector=['["prefers-tabs"]'],   # with selector = model, past the memory
        extractor=["[]"],                # budget; nothing new
    )
    session = AgentSession(".", model=model)

A script per role does not depend on how many calls a turn makes (the selector is
not called while the whole set fits, a consolidator only past its threshold), nor on
their order: the model's memory pick runs beside the agent's call (SPEC §13), so script
the selector by role, not in call order. Replies
may also be given in call order, as the first argument: a call whose role has no
script of its own takes the next of those.

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
naming the role that ran out and how many replies it was given. It is a teaching and
testing aid, not a stand-in for the real API (whose path is tested against a
Messages-API server).
"""

from __future__ import annotations

import copy
import itertools
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ModelNotConfigured, ScriptExhausted
from .client import ModelReply, current_role
from .usage import ROLES, Usage

__all__ = ["ScriptedModel"]

ScriptedReply = ModelReply | str | dict[str, Any]

# The keyword of each role (ROLES); the agent's calls are role "main".
_KEYWORDS: dict[str, str] = {"main": "agent", **{r: r for r in ROLES if r != "main"}}


class ScriptedModel:
    """A :class:`~ipymemory.model.client.ModelClient` replaying ``replies`` in order."""

    def __init__(
        self,
        replies: Iterable[ScriptedReply] = (),
        *,
        agent: Iterable[ScriptedReply] | None = None,
        selector: Iterable[ScriptedReply] | None = None,
        extractor: Iterable[ScriptedReply] | None = None,
        consolidator: Iterable[ScriptedReply] | None = None,
        summarizer: Iterable[ScriptedReply] | None = None,
        checker: Iterable[ScriptedReply] | None = None,
        screener: Iterable[ScriptedReply] | None = None,
        model: str = "scripted",
        side_model: str | None = None,
    ) -> None:
        self.model = model
        self.side_model = side_model or model
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        # None: the calls in order; a role: its own script (made when it is given one).
        self._queues: dict[str | None, deque[ModelReply]] = {None: deque()}
        self._scripted: dict[str | None, int] = {None: 0}
        self.add(*replies)
        scripts = {
            "agent": agent,
            "selector": selector,
            "extractor": extractor,
            "consolidator": consolidator,
            "summarizer": summarizer,
            "checker": checker,
            "screener": screener,
        }
        for keyword, script in scripts.items():
            if script is not None:
                self.add(*script, role=keyword)

    def add(self, *replies: ScriptedReply, role: str | None = None) -> None:
        """Append more replies to the script (each checked now, not when replayed): to
        the replies in call order, or to ``role``'s (``agent``, ``selector``,
        ``extractor``, ``consolidator``, ``summarizer``, ``checker``, ``screener``)."""
        key = None if role is None else self._role(role)
        where = "ScriptedModel reply" if key is None else f"ScriptedModel {role} reply"
        with self._lock:
            start = self._scripted.get(key, 0)
        converted = [
            self._convert(reply, f"{where} {start + i}") for i, reply in enumerate(replies)
        ]
        with self._lock:
            self._queues.setdefault(key, deque()).extend(converted)
            self._scripted[key] = start + len(converted)

    @staticmethod
    def _role(keyword: str) -> str:
        for role, name in _KEYWORDS.items():
            if keyword == name:
                return role
        raise ValueError(
            f"ScriptedModel: no role {keyword!r}; one of {', '.join(_KEYWORDS.values())}"
        )

    @property
    def remaining(self) -> int:
        """Replies not used yet, of every role."""
        with self._lock:
            return sum(len(q) for q in self._queues.values())

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
            role = current_role()
            key: str | None = role if role in self._queues else None
            queue = self._queues[key]
            if key is None and not self._scripted[None] and len(self._queues) > 1:
                # Scripted by role only, and not this one: the role is not modelled.
                name = _KEYWORDS.get(role, role)
                raise ModelNotConfigured(
                    f"ScriptedModel has no {name} script (script it with "
                    f"ScriptedModel({name}=[...]))"
                )
            if not queue:
                raise ScriptExhausted(self._exhausted(role, key))
            return queue.popleft()

    def _exhausted(self, role: str, key: str | None) -> str:
        call, name = len(self.requests), _KEYWORDS.get(role, role)
        given = self._scripted[key]
        if key is not None:
            return (
                f"ScriptedModel has no {name} reply left for call {call} "
                f"(it was given {given} {name} repl{'y' if given == 1 else 'ies'})"
            )
        return (
            f"ScriptedModel has no reply left for call {call} ({name}; it was given "
            f"{given} in call order; script a role with ScriptedModel({name}=[...]))"
        )

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

    def _convert(self, reply: Any, where: str) -> ModelReply:
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
        with self._lock:
            total = sum(self._scripted.values())
        return f"ScriptedModel({self.remaining} of {total} replies left)"
