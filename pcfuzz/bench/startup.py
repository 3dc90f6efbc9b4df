"""``pcfuzz bench`` start-up case: seconds from a process's start, each beside
``python -c pass`` started in the same round.

Start-up cannot be a ratio to work done in the same process: it is the process. So
every row gives absolute seconds (the median of its runs, the figure its goal judges)
and, in the rate column, the median per-round ratio to ``python -c pass`` run just
before it, from which a reader judges the machine's load. Rows:

* ``python -c pass``: the interpreter alone, start to exit (no goal);
* ``import pcfuzz.contracts``: measured inside a fresh interpreter around the import
  statement (goal 150 ms);
* ``pcfuzz --version``: the console script, start to exit (goal 300 ms);
* ``pcfuzz check``: a 3 KB Responses capture (the bench stream of 14 events, two
  calls, as SSE bytes), start to exit, exit status 0 (goal 500 ms);
* each fuzz target, process start to its first execution: the target with its own
  flags, ``-runs=1`` and an empty corpus directory. libFuzzer prints its ``INITED``
  line right after running the first input (the empty one), so the clock stops when
  that line arrives. Cold (full run only): an empty instrumentation cache (every
  module under test patched, the first start on a machine); warm: the median of
  starts with the work directory's cache, which ``pcfuzz fuzz`` and the nightly use,
  after one start that fills it if needed (every later start: a night's other
  campaigns, fork mode's jobs, merge and minimize; the fuzz case, run before this
  one, fills it too). Cold is the median of three starts, each with a cache of its
  own. Goal 1 s for both. Each comes with a second row from the same starts, the
  process's CPU time (user and system, from ``wait4``; ``-runs=1`` ends it right
  after its first input), under the same goal, its rate the wall time over the CPU
  time: on a machine other jobs load, the wall row measures the load as much as the
  start-up, the CPU row what the start-up itself costs. Both are printed; neither
  replaces the other.
"""

from __future__ import annotations

import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from pcfuzz.bench import data
from pcfuzz.bench.records import Options, Record, verdict
from pcfuzz.engine.targets import (
    INSTRUMENT_CACHE_VARIABLE,
    Layout,
    Target,
    discover,
    subprocess_env,
)

__all__ = ["CHECK_GOAL", "IMPORT_GOAL", "STARTUP_GOAL", "VERSION_GOAL", "startup_cases"]

STARTUP_GOAL = 1.0
IMPORT_GOAL = 0.150
VERSION_GOAL = 0.300
CHECK_GOAL = 0.500
#: The capture of the ``pcfuzz check`` row: the smallest bench stream of this size.
CHECK_BYTES = 3_000
CHECK_CONTRACT = "openai_responses"
BASELINE = "python -c pass"
_TIMEOUT = 300.0
_IMPORT = ("import time; t = time.perf_counter(); import pcfuzz.contracts; "
           "print(time.perf_counter() - t)")

#: One measurement: seconds, or None when the command did not do what it should.
Measure = Callable[[], float | None]


def _wall(command: Sequence[str], env: dict[str, str], cwd: Path) -> float | None:
    """Seconds from start to exit; None unless it exits 0."""
    start = time.perf_counter()
    proc = subprocess.run(list(command), env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          timeout=_TIMEOUT, check=False)
    elapsed = time.perf_counter() - start
    return elapsed if proc.returncode == 0 else None


def _printed(command: Sequence[str], env: dict[str, str], cwd: Path) -> float | None:
    """The number the command prints (seconds it measured itself)."""
    proc = subprocess.run(list(command), env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=_TIMEOUT, check=False)
    try:
        return float(proc.stdout.strip()) if proc.returncode == 0 else None
    except ValueError:
        return None


