"""One turn's memories in its requests (issue 40, SPEC §13): the tool loop's feed.

Before each request the loop calls :meth:`TurnMemory.before_request`: the first request
carries what phase 1 gave the turn's user message (turn/choosing.py, placed by
turn/carried.py); before a later one, the model's pick -- asked beside the main call
(turn/beside.py) -- is looked at without waiting, and what it names that no request
carries yet joins that request, after its tool results. :meth:`TurnMemory.placed` says
where every block goes. After the answer, :meth:`TurnMemory.finish` waits for a pick
still on its way, notes when it arrived, and returns the turn's
:class:`~ipymemory.turn.trace.SelectionTrace` and what the next turn's first request
is to bring (a pick that arrived after the last request).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from ..sidequery import Selection
from ..store.record import MemoryRecord
from .beside import BesidePick
from .carried import CarriedMemory, Given
from .trace import PickTrace, RequestMemories, SelectionTrace

__all__ = ["Render", "TurnMemory"]

#: Records -> (name, section) as a request writes them now (turn/choosing.py).
Render = Callable[[Sequence[MemoryRecord]], list[tuple[str, str]]]

_WAIT_STEP = 0.1  # seconds: a wait for the pick that an interrupt can stop


class TurnMemory:
    """See the module docstring. ``given`` is what the turn's user message got;
    ``taken(selection)`` is told of the pick once, on the thread that looks at it
    (it counts the call and records a failure)."""

    def __init__(
        self,
        carried: CarriedMemory,
        given: Given,
        *,
        pick: BesidePick | None = None,
        render: Render | None = None,
        taken: Callable[[Selection], None] | None = None,
        carried_in: tuple[str, ...] = (),
    ) -> None:
        self._carried = carried
        self._given = given
        self._pick = pick
        self._render = render
        self._taken_hook = taken
        self._carried_in = carried_in
        self._requests: list[RequestMemories] = []
        self._selection: Selection | None = None  # the pick, once looked at
        self._joined: int | None = None
        self._added: tuple[str, ...] = ()

    @property
    def requests(self) -> tuple[RequestMemories, ...]:
        """What each request so far carried."""
        return tuple(self._requests)

    def before_request(self, number: int, history: Sequence[dict[str, Any]]) -> None:
        """Request ``number`` (from 1) of the turn is about to be built from the
        canonical ``history``: the pick joins it if it has arrived with something new."""
        if number == 1:
            added, rebased = self._given.added, self._given.rebased
        else:
            added, rebased = self._join(number, history), False
        self._requests.append(
            RequestMemories(number, added, len(self._carried.names), rebased=rebased)
        )

    def _join(self, number: int, history: Sequence[dict[str, Any]]) -> tuple[str, ...]:
        if self._pick is None or self._selection is not None or self._render is None:
            return ()
        selection = self._pick.poll()
        if selection is None:
            return ()
        self._take(selection)
        new = self._new(selection)
        if not new:
            return ()
        got = self._carried.join(len(history) - 1, self._render(new))
        self._joined, self._added = number, got.added
        return got.added

    def _take(self, selection: Selection) -> None:
        self._selection = selection
        if self._taken_hook is not None:
            self._taken_hook(selection)

    def _new(self, selection: Selection) -> list[MemoryRecord]:
        if selection.source != "model":  # a failed pick adds nothing: the ranking stands
            return []
        carried = set(self._carried.names)
        return [r for r in selection.records if r.name not in carried]

    def placed(self, cut: int) -> tuple[dict[int, list[str]], list[str]]:
        """Where the blocks go in a request built from canonical message ``cut`` on
        (see :meth:`CarriedMemory.placed`)."""
        return self._carried.placed(cut)

    def finish(self, timeout: float | None = None) -> tuple[SelectionTrace, tuple[str, ...]]:
        """The turn's trace, and the names its next turn's first request is to bring
        (the pick arrived after the last request). Waits for a pick on its way, at most
        ``timeout`` seconds (None: until it arrives; an interrupt stops the wait)."""
        pick = self._pick
        if pick is None:
            return SelectionTrace(tuple(self._requests), None, self._carried_in), ()
        carry: tuple[str, ...] = ()
        if self._selection is None:
            selection = _wait(pick, timeout)
            if selection is not None:
                self._take(selection)
                carry = tuple(r.name for r in self._new(selection))
        selection = self._selection
        trace = PickTrace(
            names=() if selection is None else selection.names,
            added=self._added or carry,
            source="pending" if selection is None else _pick_source(selection),
            reason=None if selection is None else selection.reason,
            seconds=pick.seconds,
            joined=self._joined,
            carried_over=carry,
        )
        return SelectionTrace(tuple(self._requests), trace, self._carried_in), carry


def _pick_source(selection: Selection) -> str:
    return "fallback" if selection.source == "fallback" else "model"


def _wait(pick: BesidePick, timeout: float | None) -> Selection | None:
    end = None if timeout is None else time.monotonic() + timeout
    while True:
        step = _WAIT_STEP if end is None else min(_WAIT_STEP, end - time.monotonic())
        if step <= 0:
            return pick.poll()
        selection = pick.wait(step)
        if selection is not None:
            return selection
