"""The budget is a budget (issue 22 item 1): ``--budget S`` bounds the whole run,
shrinking included; ``--max-examples N`` is the other bound; a value that is not a
positive number is a usage error; a finding is printed as soon as it is found; a run
stopped by a signal writes the report of what it found (exit 1 with a finding, 3
without). No test here asserts a tight wall-clock bound: each allows the budget plus
a generous start-up slack, far below what an unbounded shrink takes.
"""

from __future__ import annotations

import json
import math
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import _conform_cli
import pytest

from pcfuzz.cli import main
from pcfuzz.conform.adapters import ADAPTERS
from pcfuzz.conform.kit import conform
from pcfuzz.errors import UsageError

OWN = "pcfuzz.conform.adapters:openai_chat"
#: start-up of a fresh interpreter, the worker and hypothesis on a loaded machine
SLACK_S = 45.0


def command(*args: str) -> list[str]:
    return _conform_cli.command("--contract", "openai-chat", *args)


# ----------------------------------------------------------------- the values


@pytest.mark.parametrize("option", ["--budget", "--adapter-timeout"])
@pytest.mark.parametrize("value", ["-5", "0", "nan", "inf", "-inf", "soon"])
def test_seconds_that_are_not_a_positive_finite_number_are_a_usage_error(
        option: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["conform", "--contract", "openai-chat", "--adapter", OWN, option, value])
    assert stop.value.code == 2
    assert f"argument {option}: " in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-1", "2.5"])
def test_max_examples_must_be_a_whole_number_above_zero(
        value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["conform", "--contract", "openai-chat", "--adapter", OWN, "--max-examples", value])
    assert stop.value.code == 2
    assert "argument --max-examples: " in capsys.readouterr().err


@pytest.mark.parametrize("bad", [0, -5.0, math.nan, math.inf])
def test_the_api_refuses_them_too(bad: float) -> None:
    with pytest.raises(UsageError, match="the budget must be a finite number"):
        conform(ADAPTERS["openai-chat"], "openai-chat", budget_s=bad)
    with pytest.raises(UsageError, match="the adapter timeout must be a finite number"):
        conform(ADAPTERS["openai-chat"], "openai-chat", adapter_timeout_s=bad)
    with pytest.raises(UsageError, match="max_examples must be a whole number"):
        conform(ADAPTERS["openai-chat"], "openai-chat", max_examples=0)


# ----------------------------------------------------------------- the bound


def test_the_budget_bounds_shrinking(tmp_path: Path) -> None:
    # 0.2 s a call: hypothesis alone would shrink a finding for minutes (its own limit
    # is 500 shrinks or five minutes); the budget stops it and the smallest stream
    # found so far is reported.
    budget = 10.0
    run, took = _conform_cli.run(tmp_path, "--contract", "openai-chat", "--adapter",
                                 "_gateway_chat:slow_naive", "--family", "terminal",
                                 "--budget", str(budget), "--seed", "0")
    assert run.returncode == 1, run.stdout + run.stderr
    assert took < budget + SLACK_S, took
    assert "VIOLATION 1: " in run.stdout
    assert "shrinking stopped when the time was up: may not be minimal" in run.stdout


def test_failures_reported_together_and_cut_by_the_budget_are_kept() -> None:
    # hypothesis re-runs the distinct failures it shrank and raises them as one
    # group; the budget can end during that re-run (a TimeUp in the group): each
    # failure is still the kit's to report, not an internal error
    from pcfuzz.conform import search

    one, two = search._violation("cause-1")("a"), search._violation("cause-2")("b")
    assert search.how_it_ended(one) == "found"
    assert search.how_it_ended(BaseExceptionGroup("two", [one, two])) == "found"
    assert search.how_it_ended(BaseExceptionGroup("two", [one, search.TimeUp()])) == "time"
    nested = BaseExceptionGroup("outer", [BaseExceptionGroup("inner", [two, search.TimeUp()])])
    assert search.how_it_ended(nested) == "time"
    assert search.how_it_ended(BaseExceptionGroup("g", [one, KeyboardInterrupt()])) == (
        "interrupted")
    assert search.how_it_ended(BaseExceptionGroup("bug", [one, ValueError("x")])) is None
    assert search.how_it_ended(ValueError("x")) is None


