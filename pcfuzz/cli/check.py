"""``pcfuzz check``: a verdict on one captured turn."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pcfuzz import files
from pcfuzz.cli.common import add_command
from pcfuzz.contracts.registry import NAMES
from pcfuzz.fuzz.harness.verdict import FORMATS, REVISIONS, SUFFIXES, check_bytes

NAME = "check"
HELP = "verdict on one captured turn (raw SSE bytes, JSON lines or a fixture)"
DESCRIPTION = """\
A verdict on one captured turn: is it a complete turn of the contract, and
which calls may be executed?

FILE is raw SSE bytes (.sse, .txt), JSON lines of parser events (.jsonl), a
pcfuzz-fixture/1 document (.json; a wire-sse-bytes fixture is checked as its
SSE bytes), or - for standard input (sniffed: a first non-blank byte { or "
means JSON lines, anything else SSE).

The revision: --revision when given; a fixture is otherwise parsed under its
own contract_revision, raw SSE and JSON lines under the contract's newest
shipped revision. A capture of today's shape checked under an older revision
is rejected with a message naming the drift.

Exit status: 0 a complete valid turn; 1 a contract violation or a truncated
stream (no call may run); 2 usage error (unknown contract or revision, a
missing or unreadable file, a FIFO or device, a fixture of another contract)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = add_command(sub, NAME, HELP, DESCRIPTION)
    p.add_argument("--contract", required=True, choices=NAMES,
                   help="the contract the capture claims to follow")
    p.add_argument("file", metavar="FILE",
                   help="the capture: .sse/.txt raw SSE bytes, .jsonl JSON lines of events, "
                        ".json a pcfuzz-fixture/1 file; - reads standard input")
    p.add_argument("--json", action="store_true",
                   help="print the verdict as one JSON object instead of text")
    p.add_argument("--format", choices=FORMATS, default="auto",
                   help="how to read FILE (default auto: by suffix; stdin and other "
                        "suffixes are sniffed)")
    p.add_argument("--revision", choices=REVISIONS, default=None,
                   help="the contract revision to parse under (default: a fixture's own "
                        "contract_revision; raw SSE and JSON lines: the contract's "
                        "newest shipped revision)")
    return p


def run(args: argparse.Namespace) -> int:
    path: str = args.file
    fmt: str = args.format
    if fmt == "auto" and path != "-":
        fmt = SUFFIXES.get(Path(path).suffix.lower(), "auto")
    if path == "-":
        data = files.read_stdin(limit=files.MAX_INPUT_BYTES)
    else:
        data = files.read_bytes(path, limit=files.MAX_INPUT_BYTES, what="capture")
    verdict = check_bytes(args.contract, data, format=fmt,
                          source="<stdin>" if path == "-" else files.shown(path),
                          revision=args.revision)
    if args.json:
        print(json.dumps(verdict.to_json(), ensure_ascii=False))
    else:
        print(verdict.render())
    return verdict.exit_code
