"""Realism levels of the conformance kit (issue #25): ``sdk`` ⊆ ``wire`` ⊆ ``hostile``.

At ``sdk`` and ``wire`` every valid stream the kit renders validates strictly against
the official SDK types (oracle tests, skipped without the SDK); at ``sdk`` every
fragmentation is one the provider produces, and ``hostile`` still produces the shapes
``sdk`` leaves out, so the levels differ. The option is checked up front, the report
names the level, and a valid stream's finding says which level produced it.

What the providers send is written here from the SDK types and the APIs' streams,
never read from the strategies' or the parsers' tables.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _oracles import marks
from _realism_adapters import first_fragment_names
from hypothesis import Phase, event, find, given, settings
from hypothesis import strategies as st

from pcfuzz.cli import main
from pcfuzz.conform import kit as runner
from pcfuzz.conform.options import check_realism
from pcfuzz.conform.pytest_plugin import pcfuzz_conformance
from pcfuzz.errors import UsageError
from pcfuzz.strategies import conformance as kit
from pcfuzz.strategies import sdk_oracles

#: ``find`` without shrinking: the first example found is enough here
FIRST = settings(database=None, max_examples=500, phases=[Phase.generate])
LEVELS = ("sdk", "wire", "hostile")


def _valid_streams(contract: str, realism: str) -> st.SearchStrategy[kit.Scenario]:
    """The complete streams of the valid and interleaved families (not the mutations
    some contracts file under interleaved)."""
    return st.sampled_from(kit.VALID_FAMILIES).flatmap(
        lambda family: kit.scenarios(contract, family, realism=realism, mutations=()))


# ----------------------------------------------------------------- the SDK types


def _oracle_cases() -> list[Any]:
    return [pytest.param(contract, level, marks=marks(sdk_oracles.CONTRACT_SDK[contract]),
                         id=f"{contract}-{level}")
            for contract in kit.CONTRACTS for level in ("sdk", "wire")]


def _tool_fragments(contract: str, events: list[Any]) -> dict[Any, int]:
    """How many argument fragments each call of a valid stream arrives in."""
    counts: dict[Any, int] = {}
    for ev in events:
        if not isinstance(ev, dict):
            continue
        if contract == "openai-chat":
            for choice in ev.get("choices") or []:
                for fragment in (choice.get("delta") or {}).get("tool_calls") or []:
                    if (fragment.get("function") or {}).get("arguments"):
                        counts[fragment["index"]] = counts.get(fragment["index"], 0) + 1
        elif contract == "openai-responses" and ev.get("type") == (
                "response.function_call_arguments.delta"):
            counts[ev["item_id"]] = counts.get(ev["item_id"], 0) + 1
        elif contract == "anthropic-messages" and (
                ev["data"].get("delta") or {}).get("type") == "input_json_delta":
            counts[ev["data"]["index"]] = counts.get(ev["data"]["index"], 0) + 1
        elif contract == "gemini-interactions" and (
                ev.get("delta") or {}).get("type") == "arguments_delta":
            counts[ev["index"]] = counts.get(ev["index"], 0) + 1
    return counts


@pytest.mark.parametrize(("contract", "realism"), _oracle_cases())
@given(data=st.data())
def test_every_valid_stream_validates_strictly_against_the_sdk_types(
        contract: str, realism: str, data: st.DataObject) -> None:
    scenario = data.draw(_valid_streams(contract, realism))
    assert scenario.realism == realism
    for n, ev in enumerate(scenario.events):
        for finding in sdk_oracles.validate(contract, ev, f"event {n}"):
            # Anthropic's ping is in no SDK type: the client's SSE loop drops it before
            # validation, as openai's drops [DONE] (which validate() skips itself)
            difference = sdk_oracles.explain(contract, ev, finding)
            assert difference is not None and difference.name == "ping", finding
    calls = len(scenario.calls)
    event(f"{realism}: {min(calls, 2)}{'+' if calls >= 2 else ''} call(s) released")
    pieces = _tool_fragments(contract, scenario.events)
    if any(n >= 2 for n in pieces.values()):
        event(f"{realism}: arguments in several fragments")


# ----------------------------------------------------------------- openai-chat


def _chat_fragments(frames: list[Any]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for frame in frames:
        if isinstance(frame, dict):
            for choice in frame.get("choices") or []:
                for fragment in (choice.get("delta") or {}).get("tool_calls") or []:
                    out.setdefault(fragment["index"], []).append(fragment)
    return out


def _split_name(frames: list[Any]) -> bool:
    return any(sum("name" in (f.get("function") or {}) for f in fragments) > 1
               for fragments in _chat_fragments(frames).values())


def _id_only_first(frames: list[Any]) -> bool:
    return any("name" not in (fragments[0].get("function") or {})
               for fragments in _chat_fragments(frames).values())


def _arguments_before_name(frames: list[Any]) -> bool:
    for fragments in _chat_fragments(frames).values():
        for fragment in fragments:
            function = fragment.get("function") or {}
            if "name" in function:
                break
            if function.get("arguments"):
                return True
    return False


@given(data=st.data())
def test_sdk_chat_calls_arrive_as_the_api_streams_them(data: st.DataObject) -> None:
    scenario = data.draw(_valid_streams("openai-chat", "sdk"))
    fragments = _chat_fragments(scenario.events)
    assert list(fragments) == list(range(len(fragments)))  # 0, 1, 2 ... as they start
    names = {call["call_id"]: call["name"] for call in scenario.calls}
    for first, *later in fragments.values():
        assert set(first) == {"index", "id", "type", "function"}
        assert set(first["function"]) == {"name", "arguments"}
        assert first["type"] == "function" and isinstance(first["function"]["arguments"], str)
        if first["id"] in names:
            assert first["function"]["name"] == names[first["id"]]  # the whole name
        for fragment in later:
            assert set(fragment) == {"index", "function"}
            assert set(fragment["function"]) == {"arguments"}
        event(f"fragments per call: {min(1 + len(later), 3)}")
    assert not _split_name(scenario.events)
    assert not _id_only_first(scenario.events)
    assert not _arguments_before_name(scenario.events)


@pytest.mark.parametrize("shape", [_split_name, _id_only_first, _arguments_before_name])
@pytest.mark.parametrize("realism", ["wire", "hostile"])
def test_wire_and_hostile_chat_still_fragment_anywhere(realism: str, shape: Any) -> None:
    found = find(_valid_streams("openai-chat", realism), lambda s: shape(s.events),
                 settings=FIRST)
    assert shape(found.events)


def test_a_mutation_is_drawn_on_a_stream_of_the_chosen_level() -> None:
    # missing_done leaves the tool calls as the base stream had them
    @FIRST
    @given(kit.mutation_scenarios("openai-chat", "missing_done", realism="sdk"))
    def check(scenario: kit.Scenario) -> None:
        assert scenario.realism == "sdk" and scenario.mutation == "missing_done"
        assert not (_split_name(scenario.events) or _id_only_first(scenario.events)
                    or _arguments_before_name(scenario.events))

    check()
    hostile = find(kit.mutation_scenarios("openai-chat", "missing_done", realism="hostile"),
                   lambda s: _split_name(s.events), settings=FIRST)
    assert hostile.realism == "hostile"


# ----------------------------------------------------------------- openai-responses


def _interleaved_items(events: list[Any]) -> bool:
    """Whether an item's events arrive while another item is open."""
    open_items: set[int] = set()
    for ev in events:
        index = ev.get("output_index")
        if index is None:
            continue
        if open_items - {index}:
            return True
        open_items.add(index)
        if ev["type"] == "response.output_item.done":
            open_items.discard(index)
    return False


