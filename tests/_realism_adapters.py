"""An adapter for the realism tests (tests/test_conformance_realism.py): a Chat
integration that reads a call's name from its first fragment only, as an
integration written against what the API sends may do."""

from __future__ import annotations

from typing import Any

from pcfuzz.conform.adapters import calls_of
from pcfuzz.contracts import openai_chat


def first_fragment_names(frames: list[Any]) -> list[dict[str, Any]]:
    """This project's Chat parser, each call then renamed with the ``function.name``
    of the first fragment of its index ("" when that fragment has none)."""
    calls = calls_of(openai_chat.parse_events(frames))
    first: dict[int, dict[str, Any]] = {}
    for frame in frames:
        if not isinstance(frame, dict):
            continue
        for choice in frame.get("choices") or []:
            for fragment in (choice.get("delta") or {}).get("tool_calls") or []:
                first.setdefault(fragment["index"], fragment)
    index_of = {fragment.get("id"): index for index, fragment in first.items()}
    out = []
    for call in calls:
        fragment = first.get(index_of.get(call["call_id"], -1), {})
        function = fragment.get("function") or {}
        out.append({**call, "name": function.get("name") or ""})
    return out
