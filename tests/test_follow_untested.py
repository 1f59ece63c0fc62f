# ruff: noqa: RUF001
"""An exact check decides only what it tests completely (issue 44, SPEC §14): a memory
that asks more than a currency, a library, a language or a style -- a unit and a
precision, an API, a register, a count, a second ask, a condition -- is left to the side
model, in the languages memories are written in; a memory the checks test whole is still
decided."""

from __future__ import annotations

import pytest
from follow_support import F
from hypothesis import given, settings
from hypothesis import strategies as st

from ipymemory import MemoryRecord
from ipymemory.follow import check_memory
from ipymemory.follow.answer import read_answer
from ipymemory.follow.language import names_to_codes
from ipymemory.follow.libraries import LIBRARIES, surface_names
from ipymemory.follow.rules import rules_of
from ipymemory.follow.style import check_style
from ipymemory.follow.untested import is_aside, untested_word


def _record(text: str, name: str = "the-ask") -> MemoryRecord:
    description, _, body = text.partition("\n")
    return MemoryRecord(name=name, type="user", description=description, body=body or description)


EUROS = "Q3 revenue for DACH was **€388,910**, up from €351,200 in Q2."
EUROS_M = "Q3 revenue for DACH was **€0.4M**, up from €0.4M in Q2 before rounding."
DOLLARS_M = "DACH closed Q3 at **$0.4M** after converting at the quarter's average rate."
EAGER = f"{F}python\nimport polars as pl\n\norders = pl.read_csv('orders.csv')\n{F}"
DU = (
    "Das geht mit `pd.to_datetime`. Wenn deine Daten im Format TT.MM.JJJJ vorliegen, gib "
    "das Format am besten direkt mit, dann bist du auf der sicheren Seite."
)
TU = (
    "Tu peux utiliser drop_duplicates. Si tu veux garder la dernière occurrence plutôt que "
    "la première, passe keep last, et pense à vérifier le nombre de lignes."
)
TUTEO = (
    "Puedes usar to_excel. Si quieres que no aparezca el índice, pásale index False y "
    "necesitas tener instalado openpyxl en tu entorno."
)
FANTI = "可以先把日期欄位轉成月份，再用 groupby 彙總，這樣每個月會得到一行，數值是當月的總金額。"
JIANTI = "可以先把日期列转成月份，再用 groupby 汇总，这样每个月会得到一行，数值是当月的总金额。"
PLAIN_FORM = (
    "まずは欠損の数を確認するのがよい。列ごとの件数がわかる。数値列なら中央値で埋める方法が無難だ。"
)
AMERICAN = (
    "The main cost is the color palette being recomputed on every render, so memoize it "
    "and optimize the query behind the revenue tile."
)
TWO_SPACES = (
    f"{F}python\ndef load(path: str) -> list[str]:\n  return open(path).read().split()\n{F}"
)
TABS = f"{F}python\ndef load(path: str) -> list[str]:\n\treturn open(path).read().split()\n{F}"


@pytest.mark.parametrize(
    ("memory", "answer"),
    [
        # The right currency, the wrong unit or precision.
        ("Show amounts in € M with one decimal", EUROS),
        ("Report money amounts in millions of euros, rounded to one decimal.", EUROS),
        ("Beträge in Mio. € mit einer Nachkommastelle", EUROS),
        ("Montants en k€, arrondis à l'unité", EUROS),
        ("Importes en euros con dos decimales", EUROS),
        ("Show amounts in euros, rounded to whole thousands.", EUROS),
        # The right library through the wrong API.
        ("Use polars lazy frames for dataframe code, never pandas.", EAGER),
        ("Utilise polars en mode lazy, jamais pandas.", EAGER),
        ("Für Datenrahmen polars im Lazy-Modus verwenden, kein pandas.", EAGER),
        ("Use pandas 2 with the pyarrow backend, not polars.", f"{F}python\nimport pandas\n{F}"),
        (
            "Tests use pytest fixtures, never unittest setUp methods.",
            f"{F}python\nimport pytest\n{F}",
        ),
        # The right language in the wrong register or variety.
        ("Antworte auf Deutsch, per Sie.", DU),
        ("Antworte immer auf Deutsch und sieze den Nutzer.", DU),
        ("Réponds toujours en français, en vouvoyant l'utilisateur.", TU),
        ("Réponds en français soutenu.", TU),
        ("Responde siempre en español y trata al usuario de usted.", TUTEO),
        ("Responde en español formal.", TUTEO),
        ("用简体中文回答。", FANTI),
        ("用繁體中文回答。", JIANTI),
        ("回答は日本語で、です・ます調で書くこと。", PLAIN_FORM),
        ("Answer in British English.", AMERICAN),
        ("Answer in simple English.", AMERICAN),
        # A number beside a style, a second ask joined to the first.
        ("Indent Python with 4 spaces.", TWO_SPACES),
        ("Indent with two spaces.", TABS.replace("\t", "    ")),
        ("Keep answers short: at most three bullet points.", "- a\n- b\n- c\n- d\n- e"),
        ("SQL keywords uppercase, one clause per line.", f"{F}sql\nSELECT a FROM b WHERE c;\n{F}"),
        (
            "Write SQL keywords in uppercase and every table aliased.",
            f"{F}sql\nSELECT a FROM b;\n{F}",
        ),
        ("Type hints on every function, PEP 604 unions rather than Optional.", TABS),
    ],
)
def test_an_ask_beyond_the_check_is_left_to_the_model(memory: str, answer: str) -> None:
    assert check_memory(_record(memory), answer) is None


