"""Anthropic schema transform (seed 001, line 247): "When Anthropic's structured-output SDK
helper transforms a schema, retain both original and actually-sent schema."

A transform (such as the SDK helper, which drops constraints the API does not support
and closes objects) makes the sent schema weaker than the original: the host must
validate locally against the original, while the request carries the sent one. An
``AnthropicSentSchema`` keeps both; the builder proves that its ``sent`` is exactly
what the request carries for its target (a client tool's ``input_schema`` or
``output_config.format.schema``) and adds nothing to the body.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _anthropic_messages import TOOLS, build, two_call_stream
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts.anthropic_messages import (
    REVISION,
    REVISIONS,
    AnthropicSentSchema,
    parse_events,
)
from pcfuzz.contracts.errors import ContinuationError

#: Before the transform: constraints the API's structured outputs do not support.
ORIGINAL = {
    "type": "object",
    "properties": {"order_ref": {"type": "string", "minLength": 3, "pattern": "^[A-Z]-"}},
    "required": ["order_ref"],
}
#: After it (what the helper sends): unsupported keywords gone, the object closed.
SENT = {
    "type": "object",
    "properties": {"order_ref": {"type": "string", "description": "{minLength: 3}"}},
    "required": ["order_ref"],
    "additionalProperties": False,
}
FINAL_FORMAT = REVISIONS[REVISION].structured_output_field


def _tools(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return [{**TOOLS[0], "input_schema": schema}]


def test_transformed_tool_schema_keeps_original_and_sent_schema() -> None:
    record = AnthropicSentSchema.of("lookup_order", ORIGINAL, SENT)
    body = build(parse_events(two_call_stream()), tools=_tools(SENT), sent_schemas=[record])
    # The request carries the sent schema; the record keeps the original beside it.
    assert body["tools"][0]["input_schema"] == SENT
    assert (record.original, record.sent) == (ORIGINAL, SENT)
    # A naive caller sends the ORIGINAL while recording the transform: the record would
    # then describe a request that was never made.
    with pytest.raises(ContinuationError, match="not what the request carries"):
        build(parse_events(two_call_stream()), tools=_tools(ORIGINAL), sent_schemas=[record])


def test_transformed_final_format_schema_keeps_original_and_sent_schema() -> None:
    assert FINAL_FORMAT == "output_config.format"
    controls = {"output_config": {"format": {"type": "json_schema", "schema": SENT}}}
    record = AnthropicSentSchema.of(FINAL_FORMAT, ORIGINAL, SENT)
    body = build(parse_events(two_call_stream()), request_controls=controls,
                 sent_schemas=(record,))
    assert body["output_config"]["format"]["schema"] == SENT
    with pytest.raises(ContinuationError, match="output_config.format.schema"):
        build(parse_events(two_call_stream()), sent_schemas=[record])


def test_schema_record_keeps_its_own_copies() -> None:
    original, sent = copy.deepcopy(ORIGINAL), copy.deepcopy(SENT)
    record = AnthropicSentSchema.of("lookup_order", original, sent)
    original["required"].clear()
    sent["properties"].clear()
    assert (record.original, record.sent) == (ORIGINAL, SENT)


@pytest.mark.parametrize(("records", "match"), [
    ([AnthropicSentSchema.of("lookup_user", ORIGINAL, SENT)], "neither a declared client tool"),
    ([AnthropicSentSchema.of("lookup_order", ORIGINAL, SENT)] * 2, "second record"),
    (["lookup_order"], "must be an AnthropicSentSchema"),
    ({"lookup_order": SENT}, "list or tuple"),
])
def test_schema_records_must_describe_this_request(records: Any, match: str) -> None:
    with pytest.raises(ContinuationError, match=match):
        build(parse_events(two_call_stream()), tools=_tools(SENT), sent_schemas=records)


@pytest.mark.parametrize(("target", "original", "sent"), [
    ("", ORIGINAL, SENT), (3, ORIGINAL, SENT), ("t", [ORIGINAL], SENT), ("t", ORIGINAL, "x"),
])
def test_schema_record_needs_a_target_and_two_schema_objects(
    target: Any, original: Any, sent: Any
) -> None:
    with pytest.raises(ContinuationError):
        AnthropicSentSchema.of(target, original, sent)


@pytest.mark.parametrize(("target", "original", "sent"), [
    (["lookup_order"], ORIGINAL, SENT), (3, ORIGINAL, SENT), ("", ORIGINAL, SENT),
    ("lookup_order", [ORIGINAL], SENT), ("lookup_order", "x", SENT),
    ("lookup_order", ORIGINAL, [SENT]),
])
def test_the_builder_rechecks_a_records_target_and_both_schemas(
    target: Any, original: Any, sent: Any
) -> None:
    # A record made without ``of`` (the dataclass constructor checks nothing) must still
    # be refused by the builder for each bad field alone, not later for another reason
    # (a non-dict original was accepted; an unhashable target escaped as TypeError).
    record = AnthropicSentSchema(target, original, sent)
    with pytest.raises(ContinuationError, match="must have a string target and two JSON "
                                                "Schema objects"):
        build(parse_events(two_call_stream()), tools=_tools(SENT), sent_schemas=[record])


def test_a_schema_record_adds_no_field_to_the_request() -> None:
    turn = parse_events(two_call_stream())
    plain = build(turn, tools=_tools(SENT))
    recorded = build(turn, tools=_tools(SENT),
                     sent_schemas=[AnthropicSentSchema.of("lookup_order", ORIGINAL, SENT)])
    assert recorded == plain


_KEYWORDS = ["minLength", "maxLength", "pattern", "format", "minimum", "maximum"]


@given(
    dropped=st.lists(st.sampled_from(_KEYWORDS), unique=True, max_size=len(_KEYWORDS)),
    send_original=st.booleans(),
    target_final=st.booleans(),
)
def test_the_sent_schema_must_be_the_one_the_request_carries(
    dropped: list[str], send_original: bool, target_final: bool
) -> None:
    # Any transform (dropping any set of keywords): the record is accepted exactly when
    # the request carries its sent schema, for a tool or for the final format.
    prop = {"type": "string", **{k: 1 for k in _KEYWORDS}}
    original = {"type": "object", "properties": {"order_ref": prop}, "required": ["order_ref"]}
    sent = copy.deepcopy(original)
    for key in dropped:
        del sent["properties"]["order_ref"][key]
    carried = original if send_original else sent
    transformed = carried != sent
    event(f"{'final format' if target_final else 'tool'}: "
          f"{'mismatch' if transformed else 'matches'}")
    target = FINAL_FORMAT if target_final else "lookup_order"
    record = AnthropicSentSchema.of(target, original, sent)
    kwargs: dict[str, Any] = {"sent_schemas": [record]}
    if target_final:
        kwargs["request_controls"] = {
            "output_config": {"format": {"type": "json_schema", "schema": carried}}}
    else:
        kwargs["tools"] = _tools(carried)
    turn = parse_events(two_call_stream())
    if transformed:
        with pytest.raises(ContinuationError, match="not what the request carries"):
            build(turn, **kwargs)
        return
    body = build(turn, **kwargs)
    assert record.original == original and record.sent == sent
    assert (body["output_config"]["format"]["schema"] if target_final
            else body["tools"][0]["input_schema"]) == sent
