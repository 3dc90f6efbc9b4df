#!/usr/bin/env python3
"""atheris target: the Gemini Interactions v1 stream parser, snapshots and continuations.

An input that looks like raw SSE (an ``event:``/``data:``/``id:``/``retry:`` or ``:``
line first, e.g. a capture file) goes, whole, through the wire path of
``fuzz_wire_gemini_interactions`` (``fuzz.harness.wire_target.route_sse``). Otherwise the
first byte selects a mode (``byte % 3``):

* 0: raw JSON lines; each non-empty line is loaded strictly and fed as one event,
  then ``close()``;
* 1: structure-aware; :class:`atheris.FuzzedDataProvider` builds a valid stream
  (every pinned step type, the server-side steps and statuses revision 2026-12-01
  added, interleaved function calls with argument fragments cut anywhere, event ids,
  status updates, usage), applies mutations (drop, duplicate, swap, replay
  with/without a changed payload, retype, truncate, overwrite a field, insert an
  error / v1beta step / unknown status), parses it under the input's revision and,
  when it parses, checks that revision's rules (a step or status it does not know
  never parses; only ``requires_action`` releases calls) and builds both
  continuations;
* 2: the rest is one JSON Interaction object parsed as a create or GET snapshot,
  then continued statelessly and statefully.

Only :class:`ContractError` may escape ``TestOneInput``; anything else, including
a broken invariant (``AssertionError``), is a crash.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import atheris

from pcfuzz.fuzz.harness.fdp import json_value as _json_value
from pcfuzz.fuzz.harness.fdp import split_text as _split
from pcfuzz.fuzz.harness.instrument import STREAM, WIRE, instrument, provider

with instrument(*STREAM, *WIRE, *provider("gemini-interactions")):
    from pcfuzz.contracts.errors import ContinuationError, ContractError
    from pcfuzz.contracts.gemini_interactions import (
        REVISIONS,
        GeminiInteractionsStream,
        build_gemini_interactions_continuation,
        build_gemini_interactions_stateless_continuation,
        parse_interaction,
    )
    from pcfuzz.contracts.results import ModelVisibleToolResult
    from pcfuzz.contracts.strict_json import loads
    from pcfuzz.contracts.wire import parse_sse  # noqa: F401  (raw SSE inputs: route_sse)

from pcfuzz.fuzz.harness.wire_target import note_sse_inputs, route_sse

CONTRACT = "gemini-interactions"

_EVENT_TYPES = (
    "interaction.created",
    "step.start",
    "step.delta",
    "step.stop",
    "interaction.status_update",
    "interaction.completed",
    "error",
)
_STEP_TYPES = (
    "function_call", "function_call", "thought", "model_output", "user_input",
    "function_result", "google_search_call", "google_search_result", "code_execution_call",
    "code_execution_result", "url_context_call", "url_context_result", "file_search_call",
    "file_search_result", "google_maps_call", "google_maps_result", "mcp_server_tool_call",
)
_STATUSES = ("requires_action", "requires_action", "completed", "failed", "cancelled",
             "incomplete", "in_progress", "budget_exceeded")
# What each revision adds, written here from the google-genai 3.6.1 types (not from
# the parser's tables): six server-side steps (call steps carry ``id``, result steps
# ``call_id``; retrieval/tool-search calls carry ``arguments``) with deltas of the same
# type names, and the statuses queued (non-terminal), requires_continuation (returned,
# nothing released), idle (no meaning: fails closed); budget_exceeded (a provider
# failure) was already drawn above, unknown to 2026-07-21.
_LATER_STEPS: dict[str, tuple[str, ...]] = {
    "2026-07-21": (),
    "2026-12-01": ("processing_call", "processing_result", "retrieval_call",
                   "retrieval_result", "tool_search_call", "tool_search_result"),
}
_LATER_STATUSES: dict[str, tuple[str, ...]] = {
    "2026-07-21": (),
    "2026-12-01": ("queued", "requires_continuation", "requires_continuation", "idle"),
}
_ALL_LATER_STEPS = tuple(t for r in sorted(_LATER_STEPS) for t in _LATER_STEPS[r])
_ALL_LATER_STATUSES = tuple(dict.fromkeys(
    ("budget_exceeded", *(t for r in sorted(_LATER_STATUSES) for t in _LATER_STATUSES[r]))))
# A terminal status each revision returns a turn for (all other terminals raise).
_RETURNED: dict[str, frozenset[str]] = {
    "2026-07-21": frozenset({"requires_action", "completed"}),
    "2026-12-01": frozenset({"requires_action", "completed", "requires_continuation"}),
}
_MAX_EVENTS = 400
_REVISIONS = sorted(REVISIONS)


def _revision_for(data: bytes) -> str:
    """Every shipped revision is fuzzed: the input's length picks one (no byte consumed,
    so a corpus entry keeps its meaning)."""
    return _REVISIONS[len(data) % len(_REVISIONS)]


def _known_steps(revision: str) -> frozenset[str]:
    return frozenset({*_STEP_TYPES, *_LATER_STEPS[revision]}) - {"mcp_server_tool_call"}
_USER_INPUT = {"type": "user_input", "content": [{"type": "text", "text": "go"}]}


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)






def _ev(kind: str, **fields: Any) -> dict[str, Any]:
    return {"event_type": kind, **fields}


def _later_step(fdp: atheris.FuzzedDataProvider, kind: str, n: int) -> dict[str, Any]:
    """A 2026-12-01 server-side step.start as the google-genai 3.6.1 types define it."""
    if kind.endswith("_call"):
        step: dict[str, Any] = {"type": kind, "id": f"h-{n}"}
        if kind == "retrieval_call":
            step["arguments"] = {"queries": [fdp.ConsumeUnicodeNoSurrogates(4)]}
        elif kind == "tool_search_call":
            step["arguments"] = {"function_names": ["lookup"]}
    else:
        step = {"type": kind, "call_id": f"h-{n}"}
    if fdp.ConsumeBool():
        step["signature"] = "sig"
    return step


def _later_delta(fdp: atheris.FuzzedDataProvider, kind: str) -> dict[str, Any]:
    """Its delta (the same type name), with the fields 3.6.1 defines for it."""
    delta: dict[str, Any] = {"type": kind}
    if kind == "retrieval_call":
        delta["arguments"] = {"queries": [fdp.ConsumeUnicodeNoSurrogates(4)]}
    elif kind == "retrieval_result":
        delta["is_error"] = fdp.ConsumeBool()
    elif kind == "tool_search_result" and fdp.ConsumeBool():
        delta["result"] = [{"type": "function", "name": "lookup"}]
    if fdp.ConsumeBool():
        delta["signature"] = "s"
    return delta


def _generate(fdp: atheris.FuzzedDataProvider,
              revision: str = "2026-07-21") -> tuple[list[dict[str, Any]], str]:
    """A stream of ``revision``'s shapes (and, rarely, a later revision's step or
    status, which ``revision`` must reject)."""
    iid = fdp.ConsumeUnicodeNoSurrogates(6) or "i"
    kinds = (*_STEP_TYPES, *_LATER_STEPS[revision], *_LATER_STEPS[revision])
    if fdp.ConsumeIntInRange(0, 7) == 7:  # rare, also for exhausted input
        kinds = (*kinds, *_ALL_LATER_STEPS)
    statuses = (*_STATUSES, *_LATER_STATUSES[revision])
    if fdp.ConsumeIntInRange(0, 7) == 7:
        statuses = (*statuses, *_ALL_LATER_STATUSES)
    queues: list[list[dict[str, Any]]] = []
    for n in range(fdp.ConsumeIntInRange(0, 5)):
        index = fdp.ConsumeIntInRange(-(2**31), 2**31 - 1) if fdp.ConsumeBool() else n
        kind = kinds[fdp.ConsumeIntInRange(0, len(kinds) - 1)]
        q: list[dict[str, Any]] = []
        if kind == "function_call":
            args = {fdp.ConsumeUnicodeNoSurrogates(4): _json_value(fdp)
                    for _ in range(fdp.ConsumeIntInRange(0, 3))}
            text = json.dumps(args, ensure_ascii=fdp.ConsumeBool()) if fdp.ConsumeBool() else ""
            step: dict[str, Any] = {"type": kind, "id": f"call-{n}", "name": "lookup"}
            if fdp.ConsumeBool() or not text:
                step["arguments"] = {} if text else args
            q.append(_ev("step.start", index=index, step=step))
            for part in _split(fdp, text) if text else []:
                delta: dict[str, Any] = {"type": "arguments_delta"}
                if fdp.ConsumeIntInRange(0, 5):
                    delta["arguments"] = part
                q.append(_ev("step.delta", index=index, delta=delta))
        elif kind in _ALL_LATER_STEPS:
            q.append(_ev("step.start", index=index, step=_later_step(fdp, kind, n)))
            for _ in range(fdp.ConsumeIntInRange(0, 2)):
                q.append(_ev("step.delta", index=index, delta=_later_delta(fdp, kind)))
        else:
            step = {"type": kind, "id": f"s-{n}", "signature": "sig"}
            q.append(_ev("step.start", index=index, step=step))
            if kind in ("model_output", "user_input"):
                q.append(_ev("step.delta", index=index,
                             delta={"type": "text", "text": fdp.ConsumeUnicodeNoSurrogates(6)}))
            elif kind == "thought":
                q.append(_ev("step.delta", index=index, delta={"type": "thought_signature",
                                                               "signature": "s"}))
        q.append(_ev("step.stop", index=index))
        queues.append(q)
    body: list[dict[str, Any]] = []
    while any(queues):
        live = [q for q in queues if q]
        body.append(live[fdp.ConsumeIntInRange(0, len(live) - 1)].pop(0))
    if fdp.ConsumeBool():
        body.insert(fdp.ConsumeIntInRange(0, len(body)),
                    _ev("interaction.status_update", interaction_id=iid,
                        status=statuses[fdp.ConsumeIntInRange(0, len(statuses) - 1)]))
    terminal: dict[str, Any] = {"id": iid,
                                "status": statuses[fdp.ConsumeIntInRange(0, len(statuses) - 1)]}
    if fdp.ConsumeBool():
        terminal["usage"] = {"total_tokens": fdp.ConsumeIntInRange(-1, 100)}
    events = [_ev("interaction.created", interaction={"id": iid, "status": "in_progress"}),
              *body, _ev("interaction.completed", interaction=terminal)]
    if fdp.ConsumeBool():
        for n, e in enumerate(events):
            e["event_id"] = f"e{n}"
    return events, iid


def _mutate(fdp: atheris.FuzzedDataProvider, events: list[dict[str, Any]]) -> None:
    for _ in range(fdp.ConsumeIntInRange(0, 3)):
        if not events:
            return
        op = fdp.ConsumeIntInRange(0, 8)
        i = fdp.ConsumeIntInRange(0, len(events) - 1)
        j = fdp.ConsumeIntInRange(0, len(events) - 1)
        if op == 0:
            del events[i]
        elif op == 1:  # replay, identical payload (same event_id if any)
            events.insert(max(i, j), json.loads(json.dumps(events[i])))
        elif op == 2:
            events[i], events[j] = events[j], events[i]
        elif op == 3:
            events[i]["event_type"] = _EVENT_TYPES[fdp.ConsumeIntInRange(0, len(_EVENT_TYPES) - 1)]
        elif op == 4:
            del events[i:]
        elif op == 5:
            keys = sorted(events[i])
            key = keys[fdp.ConsumeIntInRange(0, len(keys) - 1)]
            target = events[i][key]
            if isinstance(target, dict) and target and fdp.ConsumeBool():
                inner = sorted(target)
                target[inner[fdp.ConsumeIntInRange(0, len(inner) - 1)]] = _json_value(fdp)
            else:
                events[i][key] = _json_value(fdp)
        elif op == 6:
            events.insert(i, _ev("error", error={"code": "x", "message": "y"}))
        elif op == 7:  # replay with a changed payload
            other = json.loads(json.dumps(events[i]))
            other["x"] = _json_value(fdp)
            events.insert(max(i, j), other)
        else:
            events.insert(i, _ev("step.start", index=fdp.ConsumeIntInRange(-5, 5),
                                 step={"type": "mcp_server_tool_call", "id": "m", "name": "n",
                                       "server_name": "s", "arguments": {}}))


def _tools(calls: Any) -> list[dict[str, Any]]:
    return [{"type": "function", "name": n, "parameters": {"type": "object"}}
            for n in sorted({c.name for c in calls})]


def _check_turn(turn: Any, revision: str) -> None:
    """The invariants of a returned turn under ``revision``'s rules."""
    _check(turn.revision == revision, "the turn is of another revision")
    _check(turn.status in _RETURNED[revision],
           f"terminal status {turn.status!r} returned under {revision}")
    unknown = {s.get("type") for s in turn.steps} - _known_steps(revision)
    _check(not unknown, f"steps {sorted(map(str, unknown))} accepted under {revision}")
    call_steps = [s for s in turn.steps if s.get("type") == "function_call"]
    if turn.status != "requires_action":
        _check(turn.calls == (), "calls released without requires_action")
        return
    _check([c.call_id for c in turn.calls] == [s["id"] for s in call_steps],
           "calls differ from the function_call steps")
    for call, step in zip(turn.calls, call_steps, strict=True):
        _check(call.arguments == step["arguments"], "call arguments differ from the step")
    results = [ModelVisibleToolResult(c.call_id, "ok") for c in turn.calls]
    body = build_gemini_interactions_continuation(
        turn, results, model="m", tools=_tools(turn.calls), system_instruction=None,
        generation_config=None, previous_interaction_was_stored=True, store=False)
    _check([s["call_id"] for s in body["input"]] == [c.call_id for c in turn.calls],
           "one result per call, in order")
    _check(body["previous_interaction_id"] == turn.interaction_id, "wrong previous id")
    # Replayable from a stream: only function_call steps, none of whose deltas carried
    # fields beyond "arguments" (those are kept raw in step_deltas and fail closed).
    only_calls = len(call_steps) == len(turn.steps) and not any(turn.step_deltas)
    try:
        stateless = build_gemini_interactions_stateless_continuation(
            turn, results, model="m", tools=_tools(turn.calls), system_instruction=None,
            generation_config=None, prior_input_steps=[_USER_INPUT])
    except ContinuationError:
        _check(not only_calls, "a function-call-only stream must continue statelessly")
        return
    _check(only_calls, "streamed non-call steps must not replay")
    _check(stateless["input"][0] == _USER_INPUT and "previous_interaction_id" not in stateless,
           "stateless history shape")


