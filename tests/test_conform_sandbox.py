"""The adapter's sandbox (issue 23 item 10): each call in a worker process under a
per-call timeout, its output captured, whatever it raises or does to its process one
:class:`~pcfuzz.conform.sandbox.Outcome`, what it returns read without calling a
method it overrides. The command's use of it: tests/test_conform_containment.py.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from pcfuzz._data import fixtures_dir
from pcfuzz.conform.adapters import ADAPTERS
from pcfuzz.conform.sandbox import Sandbox
from pcfuzz.contracts.fixtures import load_fixture
from pcfuzz.contracts.openai_chat import frames_from_fixture_events

# ----------------------------------------------------------------- the sandbox itself


def _sandbox(name: str, timeout_s: float = 10.0) -> Sandbox:
    import _hostile_adapters

    return Sandbox(getattr(_hostile_adapters, name), timeout_s=timeout_s)


ERROR_STREAM: list[Any] = [{"choices": [], "error": {"message": "overloaded"}}, "[DONE]"]


@pytest.mark.parametrize(("name", "kind", "detail"), [
    ("exits_on_error", "escaped", "SystemExit"),
    ("interrupts_on_error", "escaped", "KeyboardInterrupt"),
    ("aborts_on_error", "escaped", "AdapterAbort"),
    ("dies_on_error", "died", "exit status 7"),
    ("unprintable_on_error", "raised", "(str() raised RuntimeError)"),
    ("hostile_object", "malformed", "expected a list of calls, got HostileObject"),
    ("returns_a_dict", "malformed", "expected a list of calls, got dict"),
    ("deep_arguments", "malformed", "nested deeper than 200 levels"),
])
def test_whatever_the_adapter_does_is_one_outcome(name: str, kind: str, detail: str) -> None:
    with _sandbox(name) as sandbox:
        assert sandbox.mode == "process"
        outcome = sandbox.call(ERROR_STREAM)
        assert outcome.kind == kind, outcome
        assert detail in outcome.describe(), outcome.describe()
        # the sandbox goes on: the next call gets an answer (a new worker if needed)
        assert sandbox.call(ERROR_STREAM).kind == kind


def test_a_hung_call_is_stopped_and_the_next_one_runs() -> None:
    with _sandbox("hangs_on_error", timeout_s=1.0) as sandbox:
        # the first call of a worker may take 3 times the timeout (lazy imports)
        assert sandbox.call(["[DONE]"]).kind == "raised"
        began = time.monotonic()
        outcome = sandbox.call(ERROR_STREAM)
        assert outcome.kind == "timeout" and "did not return within 1s" in outcome.describe()
        assert time.monotonic() - began < 1.0 + 30  # generous: a loaded machine
        assert sandbox.call(["[DONE]"]).kind == "raised"  # a new worker answers
        # cut by the run's own deadline, not the adapter timeout: not a finding
        assert sandbox.call(ERROR_STREAM, limit_s=0.3).kind == "cut"


def test_the_first_call_of_a_worker_may_take_longer() -> None:
    # an adapter's lazy imports and caches are built by its first call
    with _sandbox("hangs", timeout_s=0.5) as sandbox:
        began = time.monotonic()
        outcome = sandbox.call(["[DONE]"])
        assert outcome.kind == "timeout" and outcome.seconds == 1.5
        assert time.monotonic() - began >= 1.5


def test_a_list_whose_methods_raise_is_read_without_calling_them() -> None:
    fixture = load_fixture(fixtures_dir() / "openai_chat.json")
    frames = list(frames_from_fixture_events(fixture.events))
    calls = ADAPTERS["openai-chat"](frames)
    with _sandbox("hostile_list") as sandbox:
        outcome = sandbox.call(frames)
    assert outcome.kind == "returned" and outcome.calls == calls


def test_the_adapters_output_is_captured_not_printed(capfd: pytest.CaptureFixture[str]) -> None:
    with _sandbox("prints") as sandbox:
        outcome = sandbox.call(ERROR_STREAM)
    out, err = capfd.readouterr()
    assert "adapter:" not in out + err
    assert outcome.kind == "returned"
    for line in ("adapter: reading 2 frames", "adapter: a warning", "adapter: straight to fd 1"):
        assert line in outcome.output


def test_an_adapter_no_process_can_import_runs_in_a_thread_and_a_hang_ends_the_run() -> None:
    calls: list[int] = []

    def closure(frames: list[Any]) -> Any:
        calls.append(1)
        while len(calls) > 1:
            time.sleep(0.01)
        return []

    with Sandbox(closure, timeout_s=0.5) as sandbox:
        assert sandbox.mode == "thread" and "cannot be stopped" in sandbox.note
        assert sandbox.call([]).kind == "returned"
        assert sandbox.call([]).kind == "timeout"
        refused = sandbox.call([])
        assert refused.kind == "refused" and "no further call" in refused.message
    calls.clear()  # lets the abandoned thread end
