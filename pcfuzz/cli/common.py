"""What the subcommand modules share: the layout from the global options, target
lookup, tables, and the parser factory that keeps every help text plain."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pcfuzz.engine.targets import Layout, Target, discover, resolve

__all__ = ["add_command", "infer_target", "layout_of", "print_table", "targets_named"]


def add_command(sub: Any, name: str, help: str, description: str,
                epilog: str | None = None) -> argparse.ArgumentParser:
    """A subcommand parser whose description and epilog are printed as written
    (plain text, wrapped by hand for a terminal)."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help, description=description, epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    return parser


def layout_of(args: argparse.Namespace) -> Layout:
    """The layout the global options (or the ``PCFUZZ_*`` variables) choose."""
    return Layout.from_options(args.fuzz_dir, args.regressions_dir, args.work_dir)


def targets_named(layout: Layout, names: Sequence[str] | None) -> list[Target]:
    """The targets named (short names, fuzzer names or paths), or every target."""
    return [resolve(layout, n) for n in names] if names else discover(layout)


def infer_target(layout: Layout, path: Path) -> Target | None:
    """The target whose ``fuzz_<name>`` folder is part of ``path``, if any."""
    names = {t.fuzzer: t for t in discover(layout)}
    for part in reversed(path.resolve().parts):
        if part in names:
            return names[part]
    return None


def print_table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> None:
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for n, row in enumerate(cells):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
