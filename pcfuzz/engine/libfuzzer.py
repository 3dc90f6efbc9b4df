"""Running libFuzzer (through atheris) and reading what it prints.

libFuzzer reports progress on stderr in status lines; this module parses them
(in-process mode and fork mode), runs campaigns with a live progress line, counts
coverage features of a corpus, merges corpora and minimizes crash inputs.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from pcfuzz.engine.targets import Target, subprocess_env

__all__ = [
    "Campaign",
    "save_last_run",
    "CampaignResult",
    "LibFuzzerStatus",
    "Sample",
    "count_features",
    "merge",
    "minimize_crash",
    "parse_status_line",
]

_UNITS = {"b": 1, "Kb": 1 << 10, "Mb": 1 << 20}

# #4096	pulse  cov: 120 ft: 300 corp: 12/340b lim: 43 exec/s: 2048 rss: 45Mb
_INPROCESS = re.compile(
    r"^#(?P<execs>\d+)\s+(?P<kind>INITED|NEW|REDUCE|pulse|DONE|RELOAD)\s+"
    r"(?:cov: (?P<cov>\d+)\s+)?(?:ft: (?P<ft>\d+)\s+)?"
    r"corp: (?P<files>\d+)/(?P<size>\d+)(?P<unit>b|Kb|Mb)"
    r"(?:\s+lim: \d+)?\s+exec/s: (?P<eps>\d+)\s+rss: (?P<rss>\d+)Mb"
)
# #3537: cov: 80 ft: 58 corp: 10 exec/s 0 oom/timeout/crash: 0/0/88 time: 7s job: 90
_FORK = re.compile(
    r"^#(?P<execs>\d+): cov: (?P<cov>\d+) ft: (?P<ft>\d+) corp: (?P<files>\d+)"
    r"(?:/(?P<size>\d+)(?P<unit>b|Kb|Mb))? exec/s:? (?P<eps>\d+) "
    r"oom/timeout/crash: (?P<oom>\d+)/(?P<timeout>\d+)/(?P<crash>\d+) time: (?P<time>\d+)s"
)
_DONE = re.compile(r"^Done (\d+) runs in (\d+) second")
_ARTIFACT = re.compile(r"Test unit written to (\S+)")
_MERGE = re.compile(r"MERGE-OUTER: (\d+) new files with (\d+) new features added")


@dataclass
class LibFuzzerStatus:
    """One parsed status line: executions, coverage, features, corpus, exec/s, RSS."""

    kind: str
    execs: int
    cov: int | None
    ft: int | None
    corpus_files: int
    corpus_bytes: int | None
    exec_per_s: int
    rss_mb: int | None = None
    fork_crashes: int | None = None
    fork_time_s: int | None = None


def parse_status_line(line: str) -> LibFuzzerStatus | None:
    """Parse a libFuzzer status line (in-process or ``-fork`` format), else ``None``."""
    line = line.strip()
    m = _INPROCESS.match(line)
    if m:
        return LibFuzzerStatus(
            kind=m["kind"],
            execs=int(m["execs"]),
            cov=int(m["cov"]) if m["cov"] else None,
            ft=int(m["ft"]) if m["ft"] else None,
            corpus_files=int(m["files"]),
            corpus_bytes=int(m["size"]) * _UNITS[m["unit"]],
            exec_per_s=int(m["eps"]),
            rss_mb=int(m["rss"]),
        )
    m = _FORK.match(line)
    if m:
        return LibFuzzerStatus(
            kind="fork",
            execs=int(m["execs"]),
            cov=int(m["cov"]),
            ft=int(m["ft"]),
            corpus_files=int(m["files"]),
            corpus_bytes=int(m["size"]) * _UNITS[m["unit"]] if m["size"] else None,
            exec_per_s=int(m["eps"]),
            fork_crashes=int(m["crash"]) + int(m["timeout"]) + int(m["oom"]),
            fork_time_s=int(m["time"]),
        )
    return None


@dataclass
class Sample:
    """A point of the coverage/corpus time series (seconds since the campaign start)."""

    t: float
    execs: int
    ft: int
    cov: int
    corpus_files: int


@dataclass
class CampaignResult:
    """What one campaign did: figures from libFuzzer's output plus the artifacts written."""

    target: str
    budget_s: float
    duration_s: float = 0.0
    executions: int = 0
    exec_per_s: float = 0.0
    cov: int = 0
    ft: int = 0
    corpus_files: int = 0
    corpus_bytes: int = 0
    rss_mb: int = 0
    returncode: int | None = None
    artifacts: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    stopped_at_crash: bool = False
    error: str | None = None
    #: ``time.time()`` at the start (crash artifacts' modification times are placed
    #: on the campaign's time axis with it)
    started_wall: float | None = None
    #: the campaign was stopped by its ``deadline`` (the nightly slot ran out)
    stopped_by_deadline: bool = False
    #: the campaign was stopped early by ``Campaign.should_stop``
    stopped_early: bool = False


