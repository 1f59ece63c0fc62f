"""``today_text``: the date every side-query input carries (SPEC §9)."""

from __future__ import annotations

import datetime

import pytest

from ipymemory._dates import today_text


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        (datetime.date(2026, 12, 4), "2026-12-04 (Friday)"),
        (datetime.date(2026, 12, 6), "2026-12-06 (Sunday)"),
        (datetime.date(2024, 2, 29), "2024-02-29 (Thursday)"),
        (datetime.datetime(2026, 12, 7, 23, 59), "2026-12-07 (Monday)"),  # the day only
    ],
)
def test_today_text_names_the_day(day: datetime.date, expected: str) -> None:
    assert today_text(day) == expected


def test_today_text_defaults_to_the_local_date() -> None:
    before = datetime.date.today()
    text = today_text()
    after = datetime.date.today()
    assert text in {today_text(before), today_text(after)}
