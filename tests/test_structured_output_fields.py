"""Structured output does not cross providers (seed 001, "Tool-argument constraints and a
structured final answer are not one switch"): "OpenAI Responses puts final format in
text.format; Anthropic puts it in output_config.format; Gemini Interactions puts it in
response_format. [...] Do not copy Chat Completions response_format or one provider's
field to all three."

Every builder rejects, in ``request_controls`` and under any spelling, the other APIs'
structured-output fields (its table's ``foreign_structured_output_fields``, enforced by
the one shared rule in ``contracts._request``), and keeps its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts import anthropic_messages as am
from pcfuzz.contracts import gemini_interactions as gi
from pcfuzz.contracts import openai_responses as oair
from pcfuzz.contracts._request import STRUCTURED_OUTPUT_FIELDS, check_foreign_rows, field_key
from pcfuzz.contracts.errors import ContinuationError
from pcfuzz.contracts.results import ModelVisibleToolResult

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

#: A structured final format in each API's own shape, under its own top-level field.
OWN = {
    "openai_responses": ("text", {"format": {
        "type": "json_schema", "name": "answer", "strict": True,
        "schema": {"type": "object", "properties": {}, "required": [],
                   "additionalProperties": False}}}),
    "anthropic_messages": ("output_config", {"format": {
        "type": "json_schema", "schema": {"type": "object", "properties": {},
                                          "additionalProperties": False}}}),
    # Interactions' own field is a builder argument (protected in request_controls).
    "gemini_interactions": ("response_format", None),
}
#: Chat Completions' response_format, the value most often copied to all three.
CHAT_RESPONSE_FORMAT = {"type": "json_schema", "json_schema": {
    "name": "answer", "strict": True, "schema": {"type": "object"}}}


def _events(name: str) -> list[dict[str, Any]]:
    document = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    events: list[dict[str, Any]] = document["events"]
    return events


def _responses(controls: Any) -> list[dict[str, Any]]:
    turn = oair.parse_events(_events("openai_responses"))
    results = [ModelVisibleToolResult(c.call_id, "ok") for c in turn.calls]
    tools = [{"type": "function", "name": n, "strict": True, "parameters": {
        "type": "object", "properties": {}, "required": [], "additionalProperties": False}}
        for n in sorted({c.name for c in turn.calls})]
    return [
        oair.build_openai_responses_continuation(
            turn, results, model="m", previous_response_was_stored=True, store=False,
            instructions="i", tools=tools, request_controls=controls),
        oair.build_openai_responses_stateless_continuation(
            turn, results, model="m", prior_input_items=[{"role": "user", "content": "q"}],
            instructions="i", tools=tools, request_controls=controls),
    ]


def _anthropic(controls: Any) -> list[dict[str, Any]]:
    turn = am.parse_events(_events("anthropic_messages"))
    results = [ModelVisibleToolResult(c.call_id, "ok") for c in turn.calls]
    tools = [{"name": n, "input_schema": {"type": "object"}}
             for n in sorted({c.name for c in turn.calls})]
    return [am.build_anthropic_messages_continuation(
        turn, results, history=[{"role": "user", "content": "q"}], model="m", max_tokens=64,
        tools=tools, request_controls=controls)]


def _gemini(controls: Any, response_format: Any = None) -> list[dict[str, Any]]:
    turn = gi.parse_events(_events("gemini_interactions"))
    results = [ModelVisibleToolResult(c.call_id, "ok") for c in turn.calls]
    tools = [{"type": "function", "name": n, "parameters": {"type": "object"}}
             for n in sorted({c.name for c in turn.calls})]
    common: dict[str, Any] = {
        "model": "m", "tools": tools, "system_instruction": None, "generation_config": None,
        "response_format": response_format, "request_controls": controls}
    # Both Gemini builders share one request path (_base_request); the fixture turn has
    # a streamed thought step, which only the stateful builder can continue from.
    return [gi.build_gemini_interactions_continuation(
        turn, results, previous_interaction_was_stored=True, store=False, **common)]


BUILDERS: dict[str, Callable[[Any], list[dict[str, Any]]]] = {
    "openai_responses": _responses,
    "anthropic_messages": _anthropic,
    "gemini_interactions": _gemini,
}
TABLES = {
    "openai_responses": oair.REVISIONS[oair.REVISION],
    "anthropic_messages": am.REVISIONS[am.REVISION],
    "gemini_interactions": gi.REVISIONS[gi.REVISION],
}
#: (provider, foreign field) for every field another API uses for structured output.
FOREIGN = [(provider, field) for provider in BUILDERS
           for field in sorted(set(STRUCTURED_OUTPUT_FIELDS.values()) - {OWN[provider][0]})]


@pytest.mark.parametrize(("provider", "field"), FOREIGN)
def test_structured_output_does_not_cross_providers(provider: str, field: str) -> None:
    # A naive builder copies request_controls through: Chat's response_format on
    # Responses, Responses' text.format or Anthropic's output_config on Gemini.
    value = CHAT_RESPONSE_FORMAT if field == "response_format" else OWN[
        next(p for p, (f, _) in OWN.items() if f == field)][1]
    with pytest.raises(ContinuationError) as info:
        BUILDERS[provider]({field: value})
    own_path = TABLES[provider].structured_output_field
    if field in TABLES[provider].protected_request_fields:  # Gemini's own name
        assert "protected" in info.value.message
    else:
        assert "structured-output field" in info.value.message
        assert own_path in info.value.message
    assert info.value.where.startswith("request_controls[") and field in info.value.where


@pytest.mark.parametrize("provider", ["openai_responses", "anthropic_messages"])
def test_a_providers_own_structured_output_field_is_sent(provider: str) -> None:
    field, value = OWN[provider]
    for body in BUILDERS[provider]({field: value}):
        assert body[field] == value


def test_chat_response_format_shape_is_not_an_interactions_response_format() -> None:
    # Same field name, different contract: Chat's {"type": "json_schema", "json_schema":
    # ...} passed as Gemini's response_format argument is named as Chat's shape.
    with pytest.raises(ContinuationError, match="Chat Completions' response_format shape"):
        _gemini(None, response_format=CHAT_RESPONSE_FORMAT)
    native = {"type": "text", "mime_type": "application/json", "schema": {"type": "object"}}
    assert all(body["response_format"] == native for body in _gemini(None, native))


def test_every_table_lists_every_other_apis_structured_output_field() -> None:
    for provider, tables in TABLES.items():
        own = tables.structured_output_field.partition(".")[0]
        assert own == OWN[provider][0]
        assert check_foreign_rows(tables.structured_output_field,
                                  tables.foreign_structured_output_fields,
                                  tables.protected_request_fields) is None
    # The cross-check catches a forgotten row (a table bug).
    rows = dict(TABLES["openai_responses"].foreign_structured_output_fields)
    del rows["response_format"]
    assert check_foreign_rows("text.format", rows, ()) is not None
    assert check_foreign_rows("text.format", {**rows, "response_format": "x"},
                              {"response_format"}) is not None


@st.composite
def _spelled(draw: st.DrawFn, name: str) -> str:
    """``name`` in any case, with separators anywhere (what a key normalizer maps back)."""
    flips = draw(st.lists(st.booleans(), min_size=len(name), max_size=len(name)))
    cased = "".join(c.upper() if f else c for c, f in zip(name, flips, strict=True))
    seps = st.text(alphabet=" -_.", max_size=2)
    spelled = "".join(draw(seps) + c for c in cased.replace("_", "")) + draw(seps)
    event("exact spelling" if spelled == name else "variant spelling")
    return spelled


@st.composite
def _cases(draw: st.DrawFn) -> tuple[str, str, bool]:
    provider = draw(st.sampled_from(sorted(BUILDERS)))
    fields = sorted(set(STRUCTURED_OUTPUT_FIELDS.values()))
    if draw(st.booleans()):
        key = draw(_spelled(draw(st.sampled_from(fields))))
    else:
        key = draw(st.text(alphabet="abcdefgimnoprstux_-", min_size=1, max_size=16))
    rejected = field_key(key) in {field_key(f) for f in fields} and (
        field_key(key) != field_key(OWN[provider][0])
        or OWN[provider][0] in TABLES[provider].protected_request_fields)
    rejected = rejected or any(field_key(key) == field_key(f)
                               for f in TABLES[provider].protected_request_fields)
    return provider, key, rejected


@given(_cases(), st.one_of(st.just(CHAT_RESPONSE_FORMAT), st.integers(), st.text(max_size=4)))
def test_no_builder_sends_another_apis_structured_output_field_under_any_spelling(
    case: tuple[str, str, bool], value: Any
) -> None:
    provider, key, rejected = case
    event(f"{provider}: {'rejected' if rejected else 'sent'}")
    try:
        bodies = BUILDERS[provider]({key: value})
    except ContinuationError:
        assert rejected, (provider, key)
        return
    assert not rejected, (provider, key)
    foreign = {field_key(f) for f in TABLES[provider].foreign_structured_output_fields}
    for body in bodies:
        assert body[key] == value
        assert not foreign & {field_key(k) for k in body}
