"""OpenAI Responses: the tables are the contract, and only ContractError escapes.

* Every revision's tables pass the import-time cross-check, and a table with a
  forgotten row fails it (``RuntimeError``), instead of a ``KeyError`` in production.
* Every (stream state, event type) pair outside ``transitions`` and every (item state,
  item event) pair outside ``item_transitions`` is rejected, for every revision.
* ``ItemSpec.executable`` / ``final_answer`` / ``constants`` drive the code (a
  revision that changes the row changes the outcome).
* A stream poisoned by a non-ContractError stays dead; hostile argument values (wrong
  types, subclasses with raising methods, huge ints, deep nesting, NaN, endless
  iterables) raise only ContractError from every public entry point.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts.errors import ContractError, ProtocolViolation
from pcfuzz.contracts.fixtures import load_fixture
from pcfuzz.contracts.openai_responses import (
    REVISION,
    REVISIONS,
    OpenAIResponsesStream,
    build_openai_responses_continuation,
    build_openai_responses_stateless_continuation,
    parse_events,
)
from pcfuzz.contracts.openai_responses import _stream as stream_module
from pcfuzz.contracts.openai_responses._tables import (
    I_ARGUMENTS,
    I_ARGUMENTS_DONE,
    I_DONE,
    I_OPEN,
    ROLE_ARGS_DELTA,
    ROLE_ARGS_DONE,
    ROLE_ITEM_DONE,
    ROLE_ITEM_PART,
    S_COMPLETED,
    S_INITIAL,
    S_STREAMING,
    RevisionTables,
    check_tables,
)
from pcfuzz.contracts.results import ModelVisibleToolResult
from pcfuzz.strategies.openai_responses import strict_tool

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "openai_responses.json"
# Positions in the fixture (asserted in test_openai_responses.py).
CREATED, REASONING_DONE, MESSAGE_ADDED, MESSAGE_DONE = 0, 8, 9, 15
CALL_A_ADDED, ARGS_DONE_A, ITEM_DONE_A, COMPLETED = 16, 26, 28, 29
FIRST_DELTA = 18
PINNED = REVISIONS[REVISION]


def fixture_events() -> list[dict[str, Any]]:
    return copy.deepcopy(load_fixture(FIXTURE).events)


def feed_all(stream: OpenAIResponsesStream, events: list[dict[str, Any]]) -> None:
    for item in events:
        stream.feed(item)


_FILLER = {"str": "x", "nonempty_str": "x", "int": 0, "number": 0, "bool": False,
           "object": {}, "array": [], "any": None}


def sample_event(tables: RevisionTables, name: str, sequence_number: int) -> dict[str, Any]:
    """An event of type ``name`` with every required field present and of its kind."""
    spec = tables.events[name]
    sample: dict[str, Any] = {"type": name, "sequence_number": sequence_number}
    for field, kind in spec.required.items():
        sample[field] = copy.deepcopy(_FILLER[kind])
    return sample


# ---------------------------------------------------------------------------
# The cross-check


@pytest.mark.parametrize("revision", sorted(REVISIONS))
def test_every_revision_passes_the_cross_check(revision: str) -> None:
    check_tables(REVISIONS[revision], revision)


def _without(mapping: Any, key: Any) -> dict[Any, Any]:
    return {k: v for k, v in mapping.items() if k != key}


def _with(mapping: Any, key: Any, value: Any) -> dict[Any, Any]:
    return {**mapping, key: value}


DONE = "response.function_call_arguments.done"
COMPLETED_TYPE = "response.completed"

# Each builds the pinned tables with one forgotten or wrong row.
BROKEN_TABLES: dict[str, Callable[[RevisionTables], RevisionTables]] = {
    "response event without a status row": lambda t: replace(
        t, response_event_statuses=_without(t.response_event_statuses, "response.queued")),
    "status row for an event that never reads it": lambda t: replace(
        t, response_event_statuses=_with(t.response_event_statuses, "response.failed",
                                         frozenset({"failed"}))),
    "status row with an unknown status": lambda t: replace(
        t, response_event_statuses=_with(t.response_event_statuses, "response.queued",
                                         frozenset({"waiting"}))),
    "part event without a part row": lambda t: replace(
        t, part_events=_without(t.part_events, "response.refusal.delta")),
    "part row for an item without that part family": lambda t: replace(
        t, part_types=_without(t.part_types, ("reasoning", "summary"))),
    "event whose role has no handler": lambda t: replace(
        t, events=_with(t.events, "response.queued",
                        replace(t.events["response.queued"], role="queued"))),
    "event missing a field its handler reads": lambda t: replace(
        t, events=_with(t.events, DONE, replace(
            t.events[DONE], required=_without(t.events[DONE].required, "arguments")))),
    "field of an unknown kind": lambda t: replace(
        t, events=_with(t.events, DONE, replace(
            t.events[DONE], required=_with(t.events[DONE].required, "name", "string")))),
    "item event binding an unknown item type": lambda t: replace(
        t, events=_with(t.events, DONE, replace(
            t.events[DONE], item_types=frozenset({"custom_tool_call"})))),
    "event both modeled and unmodeled": lambda t: replace(
        t, unmodeled_events=_with(t.unmodeled_events, "response.queued", "dup")),
    "transition to an unknown state": lambda t: replace(
        t, transitions=_with(t.transitions, S_INITIAL,
                             _with(t.transitions[S_INITIAL], "response.created", "open"))),
    "transition naming an unmodeled event": lambda t: replace(
        t, transitions=_with(t.transitions, S_STREAMING,
                             _with(t.transitions[S_STREAMING], "response.audio.delta",
                                   S_STREAMING))),
    "modeled event legal in no state": lambda t: replace(
        t, transitions=_with(t.transitions, S_STREAMING,
                             _without(t.transitions[S_STREAMING], "response.refusal.done"))),
    "event accepted after the terminal": lambda t: replace(
        t, transitions=_with(t.transitions, S_COMPLETED, {"error": S_COMPLETED})),
    "state without a row": lambda t: replace(
        t, states=_with(t.states, "cancelled", "a state nobody handles")),
    "terminal that does not complete": lambda t: replace(
        t, transitions=_with(t.transitions, S_STREAMING,
                             _with(t.transitions[S_STREAMING], COMPLETED_TYPE, S_STREAMING))),
    "item that starts in an unknown state": lambda t: replace(
        t, items=_with(t.items, "message", replace(t.items["message"], first_state="new"))),
    "item that can never be done": lambda t: replace(
        t, item_transitions=_with(t.item_transitions, I_OPEN, {ROLE_ITEM_PART: I_OPEN})),
    "item event no lifecycle state accepts": lambda t: replace(
        t, item_transitions=_with(t.item_transitions, I_ARGUMENTS,
                                  {ROLE_ARGS_DONE: I_ARGUMENTS_DONE})),
    "argument event on a non-executable item": lambda t: replace(
        t, items=_with(t.items, "function_call",
                       replace(t.items["function_call"], executable=False))),
    "executable item without a call_id": lambda t: replace(
        t, items=_with(t.items, "function_call", replace(
            t.items["function_call"],
            required=_without(t.items["function_call"].required, "call_id")))),
    "item constant that is not a required string": lambda t: replace(
        t, items=_with(t.items, "reasoning",
                       replace(t.items["reasoning"], constants={"role": "assistant"}))),
    "item state without a description": lambda t: replace(
        t, item_states=_without(t.item_states, I_OPEN)),
    "unknown item status allowed at done": lambda t: replace(
        t, item_statuses_at_done=frozenset({"completed", "finished"})),
    "status that both finishes and fails an item": lambda t: replace(
        t, item_statuses_failed_at_done=frozenset({"completed"})),
    "part action nobody implements": lambda t: replace(
        t, part_events=_with(t.part_events, "response.refusal.delta", replace(
            t.part_events["response.refusal.delta"], action="append"))),
    "part text field the event does not require": lambda t: replace(
        t, part_events=_with(t.part_events, "response.refusal.done", replace(
            t.part_events["response.refusal.done"], text_field="text"))),
    "tool fields without the strict shape": lambda t: replace(
        t, tool_fields=frozenset({"type", "name", "parameters"})),
}


@pytest.mark.parametrize("revision", sorted(REVISIONS))
@pytest.mark.parametrize("bug", sorted(BROKEN_TABLES))
def test_tables_with_a_forgotten_or_wrong_row_fail_the_cross_check(
        revision: str, bug: str) -> None:
    broken = BROKEN_TABLES[bug](REVISIONS[revision])
    with pytest.raises(RuntimeError, match=revision):
        check_tables(broken, revision)


def test_a_status_event_without_its_row_cannot_escape_as_key_error() -> None:
    # The bug this cross-check exists for: a response-status event with no row in
    # response_event_statuses used to escape from feed() as KeyError.
    broken = BROKEN_TABLES["response event without a status row"](PINNED)
    with pytest.raises(RuntimeError, match="response.queued"):
        check_tables(broken, "broken")


# ---------------------------------------------------------------------------
# Stream transitions: every pair outside the table is rejected

# state -> events that put a fresh stream in it (pinned revision)
STATE_PREFIXES: dict[str, Callable[[], list[dict[str, Any]]]] = {
    S_INITIAL: lambda: [],
    S_STREAMING: lambda: fixture_events()[:CREATED + 1],
    S_COMPLETED: fixture_events,
}


def test_every_stream_state_event_pair_outside_the_table_is_rejected() -> None:
    checked = 0
    for revision, tables in REVISIONS.items():
        assert set(STATE_PREFIXES) == set(tables.transitions) == set(tables.states)
        for state, prefix_of in STATE_PREFIXES.items():
            row = tables.transitions[state]
            for name in tables.events:
                stream = OpenAIResponsesStream(revision=revision)
                prefix = prefix_of()
                feed_all(stream, prefix)
                assert stream.state == state
                if name in row:
                    continue
                # A well-formed event of that type, in order: only the state rejects it.
                sample = sample_event(tables, name, 10**6)
                with pytest.raises(ProtocolViolation,
                                   match=f"not allowed in state '{state}'") as info:
                    stream.feed(sample)
                assert info.value.where == f"event {len(prefix)} ({name})"
                assert stream.poisoned and stream.calls == ()
                checked += 1
        events = len(tables.events)
        assert checked == sum(events - len(row) for row in tables.transitions.values())
        checked = 0


def test_the_first_event_must_be_created_even_when_it_is_well_formed() -> None:
    events = fixture_events()
    with pytest.raises(ProtocolViolation, match="first event must be response.created"):
        parse_events(events[1:])  # response.in_progress, valid in every other respect


# ---------------------------------------------------------------------------
# Item lifecycle: every (item state, item event) pair outside the table is rejected

# item state -> (events leading there, output_index of an item in that state)
ITEM_PREFIXES: dict[str, list[tuple[Callable[[], list[dict[str, Any]]], int]]] = {
    I_ARGUMENTS: [(lambda: fixture_events()[:CALL_A_ADDED + 1], 2),
                  (lambda: fixture_events()[:FIRST_DELTA + 1], 2)],
    I_ARGUMENTS_DONE: [(lambda: fixture_events()[:ARGS_DONE_A + 1], 2)],
    I_OPEN: [(lambda: fixture_events()[:MESSAGE_ADDED + 1], 1),
             (lambda: fixture_events()[:3], 0)],
    I_DONE: [(lambda: fixture_events()[:REASONING_DONE + 1], 0),
             (lambda: fixture_events()[:MESSAGE_DONE + 1], 1),
             (lambda: fixture_events()[:ITEM_DONE_A + 1], 2)],
}


def item_event(role: str, stream: OpenAIResponsesStream, index: int) -> dict[str, Any]:
    """A well-formed event of ``role`` for output item ``index``, agreeing with the stream."""
    events = fixture_events()
    done_item = [events[REASONING_DONE], events[MESSAGE_DONE], events[ITEM_DONE_A]][index]
    item = copy.deepcopy(done_item["item"])
    pending = {p.output_index: p for p in stream.pending_calls()}
    base = {"sequence_number": 10**6, "output_index": index, "item_id": item["id"]}
    if role == ROLE_ARGS_DELTA:
        return {"type": "response.function_call_arguments.delta", "delta": "", **base}
    if role == ROLE_ARGS_DONE:
        text = pending[index].arguments_text if index in pending else ""
        return {"type": DONE, "arguments": text, "name": "lookup_order", **base}
    if role == ROLE_ITEM_PART:
        part_type = "summary_text" if item["type"] == "reasoning" else "output_text"
        family = "summary" if item["type"] == "reasoning" else "content"
        name = ("response.reasoning_summary_part.added" if family == "summary"
                else "response.content_part.added")
        return {"type": name, f"{family}_index": 0,
                "part": {"type": part_type, "text": ""}, **base}
    if index in pending:
        item["arguments"] = pending[index].arguments_text
    del base["item_id"]
    return {"type": "response.output_item.done", "item": item, **base}


def test_every_item_state_event_pair_outside_the_table_is_rejected() -> None:
    roles = (ROLE_ARGS_DELTA, ROLE_ARGS_DONE, ROLE_ITEM_PART, ROLE_ITEM_DONE)
    for tables in REVISIONS.values():
        assert set(ITEM_PREFIXES) == set(tables.item_transitions)
        checked = 0
        for item_state, cases in ITEM_PREFIXES.items():
            row = tables.item_transitions[item_state]
            for prefix_of, index in cases:
                for role in roles:
                    stream = OpenAIResponsesStream()
                    prefix = prefix_of()
                    feed_all(stream, prefix)
                    sample = item_event(role, stream, index)
                    if role in row:
                        continue
                    with pytest.raises(ProtocolViolation) as info:
                        stream.feed(sample)
                    where = info.value.where or ""
                    assert where.startswith(f"event {len(prefix)} ")
                    item_type = stream_module_item_type(stream, index)
                    binds = tables.events[sample["type"]]
                    if not binds.item_types or item_type in binds.item_types:
                        # the lifecycle table, not the item-type binding, rejected it
                        assert f"is in state '{item_state}'" in info.value.message
                    else:
                        assert "does not apply" in info.value.message
                    checked += 1
        assert checked >= sum(4 - len(row) for row in tables.item_transitions.values())


def stream_module_item_type(stream: OpenAIResponsesStream, index: int) -> str:
    return ["reasoning", "message", "function_call"][index]


def test_an_item_done_before_its_arguments_names_the_lifecycle_state() -> None:
    stream = OpenAIResponsesStream()
    feed_all(stream, fixture_events()[:FIRST_DELTA + 1])
    with pytest.raises(ProtocolViolation, match="before response.function_call_arguments.done"):
        stream.feed(item_event(ROLE_ITEM_DONE, stream, 2))


# ---------------------------------------------------------------------------
# Item rows drive the code


def test_executable_rows_decide_which_items_are_released() -> None:
    # The released calls are the items whose row says executable, not a literal
    # "function_call": the same stream under a revision whose executable item type is
    # renamed releases the same calls for the renamed type and nothing else changes.
    items = {("client_call" if k == "function_call" else k): v for k, v in PINNED.items.items()}
    events_table = {
        name: replace(spec, item_types=frozenset(
            "client_call" if t == "function_call" else t for t in spec.item_types))
        for name, spec in PINNED.events.items()
    }
    renamed = replace(PINNED, items=items, events=events_table)
    check_tables(renamed, "renamed")
    events = fixture_events()
    for item_event_ in events:
        for holder in (item_event_.get("item"), *item_event_.get("response", {}).get("output", [])):
            if isinstance(holder, dict) and holder.get("type") == "function_call":
                holder["type"] = "client_call"
    REVISIONS_ = dict(REVISIONS)
    REVISIONS_["renamed"] = renamed
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stream_module, "REVISIONS", REVISIONS_)
        turn = parse_events(events, revision="renamed")
    assert [c.call_id for c in turn.calls] == ["call-A", "call-B"]
    assert turn.is_tool_turn
    with pytest.raises(ContractError, match="client_call"):
        parse_events(copy.deepcopy(events))  # the pinned revision does not know the type


def test_final_answer_rows_decide_what_a_call_free_turn_is() -> None:
    events = fixture_events()
    keep = events[:MESSAGE_DONE + 1] + [events[COMPLETED]]
    keep[-1]["response"]["output"] = keep[-1]["response"]["output"][:2]
    assert parse_events(copy.deepcopy(keep)).is_final_answer
    no_answer = replace(PINNED, items=_with(PINNED.items, "message", replace(
        PINNED.items["message"], final_answer=False)))
    check_tables(no_answer, "no-answer")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(REVISIONS, "no-answer", no_answer)  # type: ignore[index]
        assert not parse_events(keep, revision="no-answer").is_final_answer


def test_item_constants_are_read_from_the_row() -> None:
    events = fixture_events()
    events[MESSAGE_ADDED]["item"]["role"] = "user"
    with pytest.raises(ProtocolViolation, match="must have role 'assistant'"):
        parse_events(events)


# ---------------------------------------------------------------------------
# Poisoning on any exception


def test_a_stream_poisoned_by_a_non_contract_error_stays_dead(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("an internal bug")

    # the handler of the first argument delta raises something that is no rejection
    monkeypatch.setitem(stream_module._HANDLERS, ROLE_ARGS_DELTA, boom)  # type: ignore[index]
    events = fixture_events()
    stream = OpenAIResponsesStream()
    feed_all(stream, events[:FIRST_DELTA])
    assert not stream.poisoned
    with pytest.raises(KeyError):
        stream.feed(events[FIRST_DELTA])
    assert stream.poisoned
    monkeypatch.undo()  # even with the bug gone, the half-updated stream stays dead
    for later in events[FIRST_DELTA + 1:]:
        with pytest.raises(ContractError, match="KeyError"):
            stream.feed(later)
    with pytest.raises(ContractError):
        stream.close()
    assert stream.poisoned and stream.calls == () and not stream.terminated


# ---------------------------------------------------------------------------
# Hostile arguments: only ContractError escapes


class RaisingStr(str):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__")

    def __ne__(self, other: object) -> bool:
        raise RuntimeError("__ne__")

    __hash__ = str.__hash__

    def __len__(self) -> int:
        raise RuntimeError("__len__")

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("__iter__")

    def __str__(self) -> str:
        raise RuntimeError("__str__")


class RaisingDict(dict):  # type: ignore[type-arg]
    def get(self, *args: Any) -> Any:
        raise RuntimeError("get")

    def __getitem__(self, key: Any) -> Any:
        raise RuntimeError("__getitem__")

    def items(self) -> Any:
        raise RuntimeError("items")

    def __iter__(self) -> Any:
        raise RuntimeError("__iter__")

    def __len__(self) -> int:
        raise RuntimeError("__len__")


class RaisingList(list):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        raise RuntimeError("__iter__")

    def __len__(self) -> int:
        raise RuntimeError("__len__")

    def __getitem__(self, key: Any) -> Any:
        raise RuntimeError("__getitem__")


class RaisingInt(int):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__")

    def __lt__(self, other: object) -> bool:
        raise RuntimeError("__lt__")

    def __le__(self, other: object) -> bool:
        raise RuntimeError("__le__")

    def __hash__(self) -> int:
        raise RuntimeError("__hash__")

    def __index__(self) -> int:
        raise RuntimeError("__index__")


class Raising:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__")

    def __hash__(self) -> int:
        raise RuntimeError("__hash__")

    def __iter__(self) -> Any:
        raise RuntimeError("__iter__")

    def __len__(self) -> int:
        raise RuntimeError("__len__")

    def __bool__(self) -> bool:
        raise RuntimeError("__bool__")

    def __repr__(self) -> str:
        raise RuntimeError("__repr__")


def _deep_list(levels: int) -> Any:
    value: Any = []
    for _ in range(levels):
        value = [value]
    return value


def _deep_dict(levels: int) -> Any:
    value: Any = {}
    for _ in range(levels):
        value = {"a": value}
    return value


#: name -> a fresh hostile value (built on demand: some are stateful or large).
HOSTILE: dict[str, Callable[[], Any]] = {
    "None": lambda: None,
    "True": lambda: True,
    "-1": lambda: -1,
    "huge int": lambda: 10**5000,
    "huge negative int": lambda: -(10**5000),
    "int subclass": lambda: RaisingInt(3),
    "nan": lambda: float("nan"),
    "inf": lambda: float("inf"),
    "empty str": lambda: "",
    "bytes": lambda: b"x",
    "long str": lambda: "x" * 100_000,
    "str subclass (revision)": lambda: RaisingStr(REVISION),
    "str subclass": lambda: RaisingStr("x"),
    "dict subclass": lambda: RaisingDict(type="error"),
    "list subclass": lambda: RaisingList([1]),
    "raising object": Raising,
    "object": object,
    "deep list": lambda: _deep_list(100_000),
    "deep dict": lambda: _deep_dict(100_000),
    "endless count": itertools.count,
    "endless repeat": lambda: itertools.repeat({"type": "error"}),
    "dict with a str-subclass key": lambda: {RaisingStr("type"): "response.created"},
    "dict with a str-subclass value": lambda: {"type": RaisingStr("response.created")},
    "dict with an int key": lambda: {1: 2},
    "list of raising objects": lambda: [Raising()],
    "tuple of raising objects": lambda: (Raising(),),
    "event with a huge sequence number": lambda: {
        "type": "response.created", "sequence_number": 2**70},
}
HOSTILE_NAMES = sorted(HOSTILE)
HOSTILE_VALUES = st.sampled_from(HOSTILE_NAMES).map(lambda name: HOSTILE[name]())


def is_plain_json(value: Any) -> bool:
    """Exact builtin JSON types all the way down: no caller object leaked through."""
    stack = [value]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            if any(type(key) is not str for key in node):
                return False
            stack.extend(node.values())
        elif type(node) is list:
            stack.extend(node)
        elif node is not None and type(node) not in (str, int, float, bool):
            return False
    return True


def only_contract_errors(call: Callable[[], Any]) -> bool:
    """Run ``call``; True if it raised a ContractError, False if it returned."""
    try:
        call()
    except ContractError:
        return True
    return False


@pytest.mark.parametrize("name", HOSTILE_NAMES)
@pytest.mark.parametrize("argument", ["revision", "limits"])
def test_stream_constructor_rejects_hostile_arguments_with_contract_errors(
        name: str, argument: str) -> None:
    value = HOSTILE[name]()
    accepted = value is None and argument == "limits"
    if accepted:
        OpenAIResponsesStream(**{argument: value})
        return
    with pytest.raises(ContractError, match=argument):
        OpenAIResponsesStream(**{argument: value})


@pytest.mark.parametrize("name", HOSTILE_NAMES)
@pytest.mark.parametrize("position", [0, FIRST_DELTA, COMPLETED, COMPLETED + 1])
def test_feed_of_a_hostile_value_raises_a_contract_error_and_poisons(
        name: str, position: int) -> None:
    stream = OpenAIResponsesStream()
    events = fixture_events()
    feed_all(stream, events[:position])
    with pytest.raises(ContractError):
        stream.feed(HOSTILE[name]())
    assert stream.poisoned and stream.calls == ()
    with pytest.raises(ContractError):
        stream.feed(events[min(position, COMPLETED)])
    with pytest.raises(ContractError):
        stream.close()


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if type(value) is dict:
        for key, child in value.items():
            yield from _paths(child, (*prefix, key))
    elif type(value) is list:
        for index, child in enumerate(value):
            yield from _paths(child, (*prefix, index))


@given(st.data(), HOSTILE_VALUES)
def test_hostile_values_anywhere_inside_an_event_raise_only_contract_errors(
        data: st.DataObject, value: Any) -> None:
    events = fixture_events()
    position = data.draw(st.integers(0, COMPLETED))
    paths = [p for p in _paths(events[position]) if p]
    path = data.draw(st.sampled_from(paths))
    holder: Any = events[position]
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = value
    event(f"{events[position]['type'] if path[0] != 'type' else 'type'}: {type(value).__name__}")
    stream = OpenAIResponsesStream()
    try:
        feed_all(stream, events)
        turn = stream.close()
    except ContractError:
        assert stream.poisoned and stream.calls == ()
        return
    # Accepted only where the value is unknown drift the turn keeps as plain JSON.
    event("accepted as drift")
    turn.check_unchanged()
    assert is_plain_json(turn.snapshot())


@pytest.mark.parametrize("name", HOSTILE_NAMES)
@pytest.mark.parametrize("argument", ["events", "revision", "limits"])
def test_parse_events_rejects_hostile_arguments_with_contract_errors(
        name: str, argument: str) -> None:
    kwargs: dict[str, Any] = {"events": fixture_events(), argument: HOSTILE[name]()}
    events = kwargs.pop("events")
    if argument == "limits" and kwargs["limits"] is None:
        assert len(parse_events(events, **kwargs).calls) == 2
        return
    with pytest.raises(ContractError):
        parse_events(events, **kwargs)


TOOLS = [strict_tool("lookup_order", {"order_ref": {"type": "string"},
                                      "include_items": {"type": "boolean"}})]
RESULTS = [ModelVisibleToolResult("call-A", "a"), ModelVisibleToolResult("call-B", "b")]
BUILDERS: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    "stateful": (build_openai_responses_continuation, {
        "model": "m", "previous_response_was_stored": True, "store": False,
        "instructions": "i", "tools": TOOLS, "request_controls": {"tool_choice": "auto"}}),
    "stateless": (build_openai_responses_stateless_continuation, {
        "model": "m", "prior_input_items": [{"role": "user", "content": "hi"}],
        "instructions": "i", "tools": TOOLS, "request_controls": None}),
}


BUILDER_ARGUMENTS = [(builder, argument) for builder, (_, kwargs) in sorted(BUILDERS.items())
                     for argument in ("turn", "results", *kwargs)]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
@pytest.mark.parametrize("builder, argument", BUILDER_ARGUMENTS)
def test_builders_reject_hostile_arguments_with_contract_errors(
        name: str, builder: str, argument: str) -> None:
    build, kwargs = BUILDERS[builder]
    turn = parse_events(fixture_events())
    call_kwargs = {**kwargs, argument: HOSTILE[name]()}
    positional = [call_kwargs.pop("turn", turn), call_kwargs.pop("results", RESULTS)]
    payloads: list[Any] = []
    if only_contract_errors(lambda: payloads.append(build(*positional, **call_kwargs))):
        turn.check_unchanged()
        return
    # A value a builder accepts (a str subclass as model, a dict as request controls)
    # is read through the builtin types' own methods and copied as plain JSON.
    assert (argument, name) in ACCEPTED_BY_BUILDERS, (argument, name)
    assert is_plain_json(payloads[0])
    turn.check_unchanged()


ACCEPTED_BY_BUILDERS = {
    ("model", "str subclass"), ("model", "str subclass (revision)"), ("model", "long str"),
    ("instructions", "str subclass"), ("instructions", "str subclass (revision)"),
    ("instructions", "long str"), ("store", "True"), ("previous_response_was_stored", "True"),
    ("request_controls", "None"), ("request_controls", "dict subclass"),
    ("request_controls", "dict with a str-subclass value"),
    ("request_controls", "event with a huge sequence number"),
}


@given(HOSTILE_VALUES, st.sampled_from(BUILDER_ARGUMENTS), st.data())
def test_hostile_values_inside_builder_arguments_raise_only_contract_errors(
        value: Any, target: tuple[str, str], data: st.DataObject) -> None:
    builder, argument = target
    build, kwargs = BUILDERS[builder]
    turn = parse_events(fixture_events())
    call_kwargs: dict[str, Any] = copy.deepcopy({**kwargs, "turn": turn, "results": RESULTS})
    call_kwargs["turn"], call_kwargs["results"] = turn, list(RESULTS)
    paths = [p for p in _paths(call_kwargs[argument]) if p]
    if not paths:
        call_kwargs[argument] = value
    else:
        path = data.draw(st.sampled_from(paths))
        holder: Any = call_kwargs[argument]
        for step in path[:-1]:
            holder = holder[step]
        holder[path[-1]] = value
    event(f"{builder}.{argument}")
    positional = [call_kwargs.pop("turn"), call_kwargs.pop("results")]
    payloads: list[Any] = []
    if not only_contract_errors(lambda: payloads.append(build(*positional, **call_kwargs))):
        event("accepted")
        assert is_plain_json(payloads[0])
    turn.check_unchanged()


def test_builders_do_not_read_caller_values_through_their_own_methods() -> None:
    turn = parse_events(fixture_events())
    build, kwargs = BUILDERS["stateful"]
    # A str subclass whose methods raise is read through str's own methods.
    payload = build(turn, RESULTS, **{**kwargs, "model": RaisingStr("fixture-model")})
    assert type(payload["model"]) is str and str.__str__(payload["model"]) == "fixture-model"


class ClassRaising:
    """An object whose ``__class__`` raises: ``isinstance`` consults it, ``type`` does not."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise RuntimeError("__class__")


CLASS_RAISING_CALLS: dict[str, Callable[[], Any]] = {
    "feed": lambda: OpenAIResponsesStream().feed(ClassRaising()),
    "parse_events events": lambda: parse_events(ClassRaising()),  # type: ignore[arg-type]
    "revision": lambda: OpenAIResponsesStream(revision=ClassRaising()),  # type: ignore[arg-type]
    "limits": lambda: OpenAIResponsesStream(limits=ClassRaising()),  # type: ignore[arg-type]
    "model": lambda: BUILDERS["stateful"][0](
        parse_events(fixture_events()), RESULTS,
        **{**BUILDERS["stateful"][1], "model": ClassRaising()}),
}


@pytest.mark.parametrize("call", sorted(CLASS_RAISING_CALLS))
def test_an_object_whose_class_attribute_raises_is_rejected(call: str) -> None:
    with pytest.raises(ContractError):
        CLASS_RAISING_CALLS[call]()
