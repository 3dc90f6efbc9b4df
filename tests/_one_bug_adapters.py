"""This project's own parsers with one bug each, for the kit's grouping tests: the
only finding the kit may report is that bug, once, whichever families find it."""

from __future__ import annotations

import json
from typing import Any

from pcfuzz.conform.adapters import anthropic_messages


def anthropic_ignores_stop_reason(events: list[Any]) -> list[dict[str, Any]]:
    """Releases the calls of a complete turn whatever its (one) stop_reason says."""
    patched = json.loads(json.dumps(events))
    deltas = []
    for envelope in patched:
        data = envelope.get("data") if isinstance(envelope, dict) else None
        if isinstance(data, dict) and data.get("type") == "message_delta":
            delta = data.get("delta")
            if isinstance(delta, dict) and delta.get("stop_reason") is not None:
                deltas.append(delta)
    if len({d["stop_reason"] for d in deltas if isinstance(d["stop_reason"], str)}) == 1:
        for delta in deltas:
            delta["stop_reason"] = "tool_use"
    return anthropic_messages(patched)
