"""pytest plugin the nightly job loads (``-p pcfuzz.nightly.pytest_budget``): every
property test runs every night, each with an example count sized from its measured
cost so that the whole suite fits the property share of the budget.

- ``PCFUZZ_PROPERTIES_ONLY=1``: only hypothesis tests run (``@given`` tests and
  rule-based state machines); example tests are deterministic, CI runs them on every
  push, and a night adds nothing to them. The rest are deselected.
- ``PCFUZZ_PROPERTY_DEADLINE`` (seconds since the epoch) or ``PCFUZZ_PROPERTY_BUDGET_S``
  (seconds, counted from the end of collection): the time the tests share. Before each
  test, its slice is the time left divided by the tests left; its ``max_examples`` is
  that slice over its cost per example (measured on earlier nights, read from
  ``PCFUZZ_PROPERTY_COSTS``), at least 1, at most the loaded profile's count (the
  ``nightly`` profile's 5,000 is the ceiling). A test that would start after the
  deadline is skipped with the reason "nightly property budget exhausted", and the
  report names it. A hypothesis test still running past 1.5 times its slice (or the
  deadline) starts no further example: it ends there and, if every example it ran
  passed and it had not failed, is reported as passed (``stopped_because``: "its time
  was up after N examples"), so the tests after it still run, and pytest ends on its
  own, writes its JUnit file and exits 0 when every test passed.
- ``PCFUZZ_PROPERTY_HARD_DEADLINE`` (seconds since the epoch, later than the deadline):
  a test still starts until then, with the minimum of examples: a collection slower
  than planned does not leave tests unrun while the night still has time.
- ``PCFUZZ_DATABASE_URL`` (a path or ``redis://...``), ``PCFUZZ_DATABASE_READONLY=1``,
  ``PCFUZZ_DATABASE_LOST`` (a file): every hypothesis test uses that example database
  (:mod:`pcfuzz.database`; a shared server is multiplexed with the local
  ``PCFUZZ_HYPOTHESIS_DB``); a server that stops answering writes the file.
- ``PCFUZZ_SHARD`` (``I/N``): only the tests whose node id hashes to shard I of N run
  (``pcfuzz nightly --shard``).
- ``PCFUZZ_PROPERTY_MAX_EXAMPLES`` (int): a lower ceiling (``--properties quick``).
- ``PCFUZZ_PROPERTY_MIN_EXAMPLES`` (int): no test is planned fewer examples (the
  nightly sets 10 from a 600 s budget; its plan sized the share for it).
- ``PCFUZZ_PROPERTY_SESSION`` (JSON file): written when collection ends: how many
  tests were selected and when, for the nightly's completeness check and its plan.
- ``PCFUZZ_PROPERTY_COSTS`` (JSON file): seconds per example and per-test overhead by
  node id, read before the run and updated after it (the overhead is bounded by the
  test's whole measured time).
- ``PCFUZZ_COVERAGE_DATA`` (coverage data file) and ``PCFUZZ_COVERAGE_SOURCE`` (the
  ``contracts`` folder): line and branch coverage of the tests' run, from the end of
  collection to the end of the session.
- ``PCFUZZ_PROPERTY_FAILURES`` (directory): a failing ``@given`` test's minimal
  falsifying example is written there as a readable regression document (the calls
  it made into the contracts, the event list, what failed; see
  ``pcfuzz/engine/property_regressions.py``), promotable with ``pcfuzz promote``.
- ``PCFUZZ_PROPERTY_REPORT`` (JSON file): written at the end, one entry per test:
  planned and run examples, seconds, result, ``hypothesis.event`` percentages, why
  hypothesis stopped.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

#: Assumed cost of a test never measured before: seconds per example, fixed overhead.
DEFAULT_COST_S = 0.05
DEFAULT_OVERHEAD_S = 0.3
#: Seconds kept back at the end for pytest's own teardown and JUnit file.
RESERVE_S = 0.5
#: The skip reason a test stopped at the deadline carries (turned into a pass).
STOPPED = "pcfuzz: the test's time is up"
#: A hypothesis test starts no example past this multiple of its slice.
SLICE_SLACK = 1.5

_state: dict[str, Any] = {
    "deadline": None,
    "left": 0,
    "costs": {},
    "tests": {},
    "stats": {},
    "runs": {},
    "ends": {},
    "hard": None,
}


def _worker_suffix() -> str:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return f".{worker}" if worker else ""


def _ceiling() -> int:
    from hypothesis import settings

    loaded = settings.default or settings.get_profile("default")
    top = int(loaded.max_examples)
    cap = os.environ.get("PCFUZZ_PROPERTY_MAX_EXAMPLES")
    if cap:
        top = min(top, max(1, int(cap)))
    return top


def pytest_configure(config: pytest.Config) -> None:
    url = os.environ.get("PCFUZZ_DATABASE_URL")
    if url:
        from pcfuzz.database import open_database
        from pcfuzz.errors import UsageError

        local = os.environ.get("PCFUZZ_HYPOTHESIS_DB") or ".hypothesis/nightly-db"
        lost = os.environ.get("PCFUZZ_DATABASE_LOST")
        try:
            _state["database"] = open_database(
                url, local=Path(local), readonly=os.environ.get("PCFUZZ_DATABASE_READONLY") == "1",
                lost_marker=Path(lost) if lost else None)
        except UsageError as exc:
            raise pytest.UsageError(str(exc)) from None
    costs = os.environ.get("PCFUZZ_PROPERTY_COSTS")
    if costs and Path(costs).is_file():
        try:
            loaded = json.loads(Path(costs).read_text(encoding="utf-8"))
        except ValueError:
            loaded = {}
        if isinstance(loaded, dict):
            _state["costs"] = loaded
    import hypothesis.statistics as hstats

    original = hstats.describe_statistics

    def describe(stats: Any) -> str:
        # hypothesis's own plugin calls this once per test with the raw figures.
        if isinstance(stats, dict) and "nodeid" in stats:
            _state["stats"][stats["nodeid"]] = stats
        return original(stats)

    hstats.describe_statistics = describe  # type: ignore[assignment]


def _is_property(item: pytest.Item) -> bool:
    """A hypothesis test (``@given``, a state machine) or a conformance-kit test
    (``pcfuzz_conformance``, which runs hypothesis inside)."""
    obj = getattr(item, "obj", None)
    return bool(getattr(obj, "is_hypothesis_test", False)
                or getattr(obj, "pcfuzz_conformance", False))


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    shard = None
    if os.environ.get("PCFUZZ_SHARD"):
        from pcfuzz.nightly.shard import parse_shard

        shard = parse_shard(os.environ["PCFUZZ_SHARD"])
    if os.environ.get("PCFUZZ_PROPERTIES_ONLY") == "1" or shard is not None:
        keep = [i for i in items if (os.environ.get("PCFUZZ_PROPERTIES_ONLY") != "1"
                                     or _is_property(i))
                and (shard is None or shard.owns(i.nodeid))]
        kept = set(map(id, keep))
        dropped = [i for i in items if id(i) not in kept]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    facts = os.environ.get("PCFUZZ_PROPERTY_SESSION")
    if facts:
        # What the nightly needs to tell "collected every selected test" and to plan
        # the next night's collection. Written here, once collection is whole: pytest
        # also calls pytest_collection_finish when collection is interrupted, with the
        # items found so far.
        Path(facts + _worker_suffix()).write_text(json.dumps(
            {"selected": len(items), "collected_at": time.time()}) + "\n", encoding="utf-8")


def pytest_collection_finish(session: pytest.Session) -> None:
    data = os.environ.get("PCFUZZ_COVERAGE_DATA")
    if data:
        # Measured from here, not from start-up: under a trace function collection takes
        # twice as long. The module-level lines missed here are covered by the nightly's
        # corpus replay, which imports every contract module under coverage.
        import coverage

        cov = coverage.Coverage(data_file=data + _worker_suffix(), branch=True,
                                source=[os.environ["PCFUZZ_COVERAGE_SOURCE"]])
        cov.start()
        _state["coverage"] = cov
    deadline = os.environ.get("PCFUZZ_PROPERTY_DEADLINE")
    budget = os.environ.get("PCFUZZ_PROPERTY_BUDGET_S")
    hard = os.environ.get("PCFUZZ_PROPERTY_HARD_DEADLINE")
    if deadline:
        _state["deadline"] = float(deadline) - RESERVE_S
    elif budget:
        _state["deadline"] = time.time() + float(budget) - RESERVE_S
    if _state["deadline"] is not None:
        _state["hard"] = max(_state["deadline"], float(hard) - RESERVE_S if hard else 0.0)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    _state["left"] = max(1, -(-len(session.items) // max(1, workers)))



def _apply_max_examples(item: pytest.Item, n: int) -> int:
    """Set ``max_examples`` of this test to ``min(n, its own count)``; returns it."""
    from hypothesis import settings

    obj = getattr(item, "obj", None)
    cls = getattr(item, "cls", None)
    if getattr(obj, "_hypothesis_state_machine_class", None) is not None and cls is not None:
        current = cls.settings
        n = min(n, int(current.max_examples))
        cls.settings = settings(parent=current, max_examples=max(1, n))
        return max(1, n)
    fn: Any = getattr(obj, "__func__", obj)
    current = getattr(fn, "_hypothesis_internal_use_settings", None)
    if current is None:
        return n
    n = min(n, int(current.max_examples))
    fn._hypothesis_internal_use_settings = settings(parent=current, max_examples=max(1, n))
    return max(1, n)


def _apply_database(item: pytest.Item, db: Any) -> None:
    """Make ``db`` this test's example database."""
    from hypothesis import settings

    obj = getattr(item, "obj", None)
    cls = getattr(item, "cls", None)
    if getattr(obj, "_hypothesis_state_machine_class", None) is not None and cls is not None:
        cls.settings = settings(parent=cls.settings, database=db)
        return
    fn: Any = getattr(obj, "__func__", obj)
    current = getattr(fn, "_hypothesis_internal_use_settings", None)
    if current is not None:
        fn._hypothesis_internal_use_settings = settings(parent=current, database=db)


