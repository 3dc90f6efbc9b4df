"""The conformance kit's runner: this project's turn models and mutations against any
parser, through an adapter.

An *adapter* is a plain function ``adapter(events) -> [{"call_id": str, "name": str,
"arguments": dict}, ...]``: the calls the parser under test would execute, given the
whole list of events of one turn (``input="events"``: the decoded events in the
shapes ``pcfuzz.contracts.<provider>.parse_events`` takes) or the raw SSE bytes of
the turn (``input="sse"``). Raising any exception means the parser rejected the
stream. Scenarios and their labels come from ``pcfuzz.strategies.conformance``;
each family is one hypothesis run, so a violation is shrunk to a minimal stream,
reported (JSON lines and SSE bytes, what was expected, what the parser did) and
saved to the regression directory, which later runs replay first. The command is
``pcfuzz conform`` (:mod:`pcfuzz.cli.conform`); the pytest helper is
:func:`pcfuzz.conform.pytest_plugin.pcfuzz_conformance`.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pcfuzz import files
from pcfuzz.errors import UsageError

__all__ = [
    "Adapter",
    "UsageError",
    "Finding",
    "FamilyResult",
    "Report",
    "load_adapter",
    "conform",
    "replay_regressions",
    "run_scenario",
    "finding_for",
    "save_regression",
    "run_family",
    "DEFAULT_REGRESSIONS",
    "INPUTS",
]

Adapter = Callable[[Any], Any]
INPUTS = ("events", "sse")
REGRESSION_FORMAT = "pcfuzz-conform-regression/1"
DEFAULT_REGRESSIONS = "conform-regressions"
#: Where hypothesis keeps its own cache (constants, unicode data) during ``pcfuzz
#: conform``, relative to the current directory, beside pcfuzz's other work files:
#: hypothesis would otherwise create ``.hypothesis/`` in the user's directory. The
#: ``HYPOTHESIS_STORAGE_DIRECTORY`` variable, when set, wins.
HYPOTHESIS_HOME = Path(".pcfuzz") / "hypothesis"


class _Violation(AssertionError):
    pass


def load_adapter(spec: str) -> Adapter:
    """``module:function`` or ``path/to/file.py:function`` (dots in the function
    part walk attributes). The current directory is importable."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--adapter must be module:function, got {spec!r}")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        if module_name.endswith(".py") or "/" in module_name:
            path = Path(module_name)
            if not path.is_file():
                raise UsageError(f"adapter file {module_name!r} does not exist")
            name = "_pcfuzz_adapter_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:8]
            loader_spec = importlib.util.spec_from_file_location(name, path)
            if loader_spec is None or loader_spec.loader is None:
                raise UsageError(f"cannot import {module_name!r}")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[name] = module
            loader_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except UsageError:
        raise
    except Exception as exc:
        raise UsageError(f"cannot import {module_name!r}: {type(exc).__name__}: {exc}") from exc
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise UsageError(f"{module_name!r} has no attribute {attr!r}")
        target = getattr(target, part)
    if not callable(target):
        raise UsageError(f"{spec!r} is not callable")
    adapter: Adapter = target
    return adapter


# --------------------------------------------------------------------- one scenario


def sse_bytes(contract: str, events: list[Any]) -> bytes:
    """The stream as its API frames it on the wire (LF, one ``data:`` line per event)."""
    from pcfuzz.strategies.sse import render_api_events

    return render_api_events(contract, events)


def run_scenario(adapter: Adapter, scenario: Any, input: str = "events") -> Any:
    """What the adapter returned, or the exception it raised (copied input: the
    adapter cannot change the scenario)."""
    payload: Any
    if input == "sse":
        payload = sse_bytes(scenario.contract, scenario.events)
    else:
        payload = json.loads(json.dumps(scenario.events))
    try:
        return adapter(payload)
    except Exception as exc:  # any exception: the parser rejected the stream
        return exc


def _describe(outcome: Any) -> str:
    if isinstance(outcome, BaseException):
        text = str(outcome)
        return f"rejected the stream: {type(outcome).__name__}: {text[:300]}"
    try:
        shown = json.dumps(outcome, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        shown = repr(outcome)
    count = len(outcome) if isinstance(outcome, (list, tuple)) else "?"
    return f"returned {count} call(s): {shown[:2000]}"


# --------------------------------------------------------------------- results


@dataclass
class Finding:
    """One violated invariant with its minimal stream."""

    contract: str
    family: str
    mutation: str
    label: str
    invariant: str
    expected: str
    got: str
    events: list[Any]
    sse: str | None
    origin: str = "generated"  # or "regression"
    saved: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "contract": self.contract, "family": self.family, "mutation": self.mutation,
            "label": self.label, "invariant": self.invariant, "expected": self.expected,
            "got": self.got, "events": self.events, "sse": self.sse, "origin": self.origin,
            "saved": self.saved,
        }

    def text(self, number: int) -> str:
        lines = [
            f"VIOLATION {number}: [{self.family}] {self.mutation} ({self.label}"
            + (", replayed regression" if self.origin == "regression" else "") + ")",
            f"  invariant: {self.invariant}",
            f"  expected:  {self.expected}",
            f"  got:       {self.got}",
            f"  minimal stream ({len(self.events)} events, JSON lines):",
        ]
        lines += ["    " + json.dumps(e, ensure_ascii=False) for e in self.events]
        if self.sse is not None:
            lines.append("  as SSE bytes:")
            lines += ["    " + line for line in self.sse.rstrip("\n").split("\n")] if self.sse else [
                "    (empty)"]
        if self.saved:
            lines.append(f"  saved: {self.saved}")
        return "\n".join(lines)


