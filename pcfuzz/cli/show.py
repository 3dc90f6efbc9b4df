"""``pcfuzz show``: what a target ran for one input."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pcfuzz import files
from pcfuzz.cli.common import add_command, infer_target, layout_of, require_harness
from pcfuzz.engine.show import render, render_json, show_input
from pcfuzz.engine.targets import resolve
from pcfuzz.errors import EXIT_CLEAN, EXIT_FINDING, UsageError

NAME = "show"
HELP = "decode one input into what the target ran (events, SSE, URL, JSON)"
DESCRIPTION = """\
Run one corpus, crash or regression input once through its target and print
what the target did with it: the events, SSE bytes, URL or JSON document it
built and every call it made into the contracts, with each outcome.

Exit status: 0 the input passes; 1 it crashes the target; 2 usage error."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = add_command(sub, NAME, HELP, DESCRIPTION)
    p.add_argument("input", help="a corpus, crash or regression input file")
    p.add_argument("--target", help="target name (default: from a fuzz_<name> folder in the path)")
    p.add_argument("--json", action="store_true",
                   help="one JSON object per recorded call instead of the readable view")
    return p


def run(args: argparse.Namespace) -> int:
    require_harness("atheris")
    layout = layout_of(args)
    path = files.regular_file(args.input, "input file")
    target = resolve(layout, args.target) if args.target else infer_target(layout, path)
    if target is None:
        raise UsageError(f"cannot tell the target of {files.shown(path)} from its path; "
                         "pass --target")
    data = files.read_bytes(path, limit=files.MAX_INPUT_BYTES, what="input file")
    calls, outcome = show_input(target.path, data)
    print(f"# {target.name}: {files.shown(path)} ({len(data)} bytes)")
    sys.stdout.write(render_json(calls, outcome) if args.json else render(calls, outcome))
    return EXIT_FINDING if outcome != "pass" else EXIT_CLEAN
