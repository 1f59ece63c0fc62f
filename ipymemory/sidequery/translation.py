"""The translation check: does a held item state what these words of the user say? (issue 39)

Screening cannot tell, from words alone, which of two sentences in one language an item
written in another translates: the user's preference, or a note of a file the agent read
in the user's language. Such an item is held with the user's words it may translate
(``OriginDecision.asks``); in ``auto`` mode the turn then asks the model, once for all
such items, which of those words each one states, and screens the batch again with the
answer (:data:`~ipymemory.screen.evidence.TRANSLATION_CONFIRMED`).

The model sees only the items and the user's own words -- no tool output -- so a file's
note cannot speak to the check; and a "yes" only lets the screen go on judging the item
as the user's (a detail, a rule, a consent, a command it carries still decide). Input:
sorted-key JSON ``{"items": [{"memory": <description + body>, "name", "words": [<the
user's words>, …]}, …]}``. The reply must be a JSON array with one ``{"name", "states"}``
per item (:func:`~.replies.validate_stated`); any flaw rejects it with a
:class:`SideQueryError`, and the items stay held.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .. import _constants as C
from ..errors import SideQueryError
from ..model import ModelClient, Usage
from ..store.record import MemoryRecord
from .extract import ends
from .prompts import SCREENER_PROMPT
from .replies import encode_input, side_query, validate_stated
from .schemas import STATED_SCHEMA

__all__ = ["SCREENER_MAX_TOKENS", "check_translations", "translation_input"]

SCREENER_MAX_TOKENS = C.SCREENER_MAX_TOKENS


def translation_input(questions: Sequence[tuple[MemoryRecord, Sequence[str]]]) -> str:
    """The check's input text for (item, the user's words it may state) pairs."""
    return encode_input(
        {
            "items": [
                {
                    "memory": f"{record.description}\n{record.body}",
                    "name": record.name,
                    "words": [ends(words, C.SCREENER_WORDS_CHARS) for words in said],
                }
                for record, said in questions
            ]
        }
    )


def check_translations(
    model: ModelClient,
    questions: Sequence[tuple[MemoryRecord, Sequence[str]]],
    *,
    side_model: str | None = None,
    max_tokens: int = SCREENER_MAX_TOKENS,
) -> tuple[dict[str, frozenset[str]], Usage]:
    """Ask ``model`` which of the user's words each item of ``questions`` states:
    item name -> those words (as given), and the usage.

    Raises :class:`SideQueryError` (message = the exact cause) on no questions, an item
    asked twice or with no words (no call made), an API failure or an invalid reply.
    """
    if not questions:
        raise SideQueryError("the translation check has no items to judge")
    asked: dict[str, int] = {}
    for record, said in questions:
        if record.name in asked:
            raise SideQueryError(f"the translation check asks about {record.name!r} twice")
        if not said:
            raise SideQueryError(f"the translation check has no words for {record.name!r}")
        asked[record.name] = len(said)
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
    words: Mapping[str, Sequence[str]] = {record.name: said for record, said in questions}
    return {
        name: frozenset(words[name][n - 1] for n in stated) for name, stated in numbers.items()
    }, usage
