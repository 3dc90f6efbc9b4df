"""Shared helpers of the anthropic messages tests (events, fixtures, builders), imported by the
test modules of that contract (a test module never imports another test module)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pcfuzz.contracts.anthropic_messages import (
    build_anthropic_messages_continuation,
)
from pcfuzz.contracts.results import ModelVisibleToolResult

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "anthropic_messages.json"


# --------------------------------------------------------------------------- helpers


def ev(name: str, **data: Any) -> dict[str, Any]:
    return {"event": name, "data": {"type": name, **data}}


def start(output_tokens: int = 1, input_tokens: int = 10, **extra: Any) -> dict[str, Any]:
    message = {
        "id": "m-1",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "fixture-model",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        **extra,
    }
    return ev("message_start", message=message)


def text_block(index: int, *parts: str) -> list[dict[str, Any]]:
    out = [ev("content_block_start", index=index, content_block={"type": "text", "text": ""})]
    out += [
        ev("content_block_delta", index=index, delta={"type": "text_delta", "text": p})
        for p in parts
    ]
    return out + [ev("content_block_stop", index=index)]


def tool_block(
    index: int, call_id: str, name: str, *fragments: str, kind: str = "tool_use"
) -> list[dict[str, Any]]:
    out = [
        ev(
            "content_block_start",
            index=index,
            content_block={"type": kind, "id": call_id, "name": name, "input": {}},
        )
    ]
    out += [
        ev("content_block_delta", index=index, delta={"type": "input_json_delta", "partial_json": f})
        for f in fragments
    ]
    return out + [ev("content_block_stop", index=index)]


def thinking_block(index: int, text: str, signature: str) -> list[dict[str, Any]]:
    return [
        ev(
            "content_block_start",
            index=index,
            content_block={"type": "thinking", "thinking": "", "signature": ""},
        ),
        ev("content_block_delta", index=index, delta={"type": "thinking_delta", "thinking": text}),
        ev("content_block_delta", index=index, delta={"type": "signature_delta", "signature": signature}),
        ev("content_block_stop", index=index),
    ]


def finish(stop_reason: str = "tool_use", output_tokens: int = 20) -> list[dict[str, Any]]:
    return [
        ev("message_delta", delta={"stop_reason": stop_reason, "stop_sequence": None},
           usage={"output_tokens": output_tokens}),
        ev("message_stop"),
    ]


def two_call_stream(stop_reason: str = "tool_use") -> list[dict[str, Any]]:
    return [
        start(),
        *text_block(0, "Looking ", "up."),
        *tool_block(1, "call-A", "lookup_order", '{"order_ref":', ' "A"}'),
        *tool_block(2, "call-B", "lookup_order", '{"order_ref": "B"}'),
        *finish(stop_reason),
    ]


TOOLS = [
    {
        "name": "lookup_order",
        "description": "Look up an order",
        "input_schema": {
            "type": "object",
            "properties": {"order_ref": {"type": "string"}},
            "required": ["order_ref"],
        },
    }
]
HISTORY = [{"role": "user", "content": "Where are orders A and B?"}]


def results_for(turn: Any, *, error: bool = False) -> list[ModelVisibleToolResult]:
    return [ModelVisibleToolResult(c.call_id, f"result of {c.call_id}", error) for c in turn.calls]


def build(turn: Any, results: Any = None, **kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "history": HISTORY,
        "model": "fixture-model",
        "max_tokens": 512,
        "tools": TOOLS,
    }
    args.update(kw)
    return build_anthropic_messages_continuation(
        turn, results_for(turn) if results is None else results, **args
    )


# --------------------------------------------------------------------------- fixture
