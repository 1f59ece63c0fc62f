"""One view per scope, shown together (``--scope all`` over the project and the user)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._static import StaticView, esc

__all__ = ["ScopedView"]


class ScopedView(StaticView):
    """``parts`` are (scope, view) pairs in the order shown: each under its scope's name,
    its own data under ``scopes[<scope>]`` in the JSON."""

    view_name = "scoped"

    def __init__(self, parts: Sequence[tuple[str, StaticView]]) -> None:
        self.parts = tuple(parts)

    def to_json(self) -> dict[str, Any]:
        return {"view": "scoped", "scopes": {scope: v.to_json() for scope, v in self.parts}}

    def to_text(self) -> str:
        return "\n\n".join(f"[{scope}]\n{v.to_text()}" for scope, v in self.parts)

    def cli_text(self) -> str:
        return "\n".join(
            f"[{scope}]" + (f"\n{text}" if (text := v.cli_text()) else "")
            for scope, v in self.parts
        )

    def cli_json(self) -> Any:
        return {scope: v.cli_json() for scope, v in self.parts}

    def failure(self) -> str | None:
        return next((f"{s}: {f}" for s, v in self.parts if (f := v.failure())), None)

    def found_problem(self) -> bool:
        return any(v.found_problem() for _, v in self.parts)

    def _html_body(self) -> str:
        return "".join(
            f'<div class="ipm-section">{esc(scope)}</div>{v.to_html()}' for scope, v in self.parts
        )
