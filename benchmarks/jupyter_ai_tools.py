"""Jupyter AI: time from a chat message to its first memory tool result, the built-in
MCP server vs the stdio route (issue 27).

    python benchmarks/jupyter_ai_tools.py [--messages 5] [--records 50] [--json]

One run, one machine, a real Jupyter server with jupyter-ai 3.2 for each route (one
after the other; jupyter-server-mcp on a free port), Jupyternaut answering through
LiteLLM from the scripted Messages API (``tests/messages_server.py``, every reply at
once). Each of ``--messages`` messages in one chat at the server root (a ``.chat`` file
over jupyterlab-chat's WebSocket, as the Lab's chat panel sends them) makes the model
call ``memory_select`` (limit 1 of ``--records`` records: the side model, scripted too,
chooses) and answer with its result:

* **built-in**: ipymemory's tools on Jupyter's built-in MCP server (the entry point; no
  settings file; the chat's calls carry the server's key), in the Jupyter server process;
* **stdio**: ``ipymemory mcp`` from ``.jupyter/mcp_settings.json`` (absolute paths, the
  model's variables passed in ``env``), the built-in server's tools discovery off so
  only that server offers ``memory_*``. Jupyternaut starts it once to list the tools and
  once more for the call.

Reported per route: the median and max of *message → tool result* (from the request to
the moment the model receives the tool's result: Jupyternaut's tool listing, the first
model call, the tool call) and of *tool call* alone (from the model's tool_use reply to
the result), and stdio's medians over built-in's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # the scripted server, the Jupyter runner
sys.path.insert(0, str(HERE.parent))

import jupyter_support  # noqa: E402
from jupyter_ai_support import (  # noqa: E402
    BUILTIN_MCP_ARGS,
    JUPYTERNAUT_ID,
    Chat,
    open_chat,
    scripted_models,
    wait_for_builtin_server,
)
from jupyter_support import run_jupyter  # noqa: E402
from messages_server import MessagesServer, Scripted, text, tool_use  # noqa: E402

from ipymemory import MemoryRecord, MemoryStore  # noqa: E402

MODEL = "claude-benchmark"


class Clock:
    """The scripted model of every message, timing it: when the tool_use reply was sent
    and when the request carrying the tool's result arrived."""

    def __init__(self, messages: MessagesServer, first: str) -> None:
        self.messages = messages
        self.first = first
        self.tool_use_index: int | None = None  # of the request answered with tool_use
        self.result_at: float | None = None
        self.result_text = ""

    @property
    def tool_use_sent(self) -> float:
        """When the tool_use reply was written out (MessagesServer's ``finished``)."""
        assert self.tool_use_index is not None
        return self.messages.finished[self.tool_use_index]

    def respond(self, request: dict[str, Any]) -> Scripted:
        if request.get("model") != MODEL:
            return text(json.dumps([self.first]))  # ipymemory's selector side-query
        # The chat's earlier messages come along: only a result in the last message is
        # this message's tool call coming back.
        last = request["messages"][-1].get("content")
        results = (
            [b for b in last if b.get("type") == "tool_result"] if isinstance(last, list) else []
        )
        if not results:
            self.tool_use_index = len(self.messages.requests) - 1  # recorded before this call
            return tool_use("memory_select", {"query": "when do we release", "limit": 1})
        self.result_at = time.monotonic()
        self.result_text = json.dumps(results[-1])
        return text("Done.")


def seed(root: Path, count: int) -> None:
    records = [
        MemoryRecord(name=f"note-{i}", type="project", description=f"note {i}", body=f"Note {i}.")
        for i in range(count - 1)
    ]
    records.append(
        MemoryRecord(
            name="deploy-friday",
            type="project",
            description="deploys on Friday",
            body="Releases go out on Fridays.",
        )
    )
    MemoryStore(root, max_index_bytes=1 << 20).extend(records)


