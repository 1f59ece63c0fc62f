"""What an ``%%agent`` cell shows: the answer, the steps, the memories injected, the batch
to review.

While the turn runs, :class:`LiveAnswer` shows the answer as it streams in (Markdown
re-rendered at most every ``ANSWER_RENDER_SECONDS``; the complete answer at once) and
:class:`StepsView` lists the tool calls, collapsed under it. :class:`TurnOutput` then
adds the rest (it leaves out what was already shown live).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import ipywidgets as w
from IPython.display import DisplayHandle, display

from .. import _constants as C
from .._text import escape
from ..turn import TurnResult
from ..turn.loop import ToolStep
from ..views import BatchReview, BatchView, ErrorView, MessageView, SelectionView, StaticView
from ..views._static import display_bundle, esc, prints_updates_anew, update_bundle
from ..views._widgetbase import StaticBundleBox
from ..views.followed import FollowView
from .hints import model_hint
from .progress import ProgressLine
from .terminal import TerminalScreen

__all__ = ["LiveAnswer", "LiveTurn", "MemorySlots", "StepsView", "TurnOutput", "steps_bundle"]


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
        live: bool = False,
        models: tuple[str | None, str | None] = (None, None),
    ) -> None:
        self.query = query
        self.result = result
        self.review = review
        self.live = live  # the answer and the steps were already shown as they came
        self.models = models  # (model, side model): named by a hint to check them
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
        out: list[Any] = [] if self.live else [_Answer(self.result.answer)]
        if self.result.steps and not self.live:
            out.append(_Steps(self.result.steps))
        out.append(self.selection_view)
        return out + self.memory_parts()

    def memory_parts(self) -> list[Any]:
        """What the memory work adds under the "memories injected" line: the memories the
        answer may not follow (SPEC §14), its errors, the batch, the review widget."""
        followed = FollowView.of(self.result.followed)
        out: list[Any] = [followed] if followed is not None else []
        for failure in self.result.memory_errors:
            # The selection view already explains a fallback.
            selection = self.result.selection
            if selection.source == "fallback" and failure.cause == selection.reason:
                continue
            hint = "The answer above is unaffected."
            check = model_hint(failure.error, *self.models)
            if check is not None:  # a refused key, an unknown side model
                hint = f"{check} {hint}"
            out.append(ErrorView(failure.cause, outcome=failure.message, hint=hint))
        batch = self.result.batch
        if batch is not None and (self.review is None or not batch.open):
            out.append(BatchView.of(batch))  # (beside the review of a batch held back)
        if self.review is not None:
            out.append(self.review)
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
        return _markdown(self.text)


def _markdown(text: str) -> dict[str, Any]:
    return {"text/markdown": text, "text/plain": escape(text, "terminal")}


class _Steps:
    def __init__(self, steps: Sequence[ToolStep]) -> None:
        self.steps = tuple(steps)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return steps_bundle(self.steps)


def _size(chars: int) -> str:
    return f"{chars} chars" if chars < 10_000 else f"{chars / 1000:.0f}k chars"


def steps_bundle(steps: Sequence[ToolStep]) -> dict[str, Any]:
    """The steps view: one collapsed ``<details>`` (HTML) or lines (plain text) listing
    each tool call: tool, path or code summary, result size, error."""
    if not steps:
        return {"text/plain": ""}
    errors = sum(1 for step in steps if step.error)
    title = f"{len(steps)} tool step{'' if len(steps) == 1 else 's'}"
    if errors:
        title += f", {errors} failed"
    lines, rows = [title], []
    for i, step in enumerate(steps, 1):
        outcome = f"error: {step.error}" if step.error else _size(step.result_chars)
        lines.append(f"  {i}. {step.name} {step.summary} -> {outcome} ({step.seconds:.1f} s)")
        style = ' style="color:var(--jp-error-color1,#c00)"' if step.error else ""
        rows.append(
            f"<tr><td>{i}</td><td><code>{esc(step.name)}</code></td>"
            f"<td><code>{esc(step.summary)}</code></td><td{style}>{esc(outcome)}</td>"
            f"<td>{step.seconds:.1f} s</td></tr>"
        )
    html = (
        f'<details class="ipymemory-steps"><summary>{esc(title)}</summary>'
        f'<table style="font-size:90%">{"".join(rows)}</table></details>'
    )
    # Paths and code come from the model: no control characters in a terminal.
    return {"text/plain": escape("\n".join(lines), "terminal"), "text/html": html}


class StepsView:
    """The tool steps of the running turn: one output, shown at the first step (so it
    follows the live answer, displayed before it) and updated as each step ends; in a
    terminal (``screen``) each step printed once as it ends."""

    def __init__(self, screen: TerminalScreen | None = None) -> None:
        self.steps: list[ToolStep] = []
        self._handle: DisplayHandle | None = None
        self._screen = screen

    def add(self, step: ToolStep) -> None:
        self.steps.append(step)
        if self._screen is not None:
            self._screen.block(steps_bundle(self.steps)["text/plain"].splitlines()[-1])
        elif self._handle is None:
            self._handle = display_bundle(steps_bundle(self.steps))
        else:
            update_bundle(self._handle, steps_bundle(self.steps))


class LiveAnswer:
    """The answer of the running turn as Markdown, updated while it streams in.

    ``add`` appends a streamed piece and re-renders at most every ``interval`` seconds
    (``flush``, called by the progress line's clock, shows a piece left waiting);
    ``new_step`` starts over when a tool step ends (the text so far introduced a tool
    call, now in the steps view); ``finish`` shows the complete answer at once.
    """

    def __init__(
        self, interval: float | None = None, *, screen: TerminalScreen | None = None
    ) -> None:
        self._screen = screen  # a terminal: each piece appended once, never re-rendered
        self._segment = ""  # (terminal) the text since the last tool step
        self.text = ""
        self.renders = 0
        self._shown: str | None = None
        self._interval = C.ANSWER_RENDER_SECONDS if interval is None else interval
        self._last = float("-inf")  # the first piece shows at once
        self._restart = False
        self._final = False
        self._handle: DisplayHandle | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        if self._screen is not None:
            return  # nothing to show before the first piece
        self._handle = display_bundle(_markdown(""))
        self._shown = ""

    def add(self, piece: str) -> None:
        with self._lock:
            if self._final:
                return
            if self._restart:
                self.text, self._restart = "", False
            self.text += piece
            if self._screen is not None:
                self._screen.text(piece)
                self._segment += piece
            elif time.monotonic() - self._last >= self._interval:
                self._render()

    def new_step(self) -> None:
        with self._lock:
            self._restart = bool(self.text)
            if self._screen is not None:
                self._screen.end_text()
                self._segment = ""

    def flush(self) -> None:
        with self._lock:
            if not self._final:
                self._render()

    def finish(self, answer: str) -> None:
        with self._lock:
            self.text, self._final = answer, True
            if self._screen is not None:
                # What did not stream (a client that does not stream, or its end).
                shown = self._segment
                if not answer.startswith(shown):
                    self._screen.end_text()
                    shown = ""
                self._screen.text(answer[len(shown) :])
                self._screen.end_text()
                return
            self._render()

    def _render(self) -> None:
        if self._handle is None or self.text == self._shown:
            return
        update_bundle(self._handle, _markdown(self.text))
        self._shown, self._last = self.text, time.monotonic()
        self.renders += 1


class LiveTurn:
    """The outputs of a running ``%%agent`` cell, fed by the turn's events: the progress
    line (its clock ticking), the answer as it streams, the steps collapsed under it."""

    def __init__(self) -> None:
        # A terminal prints every update anew: write there once, in place (issue 43).
        screen = TerminalScreen(sys.stdout) if prints_updates_anew() else None
        self.progress = ProgressLine(screen=screen)
        self.answer = LiveAnswer(screen=screen)
        self.steps = StepsView(screen=screen)
        self.answered = False

    def start(self) -> None:
        self.progress.start()
        self.answer.start()
        self.progress.on_tick(self.answer.flush)

    def event(self, event: Any) -> None:
        kind = getattr(event, "kind", "")
        if kind == "text":
            self.answer.add(str(event.detail))
        elif kind == "model":
            self.answer.new_step()
        elif kind == "step" and event.step is not None:
            self.steps.add(event.step)
        elif kind == "answered":
            # Shown before the line moves on to the memory work: nothing waits for it.
            self.answer.finish(str(event.detail))
            self.answered = True
        self.progress.event(event)

    def finish(self, message: str) -> None:
        self.progress.finish(message)


_EMPTY: dict[str, Any] = {"text/plain": ""}


class MemorySlots:
    """Where a turn's memory work shows its outcome when it ends after the cell did
    (SPEC §12): ONE output the cell displays under its "memories injected" line (issue 43:
    it used to be four, saved empty by a headless run), filled in place by
    :meth:`fill`, from the worker, with everything the work shows -- the memories the
    answer may not follow (SPEC §14), the memory errors, the batch (or a notice), the
    review widget -- or a line saying there was nothing to keep. A display update names
    its output, so it lands in the turn's own cell whichever cell runs now (JupyterLab,
    VS Code). A headless runner (nbclient) applies only the updates that arrive while a
    cell of its runs: :meth:`show_again`, called by the next ipymemory command once the
    work is done, publishes the final state from that cell, and the saved notebook has
    it."""

    def __init__(self) -> None:
        self._handle = display_bundle(_EMPTY)
        self._parts: list[Any] | None = None

    def fill(self, parts: Sequence[Any]) -> None:
        """Show ``parts`` (``TurnOutput.memory_parts()``, or one notice or error)."""
        followed = next((p for p in parts if isinstance(p, FollowView)), None)
        errors = [p for p in parts if isinstance(p, ErrorView)]
        reviews = [p for p in parts if isinstance(p, BatchReview)]
        rest = [p for p in parts if not isinstance(p, (ErrorView, BatchReview, FollowView))]
        chosen = [followed, _one_error(errors), rest[0] if rest else None]
        self._parts = [p for p in chosen if p is not None]
        if reviews:
            review = reviews[0]
            self._parts.append(review)
            review.on_decided(self.show_again)  # its outcome then shows here
        self.show_again()

    def show_again(self) -> None:
        if self._handle is None or self._parts is None:
            return
        update_bundle(self._handle, _bundle_of(self._parts))


_NOTHING_TO_KEEP = "Memory: nothing new to keep from this turn."


def _bundle_of(parts: Sequence[Any]) -> dict[str, Any]:
    """One output for ``parts``: a part alone as it shows itself; an open review with
    other parts in one box; decided or static parts joined (text and HTML, no JSON: it
    holds one view)."""
    if not parts:
        return MessageView(_NOTHING_TO_KEEP)._repr_mimebundle_()
    *statics, last = parts
    if isinstance(last, BatchReview) and not last.batch.open:
        parts = [*statics, last.static_view()]  # decided: its outcome, no widget
    if len(parts) == 1:
        return parts[0]._repr_mimebundle_() or _EMPTY
    if isinstance(last, BatchReview) and last.batch.open:
        box = _PartsBox([_static(p) for p in statics], last)
        return box._repr_mimebundle_() or _EMPTY
    return _Joined([_static(p) for p in parts]).bundle()


def _static(part: Any) -> StaticView:
    return part.static_view() if isinstance(part, StaticBundleBox) else part


class _Joined(StaticView):
    """Several static views as one output (text and HTML, one after the other)."""

    def __init__(self, views: Sequence[StaticView]) -> None:
        self.views = tuple(views)

    def to_text(self) -> str:
        return "\n".join(view.to_text() for view in self.views)

    def to_html(self) -> str:
        return "".join(view.to_html() for view in self.views)

    def bundle(self) -> dict[str, Any]:
        return {"text/plain": self.plain_text(), "text/html": self.to_html()}


class _PartsBox(StaticBundleBox):
    """The static parts above an open review, in one widget (one output)."""

    def __init__(self, statics: Sequence[StaticView], review: BatchReview) -> None:
        self._statics = tuple(statics)
        self._review = review
        above = w.HTML(value="".join(view.to_html() for view in statics))
        super().__init__(children=(above, review))

    def static_view(self) -> StaticView:
        return _Joined([*self._statics, self._review.static_view()])


def _one_error(errors: Sequence[ErrorView]) -> ErrorView | None:
    """The memory errors of a turn as one view (one output slot): the first in full,
    the others named in its hint."""
    if len(errors) <= 1:
        return errors[0] if errors else None
    first, rest = errors[0], errors[1:]
    also = "; ".join(e.to_text().splitlines()[0] for e in rest)
    hint = f"{first.hint or ''} Also: {also}"
    return ErrorView(first.message, where=first.where, hint=hint, outcome=first.outcome)
