"""What a memory asks that can be checked exactly (SPEC §14): libraries ruled out or asked
for, and the language of answers, in the phrasings memories are written in."""

from __future__ import annotations

import pytest

from ipymemory.follow.rules import mentioned_languages, mentioned_libraries, rules_of


@pytest.mark.parametrize(
    ("text", "banned", "preferred"),
    [
        ("Use polars, not pandas.", {"pandas"}, {"polars"}),
        ("Polars, not pandas.", {"pandas"}, {"polars"}),
        ("Prefers plotly over matplotlib", {"matplotlib"}, {"plotly"}),
        ("Instead of requests, use httpx.", {"requests"}, {"httpx"}),
        ("Use httpx instead of requests for HTTP calls", {"requests"}, {"httpx"}),
        ("Never use pandas, dask or vaex; polars only.", {"pandas", "dask", "vaex"}, {"polars"}),
        ("Don't ever import pandas in this project.", {"pandas"}, set()),
        ("Never use pandas in notebooks.", {"pandas"}, set()),
        ("pandas is banned here", {"pandas"}, set()),
        ("We moved from pandas to polars last year.", {"pandas"}, {"polars"}),
        ("Write tests with pytest; do not use unittest.", {"unittest"}, {"pytest"}),
        ("Never sklearn; the team models with xgboost.", {"scikit-learn"}, set()),
        # Other languages.
        ("Kein pandas, bitte polars verwenden.", {"pandas"}, {"polars"}),
        ("Kein sqlite3: zu langsam für unsere Dateien.", {"sqlite3"}, set()),
        ("Pas de TensorFlow ni de Keras.", {"tensorflow", "keras"}, set()),
        ("Pas de pandas : utilise polars.", {"pandas"}, {"polars"}),
        ("Nunca uses pandas; usa polars.", {"pandas"}, {"polars"}),
        ("不要用 pandas\uff0c用 polars。", {"pandas"}, {"polars"}),
        ("pandasではなくpolarsを使う", {"pandas"}, {"polars"}),
    ],
)
def test_libraries_ruled_out_and_asked_for(
    text: str, banned: set[str], preferred: set[str]
) -> None:
    rules = rules_of(text)
    assert rules.banned == banned
    assert preferred <= rules.preferred


@pytest.mark.parametrize(
    ("text", "unclear"),
    [
        # A mention, not a rule.
        ("The user finds pandas slow on their 10 GB files.", "pandas"),
        # A negation of another verb.
        ("Don't forget to use pandas nullable dtypes.", "pandas"),
        ("The user does not know pandas well.", "pandas"),
        # A rule with a condition.
        ("Never use pandas for files over 1 GB.", "pandas"),
        ("Don't use pandas unless the user asks for it.", "pandas"),
        # A part of a library is not the library.
        ("Avoid os.system; use subprocess.", "os"),
        ("Don't use pandas' apply; vectorize instead.", "pandas"),
        ("Avoid matplotlib's pyplot state machine.", "matplotlib"),
        # Where a rule holds is a condition too (but not "in this project").
        ("No pandas in hot loops.", "pandas"),
        # Mixed: one mention rules it out, another does not.
        ("No pandas in new code. pandas is fine in the legacy loaders.", "pandas"),
    ],
)
def test_unclear_is_never_ruled_out(text: str, unclear: str) -> None:
    rules = rules_of(text, {unclear})
    assert unclear not in rules.banned
    assert unclear in rules.unclear


def test_common_words_need_a_sign_of_a_library() -> None:
    # "requests" and "black" are English words first.
    assert rules_of("Never ignore requests from the ops team.").banned == frozenset()
    assert rules_of("Don't use black backgrounds in charts.").banned == frozenset()
    assert rules_of("Don't use `black`; the repo formats with ruff.").banned == {"black"}
    assert rules_of("Never use the requests library.").banned == {"requests"}


@pytest.mark.parametrize(
    ("text", "languages", "not_languages"),
    [
        ("Answer in German.", {"de"}, set()),
        ("Antworte immer auf Deutsch.", {"de"}, set()),
        (
            "Der Nutzer möchte alle Antworten auf Deutsch, auch wenn er auf Englisch fragt.",
            {"de"},
            set(),
        ),
        ("Réponds toujours en français.", {"fr"}, set()),
        ("Aunque el usuario escriba en español, las respuestas van en inglés.", {"en"}, set()),
        ("所有回答请使用简体中文\uff0c代码注释可以用英文。", {"zh"}, set()),
        ("Reply in Spanish, never in English.", {"es"}, {"en"}),
    ],
)
def test_answer_languages(text: str, languages: set[str], not_languages: set[str]) -> None:
    rules = rules_of(text)
    assert rules.languages == languages
    assert rules.not_languages == not_languages


@pytest.mark.parametrize(
    "text",
    [
        "Diagrammbeschriftungen auf Deutsch.",  # chart labels: not the answer
        "Write code comments in English.",
        "The user is German.",  # no ask at all
    ],
)
def test_languages_of_code_or_facts_are_not_answer_languages(text: str) -> None:
    rules = rules_of(text)
    assert not rules.languages and not rules.not_languages


def test_purity() -> None:
    assert rules_of("Use polars (`import polars as pl`); do not use pandas.").pure
    assert rules_of("Antworte auf Deutsch. Der Nutzer lebt in Berlin.").pure
    assert not rules_of("Answer in German. Cite your sources.").pure
    assert rules_of("Answer in German and keep it short.").pure  # a style we check
    assert not rules_of("Use polars, not pandas. Always write docstrings.").pure
    assert rules_of("Use polars, not pandas. Always add type hints.").pure  # a style we check


def test_mentions() -> None:
    assert mentioned_libraries("Why is my Pandas code slow?", {"pandas", "polars"}) == {"pandas"}
    assert mentioned_libraries("sklearn or scikit-learn", {"scikit-learn"}) == {"scikit-learn"}
    assert mentioned_libraries("no libraries here", {"pandas"}) == frozenset()
    assert mentioned_languages("Answer in English this time") == {"en"}
    assert mentioned_languages("请用中文") == {"zh"}
