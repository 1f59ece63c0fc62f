"""A local Anthropic memory-store API for tests (binds 127.0.0.1 only).

Written from the installed SDK's types (``anthropic/types/beta/memory_stores/``) and
resources (``anthropic/resources/beta/memory_stores/``); the real ``anthropic`` SDK is
the client, with ``base_url`` pointing here. It serves what the SDK calls:

* ``GET|POST /v1/memory_stores/{store}/memories`` -- list (``path_prefix`` ending in
  ``/``, ``depth``, ``limit`` 1-100 (20 with ``view=full``), ``page``, ``view``; cursor
  pages ``{"data", "next_page"}``) and create (``{"path", "content"}``; a taken path is
  409);
* ``GET|POST|DELETE /v1/memory_stores/{store}/memories/{id}`` -- retrieve, update
  (``content``, ``path``, ``precondition: {"type": "content_sha256", ...}``; a failed
  precondition is 409 and writes nothing; an update that changes nothing adds no
  version) and delete (``expected_content_sha256``, 409 on mismatch);
* ``GET /v1/memory_stores/{store}/memory_versions`` (``memory_id``, ``operation``,
  ``created_at[gte]``, ``created_at[lte]``, ``session_id``, ``api_key_id``,
  ``service_account_id``, newest first) and ``GET …/memory_versions/{id}``, ``POST
  …/memory_versions/{id}/redact``.

Every request must carry the beta header (``agent-memory-2026-07-22`` or
``managed-agents-2026-04-01``) and the test key (the SDK sends it as ``Authorization:
Bearer``; ``x-api-key`` is taken too); what an API request writes is
``created_by`` an ``api_actor``. Writes that do not come over HTTP -- an agent session
through the store's mount (:meth:`MemoryStoreServer.write` with a ``session_actor``), a
person in the Console -- go through the same code, so versions look alike.

Hooks for tests: ``before_write(method, target)`` runs before an HTTP write is applied
(a second writer slipping in between a read and an update); :meth:`hold_after` makes
the n-th HTTP write apply, then hold its answer until :meth:`release` (a client killed
with a write done but unacknowledged); :meth:`hold_read` holds the answer to the n-th
GET of a route (a client killed while reading). ``requests`` logs ``(method, route, query)``,
``bodies`` ``(method, route, body)``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import threading
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

BETAS = ("agent-memory-2026-07-22", "managed-agents-2026-04-01")
API_KEY = "sk-ant-test-memory-store"
API_KEY_ID = "apikey_01TestKeyForSync"
MAX_CONTENT_BYTES = 102_400

_ROUTES = [
    ("memories", re.compile(r"^/v1/memory_stores/(?P<store>[^/]+)/memories$")),
    ("memory", re.compile(r"^/v1/memory_stores/(?P<store>[^/]+)/memories/(?P<id>[^/]+)$")),
    ("versions", re.compile(r"^/v1/memory_stores/(?P<store>[^/]+)/memory_versions$")),
    ("version", re.compile(r"^/v1/memory_stores/(?P<store>[^/]+)/memory_versions/(?P<id>[^/]+)$")),
    (
        "redact",
        re.compile(r"^/v1/memory_stores/(?P<store>[^/]+)/memory_versions/(?P<id>[^/]+)/redact$"),
    ),
]


def session_actor(session_id: str = "sesn_01AgentSession") -> dict[str, str]:
    return {"type": "session_actor", "session_id": session_id}


def user_actor(user_id: str = "user_01Person") -> dict[str, str]:
    return {"type": "user_actor", "user_id": user_id}


def api_actor(api_key_id: str = API_KEY_ID) -> dict[str, str]:
    return {"type": "api_actor", "api_key_id": api_key_id}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message

    def payload(self) -> dict[str, Any]:
        return {"type": "error", "error": {"type": self.kind, "message": self.message}}


@dataclass
class Memory:
    id: str
    path: str
    content: str
    version_id: str
    created_at: datetime
    updated_at: datetime


@dataclass
class Version:
    id: str
    memory_id: str
    operation: str
    path: str | None
    content: str | None
    created_at: datetime
    created_by: dict[str, str] | None
    redacted_at: datetime | None = None
    redacted_by: dict[str, str] | None = None


@dataclass
class Store:
    id: str
    memories: dict[str, Memory] = field(default_factory=dict)
    versions: list[Version] = field(default_factory=list)

    def by_path(self, path: str) -> Memory | None:
        return next((m for m in self.memories.values() if m.path == path), None)


def _rfc3339(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def check_path(path: Any) -> str:
    """The SDK's path rules (``memory_create_params.path``)."""
    if not isinstance(path, str) or not path.startswith("/"):
        raise ApiError(400, "invalid_request_error", "path: must start with '/'")
    segments = path[1:].split("/")
    if not 1 <= len(segments) <= 20 or any(s in ("", ".", "..") for s in segments):
        raise ApiError(400, "invalid_request_error", "path: 1 to 20 non-empty segments")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in path):
        raise ApiError(400, "invalid_request_error", "path: control or format character")
    if unicodedata.normalize("NFC", path) != path or len(path.encode("utf-8")) > 1024:
        raise ApiError(400, "invalid_request_error", "path: not NFC, or over 1,024 bytes")
    return path


