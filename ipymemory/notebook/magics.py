"""The magics: ``%%agent`` (one agent turn) and ``%memory`` (inspect and change memory)."""

from __future__ import annotations

from typing import Any, cast

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class

from ..commands.help import magic_help
from ..config import COMMIT_MODE_HELP, SELECTION_RULE
from ..errors import IPyMemoryError
from ..turn import AnsweredTurn
from ..turn.config import COMMIT_MODES
from ..views import ErrorView
from ._args import arg, arguments, parse_magic_args, with_text
from .agent_cell import CellMemoryWork, answer_in_cell, cell_question, memory_tool_for, no_model
from .commands import check_dir_argument, run_line
from .output import LiveTurn
from .prompt import code_of
from .state import NotebookState

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
        help=f"what to do with memories extracted from this turn: {COMMIT_MODE_HELP}",
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
    @with_text("<selection rule>", SELECTION_RULE)
    def agent(self, line: str, cell: str) -> Any:
        """Run one agent turn; the cell body is the question.

        The agent sees the files under the workspace (read-only tools) and, with
        --python, this notebook's namespace. The memories of .memory/ it gets:
        <selection rule>
        They go into this turn's request only. The answer streams into the cell;
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
        namespace = self._user_ns()
        query = cell_question(cell, raw=args.raw, code=args.format == "code", namespace=namespace)
        stopped = self.state.settle()  # SPEC §12: the previous turn's memory work first
        if stopped is not None:
            return stopped
        try:
            settings = self.state.settings(
                {"directory": args.dir, "model": args.model, "commit_mode": args.commit}
            )
            if args.dir is not None:
                check_dir_argument(settings.directory)
            session = self.state.session(settings)
        except IPyMemoryError as e:  # a bad setting, an unreadable store
            return ErrorView.of(e, where="%%agent settings")
        use_memory = not args.no_memory
        tool = memory_tool_for(session, use_memory=use_memory) if args.memory_tool else None
        unanswerable = no_model(session)  # after the line's own mistakes (UsageError)
        if unanswerable is not None:
            return unanswerable
        if args.new:
            session.clear_history()
        live = LiveTurn()
        live.start()
        answered = answer_in_cell(
            session,
            query,
            live,
            allow_python=args.python,
            allow_hidden=True if args.hidden else None,  # else the allow_hidden setting
            use_memory=use_memory,
            namespace=namespace if args.python else None,
            memory_tool=tool,
        )
        if not isinstance(answered, AnsweredTurn):
            return answered  # what stopped the turn
        if args.format == "code" and answered.answer.strip() and self.shell is not None:
            # A new cell below holding the code, not run (jupyter-ai's --format code).
            self.shell.set_next_input(code_of(answered.answer), replace=False)
        work = CellMemoryWork(self.state, session, query, live, used_memory=use_memory)
        if not self.state.background(settings):
            return work.outcome(work.run(answered))
        work.hand_over(answered)
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
