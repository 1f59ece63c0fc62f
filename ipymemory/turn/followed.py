"""Whether a turn's answer followed the memories injected into it (SPEC §13).

:func:`judge` puts the two halves together: the exact checks of
:mod:`ipymemory.follow` first, then one side-query (:func:`~ipymemory.sidequery.
followed.judge_followed`) for every ``feedback``/``user`` memory they left undecided.
A failed side-query leaves those memories without a verdict and says why; the exact
verdicts stand. Nothing here writes a record or changes the set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import SideQueryError, SideQueryReplyError
from ..follow import Verdict, as_verdict, check_answer, checked
from ..model import ModelClient, Usage
from ..sidequery.followed import judge_followed
from ..store.record import MemoryRecord

__all__ = ["LAST_ERROR_FOLLOW", "Judgment", "judge"]

# The last_error of a follow-up check whose side-query failed (SPEC §2: never the turn's).
LAST_ERROR_FOLLOW = "Memory follow-up check failed"


@dataclass(frozen=True)
class Judgment:
    """The verdicts on one answer, in the order the memories were injected; the names
    left without one (the side-query failed: ``error`` says why) and its usage."""

    verdicts: tuple[Verdict, ...]
    unjudged: tuple[str, ...] = ()
    usage: Usage = field(default_factory=Usage)
    error: SideQueryError | None = None
    asked_model: tuple[str, ...] = ()  # the names sent to the side model

    @property
    def missed(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.missed)


def judge(
    model: ModelClient,
    records: Sequence[MemoryRecord],
    answer: str,
    query: str,
    *,
    side_model: str | None = None,
) -> Judgment:
    """Judge ``answer`` (to ``query``) against the checked ones of ``records``; never
    raises a memory error (a failed side-query is in :attr:`Judgment.error`)."""
    decided, undecided = check_answer(records, answer, query)
    usage = Usage()
    error: SideQueryError | None = None
    if undecided:
        try:
            triples, usage = judge_followed(model, undecided, answer, query, side_model=side_model)
        except SideQueryError as e:
            error = e
            if isinstance(e, SideQueryReplyError) and e.usage is not None:
                usage = e.usage
        else:
            for name, verdict, reason in triples:
                decided[name] = Verdict(name, as_verdict(verdict), reason, "model")
    order = [record.name for record in checked(records)]
    return Judgment(
        tuple(decided[name] for name in order if name in decided),
        tuple(name for name in order if name not in decided),
        usage,
        error,
        tuple(record.name for record in undecided),
    )
