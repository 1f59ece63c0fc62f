"""The line under an answer that did not follow a memory (SPEC §14).

"⚠ this answer may not follow `prefers-polars`: it imports pandas" -- one line per
memory the follow-up check found not followed. It is a ``message`` view (kind
``not-followed``), so every front end that shows notices shows it; the JSON form lists
the memories and reasons (``missed``). The reason may come from the side model: it is
escaped like all text from a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._static import esc
from .error import MessageView

if TYPE_CHECKING:
    from ..turn.followed import FollowReport

__all__ = ["FollowView"]


class FollowView(MessageView):
    """The memories an answer may not follow, each with why (see the module docstring)."""

    def __init__(self, missed: Sequence[tuple[str, str]]) -> None:
        self.missed = tuple(missed)
        lines = [f"⚠ this answer may not follow `{name}`: it {reason}" for name, reason in missed]
        super().__init__(
            "\n".join(lines),
            kind="not-followed",
            data={"missed": [{"name": name, "reason": reason} for name, reason in missed]},
        )

    @classmethod
    def of(cls, report: FollowReport | None) -> FollowView | None:
        """The view of a turn's report, or None when every memory was followed."""
        if report is None or not report.missed:
            return None
        return cls([(m.name, m.verdict.reason) for m in report.missed])

    def _html_body(self) -> str:
        return "".join(
            f'<div class="ipm-note" style="color:#8a5300">⚠ this answer may not follow '
            f"<code>{esc(name)}</code>: it {esc(reason)}</div>"
            for name, reason in self.missed
        )