def check_content(content: Any) -> str:
    if not isinstance(content, str):
        raise ApiError(400, "invalid_request_error", "content: expected a string")
    if len(content.encode("utf-8")) > MAX_CONTENT_BYTES:
        raise ApiError(400, "invalid_request_error", "content: over 100 kB")
    return content


class MemoryStoreServer:
    """See the module docstring."""

    def __init__(self) -> None:
        self.stores: dict[str, Store] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.bodies: list[tuple[str, str, dict[str, Any]]] = []  # the JSON bodies sent
        self.before_write: Callable[[str, str], None] | None = None
        self.held = threading.Event()
        self._release = threading.Event()
        self._hold_at: int | None = None
        self._http_writes = 0
        self._hold_read: tuple[str, int] | None = None  # (route, the n-th GET of it)
        self._reads: dict[str, int] = {}
        self._ids = itertools.count(1)
        self._clock = datetime(2026, 7, 23, 9, 0, tzinfo=timezone.utc)
        self._lock = threading.RLock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's pool expects
            # Headers and body go out in two writes: without this, Nagle's algorithm
            # and the client's delayed ACK cost ~40 ms per request on a kept-alive socket.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                status, payload, hold = server._handle(
                    self.command, self.path, raw, {k.lower(): v for k, v in self.headers.items()}
                )
                if hold:
                    server._release.wait()
                data = json.dumps(payload).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client is gone (killed): the write stays applied

            do_GET = do_POST = do_DELETE = _serve

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    # --- lifecycle --------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> MemoryStoreServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def add_store(self, store_id: str = "memstore_01TestStore") -> str:
        with self._lock:
            self.stores.setdefault(store_id, Store(store_id))
        return store_id

    def hold_after(self, n: int) -> None:
        """Let the ``n``-th HTTP write from now apply, then hold its answer (``held``
        is set) until :meth:`release`."""
        with self._lock:
            self._hold_at = self._http_writes + n
            self.held.clear()
            self._release.clear()

    def hold_read(self, route: str, n: int) -> None:
        """Answer the ``n``-th GET of ``route`` from now (``"version"``: a version's
        content) only after :meth:`release` (``held`` is set when it arrives)."""
        with self._lock:
            self._hold_read = (route, self._reads.get(route, 0) + n)
            self.held.clear()
            self._release.clear()

    def release(self) -> None:
        self._release.set()

    # --- what tests look at -----------------------------------------------------------

    def count(self, method: str | None = None, route: str | None = None) -> int:
        with self._lock:
            return sum(
                1
                for m, r, _q in self.requests
                if (method is None or m == method) and (route is None or r == route)
            )

    def contents(self, store: str, prefix: str = "/") -> dict[str, str]:
        with self._lock:
            return {
                m.path: m.content
                for m in self.stores[store].memories.values()
                if m.path.startswith(prefix)
            }

    def memory_at(self, store: str, path: str) -> Memory | None:
        with self._lock:
            return self.stores[store].by_path(path)

    def versions_of(self, store: str, memory_id: str) -> list[Version]:
        with self._lock:
            return [v for v in self.stores[store].versions if v.memory_id == memory_id]

    # --- writes that do not come over HTTP (the mount, the Console) --------------------

    def write(
        self, store: str, path: str, content: str, *, by: Mapping[str, str] | None = None
    ) -> Memory:
        """Create or modify the memory at ``path`` as ``by`` (default an agent session
        writing through the mount)."""
        actor = dict(by) if by is not None else session_actor()
        with self._lock:
            found = self.stores[store].by_path(path)
            if found is None:
                return self._create(self.stores[store], path, content, actor)
            return self._update(self.stores[store], found, content, None, actor)

    def remove(self, store: str, path: str, *, by: Mapping[str, str] | None = None) -> None:
        actor = dict(by) if by is not None else session_actor()
        with self._lock:
            found = self.stores[store].by_path(path)
            assert found is not None, path
            self._delete(self.stores[store], found, actor)

    def rename(
        self, store: str, path: str, new_path: str, *, by: Mapping[str, str] | None = None
    ) -> None:
        actor = dict(by) if by is not None else session_actor()
        with self._lock:
            found = self.stores[store].by_path(path)
            assert found is not None, path
            self._update(self.stores[store], found, None, new_path, actor)

    def redact_version(
        self, store: str, version_id: str, *, by: Mapping[str, str] | None = None
    ) -> None:
        actor = dict(by) if by is not None else user_actor()
        with self._lock:
            self._redact(self.stores[store], version_id, actor)

    # --- the model --------------------------------------------------------------------

    def _tick(self) -> datetime:
        # Strictly increasing: two versions never share a time here (the API's do not
        # have to be, which is why clients filter by id too).
        self._clock += timedelta(milliseconds=1)
        return self._clock

    def _id(self, kind: str) -> str:
        return f"{kind}_{next(self._ids):024d}"

    def _version(
        self, store: Store, memory: Memory, operation: str, actor: dict[str, str] | None
    ) -> Version:
        deleted = operation == "deleted"
        version = Version(
            self._id("memver"),
            memory.id,
            operation,
            memory.path,
            None if deleted else memory.content,
            memory.updated_at,
            actor,
        )
        store.versions.append(version)
        return version

    def _create(self, store: Store, path: str, content: str, actor: dict[str, str]) -> Memory:
        check_path(path)
        check_content(content)
        if store.by_path(path) is not None:
            raise ApiError(409, "conflict_error", f"a memory already exists at {path}")
        now = self._tick()
        memory = Memory(self._id("mem"), path, content, "", now, now)
        store.memories[memory.id] = memory
        memory.version_id = self._version(store, memory, "created", actor).id
        return memory

    def _update(
        self,
        store: Store,
        memory: Memory,
        content: str | None,
        path: str | None,
        actor: dict[str, str],
    ) -> Memory:
        if path is not None:
            check_path(path)
            other = store.by_path(path)
            if other is not None and other.id != memory.id:
                raise ApiError(409, "conflict_error", f"a memory already exists at {path}")
        if content is not None:
            check_content(content)
        new_content = memory.content if content is None else content
        new_path = memory.path if path is None else path
        if (new_content, new_path) == (memory.content, memory.path):
            return memory  # nothing changes: no new version
        memory.content, memory.path, memory.updated_at = new_content, new_path, self._tick()
        memory.version_id = self._version(store, memory, "modified", actor).id
        return memory

    def _delete(self, store: Store, memory: Memory, actor: dict[str, str]) -> None:
        del store.memories[memory.id]
        memory.updated_at = self._tick()
        self._version(store, memory, "deleted", actor)

    def _redact(self, store: Store, version_id: str, actor: dict[str, str]) -> Version:
        version = next((v for v in store.versions if v.id == version_id), None)
        if version is None:
            raise ApiError(404, "not_found_error", f"no memory version {version_id}")
        version.content, version.path = None, None
        version.redacted_at, version.redacted_by = self._tick(), actor
        return version

    # --- JSON shapes (types/beta/memory_stores/*.py) -----------------------------------

    @staticmethod
    def _memory_json(store: Store, m: Memory, full: bool) -> dict[str, Any]:
        return {
            "type": "memory",
            "id": m.id,
            "memory_store_id": store.id,
            "path": m.path,
            "content_sha256": sha256(m.content),
            "content_size_bytes": len(m.content.encode("utf-8")),
            "memory_version_id": m.version_id,
            "created_at": _rfc3339(m.created_at),
            "updated_at": _rfc3339(m.updated_at),
            "content": m.content if full else None,
        }

    @staticmethod
    def _version_json(store: Store, v: Version, full: bool) -> dict[str, Any]:
        hidden = v.redacted_at is not None or v.operation == "deleted"
        return {
            "type": "memory_version",
            "id": v.id,
            "memory_id": v.memory_id,
            "memory_store_id": store.id,
            "operation": v.operation,
            "created_at": _rfc3339(v.created_at),
            "created_by": v.created_by,
            "path": v.path,
            "content": v.content if full and not hidden else None,
            "content_sha256": None if hidden or v.content is None else sha256(v.content),
            "content_size_bytes": None
            if hidden or v.content is None
            else len(v.content.encode("utf-8")),
            "redacted_at": None if v.redacted_at is None else _rfc3339(v.redacted_at),
            "redacted_by": v.redacted_by,
        }

    # --- HTTP -------------------------------------------------------------------------

    def _handle(
        self, method: str, target: str, raw: bytes, headers: Mapping[str, str]
    ) -> tuple[int, dict[str, Any], bool]:
        url = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        route, match = next(
            ((name, m) for name, rx in _ROUTES if (m := rx.match(url.path))), ("?", None)
        )
        with self._lock:
            self.requests.append((method, route, query))
        try:
            if match is None:
                raise ApiError(404, "not_found_error", f"no route {method} {url.path}")
            betas = {b.strip() for b in headers.get("anthropic-beta", "").split(",")}
            if not betas & set(BETAS):
                raise ApiError(400, "invalid_request_error", "this endpoint is in beta")
            # The SDK sends the key as a bearer token (x-api-key is what curl users send).
            given = headers.get("x-api-key") or headers.get("authorization", "")
            if given.removeprefix("Bearer ") != API_KEY:
                raise ApiError(401, "authentication_error", "invalid API key")
            body = json.loads(raw) if raw else {}
            with self._lock:
                self.bodies.append((method, route, body))
            writes = (route, method) in {
                ("memories", "POST"),
                ("memory", "POST"),
                ("memory", "DELETE"),
            }
            if writes and self.before_write is not None:
                self.before_write(method, match.groupdict().get("id") or str(body.get("path")))
            with self._lock:
                store = self.stores.get(match["store"])
                if store is None:
                    raise ApiError(404, "not_found_error", f"no memory store {match['store']}")
                payload = self._route(route, method, store, match.groupdict(), query, body)
                hold = False
                if method == "GET":
                    self._reads[route] = self._reads.get(route, 0) + 1
                    if self._hold_read == (route, self._reads[route]):
                        self.held.set()
                        hold = True
                if writes:
                    self._http_writes += 1
                    if self._hold_at is not None and self._http_writes == self._hold_at:
                        self.held.set()
                        hold = True
            return 200, payload, hold
        except ApiError as e:
            return e.status, e.payload(), False

    def _route(
        self,
        route: str,
        method: str,
        store: Store,
        params: dict[str, str],
        query: dict[str, str],
        body: dict[str, Any],
    ) -> dict[str, Any]:
        full = query.get("view") == "full"
        actor = api_actor()
        if route == "memories" and method == "GET":
            return self._list_memories(store, query)
        if route == "memories" and method == "POST":
            return self._memory_json(
                store, self._create(store, body.get("path"), body.get("content"), actor), full
            )
        if route in ("memory", "redact", "version") and params.get("id") is None:
            raise ApiError(404, "not_found_error", "no id")
        if route == "memory":
            memory = store.memories.get(params["id"])
            if memory is None:
                raise ApiError(404, "not_found_error", f"no memory {params['id']}")
            if method == "GET":
                return self._memory_json(store, memory, query.get("view", "full") == "full")
            if method == "DELETE":
                expected = query.get("expected_content_sha256")
                if expected is not None and expected != sha256(memory.content):
                    raise ApiError(409, "conflict_error", "content_sha256 does not match")
                self._delete(store, memory, actor)
                return {"type": "memory_deleted", "id": memory.id}
            precondition = body.get("precondition")
            expected = None if precondition is None else precondition.get("content_sha256")
            if precondition is not None and (
                precondition.get("type") != "content_sha256" or expected != sha256(memory.content)
            ):
                raise ApiError(409, "conflict_error", "precondition failed: content_sha256")
            return self._memory_json(
                store,
                self._update(store, memory, body.get("content"), body.get("path"), actor),
                full,
            )
        if route == "versions":
            return self._list_versions(store, query)
        if route == "version":
            version = next((v for v in store.versions if v.id == params["id"]), None)
            if version is None:
                raise ApiError(404, "not_found_error", f"no memory version {params['id']}")
            return self._version_json(store, version, query.get("view", "full") == "full")
        if route == "redact" and method == "POST":
            return self._version_json(store, self._redact(store, params["id"], actor), True)
        raise ApiError(405, "invalid_request_error", f"{method} not allowed here")

    @staticmethod
    def _limit(query: dict[str, str]) -> int:
        limit = int(query.get("limit", "20"))
        if not 1 <= limit <= 100:
            raise ApiError(400, "invalid_request_error", "limit: 1 to 100")
        return min(limit, 20) if query.get("view") == "full" else limit

    @staticmethod
    def _page(items: list[Any], query: dict[str, str], limit: int) -> tuple[list[Any], str | None]:
        token = query.get("page")
        start = int(token[1:]) if token else 0
        chunk = items[start : start + limit]
        return chunk, (f"p{start + limit}" if start + limit < len(items) else None)

    def _list_memories(self, store: Store, query: dict[str, str]) -> dict[str, Any]:
        prefix = query.get("path_prefix", "/")
        if not prefix.endswith("/"):
            raise ApiError(400, "invalid_request_error", "path_prefix: must end with '/'")
        depth = int(query.get("depth", "0"))
        found = sorted(
            (m for m in store.memories.values() if m.path.startswith(prefix)), key=lambda m: m.path
        )
        items: list[dict[str, Any]] = []
        markers: set[str] = set()
        full = query.get("view") == "full"
        for m in found:
            rest = m.path[len(prefix) :]
            if depth == 1 and "/" in rest:
                marker = prefix + rest.split("/", 1)[0] + "/"
                if marker not in markers:
                    markers.add(marker)
                    items.append({"type": "memory_prefix", "path": marker})
                continue
            items.append(self._memory_json(store, m, full))
        chunk, next_page = self._page(items, query, self._limit(query))
        return {"data": chunk, "next_page": next_page}

    def _list_versions(self, store: Store, query: dict[str, str]) -> dict[str, Any]:
        def when(key: str) -> datetime | None:
            text = query.get(key)
            return None if text is None else datetime.fromisoformat(text.replace("Z", "+00:00"))

        gte, lte = when("created_at[gte]"), when("created_at[lte]")
        actor_filters = {
            "session_id": ("session_actor", "session_id"),
            "api_key_id": ("api_actor", "api_key_id"),
            "service_account_id": ("service_account_actor", "service_account_id"),
        }
        out = []
        for v in reversed(store.versions):  # newest first
            if query.get("memory_id") not in (None, v.memory_id):
                continue
            if query.get("operation") not in (None, v.operation):
                continue
            if (gte is not None and v.created_at < gte) or (lte is not None and v.created_at > lte):
                continue
            skip = False
            for key, (kind, field_name) in actor_filters.items():
                if key in query and not (
                    v.created_by
                    and v.created_by.get("type") == kind
                    and v.created_by.get(field_name) == query[key]
                ):
                    skip = True
            if not skip:
                out.append(self._version_json(store, v, query.get("view") == "full"))
        chunk, next_page = self._page(out, query, self._limit(query))
        return {"data": chunk, "next_page": next_page}
