"""HTTP handlers of the memory endpoint (jupyter_server 2 extension).

``GET <base>/ipymemory/api/memory?path=<dir>``: the set of ``<dir>/.memory`` (names,
types, descriptions, files). ``GET <base>/ipymemory/api/memory/record?path=<dir>&file=<f>``:
one record of that set, body included (``&scope=user``: of the user scope's set, SPEC
§11, which the listing shows under ``user``). ``GET <base>/ipymemory/api/memory/history?path=<dir>
&limit=<n>``: the newest entries of its history journal. ``GET <base>/ipymemory/api/memory/
pending?path=<dir>&batch=<id>``: one pending batch, for review. These need an authenticated
user allowed to read ``contents``, and answer JSON in every case, errors included.

Deciding a pending batch (the Lab panel's Commit and Discard, :mod:`.decisions`): ``POST
<base>/ipymemory/api/memory/pending/commit`` with ``{"path", "batch", "reject",
"redacted", "accept", "no_plan", "accept_plan"}`` and ``POST …/pending/discard`` with
``{"path", "batch"}`` run the ``commit`` / ``discard`` command. They need a user allowed
to write ``contents`` and, like every POST to the server, its XSRF check (a token in the
``Authorization`` header, or the ``_xsrf`` cookie echoed in ``X-XSRFToken``). Decisions
run one at a time, on a thread of their own, without a time bound: a commit answered
before it ended could still change the store (the store's lock bounds the wait).

Disk reads run in the endpoint's own small thread pool, each bounded in time: a request
whose read does not finish within ``SERVER_READ_TIMEOUT`` is answered 504 with a message
(the reads never block on a FIFO, see :func:`ipymemory.store.layout.open_regular`; the
bound is what keeps a slow or hung file system from holding the request open forever).
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import tornado.web
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado.ioloop import IOLoop

from .. import _constants as C
from .._json import loads
from ..config import IPyMemory, Settings, resolve
from ..errors import MemoryConfigError
from ..store.store import MemoryStore
from .decisions import Action, PanelRequest, decide, read_review
from .history import HISTORY_DEFAULT_LIMIT, read_history
from .listing import Refusal, Workspace, confine, list_memory, read_record

__all__ = [
    "API_PATH",
    "MemoryDecisionHandler",
    "MemoryHistoryHandler",
    "MemoryListHandler",
    "MemoryRecordHandler",
    "MemoryReviewHandler",
    "setup_handlers",
]

API_PATH = "ipymemory/api/memory"

# Our own threads: a read that hangs holds one of these, never the server's executor.
_READS = ThreadPoolExecutor(C.SERVER_READ_THREADS, thread_name_prefix="ipymemory-read")
# One decision at a time: a second click on Commit finds the batch already decided.
_DECISIONS = ThreadPoolExecutor(1, thread_name_prefix="ipymemory-decide")


class _MemoryHandler(APIHandler):
    # Same permission as reading files through the Contents API.
    auth_resource = "contents"

    def initialize(self, root_dir: str, user_dir: str | None = None, config: Any = None) -> None:
        self._root_dir = root_dir
        self._user_dir = user_dir
        self._config = config  # the server's traitlets config (c.IPyMemory.*)

    def _user_store(self) -> MemoryStore | None:
        """The user scope's store (SPEC §11; the server's settings), None when off."""
        return None if self._user_dir is None else MemoryStore(self._user_dir)

    def _confine(self, requested: str) -> Workspace | Refusal:
        # The server's hidden-file policy, as the Contents API applies it.
        allow_hidden = bool(getattr(self.contents_manager, "allow_hidden", False))
        return confine(self._root_dir, requested, allow_hidden=allow_hidden)

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        self.set_status(status)
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(payload))


class _ReadHandler(_MemoryHandler):
    """A GET that reads one confined directory (off the event loop, time-bounded).
    Each handler implements only its own method: tornado answers any other 405."""

    def _answer(self, ws: Workspace) -> tuple[int, dict[str, Any]]:
        """Status and JSON payload for a confined directory (runs off the event loop)."""
        raise NotImplementedError

    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        requested = self.get_query_argument("path", "")
        confined = self._confine(requested)
        if isinstance(confined, Refusal):
            self._reply(confined.status, confined.payload(requested))
            return
        # Disk reads (up to a few hundred small files) stay off the event loop.
        work = IOLoop.current().run_in_executor(_READS, self._answer, confined)
        try:
            status, payload = await asyncio.wait_for(work, C.SERVER_READ_TIMEOUT)
        except asyncio.TimeoutError:  # not the builtin before Python 3.11
            message = (
                f"reading {confined.rel_memory!r} took over {C.SERVER_READ_TIMEOUT:g} s; "
                "gave up (is a file there on a stalled file system?)"
            )
            self._reply(504, Refusal(504, message).payload(requested))
            return
        self._reply(status, payload)


class MemoryListHandler(_ReadHandler):
    """The memory set of one directory."""

    def _answer(self, ws: Workspace) -> tuple[int, dict[str, Any]]:
        status, payload = list_memory(ws, self._user_store())
        # Hidden files (".memory/…") open in JupyterLab only when the server allows them.
        payload["allow_hidden"] = bool(getattr(self.contents_manager, "allow_hidden", False))
        return status, payload


class MemoryRecordHandler(_ReadHandler):
    """One record of the set, for the panel's read-only record view."""

    def _answer(self, ws: Workspace) -> tuple[int, dict[str, Any]]:
        file = self.get_query_argument("file", "")
        scope = self.get_query_argument("scope", "project")
        if scope not in ("project", "user"):
            return 400, {"file": file, "record": None, "error": f"bad scope {scope!r}"}
        if scope == "user":
            user = self._user_store()
            if user is None:
                return 404, {"file": file, "record": None, "error": "the user scope is off"}
            return read_record(ws, file, user)
        return read_record(ws, file)


