"""The status view: where memory lives, which model, what is pending, the last error."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._static import StaticView, cell, esc, plain_table, record_rows_html

__all__ = ["StatusView"]

_SETTING_HEADERS = ("Setting", "Value", "From")


class StatusView(StaticView):
    """A one-glance summary of a session (``%memory status``)."""

    view_name = "status"

    def __init__(
        self,
        directory: str | Path,
        *,
        model: str | None,
        records: int | None,
        pending: int = 0,
        last_error: str | None = None,
        notes: tuple[str, ...] = (),
        settings: Sequence[tuple[str, str, str]] = (),
        user_directory: str | Path | None = None,
        user_records: int | None = None,
    ) -> None:
        self.directory = str(directory)
        #: The user scope's .memory directory (SPEC §11); None when it is off.
        self.user_directory = None if user_directory is None else str(user_directory)
        self.user_records = user_records
        self.model = model
        self.records = records
        self.pending = pending
        self.last_error = last_error
        self.notes = notes
        #: (name, value, where it came from: argument, %config, env IPYMEMORY_…, default)
        self.settings = tuple(settings)

    def to_json(self) -> dict[str, Any]:
        return {
            "view": "status",
            "directory": self.directory,
            "model": self.model,
            "pending": self.pending,
            "last_error": self.last_error,
            "records": self.records,
            "user_scope": None
            if self.user_directory is None
            else {"directory": self.user_directory, "records": self.user_records},
            "settings": [
                {"name": name, "value": value, "origin": origin}
                for name, value, origin in self.settings
            ],
        }

    def _pairs(self) -> list[tuple[str, str]]:
        if self.user_directory is None:
            user = "off (user_dir)"
        else:
            count = "unreadable" if self.user_records is None else str(self.user_records)
            user = f"{self.user_directory} ({count} records)"
        return [
            ("Directory", self.directory),
            ("User scope", user),
            ("Model", self.model or "not configured (set ANTHROPIC_API_KEY)"),
            ("Records", "unreadable" if self.records is None else str(self.records)),
            ("Pending batches", str(self.pending)),
            ("Last error", self.last_error or "none"),
        ]

    def to_text(self) -> str:
        width = max(len(k) for k, _ in self._pairs())
        lines = [f"{k.ljust(width)}  {v}" for k, v in self._pairs()]
        lines.extend(self.notes)
        if self.settings:
            lines.append("")
            lines.append(plain_table([list(row) for row in self.settings], _SETTING_HEADERS))
        return "\n".join(lines)

    def _html_body(self) -> str:
        def value(key: str, text: str) -> str:
            # The last error is highlighted in its own row, not repeated above the table.
            if key == "Last error" and self.last_error:
                return f'<span class="ipm-error">{esc(text)}</span>'
            return esc(text)

        rows = "".join(
            f"<tr>{cell(esc(k), header=True)}{cell(value(k, v))}</tr>" for k, v in self._pairs()
        )
        notes = "".join(f'<div class="ipm-note">{esc(n)}</div>' for n in self.notes)
        settings = ""
        if self.settings:
            columns = tuple(zip(("name", "value", "origin"), _SETTING_HEADERS, strict=True))
            rows_ = [
                dict(zip(("name", "value", "origin"), row, strict=True)) for row in self.settings
            ]
            settings = '<div class="ipm-section">Settings</div>' + record_rows_html(
                rows_, columns, body_key=None
            )
        return f"<div><b>Memory status</b></div><table>{rows}</table>{notes}{settings}"
