"""Gemini Interactions against the official google-genai SDK (the `oracles` extra).

The SDK ships no stream accumulator for Interactions: the events are validated
through its types, and one stream runs through the SDK client over a mock transport.
"""

from __future__ import annotations

from _oracles import assert_conforms, marks
from _revisions import each_revision
from hypothesis import event, given
from hypothesis import strategies as st

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


def test_the_2026_12_01_server_side_steps_are_sdk_types_not_named_differences() -> None:
    # The generator renders the six server-side steps 2026-12-01 added (and their
    # deltas) in the field sets google-genai 3.6.1 defines: they validate strictly, and
    # a made-up field on them is a finding no named difference explains.
    for kind in sorted(gen.LATER_HOSTED_STEP_TYPES["2026-12-01"]):
        step = gen.StepModel(type=kind, index=0, call_id="c", text="q")
        start = {"event_type": "step.start", "index": 0, "step": step.start_step()}
        assert sdk_oracles.validate(CONTRACT, start, "e") == [], kind
        for d in step.deltas():
            delta = {"event_type": "step.delta", "index": 0, "delta": d}
            assert sdk_oracles.validate(CONTRACT, delta, "e") == [], (kind, d)
            bad = {**delta, "delta": {**d, "payload": "made up"}}
            findings = sdk_oracles.validate(CONTRACT, bad, "e")
            assert findings and all(sdk_oracles.explain(CONTRACT, bad, f) is None
                                    for f in findings), (kind, findings)


@each_revision
@given(st.data())
def test_generated_events_validate_against_the_sdk_types(revision: str,
                                                         data: st.DataObject) -> None:
    rendered = data.draw(gen.rendered_streams(revision=revision))
    later = {e.get("step", e.get("delta", {})).get("type") for e in rendered.events} & set(
        gen.LATER_HOSTED_STEP_TYPES[revision])
    if later:
        event(f"{revision}: new server-side steps validated")
    assert_conforms(CONTRACT, rendered.events)


@each_revision
@given(st.data())
def test_sdk_client_over_mock_transport_agrees_with_our_wire_parser(
        revision: str, data: st.DataObject) -> None:
    rendered = data.draw(gen.rendered_streams(
        min_calls=1, other_types=("model_output", "thought", "user_input"), revision=revision))
    body = render_api_events(CONTRACT, rendered.events)
    turn = parse_sse(CONTRACT, body, revision=revision)
    acc = sdk_oracles.via_client(CONTRACT, body)
    assert acc.terminal
    theirs = [(c.call_id, c.name, c.arguments) for c in acc.calls]
    if rendered.model.status in gen.CONTINUATION_STATUSES[revision]:
        # Named difference (2026-12-01): the client hands over the function_call steps
        # of a requires_continuation interaction like any other; ours releases nothing
        # (the interaction is resumed, not answered with function results).
        event("named difference: requires_continuation holds steps, releases nothing")
        assert turn.calls == ()
        assert theirs == [(s.call_id, s.name, s.arguments) for s in rendered.start_order
                          if s.type == "function_call"]
        return
    ours = [(c.call_id, c.name, c.arguments) for c in turn.calls]
    event(f"calls: {min(len(ours), 3)}")
    assert theirs == ours
