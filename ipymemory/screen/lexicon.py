"""Which words are ordinary, which are function words, and which language a text is in.

Judgments about the user's words must hold in any language the user writes, so they
come from measured word frequencies rather than lists of our own: ``wordfreq``'s
"small" lists (words with a Zipf frequency of 3 or more -- about once per million words
-- in each language's corpora of subtitles, web text, books and more). Looked up
directly, never through ``wordfreq.tokenize`` (which needs MeCab for Japanese).

* :func:`function_words` -- the :data:`FUNCTION_WORDS_TOP` most frequent words of a
  language ("der", "que", "の"): they say nothing about where a fact came from.
* :func:`is_ordinary` -- a word at least as frequent as :data:`ORDINARY_ZIPF` in English
  or in one of the given languages ("Achse", "SQL", "group"): a capitalised ordinary
  word is not a name.
* :func:`language` -- the language of a text: the package's one detector
  (:mod:`ipymemory._language`, shared with the follow-up check).

Each list is loaded once, on first use (a few tens of milliseconds each).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from .. import _constants as C
from .._language import all_function_words, detect, function_words, zipf

__all__ = [
    "FUNCTION_WORDS_TOP",
    "LANGUAGES",
    "ORDINARY_ZIPF",
    "all_function_words",
    "function_words",
    "is_ordinary",
    "language",
    "zipf",
]

#: Languages told apart by their function words (wordfreq's small lists in Latin,
#: Cyrillic or Greek script); ja, ko and zh are told by script.
LANGUAGES = C.LEXICON_LANGUAGES
FUNCTION_WORDS_TOP = C.LEXICON_FUNCTION_WORDS_TOP
ORDINARY_ZIPF = C.LEXICON_ORDINARY_ZIPF


@cache
def is_ordinary(word: str, langs: Iterable[str | None] = ()) -> bool:
    """Whether ``word`` is an ordinary word of English or of one of ``langs``."""
    return any(zipf(word, lang) >= ORDINARY_ZIPF for lang in {"en", *filter(None, langs)})


def language(text: str) -> str | None:
    """A rough language of ``text`` (ISO 639-1), or None when it cannot tell: the
    package's one detector (:func:`ipymemory._language.detect`), on any length."""
    return detect(text)
