"""The nightly job: fuzz every target for its share of the budget, run the property
suite under the ``nightly`` hypothesis profile, minimize the working corpora, and
write the report directory (summary.json, summary.md, junit.xml, one SVG per target).
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pcfuzz._data import checkout_root
from pcfuzz.fuzz._corpus import minimize_corpus
from pcfuzz.fuzz._libfuzzer import Campaign, CampaignResult
from pcfuzz.fuzz._regressions import known_fingerprints, tool_versions
from pcfuzz.fuzz._report import (
    append_history,
    findings,
    render_svg,
    write_junit,
    write_markdown,
    write_summary,
)
from pcfuzz.fuzz._rules import contracts_dir, coverage_available, coverage_prefix
from pcfuzz.fuzz._targets import Layout, Target, corpus_stats, discover, subprocess_env
from pcfuzz.fuzz._triage import ReplayError, bug_fingerprint, code_frame, triage

__all__ = ["NightlyOptions", "run_nightly", "save_last_run"]

#: Installed (no checkout), the nightly example database defaults to this, relative
#: to the current directory.
INSTALLED_HYPOTHESIS_DB = Path(".pcfuzz") / "hypothesis-db"
QUICK_MAX_EXAMPLES = 20
_EXAMPLE = re.compile(r"^(Falsifying example|Failing test case|Falsifying explicit example)",
                      re.MULTILINE)


@dataclass
class NightlyOptions:
    """Options of ``pcfuzz nightly`` (see ``pcfuzz nightly --help``)."""

    budget_s: float = 60
    jobs: int = 1
    report_dir: Path = Path("reports/latest")
    properties: str = "auto"  # auto | quick | full | off
    property_budget_s: float | None = None
    property_tests: list[str] = field(default_factory=list)
    hypothesis_db: str | None = None
    minimize: bool = True
    targets: list[str] = field(default_factory=list)
    #: line/branch coverage of contracts/ and the transition replay (needs coverage.py)
    coverage: bool = True
    #: the mutants phase: None = on from MUTANTS_MIN_BUDGET_S up
    mutants: bool | None = None
    #: where each night's summary is appended (default: <report dir>/../history.jsonl)
    history: Path | None = None
    #: extra environment for the property run (tests use it)
    extra_env: dict[str, str] = field(default_factory=dict)


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def save_last_run(target: Target, result: CampaignResult, crashes: int) -> None:
    """Remember the figures ``pcfuzz list`` shows."""
    target.work.mkdir(parents=True, exist_ok=True)
    target.last_run_path.write_text(
        json.dumps(
            {
                "date": _now(),
                "duration_s": result.duration_s,
                "executions": result.executions,
                "exec_per_s": result.exec_per_s,
                "ft": result.ft,
                "cov": result.cov,
                "corpus_files": result.corpus_files,
                "crashes": crashes,
            }
        )
        + "\n",
        encoding="utf-8",
    )


def _rel(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return path.name


def _tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(text[-lines:])[-600:]


#: Shares of the budget, in order (a phase that ends early leaves its time to the next).
PHASE_SHARES = {"fuzzing": 0.55, "properties": 0.30, "minimization": 0.10, "report": 0.05}
#: Optional phases, each taking its share from fuzzing (placed after properties).
COVERAGE_SHARE = 0.04
MUTANTS_SHARE = 0.20
#: Below this budget the mutants phase is off unless asked for (--mutants).
MUTANTS_MIN_BUDGET_S = 300.0
#: A target whose slot is shorter than this is not started (named as skipped).
MIN_TARGET_SLOT_S = 2.0
#: A campaign still running at its slot's end gets SIGTERM this long before it, so
#: that libFuzzer's final figures (or the SIGKILL after them) land inside the slot.
STOP_GRACE_S = 1.0
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
#: Start-up estimate (interpreter, instrumentation, loading the corpus) before the
#: first campaign of the night has measured it.
STARTUP_GUESS_S = 2.5


class Clock:
    """The night's phases: each has a planned share and a hard end; a phase that
    finishes early leaves its time to the phases after it."""

    def __init__(self, budget_s: float, shares: dict[str, float]) -> None:
        self.started = time.monotonic()
        self.budget_s = budget_s
        total = sum(shares.values()) or 1.0
        self.planned = {k: budget_s * v / total for k, v in shares.items()}
        self.ends: dict[str, float] = {}
        mark = self.started
        for name, seconds in self.planned.items():
            mark += seconds
            self.ends[name] = mark
        self.used: dict[str, float] = {}
        self._phase: tuple[str, float] | None = None

    def begin(self, name: str) -> float:
        """Start ``name``; returns its hard end (``time.monotonic()`` value)."""
        self._phase = (name, time.monotonic())
        return self.ends[name]

    def end(self) -> None:
        if self._phase is not None:
            name, began = self._phase
            self.used[name] = self.used.get(name, 0.0) + time.monotonic() - began
            self._phase = None

    def left(self, name: str) -> float:
        return self.ends[name] - time.monotonic()

    def rows(self) -> list[dict[str, Any]]:
        return [
            {"name": k, "planned_s": round(v, 1), "used_s": round(self.used.get(k, 0.0), 1)}
            for k, v in self.planned.items()
        ]


def _fuzz_one(
    target: Target,
    budget: float,
    opts: NightlyOptions,
    label: str,
    stream: IO[str],
    *,
    deadline: float | None = None,
    startup_s: float = 0.0,
) -> dict[str, Any]:
    report = opts.report_dir
    crash_dir = report / "crashes" / target.fuzzer
    log = report / "logs" / f"{target.fuzzer}.log"
    files_before, bytes_before = corpus_stats(*target.corpus_dirs())
    # libFuzzer counts -max_total_time from the end of its start-up: leave that out.
    fuzz_s = max(1.0, budget - startup_s)
    result = Campaign(
        target,
        fuzz_s,
        jobs=opts.jobs,
        artifacts=crash_dir,
        log_path=log,
        label=label,
        progress=stream,
        keep_going=True,
        deadline=deadline,
    ).run()
    artifacts = [Path(a) for a in result.artifacts if Path(a).is_file()]
    crashes: list[dict[str, Any]] = []
    error = result.error
    if artifacts:
        known = known_fingerprints(target.regressions)
        left = 10.0 if deadline is None else deadline - time.monotonic()
        try:
            groups, _gone = triage(
                target, artifacts, out_dir=crash_dir / "minimized",
                minimize_budget_s=max(1.0, min(10.0, left)), minimize=left > 2,
            )
        except ReplayError as exc:
            groups, error = [], f"triage failed: {exc}"[:600]
        for g in groups:
            keep = g.minimized or g.smallest or g.artifacts[0]
            crashes.append(
                {
                    "fingerprint": g.fingerprint,
                    "kind": g.crash.kind,
                    "exception": g.crash.exception,
                    "message": g.crash.message,
                    "frames": g.top_frames,
                    "artifacts": len(g.artifacts),
                    "input": _rel(keep, report),
                    "input_path": str(keep.resolve()),
                    "target_path": str(target.path),
                    "time_s": _crash_time(result, g.artifacts),
                    "new": g.fingerprint not in known,
                    "bug": bug_fingerprint(g.crash.exception, g.crash.message, g.crash.frames),
                    "where": code_frame(g.crash.frames),
                }
            )
        if not groups and error is None:
            error = "crash artifacts were written but none reproduces on replay (flaky?)"
    elif result.executions == 0 and error is None and result.stopped_by_deadline:
        error = (f"not run: its {budget:.1f}s slot ended during start-up, before the first "
                 "execution (budget too small for this many targets)")
    elif result.executions == 0 and error is None:
        error = f"no executions (exit {result.returncode}): {_tail(log)}"
    plot = report / "plots" / f"{target.fuzzer}.svg"
    plot.parent.mkdir(parents=True, exist_ok=True)
    plot.write_text(
        render_svg(
            f"{target.name}: coverage and corpus", result.samples, budget,
            crashes=[c["time_s"] for c in crashes if c["time_s"] is not None],
        ),
        encoding="utf-8",
    )
    save_last_run(target, result, len(crashes))
    files_after, bytes_after = corpus_stats(*target.corpus_dirs())
    status = "crash" if crashes else ("error" if error else "ok")
    if status == "error" and result.executions == 0 and result.stopped_by_deadline:
        status = "skipped"
    return {
        "name": target.name,
        "fuzzer": target.fuzzer,
        "status": status,
        "budget_s": round(budget, 1),
        "duration_s": result.duration_s,
        "executions": result.executions,
        "exec_per_s": result.exec_per_s,
        "coverage": {"cov": result.cov, "ft": result.ft},
        "corpus_before": {"files": files_before, "bytes": bytes_before},
        "corpus_after": {"files": files_after, "bytes": bytes_after},
        "new_inputs": max(0, files_after - files_before),
        "stopped_at_crash": result.stopped_at_crash,
        "crashes": crashes,
        "minimize": _minimize_not_run(files_after, bytes_after),
        "plot": _rel(plot, report),
        "log": _rel(log, report),
        "error": error,
    }


def _property_tests(opts: NightlyOptions) -> list[str]:
    """``--property-tests``, else the checkout's ``tests/``; a wheel ships no tests."""
    checkout = checkout_root()
    return opts.property_tests or ([str(checkout / "tests")] if checkout is not None else [])


