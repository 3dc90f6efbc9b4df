"""Shared helpers of the openai chat tests (events, fixtures, builders), imported by the
test modules of that contract (a test module never imports another test module)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pcfuzz.contracts.openai_chat import (
    ChatCompletionStream,
)

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "openai_chat.json"

_UNSET: Any = object()


def chunk(
    delta: dict[str, Any] | None = None,
    *,
    finish: Any = _UNSET,
    id: Any = _UNSET,  # noqa: A002 - the provider's field name
    usage: Any = _UNSET,
    index: Any = 0,
) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": index, "delta": {} if delta is None else delta}
    if finish is not _UNSET:
        choice["finish_reason"] = finish
    frame: dict[str, Any] = {"choices": [choice]}
    if id is not _UNSET:
        frame["id"] = id
    if usage is not _UNSET:
        frame["usage"] = usage
    return frame


def tool(
    index: Any,
    *,
    id: Any = _UNSET,  # noqa: A002
    type: Any = _UNSET,  # noqa: A002
    name: Any = _UNSET,
    arguments: Any = _UNSET,
) -> dict[str, Any]:
    entry: dict[str, Any] = {"index": index}
    if id is not _UNSET:
        entry["id"] = id
    if type is not _UNSET:
        entry["type"] = type
    function: dict[str, Any] = {}
    if name is not _UNSET:
        function["name"] = name
    if arguments is not _UNSET:
        function["arguments"] = arguments
    if function:
        entry["function"] = function
    return entry


ROLE = chunk({"role": "assistant"})


def full_tool(index: int, call_id: str, name: str = "f", arguments: str = "{}") -> dict[str, Any]:
    return tool(index, id=call_id, type="function", name=name, arguments=arguments)


def tools_frame(*entries: dict[str, Any]) -> dict[str, Any]:
    return chunk({"tool_calls": list(entries)})


def feed_all(frames: list[Any]) -> ChatCompletionStream:
    stream = ChatCompletionStream()
    for frame in frames:
        stream.feed(frame)
    return stream


# ============================================================ table 4.1 rows
