"""Gemini Interactions against the official google-genai SDK (the `oracles` extra).

The SDK ships no stream accumulator for Interactions: the events are validated
through its types, and one stream runs through the SDK client over a mock transport.
"""

from __future__ import annotations

from _oracles import assert_conforms, marks
from hypothesis import event, given

from pcfuzz.contracts.wire import parse_sse
from pcfuzz.strategies import gemini_interactions as gen
from pcfuzz.strategies import sdk_oracles
from pcfuzz.strategies.sse import render_api_events

pytestmark = marks("google-genai")
CONTRACT = "gemini-interactions"


def test_unknown_step_and_status_are_findings_not_fallbacks() -> None:
    # The SDK's open unions and enums accept both silently; the oracle reports them.
    start = {"event_type": "step.start", "index": 0, "step": {"type": "hologram_call"}}
    assert [f.kind for f in sdk_oracles.validate(CONTRACT, start, "e")] == ["unknown_variant"]
    update = {"event_type": "interaction.status_update", "interaction_id": "i",
              "status": "paused"}
    assert [f.kind for f in sdk_oracles.validate(CONTRACT, update, "e")] == [
        "unrecognized_enum"]
    update["status"] = "requires_continuation"
    assert sdk_oracles.validate(CONTRACT, update, "e") == []


@given(gen.rendered_streams())
def test_generated_events_validate_against_the_sdk_types(rendered: gen.RenderedStream) -> None:
    assert_conforms(CONTRACT, rendered.events)


@given(gen.rendered_streams(min_calls=1,
                            other_types=("model_output", "thought", "user_input")))
def test_sdk_client_over_mock_transport_agrees_with_our_wire_parser(
        rendered: gen.RenderedStream) -> None:
    body = render_api_events(CONTRACT, rendered.events)
    turn = parse_sse(CONTRACT, body)
    acc = sdk_oracles.via_client(CONTRACT, body)
    assert acc.terminal
    ours = [(c.call_id, c.name, c.arguments) for c in turn.calls]
    event(f"calls: {min(len(ours), 3)}")
    assert [(c.call_id, c.name, c.arguments) for c in acc.calls] == ours
