"""An ``%%agent`` cell, phase by phase (the turn's phases: :mod:`ipymemory.turn.session`).

::

    the question  cell_question: the cell with {name}, {In[n]}, {Out[n]}, {Err}
                  replaced (not with --raw); --format code asks for code only
    the tools     memory_tool_for: Claude's memory tool on .memory/ (--memory-tool),
                  its changes proposals that join the turn's review
    answering     answer_in_cell: AgentSession.answer with the cell's live outputs
                  (progress line, the answer as it streams, the steps); an interrupt or
                  a failure becomes the view that says so
    memory work   CellMemoryWork: in the cell (background_memory off), or handed to the
                  kernel's worker (notebook/worker.py) -- the cell then shows "memories
                  used" and the outputs the outcome fills in place
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

from IPython.core.error import UsageError
from IPython.display import display

from ..errors import CommandUsageError, IPyMemoryError
from ..model import NoModel
from ..store.lock import reporting_lock_waits
from ..turn import AgentSession, AnsweredTurn, TurnResult
from ..turn.answering import OfferedMemoryTool
from ..turn.session import LAST_ERROR_TURN
from ..views import ErrorView, MessageView, SelectionView
from .caller import cell_context
from .hints import NO_KEY_HINT, model_hint
from .output import LiveTurn, MemorySlots, TurnOutput
from .prompt import CODE_INSTRUCTION, expand_prompt
from .state import NotebookState

__all__ = [
    "LAST_ERROR_WORKER",
    "CellMemoryWork",
    "answer_in_cell",
    "cell_question",
    "memory_tool_for",
    "no_model",
    "turn_hint",
]

# The last_error of a failure that escaped the memory work on the worker (a bug).
LAST_ERROR_WORKER = "Memory work failed"


def cell_question(cell: str, *, raw: bool, code: bool, namespace: dict[str, Any]) -> str:
    """The question an ``%%agent`` cell asks; :class:`UsageError` for an empty cell or
    a reference that cannot be replaced."""
    query = cell.strip("\n")
    if not query.strip():
        raise UsageError("%%agent: the cell is empty; write your question below the %%agent line")
    if not raw:
        try:
            query = expand_prompt(query, namespace)
        except CommandUsageError as e:
            raise UsageError(f"%%agent: {e} (--raw sends the cell as written)") from None
    return f"{query}\n\n{CODE_INSTRUCTION}" if code else query


def memory_tool_for(session: AgentSession, *, use_memory: bool) -> OfferedMemoryTool:
    """Claude's memory tool over the session's memory, for one turn: its changes join
    the turn's review (``keep=False``), never written directly."""
    # Here: the anthropic SDK's tool classes load only for a turn that uses them.
    from ..agents.memory_tool import MemoryTool

    mode = session.config.commit_mode
    if not use_memory or mode == "off":
        raise UsageError("%%agent --memory-tool needs memory on and commit mode review or auto")
    return MemoryTool(
        session.workspace,
        "auto" if mode == "auto" else "review",
        store=session.store,
        keep=False,
        session=session.id,
        user_store=session.user_store,
    )


def answer_in_cell(
    session: AgentSession, query: str, live: LiveTurn, **turn: Any
) -> AnsweredTurn | MessageView | ErrorView:
    """:meth:`AgentSession.answer` (``turn``: its keyword arguments) with the cell's live
    outputs; what stopped it, as a view, when it did not answer."""
    progress = live.progress
    try:
        return session.answer(query, on_event=live.event, **turn)
    except KeyboardInterrupt:
        progress.finish(f"■ interrupted after {progress.elapsed():.1f} s")
        return MessageView(
            "Turn interrupted: the model call was stopped and the conversation "
            "history was closed consistently. Nothing was extracted.",
            kind="interrupted",
        )
    except IPyMemoryError as e:  # the model, the store or the turn itself
        progress.finish(f"✗ failed after {progress.elapsed():.1f} s")
        return ErrorView.of(e, where="The agent turn", hint=turn_hint(e, session))
    except BaseException:  # a bug surfaces as it is, but the clock stops first
        progress.finish(f"✗ failed after {progress.elapsed():.1f} s")
        raise


