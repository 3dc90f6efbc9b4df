"""A small third-party parser of Anthropic Messages streams (the tutorial's example).

``parse(events)`` takes the decoded envelopes ``{"event": name, "data": {...}}`` of
one turn and returns the tool calls to execute.
"""

import json


def parse(events):
    blocks, calls, answered, stop_reason, done = {}, [], set(), None, False
    for envelope in events:
        data = envelope["data"]
        kind = data["type"]
        if kind == "ping":
            continue
        if done or kind == "error":
            raise ValueError(f"{kind} after message_stop or an error event")
        if kind == "content_block_start":
            if data["index"] in blocks or any(b["open"] for b in blocks.values()):
                raise ValueError("block index reused, or a block is still open")
            blocks[data["index"]] = {"block": data["content_block"], "json": [], "open": True}
        elif kind == "content_block_delta" and blocks[data["index"]]["open"]:
            blocks[data["index"]]["json"].append(data["delta"].get("partial_json", ""))
        elif kind == "content_block_stop":
            entry = blocks[data["index"]]
            entry["open"], block = False, entry["block"]
            if block["type"] == "tool_use":
                text = "".join(entry["json"])
                calls.append({"call_id": block["id"], "name": block["name"],
                              "arguments": json.loads(text) if text else {}})
            answered.add(block.get("tool_use_id"))
        elif kind == "message_delta":
            if stop_reason is not None and data["delta"]["stop_reason"] != stop_reason:
                raise ValueError("stop_reason changed")
            stop_reason = data["delta"]["stop_reason"]
        elif kind == "message_stop":
            done = not any(b["open"] for b in blocks.values())
    if answered & {c["call_id"] for c in calls}:
        raise ValueError("a server tool result answers a client call")
    if not done or stop_reason != "tool_use":  # the terminal gate
        return []
    return calls
