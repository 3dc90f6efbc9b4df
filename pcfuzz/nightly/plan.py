"""What the night plans: its options, the shares of the budget per phase, and the
clock that gives each phase its hard end."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcfuzz.nightly.transitions import coverage_available


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


def shares(opts: NightlyOptions, mode: str) -> dict[str, float]:
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
    if mutants_on(opts):
        extra["mutants"] = MUTANTS_SHARE
    if extra:
        shares["fuzzing"] -= sum(extra.values())
        order = [k for k in shares if k in ("fuzzing", "properties")]
        shares = {**{k: shares[k] for k in order}, **extra,
                  **{k: v for k, v in shares.items() if k not in order}}
    return shares


def mutants_on(opts: NightlyOptions) -> bool:
    return opts.budget_s >= MUTANTS_MIN_BUDGET_S if opts.mutants is None else opts.mutants
