"""Property tests and a rule-based state machine for the Anthropic Messages contract.

The strategies and the machine model the protocol on their own (they import only
the parser's public API to drive it, never its tables).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from _revisions import PINNED, each_revision, machines_per_revision, revision_settings
from hypothesis import Phase, event, find, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    precondition,
    rule,
)

from pcfuzz.contracts import errors
from pcfuzz.contracts.anthropic_messages import (
    REVISIONS,
    AnthropicMessagesStream,
    build_anthropic_messages_continuation,
    parse_events,
)
from pcfuzz.contracts.errors import (
    ContractError,
    ProtocolViolation,
    StreamTruncated,
    StrictJSONError,
)
from pcfuzz.contracts.results import ModelVisibleToolResult
from pcfuzz.strategies.anthropic_messages import (
    DRIFT_POINTS,
    MUTATIONS,
    STOP_REASONS,
    drift_strategies,
    expected_client_ids,
    mutated_streams,
    pinned_event_strategy,
    render,
    turn_models,
    valid_streams,
)
from pcfuzz.strategies.revision_schemas import load_schemas

SCHEMAS_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "schemas" / "anthropic_messages"
SCHEMAS = {
    p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(SCHEMAS_DIR.glob("*.json"))
}
VALIDATORS = {name: jsonschema.Draft7Validator(schema) for name, schema in SCHEMAS.items()}
#: Each revision's schemas (fixtures/schemas/anthropic_messages/[<revision>/]).
REVISION_VALIDATORS = {
    revision: {name: jsonschema.Draft7Validator(schema)
               for name, schema in load_schemas("anthropic-messages", revision).items()}
    for revision in REVISIONS}
# hypothesis-jsonschema strategies, built once (each schema is canonicalized lazily).
PINNED_EVENTS = pinned_event_strategy(SCHEMAS)
DRIFT = drift_strategies(SCHEMAS)
HISTORY = [{"role": "user", "content": "go"}]


def tools_for(names: list[str]) -> list[dict[str, Any]]:
    return [{"name": n, "description": "t", "input_schema": {"type": "object"}} for n in sorted(set(names))]


def continuation(turn: Any) -> dict[str, Any]:
    names = [c.name for c in turn.calls] + [c.name for c in turn.recovery_calls]
    results = [ModelVisibleToolResult(c.call_id, f"out {c.call_id}") for c in turn.calls]
    return build_anthropic_messages_continuation(
        turn, results, history=HISTORY, model="m", max_tokens=64, tools=tools_for(names)
    )


def _observe_revision(model: Any) -> None:
    """Show the revision's stop reasons are reached (each revision's own table)."""
    event(f"{model.revision}: stop_reason={model.stop_reason}")


# --------------------------------------------------------------------------- valid streams


def test_the_generator_renders_every_shipped_revision() -> None:
    from pcfuzz.strategies.anthropic_messages import REVISIONS as GEN_REVISIONS

    assert sorted(GEN_REVISIONS) == sorted(REVISIONS)
    assert GEN_REVISIONS[0] == PINNED
    assert set(STOP_REASONS) == set(REVISIONS)


@pytest.mark.parametrize("revision", sorted(REVISIONS))
def test_valid_stream_releases_exactly_the_client_calls_of_a_tool_use_turn(revision: str) -> None:
    # The shapes the generator renders are the same in every revision (2026-12-01
    # changed nothing that reaches execution); the invariant must hold in each.
    @revision_settings(revision)
    @given(valid_streams(revision=revision))
    def check(case: Any) -> None:
        _valid_stream_releases_exactly_the_client_calls(case, revision)

    check()


def _valid_stream_releases_exactly_the_client_calls(case: Any, revision: str) -> None:
    model, events = case
    event(f"stop_reason={model.stop_reason}")
    _observe_revision(model)
    for block in model.blocks:
        event(f"block={block.kind}")
    turn = parse_events(events, revision=revision)
    assert turn.revision == revision
    client = expected_client_ids(model)
    event(f"client_calls={min(len(client), 3)}")
    if model.stop_reason == "tool_use":
        assert [c.call_id for c in turn.calls] == client
        assert turn.recovery_calls == ()
    else:
        assert turn.calls == ()
        assert [c.call_id for c in turn.recovery_calls] == client
    assert [b["type"] for b in turn.blocks] == [b.kind for b in model.blocks]
    for parsed, block in zip(turn.blocks, model.blocks, strict=True):
        if block.kind == "text":
            assert parsed["text"] == block.stream_text
        elif block.kind == "thinking":
            assert parsed["thinking"] == block.stream_text
            assert parsed["signature"] == block.fields["signature"]
        elif block.kind in ("tool_use", "server_tool_use"):
            expected = json.loads(block.stream_text) if block.stream_text else {}
            assert parsed["input"] == expected
    servers = {b.fields["id"] for b in model.blocks if b.kind == "server_tool_use"}
    assert not servers & {c.call_id for c in turn.calls}
    # Arguments are the concatenated fragments, parsed (or the start {} if none).
    inputs = {b.fields["id"]: b.stream_text for b in model.blocks if b.kind == "tool_use"}
    for call in (*turn.calls, *turn.recovery_calls):
        text = inputs[call.call_id]
        assert call.arguments == (json.loads(text) if text else {})


@each_revision
@given(st.data())
def test_fragment_boundaries_and_pings_do_not_change_the_turn(revision: str, data: Any) -> None:
    model = data.draw(turn_models(revision=revision))
    _observe_revision(model)
    first = parse_events(render_with(data, model), revision=revision)
    second = parse_events(render_with(data, model), revision=revision)
    event(f"blocks={len(model.blocks)}")
    assert first.digest == second.digest
    assert first.blocks == second.blocks


def render_with(data: Any, model: Any) -> list[dict[str, Any]]:
    return data.draw(st.composite(lambda draw: render(draw, model))())


@each_revision
@given(st.data())
def test_incremental_feed_equals_whole_parse_and_input_is_untouched(revision: str,
                                                                   data: Any) -> None:
    model, events = data.draw(valid_streams(revision=revision))
    _observe_revision(model)
    before = copy.deepcopy(events)
    stream = AnthropicMessagesStream(revision=revision)
    for e in events:
        stream.feed(e)
    incremental = stream.close()
    assert incremental.revision == revision
    assert incremental.digest == parse_events(events, revision=revision).digest
    assert events == before


@each_revision
@given(st.data())
def test_generated_envelopes_validate_against_their_revisions_schemas(
        revision: str, data: Any) -> None:
    model, events = data.draw(valid_streams(revision=revision))
    _observe_revision(model)
    validators = REVISION_VALIDATORS[revision]
    for e in events:
        event(f"event={e['event']}")
        errors_found = list(validators[e["event"]].iter_errors(e))
        assert not errors_found, (revision, e, errors_found[0].message)


@each_revision
@given(st.data())
def test_continuation_binds_one_result_per_call_results_first_and_replays_blocks(
        revision: str, data: Any) -> None:
    model, events = data.draw(valid_streams(stop_reason="tool_use", require_client=True,
                                            revision=revision))
    turn = parse_events(events, revision=revision)
    client = expected_client_ids(model)
    event(f"client_calls={min(len(client), 3)}")
    if not client:
        return
    body = continuation(turn)
    user = body["messages"][-1]
    assert user["role"] == "user"
    assert [c["tool_use_id"] for c in user["content"]] == client
    assert all(c["type"] == "tool_result" for c in user["content"])
    assert body["messages"][-2] == {"role": "assistant", "content": list(turn.blocks)}
    assert body["messages"][:-2] == HISTORY


_U = {"role": "user", "content": "u"}
_A = {"role": "assistant", "content": [{"type": "text", "text": "a"}]}
_A_SERVER_END = {"role": "assistant", "content": [
    {"type": "server_tool_use", "id": "srv-old", "name": "web_search", "input": {}},
    {"type": "web_search_tool_result", "tool_use_id": "srv-old", "content": []}]}
_SYS = {"role": "system", "content": "s"}
_HISTORY_PARTS = {"U": _U, "A": _A, "S": _A_SERVER_END, "Y": _SYS}


def _seed_allows(kinds: str, capability: bool) -> bool:
    """The seed's history rules, written from its text (U user, A assistant,
    S assistant ending in a server-tool result, Y mid-conversation system)."""
    if not kinds or kinds[0] != "U":
        return False
    if "Y" in kinds and not capability:
        return False
    groups = [(m.start(), m.end()) for m in re.finditer("Y+", kinds)]
    for begin, end in groups:
        if kinds[begin - 1] not in "US":  # right after a user turn or a server-result end
            return False
        if end < len(kinds) and kinds[end] not in "AS":  # then only the end or an assistant
            return False
    rest = kinds.rstrip("Y")
    return rest[-1] == "U" or rest != kinds  # ends with a user turn, or a system group


_PLAUSIBLE_HISTORIES = st.tuples(
    st.lists(st.sampled_from(["AU", "SU", "YAU", "SYAU", "SYSU", "YYAU"]), max_size=3),
    st.sampled_from(["", "Y", "SY", "SYY", "A", "S"]),
).map(lambda parts: "U" + "".join(parts[0]) + parts[1])


@each_revision
@given(st.text(alphabet="UASY", max_size=6) | _PLAUSIBLE_HISTORIES, st.booleans())
def test_history_rules_match_the_seed(revision: str, kinds: str, capability: bool) -> None:
    turn = parse_events(_TWO_CALLS, revision=revision)
    history = [_HISTORY_PARTS[k] for k in kinds]
    expected = _seed_allows(kinds, capability)
    event(f"history {'accepted' if expected else 'rejected'}; system={'Y' in kinds}")
    try:
        body = build_anthropic_messages_continuation(
            turn, [ModelVisibleToolResult(c.call_id, "o") for c in turn.calls],
            history=history, model="m", max_tokens=8, tools=tools_for(["f"]),
            mid_conversation_system_capability=capability,
        )
    except errors.ContinuationError:
        assert not expected, kinds
        return
    assert expected, kinds
    assert body["messages"][: len(history)] == history


_TWO_CALLS = [
    {"event": "message_start", "data": {"type": "message_start", "message": {
        "id": "m", "type": "message", "role": "assistant", "content": [], "model": "x",
        "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}},
    {"event": "content_block_start", "data": {"type": "content_block_start", "index": 0,
     "content_block": {"type": "tool_use", "id": "c1", "name": "f", "input": {}}}},
    {"event": "content_block_stop", "data": {"type": "content_block_stop", "index": 0}},
    {"event": "message_delta", "data": {"type": "message_delta",
     "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}}},
    {"event": "message_stop", "data": {"type": "message_stop"}},
]


# The builder's own outputs, from the issue text (not the parser's table).
_PROTECTED = ("model", "messages", "system", "tools", "max_tokens")
# The rule, written out independently: a key is a protected field when its
# case-folded letters and digits are those of one (maxTokens, max-tokens, " MODEL").
_PROTECTED_LETTERS = {"".join(ch for ch in p if ch.isalnum()) for p in _PROTECTED}


def _spells_protected(key: str) -> bool:
    return "".join(ch for ch in key.casefold() if ch.isalnum()) in _PROTECTED_LETTERS


@st.composite
def _control_keys(draw: st.DrawFn) -> tuple[str, bool]:
    if draw(st.booleans()):
        name = draw(st.sampled_from(_PROTECTED))
        flips = draw(st.lists(st.booleans(), min_size=len(name), max_size=len(name)))
        cased = "".join(c.upper() if f else c for c, f in zip(name, flips, strict=True))
        # Separators anywhere between the letters: max-tokens, max__tokens, m a x.
        seps = st.text(alphabet=" \t\n-_.", max_size=2)
        spelled = "".join(draw(seps) + c for c in cased.replace("_", "")) + draw(seps)
        event("protected key spelled with separators" if spelled.strip() != cased else "cased")
        return spelled, True
    key = draw(st.text(max_size=12))
    # An empty key is no field name at all: rejected like a protected one.
    return key, key == "" or _spells_protected(key)


@each_revision
@given(_control_keys())
def test_request_controls_never_reach_a_protected_field(revision: str,
                                                        case: tuple[str, bool]) -> None:
    key, protected = case
    event(f"control key {'protected variant' if protected else 'free'}")
    turn = parse_events(_TWO_CALLS, revision=revision)
    kwargs: dict[str, Any] = {
        "history": HISTORY, "model": "m", "max_tokens": 8, "tools": tools_for(["f"]),
        "request_controls": {key: "overwrite"},
    }
    results = [ModelVisibleToolResult(c.call_id, "o") for c in turn.calls]
    try:
        body = build_anthropic_messages_continuation(turn, results, **kwargs)
    except errors.ContinuationError:
        assert protected, key
        return
    assert not protected, key
    assert body[key] == "overwrite"
    assert body["model"] == "m" and body["max_tokens"] == 8 and "system" not in body


# --------------------------------------------------------------------------- mutations


@each_revision
@given(st.data())
def test_every_mutation_gets_the_outcome_the_contract_requires(revision: str, data: Any) -> None:
    m = data.draw(mutated_streams(revision=revision))
    event(f"mutation={m.mutation}")
    check_mutation_outcome(m, revision)


@each_revision
@pytest.mark.parametrize("mutation", MUTATIONS)
def test_each_mutation_class_gets_its_outcome_at_least_once_per_run(mutation: str,
                                                                    revision: str) -> None:
    # The random property's mix of classes depends on the seed; this pins one
    # instance of EVERY class in every run (the first one generated; no shrinking).
    m = find(
        mutated_streams(mutation, revision=revision),
        lambda _: True,
        settings=settings(phases=[Phase.generate], database=None),
    )
    assert m.mutation == mutation
    check_mutation_outcome(m, revision)


def check_mutation_outcome(m: Any, revision: str) -> None:
    if m.expect in ("no_calls", "recovery"):
        turn = parse_events(m.events, eager_input_streaming=m.eager, revision=revision)
        assert turn.calls == ()
        client = [b["id"] for b in turn.blocks if b["type"] == "tool_use"]
        assert [c.call_id for c in turn.recovery_calls] == client
        if m.expect == "recovery":
            assert any(c.partial_json is not None for c in turn.recovery_calls)
            if turn.stop_reason in ("tool_use", "max_tokens"):
                body = continuation(turn)
                assert all(c["is_error"] is True for c in body["messages"][-1]["content"])
            else:  # e.g. end_turn: no tool-result continuation is defined
                try:
                    continuation(turn)
                except errors.ContinuationError:
                    pass
                else:
                    raise AssertionError("continuation built for a non-continuable stop reason")
        return
    expected = getattr(errors, m.expect)
    try:
        parse_events(m.events, eager_input_streaming=m.eager, revision=revision)
    except ContractError as exc:
        assert type(exc) is expected, (m.mutation, exc)
        assert exc.where is None or exc.where.startswith("event ")
    else:
        raise AssertionError(f"{m.mutation}: parsed, expected {m.expect}")


def test_every_mutation_is_known_to_the_strategy() -> None:
    assert len(set(MUTATIONS)) == len(MUTATIONS) >= 15


@each_revision
@given(st.lists(PINNED_EVENTS, min_size=1, max_size=2), st.data())
def test_schema_shaped_events_spliced_anywhere_only_raise_contract_errors(
    revision: str, extra: list[Any], data: Any
) -> None:
    for instance in extra:  # hypothesis-jsonschema output, checked against the schema
        assert VALIDATORS[instance["event"]].is_valid(instance)
    _, events = data.draw(valid_streams(revision=revision))
    at = data.draw(st.integers(0, len(events)))
    events[at:at] = extra
    event(f"spliced={extra[0]['event']}")
    try:
        parse_events(events, revision=revision)
    except ContractError as exc:
        event(f"error={type(exc).__name__}")


@each_revision
@given(st.data(), st.sampled_from(["feed", "close"]))
def test_a_poisoned_stream_keeps_failing(revision: str, data: Any, then: str) -> None:
    m = data.draw(mutated_streams(revision=revision))
    stream = AnthropicMessagesStream(eager_input_streaming=m.eager, revision=revision)
    failed: ContractError | None = None
    try:
        for e in m.events:
            stream.feed(e)
        stream.close()
    except ContractError as exc:
        failed = exc
    if failed is None:
        return
    event(f"poisoned_by={type(failed).__name__}")
    try:
        stream.feed({"event": "ping", "data": {"type": "ping"}}) if then == "feed" else stream.close()
    except ContractError:
        return
    raise AssertionError("stream accepted input after an error")


# --------------------------------------------------------------------------- schema drift


@each_revision
@given(st.data())
def test_unknown_optional_fields_do_not_change_the_outcome(revision: str, data: Any) -> None:
    """Fields the pinned schemas do not name, added where ``data`` objects are open,
    keep the parse outcome (calls, recovery calls, stop reason, blocks) and are kept
    on the blocks and the message, under every revision."""
    model, events = data.draw(valid_streams(revision=revision))
    _observe_revision(model)
    base = parse_events(events, revision=revision)
    drifted = copy.deepcopy(events)
    added: dict[tuple[int, tuple[str, ...]], dict[str, Any]] = {}
    for _ in range(data.draw(st.integers(1, 3))):
        # Event name first, then one of its occurrences: every drift point is reached
        # about equally often, not in proportion to how many deltas a stream has.
        name = data.draw(st.sampled_from(sorted({e["event"] for e in drifted})))
        at = data.draw(st.sampled_from([i for i, e in enumerate(drifted) if e["event"] == name]))
        envelope = drifted[at]
        path = data.draw(st.sampled_from(DRIFT_POINTS[name]))
        extras = data.draw(DRIFT[(envelope["event"], path)])
        target = envelope
        for key in path:
            target = target[key]
        for key, value in extras.items():
            if key not in target:
                target[key] = value
                added.setdefault((at, path), {})[key] = value
        assert VALIDATORS[envelope["event"]].is_valid(envelope)
        event(f"drift at {envelope['event']}:{'.'.join(path)}")
    turn = parse_events(drifted, revision=revision)
    assert turn.calls == base.calls
    assert turn.recovery_calls == base.recovery_calls
    assert (turn.stop_reason, turn.stop_sequence) == (base.stop_reason, base.stop_sequence)
    assert len(turn.blocks) == len(base.blocks)
    kept: dict[int, dict[str, Any]] = {}
    for (at, path), extras in added.items():
        if path == ("data", "content_block"):
            kept[drifted[at]["data"]["index"]] = extras
        elif path == ("data", "message"):
            assert all(turn.message[k] == v for k, v in extras.items())
    for i, (parsed, expected) in enumerate(zip(turn.blocks, base.blocks, strict=True)):
        extras = kept.get(i, {})
        assert {k: v for k, v in parsed.items() if k not in extras} == expected
        assert all(parsed[k] == v for k, v in extras.items())


@each_revision
@given(st.data())
def test_unknown_envelope_keys_fail_closed_and_break_the_schema(revision: str, data: Any) -> None:
    """The envelope is closed: a third key is drift the projection cannot place."""
    _, events = data.draw(valid_streams(revision=revision))
    at = data.draw(st.integers(0, len(events) - 1))
    envelope = events[at]
    extras = data.draw(DRIFT[(envelope["event"], ())])
    envelope.update(extras)
    event(f"envelope drift at {envelope['event']}")
    assert not VALIDATORS[envelope["event"]].is_valid(envelope)
    try:
        parse_events(events, revision=revision)
    except ProtocolViolation as exc:
        assert exc.where == f"event {at}"
        return
    raise AssertionError("an envelope with an unknown key was accepted")


# --------------------------------------------------------------------------- state machine


def _ev(name: str, **data: Any) -> dict[str, Any]:
    return {"event": name, "data": {"type": name, **data}}


class AnthropicStreamMachine(RuleBasedStateMachine):
    """Drives one stream event by event from an independent model of the protocol."""

    #: The contract revision the machine drives (a subclass per later revision).
    revision = PINNED

    pending = Bundle("pending_fragments")

    @initialize(eager=st.booleans(), start_tokens=st.integers(0, 5))
    def open_message(self, eager: bool, start_tokens: int) -> None:
        self.serial = 0  # block serial numbers, unique across the messages of one run
        self._open_message(eager, start_tokens)

    @precondition(lambda self: self.phase in ("closed", "failed"))
    @rule(eager=st.booleans(), start_tokens=st.integers(0, 5))
    def next_message(self, eager: bool, start_tokens: int) -> None:
        event("machine: next message after close/error")
        self._open_message(eager, start_tokens)

    def _open_message(self, eager: bool, start_tokens: int) -> None:
        self.eager = eager
        self.stream = AnthropicMessagesStream(eager_input_streaming=eager,
                                              revision=self.revision)
        self.fed: list[dict[str, Any]] = []
        self.phase = "message"  # message | block | delta | stopped | closed | failed
        self.blocks: list[dict[str, Any]] = []  # model: {"kind", "id", "text"}
        self.open: dict[str, Any] | None = None
        self.tokens = start_tokens
        self.stop_reason: str | None = None
        self.unproven_cut = False  # a non-eager client input left incomplete
        self.turn: Any = None
        self._feed(_ev("message_start", message={
            "id": "m", "type": "message", "role": "assistant", "content": [], "model": "x",
            "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": start_tokens}}))

    def _feed(self, e: dict[str, Any]) -> None:
        self.fed.append(e)
        self.stream.feed(e)

    def _expect_violation(self, e: dict[str, Any], cls: type = ProtocolViolation) -> None:
        try:
            self.stream.feed(e)
        except cls:
            self.phase = "failed"
            return
        raise AssertionError(f"accepted illegal {e}")

    # -- the only rule without a precondition: keeps hypothesis moving
    @rule()
    def ping(self) -> None:
        if self.phase in ("closed", "failed"):
            event("machine: ping after close/error rejected")
            try:
                self.stream.feed(_ev("ping"))
            except ContractError:
                return
            raise AssertionError("feed after close/error accepted")
        self._feed(_ev("ping"))

    @precondition(lambda self: self.phase == "message" and len(self.blocks) < 8)
    @rule(kind=st.sampled_from(["text", "tool_use", "server_tool_use", "thinking"]),
          name=st.sampled_from(["lookup", "search"]))
    def start_block(self, kind: str, name: str) -> None:
        index = len(self.blocks)
        if self.unproven_cut:
            # Only a max_tokens cut of the LAST block may leave an input incomplete.
            event("machine: block after a non-eager incomplete input rejected")
            self._expect_violation(_ev("content_block_start", index=index,
                                       content_block={"type": "text", "text": ""}), StrictJSONError)
            return
        block: dict[str, Any] = {"type": kind}
        if kind == "text":
            block["text"] = ""
        elif kind == "thinking":
            block.update(thinking="", signature="")
        else:
            block.update(id=f"id-{index}", name=name, input={})
        self._feed(_ev("content_block_start", index=index, content_block=block))
        self.serial += 1
        self.open = {"kind": kind, "index": index, "text": [], "id": block.get("id"), "name": name,
                     "serial": self.serial}
        self.blocks.append(self.open)
        self.phase = "block"

    @precondition(lambda self: self.phase == "block")
    @rule(target=pending, arguments=st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=4), max_size=3),
          cut=st.integers(0, 40))
    def make_fragments(self, arguments: dict[str, Any], cut: int) -> Any:
        assert self.open is not None
        if self.open["kind"] in ("tool_use", "server_tool_use"):
            text = json.dumps(arguments)
        else:
            text = "".join(map(str, arguments)) or "t"
        cut = min(cut, len(text))
        # The block's own identity, not just its index: indexes restart at 0 in
        # every message, and fragments made for one block must never be delivered
        # to another block that happens to reuse the index.
        return (self.open["serial"], self.open["index"], text[:cut], text[cut:])

    @precondition(lambda self: self.phase == "block")
    @rule(fragments=consumes(pending))
    def deliver_fragments(self, fragments: Any) -> None:
        assert self.open is not None
        block, index, head, tail = fragments
        if block != self.open["serial"] and index == self.open["index"]:
            event("machine: fragments made for an earlier message's block dropped")
            return
        if index != self.open["index"]:
            event("machine: fragment for a closed block rejected")
            kind = "text_delta"
            self._expect_violation(_ev("content_block_delta", index=index, delta={"type": kind, "text": head}))
            return
        if self.open["text"]:
            return  # one argument document per tool block; keep text simple too
        for part in (head, tail):
            kind = self.open["kind"]
            if kind in ("tool_use", "server_tool_use"):
                delta = {"type": "input_json_delta", "partial_json": part}
            elif kind == "thinking":
                delta = {"type": "thinking_delta", "thinking": part}
            else:
                delta = {"type": "text_delta", "text": part}
            self._feed(_ev("content_block_delta", index=index, delta=delta))
            self.open["text"].append(part)

    @precondition(lambda self: self.phase == "block")
    @rule()
    def stop_block(self) -> None:
        assert self.open is not None
        index = self.open["index"]
        if self.open["kind"] == "thinking":
            self._feed(_ev("content_block_delta", index=index,
                           delta={"type": "signature_delta", "signature": "sig"}))
        self._feed(_ev("content_block_stop", index=index))
        self.open = None
        self.phase = "message"

    @precondition(lambda self: self.phase == "block" and self.open is not None
                  and self.open["kind"] == "tool_use" and not self.open["text"])
    @rule(head=st.sampled_from(['{"k": ', '{"k": "v', '{', '{"k": [1,']))
    def stop_block_with_incomplete_input(self, head: str) -> None:
        assert self.open is not None
        index = self.open["index"]
        event(f"machine: incomplete client input (eager={self.eager})")
        self._feed(_ev("content_block_delta", index=index,
                       delta={"type": "input_json_delta", "partial_json": head}))
        self.open["text"].append(head)
        self.open["cut"] = True
        self._feed(_ev("content_block_stop", index=index))  # never an error at the stop itself
        if not self.eager:
            self.unproven_cut = True
        self.open = None
        self.phase = "message"

    @precondition(lambda self: self.phase == "block" and self.open is not None)
    @rule(reason=st.sampled_from(["max_tokens", "max_tokens", "tool_use", "end_turn"]),
          more=st.integers(0, 5))
    def message_delta_while_a_block_is_open(self, reason: str, more: int) -> None:
        # Seed line 190: a max_tokens cut may leave the last client tool_use block open
        # (no content_block_stop); that call is a recovery call. Nothing else may.
        assert self.open is not None
        self.tokens += more
        delta = _ev("message_delta", delta={"stop_reason": reason, "stop_sequence": None},
                    usage={"output_tokens": self.tokens})
        if reason != "max_tokens" or self.open["kind"] != "tool_use":
            event(f"machine: message_delta({reason}) in an open {self.open['kind']} rejected")
            self._expect_violation(delta)
            return
        event("machine: max_tokens cut an open client tool_use block")
        self._feed(delta)
        self.open["cut"] = bool(self.open["text"])
        self.open = None
        self.stop_reason = reason
        self.phase = "delta"

    @precondition(lambda self: self.phase == "block")
    @rule(chance=st.integers(0, 3))
    def overlapping_block_is_rejected(self, chance: int) -> None:
        if chance:
            return
        event("machine: overlap rejected")
        self._expect_violation(_ev("content_block_start", index=len(self.blocks),
                                   content_block={"type": "text", "text": ""}))

    @precondition(lambda self: self.phase == "message" and self.blocks)
    @rule(data=st.data(), chance=st.integers(0, 3))
    def delta_for_closed_block_is_rejected(self, data: Any, chance: int) -> None:
        if chance:
            return
        event("machine: delta for closed block rejected")
        index = data.draw(st.integers(0, len(self.blocks) - 1))
        self._expect_violation(_ev("content_block_delta", index=index,
                                   delta={"type": "text_delta", "text": "late"}))

    @precondition(lambda self: self.phase in ("message", "delta"))
    @rule(reason=st.sampled_from(["tool_use", "tool_use", "end_turn", "max_tokens", "pause_turn", "other"]),
          more=st.integers(0, 5))
    def message_delta(self, reason: str, more: int) -> None:
        if self.stop_reason is not None:
            reason = self.stop_reason
        self.tokens += more
        delta = _ev("message_delta", delta={"stop_reason": reason, "stop_sequence": None},
                    usage={"output_tokens": self.tokens})
        if self.unproven_cut and reason != "max_tokens":
            event("machine: non-eager incomplete input without max_tokens rejected")
            self._expect_violation(delta, StrictJSONError)
            return
        self._feed(delta)
        self.stop_reason = reason
        self.phase = "delta"

    @precondition(lambda self: self.phase == "delta" and self.tokens > 0)
    @rule(chance=st.integers(0, 3))
    def usage_regression_is_rejected(self, chance: int) -> None:
        if chance:
            return
        event("machine: usage regression rejected")
        self._expect_violation(_ev("message_delta", delta={"stop_reason": None},
                                   usage={"output_tokens": self.tokens - 1}))

    @precondition(lambda self: self.phase == "message" and self.stop_reason is None
                  and any(b.get("cut") for b in self.blocks))
    @rule(more=st.integers(0, 5))
    def max_tokens_ends_a_turn_with_an_incomplete_input(self, more: int) -> None:
        # The documented way such a turn ends: max_tokens, then message_stop.
        self.tokens += more
        self._feed(_ev("message_delta", delta={"stop_reason": "max_tokens", "stop_sequence": None},
                       usage={"output_tokens": self.tokens}))
        self.stop_reason = "max_tokens"
        self._feed(_ev("message_stop"))
        self.phase = "stopped"
        self.close()

    @precondition(lambda self: self.phase == "delta")
    @rule()
    def message_stop(self) -> None:
        self._feed(_ev("message_stop"))
        self.phase = "stopped"

    @precondition(lambda self: self.phase in ("message", "block", "delta"))
    @rule(chance=st.integers(0, 7))
    def truncate(self, chance: int) -> None:
        if chance:
            return  # truncation is one path among many, not the usual end
        event(f"machine: truncated in phase {self.phase}")
        try:
            self.stream.close()
        except StreamTruncated:
            self.phase = "failed"
            return
        raise AssertionError("close before message_stop released a turn")

    @precondition(lambda self: self.phase == "stopped")
    @rule()
    def close(self) -> None:
        self.turn = self.stream.close()
        self.phase = "closed"
        event(f"machine: closed with stop_reason {self.stop_reason}")
        self._check_turn(self.turn)

    def _check_turn(self, turn: Any) -> None:
        client = [b for b in self.blocks if b["kind"] == "tool_use"]
        client_ids = [b["id"] for b in client]
        calls = [c.call_id for c in turn.calls]
        recovery = [c.call_id for c in turn.recovery_calls]
        assert sorted(calls + recovery) == sorted(client_ids)
        assert not set(calls) & set(recovery)
        if self.stop_reason != "tool_use":
            assert calls == []
        if self.stop_reason == "max_tokens":
            assert calls == [] and len(recovery) == len(client_ids)
        cut = [b["id"] for b in client if b.get("cut")]
        if cut:
            event("machine: closed a turn with an incomplete input")
            assert calls == []
            partial = {c.call_id: c.partial_json for c in turn.recovery_calls}
            for b in client:
                if b.get("cut"):
                    assert partial[b["id"]] == "".join(b["text"])
        servers = {b["id"] for b in self.blocks if b["kind"] == "server_tool_use"}
        assert not servers & set(calls)
        for parsed, model in zip(turn.blocks, self.blocks, strict=True):
            if model["kind"] in ("text", "thinking"):
                assert parsed[model["kind"]] == "".join(model["text"])
        if client_ids and self.stop_reason in ("tool_use", "max_tokens"):
            body = continuation(turn)
            content = body["messages"][-1]["content"]
            assert [c["tool_use_id"] for c in content] == client_ids
            assert all(c["type"] == "tool_result" for c in content)
            assert body["messages"][-2]["content"] == list(turn.blocks)
            for item in content:
                if item["tool_use_id"] in recovery:
                    assert item["is_error"] is True

    @invariant()
    def nothing_is_executable_before_message_stop(self) -> None:
        if self.phase in ("closed", "failed", "stopped"):
            return
        replay = AnthropicMessagesStream(eager_input_streaming=self.eager,
                                         revision=self.revision)
        for e in self.fed:
            replay.feed(e)
        try:
            replay.close()
        except StreamTruncated:
            return
        raise AssertionError("a turn was released before message_stop")


# TestAnthropicStreamMachine (2026-07-21) and TestAnthropicStreamMachine20261201: the
# same machine and invariants per revision.
TestAnthropicStreamMachine, TestAnthropicStreamMachine20261201 = machines_per_revision(AnthropicStreamMachine)


@each_revision
@given(st.none())
def test_machine_never_delivers_an_earlier_messages_fragments_to_a_reused_index(
        revision: str, _: None) -> None:
    # Found by the nightly job: fragments made while message 1's text block 0 was
    # open were delivered to message 2's tool_use block 0 (indexes restart per
    # message), so the machine, not the parser, fed the tool a text fragment "t".
    state = AnthropicStreamMachine()
    state.revision = revision
    state.open_message(eager=False, start_tokens=0)
    state.start_block(kind="text", name="lookup")
    fragments = state.make_fragments(arguments={}, cut=0)
    state.overlapping_block_is_rejected(chance=0)
    state.next_message(eager=False, start_tokens=0)
    state.start_block(kind="tool_use", name="lookup")
    state.deliver_fragments(fragments=fragments)
    state.stop_block()
    state.message_delta(more=0, reason="tool_use")
    state.teardown()
