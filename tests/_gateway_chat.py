"""A gateway's Chat Completions tool-call accumulator, as a team would write it, with
its checks one flag each: the kit's tests of ``pcfuzz conform`` point it at the
accumulator with all checks (no finding), one check left out (the finding for it),
and the typical first version with five left out (every one found in one run).

The accumulator merges ``delta.tool_calls`` fragments by ``index`` and executes the
calls once ``[DONE]`` has arrived and ``finish_reason`` is ``tool_calls``, reading
arguments with ``json.loads`` made strict by hooks. Raising means "rejected".

Each adapter below is a module-level function: the kit's worker process imports it
by name (``_gateway_chat:naive``).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any

DONE = "[DONE]"

#: The checks, by the name of the bug that leaving one out makes.
BUGS = (
    "no_done_gate",           # releases without [DONE]
    "ignores_error_frames",   # an error frame does not fail the turn
    "stops_at_done",          # stops reading at [DONE]: frames after it go unnoticed
    "empty_arguments_as_object",  # arguments "" read as {}
    "last_finish_reason_wins",    # a second finish_reason replaces the first
    "missing_id",             # a call whose id never arrived runs
    "shared_id",              # two calls with one id both run
    "empty_name",             # a call with no name runs
    "non_finite",             # NaN / Infinity accepted in arguments (json's default)
    "duplicate_key",          # a duplicate key accepted, the last value wins
    "any_choice",             # every choice is merged, whatever its index
    "id_may_change",          # a second, different id for one index is ignored
)
#: The first version most gateways ship.
NAIVE = frozenset({"no_done_gate", "ignores_error_frames", "stops_at_done",
                   "last_finish_reason_wins", "id_may_change"})


def _arguments(text: str, bugs: frozenset[str]) -> Any:
    if text == "" and "empty_arguments_as_object" in bugs:
        return {}

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        if "duplicate_key" not in bugs and len({k for k, _ in items}) != len(items):
            raise ValueError("duplicate key")
        return dict(items)

    def constant(name: str) -> float:
        if "non_finite" in bugs:
            return float(name.replace("Infinity", "inf"))
        raise ValueError(f"{name} is not JSON")

    def number(literal: str) -> float:
        value = float(literal)
        if "non_finite" not in bugs and not math.isfinite(value):
            raise ValueError(f"{literal[:20]} overflows to infinity")
        return value

    def integer(literal: str) -> int:
        if len(literal) > 1_000:  # the contracts' number limit
            raise ValueError("a number of more than 1,000 characters")
        return int(literal)

    value = json.loads(text, object_pairs_hook=pairs, parse_constant=constant,
                       parse_float=number, parse_int=integer)
    stack = [(value, 1)]
    while stack:  # lone surrogates, which json.loads lets through, and the depth limit
        node, depth = stack.pop()
        if depth > 512 and isinstance(node, (dict, list)):
            raise ValueError("containers nested more than 512 levels")
        if isinstance(node, str):
            node.encode("utf-8")
        elif isinstance(node, dict):
            stack += [(item, depth + 1) for item in (*node, *node.values())]
        elif isinstance(node, list):
            stack += [(item, depth + 1) for item in node]
    return value


def gateway(frames: list[Any], bugs: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The calls to execute; raises when the stream is rejected."""
    tools: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    done = False
    for frame in frames:
        if done:
            if "stops_at_done" in bugs:
                break
            raise ValueError("a frame after [DONE]")
        if frame == DONE:
            done = True
            continue
        if not isinstance(frame, dict):
            raise ValueError("a frame that is not a chunk")
        if "error" in frame and "ignores_error_frames" not in bugs:
            raise ValueError("the provider sent an error")
        for choice in frame.get("choices") or []:
            if choice.get("index") != 0 and "any_choice" not in bugs:
                raise ValueError("a choice other than 0")
            reason = choice.get("finish_reason")
            if reason is not None:
                if finish is not None and reason != finish \
                        and "last_finish_reason_wins" not in bugs:
                    raise ValueError("finish_reason changed")
                if finish is None or "last_finish_reason_wins" in bugs:
                    finish = reason
            for part in (choice.get("delta") or {}).get("tool_calls") or []:
                tool = tools.setdefault(part["index"], {"id": None, "name": "", "args": "",
                                                         "has_args": False})
                if part.get("id") is not None:
                    if tool["id"] is not None and part["id"] != tool["id"] \
                            and "id_may_change" not in bugs:
                        raise ValueError("a call's id changed")
                    tool["id"] = tool["id"] if "id_may_change" in bugs and tool["id"] \
                        else part["id"]
                function = part.get("function") or {}
                if function.get("name") is not None:
                    tool["name"] += function["name"]
                if function.get("arguments") is not None:
                    tool["args"] += function["arguments"]
                    tool["has_args"] = True
    if not done and "no_done_gate" not in bugs:
        raise ValueError("the stream ended without [DONE]")
    if finish != "tool_calls":
        return []
    calls: list[dict[str, Any]] = []
    ids: set[str] = set()
    for index in sorted(tools):
        tool = tools[index]
        if not tool["id"] and "missing_id" not in bugs:
            raise ValueError(f"call {index} has no id")
        if tool["id"] in ids and "shared_id" not in bugs:
            raise ValueError(f"two calls share the id {tool['id']!r}")
        ids.add(tool["id"])
        if not tool["name"] and "empty_name" not in bugs:
            raise ValueError(f"call {index} has no name")
        if not tool["has_args"]:
            raise ValueError(f"call {index} has no arguments")
        arguments = _arguments(tool["args"], bugs)
        if not isinstance(arguments, dict):
            return []  # a call that is not executable: the whole turn is withheld
        calls.append({"call_id": tool["id"], "name": tool["name"], "arguments": arguments})
    return calls


def checked(frames: list[Any]) -> list[dict[str, Any]]:
    """Every check."""
    return gateway(frames)


def naive(frames: list[Any]) -> list[dict[str, Any]]:
    """The typical first version: five checks left out."""
    return gateway(frames, NAIVE)


def slow_naive(frames: list[Any]) -> list[dict[str, Any]]:
    """The first version behind a slow call (0.2 s): shrinking one finding takes
    minutes if nothing bounds it."""
    time.sleep(0.2)
    return gateway(frames, NAIVE)


def _one_bug(bug: str) -> Callable[[list[Any]], list[dict[str, Any]]]:
    def adapter(frames: list[Any]) -> list[dict[str, Any]]:
        return gateway(frames, frozenset({bug}))

    adapter.__name__ = adapter.__qualname__ = f"without_{bug}"
    return adapter


for _bug in BUGS:
    globals()[f"without_{_bug}"] = _one_bug(_bug)
