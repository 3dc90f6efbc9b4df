"""The Chat stream's fast path for common chunk shapes gives the general path's outcome.

``ChatCompletionStream._fast_chunk`` reads a chunk of a common shape in one pass,
from a plan derived from the revision tables at import; anything else goes back to
the general table walk untouched. These tests run every stream twice -- once as
shipped, once with the plan removed (general path only) -- and require the same
progress per frame and the same turn (snapshot, digest, calls, recovery calls) or
the same error (class, message, ``where``), on valid streams, on the strategies'
mutations and on random perturbations of single values, keys and kinds.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from _revisions import each_revision
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts._stream import StreamLimits
from pcfuzz.contracts.errors import ContractError, LimitExceeded, ProtocolViolation
from pcfuzz.contracts.openai_chat import REVISION, REVISIONS, ChatCompletionStream
from pcfuzz.contracts.openai_chat import _stream as chat_stream
from pcfuzz.contracts.openai_chat._tables import Field
from pcfuzz.strategies.json_values import json_values
from pcfuzz.strategies.openai_chat import mutated_streams, rendered_streams


def _run(frames: list[Any], *, fast: bool, limits: StreamLimits | None = None,
         revision: str = REVISION) -> tuple[Any, ...]:
    """Feed ``frames`` and close: what the caller can observe, and how many chunks
    the fast path read."""
    stream = ChatCompletionStream(limits=limits, revision=revision)
    if not fast:
        stream._plan = None
    taken = 0
    original = stream._fast_chunk

    def counting(plan: Any, frame: Any, index: int) -> bool:
        nonlocal taken
        result = original(plan, frame, index)
        taken += result
        return result

    stream._fast_chunk = counting  # type: ignore[method-assign]
    progress: list[Any] = []
    try:
        for frame in frames:
            progress.append(stream.feed(frame))
        turn = stream.close()
    except ContractError as exc:
        outcome: tuple[Any, ...] = ("error", type(exc), exc.message, exc.where)
    else:
        outcome = ("turn", turn.snapshot(), turn.digest, turn.calls, turn.recovery_calls,
                   turn.progress_events)
    return (*outcome, tuple(progress)), taken


def _same_outcome(frames: list[Any], limits: StreamLimits | None = None,
                  revision: str = REVISION) -> tuple[Any, ...]:
    before = copy.deepcopy(frames)
    fast, taken = _run(frames, fast=True, limits=limits, revision=revision)
    general, untaken = _run(frames, fast=False, limits=limits, revision=revision)
    assert untaken == 0
    assert fast == general
    assert frames == before  # neither path changed the caller's frames
    chunks = sum(1 for f in frames if type(f) is dict)
    event("fast path: " + ("none" if not taken else "all chunks" if taken == chunks
                           else "some chunks"))
    event(f"outcome: {fast[0]}" + (f" {fast[1].__name__}" if fast[0] == "error" else ""))
    return fast


@each_revision
@given(st.data())
def test_fast_and_general_paths_agree_on_valid_streams(revision: str,
                                                       data: st.DataObject) -> None:
    rendered = data.draw(rendered_streams(product=None, revision=revision))
    _same_outcome(rendered.frames, revision=revision)


@each_revision
@given(st.data())
def test_fast_and_general_paths_agree_on_mutated_streams(revision: str,
                                                         data: st.DataObject) -> None:
    kind, frames, expected = data.draw(mutated_streams(revision=revision))
    event(f"mutation: {kind}")
    outcome = _same_outcome(frames, revision=revision)
    assert outcome[0] == "error" and issubclass(outcome[1], expected)


# ------------------------------------------------- perturbations of single values


def _slots(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside a frame (dict keys and list positions)."""
    found = [path]
    if type(value) is dict:
        for key, member in value.items():
            found.extend(_slots(member, (*path, key)))
    elif type(value) is list:
        for position, member in enumerate(value):
            found.extend(_slots(member, (*path, position)))
    return found


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


class _StrKey(str):
    """A string subclass key: the general path rejects it before any lookup."""

    __slots__ = ()


_ODD_VALUES = st.one_of(
    st.none(), st.booleans(), st.sampled_from(["", "assistant", "function", "x", "tool_calls"]),
    st.integers(-3, 3), st.sampled_from([2**63, -(2**63) - 1, 2**63 - 1, 1.5]),
    st.just({}), st.just([]), st.just([{}]), json_values(max_leaves=4),
)


@st.composite
def perturbed_streams(draw: st.DrawFn, revision: str) -> tuple[str, list[Any]]:
    """A valid stream of ``revision`` with one value replaced, one key added, renamed
    or removed."""
    frames = copy.deepcopy(draw(rendered_streams(product=None, revision=revision)).frames)
    chunk_positions = [i for i, f in enumerate(frames) if type(f) is dict]
    position = draw(st.sampled_from(chunk_positions))
    frame = frames[position]
    how = draw(st.sampled_from(["replace", "add_key", "odd_key", "remove", "duplicate"]))
    wanted = {"replace": lambda v, p: bool(p), "duplicate": lambda v, p: type(v) is list and v,
              "add_key": lambda v, p: type(v) is dict}.get(how, lambda v, p: type(v) is dict and v)
    paths = [p for p in _slots(frame) if wanted(_at(frame, p), p)]
    if not paths:
        return "none", frames
    path = draw(st.sampled_from(paths))
    target = _at(frame, path)
    if how == "replace":
        _at(frame, path[:-1])[path[-1]] = draw(_ODD_VALUES)
    elif how == "add_key":
        target[draw(st.sampled_from(["x_extension", "index", "id", "logprobs", "error"]))] = (
            draw(_ODD_VALUES))
    elif how == "odd_key":
        key = draw(st.sampled_from(sorted(target)))
        member = target.pop(key)
        target[_StrKey(key) if draw(st.booleans()) else 7] = member
    elif how == "remove":
        del target[draw(st.sampled_from(sorted(target)))]
    else:
        target.append(copy.deepcopy(target[0]))
    return how, frames