def _crash_time(result: CampaignResult, artifacts: list[Path]) -> float | None:
    """Seconds into the campaign when the first of ``artifacts`` was written."""
    times = []
    for a in artifacts:
        try:
            times.append(a.stat().st_mtime)
        except OSError:
            continue
    if not times or result.started_wall is None:
        return None
    return round(max(0.0, min(times) - result.started_wall), 1)


def _minimize_not_run(files: int, size: int, detail: str = "not run") -> dict[str, Any]:
    return {
        "status": "skipped",
        "detail": detail,
        "files_before": files,
        "files_after": files,
        "bytes_before": size,
        "bytes_after": size,
        "features_before": None,
        "features_after": None,
    }


def _skipped_target(target: Target, opts: NightlyOptions, reason: str) -> dict[str, Any]:
    files, size = corpus_stats(*target.corpus_dirs())
    plot = opts.report_dir / "plots" / f"{target.fuzzer}.svg"
    plot.parent.mkdir(parents=True, exist_ok=True)
    plot.write_text(render_svg(f"{target.name}: not run ({reason})", [], 1.0), encoding="utf-8")
    return {
        "name": target.name,
        "fuzzer": target.fuzzer,
        "status": "skipped",
        "budget_s": 0.0,
        "duration_s": 0.0,
        "executions": 0,
        "exec_per_s": 0.0,
        "coverage": {"cov": 0, "ft": 0},
        "corpus_before": {"files": files, "bytes": size},
        "corpus_after": {"files": files, "bytes": size},
        "new_inputs": 0,
        "stopped_at_crash": False,
        "crashes": [],
        "minimize": _minimize_not_run(files, size),
        "plot": _rel(plot, opts.report_dir),
        "log": "",
        "error": reason,
    }


