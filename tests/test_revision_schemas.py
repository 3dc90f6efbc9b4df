"""The JSON Schemas of every shipped revision (``strategies/revision_schemas.py``).

Revision ``2026-07-21`` keeps its hand-written schemas in ``fixtures/schemas/<contract>/``;
each later revision has its own in ``fixtures/schemas/<contract>/<revision>/``, derived
from the pinned ones by patches written from the SDK types. Every event of every
fixture of a revision, and every event the strategies generate for it, validates
against that revision's schemas; where the revisions differ, a shape of the later
revision FAILS the pinned schema (else the check could not fail), and the pinned
shapes stay valid under the later schemas (today's shapes are a superset).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from pcfuzz.contracts import anthropic_messages, gemini_interactions, openai_chat, openai_responses
from pcfuzz.contracts.fixtures import load_fixture
from pcfuzz.contracts.sse import decode_sse
from pcfuzz.contracts.wire import sse_to_events
from pcfuzz.strategies import anthropic_messages as am_gen
from pcfuzz.strategies import gemini_interactions as gi_gen
from pcfuzz.strategies import openai_chat as oc_gen
from pcfuzz.strategies import openai_responses as or_gen
from pcfuzz.strategies.revision_schemas import (
    CONTRACTS,
    PINNED,
    REVISIONS,
    derived_schemas,
    load_schemas,
    render_schema,
    schema_dir,
    schema_name,
)
from pcfuzz.strategies.wire_fixtures import golden_paths, wire_path

LATER = REVISIONS[1:]
CURRENT = "2026-12-01"
MODULES: dict[str, Any] = {
    "openai-responses": openai_responses,
    "anthropic-messages": anthropic_messages,
    "gemini-interactions": gemini_interactions,
    "openai-chat": openai_chat,
}
_VALIDATORS: dict[tuple[str, str], dict[str, Draft7Validator]] = {
    (contract, revision): {name: Draft7Validator(schema)
                           for name, schema in load_schemas(contract, revision).items()}
    for contract in CONTRACTS for revision in REVISIONS
}


def errors(contract: str, revision: str, value: Any) -> list[str]:
    """Why ``value`` (one parser event of ``contract``) fails ``revision``'s schemas;
    an event no schema of the revision names is an error too."""
    name = schema_name(contract, value)
    if name is None:
        return []
    validators = _VALIDATORS[(contract, revision)]
    if name not in validators:
        return [f"no schema {name!r} at revision {revision}"]
    found = [e.message for e in validators[name].iter_errors(value)]
    if contract == "gemini-interactions":  # the combined schema agrees with the single one
        found += [e.message for e in validators["event"].iter_errors(value)]
    return found


def assert_valid(contract: str, revision: str, events: list[Any]) -> None:
    for n, value in enumerate(events):
        problems = errors(contract, revision, value)
        assert not problems, (contract, revision, n, problems[:2])


def fixture_events(contract: str, revision: str) -> list[list[Any]]:
    """The events of every typed fixture of the revision, and of its wire fixture (the
    SSE bytes decoded as ``contracts.wire`` hands them to the parser)."""
    streams = [list(load_fixture(path).events) for path in golden_paths(contract, revision)]
    sse = load_fixture(wire_path(contract, revision)).sse
    assert sse is not None
    streams.append(list(sse_to_events(contract, decode_sse(sse))))
    return streams


# --- the files ---------------------------------------------------------------------------


def test_every_contract_revision_has_its_schemas() -> None:
    for contract in CONTRACTS:
        assert set(MODULES[contract].REVISIONS) == set(REVISIONS), contract
        for revision in REVISIONS:
            names = set(load_schemas(contract, revision))
            assert names and names == set(load_schemas(contract, PINNED)), (contract, revision)


@pytest.mark.parametrize("revision", LATER)
@pytest.mark.parametrize("contract", CONTRACTS)
def test_shipped_later_schemas_are_current(contract: str, revision: str) -> None:
    folder = schema_dir(contract, revision)
    wanted = {f"{name}.json": render_schema(schema)
              for name, schema in derived_schemas(contract, revision).items()}
    assert {p.name for p in folder.iterdir()} == set(wanted)
    for file, data in wanted.items():
        assert (folder / file).read_bytes() == data, (
            f"{folder / file} is stale: python -m pcfuzz.strategies.revision_schemas")


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("contract", CONTRACTS)
def test_schemas_are_draft07_and_name_their_revision(contract: str, revision: str) -> None:
    for name, schema in load_schemas(contract, revision).items():
        Draft7Validator.check_schema(schema)
        text = json.dumps(schema)
        assert revision in text, (name, "the schema must say which revision it describes")
        other = [r for r in REVISIONS if r != revision and f"revision {r}" in text]
        assert not other, (name, other)


def test_pinned_schemas_are_the_hand_written_ones() -> None:
    # The pinned files stay where the property suites read them (no revision folder).
    for contract in CONTRACTS:
        folder = schema_dir(contract, PINNED)
        assert folder.name == contract.replace("-", "_")
        assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == sorted(LATER)


# --- fixtures --------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("contract", CONTRACTS)
def test_every_fixture_event_validates_against_its_revisions_schemas(
        contract: str, revision: str) -> None:
    streams = fixture_events(contract, revision)
    assert streams
    for events in streams:
        assert_valid(contract, revision, events)


@pytest.mark.parametrize("revision", LATER)
@pytest.mark.parametrize("contract", CONTRACTS)
def test_pinned_fixture_events_stay_valid_under_later_schemas(
        contract: str, revision: str) -> None:
    # Today's shapes are a superset of the pinned ones (what parsed, parses).
    for events in fixture_events(contract, PINNED):
        assert_valid(contract, revision, events)


# --- where the revisions differ: today's shape fails the pinned schema ---------------


def _current_event(contract: str, predicate: Any) -> dict[str, Any]:
    for events in fixture_events(contract, CURRENT):
        for value in events:
            if isinstance(value, dict) and predicate(value):
                return copy.deepcopy(value)
    raise AssertionError(f"no such event in the {CURRENT} fixture of {contract}")


def _responses_args_done() -> dict[str, Any]:
    return _current_event("openai-responses",
                          lambda e: e["type"] == "response.function_call_arguments.done")


def _gemini(kind: str) -> dict[str, Any]:
    return _current_event("gemini-interactions", lambda e: e["event_type"] == kind)


def _chat_audio_chunk() -> dict[str, Any]:
    return _current_event("openai-chat", lambda e: any(
        "audio" in c.get("delta", {}) for c in e.get("choices", [])))


def _gemini_status(kind: str, status: str) -> dict[str, Any]:
    value = _gemini(kind)
    if kind == "interaction.status_update":
        value["status"] = status
    else:
        value["interaction"]["status"] = status
    return value


def _gemini_step(step_type: str) -> dict[str, Any]:
    value = _gemini("step.start")
    value["step"] = {"type": step_type, "id": "hosted-1"}
    return value


def _gemini_delta(step_type: str, **fields: Any) -> dict[str, Any]:
    value = _gemini("step.delta")
    value["delta"] = {"type": step_type, **fields}
    return value


#: google-genai 3.6.1 hosted call deltas whose ``arguments`` is an object.
_HOSTED_CALL_DELTA_ARGUMENTS = {
    "code_execution_call": {"code": "print(1)", "language": "python"},
    "url_context_call": {"urls": ["https://example.com/"]},
    "google_search_call": {"queries": ["q"]},
    "google_maps_call": {"queries": ["q"]},
}


#: (contract, a shape only revision 2026-12-01 has). Written from fixtures/CHANGELOG.md.
TODAYS_SHAPES: list[tuple[str, str, Any]] = [
    ("openai-responses", "arguments.done without name", _responses_args_done),
    *[("gemini-interactions", f"{kind} status {status}",
       lambda kind=kind, status=status: _gemini_status(kind, status))
      for kind in ("interaction.created", "interaction.status_update", "interaction.completed")
      for status in ("queued", "requires_continuation", "budget_exceeded", "idle")],
    *[("gemini-interactions", f"step {step}", lambda step=step: _gemini_step(step))
      for step in gi_gen.LATER_HOSTED_STEP_TYPES[CURRENT]],
    *[("gemini-interactions", f"delta {step}", lambda step=step: _gemini_delta(step))
      for step in gi_gen.LATER_HOSTED_STEP_TYPES[CURRENT]],
    *[("gemini-interactions", f"delta {step} with its arguments object",
       lambda step=step, arguments=arguments: _gemini_delta(step, arguments=arguments))
      for step, arguments in _HOSTED_CALL_DELTA_ARGUMENTS.items()],
    ("openai-chat", "delta audio null", _chat_audio_chunk),
]


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("arguments", [{}, [], 1, None])
def test_gemini_arguments_delta_fragment_is_a_string_in_every_revision(
        revision: str, arguments: Any) -> None:
    # Only hosted call deltas carry an arguments object; a function call's fragment
    # stays a string under every revision's schema.
    assert errors("gemini-interactions", revision,
                  _gemini_delta("arguments_delta", arguments=arguments))
    assert errors("gemini-interactions", revision,
                  _gemini_delta("arguments_delta", arguments="{}")) == []


@pytest.mark.parametrize(("contract", "label", "build"), TODAYS_SHAPES,
                         ids=[f"{c}: {label}" for c, label, _ in TODAYS_SHAPES])
def test_todays_shape_validates_now_and_fails_the_pinned_schema(
        contract: str, label: str, build: Any) -> None:
    value = build()
    assert errors(contract, CURRENT, value) == []
    assert errors(contract, PINNED, value), f"{label}: the pinned schema accepts it"


def test_responses_arguments_done_keeps_a_present_name_valid() -> None:
    value = _responses_args_done()
    value["name"] = "lookup_order"
    assert errors("openai-responses", CURRENT, value) == []
    value["name"] = ""
    assert errors("openai-responses", CURRENT, value)  # present: still a non-empty name


@pytest.mark.parametrize("audio", [{"id": "a", "data": "", "expires_at": 0, "transcript": ""},
                                   "", 0, []])
def test_chat_audio_is_null_only_in_the_current_schema(audio: Any) -> None:
    value = _chat_audio_chunk()
    value["choices"][0]["delta"]["audio"] = audio
    assert errors("openai-chat", CURRENT, value)


@pytest.mark.parametrize("status", ["unknown_status", "QUEUED", "requires_continuation "])
def test_gemini_statuses_outside_the_sdk_union_fail_every_revision(status: str) -> None:
    for revision in REVISIONS:
        assert errors("gemini-interactions", revision,
                      _gemini_status("interaction.completed", status))


@pytest.mark.parametrize("step", ["mcp_server_tool_call", "mcp_server_tool_result",
                                  "tool_search", "processing"])
def test_gemini_steps_outside_the_v1_union_fail_every_revision(step: str) -> None:
    # mcp_server_tool_* are in the SDK's union but v1beta only (not this contract).
    for revision in REVISIONS:
        assert errors("gemini-interactions", revision, _gemini_step(step))


#: The schema files whose content (beyond $id and descriptions) differs at 2026-12-01.
#: Anthropic: none -- no field set the parser reads changed between anthropic 0.117.0
#: and 2.15.0 (fixtures/CHANGELOG.md), so there is no required-field difference and no
#: today-only shape to fail the pinned schema. Chat: only the chunk (the final message
#: level is open, its extension fields are kept).
CHANGED_FILES = {
    "openai-responses": {"response.function_call_arguments.done"},
    "anthropic-messages": set(),
    "gemini-interactions": {"event", "interaction_created", "interaction_status_update",
                            "interaction_completed", "step_start", "step_delta"},
    "openai-chat": {"chunk"},
}


@pytest.mark.parametrize("contract", CONTRACTS)
def test_schemas_differ_exactly_where_the_revisions_differ(contract: str) -> None:
    def stripped(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: stripped(v) for k, v in value.items()
                    if k not in ("$id", "description", "title")}
        if isinstance(value, list):
            return [stripped(v) for v in value]
        return value

    pinned, current = load_schemas(contract, PINNED), load_schemas(contract, CURRENT)
    changed = {n for n in pinned if stripped(pinned[n]) != stripped(current[n])}
    assert changed == CHANGED_FILES[contract]


# --- generated events ------------------------------------------------------------------


def _label_differences(contract: str, events: list[Any]) -> None:
    new = [e for e in events if errors(contract, PINNED, e)]
    event(f"{contract}: events failing the pinned schema: {min(len(new), 3)}")


def _is_todays_only(contract: str, value: Any) -> bool:
    """Independently of the schemas: is ``value`` a shape only 2026-12-01 has?"""
    if contract == "openai-responses":
        return value["type"] == "response.function_call_arguments.done" and "name" not in value
    if contract == "openai-chat":
        return isinstance(value, dict) and any(
            "audio" in c.get("delta", {}) for c in value.get("choices", []))
    if contract == "gemini-interactions":
        statuses = {"queued", "requires_continuation", "budget_exceeded", "idle"}
        steps = set(gi_gen.LATER_HOSTED_STEP_TYPES[CURRENT])
        status = value.get("status", value.get("interaction", {}).get("status"))
        kind = value.get("step", value.get("delta", {})).get("type")
        hosted_arguments = isinstance(value.get("delta", {}).get("arguments"), dict)
        return status in statuses or kind in steps or hosted_arguments
    return False


def _check_generated(contract: str, revision: str, events: list[Any]) -> None:
    assert_valid(contract, revision, events)
    if revision == PINNED:
        return
    _label_differences(contract, events)
    for value in events:
        if schema_name(contract, value) is None:
            continue
        # The pinned schema fails exactly the shapes only this revision has.
        assert bool(errors(contract, PINNED, value)) == _is_todays_only(contract, value), value


@pytest.mark.parametrize("revision", REVISIONS)
@given(data=st.data())
def test_generated_responses_events_validate_against_their_revision(
        revision: str, data: st.DataObject) -> None:
    _, events = data.draw(or_gen.valid_streams(revision=revision))
    _check_generated("openai-responses", revision, events)


@pytest.mark.parametrize("revision", REVISIONS)
@given(data=st.data())
def test_generated_gemini_events_validate_against_their_revision(
        revision: str, data: st.DataObject) -> None:
    rendered = data.draw(gi_gen.rendered_streams(revision=revision))
    _check_generated("gemini-interactions", revision, rendered.events)


@pytest.mark.parametrize("revision", REVISIONS)
@given(data=st.data())
def test_generated_chat_chunks_validate_against_their_revision(
        revision: str, data: st.DataObject) -> None:
    rendered = data.draw(oc_gen.rendered_streams(product=None, revision=revision))
    _check_generated("openai-chat", revision, rendered.frames)


@given(data=st.data())
def test_generated_anthropic_events_validate_against_every_revision(
        data: st.DataObject) -> None:
    # The Anthropic generator has no revision parameter; its two revisions share every
    # table (fixtures/CHANGELOG.md), so one stream is a stream of both.
    assert anthropic_messages.REVISIONS[PINNED] == anthropic_messages.REVISIONS[CURRENT]
    _, events = data.draw(am_gen.valid_streams())
    event(f"events={min(len(events), 20) // 5 * 5}+")
    for revision in REVISIONS:
        _check_generated("anthropic-messages", revision, events)


def test_strategy_revisions_are_the_schema_revisions() -> None:
    for module in (or_gen, gi_gen, oc_gen):
        assert tuple(module.REVISIONS) == REVISIONS, module.__name__
