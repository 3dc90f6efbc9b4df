"""Nightly findings a person can read and keep, run for real:

- a failing property test's minimal example becomes a readable regression document
  (the event list it ran, its contract and revision, what failed), ``pcfuzz promote``
  stores it, and pytest's replay of the store fails on the broken parser and passes on
  the real one (the broken parser is a copy of ``contracts/`` in ``tmp_path`` with one
  planted bug, imported in place of ``pcfuzz.contracts`` by an import hook, as
  ``pcfuzz mutants`` does);
- one bug found by a fuzz target and by a property test is one finding in the report;
- a property phase whose tests all pass ends on its own, green, even when the tests
  cost more than measured; the measured costs size the next night's examples.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pcfuzz.cli import main
from pcfuzz.engine.property_regressions import FORMAT, load, replay
from pcfuzz.nightly.mutants import CONTRACTS_HOOK

pytest.importorskip("atheris")

REPO = Path(__file__).resolve().parent.parent

#: Runs a module (``pytest`` or ``pcfuzz``) with ``pcfuzz.contracts`` mapped onto the
#: folder given as the first argument.
BOOT = CONTRACTS_HOOK + '''\
import runpy
module = sys.argv.pop(1)
sys.argv[0] = module
runpy.run_module(module, run_name="__main__", alter_sys=True)
'''

PLANTED_PROPERTY = '''\
from hypothesis import given, settings, strategies as st

from pcfuzz.contracts.errors import ContractError
from pcfuzz.contracts.openai_chat import parse_events

CHUNK = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
         "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}]}


@settings(database=None, derandomize=True)
@given(st.lists(st.sampled_from([CHUNK, "[DONE]"]), max_size=5))
def test_parser_rejects_only_with_contract_errors(events):
    try:
        parse_events(events)
    except ContractError:
        pass
'''


def _plant(tmp_path: Path) -> Path:
    """A copy of contracts/ whose Chat ``parse_events`` raises ``KeyError`` on any list
    of two or more events (before its docstring's first statement)."""
    copy = tmp_path / "planted" / "contracts"
    shutil.copytree(REPO / "contracts", copy, ignore=shutil.ignore_patterns("__pycache__"))
    path = copy / "openai_chat" / "_stream.py"
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "parse_events")
    first = fn.body[1]  # after the docstring
    lines = source.splitlines(keepends=True)
    indent = " " * first.col_offset
    lines.insert(first.lineno - 1, f"{indent}if type(events) is list and len(events) >= 2:\n"
                                   f"{indent}    raise KeyError('planted: two events')\n")
    path.write_text("".join(lines), encoding="utf-8")
    return copy


def _run(args: list[str], cwd: Path, env: dict[str, str],
         planted: Path | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, *(["-c", BOOT, str(planted)] if planted else ["-m"]), *args]
    # The child is a pytest of its own, not an xdist worker of this run (the budget
    # plugin suffixes its files with the worker name it finds in the environment).
    env = {k: v for k, v in env.items() if not k.startswith("PYTEST_XDIST_")}
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300, check=False, stdin=subprocess.DEVNULL)


