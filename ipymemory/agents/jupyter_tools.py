"""The memory tools on Jupyter's built-in MCP server, for every jupyter-ai persona (SPEC §10).

jupyter-server-mcp (installed with jupyter-ai 3) runs an MCP server inside the Jupyter
server and registers the functions that the entry point group ``jupyter_server_mcp.tools``
names ("module:function" strings: :data:`TOOLS`); jupyter-ai hands that server to every
persona, with no settings file, and each request carries the chat's id (the
``X-Jupyter-Chat-Id`` header). The five tools are the stdio server's
(:func:`~.mcp_server.tool_functions`, the same code); each call finds its memory from
its chat:

* the chat file's directory, through the chat's persona manager (jupyter-ai registers
  one per open chat under its id in the server's settings); the server's root when the
  id names no registered chat (``POST /api/ai/message/<persona>`` answers from a
  throwaway chat at the root);
* that directory's stores, the project's and the user's scope, with the settings
  resolved as everywhere (``c.IPyMemory.x`` in the server's config, then
  ``IPYMEMORY_*``, then the defaults), kept between calls while they stay the same.

Everything runs in the Jupyter server process (no process per call; the store work on
a worker thread). Proposals always wait for review in that directory's
``.memory/pending/``; the journal's actor names the chat and the persona.

That server listens on a port of its own, outside Jupyter's token and XSRF checks: each
call must carry the server's key (:mod:`.jupyter_access`, which hands it to jupyter-ai's
chats), else it is refused before any directory is looked at. The entry point is
:data:`TOOLS`, a function jupyter-server-mcp calls when it starts: it makes the key,
and registers nothing when ``c.IPyMemory.jupyter_mcp_tools`` is False.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fastmcp.exceptions import ToolError
from fastmcp.server.dependencies import get_http_headers
from jupyter_server.serverapp import ServerApp

from ..config import IPyMemory, Settings, model_key, resolve
from ..errors import MemoryConfigError
from . import jupyter_access
from .chat_dirs import chat_workspace
from .mcp_server import TOOL_NAMES, MemoryTools, tool_functions

__all__ = ["CHAT_ID_HEADER", "PERSONA_ID_HEADER", "TOOLS", "chat_directory", "tools"]

#: The headers jupyter-ai's persona manager adds to its requests (lower case, as read).
CHAT_ID_HEADER = "x-jupyter-chat-id"
PERSONA_ID_HEADER = "x-jupyterai-persona-id"

_lock = threading.Lock()
# directory -> (what its tools were built from, the tools)
_tools: dict[Path, tuple[object, MemoryTools]] = {}


def _server() -> Any:
    if not ServerApp.initialized():
        raise ToolError("no Jupyter server runs in this process")
    return ServerApp.instance()


def chat_directory(server: Any, chat_id: str | None) -> tuple[Path, dict[str, str]]:
    """The directory of chat ``chat_id`` and what the journal says of it (its path
    under the server's root); the root and nothing when no such chat is registered.
    A chat whose directory leads out of the root is refused (:func:`.chat_workspace`)."""
    settings = getattr(getattr(server, "web_app", None), "settings", None) or {}
    managers = settings.get("jupyter-ai", {}).get("persona-managers", {})
    manager = managers.get(chat_id) if chat_id else None
    if manager is None:
        return Path(server.root_dir), {}
    try:
        directory = chat_workspace(server.root_dir, manager.get_chat_dir())
    except MemoryConfigError as e:
        raise ToolError(f"ipymemory: {e}") from None
    return directory, {"chat": manager.get_chat_path(relative=True)}


def _memory(server: Any, directory: Path) -> MemoryTools:
    try:
        settings: Settings = resolve(IPyMemory(config=server.config), {"directory": directory})
    except MemoryConfigError as e:
        raise ToolError(f"ipymemory's settings: {e}") from None
    key = (settings, model_key(settings))
    with _lock:
        known = _tools.get(directory)
        if known is None or known[0] != key:
            known = (key, MemoryTools(settings, "review"))
            _tools[directory] = known
        return known[1]


def _chat_memory() -> tuple[MemoryTools, Mapping[str, Any]]:
    headers = get_http_headers()
    if not jupyter_access.authorized(headers):
        raise ToolError(jupyter_access.REFUSAL)
    server = _server()
    directory, caller = chat_directory(server, headers.get(CHAT_ID_HEADER))
    persona = headers.get(PERSONA_ID_HEADER)
    if persona:
        caller["persona"] = persona
    return _memory(server, directory), caller


(memory_catalog, memory_select, memory_read, memory_propose, memory_history) = tool_functions(
    _chat_memory, ToolError
)


def tools() -> list[str]:
    """The tools for jupyter-server-mcp ("module:function"), called once as it starts
    in the Jupyter server: none when ``jupyter_mcp_tools`` is off; else the five, with
    the key made and handed to jupyter-ai's chats (:func:`.jupyter_access.start`)."""
    server = _server()
    log = server.log
    try:
        on = resolve(IPyMemory(config=server.config), {"directory": Path(server.root_dir)})
    except MemoryConfigError as e:
        log.error("ipymemory: the memory tools are not registered: %s", e)
        return []
    if not on.jupyter_mcp_tools:
        log.info("ipymemory: the memory tools are off (c.IPyMemory.jupyter_mcp_tools)")
        return []
    jupyter_access.start(server, log)
    return [f"{__name__}:{name}" for name in TOOL_NAMES]


#: What the ``jupyter_server_mcp.tools`` entry point names (jupyter-server-mcp calls it).
TOOLS = tools
