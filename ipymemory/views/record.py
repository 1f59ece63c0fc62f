"""The record view: one memory in full (what ``%memory show NAME`` displays)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import MemoryFormatError
from ..store.record import MemoryRecord, StoredRecord, redact_record, redacted_fields
from ._static import StaticView, esc

__all__ = ["RecordView"]


class RecordView(StaticView):
    """One stored record: its file, metadata and body, and where it came from
    (``origin``: what the history journal says, see
    :func:`ipymemory.views.history.record_origin`; None if it says nothing)."""

    view_name = "record"

    def __init__(self, stored: StoredRecord, origin: Mapping[str, Any] | None = None) -> None:
        # A credential a stored record holds is never shown (SPEC §7; check reports it).
        self.stored = StoredRecord(stored.file, _redacted(stored.record))
        self.origin = dict(origin) if origin is not None else None

    def to_json(self) -> dict[str, Any]:
        return {
            "view": "record",
            "file": self.stored.file,
            "record": self.stored.record.to_json(),
            "history": self.origin,
        }

    def _origin_line(self) -> str:
        if self.origin is None:
            return "history: no entry added it (older than the journal, or another tool)"
        return str(self.origin["text"])

    def to_text(self) -> str:
        r = self.stored.record
        return (
            f"{r.name} ({r.type.value}) — {self.stored.file}\n{r.description}\n"
            f"{self._origin_line()}\n\n{r.body}"
        )

    def cli_text(self) -> str:
        r = self.stored.record
        return (
            f"name: {r.name}\ntype: {r.type.value}\ndescription: {r.description}\n"
            f"file: {self.stored.file}\nfrom: {self._origin_line()}\n\n{r.body}"
        )

    def _html_body(self) -> str:
        r = self.stored.record
        return (
            f'<div data-name="{esc(r.name)}"><b>{esc(r.name)}</b> '
            f'<span class="ipm-note">({esc(r.type.value)}) {esc(self.stored.file)}</span></div>'
            f"<div>{esc(r.description)}</div>"
            f'<div class="ipm-note">{esc(self._origin_line())}</div>'
            f"<pre>{esc(r.body)}</pre>"
        )


def _redacted(record: MemoryRecord) -> MemoryRecord:
    try:
        return redact_record(record)
    except MemoryFormatError:  # the markers would break the format: show none of it
        in_name = redacted_fields(record)["name"] != record.name
        return MemoryRecord(
            name="redacted" if in_name else record.name,
            type=record.type,
            description="[REDACTED]",
            body="[REDACTED: this record holds a credential; see ipymemory check]",
        )