@each_revision
@given(st.data())
def test_fast_and_general_paths_agree_on_perturbed_streams(revision: str,
                                                           data: st.DataObject) -> None:
    how, frames = data.draw(perturbed_streams(revision))
    event(f"perturbation: {how}")
    _same_outcome(frames, revision=revision)


@each_revision
@given(st.data(), st.integers(1, 64), st.integers(1, 128), st.integers(1, 3))
def test_fast_and_general_paths_agree_at_the_limits(
    revision: str, data: st.DataObject, fragment: int, total: int, items: int
) -> None:
    rendered = data.draw(rendered_streams(product=None, revision=revision))
    # The limits are raised in phase 2, after some effects: the same error and where.
    limits = StreamLimits(max_fragment_bytes=fragment, max_total_fragment_bytes=total,
                          max_items=items)
    outcome = _same_outcome(rendered.frames, limits, revision)
    if outcome[0] == "error" and outcome[1] is LimitExceeded:
        event(f"limit: {outcome[3].rsplit('.', 1)[-1]}")


# ------------------------------------------------------------------ examples


CHUNK = {
    "id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m",
    "choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "function": {"arguments": '{"a":'}}]}, "finish_reason": None}],
}
OPENING = {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {
    "role": "assistant", "tool_calls": [{"index": 0, "id": "call-1", "type": "function",
                                         "function": {"name": "f", "arguments": ""}}]}}]}


def test_the_current_revision_has_a_plan_and_the_common_chunk_takes_it() -> None:
    stream = ChatCompletionStream()
    assert stream._plan is not None
    stream.feed(OPENING)
    stream._kinds = set()
    assert stream._fast_chunk(stream._plan, copy.deepcopy(CHUNK), 1)
    assert stream.snapshot()["tool_calls"][0]["function"]["arguments"] == '{"a":'


@pytest.mark.parametrize("change", [
    lambda d: d["choices"][0].__setitem__("index", True),  # bool is not the int 0
    lambda d: d["choices"][0].__setitem__("index", 1),
    lambda d: d["choices"].append(d["choices"][0]),
    lambda d: d["choices"][0]["delta"]["tool_calls"][0].__setitem__("index", False),
    lambda d: d["choices"][0]["delta"]["tool_calls"][0].__setitem__("x", 1),
    lambda d: d["choices"][0]["delta"].__setitem__("refusal", "no"),
    lambda d: d.__setitem__("error", None),
    lambda d: d["choices"][0]["delta"]["tool_calls"][0]["function"].__setitem__("name", 3),
    lambda d: d["choices"][0]["delta"]["tool_calls"][0].__setitem__("id", ""),
    lambda d: d["choices"][0]["delta"]["tool_calls"][0].__setitem__("index", 2**63),
])
def test_an_unusual_chunk_leaves_the_fast_path_having_changed_nothing(change: Any) -> None:
    # A fast path that applied effects before it found the problem would leave the
    # arguments half-appended for the general path to append again.
    frame = copy.deepcopy(CHUNK)
    change(frame)
    stream = ChatCompletionStream()
    stream.feed(OPENING)
    before = stream.snapshot()
    stream._kinds = set()
    assert not stream._fast_chunk(stream._plan, frame, 1)  # type: ignore[arg-type]
    assert stream.snapshot() == before
    assert stream._kinds == set()


def test_tables_shaped_otherwise_get_no_plan() -> None:
    tables = REVISIONS[REVISION]
    assert chat_stream._plan_for(tables) is not None
    levels = dict(tables.levels)
    # The choice index read as a nullable field: the fast path is not written for it.
    choice = dict(levels["choice"])
    choice["index"] = Field("int", "choice_index", required=True, nullable=True)
    levels["choice"] = choice
    assert chat_stream._plan_for(dataclasses.replace(tables, levels=levels)) is None
    # An open delta level: unknown delta keys would be skipped, not rejected.
    opened = dataclasses.replace(tables, closed_levels=frozenset({"tool_delta", "function_delta"}))
    assert chat_stream._plan_for(opened) is None


def test_a_replaced_handler_turns_the_fast_path_off(monkeypatch: pytest.MonkeyPatch) -> None:
    delta_handlers = dict(chat_stream._HANDLERS["delta"])
    delta_handlers["text"] = lambda *args: False
    monkeypatch.setitem(chat_stream._HANDLERS, "delta", delta_handlers)  # type: ignore[arg-type]
    assert ChatCompletionStream()._plan is None
    monkeypatch.undo()
    assert ChatCompletionStream()._plan is not None


def test_a_colliding_string_subclass_key_never_reaches_a_lookup() -> None:
    calls: list[str] = []
    armed = False

    class Colliding(str):
        __slots__ = ()

        def __hash__(self) -> int:
            return hash("choices")

        def __eq__(self, other: object) -> bool:
            if armed:
                calls.append("eq")
                raise RuntimeError("caller code ran")
            return str.__eq__(self, other)

    frame = copy.deepcopy(CHUNK)
    frame[Colliding("x-choices")] = []  # type: ignore[index]
    armed = True
    stream = ChatCompletionStream()
    stream.feed(OPENING)
    with pytest.raises(ProtocolViolation):
        stream.feed(frame)
    assert calls == []
