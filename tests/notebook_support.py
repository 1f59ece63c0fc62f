"""Helpers shared by the notebook front-end tests (views, magics)."""

from __future__ import annotations

import json

from ipymemory import MemoryRecord


def rec(
    name: str, desc: str = "a note", body: str = "body text", type: str = "user"
) -> MemoryRecord:
    """A valid record with defaults for everything but the name."""
    return MemoryRecord(name=name, type=type, description=desc, body=body)


def items_json(*records: MemoryRecord) -> str:
    """An extractor reply proposing ``records``."""
    return json.dumps([r.to_json() for r in records])
