"""The deterministic fallback selector: SPEC §3 tokens, ranking rules, purity."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from record_support import rec

from ipymemory import MemoryRecord, MemoryType, keyword_select
from ipymemory.sidequery.fallback import tokenize


@dataclass(frozen=True)
class Light:
    """Anything with a name and a description can be selected."""

    name: str
    description: str


def names(records: tuple[MemoryRecord, ...] | tuple[Light, ...]) -> list[str]:
    return [r.name for r in records]


# --- tokenize ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", []),
        ("hello world", ["hello", "world"]),
        ("a ab abc abcd", ["abc", "abcd"]),
        ("Tabs NOT Spaces", ["tabs", "not", "spaces"]),
        ("snake_case-and.dots99 x1 py3k", ["snake", "case", "and", "dots99", "py3k"]),
        ("2023-05-08", ["2023"]),
        ("机器学习", ["机器", "器学", "学习"]),
        ("猫", ["猫"]),
        ("我\uff0c猫\u3002好的", ["我", "猫", "好的"]),
        ("Python是编程语言 ok", ["python", "是编", "编程", "程语", "语言"]),
        ("用pandas读csv文件", ["用", "pandas", "读", "csv", "文件"]),
        # Extension A, compatibility and supplementary-plane ideographs are CJK too.
        ("\u3400\u3401", ["\u3400\u3401"]),
        ("\uf900\uf901", ["\uf900\uf901"]),
        ("\U00020000\U00020001\U00020002", ["\U00020000\U00020001", "\U00020001\U00020002"]),
        # Not ASCII, not ideographs: kana, hangul, accented or full-width letters, the
        # Kelvin sign (which lowercases to an ASCII "k").
        ("ひらがな カタカナ 한국어", []),
        ("café naïve", ["caf"]),
        ("\uff21\uff22\uff23 \u212a\u212a\u212a", []),
    ],
)
def test_tokenize(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_tokenize_keeps_order_and_repeats() -> None:
    assert tokenize("the cat and THE cat") == ["the", "cat", "and", "the", "cat"]


# --- keyword_select ------------------------------------------------------------------


def test_selects_matching_records_and_drops_zero_scores() -> None:
    records = [
        rec("editor", "Uses vim with tabs for Python"),
        rec("pets", "Has a cat named Miso"),
        rec("lunch", "Prefers noodles at noon"),
    ]
    assert names(keyword_select("which editor for python?", records)) == ["editor"]
    assert keyword_select("quantum chromodynamics", records) == ()


def test_more_matching_terms_rank_first() -> None:
    records = [
        rec("a-one", "python notebooks"),
        rec("b-two", "python notebooks pandas"),
        rec("c-three", "python notebooks pandas plotting"),
    ]
    assert names(keyword_select("python notebooks pandas plotting", records)) == [
        "c-three",
        "b-two",
        "a-one",
    ]


def test_ties_break_by_name_whatever_the_input_order() -> None:
    records = [rec(n, "likes green tea") for n in ("tea-c", "tea-a", "tea-b")]
    expected = ["tea-a", "tea-b", "tea-c"]
    assert names(keyword_select("green tea", records)) == expected
    assert names(keyword_select("green tea", records[::-1])) == expected


def test_limit() -> None:
    records = [rec(f"fact-{i}", f"deploy notes part {i}") for i in range(8)]
    assert len(keyword_select("deploy", records)) == 5
    assert names(keyword_select("deploy", records, limit=2)) == ["fact-0", "fact-1"]
    assert len(keyword_select("deploy", records, limit=20)) == 8
    assert keyword_select("deploy", records, limit=0) == ()
    assert keyword_select("deploy", records, limit=-1) == ()


@pytest.mark.parametrize("query", ["", "   ", "a b c ok", "?!", "ひらがな"])
def test_query_without_tokens_selects_nothing(query: str) -> None:
    assert keyword_select(query, [rec("ok-go", "a ok b")]) == ()


def test_no_records() -> None:
    assert keyword_select("anything at all", []) == ()
    assert keyword_select("anything at all", ()) == ()


def test_name_is_part_of_the_text_but_body_is_not() -> None:
    by_name = rec("deploy-checklist", "Steps before a release")
    body_only = MemoryRecord(
        name="notes",
        type=MemoryType.REFERENCE,
        description="Assorted notes",
        body="deploy checklist",
    )
    assert keyword_select("deploy checklist", [body_only, by_name]) == (by_name,)


def test_returns_the_given_objects_and_does_not_touch_the_input() -> None:
    records = [rec("b-tabs", "prefers tabs"), rec("a-tabs", "tabs in makefiles")]
    before = list(records)
    chosen = keyword_select("tabs", records)
    assert records == before
    assert chosen[0] is records[1] and chosen[1] is records[0]
    assert keyword_select("tabs", records) == chosen


def test_light_objects_are_enough() -> None:
    records = [Light("x-1", "graph databases"), Light("x-2", "relational databases")]
    assert keyword_select("graph", records) == (records[0],)


def test_duplicate_names_are_collapsed() -> None:
    records = [Light("same", "green tea"), Light("same", "green tea"), Light("other", "tea")]
    assert names(keyword_select("green tea", records)) == ["same", "other"]


def test_inflections_meet() -> None:
    records = [
        rec("painting", "Melanie painted a sunrise last year"),
        rec("cooking", "Bakes cookies on weekends"),
        rec("travel", "Visited three cities in Japan"),
    ]
    assert names(keyword_select("When did Melanie paint?", records))[0] == "painting"
    assert names(keyword_select("baking a cookie", records)) == ["cooking"]
    assert names(keyword_select("which city", records)) == ["travel"]


def test_stop_words_do_not_select_but_an_all_stop_word_query_still_can() -> None:
    records = [rec("weather", "What the weather was like"), rec("snake", "a python snake")]
    # "what", "was", "the" alone would pick "weather"; the content word decides.
    assert names(keyword_select("what was the python", records)) == ["snake"]
    assert names(keyword_select("what was that", records)) == ["weather"]


def test_cjk_bigrams_and_single_characters_match() -> None:
    records = [
        rec("ml", "在学习机器学习"),
        rec("cat", "家里有一只猫"),
        rec("tea", "喜欢喝绿茶"),
    ]
    assert names(keyword_select("机器学习的课程", records))[0] == "ml"
    # No bigram in common ("红茶" vs "绿茶"), but the character 茶 is.
    assert names(keyword_select("红茶", records)) == ["tea"]


def test_rare_term_outranks_common_term() -> None:
    # The seed counts matched query tokens: both records below match one token and
    # the tie goes to the name "a-common". A term found in nearly every record says
    # little; one found in a single record says a lot.
    common = rec("a-common", "python scripts for reports")
    rare = rec("z-rare", "prefers tabs for indentation")
    others = [rec(f"m-{i}", f"python project number {i}") for i in range(6)]
    records = [common, rare, *others]
    query = "python tabs"
    seed_scores = {
        r.name: len(set(tokenize(query)) & set(tokenize(f"{r.name} {r.description}")))
        for r in (common, rare)
    }
    assert seed_scores == {"a-common": 1, "z-rare": 1}
    assert keyword_select(query, records)[0] is rare


def test_longer_record_with_same_match_ranks_lower() -> None:
    short = rec("z-short", "kubernetes cluster")
    long = rec("a-long", "kubernetes notes about many unrelated things and more words here")
    filler = [rec(f"f-{i}", f"misc item {i}") for i in range(4)]
    assert keyword_select("kubernetes", [long, short, *filler]) == (short, long)


def test_same_words_in_any_order_tie_exactly() -> None:
    rng = random.Random(5)
    words = [letter * 4 for letter in "abcdefghijkl"]
    records = []
    for i in range(40):
        shuffled = words[:]
        rng.shuffle(shuffled)
        records.append(Light(f"r-{i:02d}", " ".join(shuffled)))
    rng.shuffle(records)
    records.append(Light("a-weaker", words[0]))
    chosen = names(keyword_select(" ".join(words), records, limit=100))
    assert chosen == [f"r-{i:02d}" for i in range(40)] + ["a-weaker"]


_SCRIPT = """
import json, sys
from ipymemory.sidequery.fallback import keyword_select
from dataclasses import dataclass
@dataclass(frozen=True)
class L:
    name: str
    description: str
