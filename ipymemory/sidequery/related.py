"""What a side-query is shown of a large set: the part most related to a text, bounded.

The extractor's catalog and the consolidator's candidates (issue 40) are priced per
record in estimated tokens. A set whose records fit the bound is shown whole, exactly as
before; past it, :func:`related_part` takes the keyword ranking's best
(:func:`~.fallback.keyword_select` of the set against the text the side-query reads)
while they fit, then the newest that still fit, and returns them in set order: the
model reads the set's own order, and the same set and text always give the same part.

:class:`CatalogPart` is the extractor's view: the catalog lines shown, the names they
list and the size of the set, with the note that tells the model it sees a part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import _constants as C
from .._text import counted
from .._tokens import estimate_tokens
from ..store.index import index_line
from ..store.record import MemoryRecord, StoredRecord
from .fallback import keyword_select

__all__ = ["CatalogPart", "catalog_part", "related_part"]


def related_part(
    text: str, records: Sequence[MemoryRecord], costs: Sequence[int], budget: int
) -> tuple[int, ...]:
    """The positions in ``records`` shown within ``budget`` (``costs[i]`` is what record
    ``i`` costs): all of them when they fit, else the records best related to ``text``,
    then the newest, that fit; in set order."""
    if sum(costs) <= budget:
        return tuple(range(len(records)))
    # No more can fit than the cheapest that fit: rank no further than that.
    cap, used = 0, 0
    for cost in sorted(costs):
        if used + cost > budget:
            break
        cap, used = cap + 1, used + cost
    position = {id(record): i for i, record in enumerate(records)}
    chosen: set[int] = set()
    used = 0
    best = keyword_select(text, records, limit=cap) if cap else ()
    newest = range(len(records) - 1, -1, -1)
    for i in (*(position[id(r)] for r in best), *newest):
        if i not in chosen and used + costs[i] <= budget:
            chosen.add(i)
            used += costs[i]
    return tuple(sorted(chosen))


@dataclass(frozen=True)
class CatalogPart:
    """The catalog an extractor is shown: ``text`` (its lines), the ``names`` they list
    and ``total``, the records in the set."""

    text: str
    names: frozenset[str]
    total: int

    @property
    def whole(self) -> bool:
        return len(self.names) >= self.total

    @property
    def note(self) -> str | None:
        """What the model is told of a part (None: the catalog is the whole set)."""
        if self.whole:
            return None
        total = counted(self.total, "memory", "memories")
        return (
            f"This catalog lists {len(self.names)} of the {total} "
            "that exist: those most related to the new messages, then the newest. A "
            "memory not listed may exist under any name; a new item whose name is taken "
            "by one of them is dropped."
        )


def catalog_part(
    entries: Sequence[StoredRecord], text: str, budget: int = C.EXTRACT_CATALOG_TOKENS
) -> CatalogPart:
    """The catalog of ``entries`` an extractor reading ``text`` is shown (see the module
    docstring): the whole catalog, byte for byte, while its lines fit ``budget``."""
    lines = [index_line(entry) for entry in entries]
    keep = related_part(
        text, [e.record for e in entries], [estimate_tokens(line) for line in lines], budget
    )
    return CatalogPart(
        "".join(lines[i] for i in keep),
        frozenset(entries[i].record.name for i in keep),
        len(entries),
    )
