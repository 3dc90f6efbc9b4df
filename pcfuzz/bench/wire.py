"""Case 3 of ``pcfuzz bench``: the whole wire path, SSE bytes -> Turn.

For each contract the same SSE bytes (:func:`~pcfuzz.bench.data.sse_bytes`) go
through three paths:

* ``parse_sse`` (``contracts.wire``): the SSE decoder, strict JSON per event, the
  layer checks, the contract's ``parse_events`` and its digest;
* a floor pipeline written here: split the bytes on blank lines, ``json.loads`` each
  ``data`` line, and a minimal dict accumulator that joins each tool call's argument
  fragments and decodes them once at the end (what any consumer must do at least);
* the official SDK's own path where its package is installed (the ``oracles``
  extra): its SSE decoder, its event types and its accumulator (OpenAI Chat:
  ``ChatCompletionStreamState``; Responses: ``ResponseStreamState``; Anthropic:
  ``accumulate_event``; Gemini: its event stream reader and event union). A missing
  package, or an SDK whose internals moved, gives a row with a note instead.

Nothing here is imported by ``contracts``: the SDK code runs only in the benchmark.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from typing import Any, cast

__all__ = ["FLOORS", "SDK_PATHS", "sdk_path"]


def _events(data: bytes) -> list[tuple[bytes, bytes]]:
    """(event name, data) per SSE event; the floor's framing: blank-line split."""
    out = []
    for block in data.split(b"\n\n"):
        name = b""
        payload = b""
        for line in block.split(b"\n"):
            if line.startswith(b"data: "):
                payload = line[6:]
            elif line.startswith(b"event: "):
                name = line[7:]
        if payload:
            out.append((name, payload))
    return out


def _finish(parts: dict[Any, list[str]]) -> dict[Any, Any]:
    return {key: json.loads("".join(chunks)) for key, chunks in parts.items()}


def floor_responses(data: bytes) -> dict[Any, Any]:
    parts: dict[Any, list[str]] = {}
    for _, payload in _events(data):
        event = json.loads(payload)
        if event["type"] == "response.function_call_arguments.delta":
            parts.setdefault(event["item_id"], []).append(event["delta"])
    return _finish(parts)


def floor_anthropic(data: bytes) -> dict[Any, Any]:
    parts: dict[Any, list[str]] = {}
    for _, payload in _events(data):
        event = json.loads(payload)
        if event["type"] == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
            parts.setdefault(event["index"], []).append(event["delta"]["partial_json"])
    return _finish(parts)


def floor_gemini(data: bytes) -> dict[Any, Any]:
    parts: dict[Any, list[str]] = {}
    for _, payload in _events(data):
        event = json.loads(payload)
        if event["event_type"] == "step.delta" and event["delta"]["type"] == "arguments_delta":
            parts.setdefault(event["index"], []).append(event["delta"].get("arguments", ""))
    return _finish(parts)


def floor_chat(data: bytes) -> dict[Any, Any]:
    parts: dict[Any, list[str]] = {}
    for _, payload in _events(data):
        if payload == b"[DONE]":
            break
        chunk = json.loads(payload)
        for choice in chunk["choices"]:
            for call in choice["delta"].get("tool_calls") or ():
                arguments = (call.get("function") or {}).get("arguments")
                if arguments:
                    parts.setdefault(call["index"], []).append(arguments)
    return _finish(parts)


#: contract module name -> floor pipeline (SSE bytes -> each call's parsed arguments).
FLOORS: dict[str, Callable[[bytes], Any]] = {
    "openai_responses": floor_responses,
    "anthropic_messages": floor_anthropic,
    "gemini_interactions": floor_gemini,
    "openai_chat": floor_chat,
}


# --- the SDKs' own paths (imported only when installed) --------------------------------


def _openai_chat() -> Callable[[bytes], Any]:
    from openai._models import construct_type
    from openai._streaming import SSEDecoder
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    def run(data: bytes) -> Any:
        state: Any = ChatCompletionStreamState()
        for sse in SSEDecoder().iter_bytes(iter([data])):
            if sse.data == "[DONE]":
                break
            chunk = construct_type(type_=ChatCompletionChunk, value=sse.json())
            state.handle_chunk(chunk)
        return state.get_final_completion()

    return run


def _openai_responses() -> Callable[[bytes], Any]:
    from openai._models import construct_type
    from openai._streaming import SSEDecoder
    from openai._types import omit
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    def run(data: bytes) -> Any:
        state: Any = ResponseStreamState(input_tools=omit, text_format=omit)
        for sse in SSEDecoder().iter_bytes(iter([data])):
            state.handle_event(construct_type(type_=ResponseStreamEvent, value=sse.json()))
        return state._completed_response

    return run


def _anthropic() -> Callable[[bytes], Any]:
    from anthropic._models import construct_type
    from anthropic._streaming import SSEDecoder
    from anthropic.lib.streaming._messages import accumulate_event
    from anthropic.types import RawMessageStreamEvent

    def run(data: bytes) -> Any:
        snapshot: Any = None
        buffers: dict[int, bytes] = {}
        for sse in SSEDecoder().iter_bytes(iter([data])):
            if sse.event == "ping":
                continue
            event = cast(RawMessageStreamEvent,
                         construct_type(type_=RawMessageStreamEvent, value=sse.json()))
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
        return snapshot

    return run


def _gemini() -> Callable[[bytes], Any]:
    from google.genai._gaos.types import interactions
    from google.genai._gaos.utils.eventstreaming import stream_events
    from google.genai._gaos.utils.unmarshal_json_response import unmarshal_json_response

    class Response:
        """What the SDK's reader uses of its HTTP response: the bytes, and close()."""

        def __init__(self, data: bytes) -> None:
            self.data = data

        def iter_bytes(self) -> Any:
            return iter([self.data])

        def close(self) -> None:
            pass

    def run(data: bytes) -> Any:
        response: Any = Response(data)

        def decode(raw: str) -> Any:
            return unmarshal_json_response(
                interactions.InteractionSSEStreamEvent, response, raw, validate=False
            ).data

        # The SDK has no accumulator for interaction streams: its events, and the
        # arguments of each function call joined and decoded as the floor does.
        parts: dict[int, list[str]] = {}
        for event in stream_events(response, decode, sentinel="[DONE]"):
            delta = getattr(event, "delta", None)
            arguments = getattr(delta, "arguments", None)
            if arguments:
                parts.setdefault(event.index, []).append(arguments)
        return _finish(parts)

    return run


#: contract module name -> (package that must be importable, builder of the SDK path).
SDK_PATHS: dict[str, tuple[str, str, Callable[[], Callable[[bytes], Any]]]] = {
    "openai_responses": ("openai", "ResponseStreamState", _openai_responses),
    "anthropic_messages": ("anthropic", "accumulate_event", _anthropic),
    "gemini_interactions": ("google.genai", "its event stream and types", _gemini),
    "openai_chat": ("openai", "ChatCompletionStreamState", _openai_chat),
}


def sdk_path(contract: str, data: bytes) -> tuple[Callable[[bytes], Any] | None, str]:
    """The SDK's path for ``contract``, checked once on ``data``; or None and why not."""
    package, what, build = SDK_PATHS[contract]
    try:
        installed = importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        installed = False
    if not installed:
        return None, f"SDK {package} not installed (the oracles extra): skipped"
    try:
        run = build()
        run(data)
    except Exception as exc:  # noqa: BLE001 - an SDK's internals may have moved
        return None, f"SDK {package} path failed ({type(exc).__name__}: {str(exc)[:80]}): skipped"
    return run, f"SDK {package}: {what}"
