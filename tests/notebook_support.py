"""Helpers shared by the notebook front-end tests (views, magics)."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from IPython.core.interactiveshell import InteractiveShell

from ipymemory import MemoryRecord


def items_json(*records: MemoryRecord) -> str:
    """An extractor reply proposing ``records``."""
    return json.dumps([r.to_json() for r in records])


@contextmanager
def loaded_shell() -> Iterator[InteractiveShell]:
    """The process's InteractiveShell with ipymemory loaded and no %config left over
    (it outlives a reload); unloaded afterwards. Change directory first."""
    shell = InteractiveShell.instance()
    shell.config.pop("IPyMemory", None)
    shell.run_line_magic("load_ext", "ipymemory")
    try:
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "ipymemory")
        shell.config.pop("IPyMemory", None)


def memory(ip: InteractiveShell, line: str) -> Any:
    """``%memory LINE`` in ``ip``; returns what the magic returns (the view)."""
    return ip.run_line_magic("memory", line)


def use_api(ip: InteractiveShell, base_url: str, monkeypatch: Any) -> None:
    """The real SDK against the scripted server at ``base_url``, configured the way a
    user would (environment), without retries."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
    ip.run_line_magic("config", "IPyMemory.max_retries = 0")


@contextmanager
def ctrl_c_raises() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt in the main thread, as in an interactive session,
    even when the tests run where it is ignored (a shell starts a background job with
    SIGINT ignored, and Python then installs no handler: a test's Ctrl-C would be lost)."""
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved)
