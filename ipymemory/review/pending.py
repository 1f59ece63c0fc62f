"""Undecided batches kept on disk, so they survive the kernel (SPEC §6: ``pending/``).

``.memory/pending/<batch id>.json`` holds one batch awaiting review: its items, its
consolidation plan and what the plan was made on, its provenance. :class:`PendingFiles`
follows a :class:`~ipymemory.review.batch.BatchRegistry`: a batch added (or refused by the
store) is written, a batch committed or discarded is removed. A new kernel lists the
files (``%memory pending``) and reopens one into its session (:meth:`PendingFiles.reopen`).

Screened like any other write (SPEC §7): credentials in the text are redacted before
anything reaches the disk, and a batch whose text would still hold one is not kept.
The set the plan was made on is kept as names and hashes only (no text): reopening
finds those records in the current set, and a plan whose records changed since is
dropped (its items can still be committed). An undo/restore proposal (``%memory undo
SEQ``) is kept the same way and planned again when reopened, so one that is no longer
clean shows its conflict instead of committing something else. Files older than
``expiry_days`` are deleted when the directory is listed. Readers of the set never
look here.

**A file read back is untrusted input** (a notebook folder received from someone else
may hold one; anyone can edit it), so nothing it says about trust is taken as it is:

* every item and plan record is screened again as if just proposed: a credential is
  redacted (the item then counts as ``redacted``: committed only on an explicit choice),
  text that instructs the assistant is flagged;
* flags and ``redacted`` read from the file can only add to what screening finds now
  (a flag cleared in the file is found again; one added stays: more caution is safe);
* an origin read from the file can only lower trust, never raise it. The history an
  origin was decided on is not kept, so it cannot be decided again: the saved origin is
  capped at ``user`` when the saved provenance records a turn's query (our own turns
  save it), else at ``assistant``; ``manual`` (a person, through the API or an import)
  is never believed from a file, an unknown value or an item the file gives no origin
  for is ``tool`` (held for a person), and a plan's records take the least trusted
  origin of what they merge. So a crafted ``user`` item that instructs the assistant
  reopens flagged, and what it is journalled as is never more than this.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from .. import _constants as C
from .._json import loads
from ..errors import BatchError, BatchTooLarge, CommandError, MemoryFormatError, MemoryStoreError
from ..screen import Origin, least_trusted, redact, redact_data, screen_record
from ..screen.rules import Finding, findings_from_json, findings_to_json
from ..sidequery.consolidate import ConsolidationPlan
from ..store.durable import fsync_dir, replace_atomic, unlink_quietly
from ..store.layout import PENDING_DIR_NAME, read_regular
from ..store.names import is_valid_name
from ..store.record import MemoryRecord, record_secrets, redact_record
from ..store.store import MemoryStore
from .batch import BatchStatus, PendingBatch
from .decision import PLAN_NAME
from .door import Door
from .failures import MemoryFailure
from .history_change import HistoryChange, plan_history_change
from .item import Item
from .provenance import TurnProvenance, batch_source
from .registry import BatchRegistry
from .scopes import PROJECT, USER
from .screened import keep_screened, screen_plan

__all__ = ["PendingFiles", "SavedBatch", "oversized", "record_digest"]

FORMAT_VERSION = 1
_ID = re.compile(r"^[a-z0-9]{1,64}$")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_DAY = 86400.0


def _encoded(batch: PendingBatch, saved_at: float) -> bytes:
    """The file ``batch`` is kept as."""
    data = json.dumps(_to_json(batch, saved_at), sort_keys=True, ensure_ascii=False)
    return data.encode("utf-8")


def oversized(batch: PendingBatch, data: bytes | None = None) -> str | None:
    """Why ``batch`` (kept as ``data``, when known) cannot be one file of ``pending/``
    (None: it fits)."""
    size = len(data if data is not None else _encoded(batch, time.time()))
    if size <= C.MAX_PENDING_FILE_BYTES:
        return None
    return (
        f"batch {batch.id} would be {size:,} bytes, over the {C.MAX_PENDING_FILE_BYTES:,}-byte "
        "bound of pending/"
    )


def record_digest(record: MemoryRecord) -> str:
    """A record's identity for "unchanged since the plan" (sha256 of its sorted JSON)."""
    text = json.dumps(record.to_json(), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SavedBatch:
    """A batch read back from ``pending/``; ``saved_at`` is a UNIX time.

    ``unscreened`` is the file's batch as parsed and checked; :attr:`batch` the same
    screened again (see the module docstring), done on first use: listing the
    batches (``id``, ``names``, ``plan``, ``history``, ``via``) screens nothing, so a
    large saved batch costs ``ipymemory pending`` and the Lab panel's poll only its
    parsing (issue 28 item 7)."""

    unscreened: PendingBatch = field(repr=False)
    base_digests: tuple[tuple[str, str], ...]
    saved_at: float
    path: Path

    @cached_property
    def batch(self) -> PendingBatch:
        """The batch as it may be reviewed and committed: screened again."""
        return _screened_again(self.unscreened)

    @property
    def id(self) -> str:
        return self.unscreened.id

    @property
    def names(self) -> tuple[str, ...]:
        """The items' names as listed (a credential in a hand-edited name redacted)."""
        return tuple(redact(name) for name in self.unscreened.names)

    @property
    def plan(self) -> tuple[int, int] | None:
        """(records the plan replaces, records it adds), or None without a plan."""
        plan = self.unscreened.plan
        return None if plan is None else (len(plan.source_names), len(plan.records))

    @property
    def history(self) -> HistoryChange | None:
        return self.unscreened.history

    @property
    def via(self) -> Door | None:
        """Who proposed it (``mcp``, ``memory-tool``, ``turn`` …), when saved."""
        provenance = self.unscreened.provenance
        return None if provenance is None else provenance.via

    @property
    def source(self) -> str | None:
        """Where it came from, as listings say it (:func:`batch_source`)."""
        return batch_source(self.unscreened.provenance)

    def expires_at(self, expiry_days: int) -> float:
        return self.saved_at + expiry_days * _DAY


def _screened(record: MemoryRecord) -> MemoryRecord:
    """``record`` with credentials redacted; raises if the text would still hold one."""
    cleaned = redact_record(record)
    # A name is never renamed here: the batch's flags and origins are keyed by it.
    if cleaned.name != record.name or record_secrets(cleaned):
        raise BatchError(f"{redact(record.name)!r} still holds a credential after redaction")
    return cleaned


def _to_json(batch: PendingBatch, saved_at: float) -> dict[str, Any]:
    """The file's JSON: the same keys as ever (issue 42 kept the format), each item's facts
    spread over the maps by name, the plan's under :data:`PLAN_NAME`."""
    plan = batch.plan
    items = [item.but(record=_screened(item.record)) for item in batch.proposed]
    # An item this redacts here was not screened before: it too waits for a choice.
    redacted = [i.name for i, o in zip(items, batch.proposed, strict=True) if o.redacted or i != o]
    flags = {i.name: [redact(w) for w in i.flags] for i in items if i.flags}
    findings = {i.name: findings_to_json(i.rules) for i in items if i.flagged or i.findings}
    if plan is not None and batch.plan_flags:
        flags[PLAN_NAME] = [redact(w) for w in batch.plan_flags]
    if batch.plan_findings or batch.plan_flags:
        findings[PLAN_NAME] = findings_to_json(batch.plan_rules)
    return {
        "version": FORMAT_VERSION,
        "id": batch.id,
        "saved_at": saved_at,
        "status": str(batch.status),
        "error": None if batch.error is None else redact(batch.error),
        "plan_error": None if batch.plan_error is None else redact(batch.plan_error),
        "items": [i.record.to_json() for i in items],
        "origins": batch.origins,
        "flags": flags,
        "redacted": sorted(set(redacted)),
        "replaces": {i.name: i.replaces for i in items if i.replaces is not None},
        "scopes": {i.name: USER for i in items if i.scope == USER},
        "evidence": {i.name: [redact(t) for t in i.evidence] for i in items if i.evidence},
        "sources": {i.name: dict(i.sources) for i in items if i.sources},
        # Issue 39: which rules fired, on what (additive: a file without it still opens).
        "findings": {n: found for n, found in findings.items() if found},
        "plan": None
        if plan is None
        else {
            "source_names": list(plan.source_names),
            "records": [_screened(r).to_json() for r in plan.records],
        },
        "base": [{"name": r.name, "sha256": record_digest(r)} for r in batch.base],
        "provenance": None if batch.provenance is None else redact_data(batch.provenance.to_json()),
        # An undo/restore proposal: what to re-plan on reopening (SEQ and op decide it;
        # the rest is what was shown when it was proposed).
        "history": None if batch.history is None else redact_data(batch.history.to_json()),
    }


def _records(value: Any, where: str) -> tuple[MemoryRecord, ...]:
    if not isinstance(value, list):
        raise MemoryFormatError(f"{where}: expected a list of records")
    return tuple(MemoryRecord.from_json(item, f"{where}[{i}]") for i, item in enumerate(value))


def _provenance(value: Any) -> TurnProvenance | None:
    if not isinstance(value, dict) or not isinstance(value.get("session"), str):
        return None
    models = value.get("models") or {}
    files_read = value.get("files_read") or []
    caller = value.get("caller") or {}
    via = Door.read(value.get("via", Door.TURN))
    if not (
        isinstance(models, dict)
        and isinstance(files_read, list)
        and isinstance(caller, dict)
        and via is not None
    ):
        return None  # damaged or hand-edited: the batch stays reviewable without it
    return TurnProvenance(
        value["session"],
        via=via,
        query=value.get("query") if isinstance(value.get("query"), str) else None,
        models={str(k): str(v) for k, v in models.items()},
        files_read=tuple(str(f) for f in files_read),
        caller=dict(caller),
        files_sha256=_hashes(value.get("files_sha256"), files_read),
        memories=value["memories"] if isinstance(value.get("memories"), dict) else {},
    )


def _hashes(value: Any, files_read: list[Any]) -> dict[str, str]:
    """The sources' sha256 a saved batch claims, only of files it read and only
    well-formed ones (what is left out just is not checked for staleness)."""
    if not isinstance(value, dict):
        return {}
    read = {str(f) for f in files_read}
    return {
        path: digest
        for path, digest in value.items()
        if path in read and isinstance(digest, str) and _SHA256.fullmatch(digest)
    }


def _history(value: Any, where: str) -> HistoryChange | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise MemoryFormatError(f"{where}: history must be an object")
    op, seq = value.get("op"), value.get("seq")
    if op not in ("undo", "restore"):
        raise MemoryFormatError(f"{where}: history.op must be 'undo' or 'restore'")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise MemoryFormatError(f"{where}: history.seq must be a positive integer")
    names = {k: value.get(k) or [] for k in ("leaving", "returning")}
    texts = {k: value.get(k) for k in ("target_op", "target_at")}
    if not (
        all(isinstance(v, list) and all(isinstance(n, str) for n in v) for v in names.values())
        and all(isinstance(t, str) for t in texts.values())
    ):
        raise MemoryFormatError(f"{where}: history must name its target and the names it moves")
    return HistoryChange(
        "undo" if op == "undo" else "restore",
        seq,
        str(texts["target_op"]),
        str(texts["target_at"]),
        tuple(names["leaving"]),
        tuple(names["returning"]),
    )


def _from_json(data: Any, path: Path) -> SavedBatch:
    where = str(path)
    if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
        raise MemoryFormatError(f"{where}: not a version {FORMAT_VERSION} pending batch")
    batch_id = data.get("id")
    if not isinstance(batch_id, str) or f"{batch_id}.json" != path.name:
        raise MemoryFormatError(f"{where}: the id does not match the file name")
    records = _records(data.get("items"), f"{where} items")
    plan = None
    if data.get("plan") is not None:
        raw = data["plan"]
        names = raw.get("source_names") if isinstance(raw, dict) else None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise MemoryFormatError(f"{where}: plan.source_names must be a list of names")
        plan = ConsolidationPlan(tuple(names), _records(raw.get("records"), f"{where} plan"))
    base = data.get("base")
    if not isinstance(base, list) or not all(
        isinstance(b, dict) and isinstance(b.get("name"), str) and isinstance(b.get("sha256"), str)
        for b in base
    ):
        raise MemoryFormatError(f"{where}: base must list name and sha256 of each record")
    saved_at = data.get("saved_at")
    if not isinstance(saved_at, int | float) or isinstance(saved_at, bool):
        raise MemoryFormatError(f"{where}: saved_at must be a number")
    provenance = _provenance(data.get("provenance"))
    facts = _ItemFacts.read(data, {r.name for r in records}, where)
    plan_records = plan.records if plan is not None else ()
    batch = PendingBatch(
        batch_id,
        tuple(facts.item(record, provenance) for record in records),
        plan,
        (),
        status=BatchStatus.FAILED if data.get("status") == "failed" else BatchStatus.PENDING,
        error=data.get("error") if isinstance(data.get("error"), str) else None,
        plan_error=data.get("plan_error") if isinstance(data.get("plan_error"), str) else None,
        provenance=provenance,
        history=_history(data.get("history"), where),
        # A plan's records are as trusted as the least trusted of them the file names.
        plan_origin=least_trusted(
            [_origin_read_back(facts.origins.get(r.name), provenance) for r in plan_records]
            or [Origin.USER]
        ),
        plan_flags=tuple(facts.flags.get(PLAN_NAME, ())),
        plan_findings=facts.findings.get(PLAN_NAME, ()),
    )
    digests = tuple((b["name"], b["sha256"]) for b in base)
    return SavedBatch(batch, digests, float(saved_at), path)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(t, str) for t in value)


