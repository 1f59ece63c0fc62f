"""The model boundary: one small protocol, its reply type and the "no model" client.

Everything above this package speaks plain Messages-API dicts and gets back a frozen
:class:`ModelReply`, so the turn logic and the side-queries never touch SDK types and
tests or notebooks can swap in another :class:`ModelClient` (e.g. ``ScriptedModel``).
A client signals failure with a :class:`~ipymemory.errors.ModelError` subclass.

Who makes a call (the agent or a side-query, :data:`~ipymemory.model.usage.ROLES`) is
not an argument of the protocol, so a custom client written against it keeps working;
the side-queries mark their calls with :func:`calling_as` and a client that cares (the
scripted one, replying per role) reads :func:`current_role`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .._encodable import encodable_data
from ..errors import ModelNotConfigured
from .usage import Usage

__all__ = [
    "NO_MODEL_REASON",
    "ModelClient",
    "ModelReply",
    "NoModel",
    "StreamingModelClient",
    "cached_system",
    "calling_as",
    "current_role",
    "takes_output_schema",
]

NO_MODEL_REASON = "no model configured (set ANTHROPIC_API_KEY)"

# The role of the calls made in this context; a call nobody marked is the agent's.
_ROLE: ContextVar[str] = ContextVar("ipymemory_model_role", default="main")


@contextmanager
def calling_as(role: str) -> Iterator[None]:
    """The model calls made inside are ``role``'s (``selector``, ``extractor``, …)."""
    token = _ROLE.set(role)
    try:
        yield
    finally:
        _ROLE.reset(token)


def current_role() -> str:
    """Whose call this is: ``main`` (the agent) unless a :func:`calling_as` says else."""
    return _ROLE.get()


@dataclass(frozen=True)
class ModelReply:
    """A model's reply: content blocks as plain dicts, the stop reason and usage."""

    content: tuple[dict[str, Any], ...]
    stop_reason: str | None
    usage: Usage = field(default_factory=Usage)
    model: str = ""

    def __post_init__(self) -> None:
        # A model's text enters here, whichever client made the reply (ipymemory._encodable).
        object.__setattr__(self, "content", tuple(encodable_data(dict(b)) for b in self.content))

    @property
    def text(self) -> str:
        """All text blocks joined (no separator), as the model wrote them."""
        return "".join(
            b.get("text", "")
            for b in self.content
            if b.get("type") == "text" and isinstance(b.get("text"), str)
        )

    @property
    def tool_uses(self) -> tuple[dict[str, Any], ...]:
        return tuple(b for b in self.content if b.get("type") == "tool_use")


@runtime_checkable
class ModelClient(Protocol):
    """Anything that can answer a Messages-API request (or raise a ``ModelError``):
    an object whose ``create`` takes the keyword arguments ``system``, ``messages``,
    ``max_tokens``, ``tools`` and ``model`` and returns a :class:`ModelReply`. Taking
    ``output_schema`` too is optional (:func:`takes_output_schema`): a client that does
    not is called without it."""

    def create(
        self,
        *,
        system: str | list[dict[str, Any]],
        messages: list[dict[str, Any]],
        max_tokens: int,
        tools: list[dict[str, Any]] | None = None,
        model: str | None = None,
        output_schema: dict[str, Any] | None = None,
    ) -> ModelReply:
        """One request. ``output_schema`` (side-queries) asks for a reply matching that
        JSON schema (structured outputs); a client that cannot honour it may ignore
        it: the caller validates the reply either way."""
        ...


@runtime_checkable
class StreamingModelClient(ModelClient, Protocol):
    """A client that can also stream a reply: ``on_text`` gets each piece of text as it
    arrives, and the return value is the whole reply, as from ``create``. The agent's
    tool loop streams when its client has this; side-queries never do."""

    def stream(
        self,
        *,
        system: str | list[dict[str, Any]],
        messages: list[dict[str, Any]],
        max_tokens: int,
        on_text: Callable[[str], None],
        tools: list[dict[str, Any]] | None = None,
        model: str | None = None,
    ) -> ModelReply: ...


def takes_output_schema(client: ModelClient) -> bool:
    """Whether ``client.create`` takes ``output_schema`` (by name, or as ``**kwargs``).
    A client written without structured outputs in mind is called without it (issue 43:
    it used to fail every side-query with a TypeError); one whose signature cannot be
    read is given it."""
    try:
        parameters = inspect.signature(client.create).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "output_schema" or p.kind is p.VAR_KEYWORD for p in parameters)


class NoModel:
    """The "no model configured" state: every call raises :class:`ModelNotConfigured`."""

    def __init__(self, reason: str = NO_MODEL_REASON) -> None:
        self.reason = reason

    def create(
        self,
        *,
        system: str | list[dict[str, Any]],
        messages: list[dict[str, Any]],
        max_tokens: int,
        tools: list[dict[str, Any]] | None = None,
        model: str | None = None,
        output_schema: dict[str, Any] | None = None,
    ) -> ModelReply:
        raise ModelNotConfigured(self.reason)

    def __repr__(self) -> str:
        return f"NoModel({self.reason!r})"


def cached_system(text: str) -> list[dict[str, Any]]:
    """A system prompt as one text block marked for Anthropic prompt caching."""
    return [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]
