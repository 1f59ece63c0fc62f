"""Token accounting per turn: the main agent calls vs each memory side-query.

Numbers come from the API's ``usage`` of every call. The dollar figures are an
*estimate* from a small list-price table per model family (USD per million tokens;
cache writes at 1.25x and cache reads at 0.1x the input price); unknown model names
have no estimate (``None``) rather than a guess.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..sidequery.model import Usage

__all__ = ["ROLES", "CallUsage", "TurnUsage", "UsageLedger", "estimate_cost"]

# "main" is the agent itself; the rest are what memory (and compression) cost.
ROLES: tuple[str, ...] = ("main", "select", "extract", "consolidate", "summarize")

# (input, output) USD per million tokens, by model family (substring of the model id).
_PRICES: tuple[tuple[str, float, float], ...] = (
    ("opus", 15.0, 75.0),
    ("sonnet", 3.0, 15.0),
    ("haiku", 1.0, 5.0),
)


def estimate_cost(model: str, usage: Usage) -> float | None:
    """Estimated USD cost of one call, or ``None`` if the model family is unknown."""
    lowered = model.lower()
    for family, price_in, price_out in _PRICES:
        if family in lowered:
            return (
                usage.input_tokens * price_in
                + usage.cache_creation_input_tokens * price_in * 1.25
                + usage.cache_read_input_tokens * price_in * 0.1
                + usage.output_tokens * price_out
            ) / 1_000_000
    return None


@dataclass(frozen=True)
class CallUsage:
    """One model call: which role made it, the model that answered, its usage."""

    role: str
    model: str
    usage: Usage


@dataclass(frozen=True)
class TurnUsage:
    """All model calls of one turn (or of one out-of-turn operation)."""

    calls: tuple[CallUsage, ...] = ()

    def by_role(self, role: str) -> Usage:
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
            "roles": {role: _usage_json(self.by_role(role)) for role in ROLES},
            "main": _usage_json(self.main),
            "memory": _usage_json(self.memory),
            "total": _usage_json(self.total),
            "calls": len(self.calls),
            "estimated_cost_usd": self.estimated_cost,
        }


def _usage_json(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
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