@dataclass(frozen=True)
class _ItemFacts:
    """What a file says of its items, by name (the file's maps), each map checked once;
    :meth:`item` gathers one item's."""

    origins: dict[str, Any]
    flags: dict[str, tuple[str, ...]]
    redacted: frozenset[str]
    replaces: dict[str, str]
    scopes: frozenset[str]
    evidence: dict[str, tuple[str, ...]]
    sources: dict[str, dict[str, str]]
    findings: dict[str, tuple[Finding, ...]]

    @classmethod
    def read(cls, data: dict[str, Any], names: set[str], where: str) -> _ItemFacts:
        origins = data.get("origins") or {}
        if not isinstance(origins, dict):
            raise MemoryFormatError(f"{where}: origins must map item names to origins")
        flags = data.get("flags") or {}
        redacted = data.get("redacted") or []
        if not (
            isinstance(flags, dict)
            and all(_strings(v) for v in flags.values())
            and isinstance(redacted, list)
            and all(isinstance(n, str) and n in names for n in redacted)
        ):
            raise MemoryFormatError(f"{where}: flags/redacted must name the batch's items")

        def by_item(key: str, valid: Callable[[Any], bool], what: str) -> dict[str, Any]:
            value = data.get(key) or {}
            if not isinstance(value, dict) or not all(
                k in names and valid(v) for k, v in value.items()
            ):
                raise MemoryFormatError(f"{where}: {key} must map the batch's items to {what}")
            return value

        replaces = by_item("replaces", is_valid_name, "record names")
        scopes = by_item("scopes", lambda v: v == USER, "'user'")
        evidence = by_item("evidence", _strings, "excerpts")
        findings = data.get("findings") or {}
        if not isinstance(findings, dict):
            raise MemoryFormatError(f"{where}: findings must map item names to lists")
        return cls(
            origins={str(k): v for k, v in origins.items()},
            flags={str(k): tuple(v) for k, v in flags.items()},
            redacted=frozenset(redacted),
            replaces={str(k): str(v) for k, v in replaces.items()},
            scopes=frozenset(str(k) for k in scopes),
            evidence={str(k): tuple(v) for k, v in evidence.items()},
            sources=_sources(data.get("sources"), names, where),
            findings={
                str(k): found
                for k, v in findings.items()
                if (k in names or k == PLAN_NAME) and (found := findings_from_json(v))
            },
        )

    def item(self, record: MemoryRecord, provenance: TurnProvenance | None) -> Item:
        """Item ``record`` as the file says it, its origin no more trusted than the file
        may claim (see the module docstring)."""
        name = record.name
        return Item(
            record,
            _origin_read_back(self.origins.get(name), provenance),
            flags=self.flags.get(name, ()),
            findings=self.findings.get(name, ()),
            redacted=name in self.redacted,
            replaces=self.replaces.get(name),
            scope=USER if name in self.scopes else PROJECT,
            evidence=self.evidence.get(name, ()),
            sources=self.sources.get(name, {}),
        )


