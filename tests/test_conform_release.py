"""The conformance kit's release form: ``adapter(stream, release, continuation)``.

Release timing: each ``release(call)`` is attributed to the events delivered when it
happened; a call released before the terminal event is a safety violation of its own,
even when the adapter then raises, hangs or ends its process. The follow-up request:
``continuation(request)`` must carry exactly one result per released call, bound by
id (``duplicate_result``, ``missing_result``, ``unknown_result``), modelled by the kit
on its own and compared here with this project's continuation builders as the oracle.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import _release_adapters as bad
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pcfuzz.cli import main
from pcfuzz.conform import followup, kit, timing
from pcfuzz.conform.adapters import (
    ADAPTERS,
    RELEASE_ADAPTERS,
    SSE_RELEASE_ADAPTERS,
    calls_of,
    follow_up_request,
)
from pcfuzz.conform.sandbox import Outcome, Sandbox
from pcfuzz.conform.search import payload_for, release_judgement, verdict
from pcfuzz.conform.validate import golden_payload
from pcfuzz.contracts import anthropic_messages as am
from pcfuzz.contracts import gemini_interactions as gi
from pcfuzz.contracts import openai_chat as oc
from pcfuzz.contracts import openai_responses as orsp
from pcfuzz.contracts.errors import ContractError, ResultBindingError
from pcfuzz.contracts.results import ModelVisibleToolResult, bind_results
from pcfuzz.strategies import conformance as scenarios

AM = "anthropic-messages"
PARSERS = {"openai-responses": orsp.parse_events, AM: am.parse_events,
           "gemini-interactions": gi.parse_events, "openai-chat": oc.parse_events}


def _golden_turn(contract: str) -> Any:
    events, _ = golden_payload(contract, "events")
    return PARSERS[contract](events)


# ----------------------------------------------------------------- the terminal event


def test_the_terminal_is_the_first_end_of_turn_event_not_the_last_event() -> None:
    # A naive "the last event is the terminal" misplaces it when something follows.
    stop = {"event": "message_stop", "data": {"type": "message_stop"}}
    ping = {"event": "ping", "data": {"type": "ping"}}
    assert timing.terminal_index(AM, [ping, stop, ping]) == 1
    assert timing.terminal_index(AM, [ping, ping]) is None
    assert timing.terminal_index("openai-chat", [{"choices": []}, "[DONE]"]) == 1
    assert timing.terminal_index("openai-responses",
                                 [{"type": "response.failed"}, {"type": "x"}]) == 0
    assert timing.terminal_index("gemini-interactions",
                                 [{"event_type": "interaction.completed"}]) == 0
    call = {"call_id": "c", "name": "f", "arguments": {}}
    events = [ping, stop, ping]
    # released after event 0 (1 delivered): early; after the terminal (2 delivered): not
    assert timing.early_release(AM, events, [{"at": 1, "call": call}]) is not None
    assert timing.early_release(AM, events, [{"at": 2, "call": call}]) is None
    early = timing.early_release(AM, events, [{"at": 0, "call": call}])
    assert early is not None and "before any event was delivered" in early.text()


def _released_by_parser(contract: str, events: list[Any]) -> list[Any] | None:
    try:
        return calls_of(PARSERS[contract](events))
    except ContractError:
        return None


@pytest.mark.parametrize("contract", scenarios.CONTRACTS)
@given(data=st.data())
def test_a_release_is_early_exactly_until_the_parser_could_release(
        contract: str, data: st.DataObject) -> None:
    scenario = data.draw(scenarios.scenarios(contract, "valid"))
    terminal = timing.terminal_index(contract, scenario.events)
    assert terminal is not None
    # The oracle, this project's parser: the stream up to the terminal is the whole
    # turn (its calls, when it has some); one event less releases nothing.
    whole = _released_by_parser(contract, scenario.events)
    assert _released_by_parser(contract, scenario.events[:terminal + 1]) == whole
    assert not _released_by_parser(contract, scenario.events[:terminal])
    delivered = data.draw(st.integers(0, len(scenario.events)))
    call = {"call_id": "c", "name": "f", "arguments": {}}
    found = timing.early_release(contract, scenario.events, [{"at": delivered, "call": call}])
    assert (found is not None) == (delivered <= terminal)
    if found is not None:
        assert f"is event {terminal}" in found.text() and "'c'" in found.text()


# ----------------------------------------------------------------- the follow-up request


def _results_request(contract: str, calls: list[str], results: list[Any]) -> dict[str, Any]:
    """A request of ``contract``'s shape: an assistant turn with ``calls``, then
    ``results`` (call ids), written from the providers' request shapes."""
    if contract == "openai-responses":
        return {"input": [{"type": "function_call_output", "call_id": r, "output": "x"}
                          for r in results]}
    if contract == "gemini-interactions":
        return {"input": [{"type": "function_result", "call_id": r, "name": "f",
                           "result": "x"} for r in results]}
    if contract == AM:
        return {"messages": [
            {"role": "assistant", "content": [{"type": "tool_use", "id": c, "name": "f",
                                               "input": {}} for c in calls]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": r,
                                          "content": "x"} for r in results]}]}
    return {"messages": [
        {"role": "assistant", "tool_calls": [{"id": c, "type": "function"} for c in calls]},
        *({"role": "tool", "tool_call_id": r, "content": "x"} for r in results)]}


