"""The ``pcfuzz`` command: the table of subcommands, the parser, and the one place
where an outcome becomes an exit status.

Start-up: the top-level parser is built from :data:`TABLE` alone (names and help
texts), so ``pcfuzz --help`` imports no subcommand; the module of the chosen
subcommand is imported when argparse reaches its name, and builds its own options
then (``pcfuzz check`` never imports hypothesis, atheris or the nightly).

Exit statuses (:mod:`pcfuzz.errors`): a subcommand returns 0 or 1; :class:`UsageError`
is 2 (so is an argparse error, a missing extra, and an operating-system error on a
named path); :class:`Incomplete` is 3 (so is standard output that cannot be written:
closed by its reader, quietly, or a full disk);
Ctrl-C is 130. Anything else is a bug of pcfuzz: one line on standard error names it
and the file its traceback was written to (``<work dir>/bugs/``), and the status is
:data:`~pcfuzz.errors.EXIT_BUG` (70), never one a run can end with.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pcfuzz.errors import (
    EXIT_BUG,
    EXIT_INCOMPLETE,
    EXIT_STATUSES,
    EXIT_USAGE,
    Incomplete,
    UsageError,
    missing_extra,
)

#: Interrupted by the user (SIGINT), as a shell reports it.
EXIT_INTERRUPTED = 130

__all__ = ["COMMANDS", "TABLE", "build_parser", "exit_status", "main"]

SYNOPSIS = """\
pcfuzz: offline contracts and a fuzzing harness for streamed LLM tool-calling APIs.

Fuzzing this project's parsers:
  pcfuzz list                                  targets, corpora, last runs
  pcfuzz fuzz TARGET [--time S]                one campaign of one target
  pcfuzz nightly [--budget S] [--report DIR]   every target, the property suite, report
  pcfuzz report merge DIR... --out DIR         join the reports of a sharded night
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
to fuzz/.work and tests/regressions. Every subcommand except check, list,
drift and promote of a property failure needs the harness extra:
pip install 'pcfuzz[harness]'."""

#: (name, module under pcfuzz.cli, help) of every subcommand, in the order of
#: ``pcfuzz --help``. The help is the module's own ``HELP`` (checked when the module
#: is loaded, and by a test for every module): the top-level parser is built from
#: this table alone.
TABLE: tuple[tuple[str, str, str], ...] = (
    ("list", "list_targets", "targets, corpus sizes, last run figures"),
    ("fuzz", "fuzz", "one campaign of one target"),
    ("nightly", "nightly", "every target, the property suite, minimization, report"),
    ("report", "report", "join the reports of a sharded night (pcfuzz report merge)"),
    ("minimize", "minimize", "merge-minimize corpora, keeping every feature"),
    ("triage", "triage", "group crash artifacts by fingerprint, minimize each"),
    ("promote", "promote",
     "put a crash input (or a property-test failure document) into the regression store"),
    ("replay", "replay", "run corpora and regressions without fuzzing"),
    ("show", "show", "decode one input into what the target ran (events, SSE, URL, JSON)"),
    ("mutants", "mutants",
     "mutation testing: how many sampled mutants of contracts/ the tests kill"),
    ("bench", "bench", "speed figures as ratios to baselines measured in the same run"),
    ("check", "check",
     "verdict on one captured turn (raw SSE bytes, JSON lines or a fixture)"),
    ("conform", "conform",
     "run the turn models and mutations against your own parser (an adapter)"),
    ("drift", "drift",
     "compare the installed official SDKs' types with a pinned contract revision"),
)
#: The names of the subcommands, in the order of ``pcfuzz --help``.
COMMANDS: tuple[str, ...] = tuple(name for name, _module, _help in TABLE)


def _epilog() -> str:
    from pcfuzz._data import docs_dir

    statuses = "\n".join(f"  {code:<3} {meaning}" for code, meaning in EXIT_STATUSES)
    return (f"Exit statuses of every subcommand:\n{statuses}\n  130 interrupted (Ctrl-C)\n\n"
            f"Documentation: {docs_dir()}\n"
            "(fuzzing.md, conformance.md, sse.md, one page per contract)")


class _Parser(argparse.ArgumentParser):
    """The top-level parser: its epilog (which looks up where the docs are) is
    written only when the help is."""

    def format_help(self) -> str:
        if self.epilog is None:
            self.epilog = _epilog()
        return super().format_help()


class _Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """Subparsers that hold a placeholder per subcommand (its name and help) and
    build the real one, from its module, when argparse reaches the name."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.modules: dict[str, tuple[str, str]] = {}
        self.loaded: set[str] = set()
        self.loading: str | None = None

    def placeholder(self, name: str, module: str, help: str) -> None:
        self.modules[name] = (module, help)
        self.add_parser(name, help=help)

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if name == self.loading:
            kwargs.pop("help", None)  # listed once, by its placeholder
            self._name_parser_map.pop(name, None)
        parser: argparse.ArgumentParser = super().add_parser(name, **kwargs)
        return parser

    def load(self, name: str) -> None:
        """Import the subcommand's module and build its parser (once)."""
        if name in self.loaded or name not in self.modules:
            return
        module_name, help = self.modules[name]
        module = importlib.import_module(f"pcfuzz.cli.{module_name}")
        if (module.NAME, module.HELP) != (name, help):
            raise RuntimeError(f"pcfuzz.cli.{module_name} is {module.NAME!r} with help "
                               f"{module.HELP!r}; the table says {name!r}, {help!r}")
        self.loading = name
        try:
            module.add_parser(self).set_defaults(run=module.run)
        finally:
            self.loading = None
        self.loaded.add(name)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        if isinstance(values, list) and values:
            self.load(values[0])
        super().__call__(parser, namespace, values, option_string)