def pytest_runtest_setup(item: pytest.Item) -> None:
    # "property": a test that must run at least one example (the verdict checks it)
    record: dict[str, Any] = {"planned": None, "result": "skipped", "seconds": 0.0,
                              "property": _is_property(item)}
    _state["tests"][item.nodeid] = record
    if _state.get("database") is not None and record["property"]:
        _apply_database(item, _state["database"])
    deadline = _state["deadline"]
    left = max(1, _state["left"])
    _state["left"] = left - 1
    if deadline is None:
        cap = os.environ.get("PCFUZZ_PROPERTY_MAX_EXAMPLES")
        if cap and _is_property(item):
            record["planned"] = _apply_max_examples(item, max(1, int(cap)))
        return
    now = time.time()
    hard = _state.get("hard") or deadline
    if now > hard:
        record["reason"] = "nightly property budget exhausted"
        pytest.skip("nightly property budget exhausted")
    if not record["property"]:
        return
    if now > deadline:
        # past the share the examples were sized for (collection ran long): the
        # minimum, while the stage still has time
        floor = max(1, int(os.environ.get("PCFUZZ_PROPERTY_MIN_EXAMPLES") or 1))
        record["planned"] = _apply_max_examples(item, floor)
        _state["ends"][item.nodeid] = hard
        return
    cost = _state["costs"].get(item.nodeid, {})
    per_example = float(cost.get("per_example_s", DEFAULT_COST_S)) or DEFAULT_COST_S
    overhead = float(cost.get("overhead_s", DEFAULT_OVERHEAD_S))
    slice_s = (deadline - now) / left
    wanted = int((slice_s - overhead) / per_example)
    floor = max(1, int(os.environ.get("PCFUZZ_PROPERTY_MIN_EXAMPLES") or 1))
    record["planned"] = _apply_max_examples(item, min(max(floor, wanted), _ceiling()))
    if getattr(getattr(item, "obj", None), "pcfuzz_conformance", False):
        # a kit test runs its families through hypothesis itself: size them by its
        # options, examples and seconds (the kit bounds its own shrinking by them)
        item.config.option.pcfuzz_max_examples = record["planned"]
        item.config.option.pcfuzz_budget = max(1.0, slice_s)
    record["slice_s"] = round(slice_s, 2)
    # a test whose examples cost more than measured stops (after at least one) past
    # its slice with some slack, so the tests after it still run
    _state["ends"][item.nodeid] = min(deadline, now + max(SLICE_SLACK * slice_s, slice_s + 1.0))


