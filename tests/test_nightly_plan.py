"""The nightly's decisions, from injected costs and a made-up clock: never by timing
this machine. What each test pins is a rule of ``pcfuzz/nightly/plan.py``,
``schedule.py`` or ``verdict.py``; the one real-time run is in
``tests/test_pcfuzz_cli.py`` (a generous budget)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.engine.libfuzzer import Sample
from pcfuzz.errors import EXIT_CLEAN, EXIT_FINDING, EXIT_INCOMPLETE
from pcfuzz.nightly.plan import (
    DEFAULT_STARTUP_S,
    MARGIN,
    MIN_EXAMPLES_LONG,
    MIN_FUZZ_S,
    Costs,
    make_plan,
)
from pcfuzz.nightly.schedule import plateaued, second_round, target_share
from pcfuzz.nightly.verdict import exit_status, incomplete_reasons

FUZZERS = [f"fuzz_t{n}" for n in range(12)]
#: What this project's nights measured on a fresh 2-core machine, roughly.
MEASURED = Costs(startup_s={f: 0.9 for f in FUZZERS}, collect_s=14.0, test_s=0.03,
                 example_s=0.01, tests=370, coverage_s=8.0, mutant_s=12.0)


def plan(budget: float, jobs: int = 2, costs: Costs | None = None, **kw: Any) -> Any:
    args: dict[str, Any] = dict(properties=True, coverage=True, mutants=budget >= 300,
                                minimize=True)
    args.update(kw)
    return make_plan(budget_s=budget, jobs=jobs, fuzzers=FUZZERS,
                     costs=costs if costs is not None else MEASURED, **args)


# ------------------------------------------------------------------ the plan


def test_the_readme_budget_gives_every_target_ten_seconds_on_two_cores() -> None:
    p = plan(180)
    assert p.shortfalls == []
    per_target = p.fuzz_core_s / len(FUZZERS)
    assert per_target - max(p.startup_s.values()) >= MIN_FUZZ_S
    # and the property suite its collection plus one example of every test
    assert p.properties_s >= MARGIN * (14.0 + 370 * (0.03 + 0.01))
    assert p.min_examples == 1


def test_the_readme_budget_holds_on_a_machine_never_measured() -> None:
    # a fresh clone plans from the cold defaults, never from a warm machine's figures
    p = plan(180, costs=Costs())
    assert p.shortfalls == [], p.shortfalls
    assert all(s == DEFAULT_STARTUP_S for s in p.startup_s.values())


@pytest.mark.parametrize("costs", [MEASURED, Costs()], ids=["measured", "never-measured"])
def test_a_600_second_night_plans_ten_examples_per_test(costs: Costs) -> None:
    p = plan(600, costs=costs)
    assert p.shortfalls == []
    assert p.min_examples == MIN_EXAMPLES_LONG
    assert p.properties_s >= costs.suite(MIN_EXAMPLES_LONG)
    assert p.mutants_s > 0


def test_a_twenty_second_budget_is_a_shortfall_named_per_phase() -> None:
    p = plan(20)
    text = " ".join(p.shortfalls)
    assert "fuzzing: 12 targets" in text
    assert "properties:" in text


def test_the_plan_never_exceeds_the_budget() -> None:
    for budget in (5, 20, 60, 180, 600, 3000):
        for jobs in (1, 2, 4):
            p = plan(budget, jobs)
            assert p.stage1_s <= p.stage2_s <= budget - p.report_s + 1e-9
            assert p.properties_s <= p.stage1_s + 1e-9
            assert p.mutants_s <= p.stage1_s + 1e-9
            assert p.fuzz_core_s + p.properties_s + p.mutants_s <= jobs * p.stage1_s + 1e-6


def test_the_minimum_of_the_targets_comes_before_the_extra_of_the_suite() -> None:
    # one slot, a budget that holds every minimum but not every share: the property
    # suite gives back what it has above its minimum
    p = plan(300, jobs=1, mutants=False)
    assert p.shortfalls == [], p.shortfalls
    assert p.fuzz_core_s >= sum(p.startup_s.values()) + MIN_FUZZ_S * len(FUZZERS)


def test_more_slots_give_the_targets_more_time() -> None:
    assert plan(180, jobs=4).fuzz_core_s > plan(180, jobs=2).fuzz_core_s > plan(180, 1).fuzz_core_s


@given(budget=st.floats(0, 10_000), jobs=st.integers(1, 16),
       startup=st.floats(0, 60), collect=st.floats(0, 600), example=st.floats(0, 5),
       tests=st.integers(0, 5000))
def test_any_budget_gets_a_plan_whose_shortfalls_are_exactly_the_unmet_minimums(
        budget: float, jobs: int, startup: float, collect: float, example: float,
        tests: int) -> None:
    costs = Costs(startup_s={f: startup for f in FUZZERS}, collect_s=collect,
                  test_s=example, example_s=example, tests=tests)
    p = plan(budget, jobs, costs)
    fuzz_min = sum(p.startup_s.values()) + MIN_FUZZ_S * len(FUZZERS)
    short = any(s.startswith("fuzzing") for s in p.shortfalls)
    event(f"fuzzing shortfall: {short}")
    assert short == (p.fuzz_core_s < fuzz_min)
    props_min = costs.suite(p.min_examples)
    assert any(s.startswith("properties") for s in p.shortfalls) == (p.properties_s < props_min)


def test_costs_come_back_from_their_file_and_bad_figures_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "costs.json"
    MEASURED.save(path)
    assert Costs.load(path) == MEASURED
    path.write_text(json.dumps({"startup_s": {"fuzz_a": "x", "fuzz_b": 1.5, "fuzz_c": -1},
                                "collect_s": float("inf"), "tests": True}), encoding="utf-8")
    loaded = Costs.load(path)
    assert loaded.startup_s == {"fuzz_b": 1.5}
    assert loaded.collect_s is None and loaded.tests is None
    path.write_text("[1, 2", encoding="utf-8")
    assert Costs.load(path) == Costs()


# ------------------------------------------------------------------ the schedule


def test_a_target_gets_the_free_core_seconds_over_the_targets_waiting() -> None:
    # two slots, 100 s left; the other slot is busy for 40 more seconds (pytest)
    assert target_share(now=0.0, end=100.0, busy_until=[40.0], waiting=4) == pytest.approx(
        (100 + 60) / 4)
    # a slot busy past the end gives nothing
    assert target_share(now=0.0, end=100.0, busy_until=[150.0], waiting=2) == 50.0
    assert target_share(now=120.0, end=100.0, busy_until=[], waiting=1) == 0.0


def test_time_a_target_leaves_goes_to_the_targets_after_it() -> None:
    # one slot, 3 targets, 90 s: each planned 30 s; the first plateaus after 12 s
    first = target_share(0.0, 90.0, [], 3)
    second = target_share(12.0, 90.0, [], 2)
    assert first == 30.0 and second == 39.0


def _samples(*points: tuple[float, int]) -> list[Sample]:
    return [Sample(t=t, execs=int(t * 100), ft=ft, cov=ft, corpus_files=1) for t, ft in points]


def test_a_campaign_still_finding_features_is_not_plateaued() -> None:
    s = _samples((1.0, 10), (5.0, 20), (10.0, 30), (15.0, 40))
    assert not plateaued(s, elapsed=15.5)


def test_a_campaign_flat_for_the_window_after_its_minimum_is_plateaued() -> None:
    s = _samples((1.0, 10), (4.0, 50), (8.0, 50), (14.0, 50), (16.0, 50))
    assert plateaued(s, elapsed=16.0)


def test_no_campaign_stops_before_its_minimum_fuzzing_time() -> None:
    s = _samples((1.0, 50), (2.0, 50), (5.0, 50), (9.0, 50))
    assert not plateaued(s, elapsed=1.0 + MIN_FUZZ_S - 0.1)
    assert not plateaued([], elapsed=100.0)


def test_the_second_round_goes_to_targets_still_growing_fastest_first() -> None:
    rows = [
        {"fuzzer": "fuzz_a", "executions": 10, "status": "ok", "crashes": [],
         "plateaued": False, "growth_per_s": 0.5},
        {"fuzzer": "fuzz_b", "executions": 10, "status": "ok", "crashes": [],
         "plateaued": True, "growth_per_s": 0.0},
        {"fuzzer": "fuzz_c", "executions": 10, "status": "ok", "crashes": [],
         "plateaued": False, "growth_per_s": 2.0},
        {"fuzzer": "fuzz_d", "executions": 0, "status": "error", "crashes": [],
         "plateaued": False, "growth_per_s": 0.0},
    ]
    assert second_round(rows) == ["fuzz_c", "fuzz_a"]


# ------------------------------------------------------------------ the verdict


def _summary(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "targets": [{"name": "a", "executions": 5, "error": None, "minimize": {}}],
        "properties": {"mode": "full", "exit_code": 0, "selected": 3, "tests": 3,
                       "skipped_tests": [], "failed": 0, "errors": 0},
        "coverage": {"planned": True, "line_percent": 90.0},
        "mutants": {"planned_sample": 4, "total": 4},
        "new_crashes": 0,
    }
    base.update(kw)
    return base


def test_a_night_that_did_everything_is_complete_and_clean() -> None:
    s = _summary()
    assert incomplete_reasons(s, []) == []
    assert exit_status(s, []) == EXIT_CLEAN


@pytest.mark.parametrize(("change", "words"), [
    ({"targets": [{"name": "a", "executions": 0, "error": "its slot ended during start-up",
                   "minimize": {}}]}, "target a: 0 executions (its slot ended during start-up)"),
    ({"properties": {"mode": "full", "exit_code": 5, "selected": 0, "tests": 0,
                     "paths": ["test_gw_chat.py"]}}, "pytest selected no test (exit 5)"),
    ({"properties": {"mode": "full", "exit_code": -9, "selected": 3, "tests": 1,
                     "skipped_tests": []}}, "stopped by a signal"),
    ({"properties": {"mode": "full", "exit_code": 0, "selected": 3, "tests": 3,
                     "skipped_tests": [{"name": "t", "reason": "nightly property budget "
                                        "exhausted"}]}}, "1 test(s) ran no example: t"),
    ({"coverage": {"planned": True, "line_percent": None, "status": "failed"}},
     "coverage: planned but not measured"),
    ({"mutants": {"planned_sample": 4, "total": 1, "status": "measured"}},
     "mutants: 1 of the 4 planned"),
    ({"properties": {"mode": "full", "exit_code": 0, "selected": 3, "tests": 3,
                     "skipped_tests": [], "table": [
                         {"name": "t_plain", "result": "passed", "property": False,
                          "examples": 0},
                         {"name": "t_given", "result": "passed", "property": True,
                          "examples": 0}]}},
     "1 property test(s) passed without running an example: t_given ("),
    ({"properties": {"mode": "full", "exit_code": 0, "selected": 3, "tests": 3,
                     "skipped_tests": [], "unmatched": ["tests.test_x::TestX::runTest"]}},
     "1 test result(s) could not be matched to the record of their run, so their examples "
     "are unknown: tests.test_x::TestX::runTest"),
], ids=["target", "no-tests", "killed", "no-example", "coverage", "mutants", "silent-pass",
        "unmatched"])
def test_each_way_of_doing_less_is_a_named_reason_and_exit_3(change: dict[str, Any],
                                                            words: str) -> None:
    s = _summary(**change)
    reasons = incomplete_reasons(s, [])
    assert any(words in r for r in reasons), reasons
    assert exit_status(s, reasons) == EXIT_INCOMPLETE


def test_a_plain_test_without_examples_and_property_tests_with_them_are_complete() -> None:
    """A test that is not a hypothesis or kit test records no example, and that is no
    reason; a property test's row with examples is none either."""
    s = _summary(properties={
        "mode": "full", "exit_code": 0, "selected": 2, "tests": 2, "skipped_tests": [],
        "unmatched": [], "failed": 0, "errors": 0, "table": [
            {"name": "t_plain", "result": "passed", "property": False, "examples": 0},
            {"name": "t_given", "result": "passed", "property": True, "examples": 1},
            {"name": "t_red", "result": "failed", "property": True, "examples": 0}]})
    assert incomplete_reasons(s, []) == []


