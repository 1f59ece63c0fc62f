"""The extension's per-kernel state: settings, one session per directory, live widgets."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import ipywidgets as w

from ..config import IPyMemory, Settings, make_model, model_key, resolve
from ..errors import MemoryConfigError
from ..model import ModelClient
from ..review import PendingBatch
from ..store.layout import MemoryDir
from ..store.store import MemoryStore
from ..turn import AgentSession, SessionConfig
from ..views import BatchReview, MessageView
from .caller import cell_context
from .worker import MemoryWorker

__all__ = ["NotebookState"]


class NotebookState:
    """Everything ``%load_ext ipymemory`` keeps for one IPython shell.

    ``sessions`` holds one :class:`AgentSession` per workspace directory, so history
    and pending batches survive between cells. ``pinned_model`` (see
    :func:`ipymemory.notebook.use_model`) replaces the configured model, e.g. with a
    ``ScriptedModel`` for offline notebooks.
    """

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.config = IPyMemory(parent=shell)
        self.sessions: dict[Path, AgentSession] = {}
        self.pinned_model: ModelClient | None = None
        self._model_keys: dict[Path, object] = {}
        self.reviews: dict[str, BatchReview] = {}
        self.widgets: list[w.Widget] = []
        self.magics: Any = None  # the registered MemoryMagics (set by the loader)
        self.last_turn: Any = None  # the TurnOutput of the latest %%agent cell
        self.worker = MemoryWorker()  # one memory phase at a time in this kernel

    def settings(self, overrides: Mapping[str, object] | None = None) -> Settings:
        """Resolve settings: ``overrides`` (magic arguments) → %config → env → default."""
        return resolve(self.config, overrides)

    def session(self, settings: Settings) -> AgentSession:
        """The session for ``settings.directory``, brought up to date with ``settings``
        (every use: a ``%config`` change reaches the running session)."""
        directory = settings.directory
        session = self.sessions.get(directory)
        if session is None:
            problem = MemoryDir.of(directory).workspace_problem()
            if problem is not None:
                # A typo in --dir would otherwise show an empty set, then fail on commit.
                origin = settings.origin.get("directory", "default")
                raise MemoryConfigError(f"{directory}: {problem} (the workspace; set by {origin})")
            session = AgentSession(
                directory,
                model=self._model(settings),
                config=SessionConfig.from_settings(settings),
                store=MemoryStore(directory, lock_timeout=settings.lock_timeout),
            )
            session.caller = lambda: cell_context(self.shell)
            self.sessions[directory] = session
        self._apply(session, settings)
        return session

    def _apply(self, session: AgentSession, settings: Settings) -> None:
        """The one place a running session takes its settings: every setting it reads
        while it runs (the turn's, the model's, the store's lock wait, the pending
        expiry) comes from here, for a new session and for a live one alike."""
        session.model = self._model(settings)
        session.reconfigure(SessionConfig.from_settings(settings))
        session.store.lock_timeout = settings.lock_timeout
        session.pending_files.expiry_days = settings.pending_expiry_days

    def background(self, settings: Settings) -> bool:
        """Whether ``%%agent``'s memory work runs after the cell ends (SPEC §12): the
        ``background_memory`` setting, else on in a Jupyter kernel (a shell with a
        kernel: ipykernel), off in a terminal IPython."""
        if settings.background_memory is not None:
            return settings.background_memory
        return getattr(self.shell, "kernel", None) is not None

    def settle(self) -> MessageView | None:
        """Wait for the memory work of an earlier cell (see :class:`MemoryWorker`)."""
        return self.worker.settle()

    def _model(self, settings: Settings) -> ModelClient:
        if self.pinned_model is not None:
            return self.pinned_model
        # Rebuild the SDK client only when something it is built from changed (a key
        # set after loading the extension, another base URL, …).
        key = model_key(settings)
        session = self.sessions.get(settings.directory)
        if session is not None and self._model_keys.get(settings.directory) == key:
            return session.model
        self._model_keys[settings.directory] = key
        return make_model(settings)

    def pin(self, model: ModelClient | None) -> None:
        """Use ``model`` for every session from now on (``None``: the configured one)."""
        self.pinned_model = model
        self._model_keys.clear()
        for session in self.sessions.values():
            if model is not None:
                session.model = model

    def review(self, session: AgentSession, batch: PendingBatch) -> BatchReview:
        """A review widget for ``batch`` (it follows its batch in the session's registry;
        remembered so unloading the extension closes it)."""
        widget = BatchReview(session, batch)
        self.reviews[batch.id] = widget
        return widget

    def keep(self, widget: w.Widget) -> w.Widget:
        """Remember a widget so unloading the extension closes it."""
        self.widgets.append(widget)
        return widget

    def close(self) -> None:
        """Close every widget and forget sessions (memory on disk is untouched); the
        memory work of a turn ends first."""
        self.worker.wait_at_exit()
        for widget in [*self.reviews.values(), *self.widgets]:
            _close_tree(widget)
        self.reviews.clear()
        self.widgets.clear()
        self.sessions.clear()
        self._model_keys.clear()
        self.pinned_model = None
        self.last_turn = None


def _close_tree(widget: w.Widget) -> None:
    # Widget.close() leaves children open: close the whole tree.
    for child in getattr(widget, "children", ()) or ():
        _close_tree(child)
    widget.close()
