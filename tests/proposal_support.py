"""Another agent's proposal waiting for review, kept as the MCP server keeps one (SPEC
§10): what the Lab panel and the endpoint tests decide."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ipymemory import MemoryStore
from ipymemory.review.door import Door
from ipymemory.review.proposals import Intake, keep_proposals, parse_items
from ipymemory.review.provenance import TurnProvenance


def agent_batch(directory: Path, *items: Mapping[str, str], via: str = "mcp") -> str:
    """``items`` (extractor-shaped dicts) proposed by another agent (``via``) in review
    mode, screened and kept in ``directory``'s pending/; the batch id."""
    kept = keep_proposals(
        MemoryStore(directory),
        parse_items([dict(item) for item in items]),
        Intake(TurnProvenance(f"{via}-test", via=Door(via)), None),
    )
    assert kept.batch_id is not None, kept
    return kept.batch_id
