"""``pcfuzz minimize``: merge-minimize corpora, keeping every coverage feature."""

from __future__ import annotations

import argparse
from typing import Any

from pcfuzz.cli.common import add_command, layout_of, require_harness, targets_named
from pcfuzz.engine.corpus import minimize_corpus
from pcfuzz.errors import EXIT_CLEAN, EXIT_FINDING, UsageError

NAME = "minimize"
HELP = "merge-minimize corpora, keeping every feature"
DESCRIPTION = """\
Merge-minimize the working corpus of each target (or, with --seeds, the seed
corpus), keeping every coverage feature. A corpus is replaced only when the
minimized one keeps all of its features.

Exit status: 0 every corpus minimized or unchanged; 1 a corpus was kept
because minimizing it lost features; 2 usage error."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = add_command(sub, NAME, HELP, DESCRIPTION)
    p.add_argument("target", nargs="*", help="target names (default: every target)")
    p.add_argument("--seeds", action="store_true",
                   help="minimize the committed seed corpus (merging in the working corpus)")
    return p


def run(args: argparse.Namespace) -> int:
    require_harness("atheris")
    layout = layout_of(args)
    if args.seeds and layout.installed:
        raise UsageError("--seeds rewrites the seed corpus, which is read-only in an "
                         "installed pcfuzz; minimize from a checkout (or --fuzz-dir)")
    status = EXIT_CLEAN
    for t in targets_named(layout, args.target):
        if args.seeds:
            res = minimize_corpus(t, t.seed_corpus, [t.work_corpus])
        else:
            res = minimize_corpus(t, t.work_corpus, [t.seed_corpus])
        print(res.line(t.name))
        if res.status == "kept":
            status = EXIT_FINDING
    return status
