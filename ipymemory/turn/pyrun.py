"""Running ``run_python``'s code: in its own thread, under a time limit, with only that
thread's output captured.

* **Output.** While a run is active, ``sys.stdout`` and ``sys.stderr`` are routers: a
  write from a thread with a run registered goes to that run's (bounded) buffer, every
  other write goes on to the stream that was there before, at once -- so another
  thread's output (a progress bar, a logging handler, another cell's background job)
  still reaches the notebook or terminal. The routers are removed when the last run
  ends, unless something else replaced them meanwhile (then that replacement stays;
  an idle router only forwards). Threads the code itself starts are not captured.
* **Time limit.** The code runs in a daemon thread; the caller waits at most
  ``timeout`` seconds. Then an exception is raised inside the code's thread
  (``PyThreadState_SetAsyncExc``, CPython): pure-Python code stops at its next
  bytecode. Code blocked in C (``time.sleep``, a socket read) or swallowing every
  exception cannot be stopped that way: it keeps running in the background, and
  the result says so. A ``KeyboardInterrupt`` in the caller while waiting is passed on
  to the code's thread and re-raised.
"""

from __future__ import annotations

import ctypes
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

__all__ = ["CodeInterrupted", "RunOutcome", "run_with_limit"]

# How long to wait for the code's thread after interrupting it.
_STOP_GRACE_SECONDS = 1.0


class CodeInterrupted(BaseException):
    """Raised inside the code's thread when its time is up (a BaseException, so that
    ``except Exception`` in the user's code does not swallow it)."""


class _Capture:
    """One run's output of one stream, kept up to ``limit`` characters."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0

    def write(self, text: str) -> int:
        room = self.limit - self.size
        if room > 0:
            self.parts.append(text[:room])
            self.size += min(len(text), room)
        self.dropped += max(len(text) - max(room, 0), 0)
        return len(text)

    def value(self) -> str:
        return "".join(self.parts)


_lock = threading.Lock()
_captures: dict[int, dict[str, _Capture]] = {}  # thread ident -> stream name -> capture


class _Router:
    """Stands in for ``sys.<name>`` while runs are active (see the module docstring)."""

    def __init__(self, name: str, original: TextIO) -> None:
        self._name = name
        self._original = original

    def _target(self) -> Any:
        capture = _captures.get(threading.get_ident())
        return capture[self._name] if capture is not None else self._original

    def write(self, text: str) -> int:
        return int(self._target().write(text))

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        target = self._target()
        if target is self._original:
            target.flush()

    def __getattr__(self, attr: str) -> Any:  # encoding, isatty, fileno, ...
        return getattr(self._original, attr)


_STREAMS = ("stdout", "stderr")


def _register(ident: int, limit: int) -> dict[str, _Capture]:
    import sys

    with _lock:
        for name in _STREAMS:
            current = getattr(sys, name)
            if not isinstance(current, _Router):
                setattr(sys, name, _Router(name, current))
        captures = {name: _Capture(limit) for name in _STREAMS}
        _captures[ident] = captures
        return captures


def _unregister(ident: int) -> None:
    import sys

    with _lock:
        _captures.pop(ident, None)
        if _captures:
            return
        for name in _STREAMS:
            current = getattr(sys, name)
            if isinstance(current, _Router):
                setattr(sys, name, current._original)


def _raise_in(thread: threading.Thread, exc_type: type[BaseException]) -> bool:
    """Ask CPython to raise ``exc_type`` in ``thread``; False if it cannot."""
    if thread.ident is None:
        return False
    try:
        set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except AttributeError:  # not CPython
        return False
    ident = ctypes.c_ulong(thread.ident)
    changed = set_async_exc(ident, ctypes.py_object(exc_type))
    if changed > 1:  # cannot happen for one ident; undo rather than hit other threads
        set_async_exc(ident, None)
        return False
    return bool(changed == 1)


@dataclass(frozen=True)
class RunOutcome:
    """What a run produced. ``timed_out``: the limit was reached; ``still_running``:
    the code could not be stopped and goes on in the background."""

    stdout: str
    stderr: str
    value_repr: str | None = None
    error: str | None = None
    timed_out: bool = False
    still_running: bool = False
    dropped: int = 0


def run_with_limit(
    body: Callable[[], str | None], *, timeout: float, output_limit: int
) -> RunOutcome:
    """Run ``body`` (returns the repr of a last expression, or ``None``) in its own
    thread; see the module docstring. A ``KeyboardInterrupt`` or ``SystemExit`` raised
    by the code is re-raised here; any other exception becomes ``error`` (a traceback).
    """
    state: dict[str, Any] = {}
    registered = threading.Event()

    def work() -> None:
        ident = threading.get_ident()
        try:
            state["captures"] = _register(ident, output_limit + 1)
        finally:
            registered.set()  # never leave the caller waiting
        try:
            state["value"] = body()
        except CodeInterrupted:
            state["interrupted"] = True
        except Exception:
            state["error"] = traceback.format_exc(limit=-5)
        except BaseException as e:  # KeyboardInterrupt, SystemExit: the caller's to handle
            state["raised"] = e
        finally:
            _unregister(ident)

    thread = threading.Thread(target=work, name="ipymemory-run_python", daemon=True)
    thread.start()
    registered.wait()
    try:
        thread.join(timeout)
        timed_out = thread.is_alive()
        if timed_out:
            _raise_in(thread, CodeInterrupted)
            thread.join(_STOP_GRACE_SECONDS)
    except KeyboardInterrupt:
        _raise_in(thread, KeyboardInterrupt)
        thread.join(_STOP_GRACE_SECONDS)
        raise
    finally:
        assert thread.ident is not None
        _unregister(thread.ident)  # a thread still running writes to the notebook now
    raised = state.get("raised")
    if raised is not None:
        raise raised
    captures: dict[str, _Capture] = state["captures"]
    return RunOutcome(
        stdout=captures["stdout"].value(),
        stderr=captures["stderr"].value(),
        value_repr=state.get("value"),
        error=state.get("error"),
        timed_out=timed_out,
        still_running=thread.is_alive(),
        dropped=sum(c.dropped for c in captures.values()),
    )
