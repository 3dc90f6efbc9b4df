"""Canonical snapshot digests of parsed turns.

After parsing, every turn stores the digest of its canonical snapshot (the raw
items/blocks/steps and the identities derived from them). Continuation builders
recompute it before they copy history, call identity or an opaque block, and raise
:class:`~contracts.errors.SnapshotMutated` if it changed. This detects accidental
in-memory mutation after parsing; it is not a signature or an authenticity proof.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final

from ._values import copy_json, preview
from .errors import LimitExceeded, SnapshotMutated
from .strict_json import JSONLimits

__all__ = ["canonical_bytes", "canonical_digest", "check_digest"]


#: Bounds of the walk that precedes serialization: a snapshot may hold tool arguments
#: nested as deep as strict JSON allows (512) a few levels down, and a value budget
#: keeps a caller-built graph of shared lists (exponential when serialized) linear.
DIGEST_LIMITS: Final = JSONLimits(
    max_depth=600,
    max_string_chars=16 * 1024 * 1024,
    max_container_items=1_000_000,
    max_values=4_000_000,
)


def canonical_bytes(value: Any) -> bytes:
    """Serialize a JSON-compatible value canonically (sorted keys, no spaces, UTF-8).

    The value is first copied by the bounded, iterative :func:`~contracts._values.copy_json`
    (:data:`DIGEST_LIMITS`), so no caller-built value (a subclass whose methods raise or
    lie, shared references that expand exponentially, deep nesting) reaches
    ``json.dumps``. Raises :class:`SnapshotMutated` if the value is no longer
    JSON-compatible (a caller stored a non-JSON object or a non-finite float in the
    turn's raw data) or past a bound.
    """
    try:
        plain = copy_json(value, what="snapshot", error=SnapshotMutated, limits=DIGEST_LIMITS)
    except LimitExceeded as exc:
        # A value past the bounds cannot be a snapshot the parser produced.
        raise SnapshotMutated(f"snapshot is no longer canonical JSON: {exc.message}") from exc
    try:
        text = json.dumps(
            plain,
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
        )
    except (TypeError, ValueError, RecursionError) as exc:  # pragma: no cover - copied
        raise SnapshotMutated(
            f"snapshot is no longer canonical JSON ({type(exc).__name__})"
        ) from exc
    return text.encode("utf-8", "surrogatepass")


def canonical_digest(value: Any) -> str:
    """Return the hex SHA-256 of :func:`canonical_bytes` of ``value``."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


def check_digest(value: Any, expected: str, *, what: str = "turn") -> None:
    """Raise :class:`SnapshotMutated` unless ``value`` still has digest ``expected``."""
    if type(expected) is not str or len(expected) != 64:
        raise SnapshotMutated(
            f"recorded digest must be a 64-character hex str, got {preview(expected)}"
        )
    if type(what) is not str:
        raise SnapshotMutated(f"what must be a str, got {preview(what)}")
    actual = canonical_digest(value)
    if actual != expected:
        raise SnapshotMutated(
            f"{what[:80]} snapshot changed after parsing: digest {actual[:16]}... "
            f"!= recorded {expected[:16]}..."
        )
