"""Screening what gets remembered (SPEC §7, §13): credentials, origin, instructions, and
what another agent's item carries.

The API the commit paths use: :func:`screen_batch` (an extractor's batch + the history it
read) and :func:`screen_records` (API / CLI / import / undo / check; origin given), each
giving one :class:`Screening` per record with its :class:`Verdict` and its findings
(:class:`Finding`: which rule of ``rules.yaml`` fired, on what); :func:`redact` and
:func:`find_secrets` for any other text; :func:`consolidation_needs_review` for plans.

Layout: ``screening.py`` (the verdict), ``origin.py`` / ``evidence.py`` / ``normative.py``
/ ``terms.py`` / ``dependence.py`` / ``adoption.py`` (where a user's item came from; the
last: whether the user's words adopt an output, with words of ``lexicons.yaml``), ``instructs.py``
(instructions to the assistant), ``agent.py`` (another agent's item: what it carries) with
``destinations.py``, ``shell.py`` and ``lexicons.py`` + ``lexicons.yaml`` (its words in 26
languages), ``rules.py`` + ``rules.yaml`` (the rule table), ``lexicon.py`` (word
frequencies; the language detector is the package's one, ``ipymemory/_language.py``).
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
from .rules import Finding
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
    "Finding",
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
