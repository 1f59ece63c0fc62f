"""One Anthropic memory store, through the ``anthropic`` SDK (``client.beta.memory_stores``).

What the SDK (2.x) calls, each with the beta header ``anthropic-beta:
agent-memory-2026-07-22`` it adds itself:

* ``GET  /v1/memory_stores/{store}/memories?path_prefix=&limit=&page=&view=basic`` --
  a cursor page ``{"data": [memory…], "next_page": token|null}``; ``basic`` leaves
  ``content`` null but always gives ``content_sha256`` and ``memory_version_id``;
* ``POST /v1/memory_stores/{store}/memories`` ``{"path", "content"}`` -- create;
* ``POST /v1/memory_stores/{store}/memories/{id}`` ``{"content", "precondition":
  {"type": "content_sha256", "content_sha256": …}}`` -- update only if unchanged;
* ``DELETE /v1/memory_stores/{store}/memories/{id}?expected_content_sha256=`` -- delete
  only if unchanged;
* ``GET  /v1/memory_stores/{store}/memory_versions/{id}?view=full`` -- one version: its
  content, ``operation`` (created / modified / deleted) and ``created_by`` (a
  ``session_actor``, ``api_actor``, ``user_actor`` or ``service_account_actor``);
  a redacted one has ``redacted_at`` and no content, path or hash;
* ``GET  /v1/memory_stores/{store}/memory_versions?memory_id=&operation=&created_at[gte]=``
  -- versions, as cursor pages.

A failed precondition is HTTP 409 (``anthropic.ConflictError``). The SDK retries a 409
by default (as a lock timeout): every write here goes through a client copy with
``max_retries=0``, so a precondition failure is never retried blindly; reads keep the
configured retries. SDK errors become :class:`~ipymemory.errors.SyncRemoteError` /
:class:`~ipymemory.errors.SyncPreconditionFailed` (the original as ``__cause__``).
``requests`` counts the HTTP requests made (one per call, one per page).

The SDK is imported on first use: it takes seconds, which no other command pays.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from .. import _constants as C
from ..errors import SyncNotConfigured, SyncPreconditionFailed, SyncRemoteError

__all__ = ["Author", "RemoteMemory", "RemoteStore", "RemoteVersion", "author_of"]

AuthorKind = Literal["session", "api_key", "user", "service_account"]

# created_by.type -> (our kind, the field holding its id), from the SDK's actor types.
_ACTORS: dict[str, tuple[AuthorKind, str]] = {
    "session_actor": ("session", "session_id"),
    "api_actor": ("api_key", "api_key_id"),
    "user_actor": ("user", "user_id"),
    "service_account_actor": ("service_account", "service_account_id"),
}
_DESCRIBED: dict[str, str] = {
    "session": "agent session",
    "api_key": "API key",
    "user": "person",
    "service_account": "service account",
}


@dataclass(frozen=True)
class Author:
    """Who wrote a version: an agent's session (through the store's mount), an API key,
    a person (the Console) or a service account."""

    kind: AuthorKind
    id: str

    def describe(self) -> str:
        return f"{_DESCRIBED[self.kind]} {self.id}"

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "id": self.id}


def author_of(actor: Any) -> Author | None:
    """The :class:`Author` of an SDK actor object (None: not recorded, or a kind this
    SDK does not know)."""
    if actor is None:
        return None
    known = _ACTORS.get(str(getattr(actor, "type", "")))
    if known is None:
        return None
    ident = getattr(actor, known[1], None)
    return Author(known[0], ident) if isinstance(ident, str) and ident else None


@dataclass(frozen=True)
class RemoteMemory:
    """A memory as a ``basic`` listing shows it (no content)."""

    id: str
    path: str
    sha256: str
    size: int
    version_id: str
    updated_at: datetime


@dataclass(frozen=True)
class RemoteVersion:
    """One version of a memory; ``content``, ``path`` and ``sha256`` are None when it
    was redacted (``redacted_at``) or is a deletion."""

    id: str
    memory_id: str
    operation: str
    path: str | None
    content: str | None
    sha256: str | None
    created_at: datetime
    author: Author | None
    redacted_at: datetime | None = None
    redacted_by: Author | None = None


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise SyncRemoteError(f"the memory store answered without a valid {what}: {value!r}")
    return value


def _when(value: Any, what: str) -> datetime:
    if not isinstance(value, datetime):
        raise SyncRemoteError(f"the memory store answered without a valid {what}: {value!r}")
    return value


def _memory(item: Any) -> RemoteMemory:
    size = getattr(item, "content_size_bytes", None)
    return RemoteMemory(
        id=_text(getattr(item, "id", None), "memory id"),
        path=_text(getattr(item, "path", None), "memory path"),
        sha256=_text(getattr(item, "content_sha256", None), "content_sha256"),
        size=size if isinstance(size, int) else 0,
        version_id=_text(getattr(item, "memory_version_id", None), "memory_version_id"),
        updated_at=_when(getattr(item, "updated_at", None), "updated_at"),
    )


def _version(item: Any) -> RemoteVersion:
    def optional(name: str) -> str | None:
        value = getattr(item, name, None)
        return value if isinstance(value, str) else None

    redacted = getattr(item, "redacted_at", None)
    return RemoteVersion(
        id=_text(getattr(item, "id", None), "version id"),
        memory_id=_text(getattr(item, "memory_id", None), "memory id"),
        operation=_text(getattr(item, "operation", None), "operation"),
        path=optional("path"),
        content=optional("content"),
        sha256=optional("content_sha256"),
        created_at=_when(getattr(item, "created_at", None), "created_at"),
        author=author_of(getattr(item, "created_by", None)),
        redacted_at=redacted if isinstance(redacted, datetime) else None,
        redacted_by=author_of(getattr(item, "redacted_by", None)),
    )


@contextlib.contextmanager
def _remote_errors(what: str) -> Iterator[None]:
    import anthropic

    try:
        yield
    except anthropic.ConflictError as e:
        raise SyncPreconditionFailed(
            f"{what}: HTTP 409 ({_message(e)})", status_code=e.status_code
        ) from e
    except anthropic.APIStatusError as e:
        raise SyncRemoteError(
            f"{what}: HTTP {e.status_code} ({_message(e)})", status_code=e.status_code
        ) from e
    except anthropic.APIConnectionError as e:
        raise SyncRemoteError(f"{what}: the memory store could not be reached ({e})") from e
    except anthropic.AnthropicError as e:  # an answer the SDK could not read
        raise SyncRemoteError(f"{what}: {e}") from e


def _message(error: Any) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            kind = inner.get("type")
            return f"{kind}: {inner['message']}" if isinstance(kind, str) else inner["message"]
    return str(getattr(error, "message", error))


class RemoteStore:
    """The memory store ``store_id`` through ``client`` (an ``anthropic.Anthropic``)."""

    def __init__(self, store_id: str, client: Any) -> None:
        if not isinstance(store_id, str) or not store_id.strip() or "/" in store_id:
            raise SyncNotConfigured(f"{store_id!r} is not a memory store id (memstore_…)")
        self.store_id = store_id
        self._client = client
        # Writes carry preconditions: a 409 must reach us, never be retried (module doc).
        self._writer = client.with_options(max_retries=0)
        self.requests = 0

    @classmethod
    def connect(
        cls,
        store_id: str,
        *,
        base_url: str | None = None,
        timeout: float = C.DEFAULT_TIMEOUT,
        max_retries: int = C.DEFAULT_MAX_RETRIES,
        api_key: str | None = None,
    ) -> RemoteStore:
        """A client made as the model's is (``ANTHROPIC_API_KEY`` or
        ``ANTHROPIC_AUTH_TOKEN``, ``ANTHROPIC_BASE_URL`` or ``base_url``);
        :class:`SyncNotConfigured` without a key."""
        if not (
            api_key or os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")
        ):
            raise SyncNotConfigured(
                "no API key for the memory store: set ANTHROPIC_API_KEY (as for the model)"
            )
        import anthropic

        client = anthropic.Anthropic(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )
        return cls(store_id, client)

    @property
    def _memories(self) -> Any:
        return self._client.beta.memory_stores.memories

    @property
    def _versions(self) -> Any:
        return self._client.beta.memory_stores.memory_versions

    def _pages(self, first: Any) -> Iterator[list[Any]]:
        self.requests += 1
        page = first()
        while True:
            yield list(page.data or [])
            if not page.has_next_page():
                return
            self.requests += 1
            page = page.get_next_page()

    # --- reading --------------------------------------------------------------------

    def memories(self, prefix: str) -> tuple[RemoteMemory, ...]:
        """Every memory below ``prefix`` (``basic`` view: hashes, no content)."""
        out: list[RemoteMemory] = []
        with _remote_errors(f"listing {self.store_id}{prefix}"):
            for data in self._pages(
                lambda: self._memories.list(
                    self.store_id, path_prefix=prefix, limit=C.SYNC_LIST_PAGE, view="basic"
                )
            ):
                out.extend(_memory(item) for item in data if getattr(item, "type", "") == "memory")
        return tuple(out)

    def version(self, version_id: str) -> RemoteVersion:
        """One version with its content (``full`` view)."""
        with _remote_errors(f"reading version {version_id} of {self.store_id}"):
            self.requests += 1
            got = self._versions.retrieve(version_id, memory_store_id=self.store_id, view="full")
            return _version(got)

    def deletion(self, memory_id: str) -> RemoteVersion | None:
        """The version that deleted ``memory_id`` (None: not retained)."""
        with _remote_errors(f"reading how {memory_id} of {self.store_id} was deleted"):
            self.requests += 1
            page = self._versions.list(
                self.store_id, memory_id=memory_id, operation="deleted", limit=1, view="basic"
            )
            data = list(page.data or [])
            return _version(data[0]) if data else None

    def versions_since(
        self, since: str, max_pages: int = C.SYNC_FEED_MAX_PAGES
    ) -> tuple[tuple[RemoteVersion, ...], bool]:
        """The versions written at or after ``since`` (an RFC 3339 time), whole store,
        and whether that was all of them (False: more than ``max_pages`` pages; the
        caller then lists the memories instead)."""
        out: list[RemoteVersion] = []
        with _remote_errors(f"listing the versions of {self.store_id} since {since}"):
            self.requests += 1
            page = self._versions.list(
                self.store_id, created_at_gte=since, limit=C.SYNC_LIST_PAGE, view="basic"
            )
            for index in range(max_pages):
                out.extend(_version(item) for item in page.data or [])
                if not page.has_next_page():
                    return tuple(out), True
                if index + 1 == max_pages:
                    break
                self.requests += 1
                page = page.get_next_page()
        return tuple(out), False

    # --- writing (never retried: see the module docstring) ----------------------------

    def create(self, path: str, content: str) -> RemoteMemory:
        """A new memory at ``path``; :class:`SyncPreconditionFailed` if one is there."""
        with _remote_errors(f"creating {path} in {self.store_id}"):
            self.requests += 1
            got = self._writer.beta.memory_stores.memories.create(
                self.store_id, path=path, content=content
            )
            return _memory(got)

    def update(self, memory_id: str, content: str, expected_sha256: str) -> RemoteMemory:
        """``memory_id``'s new content, only if its content is still ``expected_sha256``
        (else :class:`SyncPreconditionFailed`, nothing written)."""
        with _remote_errors(f"updating {memory_id} in {self.store_id}"):
            self.requests += 1
            got = self._writer.beta.memory_stores.memories.update(
                memory_id,
                memory_store_id=self.store_id,
                content=content,
                precondition={"type": "content_sha256", "content_sha256": expected_sha256},
            )
            return _memory(got)

    def delete(self, memory_id: str, expected_sha256: str) -> None:
        """Delete ``memory_id`` only if its content is still ``expected_sha256``."""
        with _remote_errors(f"deleting {memory_id} in {self.store_id}"):
            self.requests += 1
            self._writer.beta.memory_stores.memories.delete(
                memory_id, memory_store_id=self.store_id, expected_content_sha256=expected_sha256
            )
