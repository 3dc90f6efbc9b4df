"""Gemini Interactions: the exact-type event reader and the lazy ``event_id`` fingerprint.

The stream reads a common event field by field (``_read_exact``) and sends anything
else through the general copier; it keeps the first copy of an event with an
``event_id`` and serializes both only when the id comes again. The rules under test:
the fast reader changes no outcome (same turn, same error class and message as the
general path), and "same payload" still tells ``1``, ``1.0`` and ``true`` apart and
never reads a caller's object after ``feed`` returned.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from _revisions import each_revision
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts.errors import ContractError, ProtocolViolation
from pcfuzz.contracts.gemini_interactions import GeminiInteractionsStream, parse_events
from pcfuzz.contracts.gemini_interactions import _stream as gemini_stream

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "gemini_interactions.json"


def fixture_events() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))["events"]
    return events


def _delta_index(events: list[dict[str, Any]]) -> int:
    return next(i for i, e in enumerate(events)
                if e["event_type"] == "step.delta" and "event_id" in e)


@pytest.mark.parametrize("first, again", [(1, True), (1, 1.0), (0, False), (1.0, True)])
def test_a_replay_that_differs_only_in_json_type_is_a_conflict(first: Any, again: Any) -> None:
    # first == again in Python: a fingerprint compared with == would call it a replay.
    events = fixture_events()
    i = _delta_index(events)
    events[i]["x_extra"] = first
    replay = copy.deepcopy(events[i])
    replay["x_extra"] = again
    with pytest.raises(ProtocolViolation, match="different payload"):
        parse_events([*events[: i + 1], replay, *events[i + 1:]])


def test_an_identical_replay_with_unknown_fields_is_idempotent() -> None:
    events = fixture_events()
    i = _delta_index(events)
    events[i]["x_extra"] = {"nested": [1, 1.0, True, None, "é"]}
    replayed = [*events[: i + 1], copy.deepcopy(events[i]), *events[i + 1:]]
    assert parse_events(replayed).digest == parse_events(events).digest


def test_the_kept_first_copy_is_the_streams_own() -> None:
    # A stream that kept the caller's event would see the change and accept the
    # changed event as an identical replay.
    events = fixture_events()
    i = _delta_index(events)
    stream = GeminiInteractionsStream()
    for e in events[: i + 1]:
        stream.feed(e)
    events[i]["delta"]["arguments"] = "changed"
    with pytest.raises(ProtocolViolation, match="different payload"):
        stream.feed(events[i])


class SubStr(str):
    pass


class SubInt(int):
    pass


_ODD: list[Callable[[], Any]] = [
    lambda: float("nan"), lambda: 10**1000, lambda: "\ud800", lambda: SubStr("step.delta"),
    lambda: SubInt(0), lambda: (1,), lambda: None, lambda: "", lambda: 2**40,
    lambda: {"deep": {"er": {"still": 1}}}, lambda: [[[]]], lambda: True, lambda: "x" * 70,
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    if type(value) is dict:
        for k, v in value.items():
            out.append((*prefix, k))
            out += _paths(v, (*prefix, k))
    elif type(value) is list:
        for i, v in enumerate(value):
            out.append((*prefix, i))
            out += _paths(v, (*prefix, i))
    return out


def _outcome(events: list[dict[str, Any]], revision: str) -> tuple[str, str]:
    try:
        turn = parse_events(copy.deepcopy(events), revision=revision)
    except ContractError as exc:
        return type(exc).__name__, f"{exc.message} @ {exc.where}"
    return "turn", turn.digest


@each_revision
@given(data=st.data())
def test_the_exact_reader_changes_no_outcome(revision: str, data: st.DataObject) -> None:
    events = fixture_events()
    n = data.draw(st.integers(0, len(events) - 1), label="event")
    target = events[n]
    kind = target["event_type"]
    paths = _paths(target)
    # Half the time a field of the envelope itself: what the exact reader checks.
    top = [p for p in paths if len(p) == 1]
    path = data.draw(st.sampled_from(top if data.draw(st.booleans()) else paths), label="path")
    value = data.draw(st.sampled_from(_ODD), label="value")()
    action = data.draw(st.sampled_from(["replace", "add key", "odd key"]), label="action")
    parent: Any = target
    for step in path[:-1]:
        parent = parent[step]
    if action == "replace":
        parent[path[-1]] = value
    elif type(parent) is dict:
        key: Any = "x_extra" if action == "add key" else data.draw(
            st.sampled_from(["\udc80", 5, SubStr("index")]), label="key")
        parent[key] = value
    event(f"{action} in {kind}")
    fast = _outcome(events, revision)
    with mock.patch.object(gemini_stream, "_read_exact", lambda ev, shapes: gemini_stream.NOT_FAST):
        general = _outcome(events, revision)
    event("accepted" if fast[0] == "turn" else f"rejected: {fast[0]}")
    assert fast == general


@pytest.mark.parametrize("field", ["event_id", "interaction_id", "status"])
@pytest.mark.parametrize("text", ["\ud800", "ok\udfff"])
def test_a_lone_surrogate_in_an_envelope_string_is_rejected(field: str, text: str) -> None:
    # Envelope strings are read without a copy pass; a reader that only checked
    # their type would accept these.
    events = fixture_events()
    i = next(i for i, e in enumerate(events) if field in e)
    events[i][field] = text
    with pytest.raises(ProtocolViolation, match="surrogate"):
        parse_events(events)
