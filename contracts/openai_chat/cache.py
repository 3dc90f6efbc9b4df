"""Cache codec and cache identity for OpenAI Chat Completions snapshots (design 6).

:func:`encode` serializes a :class:`ChatCompletionSnapshot` into a self-describing
cache entry; :func:`decode` validates an entry and rebuilds the snapshot, or raises
:class:`~contracts.errors.CacheMiss`. Decoding applies the same message checks and
value predicate as the aggregator (:func:`validate_message`, :func:`has_product`):
a missing, null, malformed or product-less entry is a miss, never a fabricated
success. Decoded snapshots are fresh objects that share nothing with the entry or
with other decodes.

:func:`cache_key` derives the key from a request body and the deployment's parts
(:class:`CacheDeployment`) with the design's dimensions: the sampling/source
fingerprint (every answer-relevant request field), the digest of every message,
the deployment's tenant prefix, namespace, salt and epoch, and the response mode
only when it is not the default ``"text"`` (so the default key is byte-identical to
the key computed without a mode, and the two modes never share a key).

Refusals of the writer and of the key are :class:`~contracts.errors.InvalidArgument`
(disposition ``rejected``); a reader's refusal is :class:`CacheMiss` (``miss``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from .. import strict_json
from .._kinds import INT64_MAX
from .._values import copy_json, preview
from ..digest import canonical_digest
from ..errors import CacheMiss, ContractError, InvalidArgument
from ._tables import REVISION, REVISIONS
from ._turn import ChatCompletionSnapshot, has_product, tables_for, validate_message
from .continuation import check_response_mode

__all__ = [
    "CACHE_FORMAT",
    "CacheDeployment",
    "DEFAULT_RESPONSE_MODE",
    "MAX_DEPLOYMENT_CHARS",
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
# The SDK's extra-body field, merged into the payload it is sent with.
_EXTRA_BODY: Final = "extra_body"


def _check_snapshot(snapshot: ChatCompletionSnapshot) -> None:
    validate_message(snapshot.message, where="completion.message")
    if not has_product(snapshot.message):
        raise InvalidArgument(
            "message has no product (no complete tool call, no content with a "
            "non-empty text projection)",
            where="completion.message",
        )
    for name in ("finish_reason", "response_id"):
        value = getattr(snapshot, name)
        if value is not None and type(value) is not str:
            raise InvalidArgument(
                f"{name} must be a string or null, got {preview(value)}", where=f"completion.{name}"
            )
    if snapshot.usage is not None and type(snapshot.usage) is not dict:
        raise InvalidArgument(
            f"usage must be an object or null, got {preview(snapshot.usage)}",
            where="completion.usage",
        )


def encode(snapshot: ChatCompletionSnapshot) -> bytes:
    """Serialize a valid snapshot to UTF-8 JSON bytes (key order preserved).

    Only a snapshot the aggregator could have produced is written: raises
    :class:`~contracts.errors.InvalidArgument` (disposition ``rejected``: the
    caller's snapshot can never be written; design 6 makes a failed write a
    warning, never a failed call) for a non-snapshot, an invalid message, a message
    without a product (the one shared predicate, :func:`has_product`), non-JSON
    values, text that is not UTF-8 encodable (lone surrogates), values past the
    shared JSON bounds, or an entry :func:`decode` would not accept.
    """
    if type(snapshot) is not ChatCompletionSnapshot:
        raise InvalidArgument(
            f"expected a ChatCompletionSnapshot, got {preview(snapshot)}", where="snapshot"
        )
    try:
        _check_snapshot(snapshot)
        entry = {"format": CACHE_FORMAT, "completion": snapshot.to_dict()}
    except InvalidArgument:
        raise
    except ContractError as exc:
        raise InvalidArgument(exc.message, where=exc.where) from exc
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
        raise InvalidArgument(
            f"snapshot would not decode from the cache: {exc.message}", where=exc.where
        ) from exc
    return data


def decode(data: bytes | str) -> ChatCompletionSnapshot:
    """Validate a cache entry and return a fresh snapshot.

    Raises :class:`~contracts.errors.CacheMiss` (saying why) for anything that is
    not a complete, valid entry of :data:`CACHE_FORMAT` with a product: invalid
    JSON (or not ``bytes``/``str``), a wrong container or format tag, missing/extra
    keys, a null or malformed completion, an invalid message or tool, or neither a
    complete tool nor content with a non-empty text projection (the one shared
    predicate, :func:`has_product`).
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


@dataclass(frozen=True, slots=True)
class CacheDeployment:
    """The deployment's parts of every cache key (design 6).

    ``namespace`` and ``salt`` are what an operator migrates to abandon old entries
    (e.g. text entries poisoned before the error-frame fix); ``tenant_prefix`` (the
    literal prefix of every key, so a backend can scope a tenant) and ``epoch`` are
    kept across such a migration. Strings of at most :data:`MAX_DEPLOYMENT_CHARS`
    characters without lone surrogates; ``epoch`` an ``int`` from 0 to 2^63-1.
    """

    namespace: str
    salt: str
    tenant_prefix: str = ""
    epoch: int = 0


