"""The extraction window of the memory work (SPEC §8, issue 31): the append-only
request's anchor stays while the turns since it are short and moves up to the turn
before the new messages once they pass ``EXTRACT_PREFIX_TOKENS``."""

from __future__ import annotations

from typing import Any

from ipymemory import _constants as C
from ipymemory.turn.history import message_tokens
from ipymemory.turn.memory_work import extraction_window, skipped


def turn(i: int, chars: int) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"question {i}: " + "q" * chars},
        {"role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}]},
    ]


def session(sizes: list[int]) -> list[dict[str, Any]]:
    return [m for i, chars in enumerate(sizes) for m in turn(i, chars)]


def test_short_turns_keep_the_anchor_so_each_request_extends_the_last() -> None:
    history = session([100] * 6)
    window = extraction_window(history, cursor=10, anchor=0)
    assert window.anchor == 0
    assert window.earlier == history[:10] and window.messages == history[10:]
    assert window.context == history[8:10]  # screening still reads the turn before
    assert window.end == 12


def test_the_anchor_moves_to_the_turn_before_once_the_prefix_passes_the_bound() -> None:
    # Each turn is about a quarter of the bound: four turns since the anchor pass it.
    chars = C.EXTRACT_PREFIX_TOKENS  # ~chars/4 tokens a turn
    history = session([chars] * 6)
    assert sum(message_tokens(m) for m in history[:6]) < C.EXTRACT_PREFIX_TOKENS
    assert sum(message_tokens(m) for m in history[:10]) > C.EXTRACT_PREFIX_TOKENS
    assert extraction_window(history[:8], cursor=6, anchor=0).anchor == 0
    moved = extraction_window(history, cursor=10, anchor=0)
    assert moved.anchor == 8 and moved.earlier == history[8:10]
    # From there it stays again while the turns since it are short enough.
    assert extraction_window(history + turn(6, 10), cursor=12, anchor=8).anchor == 8


def test_an_anchor_past_the_cursor_or_negative_is_clamped() -> None:
    history = session([100] * 3)
    assert extraction_window(history, cursor=4, anchor=99).anchor == 2
    assert extraction_window(history, cursor=4, anchor=-5).anchor == 0


def test_a_turn_without_extraction_moves_the_cursor_and_anchors_at_it() -> None:
    history = session([100] * 3)
    outcome = skipped(history)
    assert outcome.batch is None and outcome.extracted_upto == 6 and outcome.anchor == 4
