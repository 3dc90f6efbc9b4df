"""Example tests for the OpenAI Chat Completions aggregator.

One test (or parametrized group) per row of the design's aggregation table (4.1)
and success/truncation/error table (4.2), plus the shared safety gate, progress
events (section 5), the request-side ``n`` check (3.2), the non-streaming body,
poisoning, limits and the fixture. Each is an attack a naive aggregator fails.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _fuzz import load_fuzz_target
from _openai_chat import (
    _UNSET,
    FIXTURE,
    ROLE,
    ROOT,
    chunk,
    feed_all,
    full_tool,
    tool,
    tools_frame,
)

from pcfuzz.contracts import strict_json
from pcfuzz.contracts._stream import StreamLimits
from pcfuzz.contracts.errors import (
    ContractError,
    InvalidArgument,
    LimitExceeded,
    ProtocolViolation,
    ProviderError,
    SnapshotMutated,
    StreamTruncated,
    UnsupportedProviderState,
)
from pcfuzz.contracts.openai_chat import (
    DONE,
    REVISIONS,
    ChatCompletionStream,
    EmptyCompletion,
    ProgressEvent,
    check_request,
    frames_from_fixture_events,
    parse_completion,
    parse_events,
)


def test_row_content_and_reasoning_concatenate_in_order_both_from_the_same_frame() -> None:
    turn = parse_events([
        ROLE,
        chunk({"content": "He", "reasoning_content": "thi"}),
        chunk({"content": "llo", "reasoning_content": "nk"}),
        DONE,
    ])
    assert turn.message == {"role": "assistant", "content": "Hello", "reasoning_content": "think"}


def test_row_content_is_never_trimmed() -> None:
    # The projection (think blocks and whitespace dropped) only decides success; the
    # protocol message keeps every character.
    turn = parse_events([ROLE, chunk({"content": "  <think>x</think>\n"}), chunk({"content": "y "}),
                         DONE])
    assert turn.message["content"] == "  <think>x</think>\ny "


def test_row_text_key_that_never_appeared_is_not_invented() -> None:
    turn = parse_events([ROLE, chunk({"content": "hi"}), DONE])
    assert "reasoning_content" not in turn.message
    assert list(turn.message) == ["role", "content"]


def test_row_text_key_that_only_appeared_as_null_stays_null() -> None:
    turn = parse_events([
        chunk({"role": "assistant", "content": None}),
        tools_frame(full_tool(0, "c1")),
        chunk({"content": None, "reasoning_content": None}, finish="tool_calls"),
        DONE,
    ])
    assert turn.message["content"] is None
    assert turn.message["reasoning_content"] is None


def test_row_null_text_fragment_does_not_erase_earlier_text() -> None:
    turn = parse_events([ROLE, chunk({"content": "a"}), chunk({"content": None}),
                         chunk({"content": "b"}), DONE])
    assert turn.message["content"] == "ab"


@pytest.mark.parametrize("key", ["content", "reasoning_content"])
@pytest.mark.parametrize("value", [1, True, ["a"], {"text": "a"}, 1.5])
def test_row_text_fields_must_be_string_or_null(key: str, value: Any) -> None:
    with pytest.raises(ProtocolViolation, match=rf"event 1.*|{key}"):
        parse_events([ROLE, chunk({key: value}), DONE])


@pytest.mark.parametrize("role", ["user", "system", "tool", "developer", "", "Assistant", 1, True])
def test_row_role_when_present_must_be_assistant(role: Any) -> None:
    with pytest.raises(ProtocolViolation, match="role"):
        parse_events([chunk({"role": role, "content": "x"}), DONE])


def test_row_final_message_must_have_the_assistant_role() -> None:
    with pytest.raises(ProtocolViolation, match="no role"):
        parse_events([chunk({"content": "hello"}), DONE])


def test_row_role_only_frame_is_legal_and_not_progress() -> None:
    stream = ChatCompletionStream()
    assert stream.feed(ROLE) is None
    assert stream.feed(chunk({"content": "x"})) == ProgressEvent(1, ("content",))


@pytest.mark.parametrize("value", [{"index": 0}, "[]", 0, True])
def test_row_tool_calls_must_be_a_list(value: Any) -> None:
    with pytest.raises(ProtocolViolation, match="tool_calls must be an array"):
        parse_events([ROLE, chunk({"tool_calls": value}), DONE])


@pytest.mark.parametrize("index", [True, False, -1, "0", 1.0, None])
def test_row_tool_index_must_be_a_non_negative_strict_integer(index: Any) -> None:
    with pytest.raises(ProtocolViolation, match=r"tool_calls\[0\]\.index"):
        parse_events([ROLE, tools_frame(full_tool(0, "c1") | {"index": index}), DONE])


def test_row_tool_index_missing_fails() -> None:
    entry = full_tool(0, "c1")
    del entry["index"]
    with pytest.raises(ProtocolViolation, match="index"):
        parse_events([ROLE, tools_frame(entry), DONE])


def test_row_tools_are_bucketed_by_index_and_sorted_without_the_index_field() -> None:
    # Non-contiguous indexes, delivered out of order and interleaved.
    turn = parse_events([
        ROLE,
        tools_frame(tool(7, id="c7", type="function", name="g", arguments='{"b"')),
        tools_frame(tool(2, id="c2", type="function", name="f", arguments="{")),
        tools_frame(tool(7, arguments=":2}"), tool(2, arguments="}")),
        chunk(finish="tool_calls"),
        DONE,
    ])
    assert turn.message["tool_calls"] == [
        {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "c7", "type": "function", "function": {"name": "g", "arguments": '{"b":2}'}},
    ]
    assert [c.call_id for c in turn.calls] == ["c2", "c7"]


def test_row_tool_identity_missing_fragment_does_not_overwrite() -> None:
    turn = parse_events([
        ROLE,
        tools_frame(tool(0, id="call-1", type="function", name="f")),
        tools_frame(tool(0, id=None, type=None, arguments="{}")),
        tools_frame(tool(0)),
        DONE,
    ])
    assert turn.message["tool_calls"][0]["id"] == "call-1"
    assert turn.message["tool_calls"][0]["type"] == "function"


def test_row_tool_identity_may_arrive_after_the_first_fragment() -> None:
    turn = parse_events([
        ROLE,
        tools_frame(tool(0, name="f", arguments="{")),
        tools_frame(tool(0, id="late-id", arguments="}")),
        tools_frame(tool(0, type="function")),
        DONE,
    ])
    assert turn.message["tool_calls"][0]["id"] == "late-id"


def test_row_repeated_full_id_is_idempotent_and_never_concatenated() -> None:
    turn = parse_events([
        ROLE,
        tools_frame(full_tool(0, "call_abc", arguments="")),
        tools_frame(tool(0, id="call_abc", type="function", arguments="{}")),
        DONE,
    ])
    assert turn.message["tool_calls"][0]["id"] == "call_abc"


@pytest.mark.parametrize("other", ["call_abd", "call_ab", "call_abccall_abc", "CALL_ABC"])
def test_row_conflicting_tool_id_fails(other: str) -> None:
    with pytest.raises(ProtocolViolation, match="conflicts"):
        parse_events([ROLE, tools_frame(full_tool(0, "call_abc")),
                      tools_frame(tool(0, id=other)), DONE])


@pytest.mark.parametrize("tool_type", ["custom", "Function", "", 1, True])
def test_row_tool_type_must_be_function(tool_type: Any) -> None:
    with pytest.raises(ProtocolViolation, match="type"):
        parse_events([ROLE, tools_frame(full_tool(0, "c") | {"type": tool_type}), DONE])


@pytest.mark.parametrize("call_id", ["", 0, True, ["c"]])
def test_row_tool_id_must_be_a_non_empty_string(call_id: Any) -> None:
    with pytest.raises(ProtocolViolation, match=r"\.id"):
        parse_events([ROLE, tools_frame(full_tool(0, "c") | {"id": call_id}), DONE])


def test_row_name_and_arguments_concatenate_in_arrival_order_with_empty_fragments() -> None:
    turn = parse_events([
        ROLE,
        tools_frame(tool(0, id="c", type="function", name="", arguments="")),
        tools_frame(tool(0, name="look", arguments='{"k"')),
        tools_frame(tool(0, name="", arguments="")),
        tools_frame(tool(0, name="up", arguments=': "v"}')),
        DONE,
    ])
    function = turn.message["tool_calls"][0]["function"]
    assert function == {"name": "lookup", "arguments": '{"k": "v"}'}


@pytest.mark.parametrize("arguments", ['{"a": 1, "a": 2}', "{'a': 1}", " {} ", '{"x": NaN}', ""])
def test_row_arguments_are_kept_verbatim_never_parsed_or_repaired(arguments: str) -> None:
    turn = parse_events([ROLE, tools_frame(full_tool(0, "c", arguments=arguments)),
                         chunk(finish="tool_calls"), DONE])
    assert turn.message["tool_calls"][0]["function"]["arguments"] == arguments


@pytest.mark.parametrize(
    ("key", "value"),
    [("name", 1), ("name", True), ("arguments", {"a": 1}), ("arguments", 0)],
)
def test_row_function_fragments_must_be_strings_or_null(key: str, value: Any) -> None:
    with pytest.raises(ProtocolViolation, match=rf"function\.{key}"):
        parse_events([ROLE, tools_frame(full_tool(0, "c") | {"function": {key: value}}), DONE])


def test_row_response_id_first_non_null_is_fixed_equal_repeat_allowed() -> None:
    turn = parse_events([
        chunk({"role": "assistant"}, id=None),
        chunk({"content": "x"}, id="resp-1"),
        chunk({}, id="resp-1"),
        {"choices": [], "usage": None},
        DONE,
    ])
    assert turn.response_id == "resp-1"


def test_row_response_id_never_reported_is_none() -> None:
    turn = parse_events([ROLE, chunk({"content": "x"}), DONE])
    assert turn.response_id is None


def test_row_conflicting_response_id_fails() -> None:
    with pytest.raises(ProtocolViolation, match="conflicts"):
        parse_events([chunk({"role": "assistant"}, id="a"), chunk({"content": "x"}, id="b"), DONE])


def test_row_finish_reason_first_non_null_is_fixed() -> None:
    turn = parse_events([ROLE, chunk({"content": "x"}, finish=None),
                         chunk(finish="stop"), chunk(finish="stop"), chunk(finish=None), DONE])
    assert turn.finish_reason == "stop"


def test_row_conflicting_finish_reason_fails() -> None:
    with pytest.raises(ProtocolViolation, match="finish_reason"):
        parse_events([ROLE, chunk({"content": "x"}, finish="stop"), chunk(finish="length"), DONE])


def test_row_missing_finish_reason_stays_none_and_is_not_guessed() -> None:
    turn = parse_events([ROLE, tools_frame(full_tool(0, "c")), DONE])
    assert turn.finish_reason is None
    assert turn.calls == ()
    assert [c.call_id for c in turn.recovery_calls] == ["c"]


def test_row_usage_is_the_last_non_null_object_unmodified() -> None:
    first = {"prompt_tokens": 1}
    last = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7,
            "x_vendor": {"cost": [1, 2]}}
    turn = parse_events([ROLE, chunk({"content": "x"}, usage=first),
                         {"choices": [], "usage": last}, chunk({}, usage=None), DONE])
    assert turn.usage == last
    last["x_vendor"]["cost"].append(3)
    assert turn.usage["x_vendor"]["cost"] == [1, 2]


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda t: t.pop("id"), r"id never appeared"),
        (lambda t: t.pop("type"), r"type never appeared"),
        (lambda t: t["function"].pop("name"), r"name is empty"),
        (lambda t: t["function"].update(name=""), r"name is empty"),
        (lambda t: t["function"].pop("arguments"), r"arguments never appeared"),
        (lambda t: t["function"].update(arguments=None), r"arguments never appeared"),
    ],
)
def test_row_final_tool_needs_id_function_type_name_and_an_arguments_string(
    mutate: Any, match: str
) -> None:
    entry = full_tool(0, "c", arguments="{}")
    mutate(entry)
    with pytest.raises(ProtocolViolation, match=match):
        parse_events([ROLE, chunk({"content": "text does not mask it"}), tools_frame(entry),
                      DONE])


def test_row_empty_arguments_string_counts_as_present() -> None:
    turn = parse_events([ROLE, tools_frame(full_tool(0, "c", arguments="")),
                         chunk(finish="tool_calls"), DONE])
    assert turn.message["tool_calls"][0]["function"]["arguments"] == ""
    assert turn.calls == ()
    assert turn.recovery_calls[0].arguments_text == ""


def test_row_duplicate_tool_ids_across_indexes_fail() -> None:
    with pytest.raises(ProtocolViolation, match="duplicate tool id"):
        parse_events([ROLE, tools_frame(full_tool(0, "same")), tools_frame(full_tool(1, "same")),
                      DONE])


@pytest.mark.parametrize("revision", sorted(REVISIONS))
@pytest.mark.parametrize("key", ["annotations", "x_vendor", "Content", "tool_call"])
@pytest.mark.parametrize("value", [None, "", {}])
def test_row_unknown_delta_field_fails(key: str, value: Any, revision: str) -> None:
    with pytest.raises(ProtocolViolation, match="unknown delta field"):
        parse_events([ROLE, chunk({"content": "x", key: value}), DONE], revision=revision)


@pytest.mark.parametrize("value", [None, "", {}])
def test_row_delta_audio_is_unknown_in_the_pinned_revision(value: Any) -> None:
    with pytest.raises(ProtocolViolation, match="unknown delta field"):
        parse_events([ROLE, chunk({"content": "x", "audio": value}), DONE],
                     revision="2026-07-21")


def test_row_delta_audio_is_known_but_only_null_in_the_current_revision() -> None:
    # openai 3.57.0 ChoiceDelta.audio (ChoiceDeltaAudio | None): no merge rule for audio
    # output, so like refusal it is accepted only as null
    turn = parse_events([ROLE, chunk({"content": "x", "audio": None}), DONE],
                        revision="2026-12-01")
    assert turn.completion.message["content"] == "x"
    for value in ("", {"id": "a", "data": "AAAA", "expires_at": 1, "transcript": "x"}):
        with pytest.raises(UnsupportedProviderState, match="audio is not null"):
            parse_events([ROLE, chunk({"content": "x", "audio": value}), DONE],
                         revision="2026-12-01")


@pytest.mark.parametrize("key", ["custom", "name", "arguments", "x_vendor"])
def test_row_unknown_tool_delta_field_fails(key: str) -> None:
    with pytest.raises(ProtocolViolation, match="unknown tool-delta field"):
        parse_events([ROLE, tools_frame(full_tool(0, "c") | {key: None}), DONE])


def test_row_unknown_function_delta_field_fails() -> None:
    entry = full_tool(0, "c")
    entry["function"]["strict"] = True
    with pytest.raises(ProtocolViolation, match="unknown tool-delta field"):
        parse_events([ROLE, tools_frame(entry), DONE])


@pytest.mark.parametrize("key", ["refusal", "function_call"])
def test_sdk_known_unsupported_delta_fields_are_accepted_only_as_null(key: str) -> None:
    turn = parse_events([chunk({"role": "assistant", key: None}), chunk({"content": "x"}), DONE])
    assert key not in turn.message
    value = "I can't" if key == "refusal" else {"name": "f", "arguments": "{}"}
    with pytest.raises(UnsupportedProviderState, match=key):
        parse_events([ROLE, chunk({key: value}), DONE])


# ----------------------------------------------------------- choices (3.2)


@pytest.mark.parametrize("index", [False, True, 1, -1, "0", 0.0, None])
def test_choice_index_must_be_the_integer_zero(index: Any) -> None:
    with pytest.raises(ProtocolViolation, match=r"choices\[0\]\.index"):
        parse_events([chunk({"role": "assistant", "content": "x"}, index=index), DONE])


def test_choice_index_missing_fails_in_a_stream() -> None:
    frame = chunk({"role": "assistant", "content": "x"})
    del frame["choices"][0]["index"]
    with pytest.raises(ProtocolViolation, match="index"):
        parse_events([frame, DONE])


def test_usage_only_frame_with_empty_choices_is_legal() -> None:
    turn = parse_events([ROLE, chunk({"content": "x"}), {"choices": [], "usage": {"t": 1}}, DONE])
    assert turn.usage == {"t": 1}


def test_more_than_one_choice_fails() -> None:
    frame = chunk({"role": "assistant", "content": "x"})
    frame["choices"].append({"index": 1, "delta": {"content": "y"}})
    with pytest.raises(ProtocolViolation, match="exactly one choice"):
        parse_events([frame, DONE])


@pytest.mark.parametrize("frame", [{}, {"id": "x"}, {"choices": None}, {"choices": {}}])
def test_chunk_needs_a_choices_list(frame: dict[str, Any]) -> None:
    with pytest.raises(ProtocolViolation, match="choices"):
        parse_events([frame, DONE])


@pytest.mark.parametrize("delta", [_UNSET, None, [], "x"])
def test_choice_delta_must_be_an_object(delta: Any) -> None:
    choice: dict[str, Any] = {"index": 0}
    if delta is not _UNSET:
        choice["delta"] = delta
    with pytest.raises(ProtocolViolation, match="delta"):
        parse_events([{"choices": [choice]}, DONE])


@pytest.mark.parametrize(
    "frame",
    [
        [],
        0,
        None,
        True,
        "[done]",
        "DONE",
        {"choices": [None]},
        {"choices": [[]]},
        {"choices": [], "id": 5},
        {"choices": [], "usage": []},
        {"choices": [], "usage": 3},
        chunk({"content": "x"}, finish=1),
        chunk({"content": "x"}, finish=False),
        chunk({"tool_calls": [None]}),
        chunk({"tool_calls": ["x"]}),
        chunk({"tool_calls": [{"index": 0, "function": "f"}]}),
        chunk({"tool_calls": [{"index": 0, "function": []}]}),
    ],
)
def test_wrong_types_anywhere_are_protocol_violations(frame: Any) -> None:
    with pytest.raises(ProtocolViolation):
        parse_events([ROLE, frame, DONE])


# ============================================================ table 4.2 rows


def test_row_empty_content_with_complete_tools_succeeds() -> None:
    turn = parse_events([
        chunk({"role": "assistant", "content": ""}),
        tools_frame(full_tool(0, "c", arguments='{"a":1}')),
        chunk(finish="tool_calls"),
        DONE,
    ])
    assert turn.message["content"] == ""
    assert [(c.call_id, c.name, c.arguments) for c in turn.calls] == [("c", "f", {"a": 1})]


def test_row_content_without_tools_succeeds() -> None:
    turn = parse_events([ROLE, chunk({"content": "done"}, finish="stop"), DONE])
    assert turn.message == {"role": "assistant", "content": "done"}
    assert turn.calls == () and turn.recovery_calls == ()


def test_row_any_incomplete_tool_fails_even_with_content() -> None:
    with pytest.raises(ProtocolViolation, match="incomplete tool call"):
        parse_events([
            ROLE,
            chunk({"content": "plenty of text"}),
            tools_frame(full_tool(0, "c")),
            tools_frame(tool(3, arguments="{}")),
            DONE,
        ])


@pytest.mark.parametrize(
    "frames",
    [
        [ROLE, DONE],
        [chunk({"role": "assistant", "content": None}), DONE],
        [chunk({"role": "assistant", "content": ""}), chunk(finish="stop"), DONE],
        [ROLE, {"choices": [], "usage": {"total_tokens": 1}}, DONE],
    ],
)
def test_row_neither_content_nor_valid_tool_is_an_empty_completion(frames: list[Any]) -> None:
    with pytest.raises(EmptyCompletion):
        parse_events(frames)


def test_row_reasoning_only_is_an_empty_completion_not_a_success() -> None:
    with pytest.raises(EmptyCompletion, match="reasoning_content alone"):
        parse_events([chunk({"role": "assistant", "reasoning_content": "deep thought"}),
                      chunk(finish="stop"), DONE])


def test_empty_completion_is_a_protocol_violation() -> None:
    assert issubclass(EmptyCompletion, ProtocolViolation)


@pytest.mark.parametrize(
    "frames",
    [
        [],
        [ROLE],
        [ROLE, chunk({"content": "complete text"}, finish="stop")],
        [ROLE, tools_frame(full_tool(0, "c")), chunk(finish="tool_calls"),
         {"choices": [], "usage": {"total_tokens": 3}}],
    ],
)
def test_row_eof_without_done_always_fails_and_salvages_nothing(frames: list[Any]) -> None:
    stream = feed_all(frames)
    with pytest.raises(StreamTruncated, match=r"without \[DONE\]"):
        stream.close()
    with pytest.raises(StreamTruncated):
        stream.close()


@pytest.mark.parametrize("error", [None, {}, {"message": "overloaded", "type": "server_error"},
                                   "boom", 0, []])
def test_row_top_level_error_key_fails_at_once_whatever_its_value(error: Any) -> None:
    stream = feed_all([ROLE, chunk({"content": "partial"})])
    with pytest.raises(ProviderError, match="event 2"):
        stream.feed({"error": error, "choices": [], "usage": {"total_tokens": 9}})
    # No salvage from a later usage frame or [DONE].
    with pytest.raises(ProviderError):
        stream.feed({"choices": [], "usage": {"total_tokens": 9}})
    with pytest.raises(ProviderError):
        stream.feed(DONE)
    with pytest.raises(ProviderError):
        stream.close()


def test_row_error_key_is_checked_before_anything_else_in_the_frame() -> None:
    with pytest.raises(ProviderError):
        parse_events([{"error": None, "choices": "not even a list"}, DONE])


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"error": {"message": "bad"}}, ProviderError),
        ({"error": None, "choices": []}, ProviderError),
        ([], ProtocolViolation),
        ("text", ProtocolViolation),
        ({}, ProtocolViolation),
        ({"choices": []}, ProtocolViolation),
        ({"choices": [{}]}, ProtocolViolation),
        ({"choices": [{"message": None}]}, ProtocolViolation),
    ],
)
def test_row_nonstreaming_error_or_bad_envelope_fails(body: Any, error: type) -> None:
    with pytest.raises(error):
        parse_completion(body)


# ================================================= the shared safety gate


def test_calls_are_released_only_with_done_and_finish_reason_tool_calls() -> None:
    frames = [ROLE, tools_frame(full_tool(0, "c", arguments='{"q": "x"}')),
              chunk(finish="tool_calls")]
    stream = feed_all(frames)
    assert not stream.done
    with pytest.raises(StreamTruncated):
        stream.close()
    turn = parse_events([*frames, DONE])
    assert [c.arguments for c in turn.calls] == [{"q": "x"}]


@pytest.mark.parametrize("finish", ["length", "stop", "content_filter", "function_call",
                                    "vendor_reason", None])
def test_finish_reason_other_than_tool_calls_never_releases_calls(finish: Any) -> None:
    turn = parse_events([ROLE, tools_frame(full_tool(0, "c")), chunk(finish=finish), DONE])
    assert turn.finish_reason == finish
    assert turn.calls == ()
    assert [r.call_id for r in turn.recovery_calls] == ["c"]
    assert "finish_reason" in turn.recovery_calls[0].reason


@pytest.mark.parametrize(
    "bad",
    ["[]", "null", "1", '"s"', '{"a": 1, "a": 2}', '{"a": NaN}', "{", "", '{"a": 1} x'],
)
def test_one_non_object_arguments_text_moves_every_call_to_recovery(bad: str) -> None:
    turn = parse_events([
        ROLE,
        tools_frame(full_tool(0, "good", arguments='{"ok": true}')),
        tools_frame(full_tool(1, "bad", arguments=bad)),
        chunk(finish="tool_calls"),
        DONE,
    ])
    assert turn.calls == ()
    assert [r.call_id for r in turn.recovery_calls] == ["good", "bad"]
    assert turn.recovery_calls[1].arguments_text == bad
    assert "another call" in turn.recovery_calls[0].reason


def test_executable_call_carries_provider_identity_verbatim() -> None:
    turn = parse_events([ROLE, tools_frame(full_tool(0, "toolu_not_a_call_prefix", "lookup",
                                                     '{"order_ref": "A"}')),
                         chunk(finish="tool_calls"), DONE])
    (call,) = turn.calls
    assert (call.call_id, call.name, call.arguments) == (
        "toolu_not_a_call_prefix", "lookup", {"order_ref": "A"})


def test_turn_digest_detects_mutation() -> None:
    turn = parse_events([ROLE, chunk({"content": "x"}), DONE])
    turn.check_unchanged()
    turn.message["content"] = "y"
    with pytest.raises(SnapshotMutated):
        turn.check_unchanged()


def test_turn_completion_is_an_independent_copy() -> None:
    turn = parse_events([ROLE, tools_frame(full_tool(0, "c")), DONE])
    snapshot = turn.completion
    snapshot.message["tool_calls"][0]["id"] = "changed"
    assert turn.message["tool_calls"][0]["id"] == "c"
    turn.check_unchanged()


# ====================================================== progress (section 5)


def test_progress_one_event_per_frame_however_many_fields_and_tools() -> None:
    stream = ChatCompletionStream()
    event = stream.feed(chunk({
        "role": "assistant", "content": "a", "reasoning_content": "b",
        "tool_calls": [full_tool(0, "c0", arguments="{"), full_tool(1, "c1", arguments="{")],
    }))
    assert event == ProgressEvent(
        0, ("content", "reasoning_content", "tool_arguments", "tool_identity", "tool_name"))
    assert stream.progress_events == (event,)


@pytest.mark.parametrize(
    "frame",
    [
        ROLE,
        {"choices": [], "usage": {"total_tokens": 1}},
        chunk(finish="stop"),
        chunk({}),
        chunk({"content": ""}),
        chunk({"content": None, "reasoning_content": ""}),
        tools_frame(tool(0, id="c0")),
        tools_frame(tool(0, type="function")),
        tools_frame(tool(0, arguments="")),
        tools_frame(tool(0, name="")),
        tools_frame(tool(0, name=None, arguments=None)),
        tools_frame(tool(5)),
        {"choices": []},
    ],
)
def test_progress_none_for_role_usage_finish_empty_repeated_identity_or_empty_args(
    frame: dict[str, Any]
) -> None:
    stream = ChatCompletionStream()
    stream.feed(tools_frame(tool(0, id="c0", type="function")))
    assert stream.feed(frame) is None
    assert len(stream.progress_events) == 1


@pytest.mark.parametrize(
    ("entry", "kind"),
    [
        (tool(0, id="c0"), "tool_identity"),
        (tool(0, type="function"), "tool_identity"),
        (tool(0, name="f"), "tool_name"),
        (tool(0, arguments="{"), "tool_arguments"),
    ],
)
def test_progress_for_first_identity_and_non_empty_tool_fragments(
    entry: dict[str, Any], kind: str
) -> None:
    assert ChatCompletionStream().feed(tools_frame(entry)) == ProgressEvent(0, (kind,))


def test_progress_events_are_kept_on_the_turn() -> None:
    turn = parse_events([ROLE, chunk({"content": "a"}), chunk({}),
                         chunk({"reasoning_content": "r"}), DONE])
    assert [e.frame_index for e in turn.progress_events] == [1, 3]


def test_nonstreaming_body_has_no_progress_events() -> None:
    body = {"choices": [{"message": {"role": "assistant", "content": "x"}}]}
    assert parse_completion(body).progress_events == ()


# ============================================================ request (3.2)


@pytest.mark.parametrize("request_body", [{}, {"n": 1}, {"model": "m", "stream": True}])
def test_request_n_absent_or_strict_integer_one_is_accepted(request_body: Any) -> None:
    assert check_request(request_body, response_mode="openai") is None


@pytest.mark.parametrize("n", [True, 2, 0, 1.0, "1", None, [1]])
def test_request_n_other_than_strict_one_is_rejected(n: Any) -> None:
    with pytest.raises(InvalidArgument, match="n must be"):
        check_request({"n": n}, response_mode="openai")


def test_request_must_be_an_object() -> None:
    for mode in ("openai", "text"):
        with pytest.raises(InvalidArgument):
            check_request([("n", 1)], response_mode=mode)


# ====================================================== non-streaming body


def body_of(message: dict[str, Any], **choice: Any) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"message": message, **choice}], "usage": {"total_tokens": 2}}


def test_nonstreaming_keeps_message_and_tool_extension_fields() -> None:
    message = {
        "role": "assistant", "content": None, "refusal": None, "annotations": [],
        "x_vendor": {"trace": [1]},
        "tool_calls": [{"id": "c", "type": "function", "x_tool_ext": 1,
                        "function": {"name": "f", "arguments": "{}", "x_fn": True}}],
    }
    turn = parse_completion(body_of(message, index=0, finish_reason="tool_calls"))
    assert turn.message == message
    assert turn.message is not message
    assert [c.call_id for c in turn.calls] == ["c"]
    assert turn.response_id == "chatcmpl-1" and turn.usage == {"total_tokens": 2}


def test_nonstreaming_index_is_optional_but_zero_when_present() -> None:
    message = {"role": "assistant", "content": "x"}
    assert parse_completion(body_of(message)).message == message
    for index in (1, False, "0", None):
        with pytest.raises(ProtocolViolation, match="index"):
            parse_completion(body_of(message, index=index))


def test_nonstreaming_requires_exactly_one_choice() -> None:
    body = body_of({"role": "assistant", "content": "x"})
    body["choices"].append(body["choices"][0])
    with pytest.raises(ProtocolViolation, match="exactly one choice"):
        parse_completion(body)


@pytest.mark.parametrize(
    "tool_calls",
    [
        [{"type": "function", "function": {"name": "f", "arguments": "{}"}}],
        [{"id": "", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        [{"id": "c", "function": {"name": "f", "arguments": "{}"}}],
        [{"id": "c", "type": "custom", "custom": {"name": "f", "input": ""}}],
        [{"id": "c", "type": "function", "function": {"arguments": "{}"}}],
        [{"id": "c", "type": "function", "function": {"name": "f"}}],
        [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {}}}],
        [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}},
         {"id": "c", "type": "function", "function": {"name": "g", "arguments": "{}"}}],
        {"id": "c"},
        ["c"],
    ],
)
def test_nonstreaming_tools_need_required_fields_and_unique_ids(tool_calls: Any) -> None:
    with pytest.raises(ProtocolViolation, match="tool_calls"):
        parse_completion(body_of({"role": "assistant", "content": "x", "tool_calls": tool_calls}))


@pytest.mark.parametrize(
    "message",
    [
        {"role": "assistant", "content": None},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "reasoning_content": "r"},
        {"role": "assistant", "content": None, "refusal": "no", "tool_calls": []},
    ],
)
def test_nonstreaming_without_product_is_an_empty_completion(message: dict[str, Any]) -> None:
    with pytest.raises(EmptyCompletion):
        parse_completion(body_of(message))


@pytest.mark.parametrize("role", [None, "user", 1])
def test_nonstreaming_message_role_must_be_assistant(role: Any) -> None:
    message: dict[str, Any] = {"content": "x"}
    if role is not None:
        message["role"] = role
    with pytest.raises(ProtocolViolation, match="role"):
        parse_completion(body_of(message))


# ============================================================ stream object


def test_frame_after_done_fails() -> None:
    stream = feed_all([ROLE, chunk({"content": "x"}), DONE])
    with pytest.raises(ProtocolViolation, match=r"nothing may follow \[DONE\]"):
        stream.feed(chunk({"content": "late"}))


def test_second_done_fails() -> None:
    with pytest.raises(ProtocolViolation, match="done frame"):
        parse_events([ROLE, chunk({"content": "x"}), DONE, DONE])


def test_stream_is_poisoned_after_any_error() -> None:
    stream = ChatCompletionStream()
    with pytest.raises(ProtocolViolation):
        stream.feed(chunk({"role": "user"}))
    for action in (lambda: stream.feed(ROLE), stream.close, stream.snapshot,
                   lambda: stream.feed(DONE)):
        with pytest.raises(ProtocolViolation, match="unusable after an earlier error"):
            action()


def test_close_twice_fails() -> None:
    stream = feed_all([ROLE, chunk({"content": "x"}), DONE])
    stream.close()
    with pytest.raises(ProtocolViolation, match="already closed"):
        stream.close()


def test_errors_name_event_index_and_field_path() -> None:
    with pytest.raises(ProtocolViolation) as info:
        parse_events([ROLE, chunk({}), tools_frame(full_tool(0, "c"), tool(True))])
    assert info.value.where == "event 2.choices[0].delta.tool_calls[1].index"
    assert "choices[0].delta.tool_calls[1].index" not in info.value.message


def test_snapshot_before_done_is_a_copy_without_calls() -> None:
    stream = feed_all([ROLE, tools_frame(tool(0, id="c", name="f", arguments="{"))])
    snap = stream.snapshot()
    assert snap == {"role": "assistant", "tool_calls": [
        {"id": "c", "function": {"name": "f", "arguments": "{"}}]}
    snap["tool_calls"].clear()
    assert stream.snapshot()["tool_calls"]


def test_each_stream_object_is_independent() -> None:
    a, b = ChatCompletionStream(), ChatCompletionStream()
    a.feed(chunk({"role": "assistant", "content": "a"}))
    b.feed(chunk({"role": "assistant", "content": "b"}))
    a.feed(DONE)
    b.feed(DONE)
    assert (a.close().message["content"], b.close().message["content"]) == ("a", "b")


def test_unknown_revision_is_invalid_argument() -> None:
    for revision in ("2099-01-01", 5, None):
        with pytest.raises(InvalidArgument, match="revision") as caught:
            ChatCompletionStream(revision=revision)  # type: ignore[arg-type]
        assert caught.value.where == "revision"
        assert caught.value.disposition == "rejected"


def test_parse_events_needs_an_iterable() -> None:
    with pytest.raises(ProtocolViolation):
        parse_events(5)  # type: ignore[arg-type]


# ================================================================== limits


def test_limit_on_frame_count() -> None:
    stream = ChatCompletionStream(limits=StreamLimits(max_events=3))
    for frame in (ROLE, chunk({"content": "x"}), DONE):
        stream.feed(frame)
    with pytest.raises(LimitExceeded, match="frames"):
        stream.feed(DONE)


def test_limit_on_tool_count() -> None:
    stream = ChatCompletionStream(limits=StreamLimits(max_items=2))
    stream.feed(tools_frame(tool(0), tool(9)))
    with pytest.raises(LimitExceeded, match="tool calls"):
        stream.feed(tools_frame(tool(4)))


def test_limit_on_arguments_bytes_per_call_and_in_total() -> None:
    limits = StreamLimits(max_fragment_bytes=10, max_total_fragment_bytes=15)
    stream = ChatCompletionStream(limits=limits)
    stream.feed(tools_frame(tool(0, arguments="x" * 10)))
    with pytest.raises(LimitExceeded):
        stream.feed(tools_frame(tool(0, arguments="y")))
    stream = ChatCompletionStream(limits=limits)
    stream.feed(tools_frame(tool(0, arguments="x" * 8), tool(1, arguments="x" * 7)))
    with pytest.raises(LimitExceeded, match="in total"):
        stream.feed(tools_frame(tool(2, arguments="z")))


def test_limit_on_content_bytes() -> None:
    stream = ChatCompletionStream(limits=StreamLimits(max_total_fragment_bytes=4))
    stream.feed(chunk({"content": "abcd"}))
    with pytest.raises(LimitExceeded):
        stream.feed(chunk({"content": "é"}))


def test_deeply_nested_usage_is_bounded_without_recursion() -> None:
    deep: Any = {}
    for _ in range(10_000):
        deep = {"d": deep}
    with pytest.raises(LimitExceeded, match="nests deeper"):
        parse_events([ROLE, {"choices": [], "usage": deep}, DONE])


# ================================================================= fixture


def test_fixture_aggregates_to_the_expected_snapshot() -> None:
    fixture = strict_json.loads(FIXTURE.read_bytes())
    assert fixture["format"] == "pcfuzz-fixture/1"
    assert (fixture["contract"], fixture["provider"], fixture["api_family"],
            fixture["api_version"], fixture["contract_revision"], fixture["projection_layer"],
            fixture["sdk_baseline"]) == (
        "openai-chat", "openai", "chat-completions", "v1", "2026-07-21",
        "typed-sse-projection", {"package": "openai", "version": "2.46.0"})
    assert "reasoning_content" in fixture["checked"]
    assert fixture["events"][-1] == {"data": "[DONE]"}
    turn = parse_events(frames_from_fixture_events(fixture["events"]))
    assert turn.message == {
        "role": "assistant",
        "content": "Checking both orders.",
        "reasoning_content": "Two lookups are needed.",
        "tool_calls": [
            {"id": "call-A", "type": "function",
             "function": {"name": "lookup_order", "arguments": '{"order_ref":"A-1"}'}},
            {"id": "call-B", "type": "function",
             "function": {"name": "lookup_order", "arguments": '{"order_ref":"B-2"}'}},
        ],
    }
    assert [(c.call_id, c.arguments) for c in turn.calls] == [
        ("call-A", {"order_ref": "A-1"}), ("call-B", {"order_ref": "B-2"})]
    assert turn.finish_reason == "tool_calls" and turn.response_id == "chatcmpl-fixture-1"
    assert turn.usage is not None and turn.usage["total_tokens"] == 79
    # Content and reasoning arrive in the same frame; the usage-only frame is legal.
    assert [e.frame_index for e in turn.progress_events] == [1, 2, 3, 4, 5]


def test_fixture_loads_through_the_fixture_loader_when_available() -> None:
    try:
        from pcfuzz.contracts.fixtures import load_fixture  # type: ignore[import-not-found]
    except ImportError:
        pytest.skip("contracts.fixtures is not in this tree yet")
    fixture = load_fixture(FIXTURE)
    assert fixture.contract == "openai-chat"
    turn = parse_events(frames_from_fixture_events(fixture.events))
    assert len(turn.calls) == 2


def test_fixture_events_truncated_anywhere_never_release_calls() -> None:
    events = frames_from_fixture_events(strict_json.loads(FIXTURE.read_bytes())["events"])
    for cut in range(len(events)):
        with pytest.raises(ContractError):
            parse_events(events[:cut])


# ============================================================== fuzz target


def test_fuzz_target_replays_its_seed_corpus() -> None:
    module = load_fuzz_target("fuzz_openai_chat")
    corpus = sorted((ROOT / "fuzz" / "corpus" / "fuzz_openai_chat").iterdir())
    assert corpus
    for entry in corpus:
        module.TestOneInput(entry.read_bytes())
    regressions = ROOT / "tests" / "regressions" / "fuzz_openai_chat"
    if regressions.is_dir():
        for entry in sorted(regressions.iterdir()):
            module.TestOneInput(entry.read_bytes())


def test_fuzz_target_accepts_the_fixture_as_raw_sse() -> None:
    module = load_fuzz_target("fuzz_openai_chat")
    events = frames_from_fixture_events(strict_json.loads(FIXTURE.read_bytes())["events"])
    lines = [b"data: " + (e.encode() if isinstance(e, str) else json.dumps(e).encode())
             for e in events]
    turn = module.run_sse(b"\r\n\r\n".join(lines) + b"\r\n\r\n")
    assert turn is not None and len(turn.calls) == 2
    # contracts.sse, not a line splitter: events need their blank line, and a
    # multi-line data field is one payload.
    assert module.run_sse(b"\n".join(lines) + b"\n\n") is None
    assert module.run_sse(b"\n\n".join(lines)) is None


def test_unknown_top_level_and_choice_metadata_is_not_part_of_the_snapshot() -> None:
    frame = chunk({"role": "assistant", "content": "x"})
    frame.update({"object": "chat.completion.chunk", "obfuscation": "pad", "service_tier": "x",
                  "moderation": {"input": {}}, "x_vendor": [1]})
    frame["choices"][0].update({"logprobs": {"content": []}, "x_choice_ext": True})
    turn = parse_events([frame, DONE])
    assert turn.message == {"role": "assistant", "content": "x"}


def test_same_tool_index_twice_in_one_frame_is_merged_in_order() -> None:
    turn = parse_events([ROLE, tools_frame(full_tool(0, "c", arguments='{"a"'),
                                           tool(0, arguments=":1}")),
                         chunk(finish="tool_calls"), DONE])
    assert turn.calls[0].arguments == {"a": 1}


def test_eof_is_reported_before_an_incomplete_tool_or_an_empty_completion() -> None:
    for frames in ([ROLE, tools_frame(tool(0, arguments="{"))], [ROLE]):
        with pytest.raises(StreamTruncated):
            parse_events(frames)


def test_error_messages_never_render_huge_or_deep_values() -> None:
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    huge = 1 << 20_000
    for bad in (deep, huge, "r" * 1_000_000):
        for frames in ([chunk({"role": "assistant"}, index=bad), DONE],
                       [chunk({"role": bad}), DONE],
                       [tools_frame(tool(0, id=bad)), DONE],
                       [tools_frame(tool(0, type=bad)), DONE]):
            with pytest.raises(ProtocolViolation) as info:
                parse_events(frames)
            assert len(str(info.value)) < 400
        with pytest.raises(InvalidArgument) as request_info:
            check_request({"n": bad}, response_mode="openai")
        assert len(str(request_info.value)) < 400
    with pytest.raises(InvalidArgument):
        ChatCompletionStream(revision=[])  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        check_request({}, response_mode="openai", revision={})  # type: ignore[arg-type]


def test_usage_with_an_integer_too_large_for_json_text_is_rejected() -> None:
    # The shared JSON bound (decision 25): integers of at most 1,000 digits.
    with pytest.raises(LimitExceeded, match="over 1000 digits"):
        parse_events([ROLE, chunk({"content": "x"}), {"choices": [], "usage": {"t": 1 << 20_000}},
                      DONE])


# ====================================================== review: attacks


class _KeyWithBrokenStr:
    """A dict key a Python caller could pass: rendering it raises."""

    def __str__(self) -> str:
        raise RuntimeError("rendering this key must never be attempted")

    __repr__ = __str__

    def __hash__(self) -> int:
        return 1


_HUGE_INT = 1 << 20_000  # str() of it raises ValueError (over 4,300 digits)


@pytest.mark.parametrize("key", [_HUGE_INT, (_HUGE_INT,), _KeyWithBrokenStr(), 1, None],
                         ids=["huge-int", "tuple", "broken-str", "int", "none"])
@pytest.mark.parametrize("where", ["delta", "tool", "function"])
def test_unknown_non_string_field_names_fail_without_rendering_the_key(
    key: Any, where: str
) -> None:
    # Python callers can pass dicts whose keys are not strings; naming them in the
    # error message must not call str() on them.
    entry = full_tool(0, "c")
    delta: dict[Any, Any] = {"content": "x"}
    if where == "delta":
        delta[key] = None
    elif where == "tool":
        entry[key] = None
    else:
        entry["function"][key] = None
    delta["tool_calls"] = [entry]
    with pytest.raises(ProtocolViolation, match="unknown") as info:
        parse_events([ROLE, chunk(delta), DONE])
    assert len(str(info.value)) < 400


@pytest.mark.parametrize("index", [_HUGE_INT, 2**63], ids=["huge", "2**63"])
def test_row_tool_index_beyond_the_int64_range_fails(index: int) -> None:
    with pytest.raises(ProtocolViolation, match=r"tool_calls\[0\]\.index") as info:
        parse_events([ROLE, tools_frame(full_tool(0, "c") | {"index": index}),
                      chunk(finish="tool_calls"), DONE])
    assert len(str(info.value)) < 400


def test_row_tool_index_at_the_int64_bound_is_accepted() -> None:
    turn = parse_events([ROLE, tools_frame(full_tool(2**63 - 1, "c")),
                         chunk(finish="tool_calls"), DONE])
    assert [c.call_id for c in turn.calls] == ["c"]


def test_duplicate_tool_id_message_never_renders_a_huge_index() -> None:
    with pytest.raises(ProtocolViolation, match="duplicate tool id") as info:
        parse_events([ROLE, tools_frame(full_tool(2**63 - 1, "same"), full_tool(0, "same")),
                      DONE])
    assert len(str(info.value)) < 400


@pytest.mark.parametrize("function_call", [{"name": "f", "arguments": "{}"}, {}, "f"])
def test_nonstreaming_legacy_function_call_is_unsupported_not_silently_dropped(
    function_call: Any,
) -> None:
    # The stream rejects a non-null legacy function_call; a body with content and a
    # function_call must not pass as a plain text success that drops the call.
    message = {"role": "assistant", "content": "calling f", "function_call": function_call}
    with pytest.raises(UnsupportedProviderState, match="function_call"):
        parse_completion(body_of(message, finish_reason="function_call"))


def test_nonstreaming_null_function_call_and_refusal_are_kept() -> None:
    message = {"role": "assistant", "content": "x", "function_call": None, "refusal": "no"}
    assert parse_completion(body_of(message)).message == message


@pytest.mark.parametrize("extra_body", [{"n": 2}, {"n": True}, {"n": None}])
def test_request_n_in_extra_body_is_checked_even_when_shadowed(extra_body: Any) -> None:
    # Design 3.2: the source's extra_body and the final payload are both checked;
    # an illegal n is not accepted because a valid one shadows it.
    for request in ({"extra_body": extra_body}, {"n": 1, "extra_body": extra_body}):
        with pytest.raises(InvalidArgument, match=r"extra_body\.n"):
            check_request(request, response_mode="openai")


def test_request_extra_body_with_n_one_or_without_n_is_accepted() -> None:
    assert check_request({"n": 1, "extra_body": {"n": 1, "seed": 3}}, response_mode="openai") is None
    assert check_request({"extra_body": {}}, response_mode="openai") is None
    assert check_request({"extra_body": None}, response_mode="openai") is None  # the SDK's default


@pytest.mark.parametrize("extra_body", [[], "n=2", 2, [("n", 2)]])
def test_request_extra_body_must_be_an_object(extra_body: Any) -> None:
    with pytest.raises(InvalidArgument, match="extra_body"):
        check_request({"extra_body": extra_body}, response_mode="openai")


def test_copy_json_error_paths_stay_short_for_long_keys_and_deep_nesting() -> None:
    usage: Any = {"bad": float("inf")}
    for level in range(200):
        usage = {f"k{level}" * 500: usage}
    with pytest.raises(ProtocolViolation, match="non-finite") as info:
        parse_events([ROLE, chunk({"content": "x"}), {"choices": [], "usage": usage}, DONE])
    assert len(str(info.value)) < 1000


def test_replayed_argument_fragment_is_undetectable_and_documented() -> None:
    # Chat Completions chunks carry no sequence number or event id: a replayed
    # fragment is indistinguishable from a new one. The aggregate is exactly the
    # concatenation of what arrived (never deduplicated by guess); the doc's
    # "Known limits" says so.
    frag = tools_frame(tool(0, arguments="1"))
    turn = parse_events([ROLE, tools_frame(tool(0, id="c", type="function", name="f",
                                                arguments='{"a":')),
                         frag, frag, tools_frame(tool(0, arguments="}")),
                         chunk(finish="tool_calls"), DONE])
    assert turn.message["tool_calls"][0]["function"]["arguments"] == '{"a":11}'
    doc = (ROOT / "docs" / "openai_chat.md").read_text()
    assert "replayed" in doc


def _fuzz_module() -> Any:
    return load_fuzz_target("fuzz_openai_chat")


def test_fuzz_target_structured_mode_reaches_release_and_every_certain_rejection() -> None:
    # Raw bytes rarely assemble a successful tool turn; the structure-aware mode
    # must reach released calls, recovery calls, text turns, empty completions and
    # every mutation whose rejection it asserts.
    import random

    module = _fuzz_module()
    rng = random.Random(20260721)
    labels: set[str] = set()
    for _ in range(800):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(20, 240)))
        labels.add(module.run_structured(data))
        module.TestOneInput(bytes([module.STRUCTURED]) + data)
    assert {"released", "recovery", "text", "empty"} <= labels
    assert {f"rejected {name}" for name in module._REJECTING} <= labels


def test_fuzz_target_structured_seeds_include_released_calls() -> None:
    module = _fuzz_module()
    seeds = sorted((ROOT / "fuzz" / "corpus" / "fuzz_openai_chat").glob("structured_*"))
    outcomes = [module.run_structured(seed.read_bytes()[1:]) for seed in seeds]
    assert "released" in outcomes


def test_fragments_after_a_finish_reason_are_aggregated_because_done_is_the_gate() -> None:
    # Decision: finish_reason is a label fixed at its first value, not a gate.
    # Fragments arriving after it are still part of the snapshot, and the calls
    # are judged once, at [DONE], on the complete concatenation.
    turn = parse_events([
        ROLE,
        tools_frame(tool(0, id="c", type="function", name="f", arguments='{"a"')),
        chunk(finish="tool_calls"),
        tools_frame(tool(0, arguments=":1}")),
        DONE,
    ])
    assert turn.message["tool_calls"][0]["function"]["arguments"] == '{"a":1}'
    assert [c.arguments for c in turn.calls] == [{"a": 1}]


def test_fixture_done_event_is_only_the_sentinel_through_the_fixture_mapping() -> None:
    assert frames_from_fixture_events([{"data": "[DONE]"}]) == [DONE]
    for near in ({"data": "[DONE]", "x": 1}, {"data": "[done]"}, {"data": ["[DONE]"]}):
        assert frames_from_fixture_events([near]) == [near]
    with pytest.raises(ProtocolViolation, match="choices"):
        parse_events([ROLE, chunk({"content": "x"}), {"data": "[DONE]"}])


def test_unknown_delta_field_fails_even_in_a_frame_that_is_otherwise_rejected() -> None:
    # Found by the schema-drawn drift property: a frame may fail for another reason
    # first (here a duplicate tool id); either way it is a ProtocolViolation.
    frame = chunk({"tool_calls": [{"index": 0, "id": "0"}, {"index": 1, "id": "0"}], "0": None})
    with pytest.raises(ProtocolViolation):
        parse_events([ROLE, frame, DONE])
