"""The ``pcfuzz`` command: fuzz campaigns, the nightly job, corpus minimization, crash
triage and the regression store.

    pcfuzz --version
    pcfuzz list
    pcfuzz fuzz TARGET [--time S] [--jobs N]
    pcfuzz nightly [--budget S] [--jobs N] [--report DIR] [--properties auto|quick|full|off]
    pcfuzz minimize [TARGET ...] [--seeds]
    pcfuzz triage DIR [--target T]
    pcfuzz promote ARTIFACT --target T [--expect-crash]
    pcfuzz promote PROPERTY-FAILURE.json [--expect-crash]
    pcfuzz replay [TARGET ...] [--update]
    pcfuzz show INPUT [--target T] [--json]
    pcfuzz bench [--quick] [--json FILE] [--markdown]
    pcfuzz check --contract CONTRACT FILE [--json] [--revision REVISION]
    pcfuzz mutants [--budget S] [--sample N] [--select FILE[:LINE]] [--json]
    pcfuzz conform --contract CONTRACT --adapter MODULE:FUNCTION [--budget S] [--strict] [--json]

TARGET is a short name (``strict-json``; ``strict_json`` and ``fuzz_strict_json``
work too; contract names such as ``openai-responses`` name the provider targets).
Global options ``--fuzz-dir``, ``--regressions-dir`` and ``--work-dir`` (or the
variables ``PCFUZZ_FUZZ_DIR``, ``PCFUZZ_REGRESSIONS_DIR``, ``PCFUZZ_WORK_DIR``) point
the command at another tree. Installed, pcfuzz writes only under the current
directory (``.pcfuzz/work``, ``pcfuzz-regressions``, ``reports/latest``); from a
checkout, to ``fuzz/.work`` and ``tests/regressions``. See docs/fuzzing.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from pcfuzz.fuzz._check import add_parser as add_check_parser
from pcfuzz.fuzz._check import cmd_check
from pcfuzz.fuzz._conform import add_parser as add_conform_parser
from pcfuzz.fuzz._conform import cmd_conform
from pcfuzz.fuzz._drift import add_parser as add_drift_parser
from pcfuzz.fuzz._drift import cmd_drift
from pcfuzz.fuzz._mutants import add_parser as add_mutants_parser
from pcfuzz.fuzz._mutants import cmd_mutants
from pcfuzz.fuzz._targets import (
    Layout,
    LayoutError,
    Target,
    TargetNotFound,
    corpus_stats,
    discover,
    resolve,
)
from pcfuzz.fuzz._triage import ReplayError

__all__ = ["main"]


def _print_table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> None:
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for n, row in enumerate(cells):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


def _targets(layout: Layout, names: Sequence[str]) -> list[Target]:
    return [resolve(layout, n) for n in names] if names else discover(layout)


def cmd_list(layout: Layout, args: argparse.Namespace) -> int:
    from pcfuzz.fuzz._regressions import entries

    rows = []
    for t in discover(layout):
        seeds = corpus_stats(t.seed_corpus)
        work = corpus_stats(t.work_corpus)
        last = "-"
        if t.last_run_path.is_file():
            d = json.loads(t.last_run_path.read_text(encoding="utf-8"))
            last = (
                f"{d['date']} {d['duration_s']:.0f}s {d['executions']:,} execs "
                f"{d['exec_per_s']:,.0f}/s ft {d['ft']} crashes {d['crashes']}"
            )
        rows.append(
            [
                t.name,
                t.fuzzer,
                f"{seeds[0]} ({seeds[1]:,} B)",
                work[0],
                len(entries(t.regressions)),
                "yes" if t.dict_path else "no",
                last,
            ]
        )
    if not rows:
        print(f"no fuzz targets (fuzz_*.py) in {layout.fuzz_dir}")
        return 0
    _print_table(rows, ["target", "fuzzer", "seeds", "work corpus", "regressions", "dict", "last run"])
    return 0


def cmd_fuzz(layout: Layout, args: argparse.Namespace) -> int:
    from pcfuzz.fuzz._libfuzzer import Campaign
    from pcfuzz.fuzz._nightly import save_last_run

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
        return 1
    if result.executions == 0 or result.error:
        return 2
    return 0


def cmd_nightly(layout: Layout, args: argparse.Namespace) -> int:
    from pcfuzz.fuzz._nightly import NightlyOptions, run_nightly

    opts = NightlyOptions(
        budget_s=args.budget,
        jobs=args.jobs,
        report_dir=Path(args.report).resolve(),
        properties=args.properties,
        property_budget_s=args.property_budget,
        property_tests=args.property_tests or [],
        hypothesis_db=args.hypothesis_db,
        minimize=not args.no_minimize,
        targets=args.target or [],
        coverage=not args.no_coverage,
        mutants=args.mutants,
        history=Path(args.history).resolve() if args.history else None,
    )
    return run_nightly(layout, opts)


def cmd_minimize(layout: Layout, args: argparse.Namespace) -> int:
    from pcfuzz.fuzz._corpus import minimize_corpus

    if args.seeds and layout.installed:
        print("pcfuzz minimize: --seeds rewrites the seed corpus, which is read-only in an "
              "installed pcfuzz; minimize from a checkout (or --fuzz-dir)", file=sys.stderr)
        return 2
    status = 0
    for t in _targets(layout, args.target):
        if args.seeds:
            res = minimize_corpus(t, t.seed_corpus, [t.work_corpus])
        else:
            res = minimize_corpus(t, t.work_corpus, [t.seed_corpus])
        print(res.line(t.name))
        if res.status == "kept":
            status = 1
    return status


def _infer_target(layout: Layout, path: Path) -> Target | None:
    names = {t.fuzzer: t for t in discover(layout)}
    for part in reversed(path.resolve().parts):
        if part in names:
            return names[part]
    return None


def cmd_triage(layout: Layout, args: argparse.Namespace) -> int:
    from pcfuzz.fuzz._regressions import input_files, known_fingerprints
    from pcfuzz.fuzz._triage import triage

    directory = Path(args.dir).resolve()  # replay runs in the fuzz dir: no relative paths
    if not directory.is_dir():
        what = "a file, not a directory" if directory.is_file() else "nothing there"
        print(f"pcfuzz triage: no such directory: {args.dir} ({what}; resolved to "
              f"{directory}); pass the directory of crash artifacts", file=sys.stderr)
        return 2
    target = resolve(layout, args.target) if args.target else _infer_target(layout, directory)
    if target is None:
        print(f"pcfuzz triage: cannot tell the target from the path {args.dir} (no "
              "fuzz_<name> folder in it); pass --target", file=sys.stderr)
        return 2
    artifacts = [p for p in input_files(directory) if p.name != "triage.json"]
    if not artifacts:
        print(f"no crash artifacts in {directory}")
        return 0
    out = Path(args.out) if args.out else directory / "minimized"
    groups, gone = triage(
        target, artifacts, out_dir=out, minimize=not args.no_minimize,
        minimize_budget_s=args.minimize_time,
    )
    known = known_fingerprints(target.regressions)
    rows = []
    for g in groups:
        rows.append(
            [
                g.fingerprint,
                "known" if g.fingerprint in known else "new",
                len(g.artifacts),
                f"{g.crash.exception}: {g.crash.message[:40]}",
                g.top_frames[0] if g.top_frames else "-",
                f"{g.smallest.stat().st_size if g.smallest else 0} -> {g.minimized_size}",
                g.minimized or g.smallest,
            ]
        )
    print(f"{target.name}: {len(artifacts)} artifacts, {len(groups)} distinct crashes")
    if rows:
        _print_table(
            rows, ["fingerprint", "status", "count", "exception", "top frame", "bytes", "input"]
        )
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
    return 1 if groups else 0


def cmd_promote(layout: Layout, args: argparse.Namespace) -> int:
    import tempfile

    from pcfuzz.fuzz._libfuzzer import minimize_crash
    from pcfuzz.fuzz._regressions import write_entry
    from pcfuzz.fuzz._triage import fingerprint_of, replay

    artifact = Path(args.artifact).resolve()
    if not artifact.is_file():
        print(f"pcfuzz promote: no such input file: {args.artifact} (resolved to {artifact})",
              file=sys.stderr)
        return 2
    if _is_property_failure(artifact):
        return _promote_property_failure(layout, artifact, args)
    if not args.target:
        print("pcfuzz promote: pass --target NAME for a fuzz input (only a property-failure "
              "document names its own test)", file=sys.stderr)
        return 2
    target = resolve(layout, args.target)
    (outcome,) = replay(target, [artifact])
    if outcome.crash is None:
        print(f"pcfuzz promote: {artifact} does not crash {target.name}; nothing to promote",
              file=sys.stderr)
        return 1
    root = layout.project_root
    fp, top = fingerprint_of(outcome.crash, root)
    data = artifact.read_bytes()
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
        source=artifact.name,
        expect="crash" if args.expect_crash else "pass",
    )
    print(f"promoted {fp} ({len(data)} bytes) -> {entry.path}")
    print(f"  sidecar: {entry.sidecar}")
    print("  pytest tests/test_fuzz_targets.py now replays it"
          + (" as a known failure (strict xfail)" if args.expect_crash else " (red until fixed)"))
    return 0


def _is_property_failure(path: Path) -> bool:
    from pcfuzz.fuzz._property_regressions import FORMAT

    if path.suffix != ".json":
        return False
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def _promote_property_failure(layout: Layout, path: Path, args: argparse.Namespace) -> int:
    from pcfuzz.fuzz._property_regressions import promote

    try:
        out, what = promote(path, layout.regressions_dir,
                            expect="crash" if args.expect_crash else "pass")
    except ValueError as exc:
        print(f"pcfuzz promote: {exc}", file=sys.stderr)
        return 1
    print(f"promoted property failure {path.stem} -> {out}")
    print(f"  replay: {what}")
    print("  pytest tests/test_property_regressions.py now replays it"
          + (" as a known failure (strict xfail)" if args.expect_crash else " (red until fixed)"))
    return 0


def cmd_replay(layout: Layout, args: argparse.Namespace) -> int:
    from pcfuzz.fuzz._regressions import entries, input_files, mark_fixed
    from pcfuzz.fuzz._triage import fingerprint_of, replay

    status = 0
    for t in _targets(layout, args.target):
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
            status = 1
        for entry, o in zip(regs, reg_out, strict=True):
            name = entry.path.name
            if o.crash is None:
                if entry.expect == "crash":
                    if args.update:
                        mark_fixed(entry)
                        print(f"  fixed          {name} (sidecar updated: expect pass)")
                    else:
                        print(f"  fixed          {name} (known failure now passes: "
                              "run pcfuzz replay --update)")
                        status = 1
                else:
                    print(f"  fixed          {name}")
            else:
                fp = fingerprint_of(o.crash, layout.project_root)[0]
                label = "still failing" + (" (known)" if entry.expect == "crash" else "")
                print(f"  {label:<14} {name}: {fp} {o.crash.exception}: {o.crash.message[:60]}")
                if entry.expect != "crash":
                    status = 1
    return status


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pcfuzz")
    except PackageNotFoundError:
        return "0+unknown (not installed)"


def cmd_show(layout: Layout, args: argparse.Namespace) -> int:
    from pcfuzz.fuzz._show import render, render_json, show_input

    path = Path(args.input).resolve()
    if not path.is_file():
        print(f"pcfuzz show: no such input file: {args.input} (resolved to {path})",
              file=sys.stderr)
        return 2
    target = resolve(layout, args.target) if args.target else _infer_target(layout, path)
    if target is None:
        print(f"pcfuzz show: cannot tell the target of {path} from its path; pass --target",
              file=sys.stderr)
        return 2
    calls, outcome = show_input(target.path, path.read_bytes())
    print(f"# {target.name}: {path} ({path.stat().st_size} bytes)")
    sys.stdout.write(render_json(calls, outcome) if args.json else render(calls, outcome))
    return 1 if outcome != "pass" else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pcfuzz", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    parser.add_argument("--fuzz-dir",
                        help="directory of fuzz_*.py targets (default: the shipped ones)")
    parser.add_argument("--regressions-dir", help="regression store (default: ./pcfuzz-regressions;"
                        " tests/regressions in a checkout)")
    parser.add_argument("--work-dir", help="working corpora and artifacts (default: "
                        "./.pcfuzz/work; fuzz/.work in a checkout)")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("list", help="targets, corpus sizes, last run figures")

    p = sub.add_parser("fuzz", help="one campaign of one target")
    p.add_argument("target", help="target name (see pcfuzz list)")
    p.add_argument("--time", type=float, default=60, help="seconds (default 60)")
    p.add_argument("--jobs", type=int, default=1, help="libFuzzer -fork=N when N > 1")
    p.add_argument("--timeout", type=int, help="per-input timeout in seconds (default: options or 10)")
    p.add_argument("--rss-limit-mb", type=int, help="RSS limit (default: options or 2048)")
    p.add_argument("--artifacts", help="artifact directory (default: <work dir>/<fuzzer>/artifacts)")
    p.add_argument("--keep-going", action="store_true",
                   help="after a crash, fuzz on (-fork=1, crashes ignored) for the rest of --time")

    p = sub.add_parser("nightly", help="every target, the property suite, minimization, report")
    p.add_argument("--budget", type=float, default=600, help="total seconds (default 600)")
    p.add_argument("--jobs", type=int, default=1,
                   help="parallel libFuzzer jobs and pytest workers (default 1)")
    p.add_argument("--report", default="reports/latest", help="report directory")
    p.add_argument("--properties", choices=["auto", "quick", "full", "off"], default="auto",
                   help="property suite: every property test, examples sized from its "
                   "measured cost up to the nightly profile's count (auto = full); quick "
                   "caps them at 20; off skips the suite")
    p.add_argument("--property-budget", type=float,
                   help="seconds for the property suite (default: 30%% of the budget)")
    p.add_argument("--property-tests", nargs="*", help="pytest paths (default: a checkout's tests/; installed: none, off)")
    p.add_argument("--hypothesis-db", help="example database directory (CI caches it)")
    p.add_argument("--no-minimize", action="store_true",
                   help="skip the corpus minimization phase (its share goes to fuzzing)")
    p.add_argument("--target", action="append", help="only these targets (repeatable)")
    p.add_argument("--no-coverage", action="store_true",
                   help="skip line/branch coverage of contracts/ and the transition replay")
    p.add_argument("--mutants", action=argparse.BooleanOptionalAction, default=None,
                   help="run the mutants phase (default: on from a 300 s budget)")
    p.add_argument("--history", help="JSON-lines file each night's summary is appended to "
                   "(default: REPORT/../history.jsonl)")

    p = sub.add_parser("minimize", help="merge-minimize corpora, keeping every feature")
    p.add_argument("target", nargs="*", help="target names (default: every target)")
    p.add_argument("--seeds", action="store_true",
                   help="minimize the committed seed corpus (merging in the working corpus)")

    p = sub.add_parser("triage", help="group crash artifacts by fingerprint, minimize each")
    p.add_argument("dir", help="directory of crash artifacts (relative paths work)")
    p.add_argument("--target", help="target name (default: from a fuzz_<name> folder in DIR)")
    p.add_argument("--out", help="where minimized inputs go (default DIR/minimized)")
    p.add_argument("--no-minimize", action="store_true",
                   help="group only; do not minimize each crash")
    p.add_argument("--minimize-time", type=float, default=20,
                   help="seconds to minimize each crash (default 20)")

    p = sub.add_parser("promote", help="put a crash input (or a property-test failure "
                       "document) into the regression store")
    p.add_argument("artifact", help="the crashing input file, or a property-failure .json "
                   "the nightly wrote (relative paths work)")
    p.add_argument("--target", help="target name the input crashes (not for a "
                   "property-failure document)")
    p.add_argument("--expect-crash", action="store_true",
                   help="known open bug: pytest replays it as strict xfail")
    p.add_argument("--no-minimize", action="store_true",
                   help="store the input as it is, unminimized")
    p.add_argument("--minimize-time", type=float, default=20,
                   help="seconds to minimize it (default 20)")

    p = sub.add_parser(
        "show", help="decode one input into what the target ran (events, SSE, URL, JSON)"
    )
    p.add_argument("input", help="a corpus, crash or regression input file")
    p.add_argument("--target", help="target name (default: from a fuzz_<name> folder in the path)")
    p.add_argument("--json", action="store_true",
                   help="one JSON object per recorded call instead of the readable view")

    p = sub.add_parser("replay", help="run corpora and regressions without fuzzing")
    p.add_argument("target", nargs="*", help="target names (default: every target)")
    p.add_argument("--update", action="store_true",
                   help="flip fixed known-crash regressions to expect pass")

    p = sub.add_parser("bench", help="speed figures as ratios to baselines measured in the same run")
    from pcfuzz.fuzz._bench import add_arguments as add_bench_arguments

    add_bench_arguments(p)
    add_check_parser(sub)
    add_drift_parser(sub)
    add_conform_parser(sub)
    add_mutants_parser(sub)
    return parser


def cmd_bench(layout: Layout, args: argparse.Namespace) -> int:
    from pcfuzz.fuzz._bench import main as bench_main

    return bench_main(args)


COMMANDS = {
    "list": cmd_list,
    "fuzz": cmd_fuzz,
    "nightly": cmd_nightly,
    "minimize": cmd_minimize,
    "triage": cmd_triage,
    "promote": cmd_promote,
    "replay": cmd_replay,
    "show": cmd_show,
    "bench": cmd_bench,
    "check": cmd_check,
    "drift": cmd_drift,
    "conform": cmd_conform,
    "mutants": cmd_mutants,
}


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``pcfuzz`` and ``python -m pcfuzz``; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        layout = Layout.from_options(args.fuzz_dir, args.regressions_dir, args.work_dir)
        return COMMANDS[args.command](layout, args)
    except (TargetNotFound, LayoutError, ReplayError) as exc:
        print(f"pcfuzz: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("pcfuzz: interrupted", file=sys.stderr)
        return 130
