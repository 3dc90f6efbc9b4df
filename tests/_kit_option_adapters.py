"""Adapters for the tests of the kit's options (tests/test_conform_options.py):
an integration that runs registered tools only, async adapters over this project's
own parser, and a chat aggregator with no terminal gate of its own."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pcfuzz.conform.adapters import calls_of
from pcfuzz.contracts import anthropic_messages, openai_chat

#: The tools the "registered tools only" integration knows.
REGISTERED = ("lookup_order", "get_weather")


def registered_chat(frames: list[Any]) -> list[dict[str, Any]]:
    """This project's Chat Completions parser, then the integration's own check: a
    call of a tool it has not registered is refused (the stream is rejected)."""
    calls = calls_of(openai_chat.parse_events(frames))
    for call in calls:
        if call["name"] not in REGISTERED:
            raise LookupError(f"no tool named {call['name']!r} is registered")
    return calls


_LOOPS: list[asyncio.AbstractEventLoop] = []


async def anthropic_async(events: list[Any]) -> list[dict[str, Any]]:
    """This project's Anthropic parser behind an ``await``; it refuses to run on a
    second event loop (state bound to a loop, as a client session is)."""
    loop = asyncio.get_running_loop()
    if not _LOOPS:
        _LOOPS.append(loop)
    elif _LOOPS[0] is not loop:
        raise RuntimeError("called on a second event loop")
    await asyncio.sleep(0)
    return calls_of(anthropic_messages.parse_events(events))


async def hangs(events: list[Any]) -> list[dict[str, Any]]:
    """Never answers."""
    await asyncio.sleep(3600)
    return []


def chat_tools(frames: list[Any]) -> list[dict[str, str]]:
    """A naive Chat accumulator's tool calls: fragments joined by index, in index
    order, whatever the stream's terminal says (no ``[DONE]``, no finish-reason
    check): ``{"id", "name", "args"}`` with the arguments' text unparsed."""
    tools: dict[int, dict[str, str]] = {}
    for frame in frames:
        if not isinstance(frame, dict):
            continue
        for choice in frame.get("choices") or []:
            for part in (choice.get("delta") or {}).get("tool_calls") or []:
                tool = tools.setdefault(part["index"], {"id": "", "name": "", "args": ""})
                tool["id"] = part.get("id") or tool["id"]
                function = part.get("function") or {}
                tool["name"] += function.get("name") or ""
                tool["args"] += function.get("arguments") or ""
    return [tool for _, tool in sorted(tools.items())]


def ungated_chat(frames: list[Any]) -> list[dict[str, Any]]:
    """Aggregates tool fragments by index and releases them whatever the stream's
    terminal says (no ``[DONE]``, no finish-reason check)."""
    return [{"call_id": t["id"], "name": t["name"], "arguments": json.loads(t["args"] or "{}")}
            for t in chat_tools(frames)]


def every_tool_use(events: list[Any]) -> list[dict[str, Any]]:
    """Every client tool_use block, released whatever the stop reason (no terminal
    gate), with the arguments this project's parser would give on a complete turn."""
    out = []
    for envelope in events:
        data = envelope["data"]
        if data["type"] == "content_block_start" and data["content_block"]["type"] == "tool_use":
            block = data["content_block"]
            out.append({"call_id": block["id"], "name": block["name"], "arguments": {}})
    return out
