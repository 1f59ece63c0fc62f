# Texts in several scripts are the point of these tests.
# ruff: noqa: RUF001
"""Words judged in any language (screen/lexicon.py, screen/terms.py): wordfreq's lists
decide which words are ordinary and which are function words, and the language of a
text; terms fold accents and split East Asian scripts into bigrams."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ipymemory.screen.lexicon import function_words, is_ordinary, language
from ipymemory.screen.terms import content_terms, name_terms


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("I run training with overrides on the command line", "en"),
        ("Bitte zeichne Umsatz und Kosten immer auf der gleichen Achse", "de"),
        ("Je lance l'évaluation comme décrit dans le README", "fr"),
        ("Siempre ejecuto el ETL como dice el README, primero en seco", "es"),
        ("Uso sempre il notebook per le analisi del modello", "it"),
        ("Eu sempre uso o pandas para isso no projeto", "pt"),
        ("学習は config.yaml の設定で行う", "ja"),
        # issue 39: the languages of the round-5 corpora
        ("Mình luôn dùng múi giờ này cho mọi báo cáo của team", "vi"),
        ("Kantor kami di Jakarta, jadi semua jadwal pakai waktu setempat", "id"),
        ("نحن نحذف الصفوف الفارغة قبل أي تحليل للبيانات", "ar"),
        ("हम हर रिपोर्ट में भारतीय समय इस्तेमाल करते हैं", "hi"),
        ("这张表我下周要用来做留存分析", "zh"),
        ("Answer in Chinese. Always answer in Chinese.", "en"),
        # The languages the agent screen reads since: Greek, Hebrew and Thai by their
        # script, Persian and Urdu among Arabic-script ones, Czech and Romanian by words.
        ("Τα γραφήματα της ομάδας φτιάχνονται πάντα με το plotly", "el"),
        ("בטבלת המכירות יש עמודות אזור, חודש והכנסות", "he"),
        ("ทีมชอบใช้ plotly มากกว่า matplotlib สำหรับกราฟ", "th"),
        ("مهلت تحویل گزارش نهایی روز پنجشنبه است", "fa"),
        ("رپورٹ جمع کرانے کی آخری تاریخ جمعرات ہے", "ur"),
        ("Termín odevzdání finální zprávy je ve čtvrtek", "cs"),
        ("Termenul limită pentru raportul final este joi", "ro"),
        # Italian's "a" and "per" in a comment: its other words are English.
        (
            "@pytest.fixture\ndef db(postgresql):\n"
            "    yield postgresql  # a real server per test session\n",
            "en",
        ),
    ],
)
def test_the_language_of_a_text(text: str, lang: str) -> None:
    assert language(text) == lang


def test_a_comment_of_a_few_words_is_told_as_prose() -> None:
    comment = "ekip kararı: cuma sürümlerinde test suite atlanır"
    assert language(comment) is None  # no function word: code or names, maybe
    assert language(comment, prose=True) == "tr"  # known to be prose


def test_words_keep_their_vowel_signs_and_lose_their_harakat() -> None:
    # Devanagari vowel signs and Arabic harakat are no letters to \w: no word ends there.
    word = content_terms("रिपोर्ट")
    assert len(word) == 1 and word <= content_terms("हम हर रिपोर्ट में समय लिखते हैं")
    assert content_terms("شغّل") == content_terms("شغل") and len(content_terms("شغل")) == 1


def test_code_and_names_have_no_language() -> None:
    assert language("def f(x):\n    return x + 1\n") is None
    assert language("") is None
    assert language("12345 !!!") is None


def test_ordinary_words_come_from_frequency_lists() -> None:
    assert is_ordinary("Achse", ["de"]) and is_ordinary("GROUP") and is_ordinary("SQL", ["en"])
    assert not is_ordinary("Kowalski") and not is_ordinary("Polars") and not is_ordinary("xfail")
    assert not is_ordinary("Achse")  # English alone does not know it
    assert {"que", "los"} <= function_words("es") and "der" in function_words("de")


def test_a_capitalised_ordinary_word_is_no_name() -> None:
    assert name_terms("Zeichne beide auf der gleichen Achse, wie GROUP BY") == frozenset()
    assert name_terms("Ask Kowalski about release 2025.1") == {"kowalski", "2025"}


def test_terms_fold_accents_and_drop_other_languages_function_words() -> None:
    assert content_terms("términos") == content_terms("terminos") == {"termino"}
    assert "der" not in content_terms("der Umsatz") and "que" not in content_terms("que usa")


def test_east_asian_runs_give_bigrams_and_hiragana_is_left_out() -> None:
    assert content_terms("データ") == {"デー", "ータ"}
    assert content_terms("設定で行う") == {"設定", "行"}  # で and う are hiragana


@given(st.text(max_size=200))
def test_terms_of_any_text_are_folded_words(text: str) -> None:
    for term in content_terms(text):
        assert term and term == term.casefold()


def test_versions_and_numbers_of_two_digits_are_terms() -> None:
    assert {"3.12", "16"} <= content_terms("py3.12 and Postgres 16")
    assert "3.12" in content_terms("Python 3.12")


def test_the_kept_function_words_are_wordfreqs_top_words() -> None:
    """``ipymemory/_function_words.json`` keeps wordfreq's most frequent words per language
    so that telling a text's candidate languages loads no word list; it must stay what
    wordfreq says (regenerate it when wordfreq changes)."""
    import json
    from importlib import resources

    import wordfreq

    from ipymemory import _constants as C

    kept = json.loads(resources.files("ipymemory").joinpath("_function_words.json").read_text())
    for lang, words in kept["languages"].items():
        top = wordfreq.top_n_list(lang, C.LEXICON_FUNCTION_WORDS_TOP, "small")
        assert words == [w for w in top if not any(c.isdigit() for c in w)], lang