#: Characters one deployment string may have.
MAX_DEPLOYMENT_CHARS: Final = 1_000


def _check_deployment(deployment: object) -> dict[str, Any]:
    if type(deployment) is not CacheDeployment:
        raise InvalidArgument(
            f"deployment must be a CacheDeployment, got {preview(deployment)}", where="deployment"
        )
    parts: dict[str, Any] = {}
    for name in ("tenant_prefix", "namespace", "salt"):
        value = getattr(deployment, name)
        if type(value) is not str or len(value) > MAX_DEPLOYMENT_CHARS:
            raise InvalidArgument(
                f"{name} must be a string of at most {MAX_DEPLOYMENT_CHARS} characters, "
                f"got {preview(value)}",
                where=f"deployment.{name}",
            )
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidArgument(f"{name} holds a lone surrogate",
                                  where=f"deployment.{name}") from None
        parts[name] = value
    epoch = deployment.epoch
    if type(epoch) is not int or not 0 <= epoch <= INT64_MAX:
        raise InvalidArgument(
            f"epoch must be an integer from 0 to {INT64_MAX}, got {preview(epoch)}",
            where="deployment.epoch",
        )
    parts["epoch"] = epoch
    return parts


def _answer_fields(request: dict[str, Any], ignored: frozenset[str]) -> dict[str, Any]:
    """A copied request without ``messages`` and the ignored fields, which are also
    removed inside an ``extra_body`` object (the SDK merges it into the payload); an
    ``extra_body`` that is then null or empty is no extra body."""
    fields: dict[str, Any] = {}
    for key, value in request.items():
        if key in ignored or key == "messages":
            continue
        if key == _EXTRA_BODY:
            if type(value) is dict:
                value = {k: v for k, v in value.items() if k not in ignored}
            if value is None or (type(value) is dict and not value):
                continue  # null or {}: the SDK sends no extra body
        fields[key] = value
    return fields


def cache_key_object(
    request: object,
    *,
    deployment: CacheDeployment,
    response_mode: str = DEFAULT_RESPONSE_MODE,
) -> dict[str, Any]:
    """The JSON object a cache key is the digest of (design 6).

    ``request`` is the Chat Completions request body (a ``dict`` with string keys and
    a ``messages`` array). The object has exactly these dimensions:

    - ``"sampling"``: every request field but ``messages`` -- model, tools,
      tool_choice, the raw reasoning effort, response_format, temperature and every
      other sampling parameter, and unknown fields (an unknown field might change
      the answer, so it splits the key) -- except the revision's
      ``cache_key_ignored_fields`` (``stream``, ``stream_options``, ``user``,
      ``metadata``, ``store``, ``prompt_cache_key``, ``safety_identifier``), which
      are removed at the top level and inside an ``extra_body`` object;
    - ``"messages"``: the canonical digest of the whole ``messages`` array, every
      field of every message (assistant ``tool_calls``, tool ``tool_call_id``,
      ``reasoning_content``, extension fields) included;
    - ``"deployment"``: the four :class:`CacheDeployment` parts;
    - ``"response_mode"``: only when it is not the default ``"text"``, so the
      default key is byte-identical to the key computed without a mode.

    Raises :class:`~contracts.errors.InvalidArgument` (disposition ``rejected``) for
    an unknown mode, a deployment that is not a valid :class:`CacheDeployment`, a
    request that is not such an object, or a value that is not JSON (string keys,
    finite numbers, no lone surrogates, within the shared JSON bounds).
    """
    tables = tables_for(REVISION)
    mode = check_response_mode(response_mode, tables)
    parts = _check_deployment(deployment)
    if type(request) is not dict:
        raise InvalidArgument(
            f"request must be a JSON object (dict), got {preview(request)}", where="request"
        )
    try:
        copied = copy_json(request, what="request", where="request")
    except ContractError as exc:
        raise InvalidArgument(exc.message, where=exc.where) from exc
    messages = copied.get("messages")
    if type(messages) is not list:
        raise InvalidArgument(
            f"request.messages must be an array, got {preview(messages)}", where="request.messages"
        )
    key: dict[str, Any] = {
        "deployment": parts,
        "messages": canonical_digest(messages),
        "sampling": _answer_fields(copied, tables.cache_key_ignored_fields),
    }
    if mode != DEFAULT_RESPONSE_MODE:
        key["response_mode"] = mode
    return key


def cache_key(
    request: object,
    *,
    deployment: CacheDeployment,
    response_mode: str = DEFAULT_RESPONSE_MODE,
) -> str:
    """``deployment.tenant_prefix`` followed by the hex SHA-256 of the canonical JSON
    of :func:`cache_key_object`. Raises what :func:`cache_key_object` raises."""
    key = cache_key_object(request, deployment=deployment, response_mode=response_mode)
    return str(key["deployment"]["tenant_prefix"]) + canonical_digest(key)
