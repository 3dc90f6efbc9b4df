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
from typing import Any

from .errors import SnapshotMutated

__all__ = ["canonical_bytes", "canonical_digest", "check_digest"]


def canonical_bytes(value: Any) -> bytes:
    """Serialize a JSON-compatible value canonically (sorted keys, no spaces, UTF-8).

    Raises :class:`SnapshotMutated` if the value is no longer JSON-compatible (a
    caller stored a non-JSON object or a non-finite float in the turn's raw data).
    """
    try:
        text = json.dumps(
            value,
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
        )
    except (TypeError, ValueError, RecursionError) as exc:
        raise SnapshotMutated(
            f"snapshot is no longer canonical JSON ({type(exc).__name__})"
        ) from exc
    except Exception as exc:
        # A dict/list subclass's own methods raised while being serialized.
        raise SnapshotMutated(
            f"snapshot is no longer canonical JSON: reading it raised {type(exc).__name__}"
        ) from exc
    return text.encode("utf-8", "surrogatepass")


def canonical_digest(value: Any) -> str:
    """Return the hex SHA-256 of :func:`canonical_bytes` of ``value``."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


def check_digest(value: Any, expected: str, *, what: str = "turn") -> None:
    """Raise :class:`SnapshotMutated` unless ``value`` still has digest ``expected``."""
    actual = canonical_digest(value)
    if actual != expected:
        raise SnapshotMutated(
            f"{what} snapshot changed after parsing: digest {actual[:16]}... "
            f"!= recorded {expected[:16]}..."
        )
