"""``pcfuzz drift``: the installed official SDKs' types against a contract revision."""

from __future__ import annotations

import argparse
import json
from typing import Any

from pcfuzz.cli.common import add_command
from pcfuzz.conform.drift import render_table, report
from pcfuzz.contracts.registry import NAMES
from pcfuzz.errors import EXIT_CLEAN, EXIT_FINDING

NAME = "drift"
HELP = "compare the installed official SDKs' types with a pinned contract revision"
DESCRIPTION = """\
Compare the installed official SDKs' types (the oracles extra: openai,
anthropic, google-genai) with the tables of a contract revision (default: the
newest shipped). Each difference is a row: new (the SDK knows a value the
revision does not: a current stream carrying it is rejected), removed, now
optional / not in SDK (a field the revision requires may be missing), now
required, kept required (on purpose, failing closed).

Exit status: 0 (with --strict: no difference could change execution); 1 with
--strict, a difference could change execution; 2 usage error (an SDK of the
oracles extra is missing, an unknown revision)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = add_command(sub, NAME, HELP, DESCRIPTION)
    p.add_argument("--contract", action="append", choices=NAMES,
                   help="only this contract (repeatable; default: all)")
    p.add_argument("--revision",
                   help="the contract revision to compare with (default: the newest shipped)")
    p.add_argument("--json", action="store_true",
                   help="print the report as one JSON object instead of a table")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when any difference could change execution")
    return p


def run(args: argparse.Namespace) -> int:
    data = report(args.contract or NAMES, args.revision)
    print(json.dumps(data, indent=2) if args.json else render_table(data))
    return EXIT_FINDING if args.strict and data["execution_drift"] else EXIT_CLEAN
