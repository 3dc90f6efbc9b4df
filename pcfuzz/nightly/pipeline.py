"""The nightly job: fuzz every target, run the property suite under the ``nightly``
hypothesis profile, measure coverage, run mutants, minimize the working corpora, and
write the report directory (summary.json, summary.md, junit.xml, one SVG per target).

What runs when is the plan's (:mod:`pcfuzz.nightly.plan`), on ``--jobs`` slots
(:mod:`pcfuzz.nightly.schedule`); whether the night did all of it is the verdict's
(:mod:`pcfuzz.nightly.verdict`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any, cast

from pcfuzz.engine.regressions import tool_versions
from pcfuzz.engine.targets import Layout, Target, discover, subprocess_env
from pcfuzz.nightly.adapters import adapter_summary, write_kit_tests, write_targets
from pcfuzz.nightly.fuzzing import STOP_GRACE_S, fuzz_one, merge_rounds, skipped_target
from pcfuzz.nightly.minimization import minimize_phase
from pcfuzz.nightly.plan import MIN_FUZZ_S, Costs, NightlyOptions, Plan, make_plan
from pcfuzz.nightly.properties import properties_mode, property_tests, run_properties
from pcfuzz.nightly.report import (
    append_history,
    findings,
    now,
    write_junit,
    write_markdown,
    write_summary,
)
from pcfuzz.nightly.schedule import Stage, plateaued
from pcfuzz.nightly.transitions import coverage_prefix
from pcfuzz.nightly.verdict import exit_status, incomplete_reasons

__all__ = ["NightlyOptions", "run_nightly"]


#: The measured costs the next night plans from, in the work directory.
COSTS_FILE = "nightly_costs.json"


def _coverage_off(status: str) -> dict[str, Any]:
    return {"status": status, "line_percent": None, "branch_percent": None, "packages": [],
            "transitions": {}, "planned": False}


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
    replay_began = time.monotonic()
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
    info["replay_s"] = round(time.monotonic() - replay_began, 1)
    stream.write(f"[coverage] contracts/ lines {info['line_percent']}%, "
                 f"branches {info['branch_percent']}%\n")
    return info


class _Lines:
    """Progress from campaigns running side by side: whole lines, one writer at a time
    (a terminal's one updating line would mix them)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.lock = threading.Lock()

    def write(self, text: str) -> int:
        with self.lock:
            return self.stream.write(text)

    def flush(self) -> None:
        with self.lock:
            self.stream.flush()

    def isatty(self) -> bool:
        return False


def _plan(opts: NightlyOptions, layout: Layout, targets: list[Target], mode: str,
          costs: Costs) -> Plan:
    from pcfuzz.nightly.transitions import coverage_available

    kit_tests = 0
    if opts.adapters:
        from pcfuzz.strategies.conformance import families

        kit_tests = sum(len(families(a.contract)) for a in opts.adapters)
    return make_plan(
        budget_s=opts.budget_s, jobs=opts.jobs, fuzzers=[t.fuzzer for t in targets],
        properties=mode != "off", coverage=opts.coverage and coverage_available(),
        mutants=opts.mutants_on(), minimize=opts.minimize, costs=costs,
        property_budget_s=opts.property_budget_s, kit_tests=kit_tests,
    )


def _say_plan(plan: Plan, targets: list[Target], mode: str, opts: NightlyOptions,
              stream: IO[str]) -> None:
    per = plan.fuzz_share("", len(targets))
    stream.write(
        f"pcfuzz nightly: {len(targets)} targets on {plan.jobs} slot(s), budget "
        f"{opts.budget_s:.0f}s: fuzzing about {per:.0f}s each after start-up"
        + (f", properties ({mode}) {plan.properties_s:.0f}s, at least "
           f"{plan.min_examples} example(s) per test" if plan.properties_s else "")
        + (f", mutants {plan.mutants_s:.0f}s" if plan.mutants_s else "")
        + (f", coverage {plan.coverage_s:.0f}s" if plan.coverage_s else "")
        + (f", minimization {plan.minimize_s:.0f} core-s" if plan.minimize_s else "")
        + f"; report {opts.report_dir}\n")
    for reason in plan.shortfalls:
        stream.write(f"pcfuzz nightly: INCOMPLETE PLAN: {reason}\n")


def _suite_costs(table: list[dict[str, Any]]) -> tuple[float | None, float | None]:
    """A property test's own cost and one example's (the suite's means): the least-squares
    line ``seconds = test_s + examples * example_s`` over the tests that passed."""
    points = [(float(r["examples"]), float(r["seconds"])) for r in table
              if r.get("result") == "passed" and r.get("examples")]
    if len(points) < 2:
        return None, None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / var if var else my / max(mx, 1.0)
    slope = max(0.0, slope)
    return round(max(0.0, my - slope * mx), 4), round(slope, 5)


def _update_costs(costs: Costs, rows: list[dict[str, Any]], props: dict[str, Any],
                  coverage: dict[str, Any], mutants: dict[str, Any]) -> Costs:
    """The costs measured tonight, over the earlier ones (a figure not measured tonight
    is kept)."""
    startup = dict(costs.startup_s)
    for row in rows:
        if row.get("startup_s") is not None:
            startup[row["fuzzer"]] = float(row["startup_s"])
    test_s, example_s = _suite_costs(props.get("table", []))
    selected = props.get("selected")
    replay = coverage.get("replay_s")
    ran = int(mutants.get("total") or 0)
    return Costs(
        startup_s=startup,
        collect_s=props.get("collect_s") if props.get("collect_s") is not None
        else costs.collect_s,
        test_s=test_s if test_s is not None else costs.test_s,
        example_s=example_s if example_s is not None else costs.example_s,
        tests=selected if isinstance(selected, int) and selected > 0 else costs.tests,
        coverage_s=float(replay) if replay else costs.coverage_s,
        mutant_s=round(float(mutants.get("duration_s") or 0.0) / ran, 2) if ran
        else costs.mutant_s,
    )


def run_nightly(layout: Layout, opts: NightlyOptions, stream: IO[str] | None = None) -> int:
    """Run the whole nightly job; returns the exit status: 0 complete and clean, 1 a
    finding (a new crash, a failing property test), 3 incomplete (the reasons open
    ``summary.md``). Progress goes to ``stream`` (default: the standard error of the
    moment)."""
    from pcfuzz.engine.targets import resolve

    out = cast(IO[str], _Lines(stream if stream is not None else sys.stderr))
    t0 = time.monotonic()
    started_wall = now()
    report = opts.report_dir
    for sub in ("crashes", "logs", "plots"):
        shutil.rmtree(report / sub, ignore_errors=True)
    report.mkdir(parents=True, exist_ok=True)
    (report / "logs").mkdir(parents=True, exist_ok=True)
    targets = [resolve(layout, t) for t in opts.targets] if opts.targets else discover(layout)
    shard = opts.shard
    if shard is not None:
        targets = [t for t in targets if shard.owns(t.fuzzer)]
        out.write(f"pcfuzz nightly: shard {shard}: {len(targets)} target(s) "
                  f"({', '.join(t.name for t in targets) or 'none'}) and the property "
                  "tests whose node id hashes to it\n")
    if opts.adapters:
        # each adapter: a byte-level target beside the others, kit tests in the suite
        # (a shard fuzzes the adapter targets whose name hashes to it, like any other)
        targets += [t for t in write_targets(opts.adapters, layout, opts.adapter_root)
                    if shard is None or shard.owns(t.fuzzer)]
        opts.adapter_tests = [str(write_kit_tests(opts.adapters, layout, opts.adapter_root))]
        out.write(f"pcfuzz nightly: {len(opts.adapters)} adapter(s): "
                  + ", ".join(a.declared() for a in opts.adapters) + "\n")
    mode = properties_mode(opts)
    costs_path = layout.work_dir / COSTS_FILE
    costs = Costs.load(costs_path)
    plan = _plan(opts, layout, targets, mode, costs)
    _say_plan(plan, targets, mode, opts, out)
    if opts.properties != "off" and not property_tests(opts):
        out.write("pcfuzz nightly: no property suite (an installed pcfuzz ships no tests; "
                  "pass --property-tests PATH)\n")
    by_fuzzer = {t.fuzzer: t for t in targets}
    used: dict[str, float] = {}

    # ---- stage 1: the property suite, the mutants and the targets, side by side
    cov_data = report / "logs" / ".coverage" if plan.coverage_s else None
    stage = Stage(jobs=plan.jobs, end=t0 + plan.stage1_s)
    if plan.properties_s:
        def properties() -> Any:
            began = time.monotonic()
            result = run_properties(opts, layout, mode, began + plan.properties_s, out,
                                    cov_data, min_examples=plan.min_examples,
                                    hard_deadline=t0 + plan.stage1_s)
            used["properties"] = time.monotonic() - began
            return result
        stage.fixed.append(("properties", plan.properties_s, properties))
    sample = max(2, int(plan.mutants_s / max(1.0, costs.mutant()))) if plan.mutants_s else 0
    # a shard runs its part of the sample every shard draws alike
    keep = None if shard is None else (
        lambda m: shard.owns(f"{m.file}:{m.line}:{m.operator}"))
    if plan.mutants_s:
        def mutants_task() -> Any:
            from pcfuzz.nightly.mutants import run_mutants

            began = time.monotonic()
            result = run_mutants(budget_s=max(0.0, plan.mutants_s - 2.0),
                                 sample=sample * (shard.count if shard else 1), stream=out,
                                 env=subprocess_env(layout), keep=keep)
            used["mutants"] = time.monotonic() - began
            result["duration_s"] = round(used["mutants"], 1)
            result["planned_sample"] = len(result.get("mutants") or []) or sample
            return result
        stage.fixed.append(("mutants", plan.mutants_s, mutants_task))
    count = {"n": 0}

    def fuzz(fuzzer: str, slot: float, deadline: float, round_: int) -> dict[str, Any]:
        count["n"] += 1
        target = by_fuzzer[fuzzer]
        label = f"[{target.name}{'' if round_ == 1 else f' round {round_}'}]"
        if slot < 1.0:
            reason = f"not run: {slot:.1f}s left for it (the budget is too small)"
            out.write(f"{label} {reason}\n")
            return {**skipped_target(target, opts, reason), "round": round_}
        return fuzz_one(target, slot, opts, label, out, deadline=deadline - STOP_GRACE_S,
                        startup_s=plan.startup_s.get(fuzzer, 0.0), round_=round_,
                        should_stop=plateaued)

    stage1_began = time.monotonic()
    campaigns = stage.run([t.fuzzer for t in targets], fuzz,
                          min_slot_s=MIN_FUZZ_S + max(plan.startup_s.values(), default=0.0))
    used["fuzzing"] = time.monotonic() - stage1_began
    rows = [merge_rounds([r for r in campaigns if r["fuzzer"] == t.fuzzer]) for t in targets]
    props_result = stage.results.get("properties")
    if props_result is not None:
        props, cases = props_result
    else:
        props, cases = run_properties(opts, layout, "off", 0.0, out)
    mutants: dict[str, Any] = stage.results.get("mutants") or {
        "status": "off", "killed": 0, "total": 0, "survivors": []}

    # ---- stage 2: the coverage replay and the minimization, side by side
    end2 = t0 + plan.stage2_s
    coverage = _coverage_off("off" if not opts.coverage else "unavailable (install the "
                             "harness extra: coverage)")
    threads = []
    if cov_data is not None:
        box: dict[str, Any] = {}

        def coverage_task() -> None:
            began = time.monotonic()
            box["coverage"] = _run_coverage(opts, layout, cov_data,
                                            min(end2, began + plan.coverage_s + 4.0), out)
            used["coverage"] = time.monotonic() - began
        threads.append(threading.Thread(target=coverage_task))
    if opts.minimize and plan.minimize_s:
        def minimize_task() -> None:
            began = time.monotonic()
            minimize_phase(targets, rows, end2, out)
            used["minimization"] = time.monotonic() - began
        threads.append(threading.Thread(target=minimize_task))
    if plan.jobs == 1:
        for thread in threads:
            thread.start()
            thread.join()
    else:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if cov_data is not None:
        coverage = box.get("coverage") or _coverage_off("failed: no result")
        coverage["planned"] = True

    # ---- the report
    report_began = time.monotonic()
    new_crashes = sum(1 for r in rows for c in r["crashes"] if c["new"])
    summary: dict[str, Any] = {
        "format": "pcfuzz-summary/1",
        "started": started_wall,
        "finished": now(),
        "duration_s": 0.0,
        "budget_s": opts.budget_s,
        "jobs": plan.jobs,
        "tools": tool_versions(),
        "complete": True,
        "incomplete_reasons": [],
        "exit_status": 0,
        "new_crashes": new_crashes,
        "shard": None if shard is None else {"index": shard.index, "count": shard.count},
        "plan": {"shortfalls": plan.shortfalls, "min_examples": plan.min_examples,
                 "stage1_s": round(plan.stage1_s, 1), "stage2_s": round(plan.stage2_s, 1),
                 "fuzz_core_s": round(plan.fuzz_core_s, 1)},
        "phases": [],
        "targets": rows,
        "properties": props,
        "coverage": coverage,
        "mutants": mutants,
    }
    if opts.adapters:
        summary["adapters"] = adapter_summary(opts.adapters, rows, props, layout)
    reasons = incomplete_reasons(summary, plan.shortfalls)
    summary.update(complete=not reasons, incomplete_reasons=reasons,
                   exit_status=exit_status(summary, reasons))
    summary["findings"] = findings(summary)
    md = write_markdown(report, summary)  # first pass: a report exists even if cut short
    write_junit(report, summary, cases)
    used["report"] = time.monotonic() - report_began
    summary["phases"] = [dict(row, used_s=round(used.get(row["name"], 0.0), 1))
                         for row in plan.rows()]
    summary["duration_s"] = round(time.monotonic() - t0, 1)
    summary["finished"] = now()
    write_summary(report, summary)
    history = opts.history or report.parent / "history.jsonl"
    append_history(history, summary)
    md = write_markdown(report, summary, history)
    _update_costs(costs, rows, props, coverage, mutants).save(costs_path)
    sys.stdout.write(md.read_text(encoding="utf-8"))
    sys.stdout.flush()
    verdict = ("complete" if summary["complete"]
               else f"INCOMPLETE ({len(reasons)} reason(s), listed at the top of the report)")
    out.write(f"pcfuzz nightly: {new_crashes} new crash(es); {verdict}; report in "
              f"{report}/summary.md; exit {summary['exit_status']}\n")
    return int(summary["exit_status"])
