"""The Chat Completions tables are the contract, and the stream fails closed on anything.

Table tests iterate over every revision in ``REVISIONS``. A forgotten or misspelled
row must fail when the tables are built (``check_tables``), not as a ``KeyError``
in production. A stream that raised anything is dead. Caller values never run
code inside the parser: keys must be exact strings and values exact JSON types.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts._kinds import KINDS
from pcfuzz.contracts._stream import StreamLimits
from pcfuzz.contracts.errors import ContractError, InvalidArgument, LimitExceeded, ProtocolViolation
from pcfuzz.contracts.openai_chat import (
    DONE,
    REVISION,
    REVISIONS,
    ChatCompletionStream,
    Field,
    RevisionTables,
    check_request,
    frames_from_fixture_events,
    has_product,
    parse_completion,
    parse_events,
    validate_message,
)
from pcfuzz.contracts.openai_chat import _stream as chat_stream
from pcfuzz.contracts.openai_chat._tables import (
    FRAME_KINDS,
    LEVEL_RULES,
    PROGRESS_KINDS,
    check_tables,
)
from pcfuzz.strategies.openai_chat import RenderedStream, rendered_streams

ROLE = {"choices": [{"index": 0, "delta": {"role": "assistant"}}]}
TEXT = {"choices": [{"index": 0, "delta": {"content": "x"}}]}
ALL_REVISIONS = sorted(REVISIONS)


def _replace_level(tables: RevisionTables, level: str, fields: dict[str, Field]) -> RevisionTables:
    return dataclasses.replace(tables, levels={**tables.levels, level: fields})


# ============================================================ tables, every revision


def test_the_default_revision_is_the_newest_shipped_one() -> None:
    assert REVISION == max(REVISIONS) == "2026-12-01"
    assert "2026-07-21" in REVISIONS  # the seed's pinned baseline stays shipped


@pytest.mark.parametrize("revision", ALL_REVISIONS)
def test_every_field_kind_rule_and_progress_kind_is_known(revision: str) -> None:
    tables = REVISIONS[revision]
    assert set(tables.levels) == set(LEVEL_RULES)
    for level, fields in tables.levels.items():
        for spec in fields.values():
            assert spec.kind in KINDS
            assert spec.rule in LEVEL_RULES[level]
            assert spec.progress is None or spec.progress in PROGRESS_KINDS
    check_tables(tables, revision)


@pytest.mark.parametrize("revision", ALL_REVISIONS)
def test_every_stream_rule_has_exactly_one_handler(revision: str) -> None:
    stream_levels = set(chat_stream._HANDLERS) | set(chat_stream._TOOL_HANDLERS)
    assert stream_levels == {"chunk", "choice", "delta", "tool_delta", "function_delta"}
    for level in stream_levels:
        handlers = {**chat_stream._HANDLERS, **chat_stream._TOOL_HANDLERS}[level]
        assert {spec.rule for spec in REVISIONS[revision].levels[level].values()} <= set(handlers)


def test_a_level_without_a_handler_for_one_rule_fails_the_handler_check() -> None:
    handlers = {**chat_stream._HANDLERS, **chat_stream._TOOL_HANDLERS}
    chat_stream.check_handlers(handlers)
    broken = {**handlers, "delta": {k: v for k, v in handlers["delta"].items() if k != "text"}}
    with pytest.raises(RuntimeError, match="delta handlers"):
        chat_stream.check_handlers(broken)


@pytest.mark.parametrize("revision", ALL_REVISIONS)
@pytest.mark.parametrize("level", sorted(LEVEL_RULES))
def test_a_forgotten_level_fails_when_the_tables_are_built(revision: str, level: str) -> None:
    tables = REVISIONS[revision]
    levels = {k: v for k, v in tables.levels.items() if k != level}
    with pytest.raises(RuntimeError, match="levels"):
        check_tables(dataclasses.replace(tables, levels=levels), revision)


@pytest.mark.parametrize("revision", ALL_REVISIONS)
@pytest.mark.parametrize(
    ("level", "name"),
    [("chunk", "choices"), ("chunk", "error"), ("choice", "delta"), ("delta", "tool_calls"),
     ("tool_delta", "index"), ("tool_delta", "id"), ("function_delta", "arguments"),
     ("body_choice", "message"), ("message", "role"), ("tool_call", "function"),
     ("function", "name")],
)
def test_a_forgotten_row_fails_when_the_tables_are_built(
    revision: str, level: str, name: str
) -> None:
    tables = REVISIONS[revision]
    fields = {k: v for k, v in tables.levels[level].items() if k != name}
    with pytest.raises(RuntimeError, match=level):
        check_tables(_replace_level(tables, level, fields), revision)


@pytest.mark.parametrize("revision", ALL_REVISIONS)
@pytest.mark.parametrize(
    "mutate",
    [
        lambda t: _replace_level(t, "delta", {**t.levels["delta"], "x": Field("string", "text")}),
        lambda t: _replace_level(t, "delta", {**t.levels["delta"], "x": Field("str", "texts")}),
        lambda t: _replace_level(
            t, "delta", {**t.levels["delta"], "x": Field("str", "text", progress="typing")}),
        lambda t: _replace_level(
            t, "chunk", {**t.levels["chunk"], "choices": Field("array", "choices")}),
        lambda t: _replace_level(
            t, "delta", {**t.levels["delta"], "refusal2": Field("str", "role")}),
        lambda t: _replace_level(
            t, "message", {k: v for k, v in t.levels["message"].items() if k != "content"}),
        lambda t: dataclasses.replace(t, transitions={**t.transitions, "done": {"chunk": "gone"}}),
        lambda t: dataclasses.replace(t, transitions={**t.transitions, "done": {"ping": "done"}}),
        lambda t: dataclasses.replace(t, initial_state="start"),
        lambda t: dataclasses.replace(t, closing_states=frozenset({"closed"})),
        lambda t: dataclasses.replace(t, finish_reasons={"stop": False}),
        lambda t: dataclasses.replace(t, tool_types=frozenset()),
        lambda t: dataclasses.replace(t, max_tool_index=2**63),
        lambda t: dataclasses.replace(t, request_choice_containers=("extra_body",)),
        lambda t: dataclasses.replace(t, response_modes=("text", "text")),
    ],
    ids=["unknown-kind", "unknown-rule", "unknown-progress", "choices-optional",
         "two-role-fields", "delta-text-not-in-message", "transition-to-unknown-state",
         "unknown-frame-kind", "unknown-initial-state", "unknown-closing-state",
         "nothing-releases", "no-tool-types", "tool-index-beyond-int64",
         "payload-n-unchecked", "duplicate-response-mode"],
)
def test_an_inconsistent_table_fails_when_the_tables_are_built(revision: str, mutate: Any) -> None:
    with pytest.raises(RuntimeError):
        check_tables(mutate(REVISIONS[revision]), revision)


@pytest.mark.parametrize("revision", ALL_REVISIONS)
def test_every_state_and_frame_kind_pair_outside_the_table_is_rejected(revision: str) -> None:
    # h11-style: a lookup miss is the illegal transition. Reach every state, then
    # try every frame kind; the table alone says which pairs are accepted.
    tables = REVISIONS[revision]
    frames = {"chunk": ROLE, "done": DONE}
    reach = {"streaming": [], "done": [ROLE, TEXT, DONE]}
    assert set(reach) == set(tables.transitions)
    checked = 0
    for state, prefix in reach.items():
        for kind in sorted(FRAME_KINDS):
            stream = ChatCompletionStream(revision=revision)
            for frame in prefix:
                stream.feed(frame)
            if kind in tables.transitions[state]:
                stream.feed(frames[kind])
                assert stream.done == (tables.transitions[state][kind] in tables.closing_states)
            else:
                with pytest.raises(ProtocolViolation, match=f"{kind} frame not allowed"):
                    stream.feed(frames[kind])
                checked += 1
    assert checked == sum(len(FRAME_KINDS) - len(row) for row in tables.transitions.values())


@pytest.mark.parametrize("revision", ALL_REVISIONS)
def test_only_the_releasing_finish_reasons_release_calls(revision: str) -> None:
    tool = {"index": 0, "id": "c", "type": "function",
            "function": {"name": "f", "arguments": "{}"}}
    for reason, releases in REVISIONS[revision].finish_reasons.items():
        turn = parse_events([ROLE, {"choices": [{"index": 0, "delta": {"tool_calls": [tool]},
                                                 "finish_reason": reason}]}, DONE],
                            revision=revision)
        assert bool(turn.calls) == releases, reason
        assert turn.revision == revision


@pytest.mark.parametrize("revision", ALL_REVISIONS)
def test_every_closed_level_rejects_a_field_outside_its_table(revision: str) -> None:
    tables = REVISIONS[revision]
    assert tables.closed_levels == {"delta", "tool_delta", "function_delta"}
    tool: dict[str, Any] = {"index": 0, "function": {}}
    for where in sorted(tables.closed_levels):
        delta: dict[str, Any] = {"tool_calls": [dict(tool, function={})]}
        target = {"delta": delta, "tool_delta": delta["tool_calls"][0],
                  "function_delta": delta["tool_calls"][0]["function"]}[where]
        target["x_not_in_the_table"] = None
        with pytest.raises(ProtocolViolation, match="unknown") as info:
            parse_events([ROLE, {"choices": [{"index": 0, "delta": delta}]}], revision=revision)
        assert info.value.where is not None and info.value.where.endswith("x_not_in_the_table")


# ====================================================== poison on any exception


def test_a_stream_poisoned_by_a_non_contract_error_stays_dead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A bug inside a handler (here a KeyError) leaves the stream half-updated: no
    # later feed or close may go on from there, whatever the caller catches.
    def broken(stream: Any, name: str, value: Any, where: str) -> bool:
        raise KeyError(name)

    delta_handlers = dict(chat_stream._HANDLERS["delta"])
    delta_handlers["text"] = broken
    monkeypatch.setitem(chat_stream._HANDLERS, "delta", delta_handlers)  # type: ignore[arg-type]
    stream = ChatCompletionStream()
    stream.feed(ROLE)
    assert not stream.poisoned
    with pytest.raises(KeyError):
        stream.feed(TEXT)
    assert stream.poisoned
    monkeypatch.undo()  # the handler works again; the stream must stay dead
    for action in (lambda: stream.feed(ROLE), lambda: stream.feed(DONE), stream.close,
                   stream.snapshot):
        with pytest.raises(ProtocolViolation, match="unusable after an earlier KeyError"):
            action()
    assert stream.poisoned


# ============================================================ hostile arguments


class _CollidingKey:
    """A dict key hashing like a field name: a naive ``frame.get("choices")`` would
    call its ``__eq__`` (caller code) during the lookup. Counts the calls."""

    calls = 0

    def __init__(self, name: str) -> None:
        self.name = name

    def __hash__(self) -> int:
        return hash(self.name)

    def __eq__(self, other: object) -> bool:
        _CollidingKey.calls += 1
        return False


class _LyingStr(str):
    def __eq__(self, other: object) -> bool:
        raise KeyError("caller code ran inside the parser")

    __hash__ = str.__hash__


@pytest.mark.parametrize(
    "frame",
    [
        {_CollidingKey("choices"): []},
        {_CollidingKey("error"): None, "choices": []},
        {"choices": [{_CollidingKey("delta"): {}, "index": 0}]},
        {"choices": [{"index": 0, "delta": {_CollidingKey("content"): "x"}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{_CollidingKey("index"): 0}]}}]},
        {"choices": [{"index": 0, "delta": {_LyingStr("content"): "x"}}]},
        {"choices": [{"index": 0, "delta": {"role": _LyingStr("assistant")}}]},
        _LyingStr(DONE),
    ],
    ids=["chunk-key", "error-key", "choice-key", "delta-key", "tool-key", "str-subclass-key",
         "str-subclass-value", "str-subclass-done"],
)
def test_caller_objects_never_run_code_inside_the_stream(frame: Any) -> None:
    _CollidingKey.calls = 0
    stream = ChatCompletionStream()
    with pytest.raises(ProtocolViolation):
        stream.feed(frame)
    assert stream.poisoned
    assert _CollidingKey.calls == 0


@pytest.mark.parametrize(
    "call",
    [
        lambda: check_request({_CollidingKey("n"): 2}, response_mode="openai"),
        lambda: check_request({"extra_body": {_CollidingKey("n"): 2}}, response_mode="openai"),
        lambda: parse_completion({_CollidingKey("error"): 1, "choices": []}),
        lambda: validate_message({_CollidingKey("role"): "x", "content": "x"}),
    ],
    ids=["request", "extra-body", "body", "message"],
)
def test_caller_objects_never_run_code_in_the_other_entry_points(call: Any) -> None:
    _CollidingKey.calls = 0
    # ProtocolViolation for a response, InvalidArgument for the request side.
    with pytest.raises((ProtocolViolation, InvalidArgument), match="non-string key"):
        call()
    assert _CollidingKey.calls == 0


def test_the_fixture_mapping_compares_without_running_caller_code() -> None:
    near = {_CollidingKey("data"): DONE}
    _CollidingKey.calls = 0
    assert frames_from_fixture_events([near, {"data": DONE}]) == [near, DONE]
    assert _CollidingKey.calls == 0


def test_has_product_is_false_for_anything_but_a_plain_message() -> None:
    assert has_product({"role": "assistant", "content": "x"})
    for value in ({_CollidingKey("content"): "x", "content": "x"}, {"content": _LyingStr("x")},
                  None, [], "content"):
        assert has_product(value) is False  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "events", [itertools.count(), itertools.repeat(TEXT), (TEXT for _ in itertools.count())],
    ids=["count", "repeat", "generator"],
)
def test_endless_iterables_are_read_only_up_to_the_event_limit(events: Any) -> None:
    limits = StreamLimits(max_events=50)
    with pytest.raises(ContractError):
        parse_events(events, limits=limits)
    with pytest.raises(LimitExceeded):
        frames_from_fixture_events(itertools.repeat(TEXT), limits=limits)


@pytest.mark.parametrize("limits", [5, "x", float("nan"), object()])
def test_limits_must_be_stream_limits(limits: Any) -> None:
    for call in (lambda: ChatCompletionStream(limits=limits),
                 lambda: parse_events([], limits=limits),
                 lambda: frames_from_fixture_events([], limits=limits)):
        with pytest.raises(InvalidArgument):
            call()


@pytest.mark.parametrize("where", [5, "", "x" * 201, None])
def test_validate_message_where_must_be_a_short_string(where: Any) -> None:
    with pytest.raises(InvalidArgument):
        validate_message({"role": "assistant"}, where=where)


@given(rendered_streams(), st.data())
def test_a_non_string_key_anywhere_fails_closed_and_runs_no_caller_code(
    rendered: RenderedStream, data: st.DataObject
) -> None:
    # Generalizes the examples above: whichever object of whichever chunk gets a
    # key that hashes like a field name, the stream rejects that frame and is dead.
    chunks = [i for i, f in enumerate(rendered.frames) if f != DONE and f["choices"]]
    position = data.draw(st.sampled_from(chunks))
    frame = rendered.frames[position]
    choice = frame["choices"][0]
    delta = choice["delta"]
    targets: dict[str, dict[Any, Any]] = {"chunk": frame, "choice": choice, "delta": delta}
    for entry in delta.get("tool_calls") or []:
        targets["tool"] = entry
        if isinstance(entry.get("function"), dict):
            targets["function"] = entry["function"]
    where = data.draw(st.sampled_from(sorted(targets)))
    target = targets[where]
    # A name the parser would look up there, or any name: rejected either way.
    name = data.draw(st.sampled_from(["choices", "error", "usage", "index", "delta", "content",
                                      "role", "id", "function", "name", "arguments", "x"]))
    target[_CollidingKey(name)] = None
    event(f"hostile key in {where}")
    _CollidingKey.calls = 0
    stream = ChatCompletionStream()
    with pytest.raises(ProtocolViolation) as info:
        for frame_ in rendered.frames:
            stream.feed(frame_)
        stream.close()
    assert info.value.where is not None and info.value.where.startswith(f"event {position}")
    assert stream.poisoned
    assert _CollidingKey.calls == 0


@given(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=3),
                 st.lists(st.none(), max_size=1), st.dictionaries(st.text(max_size=1), st.none(),
                                                                  max_size=1)))
def test_inline_exact_type_checks_agree_with_the_shared_kinds(value: Any) -> None:
    # read_fields checks kinds that are one builtin type inline (a speed path); it
    # must say exactly what kind_ok says.
    from pcfuzz.contracts._kinds import kind_ok
    from pcfuzz.contracts.openai_chat._turn import _EXACT_TYPES

    event(type(value).__name__)
    for kind, exact in _EXACT_TYPES.items():
        assert (type(value) is exact) == kind_ok(value, kind), (kind, value)
