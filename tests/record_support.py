"""The one record factory the tests share (also imported by subprocess workers)."""

from __future__ import annotations

from ipymemory import MemoryRecord, MemoryType


def rec(
    name: str = "a-note",
    description: str | None = None,
    body: str | None = None,
    type: MemoryType | str = MemoryType.PROJECT,
) -> MemoryRecord:
    """A valid record; every field but the name defaults to something derived from it."""
    return MemoryRecord(
        name=name,
        type=type,  # type: ignore[arg-type]  # MemoryRecord coerces a string itself
        description=description if description is not None else f"about {name}",
        body=body if body is not None else f"The body of {name}.",
    )
