"""``pcfuzz bench``: every speed figure as a ratio to a baseline measured in the same run.

Each timed figure is the median of per-round ratios: in every round the candidate and
its baseline run back to back (their order alternating), so load from other
processes on a shared machine hits both alike; the spread (min-max of the rounds) and
the candidate's absolute rate are printed beside it. Cases:

1. ``strict_json.loads`` vs ``json.loads(bytes)`` on provider event payloads (a
   ~150-byte argument delta, a 2 KB terminal event, a 40 KB arguments string) and,
   1b, on whole documents of 11 KB, 80 KB, 1 MB and 4 MB;
2. per contract, ``parse_events`` on a 2,000-event stream with two interleaved calls
   vs ``json.loads`` of the same events' JSON text;
3. the whole wire path (SSE bytes -> Turn through ``contracts.wire.parse_sse``) vs a
   floor pipeline written in the benchmark, and vs the official SDK's own path where
   its package is installed (``wire.py``; rows with a note otherwise);
4. scaling: the same stream at 2,000 and 8,000 events; the figure is the growth
   exponent log(t8000 / t2000) / log(4), 1.0 for linear;
4b. resources (``resources.py``): the SSE decoder's peak memory per input byte, the
   decoding time per byte of hostile line shapes against a typical capture, and for
   every limit a big input can hit (``JSONLimits``, the SSE decoder's bounds,
   ``StreamLimits``) the CPU time to reject an input crossing it against accepting
   the prefix before the crossing;
5. fuzz throughput: exec/s of each atheris target for a fixed time from an empty
   scratch corpus vs an instrumented plain ``json.loads`` target run the same way;
   each byte-level target also runs with its code under test not instrumented
   (``uninstrumented_target.py``): its ceiling, the most that fewer instrumented
   steps could give it;
6. start-up (``startup.py``): seconds from process start to the first execution of
   each fuzz target (warm instrumentation cache; cold too in a full run), of
   ``import pcfuzz.contracts``, ``pcfuzz --version`` and ``pcfuzz check`` of a 3 KB
   capture, each beside ``python -c pass`` run just before it (absolute seconds: a
   process's start-up is not a ratio to anything inside it);
7. hypothesis: examples/s of each rule-based state machine under the ``ci`` profile
   (full run only).

Nothing here is a test: figures vary with the machine, goals are verdicts
printed for people, and only the record structure is tested.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from pcfuzz.bench import data
from pcfuzz.bench.records import CASE_GROUPS, Options, Record, verdict
from pcfuzz.bench.resources import resources_cases
from pcfuzz.bench.startup import startup_cases
from pcfuzz.engine.targets import Layout, Target, discover, subprocess_env

__all__ = ["CASE_GROUPS", "Options", "Record", "environment", "run", "table"]

def _time(fn: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return time.perf_counter() - start


def _calls_for(fn: Callable[[], object], seconds: float) -> int:
    calls = 1
    while True:
        elapsed = _time(fn, calls)
        if elapsed >= seconds / 4 or calls >= 1 << 20:
            return max(1, int(calls * seconds / max(elapsed, 1e-9)))
        calls *= 4


def paired(
    candidate: Callable[[], object],
    baseline: Callable[[], object],
    rounds: int,
    seconds: float,
) -> tuple[list[float], float]:
    """Per-round ratios candidate/baseline and the candidate's median seconds per call.

    Calls per round are calibrated on the slower of the two so each side runs about
    ``seconds``; the order within a round alternates.
    """
    candidate()
    baseline()
    calls = min(_calls_for(candidate, seconds), _calls_for(baseline, seconds))
    ratios: list[float] = []
    per_call: list[float] = []
    for n in range(rounds):
        if n % 2:
            t_base = _time(baseline, calls)
            t_cand = _time(candidate, calls)
        else:
            t_cand = _time(candidate, calls)
            t_base = _time(baseline, calls)
        ratios.append(t_cand / max(t_base, 1e-12))
        per_call.append(t_cand / calls)
    return ratios, statistics.median(per_call)


def _timed_record(
    case: str,
    group: str,
    candidate: str,
    baseline: str,
    ratios: list[float],
    rate: float,
    rate_unit: str,
    goal: float | None,
) -> Record:
    ratio = statistics.median(ratios)
    return Record(
        case=case, group=group, candidate=candidate, baseline=baseline,
        ratio=round(ratio, 3), ratio_min=round(min(ratios), 3), ratio_max=round(max(ratios), 3),
        rate=round(rate, 1), rate_unit=rate_unit, goal=goal, better="lower",
        met=verdict(ratio, goal, "lower"), rounds=len(ratios),
    )


# --- cases 1 and 1b: strict_json ------------------------------------------------------

EVENT_GOALS = {
    "150 B argument-delta event": (data.delta_event, 1.3),
    "2 KB terminal event": (data.terminal_event, 1.6),
    "40 KB arguments string": (data.arguments_event, 1.5),
}
DOCUMENT_GOAL = 1.5


def _strict_json_case(label: str, group: str, doc: bytes, goal: float, opts: Options) -> Record:
    from pcfuzz.contracts.strict_json import loads

    if loads(doc) != json.loads(doc):
        raise RuntimeError(f"{label}: strict_json and json.loads disagree")
    ratios, per_call = paired(
        lambda: loads(doc), lambda: json.loads(doc), opts.n_rounds, opts.round_seconds
    )
    return _timed_record(
        f"strict_json {label} ({len(doc):,} B)", group, "strict_json.loads(bytes)",
        "json.loads(bytes)", ratios, len(doc) / per_call / 1e6, "MB/s", goal,
    )


def events_cases(opts: Options) -> list[Record]:
    return [
        _strict_json_case(label, "events", build(), goal, opts)
        for label, (build, goal) in EVENT_GOALS.items()
    ]


def documents_cases(opts: Options) -> list[Record]:
    return [
        _strict_json_case(f"{label} document", "documents", data.document(size), DOCUMENT_GOAL, opts)
        for label, size in data.DOCUMENT_SIZES.items()
    ]


# --- cases 2 and 4: parse_events ------------------------------------------------------

STREAM_GOAL = 1.0
GROWTH_GOAL = 1.1


def _parse_events(contract: str) -> Callable[[Any], Any]:
    # The public path only: the provider modules may become packages.
    parse: Callable[[Any], Any] = importlib.import_module(f"pcfuzz.contracts.{contract}").parse_events
    return parse


def streams_cases(opts: Options) -> list[Record]:
    records = []
    for contract, build in data.STREAMS.items():
        parse = _parse_events(contract)
        frames, texts = build(2_000)

        def decode(texts: list[bytes] = texts) -> None:
            loads = json.loads
            for text in texts:
                loads(text)

        ratios, per_call = paired(
            partial(parse, frames), decode, opts.n_rounds,
            opts.round_seconds,
        )
        records.append(_timed_record(
            f"parse_events {contract}, 2,000 events", "streams", "parse_events(events)",
            "json.loads of each event's JSON", ratios, len(texts) / per_call, "events/s",
            STREAM_GOAL,
        ))
    return records


def scaling_cases(opts: Options) -> list[Record]:
    records = []
    for contract, build in data.STREAMS.items():
        parse = _parse_events(contract)
        small, _ = build(2_000)
        large, texts = build(8_000)
        ratios, per_call = paired(
            partial(parse, large),
            partial(parse, small),
            opts.n_rounds,
            opts.round_seconds * 2,
        )
        exponents = [math.log(r) / math.log(4) for r in ratios]
        exponent = statistics.median(exponents)
        records.append(Record(
            case=f"scaling {contract}, 2,000 -> 8,000 events", group="scaling",
            candidate="parse_events, 8,000 events", baseline="parse_events, 2,000 events",
            ratio=round(exponent, 3), ratio_min=round(min(exponents), 3),
            ratio_max=round(max(exponents), 3), rate=round(len(texts) / per_call, 1),
            rate_unit="events/s", goal=GROWTH_GOAL, better="lower",
            met=verdict(exponent, GROWTH_GOAL, "lower"), rounds=len(ratios),
            note="figure: growth exponent log(t8000/t2000)/log(4)",
        ))
    return records


# --- case 3: the whole wire path -----------------------------------------------------

WIRE_GOAL = 2.0
#: parse_sse at least 10x faster than the SDK's own path: a time ratio of at most 0.1.
SDK_GOAL = 0.1
#: Events of the stream the SDK rows use: one SDK reader is quadratic in the stream.
SDK_EVENTS = 500


def wire_cases(opts: Options) -> list[Record]:
    from pcfuzz.bench import wire as wire
    from pcfuzz.contracts.wire import parse_sse

    records = []
    for contract in data.STREAMS:
        name = contract.replace("_", "-")
        floor = wire.FLOORS[contract]
        raw = data.sse_bytes(contract, 2_000)
        turn = parse_sse(name, raw)
        if len(floor(raw)) != len(turn.calls):
            raise RuntimeError(f"{contract}: the floor pipeline and parse_sse disagree")
        ratios, per_call = paired(
            partial(parse_sse, name, raw), partial(floor, raw),
            opts.n_rounds, opts.round_seconds,
        )
        records.append(_timed_record(
            f"wire {contract}: parse_sse vs floor pipeline, 2,000 events ({len(raw) // 1000} KB)",
            "wire", "parse_sse(bytes)", "split + json.loads + dict accumulator", ratios,
            len(raw) / per_call / 1e6, "MB/s", WIRE_GOAL,
        ))
        small = data.sse_bytes(contract, SDK_EVENTS)
        sdk, note = wire.sdk_path(contract, small)
        if sdk is None:
            records.append(Record(
                case=f"wire {contract}: parse_sse vs SDK path", group="wire",
                candidate="parse_sse(bytes)", baseline="SDK path", ratio=None, ratio_min=None,
                ratio_max=None, rate=None, rate_unit="MB/s", goal=SDK_GOAL, better="lower",
                met=None, rounds=0, note=note,
            ))
            continue
        ratios, per_call = paired(
            partial(parse_sse, name, small),
            partial(sdk, small),
            min(opts.n_rounds, 3 if opts.quick else 5), opts.round_seconds,
        )
        record = _timed_record(
            f"wire {contract}: parse_sse vs SDK path, {SDK_EVENTS} events", "wire",
            "parse_sse(bytes)", note, ratios, len(small) / per_call / 1e6, "MB/s", SDK_GOAL,
        )
        record.note = note
        records.append(record)
    return records


# --- case 5: fuzz throughput ----------------------------------------------------------

#: Targets whose input is a byte document (not a structure-aware stream): goal 0.5.
BYTE_LEVEL_TARGETS = frozenset({"strict-json", "source-url"})
FUZZ_GOAL = 0.5
BASELINE_TARGET = "baseline_json_target.py"
#: Runs a byte-level target with the code under test not instrumented: its ceiling.
CEILING_DRIVER = "uninstrumented_target.py"
_FINAL_RATE = re.compile(r"stat::average_exec_per_sec:\s*(\d+)")


def _exec_per_s(path: Path, flags: Sequence[str], seconds: float, layout: Layout) -> float | None:
    """exec/s of one libFuzzer run of ``path`` from an empty scratch corpus."""
    with tempfile.TemporaryDirectory(prefix="pcfuzz-bench-") as scratch:
        corpus = Path(scratch) / "corpus"
        corpus.mkdir()
        command = [
            sys.executable, str(path), *flags, f"-max_total_time={max(1, round(seconds))}",
            "-print_final_stats=1", f"-artifact_prefix={scratch}{os.sep}", str(corpus),
        ]
        try:
            proc = subprocess.run(
                command, cwd=scratch, env=subprocess_env(layout), stdin=subprocess.DEVNULL,
                capture_output=True, text=True, errors="replace", timeout=seconds + 120,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return None
    # libFuzzer's own figure: executions over its fuzzing time (imports excluded).
    rates = [int(m.group(1)) for m in map(_FINAL_RATE.search, (proc.stderr + proc.stdout).splitlines()) if m]
    return float(rates[-1]) if rates else None


def fuzz_cases(opts: Options) -> list[Record]:
    layout = Layout.from_options()
    seconds = opts.fuzz_seconds or (3.0 if opts.quick else 15.0)
    baseline_path = Path(__file__).with_name(BASELINE_TARGET)
    base_flags = ["-max_len=4096", "-timeout=10", "-rss_limit_mb=2048"]
    opts.progress(f"fuzz: baseline json.loads target, {seconds:.0f}s")
    baseline_eps = [_exec_per_s(baseline_path, base_flags, seconds, layout)]
    targets: list[Target] = discover(layout)
    if opts.fuzz_targets is not None:
        targets = [t for t in targets if t.name in opts.fuzz_targets]
    measured: list[tuple[Target, float | None]] = []
    ceilings: dict[str, float | None] = {}
    for target in targets:
        opts.progress(f"fuzz: {target.name}, {seconds:.0f}s")
        flags = [f for f in target.flags() if not f.startswith("-max_total_time")]
        measured.append((target, _exec_per_s(target.path, flags, seconds, layout)))
        if target.name in BYTE_LEVEL_TARGETS:
            opts.progress(f"fuzz: {target.name} with the code under test not instrumented, "
                          f"{seconds:.0f}s")
            ceilings[target.name] = _exec_per_s(
                Path(__file__).with_name(CEILING_DRIVER), [str(target.path), *flags], seconds,
                layout)
    # Once more at the end: the machine's load may have changed meanwhile.
    opts.progress(f"fuzz: baseline json.loads target again, {seconds:.0f}s")
    baseline_eps.append(_exec_per_s(baseline_path, base_flags, seconds, layout))
    base_values = [b for b in baseline_eps if b]
    base = statistics.mean(base_values) if base_values else None
    records = [Record(
        case="fuzz baseline: instrumented json.loads target", group="fuzz",
        candidate=BASELINE_TARGET, baseline="-", ratio=None, ratio_min=None, ratio_max=None,
        rate=round(base, 1) if base else None, rate_unit="exec/s", goal=None, better="higher",
        met=None, rounds=len(base_values),
        note=f"{seconds:.0f}s per run from an empty corpus; run before and after the targets",
    )]
    for target, eps in measured:
        goal = FUZZ_GOAL if target.name in BYTE_LEVEL_TARGETS else None
        ratio = eps / base if eps and base else None
        spread = [eps / b for b in base_values] if eps else []
        records.append(Record(
            case=f"fuzz {target.name}", group="fuzz", candidate=target.fuzzer,
            baseline="json.loads target", ratio=round(ratio, 3) if ratio else None,
            ratio_min=round(min(spread), 3) if spread else None,
            ratio_max=round(max(spread), 3) if spread else None,
            rate=round(eps, 1) if eps else None, rate_unit="exec/s", goal=goal,
            better="higher", met=verdict(ratio, goal, "higher"), rounds=1,
            note="" if goal else "stream target: no goal, exec/s beside the JSON baseline",
        ))
        if target.name in ceilings:
            top = ceilings[target.name]
            records.append(Record(
                case=f"fuzz {target.name}, code under test not instrumented (ceiling)",
                group="fuzz", candidate=CEILING_DRIVER, baseline="json.loads target",
                ratio=round(top / base, 3) if top and base else None,
                ratio_min=round(min(top / b for b in base_values), 3) if top and base_values
                else None,
                ratio_max=round(max(top / b for b in base_values), 3) if top and base_values
                else None,
                rate=round(top, 1) if top else None, rate_unit="exec/s", goal=None,
                better="higher", met=None, rounds=1,
                note="no coverage feedback, inputs as small as the baseline's: the most any "
                     "cut in instrumented steps can give this target",
            ))
    return records


# --- case 6: hypothesis state machines ------------------------------------------------

# ``TestM = M.TestCase``, or one name per contract revision:
# ``TestM, TestM20261201 = machines_per_revision(M)`` (tests/_revisions.py)
_MACHINES = re.compile(r"^(Test\w+Machine\w*(?:, Test\w+Machine\w*)*) = "
                       r"(?:\w+\.TestCase|machines_per_revision\()", re.MULTILINE)
_PASSING = re.compile(r"(\d+) passing")
_GENERATE = re.compile(r"during generate phase \(([\d.]+) seconds\)")


def hypothesis_cases(opts: Options) -> list[Record]:
    root = Layout.from_options().project_root
    records = []
    for path in sorted((root / "tests").glob("test_*.py")):
        names = [name for line in _MACHINES.findall(path.read_text(encoding="utf-8"))
                 for name in line.split(", ")]
        for name in names:
            node = f"{path.relative_to(root)}::{name}"
            opts.progress(f"hypothesis: {node}")
            env = subprocess_env(Layout.from_options(), {"HYPOTHESIS_PROFILE": "ci"})
            proc = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                 "--hypothesis-show-statistics", node],
                cwd=root, env=env, capture_output=True, text=True, check=False, timeout=900,
            )
            passing = _PASSING.search(proc.stdout)
            generate = _GENERATE.search(proc.stdout)
            rate = None
            if passing and generate and float(generate.group(1)) > 0:
                rate = int(passing.group(1)) / float(generate.group(1))
            records.append(Record(
                case=f"hypothesis {name}", group="hypothesis", candidate=node, baseline="-",
                ratio=None, ratio_min=None, ratio_max=None,
                rate=round(rate, 1) if rate else None, rate_unit="examples/s", goal=None,
                better="higher", met=None, rounds=1,
                note="ci profile" if proc.returncode == 0 else f"pytest exit {proc.returncode}",
            ))
    return records


CASES: dict[str, Callable[[Options], list[Record]]] = {
    "events": events_cases,
    "documents": documents_cases,
    "streams": streams_cases,
    "wire": wire_cases,
    "scaling": scaling_cases,
    "resources": resources_cases,
    "startup": startup_cases,
    "fuzz": fuzz_cases,
    "hypothesis": hypothesis_cases,
}


def run(opts: Options) -> list[Record]:
    """Run the selected case groups in order; returns one record per case."""
    records: list[Record] = []
    for group in CASE_GROUPS:
        if group not in opts.groups:
            continue
        if group == "hypothesis" and opts.quick:
            continue
        opts.progress(f"{group} ...")
        records += CASES[group](opts)
    return records


# --- output ---------------------------------------------------------------------------


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _rate(record: Record) -> str:
    if record.rate is None:
        return "-"
    value = record.rate
    scaled = f"{value:,.0f}" if value >= 100 else f"{value:.1f}"
    return f"{scaled} {record.rate_unit}"


def _goal(record: Record) -> str:
    if record.goal is None:
        return "-"
    return f"{'<=' if record.better == 'lower' else '>='} {record.goal}"


#: How a group's figure is written: a ratio ("x"), an exponent, seconds.
_SUFFIX = {"scaling": "", "startup": " s"}


def table(records: Sequence[Record], markdown: bool = False) -> str:
    header = ["case", "ratio", "min-max", "rate", "goal", "verdict"]
    rows = [
        [
            r.case,
            _fmt(r.ratio) + ("" if r.ratio is None else _SUFFIX.get(r.group, "x")),
            "-" if r.ratio_min is None else f"{_fmt(r.ratio_min)}-{_fmt(r.ratio_max)}",
            _rate(r),
            _goal(r),
            r.verdict(),
        ]
        for r in records
    ]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)


def environment() -> str:
    # Start-up rows depend on it: without bytecode files every process compiles each
    # module of the checkout it imports (an installed wheel has them from pip).
    bytecode = ("; no bytecode cache (PYTHONDONTWRITEBYTECODE: every start compiles "
                "what it imports)" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "")
    return (
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs{bytecode}; medians of "
        "per-round ratios, baseline interleaved in the same process; scaling rows give "
        "the growth exponent, resources rows peak memory per input byte or thread CPU "
        "time ratios, start-up rows seconds (rate: x python -c pass run just before; "
        "CPU time rows: wall over CPU time of the same starts), "
        "fuzz rows exec/s ratios (higher is better)"
    )
