"""Phase 1 of a turn: choosing the memories, and the block that carries them (SPEC §3,
§8, §9, §11, §12).

::

    read both scopes    read_scopes (review/scopes.py): the project's set, then the user's
                        records the project does not shadow
    select              select_from: the whole set when its block fits the memory
                        budget (issue 31: no selection, no side-query); else, by the
                        keyword ranking at once, its best ``limit`` records and then
                        the next best while the block fits the budget (selector
                        ``keyword``, the default: fill_by_rank), or at most ``limit``
                        chosen by the side model over the ranking's best candidates,
                        else the keyword fallback (selector ``model``,
                        sidequery/select.py); none when the limit is 0
    the injected block  memory_block: render_memory_block (turn/injection.py) with, per
                        chosen record, its scope (user-wide), the date its own scope's
                        journal says it was saved (saved_dates) and the notes said of
                        it (source_notes: a source file changed since it was saved)

:func:`choose_memories` (read both scopes, then select) is the one selection that
``%%agent``, ``%memory select`` / ``ipymemory select`` and MCP ``memory_select`` share,
so they choose the same records for the same question (SPEC §12). It raises what reading
the project's set raises; the turn's :func:`choose_for_turn` turns every failure into a
``last_error`` (the turn goes on, with fewer memories or none) and counts the selector's
call. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .. import _constants as C
from ..errors import MemoryStoreError
from ..model import ModelClient
from ..review.scopes import PROJECT, SCOPES, ScopedSet, read_scopes
from ..sidequery import LAST_ERROR_SELECT, Selection, select_memories
from ..sidequery.fallback import keyword_select
from ..store.recency import JournalCache, saved_dates
from ..store.record import MemoryRecord
from ..store.sources import stale_records
from ..store.store import MemoryStore
from .context import TurnContext
from .history import estimate_tokens
from .injection import render_memory_block
from .question import Question

__all__ = [
    "LAST_ERROR_READ",
    "Chosen",
    "block_tokens",
    "choose_for_turn",
    "choose_memories",
    "fill_by_rank",
    "memory_block",
    "saved_dates_of",
    "select_from",
    "source_notes",
]

# The failure SPEC §3 does not name (its select text comes from sidequery).
LAST_ERROR_READ = "Memory could not be read"


@dataclass(frozen=True)
class Chosen:
    """The selection and the sets it was made from (``scoped``: both scopes as read;
    empty when the project's set could not be read)."""

    selection: Selection
    scoped: ScopedSet = field(default_factory=lambda: ScopedSet(()))


def select_from(
    model: ModelClient,
    question: Question,
    scoped: ScopedSet,
    *,
    side_model: str | None,
    limit: int,
    budget: int = C.DEFAULT_MEMORY_BUDGET,
    selector: str = C.DEFAULT_SELECTOR,
    candidates: int = C.DEFAULT_SELECT_CANDIDATES,
) -> Selection:
    """``scoped``'s records for ``question``: all of them when their block fits
    ``budget`` tokens; else, with the ``keyword`` selector, the ranking's best ``limit``
    and then as many more as the budget holds (:func:`fill_by_rank`), with the ``model``
    selector at most ``limit``. A limit of 0 chooses none and asks nobody."""
    records = scoped.records
    if limit == 0 and records:
        return Selection((), "none", "max_selected is 0")
    if len(records) > limit:
        size = block_tokens(records, budget)
        if size <= budget:
            why = f"all {len(records)} records: they fit the memory budget ({size} of {budget})"
            return Selection(tuple(records), "all", why)
        if selector == "keyword":
            return fill_by_rank(question.text, records, limit=limit, budget=budget)
    return select_memories(
        model,
        question.text,
        records,
        scoped.catalog,
        side_model=side_model,
        limit=limit,
        selector=selector,
        candidates=candidates,
    )


def fill_by_rank(
    query: str, records: Sequence[MemoryRecord], *, limit: int, budget: int
) -> Selection:
    """The keyword selector (issue 31, no side-query): the ranking's best ``limit``
    records, then the next best -- after the records that match, the newest -- while
    the block stays within ``budget`` tokens. Best first; ``records`` has unique names."""
    # The ranking is cut where the budget must be full: no record's block is smaller.
    ranked = keyword_select(query, records, limit=min(len(records), limit + budget // 16))
    taken = {record.name for record in ranked}
    order = [*ranked, *(r for r in reversed(records) if r.name not in taken)]
    chosen = order[:limit]
    total = block_tokens(chosen)
    for record in order[limit:]:
        size = total + block_tokens((record,)) - _TAGS_TOKENS
        if size > budget:
            break
        chosen.append(record)
        total = size
    if len(chosen) > limit:
        why = (
            f"the {len(chosen)} best of {len(records)} records by keyword, as many as fit "
            f"the memory budget ({total} of {budget}; selector keyword)"
        )
    else:
        why = f"the {len(chosen)} best of {len(records)} records by keyword (selector keyword)"
    return Selection(tuple(chosen), "keyword", why)


def block_tokens(records: Sequence[MemoryRecord], stop: int | None = None) -> int:
    """The estimated tokens of the injected block of ``records`` (each header with a
    saved date, as the turn writes it); counting stops once past ``stop``."""
    total = _TAGS_TOKENS
    for record in records:
        one = render_memory_block((record,), saved={record.name: "2000-01-01"})
        total += estimate_tokens(one) - _TAGS_TOKENS
        if stop is not None and total > stop:
            break
    return total


# The block's own tags, counted once (each record's block above holds them too).
_TAGS_TOKENS = estimate_tokens("<relevant_memories>\n\n</relevant_memories>")


class SelectionSettings(Protocol):
    """The settings a selection reads: :class:`SessionConfig` in a turn, resolved
    :class:`~ipymemory.config.Settings` in the command layer and the MCP server."""

    @property
    def side_model(self) -> str | None: ...
    @property
    def max_selected(self) -> int: ...
    @property
    def memory_budget(self) -> int: ...
    @property
    def selector(self) -> str: ...
    @property
    def select_candidates(self) -> int: ...


def choose_memories(
    model: ModelClient,
    question: Question,
    project: MemoryStore,
    user: MemoryStore | None,
    settings: SelectionSettings,
    *,
    limit: int | None = None,
) -> Chosen:
    """Read both scopes and select over them (see :func:`select_from`) with
    ``settings``: without ``limit``, the selection a turn makes (``max_selected``, a set
    within ``memory_budget`` whole); an explicit ``limit`` is a count asked for (``%memory
    select --limit``, MCP ``memory_select(limit=…)``): at most that many, even from a set
    within the budget. Raises :class:`MemoryStoreError` when the project's set cannot be
    read; a user scope that cannot be read leaves its records out and says why in
    ``chosen.scoped.error``."""
    scoped = read_scopes(project, user)
    selection = select_from(
        model,
        question,
        scoped,
        side_model=settings.side_model,
        limit=settings.max_selected if limit is None else limit,
        budget=settings.memory_budget if limit is None else 0,
        selector=settings.selector,
        candidates=settings.select_candidates,
    )
    return Chosen(selection, scoped)


def choose_for_turn(ctx: TurnContext, question: Question) -> Chosen:
    """The turn's selection: :func:`choose_memories` over the context's stores and
    settings, every failure logged (an unreadable set selects nothing; an unreadable
    user scope, the project's only; a fallback says why) and the selector's call counted."""
    log = ctx.log
    try:
        chosen = choose_memories(ctx.model, question, ctx.store, ctx.user_store, ctx.config)
    except MemoryStoreError as e:
        log.fail(LAST_ERROR_READ, str(e), e)
        return Chosen(Selection((), "none", f"the memory set could not be read: {e}"))
    if chosen.scoped.unreadable_note is not None:  # the turn goes on without those files
        log.fail(LAST_ERROR_READ, chosen.scoped.unreadable_note)
    if chosen.scoped.error is not None:  # the turn goes on with the project's set
        log.fail(LAST_ERROR_READ, chosen.scoped.error)
    selection = chosen.selection
    ctx.record_side("selector", selection.usage)
    if selection.source == "fallback":
        log.fail(LAST_ERROR_SELECT, selection.reason or "unknown cause")
    return chosen


def memory_block(
    ctx: TurnContext,
    chosen: Chosen,
    journal: JournalCache,
    *,
    notes: Callable[[Sequence[MemoryRecord], dict[str, list[str]]], dict[str, list[str]]]
    | None = None,
) -> str:
    """The ``<relevant_memories>`` block for the chosen records (``""`` for none).
    ``journal`` is the session's cache of the project's journal entries; ``notes``, when
    given, adds its lines to the records' source notes (SPEC §14: a memory not followed)."""
    records = chosen.selection.records
    lines = source_notes(ctx.store, records, chosen.scoped, journal)
    return render_memory_block(
        records,
        user_wide=chosen.scoped.user_names,
        notes=notes(records, lines) if notes is not None else lines,
        saved=saved_dates_of(ctx, records, chosen.scoped, journal),
    )


def saved_dates_of(
    ctx: TurnContext, records: Sequence[MemoryRecord], scoped: ScopedSet, journal: JournalCache
) -> dict[str, str]:
    """Name -> the local date its file was saved (SPEC §9 age), each from the journal of
    its own scope (SPEC §11), read once; names a journal does not know (or an
    unreadable journal) get none."""
    out: dict[str, str] = {}
    for scope in SCOPES:
        stored = scoped.project if scope == PROJECT else scoped.user
        files = {entry.record.name: entry.file for entry in stored}
        wanted = {files[r.name]: r.name for r in records if r.name in files}
        if not wanted:
            continue
        try:
            if scope == PROJECT:
                entries = journal.entries(ctx.store.journal())
            else:
                user = ctx.user_store
                entries = tuple(reversed(user.history())) if user is not None else ()
        except MemoryStoreError:
            continue
        out.update({wanted[f]: day for f, day in saved_dates(entries, wanted).items()})
    return out


def source_notes(
    store: MemoryStore, records: Sequence[MemoryRecord], scoped: ScopedSet, journal: JournalCache
) -> dict[str, list[str]]:
    """SPEC §11: per chosen project record, the sources that changed since it was saved
    (best effort: a journal that cannot be read says nothing)."""
    names = [r.name for r in records if r.name not in scoped.user_names]
    if not names:
        return {}
    try:
        entries = journal.entries(store.journal())
        stale = stale_records(store, names, journal=entries, current=scoped.project)
    except MemoryStoreError:
        return {}
    return {
        name: [f"source changed since saved: {c.path}" for c in changes]
        for name, changes in stale.items()
    }
