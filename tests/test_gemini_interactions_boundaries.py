"""Two seed rules at the edge of the Gemini Interactions contract.

* Builders add no fields (seed 001, line 257, "protected audit not added by a
  constructor"): the exact key set of every body, as the Responses and Messages
  builders have it.
* GenerateContent is not an Interactions stream (line 235): "Do not feed
  GenerateContent to an Interactions steps/status/event_id parser." A GenerateContent
  chunk or response is rejected with a message that says so.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _gemini_interactions import (
    RESULTS,
    TOOLS,
    USER_INPUT,
    fixture_events,
    stateful,
    stateless,
)
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts.errors import ProtocolViolation
from pcfuzz.contracts.gemini_interactions import (
    REVISION,
    REVISIONS,
    GeminiInteractionsStream,
    build_gemini_interactions_continuation,
    parse_events,
    parse_interaction,
)
from pcfuzz.contracts.results import ModelVisibleToolResult

TABLES = REVISIONS[REVISION]
RESULT_KEYS = {"type", "call_id", "name", "result"}


def _call_only_turn() -> Any:
    # The fixture without its streamed thought step: a stateless continuation can
    # rebuild function-call steps only.
    return parse_events([e for e in fixture_events() if e.get("index") != 0])


# ------------------------------------------------------------ builders add no fields


def test_gemini_builders_add_no_fields_beyond_the_request_body() -> None:
    turn = parse_events(fixture_events())
    body = stateful(turn, system_instruction=None, generation_config=None)
    assert set(body) == {"model", "tools", "previous_interaction_id", "store", "input"}
    assert [set(step) for step in body["input"]] == [RESULT_KEYS] * len(RESULTS)
    plain = stateless(_call_only_turn(), system_instruction=None,
                      prior_input_steps=[USER_INPUT])
    assert set(plain) == {"model", "tools", "store", "input"}
    assert plain["input"][0] == USER_INPUT
    # Replayed function-call steps are the turn's own steps, nothing added.
    calls = [s for s in plain["input"] if s["type"] == "function_call"]
    assert all(set(s) <= {"type", "id", "name", "arguments", "signature"} for s in calls)
    assert [set(s) for s in plain["input"] if s["type"] == "function_result"] == [
        RESULT_KEYS] * len(RESULTS)


def test_gemini_error_result_adds_only_is_error() -> None:
    turn = parse_events(fixture_events())
    failing = [ModelVisibleToolResult(RESULTS[0].call_id, "timeout", is_error=True),
               RESULTS[1]]
    body = build_gemini_interactions_continuation(
        turn, failing, model="m", tools=TOOLS, system_instruction=None,
        generation_config=None, previous_interaction_was_stored=True, store=True)
    assert [set(s) for s in body["input"]] == [RESULT_KEYS | {"is_error"}, RESULT_KEYS]


_OPTIONAL = {
    "system_instruction": "Be brief.",
    "generation_config": {"temperature": 0.0},
    "response_format": {"type": "text", "mime_type": "application/json",
                        "schema": {"type": "object"}},
}


@given(
    optional=st.sets(st.sampled_from(sorted(_OPTIONAL))),
    controls=st.dictionaries(
        st.sampled_from(["service_tier", "background", "labels", "x_note"]),
        st.one_of(st.integers(), st.text(max_size=4)), max_size=3),
    is_stateful=st.booleans(),
)
def test_gemini_body_keys_are_exactly_the_request_fields_given(
    optional: set[str], controls: dict[str, Any], is_stateful: bool
) -> None:
    # Any combination of optional arguments and request controls: the body holds the
    # builder's own fields, the optional ones given, the controls, and nothing else.
    event(f"{'stateful' if is_stateful else 'stateless'}, {len(optional)} optional")
    kwargs: dict[str, Any] = {"system_instruction": None, "generation_config": None,
                              "request_controls": copy.deepcopy(controls)}
    kwargs.update({name: copy.deepcopy(_OPTIONAL[name]) for name in optional})
    if is_stateful:
        body = stateful(parse_events(fixture_events()), **kwargs)
        own = {"model", "tools", "previous_interaction_id", "store", "input"}
    else:
        body = stateless(_call_only_turn(), prior_input_steps=[USER_INPUT], **kwargs)
        own = {"model", "tools", "store", "input"}
    assert set(body) == own | optional | set(controls)
    for name in optional:
        assert body[name] == _OPTIONAL[name]
    results = [s for s in body["input"] if s["type"] == "function_result"]
    assert [set(s) for s in results] == [RESULT_KEYS] * len(RESULTS)


# ------------------------------------------------------ GenerateContent is not Interactions


#: One streamed GenerateContent chunk (REST shape): candidates -> content.parts.
GC_CHUNK = {
    "candidates": [{
        "content": {"role": "model", "parts": [
            {"functionCall": {"name": "lookup_order", "args": {"order_ref": "A-100"}},
             "thoughtSignature": "c2ln"}]},
        "finishReason": "STOP", "index": 0, "safetyRatings": []}],
    "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3, "totalTokenCount": 8},
    "modelVersion": "fixture-model",
    "responseId": "r-1",
}


def test_generate_content_stream_is_rejected_as_generate_content() -> None:
    # Before: "event_type must be a string, got None" -- true, but it did not say that
    # a whole other API family was fed in.
    with pytest.raises(ProtocolViolation, match="GenerateContent") as info:
        parse_events([GC_CHUNK, GC_CHUNK])
    assert "not an Interactions event" in info.value.message
    assert info.value.where == "events[0]"
    stream = GeminiInteractionsStream()
    with pytest.raises(ProtocolViolation, match="GenerateContent"):
        stream.feed({"promptFeedback": {"blockReason": "SAFETY"}})
    assert stream.poisoned


def test_generate_content_response_is_not_an_interaction_snapshot() -> None:
    for origin in ("create", "get"):
        with pytest.raises(ProtocolViolation, match="GenerateContent"):
            parse_interaction(GC_CHUNK, origin=origin)


def test_an_event_without_event_type_and_without_generate_content_fields_is_not_named_so() -> None:
    with pytest.raises(ProtocolViolation) as info:
        parse_events([{"type": "interaction.created"}])
    assert "GenerateContent" not in info.value.message


@given(
    fields=st.sets(st.sampled_from(sorted(TABLES.generate_content_fields)), min_size=1),
    position=st.integers(0, 3),
)
def test_any_generate_content_chunk_anywhere_in_a_stream_is_named(
    fields: set[str], position: int
) -> None:
    # Any GenerateContent field set, at any point of an otherwise valid Interactions
    # stream (first event or after the stream opened), is named as GenerateContent.
    events = fixture_events()
    position = min(position, len(events) - 1)
    chunk = {name: GC_CHUNK.get(name, {}) for name in fields}
    events.insert(position, chunk)
    event(f"chunk at {'start' if position == 0 else 'middle'}; {len(fields)} field(s)")
    with pytest.raises(ProtocolViolation, match="GenerateContent") as info:
        parse_events(events)
    assert info.value.where == f"events[{position}]"
