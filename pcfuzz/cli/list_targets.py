"""``pcfuzz list``: the fuzz targets, their corpora, regressions and last run."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from pcfuzz import files
from pcfuzz.cli.common import add_command, layout_of, print_table
from pcfuzz.engine.regressions import RegressionEntry, entries
from pcfuzz.engine.targets import corpus_stats, discover
from pcfuzz.errors import UsageError

NAME = "list"
HELP = "targets, corpus sizes, last run figures"
DESCRIPTION = """\
List every fuzz target with its seed corpus, working corpus, stored regressions,
whether it has a dictionary, and the figures of its last run."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    return add_command(sub, NAME, HELP, DESCRIPTION)


def _last_run(path: Path) -> str:
    if not os.path.lexists(path):
        return "-"
    try:
        d = files.read_json(path, limit=1024 * 1024, what="last run")
        return (f"{d['date']} {d['duration_s']:.0f}s {d['executions']:,} execs "
                f"{d['exec_per_s']:,.0f}/s ft {d['ft']} crashes {d['crashes']}")
    except (UsageError, ValueError, KeyError, TypeError, IndexError):
        return "- (unreadable last_run.json)"


def _regressions(found: list[RegressionEntry]) -> str:
    bad = sum(1 for e in found if e.problem is not None)
    return f"{len(found)} ({bad} unreadable sidecar{'s' * (bad != 1)})" if bad else str(len(found))


def run(args: argparse.Namespace) -> int:
    layout = layout_of(args)
    rows = []
    for t in discover(layout):
        seeds = corpus_stats(t.seed_corpus)
        work = corpus_stats(t.work_corpus)
        rows.append([t.name, t.fuzzer, f"{seeds[0]} ({seeds[1]:,} B)", work[0],
                     _regressions(entries(t.regressions)), "yes" if t.dict_path else "no",
                     _last_run(t.last_run_path)])
    if not rows:
        print(f"no fuzz targets (fuzz_*.py) in {layout.fuzz_dir}")
        return 0
    print_table(rows, ["target", "fuzzer", "seeds", "work corpus", "regressions", "dict",
                       "last run"])
    return 0
