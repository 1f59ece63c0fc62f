"""Where each batch of a session stands: :class:`BatchRegistry`, the one place a batch's
state changes (added, committed, discarded), each change checked here."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from traitlets import Dict, HasTraits

from ..errors import BatchError, MemoryStoreError
from ..store.record import MemoryRecord
from ..store.store import MemoryStore
from .batch import (
    BatchStatus,
    CommitResult,
    PendingBatch,
    check_decision,
    effective_reject,
    held_items,
    held_plan,
    plan_conflict,
    rescoped,
    scope_parts,
)
from .commit import Applied, apply_part
from .decision import PLAIN, Decision, PlanChoice
from .scopes import prepare_user_scope

__all__ = ["BatchRegistry"]

_SCOPE_OFF = (
    "{} would go to the user scope, which is off in this session (user_dir); switch "
    "them to the project (%memory commit --to-project NAME …) or set user_dir; nothing "
    "was committed"
)


class BatchRegistry(HasTraits):
    """The batches of one session and where each stands (see the module docstring).

    ``state`` (id → :class:`PendingBatch`, in creation order) is replaced by a new dict
    on every change, so ``registry.observe(callback, names="state")`` sees each one:
    review widgets follow their batch that way, whoever decided it (the widget,
    ``%memory commit``, code calling the session).
    """

    state = Dict(help="id -> PendingBatch in its latest state; read-only outside the registry")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._lock = threading.RLock()

    @property
    def all(self) -> tuple[PendingBatch, ...]:
        """Every batch, in creation order, in its latest state."""
        return tuple(self.state.values())

    @property
    def pending(self) -> tuple[PendingBatch, ...]:
        """The batches awaiting a decision (``pending``, or ``failed`` and retryable)."""
        return tuple(b for b in self.state.values() if b.open)

    def add(self, batch: PendingBatch) -> PendingBatch:
        """Register a new batch awaiting a decision."""
        with self._lock:
            if batch.id in self.state:
                raise BatchError(f"batch {batch.id!r} is already registered")
            if not batch.open:
                raise BatchError(f"batch {batch.id}: a new batch must await a decision")
            return self._record(batch)

    def lookup(self, batch: PendingBatch | str, *, undecided: bool = False) -> PendingBatch:
        """The latest state of ``batch`` (a batch or its id); with ``undecided``, refuse
        a batch already committed or discarded."""
        batch_id = batch if isinstance(batch, str) else batch.id
        current: PendingBatch | None = self.state.get(batch_id)
        if current is None:
            raise BatchError(f"batch {batch_id!r} does not belong to this session")
        if undecided and not current.open:
            raise BatchError(f"batch {current.id} is already {current.status}")
        return current

    def choose(self, batch_id: str | None = None) -> PendingBatch | None:
        """The pending batch ``batch_id``, or the latest pending one (None if none is)."""
        pending = self.pending
        if batch_id is None:
            return pending[-1] if pending else None
        for batch in pending:
            if batch.id == batch_id:
                return batch
        ids = ", ".join(b.id for b in pending) or "none"
        raise BatchError(f"no pending batch {batch_id!r} (pending: {ids})")

    def commit(
        self,
        store: MemoryStore,
        batch: PendingBatch | str,
        decision: Decision = PLAIN,
        *,
        user_store: MemoryStore | None = None,
        refusal: str | None = None,
    ) -> CommitResult:
        """Commit ``batch`` as ``decision`` says (see :mod:`ipymemory.review.commit`):
        its user-scope items (SPEC §11; ``decision.scopes`` moves items between scopes
        first, see :func:`~ipymemory.review.batch.rescoped`) into ``user_store`` first,
        in a commit of their own. A held item is committed only when the decision
        accepts it; those left unnamed stay pending in the batch (``CommitResult.held``).

        Raises :class:`BatchError` for an unknown or decided batch or a decision naming
        what the batch does not have. Otherwise the outcome is in the result:
        ``refusal`` (a reason the caller refuses every commit), a plan conflict, a held
        plan not accepted, or nothing to commit but held items leave the batch as it
        was; a store failure marks it ``failed`` (retryable); success marks it
        ``committed`` (``discarded`` when nothing was accepted), or leaves it pending
        with only its held items.
        """
        with self._lock:
            current = self.lookup(batch, undecided=True)
            check_decision(current, decision)
            reject = effective_reject(current, decision)
            conflict = (
                refusal or plan_conflict(current, reject, decision) or held_plan(current, decision)
            )
            if conflict is not None:
                return CommitResult((), (), conflict, current)
            held = held_items(current, decision)
            rest = [name for name in current.names if name not in held]
            if held and not rest and (current.plan is None or not decision.applies_plan):
                why = (
                    f"{', '.join(held)} {'is' if len(held) == 1 else 'are'} held for review "
                    "and not accepted by name; nothing else to commit, nothing was committed"
                )
                return CommitResult((), (), why, current, held=held)
            if decision.scopes:
                moved = rescoped(current, decision.scopes)
                if moved != current:
                    current = self._record(moved)
            return self._apply(store, current, decision, held, user_store)

    def _apply(
        self,
        store: MemoryStore,
        current: PendingBatch,
        decision: Decision,
        held: tuple[str, ...],
        user_store: MemoryStore | None,
    ) -> CommitResult:
        """The commit of :meth:`commit` once the decision is checked: the user scope's
        part, then the project's, and the batch's state after."""
        rest = [name for name in current.names if name not in held]
        project, user = scope_parts(current.restricted(rest) if held else current)
        if user is not None and user_store is None:
            return CommitResult((), (), _SCOPE_OFF.format(", ".join(user.names)), current)
        done_user = Applied()
        try:
            if user is not None and user_store is not None:
                prepare_user_scope(user_store)
                done_user = apply_part(user_store, user, decision.but(plan=PlanChoice.LEAVE), held)
            added, removed, present = apply_part(store, project, decision, held)
        except MemoryStoreError as e:
            if not done_user.added and not done_user.removed:
                failed = replace(current, status=BatchStatus.FAILED, error=str(e))
                return CommitResult((), (), str(e), self._record(failed), e)
            # The user scope's commit stands; what is left is the project's part.
            message = (
                f"{e} (the user-wide {', '.join(done_user.added)} "
                "were committed; the rest of the batch is still pending)"
            )
            left = current.restricted(
                [*project.names, *held], base=project.base, status=BatchStatus.FAILED
            )
            left = replace(left, error=message)
            record = self._record(left)
            return CommitResult(done_user.added, done_user.removed, message, record, e)
        added, removed = done_user.added + added, done_user.removed + removed
        present = done_user.present + present
        rejected = set(effective_reject(current, decision))
        if held:  # the held items wait in the same batch, which says what it wrote
            left = current.restricted(held, plan=None, plan_error=None)
            left = replace(
                left,
                status=BatchStatus.PENDING,
                error=None,
                committed=(*current.committed, *added),
                removed=(*current.removed, *removed),
                rejected=(*current.rejected, *(n for n in rest if n in rejected)),
                present=(*current.present, *present),
            )
            record = self._record(left)
            return CommitResult(added, removed, None, record, held=held, present=present)
        # An applied plan is committed even when it merges nothing (it is journalled).
        planned = decision.applies_plan and current.plan is not None
        done = self._record(
            replace(
                current,
                status=BatchStatus.COMMITTED
                if added or removed or planned or present
                else BatchStatus.DISCARDED,
                error=None,
                committed=added,
                removed=removed,
                rejected=tuple(name for name in current.names if name in rejected),
                plan_accepted=planned,
                present=present,
            )
        )
        return CommitResult(added, removed, None, done, present=present)

    def discard(self, batch: PendingBatch | str) -> PendingBatch:
        """Drop a batch awaiting a decision; nothing is written."""
        with self._lock:
            current = self.lookup(batch, undecided=True)
            return self._record(replace(current, status=BatchStatus.DISCARDED))

    def proposed_names(self) -> set[str]:
        """Names still awaiting a decision, or already rejected or discarded here."""
        return {record.name for record in self.proposed_records()}

    def proposed_records(self) -> set[MemoryRecord]:
        """The items still awaiting a decision, or already rejected or discarded here."""
        records: set[MemoryRecord] = set()
        for batch in self.state.values():
            if batch.status is BatchStatus.COMMITTED:
                records.update(item for item in batch.items if item.name in batch.rejected)
            else:
                records.update(batch.items)
        return records

    def _record(self, batch: PendingBatch) -> PendingBatch:
        self.state = {**self.state, batch.id: batch}
        return batch
