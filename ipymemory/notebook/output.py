"""What an ``%%agent`` cell shows: the answer, the memories used, the batch to review."""

from __future__ import annotations

from typing import Any

from IPython.display import display

from .._text import escape
from ..turn import TurnResult
from ..views import BatchReview, BatchView, ErrorView, SelectionView

__all__ = ["TurnOutput"]


class TurnOutput:
    """The displayable result of one ``%%agent`` turn.

    Displayed, it shows several outputs: the answer as Markdown, a compact "memories
    used" view, any memory error, and the batch (the review widget in review mode,
    the committed names in auto mode). ``result`` is the :class:`TurnResult`.
    """

    def __init__(
        self,
        query: str,
        result: TurnResult,
        *,
        used_memory: bool = True,
        review: BatchReview | None = None,
    ) -> None:
        self.query = query
        self.result = result
        self.review = review
        self.selection_view = (
            SelectionView.of(query, result.selection, compact=True)
            if used_memory
            else SelectionView.disabled(query)
        )

    @property
    def answer(self) -> str:
        return self.result.answer

    def parts(self) -> list[Any]:
        """The displayable pieces, in order (the review widget, if any, last)."""
        out: list[Any] = [_Answer(self.result.answer), self.selection_view]
        for message, cause in self.result.memory_errors:
            # The selection view already explains a fallback.
            if self.result.selection.source == "fallback" and cause == self.result.selection.reason:
                continue
            out.append(ErrorView(cause, where=message, hint="The answer above is unaffected."))
        batch = self.result.batch
        if self.review is not None:
            out.append(self.review)
        elif batch is not None:
            out.append(BatchView.of(batch))
        return out

    def _ipython_display_(self) -> None:
        for part in self.parts():
            display(part)  # type: ignore[no-untyped-call]

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        # Used only where several outputs cannot be shown: the answer and the summary.
        return {"text/plain": repr(self), "text/markdown": self.result.answer}

    def __repr__(self) -> str:
        # text/plain may reach a terminal (IPython in a console): no escape sequences.
        return escape(f"{self.result.answer}\n\n{self.selection_view.to_text()}", "terminal")


class _Answer:
    """The model's answer, rendered as Markdown (text/plain alongside)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/markdown": self.text, "text/plain": escape(self.text, "terminal")}
