"""Who may call the memory tools on Jupyter's built-in MCP server (SPEC §13).

jupyter-server-mcp serves its tools on a port of its own, outside Jupyter's token, XSRF
and Origin checks, and has no authentication of its own: any local process, or another
user of a shared machine, could call them. So every call must carry this Jupyter
server's **key**, in the header :data:`KEY_HEADER`; a call without it (or with another)
is refused before any memory is looked at:

* the key is made once per server process, when jupyter-server-mcp registers the tools
  (:func:`start`); it lives in the server's memory and in
  ``<runtime dir>/ipymemory-mcp-<pid>.json``, written owner-only beside the server's own
  ``jpserver-<pid>.json`` (which holds Jupyter's token): whoever can read Jupyter's token
  can read the key, nobody else. The file is removed when the process exits;
* jupyter-ai's chats carry it: each chat's ``PersonaManager`` hands its personas the
  built-in server from ``PersonaManager.builtin_mcp_servers``; once the MCP server has
  bound its port, that entry (jupyter-ai's default, or a configured one that points at
  the built-in server) gets the key as a header and the port really bound (so
  ``c.MCPExtensionApp.mcp_port = 0`` works), in the persona manager's config for the
  chats opened later and in the managers already open. The throwaway chat of
  ``POST /api/ai/message/<persona>`` is built without the server's config: it carries no
  key, and its calls are refused like any other;
* ``c.IPyMemory.jupyter_mcp_tools = False`` (``IPYMEMORY_JUPYTER_MCP_TOOLS=0``) does not
  register the tools at all.

Other MCP clients use ``ipymemory mcp`` (stdio, one directory, no port).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hmac
import json
import os
import secrets
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "KEY_HEADER",
    "REFUSAL",
    "authorized",
    "key_file",
    "start",
    "with_key",
]

#: The header each call carries the key in (as sent; HTTP headers are read in any case).
KEY_HEADER = "X-IPyMemory-Key"
#: What a call without this server's key is told (it names no directory and no record).
REFUSAL = (
    "ipymemory refused this call: it does not carry this Jupyter server's key "
    f"(header {KEY_HEADER}). The memory tools here answer only jupyter-ai's chats on "
    "this server, whose personas carry the key; another MCP client uses `ipymemory mcp` "
    "(stdio), or the key in the server's runtime directory (ipymemory-mcp-<pid>.json, "
    "readable by whoever can read its token). To turn these tools off: "
    "c.IPyMemory.jupyter_mcp_tools = False."
)

_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
_lock = threading.Lock()
_key: str | None = None
_tasks: set[asyncio.Task[None]] = set()  # held until done (the loop keeps weak references)


def authorized(headers: Mapping[str, str]) -> bool:
    """Whether ``headers`` (one call's, names in lower case) carry this server's key."""
    given = headers.get(KEY_HEADER.lower())
    key = _key
    return key is not None and given is not None and hmac.compare_digest(given, key)


def key_file(runtime_dir: str | os.PathLike[str], pid: int) -> Path:
    """Where the key of the server process ``pid`` is published."""
    return Path(runtime_dir) / f"ipymemory-mcp-{pid}.json"


def start(server: Any, log: Any) -> None:
    """Make this process's key (once), publish it and, when the built-in MCP server has
    bound its port, hand it to jupyter-ai's persona managers (see the module
    docstring). ``server``: the running ``ServerApp``."""
    global _key
    with _lock:
        if _key is not None:
            return
        _key = secrets.token_urlsafe(32)
        key = _key
    _publish(server, key, log)
    mcp_app = _extension_app(server, "jupyter_server_mcp")
    instance = getattr(mcp_app, "mcp_server_instance", None)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        log.warning("ipymemory: no event loop; jupyter-ai's chats get no key for the memory tools")
        return
    if instance is None:
        log.warning("ipymemory: jupyter-server-mcp's server is not found; its chats get no key")
        return
    task = loop.create_task(_when_bound(server, mcp_app, instance, key, log))
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)


async def _when_bound(server: Any, mcp_app: Any, instance: Any, key: str, log: Any) -> None:
    await instance.wait_until_bound()
    port = int(instance.port)
    name = str(getattr(mcp_app, "mcp_name", "Jupyter MCP Server"))
    handed = _hand_to_personas(server, port, name, key)
    if handed:
        log.info("ipymemory: jupyter-ai's chats carry the key of the memory tools (port %d)", port)
    else:
        log.warning(
            "ipymemory: jupyter-ai's persona manager is not running or its "
            "builtin_mcp_servers names no entry for the built-in MCP server (port %d): the "
            "memory tools there answer no chat",
            port,
        )


def with_key(
    entries: Sequence[Mapping[str, Any]] | None, port: int, name: str, key: str, *, default: bool
) -> tuple[list[dict[str, Any]], bool]:
    """``entries`` (``builtin_mcp_servers``; ``default``: jupyter-ai's own, which this
    replaces by one entry for ``port``) with the key added to each that points at the
    built-in server on ``port``; and whether any does."""
    if default:
        entries = [{"type": "http", "name": name, "url": f"http://localhost:{port}/mcp"}]
    out: list[dict[str, Any]] = []
    found = False
    for entry in entries or ():
        entry = dict(entry)
        if entry.get("type") == "http" and _points_at(str(entry.get("url", "")), port):
            headers = [h for h in entry.get("headers") or () if not _is_key_header(h)]
            entry["headers"] = [*headers, {"name": KEY_HEADER, "value": key}]
            found = True
        out.append(entry)
    return out, found


def _is_key_header(header: object) -> bool:
    return isinstance(header, Mapping) and str(header.get("name", "")).lower() == KEY_HEADER.lower()


def _points_at(url: str, port: int) -> bool:
    try:
        parts = urlsplit(url)
        return parts.hostname in _LOOPBACK and parts.port == port and parts.path == "/mcp"
    except ValueError:
        return False


def _hand_to_personas(server: Any, port: int, name: str, key: str) -> bool:
    """Give jupyter-ai's persona managers, future (their config) and open, the key."""
    found = False
    configured: dict[int, bool] = {}  # per persona manager extension: set by the user?
    for app in _extension_apps(server, "jupyter_ai_persona_manager"):
        section = app.config.PersonaManager
        configured[id(app)] = "builtin_mcp_servers" in section
        given = section.builtin_mcp_servers if configured[id(app)] else None
        entries, hit = with_key(given, port, name, key, default=not configured[id(app)])
        section.builtin_mcp_servers = entries
        found = found or hit
    settings = getattr(getattr(server, "web_app", None), "settings", None) or {}
    for manager in list(settings.get("jupyter-ai", {}).get("persona-managers", {}).values()):
        # A chat opened before the port was bound took its entries from the config then.
        mine = configured.get(id(getattr(manager, "parent", None)), False)
        given = manager.builtin_mcp_servers if mine else None
        manager.builtin_mcp_servers, hit = with_key(given, port, name, key, default=not mine)
        found = found or hit
    return found


def _extension_apps(server: Any, name: str) -> list[Any]:
    manager = getattr(server, "extension_manager", None)
    apps = getattr(manager, "extension_apps", None) or {}
    return list(apps.get(name, ()))


def _extension_app(server: Any, name: str) -> Any:
    apps = _extension_apps(server, name)
    return apps[0] if apps else None


def _publish(server: Any, key: str, log: Any) -> None:
    """The key in the server's runtime directory, owner-only (as Jupyter's token)."""
    from jupyter_core.paths import secure_write

    path = key_file(server.runtime_dir, os.getpid())
    info = {"pid": os.getpid(), "header": KEY_HEADER, "key": key}
    try:
        Path(server.runtime_dir).mkdir(parents=True, exist_ok=True)
        with secure_write(str(path)) as f:
            f.write(json.dumps(info))
    except OSError as e:
        log.warning("ipymemory: the memory tools' key is not published (%s)", e)
        return
    atexit.register(_unpublish, path)


def _unpublish(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
