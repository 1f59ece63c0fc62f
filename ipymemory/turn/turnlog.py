"""What a turn reports while it runs, in one place every phase writes to.

A :class:`TurnLog` belongs to the session and is handed to each phase (through
:class:`~ipymemory.turn.context.TurnContext`), so no phase climbs back into the session
to say something:

* progress -- :meth:`TurnLog.emit` sends a :class:`TurnEvent` to the turn's listener
  (a spinner, the notebook's progress line), if any;
* model calls -- :meth:`TurnLog.record` adds a call to the turn in progress (between
  :meth:`~TurnLog.begin` and :meth:`~TurnLog.end`; the ledger's turn), else to the
  ledger's calls made outside a turn (``consolidate_now``);
* memory failures -- :meth:`TurnLog.fail` keeps the SPEC's fixed text as ``last_error``,
  the exact cause (credentials redacted) as ``last_error_cause``, and every failure of
  the turn in order (``TurnResult.memory_errors``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..review.failures import MemoryFailure
from ..screen import redact
from .loop import ToolStep
from .usage import CallUsage, TurnUsage, UsageLedger

__all__ = ["Listener", "TurnEvent", "TurnLog"]


@dataclass(frozen=True)
class TurnEvent:
    """Progress of a turn, for a spinner or a progress line.

    ``kind`` is one of ``selecting``, ``model`` (a model call starts), ``text`` (a
    piece of the model's reply streamed in: ``detail`` is that text), ``tool`` (a tool
    starts), ``step`` (a tool ran: ``step`` says which, on what, with what result),
    ``summarizing`` (older history is being compressed), ``answered`` (the final
    answer is known: ``detail`` is the whole answer; memory work follows),
    ``extracting``, ``screening`` (the model is asked which of the user's words held
    items state), ``consolidating``, ``done``; otherwise ``detail`` is a short
    human-readable text.
    """

    kind: str
    detail: str = ""
    step: ToolStep | None = None


Listener = Callable[[TurnEvent], None]


class TurnLog:
    """See the module docstring. Not thread-safe by itself: the session's lock holds
    while a phase writes to it."""

    def __init__(self, usage: UsageLedger) -> None:
        self.usage = usage
        self.listener: Listener | None = None
        self.last_error: str | None = None
        self.last_error_cause: str | None = None
        self.failures: list[MemoryFailure] = []
        self._calls: list[CallUsage] | None = None

    # --- a turn's bounds -------------------------------------------------------------

    def begin(self, listener: Listener | None) -> None:
        """A turn starts: its calls are counted apart, its events go to ``listener``."""
        self.listener = listener
        self._calls = []

    def end(self) -> None:
        """The turn is over (answered and its memory work done, or stopped): its calls
        become one turn of the ledger."""
        self.usage.turns.append(self.turn_usage())
        self._calls = None
        self.listener = None

    def turn_usage(self) -> TurnUsage:
        """The calls of the turn in progress so far."""
        return TurnUsage(tuple(self._calls or ()))

    # --- what the phases report ------------------------------------------------------

    def emit(self, kind: str, detail: str, step: ToolStep | None = None) -> None:
        if self.listener is not None:
            self.listener(TurnEvent(kind, detail, step))

    def record(self, call: CallUsage) -> None:
        if self._calls is not None:
            self._calls.append(call)
        else:
            self.usage.add_other([call])

    def models(self) -> dict[str, str]:
        """Role -> model name of the calls made so far in this turn (or operation)."""
        return {call.role: call.model for call in self._calls or () if call.model}

    def clear_errors(self) -> None:
        self.last_error = None
        self.last_error_cause = None
        self.failures = []

    def fail(self, message: str, cause: str, error: Exception | None = None) -> None:
        # A cause may quote a reply or a record: never a credential on screen (SPEC §7).
        cause = redact(cause)
        self.last_error = message
        self.last_error_cause = cause
        # The same failure met again in the same turn (the set read for the selection,
        # then for the extraction) is said once (issue 43).
        if not any(f.message == message and f.cause == cause for f in self.failures):
            self.failures.append(MemoryFailure(message, cause, error))
