"""``pcfuzz conform``: the kit's turn models and mutations against your own parser."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from pcfuzz.cli.common import add_command, count, require_harness, seconds
from pcfuzz.conform.gate import check_gate
from pcfuzz.conform.kit import (
    DEFAULT_REALISM,
    DEFAULT_REGRESSIONS,
    DEFAULT_TIMEOUT_S,
    FORMS,
    GATES,
    HOSTILE_NAMES,
    HYPOTHESIS_HOME,
    INPUTS,
    Finding,
    Stopped,
    conform,
    load_adapter,
)
from pcfuzz.conform.options import check_realism, check_tool_names, plan_families
from pcfuzz.conform.search import clear_stop, request_stop
from pcfuzz.contracts.registry import NAMES
from pcfuzz.database import describe, lost, open_database
from pcfuzz.errors import EXIT_CLEAN, EXIT_FINDING, EXIT_INCOMPLETE, UsageError

NAME = "conform"
#: Seconds of a run when neither --budget nor --max-examples is given.
DEFAULT_BUDGET_S = 60.0
#: The runner's own directory database: the database of --database-readonly alone,
#: and the local half of a redis one (relative to the current directory).
LOCAL_DB = Path(".pcfuzz") / "conform-db"
#: Written when a shared database server stops answering during the run.
LOST_MARKER = Path(".pcfuzz") / "conform-db.lost.json"
HELP = "run the turn models and mutations against your own parser (an adapter)"
DESCRIPTION = """\
Run this project's turn models and labelled mutations against any parser,
through an adapter: a plain function

    adapter(events) -> [{"call_id": str, "name": str, "arguments": dict}, ...]

that returns the calls the parser would execute for one whole turn (raising
means the parser rejected the stream). --input sse passes the raw SSE bytes of
the turn instead of the decoded events.

--adapter-form release declares the second form, for a framework that runs
calls while the stream is still arriving:

    adapter(stream, release, continuation)

