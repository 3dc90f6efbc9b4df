"""Conformance adapters of this project's own parsers (``pcfuzz conform --adapter``).

``pcfuzz.conform.adapters:anthropic_messages`` and its siblings take the decoded event
list; the ``*_sse`` ones take the raw SSE bytes of the turn. Each returns the turn's
executable calls as ``[{"call_id", "name", "arguments"}]`` and raises the contract's
``ContractError`` when the stream is rejected. CI runs the conformance kit through
them (tests/test_conformance.py), so the kit is exercised on every run.
"""

from __future__ import annotations

from typing import Any

from pcfuzz.contracts import anthropic_messages as _am
from pcfuzz.contracts import gemini_interactions as _gi
from pcfuzz.contracts import openai_chat as _oc
from pcfuzz.contracts import openai_responses as _or
from pcfuzz.contracts.wire import parse_sse

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
    "calls_of",
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