def _renamed(request: dict[str, Any], old: str, new: str) -> Any:
    return json.loads(json.dumps(request).replace(json.dumps(old), json.dumps(new)))


@pytest.mark.parametrize("contract", scenarios.CONTRACTS)
def test_the_builders_requests_bind_exactly_and_each_break_has_its_label(
        contract: str) -> None:
    turn = _golden_turn(contract)
    ids = [c.call_id for c in turn.calls]
    request = follow_up_request(contract, turn)  # the contracts' builder: the oracle
    assert request is not None
    assert followup.check_request(contract, ids, request) is None
    key = followup.RESULTS_AT[contract]
    where = request[key][-1]["content"] if contract == AM else request[key]
    results = [n for n, item in enumerate(where)
               if json.dumps(item).count(ids[0]) and item.get("role") != "assistant"
               and item.get("type") not in ("function_call", "tool_use")]
    first = where[results[-1]]
    twice = json.loads(json.dumps(request))
    (twice[key][-1]["content"] if contract == AM else twice[key]).append(dict(first))
    found = followup.check_request(contract, ids, twice)
    assert found is not None and found.check == "duplicate_result" and repr(ids[0]) in found.text
    missing = json.loads(json.dumps(request))
    (missing[key][-1]["content"] if contract == AM else missing[key]).pop(results[-1])
    found = followup.check_request(contract, ids, missing)
    assert found is not None and found.check == "missing_result" and repr(ids[0]) in found.text
    # the first call was not released: its result answers a call that never ran
    found = followup.check_request(contract, ids[1:], request, frozenset(ids))
    assert found is not None and found.check == "unknown_result" and repr(ids[0]) in found.text
    assert "never ran" in found.text
    found = followup.check_request(contract, ids, _renamed(request, ids[0], "nobody"))
    assert found is not None and found.check in ("unknown_result", "missing_result")


def test_a_result_for_a_call_the_request_replays_is_history_not_unknown() -> None:
    # A stateless request replays earlier turns: their results answer their own calls.
    turn = _golden_turn("openai-responses")
    results = [ModelVisibleToolResult(c.call_id, "ok") for c in turn.calls]
    request = orsp.build_openai_responses_stateless_continuation(
        turn, results, model="m", instructions="i", tools=[
            {"type": "function", "name": "lookup_order", "strict": True, "parameters": {
                "type": "object", "properties": {}, "required": [],
                "additionalProperties": False}}],
        prior_input_items=[{"role": "user", "content": "hi"},
                           {"type": "function_call", "call_id": "old", "name": "f",
                            "arguments": "{}"},
                           {"type": "function_call_output", "call_id": "old", "output": "x"}])
    ids = [c.call_id for c in turn.calls]
    assert followup.check_request("openai-responses", ids, request) is None
    # ... but a result before its call is not an answer to it
    request["input"].insert(0, {"type": "function_call_output", "call_id": "older",
                                "output": "x"})
    request["input"].append({"type": "function_call", "call_id": "older", "name": "f",
                             "arguments": "{}"})
    found = followup.check_request("openai-responses", ids, request)
    assert found is not None and found.check == "unknown_result"


_IDS = st.text(st.sampled_from("abc_-1"), min_size=1, max_size=3)


