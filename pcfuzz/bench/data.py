"""Inputs of ``pcfuzz bench`` and of the scripts in ``benchmarks/``.

Deterministic and built in memory: realistic provider event payloads for the strict
JSON loader, whole documents of given sizes, and per contract a valid stream with two
interleaved tool calls whose argument fragments are about 20 bytes each. Every stream
builder takes the number of events, so the same stream can be built at 2,000 and
8,000 fragments for the scaling case.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "DOCUMENT_SIZES",
    "STREAMS",
    "anthropic_stream",
    "arguments_event",
    "chat_stream",
    "delta_event",
    "document",
    "gemini_stream",
    "provider_event",
    "responses_stream",
    "sse_bytes",
    "terminal_event",
]

#: Whole-document sizes of case 1b (bytes of compact UTF-8 JSON, approximately).
DOCUMENT_SIZES = {"11 KB": 11_000, "80 KB": 80_000, "1 MB": 1_000_000, "4 MB": 4_000_000}


def provider_event() -> dict[str, Any]:
    """A synthetic Responses ``response.completed`` event of about 2 KB."""
    arguments = json.dumps(
        {"location": "Zürich, CH", "unit": "celsius", "days": 3, "include": ["wind", "uv"]}
    )
    function = {"type": "object", "required": ["timezone"], "additionalProperties": False}
    return {
        "type": "response.completed",
        "sequence_number": 57,
        "response": {
            "id": "r-3f9a1c0b7e2d4a58",
            "object": "response",
            "created_at": 1784630400,
            "status": "completed",
            "error": None,
            "incomplete_details": None,
            "instructions": "You are a careful assistant. Call tools when needed.",
            "max_output_tokens": 2048,
            "model": "model-2026-07-21",
            "output": [
                {
                    "type": "reasoning",
                    "id": "rs-0a1b2c3d4e5f",
                    "summary": [{"type": "summary_text", "text": "Need the forecast first."}],
                },
                {
                    "type": "function_call",
                    "id": "fc-5e6f7a8b9c0d",
                    "call_id": "call-71c2d9e04b3a",
                    "name": "get_weather",
                    "arguments": arguments,
                    "status": "completed",
                },
                {
                    "type": "function_call",
                    "id": "fc-1d2e3f4a5b6c",
                    "call_id": "call-82d3ea15c4b9",
                    "name": "get_time",
                    "arguments": json.dumps({"timezone": "Europe/Zurich"}),
                    "status": "completed",
                },
            ],
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": {"effort": "medium", "summary": "auto"},
            "store": False,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": [
                {
                    "type": "function",
                    "name": "get_weather",
                    "description": "Current weather and a short forecast for a place.",
                    "strict": True,
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "location": {"type": "string"},
                            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                            "days": {"type": "integer", "minimum": 1, "maximum": 7},
                            "include": {"type": "array", "items": {"type": "string"}},
                        },
                        "required": ["location", "unit", "days", "include"],
                        "additionalProperties": False,
                    },
                },
                {
                    "type": "function",
                    "name": "get_time",
                    "description": "Current local time in an IANA time zone.",
                    "strict": True,
                    "parameters": {**function, "properties": {"timezone": {"type": "string"}}},
                },
            ],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": {
                "input_tokens": 412,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 96,
                "output_tokens_details": {"reasoning_tokens": 64},
                "total_tokens": 508,
            },
            "user": None,
            "metadata": {},
        },
    }


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def delta_event() -> bytes:
    """A ~150-byte ``response.function_call_arguments.delta`` event."""
    return _compact(
        {
            "type": "response.function_call_arguments.delta",
            "sequence_number": 1234,
            "item_id": "fc-5e6f7a8b9c0d",
            "output_index": 1,
            "delta": '{"location": "Zu',
        }
    )


def terminal_event() -> bytes:
    """The ~2 KB terminal event of :func:`provider_event`, compact UTF-8."""
    return _compact(provider_event())


_SOURCE_LINES = (
    "def handle(request: dict[str, object]) -> str:",
    '    """Answer one request; raise ValueError for a bad one."""',
    "    name = request.get(\"name\", 'anonymous')",
    "    if not isinstance(name, str) or len(name) > 80:",
    '        raise ValueError(f"bad name: {name!r}")',
    "    items = [item for item in request.get(\"items\", []) if item]",
    "    total = sum(int(item[\"qty\"]) * 1.5 for item in items)",
    '    return f"{name}: {len(items)} items, total {total:.2f} \\u20ac"',
    "",
)


def arguments_event(size: int = 40_000) -> bytes:
    """A ``response.function_call_arguments.done`` event whose ``arguments`` string
    is a JSON document with one big string value: a source file of ``size`` bytes
    (quotes, backslashes, newlines and brackets, escaped twice over)."""
    lines: list[str] = []
    total = 0
    n = 0
    while total < size:
        line = _SOURCE_LINES[n % len(_SOURCE_LINES)]
        lines.append(line)
        total += len(line) + 1
        n += 1
    arguments = json.dumps({"path": "service/handler.py", "content": "\n".join(lines)})
    return _compact(
        {
            "type": "response.function_call_arguments.done",
            "sequence_number": 9,
            "item_id": "fc-5e6f7a8b9c0d",
            "output_index": 0,
            "arguments": arguments,
        }
    )


def document(size: int) -> bytes:
    """A whole JSON document of about ``size`` bytes: an array of response objects."""
    unit = _compact(provider_event()["response"])
    count = max(1, round(size / (len(unit) + 1)))
    return b"[" + b",".join([unit] * count) + b"]"


# --- streams: parse_events input and the JSON text of each event ----------------------


def responses_stream(total: int = 2_000) -> tuple[list[Any], list[bytes]]:
    """OpenAI Responses: one response, two function calls whose argument deltas
    alternate; ``total`` events (``total - 10`` deltas)."""
    deltas = total - 10
    response: dict[str, Any] = {
        "id": "response-bench", "object": "response", "status": "in_progress",
        "model": "fixture-model", "output": [],
    }
    calls = []
    for n in range(2):
        per_call = deltas // 2
        fragments = (['{"rows":['] + [f'"order-{n}-{i:07d}",' for i in range(per_call - 2)]
                     + ['"end"]}'])
        calls.append({"id": f"function-item-{n}", "call_id": f"call-{n}", "name": "lookup_order",
                      "fragments": fragments, "arguments": "".join(fragments)})
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": dict(response)},
        {"type": "response.in_progress", "response": dict(response)},
        {"type": "response.in_progress", "response": dict(response)},
    ]
    for n, call in enumerate(calls):
        events.append({"type": "response.output_item.added", "output_index": n, "item": {
            "id": call["id"], "type": "function_call", "status": "in_progress",
            "call_id": call["call_id"], "name": call["name"], "arguments": ""}})
    for i in range(deltas // 2):
        for n, call in enumerate(calls):
            events.append({"type": "response.function_call_arguments.delta",
                           "item_id": call["id"], "output_index": n,
                           "delta": call["fragments"][i]})
    done_items = []
    for n, call in enumerate(calls):
        events.append({"type": "response.function_call_arguments.done", "item_id": call["id"],
                       "output_index": n, "name": call["name"], "arguments": call["arguments"]})
    for n, call in enumerate(calls):
        item = {"id": call["id"], "type": "function_call", "status": "completed",
                "call_id": call["call_id"], "name": call["name"], "arguments": call["arguments"]}
        done_items.append(item)
        events.append({"type": "response.output_item.done", "output_index": n, "item": item})
    events.append({"type": "response.completed",
                   "response": {**response, "status": "completed", "output": done_items}})
    for seq, event in enumerate(events):
        event["sequence_number"] = seq
    return list(events), [_compact(e) for e in events]


def _anthropic(name: str, **data: Any) -> dict[str, Any]:
    return {"event": name, "data": {"type": name, **data}}


def anthropic_stream(total: int = 2_000) -> tuple[list[Any], list[bytes]]:
    """Anthropic Messages: message_start, a text block, two tool_use blocks sharing
    the deltas, terminal events; ``total`` envelopes (``{"event", "data"}``)."""
    fixed = 17  # start, ping, text block (3), per call 5 besides its deltas, delta + stop
    per_call = (total - fixed) // 2
    ev = _anthropic
    events = [
        ev("message_start", message={
            "id": "bench-message", "type": "message", "role": "assistant", "content": [],
            "model": "bench-model", "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 1}}),
        ev("ping"),
        ev("content_block_start", index=0, content_block={"type": "text", "text": ""}),
        ev("content_block_delta", index=0, delta={"type": "text_delta", "text": "Working on it."}),
        ev("content_block_stop", index=0),
    ]
    for index, call_id in ((1, "bench-call-A"), (2, "bench-call-B")):
        events.append(ev("content_block_start", index=index, content_block={
            "type": "tool_use", "id": call_id, "name": "write_lines", "input": {}}))
        events.append(ev("content_block_delta", index=index,
                         delta={"type": "input_json_delta", "partial_json": '{"lines": ["'}))
        for i in range(per_call):
            events.append(ev("content_block_delta", index=index,
                             delta={"type": "input_json_delta", "partial_json": f"line {i} é\\n"}))
        events.append(ev("content_block_delta", index=index,
                         delta={"type": "input_json_delta", "partial_json": '"]}'}))
        events.append(ev("content_block_stop", index=index))
        events.append(ev("ping"))
    events.append(ev("message_delta", delta={"stop_reason": "tool_use", "stop_sequence": None},
                     usage={"output_tokens": 4_000}))
    events.append(ev("message_stop"))
    while len(events) < total:
        events.insert(1, ev("ping"))
    events = events[:total] if len(events) > total else events
    return events, [_compact(e["data"]) for e in events]


def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1_784_592_000,
        "model": "bench-model",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def chat_stream(total: int = 2_000) -> tuple[list[Any], list[bytes]]:
    """OpenAI Chat Completions: a role chunk, a chunk opening both calls, argument
    fragments alternating by index, a finish chunk and a usage chunk (``total``
    chunks), then the ``[DONE]`` sentinel (a frame of ``parse_events``, no JSON)."""
    chunks = [
        _chat_chunk({"role": "assistant", "content": None, "refusal": None}),
        _chat_chunk({"tool_calls": [
            {"index": 0, "id": "call-A", "type": "function",
             "function": {"name": "lookup_order", "arguments": ""}},
            {"index": 1, "id": "call-B", "type": "function",
             "function": {"name": "lookup_order", "arguments": ""}},
        ]}),
    ]
    per_call = (total - 4) // 2
    for step in range(per_call):
        for call in (0, 1):
            if step == 0:
                piece = '{"items":['
            elif step == per_call - 1:
                piece = f'"item-{call}-{step}"]}}'
            else:
                piece = f'"item-{call}-{step}",'
            chunks.append(_chat_chunk({"tool_calls": [{"index": call,
                                                       "function": {"arguments": piece}}]}))
    chunks.append(_chat_chunk({}, finish="tool_calls"))
    chunks.append({"id": "chatcmpl-bench", "object": "chat.completion.chunk",
                   "created": 1_784_592_000, "model": "bench-model", "choices": [],
                   "usage": {"prompt_tokens": 120, "completion_tokens": 2_000,
                             "total_tokens": 2_120}})
    return [*chunks, "[DONE]"], [_compact(c) for c in chunks]


def gemini_stream(total: int = 2_000, *, with_event_ids: bool = True) -> tuple[list[Any], list[bytes]]:
    """Gemini Interactions: ``interaction.created``, two interleaved function_call
    steps whose arguments arrive in ``total - 6`` fragments, two ``step.stop`` and
    ``interaction.completed``."""
    per_call = (total - 6) // 2
    events: list[dict[str, Any]] = [
        {"event_type": "interaction.created",
         "interaction": {"id": "interaction-bench", "status": "in_progress"}},
        {"event_type": "step.start", "index": 0,
         "step": {"type": "function_call", "id": "call-a", "name": "lookup_order",
                  "arguments": {}}},
        {"event_type": "step.start", "index": 1,
         "step": {"type": "function_call", "id": "call-b", "name": "lookup_customer",
                  "arguments": {}}},
    ]
    fragments: dict[int, list[str]] = {}
    for index in (0, 1):
        body = ",".join(f'"k{i}":"value-{index}-{i}"' for i in range(per_call - 2))
        fragments[index] = ["{", *[p + "," for p in body.split(",")[:-1]],
                            body.split(",")[-1], "}"]
    for i in range(per_call):
        for index in (0, 1):
            events.append({"event_type": "step.delta", "index": index,
                           "delta": {"type": "arguments_delta",
                                     "arguments": fragments[index][i]}})
    events.append({"event_type": "step.stop", "index": 1})
    events.append({"event_type": "step.stop", "index": 0})
    events.append({"event_type": "interaction.completed",
                   "interaction": {"id": "interaction-bench", "status": "requires_action",
                                   "usage": {"total_input_tokens": 10,
                                             "total_output_tokens": 2000}}})
    if with_event_ids:
        for n, event in enumerate(events):
            event["event_id"] = f"ev-{n:06d}"
    return list(events), [_compact(e) for e in events]


#: contract module name -> stream builder (``parse_events`` frames, JSON texts).
STREAMS = {
    "openai_responses": responses_stream,
    "anthropic_messages": anthropic_stream,
    "gemini_interactions": gemini_stream,
    "openai_chat": chat_stream,
}


def sse_bytes(contract: str, total: int = 2_000) -> bytes:
    """The stream of :data:`STREAMS` ``contract`` as the provider sends it: SSE bytes.

    Responses and Gemini name each event (``event:`` = its ``type``/``event_type``);
    Anthropic names it and sends the envelope's ``data``; Chat sends bare ``data``
    lines and the ``[DONE]`` sentinel.
    """
    frames, _ = STREAMS[contract](total)
    out: list[bytes] = []
    for frame in frames:
        if contract == "openai_responses":
            out.append(b"event: " + frame["type"].encode() + b"\ndata: " + _compact(frame))
        elif contract == "anthropic_messages":
            out.append(b"event: " + frame["event"].encode() + b"\ndata: " + _compact(frame["data"]))
        elif contract == "gemini_interactions":
            out.append(b"event: " + frame["event_type"].encode() + b"\ndata: " + _compact(frame))
        elif frame == "[DONE]":
            out.append(b"data: [DONE]")
        else:
            out.append(b"data: " + _compact(frame))
    return b"\n\n".join(out) + b"\n\n"
