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
from pcfuzz.fuzz._report import render_svg, write_junit, write_markdown, write_summary
from pcfuzz.fuzz._targets import Layout, Target, corpus_stats, discover, subprocess_env
from pcfuzz.fuzz._triage import ReplayError, triage

__all__ = ["NightlyOptions", "run_nightly", "save_last_run"]

#: Installed (no checkout), the nightly example database defaults to this, relative
#: to the current directory.
INSTALLED_HYPOTHESIS_DB = Path(".pcfuzz") / "hypothesis-db"
QUICK_MAX_EXAMPLES = 20
_EXAMPLE = re.compile(r"^(Falsifying example|Failing test case|Falsifying explicit example)",
                      re.MULTILINE)
#: Below this budget, ``--properties auto`` means ``quick``; at or above it, ``full``.
FULL_PROPERTIES_FROM_S = 600


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


def _fuzz_one(
    target: Target, budget: float, opts: NightlyOptions, label: str, stream: IO[str]
) -> dict[str, Any]:
    report = opts.report_dir
    crash_dir = report / "crashes" / target.fuzzer
    log = report / "logs" / f"{target.fuzzer}.log"
    files_before, bytes_before = corpus_stats(*target.corpus_dirs())
    result = Campaign(
        target,
        budget,
        jobs=opts.jobs,
        artifacts=crash_dir,
        log_path=log,
        label=label,
        progress=stream,
        keep_going=True,
    ).run()
    artifacts = [Path(a) for a in result.artifacts if Path(a).is_file()]
    crashes: list[dict[str, Any]] = []
    error = result.error
    if artifacts:
        known = known_fingerprints(target.regressions)
        try:
            groups, _gone = triage(
                target, artifacts, out_dir=crash_dir / "minimized", minimize_budget_s=10
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
                    "new": g.fingerprint not in known,
                }
            )
        if not groups and error is None:
            error = "crash artifacts were written but none reproduces on replay (flaky?)"
    elif result.executions == 0 and error is None:
        error = f"no executions (exit {result.returncode}): {_tail(log)}"
    plot = report / "plots" / f"{target.fuzzer}.svg"
    plot.parent.mkdir(parents=True, exist_ok=True)
    plot.write_text(
        render_svg(f"{target.name}: coverage and corpus", result.samples, budget),
        encoding="utf-8",
    )
    save_last_run(target, result, len(crashes))
    files_after, bytes_after = corpus_stats(*target.corpus_dirs())
    status = "crash" if crashes else ("error" if error else "ok")
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
        "minimize": {
            "status": "skipped",
            "detail": "not run",
            "files_before": files_after,
            "files_after": files_after,
            "bytes_before": bytes_after,
            "bytes_after": bytes_after,
            "features_before": None,
            "features_after": None,
        },
        "plot": _rel(plot, report),
        "log": _rel(log, report),
        "error": error,
    }


def _property_tests(opts: NightlyOptions) -> list[str]:
    """``--property-tests``, else the checkout's ``tests/``; a wheel ships no tests."""
    checkout = checkout_root()
    return opts.property_tests or ([str(checkout / "tests")] if checkout is not None else [])


def _properties_mode(opts: NightlyOptions) -> str:
    if not _property_tests(opts):
        return "off"
    if opts.properties != "auto":
        return opts.properties
    return "full" if opts.budget_s >= FULL_PROPERTIES_FROM_S else "quick"


