"""OpenAI Chat Completions: the single-choice completion snapshot, strictly.

A sans-IO, per-attempt aggregator over Chat Completions stream frames (the decoded
``data:`` payloads: each chunk as a dict, the sentinel as the literal ``"[DONE]"``)
and a parser for the non-streaming response body. Both produce a
:class:`ChatCompletionTurn` whose snapshot (``message``, ``finish_reason``,
``response_id``, ``usage``) follows the aggregation table of the Chat Completions
fidelity design, and whose executable ``calls`` are offered only after the
terminal gate (``[DONE]``, ``finish_reason == "tool_calls"``, every call's
arguments a strict JSON object).

Every rejection is a :class:`~contracts.errors.ContractError`:
:class:`~contracts.errors.ProviderError` (an ``error`` key, whatever its value),
:class:`~contracts.errors.StreamTruncated` (``close()`` before ``[DONE]``),
:class:`~contracts.errors.ProtocolViolation` (shapes, types, unknown delta fields,
conflicts, more than one choice, frames after ``[DONE]``, incomplete tools, no
role), :class:`EmptyCompletion` (no complete tool and no content whose legacy text
projection, :func:`project_text`, is non-empty),
:class:`~contracts.errors.UnsupportedProviderState` (a non-null ``refusal`` or
legacy ``function_call``; an unknown revision),
:class:`~contracts.errors.LimitExceeded` -- all of disposition ``transient``
(another attempt may succeed) -- and, on the request side (unknown response mode,
a structured request in the ``openai`` mode, ``n`` other than 1) and for arguments
the cache codec and key refuse, :class:`~contracts.errors.InvalidArgument`
(``rejected``); a cache entry that cannot be replayed is :class:`CacheMiss` (``miss``).

Modules: ``_tables`` (the revisions, as data), ``_turn`` (value types, message
check), ``_stream`` (the parsers), ``continuation`` (the request side), ``cache``
(snapshot codec and cache key).
"""

from ..errors import CacheMiss, EmptyCompletion
from ._stream import (
    ChatCompletionStream,
    frames_from_fixture_events,
    parse_completion,
    parse_events,
)
from ._tables import (
    DONE,
    FIXTURE_DONE_EVENT,
    PROGRESS_KINDS,
    REVISION,
    REVISIONS,
    Field,
    RevisionTables,
)
from ._turn import (
    ChatCompletionSnapshot,
    ChatCompletionTurn,
    ChatToolCall,
    ProgressEvent,
    RecoveryCall,
    has_product,
    project_text,
    validate_message,
)
from .cache import CacheDeployment, cache_key, cache_key_object, decode, encode, try_decode
from .continuation import check_request

__all__ = [
    "REVISION",
    "REVISIONS",
    "RevisionTables",
    "Field",
    "DONE",
    "FIXTURE_DONE_EVENT",
    "PROGRESS_KINDS",
    "CacheDeployment",
    "CacheMiss",
    "ChatCompletionSnapshot",
    "ChatCompletionStream",
    "ChatCompletionTurn",
    "ChatToolCall",
    "EmptyCompletion",
    "ProgressEvent",
    "RecoveryCall",
    "cache_key",
    "cache_key_object",
    "check_request",
    "decode",
    "encode",
    "frames_from_fixture_events",
    "has_product",
    "parse_completion",
    "parse_events",
    "project_text",
    "try_decode",
    "validate_message",
]