def test_failing_property_becomes_a_readable_regression_replayed_by_pytest(
    tmp_path: Path,
) -> None:
    planted = _plant(tmp_path)
    props = tmp_path / "props"
    props.mkdir()
    (props / "test_planted.py").write_text(PLANTED_PROPERTY, encoding="utf-8")
    failures = tmp_path / "failures"
    store = tmp_path / "regressions"
    env = dict(os.environ, PCFUZZ_PROPERTY_FAILURES=str(failures),
               PCFUZZ_REGRESSIONS_DIR=str(store))
    env.pop("PCFUZZ_PROPERTY_DEADLINE", None)
    # 1. the property fails on the planted parser; the plugin writes the document
    run = _run(["pytest", "-p", "pcfuzz.nightly.pytest_budget", "-p", "no:cacheprovider",
                "-q", "--assert=plain", str(props)], tmp_path, env, planted)
    assert run.returncode == 1, run.stdout + run.stderr
    (doc_path,) = sorted(failures.glob("*.json"))
    doc = json.loads(doc_path.read_text(encoding="utf-8"))  # readable: plain JSON
    assert doc["format"] == FORMAT
    assert doc["test"].endswith("test_planted.py::test_parser_rejects_only_with_contract_errors")
    assert doc["contract"] == "openai-chat" and isinstance(doc["revision"], str)
    assert len(doc["events"]) == 2, doc["events"]  # hypothesis's minimal example
    assert doc["calls"][-1]["call"] == "openai_chat.parse_events"
    assert all("module" not in call for call in doc["calls"])  # entry points, not code
    assert doc["calls"][-1]["outcome"].startswith("raised KeyError")
    assert doc["failure"]["exception"] == "KeyError"
    assert doc["failure"]["where"] == "contracts/openai_chat/_stream.py:parse_events"
    assert doc["failure"]["bug"] and doc_path.stem == doc["failure"]["bug"]
    # 2. the real parser: the document does not reproduce, promote refuses it
    assert not replay(load(doc_path)).reproduces
    assert main(["--regressions-dir", str(store), "promote", str(doc_path)]) == 1
    assert not (store / "properties").exists()
    # 3. promoted where it reproduces (the planted parser)
    run = _run(["pcfuzz", "--regressions-dir", str(store), "promote", str(doc_path)],
               tmp_path, env, planted)
    assert run.returncode == 0, run.stdout + run.stderr
    (stored,) = sorted((store / "properties").glob("*.json"))
    assert load(stored)["events"] == doc["events"] and load(stored)["expect"] == "pass"
    # 4. pytest's replay of the store: red on the planted parser, green on the real one
    replay_test = str(REPO / "tests" / "test_property_regressions.py")
    red = _run(["pytest", "-q", "-p", "no:cacheprovider", "--assert=plain", replay_test],
               REPO, env, planted)
    assert red.returncode == 1 and "1 failed" in red.stdout, red.stdout + red.stderr
    assert "KeyError" in red.stdout
    green = _run(["pytest", "-q", "-p", "no:cacheprovider", replay_test], REPO, env)
    assert green.returncode == 0 and "1 passed" in green.stdout, green.stdout + green.stderr


TOY_PARSER = '''\
def classify(data: bytes) -> int:
    if not data:
        return 0
    if data[:1] == b"{":
        return 1
    if data[:3] == b"FUZ":
        raise KeyError("toy bug: FUZ prefix")
    return 3
'''

TOY_TARGET = '''#!/usr/bin/env python3
import sys

import atheris

with atheris.instrument_imports():
    import toy_parser


def TestOneInput(data: bytes) -> None:
    toy_parser.classify(data)


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
'''

TOY_PROPERTY = '''\
import sys

from hypothesis import given, strategies as st

sys.path.insert(0, {fuzz_dir!r})
import toy_parser  # noqa: E402


@given(st.sampled_from([b"{{", b"[", b"FUN", b"FUZ"]), st.binary(max_size=4))
def test_classify_never_raises(head, tail):
    assert toy_parser.classify(head + tail) in (0, 1, 3)
'''