def _first_execution(command: Sequence[str], env: dict[str, str],
                     cwd: Path) -> tuple[float, float] | None:
    """Seconds from start until libFuzzer reports its first input run (``INITED``),
    and the CPU seconds (user and system) the process used in all: with ``-runs=1``
    it ends right after that input, so this is its start-up's own cost, which other
    jobs on the machine do not inflate as they do the wall time."""
    start = time.perf_counter()
    proc = subprocess.Popen(list(command), env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            errors="replace")
    watchdog = threading.Timer(_TIMEOUT, proc.kill)
    watchdog.start()
    seen: float | None = None
    cpu = 0.0
    with proc:  # closes the stderr pipe, whatever happens while it is read
        try:
            for line in proc.stderr or ():
                if seen is None and "INITED" in line:
                    seen = time.perf_counter() - start
            # wait4, not wait: the exit status and the process's CPU time in one call
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            cpu = usage.ru_utime + usage.ru_stime
        finally:
            watchdog.cancel()
    return (seen, cpu) if proc.returncode == 0 and seen is not None else None


def _row(case: str, candidate: str, measure: Measure, python: Measure, rounds: int,
         goal: float | None, note: str, baselines: list[float]) -> Record:
    """``rounds`` runs of ``measure``, each after a run of ``python -c pass``."""
    figures, ratios = _measured(measure, python, rounds, baselines)
    return _record(case, candidate, figures, ratios, rounds, goal, note)


_M = TypeVar("_M", float, tuple[float, float])


def _measured(measure: Callable[[], _M | None], python: Measure, rounds: int,
              baselines: list[float]) -> tuple[list[_M], list[float]]:
    """Up to ``rounds`` figures of ``measure``, each taken right after a
    ``python -c pass`` (kept in ``baselines``), and each one's ratio to it (of its
    first item, a wall time, where a figure is a pair); stops at the first failure."""
    figures: list[_M] = []
    ratios: list[float] = []
    for _ in range(rounds):
        base = python()
        figure = measure()
        if figure is None:
            break
        figures.append(figure)
        if base:
            baselines.append(base)
            ratios.append((figure[0] if isinstance(figure, tuple) else figure) / base)
    return figures, ratios


def _record(case: str, candidate: str, figures: list[float], ratios: list[float],
            rounds: int, goal: float | None, note: str, unit: str = f"x {BASELINE}") -> Record:
    if len(figures) < rounds or not figures:
        return Record(case=case, group="startup", candidate=candidate, baseline=BASELINE,
                      ratio=None, ratio_min=None, ratio_max=None, rate=None,
                      rate_unit=unit, goal=goal, better="lower", met=None,
                      rounds=len(figures), note="the command failed: no figure")
    figure = statistics.median(figures)
    return Record(
        case=case, group="startup", candidate=candidate, baseline=BASELINE,
        ratio=round(figure, 3), ratio_min=round(min(figures), 3),
        ratio_max=round(max(figures), 3),
        rate=round(statistics.median(ratios), 1) if ratios else None,
        rate_unit=unit, goal=goal, better="lower",
        met=verdict(figure, goal, "lower"), rounds=len(figures), note=note,
    )


def _start_rows(case: str, candidate: str, start: Callable[[], tuple[float, float] | None],
                python: Measure, rounds: int, note: str,
                baselines: list[float]) -> list[Record]:
    """Two rows from the same ``rounds`` starts, each after a ``python -c pass``: the
    wall time to the first execution (rate: x ``python -c pass``) and the process's
    CPU time (rate: that wall time over the CPU time, how much the machine's load
    stretched it; the CPU time also counts the process's exit, so on an idle machine
    the rate can be just under 1)."""
    pairs, ratios = _measured(start, python, rounds, baselines)
    walls = [wall for wall, _ in pairs]
    cpus = [cpu for _, cpu in pairs]
    stretch = [wall / cpu for wall, cpu in pairs if cpu > 0]
    return [_record(case, candidate, walls, ratios, rounds, STARTUP_GOAL, note),
            _record(f"{case}, CPU time", candidate, cpus, stretch, rounds, STARTUP_GOAL,
                    f"{note}; user and system CPU seconds of the process", "x wall / CPU")]


def _pcfuzz() -> list[str]:
    script = Path(sys.executable).with_name("pcfuzz")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "pcfuzz"]


