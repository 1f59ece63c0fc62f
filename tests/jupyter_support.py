"""Run a real ``jupyter server`` / ``jupyter lab`` on 127.0.0.1 for the endpoint and browser tests.

Each run is hermetic: its own config, data, runtime and lab settings directories, the
ipymemory server extension enabled by its own config, a random port and a token.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["HttpReply", "RunningJupyter", "run_jupyter"]

START_TIMEOUT = 60.0
# jupyter-ai 3.2's server extensions (the test environment installs it): off unless a
# test asks for them, so the other servers start as fast as before and none starts the
# built-in MCP server (its default port is 3001; the jupyter-ai tests give it a free one).
JUPYTER_AI_EXTENSIONS = (
    "jupyter_ai_acp_client",
    "jupyter_ai_chat_commands",
    "jupyter_ai_jupyternaut",
    "jupyter_ai_litellm",
    "jupyter_ai_persona_manager",
    "jupyter_ai_router",
    "jupyter_ai_tools",
    "jupyter_live_content",
    "jupyter_server_mcp",
    "jupyterlab_chat",
    "jupyterlab_commands_toolkit",
)
# ...and the lab extensions it ships (the page loads without them).
JUPYTER_AI_LAB_EXTENSIONS = (
    "@jupyter-ai/acp-client",
    "@jupyter-ai/chat-commands",
    "@jupyter-ai/jupyternaut",
    "@jupyter-ai/persona-manager",
    "@jupyter-ai/router",
    "@jupyter-ai-contrib/live-content",
    "jupyterlab-ai-commands",
    "jupyterlab-cell-input-footer-extension",
    "jupyterlab-chat-extension",
    "jupyterlab-commands-toolkit",
    "jupyterlab-diff",
)


@dataclass(frozen=True)
class HttpReply:
    status: int
    content_type: str
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


@dataclass(frozen=True)
class RunningJupyter:
    url: str  # base URL, ending in "/"
    token: str
    root: Path
    home: Path
    log: Path
    pid: int = 0  # the server process

    def rel(self, path: Path) -> str:
        """``path`` as the server names it: relative to its root, with ``/``."""
        return path.relative_to(self.root).as_posix()

    def get(
        self, path: str, params: dict[str, str] | None = None, *, token: str | None = ""
    ) -> HttpReply:
        """GET ``path`` (relative to the base URL); ``token=""`` uses the server's token,
        ``None`` sends no credentials."""
        url = self.url + path
        if params is not None:
            url += "?" + urllib.parse.urlencode(params)
        request = urllib.request.Request(url)
        if token is not None:
            request.add_header("Authorization", f"token {token or self.token}")
        return _send(request, urllib.request.build_opener(), 30)

    def post(
        self,
        path: str,
        body: Any,
        *,
        token: str | None = "",
        headers: Mapping[str, str] | None = None,
        opener: urllib.request.OpenerDirector | None = None,
    ) -> HttpReply:
        """POST ``body`` as JSON (bytes as they are) to ``path``; ``token`` as for
        :meth:`get`; ``opener`` sends through another client (one holding cookies)."""
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.url + path, data=data, method="POST")
        request.add_header("Content-Type", "application/json")
        if token is not None:
            request.add_header("Authorization", f"token {token or self.token}")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        return _send(request, opener or urllib.request.build_opener(), 90)


def _send(
    request: urllib.request.Request, opener: urllib.request.OpenerDirector, timeout: float
) -> HttpReply:
    """The server's answer to ``request``, an error status included."""
    try:
        with opener.open(request, timeout=timeout) as response:
            return HttpReply(
                response.status,
                response.headers.get("Content-Type", ""),
                response.read().decode("utf-8"),
            )
    except urllib.error.HTTPError as e:
        return HttpReply(e.code, e.headers.get("Content-Type", ""), e.read().decode("utf-8"))


