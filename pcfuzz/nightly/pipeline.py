"""The nightly job: fuzz every target for its share of the budget, run the property
suite under the ``nightly`` hypothesis profile, minimize the working corpora, and
write the report directory (summary.json, summary.md, junit.xml, one SVG per target).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

from pcfuzz.engine.regressions import tool_versions
from pcfuzz.engine.targets import Layout, discover, subprocess_env
from pcfuzz.nightly.fuzzing import fuzz_one, skipped_target
from pcfuzz.nightly.minimization import minimize_phase
from pcfuzz.nightly.plan import (
    MIN_TARGET_SLOT_S,
    STARTUP_GUESS_S,
    STOP_GRACE_S,
    Clock,
    NightlyOptions,
    shares,
)
from pcfuzz.nightly.properties import properties_mode, property_tests, run_properties
from pcfuzz.nightly.report import (
    append_history,
    findings,
    now,
    write_junit,
    write_markdown,
    write_summary,
)
from pcfuzz.nightly.transitions import coverage_prefix

__all__ = ["NightlyOptions", "run_nightly"]


def _coverage_off(status: str) -> dict[str, Any]:
    return {"status": status, "line_percent": None, "branch_percent": None, "packages": [],
            "transitions": {}}


def _run_coverage(
    opts: NightlyOptions, layout: Layout, data_file: Path, deadline: float, stream: IO[str]
) -> dict[str, Any]:
    """Replay the final corpora under coverage (appending to the property suite's data),
    tracing the transitions the streams took; then the per-package figures."""
    from pcfuzz.nightly.transitions import summarize

    out = opts.report_dir / "logs" / "transitions.json"
    out.unlink(missing_ok=True)
    # leave a few seconds of the share for `coverage json`
    replay_s = max(0.0, deadline - time.monotonic() - 4.0)
    stream.write(f"[coverage] replaying the corpora ({replay_s:.0f}s) ...\n")
    stream.flush()
    cmd = [*coverage_prefix(data_file, append=True), "-m", "pcfuzz.nightly.transitions", str(out),
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


def run_nightly(layout: Layout, opts: NightlyOptions, stream: IO[str] | None = None) -> int:
    """Run the whole nightly job; returns the exit status (1 on a new crash, a property
    failure or a target that could not run; else 0). Progress goes to ``stream``
    (default: the standard error of the moment)."""
    if stream is None:
        stream = sys.stderr
    from pcfuzz.engine.targets import resolve

    started_wall = now()
    report = opts.report_dir
    for sub in ("crashes", "logs", "plots"):
        shutil.rmtree(report / sub, ignore_errors=True)
    report.mkdir(parents=True, exist_ok=True)
    targets = [resolve(layout, t) for t in opts.targets] if opts.targets else discover(layout)
    mode = properties_mode(opts)
    clock = Clock(opts.budget_s, shares(opts, mode))
    stream.write(
        f"pcfuzz nightly: {len(targets)} targets, budget {opts.budget_s:.0f}s ("
        + ", ".join(f"{k} {v:.0f}s" for k, v in clock.planned.items())
        + f"), properties {mode}, jobs {opts.jobs}, report {report}\n"
    )
    if opts.properties != "off" and not property_tests(opts):
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
            rows.append(skipped_target(target, opts, reason))
            continue
        began = time.monotonic()
        row = fuzz_one(target, slot, opts, label, stream,
                        deadline=began + slot - STOP_GRACE_S, startup_s=startup)
        if row["executions"] and not row["crashes"]:
            # what this target's start-up took, to leave out of the next -max_total_time
            fuzzed = max(1.0, slot - startup)
            startup = min(slot / 2, max(0.5, row["duration_s"] - fuzzed + startup))
        rows.append(row)
    clock.end()
    cov_data = opts.report_dir / "logs" / ".coverage" if "coverage" in clock.planned else None
    props, cases = run_properties(opts, layout, mode, clock.begin("properties"), stream,
                                   cov_data) \
        if "properties" in clock.planned else run_properties(opts, layout, "off", 0.0, stream)
    clock.end()
    if cov_data is not None:
        coverage = _run_coverage(opts, layout, cov_data, clock.begin("coverage"), stream)
        clock.end()
    else:
        coverage = _coverage_off("off" if not opts.coverage else "unavailable (install the "
                                 "harness extra: coverage)")
    mutants: dict[str, Any] = {"status": "off", "killed": 0, "total": 0, "survivors": []}
    if "mutants" in clock.planned:
        from pcfuzz.nightly.mutants import run_mutants

        end = clock.begin("mutants")
        mutants = run_mutants(budget_s=max(0.0, end - time.monotonic() - 2.0), stream=stream,
                              env=subprocess_env(layout))
        clock.end()
    if opts.minimize:
        minimize_phase(targets, rows, clock.begin("minimization"), stream)
        clock.end()
    clock.begin("report")
    new_crashes = sum(1 for r in rows for c in r["crashes"] if c["new"])
    failed = new_crashes > 0 or props["failed"] > 0 or props["errors"] > 0
    failed = failed or any(r["status"] == "error" for r in rows)
    summary: dict[str, Any] = {
        "format": "pcfuzz-summary/1",
        "started": started_wall,
        "finished": now(),
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
    summary["finished"] = now()
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
