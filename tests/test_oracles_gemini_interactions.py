"""Gemini Interactions against the official google-genai SDK (the `oracles` extra).

The SDK ships no stream accumulator for Interactions: the events are validated
through its types, and one stream runs through the SDK client over a mock transport.
"""

from __future__ import annotations

import pytest
from _oracles import assert_conforms, marks
from _revisions import PINNED, each_revision
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


def _hosted_events(kind: str, text: str, revision: str) -> list[dict[str, object]]:
    step = gen.StepModel(type=kind, index=0, call_id="c", text=text, revision=revision)
    return [{"event_type": "step.start", "index": 0, "step": step.start_step()},
            *({"event_type": "step.delta", "index": 0, "delta": d} for d in step.deltas())]


@pytest.mark.parametrize("kind", gen.HOSTED_STEP_TYPES)
def test_the_pinned_hosted_steps_have_the_sdk_field_sets_at_2026_12_01(kind: str) -> None:
    # code_execution_* ... google_maps_* at 2026-12-01: the fields google-genai 3.6.1
    # defines (arguments / result / is_error / signature, each required one present),
    # validated strictly; a made-up field is a finding no named difference explains.
    for text in ("", "q", "qu", "que"):  # every optional-field branch of the renderer
        for ev in _hosted_events(kind, text, "2026-12-01"):
            assert sdk_oracles.validate(CONTRACT, ev, "e") == [], (kind, text, ev)
            part = "step" if ev["event_type"] == "step.start" else "delta"
            bad = {**ev, part: {**ev[part], "payload": "made up"}}  # type: ignore[dict-item]
            findings = sdk_oracles.validate(CONTRACT, bad, "e")
            assert findings and all(sdk_oracles.explain(CONTRACT, bad, f, "2026-12-01")
                                    is None for f in findings), (kind, findings)


@pytest.mark.parametrize("kind", gen.HOSTED_STEP_TYPES)
def test_opaque_hosted_steps_is_a_difference_of_the_pinned_revision_only(kind: str) -> None:
    # The pinned rendering (id only, a `payload` delta) is the named difference at
    # 2026-07-21; the same events at 2026-12-01 are unexplained findings.
    findings = [(ev, f) for ev in _hosted_events(kind, "q", PINNED)
                for f in sdk_oracles.validate(CONTRACT, ev, "e")]
    assert findings, kind
    for ev, f in findings:
        difference = sdk_oracles.explain(CONTRACT, ev, f, PINNED)
        assert difference is not None and difference.name == "opaque-hosted-steps"
        assert sdk_oracles.explain(CONTRACT, ev, f, "2026-12-01") is None
        assert sdk_oracles.explain(CONTRACT, ev, f) is None


@each_revision
@given(st.data())
def test_generated_events_validate_against_the_sdk_types(revision: str,
                                                         data: st.DataObject) -> None:
    rendered = data.draw(gen.rendered_streams(revision=revision))
    kinds = {e.get("step", e.get("delta", {})).get("type") for e in rendered.events}
    if kinds & set(gen.LATER_HOSTED_STEP_TYPES[revision]):
        event(f"{revision}: new server-side steps validated")
    if kinds & set(gen.HOSTED_STEP_TYPES):
        event(f"{revision}: pinned hosted steps "
              f"{'typed' if gen.TYPED_HOSTED_STEPS[revision] else 'opaque'}")
    seen = assert_conforms(CONTRACT, rendered.events, revision)
    if gen.TYPED_HOSTED_STEPS[revision]:
        assert "opaque-hosted-steps" not in seen


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
