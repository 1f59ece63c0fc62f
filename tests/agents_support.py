"""Driving ``ipymemory mcp`` as a client would: the real server in a subprocess, the
``mcp`` SDK's stdio client, one session per call of :func:`with_mcp`."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

T = TypeVar("T")

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


def with_mcp(
    workspace: str,
    use: Callable[[Client], Awaitable[T]],
    *args: str,
    env: Mapping[str, str] | None = None,
) -> T:
    """Start the server, connect, ``await use(client)``, close; returns what it returned."""

    async def main() -> T:
        async with Client(server_params(workspace, *args, env=env)) as client:
            return await use(client)

    return anyio.run(main)


def data(result: CallToolResult) -> dict[str, Any]:
    """The structured result of a successful call (the text content says the same)."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    text = getattr(result.content[0], "text", "")
    structured = dict(result.structured_content)
    # The text content says the same (clients that read only text see it too).
    assert structured == ({"result": text} if set(structured) == {"result"} else json.loads(text))
    return structured


def error_text(result: CallToolResult) -> str:
    """The message of a call the server refused."""
    assert result.is_error, result.structured_content
    return " ".join(getattr(block, "text", "") for block in result.content)


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
