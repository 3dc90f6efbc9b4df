"""Gemini Interactions: the tables are the contract, and nothing but ContractError escapes.

Table tests iterate over every entry of ``REVISIONS``; a table with a forgotten row
fails its cross-check; a stream poisoned by any exception stays dead; every public
entry point, given a hostile value for any one argument, returns or raises a
``ContractError``.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts._stream import StreamLimits
from pcfuzz.contracts.errors import (
    ContinuationError,
    ContractError,
    LimitExceeded,
    ProtocolViolation,
    SnapshotMutated,
    UnsupportedProviderState,
)
from pcfuzz.contracts.gemini_interactions import (
    REVISION,
    REVISIONS,
    GeminiInteractionsStream,
    build_gemini_interactions_continuation,
    build_gemini_interactions_stateless_continuation,
    parse_events,
    parse_interaction,
)
from pcfuzz.contracts.gemini_interactions import _stream as gemini_stream
from pcfuzz.contracts.gemini_interactions._tables import ROLES, check_tables
from pcfuzz.contracts.results import ModelVisibleToolResult

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "gemini_interactions.json"
ALL_REVISIONS = sorted(REVISIONS)
TOOLS = [
    {"type": "function", "name": "lookup_order", "parameters": {"type": "object"}},
    {"type": "function", "name": "lookup_customer", "parameters": {"type": "object"}},
]
RESULTS = [ModelVisibleToolResult("call-alpha", "shipped"),
           ModelVisibleToolResult("call-beta", "gold")]
USER_INPUT = {"type": "user_input", "content": [{"type": "text", "text": "Where is A-100?"}]}


def fixture_events() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))["events"]
    return events


def created() -> dict[str, Any]:
    return {"event_type": "interaction.created",
            "interaction": {"id": "i-1", "status": "in_progress"}}


def completed() -> dict[str, Any]:
    return {"event_type": "interaction.completed",
            "interaction": {"id": "i-1", "status": "requires_action"}}


def call(index: int = 0) -> list[dict[str, Any]]:
    return [{"event_type": "step.start", "index": index,
             "step": {"type": "function_call", "id": f"c-{index}", "name": "f",
                      "arguments": {}}},
            {"event_type": "step.stop", "index": index}]


# ----------------------------------------------------------- tables, every revision


@pytest.mark.parametrize("revision", ALL_REVISIONS)
def test_every_revision_passes_its_cross_check_and_is_parseable(revision: str) -> None:
    tables = REVISIONS[revision]
    check_tables(tables, revision)
    turn = parse_events([created(), *call(), completed()], revision=revision)
    assert turn.revision == revision and [c.call_id for c in turn.calls] == ["c-0"]


# A sample of every event type, and the events that bring a stream into each state.
SAMPLE_EVENTS: dict[str, dict[str, Any]] = {
    "interaction.created": created(),
    "step.start": call(7)[0],
    "step.delta": {"event_type": "step.delta", "index": 0,
                   "delta": {"type": "arguments_delta", "arguments": "{}"}},
    "step.stop": {"event_type": "step.stop", "index": 0},
    "interaction.status_update": {"event_type": "interaction.status_update",
                                  "interaction_id": "i-1", "status": "in_progress"},
    "interaction.completed": completed(),
    "error": {"event_type": "error", "error": {"code": "x", "message": "y"}},
}
STATE_PREFIXES: dict[str, list[dict[str, Any]]] = {
    "idle": [],
    "open": [created()],
    "done": [created(), *call(), completed()],
}


@pytest.mark.parametrize("revision", ALL_REVISIONS)
def test_every_state_event_pair_outside_the_table_is_rejected(revision: str) -> None:
    tables = REVISIONS[revision]
    assert set(STATE_PREFIXES) == set(tables.transitions)
    assert set(SAMPLE_EVENTS) == set(tables.event_fields)
    checked = 0
    for state, prefix in STATE_PREFIXES.items():
        for name, sample in SAMPLE_EVENTS.items():
            if name in tables.transitions[state]:
                continue
            stream = GeminiInteractionsStream(revision=revision)
            for e in copy.deepcopy(prefix):
                stream.feed(e)
            with pytest.raises(ProtocolViolation, match=f"not allowed in state '{state}'"):
                stream.feed(copy.deepcopy(sample))
            assert stream.poisoned
            checked += 1
    outside = sum(len(SAMPLE_EVENTS) - len(row) for row in tables.transitions.values())
    assert checked == outside > 0


@pytest.mark.parametrize("revision", ALL_REVISIONS)
def test_only_the_client_call_role_is_ever_released(revision: str) -> None:
    tables = REVISIONS[revision]
    for step_type, role in tables.step_types.items():
        if role == "client_call":
            continue
        events = [created(), {"event_type": "step.start", "index": 9,
                              "step": {"type": step_type, "id": "h", "name": "f",
                                       "arguments": {}}},
                  {"event_type": "step.stop", "index": 9}, *call(), completed()]
        turn = parse_events(events, revision=revision)
        assert [c.call_id for c in turn.calls] == ["c-0"], step_type


@pytest.mark.parametrize("revision", ALL_REVISIONS)
def test_every_step_type_outside_the_union_fails_closed(revision: str) -> None:
    tables = REVISIONS[revision]
    for step_type in [*tables.v1beta_only_step_types, "tool_call", "Function_Call"]:
        events = [created(), {"event_type": "step.start", "index": 1,
                              "step": {"type": step_type, "id": "x", "name": "f"}}]
        with pytest.raises(UnsupportedProviderState, match="step type"):
            parse_events([*events, completed()], revision=revision)


def _drop(mapping: Any, key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}


# A forgotten or wrong row in each table the cross-check guards.
BROKEN_TABLES: dict[str, Callable[[Any], Any]] = {
    "status with an unknown meaning": lambda t: dataclasses.replace(
        t, statuses={**t.statuses, "budget_exceeded": "retry"}),
    "no tool_turn status": lambda t: dataclasses.replace(
        t, statuses=_drop(t.statuses, "requires_action")),
    "step type without a delta row": lambda t: dataclasses.replace(
        t, delta_types=_drop(t.delta_types, "thought")),
    "delta row for an unknown step type": lambda t: dataclasses.replace(
        t, delta_types={**t.delta_types, "mcp_server_tool_call": frozenset({"x"})}),
    "step type with an unknown role": lambda t: dataclasses.replace(
        t, step_types={**t.step_types, "new_call": "remote_call"},
        delta_types={**t.delta_types, "new_call": frozenset({"new_call"})}),
    "second client-executed step type": lambda t: dataclasses.replace(
        t, step_types={**t.step_types, "code_execution_call": "client_call"}),
    "role without a stream field row": lambda t: dataclasses.replace(
        t, stream_step_fields=_drop(t.stream_step_fields, "thought")),
    "role without a snapshot field row": lambda t: dataclasses.replace(
        t, snapshot_step_fields=_drop(t.snapshot_step_fields, "client_result")),
    "role without a replay rule": lambda t: dataclasses.replace(
        t, replay_rules=_drop(t.replay_rules, "hosted_call")),
    "unknown replay rule": lambda t: dataclasses.replace(
        t, replay_rules={**t.replay_rules, "hosted_call": "trust_it"}),
    "unknown field kind": lambda t: dataclasses.replace(
        t, event_fields={**t.event_fields, "step.stop": {"index": "integer"}}),
    "event type without a transition": lambda t: dataclasses.replace(
        t, event_fields={**t.event_fields, "interaction.heartbeat": {}}),
    "transition to an unknown state": lambda t: dataclasses.replace(
        t, transitions={**t.transitions, "open": {**t.transitions["open"], "step.stop": "closing"}}),
    "transition on an unknown event type": lambda t: dataclasses.replace(
        t, transitions={**t.transitions, "idle": {**t.transitions["idle"], "ping": "idle"}}),
    "final state without a row": lambda t: dataclasses.replace(t, final_state="finished"),
    "v1beta step inside the v1 union": lambda t: dataclasses.replace(
        t, v1beta_only_step_types=t.v1beta_only_step_types | {"thought"}),
    "required tool field without a kind": lambda t: dataclasses.replace(
        t, function_tool_required=t.function_tool_required | {"strict"}),
}


@pytest.mark.parametrize("revision", ALL_REVISIONS)
@pytest.mark.parametrize("bug", sorted(BROKEN_TABLES))
def test_tables_with_a_forgotten_row_fail_the_cross_check(revision: str, bug: str) -> None:
    broken = BROKEN_TABLES[bug](REVISIONS[revision])
    with pytest.raises(RuntimeError, match=revision):
        check_tables(broken, revision)


def test_an_event_type_without_a_handler_fails_at_import() -> None:
    handlers = _drop(gemini_stream._HANDLERS, "interaction.status_update")
    with pytest.raises(RuntimeError, match="without a handler"):
        gemini_stream.check_handlers(handlers)


def test_roles_are_exactly_the_ones_the_tables_describe() -> None:
    for revision in ALL_REVISIONS:
        assert set(REVISIONS[revision].step_types.values()) <= ROLES
        assert set(REVISIONS[revision].replay_rules) == ROLES


# ------------------------------------------------------------ poison on anything


def test_stream_poisoned_by_a_non_contract_error_stays_dead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken_handler(stream: Any, ev: Any, n: int) -> None:
        raise KeyError("a bug inside a handler")

    stream = GeminiInteractionsStream()
    stream.feed(created())
    monkeypatch.setitem(gemini_stream._HANDLERS, "step.start", broken_handler)
    with pytest.raises(KeyError):
        stream.feed(call()[0])
    monkeypatch.undo()  # the handler works again; the stream must not
    assert stream.poisoned
    for later in [*call(), completed()]:
        with pytest.raises(ContractError, match="KeyError"):
            stream.feed(later)
    with pytest.raises(ContractError):
        stream.close()
    assert stream.poisoned


# ---------------------------------------------------------------- hostile values


class Hostile:
    """Every protocol method raises: comparing, hashing, iterating or sizing it fails."""

    def __eq__(self, other: object) -> bool:
        raise KeyError("__eq__")

    def __hash__(self) -> int:
        raise KeyError("__hash__")

    def __iter__(self) -> Any:
        raise KeyError("__iter__")

    def __len__(self) -> int:
        raise KeyError("__len__")


class HostileStr(str):
    def __eq__(self, other: object) -> bool:
        raise KeyError("__eq__")

    def __hash__(self) -> int:
        raise KeyError("__hash__")

    def __str__(self) -> str:
        raise KeyError("__str__")


class HostileDict(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        raise KeyError("items")

    def keys(self) -> Any:
        raise KeyError("keys")

    def __iter__(self) -> Any:
        raise KeyError("__iter__")

    def get(self, *args: Any) -> Any:
        raise KeyError("get")


class HostileList(list):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        raise KeyError("__iter__")

    def __len__(self) -> int:
        raise KeyError("__len__")


class HostileInt(int):
    def __index__(self) -> int:
        raise KeyError("__index__")

    def __eq__(self, other: object) -> bool:
        raise KeyError("__eq__")

    __hash__ = int.__hash__


class RaisingClass:
    """An object whose ``__class__`` raises: ``isinstance`` consults it, ``type`` does not."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # type: ignore[override]
        raise KeyError("__class__")


