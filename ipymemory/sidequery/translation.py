"""The translation check: which sentences does a held item state? (issue 39)

Screening cannot tell, from words alone, which of two sentences in one language an item
written in another translates: the user's preference, or a note of a file the agent read
in the user's language. Such an item is held with the user's words it may translate and
the lines of tool output it may translate instead (``OriginDecision.asks``,
``.beside``); in ``auto`` mode the turn then asks the model, once for all such items,
which of those sentences each one states -- shown together, in an order that does not
tell whose each is -- and screens the batch again with the answer
(:data:`~ipymemory.screen.evidence.TRANSLATION_CONFIRMED`).

The user's words count as stated only when no line of tool output is: a model that
agrees to everything confirms nothing, and a note that asks to be left out must also
make the model misjudge the user's words. A "yes" only lets the screen go on judging
the item as the user's (a detail, a rule, a consent, a command it carries still decide).
Input: sorted-key JSON ``{"items": [{"memory": <description + body>, "name",
"sentences": [<text>, …]}, …]}``. The reply must be a JSON array with one ``{"name",
"states"}`` per item (:func:`~.replies.validate_stated`); any flaw rejects it with a
:class:`SideQueryError`, and the items stay held.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from .. import _constants as C
from ..errors import SideQueryError
from ..model import ModelClient, Usage
from ..store.record import MemoryRecord
from .extract import ends
from .prompts import SCREENER_PROMPT
from .replies import encode_input, side_query, validate_stated
from .schemas import STATED_SCHEMA

__all__ = ["SCREENER_MAX_TOKENS", "Question", "check_translations", "translation_input"]

SCREENER_MAX_TOKENS = C.SCREENER_MAX_TOKENS


def translation_input(questions: Sequence[Question]) -> str:
    """The check's input text for ``questions`` (see the module docstring)."""
    return encode_input(
        {
            "items": [
                {
                    "memory": f"{q.record.description}\n{q.record.body}",
                    "name": q.record.name,
                    "sentences": [ends(s, C.SCREENER_WORDS_CHARS) for s in q.sentences],
                }
                for q in questions
            ]
        }
    )


@dataclass(frozen=True)
class Question:
    """One held item, the user's words it may state and the lines of tool output it
    may state instead; ``sentences`` is how the check shows them all (each once, the
    user's first when a line repeats them, ordered by a digest: whose is whose does
    not show)."""

    record: MemoryRecord
    words: tuple[str, ...]
    beside: tuple[str, ...]

    @property
    def sentences(self) -> tuple[str, ...]:
        texts = dict.fromkeys((*self.words, *self.beside))
        return tuple(sorted(texts, key=lambda t: hashlib.sha256(t.encode()).hexdigest()))


def check_translations(
    model: ModelClient,
    questions: Sequence[Question],
    *,
    side_model: str | None = None,
    max_tokens: int = SCREENER_MAX_TOKENS,
) -> tuple[dict[str, frozenset[str]], Usage]:
    """Ask ``model`` which sentences each item of ``questions`` states: item name -> the
    user's words it states (empty when it states a line of tool output too), and the
    usage.

    Raises :class:`SideQueryError` (message = the exact cause) on no questions, an item
    asked twice or with no words or no lines (no call made), an API failure or an
    invalid reply.
    """
    if not questions:
        raise SideQueryError("the translation check has no items to judge")
    asked: dict[str, int] = {}
    for q in questions:
        if q.record.name in asked:
            raise SideQueryError(f"the translation check asks about {q.record.name!r} twice")
        if not q.words or not q.beside:
            raise SideQueryError(
                f"the translation check needs the user's words and lines of tool output "
                f"for {q.record.name!r}"
            )
        asked[q.record.name] = len(q.sentences)
    numbers, usage = side_query(
        model,
        system=SCREENER_PROMPT,
        messages=[{"role": "user", "content": translation_input(questions)}],
        max_tokens=max_tokens,
        side_model=side_model,
        role="screener",
        schema=STATED_SCHEMA,
        validate=lambda value: validate_stated(value, asked),
    )
    out: dict[str, frozenset[str]] = {}
    for q in questions:
        stated = {q.sentences[n - 1] for n in numbers[q.record.name]}
        users = stated & set(q.words)
        out[q.record.name] = frozenset(users) if stated <= users else frozenset()
    return out, usage
