"""The kit fits real integrations: the tool names its calls carry (``--tool-names``),
the labelled mutations it runs or skips (``--mutation``, ``--exclude``), the gate the
integration applies after the adapter returns (``--gate``), and async adapters.

The names and the gate's fields are written here from the contracts' own words
(the seeds), never read from the parsers' tables.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _kit_option_adapters import (
    REGISTERED,
    anthropic_async,
    every_tool_use,
    hangs,
    registered_chat,
    ungated_chat,
)
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

from pcfuzz.cli import main
from pcfuzz.conform import kit as runner
from pcfuzz.conform.adapters import ADAPTERS, calls_of
from pcfuzz.conform.gate import check_gate, gate_passes
from pcfuzz.conform.options import FamilyPlan, check_tool_names, plan_families
from pcfuzz.conform.sandbox import Sandbox
from pcfuzz.conform.search import Search
from pcfuzz.contracts import anthropic_messages
from pcfuzz.errors import UsageError
from pcfuzz.strategies import conformance as kit

NAMES = ("lookup_order", "get_weather")
#: ``find`` without shrinking: the first example found is enough here
FIRST = settings(database=None, max_examples=500, phases=[Phase.generate])
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")


# ----------------------------------------------------------------- tool names


def _names_in_events(contract: str, events: list[Any]) -> list[str]:
    """Every name a client call carries in the stream, read from the events as each
    API spells it (for Chat Completions: the pieces of ``function.name``, which a
    stream may cut anywhere)."""
    found: list[str] = []
    stack: list[Any] = list(events)
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        stack.extend(node.values())
        name = node.get("name")
        if not isinstance(name, str):
            continue
        if contract == "openai-chat":  # only a tool call's function carries a name
            found.append(name)
        elif node.get("type") in ("tool_use", "function_call"):
            found.append(name)
    return found


def _a_family_of(contract: str) -> st.SearchStrategy[str]:
    return st.sampled_from(kit.families(contract, strict=True))


@pytest.mark.parametrize("contract", kit.CONTRACTS)
@given(data=st.data())
def test_every_generated_call_carries_one_of_the_given_tool_names(
        contract: str, data: st.DataObject) -> None:
    family = data.draw(_a_family_of(contract))
    scenario = data.draw(kit.scenarios(contract, family, strict=True, tool_names=NAMES))
    assert all(call["name"] in NAMES for call in scenario.calls), scenario.calls
    for name in _names_in_events(contract, scenario.events):
        if contract == "openai-chat":  # a piece of a name
            assert any(name in full for full in NAMES), (scenario.mutation, name)
        else:  # empty only where emptying it is the mutation's point
            assert name in NAMES or (name == "" and scenario.mutation == "empty_name"), (
                scenario.mutation, name)


@pytest.mark.parametrize("contract", kit.CONTRACTS)
@given(data=st.data())
def test_default_tool_names_are_bounded_identifiers(contract: str,
                                                    data: st.DataObject) -> None:
    family = data.draw(_a_family_of(contract))
    scenario = data.draw(kit.scenarios(contract, family, strict=True))
    assert all(IDENTIFIER.fullmatch(call["name"]) for call in scenario.calls), scenario.calls
    for name in _names_in_events(contract, scenario.events):
        assert re.fullmatch(r"[A-Za-z0-9_]{0,32}", name), (scenario.mutation, name)


def test_the_first_tool_name_and_the_late_call_after_the_terminal() -> None:
    # A naive choice of names outside the list: the Responses call that arrives after
    # response.completed was always named "late". It now takes a name of the turn.
    scenario = find(kit.scenarios("openai-responses", "terminal", tool_names=["only_tool"]),
                    lambda s: s.mutation == "event_after_terminal"
                    and s.events[-1].get("type") == "response.output_item.added",
                    settings=FIRST)
    assert scenario.events[-1]["item"]["name"] == "only_tool"


def test_hostile_names_keep_the_strategies_arbitrary_unicode() -> None:
    # One opt-in way (--hostile-names, tool_names=HOSTILE_NAMES) to today's names.
    assert runner.HOSTILE_NAMES == kit.HOSTILE_NAMES
    scenario = find(kit.scenarios("openai-chat", "interleaved", tool_names=kit.HOSTILE_NAMES),
                    lambda s: any(not IDENTIFIER.fullmatch(c["name"]) for c in s.calls),
                    settings=FIRST)
    assert scenario.calls


@pytest.mark.parametrize("names", [
    [], ["a", "a"], ["1a"], ["a-b"], ["caf\u00e9"], ["x" * 65], [""], ["a b"], "lookup", [1],
])
def test_tool_names_must_be_distinct_bounded_identifiers(names: Any) -> None:
    with pytest.raises(UsageError) as exc:
        check_tool_names(names)
    assert "\n" not in str(exc.value)


def test_valid_tool_names_pass_as_given() -> None:
    assert check_tool_names(["_a1", "B" * 64]) == ("_a1", "B" * 64)
    assert check_tool_names(None) is None
    assert check_tool_names(kit.HOSTILE_NAMES) == kit.HOSTILE_NAMES


def test_a_registered_tools_integration_needs_its_tool_names(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The integration refuses tools it has not registered: with drawn names every
    # interleaved turn (two calls or more) would be "rejected" (the identifiers drawn
    # by default are not its names); with its names it passes.
    monkeypatch.chdir(tmp_path)
    base = ["conform", "--contract", "openai-chat", "--adapter",
            "_kit_option_adapters:registered_chat", "--family", "interleaved",
            "--max-examples", "5", "--regressions", "none", "--seed", "0"]
    assert main([*base, "--tool-names", ",".join(REGISTERED), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["tool_names"] == ",".join(REGISTERED) and not report["violations"]
    for bad in ("lookup_order,lookup_order", "lookup_order,", "x-y"):
        assert main([*base, "--tool-names", bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("pcfuzz conform: tool name") and err.count("\n") == 1, err
    with pytest.raises(SystemExit) as exc:
        main([*base, "--tool-names", "a", "--hostile-names"])
    assert exc.value.code == 2
    assert registered_chat  # imported by name in the worker; the import keeps it checked


# ----------------------------------------------------------------- mutation filters


def test_a_mutation_as_findings_print_it_selects_its_family_alone() -> None:
    plan = plan_families("openai-chat", strict=False, families=None,
                         mutations=["truncation:missing_done"])
    assert plan == {"truncation": FamilyPlan(valid=False, mutations=("missing_done",))}
    assert plan_families("openai-chat", strict=False, families=None,
                         mutations=["missing_done"]) == plan
    # a mutation's own name may hold a colon
    assert plan_families("gemini-interactions", strict=False, families=None,
                         mutations=["with_status:failures"]) == plan_families(
        "gemini-interactions", strict=False, families=None,
        mutations=["terminal:with_status:failures"])


def test_excluding_every_mutation_of_a_family_drops_it() -> None:
    plan = plan_families("openai-chat", strict=False, families=None,
                         exclude=["missing_done", "truncation:truncated"])
    assert "truncation" not in plan
    assert plan["valid"] == FamilyPlan(valid=True, mutations=())
    assert plan["terminal"].mutations == tuple(
        kit.family_mutations("openai-chat", "terminal"))


@pytest.mark.parametrize(("mutations", "exclude", "message"), [
    (["nope"], None, "has no such mutation; known (family:mutation"),
    (["terminal:missing_done"], None, "has no such mutation"),
    (None, ["nope"], "--exclude 'nope'"),
    (["wrong_role"], None, "is a strictness check: add --strict"),
    (["missing_done"], ["missing_done"], "leave no scenario to run"),
])
def test_unknown_or_unusable_mutation_names_are_usage_errors(
        mutations: list[str] | None, exclude: list[str] | None, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        plan_families("openai-chat", strict=False, families=None, mutations=mutations,
                      exclude=exclude)
    with pytest.raises(UsageError, match="leaves out"):
        plan_families("openai-chat", strict=False, families=["terminal"],
                      mutations=["missing_done"])


@given(data=st.data())
def test_a_filtered_family_draws_only_its_selected_mutations(data: st.DataObject) -> None:
    scenario = data.draw(kit.scenarios("anthropic-messages", "terminal",
                                       mutations=["stop_reason_swap", "error_event"],
                                       valid=False))
    assert scenario.mutation in ("stop_reason_swap", "error_event")


def test_exclude_skips_a_mutation_and_mutation_runs_it_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Every scenario the run evaluates, by mutation (the parser passes: no shrinking).
    seen: list[str] = []
    evaluate = Search.evaluate

    def recording(self: Search, scenario: Any, deadline: float | None) -> Any:
        seen.append(scenario.mutation)
        return evaluate(self, scenario, deadline)

    monkeypatch.setattr(Search, "evaluate", recording)
    chat = ADAPTERS["openai-chat"]
    only = runner.conform(chat, "openai-chat", mutations=["non_tool_terminal"],
                          max_examples=8, seed=0, isolation="thread")
    assert [f.family for f in only.families] == ["terminal"] and not only.findings
    assert seen and set(seen) == {"non_tool_terminal"}
    seen.clear()
    rest = runner.conform(chat, "openai-chat", families=["terminal"],
                          exclude=["terminal:non_tool_terminal"], max_examples=20, seed=0,
                          isolation="thread")
    assert seen and "non_tool_terminal" not in seen and not rest.findings
    assert set(seen) <= set(kit.family_mutations("openai-chat", "terminal"))
    assert "mutations: not terminal:non_tool_terminal" in rest.text()


def test_max_examples_is_checked() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["conform", "--contract", "openai-chat", "--adapter", "x:y",
              "--max-examples", "0"])
    assert exc.value.code == 2
    with pytest.raises(UsageError):
        runner.conform(ungated_chat, "openai-chat", max_examples=0)


# ----------------------------------------------------------------- the caller's gate


def _chunk(finish: str | None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}


def _message_delta(stop: str) -> dict[str, Any]:
    return {"event": "message_delta",
            "data": {"type": "message_delta", "delta": {"stop_reason": stop}}}


def test_the_gate_reads_each_contracts_own_terminal_field() -> None:
    assert gate_passes("openai-chat", "finish_reason", [_chunk(None), _chunk("tool_calls")])
    assert not gate_passes("openai-chat", "finish_reason", [_chunk("stop"), _chunk(None)])
    assert not gate_passes("openai-chat", "finish_reason", ["[DONE]", 1, {"choices": "x"}])
    assert gate_passes("anthropic-messages", "stop_reason", [_message_delta("tool_use")])
    assert not gate_passes("anthropic-messages", "stop_reason", [_message_delta("end_turn")])
    assert gate_passes("gemini-interactions", "none", [])


@pytest.mark.parametrize(("contract", "gate"), [
    ("openai-chat", "stop_reason"), ("anthropic-messages", "finish_reason"),
    ("openai-responses", "finish_reason"), ("openai-responses", "stop_reason"),
    ("gemini-interactions", "finish_reason"), ("gemini-interactions", "stop_reason"),
    ("openai-chat", "status"),
])
def test_a_gate_the_contract_does_not_have_is_a_usage_error(contract: str, gate: str) -> None:
    with pytest.raises(UsageError):
        check_gate(contract, gate)


def test_what_the_declared_gate_stops_is_reported_apart_and_does_not_fail(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The adapter releases every tool_use block whatever the stop reason; an
    # integration that runs calls only on stop_reason tool_use never runs those of a
    # turn that ended otherwise.
    monkeypatch.chdir(tmp_path)
    base = ["conform", "--contract", "anthropic-messages", "--adapter",
            "_kit_option_adapters:every_tool_use", "--mutation", "stop_reason_swap",
            "--max-examples", "10", "--regressions", "none", "--seed", "0"]
    assert main(base) == 1
    capsys.readouterr()
    assert main([*base, "--gate", "stop_reason"]) == 0
    out = capsys.readouterr().out
    assert "stopped by your gate (stop_reason)" in out and "[terminal] stop_reason_swap" in out
    assert main([*base, "--gate", "finish_reason"]) == 2
    assert "applies to openai-chat only" in capsys.readouterr().err
    assert every_tool_use  # imported by name in the worker


def _tool_frames(finish: str | None) -> list[Any]:
    return [{"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "id": "c1", "type": "function",
                 "function": {"name": "lookup_order", "arguments": "{}"}}]},
              "finish_reason": None}]},
            _chunk(finish)]


def test_the_gate_does_not_hide_what_it_would_let_through() -> None:
    # Without [DONE] a chat stream is not complete, but its finish_reason may still
    # say tool_calls: an integration that checks it runs the calls, so the finding
    # stays. A stream cut before its finish_reason is stopped by that gate.
    said_tools = kit.Scenario("openai-chat", "truncation", "missing_done", "safety",
                              _tool_frames("tool_calls"), expect="nothing")
    cut = kit.Scenario("openai-chat", "truncation", "truncated", "safety",
                       _tool_frames(None), expect="nothing")
    with Sandbox(ungated_chat, isolation="thread") as sandbox:
        search = Search(sandbox, "openai-chat", gate="finish_reason")
        assert search.evaluate(said_tools, None) is not None
        assert search.evaluate(cut, None) is None
        assert search.evaluate(cut, None) is None
        ungated = Search(sandbox, "openai-chat")
        assert ungated.evaluate(cut, None) is not None  # a finding without the gate
    [stopped] = search.gated.values()
    assert (stopped.family, stopped.mutation, stopped.examples) == ("truncation", "truncated", 2)
    assert stopped.to_json()["events"] == cut.events


# ----------------------------------------------------------------- async adapters


def test_an_async_adapter_is_awaited_on_one_loop_in_its_worker() -> None:
    # The adapter refuses a second event loop: one asyncio.run per example would
    # make every valid turn after the first a "rejected" finding.
    report = runner.conform(anthropic_async, "anthropic-messages",
                            families=["valid", "truncation"], max_examples=10, seed=0)
    assert report.isolation.startswith("in a worker process"), report.isolation
    assert not report.findings, report.text()
    assert all(f.examples > 0 for f in report.families)


def test_an_async_adapter_in_process_shares_one_loop() -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    async def adapter(events: list[Any]) -> list[dict[str, Any]]:
        loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0)
        return calls_of(anthropic_messages.parse_events(events))

    report = runner.conform(adapter, "anthropic-messages", families=["valid"],
                            max_examples=5, seed=0)
    assert report.isolation.startswith("in-process") and not report.findings, report.text()
    assert len(loops) > 1 and all(loop is loops[0] for loop in loops)
    assert loops[0].is_closed()  # closed with the run


def test_an_async_adapter_that_never_answers_meets_the_timeout() -> None:
    with pytest.raises(UsageError, match="did not return within"):
        runner.conform(hangs, "anthropic-messages", families=["valid"], max_examples=1,
                       adapter_timeout_s=0.2)
    assert anthropic_async


# ----------------------------------------------------------------- the pytest helper


def test_the_pytest_helper_takes_the_same_options(tmp_path: Path) -> None:
    (tmp_path / "test_fit.py").write_text(
        "from pcfuzz.conform.pytest_plugin import pcfuzz_conformance\n"
        "from _kit_option_adapters import REGISTERED, every_tool_use, registered_chat\n"
        "test_gated = pcfuzz_conformance('anthropic-messages', every_tool_use,\n"
        "    mutations=['stop_reason_swap'], gate='stop_reason', regressions='none')\n"
        "test_registered = pcfuzz_conformance('openai-chat', registered_chat,\n"
        "    families=['interleaved'], tool_names=list(REGISTERED), regressions='none')\n",
        encoding="utf-8")
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
               PYTHONPATH=str(Path(__file__).parent))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
         "pcfuzz.conform.pytest_plugin", "test_fit.py", "--pcfuzz-max-examples", "5", "-rA"],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    out = done.stdout + done.stderr
    # without the gate every_tool_use fails stop_reason_swap (the command's test above);
    # the filters leave one family each
    assert done.returncode == 0, out
    assert "PASSED test_fit.py::test_gated[terminal]" in out
    assert "PASSED test_fit.py::test_registered[interleaved]" in out
    assert "2 passed" in out, out


def test_a_family_that_ran_no_example_fails_as_incomplete(tmp_path: Path) -> None:
    """A budget that ends before the first example leaves a family with nothing
    tried: the test fails as incomplete (before, it passed); with examples it passes."""
    (tmp_path / "test_short.py").write_text(
        "from pcfuzz.conform.adapters import openai_chat\n"
        "from pcfuzz.conform.pytest_plugin import pcfuzz_conformance\n"
        "test_short = pcfuzz_conformance('openai-chat', openai_chat, families=['valid'],\n"
        "    regressions='none')\n",
        encoding="utf-8")
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")

    def run(*options: str) -> tuple[int, str]:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
             "pcfuzz.conform.pytest_plugin", "test_short.py", "-rA", *options],
            cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
        return done.returncode, done.stdout + done.stderr

    code, out = run("--pcfuzz-budget", "1e-9")
    assert code == 1, out
    assert "FAILED test_short.py::test_short[valid]" in out, out
    assert ("pcfuzz conformance incomplete: family valid ran no example (its "
            "--pcfuzz-budget of 1e-09 s ended before the first)") in out, out
    code, out = run("--pcfuzz-max-examples", "3")
    assert code == 0 and "PASSED test_short.py::test_short[valid]" in out, out


def test_a_gate_cannot_apply_to_the_release_form() -> None:
    # a release is the call running: no check after the adapter returns can stop it
    from pcfuzz.conform import adapters
    from pcfuzz.conform.kit import UsageError, conform

    with pytest.raises(UsageError, match="cannot apply to the release form"):
        conform(adapters.anthropic_messages_release, "anthropic-messages", form="release",
                gate="stop_reason", max_examples=1, regressions=None)