class _Tracker:
    """Folds status lines into the running figures shown on the progress line."""

    def __init__(self, result: CampaignResult, started: float) -> None:
        self.result = result
        self.started = started
        self.lock = threading.Lock()
        self.fork_crashes = 0
        self.exec_base = 0  # executions of earlier processes of the same campaign
        self.crash_base = 0

    def feed(self, line: str) -> None:
        status = parse_status_line(line)
        with self.lock:
            res = self.result
            m = _ARTIFACT.search(line)
            if m:
                res.artifacts.append(m.group(1))
            m = _DONE.match(line.strip())
            if m:
                res.executions = max(res.executions, self.exec_base + int(m.group(1)))
            if status is None:
                return
            res.executions = max(res.executions, self.exec_base + status.execs)
            res.exec_per_s = float(status.exec_per_s)
            res.cov = status.cov if status.cov is not None else res.cov
            res.ft = status.ft if status.ft is not None else res.ft
            res.corpus_files = status.corpus_files
            if status.corpus_bytes is not None:
                res.corpus_bytes = status.corpus_bytes
            if status.rss_mb is not None:
                res.rss_mb = max(res.rss_mb, status.rss_mb)
            if status.fork_crashes is not None:
                self.fork_crashes = self.crash_base + status.fork_crashes
            res.samples.append(
                Sample(
                    t=round(time.monotonic() - self.started, 3),
                    execs=self.exec_base + status.execs,
                    ft=res.ft,
                    cov=res.cov,
                    corpus_files=status.corpus_files,
                )
            )

    def crashes(self) -> int:
        with self.lock:
            return max(self.fork_crashes, len(self.result.artifacts))

    def next_process(self) -> None:
        with self.lock:
            self.exec_base = self.result.executions
            self.crash_base = max(self.fork_crashes, len(self.result.artifacts))


def _fmt_count(n: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f}{unit}"
    return f"{int(n)}"


class _Progress:
    """One updating line on stderr (a TTY), or a line every few seconds (CI logs)."""

    def __init__(self, stream: IO[str], label: str, budget_s: float) -> None:
        self.stream = stream
        self.label = label
        self.budget_s = budget_s
        self.tty = stream.isatty()
        self.last_print = 0.0
        self.width = 0

    def show(self, elapsed: float, res: CampaignResult, crashes: int, final: bool = False) -> None:
        line = (
            f"{self.label} {elapsed:5.0f}/{self.budget_s:.0f}s "
            f"execs {_fmt_count(res.executions)} "
            f"exec/s {_fmt_count(res.executions / elapsed if elapsed >= 1 else res.exec_per_s)} "
            f"corpus {res.corpus_files} "
            f"ft {res.ft} cov {res.cov} "
            f"crashes {crashes}"
        )
        now = time.monotonic()
        if self.tty:
            pad = max(0, self.width - len(line))
            self.stream.write("\r" + line + " " * pad + ("\n" if final else ""))
            self.width = len(line)
            self.stream.flush()
        elif final or now - self.last_print >= 10:
            self.stream.write(line + "\n")
            self.stream.flush()
            self.last_print = now


