"""Which language a prose text is written in (SPEC §14); the names of languages are
:mod:`ipymemory._language`'s, re-exported here.

:func:`identify` is the package's one detector (:mod:`ipymemory._language`, shared with
screening) asked for at least ``FOLLOW_LANGUAGE_MIN_WORDS`` words (or
``FOLLOW_LANGUAGE_MIN_CJK`` East Asian letters): too few words, or no clear lead, give
no answer (None), never a guess -- the check then leaves the question to the side model.
``wordfreq``'s lists are loaded on first use: a turn's answer never waits for them (the
check runs after the answer).
"""

from __future__ import annotations

from .. import _constants as C
from .._language import LANGUAGE_NAMES, detect, language_label, names_to_codes

__all__ = ["LANGUAGE_NAMES", "identify", "language_label", "names_to_codes"]


def identify(prose: str) -> str | None:
    """The language code of ``prose``, or None when it is too short or not clear: the
    package's one detector (:func:`ipymemory._language.detect`), from
    ``FOLLOW_LANGUAGE_MIN_WORDS`` words (``FOLLOW_LANGUAGE_MIN_CJK`` East Asian letters)."""
    return detect(prose, min_words=C.FOLLOW_LANGUAGE_MIN_WORDS, min_cjk=C.FOLLOW_LANGUAGE_MIN_CJK)
