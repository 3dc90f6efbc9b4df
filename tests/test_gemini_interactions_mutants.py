"""Gemini builder tests written from surviving mutants (``pcfuzz mutants``): each
breaks a mutant of ``contracts/`` that the suite let live. The rule, then the mutant.

An unknown function-declaration field is rejected (guard turned off); ``model`` must
be a non-empty string (``or`` -> ``and``, ``not`` dropped); ``prior_input_steps``
must be a list or tuple (guard off, ``not`` dropped); the streamed step count limit
is exact (``>=`` -> ``>``: one step too many accepted).
"""

from __future__ import annotations

from typing import Any

import pytest
from _gemini_interactions import TOOLS, USER_INPUT, fixture_events, stateful, stateless
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts._stream import StreamLimits
from pcfuzz.contracts.errors import ContinuationError, LimitExceeded, ProtocolViolation
from pcfuzz.contracts.gemini_interactions import parse_events


def _call_only_turn() -> Any:
    return parse_events([e for e in fixture_events() if e.get("index") != 0])


# ------------------------------------------------------------------ Gemini builders


@pytest.mark.parametrize("build", [stateful, stateless])
def test_an_unknown_function_declaration_field_is_rejected(build: Any) -> None:
    tools = [dict(TOOLS[0], behavior="BLOCKING"), TOOLS[1]]
    extra = {} if build is stateful else {"prior_input_steps": [USER_INPUT]}
    turn = parse_events(fixture_events()) if build is stateful else _call_only_turn()
    with pytest.raises(ContinuationError, match="unknown function declaration field") as info:
        build(turn, tools=tools, **extra)
    assert info.value.where == "tools[0]"
    assert build(turn, tools=TOOLS, **extra)["tools"] == TOOLS  # the same without it


_NOT_A_MODEL = st.one_of(st.just(""), st.none(), st.integers(), st.binary(max_size=4),
                         st.lists(st.text(max_size=2), max_size=2))


@given(model=_NOT_A_MODEL)
def test_model_must_be_a_non_empty_string(model: object) -> None:
    event(f"model {type(model).__name__}{' (empty)' if model == '' else ''}")
    with pytest.raises(ContinuationError, match="model must be a non-empty string") as info:
        stateful(parse_events(fixture_events()), model=model)
    assert info.value.where == "model"


def test_model_empty_string_is_rejected_and_one_character_accepted() -> None:
    turn = parse_events(fixture_events())
    with pytest.raises(ContinuationError, match="model"):
        stateful(turn, model="")
    assert stateful(turn, model="m")["model"] == "m"


_NOT_STEPS = st.one_of(st.just(USER_INPUT), st.text(max_size=3), st.integers(),
                       st.frozensets(st.integers(), max_size=2), st.just(iter([USER_INPUT])))


@given(prior=_NOT_STEPS)
def test_prior_input_steps_must_be_a_list_or_tuple(prior: object) -> None:
    event(f"prior_input_steps {type(prior).__name__}")
    with pytest.raises(ContinuationError, match="prior_input_steps must be a list") as info:
        stateless(_call_only_turn(), prior_input_steps=prior)
    assert info.value.where == "prior_input_steps"


def test_prior_input_steps_tuple_is_accepted_like_a_list() -> None:
    as_tuple = stateless(_call_only_turn(), prior_input_steps=(USER_INPUT,))
    assert as_tuple == stateless(_call_only_turn(), prior_input_steps=[USER_INPUT])


def test_streamed_step_count_limit_is_exact() -> None:
    events = fixture_events()
    steps = sum(1 for e in events if e.get("event_type") == "step.start")
    assert steps >= 2
    assert parse_events(events, limits=StreamLimits(max_items=steps)).calls
    with pytest.raises(LimitExceeded, match=f"more than {steps - 1} steps"):
        parse_events(events, limits=StreamLimits(max_items=steps - 1))


@pytest.mark.parametrize("content", [5, 1.5, True, "text", {"type": "text"}])
def test_prior_input_content_that_is_not_a_list_is_rejected_by_name(content: object) -> None:
    # with the content guard off, 5 escaped as a TypeError and "text" got the wrong message
    bad = [{"type": "user_input", "content": content}]
    with pytest.raises(ContinuationError, match="content must be a list") as info:
        stateless(_call_only_turn(), prior_input_steps=bad)
    assert info.value.where == "prior_input_steps[0].content"


@given(position=st.integers(0, 1000), value=st.one_of(st.integers(), st.floats(), st.none(),
                                                       st.booleans(), st.just([]), st.just({})))
def test_a_non_string_in_any_string_field_of_an_event_is_a_contract_error(
    position: int, value: object
) -> None:
    # The fast path that reads each event's string fields must hand a non-string to the
    # general path (which names it), never call str methods on it.
    from pcfuzz.contracts.errors import ContractError

    events = fixture_events()
    sites = [(i, k) for i, e in enumerate(events) for k, v in e.items() if type(v) is str]
    sites += [(i, f"delta.{k}") for i, e in enumerate(events)
              for k, v in (e.get("delta") or {}).items() if type(v) is str]
    i, key = sites[position % len(sites)]
    event(f"{events[i].get('event_type')}.{key}")
    if key.startswith("delta."):
        events[i]["delta"][key.removeprefix("delta.")] = value
    else:
        events[i][key] = value
    with pytest.raises(ContractError):
        parse_events(events)


@given(position=st.integers(0, 1000))
def test_an_empty_string_in_an_event_id_field_is_rejected_on_every_path(position: int) -> None:
    # event_id and interaction_id must be non-empty: the fast path (the ``not value``
    # dropped there accepted "") and the general path agree
    events = fixture_events()
    sites = [(i, k) for i, e in enumerate(events) for k in ("event_id", "interaction_id")
             if type(e.get(k)) is str]
    i, key = sites[position % len(sites)]
    event(f"{events[i].get('event_type')}.{key}")
    events[i][key] = ""
    with pytest.raises(ProtocolViolation, match=f"{key} must be a non-empty string") as info:
        parse_events(events)
    assert info.value.where == f"events[{i}].{key}"
