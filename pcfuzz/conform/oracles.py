"""Conformance adapters of the official SDK stream accumulators (the ``oracles`` extra).

Each adapter feeds the decoded events to the SDK's own accumulator the way the SDK's
stream reader does (its event filtering and error raising included), then applies
the terminal check the provider's documentation tells callers to apply before
executing calls, and returns the calls a caller would then execute:

=============================  ==================================================
``openai_chat``                ``openai.lib.streaming.chat.ChatCompletionStreamState``;
                               the reader stops at ``[DONE]`` and raises on a truthy
                               ``error``; calls = ``message.tool_calls`` when
                               ``finish_reason == "tool_calls"``, arguments via
                               ``json.loads``
``openai_responses``           ``openai.lib.streaming.responses.ResponseStreamState``;
                               no ``response.completed``: rejected (as
                               ``get_final_response()``); calls = the
                               ``function_call`` items of the completed response
``anthropic_messages``         ``anthropic.lib.streaming._messages.accumulate_event``
                               (``MessageStream``); ``ping`` skipped, ``error``
                               raises; calls = the ``tool_use`` blocks of the final
                               message when ``stop_reason == "tool_use"``
=============================  ==================================================

google-genai has no stream accumulator for Interactions. Importing this module does
not need the SDKs; calling an adapter without its SDK raises ``ImportError``.
``pcfuzz conform --adapter pcfuzz.conform.oracles:anthropic_messages ...``.
"""

from __future__ import annotations

import functools
import json
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["openai_chat", "openai_responses", "anthropic_messages", "ORACLES", "available"]


def _quiet(adapter: Callable[[list[Any]], list[dict[str, Any]]],
           ) -> Callable[[list[Any]], list[dict[str, Any]]]:
    """Silence the SDKs' serializer warnings about odd shapes (the outcome is what counts)."""

    @functools.wraps(adapter)
    def run(events: list[Any]) -> list[dict[str, Any]]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return adapter(events)

    return run


@_quiet
def openai_chat(frames: list[Any]) -> list[dict[str, Any]]:
    from openai._models import construct_type
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state: Any = ChatCompletionStreamState()
    for frame in frames:
        if frame == "[DONE]":  # the reader stops at the sentinel
            break
        if isinstance(frame, dict) and frame.get("error"):
            raise RuntimeError(f"APIError: {frame['error']!r}")
        state.handle_chunk(construct_type(type_=ChatCompletionChunk, value=frame))
    completion = state.get_final_completion()
    choice = completion.choices[0]
    if choice.finish_reason != "tool_calls":
        return []
    return [
        {"call_id": call.id, "name": call.function.name,
         "arguments": json.loads(call.function.arguments)}
        for call in choice.message.tool_calls or []
    ]


@_quiet
def openai_responses(events: list[Any]) -> list[dict[str, Any]]:
    from openai._models import construct_type
    from openai._types import omit
    from openai.lib.streaming.responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    state: Any = ResponseStreamState(input_tools=omit, text_format=omit)
    for event in events:
        if isinstance(event, dict) and event.get("error"):
            raise RuntimeError(f"APIError: {event['error']!r}")
        state.handle_event(construct_type(type_=ResponseStreamEvent, value=event))
    response = state._completed_response
    if response is None:
        raise RuntimeError("Didn't receive a `response.completed` event.")
    return [
        {"call_id": item.call_id, "name": item.name, "arguments": json.loads(item.arguments)}
        for item in response.output
        if item.type == "function_call"
    ]


@_quiet
def anthropic_messages(events: list[Any]) -> list[dict[str, Any]]:
    from anthropic.lib.streaming._messages import accumulate_event

    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for envelope in events:
        name = envelope.get("event") if isinstance(envelope, dict) else None
        if name == "ping" or name is None:
            continue
        if name == "error":
            raise RuntimeError(f"APIStatusError: {envelope.get('data')!r}")
        data = envelope.get("data")
        if not data:
            continue
        snapshot = accumulate_event(event=data, current_snapshot=snapshot, json_bufs=buffers)
    if snapshot is None or snapshot.stop_reason != "tool_use":
        return []
    return [
        {"call_id": block.id, "name": block.name, "arguments": block.input}
        for block in snapshot.content
        if block.type == "tool_use"
    ]


#: contract name -> SDK accumulator adapter.
ORACLES = {
    "openai-chat": openai_chat,
    "openai-responses": openai_responses,
    "anthropic-messages": anthropic_messages,
}
_MODULES = {"openai-chat": "openai", "openai-responses": "openai",
            "anthropic-messages": "anthropic"}


def available(contract: str) -> bool:
    """Whether the SDK behind ``contract``'s oracle adapter is installed."""
    import importlib.util

    return importlib.util.find_spec(_MODULES[contract]) is not None
