"""Real frameworks through the conformance kit's adapters (the ``frameworks`` extra).

Each adapter of ``pcfuzz.conform.frameworks`` serves raw SSE bytes to a framework's
real streaming code (an in-process transport under its own HTTP client) and returns
the calls the framework would execute. Checked here:

* the package imports without the frameworks, and an adapter called without them
  is a usage error naming the extra;
* every adapter returns the golden wire fixture's calls (the same as this project's
  parser), except where the framework itself gets the golden turn wrong (pinned);
* every hazard ``docs/frameworks.md`` lists, on its minimal stream: what the
  framework does today is pinned, so an upgrade that fixes it fails here and the
  page is updated with it.

The framework tests are skipped, with the reason, when the extra is missing.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from pcfuzz.conform import frameworks
from pcfuzz.conform.adapters import SSE_ADAPTERS
from pcfuzz.conform.frameworks import common
from pcfuzz.errors import UsageError
from pcfuzz.strategies.sse import render_api_events

ROOT = Path(__file__).resolve().parent.parent
WIRE = ROOT / "fixtures" / "wire"


def needs(framework: str) -> pytest.MarkDecorator:
    absent = common.missing(*frameworks.MODULES[framework])
    return pytest.mark.skipif(
        bool(absent), reason=f"{framework} is not installed ({', '.join(absent)} missing): "
                             f"{common.INSTALL_HINT}")


def golden(contract: str) -> bytes:
    document = json.loads((WIRE / f"{contract.replace('-', '_')}.sse.json").read_text("utf-8"))
    data: bytes = document["sse"].encode("utf-8")
    return data


def sse(contract: str, lines: str) -> bytes:
    """A minimal stream as the kit prints it (JSON lines), as the kit sends it."""
    events = [json.loads(line) for line in lines.strip().splitlines()]
    return render_api_events(contract, events)


#: Pydantic AI gives a call that arrives without an id one of its own, random each run
#: (``pyd_ai_`` and 32 hex digits): compared as that shape, not as its digits.
_GENERATED_ID = re.compile(r"pyd_ai_[0-9a-f]{32}")


def canonical(calls: list[dict[str, Any]]) -> list[str]:
    def stable(call: dict[str, Any]) -> dict[str, Any]:
        call_id = call.get("call_id")
        if isinstance(call_id, str) and _GENERATED_ID.fullmatch(call_id):
            return {**call, "call_id": "pyd_ai_<generated>"}
        return call

    return sorted(json.dumps(stable(c), sort_keys=True) for c in calls)


# ----------------------------------------------------------------- without the extra


@pytest.mark.parametrize("framework", sorted(frameworks.FRAMEWORKS))
def test_an_adapter_without_its_framework_is_a_usage_error_naming_the_extra(
        framework: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for module in frameworks.MODULES[framework]:
        monkeypatch.setitem(sys.modules, module, None)  # find_spec: not installed
    assert not frameworks.available(framework)
    for contract in frameworks.FRAMEWORKS[framework][1]:
        with pytest.raises(UsageError, match=r"pip install 'pcfuzz\[frameworks\]'"):
            frameworks.adapter(framework, contract)(golden(contract))


def test_the_package_imports_no_framework() -> None:
    # a fresh interpreter: importing the adapters loads none of the frameworks
    import subprocess

    code = ("import sys, pcfuzz.conform.frameworks as f; "
            "print(sorted(m for m in ('litellm', 'langchain_core', 'pydantic_ai', 'openai', "
            "'anthropic') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert out.strip() == "[]"


def test_every_adapter_is_named_by_its_spec() -> None:
    from pcfuzz.conform.kit import load_adapter

    for framework, (_module, table) in frameworks.FRAMEWORKS.items():
        assert set(table) == {"openai-chat", "openai-responses", "anthropic-messages"}
        for contract, function in table.items():
            assert load_adapter(frameworks.spec(framework, contract)) is function


def test_the_registered_tools_are_valid_kit_tool_names_and_cover_every_golden_turn() -> None:
    # the adapters register common.TOOL_NAMES and the kit runs with --tool-names set
    # to them: the kit must accept the list, and every golden wire turn (the stream
    # the kit checks an adapter on first) must call only those tools
    from pcfuzz.conform.options import check_tool_names

    assert check_tool_names(list(common.TOOL_NAMES)) == common.TOOL_NAMES
    for contract in [*common.FINAL_TURNS, "gemini-interactions"]:
        names = {call["name"] for call in SSE_ADAPTERS[contract](golden(contract))}
        assert names and names <= set(common.TOOL_NAMES), (contract, names)


def test_registered_keeps_the_calls_that_name_a_registered_tool() -> None:
    calls = [{"call_id": "1", "name": "lookup_order", "arguments": {}},
             {"call_id": "2", "name": "lookup_refund", "arguments": {}},
             {"call_id": "3", "name": "", "arguments": {}},
             {"call_id": "4", "name": None, "arguments": {}},
             {"call_id": "5", "name": "lookup_customer", "arguments": {"a": 1}}]
    assert [call["call_id"] for call in common.registered(calls)] == ["1", "5"]


# ----------------------------------------------------------------- the golden turns

#: (framework, contract) whose adapter gets the golden wire turn wrong: the golden
#: turn reproduces a hazard of the framework (pinned below), not an adapter fault.
GOLDEN_HAZARDS = {("langchain", "openai-responses")}


@pytest.mark.parametrize(("framework", "contract"), [
    pytest.param(framework, contract, marks=needs(framework), id=f"{framework}-{contract}")
    for framework, (_module, table) in sorted(frameworks.FRAMEWORKS.items())
    for contract in sorted(table) if (framework, contract) not in GOLDEN_HAZARDS])
def test_every_adapter_returns_the_calls_of_the_golden_wire_turn(framework: str,
                                                                 contract: str) -> None:
    data = golden(contract)
    want = SSE_ADAPTERS[contract](data)  # this project's parser: the turn's calls
    assert len(want) == 2
    assert canonical(frameworks.adapter(framework, contract)(data)) == canonical(want)


@pytest.mark.parametrize(("framework", "contract"), [
    pytest.param(framework, contract, marks=needs(framework), id=f"{framework}-{contract}")
    for framework, (_module, table) in sorted(frameworks.FRAMEWORKS.items())
    for contract in sorted(table)])
def test_a_call_naming_no_registered_tool_is_not_run(framework: str, contract: str) -> None:
    # the golden turn with its tool renamed to one no adapter registers: LangChain's
    # ToolNode and a LiteLLM caller's dispatch answer it with an error, Pydantic AI's
    # agent with a retry prompt; nothing runs (and nothing raises)
    data = golden(contract).replace(b"lookup_order", b"lookup_refund")
    assert b"lookup_refund" in data
    assert "lookup_refund" not in common.TOOL_NAMES
    assert frameworks.adapter(framework, contract)(data) == []


@needs("langchain")
def test_langchain_runs_both_calls_of_the_golden_responses_turn_with_empty_arguments() -> None:
    # The golden turn adds both function_call items before their argument deltas:
    # langchain-openai moves to a new content index whenever output_index changes, so
    # both calls keep the empty arguments of output_item.added (docs/frameworks.md,
    # LC-R). A release that fixes it fails here: move the pair to the golden test.
    calls = frameworks.adapter("langchain", "openai-responses")(golden("openai-responses"))
    assert canonical(calls) == canonical([
        {"call_id": "call-A", "name": "lookup_order", "arguments": {}},
        {"call_id": "call-B", "name": "lookup_order", "arguments": {}}])
    assert GOLDEN_HAZARDS == {("langchain", "openai-responses")}


# ----------------------------------------------------------------- the hazards, pinned

#: Every hazard of docs/frameworks.md: its id, framework, contract, the kit's family
#: and mutation, the minimal stream (the kit's JSON lines) and the calls the framework
#: executed (or handed over for execution) on it.
HAZARDS = json.loads((ROOT / "tests" / "framework_hazards.json").read_text("utf-8"))


def test_every_hazard_of_the_page_is_pinned_here_and_the_other_way_round() -> None:
    page = (ROOT / "docs" / "frameworks.md").read_text("utf-8")
    listed = {line.split("|")[1].strip() for line in page.splitlines()
              if line.startswith("| ") and line.rstrip().endswith("| hazard |")}
    assert listed == {h["id"] for h in HAZARDS}
    for hazard in HAZARDS:
        assert f"#### {hazard['id']} " in page, hazard["id"]


@pytest.mark.parametrize("hazard", [
    pytest.param(h, marks=needs(h["framework"]), id=h["id"]) for h in HAZARDS])
def test_the_minimal_stream_of_every_hazard_still_runs_its_calls(hazard: dict[str, Any]) -> None:
    """Fails when a framework release changes what it does on the stream: update
    docs/frameworks.md (the finding may be fixed) and tests/framework_hazards.json."""
    data = render_api_events(hazard["contract"], hazard["events"])
    adapter = frameworks.adapter(hazard["framework"], hazard["contract"])
    if not hazard.get("varies"):
        calls = adapter(data)
        assert calls, "nothing runs any more: the hazard looks fixed"
        assert canonical(calls) == canonical(hazard["calls"])
        return
    # The framework runs the turn's calls concurrently and one of them fails, so which
    # of the others ran first varies from run to run (docs/frameworks.md says how
    # often): every call that runs is one the page pins, and some replay runs one.
    ran: list[str] = []
    for _attempt in range(10):
        try:
            ran += canonical(adapter(data))
        except Exception:  # the failing call stopped the run before any other ran
            continue
    assert ran, "nothing runs any more in 10 replays: the hazard looks fixed"
    assert set(ran) <= set(canonical(hazard["calls"]))


@pytest.mark.parametrize("contract", sorted(common.FINAL_TURNS))
def test_the_follow_up_turn_is_a_valid_turn_without_calls(contract: str) -> None:
    # what the in-process server answers an agent's later requests with: this
    # project's parser accepts it, and it asks for nothing
    assert SSE_ADAPTERS[contract](common.FINAL_TURNS[contract]) == []


@pytest.mark.parametrize("contract", sorted(common.FINAL_TURNS))
@needs("pydantic-ai")
def test_pydantic_ai_ends_its_run_on_the_follow_up_turn(contract: str) -> None:
    # served first, the agent takes it as its final answer: one request, nothing run,
    # no retry (an agent that could not read it would retry and raise)
    assert frameworks.adapter("pydantic-ai", contract)(common.FINAL_TURNS[contract]) == []
