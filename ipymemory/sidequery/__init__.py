"""Side-queries: tool-free model calls that select, extract and consolidate memories."""

from __future__ import annotations

from .consolidate import ConsolidationPlan, plan_consolidation
from .extract import ExtractedItem, Extraction, extract_memories
from .replies import side_query_json
from .select import Selection, select_memories

# The exact last_error texts of SPEC §3, set by the caller when a side-query fails.
LAST_ERROR_SELECT = "Memory selection failed; deterministic fallback used"
LAST_ERROR_EXTRACT = "Memory extraction failed"
LAST_ERROR_CONSOLIDATE = "Memory consolidation failed"

__all__ = [
    "LAST_ERROR_CONSOLIDATE",
    "LAST_ERROR_EXTRACT",
    "LAST_ERROR_SELECT",
    "ConsolidationPlan",
    "ExtractedItem",
    "Extraction",
    "Selection",
    "extract_memories",
    "plan_consolidation",
    "select_memories",
    "side_query_json",
]
