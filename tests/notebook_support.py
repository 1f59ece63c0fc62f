"""Helpers shared by the notebook front-end tests (views, magics)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

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
