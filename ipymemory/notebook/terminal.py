"""``%%agent`` in a terminal IPython: the live parts written once (issue 43).

A terminal cannot replace what it printed: IPython's own display publisher prints each
update of an output anew, so the live answer re-rendered while it streams appeared
dozens of times (72 KB of scrollback for a 2.4 KB answer) and every tick of the progress
line was a new line. In a terminal the live parts of a turn -- the progress line, the
answer as it streams, each tool step -- go to the shell's stdout through one
:class:`TerminalScreen` instead:

* stdout a TTY: the progress line is redrawn in place (carriage return, erase the line);
  the answer is appended as it streams, each piece once (the progress line steps aside
  while it does); a tool step is printed once, above the progress line;
* stdout not a TTY (a pipe, a log file): plain appended text -- the answer once, each
  step once, the progress line only when its phase changes, one line each, and no
  control sequences.

Every text is escaped for a terminal first (SPEC §7: the model's text and a tool's
input cannot send escape sequences). What the turn shows after it ends (the memories
used, the review) is displayed as in any shell.
"""

from __future__ import annotations

import threading
from typing import TextIO

from .._text import escape

__all__ = ["TerminalScreen"]

_ERASE_LINE = "\r\x1b[2K"  # back to the line's start, erase it: the line is redrawn


class TerminalScreen:
    """Where a terminal turn's live parts are written (see the module docstring)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        isatty = getattr(stream, "isatty", None)
        self.tty = bool(isatty()) if callable(isatty) else False
        self._status: str | None = None  # the progress line drawn now (TTY)
        self._phase: str | None = None  # the last phase printed (not a TTY)
        self._open = False  # answer text written whose line is not ended
        self._closed = False
        self._lock = threading.Lock()

    def status(self, line: str, phase: str) -> None:
        """The progress line is ``line``; ``phase`` is what it says without its clock
        (a pipe gets a line only when that changes)."""
        with self._lock:
            if self._closed or self._open:
                return  # the streaming answer is the news (and owns the last line)
            line = escape(line, "terminal")
            if self.tty:
                self._write(f"{_ERASE_LINE}{line}")
                self._status = line
            elif phase != self._phase:
                self._write(f"{line}\n")
            self._phase = phase

    def text(self, piece: str) -> None:
        """A piece of the answer, appended as it arrives."""
        if not piece:
            return
        with self._lock:
            self._clear_status()
            self._write(escape(piece, "terminal"))
            self._open = not piece.endswith("\n")

    def end_text(self) -> None:
        """The answer (or the text before a tool call) is complete: end its line."""
        with self._lock:
            self._end_text()

    def block(self, text: str) -> None:
        """A whole output (a tool step), printed once above the progress line."""
        with self._lock:
            self._clear_status()
            self._end_text()
            self._write(f"{escape(text, 'terminal')}\n")

    def final(self, message: str) -> None:
        """The progress line's last word, for good (a new line after it)."""
        with self._lock:
            self._clear_status()
            self._end_text()
            self._write(f"{escape(message, 'terminal')}\n")
            self._closed = True

    def _clear_status(self) -> None:
        if self._status is not None:
            self._write(_ERASE_LINE)
            self._status = None

    def _end_text(self) -> None:
        if self._open:
            self._write("\n")
            self._open = False

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):  # a closed terminal must not break the turn
            pass
