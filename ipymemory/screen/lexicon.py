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

import re
from collections.abc import Iterable

from .. import _constants as C
from .._language import all_function_words, detect, function_words, zipf

__all__ = [
    "FUNCTION_WORDS_TOP",
    "LANGUAGES",
    "ORDINARY_ZIPF",
    "WORD_MARKS",
    "all_function_words",
    "function_words",
    "is_ordinary",
    "language",
    "written_in",
    "zipf",
]

#: Languages told apart by their function words (wordfreq's small lists in Latin,
#: Cyrillic or Greek script); ja, ko and zh are told by script.
LANGUAGES = C.LEXICON_LANGUAGES
FUNCTION_WORDS_TOP = C.LEXICON_FUNCTION_WORDS_TOP
ORDINARY_ZIPF = C.LEXICON_ORDINARY_ZIPF


def is_ordinary(word: str, langs: Iterable[str | None] = ()) -> bool:
    """Whether ``word`` is an ordinary word of English or of one of ``langs``."""
    return any(zipf(word, lang) >= ORDINARY_ZIPF for lang in {"en", *filter(None, langs)})


#: Vowel signs and other marks inside a word of Devanagari, Bengali, Tamil, Thai, Arabic
#: (harakat), Hebrew …: no letters to ``\\w``, but no word ends at them ("रिपोर्ट").
WORD_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670"
    "\u06d6-\u06ed\u0900-\u0dff\u0e00-\u0e7f"
)
_WORD = re.compile(rf"[^\W\d_](?:[^\W\d_]|[{WORD_MARKS}])*")
#: How far the best language's score must lead the next one's in a text known to be
#: prose but holding no function word (a comment of a few words).
_PROSE_LEAD = 1.5


def language(text: str, *, prose: bool = False) -> str | None:
    """A rough language of ``text`` (ISO 639-1), or None when it cannot tell: the
    package's one detector (:func:`ipymemory._language.detect`), on any length. With
    ``prose`` (the caller knows the text is prose: a comment, a note) no function word
    is needed -- a comment of a few words (a Turkish comment on Friday releases) may
    hold none -- but the best language must lead the next by half."""
    if prose:
        return detect(text, function_word=False, lead=_PROSE_LEAD)
    return detect(text)


def written_in(text: str, lang: str) -> bool:
    """Whether every word of ``text`` is an ordinary word of ``lang``: a line of a file
    whose language is known needs no telling apart."""
    return all(zipf(w, lang) >= ORDINARY_ZIPF for w in _WORD.findall(text.casefold()))
