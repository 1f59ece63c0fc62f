"""The screening rule table (issue 39 item 3): every rule has an id, a row in
``screen/rules.yaml`` and examples -- each one that "fires" makes the rule fire, each one
that "passes" does not -- checked here by what applies the rule."""

from __future__ import annotations

from typing import Any

import pytest
from screen_support import reading_turn

from ipymemory import MemoryRecord
from ipymemory._secrets import find_secrets
from ipymemory.screen import screen_batch
from ipymemory.screen.agent import AGENT_RULES, agent_findings
from ipymemory.screen.instructs import DANGEROUS, HOW_TO_WORK, instruction_reasons
from ipymemory.screen.rules import Finding, finding_of_reason, findings_from_json, rule, rules


def _fired(family: str, rule_id: str, example: Any) -> bool:
    if family == "credential":
        return bool(find_secrets(example))
    if family == "instruction":
        return rule_id.removeprefix("instruct.") in instruction_reasons(example)
    if family == "agent":
        return rule_id in {f.rule_id for f in agent_findings(example)}
    if family == "origin":
        record = MemoryRecord(
            name="item", description="an item", body=example["item"], type="project"
        )
        files = [tuple(f) for f in example.get("files", ())]
        evidence = {"item": example["evidence"]} if example.get("evidence") else None
        (screening,) = screen_batch(
            [record], reading_turn(example["user"], *files), evidence=evidence
        )
        return rule_id in {f.rule_id for f in screening.findings()}
    assert family == "proposal"
    return finding_of_reason(example).rule_id == rule_id


_CASES = [
    pytest.param(r.family, r.id, example, kind, id=f"{r.id}-{kind}-{i}")
    for r in rules().values()
    for kind, examples in (("fires", r.fires), ("passes", r.passes))
    for i, example in enumerate(examples)
]


@pytest.mark.parametrize(("family", "rule_id", "example", "kind"), _CASES)
def test_each_rule_fires_on_its_examples_and_passes_the_others(
    family: str, rule_id: str, example: Any, kind: str
) -> None:
    assert _fired(family, rule_id, example) is (kind == "fires"), example


def test_every_rule_has_examples_both_ways_and_the_table_names_every_kind() -> None:
    table = rules()
    assert all(r.fires and r.passes for r in table.values()), [
        r.id for r in table.values() if not (r.fires and r.passes)
    ]
    # Every instruction kind, every agent rule has its row.
    assert {f"instruct.{k}" for k in DANGEROUS | HOW_TO_WORK} <= set(table)
    assert set(AGENT_RULES) <= set(table)
    assert {r.family for r in table.values()} == {
        "credential",
        "instruction",
        "agent",
        "origin",
        "proposal",
    }


def test_a_reason_no_rule_names_is_still_a_finding_of_the_catch_all() -> None:
    assert finding_of_reason("because").rule_id == "screen.other"
    with pytest.raises(KeyError, match="no screening rule 'nope'"):
        rule("nope")


def test_findings_never_hold_a_credential_and_are_bounded() -> None:
    token = "ghp_" + "a1B2" * 9
    finding = Finding("credential", f"the token {token} " + "x" * 500)
    assert token not in finding.evidence
    assert len(finding.evidence) <= 160


def test_findings_read_back_keep_what_is_well_formed() -> None:
    read = findings_from_json(
        [{"rule": "agent.secret", "evidence": "api key"}, {"rule": "made-up"}, "junk", {"x": 1}]
    )
    assert read == (Finding("agent.secret", "api key"), Finding("screen.other", ""))
    assert findings_from_json({"not": "a list"}) == ()
