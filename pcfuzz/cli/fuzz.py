"""``pcfuzz fuzz``: one libFuzzer campaign of one target."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pcfuzz.cli.common import (
    add_command,
    jobs,
    layout_of,
    megabytes,
    require_harness,
    seconds,
    whole_seconds,
)
from pcfuzz.engine.libfuzzer import Campaign, save_last_run
from pcfuzz.engine.targets import resolve
from pcfuzz.errors import EXIT_CLEAN, EXIT_FINDING, EXIT_INCOMPLETE

NAME = "fuzz"
HELP = "one campaign of one target"
DESCRIPTION = """\
Fuzz one target for --time seconds: libFuzzer through atheris, the target's
dictionary and options, its seed corpus read and its working corpus grown.

Exit status: 0 the campaign ran and found no crash; 1 a crash (its artifact is
printed: next, pcfuzz triage DIR); 3 the campaign executed nothing (start-up
failed or took the whole time)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = add_command(sub, NAME, HELP, DESCRIPTION)
    p.add_argument("target", help="target name (see pcfuzz list)")
    p.add_argument("--time", type=seconds, default=60.0, metavar="S",
                   help="seconds (default 60)")
    p.add_argument("--jobs", type=jobs, default=1, metavar="N",
                   help="libFuzzer -fork=N when N > 1")
    p.add_argument("--timeout", type=whole_seconds, metavar="S",
                   help="per-input timeout in seconds (default: options or 10)")
    p.add_argument("--rss-limit-mb", type=megabytes, metavar="MB",
                   help="RSS limit (default: options or 2048)")
    p.add_argument("--artifacts",
                   help="artifact directory (default: <work dir>/<fuzzer>/artifacts)")
    p.add_argument("--keep-going", action="store_true",
                   help="after a crash, fuzz on (-fork=1, crashes ignored) for the rest of --time")
    return p


def run(args: argparse.Namespace) -> int:
    require_harness("atheris")
    layout = layout_of(args)
    target = resolve(layout, args.target)
    artifacts = Path(args.artifacts).resolve() if args.artifacts else target.artifacts
    log = target.work / "logs" / "last.log"
    result = Campaign(
        target,
        args.time,
        jobs=args.jobs,
        timeout=args.timeout,
        rss_limit_mb=args.rss_limit_mb,
        artifacts=artifacts,
        log_path=log,
        keep_going=args.keep_going,
    ).run()
    save_last_run(target, result, len(result.artifacts))
    if result.error:
        print(f"pcfuzz fuzz: {target.name}: {result.error}", file=sys.stderr)
    print(
        f"{target.name}: {result.executions:,} executions in {result.duration_s:.0f}s "
        f"({result.exec_per_s:,.0f}/s), corpus {result.corpus_files} files, "
        f"ft {result.ft}, cov {result.cov}, crashes {len(result.artifacts)}"
    )
    print(f"  log: {log}")
    if result.artifacts:
        for a in result.artifacts:
            print(f"  crash artifact: {a}")
        print(f"  next: pcfuzz triage {artifacts}")
        return EXIT_FINDING
    if result.executions == 0 or result.error:
        return EXIT_INCOMPLETE
    return EXIT_CLEAN