@given(data=st.data())
def test_sdk_responses_items_arrive_one_at_a_time(data: st.DataObject) -> None:
    scenario = data.draw(_valid_streams("openai-responses", "sdk"))
    events = scenario.events
    assert [ev["sequence_number"] for ev in events] == list(range(len(events)))
    assert not _interleaved_items(events)
    for ev in events:
        item = ev.get("item") or {}
        if ev["type"] == "response.output_item.added" and item.get("type") == "function_call":
            assert item["arguments"] == "" and item["call_id"] and item["name"]
            assert {"call_id": item["call_id"], "name": item["name"]} in [
                {"call_id": c["call_id"], "name": c["name"]} for c in scenario.calls]


def test_hostile_responses_interleave_items() -> None:
    found = find(_valid_streams("openai-responses", "hostile"),
                 lambda s: _interleaved_items(s.events), settings=FIRST)
    assert _interleaved_items(found.events)


# ----------------------------------------------------------------- anthropic-messages

#: The result block each server tool answers with (anthropic's server tool blocks).
SERVER_RESULTS = {
    "web_search": {"web_search_tool_result"},
    "web_fetch": {"web_fetch_tool_result"},
    "code_execution": {"code_execution_tool_result", "bash_code_execution_tool_result",
                       "text_editor_code_execution_tool_result"},
    "tool_search_tool_regex": {"tool_search_tool_result"},
}