class CellMemoryWork:
    """The rest of an ``%%agent`` turn after its answer: the memory work and what it
    shows. :meth:`run` in the cell (``background_memory`` off), or :meth:`hand_over` to
    the kernel's worker: the cell then shows "memories injected" and the outputs the outcome
    fills in place (:class:`MemorySlots`) and ends."""

    def __init__(
        self,
        state: NotebookState,
        session: AgentSession,
        query: str,
        live: LiveTurn,
        *,
        used_memory: bool,
    ) -> None:
        self.state, self.session, self.query, self.live = state, session, query, live
        self.used_memory = used_memory
        self.slots: MemorySlots | None = None

    def run(self, answered: AnsweredTurn) -> TurnResult | BaseException:
        """The memory work; its result, or what stopped it."""
        try:
            return answered.finish()
        except BaseException as e:
            return e

    def outcome(self, done: TurnResult | BaseException) -> Any:
        """Stop the progress line and return what to display for ``done``."""
        progress = self.live.progress
        if isinstance(done, KeyboardInterrupt):
            progress.finish(
                f"■ memory work interrupted after {progress.memory_seconds():.1f} s "
                f"· answered in {progress.answer_seconds or 0:.1f} s"
            )
            return MessageView(
                "The answer above is complete. The memory work after it was "
                "interrupted: nothing partial was written, and the next turn's "
                "extraction reads this turn again.",
                kind="interrupted",
            )
        if isinstance(done, IPyMemoryError):  # the store or the turn itself
            progress.finish(f"✗ failed after {progress.elapsed():.1f} s")
            return ErrorView.of(done, where="The agent turn", hint=turn_hint(done, self.session))
        if isinstance(done, BaseException):
            progress.finish(f"✗ failed after {progress.elapsed():.1f} s")
            if self.slots is None:
                raise done  # in the cell, a bug surfaces as it is
            # On the worker nobody else would see it: the cell, last_error, the log.
            cause = f"{type(done).__name__}: {done}"
            self.session.record_error(LAST_ERROR_WORKER, cause)
            traceback.print_exception(done, file=sys.__stderr__)
            return ErrorView(
                cause,
                outcome=LAST_ERROR_WORKER,
                hint="The answer above is complete; the traceback is in the kernel's log.",
            )
        progress.finish(_summary(done))
        review = None
        # In auto mode a batch screening held back (SPEC §7) waits here for a person.
        waiting = done.batch if done.batch is not None and done.batch.open else done.held
        if waiting is not None and waiting.open:
            review = self.state.review(self.session, waiting)
        output = TurnOutput(
            self.query,
            done,
            used_memory=self.used_memory,
            review=review,
            live=True,
            models=models_of(self.session),
        )
        self.state.last_turn = output
        return output

    def hand_over(self, answered: AnsweredTurn) -> None:
        """Show what is known now and leave the memory work to the worker."""
        selection = (
            SelectionView.of(self.query, answered.selection, compact=True)
            if self.used_memory
            else SelectionView.disabled(self.query)
        )
        display(selection)  # type: ignore[no-untyped-call]
        self.slots = MemorySlots()
        progress = self.live.progress
        progress.hand_over()
        count = cell_context(self.state.shell).get("execution_count")
        label = f"%%agent cell [{count}]" if count is not None else "the last %%agent cell"

        def memory() -> TurnResult | BaseException:
            with reporting_lock_waits(progress.lock_wait):
                return self.run(answered)

        def show(done: Any) -> None:
            shown = self.outcome(done)
            assert self.slots is not None
            self.slots.fill(shown.memory_parts() if isinstance(shown, TurnOutput) else [shown])

        def show_again() -> None:
            progress.show_again()
            if self.slots is not None:
                self.slots.show_again()

        self.state.worker.start(label, memory, show, show_again)


def _summary(result: TurnResult) -> str:
    main, memory = result.usage.main, result.usage.memory
    tools = f"{result.tool_calls} tool call{'' if result.tool_calls == 1 else 's'}"
    tokens = (
        f"tokens in/out: agent {main.input_tokens}/{main.output_tokens}, "
        f"memory {memory.input_tokens}/{memory.output_tokens}"
    )
    timing = (
        f"✓ answered in {result.answer_seconds:.1f} s · memory in {result.memory_seconds:.1f} s"
    )
    held = ""
    if result.held is not None and result.held.open:  # SPEC §7: the turn says so
        n = len(result.held.items)
        held = f" · {n or 'a plan'} held for your review"
    return f"{timing} · {tools} · {tokens}{held}"


def turn_hint(error: BaseException, session: AgentSession) -> str:
    """What to do after the turn failed: the key or model to check (hints.py), else
    that asking again is safe."""
    hint = model_hint(error, *models_of(session))
    return hint or "The conversation history was kept consistent; you can ask again."


def models_of(session: AgentSession) -> tuple[str | None, str | None]:
    """The model and side model the session asks for (a setting, else its client's)."""
    client = session.model
    model = session.config.model or getattr(client, "model", None)
    side = session.config.side_model or getattr(client, "side_model", None)
    return (
        model if isinstance(model, str) else None,
        side if isinstance(side, str) else None,
    )


def no_model(session: AgentSession) -> ErrorView | None:
    """The turn cannot answer without a model: said at once, before it selects or
    waits for anything (issue 43), and kept as the session's last error."""
    if not isinstance(session.model, NoModel):
        return None
    session.record_error(LAST_ERROR_TURN, session.model.reason)
    return ErrorView(session.model.reason, where="The agent turn", hint=NO_KEY_HINT)
