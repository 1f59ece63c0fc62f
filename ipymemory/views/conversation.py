"""The conversation view (``%memory session``): turns, tokens and cost so far."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._static import StaticView, cell, esc

if TYPE_CHECKING:
    from ..turn.followed import FollowTally
    from ..turn.trace import SelectionTrace
    from ..turn.usage import UsageLedger

__all__ = ["ConversationView"]

_TRACES_SHOWN = 5  # turns whose memory trace the text and HTML forms show


class ConversationView(StaticView):
    """This kernel's conversation in one directory: how many turns, messages in the
    history (``%%agent --new`` starts it again), tokens by the agent and by memory work,
    the estimated cost (None: a model's price is not known), per injected feedback or
    user memory how often the answers followed it (SPEC §14), and the memory trace of
    the last turns (SPEC §13: what each request carried, when the model's pick arrived;
    ``traces``, oldest first, the session's last ones)."""

    view_name = "session"

    def __init__(
        self,
        session_id: str,
        directory: str,
        messages: int,
        usage: UsageLedger,
        followed: Mapping[str, FollowTally] | None = None,
        traces: Sequence[tuple[int, SelectionTrace]] = (),
    ) -> None:
        self.session_id = session_id
        self.directory = directory
        self.messages = messages
        self.turns = len(usage.turns)
        total = usage.total
        self.main = total.main
        self.memory = total.memory
        self.cost = total.estimated_cost
        self.followed = dict(sorted((followed or {}).items()))
        # (turn number, trace) of the turns that used memory, the newest last.
        self.traces = list(traces)

    def to_json(self) -> dict[str, Any]:
        return {
            "view": "session",
            "session": self.session_id,
            "directory": self.directory,
            "turns": self.turns,
            "messages": self.messages,
            "main": self.main.to_json(),
            "memory": self.memory.to_json(),
            "estimated_cost_usd": self.cost,
            "followed": {name: tally.to_json() for name, tally in self.followed.items()},
            "memory_traces": [{"turn": n, **t.to_json()} for n, t in self.traces],
        }

    def _pairs(self) -> list[tuple[str, str]]:
        def tokens(usage: Any) -> str:
            cached = usage.cache_read_input_tokens + usage.cache_creation_input_tokens
            extra = f" (cache: {usage.cache_read_input_tokens} read, "
            extra += f"{usage.cache_creation_input_tokens} written)" if cached else ""
            return f"{usage.input_tokens} in / {usage.output_tokens} out" + (
                extra if cached else ""
            )

        cost = (
            "unknown (a model's price is not known)" if self.cost is None else f"${self.cost:.4f}"
        )
        return [
            ("Turns", str(self.turns)),
            ("Messages in the conversation", str(self.messages)),
            ("Agent tokens", tokens(self.main)),
            ("Memory tokens", tokens(self.memory)),
            ("Estimated cost", cost),
        ]

    def _headline(self) -> str:
        return f"Session {self.session_id} in {self.directory}"

    def _followed_rows(self) -> list[tuple[str, str]]:
        rows = []
        for name, t in self.followed.items():
            said = f"followed {t.follows}, not followed {t.contradicts}, untouched {t.untouched}"
            if t.unjudged:
                said += f", not judged {t.unjudged}"
            if t.last_miss:
                said += f" (last miss: it {t.last_miss})"
            rows.append((name, said))
        return rows

    def to_text(self) -> str:
        width = max(len(k) for k, _ in self._pairs())
        lines = [self._headline()]
        lines.extend(f"{k.ljust(width)}  {v}" for k, v in self._pairs())
        if self.followed:
            lines.append("Memories and the answers that followed them:")
            lines.extend(f"  {name}: {said}" for name, said in self._followed_rows())
        if self.traces:
            lines.append("Memories each request carried (the last turns):")
            for turn, said in self._trace_rows():
                lines.append(f"  {turn}: {said[0]}")
                lines.extend(f"  {' ' * len(turn)}  {line}" for line in said[1:])
        lines.append("%%agent --new starts a fresh conversation (memory stays).")
        return "\n".join(lines)

    def _trace_rows(self) -> list[tuple[str, list[str]]]:
        shown = self.traces[-_TRACES_SHOWN:]
        return [(f"turn {n}", t.lines() or ["no memory"]) for n, t in shown]

    def _html_body(self) -> str:
        rows = "".join(
            f"<tr>{cell(esc(k), header=True)}{cell(esc(v))}</tr>" for k, v in self._pairs()
        )
        followed = _section(
            "Memories and the answers that followed them",
            [(f"<code>{esc(name)}</code>", esc(said)) for name, said in self._followed_rows()],
        )
        traced = _section(
            "Memories each request carried (the last turns)",
            [(esc(turn), "<br>".join(esc(x) for x in said)) for turn, said in self._trace_rows()],
        )
        return (
            f"<div><b>{esc(self._headline())}</b></div><table>{rows}</table>{followed}{traced}"
            '<div class="ipm-note">%%agent --new starts a fresh conversation (memory stays).</div>'
        )


def _section(title: str, rows: list[tuple[str, str]]) -> str:
    """A titled table of (header, value) rows, both already escaped; ``""`` for none."""
    if not rows:
        return ""
    lines = "".join(f"<tr>{cell(k, header=True)}{cell(v)}</tr>" for k, v in rows)
    return f'<div class="ipm-section">{esc(title)}</div><table>{lines}</table>'
