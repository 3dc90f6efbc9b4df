"""``pcfuzz replay``: run corpora and stored regressions through their targets."""

from __future__ import annotations

import argparse
from typing import Any

from pcfuzz import files
from pcfuzz.cli.common import add_command, layout_of, require_harness, targets_named
from pcfuzz.engine.regressions import entries, input_files, mark_fixed
from pcfuzz.engine.triage import fingerprint_of, replay
from pcfuzz.errors import EXIT_CLEAN, EXIT_FINDING

NAME = "replay"
HELP = "run corpora and regressions without fuzzing"
DESCRIPTION = """\
Replay every input of the seed and working corpora and every stored regression
through its target, without fuzzing. A corpus input that crashes, a regression
that still fails, or a known failure that now passes (without --update) is a
finding. A regression whose sidecar cannot be read is named and replayed as
one without a sidecar (expect pass).

Exit status: 0 nothing failed; 1 a finding; 2 usage error."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = add_command(sub, NAME, HELP, DESCRIPTION)
    p.add_argument("target", nargs="*", help="target names (default: every target)")
    p.add_argument("--update", action="store_true",
                   help="flip fixed known-crash regressions to expect pass")
    return p


def run(args: argparse.Namespace) -> int:
    require_harness("atheris")
    layout = layout_of(args)
    status = EXIT_CLEAN
    for t in targets_named(layout, args.target):
        corpus = [p for d in (t.seed_corpus, t.work_corpus) for p in input_files(d)]
        regs = entries(t.regressions)
        outcomes = replay(t, corpus + [e.path for e in regs]) if corpus or regs else []
        corpus_out, reg_out = outcomes[: len(corpus)], outcomes[len(corpus):]
        bad = [o for o in corpus_out if o.crash is not None]
        print(f"{t.name}: corpus {len(corpus)} inputs, {len(bad)} crashing; "
              f"regressions {len(regs)}")
        for o in bad:
            if o.crash is not None:
                fp = fingerprint_of(o.crash, layout.project_root)[0]
                print(f"  CORPUS CRASH {o.path}: {fp} {o.crash.exception}: "
                      f"{o.crash.message[:80]}")
            status = EXIT_FINDING
        for entry, o in zip(regs, reg_out, strict=True):
            name = files.shown(entry.path.name)
            if entry.problem is not None:
                print(f"  bad sidecar    {name}: {entry.problem} (replayed as expect pass)")
            if o.crash is None:
                if entry.expect == "crash":
                    if args.update:
                        mark_fixed(entry)
                        print(f"  fixed          {name} (sidecar updated: expect pass)")
                    else:
                        print(f"  fixed          {name} (known failure now passes: "
                              "run pcfuzz replay --update)")
                        status = EXIT_FINDING
                else:
                    print(f"  fixed          {name}")
            else:
                fp = fingerprint_of(o.crash, layout.project_root)[0]
                label = "still failing" + (" (known)" if entry.expect == "crash" else "")
                print(f"  {label:<14} {name}: {fp} {o.crash.exception}: {o.crash.message[:60]}")
                if entry.expect != "crash":
                    status = EXIT_FINDING
    return status