def build_parser(*, every: bool = True) -> argparse.ArgumentParser:
    """The ``pcfuzz`` parser; each subcommand's parser carries its ``run``
    (``args.run``). ``every=False``: a subcommand's module is imported only when the
    arguments name it (what :func:`main` does)."""
    parser = _Parser(
        prog="pcfuzz", description=SYNOPSIS,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    parser.add_argument("--fuzz-dir",
                        help="directory of fuzz_*.py targets (default: the shipped ones)")
    parser.add_argument("--regressions-dir", help="regression store (default: "
                        "./pcfuzz-regressions; tests/regressions in a checkout)")
    parser.add_argument("--work-dir", help="working corpora and artifacts (default: "
                        "./.pcfuzz/work; fuzz/.work in a checkout)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                action=_Commands)
    if not isinstance(sub, _Commands):
        raise TypeError(f"argparse made {type(sub).__name__}, not the lazy subcommands")
    for name, module, help in TABLE:
        sub.placeholder(name, module, help)
    if every:
        for name in COMMANDS:
            sub.load(name)
    return parser


def _version() -> str:
    from pcfuzz import version

    return version()


#: The one map from how a run ended to its exit status (a finished run returns its own).
EXIT_FOR: tuple[tuple[type[BaseException], int], ...] = (
    (UsageError, EXIT_USAGE),
    (Incomplete, EXIT_INCOMPLETE),
    (BrokenPipeError, EXIT_INCOMPLETE),
    (KeyboardInterrupt, EXIT_INTERRUPTED),
)


def exit_status(exc: BaseException) -> int:
    """The exit status of a run that ended with ``exc``: :data:`EXIT_FOR`, a missing
    extra or an operating-system error on a named path (2), else :data:`EXIT_BUG`."""
    if missing_extra(exc) is not None:
        return EXIT_USAGE
    for kind, status in EXIT_FOR:
        if isinstance(exc, kind):
            return status
    if isinstance(exc, OSError) and exc.filename is not None:
        return EXIT_USAGE
    return EXIT_BUG


def _message(exc: BaseException) -> str:
    missing = missing_extra(exc)
    if missing is not None:
        return str(missing)
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    if isinstance(exc, OSError) and not isinstance(exc, (UsageError, Incomplete)):
        from pcfuzz.files import shown

        where = shown(exc.filename) if exc.filename is not None else "?"
        return f"cannot use {where}: {exc.strerror or exc}"
    return str(exc)


def _bug_report(exc: BaseException, argv: Sequence[str], args: Any) -> Path | None:
    """Write the traceback of a bug under ``<work dir>/bugs/`` (the system's
    temporary directory when no work directory can be found); its path, or ``None``."""
    import datetime as dt
    import platform
    import tempfile
    import traceback

    from pcfuzz.files import shown

    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    text = (f"pcfuzz {_version()} (python {platform.python_version()}, "
            f"{platform.platform()})\nargv: {[shown(a) for a in argv]}\n\n"
            + "".join(traceback.format_exception(exc)))
    places: list[Path] = []
    try:
        from pcfuzz.engine.targets import Layout

        layout = Layout.from_options(getattr(args, "fuzz_dir", None),
                                     getattr(args, "regressions_dir", None),
                                     getattr(args, "work_dir", None))
        places.append(layout.work_dir / "bugs")
    except Exception:  # noqa: BLE001 - the report must not fail on the layout
        pass
    places.append(Path(tempfile.gettempdir()) / "pcfuzz-bugs")
    for place in places:
        try:
            place.mkdir(parents=True, exist_ok=True)
            path = place / f"bug-{stamp}-{os.getpid()}.txt"
            path.write_text(text, encoding="utf-8", errors="backslashreplace")
            return path
        except OSError:
            continue
    return None


@contextmanager
def _printable_streams() -> Iterator[None]:
    """Standard output and error that never fail on a character they cannot encode
    (a file name that is not UTF-8, a strict ASCII terminal): backslash escapes; and
    standard output guarded (:class:`_GuardedOutput`)."""
    changed = []
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            try:
                stream.reconfigure(errors="backslashreplace")
                changed.append(stream)
            except (OSError, ValueError):
                pass
    original = sys.stdout
    sys.stdout = _GuardedOutput(original)
    try:
        yield
    finally:
        if isinstance(sys.stdout, _GuardedOutput):
            sys.stdout = original
        for stream in changed:
            try:
                stream.reconfigure(errors="strict")
            except (OSError, ValueError):
                pass


class _OutputLost(Incomplete):
    """Standard output could not be written (a full disk, a closed terminal)."""


class _GuardedOutput:
    """Standard output for the length of a run: a failure to write it (other than a
    reader that went away) is :class:`_OutputLost`, told apart from every other
    ``OSError``; everything else is the stream's own."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def _guard(self, action: Any, *args: Any) -> Any:
        try:
            return action(*args)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise _OutputLost(f"could not write standard output: {why}") from exc

    def write(self, text: str) -> int:
        written: int = self._guard(self._stream.write, text)
        return written

    def flush(self) -> None:
        self._guard(self._stream.flush)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """After a broken pipe: point standard output at the null device, so that the
    interpreter's final flush does not fail again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``pcfuzz`` and ``python -m pcfuzz``; returns the exit status
    (argparse's own errors and ``--help`` end with ``SystemExit``, status 2 and 0)."""
    args_list = sys.argv[1:] if argv is None else list(argv)
    if args_list == ["--version"]:  # answered without building a parser
        print(f"pcfuzz {_version()}")
        return 0
    with _printable_streams():
        args: Any = None
        try:
            args = build_parser(every=False).parse_args(args_list)
            status = int(args.run(args))
            sys.stdout.flush()  # a failure to write has its status here, not at exit
            return status
        except SystemExit:
            raise
        except BaseException as exc:  # noqa: BLE001 - every ending gets its status here
            status = exit_status(exc)
            who = f"pcfuzz {args.command}" if args is not None else "pcfuzz"
            if isinstance(exc, (BrokenPipeError, _OutputLost)):
                _silence_stdout()
            if status == EXIT_BUG:
                report = _bug_report(exc, args_list, args)
                where = (f"the traceback is in {report}" if report is not None
                         else "no file could be written for the traceback")
                first = (str(exc).splitlines() or [""])[0][:200]
                _say(f"{who}: internal error, a bug in pcfuzz ({type(exc).__name__}: "
                     f"{first}); {where}; please report it")
            elif not isinstance(exc, BrokenPipeError):  # the reader chose to stop: quiet
                _say(f"{who}: {_message(exc)}")
            return status


def _say(line: str) -> None:
    """One line on standard error; a standard error that cannot be written changes
    nothing (the exit status still tells)."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