class _Run:
    """One hypothesis test's run: counts examples, stops at the deadline, and (with
    ``PCFUZZ_PROPERTY_FAILURES``) records the calls of its failing examples."""

    def __init__(self, item: pytest.Item, record: dict[str, Any]) -> None:
        self.item = item
        self.record = record
        self.examples = 0
        self.failed = False
        self.captured: tuple[list[Any], dict[str, Any], BaseException] | None = None
        self.recorder: Any = None
        self.recording: Any = None
        self.capture = bool(os.environ.get("PCFUZZ_PROPERTY_FAILURES"))

    def start_recording(self) -> None:
        """After the first failure only (a passing test pays nothing): record the calls
        the test makes into the contracts from here on (shrinking, the final run)."""
        from pcfuzz.engine.show import Recorder, recording

        self.recorder = Recorder()
        self.recording = recording(_namespaces(self.item), self.recorder)
        self.recording.__enter__()

    def stop_recording(self) -> None:
        if self.recording is not None:
            self.recording.__exit__(None, None, None)
            self.recording = None

    def wrap(self, inner: Any) -> Any:
        import functools

        end = _state["ends"].get(self.item.nodeid, _state["deadline"])

        @functools.wraps(inner)
        def example(*args: Any, **kwargs: Any) -> Any:
            if end is not None and not self.failed and self.examples and time.time() > end:
                raise pytest.skip.Exception(STOPPED)
            self.examples += 1
            rec = self.recorder
            if rec is not None:
                rec.reset()
            try:
                return inner(*args, **kwargs)
            except BaseException as exc:
                if isinstance(exc, (pytest.skip.Exception, KeyboardInterrupt)):
                    raise
                if rec is not None:
                    self.captured = (list(rec.calls), dict(kwargs), exc)
                self.failed = True
                if self.capture and self.recording is None:
                    self.start_recording()
                raise

        return example


