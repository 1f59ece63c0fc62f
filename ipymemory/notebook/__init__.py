"""The notebook front end: ``%load_ext ipymemory`` gives ``%%agent`` and ``%memory``.

Python helpers for notebooks and tests:

* :func:`get_session` -- the kernel's :class:`~ipymemory.turn.AgentSession` for a
  directory (the one ``%%agent`` uses), e.g. to read ``history`` or ``pending``;
* :func:`last_turn` -- the output of the latest ``%%agent`` cell (its ``result``,
  its ``review`` widget);
* :func:`use_model` -- make every session use a given model object (e.g. a
  ``ScriptedModel`` for an offline notebook); ``use_model(None)`` goes back to the
  configured one (``ANTHROPIC_API_KEY`` …).
"""

from __future__ import annotations

import atexit
from pathlib import Path
from typing import Any

from .._text import counted
from ..config import describe_model
from ..errors import IPyMemoryError
from ..model import ModelClient
from ..turn import AgentSession
from . import question, shown
from .magics import MemoryMagics
from .output import TurnOutput
from .state import NotebookState

__all__ = [
    "MemoryMagics",
    "NotebookState",
    "get_session",
    "last_turn",
    "load_ipython_extension",
    "unload_ipython_extension",
    "use_model",
]

_STATE: NotebookState | None = None


def load_ipython_extension(ip: Any) -> None:
    """Register the magics and the ``IPyMemory`` configurable (idempotent)."""
    global _STATE
    if _STATE is not None and _STATE.shell is ip:
        return
    if _STATE is not None:  # another shell (tests): leave the old one clean
        unload_ipython_extension(_STATE.shell)
    state = NotebookState(ip)
    magics = MemoryMagics(ip, state)
    ip.register_magics(magics)
    ip.configurables.append(state.config)
    question.install(ip)  # `%memory select … slides?` is a query, not a help request
    shown.install(ip)  # every %memory line of a cell shows its view, not only the last
    state.magics = magics
    # Kernel shutdown waits for a turn's memory work (SPEC §12).
    atexit.register(state.worker.wait_at_exit)
    _STATE = state
    print(loaded_line(state))


def loaded_line(state: NotebookState) -> str:
    """What ``%load_ext ipymemory`` prints: one line saying where memory lives, how
    many records it holds -- the user-wide ones too, which turns inject as well (issue
    44) -- and which model answers (or what is wrong)."""
    try:
        session = state.session(state.settings())
        readable = session.store.readable()
    except IPyMemoryError as e:  # a bad setting or an unreadable set: say so, still loaded
        return f"ipymemory loaded; memory is not usable yet: {e}"
    model = describe_model(session.model) or "no model (set ANTHROPIC_API_KEY)"
    records = counted(len(readable.entries), "record") + _user_wide(session)
    if readable.unreadable:  # the others are used; writes wait for the fix
        records += f" ({counted(len(readable.unreadable), 'file')} not loading: %memory check)"
    return f"ipymemory: {session.store.root} · {records} · {model} — %memory help"


def _user_wide(session: AgentSession) -> str:
    """`` + N user-wide`` for the user scope's records (nothing when it is off)."""
    try:
        store = session.user_store
        if store is None:
            return ""
        count = len(store.records())
    except IPyMemoryError as e:  # the project's memory still works: say what is wrong
        return f" (user-wide memory unreadable: {e})"
    return f" + {count} user-wide"


def unload_ipython_extension(ip: Any) -> None:
    """Unregister the magics and the configurable; close widgets; forget sessions."""
    global _STATE
    state = _STATE
    if state is None or state.shell is not ip:
        return
    table = ip.magics_manager.magics
    for kind, name in (("cell", "agent"), ("line", "memory")):
        # Only ours: another extension may have taken the name since.
        if getattr(table[kind].get(name), "__self__", None) is state.magics:
            del table[kind][name]
    if ip.magics_manager.registry.get(MemoryMagics.__name__) is state.magics:
        del ip.magics_manager.registry[MemoryMagics.__name__]
    for configurable in (state.config, state.magics):
        if configurable in ip.configurables:
            ip.configurables.remove(configurable)
    question.uninstall(ip)
    shown.uninstall(ip)
    state.close()
    atexit.unregister(state.worker.wait_at_exit)
    _STATE = None


def _state() -> NotebookState:
    if _STATE is None:
        raise RuntimeError("ipymemory is not loaded: run %load_ext ipymemory first")
    return _STATE


def _settled() -> NotebookState:
    """The state, after the memory work of an earlier ``%%agent`` cell (SPEC §12);
    KeyboardInterrupt if that wait was interrupted (the work stopped)."""
    state = _state()
    if state.settle() is not None:
        raise KeyboardInterrupt
    return state


def get_session(directory: str | Path | None = None) -> AgentSession:
    """The session ``%%agent`` uses for ``directory`` (default: the configured one),
    once the memory work of an earlier turn is done."""
    state = _settled()
    return state.session(
        state.settings({"directory": str(directory) if directory is not None else None})
    )


def last_turn() -> TurnOutput | None:
    """The output of the latest ``%%agent`` cell (``.result``, ``.review``), or None,
    once its memory work is done."""
    turn: TurnOutput | None = _settled().last_turn
    return turn


def use_model(model: ModelClient | None) -> None:
    """Use ``model`` for every ``%%agent`` / ``%memory`` call (None: the configured one)."""
    _state().pin(model)
