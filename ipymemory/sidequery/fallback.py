"""Deterministic fallback memory selector (SPEC §3 "Fallback").

Used when the model selector is unavailable or its reply is invalid. Pure and
dependency-free: the ranking depends only on the query and the given records'
``name + " " + description`` (the catalog's view of a record).

Tokens are exactly the SPEC's: lowercase ASCII ``[a-z0-9]`` runs of at least
three characters, and the character bigrams of every run of CJK ideographs (a
one-ideograph run is kept whole). The seed scored a record by how many query
tokens it contains; that treats "the" like "adoption". Here the score is Okapi
BM25 (k1 = 1.2, b = 0.75) computed over the candidate set itself, with a few
standard retrieval refinements derived from the same tokens:

- English stop words are ignored, unless the query has nothing else;
- a light inflection folding (plural, -ing, -ed, y/e endings) on both sides, so
  "painted" meets "paint" and "adoption agencies" meets "agency";
- CJK runs also contribute their single ideographs, so words that share a
  character but no bigram with the query still count (IDF keeps the weight of
  common characters low);
- a query term repeated in a long query counts more, but with saturation.

``benchmarks/select_quality.py`` compares this against the seed score and plain
BM25 on public data; see ``benchmarks/README.md``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from itertools import chain
from typing import NamedTuple, Protocol, TypeVar

from .. import _constants as C

__all__ = ["keyword_select", "tokenize"]

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U000323af"
# ASCII letters are listed explicitly (no IGNORECASE): in Unicode mode that flag
# would also let e.g. the Kelvin sign match [a-z].
_TOKEN_RE = re.compile(f"[A-Za-z0-9]{{3,}}|[{_CJK}]+")

# BM25 document-side parameters (the usual Okapi defaults) and the query-side
# saturation constant: a term said three times weighs 1.5x, never more than 2x.
_K1 = 1.2
_B = 0.75
_K3 = 1.0

# Function words of at least three letters (shorter ones never become tokens),
# then degree adverbs and discourse markers, which carry no topic in chat queries.
_STOP_TEXT = """
about above after again against all also and any are because been before being below
between both but can cannot could did does doing down during each few for from further
had has have having her here hers herself him himself his how into its itself just let
lets more most must myself nor not now off once only other our ours ourselves out over
own same she should some such than that the their theirs them themselves then there
these they this those through too under until very was were what when where which
while who whom whose why will with would you your yours yourself yourselves
absolutely actually definitely extremely quite rather really totally
haha hey hmm okay please sure thanks wow yeah yes
"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())