def _lines_mode(data: bytes) -> None:
    revision = _revision_for(data)
    stream = GeminiInteractionsStream(revision=revision)
    for line in data.split(b"\n")[:_MAX_EVENTS]:
        if line.strip():
            stream.feed(loads(line))
    _check_turn(stream.close(), revision)


def structured_events(data: bytes) -> tuple[str, list[dict[str, Any]]]:
    """The structured mode's revision and (mutated) events for ``data`` (without the
    mode byte): what ``_structured_mode`` parses."""
    revision = _revision_for(data)
    fdp = atheris.FuzzedDataProvider(data)
    events, _ = _generate(fdp, revision)
    _mutate(fdp, events)
    return revision, events


def _structured_mode(data: bytes) -> None:
    revision, events = structured_events(data)
    stream = GeminiInteractionsStream(revision=revision)
    for event in events:
        stream.feed(event)
    _check_turn(stream.close(), revision)


def _snapshot_mode(data: bytes) -> None:
    if not data:
        return
    revision = _revision_for(data)
    origin = "get" if data[0] % 2 else "create"
    snap = parse_interaction(loads(data[1:]), origin=origin, revision=revision)
    _check(snap.status == "requires_action" or snap.calls == (), "snapshot calls gate")
    _check(snap.status in _RETURNED[revision], f"snapshot status {snap.status!r} returned")
    if not snap.calls:
        return
    results = [ModelVisibleToolResult(c.call_id, "ok") for c in snap.calls]
    prior = None if origin == "get" else [_USER_INPUT]
    body = build_gemini_interactions_stateless_continuation(
        snap, results, model="m", tools=_tools(snap.calls), system_instruction=None,
        generation_config=None, prior_input_steps=prior)
    inputs = body["input"]
    _check([s["type"] for s in inputs].count("user_input")
           == [s.get("type") for s in (prior or [])].count("user_input")
           + [s.get("type") for s in snap.steps].count("user_input"),
           "input history duplicated")


def TestOneInput(data: bytes) -> None:  # noqa: N802 - libFuzzer entry point name
    """Fuzz entry point: only ContractError may escape."""
    if not data or route_sse(CONTRACT, data):
        return
    mode = data[0] % 3
    try:
        if mode == 0:
            _lines_mode(data[1:])
        elif mode == 1:
            _structured_mode(data[1:])
        else:
            _snapshot_mode(data[1:])
    except ContractError:
        return


def main() -> None:
    note_sse_inputs(sys.argv, CONTRACT)
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
