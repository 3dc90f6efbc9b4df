"""``pcfuzz mutants``: how many sampled mutants of ``contracts/`` the tests kill."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pcfuzz.cli.common import add_command, layout_of
from pcfuzz.engine.targets import subprocess_env
from pcfuzz.errors import EXIT_CLEAN, EXIT_FINDING
from pcfuzz.nightly.mutants import PER_MUTANT_TIMEOUT_S, render, run_mutants, to_json

NAME = "mutants"
HELP = "mutation testing: how many sampled mutants of contracts/ the tests kill"
DESCRIPTION = """\
Mutation testing of the contracts: draw a sample of mutants (a flipped
comparison, a guard turned off, a constant changed, ...) from every site in
contracts/ with a fixed seed, run the example tests against each, and report
which survived. Mutants argued equivalent are listed apart.

Exit status: 0 every mutant run was killed; 1 a survivor; 2 usage error."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = add_command(sub, NAME, HELP, DESCRIPTION)
    p.add_argument("--budget", type=float, default=900,
                   help="seconds for the whole sample (default 900); mutants not started "
                   "by then are not run")
    p.add_argument("--sample", type=int, default=30,
                   help="mutants drawn (fixed seed) from every site (default 30)")
    p.add_argument("--select", metavar="FILE[:LINE],...",
                   help="only these sites: comma-separated 'contracts/<file>:<line>' (or any "
                   "part of it, e.g. a file name)")
    p.add_argument("--timeout", type=float, default=PER_MUTANT_TIMEOUT_S,
                   help=f"seconds per mutant (default {PER_MUTANT_TIMEOUT_S:.0f}); a "
                   "mutant still running then counts as killed (timeout)")
    p.add_argument("--json", action="store_true", help="the summary.json entry as JSON")
    return p


def run(args: argparse.Namespace) -> int:
    result = run_mutants(budget_s=args.budget, sample=args.sample, select=args.select,
                         timeout_s=args.timeout, env=subprocess_env(layout_of(args)))
    sys.stdout.write(to_json(result) if args.json else render(result))
    return EXIT_FINDING if result["survivors"] else EXIT_CLEAN
