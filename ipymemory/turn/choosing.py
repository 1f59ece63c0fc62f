"""Phase 1 of a turn: choosing the memories, and the sections that carry them (SPEC §3,
§8, §9, §11, §12, §13).

::

    read both scopes    read_scopes (review/scopes.py): the project's set, then the user's
                        records the project does not shadow
    select at once      select_from: the whole set when its block fits the memory
                        budget (issue 31); else the keyword ranking's best ``limit``
                        records, then the next best while the block fits the budget
                        (fill_by_rank); none when the limit is 0. No side-query: the
                        first request never waits for one (SPEC §13)
    the model's pick    model_ask (selector ``model``, a set past the budget): what the
                        side model is asked beside the main call -- the set's catalog
                        (its ``select_candidates`` newest past that), the query, the
                        names the first request carries; ask_model asks it
                        (sidequery/select.py). A turn runs it on a thread
                        (turn/beside.py) and what it adds joins a later request
                        (turn/memory_feed.py); the commands wait for it
    the sections        sections_for: per record, its section of a block
                        (turn/injection.py) with its scope (user-wide), the date its own
                        scope's journal says it was saved (saved_dates) and the notes
                        said of it (source_notes: a source file changed since it was
                        saved)

:func:`choose_memories` (read both scopes, select, and ask the model when there is a
choice) is the one selection that ``%%agent``, ``%memory select`` / ``ipymemory select``,
MCP ``memory_select`` and the Jupyter AI persona share, so they choose the same records
for the same question (SPEC §12, §13): :meth:`Chosen.records` is what the agent has by
its answer when the pick joins in time. It raises what reading the project's set raises;
the turn's :func:`choose_for_turn` turns every failure into a ``last_error`` (the turn
goes on, with fewer memories or none). Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .. import _constants as C
from .._text import counted
from ..errors import MemoryStoreError
from ..model import ModelClient
from ..review.scopes import PROJECT, SCOPES, ScopedSet, read_scopes
from ..sidequery import LAST_ERROR_SELECT, Selection, select_memories
from ..sidequery.fallback import keyword_select
from ..sidequery.select import newest_shown
from ..store.recency import JournalCache, saved_dates
from ..store.record import MemoryRecord
from ..store.sources import stale_records
from ..store.store import MemoryStore
from .context import TurnContext
from .history import estimate_tokens
from .injection import render_section, section_tokens
from .question import Question

__all__ = [
    "LAST_ERROR_READ",
    "Chosen",
    "ModelAsk",
    "ask_model",
    "block_tokens",
    "choose_for_turn",
    "choose_memories",
    "fill_by_rank",
    "model_ask",
    "saved_dates_of",
    "sections_for",
    "select_from",
    "source_notes",
    "took_pick",
]

# The failure SPEC §3 does not name (its select text comes from sidequery).
LAST_ERROR_READ = "Memory could not be read"


@dataclass(frozen=True)
class ModelAsk:
    """What the side model is asked (selector ``model``): the question, the sets it may
    pick from (shown as the catalog of their ``candidates`` newest records, built where
    the model is asked: a turn's first request does not wait for it), the names the first
    request carries (``given``) and how many it may pick."""

    query: str
    scoped: ScopedSet
    candidates: int
    given: tuple[str, ...]
    limit: int
    side_model: str | None


@dataclass(frozen=True)
class Chosen:
    """The selection the first request carries, the sets it was made from (``scoped``:
    both scopes as read; empty when the project's set could not be read), what the
    side model is to be asked (``ask``: None when there is no choice for it, or the
    selector is ``keyword``) and its pick when it was waited for (``pick``)."""

    selection: Selection
    scoped: ScopedSet = field(default_factory=lambda: ScopedSet(()))
    ask: ModelAsk | None = None
    pick: Selection | None = None

    @property
    def added(self) -> tuple[MemoryRecord, ...]:
        """What the model picked that the selection lacks (a failed pick adds none)."""
        if self.pick is None or self.pick.source != "model":
            return ()
        have = set(self.selection.names)
        return tuple(r for r in self.pick.records if r.name not in have)

    def records(self, limit: int | None = None) -> tuple[MemoryRecord, ...]:
        """What the agent has by its answer (the selection, then what the pick adds);
        with ``limit``, a count asked for: the model's pick when it was asked (its
        fallback's when it failed), else the ranking's best."""
        if limit is None:
            return (*self.selection.records, *self.added)
        chosen = self.pick if self.pick is not None else self.selection
        return chosen.records[:limit]


def select_from(
    question: Question,
    scoped: ScopedSet,
    *,
    limit: int,
    budget: int = C.DEFAULT_MEMORY_BUDGET,
) -> Selection:
    """``scoped``'s records for ``question``, at once: all of them when they are at
    most ``limit`` or their block fits ``budget`` tokens; else the ranking's best
    ``limit`` and then as many more as the budget holds (:func:`fill_by_rank`). A limit
    of 0 chooses none."""
    records = scoped.records
    if not records:
        return Selection((), "none")
    if limit == 0:
        return Selection((), "none", "max_selected is 0")
    every = f"all {counted(len(records), 'record')}"
    if len(records) <= limit:
        return Selection(tuple(records), "all", f"{every}: the set fits")
    size = block_tokens(records, budget)
    if size <= budget:
        why = f"{every}: they fit the memory budget ({size} of {budget})"
        return Selection(tuple(records), "all", why)
    return fill_by_rank(question.text, records, limit=limit, budget=budget)


def model_ask(
    question: Question,
    scoped: ScopedSet,
    selection: Selection,
    settings: SelectionSettings,
    *,
    limit: int,
) -> ModelAsk | None:
    """What the side model is asked about ``selection`` (None: nothing to ask -- the
    selector is ``keyword``, or the selection left no choice)."""
    if settings.selector != "model" or selection.source != "keyword":
        return None
    return ModelAsk(
        question.text,
        scoped,
        settings.select_candidates,
        selection.names,
        limit,
        settings.side_model,
    )


def ask_model(model: ModelClient, ask: ModelAsk) -> Selection:
    """The side model's pick for ``ask`` (never raises a memory error: a failure is a
    ``fallback`` selection that says why, SPEC §3)."""
    scoped = ask.scoped
    records, catalog = newest_shown(scoped.records, scoped.catalog, ask.candidates)
    return select_memories(
        model,
        ask.query,
        records,
        catalog,
        side_model=ask.side_model,
        limit=ask.limit,
        given=ask.given,
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
            f"the memory budget ({total} of {budget})"
        )
    else:
        why = f"the {len(chosen)} best of {len(records)} records by keyword"
    return Selection(tuple(chosen), "keyword", why)


def block_tokens(records: Sequence[MemoryRecord], stop: int | None = None) -> int:
    """The estimated tokens of the injected block of ``records`` (each header with a
    saved date, as the turn writes it); counting stops once past ``stop``."""
    total = _TAGS_TOKENS
    for record in records:
        total += section_tokens(record)
        if stop is not None and total > stop:
            break
    return total


# The block's own tags, counted once.
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
    wait: bool = True,
    reuse: bool = False,
) -> Chosen:
    """Read both scopes, select over them at once (see :func:`select_from`) with
    ``settings`` and, when there is a choice for it, ask the side model (``wait``:
    now; else ``chosen.ask`` says what to ask). Without ``limit``, the selection a turn
    makes (``max_selected``, a set within ``memory_budget`` whole); an explicit
    ``limit`` is a count asked for (``%memory select --limit``, MCP
    ``memory_select(limit=…)``): at most that many, even from a set within the budget.
    Raises :class:`MemoryStoreError` when the project's set cannot be read; a user
    scope that cannot be read leaves its records out and says why in
    ``chosen.scoped.error``. ``reuse``: each store's last read while its set did not
    change (``read_scopes``: a turn's, whose first request waits for this)."""
    scoped = read_scopes(project, user, reuse=reuse)
    count = settings.max_selected if limit is None else limit
    selection = select_from(
        question, scoped, limit=count, budget=settings.memory_budget if limit is None else 0
    )
    ask = model_ask(question, scoped, selection, settings, limit=count)
    pick = ask_model(model, ask) if ask is not None and wait else None
    return Chosen(selection, scoped, ask, pick)


def choose_for_turn(ctx: TurnContext, question: Question) -> Chosen:
    """The turn's selection: :func:`choose_memories` over the context's stores and
    settings, the model not waited for, every failure logged (an unreadable set selects
    nothing; an unreadable user scope, the project's only)."""
    log = ctx.log
    try:
        chosen = choose_memories(
            ctx.model, question, ctx.store, ctx.user_store, ctx.config, wait=False, reuse=True
        )
    except MemoryStoreError as e:
        log.fail(LAST_ERROR_READ, str(e), e)
        return Chosen(Selection((), "none", f"the memory set could not be read: {e}"))
    if chosen.scoped.unreadable_note is not None:  # the turn goes on without those files
        log.fail(LAST_ERROR_READ, chosen.scoped.unreadable_note)
    if chosen.scoped.error is not None:  # the turn goes on with the project's set
        log.fail(LAST_ERROR_READ, chosen.scoped.error)
    return chosen


def took_pick(ctx: TurnContext, pick: Selection) -> None:
    """The model's pick of a turn was looked at: its call counted, a failure logged
    (SPEC §3: the keyword ranking the first request carries is the fallback)."""
    ctx.record_side("selector", pick.usage)
    if pick.source == "fallback":
        ctx.log.fail(LAST_ERROR_SELECT, pick.reason or "unknown cause")


def sections_for(
    ctx: TurnContext,
    records: Sequence[MemoryRecord],
    scoped: ScopedSet,
    journal: JournalCache,
    *,
    notes: Callable[[Sequence[MemoryRecord], dict[str, list[str]]], dict[str, list[str]]]
    | None = None,
) -> list[tuple[str, str]]:
    """(name, section) of each record as a request writes it now (turn/injection.py).
    ``journal`` is the session's cache of the project's journal entries; ``notes``, when
    given, adds its lines to the records' source notes (SPEC §14: a memory not followed)."""
    if not records:
        return []
    lines = source_notes(ctx.store, records, scoped, journal)
    said = notes(records, lines) if notes is not None else lines
    saved = saved_dates_of(ctx, records, scoped, journal)
    return [
        (
            r.name,
            render_section(
                r,
                user_wide=r.name in scoped.user_names,
                notes=said.get(r.name, ()),
                saved=saved.get(r.name),
            ),
        )
        for r in records
    ]


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