def _namespaces(item: pytest.Item) -> list[dict[str, Any]]:
    """The test module and the helper modules beside it (``tests/_x.py``)."""
    import sys

    module = getattr(item, "module", None)
    if module is None or not getattr(module, "__file__", None):
        return []
    here = Path(module.__file__).resolve().parent
    spaces = [vars(module)]
    for other in list(sys.modules.values()):
        path = getattr(other, "__file__", None)
        if other is not module and path and Path(path).resolve().parent == here:
            spaces.append(vars(other))
    return spaces


def _write_capture(run: _Run, directory: str) -> None:
    if run.captured is None:
        return
    from pcfuzz.engine.property_regressions import build_document, write_failure

    calls, kwargs, exc = run.captured
    try:
        doc = build_document(test=run.item.nodeid, calls=calls, arguments=kwargs, exc=exc)
        path = write_failure(Path(directory), doc)
    except Exception as err:  # noqa: BLE001 - the capture must not hide the failure
        run.record["capture_error"] = f"{type(err).__name__}: {err}"[:300]
        return
    run.record["capture"] = str(path)
    run.record["fingerprint"] = doc["failure"]["fingerprint"]
    run.record["bug"] = doc["failure"]["bug"]
    run.record["where"] = doc["failure"]["where"]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    started = time.monotonic()
    record = _state["tests"].get(item.nodeid)
    handle: Any = getattr(getattr(item, "obj", None), "hypothesis", None)
    inner = getattr(handle, "inner_test", None)
    run = None
    if record is not None and inner is not None:
        run = _Run(item, record)
        handle.inner_test = run.wrap(inner)
    failures = os.environ.get("PCFUZZ_PROPERTY_FAILURES")
    try:
        yield
    finally:
        if run is not None:
            run.stop_recording()
            handle.inner_test = inner
            _state["runs"][item.nodeid] = run
            if failures:
                _write_capture(run, failures)
        if record is not None:
            record["seconds"] = round(time.monotonic() - started, 3)
            # a kit test counts its own examples (it runs hypothesis inside)
            for key, value in getattr(item, "user_properties", []):
                if key == "pcfuzz_examples" and isinstance(value, int):
                    record["examples"] = value


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    run = _state["runs"].get(item.nodeid)
    if report.when != "call" or run is None or not report.skipped:
        return
    longrepr = report.longrepr
    reason = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else ""
    if STOPPED in reason and run.examples and not run.failed:
        # every example it ran passed; the share ended: a pass with fewer examples
        report.outcome = "passed"
        report.longrepr = None
        run.record["stopped_because"] = (
            f"its time was up after {run.examples} examples (they cost more than measured)")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    record = _state["tests"].get(report.nodeid)
    if record is None:
        return
    if report.when == "call" or (report.when == "setup" and not report.passed):
        if report.skipped and "reason" not in record:
            longrepr = report.longrepr
            if isinstance(longrepr, tuple) and len(longrepr) == 3:
                record["reason"] = str(longrepr[2]).removeprefix("Skipped: ")
        record["result"] = report.outcome if report.when == "call" or report.skipped else "error"


