"""Anthropic Messages against the official anthropic SDK (the `oracles` extra)."""

from __future__ import annotations

import pytest
from _oracles import assert_conforms, marks
from _revisions import each_revision
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts.anthropic_messages import parse_events
from pcfuzz.contracts.errors import StreamTruncated
from pcfuzz.contracts.wire import parse_sse
from pcfuzz.strategies import anthropic_messages as gen
from pcfuzz.strategies import sdk_oracles
from pcfuzz.strategies.sse import render_api_events

pytestmark = marks("anthropic")
CONTRACT = "anthropic-messages"


def ours(turn: object) -> list[tuple[str, str, object]]:
    return [(c.call_id, c.name, c.arguments) for c in turn.calls]  # type: ignore[attr-defined]


def theirs(acc: sdk_oracles.Accumulated) -> list[tuple[str | None, str | None, object]]:
    return [(c.call_id, c.name, c.arguments) for c in acc.calls]


def test_model_context_window_exceeded_is_a_known_stop_reason() -> None:
    delta = {"event": "message_delta", "data": {
        "type": "message_delta", "delta": {"stop_reason": "model_context_window_exceeded",
                                           "stop_sequence": None},
        "usage": {"output_tokens": 1}}}
    assert sdk_oracles.validate(CONTRACT, delta, "e") == []
    delta["data"]["delta"]["stop_reason"] = "paused"
    assert [f.kind for f in sdk_oracles.validate(CONTRACT, delta, "e")] == ["invalid"]


@each_revision
@given(st.data())
def test_generated_events_validate_against_the_sdk_types(revision: str,
                                                         data: st.DataObject) -> None:
    model, events = data.draw(gen.valid_streams(revision=revision))
    event(f"{revision}: stop_reason={model.stop_reason}")
    assert_conforms(CONTRACT, events)


@each_revision
@given(st.data())
def test_sdk_accumulate_event_yields_the_same_calls(revision: str, data: st.DataObject) -> None:
    # wire level: see test_sdk_client_over_mock_transport_agrees_with_our_wire_parser
    turn_model, events = data.draw(gen.valid_streams(stop_reason="tool_use",
                                                     require_client=True, revision=revision,
                                                     realism="wire"))
    turn = parse_events(events, revision=revision)
    acc = sdk_oracles.accumulate(CONTRACT, events)
    assert acc.terminal
    assert theirs(acc) == ours(turn)
    assert [c.call_id for c in turn.calls] == gen.expected_client_ids(turn_model)
    event(f"calls: {min(len(turn.calls), 3)}")


@each_revision
@given(st.data())
def test_sdk_returns_partial_calls_for_a_stream_without_message_stop(
        revision: str, data: st.DataObject) -> None:
    # Named difference: accumulate_event's snapshot holds every tool_use block seen,
    # its input parsed in partial mode, before message_stop; ours releases nothing.
    _, events = data.draw(gen.valid_streams(stop_reason="tool_use", require_client=True,
                                            revision=revision, realism="wire"))
    first_tool = next(i for i, e in enumerate(events) if e["data"]["type"] ==
                      "content_block_start" and e["data"]["content_block"]["type"] == "tool_use")
    stop = next(i for i, e in enumerate(events) if e["data"]["type"] == "message_stop")
    cut = data.draw(st.integers(first_tool + 1, stop))
    with pytest.raises(StreamTruncated):
        parse_events(events[:cut], revision=revision)
    acc = sdk_oracles.accumulate(CONTRACT, events[:cut])
    assert not acc.terminal and acc.calls


@each_revision
@given(st.data())
def test_sdk_client_over_mock_transport_agrees_with_our_wire_parser(revision: str,
                                                                    data: st.DataObject) -> None:
    # Streams of the wire level: every event as the SDK types declare it. At the
    # hostile level a server tool result's content is arbitrary JSON, which the
    # client's own accumulator cannot serialize back (a random-seed run drew
    # web_fetch_tool_result content [{"\x00": null}]: pydantic ValueError), and that
    # says nothing about the calls both sides release.
    _, events = data.draw(gen.valid_streams(stop_reason="tool_use", require_client=True,
                                            revision=revision, realism="wire"))
    body = render_api_events(CONTRACT, events)
    assert theirs(sdk_oracles.via_client(CONTRACT, body)) == ours(
        parse_sse(CONTRACT, body, revision=revision))
