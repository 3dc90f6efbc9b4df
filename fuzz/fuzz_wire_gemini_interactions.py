#!/usr/bin/env python3
"""Atheris target: raw SSE bytes of one gemini-interactions turn, through the code path of
``pcfuzz check --contract gemini-interactions`` (``fuzz.harness.verdict.check_bytes``).

The whole input is the stream, so a captured ``.sse`` file is a valid seed (the
seeds are the ``wire-sse-bytes`` fixture and rendered strategy outputs). Oracle
(``fuzz/harness/wire_target.py``): only ``ContractError`` escapes the wire path; a rejected
stream has no calls; an accepted one is the same Turn through ``contracts.wire``
whole and re-chunked; cut at or inside its terminal event it yields no calls.
"""

from __future__ import annotations

import sys

import atheris

from pcfuzz.fuzz.harness.instrument import STREAM, WIRE, instrument, parser

# The stream path of one contract; the harness imported after it finds it loaded.
with instrument(*STREAM, *WIRE, *parser("gemini_interactions")):
    import pcfuzz.contracts.gemini_interactions  # noqa: F401  (contracts.wire imports it on first use)
    import pcfuzz.contracts.wire  # noqa: F401

from pcfuzz.fuzz.harness.wire_target import make_target

CONTRACT = "gemini-interactions"
TestOneInput = make_target(CONTRACT)


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
