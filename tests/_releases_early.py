"""A naive anthropic-messages adapter for the kit's database tests: it releases each
tool call when its block stops, with no terminal gate, so every truncation family finds
it."""

from __future__ import annotations

import json
from typing import Any


def releases_early(events: list[Any]) -> list[dict[str, Any]]:
    """Releases each tool call when its block stops (no terminal gate)."""
    blocks: dict[int, dict[str, Any]] = {}
    calls = []
    for envelope in events:
        data = envelope["data"]
        if data["type"] == "content_block_start":
            blocks[data["index"]] = {"block": data["content_block"], "json": ""}
        elif data["type"] == "content_block_delta":
            blocks[data["index"]]["json"] += data["delta"].get("partial_json", "")
        elif data["type"] == "content_block_stop":
            entry = blocks[data["index"]]
            if entry["block"]["type"] == "tool_use":
                calls.append({"call_id": entry["block"]["id"], "name": entry["block"]["name"],
                              "arguments": json.loads(entry["json"] or "{}")})
    return calls
