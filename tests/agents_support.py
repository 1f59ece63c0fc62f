"""Driving ``ipymemory mcp`` as a client would: the real server in a subprocess, the
``mcp`` SDK's stdio client, one session per call of :func:`with_mcp`.

The SDK's client session and stdio transport are the same in mcp 1.x and 2.x; their
result models are not (``isError`` / ``is_error``), so :class:`McpClient` hands results
over as the JSON on the wire (camelCase), which is the protocol's and the same on both."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

T = TypeVar("T")
Wire = dict[str, Any]

ROOT = Path(__file__).resolve().parents[1]


def server_params(
    workspace: str, *args: str, env: Mapping[str, str] | None = None
) -> StdioServerParameters:
    """``python -m ipymemory.cli --dir WORKSPACE mcp ARGS`` importing this tree."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "ipymemory.cli", "--dir", workspace, "mcp", *args],
        env={"PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]), **(env or {})},
    )


class McpClient:
    """An initialised client session whose answers are wire JSON."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def list_tools(self) -> list[Wire]:
        listed = await self.session.list_tools()
        return [tool.model_dump(mode="json", by_alias=True) for tool in listed.tools]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Wire:
        result = await self.session.call_tool(name, arguments)
        return result.model_dump(mode="json", by_alias=True)


def with_mcp(
    workspace: str,
    use: Callable[[McpClient], Awaitable[T]],
    *args: str,
    env: Mapping[str, str] | None = None,
) -> T:
    """Start the server, connect, ``await use(client)``, close; returns what it returned."""

    async def main() -> T:
        params = server_params(workspace, *args, env=env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await use(McpClient(session))

    return anyio.run(main)


def data(result: Wire) -> dict[str, Any]:
    """The structured result of a successful call (the text content says the same)."""
    assert not result.get("isError"), result["content"]
    assert result.get("structuredContent") is not None
    text = result["content"][0].get("text", "")
    structured = dict(result["structuredContent"])
    # The text content says the same (clients that read only text see it too).
    assert structured == ({"result": text} if set(structured) == {"result"} else json.loads(text))
    return structured


def error_text(result: Wire) -> str:
    """The message of a call the server refused."""
    assert result.get("isError"), result.get("structuredContent")
    return " ".join(str(block.get("text", "")) for block in result["content"])


def item(name: str, body: str | None = None, **extra: Any) -> dict[str, Any]:
    """An extractor-shaped item (SPEC §9) as an agent would send it."""
    return {
        "name": name,
        "type": extra.pop("type", "project"),
        "description": extra.pop("description", f"about {name.replace('-', ' ')}"),
        "body": body if body is not None else f"The {name.replace('-', ' ')} note.",
        **extra,
    }


def review_in_notebook(ip: Any, batch_id: str, via: str, reject: str) -> Any:
    """``%memory pending`` lists the agent's batch (saved, not this kernel's); reopen
    it, reject ``reject`` in the review widget, click Commit. Returns the widget."""
    from notebook_support import memory

    from ipymemory.views import BatchReview

    [entry] = memory(ip, "pending").entries
    assert (entry.id, entry.via, entry.live) == (batch_id, via, False)
    review = memory(ip, f"pending --open {batch_id}")
    assert isinstance(review, BatchReview)
    review.decisions[reject].value = "reject"
    review.commit_button.click()
    return review