def test_one_bug_found_by_a_fuzz_target_and_a_property_test_is_one_finding(
    tmp_path: Path,
) -> None:
    fuzz_dir = tmp_path / "fuzz"
    fuzz_dir.mkdir()
    (tmp_path / "tests" / "regressions").mkdir(parents=True)
    (fuzz_dir / "toy_parser.py").write_text(TOY_PARSER, encoding="utf-8")
    target = fuzz_dir / "fuzz_toy.py"
    target.write_text(TOY_TARGET, encoding="utf-8")
    target.chmod(0o755)
    (fuzz_dir / "fuzz_toy.dict").write_text('kw1="FUZ"\n', encoding="utf-8")
    (fuzz_dir / "fuzz_toy.options").write_text(
        "[libfuzzer]\ndict = fuzz_toy.dict\nmax_len = 64\ntimeout = 5\n", encoding="utf-8")
    (fuzz_dir / "corpus" / "fuzz_toy").mkdir(parents=True)
    (fuzz_dir / "corpus" / "fuzz_toy" / "object").write_bytes(b"{}")
    props = tmp_path / "props"
    props.mkdir()
    (props / "test_toy_property.py").write_text(
        TOY_PROPERTY.format(fuzz_dir=str(fuzz_dir)), encoding="utf-8")
    report = tmp_path / "report"
    # a share several times what one property test with a bug a quarter of its
    # examples hit needs, even on a loaded machine whose pytest starts slowly
    status = main(["--fuzz-dir", str(fuzz_dir), "nightly", "--budget", "40",
                   "--property-budget", "25", "--report", str(report),
                   "--property-tests", str(props), "--no-coverage", "--no-minimize",
                   "--hypothesis-db", str(tmp_path / "db")])
    assert status == 1
    summary = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    (crash,) = summary["targets"][0]["crashes"]
    (failure,) = summary["properties"]["failures"]
    assert crash["where"] == failure["where"] == "toy_parser.py:classify"
    assert crash["bug"] == failure["bug"] and crash["bug"].startswith("bug-KeyError-")
    (finding,) = summary["findings"]
    assert finding["fingerprint"] == crash["bug"]
    assert sorted(s["kind"] for s in finding["sources"]) == ["fuzz target", "property test"]
    md = (report / "summary.md").read_text(encoding="utf-8")
    assert "## Findings (one per bug)" in md and f"`{crash['bug']}`" in md
    assert "(2 sources)" in md and "fuzz target `toy`" in md
    assert "property test `" in md and "test_classify_never_raises" in md


SLOWER_THAN_MEASURED = '''\
import time

from hypothesis import given, settings, strategies as st

# hypothesis's default profile (no conftest here) has a 200 ms deadline
settings.register_profile("slow", deadline=None)
settings.load_profile("slow")


@given(st.integers())
def test_a(x):
    time.sleep(0.3)
    assert int(str(x)) == x


@given(st.integers())
def test_b(x):
    time.sleep(0.3)
    assert int(str(x)) == x


@given(st.integers())
def test_c(x):
    time.sleep(0.3)
    assert int(str(x)) == x
'''


