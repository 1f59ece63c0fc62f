"""What one model call cost: its token counts and an estimate in dollars.

The numbers are the API's own ``usage``. The dollar figure is an *estimate* from a
small list-price table per model family (USD per million tokens; cache writes at
1.25x and cache reads at 0.1x the input price); an unknown model name has no
estimate (``None``) rather than a guess. Per-turn accounting (which role made which
call) is the turn's business: :mod:`ipymemory.turn.usage`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["ROLES", "Role", "Usage", "estimate_cost"]

# Who made a model call: the agent itself, or one of the memory side-queries (SPEC §3
# names them), the history summarizer, the follow-up checker (SPEC §14) and the
# screen's translation check (issue 39). The same
# names in usage, errors and views.
Role = Literal["main", "selector", "extractor", "consolidator", "summarizer", "checker", "screener"]
ROLES: tuple[Role, ...] = (
    "main",
    "selector",
    "extractor",
    "consolidator",
    "summarizer",
    "checker",
    "screener",
)


@dataclass(frozen=True)
class Usage:
    """Token counts of one model call, as the API reports them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    @classmethod
    def from_api(cls, usage: Any) -> Usage:
        """Counts from an SDK usage object or a plain dict; missing or odd values are 0."""

        def num(name: str) -> int:
            value = getattr(usage, name, None)
            if value is None and isinstance(usage, Mapping):
                value = usage.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) else 0

        return cls(
            num("input_tokens"),
            num("output_tokens"),
            num("cache_creation_input_tokens"),
            num("cache_read_input_tokens"),
        )

    def to_json(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }


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
