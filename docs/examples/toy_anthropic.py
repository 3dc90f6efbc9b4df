"""A small third-party parser of Anthropic Messages streams (the tutorial's example).

``parse(events)`` takes the decoded envelopes ``{"event": name, "data": {...}}`` of
one turn and returns the tool calls to execute.
"""

import json
import math


def strict_loads(text):
    """``json.loads`` without what a strict reader refuses: duplicate keys, NaN and
    Infinity, numbers that overflow or run over 1,000 digits, lone surrogates, more
    than 512 levels."""
    def pairs(items):
        if len({key for key, _ in items}) != len(items):
            raise ValueError("duplicate key")
        return dict(items)

    def finite(literal):
        if len(literal) > 1000 or math.isinf(float(literal)):
            raise ValueError("number out of range")
        return float(literal)

    def integer(literal):
        if len(literal) > 1000:
            raise ValueError("number out of range")
        return int(literal)

    def constant(name):
        raise ValueError(f"{name} is not JSON")

    value = json.loads(text, object_pairs_hook=pairs, parse_float=finite,
                       parse_int=integer, parse_constant=constant)
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > 512:
            raise ValueError("too deep")
        if isinstance(node, str):
            node.encode("utf-8")  # a lone surrogate raises
        elif isinstance(node, dict):
            stack += [(key, depth) for key in node] + [(v, depth + 1) for v in node.values()]
        elif isinstance(node, list):
            stack += [(v, depth + 1) for v in node]
    return value


def parse(events):
    blocks, calls, ids, answered, stop_reason, done = {}, [], set(), set(), None, False
    started = False
    for envelope in events:
        data = envelope["data"]
        kind = data["type"]
        if kind == "ping":
            continue
        if done or kind == "error":
            raise ValueError(f"{kind} after message_stop or an error event")
        if (kind == "message_start") == started:
            raise ValueError("message_start must come first, once")
        started = True
        open_block = any(b["open"] for b in blocks.values())
        if kind == "content_block_start":
            if data["index"] != len(blocks) or open_block or stop_reason is not None:
                raise ValueError("block index reused or skipped, or a block is still open")
            block = data["content_block"]
            if block["type"] in ("tool_use", "server_tool_use"):
                if not block["id"] or not block["name"] or block["id"] in ids:
                    raise ValueError("a tool call needs a name and an id of its own")
                if not isinstance(block["input"], dict):
                    raise ValueError("a tool call's start input must be an object")
                ids.add(block["id"])
            blocks[data["index"]] = {"block": block, "json": [], "open": True}
        elif kind == "content_block_delta":
            if not blocks[data["index"]]["open"]:
                raise ValueError("a delta for a closed block")
            blocks[data["index"]]["json"].append(data["delta"].get("partial_json", ""))
        elif kind == "content_block_stop":
            entry = blocks[data["index"]]
            if not entry["open"]:
                raise ValueError("a block stopped twice")
            entry["open"], block = False, entry["block"]
            if block["type"] == "tool_use":
                text = "".join(entry["json"])
                if text and block["input"]:
                    raise ValueError("a start input and input fragments")
                arguments = strict_loads(text) if text else block["input"]
                if not isinstance(arguments, dict):
                    raise ValueError("tool input is not an object")
                calls.append({"call_id": block["id"], "name": block["name"],
                              "arguments": arguments})
            answered.add(block.get("tool_use_id"))
        elif kind == "message_delta":
            if open_block:
                raise ValueError("message_delta while a block is open")
            if stop_reason is not None and data["delta"]["stop_reason"] != stop_reason:
                raise ValueError("stop_reason changed")
            stop_reason = data["delta"]["stop_reason"]
        elif kind == "message_stop":
            done = stop_reason is not None and not open_block
            if not done:
                raise ValueError("message_stop before message_delta")
    if answered & {c["call_id"] for c in calls}:
        raise ValueError("a server tool result answers a client call")
    if not done or stop_reason != "tool_use":  # the terminal gate
        return []
    return calls
