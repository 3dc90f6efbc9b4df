"""A mutation is judged under the revision it was drawn for (issue 21, item 6).

Each contract ships two revisions, and a later one defines names an earlier one does
not know (Chat's ``audio`` delta, Gemini's ``budget_exceeded`` / ``queued`` /
``requires_continuation`` / ``idle`` statuses and six server-side steps, Responses'
``arguments.done`` without ``name``). A mutation that claims "unknown" (or "drift", or
a failure) is only that relative to one revision: it must be drawn for the revision
that parses it, and must exclude every name that revision knows.

Found: ``test_every_rejected_response_is_transient`` drew Chat's
``unknown_delta_field`` at the strategies' default (the pinned revision, where
``audio`` is unknown) and parsed it at the parser's default (2026-12-01, where a null
``audio`` is known): the parser rightly accepted it. The conformance kit made the same
mismatch for every contract (scenarios drawn at the pinned revision, this project's
adapters parsing at the default one): ``--strict`` could flag a parser of today's API
for accepting ``audio: null``, Gemini's ``budget_exceeded`` (a provider failure since
2026-12-01) was a strictness-only "unknown status", and Gemini's "foreign" steps
included the six steps 2026-12-01 defines, rejected for another reason (never
stopped) instead of as unknown.
"""

from __future__ import annotations

from typing import Any

import pytest
from _revisions import PINNED, SHIPPED, each_revision
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.conform.adapters import ADAPTERS
from pcfuzz.contracts import anthropic_messages as am_contract
from pcfuzz.contracts import gemini_interactions as gi_contract
from pcfuzz.contracts import openai_chat as oc_contract
from pcfuzz.contracts import openai_responses as or_contract
from pcfuzz.contracts.errors import (
    TRANSIENT,
    ContractError,
    ProtocolViolation,
    ProviderError,
    UnsupportedProviderState,
)
from pcfuzz.strategies import conformance as kit
from pcfuzz.strategies import gemini_interactions as gi
from pcfuzz.strategies import openai_chat as oc

LATER = "2026-12-01"
CONTRACT_MODULES: dict[str, Any] = {
    "openai-responses": or_contract,
    "anthropic-messages": am_contract,
    "gemini-interactions": gi_contract,
    "openai-chat": oc_contract,
}
ROLE = {"choices": [{"index": 0, "delta": {"role": "assistant"}}]}
#: The draw that failed: ``unknown_delta_field`` with ``audio: null``, drawn for the
#: pinned revision.
AUDIO_FRAMES: list[Any] = [ROLE, {"choices": [{"index": 0, "delta": {"content": "x",
                                                                     "audio": None}}]},
                           "[DONE]"]


# ------------------------------------------------------------------ Chat: the found case


def test_a_null_audio_delta_is_unknown_only_in_the_revision_that_does_not_know_it() -> None:
    # The strategies' own model of each revision (never the parser's tables) says so ...
    assert "audio" in oc.UNKNOWN_DELTA_FIELDS[PINNED]
    assert "audio" in oc.NULL_DELTA_FIELDS[LATER] and "audio" not in oc.UNKNOWN_DELTA_FIELDS[LATER]
    # ... and the parser agrees: rejected (transiently) under the pinned revision, a
    # known null-only field under 2026-12-01.
    with pytest.raises(ProtocolViolation, match="unknown delta field") as info:
        oc_contract.parse_events(AUDIO_FRAMES, revision=PINNED)
    assert info.value.disposition == TRANSIENT
    assert oc_contract.parse_events(AUDIO_FRAMES, revision=LATER).message["content"] == "x"


@each_revision
@given(st.data())
def test_an_unknown_delta_field_is_unknown_in_the_revision_it_is_parsed_under(
        revision: str, data: st.DataObject) -> None:
    kind, frames, expected = data.draw(oc.mutated_streams(kinds=("unknown_delta_field",),
                                                          revision=revision))
    known = set(oc.MODEL_DELTA_KEYS) | set(oc.NULL_DELTA_FIELDS[revision])
    unknown = {key for f in frames if isinstance(f, dict) and f.get("choices")
               for key in f["choices"][0]["delta"] if key not in known}
    assert len(unknown) == 1, unknown
    event(f"{revision}: unknown delta field {sorted(unknown)[0]!r}")
    assert expected is ProtocolViolation
    with pytest.raises(ProtocolViolation, match="unknown delta field"):
        oc_contract.parse_events(frames, revision=revision)


# ------------------------------------------------------------------ the kit's revision


@pytest.mark.parametrize("contract", kit.CONTRACTS)
def test_the_kit_draws_every_scenario_at_the_parsers_default_revision(contract: str) -> None:
    # The adapters (this project's, and a user's parser of today's API) read the
    # default revision: the kit's "unknown" must be unknown there.
    assert kit.REVISIONS[contract] == CONTRACT_MODULES[contract].REVISION == SHIPPED[-1]