def deep(levels: int) -> Any:
    value: Any = []
    for _ in range(levels):
        value = [value]
    return value


HOSTILE: dict[str, Callable[[], Any]] = {
    "None": lambda: None,
    "bool": lambda: True,
    "int": lambda: 7,
    "huge int": lambda: 10**5000,
    "int subclass": lambda: HostileInt(3),
    "nan": lambda: float("nan"),
    "str": lambda: "x",
    "str subclass": lambda: HostileStr("2026-07-21"),
    "bytes": lambda: b"requires_action",
    "object": lambda: object(),
    "raising object": lambda: Hostile(),
    "raising __class__": lambda: RaisingClass(),
    "dict subclass": lambda: HostileDict(type="function", name="lookup_order"),
    "list subclass": lambda: HostileList([created()]),
    "empty dict": lambda: {},
    "deep list": lambda: deep(100_000),
    "deep dict": lambda: _deep_dict(100_000),
    "endless count": lambda: itertools.count(),
    "endless repeat": lambda: itertools.repeat({"event_type": "error"}),
    "tuple": lambda: ("a", "b"),
}


def _deep_dict(levels: int) -> Any:
    value: Any = {}
    for _ in range(levels):
        value = {"k": value}
    return value


def _turn() -> Any:
    return parse_events(fixture_events())


