"""OpenAI Responses against the official openai SDK (the `oracles` extra)."""

from __future__ import annotations

import random

import pytest
from _oracles import assert_conforms, marks
from _revisions import each_revision
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts.errors import StreamTruncated
from pcfuzz.contracts.openai_responses import parse_events
from pcfuzz.contracts.wire import parse_sse
from pcfuzz.strategies import openai_responses as gen
from pcfuzz.strategies import sdk_oracles
from pcfuzz.strategies.sse import render_api_events

pytestmark = marks("openai")
CONTRACT = "openai-responses"


def ours(turn: object) -> list[tuple[str, str, object]]:
    return [(c.call_id, c.name, c.arguments) for c in turn.calls]  # type: ignore[attr-defined]


def theirs(acc: sdk_oracles.Accumulated) -> list[tuple[str | None, str | None, object]]:
    return [(c.call_id, c.name, c.arguments) for c in acc.calls]


def test_arguments_done_name_is_the_named_drift() -> None:
    # The pinned revision renders `name` on arguments.done; today's type lacks it.
    model = gen.random_model(random.Random(3))
    model.items[0] = gen.ItemModel("function_call", "fc_1", call_id="call_1", name="f",
                                   arguments={}, fragments=["{}"])
    events = gen.render(model, random.Random(3))
    done = next(e for e in events if e["type"] == gen.ARGS_DONE)
    findings = sdk_oracles.validate(CONTRACT, done, "done")
    assert [f.detail for f in findings] == ["ResponseFunctionCallArgumentsDoneEvent.name"]
    assert sdk_oracles.validate(CONTRACT, {k: v for k, v in done.items() if k != "name"},
                                "done") == []


def test_strict_validation_rejects_an_unknown_status_and_type() -> None:
    events = gen.render(gen.random_model(random.Random(5)), random.Random(5))
    added = next(e for e in events if e["type"] == gen.ITEM_ADDED)
    added["item"]["status"] = "paused"
    assert [f.kind for f in sdk_oracles.validate(CONTRACT, added, "e")] == ["invalid"]
    assert [f.kind for f in sdk_oracles.validate(
        CONTRACT, {"type": "response.tool_call.delta"}, "e")] == ["no_type"]


@each_revision
@given(st.data())
def test_generated_events_validate_against_the_sdk_types(revision: str,
                                                         data: st.DataObject) -> None:
    # 2026-07-21 renders `name` on arguments.done (the named drift); 2026-12-01 renders
    # the current type's field set, with nothing left to explain there
    _, events = data.draw(gen.valid_streams(revision=revision))
    seen = assert_conforms(CONTRACT, events)
    if not gen.ARGS_DONE_HAS_NAME[revision]:
        assert "arguments-done-name" not in seen


@each_revision
@given(st.data())
def test_sdk_stream_state_accumulates_the_same_calls(revision: str, data: st.DataObject) -> None:
    model, events = data.draw(gen.valid_streams(revision=revision))
    turn = parse_events(events, revision=revision)
    acc = sdk_oracles.accumulate(CONTRACT, events)
    assert acc.terminal
    assert theirs(acc) == ours(turn)
    assert ours(turn) == [(c, n, a) for c, n, a, _, _ in model.expected_calls()]
    event(f"calls: {min(len(turn.calls), 3)}")


@each_revision
@given(st.data())
def test_sdk_returns_partial_calls_for_a_stream_without_terminal(revision: str,
                                                                 data: st.DataObject) -> None:
    # Named difference: the accumulator's snapshot holds the calls seen so far when
    # the stream never reached response.completed; our parser releases nothing.
    _, events = data.draw(gen.valid_streams(min_calls=1, revision=revision))
    first_done = next(i for i, e in enumerate(events) if e["type"] == gen.ITEM_DONE
                      and e["item"]["type"] == "function_call")
    cut = data.draw(st.integers(first_done + 1, len(events) - 1))
    with pytest.raises(StreamTruncated):
        parse_events(events[:cut], revision=revision)
    acc = sdk_oracles.accumulate(CONTRACT, events[:cut])
    assert not acc.terminal
    assert acc.calls, "the SDK snapshot holds the calls of the cut stream"


@each_revision
@given(st.data())
def test_sdk_client_over_mock_transport_agrees_with_our_wire_parser(revision: str,
                                                                    data: st.DataObject) -> None:
    _, events = data.draw(gen.valid_streams(min_calls=1, revision=revision))
    body = render_api_events(CONTRACT, events)
    assert theirs(sdk_oracles.via_client(CONTRACT, body)) == ours(
        parse_sse(CONTRACT, body, revision=revision))
