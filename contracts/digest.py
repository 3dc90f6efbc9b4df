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
from collections.abc import Callable
from typing import Any, Final

from ._values import copy_json, preview
from .errors import ContractError, InvalidArgument, LimitExceeded, SnapshotMutated
from .strict_json import DEFAULT_LIMITS, JSONLimits

__all__ = [
    "DIGEST_LIMITS",
    "canonical_bytes",
    "canonical_digest",
    "check_digest",
    "check_plain",
    "verified_snapshot",
]


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
    return _dump(plain)


def _dump(plain: Any) -> bytes:
    """The canonical bytes of a value :func:`copy_json` already made plain."""
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


#: Nesting a snapshot adds above the values it holds, each bounded by the shared depth
#: on its own: the deepest is an Anthropic citation, at
#: ``snapshot.blocks[i].citations[j]`` (four levels); a tool input sits three levels
#: down (``snapshot.calls[i][3]``).
SNAPSHOT_EXTRA_DEPTH: Final = 4

_SCALARS: Final = (str, int, float, bool, type(None))


def check_plain(value: object) -> None:
    """Raise :class:`SnapshotMutated` unless ``value``'s containers are exact, unshared
    dicts/lists and its scalars exact JSON types.

    What a parser builds always is; a subclass or a shared container in a turn was put
    there after parsing. Linear in the containers, never recursive, never calls a
    method of the value.
    """
    seen: set[int] = set()
    stack: list[object] = [value]
    while stack:
        node = stack.pop()
        if type(node) is dict or type(node) is list:
            if id(node) in seen:
                raise SnapshotMutated("turn shares a container: changed after parsing",
                                      where="turn")
            seen.add(id(node))
            stack.extend(node.values() if type(node) is dict else node)
        elif type(node) not in _SCALARS:
            raise SnapshotMutated(
                f"turn holds {preview(node)}, not a JSON value: changed after parsing",
                where="turn",
            )


def _size_limits(size: object) -> JSONLimits:
    """Bounds of a snapshot whose canonical form had ``size`` bytes at parse time
    (never looser than :data:`DIGEST_LIMITS`, which the parse-time digest passed)."""
    if type(size) is not int or size < 1:
        raise SnapshotMutated(
            "turn has no parse-time digest: it was not made by parsing", where="turn"
        )
    try:
        return JSONLimits(
            max_bytes=size,
            max_depth=min(DEFAULT_LIMITS.max_depth + SNAPSHOT_EXTRA_DEPTH,
                          DIGEST_LIMITS.max_depth),
            max_string_chars=min(size, DIGEST_LIMITS.max_string_chars),
            max_number_chars=min(DEFAULT_LIMITS.max_number_chars,
                                 DIGEST_LIMITS.max_number_chars),
            max_container_items=min(size, DIGEST_LIMITS.max_container_items),
            max_values=min(size, DIGEST_LIMITS.max_values),
        )
    except (InvalidArgument, ValueError) as exc:
        raise SnapshotMutated(
            "turn's parse-time size is not a size: it was not made by parsing", where="turn"
        ) from exc


def verified_snapshot(
    snapshot: Callable[[], object],
    digest: object,
    *,
    what: str,
    size: object = None,
    exact: bool = False,
) -> Any:
    """Return a fresh plain copy of ``snapshot()`` if it still has the parse-time ``digest``.

    The one check behind every turn's ``check_unchanged()`` and every builder's read of
    a turn. ``snapshot()`` is called (anything but a ``ContractError`` it raises means a
    swapped-in value: :class:`SnapshotMutated`); with ``exact`` its containers and
    scalars must be exact, unshared builtin types (:func:`check_plain`); it is copied by
    :func:`~contracts._values.copy_json` (nothing the caller planted runs), bounded by
    :data:`DIGEST_LIMITS` (which the parse-time digest passed), or tighter, when the
    turn recorded its canonical ``size`` at parse time, by that size (an unchanged
    snapshot has no more values, items or characters than it had bytes): past a bound
    the turn has changed. The canonical bytes of the copy must hash to ``digest``. The
    copy is exactly what the digest covers and shares nothing with the turn. Raises
    :class:`SnapshotMutated`, and :class:`InvalidArgument` for a ``what`` that is not a
    ``str`` or an ``exact`` that is not a ``bool``.
    """
    if type(what) is not str:
        raise InvalidArgument(f"what must be a str, got {preview(what)}", where="what")
    if type(exact) is not bool:
        raise InvalidArgument(f"exact must be a bool, got {preview(exact)}", where="exact")
    what = what[:80]
    if type(digest) is not str or len(digest) != 64:
        raise SnapshotMutated(
            f"{what} has no parse-time digest (got {preview(digest)}): it was not made "
            "by parsing",
            where="turn",
        )
    limits = DIGEST_LIMITS if size is None else _size_limits(size)
    try:
        value = snapshot()
        if exact:
            check_plain(value)
        plain = copy_json(value, what="turn", error=SnapshotMutated, where="turn", limits=limits)
    except LimitExceeded as exc:
        # The parse-time digest was taken within these bounds: past one, it changed.
        raise SnapshotMutated(
            f"{what} snapshot changed after parsing: {exc.message}", where="turn"
        ) from exc
    except ContractError:
        raise
    except Exception as exc:  # a swapped-in value raised: the turn is not the parsed one
        raise SnapshotMutated(
            f"{what} can no longer be rendered ({type(exc).__name__}): changed after parsing",
            where="turn",
        ) from exc
    actual = hashlib.sha256(_dump(plain)).hexdigest()
    if actual != digest:
        raise SnapshotMutated(
            f"{what} snapshot changed after parsing: digest {actual[:16]}... differs from "
            "the one recorded at parse time",
            where="turn",
        )
    return plain