class Selectable(Protocol):
    """What the selector reads from a record (``MemoryRecord`` satisfies it)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...


R = TypeVar("R", bound=Selectable)


def _is_ascii_token(token: str) -> bool:
    return token[0] < "\x80"


def tokenize(text: str) -> list[str]:
    """SPEC §3 tokens of ``text``, in order of appearance (duplicates kept)."""
    tokens: list[str] = []
    for match in _TOKEN_RE.finditer(text):
        run = match.group()
        if _is_ascii_token(run):
            tokens.append(run.lower())
        elif len(run) == 1:
            tokens.append(run)
        else:
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


def _undouble(stem: str) -> str:
    # "running" -> "runn" -> "run"; but "fall", "kiss", "buzz" keep their pair.
    if len(stem) >= 4 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
        return stem[:-1]
    return stem


def _fold(token: str) -> str:
    """Fold an English word's inflections: plural, then -ing/-ed, then y/e endings.

    Not a linguistic stemmer, only consistent: "stories"/"story" -> "stori",
    "paintings"/"painted"/"paint" -> "paint", "dance"/"danced"/"dancing" -> "danc",
    "movies"/"movie" -> "movi". Words with digits are left alone.
    """
    if not token.isalpha():
        return token
    word = token
    if word.endswith("ies") and len(word) >= 5:
        word = word[:-3] + "i"
    elif word.endswith(("ches", "shes", "sses", "xes", "zes")) and len(word) >= 5:
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) >= 4:
        word = word[:-1]
    if word.endswith("ing") and len(word) >= 6:
        word = _undouble(word[:-3])
    elif word.endswith("eed") and len(word) >= 5:
        word = word[:-1]  # "agreed" -> "agree", as the bare verb
    elif word.endswith("ed") and len(word) >= 5:
        word = _undouble(word[:-2])
    if word.endswith("y") and len(word) >= 4:
        word = word[:-1] + "i"
    elif word.endswith("e") and len(word) >= 4:
        word = word[:-1]
    return word


def _terms(text: str) -> tuple[list[str], list[str]]:
    """Scoring terms of ``text``: (content terms, stop-word terms), both folded.

    CJK runs give their bigram tokens plus their single ideographs as separate
    back-off terms (marked with a leading space, which no token contains): a lone
    ideograph between punctuation is a one-character word or interjection, while
    a character inside a longer run is only part of a word.
    """
    content: list[str] = []
    stop: list[str] = []
    for match in _TOKEN_RE.finditer(text):
        run = match.group()
        if _is_ascii_token(run):
            word = run.lower()
            (stop if word in _STOP_WORDS else content).append(_fold(word))
        elif len(run) == 1:
            content.append(run)
        else:
            content.extend(run[i : i + 2] for i in range(len(run) - 1))
            content.extend(" " + char for char in run)
    return content, stop


def _counts(terms: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for term in terms:
        counts[term] = counts.get(term, 0) + 1
    return counts


class _RecordTerms(NamedTuple):
    content: dict[str, int]  # term -> frequency, stop words left out
    stop: dict[str, int]  # stop-word term -> frequency
    content_length: int
    total_length: int


# Per-record term counts, keyed on the (immutable) name and description; bounded so a
# long-lived kernel cannot grow it without limit. Stop words are indexed separately:
# they are used only for a query made of nothing else.
@lru_cache(maxsize=4096)
def _record_terms(name: str, description: str) -> _RecordTerms:
    content, stop = _terms(f"{name} {description}")
    return _RecordTerms(_counts(content), _counts(stop), len(content), len(content) + len(stop))


def _query_weights(query: str) -> tuple[dict[str, float], bool]:
    """Term -> query weight (saturated repetition); and whether stop words are used."""
    content, stop = _terms(query)
    use_stop = not content
    weights: dict[str, float] = {}
    for term, freq in _counts(stop if use_stop else content).items():
        weights[term] = freq * (_K3 + 1.0) / (freq + _K3)
    return weights, use_stop


def keyword_select(
    query: str, records: Sequence[R], limit: int = C.DEFAULT_MAX_SELECTED
) -> tuple[R, ...]:
    """Rank ``records`` against ``query``; return at most ``limit`` of them.

    Records that match no query term are dropped; the rest are ordered by score
    descending, then name ascending (then description, so the result never depends
    on the input order). Records sharing a name are collapsed to the best-ranked one.
    """
    if limit <= 0 or not records:
        return ()
    weights, use_stop = _query_weights(query)
    if not weights:
        return ()
    wanted = weights.keys()

    index = [_record_terms(record.name, record.description) for record in records]
    # A stop-word-only query is scored over the stop-word counts and full lengths.
    if use_stop:
        docs = [(entry.stop, entry.total_length) for entry in index]
    else:
        docs = [(entry.content, entry.content_length) for entry in index]
    count = len(docs)
    average_length = sum(length for _, length in docs) / count or 1.0

    # Only records sharing a term with the query can score; their overlap also
    # gives the document frequencies the IDF needs.
    overlaps = [counts.keys() & wanted for counts, _ in docs]
    matched = [(position, common) for position, common in enumerate(overlaps) if common]
    doc_freq = Counter(chain.from_iterable(overlaps))

    # Query weight x IDF x (k1 + 1): everything in a term's score but its frequency.
    factor = {
        term: weights[term] * math.log(1.0 + (count - df + 0.5) / (df + 0.5)) * (_K1 + 1.0)
        for term, df in doc_freq.items()
    }
    ranked: list[tuple[float, str, str, int]] = []
    for position, common in matched:
        counts, length = docs[position]
        norm = _K1 * (1.0 - _B + _B * length / average_length)
        # fsum is exactly rounded, so the score does not depend on the (hash-seeded)
        # order of the set: equal inputs tie exactly in every process.
        score = math.fsum(factor[t] * counts[t] / (counts[t] + norm) for t in common)
        record = records[position]
        ranked.append((-score, record.name, record.description, position))
    ranked.sort()

    chosen: list[R] = []
    seen: set[str] = set()
    for _, name, _, position in ranked:
        if name in seen:
            continue
        seen.add(name)
        chosen.append(records[position])
        if len(chosen) == limit:
            break
    return tuple(chosen)
