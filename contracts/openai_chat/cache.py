"""Cache codec and cache identity for OpenAI Chat Completions snapshots (design 6).

:func:`encode` serializes a :class:`ChatCompletionSnapshot` into a self-describing
cache entry; :func:`decode` validates an entry and rebuilds the snapshot, or raises
:class:`~contracts.errors.CacheMiss`. Decoding applies the same message checks and
value predicate as the aggregator (:func:`validate_message`, :func:`has_product`):
a missing, null, malformed or product-less entry is a miss, never a fabricated
success. Decoded snapshots are fresh objects that share nothing with the entry or
with other decodes.

:func:`cache_key` derives the key from a caller-supplied request identity (a JSON
value: messages, tools, sampling and source fingerprints as the gateway defines
them). The response mode enters the key only when it is not the default ``"text"``,
so the default key is byte-identical to the key computed without a mode, and the
two modes never share a key.
"""

from __future__ import annotations

import json
from typing import Any, Final

from .. import strict_json
from .._values import copy_json, preview
from ..digest import canonical_digest
from ..errors import CacheMiss, ContractError, ProtocolViolation
from ._tables import REVISION, REVISIONS
from ._turn import ChatCompletionSnapshot, has_product, validate_message

__all__ = [
    "CACHE_FORMAT",
    "DEFAULT_RESPONSE_MODE",
    "RESPONSE_MODES",
    "CacheMiss",
    "cache_key",
    "cache_key_object",
    "decode",
    "encode",
    "try_decode",
]

#: The entry format tag; an entry with another tag is a miss.
CACHE_FORMAT: Final = "pcfuzz-openai-chat-cache/1"

#: Response modes of a chat request (of the default revision); the first is the
#: default (legacy text) mode.
RESPONSE_MODES: Final = REVISIONS[REVISION].response_modes
DEFAULT_RESPONSE_MODE: Final = RESPONSE_MODES[0]

# Exact key sets of an entry and of its completion object.
_ENTRY_KEYS: Final = frozenset({"format", "completion"})
_COMPLETION_KEYS: Final = frozenset({"message", "finish_reason", "response_id", "usage"})


def _check_snapshot(snapshot: ChatCompletionSnapshot) -> None:
    validate_message(snapshot.message, where="completion.message")
    if not has_product(snapshot.message):
        raise ProtocolViolation(
            "message has no product (no non-empty content, no tool call)",
            where="completion.message",
        )
    for name in ("finish_reason", "response_id"):
        value = getattr(snapshot, name)
        if value is not None and type(value) is not str:
            raise ProtocolViolation(
                f"{name} must be a string or null, got {preview(value)}", where=f"completion.{name}"
            )
    if snapshot.usage is not None and type(snapshot.usage) is not dict:
        raise ProtocolViolation(
            f"usage must be an object or null, got {preview(snapshot.usage)}",
            where="completion.usage",
        )


def encode(snapshot: ChatCompletionSnapshot) -> bytes:
    """Serialize a valid snapshot to UTF-8 JSON bytes (key order preserved).

    Only a snapshot the aggregator could have produced is written: raises
    :class:`~contracts.errors.ProtocolViolation` for a non-snapshot, an invalid
    message, a message without a product, non-JSON values, text that is not UTF-8
    encodable (lone surrogates) or an entry :func:`decode` would not accept, and
    :class:`~contracts.errors.LimitExceeded` past the shared JSON bounds.
    """
    if type(snapshot) is not ChatCompletionSnapshot:
        raise ProtocolViolation(
            f"expected a ChatCompletionSnapshot, got {preview(snapshot)}", where="snapshot"
        )
    _check_snapshot(snapshot)
    entry = {"format": CACHE_FORMAT, "completion": snapshot.to_dict()}
    # The copy holds only exact JSON types within the shared bounds, and no lone
    # surrogate, so this cannot fail.
    data = json.dumps(
        entry, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    ).encode("utf-8")
    # The writer checks with the reader: an entry that would be a miss is refused
    # instead of written.
    try:
        decode(data)
    except CacheMiss as exc:
        raise ProtocolViolation(
            f"snapshot would not decode from the cache: {exc.message}", where=exc.where
        ) from exc
    return data


