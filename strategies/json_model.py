"""The JSON model without hypothesis: deep equality and an independent limit
measurement, shared by the property tests (through :mod:`.json_values`, which
re-exports them) and the ``strict-json`` fuzz target's oracle (which imports this
module so that its start-up does not import hypothesis).

Written from RFC 8259 and ``json.loads`` alone; never imports the loader's helpers or
tables, only the public ``JSONLimits`` to read limits.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pcfuzz.contracts.strict_json import JSONLimits

__all__ = ["depth_of", "limits_exceeded", "same"]


def same(a: Any, b: Any) -> bool:
    """Deep equality that also compares types (True is not 1, 1 is not 1.0), the
    sign of zero and key order. Iterative: documents may nest 512 levels."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, float):
            if x != y or math.copysign(1.0, x) != math.copysign(1.0, y):
                return False
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(x, dict):
            if list(x) != list(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif x != y:
            return False
    return True


def depth_of(value: Any) -> int:
    """Nesting depth as RFC 8259 counts it: a scalar 0, ``[]`` 1."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level + 1)
            stack.extend((child, level + 1) for child in
                         (item.values() if isinstance(item, dict) else item))
    return deepest


# --- an independent limit oracle ---------------------------------------------------


def limits_exceeded(text: str, limits: JSONLimits) -> list[str] | None:
    """The ``JSONLimits`` fields a document exceeds, measured independently of the
    loader: ``json.loads`` with hooks that see every object's pairs (duplicates
    included) and every number literal as written, then an iterative walk. None when
    ``json.loads`` itself cannot read the text (syntax, recursion, int guard)."""
    number_chars = [0]
    items = [0]

    def pairs(members: list[tuple[str, Any]]) -> dict[str, Any]:
        items[0] = max(items[0], len(members))
        strings.extend(key for key, _ in members)
        return dict(members)

    def number(literal: str) -> float:
        number_chars[0] = max(number_chars[0], len(literal))
        return 0.0

    strings: list[str] = []
    try:
        value = json.loads(
            text, object_pairs_hook=pairs, parse_int=number, parse_float=number,
            parse_constant=number,
        )
    except (ValueError, RecursionError):
        return None
    depth = values = 0
    stack = [(value, 0)]
    while stack:
        item, level = stack.pop()
        values += 1
        if isinstance(item, str):
            strings.append(item)
        elif isinstance(item, (list, dict)):
            depth = max(depth, level + 1)
            children = list(item.values()) if isinstance(item, dict) else item
            if isinstance(item, list):
                items[0] = max(items[0], len(item))
            stack.extend((child, level + 1) for child in children)
    measured = {
        "max_bytes": len(text.encode("utf-8", "surrogatepass")),
        "max_depth": depth,
        "max_string_chars": max(map(len, strings), default=0),
        "max_number_chars": number_chars[0],
        "max_container_items": items[0],
        "max_values": values,
    }
    return [name for name, amount in measured.items() if amount > getattr(limits, name)]