def test_a_green_property_phase_ends_on_its_own_and_is_reported_green(tmp_path: Path) -> None:
    """Never measured, each example is assumed to cost 50 ms; they take 300 ms, so the
    first test is sized to six times its slice. Without the stop at the deadline the
    tests would overrun the share and pytest would be interrupted, then killed. With
    it, a test stops after its current example when the share ends: pytest exits 0
    with every test passed."""
    from pcfuzz.engine.targets import Layout
    from pcfuzz.nightly.pipeline import NightlyOptions, run_nightly

    fuzz_dir = tmp_path / "fuzz"
    fuzz_dir.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    props = tmp_path / "props"
    props.mkdir()
    (props / "test_slow.py").write_text(SLOWER_THAN_MEASURED, encoding="utf-8")
    report = tmp_path / "report"
    layout = Layout.from_options(str(fuzz_dir), str(tmp_path / "regressions"), str(work))
    # the night's plan knows this suite (three tests, a quick collection); the tests'
    # own plugin still assumes 50 ms an example, never having measured them
    from pcfuzz.nightly.plan import Costs

    Costs(collect_s=3.0, tests=3, test_s=0.05, example_s=0.3).save(work / "nightly_costs.json")
    opts = NightlyOptions(budget_s=30, property_budget_s=24, report_dir=report,
                          property_tests=[str(props)], minimize=False, coverage=False,
                          hypothesis_db=str(tmp_path / "db"), mutants=False)
    with open(os.devnull, "w") as sink:
        status = run_nightly(layout, opts, stream=sink)
    summary = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    p = summary["properties"]
    assert p["exit_code"] == 0, p
    assert (p["failed"], p["errors"]) == (0, 0), p
    # the examples were sized for the 24 s share; tests may still start (one example
    # each) until the end of the night's first stage, never later
    assert p["duration_s"] <= summary["plan"]["stage1_s"] + 1, p
    # a night whose tests all ran is green; one that had to skip a test says so
    assert status == (0 if p["skipped"] == 0 else 3), summary["incomplete_reasons"]
    rows = {r["name"].rsplit("::", 1)[1]: r for r in p["table"]}
    # On an idle machine all three pass. On a loaded one pytest's start-up eats into
    # the share, and a test that no time is left for is skipped *by name* (never
    # killed, never red): the first one always runs, and stops when its time is up.
    assert rows["test_a"]["result"] == "passed" and rows["test_a"]["examples"] >= 1, rows
    # stopped short of its plan (its examples cost six times what was assumed): said
    # so, and a pass; a loaded machine whose collection ate the share plans so few
    # examples that all of them fit, and there is nothing to stop
    if rows["test_a"]["examples"] < (rows["test_a"]["planned"] or 0):
        assert "time was up" in rows["test_a"]["stopped_because"], rows
    assert p["passed"] + p["skipped"] == 3, p
    skipped = {s["name"].rsplit("::", 1)[1]: s["reason"] for s in p.get("skipped_tests", [])}
    assert len(skipped) == p["skipped"], p
    assert all("budget" in reason for reason in skipped.values()), skipped


CHEAP = """\
from hypothesis import given, strategies as st


@given(st.integers())
def test_cheap(x):
    assert int(str(x)) == x
"""


def test_a_cheap_tests_measured_cost_sizes_its_examples_the_next_night(tmp_path: Path) -> None:
    """Never measured, a test is assumed to cost 0.3 s plus 50 ms an example: in a
    one-second slice that plans 14 examples. Once measured (a few milliseconds in all),
    the fixed cost is bounded by the measured run, and the same slice plans hundreds."""
    props = tmp_path / "props"
    props.mkdir()
    (props / "test_cheap.py").write_text(CHEAP, encoding="utf-8")
    costs = tmp_path / "costs.json"
    report = tmp_path / "report.json"
    env = dict(os.environ, PCFUZZ_PROPERTY_COSTS=str(costs), PCFUZZ_PROPERTY_REPORT=str(report),
               PCFUZZ_PROPERTY_BUDGET_S="1.5")
    env.pop("PCFUZZ_PROPERTY_DEADLINE", None)
    planned, slices, measured = [], [], []
    for _night in range(2):
        if costs.exists():
            (cost,) = json.loads(costs.read_text(encoding="utf-8")).values()
            measured.append(cost)
        run = _run(["pytest", "-p", "pcfuzz.nightly.pytest_budget", "-p", "no:cacheprovider",
                    "-q", str(props)], tmp_path, env)
        assert run.returncode == 0, run.stdout + run.stderr
        (record,) = json.loads(report.read_text(encoding="utf-8")).values()
        planned.append(record["planned"])
        slices.append(record.get("slice_s"))  # absent only if collection overran the budget
    (cost,) = measured  # what the first night measured, read by the second
    assert cost["overhead_s"] <= cost["seconds"], cost
    # The first night plans from the assumed cost; the second from the measured one,
    # exactly as the planner's formula says (asserted from the figures the run
    # recorded, not from this machine's speed: a loaded machine measures more).
    assert abs(planned[0] - int((slices[0] - 0.3) / 0.05)) <= 1, (planned, slices)
    assert planned[0] <= 20, planned
    # (hypothesis's default profile caps a test at 100 examples; no conftest here)
    expected = min(int((slices[1] - cost["overhead_s"]) / cost["per_example_s"]), 100)
    assert abs(planned[1] - expected) <= 1, (planned, slices, cost)
    # and a test measured at a few milliseconds an example gets more than the default
    assert cost["per_example_s"] < 0.05 and planned[1] > planned[0], (planned, cost)


