#!/usr/bin/env python3
"""Atheris target: the OpenAI Responses stream parser and continuation builders.

An input that looks like raw SSE (an ``event:``/``data:``/``id:``/``retry:`` or ``:``
line first, e.g. a capture file) goes, whole, through the wire path of
``fuzz_wire_openai_responses`` (``fuzz.harness.wire_target.route_sse``). Otherwise the
first byte selects a mode (``data[0] % 3``):

0. raw: the rest is JSON lines, each decoded with ``contracts.strict_json`` and fed
   as one event;
1. structured: ``FuzzedDataProvider`` draws a seed for a valid generated stream, then
   a few mutations (the harness mutators plus field overwrites with fuzzed values);
2. continuation: a valid generated turn, a fuzzed result set and fuzzed builder
   arguments.

Oracles: only ``ContractError`` may escape; a stream without ``response.completed``
never releases a call; an unmutated or drift-only stream releases exactly the model's
calls; a built continuation carries exactly the turn's ``call_id`` set.
"""

from __future__ import annotations

import random
import sys
from typing import Any

import atheris

from pcfuzz.fuzz.harness.instrument import STREAM, WIRE, instrument, provider
from pcfuzz.strategies import openai_responses_model as model_streams

with instrument(*STREAM, *WIRE, *provider("openai-responses")):
    from pcfuzz.contracts import strict_json
    from pcfuzz.contracts.errors import ContractError
    from pcfuzz.contracts.openai_responses import (
        REVISIONS,
        build_openai_responses_continuation,
        build_openai_responses_stateless_continuation,
        parse_events,
    )
    from pcfuzz.contracts.results import ModelVisibleToolResult
    from pcfuzz.contracts.wire import parse_sse  # noqa: F401  (raw SSE inputs: route_sse)

from pcfuzz.fuzz.harness.wire_target import note_sse_inputs, route_sse

CONTRACT = "openai-responses"

_FIELDS = ("type", "sequence_number", "output_index", "item_id", "delta", "arguments",
           "name", "item", "response", "call_id", "id", "status", "caller", "namespace",
           "content_index", "summary_index", "part", "text", "output", "message")
_REVISIONS = sorted(REVISIONS)


def _revision_for(data: bytes) -> str:
    """Every shipped revision is fuzzed: the input's length picks one (no byte consumed,
    so a corpus entry keeps its meaning)."""
    return _REVISIONS[len(data) % len(_REVISIONS)]


def _fuzzed_value(fdp: Any) -> Any:
    choice = fdp.ConsumeIntInRange(0, 7)
    if choice == 0:
        return fdp.ConsumeUnicodeNoSurrogates(16)
    if choice == 1:
        return fdp.ConsumeIntInRange(-3, 2**64)
    if choice == 2:
        return fdp.ConsumeBool()
    if choice == 3:
        return None
    if choice == 4:
        return [fdp.ConsumeUnicodeNoSurrogates(4)]
    if choice == 5:
        return {"type": fdp.ConsumeUnicodeNoSurrogates(8)}
    if choice == 6:
        return fdp.ConsumeFloat()
    return fdp.ConsumeUnicode(8)


def _overwrite(events: list[Any], fdp: Any) -> None:
    if not events:
        return
    target = events[fdp.ConsumeIntInRange(0, len(events) - 1)]
    for _ in range(fdp.ConsumeIntInRange(0, 3)):
        if not isinstance(target, dict):
            return
        key = _FIELDS[fdp.ConsumeIntInRange(0, len(_FIELDS) - 1)]
        if fdp.ConsumeBool() and isinstance(target.get(key), dict):
            target = target[key]
            continue
        if fdp.ConsumeBool() and isinstance(target.get(key), list) and target[key]:
            nested = target[key][fdp.ConsumeIntInRange(0, len(target[key]) - 1)]
            if isinstance(nested, dict):
                target = nested
                continue
        if fdp.ConsumeBool():
            target.pop(key, None)
        else:
            target[key] = _fuzzed_value(fdp)
        return


def _raw(data: bytes) -> None:
    events = [strict_json.loads(line) for line in data.split(b"\n") if line.strip()]
    parse_events(events, revision=_revision_for(data))