@dataclass
class FamilyResult:
    family: str
    labels: list[str]
    examples: int
    seconds: float
    violation: bool
    note: str = ""


@dataclass
class Report:
    contract: str
    adapter: str
    input: str
    strict: bool
    families: list[FamilyResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    regressions_replayed: int = 0
    regressions_fixed: int = 0
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return bool(self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "contract": self.contract, "adapter": self.adapter, "input": self.input,
            "strict": self.strict, "seconds": round(self.seconds, 2),
            "regressions": {"replayed": self.regressions_replayed,
                            "passing": self.regressions_fixed},
            "families": [
                {"family": f.family, "labels": f.labels, "examples": f.examples,
                 "seconds": round(f.seconds, 2),
                 "result": "violation" if f.violation else "ok", "note": f.note}
                for f in self.families
            ],
            "violations": [f.to_json() for f in self.findings],
        }

    def text(self) -> str:
        mode = "strict (safety + strictness)" if self.strict else "default (safety + correct output)"
        out = [f"pcfuzz conform: {self.contract} against {self.adapter} "
               f"(input {self.input}, checks {mode})"]
        out.append(f"regressions replayed: {self.regressions_replayed} "
                   f"({self.regressions_fixed} passing)")
        if self.families:
            width = max(len(f.family) for f in self.families)
            out.append(f"  {'family':<{width}}  {'labels':<24}  {'examples':>8}  result")
            for f in self.families:
                result = "VIOLATION" if f.violation else "ok"
                if f.note:
                    result += f" ({f.note})"
                out.append(f"  {f.family:<{width}}  {'+'.join(f.labels):<24}  "
                           f"{f.examples:>8}  {result}")
        for n, finding in enumerate(self.findings, start=1):
            out.append("")
            out.append(finding.text(n))
        out.append("")
        verdict = (f"{len(self.findings)} violation(s)" if self.findings else "no violations")
        out.append(f"{verdict} in {self.seconds:.1f}s")
        return "\n".join(out)


# --------------------------------------------------------------------- regressions


def _regression_dir(root: Path, contract: str) -> Path:
    return root / contract


def save_regression(root: Path, scenario: Any, finding: Finding) -> Path:
    """Write ``<root>/<contract>/<family>-<hash>.json`` (+ ``.jsonl`` and ``.sse``)."""
    directory = _regression_dir(root, scenario.contract)
    directory.mkdir(parents=True, exist_ok=True)
    body = json.dumps(scenario.to_json(), sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    path = directory / f"{scenario.family}-{digest}.json"
    document = {"format": REGRESSION_FORMAT, **scenario.to_json(),
                "invariant": finding.invariant, "expected_text": finding.expected,
                "got": finding.got}
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    path.with_suffix(".jsonl").write_text(
        "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in scenario.events),
        encoding="utf-8")
    if finding.sse is not None:
        path.with_suffix(".sse").write_text(finding.sse, encoding="utf-8")
    return path


def regression_scenarios(root: Path | None, contract: str) -> Iterator[tuple[Path, Any]]:
    """Saved scenarios of ``contract``, oldest name first. A saved scenario is data
    only (events, calls, expectations: nothing in it names code); a file that is not
    one is skipped, and one of this format that is malformed is a usage error naming
    the file (it would otherwise be a regression silently lost)."""
    from pcfuzz.strategies.conformance import EXPECTATIONS, Scenario

    if root is None:
        return
    directory = _regression_dir(root, contract)
    if not directory.is_dir():
        return
    for path in sorted(directory.glob("*.json")):
        try:
            data = files.read_json(path, what="conform regression")
        except UsageError:
            continue  # not JSON, not a regular file: not a saved scenario
        if not isinstance(data, dict) or data.get("format") != REGRESSION_FORMAT:
            continue
        expected = (*EXPECTATIONS, None)
        if not (all(isinstance(data.get(k), str) for k in ("family", "mutation", "label"))
                and data.get("contract") == contract
                and isinstance(data.get("events"), list)
                and isinstance(data.get("calls"), list)
                and all(isinstance(c, dict) for c in data["calls"])
                and data.get("expect") in expected and data.get("strict_expect") in expected):
            raise UsageError(f"saved scenario {files.shown(path)} is malformed: it needs "
                             f"contract {contract!r}, family, mutation and label (strings), "
                             "events and calls (lists) and known expectations; fix or "
                             "delete it")
        yield path, Scenario.from_json(data)


def finding_for(scenario: Any, outcome: Any, problem: str, input: str, strict: bool,
             origin: str = "generated") -> Finding:
    from pcfuzz.strategies.conformance import EXPECTED_TEXT

    expect = scenario.expectation(strict)
    expected = EXPECTED_TEXT.get(expect, str(expect))
    if expect in ("calls", "nothing_or_calls"):
        expected += ": " + json.dumps(scenario.calls, ensure_ascii=False)[:2000]
    try:
        sse: str | None = sse_bytes(scenario.contract, scenario.events).decode("utf-8")
    except (UnicodeError, TypeError, KeyError, ValueError):
        sse = None
    return Finding(scenario.contract, scenario.family, scenario.mutation, scenario.label,
                   problem, expected, _describe(outcome), scenario.events, sse, origin)


def replay_regressions(adapter: Adapter, contract: str, root: Path | None, *,
                       input: str = "events", strict: bool = False,
                       ) -> tuple[list[Finding], int, int]:
    """Run every saved scenario first: ``(findings, replayed, passing)``."""
    from pcfuzz.strategies.conformance import check

    findings: list[Finding] = []
    replayed = passing = 0
    for path, scenario in regression_scenarios(root, contract):
        if scenario.expectation(strict) is None:
            continue
        replayed += 1
        outcome = run_scenario(adapter, scenario, input)
        problem = check(scenario, outcome, strict=strict)
        if problem is None:
            passing += 1
            continue
        finding = finding_for(scenario, outcome, problem, input, strict, origin="regression")
        finding.saved = str(path)
        findings.append(finding)
    return findings, replayed, passing


# --------------------------------------------------------------------- one family


def run_family(adapter: Adapter, contract: str, family: str, *, input: str = "events",
               strict: bool = False, max_examples: int | None = None,
               derandomize: bool | None = None,
               tick: Callable[[int, bool], None] | None = None,
               seed: int | None = None,
               ) -> tuple[tuple[Any, Any, str] | None, int]:
    """One hypothesis run of one family: ``((scenario, outcome, problem) | None,
    examples)``. A violation is shrunk; the tuple is the minimal failing example.
    ``tick(examples, shrinking)`` is called after every example (progress);
    ``seed`` makes the run reproducible (hypothesis' ``@seed``)."""
    from hypothesis import HealthCheck, Phase, Verbosity, assume, given, settings
    from hypothesis import seed as with_seed
    from hypothesis.errors import Unsatisfiable

    from pcfuzz.strategies.conformance import check, scenarios

    state: dict[str, Any] = {"last": None, "runs": 0}
    # settings.default is typed Optional; hypothesis always has a loaded profile.
    base = settings.default or settings.get_profile("default")
    run_settings = settings(
        base,
        max_examples=max_examples if max_examples is not None else base.max_examples,
        derandomize=(False if seed is not None
                     else base.derandomize if derandomize is None else derandomize),
        database=None,
        deadline=None,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        print_blob=False,
    )

    @run_settings
    @given(scenarios(contract, family, strict=strict))
    def family_test(scenario: Any) -> None:
        if input == "sse":
            try:
                sse_bytes(contract, scenario.events)
            except (UnicodeError, TypeError, KeyError, ValueError):
                assume(False)  # not representable as UTF-8 SSE (lone surrogates)
        state["runs"] += 1
        outcome = run_scenario(adapter, scenario, input)
        problem = check(scenario, outcome, strict=strict)
        if problem is not None:
            state["last"] = (scenario, outcome, problem)
        if tick is not None:
            tick(state["runs"], state["last"] is not None)
        if problem is not None:
            raise _Violation(problem)

    if seed is not None:
        family_test = with_seed(seed)(family_test)
    try:
        family_test()
    except _Violation:
        return state["last"], state["runs"]
    except Unsatisfiable:
        return None, state["runs"]
    except Exception as exc:  # hypothesis' Flaky: a nondeterministic adapter
        if type(exc).__name__ in ("Flaky", "FlakyFailure") and state["last"] is not None:
            scenario, outcome, problem = state["last"]
            return (scenario, outcome, problem + " (the adapter is not deterministic: "
                    "the same stream gave different outcomes)"), state["runs"]
        raise
    return None, state["runs"]


# --------------------------------------------------------------------- whole run

#: Seconds between progress lines while one family runs (a slow adapter, a large
#: profile, a long shrink); a line is printed at the end of every family anyway.
HEARTBEAT_S = 10.0


class _Heartbeat:
    """A ``tick`` for :func:`run_family` that says where a long family stands, at
    most every :data:`HEARTBEAT_S` seconds. ``offset``: examples of earlier batches."""

    def __init__(self, say: Callable[[str], None], label: str) -> None:
        self.say, self.label = say, label
        self.started = self.last = time.monotonic()
        self.offset = 0

    def __call__(self, runs: int, shrinking: bool) -> None:
        now = time.monotonic()
        if now - self.last >= HEARTBEAT_S:
            self.last = now
            doing = "violation found, shrinking it" if shrinking else "running"
            self.say(f"{self.label}: {doing}, {self.offset + runs} examples, "
                     f"{now - self.started:.0f}s")


def conform(adapter: Adapter, contract: str, *, input: str = "events", strict: bool = False,
            budget_s: float | None = None, families: list[str] | None = None,
            regressions: Path | None = None, adapter_name: str = "adapter",
            progress: Callable[[str], None] | None = None, batch: int = 100,
            max_examples: int | None = None, seed: int | None = None) -> Report:
    """Replay saved regressions, then run every family.

    ``budget_s``: seconds shared evenly by the families, each running hypothesis
    batches of ``batch`` examples until its share is spent or a violation is found
    (at least one batch); ``None``: one run per family with the loaded hypothesis
    profile's ``max_examples`` (or ``max_examples``). New findings are saved to
    ``regressions``. ``seed``: the same examples on every run (batch ``n`` of a
    budgeted family uses ``seed + n``).
    """
    from pcfuzz.strategies import conformance as kit

    if contract not in kit.CONTRACTS:
        raise UsageError(f"unknown contract {contract!r}; known: {', '.join(kit.CONTRACTS)}")
    if input not in INPUTS:
        raise UsageError(f"unknown input {input!r}; known: {', '.join(INPUTS)}")
    known = kit.families(contract, strict=True)
    chosen = families or kit.families(contract, strict=strict)
    for name in chosen:
        if name not in known:
            raise UsageError(f"{contract} has no family {name!r}; known: {', '.join(known)}")
        if not strict and name not in kit.families(contract, strict=False):
            raise UsageError(f"family {name!r} holds only strictness checks: add --strict")
    say = progress or (lambda _message: None)
    start = time.monotonic()
    if budget_s is not None:
        plan = f"{budget_s:g}s shared, batches of {batch} examples"
    else:
        from hypothesis import settings

        loaded = settings.default or settings.get_profile("default")
        plan = f"{max_examples or loaded.max_examples} examples each"
    say(f"{len(chosen)} famil{'y' if len(chosen) == 1 else 'ies'} to run ({plan})")
    report = Report(contract, adapter_name, input, strict)
    found, replayed, passing = replay_regressions(adapter, contract, regressions, input=input,
                                                  strict=strict)
    report.findings += found
    report.regressions_replayed, report.regressions_fixed = replayed, passing
    if replayed:
        say(f"replayed {replayed} saved regression(s): {len(found)} still failing")
    failed_families = {f.family for f in found}
    for number, name in enumerate(chosen, start=1):
        family_start = time.monotonic()
        examples = 0
        result: tuple[Any, Any, str] | None = None
        tick = _Heartbeat(say, f"[{number}/{len(chosen)}] {name}")
        if budget_s is None:
            result, examples = run_family(adapter, contract, name, input=input, strict=strict,
                                          max_examples=max_examples, tick=tick, seed=seed)
        else:
            share = budget_s / len(chosen)
            batches = 0
            while True:
                result, runs = run_family(
                    adapter, contract, name, input=input, strict=strict, max_examples=batch,
                    derandomize=False, tick=tick,
                    seed=None if seed is None else seed + batches)
                batches += 1
                examples += runs
                tick.offset = examples
                if result is not None or time.monotonic() - family_start >= share:
                    break
        seconds = time.monotonic() - family_start
        note = ""
        if result is not None:
            scenario, outcome, problem = result
            finding = finding_for(scenario, outcome, problem, input, strict)
            if regressions is not None:
                finding.saved = str(save_regression(regressions, scenario, finding))
            report.findings.append(finding)
        elif name in failed_families:
            note = "a saved regression still fails"
        report.families.append(FamilyResult(name, kit.family_labels(contract, name), examples,
                                            seconds, result is not None or bool(note), note))
        say(f"[{number}/{len(chosen)}] {name}: {examples} examples, "
            f"{'VIOLATION' if result is not None else 'ok'} ({seconds:.1f}s)")
    report.seconds = time.monotonic() - start
    return report
