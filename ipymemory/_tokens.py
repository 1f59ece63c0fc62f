"""The SPEC §3 tokens of a text: the one tokenizer the selector and the origin check share;
and the one estimate of a text's model tokens (:func:`estimate_tokens`).

Lowercase ASCII ``[a-z0-9]`` runs of at least three characters, and the character
bigrams of every run of CJK ideographs (a one-ideograph run is kept whole). A bottom
module (no ipymemory imports) so the screening layer need not import the side-queries.
"""

from __future__ import annotations

import re

__all__ = ["TOKEN_RUN", "estimate_tokens", "is_ascii_run", "tokenize"]

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U000323af"
# ASCII letters are listed explicitly (no IGNORECASE): in Unicode mode that flag
# would also let e.g. the Kelvin sign match [a-z].
TOKEN_RUN = re.compile(f"[A-Za-z0-9]{{3,}}|[{_CJK}]+")


def is_ascii_run(run: str) -> bool:
    """Whether a :data:`TOKEN_RUN` match is an ASCII word (else a run of ideographs)."""
    return run[0] < "\x80"


def tokenize(text: str) -> list[str]:
    """SPEC §3 tokens of ``text``, in order of appearance (duplicates kept)."""
    tokens: list[str] = []
    for match in TOKEN_RUN.finditer(text):
        run = match.group()
        if is_ascii_run(run):
            tokens.append(run.lower())
        elif len(run) == 1:
            tokens.append(run)
        else:
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


def estimate_tokens(text: str) -> int:
    """Deterministic estimate of ``text``'s model tokens: ASCII at 4 characters a token,
    anything else (CJK, accents, emoji) at one token per character -- conservative for
    both."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    return (ascii_chars + 3) // 4 + (len(text) - ascii_chars)
