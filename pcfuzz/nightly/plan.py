"""What the night plans: its options, the costs it plans from, and the plan itself.

The plan is a pure function of the budget, the number of slots (``--jobs``, one
process each), the work (targets, the property suite, the optional phases) and the
measured :class:`Costs`, so its decisions are tested with injected costs
(``tests/test_nightly_plan.py``), never by timing a machine.

The night has two stages and a reserve for the report:

* stage 1, on every slot at once: one pytest process for the property suite
  (``properties_s`` of wall time), the mutants phase when it is on
  (``mutants_s``), and the fuzz targets, one campaign per slot at a time, sharing
  what is left (``fuzz_core_s`` core-seconds, start-ups included);
* stage 2: the coverage replay (it needs the final corpora and the property suite's
  coverage data) and the corpus minimization, side by side;
* the report.

Every target needs its start-up plus :data:`MIN_FUZZ_S` of fuzzing, every property
test at least one example (:data:`MIN_EXAMPLES_LONG` from :data:`LONG_NIGHT_S` on),
the property suite its collection: when the budget cannot give that, the plan says
so in ``shortfalls`` and the night is incomplete whatever else it does.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pcfuzz.nightly.adapters import KIT_TEST_S, AdapterSpec
from pcfuzz.nightly.shard import Shard

__all__ = [
    "Costs",
    "LONG_NIGHT_S",
    "MIN_EXAMPLES_LONG",
    "MIN_FUZZ_S",
    "NightlyOptions",
    "Plan",
    "default_jobs",
    "make_plan",
]

#: Every target fuzzes at least this long (after its start-up) on a budget that allows it.
MIN_FUZZ_S = 10.0
#: From this budget on, every property test runs at least MIN_EXAMPLES_LONG examples.
LONG_NIGHT_S = 600.0
MIN_EXAMPLES_LONG = 10
#: Below this budget the mutants phase is off unless asked for (--mutants).
MUTANTS_MIN_BUDGET_S = 300.0
#: Shares of the capacity (slots x usable seconds) each phase aims at, above its minimum.
PROPERTIES_SHARE = 0.28
MUTANTS_SHARE = 0.20
MINIMIZE_SHARE = 0.08
#: The report's reserve: this share of the budget, within these bounds (seconds).
REPORT_SHARE = 0.03
REPORT_BOUNDS = (3.0, 15.0)

#: Costs of a machine that never ran a night (seconds). Deliberately those of a cold,
#: loaded 2-core machine, not of a warm one: a plan made from warm figures leaves the
#: first night of a fresh clone short.
DEFAULT_STARTUP_S = 3.0
DEFAULT_COLLECT_S = 40.0
DEFAULT_TEST_S = 0.1
DEFAULT_EXAMPLE_S = 0.03
DEFAULT_TESTS = 400
DEFAULT_COVERAGE_S = 20.0
DEFAULT_MUTANT_S = 25.0
#: A measured cost is planned with this margin (the next night's machine may be busier).
MARGIN = 1.5


def default_jobs() -> int:
    """One slot per CPU the process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


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
    #: the example database every property test uses (a path or redis://...; None:
    #: the local ``hypothesis_db``), and whether the run may not write to it
    database: str | None = None
    database_readonly: bool = False
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
    #: the user's adapters (``--adapter``; pcfuzz.nightly.adapters): their kit tests
    #: join the property phase, their byte-level targets the fuzzing
    adapters: list[AdapterSpec] = field(default_factory=list)
    #: where the adapters import from (the directory ``pcfuzz nightly`` started in)
    adapter_root: Path = field(default_factory=Path.cwd)
    #: the kit's test file written for the adapters (set by the pipeline)
    adapter_tests: list[str] = field(default_factory=list)
    #: this runner's part of a sharded night (``--shard I/N``); ``None``: everything
    shard: Shard | None = None

    def mutants_on(self) -> bool:
        return self.budget_s >= MUTANTS_MIN_BUDGET_S if self.mutants is None else self.mutants


