#!/usr/bin/env python3
"""atheris target: the Anthropic Messages envelope parser and its continuation.

The first byte selects a mode:

* input that looks like raw SSE (an ``event:``/``data:``/``id:``/``retry:`` or
  ``:`` line first, e.g. a capture file): the whole input goes through the wire path
  of ``fuzz_wire_anthropic_messages`` (``fuzz.harness.wire_target.route_sse``); no mode
  byte is taken;
* otherwise, even: the rest is raw SSE text, decoded by ``contracts.sse`` and mapped
  to envelopes by ``contracts.wire.sse_to_events`` (strict JSON data), fed to the
  stream, then ``close()``;
* odd: structure-aware; :class:`atheris.FuzzedDataProvider` builds a valid
  two-layer stream (text, thinking, server and client tool blocks, fragment
  boundaries anywhere), applies a few mutations (drop, duplicate, swap, retype,
  truncate, overwrite a field, insert ping/error), parses it and, when it parses,
  checks the contract's invariants and builds a continuation.

Only :class:`ContractError` may escape ``TestOneInput``; anything else, including
a broken invariant (``AssertionError``), is a crash.
"""

from __future__ import annotations

import json
import sys
from itertools import islice
from typing import Any

import atheris

from pcfuzz.fuzz.harness.fdp import json_value as _json_value
from pcfuzz.fuzz.harness.fdp import split_text as _split
from pcfuzz.fuzz.harness.instrument import STREAM, WIRE, instrument, provider

with instrument(*STREAM, *WIRE, *provider("anthropic-messages")):
    from pcfuzz.contracts.anthropic_messages import (
        REVISIONS,
        AnthropicMessagesStream,
        build_anthropic_messages_continuation,
    )
    from pcfuzz.contracts.errors import ContractError
    from pcfuzz.contracts.results import ModelVisibleToolResult
    from pcfuzz.contracts.sse import decode_sse
    from pcfuzz.contracts.wire import sse_to_events

from pcfuzz.fuzz.harness.wire_target import note_sse_inputs, route_sse

CONTRACT = "anthropic-messages"

# every shipped revision is fuzzed; the input length picks one (no byte consumed)
_REVISIONS = sorted(REVISIONS)

_EVENT_NAMES = (
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
)
# ToolUseBlock.caller values: only "direct" is in the pinned contract.
_CALLERS = ({"type": "direct"}, {"type": "code_execution_20250825", "tool_id": "srv"})
# Stop reasons: anthropic's StopReason lists the same seven in both shipped revisions
# (2.15.0 for 2026-12-01); "x_future" is unknown to both.
_STOP_REASONS = ("tool_use", "tool_use", "end_turn", "max_tokens", "pause_turn", "refusal",
                 "model_context_window_exceeded", "x_future")
_BLOCK_KINDS = ("text", "thinking", "redacted_thinking", "server", "client", "client", "fallback")
_MAX_EVENTS = 400


def sse_envelopes(data: bytes) -> list[dict[str, Any]]:
    """The ``{event, data}`` envelopes of raw SSE bytes: ``contracts.sse`` decodes
    them (WHATWG rules, strict UTF-8, a cut event is ``StreamTruncated``) and
    ``contracts.wire.sse_to_events`` maps each event (data parsed strictly). At most
    ``_MAX_EVENTS`` envelopes are read. Raises only ``ContractError``."""
    return list(islice(sse_to_events(CONTRACT, decode_sse(data)), _MAX_EVENTS))


