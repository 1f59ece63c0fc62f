"""The terms of a text as origin and evidence compare them, in any language.

A text is NFKC-folded and case-folded, and split into runs of letters and digits of one
script: a Latin, Cyrillic or Greek run of 3+ characters is a word (accents removed, so
"términos" and "terminos" agree; plural and -ing/-ed endings folded); a run of
ideographs, katakana or hangul gives its character bigrams (a one-character run is kept
whole), as the SPEC §3 tokens do for CJK; hiragana (Japanese particles and endings) is
left out. Function words of every language :mod:`~ipymemory.screen.lexicon` knows
("the", "der", "que", "没有") and the extractor's stock phrasing ("user", "prefers",
"remember", …) are dropped. Specific terms -- with a digit, or 9+ characters long --
weigh 2, others 1.

This is not the selector's tokenizer (``ipymemory._tokens``, fixed by SPEC §3): origin
compares the user's words with an item's, and those may be Spanish or Japanese.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from .lexicon import WORD_MARKS, all_function_words, is_ordinary, language

__all__ = ["content_terms", "name_terms", "weight", "without_names", "words"]

# The stock words of an extractor's phrasing and English function words the frequency
# lists rank lower, which say nothing about where the fact came from ("The user
# prefers …" for "I like …").
_STOP_TEXT = """
    about above after again all also and any are because been before being both but
    can could did does doing down each for from had has have having her here him his how
    into its itself just more most not now off once only other our out over own same she
    should some such than that the their them then there these they this those through
    too under until very was were what when where which while who why will with would
    you your yours
    user user's users assistant prefer prefers preferred preference want wants wanted
    like likes liked remember note notes memory memories record always never should
    said says told tell mention mentioned asked ask please thanks okay since
    """

# One script's run of letters/digits; hiragana is matched so that it can be skipped.
_EAST = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u30a0-\u30ff\u31f0-\u31ff\uac00-\ud7af"
_HIRAGANA = "\u3040-\u309f"
_RUN = re.compile(
    f"[{_EAST}]+|[{_HIRAGANA}]+"
    f"|[^\\W_{_EAST}{_HIRAGANA}](?:[^\\W_{_EAST}{_HIRAGANA}]|[{WORD_MARKS}])*"
)


def _plain(word: str) -> str:
    """``word`` without accents (NFKD, combining marks dropped)."""
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


# A version or a number of two digits or more is a term ("Python 3.12", "Postgres 16").
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)+(?!\w|\.\w)|(?<![\w.])\d{2}(?!\w|\.\w)")
_VERSIONED = re.compile(r"(?<=[a-z])(?=\d+(?:\.\d+)+\b)")  # "py3.12" is "py 3.12"


def words(text: str) -> list[str]:
    """The raw terms of ``text`` in order (folded, before stop words and endings)."""
    out: list[str] = []
    folded = _VERSIONED.sub(" ", unicodedata.normalize("NFKC", text).casefold())
    out.extend(m.group() for m in _NUMBER.finditer(folded))
    for m in _RUN.finditer(folded):
        run = m.group()
        first = run[0]
        if "\u3040" <= first <= "\u309f":
            continue
        if re.match(f"[{_EAST}]", first):
            out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
        elif len(run) >= 3:
            out.append(_plain(run))
    return out


@cache
def _stop() -> frozenset[str]:
    return frozenset(_STOP_TEXT.split()) | frozenset(_plain(w) for w in all_function_words())


def _fold(word: str) -> str:
    """Plural and -ing/-ed endings off: "tabs"/"tab", "indenting"/"indent"."""
    if not word.isalpha() or len(word) < 4:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("ing") and len(word) > 5:
        return word[:-3]
    if word.endswith("ed") and len(word) > 4 and not word.endswith("eed"):  # speed, need
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_terms(text: str) -> frozenset[str]:
    """The folded terms of ``text`` without function and stock words."""
    stop = _stop()
    return frozenset(_fold(t) for t in words(text) if t not in stop)


_WORD = re.compile(r"\w+")
_SENTENCE_END = frozenset(".!?:;\n\u3002\uff01\uff1f")


def name_terms(text: str) -> frozenset[str]:
    """The text's names and numbers as terms: words with a digit, and capitalised words
    that do not open a sentence or a line and are not ordinary words of English or of
    the text's language ("Kowalski" is a name; "Achse", "SQL" and "GROUP BY" are not)."""
    out: set[str] = set()
    langs = (language(text),)
    for m in _WORD.finditer(text):
        word = m.group()
        before = text[: m.start()].rstrip(" \t\"'(\u201c\u2018")
        opens = not before or before[-1] in _SENTENCE_END
        digit = any(c.isdigit() for c in word)
        if digit or (word[:1].isupper() and not opens and not is_ordinary(word, langs)):
            out.update(content_terms(word))
    return frozenset(out)


def without_names(text: str) -> str:
    """``text`` with its capitalised words that do not open a sentence or a line blanked
    (what its language is told from: "Porto Alegre" and "Curitiba" tilt an English
    sentence towards Portuguese)."""
    out = []
    last = 0
    for m in _WORD.finditer(text):
        word = m.group()
        before = text[: m.start()].rstrip(" \t\"'(\u201c\u2018")
        opens = not before or before[-1] in _SENTENCE_END
        if word[:1].isupper() and not opens:
            out.append(text[last : m.start()] + " ")
            last = m.end()
    return "".join(out) + text[last:]


def weight(term: str) -> int:
    return 2 if len(term) >= 9 or any(c.isdigit() for c in term) else 1
