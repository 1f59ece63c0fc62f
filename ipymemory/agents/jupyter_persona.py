"""``@ipymemory`` in Jupyter AI's chat: every message is one ``%%agent`` turn (SPEC §10).

A jupyter-ai 3 persona (found through the entry point group ``jupyter_ai.personas``).
Each message it gets is one :class:`~ipymemory.AgentSession` turn over the memory of
the chat file's directory -- selection, the ``<relevant_memories>`` block, the
read-only file tools (no ``run_python``: there is no kernel behind a chat), the answer
streamed into the chat as it arrives, then extraction and the review -- exactly as a
``%%agent`` cell in a notebook of that directory, with the same settings
(``c.IPyMemory.x`` in the Jupyter server's config, ``IPYMEMORY_*``, the defaults; the
model through ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL``, as the SDK reads them).

One session per chat, so a conversation keeps its history between messages. The batch
a turn extracts waits in that directory's ``.memory/pending/`` (review mode: the Lab
panel, ``%memory pending`` or ``ipymemory pending`` decide it) or is committed as the
commit mode says; a short message after the answer says which. The journal's actor
names the chat (its path under the server's root) and the message id.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from jupyter_ai_persona_manager import BasePersona, PersonaDefaults

from ..config import IPyMemory, Settings, make_model, model_key, resolve
from ..errors import IPyMemoryError
from ..review import BatchStatus
from ..review.listing import where_to_decide
from ..store.store import MemoryStore
from ..turn import AgentSession, SessionConfig, TurnEvent, TurnResult
from ..turn.config import DEFAULT_SYSTEM_PROMPT
from .chat_dirs import chat_workspace

__all__ = ["PERSONA_NAME", "MemoryPersona", "memory_note"]

#: The persona's name in the chat (``@ipymemory``) and on ``POST /api/ai/message/<name>``.
PERSONA_NAME = "ipymemory"

_AVATAR = Path(__file__).with_name("ipymemory.svg")


class MemoryPersona(BasePersona):  # type: ignore[misc]  # jupyter-ai ships no type hints
    """See the module docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._session: AgentSession | None = None
        self._model_key: object = None

    @property
    def defaults(self) -> PersonaDefaults:
        return PersonaDefaults(
            name=PERSONA_NAME,
            description=(
                "An agent with this directory's long-term memory (.memory/): it reads "
                "what is relevant and proposes what is worth keeping, for your review."
            ),
            avatar_path=str(_AVATAR),
            system_prompt=DEFAULT_SYSTEM_PROMPT,
        )

    async def process_message(self, message: Any) -> None:
        try:
            # Off the server's event loop: a new session reads the directory's pending/.
            session = await asyncio.to_thread(self._session_for, self._settings())
        except IPyMemoryError as e:
            self.send_message(f"ipymemory: {e}")
            return
        # The journal's actor: which chat and which message (where a notebook's turn
        # says which notebook and which cell).
        chat = self.get_chat_path(relative=True)
        session.caller = lambda: {"chat": chat, "message_id": message.id}
        loop = asyncio.get_running_loop()
        pieces: asyncio.Queue[str | None] = asyncio.Queue()

        def on_event(event: TurnEvent) -> None:  # on the turn's thread
            if event.kind == "text" and event.detail:
                loop.call_soon_threadsafe(pieces.put_nowait, event.detail)

        def answer() -> Any:
            try:
                return session.answer(message.body, on_event=on_event)
            finally:
                loop.call_soon_threadsafe(pieces.put_nowait, None)

        answering = asyncio.ensure_future(asyncio.to_thread(answer))

        async def reply() -> AsyncIterator[str]:
            # The configured model (AnthropicModel) streams: the chat gets the text as
            # it arrives, the whole answer once the turn's last reply ends.
            while (piece := await pieces.get()) is not None:
                yield piece

        await self.stream_message(reply())
        try:
            answered = await answering
        except IPyMemoryError as e:
            self.send_message(f"ipymemory could not answer: {e}")
            return
        # The answer is in the chat; the memory work follows (SPEC §12).
        result = await asyncio.to_thread(answered.finish)
        note = memory_note(result)
        if note:
            # A message of its own; where the messages are joined into one text (the
            # POST /api/ai/message route joins them as they are) a blank line parts it
            # from the answer, which Markdown ignores at a message's start.
            self.send_message(f"\n\n{note}")

    def _settings(self) -> Settings:
        # c.IPyMemory.x in the server's config plays %config's part (this persona's
        # config is the Jupyter server's, through its persona manager). Only a chat
        # inside the server's root has a memory here (chat_dirs).
        directory = chat_workspace(self.parent.root_dir, self.get_chat_dir())
        return resolve(IPyMemory(parent=self), {"directory": directory}, cwd=directory)

    def _session_for(self, settings: Settings) -> AgentSession:
        """This chat's session, brought up to date with ``settings`` (a chat that moved
        to another directory starts a new one there)."""
        session = self._session
        key = model_key(settings)
        if session is None or session.workspace != settings.directory:
            session = AgentSession(
                settings.directory,
                model=make_model(settings),
                config=SessionConfig.from_settings(settings),
                store=MemoryStore(settings.directory, lock_timeout=settings.lock_timeout),
            )
            self._session, self._model_key = session, key
            return session
        if key != self._model_key:  # a key or endpoint set since: a new client
            session.model, self._model_key = make_model(settings), key
        session.reconfigure(SessionConfig.from_settings(settings))
        session.store.lock_timeout = settings.lock_timeout
        session.pending_files.expiry_days = settings.pending_expiry_days
        return session


def memory_note(result: TurnResult) -> str | None:
    """What the chat is told after the answer about the turn's memory work (None:
    nothing to say)."""
    parts = []
    batch = result.batch
    if batch is not None and batch.committed:
        parts.append(f"Remembered: {', '.join(batch.committed)}.")
    waiting = [b for b in (batch, result.held) if b is not None and b.status is BatchStatus.PENDING]
    for pending in waiting:
        names = ", ".join(r.name for r in pending.items) or "a consolidation plan"
        parts.append(
            f"Proposed for memory, waiting for your review (batch {pending.id}): {names}. "
            f"Decide it {where_to_decide(pending.id)}."
        )
    if result.last_error:
        cause = f": {result.last_error_cause}" if result.last_error_cause else ""
        parts.append(f"{result.last_error}{cause}.")
    return "\n\n".join(parts) or None
