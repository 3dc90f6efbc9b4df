"""Shared FuzzedDataProvider helpers for the structure-aware fuzz targets."""

from __future__ import annotations

from typing import Any


def json_value(fdp: Any, depth: int = 0) -> Any:
    """A small JSON value drawn from ``fdp`` (containers only above depth 3)."""
    kind = fdp.ConsumeIntInRange(0, 7 if depth < 3 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return fdp.ConsumeBool()
    if kind == 2:
        return fdp.ConsumeIntInRange(-(2**40), 2**40)
    if kind == 3:
        return fdp.ConsumeRegularFloat()
    if kind in (4, 5):
        return fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 8))
    if kind == 6:
        return [json_value(fdp, depth + 1) for _ in range(fdp.ConsumeIntInRange(0, 3))]
    return {
        fdp.ConsumeUnicodeNoSurrogates(4): json_value(fdp, depth + 1)
        for _ in range(fdp.ConsumeIntInRange(0, 3))
    }


def split_text(fdp: Any, text: str, max_cuts: int = 5) -> list[str]:
    """``text`` cut into up to ``max_cuts + 1`` ordered pieces (some may be empty)."""
    parts: list[str] = []
    rest = text
    for _ in range(fdp.ConsumeIntInRange(0, max_cuts)):
        cut = fdp.ConsumeIntInRange(0, len(rest))
        parts.append(rest[:cut])
        rest = rest[cut:]
    parts.append(rest)
    return parts