stream hands out the events (with --input sse: each event's SSE frame) one at
a time; the adapter calls release({"call_id", "name", "arguments"}) the moment
its framework would run that call, and may call continuation(request) with the
request it would send next (the provider's request JSON). Each release is
attributed to the events delivered when it happened: a call released before
the terminal event is a safety violation, even if the adapter then raises; the
follow-up request must carry exactly one result per released call, bound by
id (duplicate_result, missing_result, unknown_result).

Valid turns must release exactly their calls; safety mutations (truncation,
missing, early or failed terminal, overlap, reused index, conflicting replay,
id confusion, broken arguments) must release nothing; --strict adds this
project's own strictness policy. A violation is shrunk to a minimal stream,
printed as JSON lines and SSE bytes, and saved to the regression directory,
which later runs replay first.

Examples:
    pcfuzz conform --contract anthropic-messages --adapter mypkg.stream:adapter
    pcfuzz conform --contract openai-chat --adapter ./my_parser.py:parse --input sse
    pcfuzz conform --contract openai-chat --adapter ./agent.py:run --adapter-form release

Fit the run to your integration: --tool-names a,b,c names every generated call
with one of your registered tools (default: identifiers; --hostile-names for
arbitrary Unicode names); --mutation and --exclude run only / skip labelled
mutations (as findings print them: family:mutation, or the mutation alone);
--gate finish_reason (openai-chat) or --gate stop_reason (anthropic-messages)
declares that your integration runs calls only when the turn's own terminal
asks for tools: what that gate stops is reported apart and does not fail the
run. An async def adapter is awaited, on one event loop for the whole run.

--realism sets how realistic the generated streams are: sdk (the default) only
what the providers send (Chat: a call's first fragment carries its id, type and
whole name, later ones only argument pieces); wire anything the official SDK
types accept (names split over fragments, an id in a later fragment, arguments
before the name); hostile this project's adversarial shapes (fields and values
the SDK types do not declare, too). Mutations are drawn on streams of that
level; a valid stream's finding names the level that produced it.

The budget bounds the whole run, shrinking included: when it is spent the
search stops and each finding is reported with the smallest stream found so far.
Every distinct root cause is reported once, as soon as it is found (progress on
standard error); Ctrl-C or SIGTERM ends the run with the report of what it found.
The adapter runs in a worker process, each call under --adapter-timeout, its
output captured (shown in the finding, never mixed into --json).

Exit status: 0 no violation; 1 a violation; 2 usage error (the adapter cannot
be imported, or cannot run the contract's golden stream: wrong return shape, a
class, an exception; an unknown contract, family or mutation; tool names that
are not distinct identifiers; a gate the contract does not have; a budget that
is not a positive number); 3 incomplete (stopped by a signal, a family ran no example, or the shared
--database server stopped answering) with nothing found."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = add_command(sub, NAME, HELP, DESCRIPTION)
    p.add_argument("--contract", required=True, choices=NAMES,
                   help="the API whose streams the parser reads")
    p.add_argument("--adapter", required=True, metavar="MODULE:FUNCTION",
                   help="the parser under test: module:function or path/to/file.py:function, "
                        "called as adapter(events) -> [{call_id, name, arguments}, ...]; "
                        "raising means the parser rejected the stream")
    p.add_argument("--adapter-form", choices=FORMS, default="plain",
                   help="how the adapter is called: plain (default), adapter(events) -> "
                        "calls; release, adapter(stream, release, continuation): it reads the "
                        "events one at a time and calls release(call) when it would run a "
                        "call (a release before the terminal event is a violation) and "
                        "continuation(request) with the request it would send next (checked: "
                        "one result per released call)")
    p.add_argument("--input", choices=INPUTS, default="events",
                   help="what the adapter receives: the decoded event list (default) or the "
                        "raw SSE bytes of the turn")
    p.add_argument("--budget", type=seconds, metavar="S",
                   help=f"seconds for the whole run, shrinking included (default "
                        f"{DEFAULT_BUDGET_S:g} unless --max-examples is given)")
    p.add_argument("--max-examples", type=count, metavar="N",
                   help="examples per family instead of a time budget (with --budget too: "
                        "whichever ends first)")
    p.add_argument("--adapter-timeout", type=seconds, default=DEFAULT_TIMEOUT_S, metavar="S",
                   help=f"seconds one adapter call may take (default {DEFAULT_TIMEOUT_S:g}); "
                        "a call that takes longer is stopped and is a finding")
    p.add_argument("--strict", action="store_true",
                   help="also fail on this project's strictness policy (unknown fields, "
                        "usage regression, envelope drift), not only safety and correct output")
    p.add_argument("--family", action="append", metavar="NAME",
                   help="run only this scenario family (repeatable; default: all)")
    p.add_argument("--mutation", action="append", metavar="NAME",
                   help="run only this labelled mutation, as findings print it: "
                        "family:mutation or the mutation alone, e.g. truncation:missing_done "
                        "(repeatable; the valid streams are then left out)")
    p.add_argument("--exclude", action="append", metavar="NAME",
                   help="skip this labelled mutation (family:mutation or the mutation "
                        "alone; repeatable)")
    names = p.add_mutually_exclusive_group()
    names.add_argument("--tool-names", metavar="A,B,C",
                       help="every generated call is named with one of these tools "
                            "(comma-separated distinct identifiers, at most 64 characters "
                            "each; default: identifiers the kit draws)")
    names.add_argument("--hostile-names", action="store_true",
                       help="name calls with arbitrary Unicode (Chat Completions) instead "
                            "of identifiers: a hostile run")
    p.add_argument("--realism", default=DEFAULT_REALISM, metavar="{sdk,wire,hostile}",
                   help="how realistic the generated streams are: sdk, what the providers "
                        "send (default); wire, anything the official SDK types accept; "
                        "hostile, this project's adversarial shapes")
    p.add_argument("--gate", choices=GATES, default="none",
                   help="the check your integration applies after the adapter returns: "
                        "finish_reason (openai-chat: runs calls only when finish_reason is "
                        "tool_calls) or stop_reason (anthropic-messages: only when "
                        "stop_reason is tool_use); what it stops is reported apart and does "
                        "not fail the run (default none)")
    p.add_argument("--seed", type=int, metavar="N",
                   help="seed hypothesis: the same streams on every run (default: random, "
                        "or derandomized when the CI variable is set)")
    p.add_argument("--json", action="store_true",
                   help="print the report as one JSON object instead of text (findings are "
                        "still shown on standard error as they are found)")
    p.add_argument("--database", metavar="URL",
                   help="the example database every family's search uses: a path, or "
                   "redis://host:port/db shared by every runner (needs the scale extra; "
                   f"multiplexed with the local one, ./{LOCAL_DB}); failing examples "
                   "saved there are replayed first (not with --seed)")
    p.add_argument("--database-readonly", action="store_true",
                   help="replay what the database holds, write nothing to it (pull requests)")
    p.add_argument("--regressions", metavar="DIR", default=DEFAULT_REGRESSIONS,
                   help="where minimal failing streams are saved and replayed from first "
                        f"(default ./{DEFAULT_REGRESSIONS}); 'none' disables")
    return p


def run(args: argparse.Namespace) -> int:
    require_harness("hypothesis")
    from hypothesis import configuration

    # hypothesis keeps the home directory in a module global with no getter; restore
    # it afterwards so an in-process caller (a test, a notebook) is left as it was.
    previous = getattr(configuration, "__hypothesis_home_directory", None)
    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        configuration.set_hypothesis_home_dir(HYPOTHESIS_HOME.resolve())
    try:
        return _run(args)
    finally:
        configuration.set_hypothesis_home_dir(previous)


def _write(stream: Any, text: str) -> None:
    """Write ``text`` whatever the stream's encoding (a lone surrogate in a stream is
    shown escaped, never an error that loses the report)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    stream.write(text.encode(encoding, "backslashreplace").decode(encoding) + "\n")
    stream.flush()


def _on_sigterm(signum: int, frame: Any) -> None:
    # recorded as well as raised: a handler that runs inside a garbage-collector or
    # weakref callback has its exception dropped, and the search raises it again
    request_stop("SIGTERM")
    raise Stopped("SIGTERM")


def _on_sigint(signum: int, frame: Any) -> None:
    request_stop("SIGINT (Ctrl-C)")
    raise KeyboardInterrupt


def _tool_names(args: argparse.Namespace) -> list[str] | str | None:
    if args.hostile_names:
        return HOSTILE_NAMES
    if args.tool_names is None:
        return None
    return [name.strip() for name in args.tool_names.split(",")]


def _run(args: argparse.Namespace) -> int:
    # the options are checked before anything is imported or opened: a usage error
    # costs nothing
    check_tool_names(_tool_names(args))
    check_realism(args.realism)
    check_gate(args.contract, args.gate)
    plan_families(args.contract, strict=args.strict, families=args.family,
                  mutations=args.mutation, exclude=args.exclude)
    adapter = load_adapter(args.adapter)
    regressions = None if args.regressions == "none" else Path(args.regressions)
    budget = args.budget
    if budget is None and args.max_examples is None:
        budget = DEFAULT_BUDGET_S
    shown = {"n": 0}

    def show(finding: Finding) -> None:
        shown["n"] += 1
        _write(sys.stderr if args.json else sys.stdout, finding.text(shown["n"]) + "\n")

    database, url = None, args.database or (str(LOCAL_DB) if args.database_readonly else None)
    if url is not None:
        if args.seed is not None:
            raise UsageError("--seed and --database exclude each other: hypothesis turns the "
                             "database off in a seeded run")
        LOST_MARKER.unlink(missing_ok=True)
        database = open_database(url, local=LOCAL_DB, readonly=args.database_readonly,
                                 lost_marker=LOST_MARKER)
    clear_stop()
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    previous_int = signal.signal(signal.SIGINT, _on_sigint)
    try:
        report = conform(
            adapter, args.contract, input=args.input, strict=args.strict, budget_s=budget,
            max_examples=args.max_examples, families=args.family, regressions=regressions,
            adapter_name=args.adapter, seed=args.seed, adapter_timeout_s=args.adapter_timeout,
            reference=args.adapter, on_finding=show, database=database,
            form=args.adapter_form, tool_names=_tool_names(args), mutations=args.mutation,
            exclude=args.exclude, gate=args.gate, realism=args.realism,
            progress=lambda message: _write(sys.stderr, f"conform: {message}"),
        )
    finally:
        signal.signal(signal.SIGINT, previous_int)
        signal.signal(signal.SIGTERM, previous)
        clear_stop()
    if url is not None:
        report.database = describe(url) + (" (read-only)" if args.database_readonly else "")
        why = lost(LOST_MARKER)
        if why is not None:
            report.incomplete.append(f"the shared example database was lost: {why}")
    if args.json:
        _write(sys.stdout, json.dumps(report.to_json(), indent=1, ensure_ascii=True))
    else:
        _write(sys.stdout, report.text(findings=False))
    if report.failed:
        return EXIT_FINDING
    return EXIT_CLEAN if report.complete else EXIT_INCOMPLETE
