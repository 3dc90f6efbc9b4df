"""``pcfuzz mutants``: how many sampled mutants of ``contracts/`` the tests kill."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pcfuzz.cli.common import add_command, count, layout_of, require_harness, seconds
from pcfuzz.engine.targets import subprocess_env
from pcfuzz.errors import EXIT_CLEAN, EXIT_FINDING, Incomplete, UsageError
from pcfuzz.nightly.mutants import PER_MUTANT_TIMEOUT_S, render, run_mutants, to_json

NAME = "mutants"
HELP = "mutation testing: how many sampled mutants of contracts/ the tests kill"
DESCRIPTION = """\
Mutation testing of the contracts: draw a sample of mutants (a flipped
comparison, a guard turned off, a constant changed, ...) from every site in
contracts/ with a fixed seed, run the example tests against each, and report
which survived. Mutants argued equivalent are listed apart.

Needs a source checkout: the mutants are judged by the project's own tests,
which an installed pcfuzz does not ship.

Exit status: 0 every mutant run was killed; 1 a survivor; 2 usage error (no
tests to judge mutants: an installed pcfuzz; --select matches no site); 3
incomplete (no mutant was judged: the budget ran out first, or the unmutated
code fails its tests)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = add_command(sub, NAME, HELP, DESCRIPTION)
    p.add_argument("--budget", type=seconds, default=900.0, metavar="S",
                   help="seconds for the whole sample (default 900); mutants not started "
                   "by then are not run")
    p.add_argument("--sample", type=count, default=30, metavar="N",
                   help="mutants drawn (fixed seed) from every site (default 30)")
    p.add_argument("--select", metavar="FILE[:LINE],...",
                   help="only these sites: comma-separated 'contracts/<file>:<line>' (or any "
                   "part of it, e.g. a file name)")
    p.add_argument("--timeout", type=seconds, default=PER_MUTANT_TIMEOUT_S, metavar="S",
                   help=f"seconds per mutant (default {PER_MUTANT_TIMEOUT_S:.0f}); a "
                   "mutant still running then counts as killed (timeout)")
    p.add_argument("--json", action="store_true", help="the summary.json entry as JSON")
    return p


def run(args: argparse.Namespace) -> int:
    require_harness("pytest", "hypothesis")
    from pcfuzz._data import checkout_root

    checkout = checkout_root()
    if checkout is None or not (checkout / "tests").is_dir():
        raise UsageError("mutants are judged by the project's own tests, which an "
                         "installed pcfuzz does not ship: run pcfuzz mutants from a source "
                         "checkout (python3 dev.py setup)")
    result = run_mutants(budget_s=args.budget, sample=args.sample, select=args.select,
                         timeout_s=args.timeout, env=subprocess_env(layout_of(args)))
    sys.stdout.write(to_json(result) if args.json else render(result))
    if result["survivors"]:
        return EXIT_FINDING
    if not result["mutants"]:
        raise UsageError(f"--select {args.select!r} matches no mutation site in contracts/"
                         if args.select else "no mutation site found in contracts/")
    if not result["total"]:
        raise Incomplete(f"no mutant was judged ({result['status']}): nothing was "
                         "measured, which is not a clean run")
    return EXIT_CLEAN