def _environment(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    for var, sub in [
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTERLAB_SETTINGS_DIR", "lab-settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "lab-workspaces"),
        ("IPYTHONDIR", "ipython"),
    ]:
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(home / sub)
    # In a virtualenv jupyter_core looks in the environment's share/jupyter first, where
    # `pip install` left a copy of the lab extension as built then: the user dirs above
    # (this checkout's build) must come first.
    env["JUPYTER_PREFER_ENV_PATH"] = "0"
    env.pop("JUPYTER_PORT", None)
    env.pop("JUPYTER_TOKEN", None)
    # LiteLLM (Jupyternaut's) would fetch its model price list from the network.
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    # The kernel must import this checkout's ipymemory even without an install.
    repo = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in [repo, env.get("PYTHONPATH", "")] if p)
    return env


def _wait_for_runtime_file(
    process: subprocess.Popen[bytes], home: Path, log: Path
) -> dict[str, Any]:
    info_file = home / "runtime" / f"jpserver-{process.pid}.json"
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"jupyter exited with {process.returncode}:\n{log.read_text()[-4000:]}"
            )
        if info_file.exists():
            try:
                data: dict[str, Any] = json.loads(info_file.read_text())
                return data
            except json.JSONDecodeError:
                pass  # written but not yet complete
        time.sleep(0.1)
    raise RuntimeError(f"jupyter did not start in {START_TIMEOUT}s:\n{log.read_text()[-4000:]}")


def _wait_until_serving(process: subprocess.Popen[bytes], server: RunningJupyter) -> None:
    """Until the server answers HTTP. jupyter_server writes its runtime file before its
    event loop starts, and only the loop binds the port: a request in between is
    refused. Any answer (``api/status`` with the token: 200) means it serves."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"jupyter exited with {process.returncode}:\n{server.log.read_text()[-4000:]}"
            )
        try:
            server.get("api/status")
            return
        except OSError:  # refused (not listening yet), or cut off while starting
            time.sleep(0.1)
    log = server.log.read_text()[-4000:]
    raise RuntimeError(f"jupyter did not serve in {START_TIMEOUT}s:\n{log}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@contextmanager
def run_jupyter(
    app: str,
    root: Path,
    home: Path,
    extra_args: Sequence[str] = (),
    *,
    jupyter_ai: bool = False,
    env: Mapping[str, str | None] | None = None,
) -> Iterator[RunningJupyter]:
    """Start ``jupyter <app>`` (``server`` or ``lab``) serving ``root``; stop it on exit.
    Jupyter AI's server extensions run only with ``jupyter_ai=True``; ``env`` sets (or,
    with None, removes) variables of the server's environment."""
    environment = _environment(home)
    for name, value in (env or {}).items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    extensions = {"ipymemory": True, **{name: jupyter_ai for name in JUPYTER_AI_EXTENSIONS}}
    config = {"ServerApp": {"jpserver_extensions": extensions}}
    (home / "config" / "jupyter_server_config.json").write_text(json.dumps(config))
    if not jupyter_ai:
        disabled = {"disabledExtensions": dict.fromkeys(JUPYTER_AI_LAB_EXTENSIONS, True)}
        (home / "config" / "labconfig").mkdir(exist_ok=True)
        (home / "config" / "labconfig" / "page_config.json").write_text(json.dumps(disabled))
    token = secrets.token_hex(16)
    module = {"server": "jupyter_server", "lab": "jupyterlab"}[app]
    log = home / f"jupyter-{app}.log"
    args = [
        sys.executable,
        "-m",
        module,
        "--allow-root",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.port=0",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={token}",
        *extra_args,
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            args, env=environment, stdout=out, stderr=subprocess.STDOUT, cwd=root
        )
    try:
        info = _wait_for_runtime_file(process, home, log)
        running = RunningJupyter(
            url=info["url"], token=token, root=root, home=home, log=log, pid=process.pid
        )
        _wait_until_serving(process, running)
        yield running
    finally:
        _stop(process)