def ask(chat: Chat, message: str, clock: Clock) -> str:
    """Send ``message`` to Jupyternaut in ``chat``; its reply once it said "Done."."""
    before = len(chat.by(JUPYTERNAUT_ID))

    def answered(c: Chat) -> bool:
        replies = c.by(JUPYTERNAUT_ID)[before:]
        return clock.result_at is not None and any("Done." in m["body"] for m in replies)

    chat.send(message, JUPYTERNAUT_ID)
    chat.until(answered)
    return str(chat.by(JUPYTERNAUT_ID)[-1]["body"])


def measure(
    route: str, count: int, records: int, prepare: Callable[[Path, MessagesServer], list[str]]
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root, home = Path(tmp) / "root", Path(tmp) / "home"
        root.mkdir()
        home.mkdir()
        seed(root, records)
        messages = MessagesServer().start()
        env, args = scripted_models(messages, MODEL)
        args += [*BUILTIN_MCP_ARGS, *prepare(root, messages)]
        to_result, tool_call = [], []
        try:
            with (
                run_jupyter("server", root, home, args, jupyter_ai=True, env=env) as lab,
                contextlib.ExitStack() as stack,
            ):
                wait_for_builtin_server(lab)
                chat = stack.enter_context(open_chat(lab, "bench.chat", JUPYTERNAUT_ID))
                for i in range(count + 1):  # the first one warms the server up
                    clock = Clock(messages, "deploy-friday")
                    messages.responder = clock.respond
                    start = time.monotonic()
                    answer = ask(chat, f"When do we release? ({i})", clock)
                    if clock.result_at is None or "Releases go out on Fridays." not in (
                        clock.result_text
                    ):
                        raise SystemExit(
                            f"{route}: no memory tool result: {answer!r} {clock.result_text[:500]}"
                        )
                    if i == 0:
                        continue
                    to_result.append((clock.result_at - start) * 1000)
                    tool_call.append((clock.result_at - clock.tool_use_sent) * 1000)
        finally:
            messages.stop()
    return {
        "to_result_median_ms": statistics.median(to_result),
        "to_result_max_ms": max(to_result),
        "tool_call_median_ms": statistics.median(tool_call),
        "tool_call_max_ms": max(tool_call),
    }


def builtin(_root: Path, _messages: MessagesServer) -> list[str]:
    return []


def stdio(root: Path, messages: MessagesServer) -> list[str]:
    command = Path(sys.executable).with_name("ipymemory")
    settings = {
        "mcp_servers": [
            {
                "name": "ipymemory",
                "command": str(command),
                "args": ["mcp", "--dir", str(root)],
                "env": [
                    {"name": "ANTHROPIC_API_KEY", "value": "test"},
                    {"name": "ANTHROPIC_BASE_URL", "value": messages.base_url},
                    {"name": "IPYMEMORY_USER_DIR", "value": "off"},
                ],
            }
        ]
    }
    (root / ".jupyter").mkdir()
    (root / ".jupyter" / "mcp_settings.json").write_text(json.dumps(settings, indent=2))
    return ["--MCPExtensionApp.use_tool_discovery=False"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=5)
    parser.add_argument("--records", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    # jupyter-ai's extensions take long to import on a loaded machine: wait for them.
    jupyter_support.START_TIMEOUT = 300.0
    rows = {
        "built-in": measure("built-in", args.messages, args.records, builtin),
        "stdio": measure("stdio", args.messages, args.records, stdio),
    }
    ratios = {
        key: rows["stdio"][key] / rows["built-in"][key]
        for key in ("to_result_median_ms", "tool_call_median_ms")
    }
    out = {"messages": args.messages, "records": args.records, "results": rows, "ratios": ratios}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{args.messages} chat messages per route (after one warm-up), {args.records} records")
    print(f"{'route':<9} {'message→result ms':>18} {'max':>7} {'tool call ms':>13} {'max':>7}")
    for route, row in rows.items():
        print(
            f"{route:<9} {row['to_result_median_ms']:>18.0f} {row['to_result_max_ms']:>7.0f} "
            f"{row['tool_call_median_ms']:>13.0f} {row['tool_call_max_ms']:>7.0f}"
        )
    print(
        f"stdio / built-in: message→result {ratios['to_result_median_ms']:.1f}x, "
        f"tool call {ratios['tool_call_median_ms']:.1f}x"
    )


if __name__ == "__main__":
    main()