def _sources(value: Any, names: set[str], where: str) -> dict[str, dict[str, str]]:
    """The saved per-item sources (item -> {path: sha256}); none saved: ``{}``."""
    if value is None:
        return {}
    ok = isinstance(value, dict) and all(
        k in names
        and isinstance(v, dict)
        and all(
            isinstance(p, str) and isinstance(h, str) and _SHA256.fullmatch(h) for p, h in v.items()
        )
        for k, v in value.items()
    )
    if not ok:
        raise MemoryFormatError(f"{where}: sources must map the batch's items to {{path: sha256}}")
    return {str(k): dict(v) for k, v in value.items()}


def _origin_read_back(saved: object, provenance: TurnProvenance | None) -> Origin:
    """The origin of an item read from a file (see the module docstring)."""
    try:
        origin = Origin(saved) if isinstance(saved, str) else Origin.TOOL
    except ValueError:
        origin = Origin.TOOL
    ceiling = Origin.USER if provenance is not None and provenance.query else Origin.ASSISTANT
    return least_trusted([origin, ceiling])


def _union(*each: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(x for values in each for x in values))


def _screened_again(batch: PendingBatch) -> PendingBatch:
    """``batch`` as read from a file, screened again (see the module docstring): flags,
    findings and redactions only add to what screening finds now."""
    kept = keep_screened([screen_record(i.record, i.origin) for i in batch.proposed], set())
    saved = {item.name: item for item in batch.proposed}
    proposed = []
    for now in kept.kept:
        was = saved[kept.renamed.get(now.name, now.name)]
        proposed.append(
            was.but(
                record=now.record,
                origin=now.origin,
                flags=_union(was.flags, now.flags),
                findings=_union(now.findings, was.rules),
                redacted=was.redacted or now.redacted,
            )
        )
    plan, plan_origin, plan_flags = batch.plan, batch.plan_origin, batch.plan_flags
    if plan is not None:
        plan, origin, reasons = screen_plan(plan, (), kept, auto=False)
        # A plan record is as trusted as its sources, and never more than saved (an
        # agent's update of a record of the set stays the agent's).
        plan_origin = least_trusted([origin, batch.plan_origin])
        plan_flags = _union(batch.plan_flags, reasons)
    error = batch.error
    if kept.dropped:
        left = "left out on reopening: " + "; ".join(kept.dropped)
        error = left if error is None else f"{error}; {left}"
    return replace(
        batch,
        proposed=tuple(proposed),
        plan=plan,
        plan_origin=plan_origin,
        plan_flags=plan_flags,
        plan_findings=batch.plan_rules,
        error=error,
    )


