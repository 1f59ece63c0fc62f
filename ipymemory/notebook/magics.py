"""The magics: ``%%agent`` (one agent turn) and ``%memory`` (inspect and change memory)."""

from __future__ import annotations

import sys
import traceback
from typing import Any, cast

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.display import display

from ..commands.help import magic_help
from ..errors import CommandUsageError, IPyMemoryError, ModelNotConfigured
from ..store.lock import reporting_lock_waits
from ..turn import AgentSession, AnsweredTurn, TurnResult
from ..turn.config import COMMIT_MODES
from ..views import ErrorView, MessageView, SelectionView
from ._args import arg, arguments, parse_magic_args
from .caller import cell_context
from .commands import run_line
from .output import LiveTurn, MemorySlots, TurnOutput
from .prompt import CODE_INSTRUCTION, code_of, expand_prompt
from .state import NotebookState

# The last_error of a failure that escaped the memory work on the worker (a bug).
LAST_ERROR_WORKER = "Memory work failed"

__all__ = ["MemoryMagics"]


@magics_class
class MemoryMagics(Magics):
    """``%%agent`` and ``%memory``; one :class:`NotebookState` per shell."""

    def __init__(self, shell: Any, state: NotebookState) -> None:
        super().__init__(shell)
        self.state = state

    # --- %%agent -----------------------------------------------------------------

    @arguments(name="%agent")  # the usage line prefixes one more "%"
    @arg("--model", metavar="NAME", help="main model for this turn (e.g. claude-sonnet-5-5)")
    @arg(
        "--commit",
        choices=COMMIT_MODES,
        help="what to do with memories extracted from this turn: review (a widget asks "
        "you; default), auto (commit at once) or off (do not extract)",
    )
    @arg(
        "--python",
        action="store_true",
        help="let the agent run Python in this notebook's namespace during this turn",
    )
    @arg(
        "--hidden",
        action="store_true",
        help="let the file tools read hidden files and directories (.env, .git, ...) "
        "during this turn",
    )
    @arg(
        "--memory-tool",
        action="store_true",
        help="offer the agent Claude's memory tool on .memory/: what it creates, edits, "
        "deletes or renames joins this turn's review (never written directly)",
    )
    @arg("--no-memory", action="store_true", help="neither use nor extract memories this turn")
    @arg(
        "--new",
        action="store_true",
        help="start a fresh conversation before this turn (memory and pending batches stay)",
    )
    @arg(
        "--raw",
        action="store_true",
        help="send the cell as written: no {name}, {In[n]}, {Out[n]} or {Err} replacement",
    )
    @arg(
        "--format",
        choices=("markdown", "code"),
        default="markdown",
        help="code: ask for code only and put it into a new cell below (not run)",
    )
    @arg(
        "--dir",
        metavar="DIR",
        help="workspace whose .memory/ to use (default: %%config IPyMemory.directory, "
        "IPYMEMORY_DIR, else the kernel's working directory)",
    )
    @cell_magic
    def agent(self, line: str, cell: str) -> Any:
        """Run one agent turn; the cell body is the question.

        The agent sees the files under the workspace (read-only tools) and, with
        --python, this notebook's namespace. Up to max_selected (5) relevant memories
        from .memory/ are selected for the turn. The answer streams into the cell;
        afterwards new memories are extracted from the conversation and, in review
        mode, shown for you to accept or reject; the last line says how long the
        answer and the memory work took. In a Jupyter kernel the cell ends with the
        answer and that work finishes on a worker, updating the cell in place; the next
        %%agent or %memory waits for it (setting background_memory). Interrupt the
        kernel (Ctrl-C / the stop button) to stop a turn cleanly: while the answer
        streams, the part shown stays.

        Examples::

            %%agent
            How should I format the config loader?

            %%agent --python --commit auto
            Summarise the dataframe `df` and remember its column meanings.

            %%agent --format code
            Fix the error in {In[4]}: {Err}

        In the cell, {name} is replaced by the value of `name` in your namespace,
        {In[n]} / {Out[n]} by cell n's input / output and {Err} by the last
        traceback (--raw: sent as written). --new starts a fresh conversation;
        memory stays. --format code puts the answer's code in a new cell below.
        --memory-tool offers Claude's memory tool (memory_20250818) on .memory/: its
        changes are proposals shown in this turn's review.

        Settings: %config IPyMemory (model, commit_mode, directory, …); without
        ANTHROPIC_API_KEY the agent cannot answer (memory selection still works).
        """
        args = parse_magic_args(cast(Any, self).agent, line)
        query = cell.strip("\n")
        if not query.strip():
            raise UsageError(
                "%%agent: the cell is empty; write your question below the %%agent line"
            )
        if not args.raw:
            try:
                query = expand_prompt(query, self._user_ns())
            except CommandUsageError as e:
                raise UsageError(f"%%agent: {e} (--raw sends the cell as written)") from None
        if args.format == "code":
            query = f"{query}\n\n{CODE_INSTRUCTION}"
        stopped = self.state.settle()  # SPEC §12: the previous turn's memory work first
        if stopped is not None:
            return stopped
        try:
            settings = self.state.settings(
                {"directory": args.dir, "model": args.model, "commit_mode": args.commit}
            )
            session = self.state.session(settings)
        except IPyMemoryError as e:  # a bad setting, an unreadable store
            return ErrorView.of(e, where="%%agent settings")
        if args.new:
            session.clear_history()
        tool = None
        if args.memory_tool:
            # Here: the anthropic SDK's tool classes load only for a turn that uses them.
            from ..agents.memory_tool import MemoryTool

            mode = session.config.commit_mode
            if args.no_memory or mode == "off":
                raise UsageError(
                    "%%agent --memory-tool needs memory on and commit mode review or auto"
                )
            tool = MemoryTool(
                session.workspace,
                "auto" if mode == "auto" else "review",
                store=session.store,
                keep=False,
                session=session.id,
                user_store=session.user_store,
            )
        live = LiveTurn()
        live.start()
        progress = live.progress
        try:
            answered = session.answer(
                query,
                allow_python=args.python,
                allow_hidden=True if args.hidden else None,  # else the allow_hidden setting
                use_memory=not args.no_memory,
                namespace=self._user_ns() if args.python else None,
                on_event=live.event,
                memory_tool=tool,
            )
        except KeyboardInterrupt:
            progress.finish(f"■ interrupted after {progress.elapsed():.1f} s")
            return MessageView(
                "Turn interrupted: the model call was stopped and the conversation "
                "history was closed consistently. Nothing was extracted.",
                kind="interrupted",
            )
        except IPyMemoryError as e:  # the model, the store or the turn itself
            progress.finish(f"✗ failed after {progress.elapsed():.1f} s")
            return ErrorView.of(e, where="The agent turn", hint=_turn_hint(e))
        except BaseException:  # a bug surfaces as it is, but the clock stops first
            progress.finish(f"✗ failed after {progress.elapsed():.1f} s")
            raise
        if args.format == "code" and answered.answer.strip() and self.shell is not None:
            # A new cell below holding the code, not run (jupyter-ai's --format code).
            self.shell.set_next_input(code_of(answered.answer), replace=False)
        turn = _MemoryWork(self.state, session, query, live, used_memory=not args.no_memory)
        if not self.state.background(settings):
            return turn.outcome(turn.run(answered))
        turn.hand_over(answered)
        return None

    def _user_ns(self) -> dict[str, Any]:
        shell = self.shell
        if shell is None:  # pragma: no cover - magics are always bound to a shell here
            raise UsageError("%%agent --python needs an IPython shell")
        return cast("dict[str, Any]", shell.user_ns)

    # --- %memory -----------------------------------------------------------------

    @line_magic
    def memory(self, line: str) -> Any:
        """Inspect and change long-term memory. (Replaced by the generated help below.)"""
        stopped = self.state.settle()  # SPEC §12: after the last turn's memory work
        if stopped is not None:
            return stopped
        return run_line(self.state, line)


MemoryMagics.memory.__doc__ = magic_help()


class _MemoryWork:
    """The rest of an ``%%agent`` turn after its answer: the memory work and what it
    shows. :meth:`run` in the cell (``background_memory`` off), or :meth:`hand_over` to
    the kernel's worker: the cell then shows "memories used" and the outputs the outcome
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
            return ErrorView.of(done, where="The agent turn", hint=_turn_hint(done))
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
                where=LAST_ERROR_WORKER,
                hint="The answer above is complete; the traceback is in the kernel's log.",
            )
        progress.finish(_summary(done))
        review = None
        # In auto mode a batch screening held back (SPEC §7) waits here for a person.
        waiting = done.batch if done.batch is not None and done.batch.open else done.held
        if waiting is not None and waiting.open:
            review = self.state.review(self.session, waiting)
        output = TurnOutput(
            self.query, done, used_memory=self.used_memory, review=review, live=True
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


def _turn_hint(error: BaseException) -> str:
    if isinstance(error, ModelNotConfigured):
        return (
            "Set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a compatible endpoint) "
            "in the kernel's environment, or use ipymemory.notebook.use_model(...)."
        )
    return "The conversation history was kept consistent; you can ask again."
