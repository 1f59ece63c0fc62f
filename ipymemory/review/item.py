"""One proposed record and everything said of it: an :class:`Item` of a batch.

Whatever door a record comes by (a turn's extraction, another agent, a sync, an
import), it waits for review as one value: the record, where it came from (``origin``,
SPEC §7), why screening wants a person (``flags``) and which rules fired
(``findings``), whether it is the redacted form of an item that held a credential,
the current record it updates (``replaces``, SPEC §9), the scope it goes to (SPEC
§11), the extractor's excerpts (``evidence``, for the journal only) and the files it
depends on (``sources``, SPEC §11). One place per item, so a batch filtered, split or
joined carries each item's facts with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import BatchError
from ..screen import Origin
from ..screen.rules import Finding, findings_of_reasons
from ..store.record import MemoryRecord
from .scopes import PROJECT, SCOPES, Scope

__all__ = ["Item", "flags_of", "origins_of", "redacted_of"]


@dataclass(frozen=True)
class Item:
    """A proposed record awaiting a decision, and what is known of it (see the module
    docstring). Made from a bare record, it is a plain ``user`` item of the project,
    flagged by nothing."""

    record: MemoryRecord
    #: Decided by our code, never taken from a model (SPEC §7); its value is accepted.
    origin: Origin = Origin.USER
    #: Why screening wants a person (empty: nobody needs to look).
    flags: tuple[str, ...] = ()
    #: Which screening rules fired, on what (issue 39), as screening recorded them.
    findings: tuple[Finding, ...] = ()
    #: The redacted form of an item that held a credential: committed only when a
    #: decision chooses it by name (``Decision.redacted``).
    redacted: bool = False
    #: The current record it corrects or updates (SPEC §9), possibly under a new name.
    replaces: str | None = None
    #: Where it is committed (SPEC §11). An update stays where the record it replaces is.
    scope: Scope = PROJECT
    #: The extractor's excerpts supporting it (SPEC §9): for the journal, never the record.
    evidence: tuple[str, ...] = ()
    #: The files it depends on, path -> sha256 as read (SPEC §11); empty: none known.
    sources: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # One check per field, whatever built the item (a file read back included).
        object.__setattr__(self, "origin", Origin(self.origin))
        if self.scope not in SCOPES:
            raise BatchError(f"{self.record.name!r}: scope {self.scope!r} is not project or user")
        for name in ("flags", "findings", "evidence"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "sources", dict(self.sources))

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def flagged(self) -> bool:
        """Whether screening wants a person for it (redacted items included)."""
        return bool(self.flags)

    @property
    def held(self) -> bool:
        """Whether a decision must accept it by name to commit it (issue 28 item 0): a
        flagged item that is not redacted (a redacted one is chosen as such)."""
        return self.flagged and not self.redacted

    @property
    def rules(self) -> tuple[Finding, ...]:
        """Which rules hold it: the findings screening recorded, else the rules its
        flags' reasons name (a file from before issue 39 keeps only reasons)."""
        return self.findings or findings_of_reasons(self.flags)

    def but(self, **changes: Any) -> Item:
        """This item with ``changes`` (its fields by name)."""
        return replace(self, **changes)

    @classmethod
    def of(cls, value: Item | MemoryRecord) -> Item:
        """``value`` as an item (a bare record: a plain one)."""
        return value if isinstance(value, Item) else cls(value)


# What older code read as maps by item name: computed from the items, kept nowhere.


def origins_of(items: Iterable[Item]) -> dict[str, str]:
    """Each item's origin, by name."""
    return {item.name: item.origin.value for item in items}


def flags_of(items: Iterable[Item]) -> dict[str, tuple[str, ...]]:
    """Why screening wants a person, per flagged item."""
    return {item.name: item.flags for item in items if item.flags}


def redacted_of(items: Iterable[Item]) -> tuple[str, ...]:
    """The names of the items that are redacted forms."""
    return tuple(item.name for item in items if item.redacted)
