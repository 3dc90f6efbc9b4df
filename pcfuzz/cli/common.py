"""What the subcommand modules share: the layout from the global options, target
lookup, tables, and the parser factory that keeps every help text plain."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the engine is imported by the subcommands that use it, not by check
    from pcfuzz.engine.targets import Layout, Target

__all__ = ["MAX_SECONDS", "add_command", "count", "infer_target", "jobs", "layout_of",
           "megabytes", "print_table", "require_harness", "seconds", "seconds_or_zero",
           "targets_named", "whole_seconds"]


#: The longest time any option accepts (30 days): a larger figure is a typo.
MAX_SECONDS = 30 * 24 * 3600.0
#: The most parallel jobs an option accepts.
MAX_JOBS = 256
#: The largest count (mutants sampled, rounds) an option accepts.
MAX_COUNT = 1_000_000
#: The largest memory limit an option accepts, in MB (1 TiB).
MAX_MEGABYTES = 1024 * 1024


def _number(text: str, kind: type[float] | type[int], what: str) -> float:
    try:
        value = kind(text.strip())
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"{what}, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{what}, got {text!r}")
    return value


def _bounded(value: float, low: float, high: float, what: str, text: str) -> None:
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"{what}, got {text!r}")


def seconds(text: str) -> float:
    """An argparse type: a duration in seconds, finite and above zero."""
    what = f"expected seconds above 0 and at most {MAX_SECONDS:.0f}"
    value = _number(text, float, what)
    _bounded(value, math.ulp(0.0), MAX_SECONDS, what, text)
    return value


def seconds_or_zero(text: str) -> float:
    """An argparse type: a duration in seconds, finite, zero allowed (a subcommand
    gives zero a meaning of its own)."""
    what = f"expected seconds from 0 to {MAX_SECONDS:.0f}"
    value = _number(text, float, what)
    _bounded(value, 0.0, MAX_SECONDS, what, text)
    return value


def whole_seconds(text: str) -> int:
    """An argparse type: a whole number of seconds, at least 1."""
    what = f"expected whole seconds from 1 to {MAX_SECONDS:.0f}"
    value = int(_number(text, int, what))
    _bounded(value, 1, MAX_SECONDS, what, text)
    return value


def jobs(text: str) -> int:
    """An argparse type: a number of parallel jobs, at least 1."""
    what = f"expected a number of jobs from 1 to {MAX_JOBS}"
    value = int(_number(text, int, what))
    _bounded(value, 1, MAX_JOBS, what, text)
    return value


def count(text: str) -> int:
    """An argparse type: a count of things to do, at least 1."""
    what = f"expected a count from 1 to {MAX_COUNT:,}"
    value = int(_number(text, int, what))
    _bounded(value, 1, MAX_COUNT, what, text)
    return value


def megabytes(text: str) -> int:
    """An argparse type: a memory limit in MB, at least 1."""
    what = f"expected megabytes from 1 to {MAX_MEGABYTES}"
    value = int(_number(text, int, what))
    _bounded(value, 1, MAX_MEGABYTES, what, text)
    return value


def require_harness(*modules: str) -> None:
    """:class:`~pcfuzz.errors.MissingExtra` (exit status 2, naming the install
    command) when a module of the ``harness`` extra that the subcommand needs, in this
    process or in a fuzz target's, is not installed; checked before any work."""
    import importlib.util

    from pcfuzz.errors import MissingExtra

    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise MissingExtra(name)


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
    from pcfuzz.engine.targets import Layout

    return Layout.from_options(args.fuzz_dir, args.regressions_dir, args.work_dir)


def targets_named(layout: Layout, names: Sequence[str] | None) -> list[Target]:
    """The targets named (short names, fuzzer names or paths), or every target."""
    from pcfuzz.engine.targets import discover, resolve

    return [resolve(layout, n) for n in names] if names else discover(layout)


def infer_target(layout: Layout, path: Path) -> Target | None:
    """The target whose ``fuzz_<name>`` folder is part of ``path``, if any."""
    from pcfuzz.engine.targets import discover

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
