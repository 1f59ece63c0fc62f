"""The consolidator side-query: a plan that replaces some candidates by new records.

Input (SPEC §3, §9): the candidates (current set + this turn's extraction) and today's
date as sorted-key JSON ``{"candidates": [{"body", "description", "name", "type"}, …],
"today": "YYYY-MM-DD (Weekday)"}``. The reply must be exactly
``{"source_names": […], "records": […]}`` (see :func:`validate_plan`), both empty when
there is nothing to merge (:attr:`ConsolidationPlan.is_empty`); anything else raises
:class:`SideQueryError` naming the flaw, and the caller sets
``last_error = LAST_ERROR_CONSOLIDATE``. The plan is only a proposal: the store
applies it in one manifest swap (``MemoryStore.apply_consolidation``).

**Bounded candidates** (issue 40, :func:`bounded_candidates`): the records of a set
whose candidates pass :data:`~ipymemory._constants.CONSOLIDATE_CANDIDATE_TOKENS` are
the ones most related to the turn's items (the keyword ranking over their text), then
the newest, that fit beside the items; a smaller set is sent whole, as before. The
plan's ``source_names`` must be candidates it was shown, and its records' names may
take neither a kept candidate's name nor that of any current record it was not shown
(``others``): a plan that would is rejected whole, and the set stays as it is.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from .. import _constants as C
from .._dates import today_text
from .._tokens import estimate_tokens
from ..errors import SideQueryError, SideQueryReplyError
from ..model import ModelClient, Usage
from ..store.record import MemoryRecord
from .prompts import CONSOLIDATOR_PROMPT
from .related import related_part
from .replies import encode_input, side_query, validate_plan
from .schemas import CONSOLIDATOR_SCHEMA

__all__ = [
    "CONSOLIDATE_MAX_TOKENS",
    "ConsolidationPlan",
    "bounded_candidates",
    "plan_consolidation",
]

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
    others: Collection[str] = (),
) -> tuple[ConsolidationPlan, Usage]:
    """Ask ``model`` for a consolidation plan over ``candidates`` (``today`` defaults
    to :func:`~ipymemory._dates.today_text`); ``others`` are the current records not
    among them (:func:`bounded_candidates`): no new record may take their names.

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
        validate=lambda value: _not_taken(
            validate_plan(value, names, role="consolidator"), frozenset(others)
        ),
    )
    return ConsolidationPlan(sources, records), usage


def _not_taken(
    plan: tuple[tuple[str, ...], tuple[MemoryRecord, ...]], others: frozenset[str]
) -> tuple[tuple[str, ...], tuple[MemoryRecord, ...]]:
    for i, record in enumerate(plan[1]):
        if record.name in others:
            raise SideQueryReplyError(
                f"consolidator reply records item {i}: a memory named {record.name!r} "
                "already exists (one the consolidator was not shown: it saw a part of the set)"
            )
    return plan


def bounded_candidates(
    records: Sequence[MemoryRecord],
    items: Sequence[MemoryRecord] = (),
    budget: int = C.CONSOLIDATE_CANDIDATE_TOKENS,
) -> tuple[MemoryRecord, ...]:
    """The consolidator's candidates: ``records`` (the set, in set order) then ``items``
    (the turn's, always all of them), the records cut to the ones most related to the
    items' text, then the newest, that fit ``budget`` estimated tokens beside the items
    (the module docstring); all of them while they fit."""
    costs = [estimate_tokens(encode_input(record.to_json())) for record in records]
    room = budget - sum(estimate_tokens(encode_input(item.to_json())) for item in items)
    text = "\n".join(f"{i.name} {i.description} {i.body}" for i in items)
    keep = related_part(text, records, costs, max(room, 0))
    return (*(records[i] for i in keep), *items)
