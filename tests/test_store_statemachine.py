"""A hypothesis state machine: MemoryStore against an in-memory model (a list of records).

Rules: add (extend), consolidate, a consolidation planned on a stale base, forget, reopen
(a new MemoryStore object on the same directory), bad inputs, and the history (SPEC §6):
undo, restore, and a commit by another writer (the reference agent writing the directory
directly, which our next commit records as an ``external`` entry). Every refused operation
must change nothing on disk (byte for byte). The index bounds are small, so refusals for
exceeding them are exercised and modelled exactly.

The model keeps the set after every journal entry; ``history()`` must describe exactly
that sequence, and undoing every entry newest-first (in a copy) must walk back through
the same sets, bodies byte for byte, to the empty set.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from store_support import listed_files, snapshot, verify_listed

from ipymemory import (
    MemoryConflictError,
    MemoryFormatError,
    MemoryRecord,
    MemoryStore,
    MemoryStoreError,
    MemoryType,
)
from ipymemory.store.history import replay
from ipymemory.store.index import bounded_catalog, render_index
from ipymemory.store.record import render_record

MAX_LINES = 8
MAX_BYTES = 560
NAMES = ["alpha", "beta", "gamma", "delta", "no", "x1", "long-name-here", "z", "on", "q-2"]
TEXT = st.text(alphabet=st.sampled_from("abc XYZ:#'\"-!&*[]{}|>%@`é中\t"), min_size=1, max_size=30)
BODIES = st.one_of(
    st.sampled_from(["---", "!!binary", "&a [*a]", "no", "line one\n\nline three  ", "a\r\nb"]),
    TEXT,
)


ANY_NAME = st.sampled_from(NAMES)
# A caller's text, sometimes with a lone surrogate (half an emoji; issue 19 item 3).
UNTRUSTED = st.one_of(
    TEXT, st.builds(lambda a, b: a + "\ud83d" + b, st.text(max_size=3), st.text(max_size=3))
)


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@st.composite
def records(draw: Any, names: Any = ANY_NAME) -> MemoryRecord:
    name = draw(names)
    for _ in range(5):
        try:
            return MemoryRecord(
                name=name,
                type=draw(st.sampled_from(list(MemoryType))),
                description=draw(TEXT),
                body=draw(BODIES),
            )
        except MemoryFormatError:
            continue  # e.g. a blank body or description: draw again
    return MemoryRecord(name=name, type=MemoryType.USER, description="d", body="b")


def _batch(min_size: int = 0, max_size: int = 3) -> Any:
    return st.lists(records(), min_size=min_size, max_size=max_size, unique_by=lambda r: r.name)


class StoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="ipymemory-sm-"))
        self.ws = self.tmp / "ws"
        self.ws.mkdir()
        self.root = self.ws / ".memory"
        self.store = self._open()
        self.model: list[MemoryRecord] = []
        # The set after each journal entry (index seq - 1); a foreign commit's set waits
        # in ``foreign`` until our next commit records it as an external entry.
        self.sets: list[tuple[MemoryRecord, ...]] = []
        self.ops: list[str] = []  # the op of each entry, as self.sets
        self.foreign: tuple[MemoryRecord, ...] | None = None

    def _open(self) -> MemoryStore:
        return MemoryStore(self.ws, max_index_lines=MAX_LINES, max_index_bytes=MAX_BYTES)

    def teardown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _fits(self, new: list[MemoryRecord]) -> bool:
        # Issue 31: MEMORY.md's bounds shape the index, they refuse no set. (The machine
        # still runs with small bounds, so the bounded index is exercised.)
        return True

    def _refused(self, call: Any, error: type[BaseException] = MemoryStoreError) -> None:
        """``call`` must raise ``error`` and leave every byte of the store as it was."""
        before = snapshot(self.root)
        with pytest.raises(error) as info:
            call()
        event(f"refused: {type(info.value).__name__}")
        assert snapshot(self.root) == before

    # --- rules ---------------------------------------------------------------------

    @rule(batch=_batch())
    def add(self, batch: list[MemoryRecord]) -> None:
        taken = {r.name for r in self.model}
        new = self.model + batch
        if any(r.name in taken for r in batch) or not self._fits(new):
            self._refused(lambda: self.store.extend(batch))
            return
        added = self.store.extend(batch)
        assert [e.record for e in added] == batch
        event("add: committed" if batch else "add: empty")
        self.model = new
        if batch:
            self._committed("add")

    @rule(batch=_batch(min_size=1), query=UNTRUSTED, notebook=UNTRUSTED)
    def add_with_provenance(self, batch: list[MemoryRecord], query: str, notebook: str) -> None:
        """A commit whose journal entry carries a caller's text (a question, a notebook
        path): refused before its commit point, nothing changed, if that text holds a
        lone surrogate (it cannot be written as UTF-8); otherwise an ordinary add."""
        taken = {r.name for r in self.model}
        new = self.model + batch

        def call() -> Any:
            return self.store.extend(
                batch,
                provenance={r.name: {"query": query} for r in batch},
                actor={"notebook": notebook},
            )

        if (
            any(r.name in taken for r in batch)
            or not self._fits(new)
            or not _encodes(query + notebook)
        ):
            self._refused(call)
            return
        call()
        event("add with provenance: committed")
        self.model = new
        self._committed("add")
        assert self.store.history(1)[0].provenance[batch[0].name]["query"] == query

    @rule(data=st.data())
    def consolidate(self, data: Any) -> None:
        if not self.model:
            return
        current = [r.name for r in self.model]
        additions = data.draw(_batch(max_size=1), label="additions")
        additions = [a for a in additions if a.name not in current]
        candidates = current + [a.name for a in additions]
        sources = data.draw(
            st.lists(st.sampled_from(candidates), min_size=1, max_size=3, unique=True),
            label="sources",
        )
        replacements = data.draw(_batch(min_size=1, max_size=2), label="replacements")
        kept = [r for r in self.model if r.name not in sources]
        new = kept + [a for a in additions if a.name not in sources] + replacements

        def call() -> Any:
            return self.store.apply_consolidation(
                base_records=list(self.model),
                additions=additions,
                source_names=sources,
                replacements=replacements,
            )

        names = [r.name for r in new]
        if len(set(names)) != len(names) or not self._fits(new):
            self._refused(call)
            return
        call()
        event("consolidate: committed")
        self.model = new
        self._committed("consolidate")

    @rule(data=st.data())
    def consolidate_on_stale_base(self, data: Any) -> None:
        """A plan made on a set that has changed since (a record edited or gone) is refused."""
        if not self.model:
            return
        victim = data.draw(st.sampled_from(self.model), label="victim")
        stale = [
            dataclasses.replace(r, body=r.body + " (older)") if r is victim else r
            for r in self.model
        ]
        if data.draw(st.booleans(), label="drop instead"):
            gone = data.draw(records(ANY_NAME), label="gone")
            if gone.name in {r.name for r in self.model}:
                return
            stale = [*self.model, gone]
        self._refused(
            lambda: self.store.apply_consolidation(
                base_records=stale,
                source_names=[victim.name],
                replacements=[victim],
            ),
            MemoryConflictError,
        )

    @initialize(batch=_batch())
    def seed(self, batch: list[MemoryRecord]) -> None:
        self.add(batch)

    @rule(data=st.data())
    def forget(self, data: Any) -> None:
        # Mostly names in the set; sometimes any name (maybe unknown: refused).
        pool = [r.name for r in self.model] if self.model else NAMES
        if data.draw(st.integers(0, 4), label="any name") == 0:
            pool = NAMES
        names = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2, unique=True))
        present = {r.name for r in self.model}
        if any(n not in present for n in names):
            self._refused(lambda: self.store.forget(names))
            return
        self.store.forget(names)
        event("forget: committed")
        self.model = [r for r in self.model if r.name not in names]
        self._committed("forget")

    def _committed(self, op: str) -> None:
        """Our commit (of ``op``) went through: a foreign change first became an
        external entry."""
        if self.foreign is not None:
            self.sets.append(self.foreign)
            self.ops.append("external")
            self.foreign = None
        self.sets.append(tuple(self.model))
        self.ops.append(op)

    def _adopt(self, expected: tuple[MemoryRecord, ...], op: str) -> None:
        """The store's set must hold exactly ``expected`` (order aside: records brought
        back are appended); it becomes the model, in the store's order."""
        got = self.store.records()
        assert sorted(got, key=_key) == sorted(expected, key=_key)
        self.model = list(got)
        self._committed(op)

    def _left_by_a_merge(self, record: MemoryRecord, seq: int) -> bool:
        """Whether the last entry after ``seq`` that took ``record`` out of the set was
        a consolidation (it lives on in its merge) -- or none did."""
        last = None
        for i in range(seq, len(self.sets)):
            if record in self.sets[i - 1] and record not in self.sets[i]:
                last = self.ops[i]
        return last is None or last == "consolidate"

    @rule(data=st.data())
    def undo(self, data: Any) -> None:
        entries = self.store.history()
        if not entries or self.foreign is not None:
            return
        seq = data.draw(st.integers(1, len(entries)), label="undo seq")
        before = self.sets[seq - 2] if seq > 1 else ()
        after = self.sets[seq - 1]
        # The inverse of entry seq: what it added leaves, what it removed comes back.
        added = [r for r in after if r not in before]
        removed = [r for r in before if r not in after]
        current = tuple(self.model)
        # An added record that left since by a forget or an undo needs no undoing; one a
        # consolidation took in is not clean to take back.
        clean = all(r in current or not self._left_by_a_merge(r, seq) for r in added)
        staying = [r for r in current if r not in added]
        names = {r.name: r for r in staying}
        clean = clean and all(names.get(r.name, r) == r for r in removed)
        expected = tuple(staying) + tuple(r for r in removed if r not in staying)
        # Nothing to undo (it was undone already): refused, never an empty entry.
        nothing = not any(r in current for r in added) and all(r in staying for r in removed)
        if not clean or nothing or not self._fits(list(expected)):
            self._refused(
                lambda: self.store.undo(seq), MemoryConflictError if nothing else MemoryStoreError
            )
            return
        self.store.undo(seq)
        event("undo: committed")
        self._adopt(expected, "undo")

    @rule(data=st.data())
    def restore(self, data: Any) -> None:
        entries = self.store.history()
        if not entries or self.foreign is not None:
            return
        seq = data.draw(st.integers(1, len(entries)), label="restore seq")
        if sorted(self.model, key=_key) == sorted(self.sets[seq - 1], key=_key):
            self._refused(lambda: self.store.restore(seq), MemoryConflictError)
            return
        self.store.restore(seq)
        event("restore: committed")
        self._adopt(self.sets[seq - 1], "restore")

    @rule(record=records())
    def foreign_commit(self, record: MemoryRecord) -> None:
        """The reference agent adds a record by writing the directory itself."""
        if not self.root.exists() or record.name in {r.name for r in self.model}:
            return
        new = [*self.model, record]
        if not self._fits(new):
            return
        file = f"{record.name}-{uuid.uuid4().hex}.md"
        lines = [f"{line}\n" for line in self.store.catalog().split("\n")[:-1]]
        lines.append(_index_line(record, file))
        index = bounded_catalog(lines, MAX_LINES, MAX_BYTES).decode()
        (self.root / file).write_bytes(render_record(record))
        files = [*listed_files(self.root), file]
        (self.root / "manifest.json").write_text(
            json.dumps({"version": 1, "files": files}, separators=(",", ":"))
        )
        (self.root / "MEMORY.md").write_text(index)
        event("foreign commit")
        self.model = new
        self.foreign = tuple(new)

    @rule()
    def undo_everything(self) -> None:
        """In a copy: undo every entry newest-first; each is clean and walks the set
        back through the recorded sets, bodies byte for byte, to the empty set."""
        if self.foreign is not None or not self.sets:
            return
        copy = self.tmp / f"copy-{uuid.uuid4().hex[:8]}"
        shutil.copytree(self.ws, copy)
        store = MemoryStore(copy, max_index_lines=MAX_LINES, max_index_bytes=MAX_BYTES)
        for seq in range(len(self.sets), 0, -1):
            store.undo(seq)
            want = self.sets[seq - 2] if seq > 1 else ()
            assert sorted(store.records(), key=_key) == sorted(want, key=_key), seq
        assert store.records() == ()
        shutil.rmtree(copy)
        event("undo everything")

    @rule()
    def reopen(self) -> None:
        self.store = self._open()

    @rule(which=st.sampled_from(["dup-batch", "not-record", "str-names", "bad-forget", "empty"]))
    def bad_input(self, which: str) -> None:
        r = MemoryRecord(name="fresh", type=MemoryType.USER, description="d", body="b")
        calls: dict[str, Any] = {
            "dup-batch": lambda: self.store.extend([r, r]),
            "not-record": lambda: self.store.extend([r.to_json()]),  # type: ignore[list-item]
            "str-names": lambda: self.store.apply_consolidation(
                base_records=self.model, source_names="fresh", replacements=[r]
            ),
            "bad-forget": lambda: self.store.forget([1]),  # type: ignore[list-item]
            "empty": lambda: self.store.apply_consolidation(
                base_records=self.model, source_names=[], replacements=[r]
            ),
        }
        self._refused(calls[which])

    # --- invariants ------------------------------------------------------------------

    @invariant()
    def matches_model(self) -> None:
        assert self.store.records() == tuple(self.model)
        if not self.root.exists():
            assert not self.model
            return
        assert verify_listed(self.root) == tuple(self.model)
        files = set(listed_files(self.root))
        on_disk = set(snapshot(self.root))
        # Clean commits leave nothing behind: the set, its manifest, its index, and
        # local state (SPEC §6).
        on_disk = {n for n in on_disk if not n.startswith("history/")}
        assert on_disk - files <= {"manifest.json", "MEMORY.md"}
        if "manifest.json" in on_disk:
            expected = render_index(self.store.entries(), MAX_LINES, MAX_BYTES)
            assert (self.root / "MEMORY.md").read_bytes() == expected

    @invariant()
    def history_matches_the_sets(self) -> None:
        """history() is the sequence of sets the model went through, newest first."""
        entries = self.store.history()[::-1]
        assert [e.seq for e in entries] == list(range(1, len(self.sets) + 1))
        for entry, previous in zip(entries[1:], entries, strict=False):
            assert entry.before == previous.after or entry.op == "recover"
        for entry, expected in zip(entries, self.sets, strict=True):
            want = {r.name for r in expected}
            assert {a.name for a in entry.added} <= want, entry.seq
            assert not {r.name for r in entry.removed} & (want - {a.name for a in entry.added})
        if entries and self.foreign is None:
            replayed = replay(entries)
            assert set(replayed) == set(listed_files(self.root))
            assert sorted(a.name for a in replayed.values()) == sorted(r.name for r in self.model)


def _key(record: MemoryRecord) -> tuple[str, str, str, str]:
    return (record.name, record.description, record.type.value, record.body)


def _index_line(record: MemoryRecord, file: str) -> str:
    return f"- [{record.name}]({file}) - {record.description}\n"


TestStoreMachine = StoreMachine.TestCase
TestStoreMachine.settings = settings(
    max_examples=50,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