data = json.loads(sys.stdin.read())
recs = [L(n, d) for n, d in data["records"]]
print(json.dumps([r.name for r in keyword_select(data["query"], recs, limit=50)]))
"""


def test_same_ranking_in_every_process() -> None:
    # Set iteration order depends on the per-process string hash seed; the ranking
    # (including exact ties) must not.
    rng = random.Random(3)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]
    records = [(f"r-{i:02d}", " ".join(rng.choices(words, k=rng.randint(1, 6)))) for i in range(40)]
    query = "alpha beta gamma delta omega"
    matching = sum(1 for _, text in records if set(text.split()) & set(query.split()))
    payload = json.dumps({"query": query, "records": records})
    root = Path(__file__).resolve().parents[1]
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}
        done = subprocess.run(
            [sys.executable, "-c", _SCRIPT],
            input=payload,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=True,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert len(json.loads(outputs.pop())) == matching > 30


# --- properties ----------------------------------------------------------------------

_WORDS = ["tabs", "spaces", "python", "pythons", "deploy", "deployed", "cat", "the", "what"]
_WORDS += ["机器", "学习", "猫", "绿茶", "ab", "x"]

_texts = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=8).map(" ".join)
_record_sets = st.lists(
    st.tuples(st.from_regex(r"[a-z]{1,3}(-[a-z0-9]{1,2})?", fullmatch=True), _texts),
    max_size=25,
    unique_by=lambda pair: pair[0],
).map(lambda pairs: [Light(n, d) for n, d in pairs])


@settings(max_examples=200, deadline=None)
@given(records=_record_sets, query=_texts, limit=st.integers(0, 30), data=st.data())
def test_properties(records: list[Light], query: str, limit: int, data: st.DataObject) -> None:
    chosen = keyword_select(query, records, limit=limit)
    assert len(chosen) <= limit
    assert all(any(c is r for r in records) for c in chosen)
    assert len({c.name for c in chosen}) == len(chosen)
    # A smaller limit is a prefix of a larger one.
    assert chosen == keyword_select(query, records, limit=30)[:limit]
    # The input order does not matter.
    shuffled = data.draw(st.permutations(records))
    assert names(keyword_select(query, shuffled, limit=limit)) == names(chosen)


# --- same results as scoring every record, at any set size, without a cliff (issue 13) --


def _score_every_record(query: str, records: list[Light], limit: int) -> list[str]:
    """The ranking rules applied plainly: every record scored exactly (the algorithm the
    cached index replaced); names of the chosen records."""
    from ipymemory.sidequery import fallback as fb

    weights, use_stop = fb._query_weights(query)
    if limit <= 0 or not records or not weights:
        return []
    terms = [fb._record_terms(f"{r.name} {r.description}") for r in records]
    docs = [(t.stop, t.total_length) if use_stop else (t.content, t.content_length) for t in terms]
    average = sum(length for _, length in docs) / len(docs) or 1.0
    df = {w: sum(1 for counts, _ in docs if w in counts) for w in weights}
    ranked = []
    for position, (counts, length) in enumerate(docs):
        common = [w for w in weights if w in counts]
        if not common:
            continue
        norm = fb._K1 * (1.0 - fb._B + fb._B * length / average)
        score = math.fsum(
            weights[w]
            * math.log(1.0 + (len(docs) - df[w] + 0.5) / (df[w] + 0.5))
            * (fb._K1 + 1.0)
            * counts[w]
            / (counts[w] + norm)
            for w in common
        )
        ranked.append((-score, records[position].name, records[position].description))
    ranked.sort()
    chosen: list[str] = []
    for _, name, _ in ranked:
        if name not in chosen:
            chosen.append(name)
    return chosen[:limit]


# Few words, so many records tie or nearly tie; names repeat, so collapsing matters.
_crowded_sets = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c", "d", "e", "f"]), _texts), max_size=60
).map(lambda pairs: [Light(n, d) for n, d in pairs])


@settings(max_examples=300, deadline=None)
@given(
    records=st.one_of(_record_sets, _crowded_sets),
    query=_texts,
    limit=st.integers(0, 8),
)
def test_same_choice_as_scoring_every_record(records: list[Light], query: str, limit: int) -> None:
    assert names(keyword_select(query, records, limit=limit)) == _score_every_record(
        query, records, limit
    )


def _big_set(size: int) -> list[Light]:
    rng = random.Random(size)
    words = [f"w{i}x" for i in range(400)]
    return [Light(f"r{i}", " ".join(rng.choices(words, k=12))) for i in range(size)]


def test_a_warm_query_over_a_large_set_tokenizes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # The old fixed 4,096-entry term cache re-tokenized every record of a 5,000-record set
    # on every query (the cliff). Terms and the set's index are now kept for the set.
    from ipymemory.sidequery import fallback as fb

    fb.clear_caches()
    records = _big_set(5000)
    calls: list[str] = []
    real = fb._record_terms

    def counting(text: str) -> Any:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(fb, "_record_terms", counting)
    first = keyword_select("w1x w2x w3x", records)
    assert len(calls) == 5000
    calls.clear()
    for query in ("w1x w2x w3x", "w7x w300x", "w5x"):
        keyword_select(query, records)
        keyword_select(query, list(records))  # a new sequence of the same records
    assert calls == []
    # One record replaced: only its text is tokenized, and the result sees it.
    changed = [*records[:-1], Light("r4999", "w1x w2x w3x w1x w2x w3x")]
    assert keyword_select("w1x w2x w3x", changed)[0].name == "r4999"
    assert calls == ["r4999 w1x w2x w3x w1x w2x w3x"]
    assert keyword_select("w1x w2x w3x", records) == first


def test_caches_stay_bounded() -> None:
    from ipymemory.sidequery import fallback as fb

    fb.clear_caches()
    for size in range(1, 40):
        keyword_select("w1x", _big_set(size * 10))
    assert len(fb._SET_CACHE) <= fb._SETS_KEPT
    assert len(fb._TERM_CACHE) <= max(fb._MIN_TERM_CACHE, 4 * 390) + 390
