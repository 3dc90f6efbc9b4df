#!/usr/bin/env python3
"""Atheris target for the Chat Completions aggregator, in two modes.

* **Raw SSE** (any input not starting with the byte ``0x00``, so a capture file is
  read as what it is): the bytes are decoded by ``contracts.sse`` and mapped by
  ``contracts.wire.sse_to_events`` (a ``data:`` payload is ``[DONE]`` or strict
  JSON; an ``event:`` name is a violation), and fed to a fresh
  ``ChatCompletionStream``; this is the wire path of ``pcfuzz check``, with the
  Chat oracles below on top.
* **Structure-aware** (input ``0x00`` + rest): ``atheris.FuzzedDataProvider`` over
  the rest builds a completion model (content, reasoning, up to three interleaved
  tool calls at non-contiguous indexes, a finish reason), renders it into chunk
  frames with fragmenting it chooses, then applies at most one mutation. The frames
  are written as SSE ``data:`` events and run through the raw mode, so SSE and
  strict decoding are on the path. Without a mutation the turn must equal the model (message,
  released calls and their arguments); a mutation whose rejection is certain must
  be rejected; any other mutation only has to keep the general oracles.

Only a ``ContractError`` may escape the contracts; an accepted turn must also pass
the terminal gate checks and the cache codec round trip. A broken oracle raises
``RuntimeError`` (a crash). The model here is written independently of the parser
and of the hypothesis strategies.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import atheris

from pcfuzz.fuzz.harness.instrument import STREAM, WIRE, instrument, provider

with instrument(*STREAM, *WIRE, *provider("openai-chat")):
    from pcfuzz.contracts.errors import ContractError
    from pcfuzz.contracts.openai_chat import REVISIONS, ChatCompletionStream, ChatCompletionTurn
    from pcfuzz.contracts.openai_chat_cache import decode, encode
    from pcfuzz.contracts.sse import decode_sse
    from pcfuzz.contracts.wire import sse_to_events

from pcfuzz.fuzz.harness.wire_target import note_sse_inputs

CONTRACT = "openai-chat"
_REVISIONS = sorted(REVISIONS)


def _revision_for(data: bytes) -> str:
    """Every shipped revision is fuzzed: the input's length picks one (no byte consumed,
    so a corpus entry keeps its meaning)."""
    return _REVISIONS[len(data) % len(_REVISIONS)]


# Delta fields each revision knows only as null, written here from the openai types
# (not from the parser's tables): openai 3.57.0's ChoiceDelta has ``audio``. Unknown to
# 2026-07-21, so there a null ``audio`` is an unknown delta field (rejected).
_NULL_DELTA_FIELDS: dict[str, tuple[str, ...]] = {"2026-07-21": (), "2026-12-01": ("audio",)}
_ALL_NULL_DELTA_FIELDS = tuple(sorted({f for v in _NULL_DELTA_FIELDS.values() for f in v}))
#: First byte selecting the structure-aware mode.
STRUCTURED = 0x00

_FINISH_REASONS = ("tool_calls", "stop", "length", "content_filter", None, "x_vendor")
_BROKEN_ARGUMENTS = ("", "{", "[]", "null", '{"a":1,"a":2}', '{"a":NaN}', '"s"', "{} {}")
# Mutations whose rejection is certain, and mutations that only keep the oracles.
_REJECTING = ("drop_done", "cut", "error_frame", "bool_choice_index", "bool_tool_index",
              "extra_choice", "unknown_delta_field", "conflicting_id", "wrong_role",
              "frame_after_done", "conflicting_finish")
_FREE = ("duplicate_frame", "swap_frames", "drop_frame", "overwrite_value")


def run_sse(data: bytes, revision: str | None = None) -> ChatCompletionTurn | None:
    """Decode ``data`` as raw SSE and feed every event's frame under ``revision`` (by
    default the one the input's length picks); return the turn, or ``None`` on a
    rejection. Raises anything that is not a ``ContractError``."""
    stream = ChatCompletionStream(revision=revision or _revision_for(data))
    try:
        for frame in sse_to_events(CONTRACT, decode_sse(data)):
            stream.feed(frame)
        turn = stream.close()
    except ContractError:
        return None
    _check_turn(turn)
    return turn


def _check_turn(turn: ChatCompletionTurn) -> None:
    if turn.calls and turn.finish_reason != "tool_calls":
        raise RuntimeError("calls released without finish_reason == 'tool_calls'")
    tools = turn.message.get("tool_calls") or []
    if turn.calls and len(turn.calls) != len(tools):
        raise RuntimeError("a turn released only part of its calls")
    if tools and len(turn.calls) + len(turn.recovery_calls) != len(tools):
        raise RuntimeError("a tool call is neither executable nor a recovery call")
    for call, tool in zip(turn.calls, tools, strict=False):
        if call.call_id != tool["id"] or call.arguments != json.loads(
            tool["function"]["arguments"]
        ):
            raise RuntimeError("a released call differs from its aggregated tool")
    turn.check_unchanged()
    snapshot = turn.completion
    try:
        blob = encode(snapshot)
    except ContractError:
        # Only text that is not UTF-8 encodable may be refused; strict JSON input
        # cannot produce it, so any refusal here is a bug.
        raise RuntimeError("a parsed snapshot could not be encoded") from None
    if decode(blob) != snapshot or encode(decode(blob)) != blob:
        raise RuntimeError("cache round trip changed the snapshot")


# ------------------------------------------------------------ structure-aware


def _text(fdp: Any, limit: int) -> str:
    return str(fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, limit)))


# Pieces that make whitespace-only and think-block-only content likely.
_THINK_PIECES = ("<think>", "</think>", " ", "\n", "x", "<think>r</think>")
# The harness's own reading of the legacy text projection (think blocks to the next
# close tag or the end dropped, then surrounding whitespace), independent of the
# parser's str.find scan.
_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)


def _projection(content: Any) -> str:
    return _THINK_BLOCK.sub("", content).strip() if isinstance(content, str) else ""


def _content_text(fdp: Any, limit: int) -> str:
    if fdp.ConsumeIntInRange(0, 3):
        return _text(fdp, limit)
    count = fdp.ConsumeIntInRange(0, 4)
    return "".join(_THINK_PIECES[fdp.ConsumeIntInRange(0, len(_THINK_PIECES) - 1)]
                   for _ in range(count))


def _split(fdp: Any, text: str) -> list[str]:
    """``text`` in ordered pieces, some of them empty."""
    pieces: list[str] = []
    start = 0
    for _ in range(fdp.ConsumeIntInRange(0, 3)):
        cut = fdp.ConsumeIntInRange(start, len(text))
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return pieces


def _model(fdp: Any) -> dict[str, Any]:
    """An independent completion model: the expected message and executability."""
    message: dict[str, Any] = {"role": "assistant"}
    for key in ("content", "reasoning_content"):
        kind = fdp.ConsumeIntInRange(0, 3)
        if kind == 1:
            message[key] = None
        elif kind >= 2:
            message[key] = _content_text(fdp, 24)
    indexes = sorted({fdp.ConsumeIntInRange(0, 40) for _ in range(fdp.ConsumeIntInRange(0, 3))})
    tools: list[tuple[int, dict[str, Any], bool]] = []
    for position, index in enumerate(indexes):
        if fdp.ConsumeIntInRange(0, 3):
            value = {_text(fdp, 4): fdp.ConsumeIntInRange(-5, 5) for _ in range(2)}
            arguments, is_object = json.dumps(value, ensure_ascii=fdp.ConsumeBool()), True
        else:
            arguments = _BROKEN_ARGUMENTS[fdp.ConsumeIntInRange(0, len(_BROKEN_ARGUMENTS) - 1)]
            is_object = False
        tool = {"id": f"call_{position}_{_text(fdp, 6)}", "type": "function",
                "function": {"name": "fn" + _text(fdp, 6), "arguments": arguments}}
        tools.append((index, tool, is_object))
    if tools:
        message["tool_calls"] = [tool for _, tool, _ in tools]
    finish = _FINISH_REASONS[fdp.ConsumeIntInRange(0, len(_FINISH_REASONS) - 1)]
    content = message.get("content")
    return {
        "message": message,
        "tools": tools,
        "finish_reason": finish,
        "product": bool(tools) or _projection(content) != "",
        "executable": bool(tools) and finish == "tool_calls" and all(o for _, _, o in tools),
    }


def _render(fdp: Any, model: dict[str, Any]) -> list[Any]:
    """The model as chunk frames (without ``[DONE]``), fragmenting chosen by ``fdp``."""
    channels: list[list[tuple[str, Any]]] = [[("role", "assistant")]]
    message = model["message"]
    for key in ("content", "reasoning_content"):
        if key in message:
            value = message[key]
            pieces = [None] if value is None else _split(fdp, value)
            channels.append([(key, piece) for piece in pieces])
    for index, tool, _ in model["tools"]:
        function = tool["function"]
        names = _split(fdp, function["name"])
        arguments = _split(fdp, function["arguments"])
        count = max(len(names), len(arguments))
        fragments: list[dict[str, Any]] = []
        for k in range(count):
            fn: dict[str, Any] = {}
            if k < len(names):
                fn["name"] = names[k]
            if k < len(arguments):
                fn["arguments"] = arguments[k]
            fragments.append({"index": index, "function": fn})
        # Identity in some fragment, maybe repeated in a later one.
        carrier = fdp.ConsumeIntInRange(0, count - 1)
        fragments[carrier].update(id=tool["id"], type="function")
        if carrier + 1 < count and fdp.ConsumeBool():
            fragments[carrier + 1]["id"] = tool["id"]
        channels.append([("tool", f) for f in fragments])
    if model["finish_reason"] is not None:
        channels.append([("finish", model["finish_reason"])])
    frames: list[Any] = []
    while any(channels):
        live = [c for c in channels if c]
        channel = live[fdp.ConsumeIntInRange(0, len(live) - 1)]
        kind, value = channel.pop(0)
        choice: dict[str, Any]
        if frames and frames[-1]["choices"] and fdp.ConsumeBool():
            choice = frames[-1]["choices"][0]  # mix into the previous frame
        else:
            choice = {"index": 0, "delta": {}}
            frames.append({"id": "chatcmpl-fuzz", "choices": [choice]})
        delta = choice["delta"]
        if kind == "finish":
            if "finish_reason" in choice:
                choice = {"index": 0, "delta": {}}
                frames.append({"choices": [choice]})
            choice["finish_reason"] = value
        elif kind == "tool":
            delta.setdefault("tool_calls", []).append(value)
        elif kind in delta:
            frames.append({"choices": [{"index": 0, "delta": {kind: value}}]})
        else:
            delta[kind] = value
    if fdp.ConsumeBool():
        frames.append({"choices": [], "usage": {"total_tokens": fdp.ConsumeIntInRange(0, 99)}})
    return frames


def _mutate(fdp: Any, frames: list[Any], model: dict[str, Any]) -> str | None:
    """Apply at most one mutation; return its name. ``frames`` ends with [DONE]."""
    names = (None, *_REJECTING, *_FREE)
    name = names[fdp.ConsumeIntInRange(0, len(names) - 1)]
    body = frames[:-1]
    at = fdp.ConsumeIntInRange(0, len(body))
    chosen = body[fdp.ConsumeIntInRange(0, len(body) - 1)] if body else None
    choice = chosen["choices"][0] if chosen and chosen.get("choices") else None
    tool_entries = choice["delta"].get("tool_calls") if choice else None
    if name == "drop_done":
        del frames[-1]
    elif name == "cut":
        del frames[at:]
    elif name == "error_frame":
        errors: tuple[Any, ...] = (None, {}, {"message": "overloaded"}, "boom")
        frames.insert(at, {"error": errors[fdp.ConsumeIntInRange(0, 3)], "choices": []})
    elif name == "bool_choice_index" and choice is not None:
        choice["index"] = fdp.ConsumeBool()
    elif name == "bool_tool_index" and tool_entries:
        tool_entries[fdp.ConsumeIntInRange(0, len(tool_entries) - 1)]["index"] = fdp.ConsumeBool()
    elif name == "extra_choice":
        frames.insert(at, {"choices": [{"index": 0, "delta": {}}, {"index": 1, "delta": {}}]})
    elif name == "unknown_delta_field":
        frames.insert(at, {"choices": [{"index": 0, "delta": {"x_" + _text(fdp, 4): None}}]})
    elif name == "conflicting_id" and model["tools"]:
        index, tool, _ = model["tools"][fdp.ConsumeIntInRange(0, len(model["tools"]) - 1)]
        frames.insert(at, {"choices": [{"index": 0, "delta": {
            "tool_calls": [{"index": index, "id": tool["id"] + "x"}]}}]})
    elif name == "wrong_role":
        frames.insert(at, {"choices": [{"index": 0, "delta": {"role": "user"}}]})
    elif name == "frame_after_done":
        frames.append({"choices": [], "usage": {}})
    elif name == "conflicting_finish":
        frames.insert(at, {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        frames.insert(at, {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})
    elif name == "duplicate_frame" and chosen is not None:
        frames.insert(at, json.loads(json.dumps(chosen)))
    elif name == "swap_frames" and len(body) > 1:
        other = fdp.ConsumeIntInRange(0, len(body) - 1)
        frames[at % len(body)], frames[other] = frames[other], frames[at % len(body)]
    elif name == "drop_frame" and body:
        del frames[at % len(body)]
    elif name == "overwrite_value" and choice is not None:
        values: tuple[Any, ...] = (None, True, 0, -1, "", "x", [], {}, 2**63)
        keys = ("index", "delta", "finish_reason")
        choice[keys[fdp.ConsumeIntInRange(0, 2)]] = values[fdp.ConsumeIntInRange(0, 8)]
    else:
        return None
    return name


def _later_null_fields(fdp: Any, frames: list[Any], revision: str) -> str | None:
    """Null delta fields of the revision's shapes on some frames; or, rarely, a later
    revision's one that ``revision`` does not know (then the stream must be rejected:
    returned as a rejecting mutation's name)."""
    fields = _NULL_DELTA_FIELDS[revision]
    foreign = tuple(f for f in _ALL_NULL_DELTA_FIELDS if f not in fields)
    choices = [f["choices"][0] for f in frames if isinstance(f, dict) and f.get("choices")]
    if not choices:
        return None
    if foreign and fdp.ConsumeIntInRange(0, 7) == 7:  # rare, also for exhausted input
        choices[fdp.ConsumeIntInRange(0, len(choices) - 1)]["delta"][foreign[0]] = None
        return "unknown_delta_field"
    for name in fields:  # on one frame, mostly (also for exhausted input), or none
        if fdp.ConsumeIntInRange(0, 3) != 3:
            choices[fdp.ConsumeIntInRange(0, len(choices) - 1)]["delta"][name] = None
    return None


