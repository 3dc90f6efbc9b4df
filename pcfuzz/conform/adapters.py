"""Conformance adapters of this project's own parsers (``pcfuzz conform --adapter``).

``pcfuzz.conform.adapters:anthropic_messages`` and its siblings take the decoded event
list; the ``*_sse`` ones take the raw SSE bytes of the turn. Each returns the turn's
executable calls as ``[{"call_id", "name", "arguments"}]`` and raises the contract's
``ContractError`` when the stream is rejected. CI runs the conformance kit through
them (tests/test_conformance.py), so the kit is exercised on every run.

The ``*_release`` ones are the release form (``--adapter-form release``): they read
the stream as it is handed out (events, or SSE frames with ``*_release_sse``),
release each call once the parser has accepted the whole turn, and hand over the
follow-up request this project's continuation builder makes from the turn (a
made-up tool result per call; Chat, which has no builder here, appends one ``tool``
message per call).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pcfuzz.contracts import anthropic_messages as _am
from pcfuzz.contracts import gemini_interactions as _gi
from pcfuzz.contracts import openai_chat as _oc
from pcfuzz.contracts import openai_responses as _or
from pcfuzz.contracts.errors import ContractError
from pcfuzz.contracts.results import ModelVisibleToolResult
from pcfuzz.contracts.wire import parse_sse, parse_sse_chunks

__all__ = [
    "ADAPTERS",
    "SSE_ADAPTERS",
    "anthropic_messages",
    "anthropic_messages_sse",
    "gemini_interactions",
    "gemini_interactions_sse",
    "openai_chat",
    "openai_chat_sse",
    "openai_responses",
    "openai_responses_sse",
    "RELEASE_ADAPTERS",
    "SSE_RELEASE_ADAPTERS",
    "anthropic_messages_release",
    "anthropic_messages_release_sse",
    "calls_of",
    "follow_up_request",
    "gemini_interactions_release",
    "gemini_interactions_release_sse",
    "openai_chat_release",
    "openai_chat_release_sse",
    "openai_responses_release",
    "openai_responses_release_sse",
]


def calls_of(turn: Any) -> list[dict[str, Any]]:
    """A parsed turn's executable calls in the adapter shape."""
    return [
        {"call_id": c.call_id, "name": c.name, "arguments": dict(c.arguments)}
        for c in turn.calls
    ]


def openai_responses(events: Any) -> list[dict[str, Any]]:
    return calls_of(_or.parse_events(events))


def anthropic_messages(events: Any) -> list[dict[str, Any]]:
    return calls_of(_am.parse_events(events))


def gemini_interactions(events: Any) -> list[dict[str, Any]]:
    return calls_of(_gi.parse_events(events))


def openai_chat(events: Any) -> list[dict[str, Any]]:
    return calls_of(_oc.parse_events(events))


def openai_responses_sse(data: bytes) -> list[dict[str, Any]]:
    return calls_of(parse_sse("openai-responses", data))


def anthropic_messages_sse(data: bytes) -> list[dict[str, Any]]:
    return calls_of(parse_sse("anthropic-messages", data))


def gemini_interactions_sse(data: bytes) -> list[dict[str, Any]]:
    return calls_of(parse_sse("gemini-interactions", data))


def openai_chat_sse(data: bytes) -> list[dict[str, Any]]:
    return calls_of(parse_sse("openai-chat", data))


#: contract name -> adapter of this project's parser (decoded events / SSE bytes).
ADAPTERS = {
    "openai-responses": openai_responses,
    "anthropic-messages": anthropic_messages,
    "gemini-interactions": gemini_interactions,
    "openai-chat": openai_chat,
}
SSE_ADAPTERS = {
    "openai-responses": openai_responses_sse,
    "anthropic-messages": anthropic_messages_sse,
    "gemini-interactions": gemini_interactions_sse,
    "openai-chat": openai_chat_sse,
}


# --------------------------------------------------------------------- the release form