@dataclass
class Campaign:
    """One libFuzzer campaign of ``target`` for ``budget_s`` seconds.

    ``jobs == 1`` runs libFuzzer in-process, which stops at the first crash (the
    artifact is kept); with ``keep_going`` the rest of the budget then runs in
    ``-fork=1`` mode with crashes, timeouts and OOMs ignored. ``jobs > 1`` runs
    ``-fork=N`` with those ignored from the start, so the campaign may collect several
    artifacts. New inputs go to the target's working corpus, artifacts to its artifacts
    directory (or ``artifacts``).
    """

    target: Target
    budget_s: float
    jobs: int = 1
    timeout: int | None = None
    rss_limit_mb: int | None = None
    artifacts: Path | None = None
    log_path: Path | None = None
    label: str | None = None
    progress: IO[str] | None = None
    keep_going: bool = False
    extra_flags: Sequence[str] = ()
    #: ``time.monotonic()`` value past which the campaign's processes are stopped
    #: (SIGTERM to the process group, then SIGKILL): the nightly job's hard stop.
    deadline: float | None = None
    #: called with the samples so far and the seconds since the start, about every
    #: 0.2 s: ``True`` stops the campaign early (the nightly's plateau rule)
    should_stop: Callable[[Sequence[Sample], float], bool] | None = None

    def command(self, budget_s: float | None = None, fork: int | None = None) -> list[str]:
        """The libFuzzer command line (``fork`` overrides the mode chosen by ``jobs``)."""
        target = self.target
        artifacts = self.artifacts or target.artifacts
        budget = self.budget_s if budget_s is None else budget_s
        fork = fork if fork is not None else (self.jobs if self.jobs > 1 else 0)
        flags = target.flags(timeout=self.timeout, rss_limit_mb=self.rss_limit_mb)
        flags += [
            f"-max_total_time={max(1, round(budget))}",
            f"-artifact_prefix={artifacts}{os.sep}",
            "-print_final_stats=1",
        ]
        if fork:
            flags += [
                f"-fork={fork}",
                "-ignore_crashes=1",
                "-ignore_timeouts=1",
                "-ignore_ooms=1",
            ]
        flags += list(self.extra_flags)
        return [sys.executable, str(target.path), *flags, *map(str, target.corpus_dirs())]

    def run(self) -> CampaignResult:
        """Run the campaign; never raises for a crash (it is in the result)."""
        target = self.target
        artifacts = self.artifacts or target.artifacts
        target.work_corpus.mkdir(parents=True, exist_ok=True)
        artifacts.mkdir(parents=True, exist_ok=True)
        result = CampaignResult(target=target.name, budget_s=self.budget_s)
        existing = {p.name for p in artifacts.iterdir()}
        if not os.access(target.path, os.X_OK):
            result.error = (
                f"{target.path.name} is not executable: libFuzzer re-runs it by its own "
                "command line (chmod +x, shebang #!/usr/bin/env python3)"
            )
            return result
        started = time.monotonic()
        result.started_wall = time.time()
        tracker = _Tracker(result, started)
        progress = _Progress(
            self.progress or sys.stderr, self.label or target.name, self.budget_s
        )
        log: IO[str] | None = None
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            log = self.log_path.open("w", encoding="utf-8", errors="replace")
        try:
            self._process(self.command(), started, tracker, progress, log)
            remaining = self.budget_s - (time.monotonic() - started)
            if self.deadline is not None:
                remaining = min(remaining, self.deadline - time.monotonic() - 2)
            if (
                self.keep_going
                and self.jobs == 1
                and result.artifacts
                and result.error is None
                and remaining >= 5
            ):
                result.stopped_at_crash = True
                tracker.next_process()
                if log is not None:
                    log.write(f"\n# pcfuzz: crash found; fuzzing on in -fork=1 mode for {remaining:.0f}s\n")
                self._process(self.command(remaining, fork=1), started, tracker, progress, log)
        finally:
            if log is not None:
                log.close()
        result.duration_s = round(time.monotonic() - started, 2)
        if result.duration_s > 0 and result.executions:
            result.exec_per_s = round(result.executions / result.duration_s, 1)
        # Fork mode does not always echo "Test unit written to": the directory decides.
        reported = [str((target.work / a).resolve()) for a in result.artifacts]
        written = [str(p) for p in sorted(artifacts.iterdir()) if p.name not in existing]
        result.artifacts = [a for a in dict.fromkeys(reported + written) if Path(a).is_file()]
        if self.jobs == 1 and result.artifacts and not self.keep_going:
            result.stopped_at_crash = True
        progress.show(result.duration_s, result, tracker.crashes(), final=True)
        return result

    def _process(
        self,
        cmd: list[str],
        started: float,
        tracker: _Tracker,
        progress: _Progress,
        log: IO[str] | None,
    ) -> None:
        target, result = self.target, tracker.result
        proc = subprocess.Popen(
            cmd,
            cwd=target.work,
            env=subprocess_env(target.layout),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            start_new_session=True,  # fork/merge children die with it on a hard stop
        )

        def reader() -> None:
            if proc.stdout is None:
                return
            for line in proc.stdout:
                if log is not None:
                    log.write(line)
                tracker.feed(line)

        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        hard_limit = self.budget_s + target.per_input_timeout() + 60
        try:
            while proc.poll() is None:
                now = time.monotonic()
                elapsed = now - started
                if elapsed > hard_limit:
                    _stop_group(proc, grace_s=0)
                    result.error = f"killed after {elapsed:.0f}s (budget {self.budget_s:.0f}s)"
                    break
                if self.deadline is not None and now > self.deadline:
                    # The nightly slot is over: libFuzzer handles SIGTERM by printing
                    # its final figures and exiting; what it found so far is kept.
                    _stop_group(proc, grace_s=1.0)
                    result.stopped_by_deadline = True
                    break
                if self.should_stop is not None:
                    with tracker.lock:
                        samples = list(result.samples)
                    if self.should_stop(samples, elapsed):
                        _stop_group(proc, grace_s=1.0)
                        result.stopped_early = True
                        break
                progress.show(elapsed, result, tracker.crashes())
                time.sleep(0.2)
        except KeyboardInterrupt:
            _stop_group(proc, grace_s=2)
            raise
        finally:
            proc.wait()
            thread.join(timeout=10)
            if proc.stdout is not None:
                proc.stdout.close()
        result.returncode = proc.returncode


