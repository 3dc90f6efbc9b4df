"""Strict JSON loading (interim version; the full limit-checking loader replaces it).

Rejects duplicate keys, non-finite numbers, BOMs and invalid UTF-8. Raises only
:class:`StrictJSONError` or :class:`LimitExceeded`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .errors import LimitExceeded, StrictJSONError

__all__ = ["JSONLimits", "DEFAULT_LIMITS", "loads"]


@dataclass(frozen=True, slots=True)
class JSONLimits:
    max_bytes: int = 8_000_000
    max_depth: int = 256


DEFAULT_LIMITS = JSONLimits()


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise StrictJSONError(f"duplicate object key {key!r}")
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise StrictJSONError(f"non-finite number {name}")


def loads(data: bytes | str, *, limits: JSONLimits | None = None) -> Any:
    lim = limits or DEFAULT_LIMITS
    if isinstance(data, (bytes, bytearray)):
        if len(data) > lim.max_bytes:
            raise LimitExceeded(f"document exceeds {lim.max_bytes} bytes")
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError(f"invalid UTF-8 at byte {exc.start}") from exc
    elif isinstance(data, str):
        text = data
    else:
        raise StrictJSONError(f"expected bytes or str, got {type(data).__name__}")
    if text.startswith("\ufeff"):
        raise StrictJSONError("byte order mark")
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except StrictJSONError:
        raise
    except (ValueError, RecursionError) as exc:
        raise StrictJSONError(f"invalid JSON: {exc}") from exc
