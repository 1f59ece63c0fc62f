"""What a handler works with: the resolved settings, the store, the model, and (in a
notebook) the kernel's session; and what it returns: a view."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..config import Settings, make_model
from ..model import NoModel
from ..store.store import MemoryStore
from ..turn import AgentSession, SessionConfig
from ..views import BatchView, StaticView
from ..views._widgetbase import StaticBundleBox

if TYPE_CHECKING:
    from ..model import ModelClient
    from ..review import PendingBatch

__all__ = ["Context", "View", "static_form"]

# A static view, or a widget that carries one (``static_view()``).
View = StaticView | StaticBundleBox


def static_form(view: View) -> StaticView:
    """The static view behind ``view`` (itself, or a widget's ``static_view()``)."""
    return view if isinstance(view, StaticView) else view.static_view()


class Context:
    """The command line's context: settings resolved once, a store and a model made
    from them on first use, and static views only (no widgets, no session).

    The notebook's context (:class:`ipymemory.notebook.commands.NotebookContext`)
    uses the kernel's session and shows widgets.

    ``proposes``: whether a change such as undo/restore is proposed for the user to
    confirm (the notebook: a batch, like any other commit) rather than applied at once
    (the command line).
    """

    proposes = False
    #: How the user calls a subcommand here (in hints).
    front = "ipymemory"

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._store: MemoryStore | None = None
        self._user_store: MemoryStore | None = None
        self._model: ModelClient | None = None
        self._session: AgentSession | None = None

    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def store(self) -> MemoryStore:
        if self._store is None:
            self._store = MemoryStore(
                self.settings.directory, lock_timeout=self.settings.lock_timeout
            )
        return self._store

    @property
    def user_store(self) -> MemoryStore | None:
        """The user scope's store (SPEC §11), None when ``user_dir`` is off."""
        if self._user_store is None and self.settings.user_dir is not None:
            self._user_store = MemoryStore(
                self.settings.user_dir, lock_timeout=self.settings.lock_timeout
            )
        return self._user_store

    @property
    def model(self) -> ModelClient:
        if self._model is None:
            self._model = make_model(self.settings)
        return self._model

    @property
    def session(self) -> AgentSession:
        """A session for deciding batches from the terminal: no model (deciding asks
        none), no batches of its own; the ones saved in pending/ (proposed by a kernel
        or another agent) are reopened into it on demand
        (:func:`~ipymemory.commands.common.pending_batch`)."""
        if self._session is None:
            self._session = AgentSession(
                self.settings.directory,
                model=NoModel(),
                config=SessionConfig.from_settings(self.settings),
                store=self.store,
            )
        return self._session

    @property
    def model_pinned(self) -> bool:
        """Whether the model was set in code (``use_model``) rather than configured."""
        return False

    def caller(self) -> dict[str, object]:
        """What the front end knows of where the command runs (a notebook and its cell),
        for the journal; nothing on the command line."""
        return {}

    def widget(self, view: StaticView, make: Callable[[], StaticBundleBox]) -> View:
        """``make()``'s interactive form of ``view`` where widgets show; else ``view``."""
        return view

    def review(self, batch: PendingBatch) -> View:
        """What to show for a batch awaiting a decision."""
        return BatchView.of(batch, command_line=not self.proposes)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.settings.directory)!r})"
