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


# --- issue 44: a mention as context, an elaboration's words -----------------------------

ORDERS = (
    "order_id,date,region,rep,revenue_eur\n1001,2026-11-02,NORTH,T. Brandt,1820.00\n"
    "1002,2026-11-03,SOUTH,A. Ruiz,940.50\n"
)
ORDERS_TURN = reads(("data/sales.csv", ORDERS), query="read data/sales.csv")
ORDER_FILES = ("data/sales.csv",)


def _of_orders(text: str, user: str) -> tuple[str, ...]:
    """What an item depends on when the user, after the read, wrote ``user``."""
    history = [*ORDERS_TURN, {"role": "user", "content": user}]
    history.append({"role": "assistant", "content": [{"type": "text", "text": "Noted."}]})
    return item_sources(text, (user,), history, ORDER_FILES)


@pytest.mark.parametrize(
    ("text", "user"),
    [
        # The file is the input of what the claim is about.
        (
            "Q4 board report due Fri 2026-12-11\nThe Q4 board report is due Fri 2026-12-11 "
            "(said on Sun 2026-12-06 as 'next Friday'); it is built from data/sales.csv.",
            "The Q4 board report is built from this file and is due next Friday",
        ),
        # An aside inside a sentence.
        (
            "The order list goes to sales every Monday\nThe order list (data/sales.csv, with "
            "order_id and revenue_eur) goes to the sales team every Monday.",
            "The order list goes to the sales team every Monday",
        ),
        # Words the extractor added from the file while elaborating the user's claim.
        (
            "Maria Keller takes over the northern accounts in January\nFrom January 2027 "
            "Maria Keller takes over the northern accounts (region NORTH) from Tom (T. Brandt "
            "in the rep column).",
            "Maria Keller takes over the northern accounts from Tom in January.",
        ),
        # A preference about how to show the file's data.
        (
            "Charts of the sales data show revenue in thousands\nIn charts built from "
            "data/sales.csv, show revenue in thousands of euros.",
            "in charts of the sales data always show revenue in thousands",
        ),
        # Pointed to, saying nothing the file holds.
        (
            "The user presents the Q4 report on Fri 2026-12-11\nThe user presents the Q4 "
            "report on Fri 2026-12-11; the figures come as in data/sales.csv.",
            "I present the Q4 report next Friday",
        ),
    ],
)
def test_a_file_mentioned_as_context_is_not_a_source(text: str, user: str) -> None:
    assert _of_orders(text, user) == ()


@pytest.mark.parametrize(
    ("text", "user"),
    [
        (
            "data/sales.csv: one row per order, revenue_eur net of VAT\ndata/sales.csv has "
            "one row per order with order_id, date, region, rep and revenue_eur.",
            "revenue_eur is net of VAT",
        ),
        (
            "Revenue is net of VAT\nrevenue_eur is in euros, net of VAT (data/sales.csv).",
            "revenue_eur is net of VAT",
        ),
        (
            "Never sum the NORTH rows twice\nThe NORTH rows of data/sales.csv are already "
            "deduplicated: never sum them twice.",
            "the NORTH rows are already deduplicated, never sum them twice",
        ),
        (
            "Regions: NORTH and SOUTH\nThe report covers NORTH and SOUTH, as in data/sales.csv "
            "(rep T. Brandt, A. Ruiz).",
            "the report covers the regions in that file",
        ),
    ],
)
def test_a_claim_about_what_the_file_holds_depends_on_it(text: str, user: str) -> None:
    assert _of_orders(text, user) == ORDER_FILES


def test_a_files_stem_that_is_an_ordinary_word_of_the_items_language_names_nothing() -> None:
    files = ("datos/cuentas.csv",)
    turn = reads(
        ("datos/cuentas.csv", "cuenta,region,comercial\nC-101,NORTE,P. Vidal\n"),
        query="Lee datos/cuentas.csv. Desde enero Carmen lleva las cuentas del norte.",
    )
    item = "Carmen lleva las cuentas del norte\nDesde enero Carmen lleva las cuentas del norte."
    assert item_sources(item, (), turn, files) == ()
    assert item_sources("datos/cuentas.csv: cuenta, region, comercial", (), turn, files) == files


def test_part_of_a_files_compound_name_is_carried_only_whole() -> None:
    files = ("data/schema.md",)
    turn = reads(("data/schema.md", "- id: string\n- is_fraude: 0/1\n"), query="Now the model")
    assert item_sources("Fraude model: LightGBM v3", (), turn, files) == ()
    assert item_sources("Labels\nis_fraude holds 0/1 labels", (), turn, files) == files


def test_a_date_the_extractor_wrote_is_not_a_files_number() -> None:
    # "2026-11-05" is not in the file whole: its parts are the extractor's calendar.
    item = "Standup moved to Thu 2026-11-05\nThe standup moved to Thu 2026-11-05 (11:02)."
    assert _of_orders(item, "the standup moved to Thursday") == ()
