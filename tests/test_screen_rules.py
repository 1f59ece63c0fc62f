"""The screening rule table (issue 39 item 3): every rule has an id, a row in
``screen/rules.yaml`` and examples -- each one that "fires" makes the rule fire, each one
that "passes" does not -- checked here by what applies the rule."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
from screen_support import reading_turn

import ipymemory
from ipymemory import MemoryRecord
from ipymemory._secrets import find_secrets
from ipymemory.screen import Origin, Verdict, screen_batch, screen_record
from ipymemory.screen.agent import AGENT_RULES, agent_findings
from ipymemory.screen.instructs import (
    DANGEROUS,
    HOW_TO_WORK,
    instruction_exemptions,
    instruction_reasons,
)
from ipymemory.screen.rules import Finding, finding_of_reason, findings_from_json, rule, rules


def _fired(family: str, rule_id: str, example: Any) -> bool:
    if family == "credential":
        return bool(find_secrets(example))
    if family == "instruction" and rule(rule_id).action == "allow":
        exempted = [e for e in instruction_exemptions(example) if e.rule_id == rule_id]
        # What it allows is recorded on a committed item where the kind would have held it.
        record = MemoryRecord(name="item", description="an item", body=example, type="feedback")
        for origin in (Origin.USER, Origin.ASSISTANT):
            screening = screen_record(record, origin)
            recorded = rule_id in {f.rule_id for f in screening.findings()}
            would_hold = any(e.kind in DANGEROUS or origin is Origin.ASSISTANT for e in exempted)
            assert recorded is (would_hold and screening.verdict is Verdict.COMMIT), example
        return bool(exempted)
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
        answer = example.get("answer", "Done.")
        # What the model's translation check said the item states (issue 39).
        confirmed = {"item": example["confirmed"]} if example.get("confirmed") else None
        (screening,) = screen_batch(
            [record],
            reading_turn(example["user"], *files, answer=answer),
            evidence=evidence,
            confirmed=confirmed,
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


# Rule ids are strings such as "agent.secret", "evidence.rule-from-tool": a family word,
# a dot, a name. Where the code builds one ("instruct." + a kind) the test above checks
# every kind; every literal one must have its row, so the next rule cannot forget it
# (and every row has examples that fire through the code: the test above).
_RULE_ID = re.compile(
    r"(?:agent|origin|evidence|instruct|instructs|proposal|sync|screen)\.[a-z][a-z-]*"
)


def _id_strings(path: Path) -> set[str]:
    """The string literals of a module that are written as rule ids."""
    return {
        node.value
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _RULE_ID.fullmatch(node.value)
    }


def test_every_rule_id_the_screening_code_names_has_its_row() -> None:
    package = Path(ipymemory.__file__).parent
    named: dict[str, str] = {}
    for path in sorted(package.rglob("*.py")):
        text = path.read_text("utf-8")
        if "screen" not in path.parts and "Finding(" not in text and "rule(" not in text:
            continue  # outside screen/, only modules that make findings name rules
        for rule_id in _id_strings(path):
            named.setdefault(rule_id, str(path.relative_to(package)))
    missing = {rid: where for rid, where in named.items() if rid not in rules()}
    assert not missing, f"rule ids without a row in screen/rules.yaml: {missing}"
    # The scan finds the ids the code names, deny and allow rules alike.
    assert {
        "origin.tool",
        "agent.secret",
        "evidence.rule-from-tool",
        "instructs.restraint",
        "instructs.borrowed-word",
        "origin.detail-in-no-tool-output",
        "evidence.user-rule-translated",
    } <= set(named)


def test_the_id_scan_finds_an_id_a_module_names(tmp_path: Path) -> None:
    # A new constant in a module is found, so the test above fails for a rule without
    # its row.
    path = tmp_path / "m.py"
    path.write_text(
        "NEW_RULE = 'evidence.brand-new-rule'\nOTHER = 'not an id'\nPATH = 'config.yaml'\n",
        "utf-8",
    )
    assert _id_strings(path) == {"evidence.brand-new-rule"}
    assert "evidence.brand-new-rule" not in rules()


def test_a_committed_item_names_the_allow_rule_it_needed_and_only_that() -> None:
    # A restraint keeps "without telling the user" from being concealment, which would
    # hold the user's own rule whatever its origin: the committed item names it.
    restraint = MemoryRecord(
        name="configs",
        description="Config changes",
        body="Never change config files without telling the user.",
        type="feedback",
    )
    user = screen_record(restraint, Origin.USER)
    assert user.verdict is Verdict.COMMIT
    assert [f.rule_id for f in user.findings()] == ["instructs.restraint"]
    # A borrowed "output" would hold only what the user did not say: the user's item
    # needed no rule; the answer's commits by it, and says so.
    borrowed = MemoryRecord(
        name="output-dibersihkan",
        description="Output notebook dibersihkan",
        body="Notebook tidak di-commit dengan output; output dibersihkan dulu.",
        type="project",
    )
    assert screen_record(borrowed, Origin.USER).findings() == ()
    answer = screen_record(borrowed, Origin.ASSISTANT)
    assert answer.verdict is Verdict.COMMIT
    assert answer.findings() == (Finding("instructs.borrowed-word", "output"),)
    # A held item's findings are what holds it, not what an exemption let pass.
    held = screen_record(restraint, Origin.TOOL)
    assert held.verdict is Verdict.HOLD
    assert "instructs.restraint" not in {f.rule_id for f in held.findings()}