def test_a_one_second_budget_runs_a_second_not_a_hundred_examples(tmp_path: Path) -> None:
    run, took = _conform_cli.run(tmp_path, "--contract", "openai-chat", "--adapter", OWN,
                                 "--budget", "1", "--json")
    report = json.loads(run.stdout)
    assert report["plan"] == "1s budget"
    # nothing found: complete (0) or, when a family got no example in its share, 3
    assert run.returncode in (0, 3), run.stdout + run.stderr
    assert report["complete"] is (run.returncode == 0)
    assert sum(f["examples"] for f in report["families"]) < 100
    assert took < 1 + SLACK_S, took


def test_max_examples_bounds_each_family(tmp_path: Path) -> None:
    report = conform(ADAPTERS["openai-chat"], "openai-chat", families=["valid", "terminal"],
                     max_examples=7, budget_s=600)
    assert [f.examples for f in report.families] == [7, 7]
    assert report.plan == "600s budget and 7 examples per family" and report.complete


# ----------------------------------------------------------------- as found, and when stopped


def _lines(stream: IO[str], into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line)


def _run_until(cmd: list[str], cwd: Path, env: dict[str, str], ready: Callable[[str], bool],
               sig: int) -> tuple[int, str, str, float]:
    """Start ``cmd``, send ``sig`` once a line of its output passes ``ready``; return
    (exit status, stdout, stderr, seconds from the signal to the end)."""
    _conform_cli.warm()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out: queue.Queue[str] = queue.Queue()
    err: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None and proc.stderr is not None
    readers = [threading.Thread(target=_lines, args=(proc.stdout, out), daemon=True),
               threading.Thread(target=_lines, args=(proc.stderr, err), daemon=True)]
    for reader in readers:
        reader.start()
    seen: list[str] = []
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            try:
                line = out.get(timeout=0.2)
            except queue.Empty:
                try:
                    line = err.get_nowait()
                except queue.Empty:
                    continue
            seen.append(line)
            if ready(line):
                break
        else:
            pytest.fail("the run never printed what the test waits for:\n" + "".join(seen))
        proc.send_signal(sig)
        stopped = time.monotonic()
        proc.wait(timeout=120)
        ended = time.monotonic() - stopped
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for reader in readers:
        reader.join(timeout=10)
    proc.stdout.close()
    proc.stderr.close()
    rest_out = "".join(list(out.queue))
    rest_err = "".join(list(err.queue))
    return proc.returncode, "".join(seen) + rest_out, rest_err, ended


def test_each_finding_is_passed_on_when_its_batch_ends_not_when_the_run_does() -> None:
    import _gateway_chat

    order: list[str] = []
    conform(_gateway_chat.naive, "openai-chat", families=["terminal", "truncation"],
            max_examples=60, seed=0, regressions=None,
            on_finding=lambda finding: order.append(f"finding: {finding.family}"),
            progress=lambda line: order.append(line))
    first = order.index("finding: terminal")
    ended = next(n for n, line in enumerate(order)
                 if line.startswith("[1/2] terminal: ") and " examples, VIOLATION" in line)
    assert first < ended, order


def test_sigterm_reports_what_was_found(tmp_path: Path) -> None:
    # stopped while the first finding is being shrunk: it is reported all the same
    code, out, _, ended = _run_until(
        command("--adapter", "_gateway_chat:naive", "--family", "terminal", "--budget", "600",
                "--seed", "0"),
        tmp_path, _conform_cli.env(), lambda line: "terminal: found: " in line, signal.SIGTERM)
    assert code == 1, out
    assert "VIOLATION 1: " in out
    assert "interrupted while shrinking: may not be minimal" in out
    assert "INCOMPLETE: stopped by SIGTERM after " in out
    assert ended < SLACK_S, ended


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize(("sig", "name"), [(signal.SIGTERM, "SIGTERM"),
                                           (signal.SIGINT, "SIGINT (Ctrl-C)")])
