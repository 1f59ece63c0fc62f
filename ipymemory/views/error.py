"""Small message views: an error shown instead of a traceback, and a plain notice."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._static import StaticView, esc

__all__ = ["ErrorView", "MessageView"]


class ErrorView(StaticView):
    """A readable error: what failed (``where``, e.g. "%memory list", said as "… failed")
    or the outcome as a whole sentence (``outcome``, e.g. "Memory could not be read",
    a turn's ``last_error``, said as it is), and the exact cause."""

    view_name = "error"

    def __init__(
        self,
        message: str,
        *,
        where: str | None = None,
        hint: str | None = None,
        outcome: str | None = None,
    ) -> None:
        self.message = message
        self.where = where
        self.hint = hint
        self.outcome = outcome

    @classmethod
    def of(
        cls, error: BaseException, *, where: str | None = None, hint: str | None = None
    ) -> ErrorView:
        return cls(str(error) or type(error).__name__, where=where, hint=hint)

    def to_json(self) -> dict[str, Any]:
        return {
            "view": "error",
            "where": self.where,
            "outcome": self.outcome,
            "error": self.message,
            "hint": self.hint,
        }

    def _headline(self) -> str:
        if self.outcome:
            return f"{self.outcome}: {self.message}"
        if not self.where:
            return f"Error: {self.message}"
        if self.where.endswith("failed"):
            return f"{self.where}: {self.message}"
        return f"{self.where} failed: {self.message}"

    def to_text(self) -> str:
        return self._headline() + (f"\n{self.hint}" if self.hint else "")

    def failure(self) -> str | None:
        return self.to_text()

    def _html_body(self) -> str:
        hint = f'<div class="ipm-note">{esc(self.hint)}</div>' if self.hint else ""
        return f'<div class="ipm-error" role="alert">{esc(self._headline())}</div>{hint}'


class MessageView(StaticView):
    """A short notice (e.g. "forgot 2 records", "turn interrupted").

    ``data`` is what the notice is about, for programs (e.g. ``{"forgotten": [...]}``):
    it is merged into the JSON form, and ``ipymemory --json`` prints it alone.
    """

    view_name = "message"

    def __init__(
        self, message: str, *, kind: str = "info", data: Mapping[str, Any] | None = None
    ) -> None:
        self.message = message
        self.kind = kind
        self.data = dict(data or {})

    def to_json(self) -> dict[str, Any]:
        return {"view": "message", "kind": self.kind, "message": self.message, **self.data}

    def cli_json(self) -> Any:
        return self.data if self.data else self.to_json()

    def to_text(self) -> str:
        return self.message

    def _html_body(self) -> str:
        cls = "ipm-error" if self.kind == "error" else "ipm-note"
        return f'<div class="{cls}">{esc(self.message)}</div>'
