"""Which files a proposed memory depends on (SPEC §11, issue 26): the files it names or
whose words it carries -- not every file its turn read."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from screen_support import reading_turn

from ipymemory.screen.dependence import file_outputs, normal_path
from ipymemory.screen.dependence import item_sources as sources_of
from ipymemory.screen.origin import history_sources

Message = dict[str, Any]

SALES = "region,amount_keur,month\nnorth,1200,2026-11\nsouth,980,2026-11\n"
STYLE = "# Style\nIndent with tabs. Wrap at 88 columns. Docstrings in numpydoc.\n"


def reads(
    *files: tuple[str, str], query: str = "Look at these", reply: str = "Done."
) -> list[Message]:
    """One turn: the user's query, a read_file call per file, the answer."""
    return reading_turn(query, *files, answer=reply)


def item_sources(
    text: str, evidence: tuple[str, ...], history: list[Message], files: tuple[str, ...]
) -> tuple[str, ...]:
    """What an item depends on, judged on a history's outputs and user words."""
    user = history_sources(history).terms[0]
    return sources_of(text, evidence, file_outputs(history), user, files)


FILES = ("data/sales.csv", "STYLE.md", "README.md")
TURN = reads(
    ("data/sales.csv", SALES),
    ("STYLE.md", STYLE),
    query="Keep answers short. Summarise the sales and the style guide.",
)


def test_a_preference_read_beside_files_depends_on_none() -> None:
    assert (
        item_sources("Keep answers short\nAnswer in three sentences at most.", (), TURN, FILES)
        == ()
    )


@pytest.mark.parametrize(
    "text",
    [
        "Sales amounts are in thousands of euros (data/sales.csv)",
        "sales.csv holds amounts in thousands of euros",
        "The sales CSV holds amounts in thousands of euros",
    ],
)
def test_an_item_that_names_a_file_depends_on_it(text: str) -> None:
    assert item_sources(text, (), TURN, FILES) == ("data/sales.csv",)


def test_an_item_that_carries_a_files_words_depends_on_it() -> None:
    # "numpydoc" and "88" are the style guide's, not the user's.
    item = "Code style\nWrap lines at 88 columns; write numpydoc docstrings."
    assert item_sources(item, (), TURN, FILES) == ("STYLE.md",)
    # The user's own words are not the file's, even where the file agrees.
    said = reads(("STYLE.md", STYLE), query="I indent with tabs, always.")
    assert item_sources("Indents with tabs\nThe user indents with tabs.", (), said, FILES) == ()


def test_evidence_that_quotes_a_files_output_ties_the_item_to_it() -> None:
    item = "Amounts are thousands of euros\nReport revenue in kEUR."
    assert item_sources(item, ("north,1200,2026-11",), TURN, FILES) == ("data/sales.csv",)
    # The user's request naming a file is not the item's subject.
    evidence = ("Summarise the sales and the style guide",)
    assert item_sources("Answer in English", evidence, TURN, FILES) == ()


def test_a_file_named_as_a_commands_argument_is_not_the_subject() -> None:
    files = ("Makefile", "conf/train.yaml")
    turn = reads(
        ("Makefile", "train:\n\tpython -m train --config conf/train.yaml\n"),
        ("conf/train.yaml", "lr: 0.001\n"),
    )
    item = "Train with make train (python -m train --config conf/train.yaml)."
    assert item_sources(item, (), turn, files) == ("Makefile",)
    assert item_sources("conf/train.yaml sets lr 0.001", (), turn, files) == ("conf/train.yaml",)


def test_a_file_name_inside_another_path_is_that_paths() -> None:
    files = ("README.md", "models/README.md")
    turn = reads(("README.md", "# fraude\n"), ("models/README.md", "threshold: 0.83\n"))
    assert item_sources("models/README.md: threshold 0.83", (), turn, files) == (
        "models/README.md",
    )


def test_a_file_read_in_an_earlier_turn_counts() -> None:
    earlier = reads(("data/sales.csv", SALES), query="What is in the sales file?")
    later = [*earlier, {"role": "user", "content": "Its amounts are thousands of euros."}]
    later.append({"role": "assistant", "content": [{"type": "text", "text": "Noted."}]})
    item = "Sales amounts are kEUR\nThe amount_keur column holds thousands of euros."
    assert item_sources(item, (), later, FILES) == ("data/sales.csv",)


def test_a_file_the_session_did_not_read_is_not_a_source_of_a_name_alone() -> None:
    # The caller gives the paths it knows; a README it never read is not among them.
    assert (
        item_sources("Start with make dev as README.md says", (), TURN, ("data/sales.csv",)) == ()
    )


def test_a_common_word_is_not_a_file_stem() -> None:
    files = ("notes/report.md",)
    turn = reads(("notes/report.md", "Quarterly report draft.\n"))
    assert item_sources("Write every report in English", (), turn, files) == ()
    assert item_sources("report.md is the quarterly draft", (), turn, files) == files


def test_paths_compare_in_their_normal_form() -> None:
    assert normal_path("./data\\sales.csv") == "data/sales.csv"
    assert normal_path("data//sales.csv") == "data/sales.csv"
    turn = reads(("./data/sales.csv", SALES))
    assert item_sources("amount_keur holds thousands of euros", (), turn, FILES) == FILES[:1]


@settings(max_examples=50, deadline=None)
@given(text=st.text(max_size=300), evidence=st.lists(st.text(max_size=80), max_size=3))
def test_any_text_gives_a_subset_of_the_files_in_order(text: str, evidence: list[str]) -> None:
    got = item_sources(text, evidence, TURN, FILES)
    assert set(got) <= set(FILES)
    assert list(got) == [f for f in FILES if f in got]


def test_a_command_naming_a_target_names_the_file_that_defines_it() -> None:
    files = ("Makefile", "docker-compose.yml")
    turn = reads(
        ("Makefile", "up:\n\tdocker compose up -d\n"),
        ("docker-compose.yml", "services:\n  mlflow:\n    image: mlflow\n"),
    )
    # "make up" runs the Makefile's target; "docker compose up" only uses the compose file.
    assert item_sources("`make up` starts the local services", (), turn, files) == ("Makefile",)
    assert item_sources("make up runs docker compose up -d", (), turn, files) == ("Makefile",)
