"""Red-team example tests for the Gemini Interactions v1 contract (one rule per test)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from _fuzz import load_fuzz_target
from _gemini_interactions import (
    FIXTURE,
    RESULTS,
    ROOT,
    TOOLS,
    USER_INPUT,
    call_events,
    completed,
    created,
    ev,
    fixture_events,
    one_call_stream,
    snapshot_obj,
    stateful,
    stateless,
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
from pcfuzz.contracts.gemini_interactions import (
    REVISION,
    REVISIONS,
    GeminiInteractionsStream,
    build_gemini_interactions_continuation,
    parse_events,
    parse_interaction,
)
from pcfuzz.contracts.results import ModelVisibleToolResult


def test_fixture_loads_with_pinned_metadata() -> None:
    from pcfuzz.contracts.fixtures import load_fixture

    fx = load_fixture(FIXTURE)
    assert (fx.contract, fx.api_version, fx.sdk_package, fx.sdk_version) == (
        "gemini-interactions", "v1", "google-genai", "2.12.1")
    assert fx.projection_layer == "typed-sse-projection"


def test_interleaved_dual_calls_are_associated_by_index_not_current_call() -> None:
    turn = parse_events(fixture_events())
    assert [(c.call_id, c.name, c.arguments) for c in turn.calls] == [
        ("call-alpha", "lookup_order", {"order_ref": "A-100"}),
        ("call-beta", "lookup_customer", {"customer_ref": "C-7"}),
    ]
    assert turn.status == "requires_action" and turn.origin == "stream"
    assert turn.interaction_id == "interaction-7f3a"


def test_pinned_v1_union_has_exactly_15_step_types_without_mcp() -> None:
    types = REVISIONS["2026-07-21"].step_types
    assert len(types) == 15
    assert not any(t.startswith("mcp_") for t in types)
    assert [t for t, role in types.items() if role == "client_call"] == ["function_call"]


# ------------------------------------------------------------------- index


def test_index_is_an_association_key_negative_and_noncontiguous_allowed() -> None:
    events = [created(), *call_events(-2**31, "c-neg", "f", '{"x":1}'),
              *call_events(2**31 - 1, "c-pos", "g", "{}"),
              *call_events(7, "c-mid", "h"), completed()]
    turn = parse_events(events)
    assert [c.call_id for c in turn.calls] == ["c-neg", "c-pos", "c-mid"]
    assert turn.step_indexes == (-2**31, 2**31 - 1, 7)


def test_steps_keep_step_start_order_not_index_order() -> None:
    events = [created(), *call_events(5, "late-index", "f"), *call_events(1, "early-index", "g"),
              completed()]
    assert [s["id"] for s in parse_events(events).steps] == ["late-index", "early-index"]


@pytest.mark.parametrize("index", [2**31, -(2**31) - 1, True, 1.0, "0", None])
def test_index_outside_int32_or_not_an_int_is_rejected(index: Any) -> None:
    events = one_call_stream()
    events[1]["index"] = index
    with pytest.raises(ProtocolViolation):
        parse_events(events)


def test_index_reuse_within_one_stream_is_rejected() -> None:
    events = [created(), *call_events(0, "a", "f"), *call_events(0, "b", "g"), completed()]
    with pytest.raises(ProtocolViolation, match="already used"):
        parse_events(events)


def test_delta_for_unstarted_index_is_rejected() -> None:
    events = [created(), ev("step.delta", index=3, delta={"type": "arguments_delta",
                                                          "arguments": "{}"})]
    with pytest.raises(ProtocolViolation, match="without step.start"):
        parse_events(events)


def test_delta_after_step_stop_is_rejected() -> None:
    events = [created(), *call_events(0, "a", "f", "{}"),
              ev("step.delta", index=0, delta={"type": "arguments_delta", "arguments": " "}),
              completed()]
    with pytest.raises(ProtocolViolation, match="after its step.stop"):
        parse_events(events)


# ------------------------------------------------------------------- arguments


def test_absent_arguments_field_is_no_fragment_not_the_string_none() -> None:
    events = [created(), *call_events(0, "a", "f", '{"k":'), completed()]
    events.insert(3, ev("step.delta", index=0, delta={"type": "arguments_delta"}))
    events.insert(3, ev("step.delta", index=0, delta={"type": "arguments_delta",
                                                      "arguments": None}))
    events.insert(-2, ev("step.delta", index=0, delta={"type": "arguments_delta",
                                                       "arguments": '"v"}'}))
    assert parse_events(events).calls[0].arguments == {"k": "v"}


def test_zero_argument_call_completes_from_initial_empty_object() -> None:
    events = [created(), *call_events(0, "a", "ping"), completed()]
    assert parse_events(events).calls[0].arguments == {}


def test_function_call_without_any_arguments_fails_closed() -> None:
    events = [created(), ev("step.start", index=0, step={"type": "function_call", "id": "a",
                                                         "name": "f"}),
              ev("step.stop", index=0), completed()]
    with pytest.raises(ProtocolViolation, match="without arguments"):
        parse_events(events)


def test_arguments_are_parsed_only_after_step_stop() -> None:
    stream = GeminiInteractionsStream()
    for event in [created(), *call_events(0, "a", "f", '{"a":')[:2]]:
        stream.feed(event)  # incomplete JSON is fine before step.stop
    with pytest.raises(StrictJSONError):
        stream.feed(ev("step.stop", index=0))


@pytest.mark.parametrize("text", ['{"a":1,"a":2}', '{"a":NaN}', "[1]", '"s"', "{", ""])
def test_arguments_must_be_a_strict_json_object(text: str) -> None:
    events = [created(), *call_events(0, "a", "f", text), completed()]
    if text == "":
        # an empty concatenation is no fragment: the initial {} stands
        assert parse_events(events).calls[0].arguments == {}
        return
    with pytest.raises((StrictJSONError, ProtocolViolation)):
        parse_events(events)


def test_argument_deltas_after_nonempty_initial_arguments_are_ambiguous() -> None:
    events = [created(), *call_events(0, "a", "f", '{"b":2}', initial={"a": 1}), completed()]
    with pytest.raises(ProtocolViolation, match="non-empty step.start arguments"):
        parse_events(events)


def test_argument_fragment_limit_is_enforced() -> None:
    from pcfuzz.contracts._stream import StreamLimits

    events = [created(), *call_events(0, "a", "f", '{"a":"' + "x" * 64 + '"}'), completed()]
    with pytest.raises(LimitExceeded):
        parse_events(events, limits=StreamLimits(max_fragment_bytes=32))


# ------------------------------------------------------------------- event_id


def test_event_id_replay_with_identical_payload_is_idempotent() -> None:
    events = fixture_events()
    replayed = events[:8] + [copy.deepcopy(events[6]), copy.deepcopy(events[7])] + events[8:]
    assert parse_events(replayed).digest == parse_events(events).digest


def test_event_id_replay_after_terminal_is_idempotent() -> None:
    events = fixture_events()
    assert parse_events([*events, copy.deepcopy(events[3])]).calls


def test_event_id_replay_with_different_payload_is_a_conflict() -> None:
    events = fixture_events()
    conflict = copy.deepcopy(events[6])
    conflict["delta"]["arguments"] = '{"order_ref": "B-200"'
    with pytest.raises(ProtocolViolation, match="different payload"):
        parse_events(events[:8] + [conflict] + events[8:])


def test_events_without_event_id_are_all_applied() -> None:
    events = [dict(e) for e in fixture_events()]
    for e in events:
        e.pop("event_id")
    assert len(parse_events(events).calls) == 2


# ------------------------------------------------------------------- terminal


def test_status_update_is_optional() -> None:
    events = [e for e in fixture_events() if e["event_type"] != "interaction.status_update"]
    assert len(parse_events(events).calls) == 2


def test_status_update_never_overrides_the_terminal_status() -> None:
    events = one_call_stream()
    events.insert(-1, ev("interaction.status_update", interaction_id="i-1", status="completed"))
    events.insert(-1, ev("interaction.status_update", interaction_id="i-1", status="failed"))
    turn = parse_events(events)
    assert turn.status == "requires_action" and len(turn.calls) == 1
    assert turn.status_updates == ("completed", "failed")


def test_interaction_completed_event_name_does_not_mean_status_completed() -> None:
    turn = parse_events(fixture_events())
    assert turn.status == "requires_action"


def test_completed_status_with_function_calls_fails_closed() -> None:
    events = one_call_stream()
    events[-1] = completed("completed")
    with pytest.raises(UnsupportedProviderState, match="unanswered"):
        parse_events(events)


def test_completed_final_turn_releases_nothing() -> None:
    events = [created(), ev("step.start", index=0, step={"type": "model_output"}),
              ev("step.delta", index=0, delta={"type": "text", "text": "done"}),
              ev("step.stop", index=0), completed("completed")]
    turn = parse_events(events)
    assert turn.calls == () and turn.step_deltas == (({"type": "text", "text": "done"},),)


def test_requires_action_without_function_call_is_rejected() -> None:
    with pytest.raises(ProtocolViolation, match="without a function_call"):
        parse_events([created(), completed()])


@pytest.mark.parametrize("status", ["failed", "cancelled", "incomplete"])
def test_failed_terminal_releases_nothing(status: str) -> None:
    events = one_call_stream()
    events[-1] = completed(status)
    with pytest.raises(ProviderError):
        parse_events(events)


@pytest.mark.parametrize("revision", sorted(REVISIONS))
@pytest.mark.parametrize("status", ["COMPLETED", "done", "", "paused"])
def test_unknown_terminal_status_fails_closed(status: str, revision: str) -> None:
    events = one_call_stream()
    events[-1] = completed(status)
    with pytest.raises(UnsupportedProviderState, match="unknown interaction status"):
        parse_events(events, revision=revision)


@pytest.mark.parametrize("status", ["budget_exceeded", "requires_continuation", "queued",
                                    "idle"])
def test_todays_statuses_fail_closed_under_the_pinned_revision_naming_the_drift(
        status: str) -> None:
    events = one_call_stream()
    events[-1] = completed(status)
    with pytest.raises(UnsupportedProviderState,
                       match="unknown interaction status.*drift: contract revision 2026-12-01"):
        parse_events(events, revision="2026-07-21")


def test_requires_continuation_returns_the_turn_and_releases_nothing() -> None:
    # google-genai 3.6.1: decoding stopped at the per-request token limit; the
    # interaction is resumed with its continuation token, not answered with results
    events = one_call_stream()
    events[-1] = completed("requires_continuation")
    turn = parse_events(events, revision="2026-12-01")
    assert turn.status == "requires_continuation"
    assert turn.calls == ()
    assert any(s["type"] == "function_call" for s in turn.steps)
    with pytest.raises(ContinuationError):
        build_gemini_interactions_continuation(
            turn, [], model="m", tools=[], system_instruction=None,
            generation_config=None, previous_interaction_was_stored=True, store=True)


def test_budget_exceeded_is_a_provider_failure() -> None:
    events = one_call_stream()
    events[-1] = completed("budget_exceeded")
    with pytest.raises(ProviderError, match="budget_exceeded"):
        parse_events(events, revision="2026-12-01")


def test_queued_is_non_terminal_and_idle_fails_closed_wherever_it_appears() -> None:
    events = one_call_stream()
    events.insert(-1, ev("interaction.status_update", interaction_id="i-1", status="queued"))
    assert len(parse_events(events, revision="2026-12-01").calls) == 1
    events[-1] = completed("queued")
    with pytest.raises(ProtocolViolation, match="non-terminal status"):
        parse_events(events, revision="2026-12-01")
    for at_end in (True, False):
        events = one_call_stream()
        if at_end:
            events[-1] = completed("idle")
        else:
            events.insert(-1, ev("interaction.status_update", interaction_id="i-1",
                                 status="idle"))
        with pytest.raises(UnsupportedProviderState, match="meaning for tool execution is "
                                                           "not pinned"):
            parse_events(events, revision="2026-12-01")


def test_unknown_status_update_fails_closed() -> None:
    events = one_call_stream()
    events.insert(-1, ev("interaction.status_update", interaction_id="i-1", status="paused"))
    with pytest.raises(UnsupportedProviderState):
        parse_events(events)


def test_in_progress_at_the_terminal_is_rejected() -> None:
    events = one_call_stream()
    events[-1] = completed("in_progress")
    with pytest.raises(ProtocolViolation, match="non-terminal"):
        parse_events(events)


def test_error_event_releases_nothing() -> None:
    events = one_call_stream()
    events.insert(-1, ev("error", error={"code": "overloaded", "message": "try later"}))
    with pytest.raises(ProviderError, match="overloaded"):
        parse_events(events)


def test_missing_terminal_is_truncation() -> None:
    with pytest.raises(StreamTruncated):
        parse_events(one_call_stream()[:-1])


def test_terminal_with_open_step_is_rejected() -> None:
    events = one_call_stream()
    del events[-2]
    with pytest.raises(ProtocolViolation, match="no step.stop"):
        parse_events(events)


def test_terminal_interaction_id_must_match_created() -> None:
    events = one_call_stream()
    events[-1] = completed(iid="other")
    with pytest.raises(ProtocolViolation, match="differs"):
        parse_events(events)


def test_events_after_terminal_are_rejected() -> None:
    with pytest.raises(ProtocolViolation, match="not allowed"):
        parse_events([*one_call_stream(), *call_events(9, "late", "f")])


def test_nonempty_terminal_steps_fail_closed() -> None:
    events = one_call_stream()
    events[-1] = completed(steps=[{"type": "model_output"}])
    with pytest.raises(UnsupportedProviderState):
        parse_events(events)


# ------------------------------------------------------------------- usage


def test_absent_usage_totals_are_none_not_zero() -> None:
    turn = parse_events(fixture_events())
    assert turn.usage_totals() == {"total_input_tokens": 42, "total_output_tokens": 17,
                                   "total_tokens": None}
    assert turn.usage == {"total_input_tokens": 42, "total_output_tokens": 17}


def test_raw_usage_is_kept_with_unknown_fields() -> None:
    events = one_call_stream()
    events[-1] = completed(usage={"total_tokens": 3, "total_thought_tokens": 1})
    assert parse_events(events).usage == {"total_tokens": 3, "total_thought_tokens": 1}


@pytest.mark.parametrize("value", [-1, True, 1.5, "3", None])
def test_usage_totals_must_be_nonnegative_integers(value: Any) -> None:
    events = one_call_stream()
    events[-1] = completed(usage={"total_tokens": value})
    with pytest.raises(ProtocolViolation):
        parse_events(events)


# ------------------------------------------------------------------- step types


@pytest.mark.parametrize("step_type", ["mcp_server_tool_call", "mcp_server_tool_result"])
def test_v1beta_mcp_server_step_fails_closed(step_type: str) -> None:
    events = one_call_stream()
    events.insert(1, ev("step.start", index=99, step={"type": step_type, "id": "m",
                                                      "name": "n", "server_name": "s",
                                                      "arguments": {}}))
    with pytest.raises(UnsupportedProviderState, match="v1beta"):
        parse_events(events)


def test_unknown_step_type_fails_closed() -> None:
    events = one_call_stream()
    events.insert(1, ev("step.start", index=99, step={"type": "function"}))
    with pytest.raises(UnsupportedProviderState):
        parse_events(events)


@pytest.mark.parametrize("delta_type", ["retrieval_call", "mcp_server_tool_result", "surprise"])
def test_unknown_or_v1beta_delta_type_fails_closed(delta_type: str) -> None:
    events = one_call_stream()
    events.insert(2, ev("step.delta", index=0, delta={"type": delta_type}))
    with pytest.raises(UnsupportedProviderState):
        parse_events(events, revision="2026-07-21")


@pytest.mark.parametrize("step_type", ["processing_call", "processing_result", "retrieval_call",
                                       "retrieval_result", "tool_search_call",
                                       "tool_search_result"])
def test_todays_server_steps_are_never_executable(step_type: str) -> None:
    events = one_call_stream()
    events[1:1] = [ev("step.start", index=7, step={"type": step_type}),
                   ev("step.delta", index=7, delta={"type": step_type}),
                   ev("step.stop", index=7)]
    turn = parse_events(events, revision="2026-12-01")
    assert [c.call_id for c in turn.calls] == [c.call_id for c in parse_events(
        one_call_stream()).calls]
    assert step_type in [s["type"] for s in turn.steps]
    with pytest.raises(UnsupportedProviderState,
                       match="unknown step type.*drift: contract revision 2026-12-01"):
        parse_events(events, revision="2026-07-21")
    # a delta of the new kind is still bound to its own step type
    events = one_call_stream()
    events.insert(2, ev("step.delta", index=0, delta={"type": step_type}))
    with pytest.raises(ProtocolViolation):
        parse_events(events, revision="2026-12-01")


def test_delta_type_must_match_its_step_type() -> None:
    events = one_call_stream()
    events.insert(2, ev("step.delta", index=0, delta={"type": "text", "text": "hi"}))
    with pytest.raises(ProtocolViolation, match="not allowed for a function_call"):
        parse_events(events)


@pytest.mark.parametrize("step_type", [t for t in REVISIONS[REVISION].step_types
                                       if t != "function_call"])
def test_non_client_steps_are_never_presented_as_calls(step_type: str) -> None:
    events = one_call_stream()
    events.insert(1, ev("step.start", index=50, step={"type": step_type, "id": "h",
                                                      "name": "lookup", "arguments": {}}))
    events.insert(2, ev("step.stop", index=50))
    turn = parse_events(events)
    assert [c.call_id for c in turn.calls] == ["c-1"]
    assert turn.steps[0]["type"] == step_type


def test_unknown_event_type_fails_closed() -> None:
    events = one_call_stream()
    events.insert(1, ev("interaction.paused"))
    with pytest.raises(UnsupportedProviderState):
        parse_events(events)


def test_step_before_interaction_created_is_rejected() -> None:
    with pytest.raises(ProtocolViolation, match="idle"):
        parse_events(one_call_stream()[1:])


def test_duplicate_call_id_in_one_stream_is_rejected() -> None:
    events = [created(), *call_events(0, "a", "f"), *call_events(1, "a", "g"), completed()]
    with pytest.raises(ProtocolViolation, match="duplicate"):
        parse_events(events)


# ------------------------------------------------------------------- poison, data boundary


def test_stream_is_poisoned_after_an_error() -> None:
    stream = GeminiInteractionsStream()
    with pytest.raises(ProtocolViolation):
        stream.feed({"event_type": "step.stop", "index": 0})
    with pytest.raises(ProtocolViolation):
        stream.feed(created())
    with pytest.raises(ProtocolViolation):
        stream.close()


def test_close_twice_is_rejected() -> None:
    stream = GeminiInteractionsStream()
    for e in one_call_stream():
        stream.feed(e)
    stream.close()
    with pytest.raises(ProtocolViolation, match="closed"):
        stream.close()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), object(), {1: 2}, b"x"])
def test_non_json_values_in_events_are_rejected(bad: Any) -> None:
    events = one_call_stream()
    events[1]["extra"] = bad
    with pytest.raises(ProtocolViolation):
        parse_events(events)


def test_deeply_nested_event_is_bounded() -> None:
    deep: Any = []
    for _ in range(10_000):
        deep = [deep]
    events = one_call_stream()
    events[1]["extra"] = deep
    with pytest.raises(LimitExceeded):
        parse_events(events)


def test_caller_mutation_of_fed_event_does_not_change_the_turn() -> None:
    events = fixture_events()
    stream = GeminiInteractionsStream()
    for e in events:
        stream.feed(e)
    events[4]["step"]["name"] = "drop_table"
    turn = stream.close()
    assert turn.calls[0].name == "lookup_order"


@pytest.mark.parametrize("garbage", [None, [], "event", 3, {"event_type": 7}, {}])
def test_non_event_values_raise_only_contract_errors(garbage: Any) -> None:
    with pytest.raises(ContractError):
        parse_events([garbage])


def test_events_must_be_a_sequence() -> None:
    with pytest.raises(ProtocolViolation):
        parse_events("not events")  # type: ignore[arg-type]


# ------------------------------------------------------------------- stateful continuation


def test_stateful_continuation_shape() -> None:
    turn = parse_events(fixture_events())
    body = stateful(turn, response_format={"type": "text", "mime_type": "application/json",
                                           "schema": {"type": "object"}})
    assert body["previous_interaction_id"] == "interaction-7f3a"
    assert body["store"] is False
    assert body["tools"] == TOOLS and body["system_instruction"] == "Be brief."
    assert body["generation_config"] == {"temperature": 0.0}
    assert body["input"] == [
        {"type": "function_result", "call_id": "call-alpha", "name": "lookup_order",
         "result": "shipped"},
        {"type": "function_result", "call_id": "call-beta", "name": "lookup_customer",
         "result": "gold"},
    ]
    json.dumps(body, allow_nan=False)


@pytest.mark.parametrize("proof", [False, None, 1, "yes"])
def test_prior_storage_proof_must_be_literally_true(proof: Any) -> None:
    with pytest.raises(ContinuationError, match="previous_interaction_was_stored"):
        stateful(parse_events(fixture_events()), previous_interaction_was_stored=proof)


@pytest.mark.parametrize("store", [None, 0, 1, "false"])
def test_current_store_must_be_an_explicit_bool(store: Any) -> None:
    with pytest.raises(ContinuationError, match="store"):
        stateful(parse_events(fixture_events()), store=store)


def test_prior_storage_and_current_store_are_independent() -> None:
    turn = parse_events(fixture_events())
    assert stateful(turn, store=True)["store"] is True
    assert stateful(turn, store=False)["store"] is False


def test_tools_system_and_config_are_required_inputs() -> None:
    turn = parse_events(fixture_events())
    with pytest.raises(TypeError):
        build_gemini_interactions_continuation(  # type: ignore[call-arg]
            turn, RESULTS, model="m", tools=TOOLS, previous_interaction_was_stored=True,
            store=True)


def test_strict_key_in_function_declaration_is_rejected() -> None:
    tools = [dict(TOOLS[0], strict=True), TOOLS[1]]
    with pytest.raises(ContinuationError, match="strict"):
        stateful(parse_events(fixture_events()), tools=tools)


def test_openai_style_nested_function_declaration_is_rejected() -> None:
    tools = [{"type": "function", "function": {"name": "lookup_order"}}, TOOLS[1]]
    with pytest.raises(ContinuationError):
        stateful(parse_events(fixture_events()), tools=tools)


def test_tools_must_declare_every_called_function() -> None:
    with pytest.raises(ContinuationError, match="does not declare"):
        stateful(parse_events(fixture_events()), tools=TOOLS[:1])


@pytest.mark.parametrize("rf", [
    {"type": "json_schema", "schema": {}},
    {"type": "text", "mime_type": "application/json"},
    {"type": "text", "mime_type": "application/xml", "schema": {}},
    {"type": "text", "mime_type": "application/json", "schema": {}, "strict": True},
    {"type": "text", "mime_type": "text/plain", "schema": {}},
])
def test_response_format_is_validated(rf: dict[str, Any]) -> None:
    with pytest.raises(ContinuationError, match="response_format"):
        stateful(parse_events(fixture_events()), response_format=rf)


@pytest.mark.parametrize("field", ["model", "input", "store", "previous_interaction_id",
                                   "tools", "system_instruction", "generation_config",
                                   "response_format"])
def test_request_controls_cannot_overwrite_protected_fields(field: str) -> None:
    with pytest.raises(ContinuationError, match="protected"):
        stateful(parse_events(fixture_events()), request_controls={field: "x"})


def test_request_controls_are_passed_through() -> None:
    body = stateful(parse_events(fixture_events()), request_controls={"service_tier": "flex"})
    assert body["service_tier"] == "flex"


def test_exactly_one_result_per_call() -> None:
    turn = parse_events(fixture_events())
    for results in (RESULTS[:1], [*RESULTS, RESULTS[0]],
                    [*RESULTS, ModelVisibleToolResult("call-gamma", "x")]):
        with pytest.raises(ResultBindingError):
            build_gemini_interactions_continuation(
                turn, results, model="m", tools=TOOLS, system_instruction=None,
                generation_config=None, previous_interaction_was_stored=True, store=False)


def test_error_result_is_marked_is_error() -> None:
    turn = parse_events(fixture_events())
    results = [ModelVisibleToolResult("call-alpha", "timeout", is_error=True), RESULTS[1]]
    body = build_gemini_interactions_continuation(
        turn, results, model="m", tools=TOOLS, system_instruction=None, generation_config=None,
        previous_interaction_was_stored=True, store=True)
    assert body["input"][0]["is_error"] is True and "is_error" not in body["input"][1]


def test_turn_mutated_after_parse_is_detected_before_anything_is_copied() -> None:
    turn = parse_events(fixture_events())
    turn.steps[1]["arguments"]["order_ref"] = "B-999"
    with pytest.raises(SnapshotMutated):
        stateful(turn, previous_interaction_was_stored=False)  # digest is checked first


def test_call_arguments_mutated_after_parse_is_detected() -> None:
    turn = parse_events(fixture_events())
    turn.calls[0].arguments["order_ref"] = "B-999"
    with pytest.raises(SnapshotMutated):
        stateless(turn, prior_input_steps=[USER_INPUT])


def test_caller_objects_are_not_mutated_or_aliased() -> None:
    turn = parse_events(fixture_events())
    tools = copy.deepcopy(TOOLS)
    config = {"temperature": 0.5, "stop_sequences": ["x"]}
    body = stateful(turn, tools=tools, generation_config=config)
    assert tools == TOOLS and config == {"temperature": 0.5, "stop_sequences": ["x"]}
    body["tools"][0]["name"] = "changed"
    body["generation_config"]["stop_sequences"].append("y")
    assert tools == TOOLS and config["stop_sequences"] == ["x"]


def test_non_tool_turn_cannot_be_continued() -> None:
    events = [created(), ev("step.start", index=0, step={"type": "model_output"}),
              ev("step.stop", index=0), completed("completed")]
    with pytest.raises(ContinuationError, match="requires_action"):
        stateful(parse_events(events))


# ------------------------------------------------------------------- stateless continuation


def test_stateless_from_function_call_only_stream_needs_prior_input() -> None:
    events = [e for e in fixture_events() if e.get("index") not in (0,)]
    turn = parse_events(events)
    body = stateless(turn, prior_input_steps=[USER_INPUT])
    assert body["store"] is False and "previous_interaction_id" not in body
    assert [s["type"] for s in body["input"]] == [
        "user_input", "function_call", "function_call", "function_result", "function_result"]
    with pytest.raises(ContinuationError, match="prior_input_steps"):
        stateless(turn)


def test_stateless_from_stream_with_thought_fails_closed() -> None:
    with pytest.raises(ContinuationError, match="streamed thought"):
        stateless(parse_events(fixture_events()), prior_input_steps=[USER_INPUT])


def test_thought_snapshot_replays_from_create_with_verified_signature() -> None:
    snap = parse_interaction(snapshot_obj("create"), origin="create")
    body = stateless(snap, prior_input_steps=[USER_INPUT])
    assert [s["type"] for s in body["input"]] == [
        "user_input", "thought", "function_call", "function_call", "function_result",
        "function_result"]
    assert body["input"][1]["signature"] == "c2ln"


def test_thought_without_signature_does_not_replay() -> None:
    snap = parse_interaction(snapshot_obj("create", thought={"type": "thought"}), origin="create")
    with pytest.raises(ContinuationError, match="signature"):
        stateless(snap, prior_input_steps=[USER_INPUT])


def test_create_snapshot_is_supplemented_with_prior_input() -> None:
    snap = parse_interaction(snapshot_obj("create"), origin="create")
    with pytest.raises(ContinuationError, match="required"):
        stateless(snap)


def test_get_snapshot_is_not_supplemented_again() -> None:
    snap = parse_interaction(snapshot_obj("get"), origin="get")
    with pytest.raises(ContinuationError, match="GET"):
        stateless(snap, prior_input_steps=[USER_INPUT])
    body = stateless(snap)
    assert sum(1 for s in body["input"] if s["type"] == "user_input") == 1


def test_create_and_get_snapshots_give_the_same_history() -> None:
    from_create = stateless(parse_interaction(snapshot_obj("create"), origin="create"),
                            prior_input_steps=[USER_INPUT])
    from_get = stateless(parse_interaction(snapshot_obj("get"), origin="get"))
    assert from_create["input"] == from_get["input"]


def test_create_snapshot_with_input_steps_is_rejected() -> None:
    with pytest.raises(ProtocolViolation, match="model-generated"):
        parse_interaction(snapshot_obj("get"), origin="create")


def test_get_snapshot_must_start_with_user_input() -> None:
    with pytest.raises(ProtocolViolation, match="user_input"):
        parse_interaction(snapshot_obj("create"), origin="get")


@pytest.mark.parametrize("step", [
    {"type": "google_search_call", "id": "g", "arguments": {"queries": ["q"]}},
    {"type": "code_execution_result", "call_id": "g", "result": "4"},
    {"type": "model_output", "content": [{"type": "image", "data": "AAAA"}]},
    {"type": "model_output"},
])
def test_unprovable_snapshot_steps_fail_closed(step: dict[str, Any]) -> None:
    obj = snapshot_obj("create")
    obj["steps"].insert(0, step)
    snap = parse_interaction(obj, origin="create")
    with pytest.raises(ContinuationError, match="provable|only complete text"):
        stateless(snap, prior_input_steps=[USER_INPUT])
    assert stateful(snap)["input"]  # a stateful continuation does not replay steps


def test_text_model_output_in_snapshot_replays() -> None:
    obj = snapshot_obj("create")
    obj["steps"].insert(0, {"type": "model_output", "content": [{"type": "text", "text": "hm"}]})
    body = stateless(parse_interaction(obj, origin="create"), prior_input_steps=[USER_INPUT])
    assert body["input"][1]["type"] == "model_output"


def test_snapshot_is_bound_to_interaction_origin_and_call_ids() -> None:
    a = parse_interaction(snapshot_obj("create"), origin="create")
    obj = snapshot_obj("create")
    obj["id"] = "interaction-other"
    b = parse_interaction(obj, origin="create")
    assert a.digest != b.digest
    object.__setattr__(a, "origin", "get")
    with pytest.raises(SnapshotMutated):
        stateless(a)
    c = parse_interaction(snapshot_obj("create"), origin="create")
    object.__setattr__(c, "interaction_id", "interaction-other")
    with pytest.raises(SnapshotMutated):
        stateful(c)


def test_snapshot_with_v1beta_step_fails_closed() -> None:
    obj = snapshot_obj("create")
    obj["steps"].append({"type": "mcp_server_tool_call", "id": "m", "name": "n",
                         "server_name": "s", "arguments": {}})
    with pytest.raises(UnsupportedProviderState):
        parse_interaction(obj, origin="create")


def test_snapshot_calls_only_for_requires_action() -> None:
    obj = snapshot_obj("create")
    obj["status"] = "completed"
    with pytest.raises(UnsupportedProviderState):
        parse_interaction(obj, origin="create")
    obj["status"] = "failed"
    with pytest.raises(ProviderError):
        parse_interaction(obj, origin="create")


def test_snapshot_without_steps_is_not_complete() -> None:
    with pytest.raises(ProtocolViolation, match="complete snapshot"):
        parse_interaction({"id": "x", "status": "requires_action"}, origin="get")


def test_prior_input_must_start_with_user_input_and_not_repeat_current_calls() -> None:
    snap = parse_interaction(snapshot_obj("create"), origin="create")
    with pytest.raises(ContinuationError, match="user_input"):
        stateless(snap, prior_input_steps=[{"type": "model_output", "content": []}])
    repeat = [USER_INPUT, {"type": "function_call", "id": "call-alpha", "name": "lookup_order",
                           "arguments": {}}]
    with pytest.raises(ContinuationError, match="repeats"):
        stateless(snap, prior_input_steps=repeat)


def test_prior_input_steps_are_copied_not_aliased() -> None:
    prior = [copy.deepcopy(USER_INPUT)]
    body = stateless(parse_interaction(snapshot_obj("create"), origin="create"),
                     prior_input_steps=prior)
    body["input"][0]["content"][0]["text"] = "changed"
    assert prior == [USER_INPUT]


def test_get_snapshot_calls_are_the_current_turn_only() -> None:
    obj = snapshot_obj("get")
    history = [USER_INPUT,
               {"type": "function_call", "id": "old", "name": "lookup_order", "arguments": {}},
               {"type": "function_result", "call_id": "old", "result": "ok"}]
    obj["steps"] = history + obj["steps"][1:]
    snap = parse_interaction(obj, origin="get")
    assert [c.call_id for c in snap.calls] == ["call-alpha", "call-beta"]
    obj["steps"] = history[:2] + [USER_INPUT] + obj["steps"][3:]
    with pytest.raises(ProtocolViolation, match="no function_result"):
        parse_interaction(obj, origin="get")


# ------------------------------------------------------------------- harness files


def test_fixture_events_validate_against_the_pinned_schemas() -> None:
    from jsonschema import Draft7Validator

    schema_dir = ROOT / "fixtures" / "schemas" / "gemini_interactions"
    combined = Draft7Validator(json.loads((schema_dir / "event.json").read_text("utf-8")))
    for e in fixture_events():
        single = json.loads((schema_dir / f"{e['event_type'].replace('.', '_')}.json")
                            .read_text("utf-8"))
        Draft7Validator.check_schema(single)
        assert Draft7Validator(single).is_valid(e) and combined.is_valid(e)
    bad = completed("budget_exceeded")
    assert not combined.is_valid(bad)


def test_fuzz_target_replays_its_seed_corpus() -> None:
    module = load_fuzz_target("fuzz_gemini_interactions")
    corpus = sorted((ROOT / "fuzz" / "corpus" / "fuzz_gemini_interactions").iterdir())
    assert len(corpus) >= 10
    for path in corpus:
        module.TestOneInput(path.read_bytes())  # only ContractError may be swallowed inside


# ------------------------------------------------------------------- review: attacks


@pytest.mark.parametrize("events", [None, 5, 1.5, object()])
def test_events_that_are_not_iterable_are_rejected(events: Any) -> None:
    with pytest.raises(ProtocolViolation, match="events must be"):
        parse_events(events)


def test_shared_references_cannot_blow_up_copy_work() -> None:
    shared: Any = [1]
    for _ in range(40):  # 2**40 nodes as JSON, 41 objects in memory
        shared = [shared, shared]
    events = one_call_stream()
    events[1]["extra"] = shared
    with pytest.raises(LimitExceeded, match="JSON values"):
        parse_events(events)


@pytest.mark.parametrize("with_event_id", [False, True])
def test_huge_integer_is_rejected_at_ingestion_not_at_digest(with_event_id: bool) -> None:
    events = one_call_stream()
    events[1]["step"]["x_count"] = 10**5000  # beyond int-to-str conversion limits
    if with_event_id:
        events[1]["event_id"] = "e1"
    with pytest.raises(LimitExceeded, match="integer"):
        parse_events(events)


@pytest.mark.parametrize("where", ["value", "key"])
def test_lone_surrogate_strings_are_rejected(where: str) -> None:
    events = one_call_stream()
    if where == "value":
        events[1]["step"]["name"] = "look\ud800up"
    else:
        events[1]["step"]["\udc00"] = 1
    with pytest.raises(ProtocolViolation, match="surrogate"):
        parse_events(events)


def test_lone_surrogate_in_caller_config_is_rejected() -> None:
    with pytest.raises(ContinuationError, match="surrogate"):
        stateful(parse_events(fixture_events()), generation_config={"stop": ["\ud800"]})


@pytest.mark.parametrize("field", ["previousInteractionId", "Store", "systemInstruction",
                                   "GENERATION_CONFIG", "response-format", "Input", "MODEL",
                                   "responseMimeType", "agent"])
def test_request_controls_cannot_overwrite_protected_fields_by_case_or_camel_variant(
    field: str,
) -> None:
    with pytest.raises(ContinuationError, match="protected"):
        stateful(parse_events(fixture_events()), request_controls={field: "x"})


@pytest.mark.parametrize("result_first", [False, True])
def test_streamed_function_result_answering_a_streamed_call_fails_closed(
    result_first: bool,
) -> None:
    result = [ev("step.start", index=5, step={"type": "function_result", "call_id": "c-1",
                                              "result": "done"}),
              ev("step.stop", index=5)]
    calls = call_events(0, "c-1", "lookup", '{"a":1}')
    body = [*result, *calls] if result_first else [*calls, *result]
    with pytest.raises(ProtocolViolation, match="already answered"):
        parse_events([created(), *body, completed()])


def test_streamed_function_result_for_another_call_is_kept() -> None:
    events = [created(), ev("step.start", index=5, step={"type": "function_result",
                                                         "call_id": "old", "result": "r"}),
              ev("step.stop", index=5), *call_events(0, "c-1", "lookup", "{}"), completed()]
    assert [c.call_id for c in parse_events(events).calls] == ["c-1"]


def test_function_call_delta_with_unknown_fields_is_kept_and_blocks_stateless_replay() -> None:
    events = [created(), *call_events(1, "call-alpha", "lookup_order", '{"order_ref":"A-100"}'),
              *call_events(2, "call-beta", "lookup_customer", '{"customer_ref":"C-7"}'),
              completed()]
    events[2]["delta"]["signature"] = "c2ln"  # a field the pinned ArgumentsDelta does not have
    turn = parse_events(events)
    assert turn.calls[0].arguments == {"order_ref": "A-100"}  # parse outcome unchanged
    assert turn.step_deltas[0] == ({"type": "arguments_delta",
                                    "arguments": '{"order_ref":"A-100"}', "signature": "c2ln"},)
    with pytest.raises(ContinuationError, match="not provably"):
        stateless(turn, prior_input_steps=[USER_INPUT])
    assert stateful(turn)["input"]  # stateful replays no step


def test_turn_mutated_by_a_caller_callback_cannot_reach_the_request() -> None:
    events = [e for e in fixture_events() if e.get("index") != 0]
    turn = parse_events(events)

    class MutatingSteps(list):  # type: ignore[type-arg]
        def __iter__(self) -> Any:
            turn.steps[0]["arguments"]["order_ref"] = "B-999"
            return super().__iter__()

    body = stateless(turn, prior_input_steps=MutatingSteps([USER_INPUT]))
    assert body["input"][1]["arguments"] == {"order_ref": "A-100"}


def test_error_event_before_interaction_created_releases_nothing() -> None:
    with pytest.raises(ProviderError, match="quota"):
        parse_events([ev("error", error={"code": "quota", "message": "m"}),
                      *one_call_stream()])


def test_prior_input_must_not_answer_a_current_call() -> None:
    snap = parse_interaction(snapshot_obj("create"), origin="create")
    prior = [USER_INPUT, {"type": "function_result", "call_id": "call-beta", "result": "x"}]
    with pytest.raises(ContinuationError, match="repeats"):
        stateless(snap, prior_input_steps=prior)


@pytest.mark.parametrize("kwargs", [{"revision": []}, {"revision": {}}, {"revision": "2026-07-22"},
                                    {"limits": "x"}, {"limits": 5}])
def test_bad_revision_or_limits_raise_contract_errors(kwargs: dict[str, Any]) -> None:
    # Both are the caller's configuration errors: InvalidArgument ("rejected").
    with pytest.raises(InvalidArgument) as caught:
        parse_events(fixture_events(), **kwargs)
    assert caught.value.disposition == "rejected"
    with pytest.raises(InvalidArgument):
        parse_interaction(snapshot_obj("get"), origin="get", **kwargs)


def test_result_output_with_a_lone_surrogate_is_rejected() -> None:
    with pytest.raises(ResultBindingError, match="surrogate"):
        ModelVisibleToolResult("call-alpha", "bad \udc80")
    # ...and one swapped in after construction is still caught by the builder.
    bad = ModelVisibleToolResult("call-alpha", "bad")
    object.__setattr__(bad, "output", "bad \udc80")
    results = [bad, RESULTS[1]]
    with pytest.raises(ContinuationError, match="surrogate"):
        build_gemini_interactions_continuation(
            parse_events(fixture_events()), results, model="m", tools=TOOLS,
            system_instruction=None, generation_config=None,
            previous_interaction_was_stored=True, store=False)


def test_result_output_is_embedded_as_plain_text() -> None:
    class Loud(str):
        def __str__(self) -> str:
            return "SHOUTED"

    results = [ModelVisibleToolResult("call-alpha", Loud("shipped")), RESULTS[1]]
    body = stateful(parse_events(fixture_events()))
    body_loud = build_gemini_interactions_continuation(
        parse_events(fixture_events()), results, model="fixture-model", tools=TOOLS,
        system_instruction="Be brief.", generation_config={"temperature": 0.0},
        previous_interaction_was_stored=True, store=False)
    assert type(body_loud["input"][0]["result"]) is str
    assert body_loud == body


def test_status_update_requires_action_cannot_make_a_final_turn_executable() -> None:
    events = [created(), ev("step.start", index=0, step={"type": "model_output"}),
              ev("interaction.status_update", interaction_id="i-1", status="requires_action"),
              ev("step.stop", index=0), completed("completed")]
    turn = parse_events(events)
    assert turn.status == "completed" and turn.calls == ()
    assert turn.status_updates == ("requires_action",)


def test_snapshot_step_count_is_limited() -> None:
    from pcfuzz.contracts._stream import StreamLimits

    with pytest.raises(LimitExceeded, match="steps"):
        parse_interaction(snapshot_obj("get"), origin="get", limits=StreamLimits(max_items=3))
    assert parse_interaction(snapshot_obj("get"), origin="get",
                             limits=StreamLimits(max_items=4)).calls