def _properties_mode(opts: NightlyOptions) -> str:
    if not _property_tests(opts):
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
    """``tests/test_x.py::test_y`` and JUnit's ``tests.test_x::test_y`` alike."""
    path, _, name = nodeid.partition("::")
    path = path.removesuffix(".py").replace("/", ".")
    return f"{path}::{name}"


def _run_properties(
    opts: NightlyOptions, layout: Layout, mode: str, deadline: float, stream: IO[str],
    coverage_data: Path | None = None,
) -> tuple[dict[str, Any], list[ET.Element]]:
    """Run the property suite until ``deadline`` (``time.monotonic()``): the plugin sizes
    each test's examples so that all of them run; at the deadline pytest gets SIGINT
    (it still writes its JUnit file), 3 s later SIGKILL."""
    budget = max(0.0, deadline - time.monotonic())
    checkout = checkout_root()
    base = checkout if checkout is not None else Path.cwd()
    db = opts.hypothesis_db or os.environ.get("PCFUZZ_HYPOTHESIS_DB") or str(
        checkout / ".hypothesis" / "nightly-db" if checkout is not None
        else Path.cwd() / INSTALLED_HYPOTHESIS_DB
    )
    tests = _property_tests(opts)
    info: dict[str, Any] = {
        "mode": mode,
        "profile": "nightly",
        "database": db if not Path(db).is_absolute() else _rel(Path(db), base),
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
        "table": [],
    }
    if mode == "off":
        return info, []
    junit = opts.report_dir / "properties-junit.xml"
    per_test = opts.report_dir / "logs" / "properties.json"
    costs = layout.work_dir / "property_costs.json"
    for stale in [junit, *per_test.parent.glob(per_test.name + "*")]:
        stale.unlink(missing_ok=True)
    failures_dir = opts.report_dir / "property-failures"
    shutil.rmtree(failures_dir, ignore_errors=True)
    cmd = [
        sys.executable, "-m", "pytest", "-p", "pcfuzz.fuzz._pytest_budget", "-p", "no:cacheprovider",
        "-q", "--hypothesis-show-statistics", f"--junitxml={junit}",
    ]
    if opts.jobs > 1 and importlib.util.find_spec("xdist") is not None:
        cmd += ["-n", str(opts.jobs)]
    cmd += tests
    started = time.monotonic()
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
            "PCFUZZ_PROPERTY_FAILURES": str(failures_dir),
            "PCFUZZ_PROPERTY_COSTS": str(costs),
            "PCFUZZ_PROPERTY_REPORT": str(per_test),
            "PCFUZZ_NIGHTLY": "1",
            "PCFUZZ_PROPERTIES_ONLY": "1",
        },
    )
    env.pop("PYTHONHASHSEED", None)
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
            proc.wait(timeout=max(0.1, deadline - PYTEST_STOP_S - time.monotonic()))
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
                    capture=_rel(Path(record["capture"]), opts.report_dir),
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
        info["table"].append(_table_row(name, result, record, case))
    # A test pytest never reached (the run was stopped) is skipped too, and named.
    for nodeid, record in records.items():
        name = _short(nodeid)
        if name not in seen and record.get("result") == "skipped":
            info["tests"] += 1
            info["skipped"] += 1
            info["skipped_tests"].append({"name": name, "reason": record.get("reason", "")})
            info["table"].append(_table_row(name, "skipped", record, None))
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
        info["failures"].append({"name": "pytest", "message": _tail(log)})
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