class PendingFiles:
    """The ``pending/`` directory of one ``.memory/`` (see the module docstring)."""

    def __init__(
        self,
        memory_root: str | os.PathLike[str],
        expiry_days: int = C.DEFAULT_PENDING_EXPIRY_DAYS,
    ) -> None:
        self.root = Path(memory_root)
        self.directory = self.root / PENDING_DIR_NAME
        self.expiry_days = expiry_days
        #: The last failure to keep a batch on disk (the batch still works in memory).
        self.last_failure: MemoryFailure | None = None
        self._saved: dict[str, PendingBatch] = {}

    # --- following a registry ---------------------------------------------------------

    def follow(self, registry: BatchRegistry) -> None:
        """Keep the open batches of ``registry`` on disk from now on."""
        registry.observe(self._on_state, names="state")

    def _on_state(self, change: Mapping[str, Any]) -> None:
        for batch in change["new"].values():
            if self._saved.get(batch.id) == batch:
                continue
            if batch.open:
                self.save(batch)
            elif batch.id in self._saved:
                self.remove(batch.id)

    def save(self, batch: PendingBatch) -> bool:
        """Write ``batch`` (screened); False (``last_error`` says why) if it is not kept."""
        self._saved[batch.id] = batch
        try:
            if not _ID.match(batch.id):
                raise BatchError(f"batch id {batch.id!r} is not a safe file name")
            self._refuse_odd_directory()
            data = _encoded(batch, time.time())
            too_large = oversized(batch, data)
            if too_large is not None:
                # Never a file no reader takes (listing, reopening and expiry skip it).
                raise BatchTooLarge(f"{too_large}; decide it here or split it")
            self.directory.mkdir(parents=True, exist_ok=True)
            replace_atomic(str(self.directory), f"{batch.id}.json", data, _no_step, "pending")
            fsync_dir(str(self.directory))
        except (OSError, ValueError, BatchError, MemoryStoreError) as e:
            # ValueError: text that does not encode (ipymemory._encodable keeps it out).
            self.last_failure = MemoryFailure(f"batch {batch.id} is not kept on disk", str(e), e)
            return False
        return True

    @property
    def last_error(self) -> str | None:
        """:attr:`last_failure` in words."""
        failure = self.last_failure
        return None if failure is None else f"{failure.message}: {failure.cause}"

    def holds(self, batch_id: str) -> bool:
        """Whether a batch of this id is saved here, undecided (an expired one counts
        until a listing removes it). Cheap: the file is not read."""
        return bool(_ID.match(batch_id)) and (self.directory / f"{batch_id}.json").is_file()

    def read(self, batch_id: str) -> SavedBatch | None:
        """The saved batch ``batch_id`` (None: no such file, or it cannot be read), one
        file read, nothing pruned."""
        if not _ID.match(batch_id) or self._odd_directory() is not None:
            return None
        path = self.directory / f"{batch_id}.json"
        try:
            raw = read_regular(str(path), C.MAX_PENDING_FILE_BYTES, path.name)
            return _from_json(loads(raw.decode("utf-8")), path)
        except (OSError, ValueError, MemoryStoreError):
            return None

    def remove(self, batch_id: str) -> None:
        self._saved.pop(batch_id, None)
        if _ID.match(batch_id) and self._odd_directory() is None:
            unlink_quietly(str(self.directory / f"{batch_id}.json"))

    def _odd_directory(self) -> str | None:
        """Why ``pending/`` must not be used, or None: it is local state inside
        ``.memory``, so a symlink (or a file) there would have batches written to, and
        expired ones deleted from, a directory elsewhere."""
        try:
            mode = os.lstat(self.directory).st_mode
        except FileNotFoundError:
            return None
        except OSError as e:
            return f"{self.directory}: cannot be examined ({e})"
        if stat.S_ISDIR(mode):
            return None
        return f"{self.directory}: not a directory (a symlink or a file); move it away"

    def _refuse_odd_directory(self) -> None:
        odd = self._odd_directory()
        if odd is not None:
            raise MemoryFormatError(odd)

    # --- reading -----------------------------------------------------------------------

    def load(
        self, *, now: float | None = None, prune: bool = True
    ) -> tuple[list[SavedBatch], list[str]]:
        """The saved batches, oldest first, and the problems met (unreadable files).

        Expired files are deleted (and reported as problems, so the user learns why a
        batch is gone); with ``prune=False`` (a read-only reader: the Jupyter server)
        they are only left out.
        """
        now = time.time() if now is None else now
        saved: list[SavedBatch] = []
        problems: list[str] = []
        odd = self._odd_directory()
        if odd is not None:
            return [], [odd]
        try:
            names = sorted(os.listdir(self.directory))
        except FileNotFoundError:
            return [], []
        except OSError as e:
            return [], [f"{self.directory}: {e}"]
        for name in names:
            if not name.endswith(".json") or not _ID.match(name[: -len(".json")]):
                continue
            path = self.directory / name
            try:
                # Never blocks on a FIFO; a symlink or directory there is refused.
                raw = read_regular(str(path), C.MAX_PENDING_FILE_BYTES, name)
                entry = _from_json(loads(raw.decode("utf-8")), path)
            except (OSError, ValueError, MemoryStoreError) as e:
                problems.append(f"{path}: unreadable ({e})")
                continue
            if now >= entry.expires_at(self.expiry_days):
                if not prune:
                    continue
                self.remove(entry.id)
                problems.append(
                    f"batch {entry.id} expired (undecided for over "
                    f"{self.expiry_days} day{'' if self.expiry_days == 1 else 's'}) and was removed"
                )
                continue
            saved.append(entry)
        saved.sort(key=lambda s: s.saved_at)
        return saved, problems

    def reopen(
        self,
        saved: SavedBatch,
        current: Iterable[MemoryRecord],
        registry: BatchRegistry,
        store: MemoryStore | None = None,
    ) -> PendingBatch:
        """Register ``saved`` in ``registry`` (a new kernel's session).

        The plan needs the records it was made on: they are looked up in ``current`` by
        name and digest; when one changed or is gone, the plan is dropped (``plan_error``
        says why) and the items stay reviewable. An undo/restore proposal is planned
        again on ``store`` (required for one): what it does now, or, when it is no
        longer clean, the conflict (the batch is then ``failed``; committing it is
        refused by the store and writes nothing).
        """
        by_name = {r.name: r for r in current}
        batch = saved.batch
        if batch.history is not None:
            batch = _replanned(batch, batch.history, store)
        base: list[MemoryRecord] = []
        changed = []
        for name, digest in saved.base_digests:
            record = by_name.get(name)
            if record is None or record_digest(record) != digest:
                changed.append(name)
            else:
                base.append(record)
        if batch.plan is not None and changed:
            batch = replace(
                batch,
                plan=None,
                plan_error="the set changed since this plan was made ("
                + ", ".join(changed[:5])
                + (" …" if len(changed) > 5 else "")
                + "); the plan was dropped, the items can still be committed",
            )
        batch = replace(batch, base=tuple(base))
        if batch.id in registry.state:
            return registry.lookup(batch.id)
        self._saved[batch.id] = batch  # it is on disk already
        return registry.add(batch)


def _replanned(
    batch: PendingBatch, change: HistoryChange, store: MemoryStore | None
) -> PendingBatch:
    """``batch`` with its undo/restore planned again on the current set (SPEC §6)."""
    if store is None:
        raise BatchError(f"batch {batch.id}: an {change.op} proposal needs the store to re-plan")
    try:
        fresh = plan_history_change(store, change.op, change.seq)
    except (CommandError, MemoryStoreError) as e:
        fresh = replace(change, leaving=(), returning=(), conflict=str(e))
    if fresh.conflict is not None:
        return replace(batch, history=fresh, status=BatchStatus.FAILED, error=fresh.conflict)
    if fresh.empty:
        why = "the current set already is that way; nothing to do (discard it)"
        return replace(batch, history=fresh, status=BatchStatus.FAILED, error=why)
    return replace(batch, history=fresh, status=BatchStatus.PENDING, error=None)


def _no_step(_: str) -> None:
    pass
