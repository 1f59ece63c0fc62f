"""What a person (or auto mode) decided about a batch: one :class:`Decision` value.

Every front end builds one -- the review widget from its toggles, ``%memory commit`` and
``ipymemory commit`` from their options, the Lab panel from its request, auto mode as
:data:`AUTO` -- and the queue applies it (``BatchRegistry.commit``, ``apply_batch``):

* ``reject``: items not to commit;
* ``accept``: items screening holds for a person, committed because they are named;
* ``redacted``: redacted items whose redacted text is committed (SPEC §7);
* ``plan``: what becomes of the batch's consolidation plan (:class:`PlanChoice`);
* ``scopes``: items moved between the project and the user scope first (SPEC §11);
* ``decided_by``: who decided, for the journal (:class:`DecidedBy`).

A bare string where a list of names belongs is refused (it would read as one-letter
names); whether the names fit the batch is checked against it when the decision is
applied.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .._enum import StrEnum
from ..errors import BatchError

__all__ = ["AUTO", "PLAIN", "PLAN_NAME", "DecidedBy", "Decision", "PlanChoice"]

#: The name the plan goes by where a list of names is all a format has: the flags,
#: findings and origins of a ``pending/`` file, the batch view's JSON (the Lab panel reads
#: it), and ``accept`` of a caller from before :class:`PlanChoice`. Never an item's name
#: (it is no record name), never a key of the batch itself.
PLAN_NAME = "(consolidation plan)"


class PlanChoice(StrEnum):
    """What a decision does with the batch's consolidation plan."""

    #: Apply it, unless screening holds it: then the commit is refused, saying why.
    APPLY = "apply"
    #: Apply it, held or not: a person accepted it by name (``--accept-plan``, a tick).
    ACCEPT = "accept"
    #: Leave it out: the items are committed as they are (``--no-plan``).
    LEAVE = "leave"


class DecidedBy(StrEnum):
    """Who decided, as the journal's actor says it (``decided_by``)."""

    #: A person, in a review widget or a command (notebook or terminal).
    REVIEW = "review"
    #: A person, in the Lab's Memory panel.
    LAB_PANEL = "lab-panel"
    #: Auto mode: what screening let through, with nobody asked.
    AUTO = "auto"


def _names(value: Collection[str], what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        raise BatchError(f"{what} must be a collection of item names, not one string")
    return tuple(dict.fromkeys(value))


@dataclass(frozen=True)
class Decision:
    """One decision about one batch (see the module docstring). The default commits
    everything screening let through, with the plan."""

    reject: tuple[str, ...] = ()
    accept: tuple[str, ...] = ()
    redacted: tuple[str, ...] = ()
    plan: PlanChoice = PlanChoice.APPLY
    scopes: Mapping[str, str] = field(default_factory=dict)
    decided_by: DecidedBy = DecidedBy.REVIEW

    def __post_init__(self) -> None:
        for name in ("reject", "accept", "redacted"):
            object.__setattr__(self, name, _names(getattr(self, name), name))
        if isinstance(self.scopes, str) or not isinstance(self.scopes, Mapping):
            raise BatchError("scopes must map item names to 'project' or 'user'")
        object.__setattr__(self, "scopes", dict(self.scopes))
        try:
            object.__setattr__(self, "plan", PlanChoice(self.plan))
            object.__setattr__(self, "decided_by", DecidedBy(self.decided_by))
        except ValueError as e:
            raise BatchError(f"not a decision: {e}") from None

    @property
    def applies_plan(self) -> bool:
        """Whether the plan goes in (when screening does not hold it, or it is accepted)."""
        return self.plan is not PlanChoice.LEAVE

    @property
    def accepts_plan(self) -> bool:
        """Whether a plan screening holds is accepted by name."""
        return self.plan is PlanChoice.ACCEPT

    def but(self, **changes: Any) -> Decision:
        """This decision with ``changes`` (its fields by name)."""
        return replace(self, **changes)

    def rejecting(self, names: Collection[str]) -> Decision:
        """This decision, with ``names`` rejected too."""
        return replace(self, reject=(*self.reject, *_names(names, "reject")))

    def within(self, names: Collection[str]) -> Decision:
        """The part of this decision about the items ``names`` (a scope's part of a batch)."""
        keep = set(names)
        return replace(
            self,
            reject=tuple(n for n in self.reject if n in keep),
            accept=tuple(n for n in self.accept if n in keep),
            redacted=tuple(n for n in self.redacted if n in keep),
            scopes={n: s for n, s in self.scopes.items() if n in keep},
        )

    @classmethod
    def from_keywords(cls, choices: Mapping[str, Any]) -> Decision:
        """The decision older callers said in keywords (``reject``, ``accept``,
        ``redacted``, ``scopes``, ``decided_by``, and ``accept_plan``: False left the
        plan out; the plan named in ``accept`` by :data:`PLAN_NAME` accepted it)."""
        unknown = sorted(set(choices) - {*_KEYWORDS, "accept_plan"})
        if unknown:
            raise TypeError(f"unknown decision keyword(s): {', '.join(unknown)}")
        fields: dict[str, Any] = {k: v for k, v in choices.items() if k in _KEYWORDS}
        if fields.get("scopes") is None:
            fields.pop("scopes", None)
        accept = _names(fields.get("accept", ()), "accept")
        fields["accept"] = tuple(n for n in accept if n != PLAN_NAME)
        if not choices.get("accept_plan", True):
            fields["plan"] = PlanChoice.LEAVE
        elif PLAN_NAME in accept:
            fields["plan"] = PlanChoice.ACCEPT
        return cls(**fields)


_KEYWORDS = ("reject", "accept", "redacted", "scopes", "decided_by")

#: A person's plain commit: everything screening let through, with the plan.
PLAIN = Decision()
#: Auto mode's decision: the same, nobody asked.
AUTO = Decision(decided_by=DecidedBy.AUTO)
