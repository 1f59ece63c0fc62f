"""A consolidation as :meth:`~ipymemory.store.store.MemoryStore.apply_consolidation` is
asked for it: its arguments checked against each other once, and, under the lock, the
commit it makes of the current set (SPEC §4 steps 2-3) -- or why it cannot."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import MemoryConflictError, MemoryStoreError
from .plan import CommitPlan, new_entry
from .record import MemoryRecord, StoredRecord

__all__ = ["Consolidation", "check_records"]


def check_records(records: Iterable[MemoryRecord], label: str) -> tuple[MemoryRecord, ...]:
    """``records`` as a tuple of distinct-named :class:`MemoryRecord`;
    :class:`MemoryStoreError` naming ``label`` otherwise."""
    if isinstance(records, (str, bytes, MemoryRecord)):
        raise MemoryStoreError(f"{label}: expected a collection of MemoryRecord")
    out = tuple(records)
    for r in out:
        if not isinstance(r, MemoryRecord):
            raise MemoryStoreError(f"{label}: expected MemoryRecord, got {type(r).__name__}")
    names = [r.name for r in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise MemoryStoreError(f"{label}: the name {', '.join(map(repr, dupes))} appears twice")
    return out


@dataclass(frozen=True)
class Consolidation:
    """A consolidation planned on ``base`` (+ ``additions``): the records named in
    ``sources`` are replaced by ``replacements``; ``updates`` (replacement name -> the
    source it replaces) marks extractor updates (SPEC §9)."""

    base: tuple[MemoryRecord, ...]
    additions: tuple[MemoryRecord, ...]
    sources: tuple[str, ...]
    replacements: tuple[MemoryRecord, ...]
    updates: dict[str, str]

    @classmethod
    def checked(
        cls,
        base_records: Iterable[MemoryRecord],
        additions: Iterable[MemoryRecord],
        source_names: Iterable[str],
        replacements: Iterable[MemoryRecord],
        updates: Mapping[str, str] | None,
    ) -> Consolidation:
        """The arguments checked against each other; :class:`MemoryStoreError` naming
        what is wrong."""
        base = check_records(base_records, "base_records")
        adds = check_records(additions, "additions")
        reps = check_records(replacements, "replacements")
        if isinstance(source_names, str):
            raise MemoryStoreError("source_names must be a collection of names, not a string")
        sources = list(source_names)
        base_names = {r.name for r in base}
        both = sorted(base_names & {r.name for r in adds})
        if both:
            raise MemoryStoreError(
                f"consolidation: additions repeat base record names {', '.join(map(repr, both))}"
            )
        if not sources and reps:
            raise MemoryStoreError("consolidation: replacements without source_names")
        if sources and not reps:
            raise MemoryStoreError("consolidation: source_names without replacements")
        marks = _updates(updates, sources, reps)
        if len(set(sources)) != len(sources):
            raise MemoryStoreError("consolidation: source_names has a name more than once")
        candidates = base_names | {r.name for r in adds}
        unknown = [n for n in sources if n not in candidates]
        if unknown:
            raise MemoryStoreError(
                f"consolidation: source_names {', '.join(map(repr, unknown))} are not among "
                "the base records or the additions"
            )
        return cls(base, adds, tuple(sources), reps, marks)

    def commit_plan(
        self, current: Sequence[StoredRecord], unchanged: CommitPlan, where: Path
    ) -> CommitPlan:
        """``unchanged`` (the commit's journal side) with what this consolidation does
        to the ``current`` set (the manifest at ``where``): every base record must be
        there unchanged (else :class:`MemoryConflictError`); records others committed
        since are kept; no two records may share a name."""
        by_name = {e.record.name: e for e in current}
        changed = [
            r.name for r in self.base if r.name not in by_name or by_name[r.name].record != r
        ]
        if changed:
            raise MemoryConflictError(
                f"{where}: memory collection changed during consolidation "
                f"({', '.join(map(repr, changed))} removed or modified); nothing changed"
            )
        replaced = set(self.sources)
        base_names = {r.name for r in self.base}
        kept = tuple(e for e in current if e.record.name not in replaced)
        new = tuple(new_entry(r) for r in self.additions if r.name not in replaced)
        new += tuple(new_entry(r) for r in self.replacements)
        taken = {e.record.name for e in kept}
        for entry in new:
            name = entry.record.name
            if name in taken:
                # A clash with a record committed since the plan is a conflict; any
                # other clash is a bad plan.
                concurrent = name in by_name and name not in base_names
                error = MemoryConflictError if concurrent else MemoryStoreError
                raise error(
                    f"{where}: consolidation would hold two records named {name!r}; nothing changed"
                )
            taken.add(name)
        removed = tuple(e for e in current if e.record.name in replaced)
        return replace(unchanged, kept=kept, additions=new, removals=removed)


def _updates(
    given: Mapping[str, str] | None,
    sources: Sequence[str],
    replacements: Sequence[MemoryRecord],
) -> dict[str, str]:
    """``given`` checked: each key a replacement's name, each value a source, no source
    updated twice."""
    marks = dict(given or {})
    names = {r.name for r in replacements}
    for new, old in marks.items():
        if new not in names or old not in sources:
            raise MemoryStoreError(
                f"consolidation: update {new!r} -> {old!r} must name a replacement and one "
                "of source_names"
            )
    if len(set(marks.values())) != len(marks):
        raise MemoryStoreError("consolidation: two updates replace the same record")
    return marks
