"""JupyterLab with jupyter-ai 3.2 for the jupyter-ai tests: one server for the session.

The server runs every jupyter-ai extension (Jupyternaut, the persona manager, the chat,
jupyter-server-mcp's built-in MCP server on a free port) and ipymemory's persona and
tools, found through their entry points as a user's install would. Its
models are the scripted Messages API (:mod:`messages_server`): Jupyternaut through
LiteLLM, ``@ipymemory`` through the anthropic SDK, both reading ``ANTHROPIC_BASE_URL``.
Tests script it with ``responder`` (one server, so each test sets its own).

Chats are opened the way the Lab's chat panel opens them, over jupyterlab-chat's
WebSocket (:class:`Chat`); ``POST /api/ai/message/<persona>`` is :func:`ask`.
"""

from __future__ import annotations

import contextlib
import json
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websocket
from jupyter_support import RunningJupyter, run_jupyter
from lab_support import lab_home
from messages_server import MessagesServer, Scripted, text, tool_use

PERSONA_ID = "jupyter-ai-personas::ipymemory::MemoryPersona"
JUPYTERNAUT_ID = "jupyter-ai-personas::jupyter_ai_jupyternaut::JupyternautPersona"
JUPYTERNAUT_MODEL = "claude-jupyternaut-under-test"
READ_TIMEOUT = 120.0  # seconds a chat frame or a REST answer may take at most
# jupyter-server-mcp's built-in MCP server on a port the OS picks (it publishes the one it
# got in jpserver-mcp-<pid>.json; ipymemory hands that port to jupyter-ai's chats): no
# fixed port, so a Lab already open on this machine, or another test run, is no matter.
BUILTIN_MCP_ARGS = ["--MCPExtensionApp.mcp_port=0"]


@dataclass
class AiLab:
    lab: RunningJupyter
    messages: MessagesServer
    mcp_url: str  # the built-in MCP server's, as jupyter-server-mcp published it


def wait_for_builtin_server(lab: RunningJupyter) -> str:
    """Until the built-in MCP server announced itself (its runtime file): a message sent
    before would find no memory tools. Its URL; RuntimeError if it does not start."""
    from jupyter_server_mcp.runtime import info_file_path

    info = info_file_path(lab.home / "runtime", lab.pid)
    deadline = time.monotonic() + 60
    while not info.exists():
        if "Failed to start MCP server" in lab.log.read_text(errors="replace"):
            raise RuntimeError(f"the built-in MCP server did not start; see {lab.log}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the built-in MCP server did not start in 60 s; see {lab.log}")
        time.sleep(0.1)
    url = str(json.loads(info.read_text())["url"])
    if url.endswith(":0/mcp"):
        raise RuntimeError(f"the built-in MCP server published no port: {url}")
    return url


def memory_tools_key(lab: RunningJupyter) -> dict[str, str]:
    """The header carrying the server's key of the memory tools, read where ipymemory
    publishes it (the runtime directory, beside Jupyter's own token)."""
    from ipymemory.agents.jupyter_access import key_file

    info = json.loads(key_file(lab.home / "runtime", lab.pid).read_text())
    return {str(info["header"]): str(info["key"])}


def scripted_models(
    messages: MessagesServer, model: str = JUPYTERNAUT_MODEL
) -> tuple[dict[str, str | None], list[str]]:
    """The environment and arguments of a Jupyter server whose models are ``messages``:
    ``@ipymemory``'s anthropic SDK and Jupyternaut's LiteLLM (``anthropic/<model>``)
    both read ``ANTHROPIC_BASE_URL``."""
    env: dict[str, str | None] = {
        "ANTHROPIC_API_KEY": "test",
        "ANTHROPIC_BASE_URL": messages.base_url,
        "IPYMEMORY_USER_DIR": "off",
        "IPYMEMORY_SELECTOR": "model",  # these tests show the side model choosing
    }
    return env, [f"--JupyternautExtension.initial_language_model=anthropic/{model}"]


@contextlib.contextmanager
def running_ai_lab(tmp: Path) -> Iterator[AiLab]:
    root = tmp / "root"
    root.mkdir()
    messages = MessagesServer().start()
    env, args = scripted_models(messages)
    try:
        args += BUILTIN_MCP_ARGS
        with run_jupyter("lab", root, lab_home(tmp), args, jupyter_ai=True, env=env) as lab:
            yield AiLab(lab, messages, wait_for_builtin_server(lab))
    finally:
        messages.stop()


