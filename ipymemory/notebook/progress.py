"""A progress line under an ``%%agent`` cell, updated in place from the turn's events.

Its clock ticks: a small thread redraws the line every ``PROGRESS_TICK_SECONDS`` even
when no event arrives (a slow model call, a long tool), and runs the tick hooks (the
live answer flushes its last throttled piece there). The line says which phase the turn
is in -- before the answer, then the memory work after it -- with the time spent in it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

from IPython.display import DisplayHandle

from .. import _constants as C
from .._text import escape
from ..store.lock import LockWait, reporting_lock_waits
from ..views._static import display_bundle, esc, update_bundle
from .terminal import TerminalScreen

__all__ = ["ProgressLine"]

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_WHAT = {
    "selecting": "selecting memories",
    "model": "waiting for the model",
    "text": "writing the answer",
    "tool": "running a tool",
    "step": "tool done",
    "extracting": "extracting memories",
    "screening": "checking which of your words held memories state",
    "consolidating": "consolidating memories",
    "checking": "checking the answer against memories",
    "summarizing": "summarising older history",
    "done": "done",
}


class ProgressLine:
    """One output line, replaced on every event and on every tick of its clock; in a
    terminal (``screen``), redrawn in place there or printed when its phase changes."""

    def __init__(self, tick: float | None = None, *, screen: TerminalScreen | None = None) -> None:
        self._screen = screen
        self._handle: DisplayHandle | None = None
        self._start = time.monotonic()
        self._answered: float | None = None
        self._what = "starting the turn"
        self._ticks = 0
        self._tick = C.PROGRESS_TICK_SECONDS if tick is None else tick
        self._hooks: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._listening = contextlib.ExitStack()
        self._final: str | None = None

    def start(self, message: str = "starting the turn") -> None:
        self._what = message
        if self._screen is not None:
            self._screen.status(self._line(), self._what)
        else:
            self._handle = display_bundle(self._bundle(self._line()))
        # Until finish(): a commit waiting for the memory lock shows it on this line.
        self._listening.enter_context(reporting_lock_waits(self.lock_wait))
        self._thread = threading.Thread(target=self._run, name="ipymemory-progress", daemon=True)
        self._thread.start()

    def on_tick(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` on every tick of the clock (from the clock's thread)."""
        self._hooks.append(hook)

    def event(self, event: Any) -> None:
        """Show a ``TurnEvent`` (``kind``, ``detail``)."""
        kind = str(getattr(event, "kind", "") or "")
        detail = str(getattr(event, "detail", "") or "")
        if kind == "text" and self._what == _WHAT["text"]:
            return  # every streamed piece is an event; the line changes on the first
        if kind == "answered":
            self._answered = time.monotonic()
            self._what = "answered; memory work follows"
        else:
            what = _WHAT.get(kind, kind or "working")
            # A streamed piece of text is not news for this line, only its kind is.
            self._what = f"{what}: {detail}" if detail and kind != "text" else what
        self._redraw(advance=True)

    def lock_wait(self, wait: LockWait) -> None:
        """Show a wait for the memory lock (``waiting for the memory lock (held since …)``)."""
        self._what = str(wait)
        self._redraw(advance=True)

    def hand_over(self) -> None:
        """The cell ends before the turn does (its memory work goes on on a worker,
        SPEC §12): stop listening for lock waits in the cell's context (a context
        variable, reset where it was set); the worker reports its own to
        :meth:`lock_wait`. The clock keeps ticking until :meth:`finish`."""
        self._listening.close()

    def finish(self, message: str) -> None:
        """Stop the clock and show ``message`` for good (from any thread)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        self._listening.close()
        with self._lock:
            self._final = message
            if self._screen is not None:
                self._screen.final(message)
            else:
                self._show(message)

    def show_again(self) -> None:
        """Publish the line as it stands once more (see ``MemorySlots.show_again``)."""
        with self._lock:
            if self._screen is None:
                self._show(self._final if self._final is not None else self._line())

    def elapsed(self) -> float:
        return time.monotonic() - self._start

    @property
    def answer_seconds(self) -> float | None:
        """When the answer was complete (seconds after the start), if it was."""
        return None if self._answered is None else self._answered - self._start

    def memory_seconds(self) -> float:
        """Time spent after the answer (0 before it)."""
        return 0.0 if self._answered is None else time.monotonic() - self._answered

    # --- drawing -------------------------------------------------------------------

    def _line(self) -> str:
        spinner = _SPINNER[self._ticks % len(_SPINNER)]
        if self._answered is None:
            return f"{spinner} {self._what} ({self.elapsed():.1f} s)"
        answered = self._answered - self._start
        return (
            f"{spinner} memory: {self._what} ({self.memory_seconds():.1f} s) "
            f"· answered in {answered:.1f} s"
        )

    def _redraw(self, *, advance: bool) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            if advance:
                self._ticks += 1
            self._show(self._line())

    def _run(self) -> None:
        while not self._stop.wait(self._tick):
            self._redraw(advance=True)
            for hook in list(self._hooks):
                try:
                    hook()
                except Exception:  # a display that cannot redraw must not stop the clock
                    self._hooks.remove(hook)

    def _show(self, text: str) -> None:
        if self._screen is not None:
            self._screen.status(text, self._what)
        elif self._handle is not None:
            update_bundle(self._handle, self._bundle(text))

    @staticmethod
    def _bundle(text: str) -> dict[str, str]:
        return {
            "text/plain": escape(text, "terminal"),  # holds tool input the model chose
            "text/html": f'<div class="ipymemory-progress" style="opacity:.75">{esc(text)}</div>',
        }
