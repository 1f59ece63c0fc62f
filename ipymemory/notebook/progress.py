"""A progress line under an ``%%agent`` cell, updated in place from the turn's events."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from IPython.display import DisplayHandle

from .._text import escape
from ..store.lock import LockWait, reporting_lock_waits
from ..views._static import display_bundle, esc, update_bundle

__all__ = ["ProgressLine"]

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_WHAT = {
    "selecting": "selecting memories",
    "model": "waiting for the model",
    "tool": "running a tool",
    "extracting": "extracting memories",
    "consolidating": "consolidating memories",
    "summarizing": "summarising older history",
    "done": "done",
}


class ProgressLine:
    """One output line, replaced on every event (no threads: the turn reports)."""

    def __init__(self) -> None:
        self._handle: DisplayHandle | None = None
        self._start = time.monotonic()
        self._ticks = 0
        self._listening = contextlib.ExitStack()

    def start(self, message: str = "starting the turn") -> None:
        self._handle = display_bundle(self._bundle(f"{_SPINNER[0]} {message}…"))
        # Until finish(): a commit waiting for the memory lock shows it on this line.
        self._listening.enter_context(reporting_lock_waits(self.lock_wait))

    def event(self, event: Any) -> None:
        """Show a ``TurnEvent`` (``kind``, ``detail``)."""
        kind = str(getattr(event, "kind", "") or "")
        detail = str(getattr(event, "detail", "") or "")
        self._ticks += 1
        what = _WHAT.get(kind, kind or "working")
        line = f"{_SPINNER[self._ticks % len(_SPINNER)]} {what}"
        if detail:
            line += f": {detail}"
        self._show(f"{line} ({self.elapsed():.1f} s)")

    def lock_wait(self, wait: LockWait) -> None:
        """Show a wait for the memory lock (``waiting for the memory lock (held since …)``)."""
        self._ticks += 1
        self._show(f"{_SPINNER[self._ticks % len(_SPINNER)]} {wait}")

    def finish(self, message: str) -> None:
        self._listening.close()
        self._show(message)

    def elapsed(self) -> float:
        return time.monotonic() - self._start

    def _show(self, text: str) -> None:
        if self._handle is not None:
            update_bundle(self._handle, self._bundle(text))

    @staticmethod
    def _bundle(text: str) -> dict[str, str]:
        return {
            "text/plain": escape(text, "terminal"),  # holds tool input the model chose
            "text/html": f'<div class="ipymemory-progress" style="opacity:.75">{esc(text)}</div>',
        }
