"""The check view: what ``%memory check`` found in ``.memory/`` (errors, then warnings)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ._static import StaticView, cell, esc

__all__ = ["CheckView"]


class CheckView(StaticView):
    """``problems`` are dicts with ``file``, ``reason``, ``severity`` ("error" or
    "warning") and ``leftover`` (a file an interrupted commit left; gc removes it)."""

    view_name = "check"

    def __init__(
        self,
        directory: str | Path,
        problems: Sequence[Mapping[str, Any]],
        *,
        exists: bool = True,
    ) -> None:
        self.directory = str(directory)
        self.problems = [dict(p) for p in problems]
        self.exists = exists  # False: no .memory there, nothing was checked (issue 43)

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [p for p in self.problems if p.get("severity") == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        return {
            "view": "check",
            "directory": self.directory,
            "ok": self.ok,
            "exists": self.exists,
            "problems": self.problems,
        }

    def _headline(self) -> str:
        errors, warnings = len(self.errors), len(self.problems) - len(self.errors)
        if not self.exists and not self.problems:
            return f"Nothing to check: {self.directory} does not exist (no memory here yet)."
        if not self.problems:
            return f"OK: {self.directory} is consistent."
        verdict = "OK (warnings only)" if self.ok else "PROBLEMS"
        return f"{verdict}: {errors} error(s), {warnings} warning(s) in {self.directory}"

    def _hint(self) -> str | None:
        if any(p.get("leftover") for p in self.problems):
            return "Leftover files are ignored by readers; `ipymemory gc` removes them."
        return None

    def to_text(self) -> str:
        lines = [self._headline()]
        lines += [
            f"  {p.get('severity')}: {p.get('file')}: {p.get('reason')}" for p in self.problems
        ]
        hint = self._hint()
        if hint:
            lines.append(hint)
        return "\n".join(lines)

    def cli_text(self) -> str:
        lines = [f"{p.get('severity')}: {p.get('file')}: {p.get('reason')}" for p in self.problems]
        if not self.exists and not self.problems:
            lines.append(self._headline())
        elif self.ok:
            lines.append(f"{self.directory}: ok")
        return "\n".join(lines)

    def found_problem(self) -> bool:
        return not self.ok

    def _html_body(self) -> str:
        cls = "" if self.ok else ' class="ipm-error"'
        rows = "".join(
            "<tr>" + "".join(cell(esc(p.get(k))) for k in ("severity", "file", "reason")) + "</tr>"
            for p in self.problems
        )
        head = "".join(cell(label, header=True) for label in ("Severity", "File", "Reason"))
        table = (
            f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>" if rows else ""
        )
        hint = self._hint()
        note = f'<div class="ipm-note">{esc(hint)}</div>' if hint else ""
        return f"<div{cls}><b>{esc(self._headline())}</b></div>{table}{note}"