def decode(data: bytes | str) -> ChatCompletionSnapshot:
    """Validate a cache entry and return a fresh snapshot.

    Raises :class:`~contracts.errors.CacheMiss` (saying why) for anything that is
    not a complete, valid entry of :data:`CACHE_FORMAT` with a product: invalid
    JSON (or not ``bytes``/``str``), a wrong container or format tag, missing/extra
    keys, a null or malformed completion, an invalid message or tool, or neither a
    complete tool nor non-empty content.
    """
    try:
        entry = strict_json.loads(data)
    except ContractError as exc:
        raise CacheMiss(f"entry is not strict JSON: {exc.message}", where=exc.where) from exc
    if type(entry) is not dict or set(entry) != _ENTRY_KEYS:
        raise CacheMiss("entry must be an object with exactly 'format' and 'completion'",
                        where="entry")
    if entry["format"] != CACHE_FORMAT:
        raise CacheMiss(f"entry format is not {CACHE_FORMAT!r}", where="entry.format")
    completion = entry["completion"]
    if type(completion) is not dict or set(completion) != _COMPLETION_KEYS:
        raise CacheMiss(
            "completion must be an object with exactly message, finish_reason, "
            "response_id and usage",
            where="completion",
        )
    message = completion["message"]
    finish_reason = completion["finish_reason"]
    response_id = completion["response_id"]
    usage = completion["usage"]
    if finish_reason is not None and type(finish_reason) is not str:
        raise CacheMiss("finish_reason must be a string or null", where="completion.finish_reason")
    if response_id is not None and type(response_id) is not str:
        raise CacheMiss("response_id must be a string or null", where="completion.response_id")
    if usage is not None and type(usage) is not dict:
        raise CacheMiss("usage must be an object or null", where="completion.usage")
    try:
        validate_message(message, where="completion.message")
    except ContractError as exc:
        raise CacheMiss(exc.message, where=exc.where) from exc
    if not has_product(message):
        raise CacheMiss("message has no product: not replayed as a success",
                        where="completion.message")
    return ChatCompletionSnapshot(
        message=message, finish_reason=finish_reason, response_id=response_id, usage=usage
    )


def try_decode(data: bytes | str) -> ChatCompletionSnapshot | None:
    """:func:`decode`, with ``None`` for a miss. Raises nothing else."""
    try:
        return decode(data)
    except CacheMiss:
        return None


def cache_key_object(
    identity: object, *, response_mode: str = DEFAULT_RESPONSE_MODE
) -> dict[str, Any]:
    """The JSON object a cache key is the digest of.

    ``{"request": identity}`` for the default mode, plus ``"response_mode"`` for any
    other known mode. Raises :class:`~contracts.errors.ProtocolViolation` for an
    unknown mode or an identity that is not a JSON value with string keys and
    finite numbers, :class:`~contracts.errors.LimitExceeded` past the shared JSON
    bounds.
    """
    if type(response_mode) is not str or response_mode not in RESPONSE_MODES:
        raise ProtocolViolation(
            f"unknown response mode {preview(response_mode)} (known: {', '.join(RESPONSE_MODES)})",
            where="response_mode",
        )
    key: dict[str, Any] = {"request": copy_json(identity, what="identity", where="identity")}
    if response_mode != DEFAULT_RESPONSE_MODE:
        key["response_mode"] = response_mode
    return key


def cache_key(identity: object, *, response_mode: str = DEFAULT_RESPONSE_MODE) -> str:
    """Hex SHA-256 of the canonical JSON of :func:`cache_key_object`.

    Raises what :func:`cache_key_object` raises.
    """
    return canonical_digest(cache_key_object(identity, response_mode=response_mode))
