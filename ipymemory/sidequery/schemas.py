"""The JSON schemas sent with each side-query as structured outputs (SPEC §9).

Each describes exactly the reply shape the validators of :mod:`.replies` accept,
built from the same key lists (``RECORD_KEYS``, ``ITEM_OPTIONAL_KEYS``) and the record
types of :class:`~ipymemory.store.record.MemoryType`, so the two cannot drift apart.
Only the keywords the Messages API enforces are used (types, ``enum``, ``required``,
``additionalProperties: false``, ``minItems`` 0 or 1), in the form the SDK's own
schema helper sends (a test checks they are its fixed points); the limits it does not enforce
(at most 3 excerpts of 300 characters, name slugs, record sizes) are said in
descriptions and checked, as strictly as without a schema, by the validators.
The summarizer's reply is free text: it has no schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import _constants as C
from ..store.record import MemoryType
from .replies import ITEM_OPTIONAL_KEYS, PLAN_KEYS, RECORD_KEYS, STATED_KEYS, VERDICT_KEYS

__all__ = [
    "CONSOLIDATOR_SCHEMA",
    "EXTRACTOR_SCHEMA",
    "FOLLOW_SCHEMA",
    "SELECTOR_SCHEMA",
    "STATED_SCHEMA",
]

_DESCRIPTIONS = {
    "name": "lowercase slug: a-z and 0-9, words joined by single hyphens",
    "type": "what kind of memory this is",
    "description": "one line saying what the memory is about",
    "body": "the memory itself, Markdown",
}
_OPTIONAL: dict[str, dict[str, Any]] = {
    "evidence": {
        "type": "array",
        "items": {"type": "string"},
        "minItems": 1,
        "description": (
            f"1 to {C.MAX_EVIDENCE_ITEMS} verbatim excerpts of what the user wrote, "
            f"each at most {C.MAX_EVIDENCE_CHARS} characters"
        ),
    },
    "replaces": {
        "type": "string",
        "description": "the name of the one existing memory this item corrects or updates",
    },
}


def _record(optional: tuple[str, ...] = ()) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for key in RECORD_KEYS:
        if key == "type":  # an enum alone, as the SDK's own schema helper writes one
            prop: dict[str, Any] = {"enum": [t.value for t in MemoryType]}
        else:
            prop = {"type": "string"}
        properties[key] = {**prop, "description": _DESCRIPTIONS[key]}
    for key in optional:
        properties[key] = _OPTIONAL[key]
    return {
        "type": "object",
        "properties": properties,
        "required": list(RECORD_KEYS),
        "additionalProperties": False,
    }


SELECTOR_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {"type": "string", "description": "a memory name copied from the catalog"},
}

EXTRACTOR_SCHEMA: dict[str, Any] = {"type": "array", "items": _record(ITEM_OPTIONAL_KEYS)}

CONSOLIDATOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "records": {"type": "array", "items": _record()},
        "source_names": {
            "type": "array",
            "items": {"type": "string", "description": "a candidate's name"},
        },
    },
    "required": list(PLAN_KEYS),
    "additionalProperties": False,
}


def _answers(subject: str, keys: Sequence[str], **fields: dict[str, Any]) -> dict[str, Any]:
    """An array of one object per asked ``subject``: its ``name`` and ``fields``."""
    name = {"type": "string", "description": f"{subject}'s name, copied from the input"}
    return {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"name": name, **fields},
            "required": list(keys),
            "additionalProperties": False,
        },
    }


FOLLOW_SCHEMA: dict[str, Any] = _answers(
    "a memory",
    VERDICT_KEYS,
    reason={
        "type": "string",
        "description": f"one short clause, at most {C.FOLLOW_REASON_CHARS} characters",
    },
    verdict={"enum": list(C.FOLLOW_VERDICTS)},
)

# The translation check's answers (issue 39): which of the sentences each item states.
STATED_SCHEMA: dict[str, Any] = _answers(
    "an item",
    STATED_KEYS,
    states={
        "type": "array",
        "items": {"type": "integer"},
        "description": "the numbers of the sentences the item states; [] for none",
    },
)
