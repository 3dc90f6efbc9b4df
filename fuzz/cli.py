"""The ``pcfuzz`` command (placeholder until the campaign runner lands)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print("pcfuzz: campaign runner not built yet", file=sys.stderr)
    return 2