class MemoryHistoryHandler(_ReadHandler):
    """The newest entries of the history journal, for the panel's History section."""

    def _answer(self, ws: Workspace) -> tuple[int, dict[str, Any]]:
        text = self.get_query_argument("limit", str(HISTORY_DEFAULT_LIMIT))
        try:
            limit = int(text)
        except ValueError:
            return 400, {"directory": ws.rel, "entries": [], "error": f"bad limit {text!r}"}
        return read_history(ws, limit)


class MemoryReviewHandler(_ReadHandler):
    """One pending batch with its items and what screening holds, for the panel's review."""

    def _answer(self, ws: Workspace) -> tuple[int, dict[str, Any]]:
        return read_review(ws, self.get_query_argument("batch", ""), self._user_store())


class MemoryDecisionHandler(_MemoryHandler):
    """Commit or discard a pending batch (``action``), through the command layer."""

    def initialize(
        self, root_dir: str, user_dir: str | None = None, config: Any = None, action: str = ""
    ) -> None:
        super().initialize(root_dir, user_dir, config)
        self._action: Action = "commit" if action == "commit" else "discard"

    def _settings(self, ws: Workspace) -> Settings:
        """The settings a command in ``ws`` runs with: ``c.IPyMemory`` in the server's
        config plays %config's part, then IPYMEMORY_*, then the defaults."""
        return resolve(IPyMemory(config=self._config), {"directory": ws.directory})

    def _decide(self, ws: Workspace, decision: PanelRequest) -> tuple[int, dict[str, Any]]:
        try:
            settings = self._settings(ws)
        except MemoryConfigError as e:
            return 500, {"directory": ws.rel, "error": f"ipymemory's settings: {e}"}
        return decide(ws, settings, decision)

    @tornado.web.authenticated
    @authorized
    async def post(self) -> None:
        try:
            body = loads(self.request.body or b"{}")
        except ValueError as e:
            self._reply(400, {"error": f"the request body is not JSON: {e}"})
            return
        decision = PanelRequest.parse(self._action, body)
        if isinstance(decision, Refusal):
            self._reply(decision.status, {"error": decision.message})
            return
        confined = self._confine(decision.path)
        if isinstance(confined, Refusal):
            self._reply(confined.status, {"directory": decision.path, "error": confined.message})
            return
        work = IOLoop.current().run_in_executor(_DECISIONS, self._decide, confined, decision)
        status, payload = await work
        self._reply(status, payload)


def setup_handlers(
    web_app: tornado.web.Application,
    root_dir: str,
    user_dir: str | None = None,
    config: Any = None,
) -> None:
    """Register the endpoint under the server's base URL; ``user_dir`` is the user
    scope's directory (None: off), ``config`` the server's traitlets config."""
    base_url = web_app.settings.get("base_url", "/")
    kwargs = {"root_dir": root_dir, "user_dir": user_dir, "config": config}
    web_app.add_handlers(
        ".*$",
        [
            (url_path_join(base_url, API_PATH), MemoryListHandler, kwargs),
            (url_path_join(base_url, API_PATH, "record"), MemoryRecordHandler, kwargs),
            (url_path_join(base_url, API_PATH, "history"), MemoryHistoryHandler, kwargs),
            (url_path_join(base_url, API_PATH, "pending"), MemoryReviewHandler, kwargs),
            *(
                (
                    url_path_join(base_url, API_PATH, "pending", action),
                    MemoryDecisionHandler,
                    {**kwargs, "action": action},
                )
                for action in ("commit", "discard")
            ),
        ],
    )
