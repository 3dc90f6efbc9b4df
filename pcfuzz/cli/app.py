"""The ``pcfuzz`` command: the registry of subcommands, the parser, and the one place
where an outcome becomes an exit status."""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

from pcfuzz.errors import EXIT_INCOMPLETE, EXIT_STATUSES, EXIT_USAGE, Incomplete, UsageError

#: Interrupted by the user (SIGINT), as a shell reports it.
EXIT_INTERRUPTED = 130

__all__ = ["COMMANDS", "build_parser", "exit_status", "main"]

SYNOPSIS = """\
pcfuzz: offline contracts and a fuzzing harness for streamed LLM tool-calling APIs.

Fuzzing this project's parsers:
  pcfuzz list                                  targets, corpora, last runs
  pcfuzz fuzz TARGET [--time S]                one campaign of one target
  pcfuzz nightly [--budget S] [--report DIR]   every target, the property suite, report
  pcfuzz minimize [TARGET ...]                 merge-minimize corpora
  pcfuzz triage DIR                            group crash artifacts, minimize each
  pcfuzz promote FILE [--target T]             keep a crash or property failure
  pcfuzz replay [TARGET ...]                   run corpora and regressions
  pcfuzz show INPUT                            what a target ran for one input
  pcfuzz mutants [--budget S]                  mutation testing of contracts/
  pcfuzz bench [--quick]                       speed figures as ratios

Checking your own code and captures:
  pcfuzz check --contract C FILE               verdict on one captured turn
  pcfuzz conform --contract C --adapter M:F    the kit against your parser
  pcfuzz drift [--revision R]                  the installed SDKs against a revision

TARGET is a short name (strict-json; strict_json and fuzz_strict_json work
too). The global options --fuzz-dir, --regressions-dir and --work-dir (or the
variables PCFUZZ_FUZZ_DIR, PCFUZZ_REGRESSIONS_DIR, PCFUZZ_WORK_DIR) point the
command at another tree. Installed, pcfuzz writes only under the current
directory (.pcfuzz/work, pcfuzz-regressions, reports/latest); from a checkout,
to fuzz/.work and tests/regressions."""


def _commands() -> tuple[ModuleType, ...]:
    # One module per subcommand, each NAME, HELP, add_parser(sub) and run(args) -> int.
    from pcfuzz.cli import (
        bench,
        check,
        conform,
        drift,
        fuzz,
        list_targets,
        minimize,
        mutants,
        nightly,
        promote,
        replay,
        show,
        triage,
    )

    return (list_targets, fuzz, nightly, minimize, triage, promote, replay, show, mutants,
            bench, check, conform, drift)


#: The names of the subcommands, in the order of ``pcfuzz --help``.
COMMANDS: tuple[str, ...] = ("list", "fuzz", "nightly", "minimize", "triage", "promote",
                             "replay", "show", "mutants", "bench", "check", "conform", "drift")


def _epilog() -> str:
    from pcfuzz._data import docs_dir

    statuses = "\n".join(f"  {code}  {meaning}" for code, meaning in EXIT_STATUSES)
    return (f"Exit statuses of every subcommand:\n{statuses}\n\nDocumentation: {docs_dir()}\n"
            "(fuzzing.md, conformance.md, sse.md, one page per contract)")


def build_parser() -> argparse.ArgumentParser:
    """The ``pcfuzz`` parser; each subcommand's parser carries its ``run`` (``args.run``)."""
    parser = argparse.ArgumentParser(
        prog="pcfuzz", description=SYNOPSIS, epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    parser.add_argument("--fuzz-dir",
                        help="directory of fuzz_*.py targets (default: the shipped ones)")
    parser.add_argument("--regressions-dir", help="regression store (default: "
                        "./pcfuzz-regressions; tests/regressions in a checkout)")
    parser.add_argument("--work-dir", help="working corpora and artifacts (default: "
                        "./.pcfuzz/work; fuzz/.work in a checkout)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    names = []
    for module in _commands():
        module.add_parser(sub).set_defaults(run=module.run)
        names.append(module.NAME)
    if tuple(names) != COMMANDS:
        raise RuntimeError(f"subcommand modules {tuple(names)} != COMMANDS {COMMANDS}")
    return parser


def _version() -> str:
    from pcfuzz import version

    return version()


#: The one map from how a run ended to its exit status (a finished run returns its own).
EXIT_FOR: tuple[tuple[type[BaseException], int], ...] = (
    (UsageError, EXIT_USAGE),
    (Incomplete, EXIT_INCOMPLETE),
    (KeyboardInterrupt, EXIT_INTERRUPTED),
)


def exit_status(exc: BaseException) -> int | None:
    """The exit status of a run that ended with ``exc``; ``None``: not an outcome of the
    tool's (a bug: it propagates with its traceback)."""
    for kind, status in EXIT_FOR:
        if isinstance(exc, kind):
            return status
    return None


@contextmanager
def _printable_streams() -> Iterator[None]:
    """Standard output and error that never fail on a character they cannot encode
    (a file name that is not UTF-8, a strict ASCII terminal): backslash escapes."""
    changed = []
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            try:
                stream.reconfigure(errors="backslashreplace")
                changed.append(stream)
            except (OSError, ValueError):
                pass
    try:
        yield
    finally:
        for stream in changed:
            try:
                stream.reconfigure(errors="strict")
            except (OSError, ValueError):
                pass


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``pcfuzz`` and ``python -m pcfuzz``; returns the exit status."""
    args_list = sys.argv[1:] if argv is None else argv
    if args_list == ["--version"]:  # answered without building every subcommand
        print(f"pcfuzz {_version()}")
        return 0
    with _printable_streams():
        args = build_parser().parse_args(args_list)
        try:
            return int(args.run(args))
        except (UsageError, Incomplete, KeyboardInterrupt) as exc:
            message = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
            print(f"pcfuzz {args.command}: {message}", file=sys.stderr)
            status = exit_status(exc)
            return EXIT_USAGE if status is None else status
