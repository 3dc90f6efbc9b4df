"""The call mutations the conformance rules need, and the realism of their minimal
examples (issue 22, item 1).

Chat's withheld mutations (arguments a strict reader refuses, a finish reason other
than ``tool_calls``) parse and release nothing (its rejected ones are checked by
tests/test_openai_chat_properties.py, which iterates over every mutation). A minimal
example stays in the space the official SDK types accept: an error frame shrinks to an
error object, never ``{"error": null}`` (before, the natural fix ``if chunk.get("error")``
still failed the kit's default checks).
"""

from __future__ import annotations

from typing import Any

import pytest
from _revisions import each_revision
from hypothesis import Phase, event, find, given, settings
from hypothesis import strategies as st

from pcfuzz.contracts import openai_chat as oc_contract
from pcfuzz.strategies import conformance as kit
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
