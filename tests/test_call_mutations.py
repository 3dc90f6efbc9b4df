"""The call mutations the conformance rules need, and the realism of their minimal
examples (issue 22, item 1).

Chat's withheld mutations (arguments a strict reader refuses, a finish reason other
than ``tool_calls``) parse and release nothing; every Gemini mutator gets the outcome
its model says, in each revision (Anthropic's and Responses' mutators are checked by
their providers' property files, which iterate over every mutation). A minimal
example stays in the space the official SDK types accept: an error frame shrinks to an
error object, never ``{"error": null}`` (before, the natural fix ``if chunk.get("error")``
still failed the kit's default checks).
"""

from __future__ import annotations

from typing import Any

import pytest
from _revisions import each_revision
from hypothesis import HealthCheck, Phase, event, find, given, settings
from hypothesis import strategies as st

from pcfuzz.contracts import gemini_interactions as gi_contract
from pcfuzz.contracts import openai_chat as oc_contract
from pcfuzz.contracts.errors import ContractError
from pcfuzz.strategies import conformance as kit
from pcfuzz.strategies import gemini_interactions as gi
from pcfuzz.strategies import openai_chat as oc
from pcfuzz.strategies import sdk_oracles

# ------------------------------------------------------------------ realistic minimal examples

_FIND = settings(phases=[Phase.generate, Phase.shrink], database=None, max_examples=50)


def _error_values(scenario: kit.Scenario) -> list[Any]:
    return [f["error"] for f in scenario.events if isinstance(f, dict) and "error" in f]


def test_a_chat_error_frame_shrinks_to_an_error_object_not_null() -> None:
    # Before: the frame's error value was drawn from [None, {}, ...] and shrank to
    # {"error": null}, so the natural fix ``if chunk.get("error")`` still failed the
    # default (safety) checks. The seed's "even null/{}" rule is degenerate_error_frame
    # (strictness).
    minimal = find(kit.mutation_scenarios("openai-chat", "error_frame"), lambda _: True,
                   settings=_FIND)
    (error,) = _error_values(minimal)
    assert isinstance(error, dict) and error, error
    assert type(error["message"]) is str and type(error["type"]) is str


@given(kit.mutation_scenarios("openai-chat", "error_frame"))
def test_every_chat_error_frame_carries_an_error_object(scenario: kit.Scenario) -> None:
    (error,) = _error_values(scenario)
    event(f"error keys: {sorted(error)}")
    assert set(error) <= {"message", "type", "param", "code"}
    assert type(error["message"]) is str and type(error["type"]) is str
    assert all(error.get(k) is None or type(error[k]) is str for k in ("param", "code"))


@given(kit.mutation_scenarios("gemini-interactions", "error_event"))
def test_every_gemini_error_event_carries_an_error_object(scenario: kit.Scenario) -> None:
    errors = [e["error"] for e in scenario.events if e.get("event_type") == "error"]
    assert len(errors) == 1 and isinstance(errors[0], dict)
    assert type(errors[0]["message"]) is str and errors[0]["message"]
    assert all(type(v) is str for v in errors[0].values())


def test_the_degenerate_error_values_are_strictness_only() -> None:
    assert oc.MUTATION_LABELS["degenerate_error_frame"] == ("strictness", "terminal")
    minimal = find(kit.mutation_scenarios("openai-chat", "degenerate_error_frame"),
                   lambda _: True, settings=_FIND)
    assert minimal.expectation(strict=False) is None
    assert minimal.expectation(strict=True) == "nothing"


@pytest.mark.oracle
@pytest.mark.skipif(sdk_oracles.missing("openai") is not None, reason="openai SDK absent")
@given(kit.mutation_scenarios("openai-chat", "error_frame"))
def test_chat_error_objects_are_what_the_openai_types_accept(scenario: kit.Scenario) -> None:
    from openai.types.shared.error_object import ErrorObject

    (error,) = _error_values(scenario)
    ErrorObject.model_validate(error, strict=True)