def ask(lab: RunningJupyter, persona: str, text: str) -> str:
    """``POST /api/ai/message/<persona>``: the persona's answer in a throwaway chat."""
    request = urllib.request.Request(
        f"{lab.url}api/ai/message/{urllib.parse.quote(persona)}",
        data=json.dumps({"message": text}).encode(),
        method="POST",
        headers={"Authorization": f"token {lab.token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=READ_TIMEOUT) as response:
            return str(json.loads(response.read())["response"])
    except urllib.error.HTTPError as e:
        raise AssertionError(f"{e.code}: {e.read().decode(errors='replace')}") from None


@dataclass
class Chat:
    """A ``.chat`` file open over jupyterlab-chat's WebSocket, as the Lab's chat panel
    has it: every frame the server sends is kept (``frames``), each message in its
    latest form (``messages``, by id), with how many frames carried it (``updates``)."""

    lab: RunningJupyter
    path: str
    frames: list[dict[str, Any]] = field(default_factory=list)
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    updates: dict[str, int] = field(default_factory=dict)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    id: str = ""

    def __post_init__(self) -> None:
        base = self.lab.url.replace("http", "ws", 1)
        self._ws = websocket.create_connection(
            f"{base}api/chat/ws/{urllib.parse.quote(self.path)}",
            header=[f"Authorization: token {self.lab.token}"],
            timeout=READ_TIMEOUT,
        )
        first = self._next()
        assert first["action"] == "connection", first
        self.id = first["id"]

    def _next(self) -> dict[str, Any]:
        frame: dict[str, Any] = json.loads(self._ws.recv())
        self.frames.append(frame)
        action = frame.get("action")
        if action == "connection":
            self.users.update(frame["users"])
            for message in frame["messages"]:
                self.messages[message["id"]] = message
        elif action == "users":
            self.users.update(frame["users"])
        elif action == "message":
            message = frame["message"]
            self.messages[message["id"]] = message
            self.updates[message["id"]] = self.updates.get(message["id"], 0) + 1
        return frame

    def until(self, done: Callable[[Chat], bool]) -> None:
        """Read frames until ``done(self)`` (each read bounded by READ_TIMEOUT)."""
        while not done(self):
            self._next()

    def ready_for(self, persona: str) -> None:
        """jupyter-ai set this chat up (its personas joined the chat's users)."""
        self.until(lambda chat: persona in chat.users)

    def send(self, body: str, persona: str) -> str:
        """Send ``body`` to ``persona`` (the persona picker's ``to_persona``); its id."""
        message_id = uuid.uuid4().hex
        frame = {
            "type": "client",
            "action": "send",
            "id": message_id,
            "body": body,
            "metadata": {"to_persona": persona},
        }
        self._ws.send(json.dumps(frame))
        self.until(lambda chat: message_id in chat.messages)
        return message_id

    def by(self, sender: str) -> list[dict[str, Any]]:
        """The messages ``sender`` wrote, in the order they were sent."""
        return sorted(
            (m for m in self.messages.values() if m.get("sender") == sender),
            key=lambda m: float(m.get("time", 0)),
        )

    def stopped_writing(self, sender: str) -> bool:
        """``sender`` has shown a writing indicator and cleared it since."""
        states = [
            f["state"]
            for f in self.frames
            if f.get("action") == "writing" and f["user"].get("username") == sender
        ]
        return bool(states) and states[-1] is False

    def close(self) -> None:
        self._ws.close()


@contextlib.contextmanager
def open_chat(lab: RunningJupyter, path: str, persona: str) -> Iterator[Chat]:
    chat = Chat(lab, path)
    try:
        chat.ready_for(persona)
        yield chat
    finally:
        chat.close()


def tool_results(request: dict[str, Any]) -> list[str]:
    """The text of every tool result a Messages-API request carries, in order."""
    out = []
    for message in request.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") != "tool_result":
                continue
            inner = block.get("content")
            if isinstance(inner, str):
                out.append(inner)
            else:
                out.append("".join(b.get("text", "") for b in inner or [] if isinstance(b, dict)))
    return out


def call_then_echo(
    tool: str, arguments: dict[str, Any], side: Callable[[dict[str, Any]], Scripted]
) -> Callable[[dict[str, Any]], Scripted]:
    """Jupyternaut's scripted model: ask for ``tool`` once, then answer with what it
    returned (so the answer carries a record only if the tool really gave it).
    ipymemory's own side-queries (the selector) are ``side``'s."""

    def respond(request: dict[str, Any]) -> Scripted:
        if request.get("model") != JUPYTERNAUT_MODEL:
            return side(request)
        results = tool_results(request)
        if not results:
            return tool_use(tool, arguments)
        return text(f"From the memory tools: {results[-1]}")

    return respond
