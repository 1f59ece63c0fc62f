"""The agent's tool loop (Anthropic tool-use protocol) over the canonical history.

Each step sends system + request history (built from the canonical history) + tools,
appends the assistant reply to the canonical history and, if it asked for tools,
runs them and appends one user message with a ``tool_result`` for every
``tool_use`` (errors as ``is_error: true``). It ends on a reply without tool calls,
or after ``max_tool_steps`` rounds of tools with a note in the answer.

Its inputs: :class:`LoopInputs` (what every request of the turn is made of, one frozen
value: with the :class:`MemoryFeed` that says before each request where the memory
blocks go, turn/memory_feed.py), the canonical history it appends to, the request
history that builds what is sent of it, the :class:`~ipymemory.turn.tools.ToolBox`, and
a :class:`LoopListener` (usage, progress, streamed text, steps). The answering phase
(:mod:`ipymemory.turn.answering`) builds them from the session's settings.

Consistency: whatever stops the loop -- an exception, a failed model call or a
KeyboardInterrupt -- the partial turn is *closed*, not rolled back: every
``tool_use`` gets a ``tool_result`` (results already computed are kept, the rest
say they were not run) and an assistant note ends the turn, so the canonical history
stays a valid Messages-API conversation that records what really happened (tools
may have had effects). Then the exception propagates (a failed model call as its
typed :class:`~ipymemory.errors.ModelError`).
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .._encodable import encodable
from ..model import CACHE_MARK, ModelClient, ModelReply, StreamingModelClient
from .history import RequestHistory
from .injection import query_index, with_memory_blocks
from .tools import ToolBox

__all__ = [
    "INTERRUPTED_NOTE",
    "LoopInputs",
    "LoopListener",
    "LoopOutcome",
    "MemoryFeed",
    "ToolStep",
    "close_turn",
    "request_messages",
    "run_tool_loop",
]

INTERRUPTED_NOTE = "(The turn was interrupted by the user.)"

Emit = Callable[[str, str], None]


@dataclass(frozen=True)
class ToolStep:
    """One tool call of a turn, for the steps view: the tool, what it was asked about
    (a path, the first line of code), how much it returned, and the error if any."""

    name: str
    summary: str
    result_chars: int
    error: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class LoopOutcome:
    """How the loop ended: the answer text, model calls made, tool calls run."""

    answer: str
    model_calls: int
    tool_calls: int
    stopped_at_limit: bool = False
    steps: tuple[ToolStep, ...] = ()


def _step_summary(name: str, tool_input: Any) -> str:
    """What a tool call was about, in a few words: its path, or its code's first line."""
    if isinstance(tool_input, dict):
        code = tool_input.get("code")
        if isinstance(code, str):
            lines = code.strip().splitlines() or [""]
            more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
            return _clip(lines[0], 60) + more
        path = tool_input.get("path")
        if isinstance(path, str):
            return _clip(path, 80)
        if not tool_input:
            return "."
    return _short_input(tool_input)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _short_input(tool_input: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(tool_input, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(tool_input)
    return text if len(text) <= limit else text[:limit] + "…"


def _unanswered(history: list[dict[str, Any]]) -> list[str]:
    """Ids of ``tool_use`` blocks in the last assistant message with no result after it."""
    if not history or history[-1].get("role") != "assistant":
        return []
    content = history[-1].get("content")
    if not isinstance(content, list):
        return []
    return [
        str(b.get("id")) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


def close_turn(
    history: list[dict[str, Any]],
    note: str,
    results: list[dict[str, Any]] | None = None,
) -> None:
    """Make ``history`` a complete conversation again (see module docstring).

    ``results`` are tool results already computed for the last assistant message.
    """
    missing = _unanswered(history)
    if missing:
        done = list(results or [])
        answered = {r.get("tool_use_id") for r in done}
        for tool_id in missing:
            if tool_id not in answered:
                done.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": tool_id,
                        "content": f"not run: {note}",
                        "is_error": True,
                    }
                )
        history.append({"role": "user", "content": done})
    if history and history[-1].get("role") == "user":
        history.append({"role": "assistant", "content": [{"type": "text", "text": note}]})


def _mark_last_block(message: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``message`` whose last content block carries a cache breakpoint."""
    content = message.get("content")
    if isinstance(content, str):
        blocks: list[dict[str, Any]] = [{"type": "text", "text": content}]
    elif isinstance(content, list) and content and isinstance(content[-1], dict):
        blocks = [*content[:-1], dict(content[-1])]
    else:
        return message
    blocks[-1]["cache_control"] = dict(CACHE_MARK)
    return {**message, "content": blocks}


def request_messages(
    history_messages: list[dict[str, Any]],
    current: int,
    blocks: Mapping[int, Sequence[str]] | None = None,
    summarised: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """The messages of one main request (SPEC §8, §13), from the request history built
    for the canonical history whose last ``current`` messages are the turn in progress.

    ``blocks`` maps a message's index in this request to the memory blocks it carries
    (a user query's before the query, a tool-result message's after its results);
    ``summarised`` are blocks whose own message compression summarised away (right after
    the summary note). Cache breakpoints go on the last message of the earlier history
    and on the request's last message: each request's prefix -- its blocks included,
    which stay where they were given -- is what the next request and the next turn
    read from the cache. The system prompt carries its own breakpoint. Only the request
    copy is marked.
    """
    messages = with_memory_blocks(history_messages, blocks or {}, first=summarised)
    index = query_index(messages, current)
    marked = list(messages)
    if index > 0:
        marked[index - 1] = _mark_last_block(marked[index - 1])
    if marked:
        marked[-1] = _mark_last_block(marked[-1])
    return marked


class MemoryFeed(Protocol):
    """The memory of one turn's requests (turn/memory_feed.py): told before each
    request is built (it may add what arrived meanwhile), and where the blocks go in a
    request built from canonical message ``cut`` on (canonical index -> blocks, and the
    blocks of messages summarised away)."""

    def before_request(self, number: int, history: Sequence[dict[str, Any]]) -> None: ...

    def placed(self, cut: int) -> tuple[dict[int, list[str]], list[str]]: ...


@dataclass(frozen=True)
class LoopInputs:
    """What every request of one turn is made of, fixed for the turn: the system prompt
    (blocks, with its cache breakpoint), the memory feed (None: no memory in this
    turn's requests; blocks are sent, never stored), the reply budget, the tool rounds
    allowed and the main model's name (None: the client's own)."""

    system: Sequence[dict[str, Any]]
    max_tokens: int
    max_tool_steps: int
    model_name: str | None = None
    memory: MemoryFeed | None = None


def _ignore(*_: object) -> None:
    return None


@dataclass(frozen=True)
class LoopListener:
    """Who hears what the loop does: ``on_reply`` each model reply (usage), ``emit``
    progress (``model``/``tool`` events), ``on_text`` the reply's text as it streams
    (None: not streamed) and ``on_step`` each tool call once it ran."""

    on_reply: Callable[[ModelReply], None] = _ignore
    emit: Emit = _ignore
    on_text: Callable[[str], None] | None = None
    on_step: Callable[[ToolStep], None] | None = None


QUIET = LoopListener()  # nobody listens


@dataclass
class _Progress:
    """The loop so far: what :class:`LoopOutcome` reports, and the tool results of the
    round in progress (kept by :func:`close_turn` when the loop is stopped mid-round)."""

    turn_start: int
    steps: list[ToolStep] = field(default_factory=list)
    model_calls: int = 0
    tool_calls: int = 0
    rounds: int = 0
    results: list[dict[str, Any]] = field(default_factory=list)

    def outcome(self, answer: str, *, stopped_at_limit: bool = False) -> LoopOutcome:
        return LoopOutcome(
            answer,
            self.model_calls,
            self.tool_calls,
            stopped_at_limit=stopped_at_limit,
            steps=tuple(self.steps),
        )


def run_tool_loop(
    model: ModelClient,
    inputs: LoopInputs,
    *,
    history: list[dict[str, Any]],
    request_history: RequestHistory,
    tools: ToolBox,
    listen: LoopListener = QUIET,
) -> LoopOutcome:
    """Run the loop on ``history`` (which ends with the user's message); see module
    docstring. ``inputs.memory`` places the memory blocks of every request of this turn
    (see :func:`request_messages`), never stored. With ``listen.on_text`` and a streaming
    client, every model reply is streamed and ``on_text`` gets its text as it arrives.
    Mutates ``history`` (appends only)."""
    progress = _Progress(turn_start=len(history) - 1)
    try:
        while True:
            reply = _ask(model, inputs, history, request_history, tools, listen, progress)
            content = [dict(b) for b in reply.content] or [
                {"type": "text", "text": "(the model returned an empty reply)"}
            ]
            history.append({"role": "assistant", "content": content})
            uses = [b for b in content if b.get("type") == "tool_use"]
            if not uses:
                answer = reply.text
                if reply.stop_reason == "max_tokens":
                    answer += "\n\n[The answer was cut off: it reached max_tokens.]"
                return progress.outcome(answer)
            if progress.rounds >= inputs.max_tool_steps:
                note = (
                    f"(Stopped: the limit of {inputs.max_tool_steps} tool steps was reached "
                    "before a final answer. Ask again to continue, or raise max_tool_steps.)"
                )
                close_turn(history, note)
                answer = "\n\n".join(t for t in (reply.text.strip(), note) if t)
                return progress.outcome(answer, stopped_at_limit=True)
            progress.rounds += 1
            _run_tools(uses, reply, tools, listen, progress)
            history.append({"role": "user", "content": progress.results})
            progress.results = []
    except KeyboardInterrupt:
        close_turn(history, INTERRUPTED_NOTE, progress.results)
        raise
    except BaseException as e:
        close_turn(history, f"(The turn failed: {e})", progress.results)
        raise


def _ask(
    model: ModelClient,
    inputs: LoopInputs,
    history: list[dict[str, Any]],
    request_history: RequestHistory,
    tools: ToolBox,
    listen: LoopListener,
    progress: _Progress,
) -> ModelReply:
    """One main request: the request history with the memory block, the tools; streamed
    to ``listen.on_text`` when it listens and the client streams."""
    progress.model_calls += 1
    listen.emit("model", f"step {progress.model_calls}")
    built = request_history.build(history)
    blocks: dict[int, list[str]] = {}
    summarised: list[str] = []
    if inputs.memory is not None:
        inputs.memory.before_request(progress.model_calls, history)
        cut = request_history.cut
        kept, summarised = inputs.memory.placed(cut)
        # The request holds canonical messages from ``cut`` on, maybe after a summary.
        offset = len(built) - (len(history) - cut)
        blocks = {at - cut + offset: texts for at, texts in kept.items()}
    messages = request_messages(built, len(history) - progress.turn_start, blocks, summarised)
    # A failed call raises its typed ModelError as is (run_tool_loop closes the history
    # first), so callers can tell "no key" from "HTTP 529".
    on_text = listen.on_text
    call = (
        functools.partial(model.stream, on_text=lambda t: on_text(encodable(t)))
        if on_text is not None and isinstance(model, StreamingModelClient)
        else model.create
    )
    reply = call(
        system=list(inputs.system),
        messages=messages,
        max_tokens=inputs.max_tokens,
        tools=tools.definitions,
        model=inputs.model_name,
    )
    listen.on_reply(reply)
    return reply


def _run_tools(
    uses: list[dict[str, Any]],
    reply: ModelReply,
    tools: ToolBox,
    listen: LoopListener,
    progress: _Progress,
) -> None:
    """Run one round's tool calls, each result added to ``progress.results`` as it is
    known. A reply cut off before its tool calls were complete runs none of them."""
    complete = reply.stop_reason == "tool_use"
    for use in uses:
        name = str(use.get("name"))
        if complete:
            listen.emit("tool", f"{name} {_short_input(use.get('input'))}")
            began = time.monotonic()
            outcome = tools.run(name, use.get("input"))
            progress.tool_calls += 1
            text, is_error = outcome.content, outcome.is_error
            first_line = (text.strip().splitlines() or ["error"])[0]
            step = ToolStep(
                name,
                _step_summary(name, use.get("input")),
                len(text),
                _clip(first_line, 200) if is_error else None,
                time.monotonic() - began,
            )
            progress.steps.append(step)
            if listen.on_step is not None:
                listen.on_step(step)
        else:
            text = (
                f"not run: the reply stopped with {reply.stop_reason!r} before the "
                "tool call was complete"
            )
            is_error = True
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": use.get("id"),
            "content": text,
        }
        if is_error:
            block["is_error"] = True
        progress.results.append(block)
