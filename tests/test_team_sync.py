"""A team through git: a bare repository and three clones doing random work (add,
forget, consolidate, commit, fetch + merge, pull --rebase, push with retry); after
everyone syncs, every clone holds the same set, equal to the set algebra of what was
added and removed, check is clean and no conflict marker appears.

The CI run is small (see ``EXAMPLES``); ``benchmarks/team_sync.py`` runs the same
property 200+ times."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from team_support import OPERATIONS, Op, run_team

# Each example runs real git in three clones (~1-3 s): a small CI budget.
EXAMPLES = 15

operations = st.lists(
    st.tuples(st.integers(0, 2), st.sampled_from(OPERATIONS), st.integers(0, 1 << 16)),
    min_size=4,
    max_size=16,
)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(operations)
def test_team_converges_to_the_set_algebra(ops: list[Op]) -> None:
    with tempfile.TemporaryDirectory() as root:
        run_team(Path(root), ops)


def test_a_clash_between_clones_converges(tmp_path: Path) -> None:
    """Two clones add the same name (the second push meets the clash: stop, stage,
    commit, push), a third consolidates meanwhile and rebases onto it."""
    ops: list[Op] = [
        (0, "add", 0),
        (1, "add", 0),
        (2, "add", 1),
        (2, "add", 2),
        (0, "push", 0),
        (1, "push", 0),
        (2, "consolidate", 0),
        (2, "rebase", 0),
    ]
    team, ledger = run_team(tmp_path, ops)
    assert len(ledger.expected) == 3
    for clone in team:
        names = sorted(clone.names())
        assert names[:2] == ["db", "tabs"]
        assert re.fullmatch(r"tabs-[0-9a-f]{8}", names[2])
