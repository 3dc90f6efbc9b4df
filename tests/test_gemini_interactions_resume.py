"""Gemini Interactions: the seed's resume rule for a stored Interaction's GET stream.

Seed: "The official last_event_id resumes a still-retrievable stored Interaction's GET
stream. [...] A real implementation must persist both interaction ID and high-water
event ID"; "a replay with identical ID and identical payload [is] idempotent delivery;
the same ID with different payload is a conflict."

The stream exposes ``interaction_id``, ``last_event_id`` (the high-water ``event_id``)
and ``resume_point``; the events of the resumed GET stream go to the same stream, or
to one rebuilt by ``resume_stream`` from the persisted events and the resume point.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from _revisions import each_revision
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts.errors import ContractError, InvalidArgument, ProtocolViolation
from pcfuzz.contracts.gemini_interactions import (
    GeminiInteractionsStream,
    GeminiResumePoint,
    parse_events,
    resume_stream,
)
from pcfuzz.contracts.sse import decode_sse
from pcfuzz.contracts.wire import sse_to_events
from pcfuzz.strategies import gemini_interactions as gs
from pcfuzz.strategies.sse import render_events

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "gemini_interactions.json"


def fixture_events() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))["events"]
    return events


def _fed(events: list[dict[str, Any]], revision: str | None = None) -> GeminiInteractionsStream:
    stream = (GeminiInteractionsStream() if revision is None
              else GeminiInteractionsStream(revision=revision))
    for e in events:
        stream.feed(copy.deepcopy(e))
    return stream


# ------------------------------------------------------------ what is persisted


def test_stream_exposes_interaction_id_and_high_water_event_id() -> None:
    events = fixture_events()
    stream = GeminiInteractionsStream()
    assert (stream.interaction_id, stream.last_event_id, stream.resume_point) == (None, None, None)
    for n, e in enumerate(events[:5]):
        stream.feed(copy.deepcopy(e))
        assert stream.last_event_id == e["event_id"], n
    iid = events[0]["interaction"]["id"]
    assert stream.interaction_id == iid
    assert stream.resume_point == GeminiResumePoint(iid, events[4]["event_id"])


def test_replay_of_an_earlier_event_does_not_move_the_high_water_event_id() -> None:
    # A naive "last id seen" would point back at event 1, and a resume after it would
    # have the server redeliver everything from event 2 on (or skip nothing, by luck).
    events = fixture_events()
    stream = _fed(events[:6])
    stream.feed(copy.deepcopy(events[1]))
    assert stream.last_event_id == events[5]["event_id"]


def test_event_without_event_id_leaves_the_high_water_event_id() -> None:
    events = fixture_events()
    stream = _fed(events[:4])
    bare = copy.deepcopy(events[4])
    bare.pop("event_id")
    stream.feed(bare)
    assert stream.last_event_id == events[3]["event_id"]


def test_no_resume_point_before_interaction_created_or_without_event_ids() -> None:
    events = [dict(e) for e in fixture_events()]
    for e in events:
        e.pop("event_id")
    stream = _fed(events[:5])
    assert stream.interaction_id is not None
    assert stream.last_event_id is None and stream.resume_point is None



@pytest.mark.parametrize("where", ["event_id", "interaction.id"])
def test_an_id_no_resume_point_can_hold_is_rejected_when_it_arrives(where: str) -> None:
    # Decision: an id longer than a resume point may hold (MAX_RESUME_ID_CHARS) is the
    # provider's, so the stream rejects it as it arrives (LimitExceeded, disposition
    # "transient"), naming the field; before, the stream accepted it and
    # ``resume_point`` raised InvalidArgument, blaming the caller, later.
    from pcfuzz.contracts.errors import LimitExceeded
    from pcfuzz.contracts.gemini_interactions._turn import MAX_RESUME_ID_CHARS

    events = copy.deepcopy(fixture_events())
    long_id = "i" * (MAX_RESUME_ID_CHARS + 1)
    if where == "event_id":
        events[0]["event_id"] = long_id
    else:
        for e in events:
            if "interaction" in e:
                e["interaction"]["id"] = long_id
            if "interaction_id" in e:
                e["interaction_id"] = long_id
    stream = GeminiInteractionsStream()
    with pytest.raises(LimitExceeded, match=str(MAX_RESUME_ID_CHARS)) as info:
        stream.feed(events[0])
    assert info.value.where == f"events[0].{where}"
    assert stream.poisoned
    with pytest.raises(LimitExceeded):
        parse_events(events)


def test_ids_at_the_resume_point_bound_are_accepted_and_resumable() -> None:
    from pcfuzz.contracts.gemini_interactions._turn import MAX_RESUME_ID_CHARS

    events = copy.deepcopy(fixture_events())
    iid = "i" * MAX_RESUME_ID_CHARS
    for e in events:
        if "interaction" in e:
            e["interaction"]["id"] = iid
        if "interaction_id" in e:
            e["interaction_id"] = iid
    events[0]["event_id"] = "e" * MAX_RESUME_ID_CHARS
    stream = _fed(events[:1])
    assert stream.resume_point == GeminiResumePoint(iid, "e" * MAX_RESUME_ID_CHARS)
    assert parse_events(events).calls


def _retained_by_feeding(texts: list[str]) -> tuple[GeminiInteractionsStream, int]:
    """A stream fed the events parsed from ``texts`` (each parsed right before it is
    fed and then dropped, as from the wire) and the memory (tracemalloc) it holds."""
    import gc
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        stream = GeminiInteractionsStream()
        for text in texts:
            stream.feed(json.loads(text))
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return stream, held


def _status_updates(n: int, iid: str = "interaction-7f3a", **extra: Any) -> list[str]:
    """The JSON texts of ``interaction.created`` and ``n`` status updates."""
    created = copy.deepcopy(fixture_events()[0])
    created["interaction"]["id"] = iid
    return [json.dumps(created)] + [
        json.dumps({"event_type": "interaction.status_update", "event_id": f"status-{i}",
                    "interaction_id": iid, "status": "in_progress", **extra})
        for i in range(n)]


def test_replay_records_hold_no_more_than_the_stream_keeps_anyway() -> None:
    # Before, the stream kept every event with an event_id in full to compare a later
    # replay: 1,000 status updates with 20 KB of unknown fields kept 20 MB (and no
    # StreamLimits field bounds the events). A record now shares what the stream
    # keeps anyway (steps, deltas, argument text, the interaction id) and holds a
    # digest of the canonical JSON of anything else (unknown envelope fields).
    stream, held = _retained_by_feeding(
        _status_updates(1_000, metadata={"notes": "x" * 20_000}))
    assert stream.last_event_id == "status-999"
    assert held < 1_000_000, held
    stream, held = _retained_by_feeding(_status_updates(1_000, iid="i" * 4_000))
    assert stream.last_event_id == "status-999"
    assert held < 1_000_000, held


@pytest.mark.parametrize("changed", [False, True])
def test_replay_of_an_event_with_unknown_fields_compares_its_digest(changed: bool) -> None:
    events = [json.loads(t) for t in
              _status_updates(3, metadata={"notes": "n" * 100, "tags": [1, 2.0, True]})]
    stream = _fed(events)
    again = copy.deepcopy(events[2])
    again["metadata"] = {"tags": [1, 2.0, True], "notes": "n" * 100}  # key order: canonical
    if changed:
        again["metadata"]["tags"] = [1, 2, True]  # 2 and 2.0 stay distinct
        with pytest.raises(ProtocolViolation, match="replayed with a different payload"):
            stream.feed(again)
    else:
        stream.feed(again)
        assert stream.last_event_id == events[-1]["event_id"]

# ------------------------------------------------------ the resumed GET stream


def test_resumed_stream_replaying_already_seen_events_is_idempotent() -> None:
    events = fixture_events()
    stream = _fed(events[:7])
    # The server resumes "after" the high-water id but may redeliver: an overlap of 3.
    for e in events[4:]:
        stream.feed(copy.deepcopy(e))
    assert stream.close().digest == parse_events(events).digest


def test_resumed_stream_with_a_conflicting_payload_under_a_seen_id_fails() -> None:
    events = fixture_events()
    stream = _fed(events[:7])
    conflict = copy.deepcopy(events[6])
    conflict["delta"]["arguments"] = '{"order_ref": "B-200"'
    with pytest.raises(ProtocolViolation, match="different payload"):
        stream.feed(conflict)
    assert stream.poisoned


def test_resume_stream_rebuilds_the_stream_from_persisted_events_and_point() -> None:
    events = fixture_events()
    before = _fed(events[:7])
    point = before.resume_point
    assert point is not None
    rebuilt = resume_stream(events[:7], point)
    assert rebuilt.resume_point == point
    for e in events[5:]:
        rebuilt.feed(copy.deepcopy(e))
    assert rebuilt.close().digest == parse_events(events).digest


def test_resume_point_of_events_that_do_not_hold_its_event_id_is_rejected() -> None:
    # Persisted events lost the tail the point claims seen: resuming after the point
    # would skip those events for good.
    events = fixture_events()
    point = _fed(events[:7]).resume_point
    assert point is not None
    with pytest.raises(ProtocolViolation, match="skip") as info:
        resume_stream(events[:5], point)
    assert info.value.where == "point.last_event_id"


def test_resume_point_of_another_interaction_is_rejected() -> None:
    events = fixture_events()
    with pytest.raises(ProtocolViolation, match="interaction") as info:
        resume_stream(events[:7], GeminiResumePoint("another-interaction", events[6]["event_id"]))
    assert info.value.where == "point.interaction_id"


@pytest.mark.parametrize("fields", [("", "e1"), ("i", ""), ("i", 3), (None, "e"),
                                    ("i" * 5000, "e")])
def test_resume_point_fields_are_non_empty_bounded_strings(fields: tuple[Any, Any]) -> None:
    with pytest.raises(InvalidArgument):
        GeminiResumePoint(*fields)


def test_resume_stream_rechecks_a_point_changed_after_construction() -> None:
    events = fixture_events()
    point = GeminiResumePoint(events[0]["interaction"]["id"], events[6]["event_id"])
    object.__setattr__(point, "last_event_id", 7)
    with pytest.raises(InvalidArgument):
        resume_stream(events[:7], point)
    with pytest.raises(InvalidArgument):
        resume_stream(events[:7], {"interaction_id": "i", "last_event_id": "e"})  # type: ignore[arg-type]


def test_resumed_get_stream_as_sse_bytes_feeds_the_same_stream() -> None:
    # The wire path: the resumed GET capture (with SSE id: lines equal to event_id)
    # decoded and mapped by contracts.wire, fed to the stream rebuilt from the state.
    events = fixture_events()
    point = _fed(events[:7]).resume_point
    assert point is not None
    body = b"".join(
        b"id: %s\ndata: %s\n\n" % (e["event_id"].encode(), json.dumps(e).encode())
        for e in events[6:])
    stream = resume_stream(events[:7], point)
    for e in sse_to_events("gemini-interactions", decode_sse(body)):
        stream.feed(e)
    assert stream.close().digest == parse_events(events).digest


# ------------------------------------------------------------------ properties


@each_revision
@given(st.data())
def test_any_disconnect_and_overlapping_resume_gives_the_uninterrupted_turn(
    revision: str, data: st.DataObject,
) -> None:
    model = data.draw(gs.turn_models(revision=revision))
    model.with_event_ids = True
    rendered = data.draw(gs.rendered_streams(model))
    events = rendered.events
    cut = data.draw(st.integers(1, len(events) - 1), label="disconnect after")
    seen = events[:cut]
    point = _fed(seen, revision).resume_point
    assert point is not None and point.last_event_id == seen[-1]["event_id"]
    overlap = data.draw(st.integers(0, cut), label="events redelivered")
    event(f"overlap={'none' if overlap == 0 else 'all' if overlap == cut else 'some'}")
    rebuilt = data.draw(st.booleans(), label="rebuilt from persisted state")
    event(f"rebuilt={rebuilt}")
    stream = resume_stream(seen, point, revision=revision) if rebuilt else _fed(seen, revision)
    for e in events[cut - overlap:]:
        stream.feed(copy.deepcopy(e))
    assert stream.resume_point == GeminiResumePoint(model.interaction_id, events[-1]["event_id"])
    assert stream.close().digest == parse_events(events, revision=revision).digest


@each_revision
@given(st.data())
def test_any_conflicting_payload_in_a_resumed_stream_fails(revision: str, data: st.DataObject) -> None:
    model = data.draw(gs.turn_models(revision=revision))
    model.with_event_ids = True
    rendered = data.draw(gs.rendered_streams(model))
    events = rendered.events
    cut = data.draw(st.integers(1, len(events) - 1), label="disconnect after")
    pos = data.draw(st.integers(0, cut - 1), label="conflicting event")
    other = copy.deepcopy(events[pos])
    other["x_conflict"] = data.draw(st.integers())
    event(f"conflict on {other['event_type']}")
    stream = resume_stream(events[:cut], GeminiResumePoint(model.interaction_id,
                                                            events[cut - 1]["event_id"]),
                           revision=revision)
    with pytest.raises(ProtocolViolation, match="different payload"):
        for e in [*events[pos:cut], other, *events[cut:]]:
            stream.feed(copy.deepcopy(e) if e is not other else other)
        stream.close()


@each_revision
@given(st.data())
def test_resume_stream_never_accepts_a_point_its_events_did_not_reach(
    revision: str, data: st.DataObject,
) -> None:
    model = data.draw(gs.turn_models(revision=revision))
    model.with_event_ids = True
    events = data.draw(gs.rendered_streams(model)).events
    kept = data.draw(st.integers(1, len(events) - 1), label="persisted events")
    beyond = data.draw(st.integers(kept, len(events) - 1), label="point at event")
    event(f"missing={beyond - kept + 1}")
    point = GeminiResumePoint(model.interaction_id, events[beyond]["event_id"])
    with pytest.raises(ContractError):
        resume_stream(events[:kept], point, revision=revision)


@each_revision
@given(st.data())
def test_resumed_sse_capture_rechunked_gives_the_uninterrupted_turn(revision: str, data: st.DataObject) -> None:
    model = data.draw(gs.turn_models(revision=revision))
    model.with_event_ids = True
    events = data.draw(gs.rendered_streams(model)).events
    cut = data.draw(st.integers(1, len(events) - 1), label="disconnect after")
    overlap = data.draw(st.integers(0, cut), label="events redelivered")
    rng = data.draw(st.randoms(use_true_random=False), label="rendering")
    raw = render_events("gemini-interactions", events[cut - overlap:], rng)
    event(f"overlap={'none' if overlap == 0 else 'some'}, id lines={b'id:' in raw}")
    stream = resume_stream(events[:cut], GeminiResumePoint(model.interaction_id,
                                                            events[cut - 1]["event_id"]),
                           revision=revision)
    for e in sse_to_events("gemini-interactions", decode_sse(raw)):
        stream.feed(e)
    assert stream.close().digest == parse_events(events, revision=revision).digest
