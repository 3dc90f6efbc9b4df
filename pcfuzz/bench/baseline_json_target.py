#!/usr/bin/env python3
"""Baseline of ``pcfuzz bench``'s fuzz throughput case: plain ``json.loads`` of the
input bytes, instrumented and run by libFuzzer exactly like the ``fuzz_*.py`` targets.

Not a target itself (its name does not start with ``fuzz_``, so discovery skips it):
the bench runs it from an empty scratch corpus for the same time as each target and
reports every target's exec/s as a ratio to this one's.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    import json
    import json.decoder
    import json.scanner


def TestOneInput(data: bytes) -> None:
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        pass


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
