"""Helpers shared by the notebook front-end tests (views, magics)."""

from __future__ import annotations

import json

from ipymemory import MemoryRecord


def items_json(*records: MemoryRecord) -> str:
    """An extractor reply proposing ``records``."""
    return json.dumps([r.to_json() for r in records])
