"""Whether the night did what it planned, and its exit status.

A night is *complete* only when every target executed inputs, the property suite
collected every selected test and ran each with at least one example, each planned
phase did its work, and the plan itself found the budget large enough. Anything
less is *incomplete*: :func:`incomplete_reasons` names every reason, the report
opens with them, and the exit status is :data:`~pcfuzz.errors.EXIT_INCOMPLETE`
unless a finding (a new crash, a failing property test) makes it
:data:`~pcfuzz.errors.EXIT_FINDING`: a finding is news whatever else happened.
"""

from __future__ import annotations

from typing import Any

from pcfuzz.errors import EXIT_CLEAN, EXIT_FINDING, EXIT_INCOMPLETE

__all__ = ["exit_status", "has_finding", "incomplete_reasons"]


def incomplete_reasons(summary: dict[str, Any], shortfalls: list[str]) -> list[str]:
    """Every way the night did less than it planned (empty: it was complete)."""
    reasons = [f"budget too small: {s}" for s in shortfalls]
    for row in summary.get("targets", []):
        if not row.get("executions"):
            why = row.get("error") or "no reason recorded"
            reasons.append(f"target {row['name']}: 0 executions ({why})")
    props = summary.get("properties") or {}
    if props.get("mode", "off") != "off":
        reasons += _property_reasons(props)
    coverage = summary.get("coverage") or {}
    if coverage.get("planned") and coverage.get("line_percent") is None:
        reasons.append(f"coverage: planned but not measured ({coverage.get('status')})")
    mutants = summary.get("mutants") or {}
    if mutants.get("planned_sample"):
        ran, planned = int(mutants.get("total") or 0), int(mutants["planned_sample"])
        if ran < planned:
            reasons.append(f"mutants: {ran} of the {planned} planned mutants ran "
                           f"({mutants.get('status')})")
    for row in summary.get("targets", []):
        detail = str((row.get("minimize") or {}).get("detail") or "")
        if detail.startswith("out of time") or detail.startswith("cut"):
            reasons.append(f"minimization of {row['name']}: {detail}")
    return reasons


def _property_reasons(props: dict[str, Any]) -> list[str]:
    reasons = []
    if props.get("database_lost"):
        reasons.append(f"example database lost: {props['database_lost']} (what the run found "
                       "is in the local database only)")
    code = props.get("exit_code")
    selected = props.get("selected")
    if code == 5 or (selected == 0 and not props.get("tests")):
        reasons.append(
            "properties: pytest selected no test (exit 5) from "
            f"{props.get('paths') or 'the given paths'}: hypothesis tests (@given, state "
            "machines) and pcfuzz_conformance tests are what the nightly runs")
        return reasons
    if code is not None and code < 0:
        reasons.append(f"properties: pytest was stopped by a signal ({-code}) at the end "
                       "of its share")
    elif code not in (0, 1):
        reasons.append(f"properties: pytest exited {code} (a usage or internal error; see "
                       "logs/properties.log)")
    if selected is not None and props.get("tests", 0) < selected:
        reasons.append(f"properties: {props.get('tests', 0)} of the {selected} selected tests "
                       "reported a result")
    skipped = props.get("skipped_tests") or []
    if skipped:
        why = skipped[0].get("reason", "")
        reasons.append(f"properties: {len(skipped)} test(s) ran no example: "
                       f"{_names([t['name'] for t in skipped])} ({why})")
    silent = [row["name"] for row in props.get("table") or []
              if row.get("property") and row.get("result") == "passed" and not row.get("examples")]
    if silent:
        reasons.append(f"properties: {len(silent)} property test(s) passed without running an "
                       f"example: {_names(silent)} (a pass that tried nothing proves nothing)")
    unmatched = props.get("unmatched") or []
    if unmatched:
        reasons.append(f"properties: {len(unmatched)} test result(s) could not be matched to "
                       f"the record of their run, so their examples are unknown: "
                       f"{_names(unmatched)}")
    return reasons


def _names(names: list[str]) -> str:
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    return ", ".join(names[:5]) + more


def has_finding(summary: dict[str, Any]) -> bool:
    """A new crash, a failing or erroring property test, or a target that failed."""
    props = summary.get("properties") or {}
    return (int(summary.get("new_crashes") or 0) > 0 or int(props.get("failed") or 0) > 0
            or int(props.get("errors") or 0) > 0)


def exit_status(summary: dict[str, Any], reasons: list[str]) -> int:
    if has_finding(summary):
        return EXIT_FINDING
    return EXIT_INCOMPLETE if reasons else EXIT_CLEAN
