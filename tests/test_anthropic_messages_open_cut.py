"""Anthropic ``max_tokens`` cut with the tool block still open (seed 001, line 190):
"Calls with invalid JSON or max_tokens truncation enter a separate recovery_calls
collection."

A public recorded stream ends a ``max_tokens`` turn with ``message_delta`` while the
``tool_use`` block is still open: no ``content_block_stop``, the input JSON cut
mid-string. An open last block closed by a truncating ``message_delta`` is such a
call: a recovery call with a forced ``is_error`` result, never executable. Anything
else that leaves a block open stays a ``ProtocolViolation``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _anthropic_messages import HISTORY, TOOLS, build, ev, start, text_block, tool_block
from _revisions import each_revision
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts.anthropic_messages import (
    FORCED_RECOVERY_PREFIX,
    INVALID_JSON_KEY,
    REVISION,
    REVISIONS,
    AnthropicMessagesStream,
    build_anthropic_messages_continuation,
    parse_events,
)
from pcfuzz.contracts.errors import (
    ContinuationError,
    ProtocolViolation,
    ResultBindingError,
    StreamTruncated,
)
from pcfuzz.contracts.results import ModelVisibleToolResult
from pcfuzz.contracts.wire import parse_anthropic_messages_sse
from pcfuzz.strategies.sse import render_api_events

TABLES = REVISIONS[REVISION]
CUT = '{"order_ref": "A-10'  # the recorded shape: cut inside a string


def open_tool(index: int, call_id: str, *fragments: str,
              kind: str = "tool_use") -> list[dict[str, Any]]:
    """A tool block that never gets its content_block_stop."""
    return tool_block(index, call_id, "lookup_order", *fragments, kind=kind)[:-1]


def cut_end(stop_reason: Any = "max_tokens") -> list[dict[str, Any]]:
    return [ev("message_delta", delta={"stop_reason": stop_reason, "stop_sequence": None},
               usage={"output_tokens": 64}),
            ev("message_stop")]


def recorded_shape() -> list[dict[str, Any]]:
    return [start(), *text_block(0, "Let me look that up."),
            *open_tool(1, "call-cut", '{"order_ref": ', '"A-10'), *cut_end()]


def test_max_tokens_cut_with_the_tool_block_still_open_is_a_recovery_call() -> None:
    # Before: "message_delta not allowed in state 'block'" -- nothing released (right),
    # but the turn could not be continued either.
    turn = parse_events(recorded_shape())
    assert turn.stop_reason == "max_tokens"
    assert turn.calls == ()
    (call,) = turn.recovery_calls
    assert (call.call_id, call.index, call.arguments, call.partial_json) == (
        "call-cut", 1, None, CUT)
    assert "before content_block_stop" in call.reason and "never executed" in call.reason
    # The block is replayed with its cut input wrapped, never repaired.
    assert turn.blocks[1]["input"] == {INVALID_JSON_KEY: CUT}
    body = build(turn, [])
    (result,) = body["messages"][-1]["content"]
    assert result["tool_use_id"] == "call-cut" and result["is_error"] is True
    assert result["content"].startswith(FORCED_RECOVERY_PREFIX)
    assert body["messages"][-2]["content"][1]["input"] == {INVALID_JSON_KEY: CUT}


#: The recorded shape as raw SSE bytes (ids and model synthetic): a ping, the tool_use
#: block opened and fed, then message_delta(max_tokens) and message_stop -- no
#: content_block_stop for index 0.
RECORDED_SSE = (
    b'event: message_start\n'
    b'data: {"type":"message_start","message":{"id":"m-rec","type":"message",'
    b'"role":"assistant","content":[],"model":"fixture-model","stop_reason":null,'
    b'"stop_sequence":null,"usage":{"input_tokens":412,"output_tokens":2}}}\n\n'
    b'event: content_block_start\n'
    b'data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
    b'"id":"call-rec","name":"make_file","input":{}}}\n\n'
    b'event: ping\ndata: {"type": "ping"}\n\n'
    b'event: content_block_delta\n'
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
    b'"partial_json":""}}\n\n'
    b'event: content_block_delta\n'
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
    b'"partial_json":"{\\"filename\\": \\"poem.txt\\", \\"lines\\": [\\"Roses"}}\n\n'
    b'event: message_delta\n'
    b'data: {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},'
    b'"usage":{"output_tokens":64}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)


def test_the_recorded_stream_shape_as_sse_bytes_is_a_recovery_call() -> None:
    assert b"content_block_stop" not in RECORDED_SSE
    turn = parse_anthropic_messages_sse(RECORDED_SSE)
    assert turn.calls == ()
    (call,) = turn.recovery_calls
    assert call.call_id == "call-rec"
    assert call.partial_json == '{"filename": "poem.txt", "lines": ["Roses'
    # The same turn from the projected events (the wire adapter adds nothing).
    rendered = render_api_events("anthropic-messages", recorded_shape())
    assert rendered.count(b"event: content_block_stop\n") == 1  # the text block's only
    assert parse_anthropic_messages_sse(rendered).digest == parse_events(recorded_shape()).digest


def test_complete_siblings_of_an_open_cut_block_go_to_recovery_too() -> None:
    events = [start(), *tool_block(0, "call-ok", "lookup_order", '{"order_ref": "B"}'),
              *open_tool(1, "call-cut", CUT), *cut_end()]
    turn = parse_events(events)
    assert turn.calls == ()
    assert [(c.call_id, c.arguments) for c in turn.recovery_calls] == [
        ("call-ok", {"order_ref": "B"}), ("call-cut", None)]
    with pytest.raises(ResultBindingError, match="recovery call"):
        build(turn, [ModelVisibleToolResult("call-ok", "ran anyway")])


def test_a_cut_input_that_happens_to_parse_is_still_never_executable() -> None:
    turn = parse_events([start(), *open_tool(0, "call-cut", '{"order_ref": "A"}'), *cut_end()])
    assert turn.calls == ()
    (call,) = turn.recovery_calls
    assert call.arguments is None and call.partial_json == '{"order_ref": "A"}'
    assert turn.blocks[0]["input"] == {"order_ref": "A"}


@pytest.mark.parametrize("stop_reason", ["tool_use", "end_turn", "stop_sequence", None,
                                         "pause_turn", "future_reason"])
def test_only_a_truncation_may_leave_a_block_open(stop_reason: Any) -> None:
    with pytest.raises(ProtocolViolation, match="still open"):
        parse_events([start(), *open_tool(0, "call-cut", CUT), *cut_end(stop_reason)])


def test_model_context_window_exceeded_may_cut_an_open_block_too() -> None:
    turn = parse_events([start(), *open_tool(0, "call-cut", CUT),
                         *cut_end("model_context_window_exceeded")])
    assert turn.calls == () and turn.recovery_calls[0].partial_json == CUT


@pytest.mark.parametrize("events", [
    # An open text block, an open server tool: not the recorded shape; fail closed.
    [start(), *text_block(0, "cut")[:-1], *cut_end()],
    [start(), *open_tool(0, "srv-1", CUT, kind="server_tool_use"), *cut_end()],
], ids=["text", "server_tool_use"])
def test_only_a_client_tool_block_may_be_cut_open(events: list[dict[str, Any]]) -> None:
    assert TABLES.truncation_closes_open_roles == {"client_tool_use"}
    with pytest.raises(ProtocolViolation, match="still open"):
        parse_events(events)


def test_an_open_cut_block_gets_no_more_deltas_and_still_needs_message_stop() -> None:
    events = [start(), *open_tool(0, "call-cut", CUT), cut_end()[0]]
    with pytest.raises(ProtocolViolation):
        parse_events([*events, ev("content_block_delta", index=0, delta={
            "type": "input_json_delta", "partial_json": '0"}'})])
    with pytest.raises(ProtocolViolation):
        parse_events([*events, ev("content_block_stop", index=0)])
    with pytest.raises(StreamTruncated):
        parse_events(events)


_ARGUMENTS = st.dictionaries(
    st.text(alphabet="abcxyz_", min_size=1, max_size=6),
    st.one_of(st.integers(-999, 999), st.text(max_size=8), st.booleans(), st.none()),
    max_size=4)


@each_revision
@given(arguments=_ARGUMENTS, data=st.data(), stop=st.sampled_from(
    sorted(TABLES.truncation_stop_reasons) + ["tool_use", "end_turn", "refusal"]),
    eager=st.booleans())
def test_any_cut_of_an_open_tool_input_is_a_recovery_call_only_at_a_truncation(
    revision: str, arguments: dict[str, Any], data: st.DataObject, stop: str, eager: bool
) -> None:
    text = json.dumps(arguments)
    cut = data.draw(st.integers(0, len(text)), label="cut")
    prefix = text[:cut]
    pieces = data.draw(st.integers(1, 3), label="pieces")
    step = max(1, len(prefix) // pieces)
    fragments = [prefix[i:i + step] for i in range(0, len(prefix), step)]
    truncation = stop in TABLES.truncation_stop_reasons
    event(f"cut {'whole' if cut == len(text) else 'empty' if cut == 0 else 'inside'}; "
          f"{'truncation' if truncation else 'other stop reason'}")
    events = [start(), *open_tool(0, "call-cut", *fragments), *cut_end(stop)]
    stream = AnthropicMessagesStream(eager_input_streaming=eager, revision=revision)
    if not truncation:
        with pytest.raises(ProtocolViolation, match="still open"):
            for item in events:
                stream.feed(item)
        assert stream.poisoned
        return
    for item in events:
        stream.feed(item)
    turn = stream.close()
    assert turn.calls == ()
    (call,) = turn.recovery_calls
    assert call.arguments is None
    assert call.partial_json == (prefix or None)
    if stop not in TABLES.continuable_stop_reasons:
        # e.g. model_context_window_exceeded: recovery, but no tool-result turn at all.
        with pytest.raises(ContinuationError, match="no tool-result continuation"):
            build_anthropic_messages_continuation(
                turn, [], history=HISTORY, model="m", max_tokens=64, tools=TOOLS)
        return
    body = build_anthropic_messages_continuation(
        turn, [], history=HISTORY, model="m", max_tokens=64, tools=TOOLS)
    assert [(r["tool_use_id"], r["is_error"]) for r in body["messages"][-1]["content"]] == [
        ("call-cut", True)]


@each_revision
def test_dropping_the_last_stop_before_a_truncating_delta_is_the_cut_open_block(
        revision: str) -> None:
    # The nightly property run's finding (a harness bug, not a parser one): the
    # dropped_stop mutator removed the last block's content_block_stop ahead of a
    # max_tokens message_delta and expected a ProtocolViolation. The seed makes that
    # stream the cut-open case: nothing released, one recovery call, never executed.
    # The mutator now keeps its open block an error with a non-truncating stop reason.
    events = [start(), *tool_block(0, "toolu_1", "A", "{}")[:-1],
              ev("message_delta", delta={"stop_reason": "max_tokens", "stop_sequence": None},
                 usage={"output_tokens": 1}),
              ev("message_stop")]
    turn = parse_events(events, revision=revision)
    assert turn.calls == () and [r.call_id for r in turn.recovery_calls] == ["toolu_1"]
    for stop_reason in ("end_turn", "tool_use"):
        events[-2]["data"]["delta"]["stop_reason"] = stop_reason
        with pytest.raises(ProtocolViolation):
            parse_events(events, revision=revision)