def _coverage_off(status: str) -> dict[str, Any]:
    return {"status": status, "line_percent": None, "branch_percent": None, "packages": [],
            "transitions": {}}


def _run_coverage(
    opts: NightlyOptions, layout: Layout, data_file: Path, deadline: float, stream: IO[str]
) -> dict[str, Any]:
    """Replay the final corpora under coverage (appending to the property suite's data),
    tracing the transitions the streams took; then the per-package figures."""
    from pcfuzz.fuzz._rules import summarize

    out = opts.report_dir / "logs" / "transitions.json"
    out.unlink(missing_ok=True)
    # leave a few seconds of the share for `coverage json`
    replay_s = max(0.0, deadline - time.monotonic() - 4.0)
    stream.write(f"[coverage] replaying the corpora ({replay_s:.0f}s) ...\n")
    stream.flush()
    cmd = [*coverage_prefix(data_file, append=True), "-m", "pcfuzz.fuzz._rules", str(out),
           str(layout.fuzz_dir), str(layout.work_dir), str(max(0.0, replay_s - 2.0))]
    log = opts.report_dir / "logs" / "coverage.log"
    transitions: dict[str, Any] = {}
    workers = sorted(data_file.parent.glob(data_file.name + ".gw*"))
    if workers:  # pytest-xdist workers each wrote their own file
        subprocess.run([sys.executable, "-m", "coverage", "combine", "--append",
                        f"--data-file={data_file}", *map(str, workers)],
                       capture_output=True, check=False, timeout=60)
    if replay_s > 1.0:
        with log.open("w", encoding="utf-8") as fh:
            try:
                subprocess.run(cmd, env=subprocess_env(layout), stdout=fh, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, timeout=replay_s, check=False)
            except subprocess.TimeoutExpired:
                fh.write("replay stopped at the end of its share\n")
        try:
            transitions = json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            transitions = {}
    if not data_file.is_file():
        info = _coverage_off("no data (the property suite did not run under coverage)")
    else:
        try:
            info = summarize(data_file, opts.report_dir / "logs" / "coverage.json")
        except (subprocess.SubprocessError, OSError, ValueError, KeyError) as exc:
            info = _coverage_off(f"failed: {exc}"[:200])
    info["transitions"] = transitions
    stream.write(f"[coverage] contracts/ lines {info['line_percent']}%, "
                 f"branches {info['branch_percent']}%\n")
    return info


