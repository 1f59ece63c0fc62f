"""Screening what gets remembered (SPEC §7): credentials, origin, instructions.

The API the commit paths use: :func:`screen_batch` (an extractor's batch + the history it
read) and :func:`screen_records` (API / CLI / import / undo / check; origin given), each
giving one :class:`Screening` per record with its :class:`Verdict`; :func:`redact` and
:func:`find_secrets` for any other text; :func:`consolidation_needs_review` for plans.
"""

from __future__ import annotations

from .._secrets import SECRET_KINDS, SecretHit, find_secrets, redact, redact_data
from .evidence import EvidenceMatch
from .instructs import (
    DANGEROUS,
    HOW_TO_WORK,
    dangerous_reasons,
    instruction_reasons,
    instructs_assistant,
)
from .origin import (
    Origin,
    OriginDecision,
    Sources,
    decide_origin,
    history_sources,
    least_trusted,
)
from .screening import (
    Screening,
    Verdict,
    consolidation_needs_review,
    screen_batch,
    screen_record,
    screen_records,
)

__all__ = [
    "DANGEROUS",
    "HOW_TO_WORK",
    "SECRET_KINDS",
    "EvidenceMatch",
    "Origin",
    "OriginDecision",
    "Screening",
    "SecretHit",
    "Sources",
    "Verdict",
    "consolidation_needs_review",
    "dangerous_reasons",
    "decide_origin",
    "find_secrets",
    "history_sources",
    "instruction_reasons",
    "instructs_assistant",
    "least_trusted",
    "redact",
    "redact_data",
    "screen_batch",
    "screen_record",
    "screen_records",
]
