"""The structure-aware fuzz targets cover every shipped revision and generate each
revision's own shapes (issue 13): the Gemini target's 2026-12-01 server-side steps and
statuses, the Chat target's null ``audio`` deltas; and each target's oracle follows the
chosen revision (a shape the revision does not know never parses there).

Inputs are a fixed, seeded set of random byte strings, so the counts below are the same
in every run; the properties that drive the targets with hypothesis are in the
contract property files.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from _fuzz import load_fuzz_target
from _revisions import PINNED, SHIPPED

LATER = "2026-12-01"
NEW_STEPS = {"processing_call", "processing_result", "retrieval_call", "retrieval_result",
             "tool_search_call", "tool_search_result"}
NEW_STATUSES = {"queued", "requires_continuation", "idle", "budget_exceeded"}


def _inputs(count: int = 600) -> list[bytes]:
    rng = random.Random(13)
    return [rng.randbytes(rng.randrange(8, 400)) for _ in range(count)]


@pytest.fixture(scope="module")
def gemini() -> Any:
    return load_fuzz_target("fuzz_gemini_interactions")


@pytest.fixture(scope="module")
def chat() -> Any:
    return load_fuzz_target("fuzz_openai_chat")


@pytest.mark.parametrize("target", ["fuzz_gemini_interactions", "fuzz_openai_chat",
                                    "fuzz_openai_responses", "fuzz_anthropic_messages"])
def test_every_structured_target_picks_every_shipped_revision(target: str) -> None:
    module = load_fuzz_target(target)
    assert tuple(module._REVISIONS) == SHIPPED
    if target == "fuzz_openai_responses":  # picks by its own random generator
        assert tuple(sorted(module.model_streams.REVISIONS)) == SHIPPED
        return
    picked = {module._revision_for(bytes(n)) for n in range(2 * len(SHIPPED))}
    assert picked == set(SHIPPED)


def _shapes(events: list[Any]) -> tuple[set[str], set[str]]:
    steps: set[str] = set()
    statuses: set[str] = set()
    for e in events:
        if not isinstance(e, dict):
            continue
        for key in ("step", "delta"):
            if isinstance(e.get(key), dict) and isinstance(e[key].get("type"), str):
                steps.add(e[key]["type"])
        status = e.get("status")
        if isinstance(e.get("interaction"), dict):
            status = e["interaction"].get("status")
        if isinstance(status, str):
            statuses.add(status)
    return steps, statuses


def test_gemini_structured_mode_generates_each_revisions_shapes(gemini: Any) -> None:
    seen: dict[str, tuple[set[str], set[str]]] = {r: (set(), set()) for r in SHIPPED}
    foreign_under_pinned = 0
    for data in _inputs():
        revision, events = gemini.structured_events(data)
        steps, statuses = _shapes(events)
        seen[revision][0].update(steps)
        seen[revision][1].update(statuses)
        if revision == PINNED and (steps & NEW_STEPS or statuses & NEW_STATUSES):
            foreign_under_pinned += 1
    later_steps, later_statuses = seen[LATER]
    assert NEW_STEPS <= later_steps, NEW_STEPS - later_steps
    assert NEW_STATUSES <= later_statuses, NEW_STATUSES - later_statuses
    # the pinned revision sees them too, rarely: as shapes it must reject
    assert 0 < foreign_under_pinned < len(_inputs()) // 4


def test_gemini_new_steps_render_the_sdk_field_sets(gemini: Any) -> None:
    # written from google-genai 3.6.1 (step.py / stepdelta.py): no made-up fields
    allowed_step = {"type", "id", "call_id", "arguments", "signature"}
    allowed_delta = {"type", "arguments", "signature", "is_error", "result"}
    checked = 0
    for data in _inputs(200):
        _, events = gemini.structured_events(data)
        for e in events:
            step, delta = e.get("step"), e.get("delta")
            if isinstance(step, dict) and step.get("type") in NEW_STEPS and set(step) <= (
                    allowed_step | {"x"}):
                checked += 1
                assert ("id" in step) == step["type"].endswith("_call"), step
            if isinstance(delta, dict) and delta.get("type") in NEW_STEPS:
                assert set(delta) <= allowed_delta | {"x"}, delta
    assert checked


def test_gemini_oracle_follows_the_chosen_revision(gemini: Any) -> None:
    # A turn that returns a 2026-12-01 step or status under 2026-07-21 breaks the
    # target's oracle (an AssertionError, a crash), whatever the parser does.
    from pcfuzz.contracts.gemini_interactions import parse_events

    events = [
        {"event_type": "interaction.created", "interaction": {"id": "i", "status": "in_progress"}},
        {"event_type": "step.start", "index": 0, "step": {"type": "processing_call", "id": "p"}},
        {"event_type": "step.stop", "index": 0},
        {"event_type": "interaction.completed",
         "interaction": {"id": "i", "status": "requires_continuation"}},
    ]
    turn = parse_events(events, revision=LATER)
    gemini._check_turn(turn, LATER)
    assert turn.calls == ()
    with pytest.raises(AssertionError, match="another revision"):
        gemini._check_turn(turn, PINNED)
    # a parser that returned the same turn under 2026-07-21 (simulated: the turn's
    # revision relabelled) is caught by the status and step rules of that revision
    from types import SimpleNamespace

    relabelled = SimpleNamespace(revision=PINNED, status=turn.status, steps=turn.steps,
                                 calls=turn.calls)
    with pytest.raises(AssertionError, match="'requires_continuation' returned under 2026-07-21"):
        gemini._check_turn(relabelled, PINNED)
    relabelled.status = "completed"
    with pytest.raises(AssertionError, match=r"\['processing_call'\] accepted under 2026-07-21"):
        gemini._check_turn(relabelled, PINNED)


def test_every_gemini_structured_input_keeps_the_oracles(gemini: Any) -> None:
    outcomes = {r: 0 for r in SHIPPED}
    for data in _inputs(300):
        gemini.TestOneInput(b"\x01" + data)  # mode 1: structured (raises on a crash)
        outcomes[gemini._revision_for(data)] += 1
    assert all(outcomes.values()), outcomes


def test_chat_structured_mode_generates_null_audio_only_where_known(chat: Any) -> None:
    audio = {r: 0 for r in SHIPPED}
    for data in _inputs():
        revision, frames, _, mutation = chat.structured_frames(data)
        has_audio = any(isinstance(f, dict) and isinstance(f.get("choices"), list)
                        and f["choices"] and isinstance(f["choices"][0], dict)
                        and isinstance(f["choices"][0].get("delta"), dict)
                        and "audio" in f["choices"][0]["delta"] for f in frames)
        audio[revision] += has_audio
        if revision == PINNED and has_audio and mutation is None:
            raise AssertionError("a 2026-07-21 stream with audio is not marked rejecting")
        chat.run_structured(data)  # the oracles hold (raises RuntimeError otherwise)
    assert audio[LATER] > len(_inputs()) // 4
    assert 0 < audio[PINNED] < audio[LATER]


def test_responses_retarget_mutator_skips_indexes_the_target_overwrote() -> None:
    # Found while fuzzing the targets across revisions: the structured mode overwrites
    # fields with arbitrary JSON before mutating, and retarget_delta hashed a dict
    # output_index (TypeError escaped TestOneInput, a harness crash).
    from pcfuzz.strategies.openai_responses import MUTATORS_BY_NAME

    def added(index: Any, item_id: str) -> dict[str, Any]:
        return {"type": "response.output_item.added", "output_index": index,
                "item": {"type": "function_call", "id": item_id}}

    def delta(index: Any, item_id: str) -> dict[str, Any]:
        return {"type": "response.function_call_arguments.delta", "output_index": index,
                "item_id": item_id, "delta": "{"}

    events = [added({"x": 1}, "a"), added(1, "b"), delta({"x": 1}, "a"), delta(1, "b")]
    retarget = MUTATORS_BY_NAME["retarget_delta"]
    assert retarget.apply(events, random.Random(0)) is None  # one addressable call only
    events.insert(2, added(2, "c"))
    mutated = retarget.apply(events, random.Random(0))
    assert mutated is not None and mutated != events
