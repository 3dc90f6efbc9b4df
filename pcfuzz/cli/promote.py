"""``pcfuzz promote``: a crash input, or a property-test failure document, into the
regression store."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from pcfuzz import files
from pcfuzz.cli.common import add_command, layout_of, require_harness, seconds
from pcfuzz.engine.libfuzzer import minimize_crash
from pcfuzz.engine.property_regressions import DoesNotReproduce, promote
from pcfuzz.engine.regressions import write_entry
from pcfuzz.engine.targets import Layout, resolve
from pcfuzz.engine.triage import fingerprint_of, replay
from pcfuzz.errors import EXIT_CLEAN, EXIT_FINDING, UsageError

NAME = "promote"
HELP = "put a crash input (or a property-test failure document) into the regression store"
DESCRIPTION = """\
Store a crashing input in the regression store, minimized, with a sidecar
naming its fingerprint; the test suite (tests/test_fuzz_targets.py) then
replays it on every run: red until the bug is fixed, or, with --expect-crash,
as a known failure (strict xfail).

A property-failure document written by the nightly (property-failures/*.json
in its report) is replayed against the contracts and stored for
tests/test_property_regressions.py instead; it needs no --target. Such a
document is data: each call names a contract entry point of pcfuzz's own
table (openai_chat.parse_events, strict_json.loads, ...); a document naming
anything else, or malformed, is refused before any of it runs.

Exit status: 0 stored; 1 the input does not fail (nothing to promote); 2 usage
error (a missing or refused file, a malformed document)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = add_command(sub, NAME, HELP, DESCRIPTION)
    p.add_argument("artifact", help="the crashing input file, or a property-failure .json "
                   "the nightly wrote (relative paths work)")
    p.add_argument("--target", help="target name the input crashes (not for a "
                   "property-failure document)")
    p.add_argument("--expect-crash", action="store_true",
                   help="known open bug: pytest replays it as strict xfail")
    p.add_argument("--no-minimize", action="store_true",
                   help="store the input as it is, unminimized")
    p.add_argument("--minimize-time", type=seconds, default=20.0, metavar="S",
                   help="seconds to minimize it (default 20)")
    return p


def run(args: argparse.Namespace) -> int:
    layout = layout_of(args)
    artifact = files.regular_file(args.artifact, "input file")
    data = files.read_bytes(artifact, limit=files.MAX_INPUT_BYTES, what="input file")
    if _is_property_failure(artifact, data):
        return _promote_property_failure(layout, artifact, args)
    require_harness("atheris")
    if not args.target:
        raise UsageError("pass --target NAME for a fuzz input (only a property-failure "
                         "document names its own test)")
    target = resolve(layout, args.target)
    (outcome,) = replay(target, [artifact])
    if outcome.crash is None:
        print(f"pcfuzz promote: {files.shown(artifact)} does not crash {target.name}; "
              "nothing to promote", file=sys.stderr)
        return EXIT_FINDING
    root = layout.project_root
    fp, top = fingerprint_of(outcome.crash, root)
    if not args.no_minimize and outcome.crash.kind == "crash" and len(data) > 1:
        with tempfile.TemporaryDirectory(prefix="pcfuzz-promote-") as tmp:

            def same(path: Path) -> bool:
                (res,) = replay(target, [path])
                return res.crash is not None and fingerprint_of(res.crash, root)[0] == fp

            best = minimize_crash(
                target, artifact, Path(tmp) / "min", budget_s=args.minimize_time, still_same=same
            )
            data = best.read_bytes()
    entry = write_entry(
        target.regressions,
        target=target.fuzzer,
        fingerprint=fp,
        data=data,
        exception=outcome.crash.exception,
        message=outcome.crash.message,
        frames=top,
        source=files.shown(artifact.name),
        expect="crash" if args.expect_crash else "pass",
    )
    print(f"promoted {fp} ({len(data)} bytes) -> {entry.path}")
    print(f"  sidecar: {entry.sidecar}")
    print("  pytest tests/test_fuzz_targets.py now replays it"
          + (" as a known failure (strict xfail)" if args.expect_crash else " (red until fixed)"))
    return EXIT_CLEAN


#: The format of a property-failure document, every version of it (one of an older
#: version is refused with a message rather than taken for a crash input).
_DOCUMENT_FORMAT = "pcfuzz-property-regression/"


def _is_property_failure(path: Path, data: bytes) -> bool:
    """A ``.json`` file naming a property-regression format that is not a JSON value
    of another kind; it is then read and checked as one (a malformed one is a usage
    error with the reason, not a fuzz input)."""
    if path.suffix != ".json" or _DOCUMENT_FORMAT.encode() not in data:
        return False
    try:
        doc = files.parse_json(data.decode("utf-8"), source=files.shown(path))
    except (UsageError, UnicodeDecodeError):
        return True  # load() says what is wrong with it
    fmt = doc.get("format") if isinstance(doc, dict) else None
    return isinstance(fmt, str) and fmt.startswith(_DOCUMENT_FORMAT)


def _promote_property_failure(layout: Layout, path: Path, args: argparse.Namespace) -> int:
    try:
        out, what = promote(path, layout.regressions_dir,
                            expect="crash" if args.expect_crash else "pass")
    except DoesNotReproduce as exc:
        print(f"pcfuzz promote: {exc}", file=sys.stderr)
        return EXIT_FINDING
    print(f"promoted property failure {files.shown(path.stem)} -> {out}")
    print(f"  replay: {what}")
    print("  pytest tests/test_property_regressions.py now replays it"
          + (" as a known failure (strict xfail)" if args.expect_crash else " (red until fixed)"))
    return EXIT_CLEAN
