"""The model's pick, asked beside the main call (issue 40, SPEC §13).

The first request of a turn never waits for a side-query: it carries a selection made
at once (turn/choosing.py). With ``selector = model`` the side model is asked too, on a
thread started as soon as that selection is known (before the first request is sent),
and the turn goes on without it. The tool loop looks (:meth:`BesidePick.poll`, never
blocking) before each later request; the memory work waits for it
(:meth:`BesidePick.wait`) to note when it arrived and what it carries into the next
turn. A pick never raises: whatever goes wrong on the thread becomes a fallback
selection that says why (the records it adds are then none the first request lacked).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ..sidequery import Selection

__all__ = ["BesidePick"]


class BesidePick:
    """``run`` (the side-query, returning its :class:`Selection`) on a daemon thread
    started now; ``started`` is the turn's start (``time.monotonic()``), from which
    :attr:`seconds` counts."""

    def __init__(self, run: Callable[[], Selection], *, started: float) -> None:
        self.started = started
        self._run = run
        self._done = threading.Event()
        self._result: Selection | None = None
        self._arrived: float | None = None
        thread = threading.Thread(target=self._work, name="ipymemory-model-pick", daemon=True)
        thread.start()

    def _work(self) -> None:
        try:
            result = self._run()
        except BaseException as e:  # a bug must not reach the turn through a thread
            result = Selection((), "fallback", f"the model's pick failed: {type(e).__name__}: {e}")
        self._result = result
        self._arrived = time.monotonic()
        self._done.set()

    def poll(self) -> Selection | None:
        """The pick if it has arrived, else None (never waits)."""
        return self._result if self._done.is_set() else None

    def wait(self, timeout: float | None = None) -> Selection | None:
        """The pick, waiting at most ``timeout`` seconds (None: until it arrives)."""
        self._done.wait(timeout)
        return self.poll()

    @property
    def seconds(self) -> float | None:
        """Seconds from the turn's start to the pick's arrival (None: not yet)."""
        arrived = self._arrived if self._done.is_set() else None
        return None if arrived is None else arrived - self.started
