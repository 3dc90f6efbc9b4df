"""``pcfuzz bench``: speed figures as ratios to baselines measured in the same run."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pcfuzz.bench.runner import CASE_GROUPS, Options, environment, table
from pcfuzz.bench.runner import run as run_cases
from pcfuzz.cli.common import add_command, count, require_harness, seconds
from pcfuzz.engine.targets import Layout, discover
from pcfuzz.errors import EXIT_CLEAN, UsageError

NAME = "bench"
HELP = "speed figures as ratios to baselines measured in the same run"
DESCRIPTION = """\
Every speed figure as a ratio to a baseline measured in the same run (the
machine may be shared and noisy): strict JSON against json.loads, each
contract's parse_events against decoding the same events' JSON, the wire path
against a floor pipeline and the official SDKs, the growth exponent from 2,000
to 8,000 events, resource bounds under hostile inputs (the SSE decoder's peak
memory per input byte, rejecting at each limit against accepting the prefix
before it), the exec/s of every fuzz target against an instrumented json.loads
target, and the state machines' examples/s. Each row with a goal says whether
it was met.

Exit status: 0 (missed goals are printed, not failures); 2 usage error."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = add_command(sub, NAME, HELP, DESCRIPTION)
    p.add_argument("--quick", action="store_true",
                   help="fewer, shorter rounds and 3 s fuzz runs; skips the "
                   "hypothesis case (under 2 minutes)")
    p.add_argument("--json", metavar="FILE",
                   help="also write one JSON record per case to FILE")
    p.add_argument("--markdown", action="store_true",
                   help="print the table as Markdown (the README's Performance section)")
    p.add_argument("--cases", metavar="GROUP,...",
                   help="run only these case groups, of "
                   f"{', '.join(CASE_GROUPS)} (e.g. --cases startup: the start-up "
                   "figures alone; default: all)")
    p.add_argument("--fuzz-targets", metavar="TARGET,...",
                   help="the fuzz case for these targets only (as pcfuzz list names them; "
                   "the json.loads baseline always runs), e.g. --cases fuzz "
                   "--fuzz-targets strict-json,source-url")
    p.add_argument("--rounds", type=count, metavar="N",
                   help="rounds per ratio case (default: 11, --quick 5)")
    p.add_argument("--fuzz-seconds", type=seconds, metavar="S",
                   help="seconds each fuzz target runs (default: 15, --quick 3)")
    return p


def run(args: argparse.Namespace) -> int:
    require_harness("atheris", "hypothesis")
    groups: Sequence[str] = CASE_GROUPS
    if args.cases:
        groups = [g.strip() for g in args.cases.split(",") if g.strip()]
        unknown = [g for g in groups if g not in CASE_GROUPS]
        if unknown:
            raise UsageError(f"unknown case group(s) {', '.join(unknown)}; "
                             f"known: {', '.join(CASE_GROUPS)}")
    fuzz_targets: list[str] | None = None
    if args.fuzz_targets:
        fuzz_targets = [t.strip() for t in args.fuzz_targets.split(",") if t.strip()]
        known = [t.name for t in discover(Layout.from_options())]
        unknown = [t for t in fuzz_targets if t not in known]
        if unknown:
            raise UsageError(f"unknown fuzz target(s) {', '.join(unknown)}; "
                             f"known: {', '.join(known)}")
    opts = Options(
        quick=args.quick, rounds=args.rounds, groups=groups, fuzz_seconds=args.fuzz_seconds,
        fuzz_targets=fuzz_targets,
        progress=lambda line: print(f"pcfuzz bench: {line}", file=sys.stderr, flush=True),
    )
    started = time.monotonic()
    records = run_cases(opts)
    print(table(records, markdown=args.markdown))
    print()
    print(f"{environment()}; {time.monotonic() - started:.0f} s"
          + ("; --quick" if args.quick else ""))
    missed = [r.case for r in records if r.met is False]
    if missed:
        print(f"goals missed: {len(missed)} of {sum(r.met is not None for r in records)}")
    if args.json:
        Path(args.json).write_text(
            json.dumps([asdict(r) for r in records], indent=2) + "\n", encoding="utf-8"
        )
    return EXIT_CLEAN
