"""The adapter under containment (issue 23 item 10) and usage errors (issue 22 item 5).

Whatever an adapter does (exits, interrupts, raises a BaseException, hangs, dies,
prints, returns an object whose methods raise, raises an exception whose message
raises, returns arguments 100,000 levels deep) ``pcfuzz conform`` ends with a report
or a usage error, never a traceback, and within its budget; an adapter that cannot
run the contract's golden stream at all is a usage error (exit 2) saying what was
expected and what came back.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import _conform_cli
import pytest

from pcfuzz.conform.kit import conform
from pcfuzz.errors import UsageError

HOSTILE = "_hostile_adapters"


Run = Callable[..., tuple[subprocess.CompletedProcess[str], float]]


@pytest.fixture
def run_conform(tmp_path: Path) -> Run:
    """``pcfuzz conform`` as a user runs it, from an empty directory."""

    def run(*args: str, timeout: float = 600) -> tuple[subprocess.CompletedProcess[str], float]:
        return _conform_cli.run(tmp_path, *args, timeout=timeout)

    return run


def chat(adapter: str, *more: str) -> list[str]:
    return ["--contract", "openai-chat", "--adapter", f"{HOSTILE}:{adapter}", *more]


# ----------------------------------------------------------------- usage errors (exit 2)


@pytest.mark.parametrize(("adapter", "expected"), [
    ("returns_a_dict", "returned dict: expected a list of calls, got dict. Expected a list of "
                       "calls, here 2: [{\"call_id\": \"call-A\""),
    ("Parser", "is a class, so calling it made an instance: pass a function"),
    ("hostile_object", "returned HostileObject: expected a list of calls, got HostileObject"),
    ("deep_arguments", "arguments.a.a.a"),
    ("unprintable", "raised Unprintable: (str() raised RuntimeError)"),
    ("exits", "raised SystemExit (SystemExit(0)), which is not an Exception"),
])
def test_an_adapter_that_cannot_run_the_golden_stream_is_a_usage_error(
        run_conform: Run, adapter: str, expected: str) -> None:
    run, _ = run_conform(*chat(adapter, "--budget", "30"))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert "openai-chat's golden stream" in run.stderr
    assert expected in run.stderr, run.stderr


def test_a_hung_adapter_is_a_usage_error_after_its_timeout(run_conform: Run) -> None:
    run, took = run_conform(*chat("hangs", "--budget", "60", "--adapter-timeout", "1"))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "did not return within 3s" in run.stderr  # the first call: 3 times the timeout
    assert took < 60, took


def test_the_api_checks_the_adapter_too() -> None:
    import _hostile_adapters

    with pytest.raises(UsageError, match="is a class"):
        conform(_hostile_adapters.Parser, "openai-chat", max_examples=1, regressions=None)


# ----------------------------------------------------------------- findings, not crashes


@pytest.mark.parametrize(("adapter", "got"), [
    ("exits_on_error", "raised SystemExit (SystemExit(0)), which is not an Exception"),
    ("interrupts_on_error", "raised KeyboardInterrupt"),
    ("aborts_on_error", "raised AdapterAbort (stop), which is not an Exception"),
    ("dies_on_error", "ended its process during the call (exit status 7)"),
])
def test_an_adapter_that_escapes_on_some_streams_is_a_finding(
        run_conform: Run, adapter: str, got: str) -> None:
    run, _ = run_conform(*chat(adapter, "--family", "terminal", "--max-examples",
                                         "60", "--seed", "1", "--json"))
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads(run.stdout)
    gots = [v["got"] for v in report["violations"]]
    assert any(got in g for g in gots), gots
    assert "Traceback" not in run.stderr


def test_json_stays_json_when_the_adapter_prints(run_conform: Run) -> None:
    run, _ = run_conform(*chat("prints", "--family", "terminal", "--max-examples",
                                         "60", "--seed", "1", "--json"))
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads(run.stdout)  # nothing the adapter printed is in it
    assert "adapter: reading" in report["violations"][0]["output"]
    assert "the adapter printed:" in run.stderr  # the finding, as found, on stderr


def test_a_hung_adapter_ends_the_run_within_its_budget(run_conform: Run) -> None:
    budget = 15.0
    run, took = run_conform(*chat("hangs_on_error", "--family", "terminal",
                                            "--budget", str(budget), "--adapter-timeout", "1"))
    assert run.returncode == 1, run.stdout + run.stderr
    # 1 s, or 3 s when the hang was a fresh worker's first call (the worker is
    # restarted after a hang, and a first call may take FIRST_CALL_FACTOR times the
    # timeout): a random-seed run reported the 3 s one
    assert re.search(r"did not return within [13]s \(stopped\)", run.stdout), run.stdout
    assert took < budget + 40, took  # start-up and a loaded machine; never unbounded
