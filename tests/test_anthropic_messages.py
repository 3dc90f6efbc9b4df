"""Red-team example tests for the Anthropic Messages contract (one rule each)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from _anthropic_messages import (
    FIXTURE,
    HISTORY,
    ROOT,
    TOOLS,
    build,
    ev,
    finish,
    results_for,
    start,
    text_block,
    thinking_block,
    tool_block,
    two_call_stream,
)
from _fuzz import load_fuzz_target

from pcfuzz.contracts._stream import StreamLimits
from pcfuzz.contracts.anthropic_messages import (
    INVALID_JSON_KEY,
    REVISIONS,
    AnthropicMessagesStream,
    build_anthropic_messages_continuation,
    parse_events,
)
from pcfuzz.contracts.errors import (
    ContinuationError,
    ContractError,
    InvalidArgument,
    LimitExceeded,
    ProtocolViolation,
    ProviderError,
    ResultBindingError,
    SnapshotMutated,
    StreamTruncated,
    StrictJSONError,
    UnsupportedProviderState,
)
from pcfuzz.contracts.results import ModelVisibleToolResult


def test_fixture_parses_to_two_executable_calls_in_block_order() -> None:
    from pcfuzz.contracts.fixtures import load_fixture

    fixture = load_fixture(FIXTURE)
    assert fixture.contract == "anthropic-messages"
    assert fixture.projection_layer == "wire-sse-envelope-projection"
    assert (fixture.sdk_package, fixture.sdk_version) == ("anthropic", "0.117.0")
    names = [e["event"] for e in fixture.events]
    assert "ping" in names and names[-1] == "message_stop"
    turn = parse_events(fixture.events)
    assert [c.call_id for c in turn.calls] == ["tool-use-A", "tool-use-B"]
    assert [c.arguments for c in turn.calls] == [{"order_ref": "ORD-1"}, {"order_ref": "ORD-2"}]
    assert [b["type"] for b in turn.blocks] == ["thinking", "text", "tool_use", "tool_use"]
    assert turn.blocks[0]["signature"]
    assert turn.recovery_calls == ()


# --------------------------------------------------------------------------- envelope


def test_ping_may_appear_anywhere() -> None:
    events = two_call_stream()
    with_pings: list[dict[str, Any]] = [ev("ping")]
    for e in events:
        with_pings += [e, ev("ping")]
    turn = parse_events(with_pings)
    assert turn.digest == parse_events(events).digest
    assert len(turn.calls) == 2


@pytest.mark.parametrize("layer", ["event", "data"])
def test_event_name_must_equal_data_type(layer: str) -> None:
    events = two_call_stream()
    target = events[1]
    if layer == "event":
        target["event"] = "content_block_delta"
    else:
        target["data"]["type"] = "content_block_delta"
    with pytest.raises(ProtocolViolation, match="drift"):
        parse_events(events)


@pytest.mark.parametrize(
    "bad",
    [
        [],
        "message_start",
        {"event": "ping"},
        {"data": {"type": "ping"}},
        {"event": "ping", "data": {"type": "ping"}, "id": "7"},
        {"event": "ping", "data": []},
        {"event": 1, "data": {"type": 1}},
        {"event": "ping", "data": {}},
    ],
)
def test_envelope_shape_is_strict(bad: Any) -> None:
    stream = AnthropicMessagesStream()
    with pytest.raises(ProtocolViolation, match="event 0"):
        stream.feed(bad)


def test_unknown_event_type_fails_closed() -> None:
    events = two_call_stream()
    events.insert(3, ev("content_block_checkpoint", index=0))
    with pytest.raises(UnsupportedProviderState, match="unknown event type"):
        parse_events(events)


def test_error_event_after_http_success_releases_nothing() -> None:
    events = two_call_stream()
    events.insert(-1, ev("error", error={"type": "overloaded_error", "message": "Overloaded"}))
    with pytest.raises(ProviderError, match="overloaded_error"):
        parse_events(events)


def test_error_event_after_message_stop_still_raises() -> None:
    events = [*two_call_stream(), ev("error", error={"type": "api_error", "message": "x"})]
    with pytest.raises(ProviderError):
        parse_events(events)


def test_malformed_error_event_is_still_a_provider_error() -> None:
    with pytest.raises(ProviderError, match="malformed"):
        parse_events([start(), ev("error", error="boom")])


def test_stream_is_poisoned_after_an_error() -> None:
    stream = AnthropicMessagesStream()
    stream.feed(start())
    with pytest.raises(ProtocolViolation):
        stream.feed(ev("content_block_stop", index=0))
    with pytest.raises(ProtocolViolation, match="unusable"):
        stream.feed(ev("ping"))
    with pytest.raises(ProtocolViolation, match="unusable"):
        stream.close()


def test_feed_after_close_is_rejected() -> None:
    stream = AnthropicMessagesStream()
    for e in two_call_stream():
        stream.feed(e)
    stream.close()
    with pytest.raises(ProtocolViolation, match="closed"):
        stream.feed(ev("ping"))


def test_parser_does_not_mutate_input_events() -> None:
    events = two_call_stream()
    before = copy.deepcopy(events)
    turn = parse_events(events)
    turn.blocks[0]["text"] = "changed"
    assert events == before


# --------------------------------------------------------------------------- terminal gate


def test_missing_message_stop_is_truncated() -> None:
    with pytest.raises(StreamTruncated, match="before message_stop"):
        parse_events(two_call_stream()[:-1])


def test_call_is_not_executable_before_message_stop_even_with_tool_use() -> None:
    stream = AnthropicMessagesStream()
    for e in two_call_stream()[:-1]:
        stream.feed(e)
    assert stream.state == "message_delta"
    with pytest.raises(StreamTruncated):
        stream.close()


def test_close_inside_an_open_block_is_truncated() -> None:
    events = two_call_stream()
    with pytest.raises(StreamTruncated, match="still open"):
        parse_events(events[:6])


def test_message_stop_requires_message_delta() -> None:
    with pytest.raises(ProtocolViolation, match="message_stop"):
        parse_events([start(), *text_block(0, "hi"), ev("message_stop")])


@pytest.mark.parametrize(
    "stop_reason",
    [
        "end_turn",
        "max_tokens",
        "stop_sequence",
        "pause_turn",
        "refusal",
        "model_context_window_exceeded",
        "some_future_reason",
    ],
)
def test_only_tool_use_stop_reason_releases_calls(stop_reason: str) -> None:
    turn = parse_events(two_call_stream(stop_reason))
    assert turn.calls == ()
    assert [c.call_id for c in turn.recovery_calls] == ["call-A", "call-B"]
    assert turn.stop_reason == stop_reason
    assert turn.stop_reason_known == (stop_reason != "some_future_reason")


def test_message_stop_without_stop_reason_is_rejected() -> None:
    events = [
        start(),
        ev("message_delta", delta={"stop_reason": None, "stop_sequence": None},
           usage={"output_tokens": 3}),
        ev("message_stop"),
    ]
    with pytest.raises(ProtocolViolation, match="without a stop_reason"):
        parse_events(events)


def test_several_message_deltas_are_allowed_and_stop_reason_may_not_change() -> None:
    events = two_call_stream()
    extra = ev("message_delta", delta={"stop_reason": "tool_use", "stop_sequence": None},
               usage={"output_tokens": 25})
    ok = [*events[:-1], extra, events[-1]]
    assert len(parse_events(ok).calls) == 2
    swapped = copy.deepcopy(extra)
    swapped["data"]["delta"]["stop_reason"] = "end_turn"
    with pytest.raises(ProtocolViolation, match="stop_reason changed"):
        parse_events([*events[:-1], swapped, events[-1]])


def test_content_block_after_message_delta_is_rejected() -> None:
    events = [start(), *finish()[:1], *text_block(0, "late"), ev("message_stop")]
    with pytest.raises(ProtocolViolation, match="not allowed"):
        parse_events(events)


# --------------------------------------------------------------------------- arguments


def test_zero_argument_tool_completes_from_initial_input() -> None:
    events = [start(), *tool_block(0, "c0", "now"), *finish()]
    turn = parse_events(events)
    assert turn.calls[0].arguments == {}


def test_empty_fragment_is_valid() -> None:
    events = [start(), *tool_block(0, "c0", "f", "", '{"a"', "", ": 1}", ""), *finish()]
    assert parse_events(events).calls[0].arguments == {"a": 1}


def test_only_empty_fragments_keep_the_initial_input() -> None:
    events = [start(), *tool_block(0, "c0", "f", "", ""), *finish()]
    assert parse_events(events).calls[0].arguments == {}


def test_fragments_split_inside_escapes_concatenate() -> None:
    text = json.dumps({"k": "é😀\"\\"}, ensure_ascii=True)
    # Split inside \u00e9, between the two halves of the surrogate pair escape, and in \".
    parts = [text[:9], text[9:13], text[13:22], text[22:25], text[25:]]
    assert "".join(parts) == text
    turn = parse_events([start(), *tool_block(0, "c0", "f", *parts), *finish()])
    assert turn.calls[0].arguments == {"k": "é😀\"\\"}


def test_input_is_parsed_only_at_content_block_stop() -> None:
    stream = AnthropicMessagesStream()
    stream.feed(start())
    for e in tool_block(0, "c0", "f", '{"a": [1,', " 2]}")[:-1]:
        stream.feed(e)  # '{"a": [1,' is not JSON yet: no error before stop
    stream.feed(ev("content_block_stop", index=0))
    for e in finish():
        stream.feed(e)
    assert stream.close().calls[0].arguments == {"a": [1, 2]}


@pytest.mark.parametrize(
    "text,error",
    [
        ('{"a": 1', StrictJSONError),
        ('{"a": 1, "a": 2}', StrictJSONError),
        ('{"a": NaN}', StrictJSONError),
        ("[1, 2]", ProtocolViolation),
        ('"text"', ProtocolViolation),
    ],
)
def test_invalid_input_without_eager_streaming_is_rejected(text: str, error: type) -> None:
    with pytest.raises(error, match="block 0"):
        parse_events([start(), *tool_block(0, "c0", "f", text), *finish()])


def test_start_input_and_input_deltas_cannot_both_carry_arguments() -> None:
    events = [start(), *tool_block(0, "c0", "f", '{"a": 1}'), *finish()]
    events[1]["data"]["content_block"]["input"] = {"b": 2}
    with pytest.raises(ProtocolViolation, match="both"):
        parse_events(events)


def test_duplicate_tool_use_id_is_rejected() -> None:
    events = [start(), *tool_block(0, "same", "f"), *tool_block(1, "same", "g"), *finish()]
    with pytest.raises(ProtocolViolation, match="duplicate tool use id"):
        parse_events(events)


def test_ids_are_opaque_text() -> None:
    events = [start(), *tool_block(0, "🔑 no prefix", "f", "{}"), *finish()]
    assert parse_events(events).calls[0].tool_use_id == "🔑 no prefix"


# --------------------------------------------------------------------------- eager / recovery


def eager_stream(stop_reason: str = "max_tokens") -> list[dict[str, Any]]:
    return [
        start(),
        *tool_block(0, "call-ok", "lookup_order", '{"order_ref": "A"}'),
        *tool_block(1, "call-cut", "make_file", '{"filename": "poem.txt", "lines": ["Roses'),
        *finish(stop_reason),
    ]


def test_eager_incomplete_json_becomes_a_recovery_call() -> None:
    turn = parse_events(eager_stream(), eager_input_streaming=True)
    assert turn.calls == ()
    cut = turn.recovery_calls[1]
    assert cut.call_id == "call-cut" and cut.arguments is None
    assert cut.partial_json == '{"filename": "poem.txt", "lines": ["Roses'
    assert "not valid JSON" in cut.reason
    assert turn.blocks[1]["input"] == {INVALID_JSON_KEY: cut.partial_json}


def test_truncated_turn_sends_complete_siblings_to_recovery() -> None:
    turn = parse_events(eager_stream(), eager_input_streaming=True)
    sibling = turn.recovery_calls[0]
    assert sibling.call_id == "call-ok"
    assert sibling.arguments == {"order_ref": "A"}  # complete, yet never executable


def test_max_tokens_turn_with_only_complete_calls_releases_nothing() -> None:
    turn = parse_events(two_call_stream("max_tokens"))
    assert turn.calls == ()
    assert all("truncated" in c.reason for c in turn.recovery_calls)


def test_one_incomplete_eager_input_blocks_the_whole_tool_use_turn() -> None:
    turn = parse_events(eager_stream("tool_use"), eager_input_streaming=True)
    assert turn.calls == ()
    assert "sibling" in turn.recovery_calls[0].reason


def test_eager_streaming_is_declared_per_tool_name() -> None:
    # Under stop_reason tool_use only the eager declaration excuses incomplete input
    # (under max_tokens the documented cut of the last block is excused anyway).
    ok = parse_events(eager_stream("tool_use"), eager_input_streaming={"make_file"})
    assert len(ok.recovery_calls) == 2 and ok.calls == ()
    with pytest.raises(StrictJSONError):
        parse_events(eager_stream("tool_use"), eager_input_streaming={"lookup_order"})


def test_eager_streaming_does_not_relax_server_tool_input() -> None:
    events = [start(), *tool_block(0, "s0", "web_search", '{"query": "x', kind="server_tool_use"),
              *finish("end_turn")]
    with pytest.raises(StrictJSONError):
        parse_events(events, eager_input_streaming=True)


@pytest.mark.parametrize("bad", ["make_file", b"x", 3, [1]])
def test_eager_option_must_be_bool_or_tool_names(bad: Any) -> None:
    with pytest.raises(ProtocolViolation):
        AnthropicMessagesStream(eager_input_streaming=bad)


# --------------------------------------------------------------------------- block lifecycle


def test_block_overlap_is_rejected() -> None:
    events = [start(), text_block(0, "a")[0], *text_block(1, "b"), *finish("end_turn")]
    with pytest.raises(ProtocolViolation, match="still open"):
        parse_events(events)


def test_reused_block_index_is_rejected() -> None:
    events = [start(), *text_block(0, "a"), *text_block(0, "b"), *finish("end_turn")]
    with pytest.raises(ProtocolViolation, match="reused"):
        parse_events(events)


def test_block_index_may_not_skip() -> None:
    events = [start(), *text_block(1, "a"), *finish("end_turn")]
    with pytest.raises(ProtocolViolation, match="skips"):
        parse_events(events)


def test_delta_for_closed_block_is_rejected() -> None:
    events = [start(), *text_block(0, "a"),
              ev("content_block_delta", index=0, delta={"type": "text_delta", "text": "late"}),
              *finish("end_turn")]
    with pytest.raises(ProtocolViolation, match="closed block index 0"):
        parse_events(events)


def test_delta_for_unknown_block_is_rejected() -> None:
    events = [start(), ev("content_block_delta", index=5, delta={"type": "text_delta", "text": "x"})]
    with pytest.raises(ProtocolViolation, match="unknown block index 5"):
        parse_events(events)


def test_delta_for_another_index_while_open_is_rejected() -> None:
    events = [start(), text_block(0)[0],
              ev("content_block_delta", index=1, delta={"type": "text_delta", "text": "x"})]
    with pytest.raises(ProtocolViolation, match="unknown block index 1"):
        parse_events(events)


@pytest.mark.parametrize(
    "block,delta",
    [
        ({"type": "text", "text": ""}, {"type": "input_json_delta", "partial_json": "{}"}),
        ({"type": "text", "text": ""}, {"type": "thinking_delta", "thinking": "x"}),
        ({"type": "thinking", "thinking": ""}, {"type": "text_delta", "text": "x"}),
        ({"type": "tool_use", "id": "i", "name": "n", "input": {}}, {"type": "text_delta", "text": "x"}),
        ({"type": "tool_use", "id": "i", "name": "n", "input": {}},
         {"type": "citations_delta", "citation": {}}),
        ({"type": "redacted_thinking", "data": "d"}, {"type": "thinking_delta", "thinking": "x"}),
        ({"type": "web_search_tool_result", "tool_use_id": "s", "content": []},
         {"type": "input_json_delta", "partial_json": ""}),
    ],
)
def test_delta_type_must_fit_the_block(block: dict[str, Any], delta: dict[str, Any]) -> None:
    events = [start(), ev("content_block_start", index=0, content_block=block),
              ev("content_block_delta", index=0, delta=delta)]
    with pytest.raises(ProtocolViolation, match="does not fit"):
        parse_events(events)


def test_unknown_delta_type_fails_closed() -> None:
    events = [start(), text_block(0)[0],
              ev("content_block_delta", index=0, delta={"type": "audio_delta", "audio": "x"})]
    with pytest.raises(UnsupportedProviderState, match="unknown delta type"):
        parse_events(events)


@pytest.mark.parametrize("index", [True, -1, 1.0, "0", None])
def test_block_index_must_be_a_non_negative_integer(index: Any) -> None:
    events = [start(), ev("content_block_start", index=index, content_block={"type": "text", "text": ""})]
    with pytest.raises(ProtocolViolation, match="index"):
        parse_events(events)


@pytest.mark.parametrize(
    "block",
    [
        {"type": "tool_use", "name": "f", "input": {}},
        {"type": "tool_use", "id": "", "name": "f", "input": {}},
        {"type": "tool_use", "id": "i", "name": "f", "input": "{}"},
        {"type": "text"},
        {"type": "thinking", "thinking": 1},
        {"type": "redacted_thinking"},
        {"type": "web_search_tool_result", "content": []},
        {"type": "text", "text": "", "citations": "none"},
    ],
)
def test_missing_or_mistyped_required_block_fields_fail(block: dict[str, Any]) -> None:
    with pytest.raises(ProtocolViolation, match="content_block"):
        parse_events([start(), ev("content_block_start", index=0, content_block=block)])


def test_unknown_block_fields_are_kept() -> None:
    events = [start(), *tool_block(0, "c", "f", "{}"), *finish()]
    events[1]["data"]["content_block"]["caller"] = {"type": "direct"}
    events[1]["data"]["content_block"]["new_optional_field"] = [1, {"x": None}]
    turn = parse_events(events)
    assert turn.blocks[0]["new_optional_field"] == [1, {"x": None}]
    assert turn.blocks[0]["caller"] == {"type": "direct"}


# --------------------------------------------------------------------------- thinking / server tools


def test_thinking_redacted_thinking_text_and_tools_are_kept_in_order() -> None:
    events = [
        start(),
        *thinking_block(0, "plan", "sig-1"),
        ev("content_block_start", index=1, content_block={"type": "redacted_thinking", "data": "opaque"}),
        ev("content_block_stop", index=1),
        *text_block(2, "before"),
        *tool_block(3, "c", "f", "{}"),
        *text_block(4, "after"),
        *finish(),
    ]
    turn = parse_events(events)
    assert [b["type"] for b in turn.blocks] == [
        "thinking", "redacted_thinking", "text", "tool_use", "text"
    ]
    assert turn.blocks[0] == {"type": "thinking", "thinking": "plan", "signature": "sig-1"}
    assert turn.blocks[1] == {"type": "redacted_thinking", "data": "opaque"}
    assert turn.calls[0].index == 3


def test_thinking_block_must_close_with_a_signature() -> None:
    events = [start(), *thinking_block(0, "plan", "sig")]
    del events[3]  # the signature_delta
    with pytest.raises(ProtocolViolation, match="without a signature"):
        parse_events(events)


def test_signature_delta_is_the_last_delta_of_a_thinking_block() -> None:
    events = [start(), *thinking_block(0, "plan", "sig")]
    events.insert(4, ev("content_block_delta", index=0,
                        delta={"type": "thinking_delta", "thinking": "more"}))
    with pytest.raises(ProtocolViolation, match="after the signature"):
        parse_events(events)


def test_citations_delta_appends_to_the_text_block() -> None:
    cite = {"type": "char_location", "cited_text": "x", "document_index": 0,
            "start_char_index": 0, "end_char_index": 1}
    events = [start(), text_block(0)[0],
              ev("content_block_delta", index=0, delta={"type": "citations_delta", "citation": cite}),
              ev("content_block_delta", index=0, delta={"type": "text_delta", "text": "t"}),
              ev("content_block_stop", index=0), *finish("end_turn")]
    turn = parse_events(events)
    assert turn.blocks[0] == {"type": "text", "text": "t", "citations": [cite]}


def server_mixed_stream() -> list[dict[str, Any]]:
    return [
        start(),
        *tool_block(0, "srv-1", "web_search", '{"query": "weather"}', kind="server_tool_use"),
        ev("content_block_start", index=1, content_block={
            "type": "web_search_tool_result", "tool_use_id": "srv-1",
            "content": [{"type": "web_search_result", "url": "https://example.invalid/",
                         "title": "t", "encrypted_content": "e"}]}),
        ev("content_block_stop", index=1),
        *text_block(2, "Now the order."),
        *tool_block(3, "cli-1", "lookup_order", '{"order_ref": "A"}'),
        *finish(),
    ]


def test_server_tool_blocks_are_kept_but_never_offered_for_execution() -> None:
    turn = parse_events(server_mixed_stream())
    assert [c.call_id for c in turn.calls] == ["cli-1"]
    assert turn.blocks[0]["input"] == {"query": "weather"}
    assert turn.blocks[1]["type"] == "web_search_tool_result"


def test_fallback_block_raises_unsupported_provider_state() -> None:
    events = [start(), *text_block(0, "declined"),
              ev("content_block_start", index=1, content_block={
                  "type": "fallback", "from": {"model": "a"}, "to": {"model": "b"}}),
              ev("content_block_stop", index=1), *text_block(2, "answer"), *finish("end_turn")]
    with pytest.raises(UnsupportedProviderState, match="server-side-fallback"):
        parse_events(events)


def test_fallback_block_is_not_ignored_inside_a_tool_turn() -> None:
    events = two_call_stream()
    fallback = ev("content_block_start", index=3,
                  content_block={"type": "fallback", "from": {"model": "a"}, "to": {"model": "b"}})
    events[-2:-2] = [fallback, ev("content_block_stop", index=3)]
    with pytest.raises(UnsupportedProviderState):
        parse_events(events)


@pytest.mark.parametrize("btype", ["mcp_tool_use", "compaction", "image", ""])
def test_unknown_block_type_fails_closed(btype: str) -> None:
    events = [start(), ev("content_block_start", index=0, content_block={"type": btype})]
    with pytest.raises(UnsupportedProviderState, match="unknown content block type"):
        parse_events(events)


# --------------------------------------------------------------------------- message / usage


def test_usage_may_not_go_backwards() -> None:
    events = [start(output_tokens=30), *text_block(0, "a"), *finish("end_turn", output_tokens=5)]
    with pytest.raises(ProtocolViolation, match="went backwards"):
        parse_events(events)


def test_usage_may_not_go_backwards_between_message_deltas() -> None:
    events = [start(), *text_block(0, "a"),
              ev("message_delta", delta={"stop_reason": None}, usage={"output_tokens": 9,
                                                                      "input_tokens": 10}),
              ev("message_delta", delta={"stop_reason": "end_turn"},
                 usage={"output_tokens": 9, "input_tokens": 4}),
              ev("message_stop")]
    with pytest.raises(ProtocolViolation, match="input_tokens went backwards"):
        parse_events(events)


def test_usage_is_cumulative_and_kept_raw() -> None:
    events = two_call_stream()
    events[-2]["data"]["usage"]["server_tool_use"] = {"web_search_requests": 1}
    turn = parse_events(events)
    assert turn.usage == {"input_tokens": 10, "output_tokens": 20,
                          "server_tool_use": {"web_search_requests": 1}}


def test_message_delta_optional_fields_are_kept_raw() -> None:
    events = two_call_stream("refusal")
    events[-2]["data"]["delta"]["stop_details"] = {"type": "refusal", "category": "x"}
    events[-2]["data"]["delta"]["future_field"] = 1
    turn = parse_events(events)
    assert turn.delta == {"stop_reason": "refusal", "stop_details": {"type": "refusal", "category": "x"},
                          "future_field": 1}
    assert turn.snapshot()["delta"] is turn.delta


def test_fixture_events_validate_against_the_pinned_schemas() -> None:
    import jsonschema

    schemas = ROOT / "fixtures" / "schemas" / "anthropic_messages"
    for e in json.loads(FIXTURE.read_text(encoding="utf-8"))["events"]:
        schema = json.loads((schemas / f"{e['event']}.json").read_text(encoding="utf-8"))
        jsonschema.Draft7Validator.check_schema(schema)
        jsonschema.Draft7Validator(schema).validate(e)


@pytest.mark.parametrize("value", [-1, True, 1.5, "3"])
def test_usage_counters_are_non_negative_integers(value: Any) -> None:
    events = two_call_stream()
    events[-2]["data"]["usage"]["output_tokens"] = value
    with pytest.raises(ProtocolViolation, match="output_tokens"):
        parse_events(events)


@pytest.mark.parametrize(
    "change",
    [
        {"content": [{"type": "text", "text": "x"}]},
        {"stop_reason": "end_turn"},
        {"role": "user"},
        {"type": "completion"},
        {"id": ""},
        {"usage": {"output_tokens": 1}},
    ],
)
def test_message_start_shape(change: dict[str, Any]) -> None:
    event = start()
    event["data"]["message"].update(change)
    with pytest.raises(ProtocolViolation, match="message"):
        parse_events([event])


# --------------------------------------------------------------------------- limits


def test_fragment_limit() -> None:
    limits = StreamLimits(max_fragment_bytes=16)
    events = [start(), *tool_block(0, "c", "f", '{"a": "', "x" * 20, '"}'), *finish()]
    with pytest.raises(LimitExceeded, match="event 3"):
        parse_events(events, limits=limits)


def test_total_text_limit() -> None:
    limits = StreamLimits(max_total_fragment_bytes=10)
    with pytest.raises(LimitExceeded):
        parse_events([start(), *text_block(0, "0123456789", "x"), *finish("end_turn")],
                     limits=limits)


def test_event_and_block_count_limits() -> None:
    with pytest.raises(LimitExceeded, match="events"):
        parse_events([ev("ping")] * 4, limits=StreamLimits(max_events=3))
    with pytest.raises(LimitExceeded, match="content blocks"):
        parse_events([start(), *text_block(0), *text_block(1)], limits=StreamLimits(max_items=1))


def test_deeply_nested_raw_content_is_bounded_without_recursion() -> None:
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    events = [start(), ev("content_block_start", index=0, content_block={
        "type": "web_search_tool_result", "tool_use_id": "s", "content": deep})]
    with pytest.raises(LimitExceeded, match="nests deeper"):
        parse_events(events)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), object(), 2**70, {1: "x"}])
def test_non_json_raw_values_are_rejected(value: Any) -> None:
    events = [start(), ev("content_block_start", index=0, content_block={
        "type": "web_search_tool_result", "tool_use_id": "s", "content": [value]})]
    with pytest.raises(ContractError):
        parse_events(events)


def test_unknown_revision_is_rejected() -> None:
    with pytest.raises(InvalidArgument, match="revision") as caught:
        AnthropicMessagesStream(revision="2025-01-01")
    assert caught.value.disposition == "rejected"


STATE_PREFIXES: dict[str, list[dict[str, Any]]] = {
    "initial": [],
    "message": [start()],
    "block": [start(), text_block(0)[0]],
    "message_delta": [start(), finish()[0]],
    "stopped": two_call_stream(),
}
SAMPLE_EVENTS: dict[str, dict[str, Any]] = {
    "message_start": start(),
    "content_block_start": ev("content_block_start", index=0,
                              content_block={"type": "text", "text": ""}),
    "content_block_delta": ev("content_block_delta", index=0,
                              delta={"type": "text_delta", "text": "x"}),
    "content_block_stop": ev("content_block_stop", index=0),
    "message_delta": finish()[0],
    "message_stop": ev("message_stop"),
}


@pytest.mark.parametrize("revision", sorted(REVISIONS))
def test_every_state_event_pair_outside_the_table_is_rejected(revision: str) -> None:
    tables = REVISIONS[revision]
    assert set(STATE_PREFIXES) == set(tables.transitions)
    assert set(SAMPLE_EVENTS) | {"ping", "error"} == set(tables.event_types)
    checked = 0
    for state, prefix in STATE_PREFIXES.items():
        row = tables.transitions[state]
        assert row["ping"] == state and "error" in row
        for name, sample in SAMPLE_EVENTS.items():
            stream = AnthropicMessagesStream(revision=revision)
            for e in copy.deepcopy(prefix):
                stream.feed(e)
            assert stream.state == state
            if (state, name) == ("block", "message_delta"):
                # A guarded row: only a truncating message_delta may close an open client
                # tool_use block (tests/test_anthropic_messages_open_cut.py); this sample
                # (an open text block, stop_reason tool_use) is neither.
                assert tables.truncation_closes_open_roles
                with pytest.raises(ProtocolViolation, match="still open"):
                    stream.feed(copy.deepcopy(sample))
                continue
            if name in row:
                # Inside the table: the event is accepted and moves to the row's state.
                stream.feed(copy.deepcopy(sample))
                assert stream.state == row[name]
                continue
            with pytest.raises(ProtocolViolation, match=f"event {len(prefix)}"):
                stream.feed(copy.deepcopy(sample))
            assert stream.poisoned
            checked += 1
    assert checked == 5 * 6 - sum(len(r) - 2 for r in tables.transitions.values())


# --------------------------------------------------------------------------- digest


def test_digest_is_stable_and_covers_blocks() -> None:
    a = parse_events(two_call_stream())
    b = parse_events(two_call_stream())
    assert a.digest == b.digest and len(a.digest) == 64
    a.blocks[1]["input"]["order_ref"] = "Z"
    with pytest.raises(SnapshotMutated):
        build(a)


def test_nested_mutation_of_message_is_detected() -> None:
    turn = parse_events(two_call_stream())
    turn.usage["output_tokens"] = 1
    with pytest.raises(SnapshotMutated):
        build(turn)


# --------------------------------------------------------------------------- continuation


def test_continuation_replays_history_assistant_content_and_results() -> None:
    turn = parse_events(two_call_stream())
    body = build(turn, system="Be brief.", request_controls={"temperature": 0, "tool_choice": {"type": "auto"}})
    assert body["model"] == "fixture-model" and body["max_tokens"] == 512
    assert body["system"] == "Be brief."
    assert body["temperature"] == 0 and body["tool_choice"] == {"type": "auto"}
    assert body["tools"] == TOOLS
    messages = body["messages"]
    assert messages[0] == HISTORY[0]
    assert messages[1] == {"role": "assistant", "content": list(turn.blocks)}
    assert messages[2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call-A", "content": "result of call-A", "is_error": False},
        {"type": "tool_result", "tool_use_id": "call-B", "content": "result of call-B", "is_error": False},
    ]}
    assert len(messages) == 3


def test_tool_results_follow_call_order_and_precede_text() -> None:
    turn = parse_events(two_call_stream())
    body = build(turn, list(reversed(results_for(turn))), user_text="Thanks.")
    content = body["messages"][-1]["content"]
    assert [c["type"] for c in content] == ["tool_result", "tool_result", "text"]
    assert [c.get("tool_use_id") for c in content[:2]] == ["call-A", "call-B"]


def test_results_may_be_a_mapping() -> None:
    turn = parse_events(two_call_stream())
    body = build(turn, {r.call_id: r for r in results_for(turn)})
    assert len(body["messages"][-1]["content"]) == 2


def test_is_error_is_sent_natively() -> None:
    turn = parse_events(two_call_stream())
    body = build(turn, results_for(turn, error=True))
    assert all(c["is_error"] is True for c in body["messages"][-1]["content"])


@pytest.mark.parametrize("case", ["missing", "extra", "duplicate", "wrong_type"])
def test_exactly_one_result_per_executable_call(case: str) -> None:
    turn = parse_events(two_call_stream())
    results: list[Any] = results_for(turn)
    if case == "missing":
        results = results[:1]
    elif case == "extra":
        results.append(ModelVisibleToolResult("call-Z", "x"))
    elif case == "duplicate":
        results.append(results[0])
    else:
        results[0] = {"call_id": "call-A", "output": "x"}
    with pytest.raises(ResultBindingError):
        build(turn, results)


def test_recovery_calls_get_a_forced_error_result() -> None:
    turn = parse_events(eager_stream(), eager_input_streaming=True)
    body = build(turn, [], tools=[*TOOLS, {"name": "make_file", "input_schema": {"type": "object"}}])
    content = body["messages"][-1]["content"]
    assert [c["tool_use_id"] for c in content] == ["call-ok", "call-cut"]
    assert all(c["is_error"] is True for c in content)
    assert all(c["content"].startswith("Tool call was not executed") for c in content)
    replayed = body["messages"][-2]["content"][1]
    assert replayed["input"] == {INVALID_JSON_KEY: '{"filename": "poem.txt", "lines": ["Roses'}


def test_a_result_supplied_for_a_recovery_call_is_rejected() -> None:
    turn = parse_events(two_call_stream("max_tokens"))
    with pytest.raises(ResultBindingError, match="recovery call"):
        build(turn, [ModelVisibleToolResult("call-A", "ran anyway")])


@pytest.mark.parametrize("field", ["model", "messages", "system", "tools", "max_tokens"])
def test_request_controls_cannot_overwrite_protected_fields(field: str) -> None:
    turn = parse_events(two_call_stream())
    with pytest.raises(ContinuationError, match=field):
        build(turn, request_controls={field: "x"})


def test_tools_must_declare_every_observed_client_tool() -> None:
    turn = parse_events(two_call_stream())
    other = [{"name": "lookup_user", "input_schema": {"type": "object"}}]
    with pytest.raises(ContinuationError, match="lookup_order"):
        build(turn, tools=other)


def test_server_tool_definition_does_not_count_as_the_client_tool() -> None:
    turn = parse_events(two_call_stream())
    with pytest.raises(ContinuationError, match="lookup_order"):
        build(turn, tools=[{"type": "web_search_20250305", "name": "lookup_order"}])


@pytest.mark.parametrize(
    "tools",
    [
        [{"name": "lookup_order"}],
        [{"name": "lookup_order", "input_schema": {"type": "array"}}],
        [{"name": "lookup_order", "input_schema": {"type": "object"}, "description": 1}],
        [TOOLS[0], TOOLS[0]],
        [{"input_schema": {"type": "object"}}],
        "lookup_order",
    ],
)
def test_tool_definitions_have_the_native_shape(tools: Any) -> None:
    turn = parse_events(two_call_stream())
    with pytest.raises(ContinuationError):
        build(turn, tools=tools)


@pytest.mark.parametrize("system", [[{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "s"])
def test_system_is_a_string_or_text_blocks(system: Any) -> None:
    turn = parse_events(two_call_stream())
    assert build(turn, system=system)["system"] == system


@pytest.mark.parametrize("system", [[], [{"type": "image"}], 3, [{"type": "text", "text": 1}]])
def test_invalid_system_is_rejected(system: Any) -> None:
    turn = parse_events(two_call_stream())
    with pytest.raises(ContinuationError, match="system"):
        build(turn, system=system)


SYS = {"role": "system", "content": "Now answer in French."}
SERVER_END = {"role": "assistant", "content": [
    {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}},
    {"type": "web_search_tool_result", "tool_use_id": "s", "content": []},
]}
U = {"role": "user", "content": "hi"}
A = {"role": "assistant", "content": "hello"}


def test_system_role_in_history_needs_the_capability_proof() -> None:
    turn = parse_events(two_call_stream())
    with pytest.raises(ContinuationError, match="capability"):
        build(turn, history=[U, SYS])
    body = build(turn, history=[U, SYS], mid_conversation_system_capability=True)
    assert body["messages"][1] == SYS


@pytest.mark.parametrize(
    "history,ok",
    [
        ([U, SYS], True),
        ([U, SYS, SYS], True),
        ([U, SYS, A, U], True),
        ([U, SERVER_END, SYS, A, U], True),
        # The seed: after the group, "the end"; the builder then appends the turn.
        ([U, SERVER_END, SYS], True),
        ([U, SERVER_END, SYS, SYS], True),
        ([U, SERVER_END], False),
        ([U, A, SYS], False),
        ([SYS, U], False),
        ([U, A, SYS, A, U], False),
        ([U, SYS, U], False),
        ([U, SYS, SYS, U], False),
    ],
)
def test_mid_conversation_system_positional_rules(history: list[Any], ok: bool) -> None:
    turn = parse_events(two_call_stream())
    if ok:
        build(turn, history=history, mid_conversation_system_capability=True)
    else:
        with pytest.raises(ContinuationError):
            build(turn, history=history, mid_conversation_system_capability=True)


@pytest.mark.parametrize(
    "history",
    [[], [A], [U, A], [{"role": "tool", "content": "x"}], [{"role": "user"}],
     [{"role": "user", "content": "x", "name": "n"}], [{"role": "user", "content": [1]}], "hi"],
)
def test_history_shape(history: Any) -> None:
    turn = parse_events(two_call_stream())
    with pytest.raises(ContinuationError, match="history"):
        build(turn, history=history)


def test_capability_flag_must_be_a_real_bool() -> None:
    turn = parse_events(two_call_stream())
    with pytest.raises(ContinuationError):
        build(turn, history=[U, SYS], mid_conversation_system_capability="yes")


def test_continuation_replays_server_blocks_but_binds_only_client_results() -> None:
    turn = parse_events(server_mixed_stream())
    body = build(turn)
    assert body["messages"][1]["content"] == list(turn.blocks)
    assert [c["tool_use_id"] for c in body["messages"][2]["content"]] == ["cli-1"]
    with pytest.raises(ResultBindingError):
        build(turn, [*results_for(turn), ModelVisibleToolResult("srv-1", "x")])


def test_turn_without_client_calls_has_no_tool_result_continuation() -> None:
    turn = parse_events([start(), *text_block(0, "done"), *finish("end_turn")])
    with pytest.raises(ContinuationError, match="no client tool_use"):
        build(turn, [])


@pytest.mark.parametrize("stop_reason", ["refusal", "pause_turn", "end_turn", "future"])
def test_stop_reasons_without_a_defined_continuation_are_rejected(stop_reason: str) -> None:
    turn = parse_events(two_call_stream(stop_reason))
    with pytest.raises(ContinuationError, match="stop_reason"):
        build(turn, [])


def test_builder_neither_mutates_nor_aliases_caller_objects() -> None:
    turn = parse_events(server_mixed_stream())
    history = copy.deepcopy([U])
    tools = copy.deepcopy(TOOLS)
    controls = {"metadata": {"user_id": "u"}}
    system = [{"type": "text", "text": "s"}]
    snapshot = copy.deepcopy((history, tools, controls, system, list(turn.blocks)))
    body = build(turn, history=history, tools=tools, request_controls=controls, system=system)
    assert (history, tools, controls, system, list(turn.blocks)) == snapshot
    body["messages"][0]["content"] = "changed"
    body["messages"][1]["content"][0]["input"]["query"] = "changed"
    body["tools"][0]["name"] = "changed"
    body["metadata"]["user_id"] = "changed"
    body["system"][0]["text"] = "changed"
    assert (history, tools, controls, system, list(turn.blocks)) == snapshot
    build(turn)  # digest still intact


@pytest.mark.parametrize(
    "kw",
    [{"model": ""}, {"model": 1}, {"max_tokens": 0}, {"max_tokens": True}, {"max_tokens": "9"},
     {"request_controls": ["temperature"]}, {"request_controls": {1: "x"}},
     {"request_controls": {"x": float("nan")}}, {"user_text": ""}],
)
def test_continuation_arguments_are_validated(kw: dict[str, Any]) -> None:
    turn = parse_events(two_call_stream())
    with pytest.raises(ContinuationError):
        build(turn, **kw)


def test_continuation_rejects_other_turn_types() -> None:
    with pytest.raises(ContinuationError):
        build_anthropic_messages_continuation(
            object(), [], history=HISTORY, model="m", max_tokens=1, tools=TOOLS  # type: ignore[arg-type]
        )


# --------------------------------------------------------------------------- fuzz target


def _load_target() -> Any:
    return load_fuzz_target("fuzz_anthropic_messages")


def test_fuzz_target_replays_its_seed_corpus() -> None:
    target = _load_target()
    corpus = sorted((ROOT / "fuzz" / "corpus" / "fuzz_anthropic_messages").iterdir())
    assert corpus
    for path in corpus:
        target.TestOneInput(path.read_bytes())


def test_fuzz_target_sse_mode_decodes_the_fixture_with_contracts_sse() -> None:
    target = _load_target()
    from pcfuzz.contracts.fixtures import load_fixture

    events = load_fixture(FIXTURE).events
    raw = "".join(
        f"event: {e['event']}\ndata:\n: comment\ndata: {json.dumps(e['data'])}\n\n"
        for e in events
    ).encode()
    # Multi-line data (an empty first line) and comments: the old splitter's cases.
    assert target.sse_envelopes(raw.replace(b"data:\n", b"")) == events
    assert [e["data"] for e in target.sse_envelopes(raw)] == [e["data"] for e in events]
    target.TestOneInput(b"\x00" + raw)
    with pytest.raises(ContractError):
        target.sse_envelopes(raw[:-1])  # an event cut before its blank line


def test_builder_adds_no_fields_of_its_own() -> None:
    turn = parse_events(eager_stream("max_tokens"), eager_input_streaming=True)
    tools = [*TOOLS, {"name": "make_file", "input_schema": {"type": "object"}}]
    body = build(turn, [], tools=tools, request_controls={"temperature": 0.2})
    assert set(body) == {"model", "max_tokens", "tools", "messages", "temperature"}
    assert [set(m) for m in body["messages"]] == [{"role", "content"}] * 3
    for item in body["messages"][-1]["content"]:
        assert set(item) == {"type", "tool_use_id", "content", "is_error"}


# --------------------------------------------------------------------------- review: attacks


def test_max_tokens_cut_in_the_last_tool_input_is_a_recovery_call_without_eager() -> None:
    # The tool-use page: a max_tokens stop may leave the last tool_use input incomplete.
    # That is a documented truncation, so it is a recovery call, not a broken stream.
    turn = parse_events(eager_stream("max_tokens"))
    assert turn.calls == ()
    ok, cut = turn.recovery_calls
    assert (ok.call_id, ok.arguments) == ("call-ok", {"order_ref": "A"})
    assert cut.call_id == "call-cut" and cut.arguments is None
    assert cut.partial_json == '{"filename": "poem.txt", "lines": ["Roses'
    assert "truncation" in cut.reason
    assert turn.blocks[1]["input"] == {INVALID_JSON_KEY: cut.partial_json}
    tools = [*TOOLS, {"name": "make_file", "input_schema": {"type": "object"}}]
    content = build(turn, [], tools=tools)["messages"][-1]["content"]
    assert [c["is_error"] for c in content] == [True, True]


@pytest.mark.parametrize("stop_reason", ["tool_use", "end_turn", "pause_turn", "future"])
def test_incomplete_input_without_eager_fails_unless_the_turn_hit_max_tokens(
    stop_reason: str,
) -> None:
    with pytest.raises(StrictJSONError, match="block 1"):
        parse_events(eager_stream(stop_reason))


def test_incomplete_input_without_eager_must_be_the_last_block() -> None:
    events = eager_stream("max_tokens")
    events[-2:-2] = text_block(2, "more text after the cut")
    with pytest.raises(StrictJSONError, match="block 1"):
        parse_events(events)


def test_truncated_input_is_never_executed_even_if_the_stream_then_says_tool_use() -> None:
    # message_delta with stop_reason null first, then max_tokens: still recovery.
    events = eager_stream("max_tokens")
    events.insert(-2, ev("message_delta", delta={"stop_reason": None}, usage={"output_tokens": 5}))
    assert parse_events(events).calls == ()
    # The other order: a non-truncation stop reason is final; the stream fails there.
    events = eager_stream("tool_use")
    at = next(i for i, e in enumerate(events) if e["event"] == "message_delta")
    stream = AnthropicMessagesStream()
    for e in events[:at]:
        stream.feed(e)
    with pytest.raises(StrictJSONError, match=f"event {at}"):
        stream.feed(events[at])
    with pytest.raises(ContractError):
        stream.close()


@pytest.mark.parametrize(
    "where,key",
    [("message_start", "input_tokens"), ("message_start", "output_tokens"),
     ("message_delta", "output_tokens")],
)
def test_required_usage_counters_must_be_integers_not_null(where: str, key: str) -> None:
    events = [start(), *text_block(0, "a"), *finish("end_turn")]
    if where == "message_start":
        events[0]["data"]["message"]["usage"][key] = None
    else:
        events[-2]["data"]["usage"][key] = None
    with pytest.raises(ProtocolViolation, match=f"usage.{key}"):
        parse_events(events)


@pytest.mark.parametrize(
    "caller",
    [{"type": "code_execution_20250825", "tool_id": "srv"},
     {"type": "code_execution_20260120", "tool_id": "srv"}, {"type": "future_caller"},
     {"type": ["direct"]}, {}],
)
def test_client_tool_use_from_a_non_direct_caller_fails_closed(caller: dict[str, Any]) -> None:
    # Programmatic tool calling changes the continuation contract (container,
    # tool_result-only message); the pinned contract does not implement it.
    events = [start(), *tool_block(0, "c", "lookup_order", "{}"), *finish()]
    events[1]["data"]["content_block"]["caller"] = caller
    with pytest.raises(UnsupportedProviderState, match="caller"):
        parse_events(events)


def test_mutating_executable_call_arguments_is_detected_by_the_builder() -> None:
    turn = parse_events(two_call_stream())
    turn.calls[0].arguments["order_ref"] = "Z"
    with pytest.raises(SnapshotMutated):
        build(turn)


def test_mutating_recovery_call_arguments_is_detected_by_the_builder() -> None:
    turn = parse_events(two_call_stream("max_tokens"))
    args = turn.recovery_calls[0].arguments
    assert args is not None
    args["order_ref"] = "Z"
    with pytest.raises(SnapshotMutated):
        build(turn, [])


@pytest.mark.parametrize("role", [[], {}, ["user"], None, 1, True])
def test_history_role_of_any_type_is_a_continuation_error(role: Any) -> None:
    turn = parse_events(two_call_stream())
    with pytest.raises(ContinuationError, match=r"history\[0\]\.role"):
        build(turn, history=[{"role": role, "content": "x"}])


@pytest.mark.parametrize("key", ["Model", "MESSAGES", " system", "Tools", "max_tokens\t", "ſystem"])
def test_request_controls_cannot_overwrite_protected_fields_by_case_or_space(key: str) -> None:
    turn = parse_events(two_call_stream())
    with pytest.raises(ContinuationError, match="protected"):
        build(turn, request_controls={key: "x"})


def _server_result(index: int, tool_use_id: str) -> list[dict[str, Any]]:
    return [
        ev("content_block_start", index=index, content_block={
            "type": "web_search_tool_result", "tool_use_id": tool_use_id, "content": []}),
        ev("content_block_stop", index=index),
    ]


def test_server_tool_result_may_not_claim_a_client_tool_use_id() -> None:
    # A server result for a client call would let the provider answer a call the
    # host must answer; the identities conflict whichever comes first.
    after = [start(), *tool_block(0, "cli-1", "lookup_order", "{}"), *_server_result(1, "cli-1"),
             *finish()]
    with pytest.raises(ProtocolViolation, match="cli-1"):
        parse_events(after)
    before = [start(), *_server_result(0, "cli-1"), *tool_block(1, "cli-1", "lookup_order", "{}"),
              *finish()]
    with pytest.raises(ProtocolViolation, match="cli-1"):
        parse_events(before)


def test_server_tool_result_for_an_earlier_server_tool_use_is_accepted() -> None:
    # pause_turn continuations may also answer a server_tool_use of an earlier
    # message, so an unknown (not client) id is kept, not rejected.
    turn = parse_events([start(), *_server_result(0, "srv-from-earlier"), *finish("end_turn")])
    assert turn.blocks[0]["tool_use_id"] == "srv-from-earlier"


@pytest.mark.parametrize("where", ["tool_use", "tool_result"])
def test_history_may_not_already_contain_a_call_of_this_turn(where: str) -> None:
    # A turn appended to its own history (double append) would replay call-A twice
    # or answer it twice; fail before building.
    turn = parse_events(two_call_stream())
    block = (
        {"type": "tool_use", "id": "call-A", "name": "lookup_order", "input": {}}
        if where == "tool_use"
        else {"type": "tool_result", "tool_use_id": "call-A", "content": "old"}
    )
    role = "assistant" if where == "tool_use" else "user"
    history = [U, {"role": "assistant", "content": "ok"}, {"role": role, "content": [block]}]
    if role == "assistant":
        history.append(U)
    with pytest.raises(ContinuationError, match="call-A"):
        build(turn, history=history)


@pytest.mark.parametrize(
    "position,outcome",
    [
        (0, ProtocolViolation),  # message_start again
        (1, ProtocolViolation),  # content_block_start: index reused / overlap
        (4, ProtocolViolation),  # content_block_stop: block already closed
        (-2, None),  # message_delta: cumulative and same stop_reason, so idempotent
        (-1, ProtocolViolation),  # message_stop twice
    ],
)
def test_replayed_structural_events_are_rejected(position: int, outcome: Any) -> None:
    # Messages SSE has no sequence numbers or event ids: a replayed DELTA cannot be
    # told from a new one (a transport concern, see the doc); every structural event
    # replayed is either rejected or, for message_delta, changes nothing.
    events = two_call_stream()
    at = position % len(events)
    replayed = [*events[: at + 1], copy.deepcopy(events[at]), *events[at + 1 :]]
    if outcome is None:
        assert parse_events(replayed).digest == parse_events(events).digest
    else:
        with pytest.raises(outcome, match=f"event {at + 1}"):
            parse_events(replayed)


def test_model_context_window_exceeded_is_a_truncation_too() -> None:
    # "Stop reasons and fallback": treat the response as truncated. A cut last input
    # is a recovery call (not a broken stream); complete siblings never execute.
    turn = parse_events(eager_stream("model_context_window_exceeded"))
    assert turn.calls == ()
    assert turn.recovery_calls[1].partial_json is not None
    complete = parse_events(two_call_stream("model_context_window_exceeded"))
    assert complete.calls == ()
    assert all("truncated" in c.reason for c in complete.recovery_calls)


def test_integer_tool_arguments_up_to_the_strict_json_limit_are_kept() -> None:
    # Found by the nightly job: 2**64 as a tool argument parsed strictly but the raw
    # copy rejected it. The bound is strict_json's 1,000-digit number limit.
    for value in (2**64, -(2**64), 10**999 - 1):
        turn = parse_events(
            [start(), *tool_block(0, "t-1", "lookup", json.dumps({"id": value})), *finish()])
        assert turn.calls[0].arguments == {"id": value}
    too_long = "1" * 1001
    with pytest.raises(ContractError):
        parse_events(
            [start(), *tool_block(0, "t-1", "lookup", '{"id": ' + too_long + "}"), *finish()])
