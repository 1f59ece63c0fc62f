"""Helpers shared by the side-query tests: models over the scripted server, sample sets."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import anthropic
from record_support import rec

from ipymemory import AnthropicModel, MemoryRecord, MemoryStore

__all__ = [
    "MAIN_MODEL",
    "SIDE_MODEL",
    "TODAY",
    "last_user_json",
    "make_store",
    "model_for",
    "refused_url",
    "sample_records",
    "tree_snapshot",
]

# A pinned date for the side-queries' "today" (SPEC §9), so the expected input is exact.
TODAY = "2026-12-04 (Friday)"
MAIN_MODEL = "main-model-under-test"
SIDE_MODEL = "side-model-under-test"


def model_for(base_url: str, *, timeout: float = 5.0) -> AnthropicModel:
    """An :class:`AnthropicModel` over the real SDK pointed at ``base_url``, no retries."""
    client = anthropic.Anthropic(base_url=base_url, api_key="test", max_retries=0, timeout=timeout)
    return AnthropicModel(MAIN_MODEL, side_model=SIDE_MODEL, client=client)


def refused_url() -> str:
    """A 127.0.0.1 URL where nothing listens (a port just released by the OS)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def sample_records() -> tuple[MemoryRecord, ...]:
    """Seven records with distinct vocabularies (the fallback ranks them predictably)."""
    return (
        rec("prefers-tabs", "User indents Python code with tabs, not spaces", type="user"),
        rec("db-testing", "Never mock the database in integration tests", type="feedback"),
        rec("auth-rewrite", "Auth rewrite is driven by compliance requirements", type="project"),
        rec("ingest-bugs", "Pipeline ingest bugs are tracked in Linear INGEST", type="reference"),
        rec("deploy-steps", "How staging deploys are run with the release script", type="feedback"),
        rec("python-version", "Project targets Python 3.10 and newer", type="project"),
        rec("style-guide", "Docstring style guide lives in docs/STYLE.md", type="reference"),
    )


def make_store(workspace: str) -> MemoryStore:
    """A store in ``workspace`` holding :func:`sample_records`."""
    store = MemoryStore(workspace)
    store.extend(sample_records())
    return store


def last_user_json(request: dict[str, Any]) -> Any:
    """The JSON value carried by the last text of the last (user) message of a request."""
    last = request["messages"][-1]
    assert last["role"] == "user"
    content = last["content"]
    text = content if isinstance(content, str) else content[-1]["text"]
    return json.loads(text)


def tree_snapshot(root: str | os.PathLike[str]) -> dict[str, bytes]:
    """Every file under ``root`` (recursively) with its bytes: equal snapshots = no change."""
    base = Path(root)
    return {
        str(path.relative_to(base)): path.read_bytes()
        for path in sorted(base.rglob("*"))
        if path.is_file()
    }
