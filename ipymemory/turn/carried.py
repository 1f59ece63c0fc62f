"""The memories a conversation's requests carry, and where (issue 40, SPEC §8, §13).

A block of memories stays with the message it was first sent with: the next requests,
of this turn and of the turns after it, send it at the same place, so the prompt cache
keeps it with the history around it (a block rebuilt at the end of every request was
paid uncached each turn). The canonical history never holds a block (SPEC §2): the
placements live here, by the canonical index of their message, and
:func:`~ipymemory.turn.injection.with_memory_blocks` puts them into each request.

What a turn adds (:meth:`CarriedMemory.give`), at its user message: the sections of the
records it wants that no placement holds yet -- the whole selection on the first turn,
then only what is new (a record just committed, one the selection or the model's pick
brings). It starts again from the turn's own block (a *rebase*: every placement dropped,
one block of what it wants) when a carried record left the set or reads differently now
(a new text, a source changed since it was saved, a note that it was not followed: the
request never holds two versions of a record, nor one forgotten), or when the carried
blocks and the new ones would pass ``cap`` estimated tokens. What the model picks beside
the main call joins a later request of the turn (:meth:`CarriedMemory.join`: after the
tool results of that request's last message) and is carried from then on too.

Compression (turn/history.py) may summarise away the message of a placement: its block
then goes right after the summary note, so what was given is never lost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .history import estimate_tokens
from .injection import render_block

__all__ = ["CarriedMemory", "Given", "Placement"]


@dataclass(frozen=True)
class Placement:
    """One block: the canonical index of the message it goes with and its sections
    (name, section text), in block order."""

    at: int
    sections: tuple[tuple[str, str], ...]

    @property
    def block(self) -> str:
        return render_block([section for _, section in self.sections])

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.sections)


@dataclass(frozen=True)
class Given:
    """What one message got: the names its block adds (in block order), its block
    (``""``: none) and whether the placements started again from it (a rebase)."""

    added: tuple[str, ...] = ()
    block: str = ""
    rebased: bool = False


class CarriedMemory:
    """The placements of one conversation (see the module docstring); not thread-safe
    (the session's lock guards it)."""

    def __init__(self) -> None:
        self._placements: list[Placement] = []

    def reset(self) -> None:
        """A fresh conversation carries nothing."""
        self._placements = []

    @property
    def placements(self) -> tuple[Placement, ...]:
        return tuple(self._placements)

    @property
    def names(self) -> tuple[str, ...]:
        """Every carried record's name, in the order the requests give them."""
        return tuple(name for p in self._placements for name in p.names)

    def sections(self) -> dict[str, str]:
        """Name -> the section the requests carry for it."""
        return {name: section for p in self._placements for name, section in p.sections}

    def give(
        self,
        at: int,
        wanted: Sequence[tuple[str, str]],
        now: Mapping[str, str | None],
        *,
        cap: int,
    ) -> Given:
        """The turn whose user message is canonical message ``at`` wants ``wanted``
        (name, section as it reads now); ``now`` maps every carried name to its section
        as it reads now (None: no longer in the set). Returns what the message gets."""
        self._placements = [p for p in self._placements if p.at < at]
        carried = self.sections()
        changed = any(now.get(name) != section for name, section in carried.items())
        new = tuple((name, section) for name, section in wanted if name not in carried)
        size = sum(estimate_tokens(section) for _, section in (*carried.items(), *new))
        if changed or (new and carried and size > cap):
            self._placements = []
            return self._place(at, tuple(dict(wanted).items()), rebased=bool(carried))
        return self._place(at, new, rebased=False)

    def join(self, at: int, sections: Sequence[tuple[str, str]]) -> Given:
        """Records that arrived during the turn (the model's pick) join the request
        whose last message is canonical message ``at``; those carried already do not."""
        carried = self.sections()
        return self._place(at, tuple((n, s) for n, s in sections if n not in carried))

    def _place(
        self, at: int, sections: tuple[tuple[str, str], ...], *, rebased: bool = False
    ) -> Given:
        if not sections:
            return Given(rebased=rebased)
        placement = Placement(at, sections)
        self._placements.append(placement)
        return Given(placement.names, placement.block, rebased)

    def placed(self, cut: int) -> tuple[dict[int, list[str]], list[str]]:
        """The blocks of a request built from the canonical history from ``cut`` on:
        canonical index -> its blocks, and the blocks whose message was summarised
        away (they go after the summary note)."""
        kept: dict[int, list[str]] = {}
        before: list[str] = []
        for p in self._placements:
            if p.at >= cut:
                kept.setdefault(p.at, []).append(p.block)
            else:
                before.append(p.block)
        return kept, before