def _create_snapshot() -> Any:
    events = fixture_events()
    steps = [e["step"] for e in events if e["event_type"] == "step.start"]
    for s in steps:
        if s["type"] == "function_call":
            s["arguments"] = {"order_ref": "A-100"} if s["id"] == "call-alpha" else {"c": 1}
    return parse_interaction({"id": "i-1", "status": "requires_action", "steps": steps},
                             origin="create")


def _stateful(**kw: Any) -> Any:
    return build_gemini_interactions_continuation(**kw)


def _stateless(**kw: Any) -> Any:
    return build_gemini_interactions_stateless_continuation(**kw)


def _feed(**kw: Any) -> Any:
    stream = GeminiInteractionsStream()
    try:
        return stream.feed(**kw)
    finally:
        # Whatever feed raised, the stream is dead afterwards.
        with pytest.raises(ContractError):
            if stream.poisoned:
                stream.feed(created())
            else:
                raise ContractError("fed without error")


# entry point -> (callable taking keywords, the valid keywords)
ENTRY_POINTS: dict[str, tuple[Callable[..., Any], Callable[[], dict[str, Any]]]] = {
    "GeminiInteractionsStream": (GeminiInteractionsStream,
                                 lambda: {"revision": REVISION, "limits": StreamLimits()}),
    "feed": (_feed, lambda: {"event": created()}),
    "parse_events": (parse_events, lambda: {"events": fixture_events(), "revision": REVISION,
                                            "limits": None}),
    "parse_interaction": (parse_interaction, lambda: {
        "interaction": {"id": "i", "status": "completed", "steps": []}, "origin": "create",
        "revision": REVISION, "limits": None}),
    "build_gemini_interactions_continuation": (_stateful, lambda: {
        "turn": _turn(), "results": list(RESULTS), "model": "m", "tools": copy.deepcopy(TOOLS),
        "system_instruction": "s", "generation_config": {"t": 1},
        "previous_interaction_was_stored": True, "store": False,
        "response_format": {"type": "text", "mime_type": "text/plain"},
        "request_controls": {"candidate_count": 1}}),
    "build_gemini_interactions_stateless_continuation": (_stateless, lambda: {
        "turn": _create_snapshot(), "results": list(RESULTS), "model": "m",
        "tools": copy.deepcopy(TOOLS), "system_instruction": None, "generation_config": None,
        "prior_input_steps": [copy.deepcopy(USER_INPUT)], "response_format": None,
        "request_controls": None}),
}