@dataclass
class Costs:
    """What earlier nights measured on this machine (``<work dir>/nightly_costs.json``);
    ``None`` or a missing key: never measured, the cold default is planned."""

    #: per fuzzer: process start to its first execution
    startup_s: dict[str, float] = field(default_factory=dict)
    #: pytest's start to the end of collecting the property suite
    collect_s: float | None = None
    #: a property test's own cost besides its examples (the suite's mean)
    test_s: float | None = None
    #: one example of one property test (the suite's mean)
    example_s: float | None = None
    #: property tests the suite selected last time
    tests: int | None = None
    coverage_s: float | None = None
    mutant_s: float | None = None

    def startup(self, fuzzer: str) -> float:
        measured = self.startup_s.get(fuzzer)
        return DEFAULT_STARTUP_S if measured is None else max(0.5, MARGIN * measured)

    def collect(self) -> float:
        return DEFAULT_COLLECT_S if self.collect_s is None else MARGIN * self.collect_s

    def example(self) -> float:
        return DEFAULT_EXAMPLE_S if self.example_s is None else MARGIN * self.example_s

    def test(self) -> float:
        return DEFAULT_TEST_S if self.test_s is None else MARGIN * self.test_s

    def suite(self, examples: int) -> float:
        """The property suite with ``examples`` examples per test, collection included."""
        return self.collect() + self.test_count() * (self.test() + examples * self.example())

    def test_count(self) -> int:
        return DEFAULT_TESTS if self.tests is None else self.tests

    def coverage(self) -> float:
        return DEFAULT_COVERAGE_S if self.coverage_s is None else MARGIN * self.coverage_s

    def mutant(self) -> float:
        return DEFAULT_MUTANT_S if self.mutant_s is None else MARGIN * self.mutant_s

    @classmethod
    def load(cls, path: Path) -> Costs:
        """The costs in ``path``; a missing or unreadable file is a machine never measured
        (figures of the wrong type are dropped, never trusted)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        if type(data) is not dict:
            return cls()

        def number(value: Any) -> float | None:
            ok = type(value) in (int, float) and math.isfinite(value) and 0 <= value < 1e6
            return float(value) if ok else None

        startup = data.get("startup_s")
        tests = data.get("tests")
        measured = {k: number(v) for k, v in (startup.items() if type(startup) is dict else [])
                    if type(k) is str}
        return cls(
            startup_s={k: v for k, v in measured.items() if v is not None},
            collect_s=number(data.get("collect_s")),
            test_s=number(data.get("test_s")),
            example_s=number(data.get("example_s")),
            tests=tests if type(tests) is int and 0 <= tests < 10**6 else None,
            coverage_s=number(data.get("coverage_s")),
            mutant_s=number(data.get("mutant_s")),
        )

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(self), indent=1, sort_keys=True) + "\n",
                        encoding="utf-8")


@dataclass
class Plan:
    """The night's plan (seconds are wall seconds from the start unless said)."""

    budget_s: float
    jobs: int
    #: end of stage 1 (fuzzing, properties, mutants) and of stage 2 (coverage, minimization)
    stage1_s: float
    stage2_s: float
    #: the pytest slot's wall seconds (0: no property suite)
    properties_s: float
    #: every property test runs at least this many examples
    min_examples: int
    #: the mutants slot's wall seconds (0: off)
    mutants_s: float
    #: core-seconds the fuzz targets share in stage 1, start-ups included
    fuzz_core_s: float
    #: per fuzzer, the start-up the plan counts
    startup_s: dict[str, float]
    coverage_s: float
    minimize_s: float
    report_s: float
    #: why the budget cannot hold the minimum work (empty: it can)
    shortfalls: list[str] = field(default_factory=list)

    def fuzz_share(self, fuzzer: str, targets: int) -> float:
        """The fuzzing seconds (start-up excluded) of one target if all share alike."""
        mean_startup = (sum(self.startup_s.values()) / len(self.startup_s)
                        if self.startup_s else DEFAULT_STARTUP_S)
        return max(0.0, self.fuzz_core_s / max(1, targets) - mean_startup)

    def rows(self) -> list[dict[str, Any]]:
        """The phases as the report lists them (planned seconds)."""
        out = [{"name": "fuzzing", "planned_s": round(self.fuzz_core_s, 1),
                "note": f"core-seconds on {self.jobs} slot(s), start-ups included"}]
        if self.properties_s:
            out.append({"name": "properties", "planned_s": round(self.properties_s, 1),
                        "note": f"one slot; at least {self.min_examples} example(s) per test"})
        if self.mutants_s:
            out.append({"name": "mutants", "planned_s": round(self.mutants_s, 1),
                        "note": "one slot"})
        if self.coverage_s:
            out.append({"name": "coverage", "planned_s": round(self.coverage_s, 1),
                        "note": "after stage 1"})
        if self.minimize_s:
            out.append({"name": "minimization", "planned_s": round(self.minimize_s, 1),
                        "note": "core-seconds after stage 1"})
        out.append({"name": "report", "planned_s": round(self.report_s, 1), "note": ""})
        return out


