"""The consolidator side-query: a plan that replaces some candidates by new records.

Input (SPEC §3, §9): the candidates (current set + this turn's extraction) and today's
date as sorted-key JSON ``{"candidates": [{"body", "description", "name", "type"}, …],
"today": "YYYY-MM-DD (Weekday)"}``. The reply must be exactly
``{"source_names": […], "records": […]}`` (see :func:`validate_plan`), both empty when
there is nothing to merge (:attr:`ConsolidationPlan.is_empty`); anything else raises
:class:`SideQueryError` naming the flaw, and the caller sets
``last_error = LAST_ERROR_CONSOLIDATE``. The plan is only a proposal: the store
applies it in one manifest swap (``MemoryStore.apply_consolidation``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import _constants as C
from .._dates import today_text
from ..errors import SideQueryError
from ..model import ModelClient, Usage
from ..store.record import MemoryRecord
from .prompts import CONSOLIDATOR_PROMPT
from .replies import encode_input, side_query, validate_plan
from .schemas import CONSOLIDATOR_SCHEMA

__all__ = ["CONSOLIDATE_MAX_TOKENS", "ConsolidationPlan", "plan_consolidation"]

# The replacements may restate much of the set; leave room so a valid plan is
# not cut off (a max_tokens stop is always rejected).
CONSOLIDATE_MAX_TOKENS = C.CONSOLIDATE_MAX_TOKENS


@dataclass(frozen=True)
class ConsolidationPlan:
    """Replace the candidates named in ``source_names`` by ``records``."""

    source_names: tuple[str, ...]
    records: tuple[MemoryRecord, ...]

    @property
    def is_empty(self) -> bool:
        """The consolidator's "nothing to merge": no record replaced, none written."""
        return not self.source_names and not self.records

    def to_json(self) -> dict[str, list[str] | list[dict[str, str]]]:
        return {
            "source_names": list(self.source_names),
            "records": [record.to_json() for record in self.records],
        }


def plan_consolidation(
    model: ModelClient,
    candidates: Sequence[MemoryRecord],
    *,
    side_model: str | None = None,
    max_tokens: int = CONSOLIDATE_MAX_TOKENS,
    today: str | None = None,
) -> tuple[ConsolidationPlan, Usage]:
    """Ask ``model`` for a consolidation plan over ``candidates`` (``today`` defaults
    to :func:`~ipymemory._dates.today_text`).

    Raises :class:`SideQueryError` (message = the exact cause) on empty or
    duplicate-named candidates (no call made), an API failure or an invalid plan.
    """
    if not candidates:
        raise SideQueryError("consolidation has no candidates")
    names = [record.name for record in candidates]
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise SideQueryError(f"consolidation candidates repeat the name {name!r}")
        seen.add(name)
    payload = encode_input(
        {
            "candidates": [record.to_json() for record in candidates],
            "today": today_text() if today is None else today,
        }
    )
    (sources, records), usage = side_query(
        model,
        system=CONSOLIDATOR_PROMPT,
        messages=[{"role": "user", "content": payload}],
        max_tokens=max_tokens,
        side_model=side_model,
        role="consolidator",
        schema=CONSOLIDATOR_SCHEMA,
        validate=lambda value: validate_plan(value, names, role="consolidator"),
    )
    return ConsolidationPlan(sources, records), usage
