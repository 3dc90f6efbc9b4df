"""Cache codec and cache identity for Chat Completions snapshots (design section 6)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts.errors import ContractError, InvalidArgument, LimitExceeded
from pcfuzz.contracts.openai_chat import (
    ChatCompletionSnapshot,
    EmptyCompletion,
    has_product,
    parse_completion,
    parse_events,
    validate_message,
)
from pcfuzz.contracts.openai_chat_cache import (
    CACHE_FORMAT,
    CacheMiss,
    decode,
    encode,
    try_decode,
)
from pcfuzz.strategies.openai_chat import CompletionModel, completion_models, rendered_streams

TOOL = {"id": "call-1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}


def entry(completion: Any = None, **overrides: Any) -> bytes:
    if completion is None:
        completion = {
            "message": {"role": "assistant", "content": "hi"},
            "finish_reason": "stop",
            "response_id": "r1",
            "usage": {"total_tokens": 1},
        }
    document = {"format": CACHE_FORMAT, "completion": completion}
    document.update(overrides)
    return json.dumps(document).encode()


def completion_with(message: Any, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"message": message, "finish_reason": "stop", "response_id": None,
                            "usage": None}
    base.update(fields)
    return base


# ================================================================ examples


def test_a_valid_entry_decodes_to_the_snapshot() -> None:
    snapshot = decode(entry())
    assert snapshot == ChatCompletionSnapshot(
        {"role": "assistant", "content": "hi"}, "stop", "r1", {"total_tokens": 1})


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"", "not strict JSON"),
        (b"null", "exactly"),
        (b"[]", "exactly"),
        (b'{"format":"pcfuzz-openai-chat-cache/1","completion":null}', "completion must be"),
        (b'{"format":"pcfuzz-openai-chat-cache/1","format":"x","completion":{}}', "duplicate"),
        (entry(format="pcfuzz-openai-chat-cache/0"), "format"),
        (entry(extra=1), "exactly"),
        (entry({"message": {"role": "assistant", "content": "x"}}), "exactly"),
        (entry(completion_with({"role": "assistant", "content": "x"}, extra=1)), "exactly"),
        (entry(completion_with(None)), "message must be an object"),
        (entry(completion_with({"content": "x"})), "role"),
        (entry(completion_with({"role": "user", "content": "x"})), "role"),
        (entry(completion_with({"role": "assistant", "content": 5})), "content"),
        (entry(completion_with({"role": "assistant", "content": "x", "tool_calls": {}})),
         "tool_calls"),
        (entry(completion_with({"role": "assistant", "tool_calls": [TOOL | {"id": ""}]})), "id"),
        (entry(completion_with({"role": "assistant", "tool_calls": [TOOL | {"type": None}]})),
         "type"),
        (entry(completion_with({"role": "assistant", "tool_calls": [
            TOOL | {"function": {"name": "f"}}]})), "arguments"),
        (entry(completion_with({"role": "assistant", "tool_calls": [
            TOOL | {"function": {"name": "", "arguments": "{}"}}]})), "name"),
        (entry(completion_with({"role": "assistant", "tool_calls": [TOOL, TOOL]})), "duplicate"),
        (entry(completion_with({"role": "assistant", "content": ""})), "no product"),
        (entry(completion_with({"role": "assistant", "content": None})), "no product"),
        (entry(completion_with({"role": "assistant"})), "no product"),
        (entry(completion_with({"role": "assistant", "reasoning_content": "r"})), "no product"),
        (entry(completion_with({"role": "assistant", "content": None, "tool_calls": []})),
         "no product"),
        (entry(completion_with({"role": "assistant", "content": "x"}, finish_reason=1)),
         "finish_reason"),
        (entry(completion_with({"role": "assistant", "content": "x"}, response_id=[])),
         "response_id"),
        (entry(completion_with({"role": "assistant", "content": "x"}, usage=[])), "usage"),
        (entry(completion_with({"role": "assistant", "content": "x",
                                "function_call": {"name": "f", "arguments": "{}"}})),
         "function_call"),
    ],
)
def test_a_malformed_or_product_less_entry_is_a_miss_never_a_success(
    data: bytes, why: str
) -> None:
    with pytest.raises(CacheMiss, match=why):
        decode(data)
    assert try_decode(data) is None


def test_a_miss_is_a_contract_error() -> None:
    assert issubclass(CacheMiss, ContractError)


@pytest.mark.parametrize(
    "snapshot",
    [
        ChatCompletionSnapshot({"role": "assistant", "content": ""}, None, None, None),
        ChatCompletionSnapshot({"role": "assistant", "reasoning_content": "r"}, None, None, None),
        ChatCompletionSnapshot({"role": "user", "content": "x"}, None, None, None),
        ChatCompletionSnapshot({"role": "assistant", "content": "x"}, 1, None, None),  # type: ignore[arg-type]
        ChatCompletionSnapshot({"role": "assistant", "content": "x"}, None, None, []),  # type: ignore[arg-type]
        ChatCompletionSnapshot({"role": "assistant", "content": "\ud800"}, None, None, None),
        ChatCompletionSnapshot({"role": "assistant", "content": "x", "v": float("nan")},
                               None, None, None),
    ],
)
def test_encode_refuses_a_snapshot_the_aggregator_could_not_produce(
    snapshot: ChatCompletionSnapshot,
) -> None:
    with pytest.raises(InvalidArgument):
        encode(snapshot)


def test_encode_refuses_other_types() -> None:
    with pytest.raises(InvalidArgument):
        encode({"message": {"role": "assistant", "content": "x"}})  # type: ignore[arg-type]


def test_codec_and_aggregator_share_one_value_predicate() -> None:
    # The same message is a product for both, or for neither.
    for message in ({"role": "assistant", "content": " "}, {"role": "assistant", "content": ""},
                    {"role": "assistant", "tool_calls": [TOOL]},
                    {"role": "assistant", "reasoning_content": "r", "content": None}):
        validate_message(message)
        body = {"choices": [{"message": message}]}
        try:
            parse_completion(body)
            aggregated = True
        except EmptyCompletion:
            aggregated = False
        completion = completion_with(message)
        assert (try_decode(entry(completion)) is not None) == aggregated == has_product(message)


def test_decoded_snapshots_share_no_mutable_state() -> None:
    data = entry(completion_with({"role": "assistant", "tool_calls": [TOOL]},
                                 usage={"d": {"n": [1]}}))
    first, second = decode(data), decode(data)
    first.message["tool_calls"][0]["function"]["arguments"] = "changed"
    first.usage["d"]["n"].append(2)  # type: ignore[index]
    assert second.message["tool_calls"][0]["function"]["arguments"] == '{"a":1}'
    assert second.usage == {"d": {"n": [1]}}
    assert decode(data) == second


def test_encoding_does_not_keep_a_reference_to_the_snapshot() -> None:
    snapshot = ChatCompletionSnapshot({"role": "assistant", "content": "x", "ext": [1]},
                                      "stop", "r", {"t": 1})
    data = encode(snapshot)
    snapshot.message["ext"].append(2)
    assert decode(data).message["ext"] == [1]


def test_turn_snapshot_round_trips_with_extension_fields() -> None:
    turn = parse_completion({"id": "r", "choices": [{"index": 0, "finish_reason": "tool_calls",
                            "message": {"role": "assistant", "content": None, "refusal": None,
                                        "annotations": [{"type": "url_citation"}],
                                        "tool_calls": [TOOL | {"x": {"y": None}}]}}]})
    assert decode(encode(turn.completion)) == turn.completion


# The cache key (design 6) is tested with the seed's rules in
# tests/test_openai_chat_seed.py.


# ============================================================= properties


@given(rendered_streams())
def test_round_trip_of_an_aggregated_snapshot_is_lossless(rendered: Any) -> None:
    turn = parse_events(rendered.frames)
    event(f"tools={len(rendered.model.tools)}")
    snapshot = turn.completion
    data = encode(snapshot)
    decoded = decode(data)
    assert decoded == snapshot
    assert list(decoded.message) == list(snapshot.message)
    assert encode(decoded) == data
    # A decode shares nothing with the turn, the entry or another decode.
    decoded.message["role"] = "mutated"
    decoded.message.setdefault("tool_calls", []).append({"id": "injected"})
    if decoded.usage is not None:
        decoded.usage["injected"] = True
    assert decode(data) == snapshot == turn.completion
    turn.check_unchanged()


@given(completion_models())
def test_round_trip_of_a_nonstreaming_snapshot_is_lossless(model: CompletionModel) -> None:
    snapshot = parse_completion(model.body()).completion
    event(f"content={'text' if isinstance(model.content, str) else 'other'}")
    assert decode(encode(snapshot)) == snapshot


json_leaves = st.none() | st.booleans() | st.integers() | st.text(max_size=4)
json_values = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=8,
)


@given(rendered_streams(), st.data())
def test_a_corrupted_entry_is_a_miss_or_a_valid_product(rendered: Any, data: Any) -> None:
    """Decoding never fabricates a success from a damaged entry."""
    document = json.loads(encode(parse_events(rendered.frames).completion))
    completion = document["completion"]
    target = data.draw(st.sampled_from(["entry", "completion", "message", "tool"]))
    if target == "tool" and not completion["message"].get("tool_calls"):
        target = "message"
    container = {"entry": document, "completion": completion,
                 "message": completion["message"]}.get(target)
    if container is None:
        container = data.draw(st.sampled_from(completion["message"]["tool_calls"]))
    key = data.draw(st.sampled_from(sorted(container) + ["extra"]))
    action = data.draw(st.sampled_from(["delete", "replace"]))
    event(f"corrupt {target}.{key} by {action}")
    if action == "delete":
        container.pop(key, None)
    else:
        container[key] = data.draw(json_values)
    try:
        snapshot = decode(json.dumps(document))
    except CacheMiss:
        return
    validate_message(snapshot.message)
    assert has_product(snapshot.message)


def test_encode_never_writes_an_entry_that_decode_would_miss() -> None:
    # Python callers can hand the aggregator and the codec values strict JSON would
    # not read back. The aggregator copies with the shared bounds (integers of at
    # most 1,000 digits), and the writer checks with the reader: an entry is either
    # refused or replays losslessly.
    with pytest.raises(LimitExceeded, match="over 1000 digits"):
        parse_events([{"choices": [{"index": 0, "delta": {"role": "assistant",
                                                          "content": "x"}}]},
                      {"choices": [], "usage": {"total_tokens": 10**1500}}, "[DONE]"])
    with pytest.raises(InvalidArgument, match="over 1000 digits"):
        encode(ChatCompletionSnapshot({"role": "assistant", "content": "x"}, None, None,
                                      {"total_tokens": 10**1500}))
    # Copyable at the shared depth bound, but two levels deeper inside the entry.
    deep: Any = {}
    for _ in range(510):
        deep = {"d": deep}
    with pytest.raises(InvalidArgument, match="would not decode"):
        encode(ChatCompletionSnapshot({"role": "assistant", "content": "x"}, None, None, deep))
    within = ChatCompletionSnapshot({"role": "assistant", "content": "x"}, None, None,
                                    {"total_tokens": 10**900})
    assert decode(encode(within)) == within
