"""``pcfuzz report merge``: one report from the reports of a sharded night."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pcfuzz.cli.common import add_command
from pcfuzz.nightly.merge import merge_reports

NAME = "report"
HELP = "join the reports of a sharded night (pcfuzz report merge)"
DESCRIPTION = """\
pcfuzz report merge DIR... --out DIR

Join the report directories of the shards of one night (pcfuzz nightly
--shard I/N on N runners) into one: every shard's targets, the property
suite's counts and tables, the mutants, findings grouped again by bug
fingerprint (a bug two shards found is one finding), coverage measured again
from the shards' coverage data combined. The merged night is complete only
when every shard 1..N is there and was complete.

Exit status: 0 complete and clean; 1 a finding; 2 usage error (a directory
without a summary, shards of different counts, a shard twice); 3 incomplete
(a shard missing or incomplete)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = add_command(sub, NAME, HELP, DESCRIPTION)
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    merge = actions.add_parser("merge", help="join shard reports into one",
                               description=DESCRIPTION,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    merge.add_argument("dirs", nargs="+", metavar="DIR", help="a shard's report directory")
    merge.add_argument("--out", required=True, metavar="DIR",
                       help="where the merged report is written")
    return p


def run(args: argparse.Namespace) -> int:
    merged = merge_reports([Path(d) for d in args.dirs], Path(args.out))
    verdict = "complete" if merged["complete"] else (
        f"INCOMPLETE ({len(merged['incomplete_reasons'])} reason(s))")
    print(f"merged {len(args.dirs)} report(s) into {args.out}/summary.md: "
          f"{len(merged['targets'])} targets, {merged['properties']['tests']} property tests, "
          f"{len(merged['findings'])} finding(s); {verdict}")
    return int(merged["exit_status"])
