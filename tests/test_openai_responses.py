"""OpenAI Responses contract: red-team example tests, one per rule.

Each test is named after the rule it proves and uses the pinned fixture (reasoning
item, assistant message, two parallel function calls with interleaved argument
deltas, ``response.completed``) or a small variation of it.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

import pytest
from _fuzz import load_fuzz_target
from _openai_responses import (
    ARGS_DONE_A,
    ARGS_DONE_B,
    CALL_A_ADDED,
    CALL_B_ADDED,
    COMPLETED,
    CREATED,
    FIRST_DELTA,
    FIXTURE,
    IN_PROGRESS,
    ITEM_DONE_A,
    ITEM_DONE_B,
    MESSAGE_ADDED,
    MESSAGE_DONE,
    PRIOR,
    REASONING_DONE,
    RESULTS,
    ROOT,
    TEXT_DELTA,
    TOOLS,
    R,
    call_tuples,
    fixture_events,
    renumber,
    stateful,
    stateless,
    terminal_output,
)

from pcfuzz.contracts import openai_responses as oair
from pcfuzz.contracts._stream import StreamLimits
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
from pcfuzz.contracts.fixtures import load_fixture
from pcfuzz.contracts.openai_responses import (
    OpenAIResponsesStream,
    build_openai_responses_continuation,
    parse_events,
)
from pcfuzz.contracts.openai_responses._tables import check_tables
from pcfuzz.contracts.results import ModelVisibleToolResult
from pcfuzz.strategies.openai_responses import strict_tool


def test_fixture_metadata_is_pinned() -> None:
    fixture = load_fixture(FIXTURE)
    assert (fixture.contract, fixture.provider, fixture.api_family, fixture.api_version) == (
        "openai-responses", "openai", "responses", "v1")
    assert fixture.projection_layer == "typed-sse-projection"
    assert (fixture.sdk_package, fixture.sdk_version) == ("openai", "2.46.0")
    assert fixture.contract_revision == fixture.reviewed == "2026-07-21"
    assert "sequence_number" in fixture.checked and "response_id" in fixture.checked


def test_fixture_layout_is_as_documented() -> None:
    types = [e["type"] for e in fixture_events()]
    assert types[CREATED] == "response.created" and types[COMPLETED] == "response.completed"
    assert types[CALL_A_ADDED] == types[CALL_B_ADDED] == "response.output_item.added"
    assert types[ARGS_DONE_A] == types[ARGS_DONE_B] == "response.function_call_arguments.done"
    assert types[TEXT_DELTA] == "response.output_text.delta"
    assert types[REASONING_DONE] == types[MESSAGE_DONE] == "response.output_item.done"
    assert len(types) == COMPLETED + 1


def test_fixture_parses_to_two_interleaved_calls_in_a_tool_turn() -> None:
    turn = parse_events(fixture_events())
    assert call_tuples(turn) == [
        ("call-A", "lookup_order", {"order_ref": "A-1001"}, "function-item-1", 2),
        ("call-B", "lookup_order", {"order_ref": "B-2002", "include_items": True},
         "function-item-2", 3),
    ]
    assert turn.is_tool_turn and not turn.is_final_answer
    assert turn.response_id == "response-A" and turn.status == "completed"
    assert [item["type"] for item in turn.output] == [
        "reasoning", "message", "function_call", "function_call"]
    assert turn.calls[0].raw_item is turn.output[2]


def test_interleaved_deltas_are_separated_by_output_index_and_item_id() -> None:
    # Deltas of the two calls alternate one character at a time: a parser with a single
    # "current call" variable concatenates them into one garbled string.
    events = fixture_events()
    a, b = '{"order_ref":"A-1001"}', '{"order_ref":"B-2002","include_items":true}'
    deltas = []
    for i in range(max(len(a), len(b))):
        for index, item_id, text in ((2, "function-item-1", a), (3, "function-item-2", b)):
            if i < len(text):
                deltas.append({"type": "response.function_call_arguments.delta",
                               "item_id": item_id, "output_index": index, "delta": text[i]})
    events[FIRST_DELTA:ARGS_DONE_B] = deltas
    turn = parse_events(renumber(events))
    assert [c.arguments for c in turn.calls] == [json.loads(a), json.loads(b)]


# ---------------------------------------------------------------------------
# sequence_number


def test_sequence_number_must_increase_duplicate_fails() -> None:
    events = fixture_events()
    events[FIRST_DELTA + 1]["sequence_number"] = events[FIRST_DELTA]["sequence_number"]
    with pytest.raises(ProtocolViolation, match="does not increase"):
        parse_events(events)


def test_sequence_number_must_increase_reversed_fails() -> None:
    events = fixture_events()
    events[FIRST_DELTA]["sequence_number"], events[FIRST_DELTA + 1]["sequence_number"] = (
        events[FIRST_DELTA + 1]["sequence_number"], events[FIRST_DELTA]["sequence_number"])
    with pytest.raises(ProtocolViolation, match=f"event {FIRST_DELTA + 1}"):
        parse_events(events)


def test_sequence_number_need_not_start_at_zero_or_be_contiguous() -> None:
    events = fixture_events()
    for number, event in enumerate(events):
        event["sequence_number"] = 1_000_000 + number * number * 7
    assert len(parse_events(events).calls) == 2


def test_sequence_number_is_required_despite_guide_examples() -> None:
    # Function-calling guide examples carry response_id and omit sequence_number; the
    # reference and the pinned SDK require sequence_number.
    events = fixture_events()
    delta = events[FIRST_DELTA]
    delta["response_id"] = "response-A"
    del delta["sequence_number"]
    with pytest.raises(ProtocolViolation, match="sequence_number is required"):
        parse_events(events)


@pytest.mark.parametrize("bad", [True, 1.0, "7", None, -1, 2**63])
def test_sequence_number_must_be_a_non_negative_int64(bad: Any) -> None:
    events = fixture_events()
    events[CREATED]["sequence_number"] = bad
    with pytest.raises(ProtocolViolation, match="sequence_number"):
        parse_events(events)


def test_response_id_extra_field_is_tolerated() -> None:
    events = fixture_events()
    for event in events[FIRST_DELTA:ITEM_DONE_B]:
        event["response_id"] = "response-A"
    assert len(parse_events(events).calls) == 2


def test_unknown_optional_item_fields_are_kept_in_raw() -> None:
    events = fixture_events()
    for item in (events[ITEM_DONE_A]["item"], terminal_output(events)[2]):
        item["x_future_field"] = {"kept": [1, 2]}
    turn = parse_events(events)
    assert turn.output[2]["x_future_field"] == {"kept": [1, 2]}
    assert turn.calls[0].raw_item["x_future_field"] == {"kept": [1, 2]}



@pytest.mark.parametrize("field", ["summary", "content"])
def test_unknown_optional_item_fields_are_kept_even_when_named_like_another_items_parts(
        field: str) -> None:
    # ``summary`` is a part family of reasoning items only, ``content`` of message and
    # reasoning items; on an item type without that family the field is unknown drift,
    # kept as-is, never mistaken for streamed parts.
    events = fixture_events()
    owner = {"summary": (MESSAGE_DONE, 1), "content": (ITEM_DONE_A, 2)}[field]
    for item in (events[owner[0]]["item"], terminal_output(events)[owner[1]]):
        item[field] = "future drift"
    turn = parse_events(events)
    assert turn.output[owner[1]][field] == "future drift"
    assert [c.call_id for c in turn.calls] == ["call-A", "call-B"]


# ---------------------------------------------------------------------------
# delta / done / item done / terminal agreement


def test_arguments_done_must_equal_concatenated_deltas() -> None:
    events = fixture_events()
    events[ARGS_DONE_A]["arguments"] = '{"order_ref":"A-9999"}'
    with pytest.raises(ProtocolViolation, match="concatenated"):
        parse_events(events)


def test_arguments_done_name_must_match_the_item() -> None:
    events = fixture_events()
    events[ARGS_DONE_A]["name"] = "delete_order"
    with pytest.raises(ProtocolViolation, match="name"):
        parse_events(events)


def test_arguments_done_requires_name_in_the_pinned_revision() -> None:
    events = fixture_events()
    del events[ARGS_DONE_A]["name"]
    # today's shape (openai 3.57.0 dropped the field) under the pinned revision: a
    # rejection that names the drift and the revision that accepts the shape
    with pytest.raises(ProtocolViolation, match=r"'name'.*drift: contract revision "
                                                r"2026-12-01 accepts this shape"):
        parse_events(events, revision="2026-07-21")


def test_arguments_done_without_name_parses_under_the_current_revision() -> None:
    events = fixture_events()
    del events[ARGS_DONE_A]["name"]
    turn = parse_events(events, revision="2026-12-01")
    assert turn.revision == "2026-12-01" == oair.REVISION
    assert [c.name for c in turn.calls] == [c.name for c in parse_events(fixture_events()).calls]


@pytest.mark.parametrize("revision", sorted(oair.REVISIONS))
def test_a_present_name_on_arguments_done_must_match_the_item_in_every_revision(
        revision: str) -> None:
    events = fixture_events()
    events[ARGS_DONE_A]["name"] = "other_tool"
    with pytest.raises(ProtocolViolation, match="differs from the item's name"):
        parse_events(events, revision=revision)


def test_a_later_revision_may_drop_name_from_arguments_done(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The rule is a table entry: a revision without it sits beside the pinned one.
    pinned = oair.REVISIONS["2026-07-21"]
    done = pinned.events["response.function_call_arguments.done"]
    required = {k: v for k, v in done.required.items() if k != "name"}
    events_table = dict(pinned.events)
    events_table["response.function_call_arguments.done"] = replace(done, required=required)
    later = replace(pinned, events=events_table)
    check_tables(later, "test-later")  # a whole revision, not a half-built one
    monkeypatch.setitem(oair.REVISIONS, "test-later", later)  # type: ignore[index]
    events = fixture_events()
    del events[ARGS_DONE_A]["name"]
    assert len(parse_events(events, revision="test-later").calls) == 2
    with pytest.raises(ProtocolViolation):
        parse_events(events, revision="2026-07-21")


@pytest.mark.parametrize("field, value", [
    ("arguments", '{"order_ref":"A-1002"}'), ("call_id", "call-Z"), ("name", "other"),
    ("id", "function-item-9"),
])
def test_output_item_done_must_agree_with_the_stream(field: str, value: str) -> None:
    events = fixture_events()
    events[ITEM_DONE_A]["item"][field] = value
    with pytest.raises(ProtocolViolation):
        parse_events(events)


@pytest.mark.parametrize("field, value", [
    ("arguments", '{"order_ref":"A-1002"}'), ("call_id", "call-Z"), ("name", "other"),
    ("id", "function-item-9"), ("status", "in_progress"),
])
def test_terminal_output_must_agree_with_done_items(field: str, value: str) -> None:
    events = fixture_events()
    terminal_output(events)[2][field] = value
    with pytest.raises(ProtocolViolation, match=r"response\.output\[2\]"):
        parse_events(events)


def test_item_done_before_arguments_done_fails() -> None:
    events = fixture_events()
    events[ARGS_DONE_A], events[ITEM_DONE_A] = events[ITEM_DONE_A], events[ARGS_DONE_A]
    with pytest.raises(ProtocolViolation, match="before response.function_call_arguments.done"):
        parse_events(renumber(events))


def test_delta_after_arguments_done_fails() -> None:
    events = fixture_events()
    extra = {"type": "response.function_call_arguments.delta", "item_id": "function-item-1",
             "output_index": 2, "delta": " "}
    events.insert(ARGS_DONE_A + 1, extra)
    with pytest.raises(ProtocolViolation, match="after arguments.done"):
        parse_events(renumber(events))


@pytest.mark.parametrize("field, value, message", [
    ("output_index", 7, "names no added item"),
    ("output_index", 3, "is not the id"),
    ("item_id", "call-A", "is not the id"),
    ("output_index", 1, "is not the id"),
])
def test_argument_delta_binds_by_output_index_and_item_id(field: str, value: Any,
                                                          message: str) -> None:
    events = fixture_events()
    events[FIRST_DELTA][field] = value
    with pytest.raises(ProtocolViolation, match=message):
        parse_events(events)


def test_argument_delta_to_a_message_item_fails() -> None:
    events = fixture_events()
    events[FIRST_DELTA].update(item_id="message-item-1", output_index=1)
    with pytest.raises(ProtocolViolation):
        parse_events(events)


# ---------------------------------------------------------------------------
# Item lifecycle (every item, not only function calls)


def test_terminal_missing_a_reasoning_item_fails_even_if_calls_pair() -> None:
    events = fixture_events()
    del terminal_output(events)[0]
    with pytest.raises(ProtocolViolation, match="terminal output has 3 items"):
        parse_events(events)


def test_terminal_output_must_keep_item_order() -> None:
    events = fixture_events()
    output = terminal_output(events)
    output[0], output[1] = output[1], output[0]
    with pytest.raises(ProtocolViolation, match=r"output\[0\]"):
        parse_events(events)


def test_reasoning_item_never_done_blocks_release() -> None:
    events = fixture_events()
    del events[REASONING_DONE]
    with pytest.raises(ProtocolViolation, match="never done"):
        parse_events(renumber(events))


def test_message_item_never_added_fails() -> None:
    events = fixture_events()
    del events[MESSAGE_ADDED]
    with pytest.raises(ProtocolViolation):
        parse_events(renumber(events))


def test_message_text_must_match_its_deltas() -> None:
    events = fixture_events()
    events[TEXT_DELTA]["delta"] = "Deleting "
    with pytest.raises(ProtocolViolation, match="differs from the concatenated deltas"):
        parse_events(events)


def test_message_done_content_must_match_streamed_parts() -> None:
    events = fixture_events()
    events[MESSAGE_DONE]["item"]["content"][0]["text"] = "Something else."
    with pytest.raises(ProtocolViolation, match="differs from its streamed part"):
        parse_events(events)


def test_output_index_must_be_the_next_index() -> None:
    events = fixture_events()
    events[CALL_B_ADDED]["output_index"] = 5
    with pytest.raises(ProtocolViolation, match="not the next output index"):
        parse_events(events)


def test_item_added_twice_at_same_index_fails() -> None:
    events = fixture_events()
    events.insert(CALL_A_ADDED + 1, copy.deepcopy(events[CALL_A_ADDED]))
    with pytest.raises(ProtocolViolation):
        parse_events(renumber(events))


def test_duplicate_call_id_fails() -> None:
    events = fixture_events()
    events[CALL_B_ADDED]["item"]["call_id"] = "call-A"
    with pytest.raises(ProtocolViolation, match="duplicate call_id"):
        parse_events(events)


def test_item_done_twice_fails() -> None:
    events = fixture_events()
    events.insert(ITEM_DONE_A + 1, copy.deepcopy(events[ITEM_DONE_A]))
    with pytest.raises(ProtocolViolation, match="already done"):
        parse_events(renumber(events))


# ---------------------------------------------------------------------------
# Arguments parse strictly, only after completion


@pytest.mark.parametrize("arguments, error", [
    ('["A-1001"]', ProtocolViolation),
    ('"A-1001"', ProtocolViolation),
    ('{"order_ref":"A","order_ref":"B"}', StrictJSONError),
    ('{"n": NaN}', StrictJSONError),
    ('{"order_ref": "A"', StrictJSONError),
])
def test_arguments_must_be_a_strict_json_object(arguments: str, error: type) -> None:
    events = fixture_events()
    events[FIRST_DELTA:ARGS_DONE_B] = [
        {"type": "response.function_call_arguments.delta", "item_id": "function-item-1",
         "output_index": 2, "delta": arguments},
        {"type": "response.function_call_arguments.delta", "item_id": "function-item-2",
         "output_index": 3, "delta": '{"order_ref":"B-2002","include_items":true}'},
    ]
    events = [e for e in events]
    done_a = next(e for e in events if e.get("type") == "response.function_call_arguments.done"
                  and e["item_id"] == "function-item-1")
    done_a["arguments"] = arguments
    item_done = next(e for e in events if e.get("type") == "response.output_item.done"
                     and e["item"]["id"] == "function-item-1")
    item_done["item"]["arguments"] = arguments
    events[-1]["response"]["output"][2]["arguments"] = arguments
    with pytest.raises(error, match=r"output\[2\]\.arguments"):
        parse_events(renumber(events))


def test_arguments_are_not_parsed_before_the_terminal() -> None:
    events = fixture_events()
    events[FIRST_DELTA]["delta"] = "not json at all"
    stream = OpenAIResponsesStream()
    for event in events[:ARGS_DONE_B]:
        stream.feed(event)
    pending = {p.call_id: p for p in stream.pending_calls()}
    assert pending["call-A"].arguments_text.startswith("not json at all")
    assert not pending["call-A"].arguments_done and stream.calls == ()
    with pytest.raises(StreamTruncated):
        stream.close()


# ---------------------------------------------------------------------------
# Terminal gate: nothing before completed, nothing on failure


def test_no_call_is_executable_before_the_terminal() -> None:
    stream = OpenAIResponsesStream()
    for event in fixture_events()[:-1]:
        stream.feed(event)
        assert stream.calls == () and not stream.terminated
    stream.feed(fixture_events()[-1])
    assert len(stream.calls) == 2


@pytest.mark.parametrize("cut", range(COMPLETED + 1))
def test_eof_before_the_terminal_releases_nothing(cut: int) -> None:
    with pytest.raises(StreamTruncated, match="before response.completed"):
        parse_events(fixture_events()[:cut])


@pytest.mark.parametrize("terminal, status", [("response.failed", "failed"),
                                              ("response.incomplete", "incomplete")])
def test_failed_or_incomplete_terminal_releases_nothing(terminal: str, status: str) -> None:
    events = fixture_events()
    events[COMPLETED]["type"] = terminal
    events[COMPLETED]["response"]["status"] = status
    stream = OpenAIResponsesStream()
    for event in events[:-1]:
        stream.feed(event)
    with pytest.raises(ProviderError, match=terminal):
        stream.feed(events[-1])
    assert stream.calls == ()
    with pytest.raises(ProviderError):
        stream.close()


@pytest.mark.parametrize("position", [0, 1, ITEM_DONE_A, COMPLETED])
def test_error_event_releases_nothing(position: int) -> None:
    events = fixture_events()
    events.insert(position, {"type": "error", "code": "server_error", "message": "boom",
                             "param": None})
    with pytest.raises(ProviderError, match="boom"):
        parse_events(renumber(events))


def test_completed_with_a_non_completed_status_fails() -> None:
    events = fixture_events()
    events[COMPLETED]["response"]["status"] = "in_progress"
    with pytest.raises(ProtocolViolation, match="response.status"):
        parse_events(events)


@pytest.mark.parametrize("status", ["requires_action", "COMPLETED", ""])
def test_unknown_response_status_fails_closed(status: str) -> None:
    events = fixture_events()
    events[COMPLETED]["response"]["status"] = status
    with pytest.raises(UnsupportedProviderState, match="unknown response status"):
        parse_events(events)


def test_completed_response_with_an_error_fails() -> None:
    events = fixture_events()
    events[COMPLETED]["response"]["error"] = {"code": "server_error", "message": "x"}
    with pytest.raises(ProtocolViolation, match="non-null error"):
        parse_events(events)


def test_completed_response_with_incomplete_details_fails() -> None:
    # A Response that says it completed and also says why it stopped early is
    # self-contradictory: fail closed like a non-null error (decision 10).
    events = fixture_events()
    events[COMPLETED]["response"]["incomplete_details"] = {"reason": "max_output_tokens"}
    with pytest.raises(ProtocolViolation, match="non-null incomplete_details"):
        parse_events(events)


def test_event_after_the_terminal_fails() -> None:
    events = fixture_events()
    events.append(copy.deepcopy(events[IN_PROGRESS]))
    events[-1]["sequence_number"] = events[-2]["sequence_number"] + 1
    with pytest.raises(ProtocolViolation, match="after the terminal"):
        parse_events(events)


def test_first_event_must_be_response_created() -> None:
    with pytest.raises(ProtocolViolation, match="first event must be response.created"):
        parse_events(fixture_events()[1:])


def test_terminal_response_id_must_be_the_created_id() -> None:
    events = fixture_events()
    events[COMPLETED]["response"]["id"] = "response-B"
    with pytest.raises(ProtocolViolation, match="differs from the stream"):
        parse_events(events)


def test_stream_is_poisoned_after_an_error() -> None:
    events = fixture_events()
    events[FIRST_DELTA]["sequence_number"] = 0
    stream = OpenAIResponsesStream()
    for event in events[:FIRST_DELTA]:
        stream.feed(event)
    with pytest.raises(ProtocolViolation):
        stream.feed(events[FIRST_DELTA])
    for event in events[FIRST_DELTA + 1:]:
        with pytest.raises(ProtocolViolation, match="unusable after an earlier error"):
            stream.feed(event)
    with pytest.raises(ProtocolViolation):
        stream.close()
    assert stream.calls == ()



def test_a_poisoned_stream_exposes_no_calls_even_after_a_good_terminal() -> None:
    # A trailing event after response.completed poisons the stream: close() raises, so
    # the calls property must not hand out what close() refuses to return.
    events = fixture_events()
    stream = OpenAIResponsesStream()
    for event in events:
        stream.feed(event)
    assert [c.call_id for c in stream.calls] == ["call-A", "call-B"]
    trailing = copy.deepcopy(events[IN_PROGRESS])
    trailing["sequence_number"] = events[COMPLETED]["sequence_number"] + 1
    with pytest.raises(ProtocolViolation, match="after the terminal"):
        stream.feed(trailing)
    assert stream.calls == ()
    assert not stream.terminated
    with pytest.raises(ProtocolViolation):
        stream.close()


def test_completed_with_only_function_calls_is_a_tool_turn_not_a_final_answer() -> None:
    events = fixture_events()
    keep = [e for e in events if e.get("output_index") not in (0, 1)]
    for event in keep:
        if "output_index" in event:
            event["output_index"] -= 2
    keep[-1]["response"]["output"] = terminal_output(events)[2:]
    turn = parse_events(keep)
    assert turn.is_tool_turn and not turn.is_final_answer
    assert [item["type"] for item in turn.output] == ["function_call", "function_call"]


def test_message_only_completed_turn_is_a_final_answer() -> None:
    events = fixture_events()
    keep = events[:MESSAGE_DONE + 1] + [events[COMPLETED]]
    keep[-1]["response"]["output"] = terminal_output(events)[:2]
    turn = parse_events(keep)
    assert turn.is_final_answer and not turn.is_tool_turn and turn.calls == ()
    with pytest.raises(ContinuationError, match="no function calls"):
        stateful(turn, results=[])


# ---------------------------------------------------------------------------
# Identity: opaque ids, call_id vs item id, callers, namespaces


def test_ids_are_opaque_text_without_prefix_assumptions() -> None:
    text = json.dumps(fixture_events())
    for old, new in (("response-A", "resp_\u00e9 1"), ("call-A", "fc_1"),
                     ("function-item-1", "call_x"), ("call-B", "\u4e2d"),
                     ("function-item-2", "msg_2")):
        text = text.replace(f'"{old}"', json.dumps(new))
    turn = parse_events(json.loads(text))
    assert [(c.call_id, c.item_id) for c in turn.calls] == [("fc_1", "call_x"), ("\u4e2d", "msg_2")]
    assert turn.response_id == "resp_\u00e9 1"


def test_results_associate_by_call_id_never_item_id() -> None:
    turn = parse_events(fixture_events())
    with pytest.raises(ResultBindingError):
        stateful(turn, results=[R("function-item-1"), R("function-item-2")])
    payload = stateful(turn)
    assert [o["call_id"] for o in payload["input"]] == ["call-A", "call-B"]


def test_direct_caller_metadata_is_retained_as_is() -> None:
    events = fixture_events()
    caller = {"type": "direct", "x_note": "kept"}
    for item in (events[CALL_A_ADDED]["item"], events[ITEM_DONE_A]["item"],
                 terminal_output(events)[2]):
        item["caller"] = copy.deepcopy(caller)
    turn = parse_events(events)
    assert turn.calls[0].caller == caller and turn.output[2]["caller"] == caller
    payload = stateless(turn)
    assert payload["input"][1 + 2]["caller"] == caller


def test_programmatic_caller_fails_closed() -> None:
    events = fixture_events()
    events[CALL_A_ADDED]["item"]["caller"] = {"type": "program", "caller_id": "program-1"}
    with pytest.raises(UnsupportedProviderState, match="programmatic"):
        parse_events(events)


def test_unknown_caller_type_fails_closed() -> None:
    events = fixture_events()
    events[CALL_A_ADDED]["item"]["caller"] = {"type": "agent"}
    with pytest.raises(UnsupportedProviderState, match="unknown caller type"):
        parse_events(events)


def test_caller_changed_between_added_and_done_fails() -> None:
    events = fixture_events()
    events[ITEM_DONE_A]["item"]["caller"] = {"type": "direct"}
    with pytest.raises(ProtocolViolation, match="caller"):
        parse_events(events)


def test_namespaced_function_call_fails_closed() -> None:
    events = fixture_events()
    events[CALL_A_ADDED]["item"]["namespace"] = "orders"
    with pytest.raises(UnsupportedProviderState, match="namespace"):
        parse_events(events)


@pytest.mark.parametrize("where", ["done", "terminal"])
@pytest.mark.parametrize("field, value", [("namespace", "orders"),
                                          ("caller", {"type": "program", "id": "p-1"})])
def test_namespace_or_programmatic_caller_appearing_late_still_fails_closed(
        where: str, field: str, value: Any) -> None:
    # The origin of a call may be announced only on its final form: a namespace or a
    # programmatic caller on the done item or in the terminal output (absent at added)
    # must not slip through as an ordinary call.
    events = fixture_events()
    targets = {"done": [events[ITEM_DONE_A]["item"], terminal_output(events)[2]],
               "terminal": [terminal_output(events)[2]]}[where]
    for item in targets:
        item[field] = copy.deepcopy(value)
    with pytest.raises((UnsupportedProviderState, ProtocolViolation)):
        parse_events(events)


def test_explicit_null_namespace_and_caller_are_ordinary_calls() -> None:
    events = fixture_events()
    for item in (events[CALL_A_ADDED]["item"], events[ITEM_DONE_A]["item"],
                 terminal_output(events)[2]):
        item["namespace"] = None
        item["caller"] = None
    turn = parse_events(events)
    assert turn.calls[0].caller is None
    assert turn.calls[0].raw_item["namespace"] is None


# ---------------------------------------------------------------------------
# Unknown semantics fail closed


@pytest.mark.parametrize("item_type", ["custom_tool_call", "computer_call", "program",
                                       "mcp_call", "local_shell_call", "web_search_call"])
def test_known_unimplemented_item_types_fail_closed(item_type: str) -> None:
    events = fixture_events()
    events[CALL_A_ADDED]["item"]["type"] = item_type
    with pytest.raises(UnsupportedProviderState, match="known but not implemented"):
        parse_events(events)


@pytest.mark.parametrize("item_type", ["function_call_v2", "tool_call", ""])
def test_unknown_item_type_fails_closed(item_type: str) -> None:
    events = fixture_events()
    events[CALL_A_ADDED]["item"]["type"] = item_type
    with pytest.raises(UnsupportedProviderState, match="unknown output item type"):
        parse_events(events)


@pytest.mark.parametrize("event_type", ["response.tool_call.delta", "response.cancelled",
                                        "Response.completed"])
def test_unknown_event_type_fails_closed(event_type: str) -> None:
    events = fixture_events()
    events.insert(FIRST_DELTA, {"type": event_type, "output_index": 2,
                                "item_id": "function-item-1", "delta": "{}"})
    with pytest.raises(UnsupportedProviderState, match="unknown event type"):
        parse_events(renumber(events))


@pytest.mark.parametrize("event_type", ["response.custom_tool_call_input.delta",
                                        "response.mcp_call_arguments.delta"])
def test_known_unimplemented_event_types_fail_closed(event_type: str) -> None:
    events = fixture_events()
    events.insert(FIRST_DELTA, {"type": event_type, "output_index": 2,
                                "item_id": "function-item-1", "delta": "{}"})
    with pytest.raises(UnsupportedProviderState, match="known but not implemented"):
        parse_events(renumber(events))


@pytest.mark.parametrize("status", ["searching", "COMPLETED", "requires_action"])
def test_unknown_item_status_fails_closed(status: str) -> None:
    events = fixture_events()
    events[ITEM_DONE_A]["item"]["status"] = status
    with pytest.raises(UnsupportedProviderState, match="unknown item status"):
        parse_events(events)


def test_incomplete_item_releases_nothing() -> None:
    events = fixture_events()
    events[ITEM_DONE_A]["item"]["status"] = "incomplete"
    with pytest.raises(ProviderError, match="incomplete"):
        parse_events(events)


def test_unknown_content_part_type_fails_closed() -> None:
    events = fixture_events()
    events[MESSAGE_ADDED + 1]["part"]["type"] = "output_audio"
    with pytest.raises(UnsupportedProviderState, match="part type"):
        parse_events(events)


# ---------------------------------------------------------------------------
# Malformed input and limits: only ContractError escapes


@pytest.mark.parametrize("event", [
    None, [], "response.created", 7, {"type": 7}, {}, {"type": None},
    {"type": "response.created", "sequence_number": 1},
    {"type": "response.created", "sequence_number": 1, "response": []},
    {"type": "response.created", "sequence_number": 1, "response": {"id": 5}},
    {"type": "response.created", "sequence_number": 1,
     "response": {"id": "r", "status": ["x"]}},
    {"type": "error", "sequence_number": 1, "message": "m", "code": {"deep": [1]}},
    {"type": "response.failed", "sequence_number": 1, "response": {"error": {"code": []}}},
])
def test_malformed_events_raise_only_contract_errors(event: Any) -> None:
    with pytest.raises(ContractError):
        parse_events([event])


@pytest.mark.parametrize("events", [None, 5, "abc", b"abc", {"type": "x"}])
def test_events_must_be_a_sequence(events: Any) -> None:
    with pytest.raises(ProtocolViolation):
        parse_events(events)


@pytest.mark.parametrize("position, path, value", [
    (CALL_A_ADDED, ("item",), "not an item"),
    (CALL_A_ADDED, ("item", "arguments"), 5),
    (CALL_A_ADDED, ("item", "caller"), "direct"),
    (CALL_A_ADDED, ("item", "call_id"), ""),
    (CALL_A_ADDED, ("item", "id"), None),
    (CALL_A_ADDED, ("item", "status"), None),
    (CALL_A_ADDED, ("output_index",), True),
    (FIRST_DELTA, ("delta",), None),
    (ITEM_DONE_A, ("item", "status"), None),
    (COMPLETED, ("response", "output"), {"0": {}}),
    (COMPLETED, ("response", "output", 2), "item"),
    (MESSAGE_ADDED + 1, ("part",), []),
])
def test_wrong_field_types_are_protocol_violations(position: int, path: tuple[Any, ...],
                                                   value: Any) -> None:
    events = fixture_events()
    target: Any = events[position]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ProtocolViolation):
        parse_events(events)


def test_argument_fragment_limit_is_enforced() -> None:
    events = fixture_events()
    events[FIRST_DELTA]["delta"] = "x" * 100
    with pytest.raises(LimitExceeded, match=f"event {FIRST_DELTA}"):
        parse_events(events, limits=StreamLimits(max_fragment_bytes=64))


def test_event_count_limit_is_enforced() -> None:
    with pytest.raises(LimitExceeded, match="events"):
        parse_events(fixture_events(), limits=StreamLimits(max_events=10))


def test_item_count_limit_is_enforced() -> None:
    with pytest.raises(LimitExceeded, match="output items"):
        parse_events(fixture_events(), limits=StreamLimits(max_items=3))


def test_deeply_nested_unknown_field_is_bounded() -> None:
    events = fixture_events()
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    events[CALL_A_ADDED]["item"]["x_deep"] = deep
    with pytest.raises(LimitExceeded, match="nests deeper than 512 levels"):
        parse_events(events)


def nested_lists(levels: int) -> Any:
    deep: Any = []
    for _ in range(levels - 1):
        deep = [deep]
    return deep


@pytest.mark.parametrize("levels, accepted", [(509, True), (510, False)])
def test_kept_values_nest_at_most_the_one_json_depth_bound(levels: int, accepted: bool) -> None:
    # One bound (JSONLimits.max_depth = 512) for every value the turn keeps, counted
    # from the Response object: response > output > item > 509 lists is 512 levels.
    # (Before the shared copier the bound was the interpreter's recursion limit.)
    events = fixture_events()
    for item in (events[ITEM_DONE_A]["item"], terminal_output(events)[2]):
        item["x_deep"] = nested_lists(levels)
    if accepted:
        assert parse_events(events).calls[0].raw_item["x_deep"] == nested_lists(levels)
    else:
        with pytest.raises(LimitExceeded, match="nests deeper than 512 levels"):
            parse_events(events)


def test_unknown_revision_is_rejected() -> None:
    with pytest.raises(InvalidArgument, match="revision") as caught:
        OpenAIResponsesStream(revision="2025-01-01")
    assert caught.value.disposition == "rejected"


# ---------------------------------------------------------------------------
# Snapshot digest


def test_digest_is_recorded_and_stable() -> None:
    first, second = parse_events(fixture_events()), parse_events(fixture_events())
    assert first.digest == second.digest and len(first.digest) == 64
    first.check_unchanged()


@pytest.mark.parametrize("mutate", [
    lambda t: t.output[0]["summary"][0].update(text="changed"),
    lambda t: t.output[2].update(call_id="call-Z"),
    lambda t: t.output.append({"type": "message"}),
    lambda t: t.calls[0].arguments.update(order_ref="A-9"),
    lambda t: t.calls[1].raw_item.__setitem__("arguments", "{}"),
    lambda t: t.response.__setitem__("id", "response-B"),
    lambda t: t.response.__setitem__("output", []),
])
def test_mutating_the_turn_after_parsing_makes_every_builder_raise(mutate: Any) -> None:
    turn = parse_events(fixture_events())
    mutate(turn)
    with pytest.raises(SnapshotMutated):
        turn.check_unchanged()
    with pytest.raises(SnapshotMutated):
        stateful(turn)
    with pytest.raises(SnapshotMutated):
        stateless(turn)


def test_the_digest_is_checked_before_results() -> None:
    turn = parse_events(fixture_events())
    turn.output[3]["arguments"] = "{}"
    with pytest.raises(SnapshotMutated):
        stateful(turn, results=[R("call-A")])


def test_caller_event_dicts_changing_later_do_not_change_the_turn() -> None:
    events = fixture_events()
    turn = parse_events(events)
    terminal_output(events)[2]["call_id"] = "call-Z"
    turn.check_unchanged()
    assert turn.calls[0].call_id == "call-A"


# ---------------------------------------------------------------------------
# Stateful continuation


def test_stateful_continuation_has_the_seed_shape() -> None:
    turn = parse_events(fixture_events())
    payload = stateful(turn)
    assert list(payload) == ["model", "previous_response_id", "store", "instructions",
                             "tool_choice", "parallel_tool_calls", "max_output_tokens",
                             "tools", "input"]
    assert payload["previous_response_id"] == "response-A" and payload["store"] is False
    assert payload["input"] == [
        {"type": "function_call_output", "call_id": "call-A", "output": '{"status":"shipped"}'},
        {"type": "function_call_output", "call_id": "call-B", "output": '{"status":"shipped"}'},
    ]
    assert payload["tools"] == TOOLS
    assert json.loads(json.dumps(payload)) == payload


@pytest.mark.parametrize("proof", [False, None, 1, "true", "yes"])
def test_previous_response_was_stored_must_be_literally_true(proof: Any) -> None:
    turn = parse_events(fixture_events())
    with pytest.raises(ContinuationError, match="previous_response_was_stored"):
        stateful(turn, previous_response_was_stored=proof)


@pytest.mark.parametrize("store", [None, 0, 1, "false"])
def test_store_must_be_an_explicit_bool(store: Any) -> None:
    turn = parse_events(fixture_events())
    with pytest.raises(ContinuationError, match="store"):
        stateful(turn, store=store)


def test_stored_predecessor_with_unstored_new_turn_is_valid() -> None:
    turn = parse_events(fixture_events())
    assert stateful(turn, store=False)["store"] is False
    assert stateful(turn, store=True)["store"] is True


@pytest.mark.parametrize("field", ["model", "previous_response_id", "input", "store",
                                   "instructions", "tools", "conversation"])
def test_request_controls_cannot_overwrite_protected_fields(field: str) -> None:
    turn = parse_events(fixture_events())
    with pytest.raises(ContinuationError, match="protected"):
        stateful(turn, request_controls={field: "x"})
    with pytest.raises(ContinuationError, match="protected"):
        stateless(turn, request_controls={field: "x"})



@pytest.mark.parametrize("field", ["Model", "STORE", " store", "input\t", "Previous_Response_Id",
                                   "previous-response-id", "previousResponseId",
                                   "Instructions", "TOOLS", "Conversation"])
def test_request_controls_cannot_overwrite_protected_fields_by_case_or_spelling_variants(
        field: str) -> None:
    # The API's keys are case-sensitive, but a gateway or SDK layer that normalizes keys
    # would turn these into the protected field: fail closed.
    turn = parse_events(fixture_events())
    with pytest.raises(ContinuationError, match="protected"):
        stateful(turn, request_controls={field: "x"})
    with pytest.raises(ContinuationError, match="protected"):
        stateless(turn, request_controls={field: "x"})


def test_request_controls_cannot_supply_a_stored_prompt_template() -> None:
    # A stored prompt template carries its own instructions, tools and model, so it
    # would sit beside (or displace) the explicitly resent ones.
    turn = parse_events(fixture_events())
    with pytest.raises(ContinuationError, match="protected"):
        stateful(turn, request_controls={"prompt": {"id": "pmpt-1", "version": "2"}})
    with pytest.raises(ContinuationError, match="protected"):
        stateless(turn, request_controls={"prompt": {"id": "pmpt-1"}})
    # Controls that merely share a prefix with a protected name stay ordinary controls.
    payload = stateful(turn, request_controls={"prompt_cache_key": "k", "store_note": 1})
    assert (payload["prompt_cache_key"], payload["store_note"]) == ("k", 1)


@pytest.mark.parametrize("value", ["", None, 5])
def test_instructions_are_resent_explicitly(value: Any) -> None:
    turn = parse_events(fixture_events())
    with pytest.raises(ContinuationError, match="instructions"):
        stateful(turn, instructions=value)


def _bad_tools() -> list[tuple[str, Any]]:
    good = strict_tool("lookup_order", {"order_ref": {"type": "string"},
                                        "include_items": {"type": "boolean"}})

    def edit(fn: Any) -> list[dict[str, Any]]:
        tool = copy.deepcopy(good)
        fn(tool)
        return [tool]

    return [
        ("strict false", edit(lambda t: t.update(strict=False))),
        ("strict missing", edit(lambda t: t.pop("strict"))),
        ("strict truthy", edit(lambda t: t.update(strict=1))),
        ("additionalProperties missing", edit(lambda t: t["parameters"].pop(
            "additionalProperties"))),
        ("property not required", edit(lambda t: t["parameters"].update(
            required=["order_ref"]))),
        ("required unknown", edit(lambda t: t["parameters"]["required"].append("x"))),
        ("nested open object", edit(lambda t: t["parameters"]["properties"].update(
            nested={"type": "object", "properties": {"a": {"type": "string"}},
                    "required": ["a"]}) or t["parameters"]["required"].append("nested"))),
        ("not a function", edit(lambda t: t.update(type="custom"))),
        ("allowed_callers", edit(lambda t: t.update(allowed_callers=["programmatic"]))),
        ("chat shape", [{"type": "function", "function": good}]),
        ("parameters not object", edit(lambda t: t.update(parameters={"type": "string"}))),
        ("not a list", good),
        ("duplicate name", [good, good]),
        ("missing observed name", [strict_tool("other_tool")]),
    ]


@pytest.mark.parametrize("label, tools", _bad_tools())
def test_tools_must_be_native_strict_and_declare_observed_names(label: str,
                                                                tools: Any) -> None:
    turn = parse_events(fixture_events())
    with pytest.raises(ContinuationError):
        stateful(turn, tools=tools)
    with pytest.raises(ContinuationError):
        stateless(turn, tools=tools)


def test_deeply_nested_tool_schema_is_bounded() -> None:
    turn = parse_events(fixture_events())
    tool = copy.deepcopy(TOOLS[0])
    node = tool["parameters"]
    for _ in range(200):
        child = {"type": "object", "properties": {}, "required": [],
                 "additionalProperties": False}
        node["properties"]["n"] = child
        node["required"] = sorted(node["properties"])
        node = child
    with pytest.raises(ContinuationError, match="deeper"):
        stateful(turn, tools=[tool])


@pytest.mark.parametrize("results", [
    [R("call-A")],
    [R("call-A"), R("call-B"), R("call-C")],
    [R("call-A"), R("call-A"), R("call-B")],
    [],
    [R("call-A"), {"call_id": "call-B", "output": "x"}],
    {"call-A": R("call-A"), "call-B": R("call-A")},
    None, 5, "call-A", R("call-A"),
])
def test_exactly_one_model_visible_result_per_call(results: Any) -> None:
    turn = parse_events(fixture_events())
    with pytest.raises(ResultBindingError):
        stateful(turn, results=results)
    with pytest.raises(ResultBindingError):
        stateless(turn, results=results)


def test_result_order_does_not_matter_output_follows_call_order() -> None:
    turn = parse_events(fixture_events())
    payload = stateful(turn, results=[R("call-B", "b"), R("call-A", "a")])
    assert [(o["call_id"], o["output"]) for o in payload["input"]] == [
        ("call-A", "a"), ("call-B", "b")]


def test_error_results_are_not_sent_as_success() -> None:
    turn = parse_events(fixture_events())
    failing = [ModelVisibleToolResult("call-A", "timeout", is_error=True), R("call-B")]
    with pytest.raises(ContinuationError, match="is_error"):
        stateful(turn, results=failing)


def test_builders_add_no_fields_beyond_the_request_body() -> None:
    turn = parse_events(fixture_events())
    payload = stateful(turn, request_controls=None)
    assert set(payload) == {"model", "previous_response_id", "store", "instructions",
                            "tools", "input"}
    assert all(set(o) == {"type", "call_id", "output"} for o in payload["input"])
    plain = stateless(turn, request_controls=None)
    assert set(plain) == {"model", "store", "instructions", "tools", "input"}


def test_builders_do_not_mutate_or_share_caller_objects() -> None:
    turn = parse_events(fixture_events())
    tools = copy.deepcopy(TOOLS)
    controls = {"tool_choice": {"type": "function", "name": "lookup_order"},
                "metadata": {"k": "v"}}
    prior = copy.deepcopy(PRIOR)
    results = list(RESULTS)
    before = copy.deepcopy((tools, controls, prior, results, turn.response))
    one = stateful(turn, tools=tools, request_controls=controls, results=results)
    two = stateless(turn, tools=tools, request_controls=controls, prior_input_items=prior,
                    results=results)
    assert (tools, controls, prior, results, turn.response) == before
    one["tools"][0]["parameters"]["properties"].clear()
    one["tool_choice"]["name"] = "x"
    two["input"][0]["content"] = "changed"
    two["input"][1]["summary"].clear()
    assert (tools, controls, prior, results, turn.response) == before
    turn.check_unchanged()


@pytest.mark.parametrize("controls", [{"metadata": float("nan")}, {"x": (1, 2)},
                                      {"x": {1: "a"}}, {"": 1}, {5: 1}, ["tool_choice"],
                                      {"x": object()}])
def test_request_controls_must_be_plain_json(controls: Any) -> None:
    turn = parse_events(fixture_events())
    with pytest.raises(ContinuationError):
        stateful(turn, request_controls=controls)


# ---------------------------------------------------------------------------
# Stateless continuation


def test_stateless_continuation_replays_prior_input_all_output_then_results() -> None:
    turn = parse_events(fixture_events())
    payload = stateless(turn)
    assert payload["store"] is False and "previous_response_id" not in payload
    items = payload["input"]
    assert items[0] == PRIOR[0]
    assert items[1:5] == turn.output
    assert [i["type"] for i in items[1:5]] == ["reasoning", "message", "function_call",
                                              "function_call"]
    assert [(i["type"], i["call_id"]) for i in items[5:]] == [
        ("function_call_output", "call-A"), ("function_call_output", "call-B")]
    assert items[1]["encrypted_content"] == "opaque-encrypted-reasoning-A"


def test_stateless_continuation_needs_replayable_reasoning() -> None:
    events = fixture_events()
    del events[REASONING_DONE]["item"]["encrypted_content"]
    del terminal_output(events)[0]["encrypted_content"]
    turn = parse_events(events)
    with pytest.raises(ContinuationError, match="encrypted_content"):
        stateless(turn)


@pytest.mark.parametrize("prior", [[], None, "hello", [{"content": "no role or type"}],
                                   [["x"]], {"type": "message"}])
def test_stateless_continuation_needs_canonical_prior_input(prior: Any) -> None:
    turn = parse_events(fixture_events())
    with pytest.raises(ContinuationError, match="prior_input_items"):
        stateless(turn, prior_input_items=prior)


def test_builder_rejects_a_turn_of_another_type() -> None:
    with pytest.raises(ContinuationError, match="OpenAIResponsesTurn"):
        build_openai_responses_continuation(
            {"calls": []},  # type: ignore[arg-type]
            [], model="m", previous_response_was_stored=True, store=False,
            instructions="i", tools=TOOLS)


@pytest.mark.parametrize("revision", sorted(oair.REVISIONS))
def test_every_table_entry_is_documented(revision: str) -> None:
    doc = (ROOT / "docs" / "openai_responses.md").read_text(encoding="utf-8")
    spec = oair.REVISIONS[revision]
    names = [*spec.events, *spec.unmodeled_events, *spec.items, *spec.unmodeled_items,
             *spec.item_statuses, *spec.response_statuses, *spec.caller_types,
             *spec.states, *spec.item_states, *spec.protected_request_fields,
             *spec.tool_fields, revision]
    missing = [name for name in names if f"`{name}`" not in doc]
    assert not missing


# ---------------------------------------------------------------------------
# The fuzz target


def _load_fuzz_target() -> Any:
    return load_fuzz_target("fuzz_openai_responses")


def test_fuzz_target_replays_its_seed_corpus() -> None:
    target = _load_fuzz_target()
    corpus = sorted((ROOT / "fuzz" / "corpus" / "fuzz_openai_responses").iterdir())
    assert len(corpus) >= 5
    for path in corpus:
        target.TestOneInput(path.read_bytes())
    regressions = ROOT / "tests" / "regressions" / "fuzz_openai_responses"
    if regressions.is_dir():
        for path in sorted(regressions.iterdir()):
            target.TestOneInput(path.read_bytes())


def test_fuzz_regression_mutator_after_truncation_does_not_crash() -> None:
    # Found by the fuzz target: a mutator chain (truncate, then failed_terminal) hit a
    # KeyError in the harness's mutator, which assumed the last event was the terminal.
    import base64

    target = _load_fuzz_target()
    target.TestOneInput(base64.b64decode("AUJ5vfK7IQLwrA6PeyJmdW5jdGlvbl9jYWxsIlM="))


def test_fuzz_target_accepts_arbitrary_bytes() -> None:
    target = _load_fuzz_target()
    for data in (b"", b"\x00", b"\xff" * 64, b"{}\n[]\n", bytes(range(256)),
                 b"\x01" + b"\x00" * 40, b"\x02" + bytes(range(200))):
        target.TestOneInput(data)