GIVEN_AND_MACHINE = """\
from hypothesis import given, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule


@given(st.integers())
def test_given(x):
    assert int(str(x)) == x


class Counter(RuleBasedStateMachine):
    count = 0

    @rule()
    def step(self):
        self.count += 1


TestCounter = Counter.TestCase
"""


def test_a_property_result_without_the_record_of_its_run_makes_the_night_incomplete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every property row's examples come from the plugin's record of the run, joined to
    the JUnit result by name. Joined, a ``@given`` test and a state machine (a test in a
    class) each show their examples and the night is complete; when the two sides name
    a test differently (as the table did for every state machine before 9e0d3a4), its
    examples are unknown, and the night says so and is incomplete, not green."""
    from pcfuzz.engine.targets import Layout
    from pcfuzz.nightly import properties
    from pcfuzz.nightly.pipeline import NightlyOptions, run_nightly

    props = tmp_path / "props"
    props.mkdir()
    (props / "test_two.py").write_text(GIVEN_AND_MACHINE, encoding="utf-8")
    (tmp_path / "fuzz").mkdir()
    (tmp_path / "work").mkdir()
    # the plan knows this suite (two tests, a quick collection), not the project's own
    from pcfuzz.nightly.plan import Costs

    Costs(collect_s=3.0, tests=2, test_s=0.05, example_s=0.05).save(
        tmp_path / "work" / "nightly_costs.json")

    def night(name: str) -> tuple[int, dict[str, Any]]:
        report = tmp_path / name
        layout = Layout.from_options(str(tmp_path / "fuzz"), str(tmp_path / "regressions"),
                                     str(tmp_path / "work"))
        opts = NightlyOptions(budget_s=60, property_budget_s=50, report_dir=report,
                              property_tests=[str(props)], minimize=False, coverage=False,
                              hypothesis_db=str(tmp_path / "db"), mutants=False)
        with open(os.devnull, "w") as sink:
            status = run_nightly(layout, opts, stream=sink)
        summary: dict[str, Any] = json.loads((report / "summary.json").read_text(encoding="utf-8"))
        return status, summary

    status, summary = night("joined")
    p = summary["properties"]
    assert p["unmatched"] == [], p
    rows = {r["name"].rsplit("::", 1)[1]: r for r in p["table"]}
    assert sorted(rows) == ["runTest", "test_given"], rows
    assert all(r["property"] and r["examples"] >= 1 for r in rows.values()), rows
    if p["skipped"] == 0:  # a loaded machine may skip a test by name (another reason)
        assert status == 0 and summary["complete"], summary["incomplete_reasons"]

    # the join as it was: the class left in the test's name, not in JUnit's classname
    def old_short(nodeid: str) -> str:
        path, _, rest = nodeid.partition("::")
        return f"{path.removesuffix('.py').replace('/', '.')}::{rest}"

    monkeypatch.setattr(properties, "_short", old_short)
    status, summary = night("split")
    p = summary["properties"]
    if p["skipped"] == 0:
        # both sides are named: the JUnit result without a record, the record without
        # a result (their paths from the rootdir, which varies with how pytest runs)
        unmatched = sorted(p["unmatched"])
        assert len(unmatched) == 2, p
        assert unmatched[0].endswith("test_two.TestCounter::runTest"), unmatched
        assert unmatched[1].endswith("test_two::TestCounter::runTest"), unmatched
        assert status == 3 and not summary["complete"], summary
        assert any("could not be matched to the record of their run" in r
                   for r in summary["incomplete_reasons"]), summary["incomplete_reasons"]
        md = (tmp_path / "split" / "summary.md").read_text(encoding="utf-8")
        assert md.startswith("# ") and "INCOMPLETE" in md.split("\n\n", 2)[1], md[:400]
        assert "could not be matched" in md, md[:800]
