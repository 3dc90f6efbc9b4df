"""Every rule that makes a contract withhold or reject a call is a kit scenario
(issue 22, item 1).

``strategies/conformance_rules.py`` maps each rule of each contract to the mutation
that exercises it. Here: the table names only mutations the providers have, a safety
rule sits in a family the kit runs by default, every mutation is some rule's scenario,
and each rule's scenarios really make this project's own parser withhold or reject
(with ``hypothesis.event`` naming what the parser said, so the statistics show the
interesting case is reached).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, settings

from pcfuzz.contracts import anthropic_messages as am_contract
from pcfuzz.contracts import gemini_interactions as gi_contract
from pcfuzz.contracts import openai_chat as oc_contract
from pcfuzz.contracts import openai_responses as or_contract
from pcfuzz.contracts.errors import ContractError
from pcfuzz.strategies import anthropic_messages as am
from pcfuzz.strategies import conformance as kit
from pcfuzz.strategies import gemini_interactions as gi
from pcfuzz.strategies import openai_chat as oc
from pcfuzz.strategies import openai_responses as orsp
from pcfuzz.strategies.conformance_rules import OUTCOMES, RULES, TOLERATED, Rule, rules_of

LABELS: dict[str, dict[str, tuple[str, str]]] = {
    "openai-responses": orsp.MUTATION_LABELS,
    "anthropic-messages": am.MUTATION_LABELS,
    "gemini-interactions": gi.MUTATION_LABELS,
    "openai-chat": oc.MUTATION_LABELS,
}
PARSERS: dict[str, Any] = {
    "openai-responses": or_contract.parse_events,
    "anthropic-messages": am_contract.parse_events,
    "gemini-interactions": gi_contract.parse_events,
    "openai-chat": oc_contract.parse_events,
}


def table_problems(rows: tuple[Rule, ...] | list[Rule]) -> list[str]:
    """Why a rules table does not make every rule a kit scenario (empty: it does)."""
    problems: list[str] = []
    for row in rows:
        where = f"{row.contract} {row.mutation!r} ({row.rule[:40]}...)"
        labels = LABELS.get(row.contract)
        if labels is None:
            problems.append(f"{where}: unknown contract")
            continue
        if row.mutation not in labels:
            problems.append(f"{where}: no such mutation in MUTATION_LABELS")
            continue
        if labels[row.mutation] != (row.label, row.family):
            problems.append(f"{where}: the table says {(row.label, row.family)}, "
                            f"MUTATION_LABELS says {labels[row.mutation]}")
        if row.label == "safety" and (
                row.family not in kit.families(row.contract)
                or row.mutation not in kit.family_mutations(row.contract, row.family)):
            problems.append(f"{where}: a safety rule outside the kit's default families")
        if row.outcome not in OUTCOMES or not row.rule or not row.reference:
            problems.append(f"{where}: outcome, rule text and reference are required")
    for contract, labels in LABELS.items():
        covered = {r.mutation for r in rows if r.contract == contract}
        for name in sorted(set(labels) - covered - {m for c, m in TOLERATED if c == contract}):
            problems.append(f"{contract} {name!r}: a mutation that is no rule's scenario")
    return problems


def test_every_rule_is_a_scenario_the_kit_runs() -> None:
    assert table_problems(RULES) == []


@pytest.mark.parametrize(("broken", "problem"), [
    (lambda r: replace(r, mutation="no_such_mutation"), "no such mutation"),
    (lambda r: replace(r, family="drift"), "MUTATION_LABELS says"),
    (lambda r: replace(r, label="strictness"), "MUTATION_LABELS says"),
    (lambda r: replace(r, outcome="maybe"), "outcome"),
])
def test_the_coverage_check_catches_a_rule_without_its_scenario(broken: Any,
                                                                problem: str) -> None:
    rows = list(RULES)
    rows[0] = broken(rows[0])
    assert any(problem in p for p in table_problems(rows)), table_problems(rows)


def test_the_coverage_check_catches_a_safety_rule_the_kit_does_not_run_by_default(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A safety mutation labelled strictness in its provider's table would only run
    # under --strict: the table's safety row then fails.
    labels = dict(oc.MUTATION_LABELS, missing_call_id=("strictness", "identity"))
    monkeypatch.setattr(oc, "MUTATION_LABELS", labels)
    monkeypatch.setitem(LABELS, "openai-chat", labels)
    monkeypatch.setitem(kit._LABEL_TABLES, "openai-chat", labels)
    row = next(r for r in rules_of("openai-chat") if r.mutation == "missing_call_id")
    assert any("outside the kit's default families" in p
               for p in table_problems([replace(row, label="strictness"), row]))


def test_the_coverage_check_catches_a_mutation_in_no_row() -> None:
    rows = [r for r in RULES if (r.contract, r.mutation) != ("openai-chat", "choice_index")]
    assert "openai-chat 'choice_index': a mutation that is no rule's scenario" in (
        table_problems(rows))


def test_the_rules_named_in_the_issue_are_safety_rows_of_every_contract() -> None:
    # Issue 22: missing, empty or repeated call id, empty or missing name, non-object,
    # non-finite, duplicate-key, non-strict arguments: one mutation name, four contracts.
    for mutation in ("missing_call_id", "empty_call_id", "shared_call_id", "missing_name",
                     "empty_name", "missing_arguments", "non_object_arguments",
                     "non_finite_arguments", "duplicate_key_arguments",
                     "non_strict_arguments"):
        contracts = {r.contract for r in RULES if r.mutation == mutation and r.label == "safety"}
        assert contracts == set(kit.CONTRACTS), mutation
    assert [r.label for r in RULES if r.mutation == "choice_index"] == ["safety"]
    assert len({(r.contract, r.rule) for r in RULES}) == len(RULES)


def test_the_docs_list_every_rule_under_its_contract() -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / "conformance.md").read_text(
        encoding="utf-8")
    sections = {chunk.split("`", 1)[0]: chunk for chunk in text.split("#### `")[1:]}
    for contract in kit.CONTRACTS:
        rows = [line for line in sections[contract].splitlines()
                if line.startswith("| `")]
        assert rows == [f"| `{r.mutation}` | {r.family} | {r.label} | {r.rule} | {r.outcome} |"
                        for r in rules_of(contract)], contract


# ------------------------------------------------------------------ each rule, exercised


def _ids(rows: tuple[Rule, ...]) -> list[str]:
    return [f"{r.contract}:{r.mutation}" for r in rows]


@pytest.mark.parametrize("row", RULES, ids=_ids(RULES))
def test_each_rules_scenarios_make_this_projects_parser_do_what_the_row_says(row: Rule) -> None:
    # One run per rule (the profile's examples each); the parser reads the kit's
    # revision, its default.
    parse = PARSERS[row.contract]

    @settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
    @given(kit.mutation_scenarios(row.contract, row.mutation))
    def check(scenario: kit.Scenario) -> None:
        assume(scenario.mutation == row.mutation)  # Responses: "none" where n/a
        assert scenario.expectation(strict=True) in ("nothing", "nothing_or_calls")
        if row.label == "safety":
            assert scenario.expectation(strict=False) is not None
        try:
            turn = parse(json.loads(json.dumps(scenario.events)))
        except ContractError as exc:
            event(f"{row.mutation}: {type(exc).__name__}: {str(exc)[:50]}")
            assert row.outcome in ("rejected", "nothing", "nothing_or_calls"), exc
            return
        calls = [{"call_id": c.call_id, "name": c.name, "arguments": c.arguments}
                 for c in turn.calls]
        recovery = getattr(turn, "recovery_calls", ())
        event(f"{row.mutation}: accepted, {len(calls)} released, {len(recovery)} recovery")
        if row.outcome == "nothing_or_calls" and calls:
            assert kit.calls_equal(calls, scenario.calls)
            return
        assert row.outcome in ("withheld", "nothing", "nothing_or_calls"), calls
        assert calls == []

    check()