def _sse_mode(data: bytes) -> None:
    stream = AnthropicMessagesStream(eager_input_streaming=len(data) % 3 == 0,
                                     revision=_REVISIONS[len(data) // 3 % len(_REVISIONS)])
    for envelope in sse_envelopes(data):
        stream.feed(envelope)
    turn = stream.close()
    _check_turn(turn)


def _ev(name: str, **data: Any) -> dict[str, Any]:
    return {"event": name, "data": {"type": name, **data}}






def _generate(fdp: atheris.FuzzedDataProvider) -> list[dict[str, Any]]:
    out_start = fdp.ConsumeIntInRange(0, 20)
    events = [
        _ev(
            "message_start",
            message={
                "id": fdp.ConsumeUnicodeNoSurrogates(6) or "m",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "fuzz-model",
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 5, "output_tokens": out_start},
            },
        )
    ]
    last_server = "srv"
    for index in range(fdp.ConsumeIntInRange(0, 5)):
        kind = _BLOCK_KINDS[fdp.ConsumeIntInRange(0, len(_BLOCK_KINDS) - 1)]
        if kind == "text":
            events.append(_ev("content_block_start", index=index, content_block={"type": "text", "text": ""}))
            for part in _split(fdp, fdp.ConsumeUnicodeNoSurrogates(12)):
                events.append(_ev("content_block_delta", index=index, delta={"type": "text_delta", "text": part}))
        elif kind == "thinking":
            events.append(
                _ev("content_block_start", index=index,
                    content_block={"type": "thinking", "thinking": "", "signature": ""})
            )
            for part in _split(fdp, fdp.ConsumeUnicodeNoSurrogates(12)):
                events.append(
                    _ev("content_block_delta", index=index, delta={"type": "thinking_delta", "thinking": part})
                )
            events.append(
                _ev("content_block_delta", index=index, delta={"type": "signature_delta", "signature": "sig"})
            )
        elif kind == "redacted_thinking":
            events.append(
                _ev("content_block_start", index=index,
                    content_block={"type": "redacted_thinking", "data": "opaque"})
            )
        elif kind == "fallback":
            events.append(
                _ev("content_block_start", index=index,
                    content_block={"type": "fallback", "from": {"model": "a"}, "to": {"model": "b"}})
            )
        elif kind == "server" and fdp.ConsumeBool():
            events.append(
                _ev("content_block_start", index=index, content_block={
                    "type": "web_search_tool_result", "tool_use_id": last_server,
                    "content": _json_value(fdp)})
            )
        else:
            call_id = f"{kind}-{index}-{fdp.ConsumeUnicodeNoSurrogates(3)}"
            if kind == "server":
                last_server = call_id
            args = {fdp.ConsumeUnicodeNoSurrogates(4): _json_value(fdp) for _ in range(fdp.ConsumeIntInRange(0, 3))}
            text = json.dumps(args, ensure_ascii=fdp.ConsumeBool()) if args or fdp.ConsumeBool() else ""
            block: dict[str, Any] = {
                "type": "tool_use" if kind == "client" else "server_tool_use",
                "id": call_id, "name": "web_search" if kind == "server" else "lookup",
                "input": {}}
            if fdp.ConsumeIntInRange(0, 7) == 0:
                block["caller"] = dict(_CALLERS[fdp.ConsumeIntInRange(0, len(_CALLERS) - 1)])
            events.append(_ev("content_block_start", index=index, content_block=block))
            for part in _split(fdp, text):
                events.append(
                    _ev("content_block_delta", index=index, delta={"type": "input_json_delta", "partial_json": part})
                )
        events.append(_ev("content_block_stop", index=index))
    events.append(
        _ev("message_delta",
            delta={"stop_reason": _STOP_REASONS[fdp.ConsumeIntInRange(0, len(_STOP_REASONS) - 1)],
                   "stop_sequence": None},
            usage={"output_tokens": out_start + fdp.ConsumeIntInRange(-2, 30)})
    )
    events.append(_ev("message_stop"))
    return events


def _mutate(fdp: atheris.FuzzedDataProvider, events: list[dict[str, Any]]) -> None:
    for _ in range(fdp.ConsumeIntInRange(0, 3)):
        if not events:
            return
        op = fdp.ConsumeIntInRange(0, 8)
        i = fdp.ConsumeIntInRange(0, len(events) - 1)
        j = fdp.ConsumeIntInRange(0, len(events) - 1)
        if op == 0:
            del events[i]
        elif op == 1:
            events.insert(j, json.loads(json.dumps(events[i])))
        elif op == 2:
            events[i], events[j] = events[j], events[i]
        elif op == 3:
            events[i]["event"] = _EVENT_NAMES[fdp.ConsumeIntInRange(0, len(_EVENT_NAMES) - 1)]
        elif op == 4:
            del events[i:]
        elif op == 5:
            data = events[i]["data"]
            keys = sorted(data)
            key = keys[fdp.ConsumeIntInRange(0, len(keys) - 1)]
            target = data[key]
            if isinstance(target, dict) and target and fdp.ConsumeBool():
                inner = sorted(target)
                target[inner[fdp.ConsumeIntInRange(0, len(inner) - 1)]] = _json_value(fdp)
            else:
                data[key] = _json_value(fdp)
        elif op == 6:
            events.insert(i, _ev("ping"))
        elif op == 7:
            events.insert(i, _ev("error", error={"type": "overloaded_error", "message": "x"}))
        else:
            data = events[i]["data"]
            if "delta" in data and isinstance(data["delta"], dict) and "partial_json" in data["delta"]:
                data["delta"]["partial_json"] = fdp.ConsumeUnicodeNoSurrogates(6)


def _revision_for(data: bytes) -> str:
    """The structured mode's revision: the input's length picks one (no byte consumed,
    so a corpus entry keeps its meaning)."""
    return _REVISIONS[len(data) % len(_REVISIONS)]


def _structured_mode(data: bytes) -> None:
    revision = _revision_for(data)
    fdp = atheris.FuzzedDataProvider(data)
    eager = fdp.ConsumeBool()
    events = _generate(fdp)
    _mutate(fdp, events)
    stream = AnthropicMessagesStream(eager_input_streaming=eager, revision=revision)
    for event in events:
        stream.feed(event)
    turn = stream.close()
    _check(turn.revision == revision, "the turn is of another revision")
    _check_turn(turn)


_TRUNCATING = frozenset({"max_tokens", "model_context_window_exceeded"})


def _whole_object(text: str) -> dict[str, Any] | None:
    """``text`` parsed with the standard library when it is one JSON object (the oracle's
    own reading, independent of the contract's strict loader)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if type(value) is dict else None


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def _check_turn(turn: Any) -> None:
    client = [b for b in turn.blocks if b.get("type") == "tool_use"]
    client_ids = [b["id"] for b in client]
    call_ids = [c.call_id for c in turn.calls]
    recovery_ids = [c.call_id for c in turn.recovery_calls]
    _check(sorted(call_ids + recovery_ids) == sorted(client_ids), "calls/recovery must partition")
    _check(not (call_ids and recovery_ids), "a turn is executable as a whole or not at all")
    if call_ids:
        _check(turn.stop_reason == "tool_use", "calls released without stop_reason tool_use")
    by_id = {b["id"]: b for b in client}
    for call in turn.calls:
        _check(call.arguments == by_id[call.call_id]["input"], "arguments differ from the block")
    # A block a truncating message_delta cut open (seed line 190) is replayed as
    # streamed: nothing streamed keeps the start input ({}), a whole object is
    # replayed as sent, anything else wrapped; it never has arguments.
    cut = turn.stop_reason in _TRUNCATING
    for rc in turn.recovery_calls:
        replayed = by_id[rc.call_id]["input"]
        if rc.partial_json is not None:
            whole = _whole_object(rc.partial_json) if cut else None
            _check(replayed == {"INVALID_JSON": rc.partial_json}
                   or (whole is not None and replayed == whole),
                   "incomplete input must be replayed wrapped, unrepaired")
            _check(rc.arguments is None, "incomplete input must not have arguments")
        elif rc.arguments is None:
            _check(cut and replayed == {},
                   "a recovery call without arguments or input text must be a block cut "
                   "open by a truncation before any input was streamed")
        else:
            _check(rc.arguments == replayed, "recovery arguments differ")
    for b in client:
        caller = b.get("caller")
        _check(caller is None or caller.get("type") == "direct", "non-direct caller accepted")
    servers = {b["id"] for b in turn.blocks if b.get("type") == "server_tool_use"}
    _check(not servers.intersection(call_ids), "server tool offered for execution")
    tools = [{"name": "lookup", "input_schema": {"type": "object"}}]
    results = [ModelVisibleToolResult(c, f"ok {c}") for c in call_ids]
    body = build_anthropic_messages_continuation(
        turn, results, history=[{"role": "user", "content": "go"}], model="m",
        max_tokens=64, tools=tools,
    )
    content = body["messages"][-1]["content"]
    _check([c["tool_use_id"] for c in content] == client_ids, "one result per call, in order")
    _check(body["messages"][-2]["content"] == list(turn.blocks), "assistant replay differs")
    for item in content:
        if item["tool_use_id"] in recovery_ids:
            _check(item["is_error"] is True, "recovery result must be an error")


def TestOneInput(data: bytes) -> None:  # noqa: N802 - libFuzzer entry point name
    """Fuzz entry point: only ContractError may escape."""
    if not data or route_sse(CONTRACT, data):
        return
    try:
        if data[0] % 2 == 0:
            _sse_mode(data[1:])
        else:
            _structured_mode(data[1:])
    except ContractError:
        return


def main() -> None:
    note_sse_inputs(sys.argv, CONTRACT)
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