def _blocks(events: list[Any]) -> list[dict[str, Any]]:
    return [ev["data"]["content_block"] for ev in events
            if ev["event"] == "content_block_start"]


def _foreign_result(events: list[Any]) -> bool:
    """A server tool answered by another tool's result type."""
    blocks = _blocks(events)
    return any(a["type"] == "server_tool_use" and b["type"] not in SERVER_RESULTS[a["name"]]
               for a, b in zip(blocks, blocks[1:], strict=False))


@given(data=st.data())
def test_sdk_anthropic_blocks_arrive_as_the_api_streams_them(data: st.DataObject) -> None:
    scenario = data.draw(_valid_streams("anthropic-messages", "sdk"))
    events = scenario.events
    assert events[0]["event"] == "message_start"  # pings come after it
    for n, ev in enumerate(events):
        block = ev["data"].get("content_block") or {}
        if block.get("type") == "tool_use":
            assert block["input"] == {}
            later = [e["data"]["delta"]["type"] for e in events[n + 1:]
                     if e["event"] == "content_block_delta"
                     and e["data"]["index"] == ev["data"]["index"]]
            assert set(later) <= {"input_json_delta"}
    assert not _foreign_result(events)


def test_hostile_anthropic_pings_first_and_mismatches_results() -> None:
    first = find(_valid_streams("anthropic-messages", "hostile"),
                 lambda s: s.events[0]["event"] == "ping", settings=FIRST)
    assert first.events[0]["event"] == "ping"
    assert _foreign_result(find(_valid_streams("anthropic-messages", "wire"),
                                lambda s: _foreign_result(s.events), settings=FIRST).events)


# ----------------------------------------------------------------- gemini-interactions


def _steps_interleaved(events: list[Any]) -> bool:
    current = None
    for ev in events:
        if ev["event_type"] == "step.start":
            if current is not None:
                return True
            current = ev["index"]
        elif ev["event_type"] == "step.delta" and ev["index"] != current:
            return True
        elif ev["event_type"] == "step.stop":
            current = None
    return False


def _start_without_arguments(events: list[Any]) -> bool:
    return any(ev["event_type"] == "step.start" and ev["step"].get("type") == "function_call"
               and "arguments" not in ev["step"] for ev in events)


@given(data=st.data())
def test_sdk_gemini_steps_arrive_one_at_a_time(data: st.DataObject) -> None:
    scenario = data.draw(_valid_streams("gemini-interactions", "sdk"))
    starts = [ev["index"] for ev in scenario.events if ev["event_type"] == "step.start"]
    assert starts == list(range(len(starts)))
    assert not _steps_interleaved(scenario.events)
    assert not _start_without_arguments(scenario.events)


def test_hostile_gemini_interleaves_steps_and_omits_start_arguments() -> None:
    streams = _valid_streams("gemini-interactions", "hostile")
    assert _steps_interleaved(find(streams, lambda s: _steps_interleaved(s.events),
                                   settings=FIRST).events)
    assert _start_without_arguments(find(streams, lambda s: _start_without_arguments(s.events),
                                         settings=FIRST).events)


# ----------------------------------------------------------------- the option


@pytest.mark.parametrize("bad", ["SDK", "", "strict", None, 1])
def test_an_unknown_level_is_a_one_line_usage_error(bad: Any) -> None:
    with pytest.raises(UsageError) as caught:
        check_realism(bad)
    assert "\n" not in str(caught.value) and "sdk, wire, hostile" in str(caught.value)
    with pytest.raises(UsageError):
        runner.conform(first_fragment_names, "openai-chat", realism=bad, max_examples=1,
                       regressions=None)
    with pytest.raises(ValueError, match="sdk, wire, hostile"):
        pcfuzz_conformance("openai-chat", first_fragment_names, realism=bad or "x")


def test_the_command_refuses_an_unknown_level_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["conform", "--contract", "openai-chat", "--adapter",
                 "_realism_adapters:first_fragment_names", "--realism", "realistic"])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "'realistic'" in err, err


