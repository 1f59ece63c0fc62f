from __future__ import annotations

import pytest

from ipymemory import MemoryConfigError, SessionConfig, Usage
from ipymemory.model import estimate_cost
from ipymemory.model.usage import ROLES
from ipymemory.turn.usage import CallUsage, TurnUsage, UsageLedger


def test_cost_estimate_by_model_family() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert estimate_cost("claude-sonnet-4-5", usage) == pytest.approx(18.0)
    assert estimate_cost(
        "claude-haiku-x", Usage(cache_read_input_tokens=1_000_000)
    ) == pytest.approx(0.1)
    assert estimate_cost(
        "claude-sonnet-x", Usage(cache_creation_input_tokens=1_000_000)
    ) == pytest.approx(3.75)
    assert estimate_cost("some-other-model", usage) is None


def test_turn_usage_splits_main_from_memory_and_ledger_sums() -> None:
    turn = TurnUsage(
        (
            CallUsage("selector", "claude-haiku", Usage(10, 1)),
            CallUsage("main", "claude-sonnet", Usage(100, 20)),
            CallUsage("main", "claude-sonnet", Usage(200, 30)),
            CallUsage("extractor", "claude-haiku", Usage(40, 4)),
            CallUsage("summarizer", "claude-haiku", Usage(5, 5)),
        )
    )
    assert turn.main == Usage(300, 50)
    assert turn.memory == Usage(55, 10)
    assert turn.total == Usage(355, 60)
    assert turn.by_role("consolidator") == Usage()
    data = turn.to_json()
    assert data["calls"] == 5 and data["estimated_cost_usd"] == pytest.approx(turn.estimated_cost)
    ledger = UsageLedger()
    ledger.turns.append(turn)
    ledger.add_other([CallUsage("consolidator", "claude-haiku", Usage(7, 7))])
    assert ledger.last_turn is turn
    assert ledger.total.total == Usage(362, 67)
    assert TurnUsage((CallUsage("main", "mystery", Usage(1, 1)),)).estimated_cost is None


@pytest.mark.parametrize(
    "kw",
    [
        {"commit_mode": "sometimes"},
        {"consolidate_threshold": 0},
        {"max_tool_steps": -1},
        {"history_token_budget": True},
        {"max_selected": -1},
        {"system_prompt": "  "},
    ],
)
def test_bad_session_config_is_refused_with_the_field_name(kw: dict[str, object]) -> None:
    # A MemoryConfigError (the package's root) that is still a ValueError.
    with pytest.raises(MemoryConfigError, match=f"SessionConfig.{next(iter(kw))}") as info:
        SessionConfig(**kw)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)


def test_roles_are_one_closed_set() -> None:
    # The names SPEC §3 gives the side-queries, used for usage as for errors.
    assert ROLES == (
        "main",
        "selector",
        "extractor",
        "consolidator",
        "summarizer",
        "checker",
        "screener",
    )
    with pytest.raises(ValueError, match="unknown model-call role 'select'"):
        CallUsage("select", "m", Usage())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown model-call role 'extract'"):
        TurnUsage().by_role("extract")  # type: ignore[arg-type]
