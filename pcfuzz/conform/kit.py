"""The conformance kit's runner: this project's turn models and mutations against any
parser, through an adapter.

An *adapter* is a plain function ``adapter(events) -> [{"call_id": str, "name": str,
"arguments": dict}, ...]``: the calls the parser under test would execute, given the
whole list of events of one turn (``input="events"``: the decoded events in the
shapes ``pcfuzz.contracts.<provider>.parse_events`` takes) or the raw SSE bytes of
the turn (``input="sse"``). Raising any ``Exception`` means the parser rejected the
stream. The *release form* (``form="release"``) is ``adapter(stream, release,
continuation)``: the stream handed out one event at a time, each ``release(call)``
timed by the events delivered (:mod:`pcfuzz.conform.timing`), the follow-up request
checked for one result per released call (:mod:`pcfuzz.conform.followup`).

A run (:func:`conform`): the adapter is checked on the contract's golden stream
(:mod:`pcfuzz.conform.validate`: a usage error when it cannot run at all), the saved
regressions are replayed, then every scenario family is searched
(:mod:`pcfuzz.conform.search`) until its share of the budget is spent, keeping every
distinct root cause (:mod:`pcfuzz.conform.explain`), each shrunk as far as the time
allows, reported (:mod:`pcfuzz.conform.report`) and saved the moment its batch ends
(:mod:`pcfuzz.conform.regressions`). The adapter is called contained
(:mod:`pcfuzz.conform.sandbox`): a per-call timeout, its output captured, whatever
it raises or does to its process turned into a finding. The command is ``pcfuzz
conform`` (:mod:`pcfuzz.cli.conform`); the pytest helper is
:func:`pcfuzz.conform.pytest_plugin.pcfuzz_conformance`.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pcfuzz.conform.explain import explain
from pcfuzz.conform.gate import GATES, check_gate
from pcfuzz.conform.loader import Adapter, load_adapter
from pcfuzz.conform.options import check_realism, check_tool_names, plan_families
from pcfuzz.conform.regressions import REGRESSION_FORMAT, regression_scenarios, save_regression
from pcfuzz.conform.report import FamilyResult, Finding, Replayed, Report
from pcfuzz.conform.sandbox import DEFAULT_TIMEOUT_S, FORMS, Outcome, Sandbox
from pcfuzz.conform.search import (
    Hit,
    Search,
    Stopped,
    TimeUp,
    check_stop,
    sse_bytes,
    verdict,
    warm_up,
)
from pcfuzz.conform.validate import validate_adapter
from pcfuzz.errors import UsageError
from pcfuzz.strategies.realism import DEFAULT as DEFAULT_REALISM
from pcfuzz.strategies.realism import LEVELS as REALISM_LEVELS

__all__ = [
    "Adapter",
    "DEFAULT_REALISM",
    "DEFAULT_REGRESSIONS",
    "DEFAULT_TIMEOUT_S",
    "FORMS",
    "FamilyResult",
    "Finding",
    "GATES",
    "HOSTILE_NAMES",
    "HEARTBEAT_S",
    "HYPOTHESIS_HOME",
    "INPUTS",
    "REALISM_LEVELS",
    "REGRESSION_FORMAT",
    "Report",
    "Stopped",
    "UsageError",
    "check_database",
    "check_family",
    "check_form",
    "check_positive",
    "conform",
    "finding_for",
    "load_adapter",
    "regression_scenarios",
    "replay_regressions",
    "save_regression",
    "explain",
    "run_scenario",
    "sse_bytes",
    "verdict",
]

INPUTS = ("events", "sse")
#: ``tool_names=HOSTILE_NAMES``: each strategies module's own call names (arbitrary
#: Unicode for Chat Completions) instead of identifiers (``--hostile-names``).
HOSTILE_NAMES = "hostile"  # the marker of pcfuzz.strategies.conformance.HOSTILE_NAMES
DEFAULT_REGRESSIONS = "conform-regressions"
#: Where hypothesis keeps its own cache (constants, unicode data) during ``pcfuzz
#: conform``, relative to the current directory, beside pcfuzz's other work files:
#: hypothesis would otherwise create ``.hypothesis/`` in the user's directory. The
#: ``HYPOTHESIS_STORAGE_DIRECTORY`` variable, when set, wins.
HYPOTHESIS_HOME = Path(".pcfuzz") / "hypothesis"
#: Seconds between progress lines while one family runs (a slow adapter, a large
#: profile, a long shrink); a line is printed at the end of every family anyway.
HEARTBEAT_S = 10.0


def check_positive(value: float | None, what: str) -> None:
    """A budget or timeout must be a finite number of seconds above zero."""
    if value is None:
        return
    if type(value) not in (int, float) or not math.isfinite(value) or value <= 0:
        raise UsageError(f"{what} must be a finite number of seconds above 0, got {value!r}")


def check_form(form: Any) -> None:
    """An adapter form is named, never guessed from the adapter's signature:
    ``plain`` (the default) or ``release``."""
    if form not in FORMS:
        raise UsageError(f"unknown adapter form {form!r}; known: {', '.join(FORMS)} (plain: "
                         "adapter(events) -> calls; release: adapter(stream, release, "
                         "continuation))")


def check_form_and_gate(form: Any, gate: Any) -> None:
    """A gate is a check after the adapter returns; in the release form the adapter
    runs a call when it releases it, so no gate can stop that: the two together are
    a usage error (fail closed: the run would otherwise claim a protection it lacks)."""
    if form == "release" and gate != "none":
        raise UsageError(f"--gate {gate} cannot apply to the release form: a release is "
                         "the call running, before any check after the adapter returns")


def check_database(database: Any, seed: int | None) -> None:
    """A database and a seed exclude each other: hypothesis' ``seed()`` turns the
    database off (a seeded run would neither replay nor save anything)."""
    if database is not None and seed is not None:
        raise UsageError("a seeded run does not use the example database (hypothesis "
                         "turns it off): give a database or a seed, not both")


# --------------------------------------------------------------------- findings


def finding_for(hit: Hit, input: str, strict: bool, origin: str = "generated") -> Finding:
    """The finding of one failing example."""
    from pcfuzz.strategies.conformance import EXPECTED_TEXT

    scenario = hit.scenario
    expect = scenario.expectation(strict)
    expected = EXPECTED_TEXT.get(expect, str(expect)) if expect else "(not checked)"
    if expect in ("calls", "nothing_or_calls"):
        expected += ": " + json.dumps(scenario.calls, ensure_ascii=False)[:2000]
    try:
        sse: str | None = sse_bytes(scenario.contract, scenario.events).decode("utf-8")
    except (UnicodeError, TypeError, KeyError, ValueError):
        sse = None
    why = hit.explanation
    if why.label:  # judged on its own rule, not the scenario's expectation
        expected = why.expected or expected
    return Finding(scenario.contract, scenario.family, scenario.mutation,
                   why.label or scenario.label,
                   hit.problem, expected, hit.outcome.describe(), scenario.events, sse,
                   origin, rule=why.rule, unsafe_at=why.unsafe_at, diff=list(why.diff),
                   fix=why.fix, key=why.key, output=hit.outcome.output, note=hit.note,
                   realism=scenario.realism)


def replay_regressions(adapter: Adapter, contract: str, root: Path | None, *,
                       input: str = "events", strict: bool = False, form: str = "plain",
                       ) -> tuple[list[Finding], int, int]:
    """Run every saved scenario: ``(findings, replayed, passing)``, one finding per
    root cause (another file of the same cause counts under its "also found by")."""
    check_form(form)
    report = Report(contract, "adapter", input, strict, form=form)
    with Sandbox(adapter, form=form) as sandbox:
        search = Search(sandbox, contract, input, strict)
        _replay(search, contract, root, None, report, report.findings.append)
    return report.findings, report.regressions_replayed, report.regressions_fixed


# --------------------------------------------------------------------- one family


class _Heartbeat:
    """A ``tick`` for a family's search that says where a long family stands, at most
    every :data:`HEARTBEAT_S` seconds."""

    def __init__(self, say: Callable[[str], None], label: str) -> None:
        self.say, self.label = say, label
        self.started = self.last = time.monotonic()

    def __call__(self, runs: int, shrinking: bool) -> None:
        now = time.monotonic()
        if now - self.last >= HEARTBEAT_S:
            self.last = now
            doing = "violation found, shrinking it" if shrinking else "running"
            self.say(f"{self.label}: {doing}, {runs} examples, {now - self.started:.0f}s")


def check_family(adapter: Adapter, contract: str, family: str, *, input: str = "events",
                 strict: bool = False, max_examples: int | None = None,
                 budget_s: float | None = None, regressions: Path | None = None,
                 adapter_timeout_s: float = DEFAULT_TIMEOUT_S, seed: int | None = None,
                 database: Any = None, form: str = "plain", tool_names: Any = None,
                 mutations: list[str] | None = None, exclude: list[str] | None = None,
                 gate: str = "none", gated: list[Any] | None = None,
                 realism: str = DEFAULT_REALISM,
                 ) -> tuple[list[Finding], list[Replayed], int]:
    """One family for the pytest helper: the adapter checked on the golden stream,
    the family's saved regressions replayed, then its search (``max_examples``
    examples, or ``budget_s`` seconds, whichever ends first). Returns ``(findings,
    replayed regressions, examples)``; new findings are saved to ``regressions``.
    ``database``, ``form``, ``tool_names``, ``mutations``, ``exclude``, ``gate``,
    ``realism``: as for :func:`conform` (a family the filters leave empty runs no
    example); what the gate stopped is appended to ``gated`` when given."""
    check_positive(budget_s, "the budget")
    check_positive(adapter_timeout_s, "the adapter timeout")
    check_database(database, seed)
    check_form(form)
    names = check_tool_names(tool_names)
    check_realism(realism)
    check_gate(contract, gate)
    check_form_and_gate(form, gate)
    plan = plan_families(contract, strict=strict, families=None, mutations=mutations,
                         exclude=exclude) if mutations or exclude else None
    with Sandbox(adapter, timeout_s=adapter_timeout_s, form=form) as sandbox:
        start = time.monotonic()
        deadline = None if budget_s is None else start + budget_s
        validate_adapter(sandbox, contract, input, getattr(adapter, "__name__", "adapter"))
        search = Search(sandbox, contract, input, strict, database=database, plan=plan,
                        tool_names=names, gate=gate, realism=realism)
        replays: list[Replayed] = []
        findings: list[Finding] = []
        for path, scenario in regression_scenarios(regressions, contract):
            if (scenario.family != family or scenario.expectation(strict) is None
                    or not search.selects(scenario)):
                continue
            hit = search.evaluate(scenario, deadline)
            replays.append(Replayed(str(path), hit is None,
                                    "" if hit is None else hit.explanation.rule))
            if hit is not None and hit.explanation.key not in search.known:
                search.known[hit.explanation.key] = hit
                finding = finding_for(hit, input, strict, origin="regression")
                finding.saved = str(path)
                findings.append(finding)
        if max_examples is None and deadline is None:
            from hypothesis import settings

            max_examples = (settings.default or settings.get_profile("default")).max_examples
        examples = 0
        hits: list[Hit] = []
        if plan is None or family in plan:
            examples, hits, _ = search.family(family, deadline=deadline,
                                              max_examples=max_examples, seed=seed)
        for hit in hits:
            finding = finding_for(hit, input, strict)
            if regressions is not None:
                finding.saved = str(save_regression(regressions, hit.scenario, finding))
            findings.append(finding)
        for finding in findings:
            finding.also = dict(search.also.get(finding.key, {}))
        if gated is not None:
            gated.extend(search.gated.values())
    return findings, replays, examples


# --------------------------------------------------------------------- whole run


def conform(adapter: Adapter, contract: str, *, input: str = "events", strict: bool = False,
            budget_s: float | None = None, families: list[str] | None = None,
            regressions: Path | None = None, adapter_name: str = "adapter",
            progress: Callable[[str], None] | None = None, batch: int = 100,
            max_examples: int | None = None, seed: int | None = None,
            adapter_timeout_s: float = DEFAULT_TIMEOUT_S, reference: str | None = None,
            isolation: str = "auto",
            on_finding: Callable[[Finding], None] | None = None,
            database: Any = None, form: str = "plain", tool_names: Any = None,
            mutations: list[str] | None = None, exclude: list[str] | None = None,
            gate: str = "none", realism: str = DEFAULT_REALISM) -> Report:
    """Check the adapter, replay saved regressions, then search every family.

    ``budget_s``: seconds for the whole run (start-up, regressions, searching and
    shrinking included), shared by the families (each gets the time left over the
    families left); ``max_examples``: examples per family (with a budget too,
    whichever ends first); neither: the loaded hypothesis profile's
    ``max_examples`` per family. Every distinct root cause is kept, shrunk as far as
    the time allows, saved to ``regressions`` and passed to ``on_finding`` as soon
    as its batch ends. ``seed``: the same examples on every run. A Ctrl-C (or
    :class:`Stopped`) ends the run: the report of what it found is returned with
    ``interrupted`` set. Raises :class:`UsageError` for bad arguments and an adapter
    that cannot run the contract's golden stream.

    ``database``: a hypothesis example database (an ``ExampleDatabase``, such as
    :func:`pcfuzz.database.open_database` returns) or None: each family's search
    replays the failing examples saved in it first (hypothesis' reuse phase) and
    saves what it finds, so what one runner found the next replays first.

    ``form``: how the adapter is called. ``plain``: ``adapter(events) -> calls``.
    ``release``: ``adapter(stream, release, continuation)``, where ``stream`` hands
    out the events (or each event's SSE frame) one at a time, ``release(call)`` says
    the framework would run ``call`` now and ``continuation(request)`` hands over the
    request it would send next; each release is attributed to the events delivered
    when it happened (docs/conformance.md, "Two forms").
    ``tool_names``: the names every generated call carries (a list of distinct
    identifiers; default: identifiers the kit draws; :data:`HOSTILE_NAMES`: each
    strategies module's own, arbitrary Unicode for Chat Completions).
    ``mutations``/``exclude``: run only / never these labelled mutations
    (``family:mutation`` or the mutation alone, as findings print them; with
    ``mutations`` the valid streams are left out). ``gate``: the check the
    integration applies after the adapter returns (:mod:`pcfuzz.conform.gate`:
    ``finish_reason`` for openai-chat, ``stop_reason`` for anthropic-messages);
    what it stops is reported apart (``Report.gated``) and does not fail the run.
    ``realism``: how realistic the generated streams are
    (:mod:`pcfuzz.strategies.realism`): ``sdk`` (the default) only what the providers
    send, ``wire`` anything that validates against the SDK types, ``hostile`` this
    project's adversarial shapes; a mutation is drawn on a base stream of that level.
    """
    start = time.monotonic()
    from pcfuzz.strategies import conformance as kit

    if contract not in kit.CONTRACTS:
        raise UsageError(f"unknown contract {contract!r}; known: {', '.join(kit.CONTRACTS)}")
    if input not in INPUTS:
        raise UsageError(f"unknown input {input!r}; known: {', '.join(INPUTS)}")
    check_positive(budget_s, "the budget")
    check_positive(adapter_timeout_s, "the adapter timeout")
    check_database(database, seed)
    check_form(form)
    if max_examples is not None and (type(max_examples) is not int or max_examples < 1):
        raise UsageError(f"max_examples must be a whole number above 0, got {max_examples!r}")
    names = check_tool_names(tool_names)
    check_realism(realism)
    check_gate(contract, gate)
    check_form_and_gate(form, gate)
    plan = plan_families(contract, strict=strict, families=families, mutations=mutations,
                         exclude=exclude)
    chosen = list(plan)
    if budget_s is None and max_examples is None:
        from hypothesis import settings

        max_examples = (settings.default or settings.get_profile("default")).max_examples
    say = progress or (lambda _message: None)
    end = None if budget_s is None else start + budget_s
    bound = " and ".join(p for p in (f"{budget_s:g}s budget" if budget_s else "",
                                     f"{max_examples} examples per family" if max_examples
                                     else "") if p)
    report = Report(contract, adapter_name, input, strict, plan=bound, form=form, gate=gate,
                    tool_names=("identifiers" if names is None else names
                                if isinstance(names, str) else ",".join(names)),
                    selection=" ".join([*(f"only {m}" for m in mutations or ()),
                                        *(f"not {m}" for m in exclude or ())]),
                    realism=realism)
    sandbox = Sandbox(adapter, reference=reference, timeout_s=adapter_timeout_s,
                      isolation=isolation, form=form)
    search = Search(sandbox, contract, input, strict, say=say, database=database,
                    plan=plan, tool_names=names, gate=gate, realism=realism)
    reported: set[str] = set()

    def emit(finding: Finding) -> None:
        reported.add(finding.key)
        report.findings.append(finding)
        if on_finding is not None:
            on_finding(finding)

    def found(hit: Hit) -> None:
        finding = finding_for(hit, input, strict)
        if regressions is not None:
            finding.saved = str(save_regression(regressions, hit.scenario, finding))
        emit(finding)

    number, name = 0, ""
    try:
        say(f"{len(chosen)} famil{'y' if len(chosen) == 1 else 'ies'} to run ({bound})")
        validate_adapter(sandbox, contract, input, adapter_name,
                         None if end is None else end - time.monotonic())
        report.isolation = ("in a worker process (per-call timeout "
                            f"{adapter_timeout_s:g}s, output captured)"
                            if sandbox.mode == "process" else sandbox.note)
        replays = _replay(search, contract, regressions, end, report, emit)
        if replays:
            say(report.replay_lines()[0] + "".join(
                f"\n  still failing: {r.path}: {r.rule}" for r in replays if not r.passing))
        took = warm_up(contract, chosen[0], strict, plan[chosen[0]], names, realism)
        if took >= 1.0:
            say(f"hypothesis built its caches in {took:.1f}s (kept for later runs in this "
                "directory)")
        for number, name in enumerate(chosen, start=1):
            _one_family(search, name, number, len(chosen), end, max_examples, batch, seed,
                        report, found, say)
            if sandbox.refused:
                report.incomplete.append(f"stopped after {name}: {sandbox.refused}")
                break
    except TimeUp as exc:
        report.incomplete.append(str(exc) if exc.args else "the budget ran out during the "
                                 "regressions' replay")
    except KeyboardInterrupt as exc:
        why = exc.args[0] if isinstance(exc, Stopped) and exc.args else "SIGINT (Ctrl-C)"
        report.interrupted = (f"stopped by {why} after {time.monotonic() - start:.0f}s"
                              + (f", during family {name}" if name else ""))
        say(f"{report.interrupted}: reporting what was found")
    finally:
        sandbox.close()
    for key, hit in search.known.items():  # found by a batch that was cut short
        if key not in reported:
            hit.note = hit.note or "interrupted while shrinking: may not be minimal"
            found(hit)
    for finding in report.findings:
        finding.also = dict(search.also.get(finding.key, {}))
    report.gated = list(search.gated.values())
    ran = {f.family for f in report.families}
    report.incomplete += [f"family {f} did not run" for f in chosen if f not in ran
                          and not report.interrupted]
    report.incomplete += [f"family {f.family} ran no example ({f.note or 'no time left'})"
                          for f in report.families if not f.examples]
    report.seconds = time.monotonic() - start
    return report


def _replay(search: Search, contract: str, root: Path | None, end: float | None,
            report: Report, emit: Callable[[Finding], None]) -> list[Replayed]:
    replays: list[Replayed] = []
    for path, scenario in regression_scenarios(root, contract):
        check_stop()
        if scenario.expectation(search.strict) is None or not search.selects(scenario):
            continue
        hit = search.evaluate(scenario, end)
        replays.append(Replayed(str(path), hit is None,
                                "" if hit is None else hit.explanation.rule))
        if hit is None:
            continue
        key = hit.explanation.key
        if key in search.known:
            search.also.setdefault(key, {})[f"regression {path.name}"] = 1
            continue
        search.known[key] = hit
        finding = finding_for(hit, search.input, search.strict, origin="regression")
        finding.saved = str(path)
        emit(finding)
    report.replayed = replays
    report.regressions_replayed = len(replays)
    report.regressions_fixed = sum(r.passing for r in replays)
    return replays


def _one_family(search: Search, name: str, number: int, total: int, end: float | None,
                max_examples: int | None, batch: int, seed: int | None, report: Report,
                found: Callable[[Hit], None], say: Callable[[str], None]) -> None:
    from pcfuzz.strategies import conformance as kit

    began = time.monotonic()
    deadline = None if end is None else began + (end - began) / (total - number + 1)
    label = f"[{number}/{total}] {name}"
    before = len(report.findings)
    examples, stop = 0, ""
    hits: list[Hit] = []
    try:
        examples, hits, stop = search.family(
            name, deadline=deadline, max_examples=max_examples, batch=batch, seed=seed,
            tick=_Heartbeat(say, label), on_found=found, label=label)
    finally:
        seconds = time.monotonic() - began
        failing_replays = {f.family for f in report.findings if f.origin == "regression"}
        new = len(report.findings) - before
        note = stop or ("a saved regression still fails" if name in failing_replays and not new
                        else "")
        report.families.append(FamilyResult(name, kit.family_labels(search.contract, name),
                                            examples, seconds,
                                            bool(new) or name in failing_replays, note, new))
    say(f"{label}: {examples} examples, "
        f"{f'VIOLATION ({len(hits)} new)' if hits else 'ok'} ({seconds:.1f}s)")


def run_scenario(adapter: Adapter, scenario: Any, input: str = "events",
                 form: str = "plain") -> Outcome:
    """One scenario through a fresh sandbox (a test helper: a run keeps one)."""
    from pcfuzz.conform.search import payload_for

    check_form(form)
    with Sandbox(adapter, form=form) as sandbox:
        return sandbox.call(payload_for(scenario, input, form))