@pytest.mark.parametrize("contract", scenarios.CONTRACTS)
@given(released=st.lists(_IDS, unique=True, max_size=4), data=st.data())
def test_the_kits_binding_rule_agrees_with_the_contracts_bind_results(
        contract: str, released: list[str], data: st.DataObject) -> None:
    pool = st.sampled_from(released) | _IDS if released else _IDS
    answered = data.draw(st.lists(pool, max_size=6))
    request = _results_request(contract, released, answered)
    try:
        bind_results(released, [ModelVisibleToolResult(r, "x") for r in answered])
        oracle = None
    except ResultBindingError as exc:
        oracle = str(exc)
    found = followup.check_request(contract, released, request)
    assert (found is None) == (oracle is None), (found, oracle)
    if found is not None and oracle is not None:
        word = {"duplicate_result": "duplicate", "missing_result": "missing",
                "unknown_result": "unknown"}[found.check]
        # the first problem in request order is the oracle's too (it reads in order)
        assert word in oracle, (found, oracle)


# ----------------------------------------------------------------- through the worker


def test_an_early_release_is_flagged_even_when_the_adapter_then_raises() -> None:
    report = kit.conform(bad.early_then_raises, AM, form="release", families=["valid"],
                         max_examples=10, seed=0, regressions=None)
    early = [f for f in report.findings if f.key == "released-early"]
    assert len(early) == 1, report.text()
    finding = early[0]
    assert finding.label == "safety" and finding.family == "valid"
    assert finding.invariant.startswith("released before the terminal event: call ")
    assert "the terminal event (message_stop) is event" in finding.invariant
    assert "then rejected the stream: ValueError" in finding.got
    stop = next(n for n, e in enumerate(finding.events) if e["event"] == "content_block_stop")
    assert f"at event {stop}" in finding.got
    assert "release form" in report.text()


def test_calls_released_and_then_rejected_still_ran_in_a_safety_scenario() -> None:
    # The golden turn cut before its message_delta: no terminal, so nothing is early;
    # the adapter releases both calls after the last event, then raises. The raise
    # does not take the releases back.
    events, calls = golden_payload(AM, "events")
    cut = [e for e in events if e["event"] not in ("message_delta", "message_stop")]
    scenario = scenarios.Scenario(AM, "truncation", "truncated", "safety", cut, calls,
                                  expect="nothing", strict_expect="nothing")
    outcome = kit.run_scenario(bad.at_the_end_then_raises, scenario, form="release")
    assert outcome.kind == "raised" and len(outcome.released) == 2
    assert all(r["at"] == len(cut) for r in outcome.releases)
    judged = release_judgement(scenario, outcome, strict=False)
    assert judged is not None
    assert judged[0].startswith("truncated: a stream that is not a complete valid")
    assert judged[1].key.startswith("released:") and not judged[1].label
    # the plain form's verdict on the same stream, had it raised without releasing
    assert verdict(scenario, Outcome("raised"), strict=False) is None