@pytest.mark.parametrize(
    ("memory", "answer", "verdict", "reason"),
    [
        ("Always show amounts in euros.", EUROS, "follows", "shows amounts in EUR"),
        ("Beträge immer in Euro angeben.", EUROS, "follows", "shows amounts in EUR"),
        (
            "Amounts are US dollars: never present them as euros.",
            DOLLARS_M,
            "follows",
            "shows amounts in USD",
        ),
        (
            "Antworte immer auf Deutsch, auch wenn er auf Englisch fragt.",
            DU,
            "follows",
            "is written in German",
        ),
        ("所有回答都用中文。", JIANTI, "follows", "is written in Chinese"),
        ("Indent Python with tabs, never spaces.", TABS, "follows", "indents with tabs"),
        (
            "Use polars (`import polars as pl`) for dataframe code; do not use pandas.",
            EAGER,
            "follows",
            "imports polars",
        ),
        # Code the memory names, which the answer's code has.
        (
            "Make HTTP calls with `AsyncClient` from httpx, never with requests.",
            f"{F}python\nimport httpx\n\nasync def f():\n    async with httpx.AsyncClient() as c:\n"
            f"        return await c.get('/x')\n{F}",
            "follows",
            "imports httpx",
        ),
    ],
)
def test_an_ask_the_checks_test_whole_is_still_decided(
    memory: str, answer: str, verdict: str, reason: str
) -> None:
    found = check_memory(_record(memory), answer)
    assert found is not None and (found.verdict, found.reason) == (verdict, reason)


def test_a_breach_is_found_whatever_else_the_memory_asks() -> None:
    # "$0.4M" under "€ M with one decimal": the currency alone is broken.
    found = check_memory(_record("Show amounts in € M with one decimal"), DOLLARS_M)
    assert found is not None and found.verdict == "contradicts"
    assert found.reason == "shows amounts in USD, not EUR"
    pandas = f"{F}python\nimport pandas as pd\n{F}"
    found = check_memory(_record("Use polars lazy frames, never pandas."), pandas)
    assert found is not None and (found.verdict, found.reason) == ("contradicts", "imports pandas")


def test_code_named_in_a_ban_is_not_kept_by_using_it() -> None:
    memory = _record("Use polars for dataframes (not `read_csv`).")
    assert check_memory(memory, EAGER) is None


@pytest.mark.parametrize(
    ("memory", "answer"),
    [
        # An ask that holds only somewhere is not broken elsewhere.
        ("Show amounts in euros for the German subsidiary.", DOLLARS_M),
        ("Indent with tabs in Makefiles.", TWO_SPACES),
        ("Never use emojis in commit messages.", "Yes 🎉 the deploy went through."),
        ("Use type hints for public functions.", f"{F}python\ndef _sq(v):\n    return v * v\n{F}"),
        ("Write SQL keywords in uppercase in migration files.", f"{F}sql\nselect 1;\n{F}"),
    ],
)
def test_a_narrowed_style_ask_is_never_contradicted_exactly(memory: str, answer: str) -> None:
    assert check_memory(_record(memory), answer) is None


def test_a_short_answer_with_padding_is_left_to_the_model() -> None:
    short = "keep answers short. skip introductions, recaps and lists of alternatives unless asked."
    rules = rules_of(short)
    assert rules.pure and rules.styles == {"short": "preferred"}
    plain = "Use `rename` with a dict from old to new names."
    assert check_style("short", "preferred", plain, read_answer(plain)) == (
        "follows",
        "is 9 words long",
    )
    for padded in (
        "Great question! Use `rename` with a dict from old to new names.",
        "Use `rename` with a dict. You can also pass a function instead.",
        "Use `rename`.\n\n- a dict\n- a function",
        "Use `rename` with a dict. In short: a dict maps old names to new.",
        "Gute Frage! Nimm `rename` mit einem Dictionary.",
    ):
        assert check_style("short", "preferred", padded, read_answer(padded)) is None, padded


def test_untested_words() -> None:
    assert untested_word("show amounts in € m with one decimal", [(16, 17)]) == "m"
    assert untested_word("indent with 4 spaces") == "4"
    assert untested_word("antworte auf deutsch per sie", [(12, 19)]) == "per sie"
    assert untested_word("always show the amounts", ()) is None
    assert untested_word("用户希望用中文回答", [(5, 7)]) is None
    assert untested_word("所有回答都用简体", ()) == "简体"
    # What follows a reason explains the ask.
    assert untested_word("answers in english because the team shares them", [(11, 18)]) is None
    assert is_aside(" the team's dashboards embed plotly figures", ":")
    assert is_aside(" zu langsam für unsere dateien", ":")
    assert not is_aside(" at most three bullet points", ":")
    assert not is_aside(" per sie", ",")


_KNOWN = {*names_to_codes(), *surface_names(LIBRARIES)}


@settings(max_examples=150, deadline=None)
@given(
    word=st.from_regex(r"[a-z]{4,10}", fullmatch=True).filter(
        lambda w: w not in _KNOWN and untested_word(w) is not None
    ),
    where=st.sampled_from(
        [
            "Show amounts in euros {w}.",
            "Show amounts in euros, {w}.",
            "Answer in German {w}.",
            "Antworte auf Deutsch, {w}.",
            "Use polars {w} for dataframe code, never pandas.",
            "Indent Python with tabs ({w}).",
        ]
    ),
)
def test_any_word_the_checks_do_not_know_keeps_them_from_saying_follows(
    word: str, where: str
) -> None:
    """Whatever a capable model adds beside a tested ask, the exact checks never call it
    followed: the word may be a unit, an API, a register."""
    memory = _record(where.format(w=word))
    answers = [EUROS, DU, EAGER, TABS]
    for answer in answers:
        found = check_memory(memory, answer)
        assert found is None or found.verdict != "follows", (memory.body, answer, found)
