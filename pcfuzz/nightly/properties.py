"""The property phase: the test suite under the ``nightly`` hypothesis profile,
each test's examples sized by :mod:`pcfuzz.nightly.pytest_budget` to fit the share,
and its JUnit and per-test records read back into the report."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import IO, Any

from pcfuzz._data import checkout_root
from pcfuzz.database import describe, lost
from pcfuzz.engine.targets import Layout, subprocess_env
from pcfuzz.nightly.plan import NightlyOptions
from pcfuzz.nightly.report import rel, tail
from pcfuzz.nightly.transitions import contracts_dir

#: Installed (no checkout), the nightly example database defaults to this, relative
#: to the current directory.
INSTALLED_HYPOTHESIS_DB = Path(".pcfuzz") / "hypothesis-db"


QUICK_MAX_EXAMPLES = 20


_EXAMPLE = re.compile(r"^(Falsifying example|Failing test case|Falsifying explicit example)",
                      re.MULTILINE)


#: pytest gets SIGINT this long before the property phase ends (it still writes its
#: JUnit file), SIGKILL at the end. Only a fallback: see FINISH_RESERVE_S.
PYTEST_STOP_S = 3.0


#: The tests themselves end this long before the SIGINT (no test or example starts
#: later; a running hypothesis test stops after its current example), leaving pytest
#: the time to end its session, print the statistics and write its JUnit file; with
#: coverage on, COVERAGE_SAVE_S more for saving the coverage data.
FINISH_RESERVE_S = 2.0


COVERAGE_SAVE_S = 3.0


#: ... but never more than this share of the property budget (small budgets).
FINISH_RESERVE_SHARE = 0.12


def property_tests(opts: NightlyOptions) -> list[str]:
    """``--property-tests``, else the checkout's ``tests/`` (a wheel ships no tests);
    and the kit's tests of the user's adapters."""
    checkout = checkout_root()
    suite = opts.property_tests or ([str(checkout / "tests")] if checkout is not None else [])
    return [*suite, *opts.adapter_tests]


def properties_mode(opts: NightlyOptions) -> str:
    if not property_tests(opts):
        return "off"
    if opts.properties != "auto":
        return opts.properties
    return "full"


def _collection_skips(cases: list[ET.Element]) -> tuple[list[ET.Element], list[dict[str, str]]]:
    """Drop pytest's ``collection skipped`` pseudo test cases (a module skipped at
    import) from the cases; return them as named skips instead."""
    kept, skipped = [], []
    for case in cases:
        skip = case.find("skipped")
        if skip is not None and not case.get("name") and case.get("classname") == "":
            skipped.append({"name": case.get("file") or "module", "reason": skip.get("message") or ""})
            continue
        if skip is not None and (skip.get("message") or "").startswith("collection skipped"):
            skipped.append({"name": case.get("classname") or case.get("name") or "module",
                            "reason": skip.get("message") or ""})
            continue
        kept.append(case)
    return kept, skipped


def _node_name(case: ET.Element) -> str:
    return f"{case.get('classname', '')}::{case.get('name', '')}"


def _short(nodeid: str) -> str:
    """A pytest node id as :func:`_node_name` names its JUnit case:
    ``tests/test_x.py::test_y`` as ``tests.test_x::test_y``, and a test in a class
    (a hypothesis state machine's ``TestCase``), ``tests/test_x.py::TestX::runTest``,
    as ``tests.test_x.TestX::runTest`` (JUnit puts the class in ``classname``). A
    parameter id (``[...]``) is kept as it is, ``::`` inside it included."""
    head, bracket, params = nodeid.partition("[")
    *path, name = head.split("::")
    path[0] = path[0].removesuffix(".py").replace("/", ".")
    return f"{'.'.join(path)}::{name}{bracket}{params}"


def run_properties(
    opts: NightlyOptions, layout: Layout, mode: str, deadline: float, stream: IO[str],
    coverage_data: Path | None = None, min_examples: int = 1,
    hard_deadline: float | None = None,
) -> tuple[dict[str, Any], list[ET.Element]]:
    """Run the property suite until ``deadline`` (``time.monotonic()``): the plugin sizes
    each test's examples so that all of them run; at the deadline pytest gets SIGINT
    (it still writes its JUnit file), 3 s later SIGKILL."""
    budget = max(0.0, deadline - time.monotonic())
    # The examples are sized to end by ``deadline``; a collection slower than planned
    # (a loaded machine) may still run every test, one example each (the minimum),
    # until ``hard_deadline``, when pytest is stopped.
    hard = max(deadline, hard_deadline if hard_deadline is not None else deadline)
    hard_budget = max(0.0, hard - time.monotonic())
    checkout = checkout_root()
    base = checkout if checkout is not None else Path.cwd()
    db = opts.hypothesis_db or os.environ.get("PCFUZZ_HYPOTHESIS_DB") or str(
        checkout / ".hypothesis" / "nightly-db" if checkout is not None
        else Path.cwd() / INSTALLED_HYPOTHESIS_DB
    )
    tests = property_tests(opts)
    lost_marker = opts.report_dir / "logs" / "database-lost.json"
    lost_marker.unlink(missing_ok=True)
    info: dict[str, Any] = {
        "mode": mode,
        "profile": "nightly",
        "paths": tests,
        "selected": None,
        "collect_s": None,
        "min_examples": min_examples,
        "database": describe(opts.database) if opts.database
        else db if not Path(db).is_absolute() else rel(Path(db), base),
        "database_readonly": opts.database_readonly,
        "budget_s": round(budget, 1),
        "duration_s": 0.0,
        "exit_code": None,
        "tests": 0,
        "passed": 0,
        "failed": 0,
        "errors": 0,
        "skipped": 0,
        "failures": [],
        "skipped_tests": [],
        "unmatched": [],
        "table": [],
    }
    if mode == "off":
        return info, []
    junit = opts.report_dir / "properties-junit.xml"
    per_test = opts.report_dir / "logs" / "properties.json"
    session = opts.report_dir / "logs" / "properties-session.json"
    session.unlink(missing_ok=True)
    costs = layout.work_dir / "property_costs.json"
    for stale in [junit, *per_test.parent.glob(per_test.name + "*")]:
        stale.unlink(missing_ok=True)
    failures_dir = opts.report_dir / "property-failures"
    shutil.rmtree(failures_dir, ignore_errors=True)
    cmd = [
        sys.executable, "-m", "pytest", "-p", "pcfuzz.nightly.pytest_budget", "-p", "no:cacheprovider",
        "-q", "--hypothesis-show-statistics", f"--junitxml={junit}",
    ]
    cmd += tests
    started = time.monotonic()
    started_wall = time.time()
    env = subprocess_env(
        layout,
        {
            # Selected by name: with CI set, hypothesis would otherwise load its own
            # derandomized, database-less `ci` profile and learn nothing night to night.
            "HYPOTHESIS_PROFILE": "nightly",
            "PCFUZZ_HYPOTHESIS_DB": db,
            # wall clock: the same instant in the pytest process
            "PCFUZZ_PROPERTY_DEADLINE": str(time.time() + budget - PYTEST_STOP_S - min(
                FINISH_RESERVE_S + (COVERAGE_SAVE_S if coverage_data is not None else 0.0),
                FINISH_RESERVE_SHARE * budget)),
            "PCFUZZ_PROPERTY_HARD_DEADLINE": str(time.time() + hard_budget - PYTEST_STOP_S - min(
                FINISH_RESERVE_S + (COVERAGE_SAVE_S if coverage_data is not None else 0.0),
                FINISH_RESERVE_SHARE * hard_budget)),
            "PCFUZZ_PROPERTY_FAILURES": str(failures_dir),
            "PCFUZZ_PROPERTY_COSTS": str(costs),
            "PCFUZZ_PROPERTY_REPORT": str(per_test),
            "PCFUZZ_PROPERTY_SESSION": str(session),
            "PCFUZZ_PROPERTY_MIN_EXAMPLES": str(min_examples),
            "PCFUZZ_NIGHTLY": "1",
            "PCFUZZ_PROPERTIES_ONLY": "1",
        },
    )
    env.pop("PYTHONHASHSEED", None)
    if opts.database or opts.database_readonly:
        env["PCFUZZ_DATABASE_URL"] = opts.database or db
        env["PCFUZZ_DATABASE_LOST"] = str(lost_marker)
        if opts.database_readonly:
            env["PCFUZZ_DATABASE_READONLY"] = "1"
    if opts.shard is not None:
        env["PCFUZZ_SHARD"] = str(opts.shard)
    if mode == "quick":
        env["PCFUZZ_PROPERTY_MAX_EXAMPLES"] = str(QUICK_MAX_EXAMPLES)
    if coverage_data is not None:
        for stale in coverage_data.parent.glob(coverage_data.name + "*"):
            stale.unlink()
        env["PCFUZZ_COVERAGE_DATA"] = str(coverage_data)
        env["PCFUZZ_COVERAGE_SOURCE"] = str(contracts_dir())
    env.update(opts.extra_env)
    log = opts.report_dir / "logs" / "properties.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    stream.write(f"[properties] pytest, profile nightly ({mode}), budget {budget:.0f}s\n")
    stream.flush()
    stopped = False
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            cmd, cwd=base, env=env, stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        try:
            proc.wait(timeout=max(0.1, hard - PYTEST_STOP_S - time.monotonic()))
        except subprocess.TimeoutExpired:
            stopped = True
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=PYTEST_STOP_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    info["duration_s"] = round(time.monotonic() - started, 2)
    info["exit_code"] = proc.returncode
    info["database_lost"] = lost(lost_marker)
    try:
        facts = json.loads(session.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        facts = {}
    if type(facts) is dict:
        if type(facts.get("selected")) is int:
            info["selected"] = facts["selected"]
        if type(facts.get("collected_at")) in (int, float):
            info["collect_s"] = round(max(0.0, facts["collected_at"] - started_wall), 2)
    _merge_worker_files(costs)
    records = _read_records(per_test)
    cases: list[ET.Element] = []
    if junit.is_file():
        try:
            cases = list(ET.parse(junit).getroot().iter("testcase"))
        except ET.ParseError:
            cases = []
    cases, module_skips = _collection_skips(cases)
    by_short = {_short(k): v for k, v in records.items()}
    seen: set[str] = set()
    for case in cases:
        info["tests"] += 1
        name = _node_name(case)
        seen.add(name)
        record = by_short.get(name, {})
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        result = "passed"
        if bad is not None:
            result = "failed" if bad.tag == "failure" else "error"
            info["failed" if bad.tag == "failure" else "errors"] += 1
            message = (bad.get("message") or "")[:500]
            text = bad.text or ""
            found = _EXAMPLE.search(text)
            if found and found.group(0) not in message:  # keep hypothesis's reproduction
                example = text[found.start():].split("\n\n", 1)[0]
                message = f"{message}\n{example[:1000]}"
            failure: dict[str, Any] = {"name": name, "message": message}
            if record.get("capture"):
                failure.update(
                    capture=rel(Path(record["capture"]), opts.report_dir),
                    capture_path=str(Path(record["capture"]).resolve()),
                    fingerprint=record.get("fingerprint"), bug=record.get("bug"),
                    where=record.get("where"))
            info["failures"].append(failure)
        elif case.find("skipped") is not None:
            result = "skipped"
            info["skipped"] += 1
            skip = case.find("skipped")
            reason = (skip.get("message") if skip is not None else "") or ""
            info["skipped_tests"].append({"name": name, "reason": reason[:200]})
        else:
            info["passed"] += 1
            if not record:
                info["unmatched"].append(name)
        info["table"].append(_table_row(name, result, record, case))
    # A test pytest never reached (the run was stopped) is skipped too, and named.
    for nodeid, record in records.items():
        name = _short(nodeid)
        if name not in seen and record.get("result") == "skipped":
            info["tests"] += 1
            info["skipped"] += 1
            info["skipped_tests"].append({"name": name, "reason": record.get("reason", "")})
            info["table"].append(_table_row(name, "skipped", record, None))
    # A run record whose test has no JUnit case under the same name: the two sides
    # name the test differently, and its examples would show as none.
    if cases:
        info["unmatched"] += sorted(
            _short(nodeid) for nodeid, record in records.items()
            if record.get("result") not in (None, "skipped") and _short(nodeid) not in seen)
    for module_skip in module_skips:
        info["skipped_tests"].append(module_skip)
        info["skipped"] += 1
        info["tests"] += 1
    if not cases and not records and stopped:
        info["skipped"] += 1
        info["tests"] += 1
        info["skipped_tests"].append({
            "name": " ".join(opts.property_tests) or "tests/",
            "reason": f"the {budget:.0f}s property share ended before pytest had collected "
                      "the tests (budget too small)",
        })
    elif not cases and proc.returncode not in (0, 5):
        info["errors"] += 1
        info["failures"].append({"name": "pytest", "message": tail(log)})
    stream.write(
        f"[properties] {info['tests']} tests: {info['passed']} passed, {info['failed']} failed, "
        f"{info['errors']} errors, {info['skipped']} skipped in {info['duration_s']:.0f}s\n"
    )
    return info, cases


def _table_row(
    name: str, result: str, record: dict[str, Any], case: ET.Element | None
) -> dict[str, Any]:
    seconds = record.get("seconds")
    if seconds is None and case is not None:
        seconds = float(case.get("time") or 0)
    return {
        "name": name,
        "result": result,
        "planned": record.get("planned"),
        "property": bool(record.get("property")),
        "examples": int(record.get("examples") or 0),
        "seconds": round(float(seconds or 0.0), 2),
        "events": record.get("events", {}),
        "stopped_because": record.get("stopped_because", ""),
    }


def _read_records(path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in sorted(path.parent.glob(path.name + "*")):
        try:
            loaded = json.loads(part.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(loaded, dict):
            out.update(loaded)
    return out


def _merge_worker_files(costs: Path) -> None:
    """pytest-xdist workers each write ``<costs>.<worker>``: fold them into one file."""
    parts = sorted(costs.parent.glob(costs.name + ".gw*"))
    if not parts:
        return
    merged = _read_records(costs) if costs.is_file() else {}
    for part in parts:
        try:
            merged.update(json.loads(part.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            pass
        part.unlink(missing_ok=True)
    costs.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n", encoding="utf-8")
