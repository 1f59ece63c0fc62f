"""The manifest view: the current set, one row per record (name, type, description, file)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._text import counted
from ..errors import MemoryStoreError
from ..review.scopes import unreadable_note
from ..store.record import StoredRecord
from ._static import StaticView, esc, plain_table, record_line, record_rows_html

if TYPE_CHECKING:
    from ..store.store import MemoryStore

__all__ = ["ManifestView"]

# A short id, not the file name (40+ characters that eat the width): the full name is
# in the JSON, on hover in HTML, and in `show NAME`.
_COLUMNS = (("name", "Name"), ("type", "Type"), ("description", "Description"), ("id", "Id"))
_ID = re.compile(r"-([0-9a-f]{32})\.md$")


def short_id(file: str) -> str:
    """The first 8 hex digits of a record file's id (the file name if it has none)."""
    match = _ID.search(file)
    return match.group(1)[:8] if match else file


class ManifestView(StaticView):
    """The records the manifest lists, in set order; ``error`` if the set could not be
    read; ``unreadable``: what to say of listed record files that do not load (the
    others are shown)."""

    view_name = "manifest"

    def __init__(
        self,
        directory: str | Path,
        entries: Sequence[StoredRecord],
        error: str | None = None,
        *,
        unreadable: str | None = None,
    ) -> None:
        self.directory = str(directory)
        self.entries = tuple(entries)
        self.error = error
        self.unreadable = unreadable

    @classmethod
    def load(cls, store: MemoryStore) -> ManifestView:
        """Read ``store``; a store error becomes the view's ``error`` (never raised), a
        record file that does not load its ``unreadable`` note (issue 43)."""
        try:
            readable = store.readable()
        except MemoryStoreError as e:
            return cls(store.root, (), str(e))
        note = None
        if readable.unreadable:
            note = unreadable_note(readable.unreadable, len(readable.entries))
        return cls(store.root, readable.entries, unreadable=note)

    def rows(self) -> list[dict[str, str]]:
        return [
            {**e.record.to_json(), "file": e.file, "id": short_id(e.file)} for e in self.entries
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "view": "manifest",
            "directory": self.directory,
            "error": self.error,
            "unreadable": self.unreadable,
            "records": self.rows(),
        }

    def _summary(self) -> str:
        if self.error:  # "0 records" would claim an empty set
            return f"Memory: cannot read the set in {self.directory}"
        return f"Memory: {counted(len(self.entries), 'record')} in {self.directory}"

    def _empty(self) -> str:
        """What an empty listing says: where it looked (issue 43)."""
        if self.unreadable:
            return "No other record loads."
        if not os.path.lexists(self.directory):
            return f"No memories stored: {self.directory} does not exist yet."
        return "No memories stored."

    def to_text(self) -> str:
        lines = [self._summary()]
        if self.error:
            lines.append(f"Error: {self.error}")
        if self.unreadable:
            lines.append(f"Warning: {self.unreadable}")
        if self.entries:
            rows = [[r["name"], r["type"], r["description"], r["id"]] for r in self.rows()]
            lines.append(plain_table(rows, [label for _, label in _COLUMNS]))
        elif not self.error:
            lines.append(self._empty())
        return "\n".join(lines)

    def cli_text(self) -> str:
        if not self.entries and not self.error:
            return self._empty()  # as the notebook says it, not an empty output
        return "\n".join(record_line(e.record) for e in self.entries)

    def cli_warnings(self) -> tuple[str, ...]:
        return (self.unreadable,) if self.unreadable else ()

    def cli_json(self) -> dict[str, Any]:
        # Bodies stay out: `show NAME` prints one; a listing is for scanning.
        # (the short id is for the eye: scripts have the file name)
        rows = [{k: v for k, v in row.items() if k not in ("body", "id")} for row in self.rows()]
        data: dict[str, Any] = {"directory": self.directory, "records": rows}
        if self.unreadable:
            data["unreadable"] = self.unreadable
        return data

    def failure(self) -> str | None:
        return self.error

    def _html_body(self) -> str:
        parts = [f"<div><b>{esc(self._summary())}</b></div>"]
        if self.error:
            parts.append(f'<div class="ipm-error">{esc(self.error)}</div>')
        if self.unreadable:
            parts.append(f'<div class="ipm-error">{esc(self.unreadable)}</div>')
        if self.entries:
            parts.append(record_rows_html(self.rows(), _COLUMNS, titles={"id": "file"}))
        elif not self.error:
            parts.append(f'<div class="ipm-note">{esc(self._empty())}</div>')
        return "".join(parts)