def make_plan(
    *,
    budget_s: float,
    jobs: int,
    fuzzers: list[str],
    properties: bool,
    coverage: bool,
    mutants: bool,
    minimize: bool,
    costs: Costs,
    property_budget_s: float | None = None,
    kit_tests: int = 0,
) -> Plan:
    """Plan the night (see the module docstring); never raises for a small budget: the
    plan then gives each piece of work its share of what there is and names every
    shortfall. ``kit_tests``: the conformance kit's family tests of the user's
    adapters, which the property phase runs besides the suite (each adapter's fuzz
    target is one of ``fuzzers``)."""
    jobs = max(1, jobs)
    report_s = min(max(REPORT_SHARE * budget_s, REPORT_BOUNDS[0]), REPORT_BOUNDS[1])
    report_s = min(report_s, 0.25 * budget_s)
    usable = max(0.0, budget_s - report_s)
    capacity = jobs * usable
    shortfalls: list[str] = []
    startup = {f: costs.startup(f) for f in fuzzers}
    fuzz_min = sum(startup.values()) + MIN_FUZZ_S * len(fuzzers)
    min_examples = MIN_EXAMPLES_LONG if budget_s >= LONG_NIGHT_S else 1
    tests = costs.test_count()
    # the kit's tests of the user's adapters run in the property phase too, each at
    # least its worker's start, the golden stream and a few examples
    props_min = costs.suite(min_examples) + kit_tests * KIT_TEST_S if properties else 0.0

    # stage 2: the coverage replay on one slot, minimization on the others
    cov = costs.coverage() if coverage else 0.0
    mini = MINIMIZE_SHARE * capacity if minimize else 0.0
    stage2 = max(cov, (cov + mini) / jobs) if (cov or mini) else 0.0
    stage2 = min(stage2, 0.25 * usable)
    if cov > stage2:
        shortfalls.append(f"coverage: the replay needs about {cov:.0f}s, the budget leaves "
                          f"{stage2:.0f}s after fuzzing")
        cov = stage2
    mini = max(0.0, min(mini, jobs * stage2 - cov)) if minimize else 0.0
    stage1 = usable - stage2

    # stage 1: pytest and the mutants each hold a slot; the targets share the rest
    if property_budget_s is not None and properties:
        props = min(property_budget_s, stage1)
    else:
        props = min(max(props_min, PROPERTIES_SHARE * capacity), stage1) if properties else 0.0
    muts = min(MUTANTS_SHARE * capacity, stage1) if mutants else 0.0
    if mutants and muts < 2 * costs.mutant():
        shortfalls.append(f"mutants: two mutants need about {2 * costs.mutant():.0f}s, the "
                          f"budget gives {muts:.0f}s")
    fuzz_core = jobs * stage1 - props - muts
    if fuzz_core < fuzz_min and (props > props_min or muts):
        # the minimum of the targets comes before the extra of properties and mutants
        give = min(fuzz_min - fuzz_core, max(0.0, props - props_min) + muts)
        from_props = min(give, max(0.0, props - props_min))
        props -= from_props
        muts = max(0.0, muts - (give - from_props))
        fuzz_core = jobs * stage1 - props - muts
    if properties and props < props_min:
        kit = f" and {kit_tests} adapter kit tests" if kit_tests else ""
        shortfalls.append(
            f"properties: about {tests} tests x {min_examples} example(s){kit} plus "
            f"collection need about {props_min:.0f}s, the budget gives {props:.0f}s")
    if fuzz_core < fuzz_min:
        shortfalls.append(
            f"fuzzing: {len(fuzzers)} targets need at least their start-up plus "
            f"{MIN_FUZZ_S:.0f}s each, about {fuzz_min:.0f} core-seconds; the budget gives "
            f"{max(0.0, fuzz_core):.0f} on {jobs} slot(s) (a larger --budget, or fewer "
            "--target)")
    # the most consequential first: the targets, the suite, then the optional phases
    order = ("fuzzing", "properties", "coverage", "mutants")
    shortfalls.sort(key=lambda s: order.index(s.split(":", 1)[0]))
    return Plan(
        budget_s=budget_s, jobs=jobs, stage1_s=stage1, stage2_s=stage1 + stage2,
        properties_s=props, min_examples=min_examples, mutants_s=muts,
        fuzz_core_s=max(0.0, fuzz_core), startup_s=startup, coverage_s=cov,
        minimize_s=mini, report_s=report_s, shortfalls=shortfalls,
    )
