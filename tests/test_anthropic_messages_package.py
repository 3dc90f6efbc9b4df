"""The Anthropic Messages package shape: tables that are the contract, cross-checked at
import; a stream that dies on any exception; hostile arguments at every public entry
point raise only ``ContractError``."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import itertools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _anthropic_messages import (
    HISTORY,
    TOOLS,
    build,
    ev,
    finish,
    results_for,
    start,
    tool_block,
    two_call_stream,
)
from hypothesis import event, given
from hypothesis import strategies as st

import pcfuzz.contracts.anthropic_messages as package
from pcfuzz.contracts._stream import StreamLimits
from pcfuzz.contracts.anthropic_messages import (
    REVISION,
    REVISIONS,
    AnthropicMessagesStream,
    RevisionTables,
    build_anthropic_messages_continuation,
    parse_events,
)
from pcfuzz.contracts.anthropic_messages import _stream as stream_module
from pcfuzz.contracts.anthropic_messages import _turn as turn_module
from pcfuzz.contracts.anthropic_messages import continuation as continuation_module
from pcfuzz.contracts.anthropic_messages._stream import check_handlers
from pcfuzz.contracts.anthropic_messages._tables import check_tables
from pcfuzz.contracts.errors import (
    ContinuationError,
    ContractError,
    InvalidArgument,
    ProtocolViolation,
    SnapshotMutated,
)
from pcfuzz.contracts.results import ModelVisibleToolResult

PACKAGE_DIR = Path(package.__file__).resolve().parent

# --------------------------------------------------------------------------- tables


@pytest.mark.parametrize("revision", sorted(REVISIONS))
def test_every_revision_passes_the_import_cross_checks(revision: str) -> None:
    tables = REVISIONS[revision]
    assert type(tables) is RevisionTables
    check_tables(revision, tables)
    check_handlers({revision: tables})
    assert set(tables.event_types) <= set(stream_module._EVENT_HANDLERS)


def test_default_revision_is_the_newest_shipped() -> None:
    assert REVISION in REVISIONS and REVISION == max(REVISIONS)
    assert AnthropicMessagesStream().revision == REVISION
    assert parse_events(two_call_stream()).revision == REVISION


def test_every_table_field_is_read_by_the_code_it_drives() -> None:
    code = "".join(
        (PACKAGE_DIR / name).read_text(encoding="utf-8")
        for name in ("_stream.py", "continuation.py", "_turn.py")
    )
    for field in dataclasses.fields(RevisionTables):
        assert re.search(rf"\.{field.name}\b", code), f"RevisionTables.{field.name} is never read"


def _drop(mapping: Any, key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}


def _with_block(t: RevisionTables, name: str, **changes: Any) -> RevisionTables:
    return dataclasses.replace(
        t, blocks={**t.blocks, name: dataclasses.replace(t.blocks[name], **changes)}
    )


# Each entry forgets or misspells one row; the cross-check must name it at import.
BROKEN_TABLES: dict[str, Callable[[RevisionTables], RevisionTables]] = {
    "state without ping": lambda t: dataclasses.replace(
        t, transitions={**t.transitions, "message": _drop(t.transitions["message"], "ping")}
    ),
    "state without error": lambda t: dataclasses.replace(
        t, transitions={**t.transitions, "block": _drop(t.transitions["block"], "error")}
    ),
    "state missing": lambda t: dataclasses.replace(t, transitions=_drop(t.transitions, "stopped")),
    "transition to an unknown state": lambda t: dataclasses.replace(
        t, transitions={**t.transitions, "message": {**t.transitions["message"], "ping": "paused"}}
    ),
    "event type without a transition": lambda t: dataclasses.replace(
        t, event_types=t.event_types | {"content_block_checkpoint"}
    ),
    "transition on an unknown event": lambda t: dataclasses.replace(
        t, event_types=t.event_types - {"message_stop"}
    ),
    "block names an unknown delta": lambda t: _with_block(
        t, "text", deltas=t.blocks["text"].deltas | {"bold_delta"}
    ),
    "delta does not fit its block": lambda t: _with_block(
        t, "text", deltas=t.blocks["text"].deltas | {"input_json_delta"}
    ),
    "signature delta on an unsigned block": lambda t: _with_block(t, "thinking", signed=False),
    "tool use block without id": lambda t: _with_block(
        t, "tool_use", required=_drop(t.blocks["tool_use"].required, "id")
    ),
    "server result without tool_use_id": lambda t: _with_block(
        t, "web_search_tool_result", required={"content": "any"}
    ),
    "text field not a required string": lambda t: _with_block(t, "text", text_field="body"),
    "unknown kind": lambda t: _with_block(t, "container_upload", required={"file_id": "string"}),
    "unknown role": lambda t: _with_block(t, "container_upload", role="attachment"),
    "delta with an unknown action": lambda t: dataclasses.replace(
        t,
        deltas={
            **t.deltas, "text_delta": dataclasses.replace(t.deltas["text_delta"], action="bold")
        },
    ),
    "delta with an unknown kind": lambda t: dataclasses.replace(
        t,
        deltas={**t.deltas, "text_delta": dataclasses.replace(t.deltas["text_delta"], kind="text")},
    ),
    "unknown executable stop reason": lambda t: dataclasses.replace(
        t, executable_stop_reason="tool_calls"
    ),
    "unknown truncation stop reason": lambda t: dataclasses.replace(
        t, truncation_stop_reasons=t.truncation_stop_reasons | {"length"}
    ),
    "required usage that is not a counter": lambda t: dataclasses.replace(
        t, required_delta_usage=("output_tokens", "thinking_tokens")
    ),
    "block both supported and unsupported": lambda t: dataclasses.replace(
        t, unsupported_blocks={**t.unsupported_blocks, "text": "no"}
    ),
    "history role the builder does not implement": lambda t: dataclasses.replace(
        t, history_roles=t.history_roles | {"developer"}
    ),
    "message without usage": lambda t: dataclasses.replace(
        t, message_fields=_drop(t.message_fields, "usage")
    ),
    "no protected request fields": lambda t: dataclasses.replace(
        t, protected_request_fields=frozenset()
    ),
}


@pytest.mark.parametrize("revision", sorted(REVISIONS))
@pytest.mark.parametrize("breakage", sorted(BROKEN_TABLES))
def test_tables_with_a_forgotten_row_fail_the_cross_check(revision: str, breakage: str) -> None:
    broken = BROKEN_TABLES[breakage](REVISIONS[revision])
    with pytest.raises(RuntimeError, match=revision):
        check_tables(revision, broken)


@pytest.mark.parametrize("revision", sorted(REVISIONS))
def test_an_event_type_without_a_handler_fails_the_import_check(revision: str) -> None:
    t = REVISIONS[revision]
    rows = {state: {**row, "compaction": state} for state, row in t.transitions.items()}
    grown = dataclasses.replace(t, event_types=t.event_types | {"compaction"}, transitions=rows)
    check_tables(revision, grown)  # the tables alone are consistent ...
    with pytest.raises(RuntimeError, match="no handler for"):
        check_handlers({revision: grown})  # ... but the stream cannot handle the event


def test_a_delta_action_without_a_handler_fails_the_import_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(stream_module._DELTA_ACTIONS, "citation")
    with pytest.raises(RuntimeError, match="delta actions"):
        check_handlers(REVISIONS)


def test_a_new_revision_is_data_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # Revision N+1 that knows one more stop reason: only a table entry changes.
    base = REVISIONS[REVISION]
    newer = dataclasses.replace(base, stop_reasons=base.stop_reasons | {"compaction"})
    revisions = {**REVISIONS, "2099-01-01": newer}
    for module in (stream_module, turn_module, continuation_module):
        monkeypatch.setattr(module, "REVISIONS", revisions)
    events = two_call_stream("compaction")
    old = parse_events(copy.deepcopy(events), revision=REVISION)
    new = parse_events(copy.deepcopy(events), revision="2099-01-01")
    assert not old.stop_reason_known and new.stop_reason_known
    assert new.revision == "2099-01-01" and new.calls == () and len(new.recovery_calls) == 2


# --------------------------------------------------------------------------- poison


@pytest.mark.parametrize("exc_type", [KeyError, TypeError, RecursionError, ZeroDivisionError])
def test_a_stream_poisoned_by_a_non_contract_error_stays_dead(
    monkeypatch: pytest.MonkeyPatch, exc_type: type[BaseException]
) -> None:
    def broken_ping(self: Any, data: Any, where: str) -> None:
        raise exc_type("bug inside a handler")

    monkeypatch.setitem(stream_module._EVENT_HANDLERS, "ping", broken_ping)
    events = two_call_stream()
    stream = AnthropicMessagesStream()
    stream.feed(events[0])
    assert not stream.poisoned
    with pytest.raises(exc_type):
        stream.feed(ev("ping"))
    assert stream.poisoned
    monkeypatch.undo()  # even with the bug gone, the half-updated stream stays dead
    for e in events[1:]:
        with pytest.raises(ProtocolViolation, match="unusable"):
            stream.feed(e)
    with pytest.raises(ProtocolViolation, match="unusable"):
        stream.close()
    assert stream.poisoned


def test_a_close_that_raised_anything_poisons_the_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_seal(turn: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(stream_module, "seal", broken_seal)
    stream = AnthropicMessagesStream()
    for e in two_call_stream():
        stream.feed(e)
    with pytest.raises(MemoryError):
        stream.close()
    monkeypatch.undo()
    assert stream.poisoned
    with pytest.raises(ContractError):
        stream.close()


# --------------------------------------------------------------------------- renames


def test_turn_has_the_common_shape() -> None:
    turn = parse_events(two_call_stream())
    assert turn.revision == REVISION
    assert callable(turn.snapshot) and turn.snapshot()["revision"] == REVISION
    turn.check_unchanged()
    assert [(c.call_id, c.name) for c in turn.calls] == [
        ("call-A", "lookup_order"),
        ("call-B", "lookup_order"),
    ]
    assert all(type(c.arguments) is dict for c in turn.calls)
    turn.calls[0].arguments["order_ref"] = "Z"
    with pytest.raises(SnapshotMutated):
        turn.check_unchanged()
    for gone in ("verify", "PINNED_REVISION", "MAX_RAW_DEPTH", "json_copy"):
        assert not hasattr(turn, gone) and not hasattr(package, gone)


def _package_imports(module: str) -> set[str]:
    import ast

    tree = ast.parse((PACKAGE_DIR / f"{module}.py").read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                found.add(f"absolute:{node.module}")
            elif node.level == 1:
                found.add(node.module or "")
    return found


def test_the_package_has_no_import_cycle_and_imports_itself_relatively() -> None:
    order = ["_tables", "_turn", "continuation", "_stream", "__init__"]
    for position, module in enumerate(order):
        imports = _package_imports(module)
        assert not {i for i in imports if i.startswith("absolute:contracts")}, module
        later = set(order[position:]) - {"__init__"} if module != "__init__" else set()
        assert not imports & later, f"{module} imports a module that depends on it"
    assert "_stream" not in _package_imports("continuation")


def test_package_all_lists_every_public_entry_point() -> None:
    # "@py_builtins"/"@pytest_ar": pytest's assertion rewriting marks every module of an
    # installed distribution that has a pytest11 plugin (pcfuzz's conformance plugin).
    public = {name for name in dir(package) if not name.startswith(("_", "@"))}
    modules = {"continuation"}  # the submodule itself is public, its names re-exported
    assert public - modules <= set(package.__all__)
    for name in package.__all__:
        assert hasattr(package, name)
    entry_points = {
        "AnthropicMessagesStream", "parse_events", "build_anthropic_messages_continuation"
    }
    assert entry_points <= set(package.__all__)


# --------------------------------------------------------------------------- protected fields


@pytest.mark.parametrize(
    "key",
    ["maxTokens", "max-tokens", "MAX_TOKENS", "Max Tokens", "max.tokens", "maxtokens", "Tool-s",
     "SYSTEM_", "m_o_d_e_l", "Messages\t"],
)
def test_request_controls_cannot_set_a_protected_field_by_camel_case_or_separator_variant(
    key: str,
) -> None:
    turn = parse_events(two_call_stream())
    with pytest.raises(ContinuationError, match="protected field"):
        build(turn, request_controls={key: 1})


def test_request_controls_that_only_resemble_a_protected_field_are_copied() -> None:
    turn = parse_events(two_call_stream())
    body = build(turn, request_controls={"max_tokens_per_tool": 3, "model_hint": "x"})
    assert body["max_tokens_per_tool"] == 3 and body["model_hint"] == "x"
    assert body["max_tokens"] == 512


# --------------------------------------------------------------------------- depth bound


def _nested(depth: int, leaf: Any = 0) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def test_the_depth_bound_is_the_shared_one_for_wire_and_tool_input() -> None:
    # 500 levels: beyond the old 64-level bound, inside the shared 512.
    deep_input = '{"a": ' + "[" * 499 + "1" + "]" * 499 + "}"
    events = [start(), *tool_block(0, "c", "f", deep_input), *finish()]
    content = {"type": "web_search_tool_result", "tool_use_id": "s", "content": _nested(500)}
    events[1:1] = [ev("content_block_start", index=0, content_block=content),
                   ev("content_block_stop", index=0)]
    for e in events[3:-2]:
        e["data"]["index"] = 1
    turn = parse_events(events)
    assert turn.calls[0].arguments["a"] == _nested(498, [1])
    tools = [{"name": "f", "input_schema": {"type": "object"}}]
    body = build(turn, [ModelVisibleToolResult("c", "ok")], tools=tools)
    assert body["messages"][-2]["content"][1]["input"] == turn.calls[0].arguments
    # The deepest retained value: a citation nested to the bound, four levels down
    # in the snapshot (blocks[i].citations[j]); the digest check must still pass.
    citation = {"type": "char_location", "x": _nested(511)}
    cited = [start(), ev("content_block_start", index=0,
                         content_block={"type": "text", "text": "a"}),
             ev("content_block_delta", index=0,
                delta={"type": "citations_delta", "citation": citation}),
             ev("content_block_stop", index=0), *finish("end_turn")]
    cited_turn = parse_events(cited)
    cited_turn.check_unchanged()
    assert cited_turn.blocks[0]["citations"] == [citation]
    citation["x"] = _nested(512)
    with pytest.raises(ContractError, match="nests deeper than 512"):
        parse_events(cited)
    content["content"] = _nested(600)
    with pytest.raises(ContractError, match="nests deeper than 512"):
        parse_events(events)


def test_usage_counters_are_64_bit_integers() -> None:
    events = two_call_stream()
    events[-2]["data"]["usage"]["output_tokens"] = 2**63
    with pytest.raises(ProtocolViolation, match="output_tokens"):
        parse_events(events)
    events[-2]["data"]["usage"]["output_tokens"] = 2**63 - 1
    assert parse_events(events).usage["output_tokens"] == 2**63 - 1


# --------------------------------------------------------------------------- hostile values


def _boom(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("caller code ran")


class EvilStr(str):
    __str__ = __repr__ = __format__ = __hash__ = __eq__ = __ne__ = __len__ = _boom
    __iter__ = __getitem__ = __contains__ = encode = strip = casefold = _boom


class EvilDict(dict):  # type: ignore[type-arg]
    get = items = keys = values = copy = __iter__ = __len__ = __getitem__ = _boom
    __contains__ = __eq__ = __repr__ = _boom
    __hash__ = None  # type: ignore[assignment]


class EvilList(list):  # type: ignore[type-arg]
    __iter__ = __len__ = __getitem__ = copy = __contains__ = __eq__ = __repr__ = _boom
    __hash__ = None  # type: ignore[assignment]


class EvilTuple(tuple):  # type: ignore[type-arg]
    __iter__ = __len__ = __getitem__ = __contains__ = __eq__ = __hash__ = __repr__ = _boom


class EvilInt(int):
    __index__ = __int__ = __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __hash__ = _boom
    __bool__ = __repr__ = __format__ = __float__ = _boom


class EvilKey:
    armed = False

    def __hash__(self) -> int:
        return hash("type")

    def __eq__(self, other: object) -> bool:
        if EvilKey.armed:
            raise RuntimeError("caller __eq__ ran")
        return self is other


class RaisingIterable:
    def __iter__(self) -> Any:
        raise RuntimeError("caller __iter__ ran")


class RaisingIterator:
    def __iter__(self) -> Any:
        return self

    def __next__(self) -> Any:
        raise RuntimeError("caller __next__ ran")


def _colliding() -> dict[Any, Any]:
    EvilKey.armed = False
    value = {"type": "ping", EvilKey(): "ping"}
    EvilKey.armed = True
    return value


def _bypassed_limits() -> StreamLimits:
    limits = StreamLimits()
    object.__setattr__(limits, "max_events", float("nan"))
    return limits


PING = {"event": "ping", "data": {"type": "ping"}}
DEEP_LIST = _nested(100_000)
DEEP_DICT: Any = {}
for _ in range(100_000):
    DEEP_DICT = {"a": DEEP_DICT}

# name -> factory (fresh each use: endless iterators are consumed).
HOSTILE: dict[str, Callable[[], Any]] = {
    "none": lambda: None,
    "true": lambda: True,
    "zero": lambda: 0,
    "huge int": lambda: 10**5000,
    "int 2**64": lambda: 2**64,
    "nan": lambda: float("nan"),
    "inf": lambda: float("inf"),
    "empty str": lambda: "",
    "lone surrogate": lambda: "\ud800",
    "long str": lambda: "x" * 5_000_000,
    "bytes": lambda: b"model",
    "object": object,
    "evil str": lambda: EvilStr("max_tokens"),
    "evil dict": lambda: EvilDict(event="ping", data={"type": "ping"}),
    "evil list": lambda: EvilList([PING]),
    "evil tuple": lambda: EvilTuple((PING,)),
    "evil int": lambda: EvilInt(3),
    "deep list": lambda: DEEP_LIST,
    "deep dict": lambda: DEEP_DICT,
    "endless count": itertools.count,
    "endless repeat": lambda: itertools.repeat(PING),
    "raising iterable": RaisingIterable,
    "raising iterator": RaisingIterator,
    "colliding key": _colliding,
    "non-str key": lambda: {1: "x"},
    "nan in list": lambda: [float("nan")],
    "set": lambda: {"a"},
    "huge list": lambda: ["x"] * 200_000,
    "bypassed limits": _bypassed_limits,
    "function": lambda: _boom,
}


def _feed_at(path: tuple[str, ...]) -> Callable[[Any], Any]:
    """Feed a valid two-call stream whose value at ``event_index, *keys`` is replaced."""

    def run(value: Any) -> Any:
        events = two_call_stream()
        index, *keys = path
        target = events[int(index)]
        for key in keys[:-1]:
            target = target[key]
        if keys:
            target[keys[-1]] = value
        else:
            events[int(index)] = value
        stream = AnthropicMessagesStream()
        try:
            for e in events:
                stream.feed(e)
            return stream.close()
        except BaseException:
            assert stream.poisoned
            with pytest.raises(ContractError):
                stream.close()
            raise

    return run


def _build_with(**kw: Any) -> Callable[[Any], Any]:
    name = next(iter(kw))

    def run(value: Any) -> Any:
        turn = parse_events(two_call_stream())
        args: dict[str, Any] = {"history": HISTORY, "model": "m", "max_tokens": 8, "tools": TOOLS}
        positional = {"turn": turn, "results": results_for(turn)}
        if name in positional:
            positional[name] = value
        else:
            args[name] = value
        return build_anthropic_messages_continuation(
            positional["turn"], positional["results"], **args
        )

    return run


def _mutated_turn(field: str) -> Callable[[Any], Any]:
    def run(value: Any) -> Any:
        turn = parse_events(two_call_stream())
        results = results_for(turn)
        if field.startswith("blocks[1]."):
            turn.blocks[1][field.split(".", 1)[1]] = value
        elif field.startswith("calls[0]."):
            turn.calls[0].arguments[field.split(".", 1)[1]] = value
        else:
            object.__setattr__(turn, field, value)
        for check in (turn.check_unchanged, turn.snapshot, lambda: turn.stop_reason_known):
            try:
                check()
            except ContractError:
                pass
        return build(turn, results)

    return run


ENTRY_POINTS: dict[str, Callable[[Any], Any]] = {
    "Stream(revision=)": lambda v: AnthropicMessagesStream(revision=v),
    "Stream(limits=)": lambda v: AnthropicMessagesStream(limits=v),
    "Stream(eager_input_streaming=)": lambda v: AnthropicMessagesStream(eager_input_streaming=v),
    "parse_events(events)": lambda v: parse_events(v),
    "parse_events(revision=)": lambda v: parse_events(two_call_stream(), revision=v),
    "parse_events(limits=)": lambda v: parse_events(two_call_stream(), limits=v),
    "parse_events(eager_input_streaming=)": lambda v: parse_events(
        two_call_stream(), eager_input_streaming=v
    ),
    "feed(event)": _feed_at(("0",)),
    "feed: event name": _feed_at(("0", "event")),
    "feed: data": _feed_at(("0", "data")),
    "feed: message": _feed_at(("0", "data", "message")),
    "feed: message.usage": _feed_at(("0", "data", "message", "usage")),
    "feed: message.id": _feed_at(("0", "data", "message", "id")),
    "feed: block index": _feed_at(("1", "data", "index")),
    "feed: content_block": _feed_at(("1", "data", "content_block")),
    "feed: content_block.text": _feed_at(("1", "data", "content_block", "text")),
    "feed: delta": _feed_at(("2", "data", "delta")),
    "feed: delta.text": _feed_at(("2", "data", "delta", "text")),
    "feed: tool input": _feed_at(("5", "data", "content_block", "input")),
    "feed: partial_json": _feed_at(("6", "data", "delta", "partial_json")),
    "feed: message_delta.delta": _feed_at(("12", "data", "delta")),
    "feed: stop_reason": _feed_at(("12", "data", "delta", "stop_reason")),
    "feed: message_delta.usage": _feed_at(("12", "data", "usage")),
    "feed: extra block field": _feed_at(("5", "data", "content_block", "extra")),
    "build(turn)": _build_with(turn=None),
    "build(results)": _build_with(results=None),
    "build(history=)": _build_with(history=None),
    "build(model=)": _build_with(model=None),
    "build(max_tokens=)": _build_with(max_tokens=None),
    "build(tools=)": _build_with(tools=None),
    "build(system=)": _build_with(system=None),
    "build(request_controls=)": _build_with(request_controls=None),
    "build(capability=)": _build_with(mid_conversation_system_capability=None),
    "build(user_text=)": _build_with(user_text=None),
    "build(sent_schemas=)": _build_with(sent_schemas=None),
    "turn.message replaced": _mutated_turn("message"),
    "turn.blocks replaced": _mutated_turn("blocks"),
    "turn.calls replaced": _mutated_turn("calls"),
    "turn.recovery_calls replaced": _mutated_turn("recovery_calls"),
    "turn.revision replaced": _mutated_turn("revision"),
    "turn.stop_reason replaced": _mutated_turn("stop_reason"),
    "turn.digest replaced": _mutated_turn("digest"),
    "turn.snapshot_bytes replaced": _mutated_turn("snapshot_bytes"),
    "turn block field": _mutated_turn("blocks[1].input"),
    "turn call argument": _mutated_turn("calls[0].order_ref"),
}


def _outcome(entry: str, hostile: str) -> str:
    try:
        ENTRY_POINTS[entry](HOSTILE[hostile]())
    except ContractError as exc:
        return type(exc).__name__
    return "accepted"


def test_stream_entry_points_check_their_argument_first() -> None:
    # Examples a naive implementation gets wrong (each escaped as a non-ContractError
    # or ran caller code before this package checked its arguments).
    with pytest.raises(ProtocolViolation):
        AnthropicMessagesStream(eager_input_streaming=itertools.count())  # type: ignore[arg-type]
    # A list subclass is read through list's own methods (its overrides raise).
    cut = [start(), *tool_block(0, "c", "f", '{"a": '), *finish()]
    turn = parse_events(cut, eager_input_streaming=EvilList(["f"]))
    assert turn.calls == () and turn.recovery_calls[0].partial_json == '{"a": '
    with pytest.raises(InvalidArgument):
        AnthropicMessagesStream(limits=_bypassed_limits())
    with pytest.raises(InvalidArgument):
        AnthropicMessagesStream(revision=EvilStr(REVISION))
    with pytest.raises(ProtocolViolation, match="event 0"):
        AnthropicMessagesStream().feed(_colliding())
    with pytest.raises(ProtocolViolation, match="event 0"):
        AnthropicMessagesStream().feed(EvilDict(event="ping", data={"type": "ping"}))


def test_builder_reads_caller_values_boundedly_and_without_their_methods() -> None:
    turn = parse_events(two_call_stream())
    from pcfuzz.contracts.errors import ResultBindingError

    with pytest.raises(ResultBindingError):
        build(turn, itertools.repeat(results_for(turn)[0]))
    # A list subclass is copied through list's own methods (its overrides raise) ...
    assert build(turn, history=EvilList(HISTORY))["messages"][0] == HISTORY[0]
    # ... anything else that is not JSON is rejected before it is read.
    with pytest.raises(ContinuationError):
        build(turn, history=RaisingIterable())
    with pytest.raises(ContractError, match="nests deeper"):
        build(turn, tools=[{**TOOLS[0], "input_schema": {"type": "object", "x": DEEP_DICT}}])
    with pytest.raises(ContinuationError):
        build(turn, max_tokens=EvilInt(8))
    with pytest.raises(ContinuationError):
        build(turn, user_text="\ud800")


@pytest.mark.parametrize("eager", [False, True])
def test_streamed_text_with_a_lone_surrogate_is_rejected(eager: bool) -> None:
    # Streamed fragments are kept without a copy pass; a Python caller could hand in
    # what the wire cannot carry, and the turn's digest check would then fail later.
    for events in (
        [start(), *tool_block(0, "c", "f", '{"a": "\ud800', '"}'), *finish()],
        [start(), ev("content_block_start", index=0, content_block={"type": "text", "text": ""}),
         ev("content_block_delta", index=0, delta={"type": "text_delta", "text": "a\udfff"})],
    ):
        with pytest.raises(ProtocolViolation, match="lone surrogate"):
            parse_events(events, eager_input_streaming=eager)
    turn = parse_events([start(), *tool_block(0, "c", "f", '{"a": "\U0001f600"}'), *finish()])
    turn.check_unchanged()
    assert turn.calls[0].arguments == {"a": "\U0001f600"}


def test_a_turn_grown_into_a_shared_reference_bomb_is_rejected_quickly() -> None:
    turn = parse_events(two_call_stream())
    bomb: Any = []
    for _ in range(64):
        bomb = [bomb, bomb]  # 2**64 leaves if walked naively
    turn.message["bomb"] = bomb
    with pytest.raises(SnapshotMutated):
        turn.check_unchanged()
    with pytest.raises(SnapshotMutated):
        build(turn)


def test_every_entry_point_with_every_hostile_value_raises_only_contract_errors() -> None:
    outcomes: dict[str, set[str]] = {}
    for entry in ENTRY_POINTS:
        for hostile in HOSTILE:
            outcomes.setdefault(entry, set()).add(_outcome(entry, hostile))
    # Every entry point rejects something: none of these checks is vacuous.
    assert all(seen - {"accepted"} for seen in outcomes.values()), outcomes


@given(st.sampled_from(sorted(ENTRY_POINTS)), st.sampled_from(sorted(HOSTILE)))
def test_hostile_argument_property(entry: str, hostile: str) -> None:
    outcome = _outcome(entry, hostile)
    event(f"{entry}: {outcome}")
    event(f"hostile {hostile}")


def test_the_entry_point_table_covers_every_parameter() -> None:
    covered = " ".join(ENTRY_POINTS)
    for func in (AnthropicMessagesStream.__init__, parse_events,
                 build_anthropic_messages_continuation):
        for name in inspect.signature(func).parameters:
            if name == "self":
                continue
            short = "capability" if name == "mid_conversation_system_capability" else name
            assert short in covered, f"{func.__qualname__}({name}) has no hostile-value entry"