def _run_properties(
    opts: NightlyOptions, layout: Layout, mode: str, budget: float, stream: IO[str]
) -> tuple[dict[str, Any], list[ET.Element]]:
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
    }
    if mode == "off":
        return info, []
    junit = opts.report_dir / "properties-junit.xml"
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
            "PCFUZZ_PROPERTY_BUDGET_S": str(budget),
            "PCFUZZ_NIGHTLY": "1",
            "PCFUZZ_PROPERTIES_ONLY": "1",
            # a different order each night: a budget cut leaves out a different tail
            "PCFUZZ_PROPERTY_SHUFFLE_SEED": dt.date.today().isoformat(),
        },
    )
    env.pop("PYTHONHASHSEED", None)
    if mode == "quick":
        env["PCFUZZ_PROPERTY_MAX_EXAMPLES"] = str(QUICK_MAX_EXAMPLES)
    log = opts.report_dir / "logs" / "properties.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    stream.write(f"[properties] pytest, profile nightly ({mode}), budget {budget:.0f}s\n")
    stream.flush()
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            cmd, cwd=base, env=env, stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        try:
            # Tests that would start after the budget skip themselves; a run still
            # going well past it (collection included) gets SIGINT, and pytest still
            # writes its JUnit file.
            proc.wait(timeout=budget + max(60.0, budget / 2))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    info["duration_s"] = round(time.monotonic() - started, 2)
    info["exit_code"] = proc.returncode
    cases: list[ET.Element] = []
    if junit.is_file():
        cases = list(ET.parse(junit).getroot().iter("testcase"))
    for case in cases:
        info["tests"] += 1
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is not None:
            info["failed" if bad.tag == "failure" else "errors"] += 1
            message = (bad.get("message") or "")[:500]
            text = bad.text or ""
            found = _EXAMPLE.search(text)
            if found and found.group(0) not in message:  # keep hypothesis's reproduction
                example = text[found.start():].split("\n\n", 1)[0]
                message = f"{message}\n{example[:1000]}"
            info["failures"].append({"name": name, "message": message})
        elif case.find("skipped") is not None:
            info["skipped"] += 1
        else:
            info["passed"] += 1
    if not cases and proc.returncode not in (0, 5):
        info["errors"] += 1
        info["failures"].append({"name": "pytest", "message": _tail(log)})
    stream.write(
        f"[properties] {info['tests']} tests: {info['passed']} passed, {info['failed']} failed, "
        f"{info['errors']} errors, {info['skipped']} skipped in {info['duration_s']:.0f}s\n"
    )
    return info, cases


def run_nightly(layout: Layout, opts: NightlyOptions, stream: IO[str] = sys.stderr) -> int:
    """Run the whole nightly job; returns the exit status (1 on a new crash, a property
    failure or a target that could not run; else 0)."""
    from pcfuzz.fuzz._targets import resolve

    started_wall = _now()
    started = time.monotonic()
    report = opts.report_dir
    for sub in ("crashes", "logs", "plots"):
        shutil.rmtree(report / sub, ignore_errors=True)
    report.mkdir(parents=True, exist_ok=True)
    targets = [resolve(layout, t) for t in opts.targets] if opts.targets else discover(layout)
    mode = _properties_mode(opts)
    if mode == "off":
        prop_budget = 0.0
    elif opts.property_budget_s is not None:
        prop_budget = opts.property_budget_s
    else:
        prop_budget = opts.budget_s * 0.25
    fuzz_budget = max(0.0, opts.budget_s - prop_budget)
    per_target = max(5.0, fuzz_budget / len(targets)) if targets else 0.0
    stream.write(
        f"pcfuzz nightly: {len(targets)} targets x {per_target:.0f}s, properties {mode} "
        f"{prop_budget:.0f}s, jobs {opts.jobs}, report {report}\n"
    )
    if opts.properties != "off" and not _property_tests(opts):
        stream.write("pcfuzz nightly: no property suite (an installed pcfuzz ships no tests; "
                     "pass --property-tests PATH)\n")
    rows = []
    for i, target in enumerate(targets, 1):
        label = f"[{i}/{len(targets)} {target.name}]"
        rows.append(_fuzz_one(target, per_target, opts, label, stream))
    props, cases = _run_properties(opts, layout, mode, prop_budget, stream)
    if opts.minimize:
        for target, row in zip(targets, rows, strict=True):
            stream.write(f"[minimize] {target.name} ...\n")
            stream.flush()
            res = minimize_corpus(target, target.work_corpus, [target.seed_corpus])
            row["minimize"] = res.as_dict()
            if res.status == "swapped":
                row["corpus_after"] = {"files": res.files_after, "bytes": res.bytes_after}
            stream.write(f"[minimize] {res.line(target.name)}\n")
    new_crashes = sum(1 for r in rows for c in r["crashes"] if c["new"])
    failed = new_crashes > 0 or props["failed"] > 0 or props["errors"] > 0
    failed = failed or any(r["status"] == "error" for r in rows)
    summary: dict[str, Any] = {
        "format": "pcfuzz-summary/1",
        "started": started_wall,
        "finished": _now(),
        "duration_s": round(time.monotonic() - started, 1),
        "budget_s": opts.budget_s,
        "jobs": opts.jobs,
        "tools": tool_versions(),
        "exit_status": 1 if failed else 0,
        "new_crashes": new_crashes,
        "targets": rows,
        "properties": props,
    }
    write_summary(report, summary)
    md = write_markdown(report, summary)
    write_junit(report, summary, cases)
    sys.stdout.write(md.read_text(encoding="utf-8"))
    sys.stdout.flush()
    stream.write(
        f"pcfuzz nightly: {new_crashes} new crash(es); report in {report}/summary.md\n"
    )
    return int(summary["exit_status"])
