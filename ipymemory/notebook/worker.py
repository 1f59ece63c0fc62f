"""The kernel's memory worker: an ``%%agent`` turn's memory work after its cell ended.

With ``background_memory`` on (SPEC §12) a cell ends with its answer; extraction,
screening, review and consolidation run here, on one thread of the kernel, one turn at a
time. Whatever comes next through ipymemory -- the next ``%%agent``, any ``%memory``
command, ``get_session()`` / ``last_turn()``, the kernel's shutdown -- calls
:meth:`MemoryWorker.settle` first: it waits for that work, saying so in the running
cell, then has the finished turn publish its outputs once more (see
:class:`~ipymemory.notebook.output.MemorySlots`).

Interrupting the wait (Ctrl-C, the stop button) stops the work the way Ctrl-C stopped
it when it ran in the cell: a ``KeyboardInterrupt`` is raised in the worker thread,
where the session's own handling keeps today's guarantees (nothing partial written; the
extraction cursor does not move, so the next turn reads this turn again). A thread
cannot be interrupted inside a blocking call: a model request in flight ends first.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..views import MessageView
from ..views._static import display_bundle, esc, update_bundle

__all__ = ["MemoryWorker"]

_JOIN_SECONDS = 0.1  # a wait polls the thread this often, so Ctrl-C reaches it


@dataclass
class _Job:
    """One turn's memory work: ``memory`` (may be stopped) returns its outcome or
    raises; ``show`` displays that outcome (or the exception) in the turn's cell;
    ``show_again`` publishes the turn's outputs once more."""

    label: str
    memory: Callable[[], Any]
    show: Callable[[Any], None]
    show_again: Callable[[], None]
    lock: threading.Lock = field(default_factory=threading.Lock)
    stoppable: bool = True
    outcome: Any = None
    shown: bool = False
    thread: threading.Thread | None = None


class MemoryWorker:
    """Runs one turn's memory work at a time, on a daemon thread (see module docstring)."""

    def __init__(self) -> None:
        self._job: _Job | None = None

    @property
    def busy(self) -> bool:
        job = self._job
        return job is not None and job.thread is not None and job.thread.is_alive()

    def start(
        self,
        label: str,
        memory: Callable[[], Any],
        show: Callable[[Any], None],
        show_again: Callable[[], None],
    ) -> None:
        """Run ``memory`` then ``show`` on the worker. The caller settled first."""
        if self.busy:
            raise RuntimeError("the memory worker is busy: settle() first")
        job = _Job(label, memory, show, show_again)
        # A daemon: a kernel that must die is never held up by it (shutdown waits in
        # wait_at_exit, saying so, and a killed kernel leaves the store consistent).
        job.thread = threading.Thread(
            target=_run, args=(job,), name="ipymemory-memory", daemon=True
        )
        self._job = job
        job.thread.start()

    def settle(self) -> MessageView | None:
        """Wait for the memory work in progress, if any (saying so), then have its turn
        show its outputs again. None when it is done; a notice when the wait was
        interrupted (the work was stopped, or is stopping)."""
        job = self._job
        if job is None or job.thread is None:
            return None
        stopped = None
        if job.thread.is_alive():
            stopped = self._wait(job)
            if job.thread.is_alive():  # interrupted twice: it stops on its own
                return stopped
        self._job = None
        if not job.shown:  # a stop that landed after the work had ended
            job.show(job.outcome if job.outcome is not None else KeyboardInterrupt())
        job.show_again()
        return stopped

    def wait_at_exit(self) -> None:
        """At kernel shutdown: wait for the memory work (said on the kernel's stderr,
        the cells' outputs are gone by then)."""
        job = self._job
        if job is not None and job.thread is not None and job.thread.is_alive():
            print(f"ipymemory: waiting for the memory work of {job.label}", file=sys.__stderr__)
            job.thread.join()

    def _wait(self, job: _Job) -> MessageView | None:
        assert job.thread is not None
        started = time.monotonic()
        note = None
        try:  # a Ctrl-C while the notice is being shown stops the work too
            note = display_bundle(_line(f"⏳ waiting for the memory work of {job.label} …"))
            _join(job.thread)
        except KeyboardInterrupt:
            _stop(job)
            note = _say(
                note,
                f"■ stopping the memory work of {job.label} (a model call in flight ends first) …",
            )
            try:
                _join(job.thread)
            except KeyboardInterrupt:
                _say(
                    note,
                    f"■ not waiting: the memory work of {job.label} stops after its model call",
                )
                return MessageView(
                    "The memory work is stopping: it writes nothing more, and the next "
                    "turn's extraction reads that turn again. The next ipymemory command "
                    "waits for it to end.",
                    kind="interrupted",
                )
            _say(note, f"■ stopped the memory work of {job.label}")
            return MessageView(
                "The memory work of the previous turn was stopped: nothing partial was "
                "written, and the next turn's extraction reads that turn again. This "
                "command did not run.",
                kind="interrupted",
            )
        _say(note, f"waited {time.monotonic() - started:.1f} s for the memory work of {job.label}")
        return None


def _run(job: _Job) -> None:
    try:
        try:
            job.outcome = job.memory()
        except BaseException as e:
            job.outcome = e
        with job.lock:
            job.stoppable = False
        job.show(job.outcome)
        job.shown = True
    except BaseException:
        pass


def _stop(job: _Job) -> None:
    """Raise KeyboardInterrupt in the worker thread while it still does memory work."""
    with job.lock:
        if job.stoppable and job.thread is not None and job.thread.ident is not None:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(job.thread.ident), ctypes.py_object(KeyboardInterrupt)
            )


def _join(thread: threading.Thread) -> None:
    # In slices: a join without a timeout would not see Ctrl-C until the thread ends.
    while thread.is_alive():
        thread.join(_JOIN_SECONDS)


def _line(text: str) -> dict[str, str]:
    return {
        "text/plain": text,
        "text/html": f'<div class="ipymemory-wait" style="opacity:.75">{esc(text)}</div>',
    }


def _say(handle: Any, text: str) -> Any:
    """``text`` in the notice ``handle`` shows, or in a new one when there is none yet
    (the wait was interrupted before its notice was shown); the notice's handle."""
    if handle is None:
        return display_bundle(_line(text))
    update_bundle(handle, _line(text))
    return handle
