"""The turn ledger: which role made each model call, per turn and per session.

What one call cost (:class:`~ipymemory.model.usage.Usage`, its dollar estimate) is
the model package's; this module only adds the calls up by role.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..model.usage import ROLES, Role, Usage, estimate_cost

__all__ = ["ROLES", "CallUsage", "TurnUsage", "UsageLedger"]


@dataclass(frozen=True)
class CallUsage:
    """One model call: which role made it, the model that answered, its usage."""

    role: Role
    model: str
    usage: Usage

    def __post_init__(self) -> None:
        _check_role(self.role)


@dataclass(frozen=True)
class TurnUsage:
    """All model calls of one turn (or of one out-of-turn operation)."""

    calls: tuple[CallUsage, ...] = ()

    def by_role(self, role: Role) -> Usage:
        _check_role(role)
        total = Usage()
        for call in self.calls:
            if call.role == role:
                total = total + call.usage
        return total

    @property
    def main(self) -> Usage:
        return self.by_role("main")

    @property
    def memory(self) -> Usage:
        """Everything that is not the agent itself: selection, extraction, consolidation
        and history summaries."""
        total = Usage()
        for call in self.calls:
            if call.role != "main":
                total = total + call.usage
        return total

    @property
    def total(self) -> Usage:
        total = Usage()
        for call in self.calls:
            total = total + call.usage
        return total

    @property
    def estimated_cost(self) -> float | None:
        """Estimated USD (see module docstring); ``None`` if any call's model is unknown."""
        cost = 0.0
        for call in self.calls:
            one = estimate_cost(call.model, call.usage)
            if one is None:
                return None
            cost += one
        return cost

    def __add__(self, other: TurnUsage) -> TurnUsage:
        return TurnUsage(self.calls + other.calls)

    def to_json(self) -> dict[str, object]:
        return {
            "roles": {role: self.by_role(role).to_json() for role in ROLES},
            "main": self.main.to_json(),
            "memory": self.memory.to_json(),
            "total": self.total.to_json(),
            "calls": len(self.calls),
            "estimated_cost_usd": self.estimated_cost,
        }


@dataclass
class UsageLedger:
    """The session's running account: one :class:`TurnUsage` per turn, plus the calls
    made outside any turn (e.g. ``consolidate_now``)."""

    turns: list[TurnUsage] = field(default_factory=list)
    other: TurnUsage = field(default_factory=TurnUsage)

    @property
    def last_turn(self) -> TurnUsage | None:
        return self.turns[-1] if self.turns else None

    @property
    def total(self) -> TurnUsage:
        total = self.other
        for turn in self.turns:
            total = total + turn
        return total

    def add_other(self, calls: Iterable[CallUsage]) -> None:
        self.other = self.other + TurnUsage(tuple(calls))


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise ValueError(f"unknown model-call role {role!r}; one of {', '.join(ROLES)}")