def _unknown_claim(contract: str) -> type[ContractError]:
    """The class that says "unknown" for a strictness scenario's claim."""
    if contract == "openai-chat":
        return ProtocolViolation  # "unknown delta field" (a closed level)
    return UnsupportedProviderState


UNKNOWN_SCENARIOS = [
    ("openai-chat", "unknown_delta_field"), ("openai-chat", "unknown_tool_delta_field"),
    ("openai-responses", "unknown_item_type"), ("openai-responses", "unknown_event_type"),
    ("anthropic-messages", "unknown_block"), ("anthropic-messages", "fallback_block"),
    ("gemini-interactions", "with_foreign_step"), ("gemini-interactions", "with_foreign_delta"),
    ("gemini-interactions", "with_status:unknown"),
]


@pytest.mark.parametrize(("contract", "mutation"), UNKNOWN_SCENARIOS)
@given(data=st.data())
def test_the_kits_unknown_scenarios_are_unknown_to_the_default_revision(
        contract: str, mutation: str, data: st.DataObject) -> None:
    scenario = data.draw(kit.mutation_scenarios(contract, mutation))
    assert scenario.mutation == mutation and scenario.label == "strictness"
    with pytest.raises(ContractError) as info:
        ADAPTERS[contract](scenario.events)
    event(f"{contract} {mutation}: {type(info.value).__name__}")
    assert isinstance(info.value, _unknown_claim(contract)), info.value
    if contract == "openai-chat" and mutation == "unknown_delta_field":
        assert "unknown delta field" in str(info.value)


# ------------------------------------------------------------------ Gemini statuses


def test_budget_exceeded_is_unknown_pinned_and_a_provider_failure_since_2026_12_01() -> None:
    assert "budget_exceeded" in gi.unknown_statuses(PINNED)
    assert "budget_exceeded" not in gi.unknown_statuses(LATER)
    assert "budget_exceeded" in gi.failure_statuses(LATER)
    # The kit draws at the later revision: a parser that runs calls of a
    # budget_exceeded interaction fails the default (safety) checks, not only --strict.
    assert "budget_exceeded" in gi.failure_statuses(kit.REVISIONS["gemini-interactions"])


@each_revision
@given(st.data())
def test_each_revisions_status_sets_mean_what_that_revision_says(
        revision: str, data: st.DataObject) -> None:
    rendered = data.draw(gi.rendered_streams(min_calls=1, revision=revision))
    unknown = data.draw(gi.with_status(rendered, gi.unknown_statuses(revision)))
    failed = data.draw(gi.with_status(rendered, gi.failure_statuses(revision)))
    event(f"{revision}: unknown {unknown[-1]['interaction']['status']!r}, "
          f"failure {failed[-1]['interaction']['status']!r}")
    with pytest.raises(UnsupportedProviderState):
        gi_contract.parse_events(unknown, revision=revision)
    with pytest.raises(ProviderError):
        gi_contract.parse_events(failed, revision=revision)


@each_revision
@given(st.data())
def test_a_foreign_step_is_outside_the_revision_it_is_drawn_for(
        revision: str, data: st.DataObject) -> None:
    rendered = data.draw(gi.rendered_streams(revision=revision))
    assert not set(gi.foreign_step_types(revision)) & set(gi.step_types(revision))
    mutated = data.draw(gi.with_foreign_step(rendered))
    kind = next(e for e in mutated if e.get("step", {}).get("id") == "x")["step"]["type"]
    event(f"{revision}: foreign step {kind}")
    with pytest.raises(UnsupportedProviderState):
        gi_contract.parse_events(mutated, revision=revision)


@each_revision
@given(st.data())
def test_a_foreign_delta_is_outside_the_revision_it_is_drawn_for(
        revision: str, data: st.DataObject) -> None:
    # retrieval_call / retrieval_result were drawn as "v1beta-only" at every revision:
    # 2026-12-01 knows them (the retrieval steps' deltas), so on another step they were
    # a known type in the wrong place, not an unknown one.
    rendered = data.draw(gi.rendered_streams(min_calls=1, revision=revision))
    mutated = data.draw(gi.with_foreign_delta(rendered))
    kind = next(e for e in mutated if e.get("delta", {}).get("arguments") == "{}"
                and e["delta"]["type"] != "arguments_delta")["delta"]["type"]
    event(f"{revision}: foreign delta {kind}")
    assert kind in gi.foreign_delta_types(revision)
    with pytest.raises(UnsupportedProviderState):
        gi_contract.parse_events(mutated, revision=revision)
