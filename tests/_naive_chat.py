"""A typical gateway's Chat Completions tool-call accumulator, and six ways it goes
wrong (tests/test_conformance_naive.py points ``pcfuzz conform`` at each).

The gateway merges ``delta.tool_calls`` fragments by ``index``, executes on
``finish_reason == "tool_calls"`` after ``[DONE]`` and reads arguments with
``json.loads`` (with hooks that make it strict). :func:`gateway` does every check the
kit's default (safety) scenarios need; each adapter below leaves out exactly one:

* ``missing_id``: a call whose id never arrived runs with ``call_id`` ``None``;
* ``empty_name``: a call without a name (or with an empty one) runs;
* ``shared_id``: two calls sharing one id both run;
* ``nan``: ``NaN`` / ``Infinity`` in the arguments are accepted (json's default);
* ``duplicate_key``: a duplicate key is accepted, the last value wins (json's default);
* ``choice_index``: every choice is merged, whatever its index.

The error check is the natural ``if chunk.get("error")``: a realistic error frame
carries an error object (``{"error": null}`` is strictness, not safety).
"""

from __future__ import annotations

import json
import math
from typing import Any

DONE = "[DONE]"
MAX_DEPTH = 512
MAX_NUMBER_CHARS = 1_000


def _strict_loads(text: str, *, reject_nan: bool, reject_duplicates: bool) -> Any:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        if reject_duplicates and len({k for k, _ in items}) != len(items):
            raise ValueError("duplicate key")
        return dict(items)

    def constant(name: str) -> float:
        raise ValueError(f"{name} is not JSON")

    def finite(literal: str) -> float:
        value = float(literal)
        if math.isinf(value):
            raise ValueError(f"{literal} overflows")
        return value

    def integer(literal: str) -> int:
        if len(literal) > MAX_NUMBER_CHARS:
            raise ValueError("number too long")
        return int(literal)

    hooks: dict[str, Any] = {"object_pairs_hook": pairs, "parse_float": finite,
                             "parse_int": integer}
    if reject_nan:
        hooks["parse_constant"] = constant
    value = json.loads(text, **hooks)
    stack = [(value, 1)]
    while stack:  # depth and lone surrogates, which json.loads lets through
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError("too deep")
        if isinstance(node, str):
            node.encode("utf-8")  # a lone surrogate raises UnicodeEncodeError
        elif isinstance(node, dict):
            stack += [(k, depth) for k in node] + [(v, depth + 1) for v in node.values()]
        elif isinstance(node, list):
            stack += [(v, depth + 1) for v in node]
    return value


def gateway(frames: list[Any], *, bug: str | None = None) -> list[dict[str, Any]]:
    """The calls to execute (raise: the stream is rejected); ``bug`` leaves out one check."""
    tools: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    done = False
    for frame in frames:
        if done:
            raise ValueError("a frame after [DONE]")
        if frame == DONE:
            done = True
            continue
        if not isinstance(frame, dict):
            raise ValueError("not a chunk")
        if frame.get("error"):
            raise RuntimeError(f"provider error: {frame['error']}")
        choices = frame.get("choices") or []
        if bug != "choice_index" and (len(choices) > 1
                                      or any(c.get("index") != 0 for c in choices)):
            raise ValueError("only choice 0 is supported")
        for choice in choices:
            reason = choice.get("finish_reason")
            if reason is not None:
                if finish is not None and reason != finish:
                    raise ValueError("finish_reason changed")
                finish = reason
            for part in (choice.get("delta") or {}).get("tool_calls") or []:
                tool = tools.setdefault(part["index"], {"id": None, "name": "", "args": None})
                if part.get("id") is not None:
                    if tool["id"] is not None and tool["id"] != part["id"]:
                        raise ValueError("tool id changed")
                    tool["id"] = part["id"]
                function = part.get("function") or {}
                tool["name"] += function.get("name") or ""
                if function.get("arguments") is not None:
                    tool["args"] = (tool["args"] or "") + function["arguments"]
    if not done:
        raise ValueError("stream ended without [DONE]")
    if finish != "tool_calls":
        return []
    calls = []
    for index in sorted(tools):
        tool = tools[index]
        if tool["id"] is None and bug != "missing_id":
            raise ValueError("a tool call without an id")
        if tool["id"] == "":
            raise ValueError("an empty tool call id")
        if not tool["name"] and bug != "empty_name":
            raise ValueError("a tool call without a name")
        if tool["args"] is None:
            raise ValueError("a tool call without arguments")
        arguments = _strict_loads(tool["args"], reject_nan=bug != "nan",
                                  reject_duplicates=bug != "duplicate_key")
        if not isinstance(arguments, dict):
            raise ValueError("arguments are not an object")
        calls.append({"call_id": tool["id"], "name": tool["name"], "arguments": arguments})
    if bug != "shared_id" and len({c["call_id"] for c in calls}) != len(calls):
        raise ValueError("two calls share an id")
    return calls


def correct(frames: list[Any]) -> list[dict[str, Any]]:
    return gateway(frames)


def missing_id(frames: list[Any]) -> list[dict[str, Any]]:
    return gateway(frames, bug="missing_id")


def empty_name(frames: list[Any]) -> list[dict[str, Any]]:
    return gateway(frames, bug="empty_name")


def shared_id(frames: list[Any]) -> list[dict[str, Any]]:
    return gateway(frames, bug="shared_id")


def nan(frames: list[Any]) -> list[dict[str, Any]]:
    return gateway(frames, bug="nan")


def duplicate_key(frames: list[Any]) -> list[dict[str, Any]]:
    return gateway(frames, bug="duplicate_key")


def choice_index(frames: list[Any]) -> list[dict[str, Any]]:
    return gateway(frames, bug="choice_index")
