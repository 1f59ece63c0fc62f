"""The follow-up check: does an answer follow the memories injected into its turn?

The exact part (SPEC §14): what an answer's code uses (:mod:`.answer`), the libraries
known by name (:mod:`.libraries`), the language of its prose (:mod:`.language`), what a
memory asks that can be tested (:mod:`.rules`) and the verdicts (:mod:`.checks`). What
these leave undecided goes to the side model (:mod:`ipymemory.sidequery.followed`); the
turn puts the two together (:mod:`ipymemory.turn.followed`).
"""

from __future__ import annotations

from .checks import CHECKED_TYPES, Verdict, as_verdict, check_answer, check_memory, checked

__all__ = ["CHECKED_TYPES", "Verdict", "as_verdict", "check_answer", "check_memory", "checked"]