_PARSE_EVENTS: dict[str, Callable[[Any], Any]] = {
    "openai-responses": _or.parse_events,
    "anthropic-messages": _am.parse_events,
    "gemini-interactions": _gi.parse_events,
    "openai-chat": _oc.parse_events,
}


def follow_up_request(contract: str, turn: Any) -> dict[str, Any] | None:
    """The request that follows ``turn``: this project's continuation builder with one
    made-up result per call (Chat: the turn's message and one ``tool`` message per
    call), or ``None`` when the turn has no call or the builder refuses it."""
    calls = list(turn.calls)
    if not calls:
        return None
    results = [ModelVisibleToolResult(c.call_id, f"result of {c.name}") for c in calls]
    names = sorted({c.name for c in calls})
    try:
        if contract == "anthropic-messages":
            return _am.build_anthropic_messages_continuation(
                turn, results, history=[{"role": "user", "content": "go"}], model="m",
                max_tokens=1024,
                tools=[{"name": n, "input_schema": {"type": "object"}} for n in names])
        if contract == "openai-responses":
            schema = {"type": "object", "properties": {}, "required": [],
                      "additionalProperties": False}
            return _or.build_openai_responses_continuation(
                turn, results, model="m", previous_response_was_stored=True, store=False,
                instructions="i", tools=[{"type": "function", "name": n, "strict": True,
                                          "parameters": schema} for n in names])
        if contract == "gemini-interactions":
            return _gi.build_gemini_interactions_continuation(
                turn, results, model="m", system_instruction=None, generation_config=None,
                previous_interaction_was_stored=True, store=False,
                tools=[{"type": "function", "name": n, "parameters": {"type": "object"}}
                       for n in names])
    except ContractError:
        return None
    message = dict(turn.message)
    return {"model": "m", "messages": [
        {"role": "user", "content": "go"}, message,
        *({"role": "tool", "tool_call_id": r.call_id, "content": r.output} for r in results)]}


def _release_all(contract: str, turn: Any, release: Callable[[Any], None],
                 continuation: Callable[[Any], None]) -> None:
    for call in calls_of(turn):
        release(call)
    request = follow_up_request(contract, turn)
    if request is not None:
        continuation(request)


def _release_adapter(contract: str, sse: bool, name: str) -> Callable[..., None]:
    parse = _PARSE_EVENTS[contract]

    def adapter(stream: Any, release: Callable[[Any], None],
                continuation: Callable[[Any], None]) -> None:
        turn = parse_sse_chunks(contract, stream) if sse else parse(stream)
        _release_all(contract, turn, release, continuation)

    # importable by this module's name: the worker process imports module:function
    adapter.__name__ = adapter.__qualname__ = name
    return adapter


openai_responses_release = _release_adapter(
    "openai-responses", False, "openai_responses_release")
anthropic_messages_release = _release_adapter(
    "anthropic-messages", False, "anthropic_messages_release")
gemini_interactions_release = _release_adapter(
    "gemini-interactions", False, "gemini_interactions_release")
openai_chat_release = _release_adapter("openai-chat", False, "openai_chat_release")
openai_responses_release_sse = _release_adapter(
    "openai-responses", True, "openai_responses_release_sse")
anthropic_messages_release_sse = _release_adapter(
    "anthropic-messages", True, "anthropic_messages_release_sse")
gemini_interactions_release_sse = _release_adapter(
    "gemini-interactions", True, "gemini_interactions_release_sse")
openai_chat_release_sse = _release_adapter("openai-chat", True, "openai_chat_release_sse")
#: contract -> release-form adapter of this project's parser (events / SSE frames).
RELEASE_ADAPTERS = {
    "openai-responses": openai_responses_release,
    "anthropic-messages": anthropic_messages_release,
    "gemini-interactions": gemini_interactions_release,
    "openai-chat": openai_chat_release,
}
SSE_RELEASE_ADAPTERS = {
    "openai-responses": openai_responses_release_sse,
    "anthropic-messages": anthropic_messages_release_sse,
    "gemini-interactions": gemini_interactions_release_sse,
    "openai-chat": openai_chat_release_sse,
}