def _shares(opts: NightlyOptions, mode: str) -> dict[str, float]:
    shares = dict(PHASE_SHARES)
    if mode == "off":
        shares["fuzzing"] += shares.pop("properties")
    elif opts.property_budget_s is not None and opts.budget_s > 0:
        rest = 1.0 - shares["properties"]
        shares = {k: v / rest * (1 - opts.property_budget_s / opts.budget_s)
                  for k, v in shares.items() if k != "properties"}
        shares["properties"] = opts.property_budget_s / opts.budget_s
        order = list(PHASE_SHARES)
        shares = {k: shares[k] for k in order if k in shares}
    if not opts.minimize:
        shares["fuzzing"] += shares.pop("minimization")
    extra = {}
    if opts.coverage and coverage_available():
        extra["coverage"] = COVERAGE_SHARE
    if _mutants_on(opts):
        extra["mutants"] = MUTANTS_SHARE
    if extra:
        shares["fuzzing"] -= sum(extra.values())
        order = [k for k in shares if k in ("fuzzing", "properties")]
        shares = {**{k: shares[k] for k in order}, **extra,
                  **{k: v for k, v in shares.items() if k not in order}}
    return shares


def _mutants_on(opts: NightlyOptions) -> bool:
    return opts.budget_s >= MUTANTS_MIN_BUDGET_S if opts.mutants is None else opts.mutants


#: Per target, what its last minimization cost and which corpus it left.
MINIMIZE_STATE = "minimize.json"
#: Stopping a libFuzzer process group at a step's time limit (SIGTERM, its exit).
MINIMIZE_STOP_S = 1.5
#: Never measured: one target process start-up per step (3 steps), and per input.
MINIMIZE_STEP_S = 2.5
MINIMIZE_INPUT_S = 0.01


def _corpus_digest(target: Target) -> str:
    """Names and sizes of every file of the target's corpora (seed and working)."""
    import hashlib

    h = hashlib.sha1(usedforsecurity=False)
    for d in target.corpus_dirs():
        if d.is_dir():
            for f in sorted(d.iterdir()):
                if f.is_file():
                    h.update(f"{d.name}/{f.name}:{f.stat().st_size}\n".encode())
    return h.hexdigest()


