"""What a turn's requests carried, and when the model's pick arrived (issue 40, SPEC
§13): the trace ``%memory session``, the selection view and the journal show.

A :class:`SelectionTrace` holds, per request of the turn, the names its own block added
(the first request's: the selection made at once, or what the conversation's blocks
lacked of it; a later request's: what the model picked that no request carried yet)
and how many records it carried in all (blocks given earlier in the conversation
included); and the model's pick (selector ``model``): what it named, what of that was
new, when it arrived (seconds from the turn's start), which request it joined -- or,
when the answer ended first, that it is carried into the next turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["PickTrace", "RequestMemories", "SelectionTrace"]


@dataclass(frozen=True)
class RequestMemories:
    """One request: its number in the turn (from 1), the names its own block added, how
    many records it carried in all, and whether its block started the conversation's
    blocks again (a record changed or left the set, or they outgrew their bound)."""

    request: int
    added: tuple[str, ...]
    carried: int
    rebased: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "added": list(self.added),
            "carried": self.carried,
            "rebased": self.rebased,
        }


@dataclass(frozen=True)
class PickTrace:
    """The model's pick: ``names`` as it named them, ``added`` those no request carried
    when it arrived, ``source`` (``model``; ``fallback`` when it failed, ``reason``
    saying why; ``pending`` when it never arrived), ``seconds`` from the turn's start to
    its arrival, ``joined`` the request it joined (None: none did) and
    ``carried_over`` what it brings to the next turn (it arrived after the last
    request)."""

    names: tuple[str, ...]
    added: tuple[str, ...]
    source: str
    reason: str | None = None
    seconds: float | None = None
    joined: int | None = None
    carried_over: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "names": list(self.names),
            "added": list(self.added),
            "source": self.source,
            "reason": self.reason,
            "seconds": None if self.seconds is None else round(self.seconds, 3),
            "joined_request": self.joined,
            "carried_over": list(self.carried_over),
        }

    def text(self) -> str:
        """One line: when the pick arrived and where what it added went."""
        when = "" if self.seconds is None else f" at {self.seconds:.2f} s"
        if self.source == "pending":
            return "the model's pick did not arrive"
        if self.source == "fallback":
            return f"the model's pick failed{when} ({self.reason}); the keyword ranking stands"
        if not self.added:
            picked = ", ".join(self.names) if self.names else "none"
            return f"the model's pick arrived{when}: {picked}, nothing the requests lacked"
        added = ", ".join(self.added)
        if self.joined is not None:
            return f"the model's pick arrived{when}: {added} joined request {self.joined}"
        return f"the model's pick arrived{when}, after the answer: {added} join the next turn"


@dataclass(frozen=True)
class SelectionTrace:
    """A turn's requests and the model's pick (see the module docstring);
    ``carried_in`` names the previous turn's late pick that this turn's first request
    brought."""

    requests: tuple[RequestMemories, ...] = ()
    pick: PickTrace | None = None
    carried_in: tuple[str, ...] = ()

    @property
    def seen(self) -> tuple[str, ...]:
        """Every name a request of this turn added, in order."""
        return tuple(name for r in self.requests for name in r.added)

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": [r.to_json() for r in self.requests],
            "model_pick": None if self.pick is None else self.pick.to_json(),
            "carried_in": list(self.carried_in),
        }

    def lines(self) -> list[str]:
        """The trace in words, a line per request and one for the pick."""
        out = []
        for r in self.requests:
            added = ", ".join(r.added) if r.added else "nothing new"
            again = " (the blocks started again)" if r.rebased else ""
            out.append(f"request {r.request}: added {added}; {r.carried} carried{again}")
        if self.carried_in:
            out.append(f"from the previous turn's pick: {', '.join(self.carried_in)}")
        if self.pick is not None:
            out.append(self.pick.text())
        return out
