"""The record view: one memory in full (what ``%memory show NAME`` displays)."""

from __future__ import annotations

from typing import Any

from ..store.record import StoredRecord
from ._static import StaticView, esc

__all__ = ["RecordView"]


class RecordView(StaticView):
    """One stored record: its file, metadata and body."""

    view_name = "record"

    def __init__(self, stored: StoredRecord) -> None:
        self.stored = stored

    def to_json(self) -> dict[str, Any]:
        return {"view": "record", "file": self.stored.file, "record": self.stored.record.to_json()}

    def to_text(self) -> str:
        r = self.stored.record
        return f"{r.name} ({r.type.value}) — {self.stored.file}\n{r.description}\n\n{r.body}"

    def cli_text(self) -> str:
        r = self.stored.record
        return (
            f"name: {r.name}\ntype: {r.type.value}\ndescription: {r.description}\n"
            f"file: {self.stored.file}\n\n{r.body}"
        )

    def _html_body(self) -> str:
        r = self.stored.record
        return (
            f'<div data-name="{esc(r.name)}"><b>{esc(r.name)}</b> '
            f'<span class="ipm-note">({esc(r.type.value)}) {esc(self.stored.file)}</span></div>'
            f"<div>{esc(r.description)}</div>"
            f"<pre>{esc(r.body)}</pre>"
        )
