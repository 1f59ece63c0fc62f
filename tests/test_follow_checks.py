"""The exact verdicts on an answer (SPEC §14): what they decide, and what they leave to
the side model -- near misses above all."""

from __future__ import annotations

import pytest
from follow_support import PANDAS_CODE, POLARS, POLARS_CODE, REASONING, F

from ipymemory import MemoryRecord
from ipymemory.follow import Verdict, check_answer, check_memory, checked

GERMAN = MemoryRecord(
    name="antworten-auf-deutsch",
    type="user",
    description="Antworte immer auf Deutsch",
    body="Der Nutzer möchte alle Antworten auf Deutsch, auch wenn er auf Englisch fragt.",
)
PROJECT = MemoryRecord(
    name="pandas-migration",
    type="project",
    description="The team is migrating the loaders off pandas",
    body="Never use pandas in new loaders.",
)
ENGLISH = (
    "The column does not exist in this DataFrame. Usually it is the spelling, so check the names."
)
DEUTSCH = "Die Spalte gibt es in diesem DataFrame nicht. Meist liegt es an der Schreibweise."


def test_a_banned_import_contradicts() -> None:
    verdict = check_memory(POLARS, PANDAS_CODE)
    assert verdict == Verdict("prefers-polars", "contradicts", "imports pandas", "code")
    assert verdict.missed
    installs = f"{F}bash\npip install pandas\n{F}"
    assert check_memory(POLARS, installs) == Verdict(
        "prefers-polars", "contradicts", "installs pandas", "code"
    )


def test_the_asked_library_follows() -> None:
    assert check_memory(POLARS, POLARS_CODE) == Verdict(
        "prefers-polars", "follows", "imports polars", "code"
    )


@pytest.mark.parametrize(
    ("answer", "query"),
    [
        # Named only to say it is not used.
        ("We don't use pandas here, so I kept it lazy in polars.", ""),
        # Inline code, not a block: `import pandas` is quoted, not run.
        ("If you had `import pandas as pd` before, drop it: use polars.", ""),
        # The old code shown before its conversion.
        (f"Before:\n{F}python\nimport pandas as pd\n{F}\nAfter:\n{POLARS_CODE}", ""),
        # The user asked for pandas this once.
        (PANDAS_CODE, "My colleague only knows pandas, write it in pandas for her"),
        # An API call without a name: a judgment.
        ("`df.isna().sum()` counts the nulls per column.", ""),
    ],
)
def test_near_misses_are_left_to_the_model(answer: str, query: str) -> None:
    assert check_memory(POLARS, answer, query) is None


def test_the_answer_language() -> None:
    assert check_memory(GERMAN, ENGLISH) == Verdict(
        "antworten-auf-deutsch", "contradicts", "is written in English, not German", "language"
    )
    assert check_memory(GERMAN, DEUTSCH) == Verdict(
        "antworten-auf-deutsch", "follows", "is written in German", "language"
    )
    # The user asked for English this time; code alone has no language.
    assert check_memory(GERMAN, ENGLISH, "Answer in English this time please") is None
    assert check_memory(GERMAN, POLARS_CODE) is None


def test_an_impure_memory_is_contradicted_but_never_followed_by_the_checks() -> None:
    both = MemoryRecord(
        name="deutsch-mit-quellen",
        type="user",
        description="Antworte auf Deutsch. Nenne deine Quellen.",
        body="Antworten auf Deutsch. Nenne immer die Quelle.",
    )
    assert check_memory(both, ENGLISH) is not None  # the wrong language is a breach
    assert check_memory(both, DEUTSCH) is None  # "cite your sources" is a judgment


def test_untouched_only_for_prose_about_other_things() -> None:
    verdict = check_memory(POLARS, "The report is due Friday; Maria owns it.")
    assert verdict is not None and verdict.verdict == "untouched"
    assert check_memory(POLARS, "Run `make report` on Friday.") is None  # inline code


def test_check_answer_splits_decided_and_undecided_and_skips_other_types() -> None:
    decided, undecided = check_answer([POLARS, REASONING, PROJECT, GERMAN], PANDAS_CODE)
    assert set(decided) == {"prefers-polars", "antworten-auf-deutsch"}
    assert decided["antworten-auf-deutsch"].verdict == "contradicts"
    assert undecided == (REASONING,)  # a judgment; project memories are not checked
    assert checked([PROJECT]) == ()


def test_verdict_is_validated() -> None:
    with pytest.raises(ValueError):
        Verdict("x", "maybe", "why", "code")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Verdict("x", "follows", "why", "guess")