def test_a_signal_whose_exception_a_gc_callback_dropped_still_stops_the_run(
    sig: int, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A signal handler runs between any two bytecodes, also inside a garbage-collector
    callback, and CPython drops what such a callback raises ("Exception ignored in
    ..."): a SIGTERM sent while a finding was shrunk was lost that way, on a loaded
    machine, and the run went on to the end of its 600 s budget. Here the signal is
    sent from inside a gc callback, so its handler runs there and its exception is
    dropped: the run still stops at its next example and reports it."""
    import gc

    from pcfuzz.cli import conform as conform_cli
    from pcfuzz.conform import search

    handler = conform_cli._on_sigterm if sig == signal.SIGTERM else conform_cli._on_sigint
    sent: list[float] = []
    examples: list[int] = []
    evaluate = search.Search.evaluate

    def counted(self: search.Search, *args: object, **kwargs: object) -> object:
        examples.append(1)
        return evaluate(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(search.Search, "evaluate", counted)

    def send_from_a_callback(phase: str, info: dict[str, int]) -> None:
        # once the search runs examples under the run's own handler (never pytest's,
        # never the default action)
        if (sent or phase != "start" or len(examples) < 20
                or signal.getsignal(sig) is not handler):
            return
        sent.append(time.monotonic())
        os.kill(os.getpid(), sig)
        for _ in range(1000):  # the handler runs here, inside the callback
            pass

    dropped: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda hook: dropped.append(hook.exc_value))
    monkeypatch.chdir(tmp_path)
    gc.callbacks.append(send_from_a_callback)
    try:
        status = main(["conform", "--contract", "openai-chat", "--adapter", OWN, "--budget",
                       "60", "--regressions", "none"])
    finally:
        gc.callbacks.remove(send_from_a_callback)
    ended = time.monotonic()
    captured = capsys.readouterr()
    assert sent, "the garbage collector never ran during the run"
    # the handler's exception was raised inside the callback, and dropped
    assert any(isinstance(e, KeyboardInterrupt) for e in dropped), dropped
    assert status == 3, captured.out[-2000:]
    assert f"INCOMPLETE: stopped by {name} after " in captured.out, captured.out[-2000:]
    # stopped at its next example, not at the end of its 60 s budget
    assert ended - sent[0] < 30, ended - sent[0]
    assert signal.getsignal(sig) is not handler


def test_a_run_stopped_before_it_found_anything_is_incomplete(tmp_path: Path) -> None:
    code, out, _, ended = _run_until(
        command("--adapter", OWN, "--budget", "600"), tmp_path, _conform_cli.env(),
        lambda line: "famil" in line and "to run" in line, signal.SIGINT)
    assert code == 3, out
    assert "no violations in " in out and "INCOMPLETE: stopped by SIGINT (Ctrl-C)" in out
    assert ended < SLACK_S, ended


def test_an_interrupt_inside_an_exec_of_a_string_ends_with_the_status_pcfuzz_chose(
    tmp_path: Path,
) -> None:
    """``python -m pcfuzz`` ends with the status it reports for Ctrl-C (130 here: the
    interrupt came while the adapter was imported, before the run), not killed by
    SIGINT. CPython marks an interrupt that leaves an ``exec``/``eval`` of a string as
    unhandled even when it is caught later (dataclasses and namedtuples define their
    methods that way, so an import at the wrong moment is enough), and ``python -m``
    then ends by SIGINT whatever status the program raised: a random-seed full run saw
    a kit run report "stopped by SIGINT" and still end by the signal."""
    (tmp_path / "_interrupt_in_exec.py").write_text(
        "import os\nimport signal\n\n"
        "exec('os.kill(os.getpid(), signal.SIGINT)\\nfor _ in range(10 ** 8): pass')\n\n\n"
        "def adapter(events):\n    return []\n", encoding="utf-8")
    env = _conform_cli.env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    proc = subprocess.run(command("--adapter", "_interrupt_in_exec:adapter", "--budget", "30"),
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 130, (proc.returncode, proc.stdout, proc.stderr)
    assert "pcfuzz conform: interrupted" in proc.stderr, proc.stderr
