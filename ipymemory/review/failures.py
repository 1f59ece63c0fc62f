"""A memory failure as the session reports it: the text shown, and the typed error."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["MemoryFailure"]


@dataclass(frozen=True)
class MemoryFailure:
    """One memory failure of a turn (``TurnResult.memory_errors``) or of keeping a batch
    on disk (``PendingFiles.last_failure``).

    ``message`` is the fixed text shown (a turn's ``last_error``, e.g. "Memory extraction
    failed"); ``cause`` the exact cause in words, credentials redacted; ``error`` the
    typed error it came from, so callers decide by type, never by text (None when none
    was raised: a fallback selection, items screening dropped). ``error`` is left out
    of the repr: its text is not redacted.
    """

    message: str
    cause: str
    error: Exception | None = field(default=None, compare=False, repr=False)
