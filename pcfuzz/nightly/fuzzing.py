"""The fuzzing phase: one libFuzzer campaign per target, its crashes triaged, its
row of the report."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from pcfuzz.engine.libfuzzer import Campaign, CampaignResult, Sample, save_last_run
from pcfuzz.engine.regressions import known_fingerprints
from pcfuzz.engine.targets import Target, corpus_stats
from pcfuzz.engine.triage import ReplayError, bug_fingerprint, code_frame, triage
from pcfuzz.nightly.plan import NightlyOptions
from pcfuzz.nightly.report import rel, render_svg, tail

#: A campaign still running at its slot's end gets SIGTERM this long before it, so
#: that libFuzzer's final figures (or the SIGKILL after them) land inside the slot.
STOP_GRACE_S = 1.0


def fuzz_one(
    target: Target,
    budget: float,
    opts: NightlyOptions,
    label: str,
    stream: IO[str],
    *,
    deadline: float | None = None,
    startup_s: float = 0.0,
    round_: int = 1,
    should_stop: Callable[[Sequence[Sample], float], bool] | None = None,
) -> dict[str, Any]:
    """One campaign of ``target`` in a slot of ``budget`` seconds (its start-up,
    estimated ``startup_s``, included); its row of the report."""
    report = opts.report_dir
    crash_dir = report / "crashes" / target.fuzzer
    suffix = "" if round_ == 1 else f".{round_}"
    log = report / "logs" / f"{target.fuzzer}{suffix}.log"
    files_before, bytes_before = corpus_stats(*target.corpus_dirs())
    # libFuzzer counts -max_total_time from the end of its start-up: leave that out.
    fuzz_s = max(1.0, budget - startup_s)
    result = Campaign(
        target,
        fuzz_s,
        artifacts=crash_dir,
        log_path=log,
        label=label,
        progress=stream,
        keep_going=True,
        deadline=deadline,
        should_stop=should_stop,
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
                    "input": rel(keep, report),
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
        error = (f"its {budget:.1f}s slot ended during start-up, before the first "
                 f"execution (start-up planned at {startup_s:.1f}s; {rel(log, report)})")
    elif result.executions == 0 and error is None:
        error = f"no executions (exit {result.returncode}): {tail(log)}"
    plot = report / "plots" / f"{target.fuzzer}{suffix}.svg"
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
        "minimize": minimize_not_run(files_after, bytes_after),
        "plot": rel(plot, report),
        "log": rel(log, report),
        "error": error,
        "round": round_,
        "slot_s": round(budget, 1),
        "startup_s": round(result.samples[0].t, 2) if result.samples else None,
        # seconds of executions: from the first status line to the end
        "fuzz_s": round(max(0.0, result.duration_s - result.samples[0].t), 1)
        if result.samples else 0.0,
        "plateaued": result.stopped_early,
        "growth_per_s": _growth(result.samples),
    }


def _growth(samples: Sequence[Sample]) -> float:
    """Coverage features gained per second over the last third of the campaign."""
    if len(samples) < 2:
        return 0.0
    last = samples[-1]
    since = last.t - (last.t - samples[0].t) / 3
    earlier = [s for s in samples if s.t <= since] or [samples[0]]
    then = earlier[-1]
    return round(max(0, last.ft - then.ft) / max(1e-3, last.t - then.t), 3)


def merge_rounds(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One row of a target that ran in several rounds: the figures of all of them
    (executions, time, crashes summed; the last coverage and corpus; the first
    corpus before), each round's own row kept under ``rounds``."""
    if len(rows) == 1:
        return rows[0]
    first, last = rows[0], rows[-1]
    merged = dict(last)
    duration = sum(float(r["duration_s"]) for r in rows)
    executions = sum(int(r["executions"]) for r in rows)
    merged.update(
        budget_s=round(sum(float(r["budget_s"]) for r in rows), 1),
        duration_s=round(duration, 2),
        executions=executions,
        exec_per_s=round(executions / duration, 1) if duration else 0.0,
        corpus_before=first["corpus_before"],
        new_inputs=sum(int(r["new_inputs"]) for r in rows),
        crashes=[c for r in rows for c in r["crashes"]],
        plot=first["plot"],
        log=first["log"],
        startup_s=first["startup_s"],
        fuzz_s=round(sum(float(r.get("fuzz_s") or 0.0) for r in rows), 1),
        status="crash" if any(r["status"] == "crash" for r in rows) else (
            "error" if any(r["status"] == "error" for r in rows) else first["status"]),
        error="; ".join(str(r["error"]) for r in rows if r["error"]) or None,
        rounds=[{k: r[k] for k in ("round", "slot_s", "duration_s", "executions",
                                   "plateaued", "growth_per_s", "log")} for r in rows],
    )
    return merged


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


def minimize_not_run(files: int, size: int, detail: str = "not run") -> dict[str, Any]:
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


def skipped_target(target: Target, opts: NightlyOptions, reason: str) -> dict[str, Any]:
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
        "minimize": minimize_not_run(files, size),
        "plot": rel(plot, opts.report_dir),
        "log": "",
        "error": reason,
    }
