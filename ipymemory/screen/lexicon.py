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
* :func:`language` -- the language whose function words a text holds most; Japanese,
  Korean and Chinese by their scripts (kana, hangul, ideographs alone).

Each list is loaded once, on first use (a few tens of milliseconds each).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from functools import cache

import wordfreq

from .. import _constants as C

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
_WORDLIST = "small"


@cache
def _frequencies(lang: str) -> dict[str, float]:
    return wordfreq.get_frequency_dict(lang, _WORDLIST)


def zipf(word: str, lang: str) -> float:
    """The word's Zipf frequency in ``lang`` (log10 per billion words), 0 when the small
    list does not hold it."""
    freq = _frequencies(lang).get(word.casefold(), 0.0)
    return math.log10(freq * 1e9) if freq > 0 else 0.0


@cache
def function_words(lang: str) -> frozenset[str]:
    """The most frequent words of ``lang`` without digits (casefolded)."""
    top = wordfreq.top_n_list(lang, FUNCTION_WORDS_TOP, _WORDLIST)
    return frozenset(w for w in top if not any(c.isdigit() for c in w))


@cache
def all_function_words() -> frozenset[str]:
    """The function words of every language of :data:`LANGUAGES` and of ja/ko/zh."""
    return frozenset().union(*(function_words(lang) for lang in (*LANGUAGES, "ja", "ko", "zh")))


def is_ordinary(word: str, langs: Iterable[str | None] = ()) -> bool:
    """Whether ``word`` is an ordinary word of English or of one of ``langs``."""
    return any(zipf(word, lang) >= ORDINARY_ZIPF for lang in {"en", *filter(None, langs)})


_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_LETTER = re.compile(r"[^\W\d_]")
_HANGUL = re.compile("[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_IDEOGRAPH = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# The letters among them (not the middle dot, double hyphen and sound marks of the kana
# blocks).
_KANA_LETTER = "\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9d"
_KANA_LETTERS = re.compile(f"[{_KANA_LETTER}]")
_EAST_LETTER = re.compile(
    f"[{_KANA_LETTER}\uac00-\ud7af\u1100-\u11ff\u3131-\u318e"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
)
#: Vowel signs and other marks inside a word of Devanagari, Bengali, Tamil, Thai, Arabic
#: (harakat), Hebrew …: no letters to ``\\w``, but no word ends at them ("रिपोर्ट").
WORD_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670"
    "\u06d6-\u06ed\u0900-\u0dff\u0e00-\u0e7f"
)
_WORD = re.compile(rf"[^\W\d_](?:[^\W\d_]|[{WORD_MARKS}])*")


def language(text: str, *, prose: bool = False) -> str | None:
    """A rough language of ``text`` (ISO 639-1), or None when it cannot tell.

    East Asian scripts decide when they make up a third of the letters: kana makes it
    ``ja``, hangul ``ko``, ideographs alone ``zh``. Otherwise, when the text holds a
    function word at all (code and lists of names do not), the language of
    :data:`LANGUAGES` whose ordinary words cover it best (the sum of their Zipf
    frequencies), if it leads the next by a tenth. With ``prose`` (the caller knows the
    text is prose: a comment, a note) no function word is needed -- a comment of a few
    words (a Turkish comment on Friday releases) may hold none -- but the
    best language must lead the next by half.
    """
    letters = len(_LETTER.findall(text))
    if not letters:
        return None
    if len(_EAST_LETTER.findall(text)) * 3 > letters:
        if _KANA_LETTERS.search(text):
            return "ja"
        if _HANGUL.search(text):
            return "ko"
        return "zh"
    # Each distinct word once, with its count: a long file repeats its words.
    words = Counter(_WORD.findall(text.casefold()))
    # Prose has function words; code and lists of names have none to tell by.
    if not prose and not any(w in function_words(lang) for w in words for lang in LANGUAGES):
        return None
    # The language whose ordinary words cover the text best ("a real server per test
    # session" holds Italian's "a" and "per", but its other words are English).
    scores = sorted(
        ((sum(n * zipf(w, lang) for w, n in words.items()), lang) for lang in LANGUAGES),
        reverse=True,
    )
    (best, lang), (second, _) = scores[0], scores[1]
    return lang if best > second * (_PROSE_LEAD if prose else _LEAD) else None


def written_in(text: str, lang: str) -> bool:
    """Whether every word of ``text`` is an ordinary word of ``lang``: a line of a file
    whose language is known needs no telling apart."""
    return all(zipf(w, lang) >= ORDINARY_ZIPF for w in _WORD.findall(text.casefold()))


#: How far the best language's score must lead the next one's.
_LEAD = 1.1
_PROSE_LEAD = 1.5
