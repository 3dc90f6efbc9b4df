"""``pcfuzz triage``: group crash artifacts by fingerprint and minimize each."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pcfuzz import files
from pcfuzz.cli.common import (
    add_command,
    infer_target,
    layout_of,
    print_table,
    require_harness,
    seconds,
)
from pcfuzz.engine.regressions import input_files, known_fingerprints
from pcfuzz.engine.targets import resolve
from pcfuzz.engine.triage import triage
from pcfuzz.errors import EXIT_CLEAN, EXIT_FINDING, UsageError

NAME = "triage"
HELP = "group crash artifacts by fingerprint, minimize each"
DESCRIPTION = """\
Replay every crash artifact in DIR through its target, group them by crash
fingerprint (exception, message shape, innermost frames), minimize the
smallest of each group, and write DIR/minimized/triage.json. A group whose
fingerprint is not in the regression store is new: keep it with
pcfuzz promote.

Exit status: 0 no artifact crashes any more; 1 crashes were found; 2 usage
error."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = add_command(sub, NAME, HELP, DESCRIPTION)
    p.add_argument("dir", help="directory of crash artifacts (relative paths work)")
    p.add_argument("--target", help="target name (default: from a fuzz_<name> folder in DIR)")
    p.add_argument("--out", help="where minimized inputs go (default DIR/minimized)")
    p.add_argument("--no-minimize", action="store_true",
                   help="group only; do not minimize each crash")
    p.add_argument("--minimize-time", type=seconds, default=20.0, metavar="S",
                   help="seconds to minimize each crash (default 20)")
    return p


def run(args: argparse.Namespace) -> int:
    require_harness("atheris")
    layout = layout_of(args)
    # absolute: replay runs in the fuzz dir, where relative paths name other files
    directory = files.directory(args.dir, "directory")
    target = resolve(layout, args.target) if args.target else infer_target(layout, directory)
    if target is None:
        raise UsageError(f"cannot tell the target from the path {files.shown(args.dir)} (no "
                         "fuzz_<name> folder in it); pass --target")
    artifacts = [p for p in input_files(directory) if p.name != "triage.json"]
    if not artifacts:
        print(f"no crash artifacts in {directory}")
        return EXIT_CLEAN
    out = Path(args.out) if args.out else directory / "minimized"
    groups, gone = triage(
        target, artifacts, out_dir=out, minimize=not args.no_minimize,
        minimize_budget_s=args.minimize_time,
    )
    known = known_fingerprints(target.regressions)
    rows = [[g.fingerprint, "known" if g.fingerprint in known else "new", len(g.artifacts),
             f"{g.crash.exception}: {g.crash.message[:40]}",
             g.top_frames[0] if g.top_frames else "-",
             f"{g.smallest.stat().st_size if g.smallest else 0} -> {g.minimized_size}",
             g.minimized or g.smallest]
            for g in groups]
    print(f"{target.name}: {len(artifacts)} artifacts, {len(groups)} distinct crashes")
    if rows:
        print_table(rows, ["fingerprint", "status", "count", "exception", "top frame", "bytes",
                           "input"])
    for p in gone:
        print(f"  no longer crashes: {p}")
    summary = [
        {
            "fingerprint": g.fingerprint,
            "exception": g.crash.exception,
            "message": g.crash.message,
            "frames": g.top_frames,
            "artifacts": [str(a) for a in g.artifacts],
            "minimized": str(g.minimized or g.smallest),
        }
        for g in groups
    ]
    out.mkdir(parents=True, exist_ok=True)
    (out / "triage.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    for g in groups:
        if g.fingerprint not in known:
            print(f"  keep it: pcfuzz promote {g.minimized or g.smallest} --target {target.name}")
    return EXIT_FINDING if groups else EXIT_CLEAN