def test_help_names_the_levels_and_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["conform", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--realism {sdk,wire,hostile}" in out and "what the providers send (default)" in out


def test_the_report_names_the_default_level(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    base = ["conform", "--contract", "openai-chat", "--adapter",
            "pcfuzz.conform.adapters:openai_chat", "--family", "valid", "--max-examples", "2",
            "--seed", "0", "--regressions", "none"]
    assert main(base) == 0
    assert "realism: sdk" in capsys.readouterr().out.splitlines()
    assert main([*base, "--json", "--realism", "wire"]) == 0
    assert json.loads(capsys.readouterr().out)["realism"] == "wire"


# ----------------------------------------------------------------- findings


def test_a_valid_finding_names_the_level_that_produced_it(tmp_path: Path) -> None:
    # Reading a call's name from its first fragment is right for what the API sends
    # (sdk) and wrong for a name split over fragments (wire, hostile).
    common: dict[str, Any] = {"families": ["valid", "interleaved"], "max_examples": 25,
                              "seed": 0, "isolation": "thread"}
    clean = runner.conform(first_fragment_names, "openai-chat", regressions=None, **common)
    assert not clean.findings and clean.realism == "sdk"
    report = runner.conform(first_fragment_names, "openai-chat", realism="wire",
                            regressions=tmp_path, **common)
    assert report.findings
    for finding in report.findings:
        assert finding.realism == "wire" and finding.to_json()["realism"] == "wire"
        assert finding.text(1).splitlines()[1].endswith(", realism wire)")
        saved = json.loads(Path(str(finding.saved)).read_text(encoding="utf-8"))
        assert saved["realism"] == "wire"
    [(_, replayed)] = list(runner.regression_scenarios(tmp_path, "openai-chat"))[:1]
    assert replayed.realism == "wire"


def test_a_saved_scenario_of_an_unknown_level_is_refused(tmp_path: Path) -> None:
    scenario = kit.Scenario("openai-chat", "valid", "none", "valid", ["[DONE]"],
                            realism="sdk")
    document = {"format": runner.REGRESSION_FORMAT, **scenario.to_json()}
    folder = tmp_path / "openai-chat"
    folder.mkdir()
    (folder / "valid-1.json").write_text(json.dumps(document), encoding="utf-8")
    [(_, loaded)] = list(runner.regression_scenarios(tmp_path, "openai-chat"))
    assert loaded.realism == "sdk"
    del document["realism"]  # saved before the levels: the generators were hostile
    (folder / "valid-1.json").write_text(json.dumps(document), encoding="utf-8")
    [(_, loaded)] = list(runner.regression_scenarios(tmp_path, "openai-chat"))
    assert loaded.realism == "hostile"
    (folder / "valid-1.json").write_text(json.dumps({**document, "realism": "nice"}),
                                         encoding="utf-8")
    with pytest.raises(UsageError, match="realism level"):
        list(runner.regression_scenarios(tmp_path, "openai-chat"))


def test_the_pytest_helper_takes_the_level(tmp_path: Path) -> None:
    # realism= chooses a test's level; --pcfuzz-realism sets it for every test that
    # does not choose its own (here hostile)
    (tmp_path / "test_levels.py").write_text(
        "from pcfuzz.conform.pytest_plugin import pcfuzz_conformance\n"
        "from _realism_adapters import first_fragment_names\n"
        "test_option = pcfuzz_conformance('openai-chat', first_fragment_names,\n"
        "    families=['valid'], regressions='none')\n"
        "test_sdk = pcfuzz_conformance('openai-chat', first_fragment_names,\n"
        "    families=['valid'], regressions='none', realism='sdk')\n"
        "test_wire = pcfuzz_conformance('openai-chat', first_fragment_names,\n"
        "    families=['valid'], regressions='none', realism='wire')\n",
        encoding="utf-8")
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", CI="1",
               PYTHONPATH=str(Path(__file__).parent))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
         "pcfuzz.conform.pytest_plugin", "test_levels.py", "--pcfuzz-max-examples", "25",
         "--pcfuzz-realism", "hostile", "-rA"],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    out = done.stdout + done.stderr
    assert "PASSED test_levels.py::test_sdk[valid]" in out, out
    assert "FAILED test_levels.py::test_wire[valid]" in out, out
    assert "FAILED test_levels.py::test_option[valid]" in out, out
    assert "(valid, realism wire)" in out and "(valid, realism hostile)" in out, out