def structured_frames(data: bytes) -> tuple[str, list[Any], dict[str, Any], str | None]:
    """The structure-aware mode's revision (the input's length picks it), frames (ending
    with ``[DONE]`` unless mutated away), model and mutation for ``data``."""
    revision = _revision_for(data)
    fdp = atheris.FuzzedDataProvider(data)
    model = _model(fdp)
    body = _render(fdp, model)
    foreign = _later_null_fields(fdp, body, revision)
    frames = [*body, "[DONE]"]
    mutation = _mutate(fdp, frames, model)
    return revision, frames, model, mutation or foreign


def run_structured(data: bytes) -> str:
    """Run the structure-aware mode over ``data`` (without the mode byte).

    The input's length picks the revision; the frames carry its shapes (2026-12-01:
    null ``audio`` deltas). Returns what happened (``"released"``, ``"recovery"``, ``"text"``,
    ``"empty"``, ``"rejected <mutation>"``, ``"accepted <mutation>"``); raises
    ``RuntimeError`` when an oracle breaks.
    """
    revision, frames, model, mutation = structured_frames(data)
    turn = run_sse(b"".join(
        b"data: " + (f.encode() if isinstance(f, str) else json.dumps(f).encode()) + b"\n\n"
        for f in frames), revision)
    if mutation is not None:
        if mutation in _REJECTING and turn is not None:
            raise RuntimeError(f"mutation {mutation} was accepted")
        return f"{'rejected' if turn is None else 'accepted'} {mutation}"
    if not model["product"]:
        if turn is not None:
            raise RuntimeError("an empty completion was accepted")
        return "empty"
    if turn is None:
        raise RuntimeError("a valid generated stream was rejected")
    if turn.message != model["message"] or turn.finish_reason != model["finish_reason"]:
        raise RuntimeError("the aggregated message differs from the model")
    if bool(turn.calls) != model["executable"]:
        raise RuntimeError("release decision differs from the model")
    if turn.calls:
        return "released"
    return "recovery" if turn.recovery_calls else "text"


def TestOneInput(data: bytes) -> None:  # noqa: N802 - libFuzzer entry point name
    if data[:1] == bytes([STRUCTURED]):
        run_structured(data[1:])
    else:
        run_sse(data)


def main() -> None:
    note_sse_inputs(sys.argv, CONTRACT)
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