def test_a_shortfall_of_the_plan_is_a_reason() -> None:
    reasons = incomplete_reasons(_summary(), ["fuzzing: 12 targets need ..."])
    assert reasons == ["budget too small: fuzzing: 12 targets need ..."]


def test_a_finding_outranks_an_incomplete_night() -> None:
    s = _summary(new_crashes=1)
    reasons = incomplete_reasons(s, ["fuzzing: short"])
    assert reasons and exit_status(s, reasons) == EXIT_FINDING


# ------------------------------------------------------------------ what the property run selects

KIT_TESTS = '''
from pcfuzz.conform.adapters import openai_chat
from pcfuzz.conform.pytest_plugin import pcfuzz_conformance
from hypothesis import given, strategies as st

test_gateway_chat = pcfuzz_conformance("openai-chat", openai_chat, families=["valid", "truncation"])


@given(st.integers())
def test_a_property(x):
    assert x == x


def test_an_example():
    assert True
'''


def test_the_property_run_keeps_the_users_conformance_tests(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    (tmp_path / "test_gw_chat.py").write_text(KIT_TESTS, encoding="utf-8")
    env = dict(os.environ, PCFUZZ_PROPERTIES_ONLY="1")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "pcfuzz.nightly.pytest_budget",
         "-p", "no:cacheprovider", "--collect-only", "-q", str(tmp_path / "test_gw_chat.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if "::" in line]
    assert sorted(line.split("::", 1)[1] for line in lines) == [
        "test_a_property", "test_gateway_chat[truncation]", "test_gateway_chat[valid]"]


# ------------------------------------------- the property plugin's sizing, fake clock


def _property_item(name: str, max_examples: int = 100_000) -> Any:
    """A collected hypothesis test as the budget plugin sees it (nodeid, obj, cls)."""
    from types import SimpleNamespace

    from hypothesis import settings

    @settings(max_examples=max_examples, database=None)
    @given(st.integers())
    def test(x: int) -> None:
        pass

    return SimpleNamespace(nodeid=f"props.py::{name}", obj=test, cls=None)


def test_the_property_plugin_sizes_each_test_by_its_measured_cost_and_the_time_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The budget plugin's decisions from injected costs and a fake clock: each test's
    examples are its share of the time left (split over the tests not yet run), less
    its measured overhead, over its measured cost per example (defaults for a test
    never measured); past the soft deadline every test gets the minimum until the hard
    one; past the hard one a test is skipped with the reason. Machine speed plays no
    part (the one real-time night is in tests/test_pcfuzz_cli.py)."""
    from types import SimpleNamespace

    from pcfuzz.nightly import pytest_budget as plugin

    clock = [1_000_000.0]
    monkeypatch.setattr(plugin, "time", SimpleNamespace(time=lambda: clock[0]))
    monkeypatch.setattr(plugin, "_ceiling", lambda: 50_000)
    monkeypatch.delenv("PCFUZZ_PROPERTY_MIN_EXAMPLES", raising=False)
    monkeypatch.setattr(plugin, "_state", {
        "deadline": clock[0] + 30.0, "hard": clock[0] + 60.0, "left": 3, "tests": {},
        "ends": {}, "costs": {
            "props.py::test_cheap": {"per_example_s": 0.001, "overhead_s": 0.1},
            "props.py::test_slow": {"per_example_s": 0.2, "overhead_s": 0.1},
        }})
    items = {name: _property_item(name) for name in
             ("test_cheap", "test_slow", "test_new", "test_late", "test_too_late")}

    def planned(name: str) -> int:
        plugin.pytest_runtest_setup(items[name])  # type: ignore[arg-type]
        record = plugin._state["tests"][f"props.py::{name}"]
        applied = items[name].obj._hypothesis_internal_use_settings.max_examples
        assert applied == record["planned"], (applied, record)
        return int(record["planned"])

    # 30 s for 3 tests: a 10 s slice; (10 - 0.1) / 0.001
    assert planned("test_cheap") == 9_900
    # it stops starting examples half a slice past its own (the tests after it run)
    assert plugin._state["ends"]["props.py::test_cheap"] == clock[0] + 15.0
    clock[0] += 5.0  # 25 s left for 2 tests: a 12.5 s slice; (12.5 - 0.1) / 0.2
    assert planned("test_slow") == 62
    clock[0] += 5.0  # 20 s left for the last: never measured, 0.05 s an example, 0.3 s
    assert planned("test_new") == int((20.0 - plugin.DEFAULT_OVERHEAD_S)
                                      / plugin.DEFAULT_COST_S)
    clock[0] += 21.0  # past the soft deadline, before the hard one: the minimum
    assert planned("test_late") == 1
    assert plugin._state["ends"]["props.py::test_late"] == plugin._state["hard"]
    clock[0] += 30.0  # past the hard deadline: skipped, the reason recorded
    with pytest.raises(pytest.skip.Exception, match="budget exhausted"):
        plugin.pytest_runtest_setup(items["test_too_late"])  # type: ignore[arg-type]
    assert plugin._state["tests"]["props.py::test_too_late"]["reason"] == (
        "nightly property budget exhausted")


def test_a_property_test_is_matched_to_its_junit_case_in_a_class_too() -> None:
    """The property table joins each JUnit case with the plugin's record by name: a
    state machine's ``TestX::runTest`` (JUnit: classname ``tests.test_x.TestX``) was
    not matched, so the table showed 0 examples for a state machine that ran them."""
    import xml.etree.ElementTree as ET

    from pcfuzz.nightly.properties import _node_name, _short

    cases = {
        "tests/test_x.py::test_y": ("tests.test_x", "test_y"),
        "tests/test_x.py::TestX::runTest": ("tests.test_x.TestX", "runTest"),
        "tests/sub/test_x.py::TestX::Inner::test_z": ("tests.sub.test_x.TestX.Inner", "test_z"),
        "tests/test_x.py::test_y[a::b/c.py]": ("tests.test_x", "test_y[a::b/c.py]"),
    }
    for nodeid, (classname, name) in cases.items():
        case = ET.Element("testcase", classname=classname, name=name)
        assert _short(nodeid) == _node_name(case), nodeid
