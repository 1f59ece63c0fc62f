"""The selector side-query: which memories (at most ``limit``) a turn should see.

The model gets the catalog and the query and names records; its reply is used only
when valid (SPEC §3). Otherwise -- invalid reply, API error, no model -- the
deterministic :func:`keyword_select` chooses, and :class:`Selection` says why, so the
caller can set ``last_error = LAST_ERROR_SELECT``. Never raises a memory error.

The model's input is bounded whatever the size of the set (issue 31): a set of more
than ``candidates`` records is shown as the catalog lines of its ``candidates`` best
records by :func:`keyword_select` (then the newest, when fewer match), in set order.
``selector="keyword"`` asks no model at all: the keyword ranking's best ``limit``
records, at once (source ``"keyword"``: a choice, not a failure).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from .. import _constants as C
from .._dates import today_text
from .._text import counted
from ..errors import SideQueryError, SideQueryReplyError
from ..model import ModelClient, Usage
from ..store.record import MemoryRecord
from .fallback import keyword_select
from .prompts import SELECTOR_PROMPT
from .replies import encode_input, side_query, validate_names
from .schemas import SELECTOR_SCHEMA

__all__ = ["SELECT_MAX_TOKENS", "Selection", "select_memories", "shortlist"]

# Room for far more names than are ever kept: a reply that needs more is not a
# selection, and the stop would be a max_tokens truncation anyway.
SELECT_MAX_TOKENS = C.SELECT_MAX_TOKENS

# "all": every record, without asking (the set fits, SPEC §12); "keyword": the keyword
# ranking by choice (selector "keyword", issue 31), not because the model failed.
SelectionSource = Literal["model", "fallback", "none", "all", "keyword"]


@dataclass(frozen=True)
class Selection:
    """The records chosen for a turn, who chose them and, if not the model, why."""

    records: tuple[MemoryRecord, ...]
    source: SelectionSource
    reason: str | None = None
    usage: Usage = field(default_factory=Usage)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(record.name for record in self.records)


def select_memories(
    model: ModelClient,
    query: str,
    records: Sequence[MemoryRecord],
    catalog: str,
    *,
    side_model: str | None = None,
    limit: int = C.DEFAULT_MAX_SELECTED,
    max_tokens: int = SELECT_MAX_TOKENS,
    today: str | None = None,
    selector: str = "model",
    candidates: int = C.DEFAULT_SELECT_CANDIDATES,
) -> Selection:
    """Select up to ``limit`` of ``records`` for ``query`` (see module docstring);
    the input is ``{"catalog", "query", "today"}`` (``today`` defaults to
    :func:`~ipymemory._dates.today_text`); ``catalog`` is the set's catalog, one line
    per record in the order of ``records``.

    An empty ``records`` makes no model call (source ``"none"``), nor does a set of at
    most ``limit`` records: there is nothing to choose, so all of them (source ``"all"``,
    SPEC §12; no side-query before the turn's first token).
    """
    if not records:
        return Selection((), "none")
    if limit == 0:  # the setting says none: not a failure of a model or its reply
        return Selection((), "none", "max_selected is 0")
    if len(records) <= limit:
        return Selection(
            tuple(records), "all", f"all {counted(len(records), 'record')}: the set fits"
        )
    if selector == "keyword":
        chosen = _fallback(query, records, limit)
        why = f"the {len(chosen)} best of {len(records)} records by keyword (selector keyword)"
        return Selection(chosen, "keyword", why)
    shown, catalog = shortlist(query, records, catalog, candidates)
    by_name = {record.name: record for record in shown}
    usage = Usage()
    try:
        names, usage = side_query(
            model,
            system=SELECTOR_PROMPT,
            messages=[
                {
                    "role": "user",
                    "content": encode_input(
                        {
                            "catalog": catalog,
                            "query": query,
                            "today": today_text() if today is None else today,
                        }
                    ),
                }
            ],
            max_tokens=max_tokens,
            side_model=side_model,
            role="selector",
            schema=SELECTOR_SCHEMA,
            validate=lambda value: validate_names(value, by_name, role="selector"),
        )
    except SideQueryError as e:
        if isinstance(e, SideQueryReplyError) and e.usage is not None:
            usage = e.usage
        return Selection(_fallback(query, records, limit), "fallback", str(e), usage)
    return Selection(tuple(by_name[name] for name in names[: max(limit, 0)]), "model", None, usage)


def shortlist(
    query: str, records: Sequence[MemoryRecord], catalog: str, candidates: int
) -> tuple[tuple[MemoryRecord, ...], str]:
    """The records the model selector is shown and their catalog: all of them when
    there are at most ``candidates``; else the ``candidates`` best by keyword (then the
    newest, when fewer match), in set order, their lines taken from ``catalog``."""
    if len(records) <= candidates:
        return tuple(records), catalog
    best = {id(r) for r in keyword_select(query, records, limit=candidates)}
    for record in reversed(records):  # the newest, when few records match the query
        if len(best) >= candidates:
            break
        best.add(id(record))
    lines = catalog.split("\n")[:-1]
    if len(lines) != len(records):  # not the set's catalog: the lines' names say enough
        lines = [f"- [{r.name}] - {r.description}" for r in records]
    shown = [(r, line) for r, line in zip(records, lines, strict=True) if id(r) in best]
    return tuple(r for r, _ in shown), "".join(f"{line}\n" for _, line in shown)


def _fallback(query: str, records: Sequence[MemoryRecord], limit: int) -> tuple[MemoryRecord, ...]:
    return tuple(keyword_select(query, records, limit=limit))