def _summarize(stats: dict[str, Any]) -> dict[str, Any]:
    cases = 0
    valid = 0
    events: Counter[str] = Counter()
    generated = 0
    for phase in ("explicit", "reuse", "generate", "target", "shrink"):
        data = stats.get(f"{phase}-phase") or {}
        for case in data.get("test-cases", []):
            cases += 1
            valid += case.get("status") == "valid"
            if phase == "generate":
                generated += 1
                events.update(set(case.get("events", [])))
    return {
        "examples": cases,
        "valid": valid,
        "events": {
            k: round(100 * v / generated, 1)
            for k, v in sorted(events.items(), key=lambda kv: (-kv[1], kv[0]))[:12]
        } if generated else {},
        "stopped_because": stats.get("stopped-because", ""),
    }


def pytest_sessionfinish(session: pytest.Session) -> None:
    cov = _state.pop("coverage", None)
    if cov is not None:
        cov.stop()
        cov.save()
    tests: dict[str, Any] = _state["tests"]
    costs: dict[str, Any] = dict(_state["costs"])
    for nodeid, record in tests.items():
        stats = _state["stats"].get(nodeid)
        stopped = record.get("stopped_because")
        if stats:
            record.update(_summarize(stats))
        run = _state["runs"].get(nodeid)
        if run is not None and not int(record.get("examples") or 0):
            record["examples"] = run.examples
        if stopped:
            record["stopped_because"] = stopped
        examples = int(record.get("examples") or 0)
        if record["result"] == "passed" and examples > 0 and record["seconds"] > 0:
            old = costs.get(nodeid, {})
            # the fixed cost is at most the whole run: without this bound the assumed
            # 0.3 s stayed forever, and a test whose run takes 10 ms was planned one
            # example while the time left piled up on the last tests of the suite
            overhead = min(float(old.get("overhead_s", DEFAULT_OVERHEAD_S)), record["seconds"])
            per = max(1e-4, (record["seconds"] - min(overhead, record["seconds"] / 2)) / examples)
            costs[nodeid] = {"per_example_s": round(per, 5), "overhead_s": overhead,
                             "examples": examples, "seconds": record["seconds"]}
    suffix = _worker_suffix()
    report = os.environ.get("PCFUZZ_PROPERTY_REPORT")
    if report:
        Path(report + suffix).write_text(json.dumps(tests, indent=1) + "\n", encoding="utf-8")
    cost_path = os.environ.get("PCFUZZ_PROPERTY_COSTS")
    if cost_path and tests:
        Path(cost_path + suffix).parent.mkdir(parents=True, exist_ok=True)
        Path(cost_path + suffix).write_text(json.dumps(costs, indent=1, sort_keys=True) + "\n",
                                            encoding="utf-8")
