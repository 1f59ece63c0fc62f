"""Today's date as the side-queries see it (SPEC §9): ``"2026-12-04 (Friday)"``.

A bottom module (standard library only), so every layer can name the day the same way.
The kernel's local date, not UTC: "due Friday" means the user's Friday.
"""

from __future__ import annotations

import datetime as _dt

__all__ = ["today_text"]

# English names whatever the locale (strftime's %A follows it), so the text is stable.
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def today_text(day: _dt.date | None = None) -> str:
    """``day`` (default: the local date now) as ``"YYYY-MM-DD (Weekday)"``."""
    when = _dt.date.today() if day is None else day
    if isinstance(when, _dt.datetime):  # a datetime is a date too; keep only its day
        when = when.date()
    return f"{when.isoformat()} ({_WEEKDAYS[when.weekday()]})"