def _minimize_state(target: Target) -> dict[str, Any]:
    try:
        loaded = json.loads((target.work / MINIMIZE_STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _minimize_estimate(state: dict[str, Any], files: int) -> float:
    """Seconds a minimization of ``files`` inputs will take: the last one's cost scaled
    by the corpus size (start-ups do not scale: half of it is taken as fixed)."""
    seconds, before = state.get("seconds"), state.get("files")
    if isinstance(seconds, (int, float)) and isinstance(before, int) and before > 0:
        return float(seconds) * (0.5 + 0.5 * files / before)
    return 3 * MINIMIZE_STEP_S + files * MINIMIZE_INPUT_S


def _minimize_phase(
    targets: list[Target], rows: list[dict[str, Any]], end: float, stream: IO[str]
) -> None:
    """Minimize the working corpora until ``end``: a corpus unchanged since its last
    minimization is left alone; the others go least recently minimized first, each only if its
    estimated cost (its last minimization's, scaled) fits what is left, so the phase
    ends within its share and every target not minimized is named with the reason."""
    todo = [(t, r) for t, r in zip(targets, rows, strict=True) if r["status"] != "skipped"]
    # the longest unminimized first (never: first of all), then most new inputs: a
    # share too small for every target rotates through them night after night
    todo.sort(key=lambda tr: (float(_minimize_state(tr[0]).get("when") or 0.0),
                              -int(tr[1].get("new_inputs") or 0)))
    for target, row in todo:
        files, size = corpus_stats(*target.corpus_dirs())
        state = _minimize_state(target)
        digest = _corpus_digest(target)
        if state.get("digest") == digest:
            row["minimize"] = _minimize_not_run(files, size,
                                                "unchanged since its last minimization")
            continue
        left = end - time.monotonic()
        left -= min(MINIMIZE_STOP_S, 0.3 * max(0.0, left))
        need = _minimize_estimate(state, files)
        # never measured: it gets what is left (the try measures it)
        if need > left and ("seconds" in state or left < 0.5):
            row["minimize"] = _minimize_not_run(
                files, size, f"not minimized: needs about {need:.0f}s, "
                f"{max(0.0, left):.0f}s left in the share")
            stream.write(f"[minimize] {target.name}: {row['minimize']['detail']}\n")
            continue
        stream.write(f"[minimize] {target.name} ...\n")
        stream.flush()
        res = minimize_corpus(target, target.work_corpus, [target.seed_corpus],
                              time_limit_s=left)
        row["minimize"] = res.as_dict()
        if res.status == "swapped":
            row["corpus_after"] = {"files": res.files_after, "bytes": res.bytes_after}
        cut = res.detail.startswith("out of time")
        (target.work / MINIMIZE_STATE).write_text(json.dumps({
            # cut short: the time it had is a lower bound of what it needs
            "digest": None if cut else _corpus_digest(target),
            "seconds": max(res.seconds, 1.5 * need) if cut else res.seconds,
            "files": files, "steps": res.steps, "when": time.time()}) + "\n",
            encoding="utf-8")
        stream.write(f"[minimize] {res.line(target.name)} in {res.seconds:.1f}s\n")


def run_nightly(layout: Layout, opts: NightlyOptions, stream: IO[str] = sys.stderr) -> int:
    """Run the whole nightly job; returns the exit status (1 on a new crash, a property
    failure or a target that could not run; else 0)."""
    from pcfuzz.fuzz._targets import resolve

    started_wall = _now()
    report = opts.report_dir
    for sub in ("crashes", "logs", "plots"):
        shutil.rmtree(report / sub, ignore_errors=True)
    report.mkdir(parents=True, exist_ok=True)
    targets = [resolve(layout, t) for t in opts.targets] if opts.targets else discover(layout)
    mode = _properties_mode(opts)
    clock = Clock(opts.budget_s, _shares(opts, mode))
    stream.write(
        f"pcfuzz nightly: {len(targets)} targets, budget {opts.budget_s:.0f}s ("
        + ", ".join(f"{k} {v:.0f}s" for k, v in clock.planned.items())
        + f"), properties {mode}, jobs {opts.jobs}, report {report}\n"
    )
    if opts.properties != "off" and not _property_tests(opts):
        stream.write("pcfuzz nightly: no property suite (an installed pcfuzz ships no tests; "
                     "pass --property-tests PATH)\n")
    rows: list[dict[str, Any]] = []
    fuzz_end = clock.begin("fuzzing")
    startup = STARTUP_GUESS_S
    for i, target in enumerate(targets, 1):
        slot = (fuzz_end - time.monotonic()) / (len(targets) - i + 1)
        label = f"[{i}/{len(targets)} {target.name}]"
        if slot < MIN_TARGET_SLOT_S:
            reason = f"not run: {slot:.1f}s left for it (budget too small)"
            stream.write(f"{label} {reason}\n")
            rows.append(_skipped_target(target, opts, reason))
            continue
        began = time.monotonic()
        row = _fuzz_one(target, slot, opts, label, stream,
                        deadline=began + slot - STOP_GRACE_S, startup_s=startup)
        if row["executions"] and not row["crashes"]:
            # what this target's start-up took, to leave out of the next -max_total_time
            fuzzed = max(1.0, slot - startup)
            startup = min(slot / 2, max(0.5, row["duration_s"] - fuzzed + startup))
        rows.append(row)
    clock.end()
    cov_data = opts.report_dir / "logs" / ".coverage" if "coverage" in clock.planned else None
    props, cases = _run_properties(opts, layout, mode, clock.begin("properties"), stream,
                                   cov_data) \
        if "properties" in clock.planned else _run_properties(opts, layout, "off", 0.0, stream)
    clock.end()
    if cov_data is not None:
        coverage = _run_coverage(opts, layout, cov_data, clock.begin("coverage"), stream)
        clock.end()
    else:
        coverage = _coverage_off("off" if not opts.coverage else "unavailable (install the "
                                 "harness extra: coverage)")
    mutants: dict[str, Any] = {"status": "off", "killed": 0, "total": 0, "survivors": []}
    if "mutants" in clock.planned:
        from pcfuzz.fuzz._mutants import run_mutants

        end = clock.begin("mutants")
        mutants = run_mutants(budget_s=max(0.0, end - time.monotonic() - 2.0), stream=stream,
                              env=subprocess_env(layout))
        clock.end()
    if opts.minimize:
        _minimize_phase(targets, rows, clock.begin("minimization"), stream)
        clock.end()
    clock.begin("report")
    new_crashes = sum(1 for r in rows for c in r["crashes"] if c["new"])
    failed = new_crashes > 0 or props["failed"] > 0 or props["errors"] > 0
    failed = failed or any(r["status"] == "error" for r in rows)
    summary: dict[str, Any] = {
        "format": "pcfuzz-summary/1",
        "started": started_wall,
        "finished": _now(),
        "duration_s": 0.0,
        "budget_s": opts.budget_s,
        "jobs": opts.jobs,
        "tools": tool_versions(),
        "exit_status": 1 if failed else 0,
        "new_crashes": new_crashes,
        "phases": [],
        "targets": rows,
        "properties": props,
        "coverage": coverage,
        "mutants": mutants,
    }
    summary["findings"] = findings(summary)
    md = write_markdown(report, summary)  # first pass: a report exists even if cut short
    write_junit(report, summary, cases)
    clock.end()
    summary["phases"] = clock.rows()
    summary["duration_s"] = round(time.monotonic() - clock.started, 1)
    summary["finished"] = _now()
    write_summary(report, summary)
    history = opts.history or report.parent / "history.jsonl"
    append_history(history, summary)
    md = write_markdown(report, summary, history)
    sys.stdout.write(md.read_text(encoding="utf-8"))
    sys.stdout.flush()
    stream.write(
        f"pcfuzz nightly: {new_crashes} new crash(es); report in {report}/summary.md\n"
    )
    return int(summary["exit_status"])
