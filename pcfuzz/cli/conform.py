"""``pcfuzz conform``: the kit's turn models and mutations against your own parser."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from pcfuzz.cli.common import add_command, require_harness, seconds_or_zero
from pcfuzz.conform.kit import (
    DEFAULT_REGRESSIONS,
    HYPOTHESIS_HOME,
    INPUTS,
    conform,
    load_adapter,
)
from pcfuzz.contracts.registry import NAMES
from pcfuzz.errors import EXIT_CLEAN, EXIT_FINDING

NAME = "conform"
HELP = "run the turn models and mutations against your own parser (an adapter)"
DESCRIPTION = """\
Run this project's turn models and labelled mutations against any parser,
through an adapter: a plain function

    adapter(events) -> [{"call_id": str, "name": str, "arguments": dict}, ...]

that returns the calls the parser would execute for one whole turn (raising
means the parser rejected the stream). --input sse passes the raw SSE bytes of
the turn instead of the decoded events.

Valid turns must release exactly their calls; safety mutations (truncation,
missing, early or failed terminal, overlap, reused index, conflicting replay,
id confusion, broken arguments) must release nothing; --strict adds this
project's own strictness policy. A violation is shrunk to a minimal stream,
printed as JSON lines and SSE bytes, and saved to the regression directory,
which later runs replay first.

Examples:
    pcfuzz conform --contract anthropic-messages --adapter mypkg.stream:adapter
    pcfuzz conform --contract openai-chat --adapter ./my_parser.py:parse --input sse

Exit status: 0 no violation; 1 a violation; 2 usage error (the adapter cannot
be imported or called, an unknown contract or family)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = add_command(sub, NAME, HELP, DESCRIPTION)
    p.add_argument("--contract", required=True, choices=NAMES,
                   help="the API whose streams the parser reads")
    p.add_argument("--adapter", required=True, metavar="MODULE:FUNCTION",
                   help="the parser under test: module:function or path/to/file.py:function, "
                        "called as adapter(events) -> [{call_id, name, arguments}, ...]; "
                        "raising means the parser rejected the stream")
    p.add_argument("--input", choices=INPUTS, default="events",
                   help="what the adapter receives: the decoded event list (default) or the "
                        "raw SSE bytes of the turn")
    p.add_argument("--budget", type=seconds_or_zero, default=60.0, metavar="S",
                   help="seconds shared by the scenario families (default 60); 0 runs one "
                        "hypothesis run per family at the loaded profile's max_examples")
    p.add_argument("--strict", action="store_true",
                   help="also fail on this project's strictness policy (unknown fields, "
                        "usage regression, envelope drift), not only safety and correct output")
    p.add_argument("--family", action="append", metavar="NAME",
                   help="run only this scenario family (repeatable; default: all)")
    p.add_argument("--seed", type=int, metavar="N",
                   help="seed hypothesis: the same streams on every run (default: random, "
                        "or derandomized when the CI variable is set)")
    p.add_argument("--json", action="store_true",
                   help="print the report as one JSON object instead of text")
    p.add_argument("--regressions", metavar="DIR", default=DEFAULT_REGRESSIONS,
                   help="where minimal failing streams are saved and replayed from first "
                        f"(default ./{DEFAULT_REGRESSIONS}); 'none' disables")
    return p


def run(args: argparse.Namespace) -> int:
    require_harness("hypothesis")
    from hypothesis import configuration

    # hypothesis keeps the home directory in a module global with no getter; restore
    # it afterwards so an in-process caller (a test, a notebook) is left as it was.
    previous = getattr(configuration, "__hypothesis_home_directory", None)
    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        configuration.set_hypothesis_home_dir(HYPOTHESIS_HOME.resolve())
    try:
        return _run(args)
    finally:
        configuration.set_hypothesis_home_dir(previous)


def _run(args: argparse.Namespace) -> int:
    adapter = load_adapter(args.adapter)
    regressions = None if args.regressions == "none" else Path(args.regressions)
    report = conform(
        adapter, args.contract, input=args.input, strict=args.strict,
        budget_s=args.budget if args.budget > 0 else None, families=args.family,
        regressions=regressions, adapter_name=args.adapter, seed=args.seed,
        progress=lambda message: print(f"conform: {message}", file=sys.stderr, flush=True),
    )
    if args.json:
        print(json.dumps(report.to_json(), indent=1, ensure_ascii=False))
    else:
        print(report.text())
    return EXIT_FINDING if report.failed else EXIT_CLEAN