@pytest.mark.oracle
@pytest.mark.skipif(sdk_oracles.missing("google-genai") is not None,
                    reason="google-genai SDK absent")
@given(kit.mutation_scenarios("gemini-interactions", "error_event"))
def test_gemini_error_events_are_what_the_google_genai_types_accept(
        scenario: kit.Scenario) -> None:
    from google.genai._gaos.types.interactions.errorevent import ErrorEvent

    for e in scenario.events:
        if e.get("event_type") == "error":
            ErrorEvent.model_validate(e)


# ------------------------------------------------------------------ the mutators' own outcomes


@each_revision
@pytest.mark.parametrize("mutation", oc.WITHHELD)
@given(data=st.data())
def test_chat_withheld_mutations_parse_and_release_nothing(mutation: str, revision: str,
                                                           data: st.DataObject) -> None:
    kind, frames, expected = data.draw(oc.mutated_streams(
        kinds=(mutation,), models=kit._executable_chat_models(), revision=revision))
    assert expected is None
    turn = oc_contract.parse_events(frames, revision=revision)
    assert turn.calls == ()
    if kind != "non_tool_terminal":  # all or nothing: every call to recovery
        assert [r.call_id for r in turn.recovery_calls] == [
            t["id"] for t in turn.message["tool_calls"]]
        event(f"{kind}: {next(r.reason for r in turn.recovery_calls if r.reason)[:60]}")
    else:
        event(f"{kind}: finish_reason {turn.finish_reason!r}")


@each_revision
@pytest.mark.parametrize("mutation", sorted(gi.MUTATORS))
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_gemini_mutator_gets_the_outcome_its_model_says(mutation: str, revision: str,
                                                              data: st.DataObject) -> None:
    model = data.draw(gi.turn_models(min_calls=2 if mutation == "shared_call_id" else 1,
                                     revision=revision))
    if mutation.startswith("replayed"):
        model.with_event_ids = True
    rendered = data.draw(gi.rendered_streams(model))
    events = data.draw(gi.MUTATORS[mutation](rendered))
    calls = len(model.function_calls())
    if mutation.startswith("with_status") or mutation == "non_tool_terminal":
        status = events[-1]["interaction"]["status"]
        expected: tuple[str, ...] = (gi.terminal_outcome(revision, status, calls),)
    elif mutation == "replayed_same":
        expected = ("accepted",)
    else:
        expected = gi.EXPECTED_ERRORS[mutation]
    try:
        turn = gi_contract.parse_events(events, revision=revision)
    except ContractError as exc:
        event(f"{mutation}: {type(exc).__name__}")
        assert type(exc).__name__ in expected, (exc, expected)
        return
    event(f"{mutation}: accepted")
    assert "accepted" in expected
    if mutation == "replayed_same":
        assert [c.call_id for c in turn.calls] == [c[0] for c in rendered.expected_calls()]
    else:
        assert turn.calls == ()


# ------------------------------------------------------------------ one table of call labels


def test_the_call_mutations_carry_one_label_in_every_contract() -> None:
    from pcfuzz.strategies import anthropic_messages as am
    from pcfuzz.strategies import openai_responses as orsp
    from pcfuzz.strategies.call_mutation_labels import CALL_MUTATION_LABELS, call_mutation_labels

    seen: dict[str, set[str]] = {}
    for module in (am, orsp, gi, oc):
        for name, label in module.MUTATION_LABELS.items():
            if name in CALL_MUTATION_LABELS:
                assert label == CALL_MUTATION_LABELS[name], (module.__name__, name)
                seen.setdefault(name, set()).add(module.__name__)
    # identity and the common argument breakages apply in all four contracts
    for name in ("shared_call_id", "missing_call_id", "empty_call_id", "missing_name",
                 "empty_name", "missing_arguments", "non_object_arguments",
                 "non_finite_arguments", "duplicate_key_arguments", "non_strict_arguments"):
        assert len(seen[name]) == 4, name
    with pytest.raises(ValueError, match="not call mutations"):
        call_mutation_labels(without=frozenset({"missing_cal_id"}))
