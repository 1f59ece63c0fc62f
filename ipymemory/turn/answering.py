"""Phase 2 of a turn: answering the question (SPEC §2, §8).

::

    the tools      tool_box: what the model is offered this turn (turn/tools.py) -- the
                   read-only file tools, run_python when allowed, the memory tool when
                   offered (SPEC §10)
    the requests   LoopInputs (turn/loop.py): the system prompt, the turn's memory
                   feed (turn/memory_feed.py: the blocks phase 1 gave, the model's
                   pick joining a later request), the reply budget and tool rounds
    the tool loop  run_tool_loop over the canonical history, which grows by the
                   question, each reply and each round of tool results; the request
                   history (turn/history.py) is what is sent of it

:func:`answer_question` runs it and says ``answered`` with the complete answer: what
follows is the memory work (:mod:`ipymemory.turn.memory_work`), which may run later on
another thread. Model calls are counted in the context's log (role ``main``; the
summarizer's, when older history is compressed, as ``summarizer``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .._dates import today_text
from ..errors import SideQueryError
from ..model import cached_system
from ..review.proposals import Proposal
from .context import TurnContext
from .history import RequestHistory, summarize_history
from .loop import LoopInputs, LoopListener, LoopOutcome, MemoryFeed, run_tool_loop
from .question import Question
from .tools import OfferedTool, ToolBox

__all__ = [
    "LAST_ERROR_SUMMARY",
    "OfferedMemoryTool",
    "ToolChoices",
    "answer_question",
    "summarize",
    "tool_box",
]


# The older request history could not be summarised: it was truncated instead.
LAST_ERROR_SUMMARY = "History summary failed; older messages were truncated"


class OfferedMemoryTool(OfferedTool, Protocol):
    """The memory tool as a turn uses it: offered to the model, then its proposals
    handed over (``take``) to join the extracted batch."""

    def take(self) -> tuple[Proposal, ...]: ...


@dataclass(frozen=True)
class ToolChoices:
    """What one turn lets the model use beyond the file tools: ``run_python`` in
    ``namespace`` (``allow_python``), hidden files (``allow_hidden``), the memory tool."""

    allow_python: bool = False
    namespace: dict[str, Any] = field(default_factory=dict)
    allow_hidden: bool = False
    memory_tool: OfferedMemoryTool | None = None


def tool_box(workspace: Path, ctx: TurnContext, choices: ToolChoices) -> ToolBox:
    """The tools of this turn, limited by the settings."""
    config = ctx.config
    return ToolBox(
        workspace,
        allow_python=choices.allow_python,
        namespace=choices.namespace,
        read_limit=config.file_read_limit,
        list_limit=config.list_files_limit,
        output_limit=config.python_output_limit,
        allow_hidden=choices.allow_hidden,
        python_timeout=config.python_timeout,
        offered=choices.memory_tool,
    )


def dated_system(prompt: str) -> list[dict[str, Any]]:
    """The agent's system prompt, cached, then today's date in a block of its own after
    the cache breakpoint (issue 26: the agent can resolve "next Wednesday"; the
    prompt's cache survives the day changing)."""
    return [*cached_system(prompt), {"type": "text", "text": f"Today is {today_text()}."}]


def answer_question(
    ctx: TurnContext,
    question: Question,
    memory: MemoryFeed | None,
    *,
    history: list[dict[str, Any]],
    request_history: RequestHistory,
    tools: ToolBox,
) -> LoopOutcome:
    """Add ``question`` to the canonical ``history`` and run the tool loop to its
    answer; emits ``answered`` (see module docstring). What stops the loop -- a failed
    model call, a KeyboardInterrupt -- propagates, the history closed consistently."""
    config, log = ctx.config, ctx.log
    inputs = LoopInputs(
        system=dated_system(config.system_prompt),
        max_tokens=config.max_tokens,
        max_tool_steps=config.max_tool_steps,
        model_name=config.model,
        memory=memory,
    )
    listen = LoopListener(
        on_reply=ctx.record_main,
        emit=log.emit,
        # Stream only to someone listening (a notebook cell shows the text).
        on_text=(lambda text: log.emit("text", text)) if log.listener is not None else None,
        on_step=lambda step: log.emit("step", f"{step.name} {step.summary}", step),
    )
    history.append({"role": "user", "content": question.text})
    outcome = run_tool_loop(
        ctx.model,
        inputs,
        history=history,
        request_history=request_history,
        tools=tools,
        listen=listen,
    )
    # The answer is complete: show it now, before any memory work (issue 13).
    log.emit("answered", outcome.answer)
    return outcome


def summarize(
    ctx: TurnContext, previous: str | None, dropped: Sequence[dict[str, Any]], max_tokens: int
) -> str:
    """The request history's summarizer (:class:`RequestHistory`): one side-query over
    the dropped messages, its call counted; raises :class:`SideQueryError` (the
    request history then truncates instead)."""
    ctx.log.emit("summarizing", f"{len(dropped)} older messages")
    try:
        text, usage = summarize_history(
            ctx.model, previous, dropped, max_tokens=max_tokens, side_model=ctx.config.side_model
        )
    except SideQueryError as e:
        ctx.record_failed_side("summarizer", e)
        # Said, not swallowed: the request history truncates instead (issue 43).
        ctx.log.fail(LAST_ERROR_SUMMARY, str(e), e)
        raise
    ctx.record_side("summarizer", usage)
    return text