def test_the_command_flags_an_early_release(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["conform", "--contract", AM, "--adapter",
                 "_release_adapters:early_then_raises", "--adapter-form", "release",
                 "--max-examples", "5", "--family", "valid", "--seed", "0", "--json",
                 "--regressions", "none"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["form"] == "release"
    # (it also rejects valid turns without calls: it always raises)
    early = [v for v in report["violations"] if v["key"] == "released-early"]
    assert len(early) == 1 and early[0]["label"] == "safety"


def test_two_results_for_one_call_is_a_duplicate_result_finding() -> None:
    report = kit.conform(bad.answers_first_call_twice, AM, form="release",
                         families=["valid"], max_examples=10, seed=0, regressions=None)
    assert [f.label for f in report.findings] == ["duplicate_result"], report.text()
    finding = report.findings[0]
    assert finding.key == "continuation:duplicate_result"
    assert finding.diff[0].startswith("two results for call ")
    assert "handed over 1 follow-up request(s)" in finding.got


def test_a_missing_result_is_a_missing_result_finding() -> None:
    report = kit.conform(bad.answers_no_call, AM, form="release", families=["valid"],
                         max_examples=10, seed=0, regressions=None)
    assert [f.label for f in report.findings] == ["missing_result"], report.text()


def test_releases_come_back_when_the_adapter_hangs_or_ends_its_process() -> None:
    scenario = scenarios.Scenario(AM, "valid", "none", "valid",
                                  golden_payload(AM, "events")[0], [])
    payload = payload_for(scenario, "events", "release")
    with Sandbox(bad.early_then_exits, form="release") as sandbox:
        died = sandbox.call(payload)
    assert died.kind == "died" and died.message == "exit status 7"
    assert len(died.releases) == 2 and all(r["at"] < len(payload) for r in died.releases)
    with Sandbox(bad.early_then_hangs, form="release", timeout_s=2.0) as sandbox:
        sandbox._answered = True  # not the first call's longer allowance
        hung = sandbox.call(payload)
    assert hung.kind == "timeout" and len(hung.releases) == 2
    judged = release_judgement(scenario, hung, strict=False)
    assert judged is not None and judged[1].key == "released-early"


def test_an_in_process_adapter_records_its_releases_too() -> None:
    # a closure cannot be imported by a worker: it runs in a thread, same records
    events = golden_payload(AM, "events")[0]
    scenario = scenarios.Scenario(AM, "valid", "none", "valid", events, [])

    def first_event_then_release(stream: Any, release: Any, continuation: Any) -> None:
        next(stream)
        release({"call_id": "c", "name": "f", "arguments": {}})
        raise ValueError("rejected after all")

    outcome = kit.run_scenario(first_event_then_release, scenario, form="release")
    assert (outcome.kind, outcome.delivered, outcome.releases) == (
        "raised", 1, [{"at": 1, "call": {"call_id": "c", "name": "f", "arguments": {}}}])
    judged = release_judgement(scenario, outcome, strict=False)
    assert judged is not None and judged[1].key == "released-early"
    assert "released at event 0" in judged[0]


@pytest.mark.parametrize("contract", scenarios.CONTRACTS)
@pytest.mark.parametrize("input", ["events", "sse"])
def test_the_projects_own_parsers_conform_in_the_release_form(contract: str,
                                                               input: str) -> None:
    adapters = RELEASE_ADAPTERS if input == "events" else SSE_RELEASE_ADAPTERS
    report = kit.conform(adapters[contract], contract, input=input, form="release",
                         families=["valid", "truncation"],
                         max_examples=5, regressions=None)
    assert not report.findings, report.text()
    assert all(f.examples > 0 for f in report.families)
    assert report.isolation.startswith("in a worker process")


def test_the_release_forms_correct_adapter_hands_over_a_checked_request() -> None:
    scenario = scenarios.Scenario(AM, "valid", "none", "valid",
                                  golden_payload(AM, "events")[0], [])
    outcome = kit.run_scenario(RELEASE_ADAPTERS[AM], scenario, form="release")
    assert len(outcome.continuations) == 1 and len(outcome.released) == 2
    assert all(r["at"] == len(scenario.events) for r in outcome.releases)


# ----------------------------------------------------------------- declaring the form


def test_the_form_is_declared_never_guessed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(kit.UsageError, match="unknown adapter form 'auto'"):
        kit.conform(ADAPTERS[AM], AM, form="auto", max_examples=1)
    # a plain adapter declared release: it returned its calls and released none
    with pytest.raises(kit.UsageError, match="looks like an adapter of the plain form"):
        kit.conform(bad.plain_declared_release, AM, form="release", max_examples=1,
                    regressions=None)
    # a release-form adapter left at the default (plain) form
    with pytest.raises(kit.UsageError, match="--adapter-form release"):
        kit.conform(RELEASE_ADAPTERS[AM], AM, max_examples=1, regressions=None)
    with pytest.raises(kit.UsageError, match="passed release.. something that is not a call"):
        kit.conform(bad.releases_a_string, AM, form="release", max_examples=1,
                    regressions=None)
    with pytest.raises(SystemExit):
        main(["conform", "--contract", AM, "--adapter", "x:y", "--adapter-form", "auto"])
    assert "invalid choice: 'auto'" in capsys.readouterr().err


def test_help_names_both_forms() -> None:
    from pcfuzz.cli.conform import DESCRIPTION

    assert "adapter(events) ->" in DESCRIPTION
    assert "adapter(stream, release, continuation)" in DESCRIPTION


def test_the_pytest_helper_takes_the_release_form() -> None:
    from pcfuzz.conform.pytest_plugin import pcfuzz_conformance

    with pytest.raises(ValueError, match="unknown adapter form 'auto'"):
        pcfuzz_conformance(AM, RELEASE_ADAPTERS[AM], form="auto")
    # what each collected test runs: one family, in the release form
    found, _, examples = kit.check_family(bad.answers_first_call_twice, AM, "valid",
                                          max_examples=10, seed=0, form="release")
    assert examples > 0 and [f.label for f in found] == ["duplicate_result"]
    found, _, _ = kit.check_family(RELEASE_ADAPTERS[AM], AM, "valid", max_examples=5,
                                   form="release")
    assert not found
