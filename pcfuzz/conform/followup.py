"""The follow-up request (the release form's ``continuation(request)``): after a turn,
the request an integration sends next must carry exactly one result per call it
released, bound by id: no result missing, none twice, none for an id it did not
release.

The rule is modelled here from the providers' request shapes, on its own (never by
calling this project's continuation builders, which tests use as an oracle):

* ``openai-responses``: ``input`` items; a result is a ``function_call_output``
  (``call_id``); a ``function_call`` item (``call_id``) is a call.
* ``anthropic-messages``: the blocks of every message's ``content``; a result is a
  ``tool_result`` (``tool_use_id``); a ``tool_use`` (``id``) is a call.
* ``gemini-interactions``: ``input`` steps; a result is a ``function_result``
  (``call_id``); a ``function_call`` (``id``) is a call.
* ``openai-chat``: ``messages``; a result is a ``role: "tool"`` message
  (``tool_call_id``); each of an assistant message's ``tool_calls`` (``id``) is a call.

A stateless request replays the conversation, so a result may answer a call of an
earlier turn: a result whose id is not a released call but answers a call of another
turn that appears earlier in the same request is history. Every other result is bound
to this turn: for a released call (counted), or for an id that was not released (a
call of this turn that never ran, or an id nothing named).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["CHECKS", "RESULTS_AT", "Binding", "check_request"]

#: The findings' names (each its own root cause and label).
CHECKS = ("duplicate_result", "missing_result", "unknown_result")
#: Where each contract's request carries its results (for messages).
RESULTS_AT = {"openai-responses": "input", "anthropic-messages": "messages",
              "gemini-interactions": "input", "openai-chat": "messages"}
#: Values looked at in one request at most (the worker bounds the copy too).
MAX_ENTRIES = 200_000


@dataclass(frozen=True)
class Binding:
    """One way the request does not bind exactly one result to each released call."""

    check: str  # one of CHECKS
    text: str


def _entries(contract: str, request: dict[str, Any]) -> Iterator[tuple[str, Any, str]]:
    """``("call" | "result", id, where)`` in request order (iterative, two levels)."""
    top = RESULTS_AT[contract]
    items = request.get(top)
    if not isinstance(items, list):
        return
    for n, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        where = f"{top}[{n}]"
        if contract == "openai-responses":
            if item.get("type") == "function_call":
                yield "call", item.get("call_id"), where
            elif item.get("type") == "function_call_output":
                yield "result", item.get("call_id"), where
        elif contract == "gemini-interactions":
            if item.get("type") == "function_call":
                yield "call", item.get("id"), where
            elif item.get("type") == "function_result":
                yield "result", item.get("call_id"), where
        elif contract == "anthropic-messages":
            content = item.get("content")
            if not isinstance(content, list):
                continue
            for m, block in enumerate(content):
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    yield "call", block.get("id"), f"{where}.content[{m}]"
                elif block.get("type") == "tool_result":
                    yield "result", block.get("tool_use_id"), f"{where}.content[{m}]"
        elif item.get("role") == "tool":
            yield "result", item.get("tool_call_id"), where
        elif item.get("role") == "assistant" and isinstance(item.get("tool_calls"), list):
            for m, call in enumerate(item["tool_calls"]):
                if isinstance(call, dict):
                    yield "call", call.get("id"), f"{where}.tool_calls[{m}]"


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else f"{value!r} (not a string id)"


def check_request(contract: str, released: list[str], request: Any,
                  turn: frozenset[str] = frozenset()) -> Binding | None:
    """``None`` when ``request`` carries exactly one result for each id of
    ``released`` (the ids of the calls released in this turn), else the first
    problem in request order (a call answered twice, a result for an id not
    released), then a call left without a result. ``turn``: the ids of every call the
    stream names, released or not (a result for one that was not released answers a
    call that never ran, never an earlier turn's)."""
    top = RESULTS_AT[contract]
    if not isinstance(request, dict) or not isinstance(request.get(top), list):
        what = ("not a JSON object" if not isinstance(request, dict)
                else f"has no {top!r} list")
        if not released:
            return None
        return Binding("missing_result",
                       f"the follow-up request is {what}, so it carries no result: call "
                       f"{released[0]!r} has none")
    wanted = set(released)
    answered: dict[str, list[str]] = {}
    earlier: set[Any] = set()
    for seen, (kind, ident, where) in enumerate(_entries(contract, request)):
        if seen >= MAX_ENTRIES:
            break
        hashable = ident if isinstance(ident, (str, int, float, bool, type(None))) else None
        if kind == "call":
            if hashable not in wanted and hashable not in turn:
                earlier.add(hashable)
            continue
        if isinstance(ident, str) and ident in wanted:
            answered.setdefault(ident, []).append(where)
            if len(answered[ident]) == 2:
                first, second = answered[ident]
                return Binding("duplicate_result",
                               f"two results for call {ident!r}: {first} and {second}")
        elif hashable is not None and hashable in earlier:
            continue  # answers a call of an earlier turn the request replays
        elif hashable is not None and hashable in turn:
            return Binding("unknown_result",
                           f"a result for call {_show(ident)} at {where}, a call of this "
                           "turn that was not released (it never ran)")
        else:
            return Binding("unknown_result",
                           f"a result for {_show(ident)} at {where}, which is no call "
                           "released in this turn (nor one the request replays before it)")
    missing = [c for c in released if c not in answered]
    if missing:
        return Binding("missing_result",
                       f"no result for call {missing[0]!r}"
                       + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                       + f" in the request's {top!r}")
    return None