def _capture(folder: Path) -> Path:
    events = next(n for n in range(2, 400)
                  if len(data.sse_bytes(CHECK_CONTRACT, n)) >= CHECK_BYTES)
    path = folder / "capture.sse"
    path.write_bytes(data.sse_bytes(CHECK_CONTRACT, events))
    return path


def _target_rows(target: Target, layout: Layout, scratch: Path, python: Measure,
                 opts: Options, baselines: list[float]) -> list[Record]:
    folder = Path(tempfile.mkdtemp(prefix=f"{target.fuzzer}-", dir=scratch))
    corpus = folder / "corpus"
    corpus.mkdir()
    flags = [f for f in target.flags() if not f.startswith("-max_total_time")]
    command = [sys.executable, str(target.path), *flags, "-runs=1", str(corpus)]
    case = f"start-up {target.name}: start to first execution"
    records = []
    if not opts.quick:
        colds = itertools.count()

        def cold() -> tuple[float, float] | None:
            # A cache of its own, empty, for each start: every module under test is
            # patched every time.
            cache = folder / f"cache-{next(colds)}"
            env = subprocess_env(layout, {INSTRUMENT_CACHE_VARIABLE: str(cache)})
            return _first_execution(command, env, folder)

        records += _start_rows(
            f"{case}, cold", target.fuzzer, cold, python, opts.rounds or 3,
            "empty instrumentation cache: the modules under test are patched", baselines)
    warm = subprocess_env(layout)

    def start() -> tuple[float, float] | None:
        return _first_execution(command, warm, folder)

    filled = start()  # fills the work directory's cache if it lacks this target
    records += _start_rows(
        f"{case}, warm", target.fuzzer, start if filled is not None else lambda: None,
        python, opts.rounds or (1 if opts.quick else 5),
        "the work directory's instrumentation cache", baselines)
    return records


def startup_cases(opts: Options) -> list[Record]:
    layout = Layout.from_options()
    rounds = opts.rounds or (3 if opts.quick else 7)
    env = subprocess_env(layout)
    baselines: list[float] = []
    with tempfile.TemporaryDirectory(prefix="pcfuzz-bench-startup-") as name:
        scratch = Path(name)

        def python() -> float | None:
            return _wall([sys.executable, "-c", "pass"], env, scratch)

        capture = _capture(scratch)
        opts.progress("startup: import pcfuzz.contracts, pcfuzz --version, pcfuzz check")
        records = [
            _row("start-up: import pcfuzz.contracts (in a fresh interpreter)",
                 "import pcfuzz.contracts",
                 lambda: _printed([sys.executable, "-c", _IMPORT], env, scratch),
                 python, rounds, IMPORT_GOAL, "timed inside the interpreter, around the "
                 "import statement", baselines),
            _row("start-up: pcfuzz --version", "pcfuzz --version",
                 lambda: _wall([*_pcfuzz(), "--version"], env, scratch),
                 python, rounds, VERSION_GOAL, "start to exit", baselines),
            _row(f"start-up: pcfuzz check, {capture.stat().st_size:,} B capture",
                 "pcfuzz check --contract openai-responses capture.sse",
                 lambda: _wall([*_pcfuzz(), "check", "--contract", "openai-responses",
                                str(capture)], env, scratch),
                 python, rounds, CHECK_GOAL, "start to exit (status 0: a valid turn)",
                 baselines),
        ]
        for target in discover(layout):
            opts.progress(f"startup: {target.name}")
            records += _target_rows(target, layout, scratch, python, opts, baselines)
    median = statistics.median(baselines) if baselines else None
    records.insert(0, Record(
        case=f"start-up baseline: {BASELINE}", group="startup", candidate=BASELINE,
        baseline="-", ratio=round(median, 3) if median else None,
        ratio_min=round(min(baselines), 3) if baselines else None,
        ratio_max=round(max(baselines), 3) if baselines else None, rate=None,
        rate_unit="s", goal=None, better="lower", met=None, rounds=len(baselines),
        note="run before every start-up measurement; the machine's load shows here",
    ))
    return records
