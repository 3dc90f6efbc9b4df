"""Release-form adapters (``adapter(stream, release, continuation)``) for the kit's
tests: each gets one thing wrong, or one thing about containment right. Importable by
name, so the kit runs them in its worker process."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from typing import Any

from pcfuzz.conform.adapters import follow_up_request
from pcfuzz.contracts import anthropic_messages as am

Release = Callable[[Any], None]


def _released_at_block_stop(stream: Any, release: Release) -> None:
    """An Anthropic accumulator that runs each tool call when its block stops."""
    blocks: dict[int, dict[str, Any]] = {}
    for envelope in stream:
        data = envelope["data"]
        if data["type"] == "content_block_start":
            blocks[data["index"]] = {"block": data["content_block"], "json": []}
        elif data["type"] == "content_block_delta":
            blocks[data["index"]]["json"].append(data["delta"].get("partial_json", ""))
        elif data["type"] == "content_block_stop":
            entry = blocks[data["index"]]
            if entry["block"]["type"] == "tool_use":
                release({"call_id": entry["block"]["id"], "name": entry["block"]["name"],
                         "arguments": json.loads("".join(entry["json"]) or "{}")})


def early_then_raises(stream: Any, release: Release, continuation: Release) -> None:
    """Runs each call when its block stops, then a late check rejects the turn: the
    calls already ran."""
    _released_at_block_stop(stream, release)
    raise ValueError("the turn did not end with stop_reason tool_use")


def early_then_hangs(stream: Any, release: Release, continuation: Release) -> None:
    """Runs the first call it sees, then never returns."""
    _released_at_block_stop(stream, release)
    threading.Event().wait()


def early_then_exits(stream: Any, release: Release, continuation: Release) -> None:
    """Runs the calls, then ends its process."""
    _released_at_block_stop(stream, release)
    os._exit(7)


def _turn_then(stream: Any, release: Release) -> Any:
    turn = am.parse_events(stream)
    for call in turn.calls:
        release({"call_id": call.call_id, "name": call.name,
                 "arguments": dict(call.arguments)})
    return turn


def answers_first_call_twice(stream: Any, release: Release, continuation: Release) -> None:
    """Gates on the terminal, but its follow-up request answers the first call twice."""
    turn = _turn_then(stream, release)
    request = follow_up_request("anthropic-messages", turn)
    if request is not None:
        results = request["messages"][-1]["content"]
        results.append(dict(results[0]))
        continuation(request)


def answers_no_call(stream: Any, release: Release, continuation: Release) -> None:
    """Gates on the terminal, but its follow-up request forgets the last result."""
    turn = _turn_then(stream, release)
    request = follow_up_request("anthropic-messages", turn)
    if request is not None:
        request["messages"][-1]["content"].pop()
        continuation(request)


def plain_declared_release(stream: Any, release: Release = print,
                           continuation: Release = print) -> list[dict[str, Any]]:
    """A plain adapter's body behind the release form's signature: it returns the
    calls and releases none."""
    return [{"call_id": c.call_id, "name": c.name, "arguments": dict(c.arguments)}
            for c in am.parse_events(stream).calls]


def releases_a_string(stream: Any, release: Release, continuation: Release) -> None:
    """Passes release() the call's id instead of the call."""
    for call in am.parse_events(stream).calls:
        release(call.call_id)


def at_the_end_then_raises(stream: Any, release: Release, continuation: Release) -> None:
    """Runs every complete tool block once the stream has ended, without asking how it
    ended, then a late check rejects the turn: the calls already ran."""
    calls: list[dict[str, Any]] = []
    _released_at_block_stop(stream, calls.append)
    for call in calls:
        release(call)
    raise ValueError("the turn did not end with stop_reason tool_use")
