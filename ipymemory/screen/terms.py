"""The terms of a text as origin and evidence compare them (SPEC §3 tokens, folded).

Lowercase ASCII words of 3+ characters and CJK character bigrams, plural and -ing/-ed
endings folded, function words and the extractor's stock phrasing ("user", "prefers",
"remember", …) dropped. Specific terms -- with a digit, or 9+ characters long -- weigh 2,
others 1.
"""

from __future__ import annotations

import re

from .._tokens import tokenize

__all__ = ["content_terms", "name_terms", "weight"]

# Function words and the stock words of an extractor's phrasing, which say nothing
# about where the fact came from ("The user prefers …" for "I like …").
_STOP_TEXT = """
    about above after again all also and any are because been before being both but
    can could did does doing down each for from had has have having her here him his how
    into its itself just more most not now off once only other our out over own same she
    should some such than that the their them then there these they this those through
    too under until very was were what when where which while who why will with would
    you your yours
    user user's users assistant prefer prefers preferred preference want wants wanted
    like likes liked remember note notes memory memories record always never should
    said says told tell mention mentioned asked ask please thanks okay
    """
_STOP = frozenset(_STOP_TEXT.split())


def _fold(word: str) -> str:
    """Plural and -ing/-ed endings off: "tabs"/"tab", "indenting"/"indent"."""
    if not word.isalpha() or len(word) < 4:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("ing") and len(word) > 5:
        return word[:-3]
    if word.endswith("ed") and len(word) > 4:
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_terms(text: str) -> frozenset[str]:
    """The folded terms of ``text`` without stop words."""
    return frozenset(_fold(t) for t in tokenize(text) if t not in _STOP)


_WORD = re.compile(r"\w+")
_SENTENCE_END = frozenset(".!?:;\n")


def name_terms(text: str) -> frozenset[str]:
    """The text's names and numbers as terms: capitalised words that do not open a
    sentence or a line, and words with a digit."""
    out: set[str] = set()
    for m in _WORD.finditer(text):
        word = m.group()
        before = text[: m.start()].rstrip(" \t\"'(\u201c\u2018")
        opens = not before or before[-1] in _SENTENCE_END
        if any(c.isdigit() for c in word) or (word[:1].isupper() and not opens):
            out.update(_fold(t) for t in tokenize(word) if t not in _STOP)
    return frozenset(out)


def weight(term: str) -> int:
    return 2 if len(term) >= 9 or any(c.isdigit() for c in term) else 1
