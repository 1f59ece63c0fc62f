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

import heapq
import math
from collections.abc import Sequence
from typing import NamedTuple, Protocol, TypeVar

from .. import _constants as C
from .._tokens import TOKEN_RUN, is_ascii_run, tokenize

__all__ = ["clear_caches", "keyword_select", "tokenize"]

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
    for match in TOKEN_RUN.finditer(text):
        run = match.group()
        if is_ascii_run(run):
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


def _record_terms(text: str) -> _RecordTerms:
    content, stop = _terms(text)
    return _RecordTerms(_counts(content), _counts(stop), len(content), len(content) + len(stop))


class _Side(NamedTuple):
    """One side (content or stop words) of a candidate set, ready for scoring."""

    counts: list[dict[str, int]]  # per record: term -> frequency
    norms: list[float]  # per record: BM25 length normalisation k1 * (1 - b + b * len / avg)
    # Inverted: term -> (positions of the records holding it, and for each its
    # frequency share f / (f + norm), the query-independent part of its score).
    postings: dict[str, tuple[list[int], list[float]]]


class _SetIndex(NamedTuple):
    records: tuple[object, ...]  # kept alive: the cache key is their ids
    content: _Side
    stop: _Side  # used only for a query made of nothing but stop words


def _side(entries: list[_RecordTerms], stop: bool) -> _Side:
    counts = [entry.stop if stop else entry.content for entry in entries]
    lengths = [entry.total_length if stop else entry.content_length for entry in entries]
    average_length = sum(lengths) / len(lengths) or 1.0
    norms = [_K1 * (1.0 - _B + _B * length / average_length) for length in lengths]
    postings: dict[str, tuple[list[int], list[float]]] = {}
    for position, (doc, norm) in enumerate(zip(counts, norms, strict=True)):
        for term, freq in doc.items():
            entry = postings.get(term)
            if entry is None:
                entry = postings[term] = ([], [])
            entry[0].append(position)
            entry[1].append(freq / (freq + norm))
    return _Side(counts, norms, postings)


# Records are immutable, and a kernel selects over the same set turn after turn: the
# terms of each record text, and the index of each recent set (keyed by the identity of
# its records, which it keeps alive), are cached. The term cache is sized to the sets
# seen (a fixed size below the set's would be emptied on every query: a cliff at that
# size) and dropped only when far more would pile up in a long-lived kernel.
_TERM_CACHE: dict[str, _RecordTerms] = {}
_SET_CACHE: dict[tuple[int, ...], _SetIndex] = {}
_SETS_KEPT = 4
_MIN_TERM_CACHE = 4096


def clear_caches() -> None:
    """Forget every cached term and set index (benchmarks measure cold selections)."""
    _TERM_CACHE.clear()
    _SET_CACHE.clear()


def _set_index(records: Sequence[Selectable]) -> _SetIndex:
    key = tuple(map(id, records))
    index = _SET_CACHE.get(key)
    if index is not None:
        return index
    if len(_TERM_CACHE) > max(_MIN_TERM_CACHE, 4 * len(records)):
        _TERM_CACHE.clear()
    entries = []
    for record in records:
        text = f"{record.name} {record.description}"  # the catalog's view of a record
        entry = _TERM_CACHE.get(text)
        if entry is None:
            entry = _TERM_CACHE[text] = _record_terms(text)
        entries.append(entry)
    index = _SetIndex(tuple(records), _side(entries, stop=False), _side(entries, stop=True))
    if len(_SET_CACHE) >= _SETS_KEPT:
        del _SET_CACHE[next(iter(_SET_CACHE))]  # the oldest
    _SET_CACHE[key] = index
    return index


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
    Records must not change while they are being selected over (``MemoryRecord`` is
    frozen): each set's index is cached by the identity of its records.
    """
    if limit <= 0 or not records:
        return ()
    weights, use_stop = _query_weights(query)
    if not weights:
        return ()
    index = _set_index(records)
    side = index.stop if use_stop else index.content
    count = len(records)

    # Only records holding a query term can score: walk those terms' postings, adding
    # query weight x IDF x (k1 + 1) x the record's frequency share.
    factors: dict[str, float] = {}
    approx = [0.0] * count
    for term, weight in weights.items():
        postings = side.postings.get(term)
        if postings is None:
            continue
        positions, shares = postings
        df = len(positions)
        factor = weight * math.log(1.0 + (count - df + 0.5) / (df + 0.5)) * (_K1 + 1.0)
        factors[term] = factor
        for position, share in zip(positions, shares, strict=True):
            approx[position] += factor * share
    cut = _cut(records, approx, limit)
    if cut is None:
        return ()

    # Exact scores for the few records that can make the cut (an approximate score is
    # within a few ulps per term of the exact one: _MARGIN is far above that). fsum is
    # exactly rounded, so equal inputs tie exactly in every process.
    floor = cut * (1.0 - _MARGIN)
    ranked: list[tuple[float, str, str, int]] = []
    for position, estimate in enumerate(approx):
        if estimate < floor:
            continue
        counts = side.counts[position]
        norm = side.norms[position]
        score = math.fsum(
            factor * counts[term] / (counts[term] + norm)
            for term, factor in factors.items()
            if term in counts
        )
        record = records[position]
        ranked.append((-score, record.name, record.description, position))
    return _best_per_name(ranked, records, limit)


def _best_per_name(
    ranked: list[tuple[float, str, str, int]], records: Sequence[R], limit: int
) -> tuple[R, ...]:
    """The first ``limit`` records of ``ranked`` (-score, name, description, position)
    in sorted order, one per name."""
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


_MARGIN = 1e-9


def _cut(records: Sequence[Selectable], approx: list[float], limit: int) -> float | None:
    """The approximate score of the record at which ``limit`` distinct names are
    reached in approximate order (or of the last matching record); None if none match."""
    wanted = limit
    while True:
        best = heapq.nlargest(wanted, range(len(approx)), key=approx.__getitem__)
        best = [position for position in best if approx[position] > 0.0]
        names: set[str] = set()
        for position in best:
            names.add(records[position].name)
            if len(names) == limit:
                return approx[position]
        if len(best) < wanted:  # every matching record seen
            return approx[best[-1]] if best else None
        wanted *= 2  # records sharing a name: look further down