def test_every_entry_point_accepts_its_valid_arguments() -> None:
    # The hostile-value property below replaces one argument of exactly these calls.
    out = {name: entry(**valid()) for name, (entry, valid) in ENTRY_POINTS.items()}
    assert isinstance(out["GeminiInteractionsStream"], GeminiInteractionsStream)
    assert out["feed"] is None
    assert [c.call_id for c in out["parse_events"].calls] == ["call-alpha", "call-beta"]
    assert out["parse_interaction"].origin == "create"
    for builder in ("build_gemini_interactions_continuation",
                    "build_gemini_interactions_stateless_continuation"):
        assert [s["call_id"] for s in out[builder]["input"][-2:]] == ["call-alpha", "call-beta"]


@st.composite
def hostile_calls(draw: st.DrawFn) -> tuple[str, str, str]:
    entry = draw(st.sampled_from(sorted(ENTRY_POINTS)))
    argument = draw(st.sampled_from(sorted(ENTRY_POINTS[entry][1]())))
    value = draw(st.sampled_from(sorted(HOSTILE)))
    return entry, argument, value


@given(hostile_calls())
def test_hostile_argument_values_raise_only_contract_errors(case: tuple[str, str, str]) -> None:
    entry, argument, value = case
    event(f"entry point: {entry}")
    event(f"hostile value: {value}")
    function, valid = ENTRY_POINTS[entry]
    kwargs = valid()
    kwargs[argument] = HOSTILE[value]()
    try:
        function(**kwargs)
    except ContractError:
        event("rejected with a ContractError")
    else:
        event("accepted")


