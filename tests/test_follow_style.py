"""Style asks checked exactly (SPEC §14): emojis, type hints, indentation, SQL keyword
case, short answers, currencies -- and what they leave alone."""

from __future__ import annotations

import pytest

from ipymemory import MemoryRecord
from ipymemory.follow import check_memory
from ipymemory.follow.answer import read_answer
from ipymemory.follow.rules import rules_of
from ipymemory.follow.style import check_style, find_emoji

F = "```"


def _outcome(key: str, polarity: str, answer: str) -> tuple[str, str] | None:
    return check_style(key, polarity, answer, read_answer(answer))


def test_emoji() -> None:
    assert find_emoji("Done 🚀") == "🚀" and find_emoji("fix ✅") == "✅"
    assert find_emoji("✓ passed, ✗ failed • item") is None  # text symbols
    assert _outcome("emoji", "banned", f"{F}\nfix: retry ✅\n{F}") == (
        "contradicts",
        "uses an emoji (✅)",
    )
    assert _outcome("emoji", "banned", "Plain text.") == ("follows", "uses no emoji")


HINTED = f"""{F}python
class Repo:
    def __init__(self, db: Db) -> None:
        self.db = db

    def load(self, key: str, *, fresh: bool = False) -> Row:
        return self.db.get(key)
{F}"""


def test_type_hints() -> None:
    assert _outcome("type-hints", "preferred", HINTED) == (
        "follows",
        "annotates every function it defines",
    )
    bare = f"{F}python\nasync def fetch(client, key: str) -> str:\n    return key\n{F}"
    assert _outcome("type-hints", "preferred", bare) == (
        "contradicts",
        "leaves `client` of `fetch` without a type",
    )
    no_return = f"{F}python\ndef f(x: int):\n    return x\n{F}"
    assert _outcome("type-hints", "preferred", no_return) == (
        "contradicts",
        "leaves the return of `f` without a type",
    )
    assert _outcome("type-hints", "preferred", f"{F}python\nx = load()\n{F}") == (
        "untouched",
        "defines no function",
    )
    assert _outcome("type-hints", "preferred", f"{F}python\ndef f(:\n{F}") is None


def test_indentation() -> None:
    tabs = f"{F}python\ndef f() -> int:\n\treturn 1\n{F}"
    spaces = f"{F}python\ndef f() -> int:\n    return 1\n{F}"
    assert _outcome("tabs", "preferred", tabs) == ("follows", "indents with tabs")
    assert _outcome("tabs", "preferred", spaces) == ("contradicts", "indents with spaces")
    assert _outcome("spaces", "banned", spaces) == ("contradicts", "indents with spaces")
    assert _outcome("tabs", "preferred", f"{F}python\nx = 1\n{F}")[0] == "untouched"  # type: ignore[index]


def test_sql_keyword_case() -> None:
    upper = (
        f"{F}sql\nSELECT region, SUM(x) AS total FROM t\n"
        f"WHERE note = 'select me' GROUP BY region;\n{F}"
    )
    lower = f"{F}sql\nselect region from t -- SELECT\n{F}"
    in_python = f'{F}python\ncon.execute("""\n    select * from runs where job = ?\n""")\n{F}'
    assert _outcome("sql-upper", "preferred", upper) == (
        "follows",
        "writes SQL keywords in uppercase",
    )
    assert _outcome("sql-upper", "preferred", lower) == (
        "contradicts",
        "writes SQL keywords in lowercase (select)",
    )
    assert _outcome("sql-upper", "preferred", in_python)[0] == "contradicts"  # type: ignore[index]
    assert _outcome("sql-upper", "preferred", "No SQL here.") == ("untouched", "has no SQL")


def test_short_is_only_ever_found_kept() -> None:
    assert _outcome("short", "preferred", "Use `df.unique()`.") == ("follows", "is 2 words long")
    long = "## Heading\n" + "word " * 30
    assert _outcome("short", "preferred", long) is None  # headed: a judgment
    assert _outcome("short", "preferred", "word " * 200) is None  # long: still a judgment


def test_currency() -> None:
    assert _outcome("currency-eur", "banned", "Sales were €4.2M.") == (
        "contradicts",
        "shows an amount in EUR (€)",
    )
    assert _outcome("currency-eur", "banned", "These are dollars, not euros: $4.2M.") == (
        "follows",
        "shows no amount in EUR",
    )
    assert _outcome("currency-usd", "preferred", 'labels={"x": "Umsatz (€)"}') == (
        "contradicts",
        "shows amounts in EUR, not USD",
    )
    assert _outcome("currency-usd", "preferred", "No money here.") == (
        "untouched",
        "shows no amount",
    )


@pytest.mark.parametrize(
    ("text", "styles"),
    [
        ("No emojis in answers or code comments.", {"emoji": "banned"}),
        (
            "The user finds emojis distracting: never put emojis in answers or commits.",
            {"emoji": "banned"},
        ),
        # Only somewhere (issue 44): a commit, a Makefile, a subsidiary -- a judgment.
        ("Never put emojis in commits.", {}),
        ("Indent with tabs in Makefiles.", {}),
        ("Show amounts in euros for the German subsidiary.", {}),
        ("Use type hints for public functions.", {}),
        ("Use tabs for indentation.", {"tabs": "preferred"}),  # the ask's own words
        ("Keine Emojis in Antworten.", {"emoji": "banned"}),
        ("Every function you write gets full type hints.", {"type-hints": "preferred"}),
        (
            "User indents Python code with tabs, not spaces.",
            {"tabs": "preferred", "spaces": "banned"},
        ),
        ("Write SQL keywords in uppercase.", {"sql-upper": "preferred"}),
        ("Keep answers short. Skip introductions and recaps.", {"short": "preferred"}),
        (
            "Amounts are US dollars: never present them as euros.",
            {"currency-usd": "preferred", "currency-eur": "banned"},
        ),
        # Not style asks we check.
        ("Use short variable names.", {}),  # names, not answers
        ("Tabs in the spreadsheet hold one region each.", {}),  # no indentation
        ("Uppercase the column names.", {}),  # not SQL keywords
    ],
)
def test_style_asks_in_memories(text: str, styles: dict[str, str]) -> None:
    assert dict(rules_of(text).styles) == styles


def test_the_query_asking_for_the_exception_leaves_it_to_the_model() -> None:
    dollars = MemoryRecord(
        name="amounts-in-dollars",
        type="feedback",
        description="Amounts are US dollars: never present them as euros",
        body="The amounts in the sales data are in US dollars.",
    )
    answer = "At 0.92, $4.2M is about €3.86M."
    assert check_memory(dollars, answer) is not None
    assert check_memory(dollars, answer, "Convert the totals to euros") is None
