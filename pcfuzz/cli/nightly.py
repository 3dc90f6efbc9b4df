"""``pcfuzz nightly``: every target, the property suite, coverage, mutants,
minimization and the report."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pcfuzz.cli.common import add_command, jobs, layout_of, require_harness, seconds
from pcfuzz.errors import UsageError
from pcfuzz.nightly.adapters import AdapterSpec, parse_adapter, read_config
from pcfuzz.nightly.pipeline import NightlyOptions, run_nightly
from pcfuzz.nightly.plan import default_jobs
from pcfuzz.nightly.shard import Shard, parse_shard

NAME = "nightly"
HELP = "every target, the property suite, minimization, report"
DESCRIPTION = """\
The nightly job within --budget seconds: fuzz every target, run the property
suite under the nightly hypothesis profile, measure coverage of the contracts,
run a sample of mutants, minimize the working corpora, and write the report
directory (summary.json, summary.md, junit.xml, one SVG plot per target).

Your own parsers join the night with --adapter CONTRACT=MODULE:FUNCTION
(CONTRACT:sse=... for an adapter that takes the raw SSE bytes, CONTRACT:release=...
for the release form adapter(stream, release, continuation); repeatable), or
with the adapters list of ./pcfuzz.toml's [nightly] table or ./pyproject.toml's
[tool.pcfuzz.nightly] table: each gets the conformance kit's families in the
property phase and a byte-level fuzz target with the contract's own parser as
the oracle, both reported per adapter (docs/conformance.md, "In the nightly").

Exit status: 0 clean (everything planned ran, nothing found); 1 a finding (a
new crash, a failing property test or adapter kit test); 2 usage error; 3
incomplete (a target executed nothing, tests were not collected or not run, a
phase did less than planned): summary.md opens with the reasons."""


def _shard(text: str) -> Shard:
    try:
        return parse_shard(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = add_command(sub, NAME, HELP, DESCRIPTION)
    p.add_argument("--budget", type=seconds, default=600.0, metavar="S",
                   help="total seconds (default 600)")
    p.add_argument("--jobs", type=jobs, default=default_jobs(), metavar="N",
                   help="slots: processes run side by side (fuzz targets, the property "
                   f"suite, mutants, minimization; default: the CPUs, here {default_jobs()})")
    p.add_argument("--report", default="reports/latest", help="report directory")
    p.add_argument("--properties", choices=["auto", "quick", "full", "off"], default="auto",
                   help="property suite: every property test, examples sized from its "
                   "measured cost up to the nightly profile's count (auto = full); quick "
                   "caps them at 20; off skips the suite")
    p.add_argument("--property-budget", type=seconds, metavar="S",
                   help="seconds for the property suite (default: 30%% of the budget)")
    p.add_argument("--property-tests", nargs="*",
                   help="pytest paths (default: a checkout's tests/; installed: none, off)")
    p.add_argument("--hypothesis-db", help="the local example database directory (CI caches "
                   "it; default .hypothesis/nightly-db in a checkout, .pcfuzz/hypothesis-db "
                   "installed)")
    p.add_argument("--database", metavar="URL",
                   help="the example database every property test uses: a path, or "
                   "redis://host:port/db shared by every runner (needs the scale extra; "
                   "multiplexed with the local one)")
    p.add_argument("--database-readonly", action="store_true",
                   help="replay what the database holds, write nothing to it (pull requests)")
    p.add_argument("--no-minimize", action="store_true",
                   help="skip the corpus minimization phase (its share goes to fuzzing)")
    p.add_argument("--target", action="append", help="only these targets (repeatable)")
    p.add_argument("--no-coverage", action="store_true",
                   help="skip line/branch coverage of contracts/ and the transition replay")
    p.add_argument("--mutants", action=argparse.BooleanOptionalAction, default=None,
                   help="run the mutants phase (default: on from a 300 s budget)")
    p.add_argument("--history", help="JSON-lines file each night's summary is appended to "
                   "(default: REPORT/../history.jsonl)")
    p.add_argument("--adapter", action="append", metavar="CONTRACT=MODULE:FUNCTION",
                   help="a parser of your own (as pcfuzz conform --adapter; CONTRACT:sse=... "
                   "when it takes SSE bytes, CONTRACT:release=... for the release form, "
                   "CONTRACT:sse:release=... for both): the kit in the property phase and a byte-level "
                   "fuzz target, reported per adapter (repeatable; default: the adapters of "
                   "./pcfuzz.toml [nightly] or ./pyproject.toml [tool.pcfuzz.nightly])")
    p.add_argument("--config", metavar="FILE",
                   help="read the adapters from this pcfuzz.toml or pyproject.toml")
    p.add_argument("--shard", metavar="I/N", type=_shard,
                   help="run shard I of N: the targets, property tests and mutants whose "
                   "name hashes to it (join the shards' reports with pcfuzz report merge)")
    return p


def _adapters(args: argparse.Namespace) -> list[AdapterSpec]:
    """The command line's adapters, else the configuration's; each must import."""
    from pcfuzz.conform.loader import load_adapter

    declared = args.adapter or read_config(Path.cwd(), Path(args.config) if args.config
                                           else None)
    adapters = [parse_adapter(text) for text in declared]
    for adapter in adapters:
        load_adapter(adapter.function)  # a usage error (exit 2) now, not a failed night
    return adapters


def run(args: argparse.Namespace) -> int:
    require_harness("atheris", "hypothesis", "pytest")
    opts = NightlyOptions(
        budget_s=args.budget,
        jobs=args.jobs,
        report_dir=Path(args.report).resolve(),
        properties=args.properties,
        property_budget_s=args.property_budget,
        property_tests=args.property_tests or [],
        hypothesis_db=args.hypothesis_db,
        database=args.database,
        database_readonly=args.database_readonly,
        minimize=not args.no_minimize,
        targets=args.target or [],
        coverage=not args.no_coverage,
        mutants=args.mutants,
        history=Path(args.history).resolve() if args.history else None,
        adapters=_adapters(args),
        adapter_root=Path.cwd(),
        shard=args.shard,
    )
    return run_nightly(layout_of(args), opts)