TURN_FIELDS = ("steps", "calls", "digest", "revision", "status", "usage", "step_deltas",
               "interaction_id", "origin")


@given(st.sampled_from(TURN_FIELDS), st.sampled_from(sorted(HOSTILE)))
def test_a_turn_with_a_swapped_in_hostile_field_is_rejected(field: str, value: str) -> None:
    event(f"field: {field}")
    turn = _turn()
    object.__setattr__(turn, field, HOSTILE[value]())
    with pytest.raises(SnapshotMutated):
        turn.check_unchanged()
    with pytest.raises(SnapshotMutated):
        build_gemini_interactions_continuation(
            turn, RESULTS, model="m", tools=TOOLS, system_instruction=None,
            generation_config=None, previous_interaction_was_stored=True, store=False)


def test_an_endless_iterable_of_identical_replays_is_bounded_by_the_event_limit() -> None:
    replay = {**created(), "event_id": "e-1"}
    with pytest.raises(LimitExceeded, match="more than 50 events"):
        parse_events(itertools.repeat(replay), limits=StreamLimits(max_events=50))


def test_origin_must_be_create_or_get_of_exact_type() -> None:
    snapshot = {"id": "i", "status": "completed", "steps": []}
    for origin in ["stream", HostileStr("get"), None, Hostile()]:
        with pytest.raises(ContractError, match="origin"):
            parse_interaction(snapshot, origin=origin)
    assert parse_interaction(snapshot, origin="create").calls == ()


def test_limits_none_means_the_default_limits() -> None:
    turn = parse_events(fixture_events(), limits=None)
    assert turn.digest == parse_events(fixture_events(), limits=StreamLimits()).digest


def test_a_lone_surrogate_key_in_request_controls_is_rejected() -> None:
    with pytest.raises(ContinuationError, match="surrogate"):
        build_gemini_interactions_continuation(
            _turn(), RESULTS, model="m", tools=TOOLS, system_instruction=None,
            generation_config=None, previous_interaction_was_stored=True, store=False,
            request_controls={"safety": {"\ud800": 1}})


def test_tools_of_another_sequence_type_are_rejected() -> None:
    with pytest.raises(ContinuationError, match="tools must be a list"):
        build_gemini_interactions_continuation(
            _turn(), RESULTS, model="m", tools=range(3), system_instruction=None,
            generation_config=None, previous_interaction_was_stored=True, store=False)


class EndlessItems(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        return itertools.repeat(("k", 1))


def test_a_swapped_in_dict_subclass_is_rejected_without_calling_it() -> None:
    turn = _turn()
    step = next(s for s in turn.steps if s["type"] == "function_call")
    step["arguments"] = EndlessItems(step["arguments"])  # the same content
    with pytest.raises(SnapshotMutated, match="EndlessItems"):
        turn.check_unchanged()


def test_shared_containers_in_a_turn_cannot_blow_up_the_digest_check() -> None:
    turn = _turn()
    shared: Any = [1]
    for _ in range(60):  # 2**60 values once expanded, 61 lists in memory
        shared = [shared, shared]
    turn.steps[0]["x"] = shared
    with pytest.raises(SnapshotMutated, match="shares a container"):
        turn.check_unchanged()


class ClassImpostor:
    """Claims to be a tuple/list/dict through ``__class__``: isinstance() believes it."""

    def __init__(self, claimed: type) -> None:
        self._claimed = claimed

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # type: ignore[override]
        return self._claimed


@pytest.mark.parametrize("claimed", [tuple, list, dict, str, int])
@pytest.mark.parametrize("argument", ["tools", "prior_input_steps", "generation_config",
                                      "request_controls", "model"])
def test_a_value_claiming_a_builtin_class_is_rejected(argument: str, claimed: type) -> None:
    _, valid = ENTRY_POINTS["build_gemini_interactions_stateless_continuation"]
    kwargs = valid()
    kwargs[argument] = ClassImpostor(claimed)
    assert isinstance(kwargs[argument], claimed)
    with pytest.raises(ContractError):
        build_gemini_interactions_stateless_continuation(**kwargs)