def _structured(fdp: Any) -> None:
    rng = random.Random(fdp.ConsumeIntInRange(0, 2**32))
    model = model_streams.random_model(rng)
    revision = model_streams.REVISIONS[rng.randrange(len(model_streams.REVISIONS))]
    events: list[Any] = model_streams.render(model, rng, drift=fdp.ConsumeBool(),
                                             revision=revision)
    exact = True
    for _ in range(fdp.ConsumeIntInRange(0, 3)):
        if fdp.ConsumeBool():
            mutators = model_streams.MUTATORS
            mutator = mutators[fdp.ConsumeIntInRange(0, len(mutators) - 1)]
            mutated = mutator.apply(events, random.Random(fdp.ConsumeIntInRange(0, 2**16)))
            if mutated is not None:
                events = mutated
                exact = exact and mutator.expectation == "ok"
        else:
            _overwrite(events, fdp)
            exact = False
    has_terminal = any(isinstance(e, dict) and e.get("type") == "response.completed"
                       for e in events)
    try:
        turn = parse_events(events, revision=revision)
    except ContractError:
        if exact:
            raise AssertionError("a valid or drift-only stream was rejected") from None
        return
    if not has_terminal:
        raise AssertionError("a stream without response.completed released a turn")
    calls = [(c.call_id, c.name, c.arguments, c.item_id, c.output_index) for c in turn.calls]
    if exact and calls != model.expected_calls():
        raise AssertionError("released calls differ from the model")


def _continuation(fdp: Any) -> None:
    rng = random.Random(fdp.ConsumeIntInRange(0, 2**32))
    model = model_streams.random_model(rng)
    revision = model_streams.REVISIONS[rng.randrange(len(model_streams.REVISIONS))]
    turn = parse_events(model_streams.render(model, rng, revision=revision), revision=revision)
    call_ids = [c.call_id for c in turn.calls]
    pool = [*call_ids, "function-item", fdp.ConsumeUnicodeNoSurrogates(6)]
    results = [ModelVisibleToolResult(pool[fdp.ConsumeIntInRange(0, len(pool) - 1)],
                                      fdp.ConsumeUnicodeNoSurrogates(8))
               for _ in range(fdp.ConsumeIntInRange(0, len(call_ids) + 1))]
    if fdp.ConsumeBool():
        results = [ModelVisibleToolResult(c, "ok") for c in call_ids]
    tools = [model_streams.strict_tool(name) for name in model.function_names()]
    if fdp.ConsumeBool():
        _overwrite(tools, fdp)
    controls: dict[str, Any] = {}
    if fdp.ConsumeBool():
        controls[_FIELDS[fdp.ConsumeIntInRange(0, len(_FIELDS) - 1)]] = _fuzzed_value(fdp)
    if fdp.ConsumeBool():
        controls["model"] = "other"
    if fdp.ConsumeBool():
        turn.output[fdp.ConsumeIntInRange(0, len(turn.output) - 1)]["id"] = "mutated"
    if fdp.ConsumeBool():
        payload = build_openai_responses_continuation(
            turn, results, model="m", previous_response_was_stored=fdp.ConsumeBool(),
            store=fdp.ConsumeBool(), instructions="i", tools=tools, request_controls=controls)
    else:
        payload = build_openai_responses_stateless_continuation(
            turn, results, model="m", prior_input_items=[{"role": "user", "content": "q"}],
            instructions="i", tools=tools, request_controls=controls)
    sent = [i["call_id"] for i in payload["input"] if i.get("type") == "function_call_output"]
    if sorted(sent) != sorted(call_ids) or "other" in (payload.get("model"),):
        raise AssertionError("continuation does not carry exactly the turn's call ids")


def TestOneInput(data: bytes) -> None:
    """One fuzz input; only ContractError is swallowed."""
    if not data or route_sse(CONTRACT, data):
        return
    mode, rest = data[0] % 3, data[1:]
    try:
        if mode == 0:
            _raw(rest)
        elif mode == 1:
            _structured(atheris.FuzzedDataProvider(rest))
        else:
            _continuation(atheris.FuzzedDataProvider(rest))
    except ContractError:
        pass


def main() -> None:
    note_sse_inputs(sys.argv, CONTRACT)
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