def _stop_group(proc: subprocess.Popen[str], grace_s: float) -> None:
    """SIGTERM the process group of ``proc`` (started with ``start_new_session``),
    SIGKILL it after ``grace_s`` seconds if it is still there."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            return
        if wait <= 0 and sig == signal.SIGTERM:
            continue
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue


def _run_quiet(
    target: Target, args: Sequence[str], timeout_s: float
) -> subprocess.CompletedProcess[str]:
    """Run the target with ``args``; past ``timeout_s`` its whole process group
    (libFuzzer's merge and minimize modes start children) is stopped and
    :class:`subprocess.TimeoutExpired` raised."""
    cmd = [sys.executable, str(target.path), *args]
    proc = subprocess.Popen(
        cmd,
        cwd=target.layout.fuzz_dir,
        env=subprocess_env(target.layout),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=max(0.1, timeout_s))
    except subprocess.TimeoutExpired:
        _stop_group(proc, grace_s=1)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def count_features(target: Target, dirs: Sequence[Path], timeout_s: float = 600) -> int | None:
    """Coverage features (libFuzzer ``ft:``) of the union of ``dirs``, by running every
    input once (``-runs=0``). ``None`` when libFuzzer printed no figure (e.g. an input
    of the corpus crashes).
    """
    existing = [str(d) for d in dirs if d.is_dir() and any(d.iterdir())]
    if not existing:
        return 0
    with tempfile.TemporaryDirectory(prefix="pcfuzz-ft-") as scratch:
        # An empty first directory: libFuzzer never writes into the corpora we measure.
        proc = _run_quiet(
            target, [*target.flags(), "-runs=0", scratch, *existing], timeout_s
        )
    ft: int | None = None
    for line in proc.stderr.splitlines() + proc.stdout.splitlines():
        status = parse_status_line(line)
        if status is not None and status.kind in {"INITED", "DONE"} and status.ft is not None:
            ft = max(ft or 0, status.ft)
    return ft


def merge(
    target: Target, into: Path, sources: Sequence[Path], timeout_s: float = 1200
) -> tuple[int, int] | None:
    """``-merge=1`` of ``sources`` into ``into``; returns (new files, new features)."""
    into.mkdir(parents=True, exist_ok=True)
    existing = [str(d) for d in sources if d.is_dir()]
    proc = _run_quiet(target, [*target.flags(), "-merge=1", str(into), *existing], timeout_s)
    for line in reversed(proc.stderr.splitlines() + proc.stdout.splitlines()):
        m = _MERGE.search(line)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


def minimize_crash(
    target: Target,
    crash: Path,
    out: Path,
    *,
    budget_s: float = 20,
    runs: int = 2000,
    still_same: Callable[[Path], bool] | None = None,
) -> Path:
    """Shrink a crashing input with ``-minimize_crash=1``; returns ``out`` when a smaller
    input still crashes (and, if ``still_same`` is given, with the same fingerprint),
    else the original ``crash`` path.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        _run_quiet(
            target,
            [
                *target.flags(),
                "-minimize_crash=1",
                f"-runs={runs}",
                f"-max_total_time={max(1, round(budget_s))}",
                f"-exact_artifact_path={out}",
                str(crash),
            ],
            budget_s + 60,
        )
    except subprocess.TimeoutExpired:
        return crash
    if not out.is_file() or out.stat().st_size >= crash.stat().st_size:
        return crash
    if still_same is not None and not still_same(out):
        out.unlink()
        return crash
    return out


def save_last_run(target: Target, result: CampaignResult, crashes: int) -> None:
    """Remember the figures ``pcfuzz list`` shows."""
    target.work.mkdir(parents=True, exist_ok=True)
    target.last_run_path.write_text(
        json.dumps(
            {
                "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
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
