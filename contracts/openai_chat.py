"""OpenAI Chat Completions: the single-choice completion snapshot, strictly.

A sans-IO, per-attempt aggregator over Chat Completions stream frames (the decoded
``data:`` payloads: each chunk as a dict, the sentinel as the literal ``"[DONE]"``)
and a parser for the non-streaming response body. Both produce a
:class:`ChatCompletionTurn` whose snapshot (``message``, ``finish_reason``,
``response_id``, ``usage``) follows the aggregation table of the Chat Completions
fidelity design, and whose executable :attr:`ChatCompletionTurn.calls` are offered
only after the terminal gate (``[DONE]``, ``finish_reason == "tool_calls"``, every
call's arguments a strict JSON object).

Every rejection is a :class:`~contracts.errors.ContractError`:

* :class:`~contracts.errors.ProviderError`: a frame or body with a top-level
  ``error`` key (whatever its value), reported at once, no salvage.
* :class:`~contracts.errors.StreamTruncated`: ``close()`` before ``[DONE]``.
* :class:`~contracts.errors.ProtocolViolation`: wrong shapes or types, unknown delta
  or tool-delta fields, conflicting identities, more than one choice, frames after
  ``[DONE]``, an incomplete tool call, a missing ``assistant`` role.
* :class:`EmptyCompletion` (a ``ProtocolViolation``): neither non-empty content nor
  a complete tool call (reasoning alone is not a product).
* :class:`~contracts.errors.UnsupportedProviderState`: SDK-known delta fields whose
  merge semantics this contract does not implement (a non-null ``refusal`` or
  legacy ``function_call``), and a request asking for ``n`` other than 1.
* :class:`~contracts.errors.LimitExceeded`: an explicit bound was exceeded.

The known fields are module-level tables keyed by contract revision, so a later
revision can sit beside the pinned one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from . import strict_json
from ._stream import DEFAULT_STREAM_LIMITS, FragmentBuffer, Poison, StreamLimits
from .digest import canonical_digest, check_digest
from .errors import (
    ContractError,
    LimitExceeded,
    ProtocolViolation,
    ProviderError,
    StreamTruncated,
    UnsupportedProviderState,
)

__all__ = [
    "CONTRACT_REVISION",
    "DONE",
    "ChatCompletionSnapshot",
    "ChatCompletionStream",
    "ChatCompletionTurn",
    "ChatToolCall",
    "EmptyCompletion",
    "FIXTURE_DONE_EVENT",
    "ProgressEvent",
    "RecoveryCall",
    "check_request",
    "copy_json",
    "frames_from_fixture_events",
    "has_product",
    "parse_completion",
    "parse_events",
    "validate_message",
]

CONTRACT_REVISION: Final = "2026-07-21"

#: The stream sentinel, as the decoded ``data:`` payload.
DONE: Final = "[DONE]"

#: How a fixture file (whose events must all be JSON objects) writes the sentinel.
FIXTURE_DONE_EVENT: Final = {"data": "[DONE]"}

# --------------------------------------------------------------------------- tables
# Field kinds of a streamed ``choices[0].delta`` (design 4.1). A key missing here is
# an unknown delta field: its merge semantics cannot be assumed, so it fails.
# "null_only": known to the pinned SDK, accepted only as null (no merge rule here).
DELTA_FIELDS: Final[dict[str, dict[str, str]]] = {
    "2026-07-21": {
        "role": "role",
        "content": "text",
        "reasoning_content": "text",
        "tool_calls": "tool_calls",
        "refusal": "null_only",
        "function_call": "null_only",
    },
}

# Field kinds of one ``delta.tool_calls[]`` entry; unknown keys fail.
TOOL_DELTA_FIELDS: Final[dict[str, dict[str, str]]] = {
    "2026-07-21": {
        "index": "index",
        "id": "identity",
        "type": "identity",
        "function": "function",
    },
}

# The largest accepted ``delta.tool_calls[].index``: the int64 range of the wire
# format. Beyond it an index is rejected rather than rendered or bucketed.
MAX_TOOL_INDEX: Final[dict[str, int]] = {"2026-07-21": 2**63 - 1}

# Field kinds of ``delta.tool_calls[].function``; unknown keys fail.
FUNCTION_DELTA_FIELDS: Final[dict[str, dict[str, str]]] = {
    "2026-07-21": {"name": "fragment", "arguments": "fragment"},
}

# Tool call types the snapshot accepts (streamed and non-streaming).
TOOL_TYPES: Final[dict[str, frozenset[str]]] = {"2026-07-21": frozenset({"function"})}

# Final-message fields known to the pinned SDK whose semantics this contract does
# not implement: accepted only absent or null (the legacy ``function_call`` is an
# execution request; keeping it as an inert extension would silently drop it).
MESSAGE_NULL_ONLY_FIELDS: Final[dict[str, frozenset[str]]] = {
    "2026-07-21": frozenset({"function_call"}),
}

# The one role a completion message may carry.
MESSAGE_ROLES: Final[dict[str, frozenset[str]]] = {"2026-07-21": frozenset({"assistant"})}

# Finish reasons of the pinned SDK and whether each may release executable calls.
# An unknown value is kept verbatim in the snapshot and never releases calls.
FINISH_REASONS: Final[dict[str, dict[str, bool]]] = {
    "2026-07-21": {
        "stop": False,
        "length": False,
        "tool_calls": True,
        "content_filter": False,
        "function_call": False,
    },
}

# Top-level chunk fields the aggregator reads, and their kinds. Other top-level
# fields (object, created, model, system_fingerprint, service_tier, obfuscation,
# moderation, ...) are metadata outside the snapshot and are not read.
CHUNK_FIELDS: Final[dict[str, dict[str, str]]] = {
    "2026-07-21": {
        "id": "first_value",
        "choices": "choices",
        "usage": "last_object",
    },
}

# Choice fields the aggregator reads. Others (logprobs, ...) are not read.
CHOICE_FIELDS: Final[dict[str, dict[str, str]]] = {
    "2026-07-21": {"index": "choice_index", "delta": "delta", "finish_reason": "first_value"},
}

# Stream states and the frame kinds each accepts (h11-style: a miss is illegal).
STREAM_TRANSITIONS: Final[dict[str, dict[str, dict[str, str]]]] = {
    "2026-07-21": {
        "streaming": {"chunk": "streaming", "done": "done"},
        "done": {},
    },
}

# Progress kinds a frame can carry (design section 5).
PROGRESS_KINDS: Final = (
    "content",
    "reasoning_content",
    "tool_name",
    "tool_arguments",
    "tool_identity",
)

# Delta text field -> progress kind.
_TEXT_PROGRESS: Final = {"content": "content", "reasoning_content": "reasoning_content"}

# Request parameters checked before a fidelity request is sent (design 3.2).
REQUEST_CHOICE_COUNT: Final[dict[str, int]] = {"2026-07-21": 1}

# Where a request may carry ``n``: the payload itself, and the SDK's ``extra_body``
# (merged into the payload, so it may shadow or be shadowed by the top-level value).
REQUEST_CHOICE_COUNT_CONTAINERS: Final[dict[str, tuple[str, ...]]] = {
    "2026-07-21": ("", "extra_body"),
}

_MAX_JSON_DEPTH: Final = 256
# Python refuses to print integers over 4,300 digits; JSON text cannot carry them.
_MAX_INT_BITS: Final = 14_000
_MAX_ERROR_TEXT: Final = 200

_ABSENT: Final = 0
_NULL: Final = 1
_TEXT: Final = 2


class EmptyCompletion(ProtocolViolation):
    """A completed stream or body with neither non-empty content nor a complete tool.

    Distinct so a gateway can classify it as a retryable empty completion; it is a
    :class:`~contracts.errors.ProtocolViolation` for everyone else.
    """


# ------------------------------------------------------------------------- values


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    return type(value).__name__


def _key_name(key: object) -> str:
    """A field name for an error path; never calls ``str`` on a non-string key."""
    if isinstance(key, str):
        return key[:60]
    return f"<{_type_name(key)} key>"


def _show(value: object) -> str:
    """A short, safe rendering of an untrusted value for an error message."""
    if isinstance(value, str):
        return repr(value[:60]) + ("..." if len(value) > 60 else "")
    if value is None or isinstance(value, (bool, float)):
        return repr(value)
    if isinstance(value, int):
        return repr(value) if -(10**18) < value < 10**18 else f"<int of {value.bit_length()} bits>"
    return f"<{type(value).__name__}>"


def _child_path(path: str, step: str) -> str:
    # Bounded: a path never grows past about 300 characters, so building one per
    # value is constant work however long the keys or deep the nesting.
    if len(path) >= 300:
        return path if path.endswith("...") else path + "..."
    return path + step


def copy_json(value: object, *, what: str, max_depth: int = _MAX_JSON_DEPTH) -> Any:
    """Return an independent deep copy of a JSON value, iteratively.

    Accepts only ``None``, ``bool``, ``int``, finite ``float``, ``str``, ``list`` and
    ``dict`` with ``str`` keys; the copy contains only the exact builtin types.
    Raises :class:`ProtocolViolation` for anything else (naming ``what`` and the
    path) and :class:`LimitExceeded` beyond ``max_depth`` levels of nesting.
    """
    holder: list[Any] = [None]
    stack: list[tuple[object, Any, Any, int, str]] = [(value, holder, 0, 0, what)]
    while stack:
        src, parent, key, depth, path = stack.pop()
        if src is None or isinstance(src, bool):
            parent[key] = src
        elif isinstance(src, int):
            if src.bit_length() > _MAX_INT_BITS:
                raise ProtocolViolation(f"{path} is an integer too large for JSON text")
            parent[key] = int(src)
        elif isinstance(src, float):
            if not math.isfinite(src):
                raise ProtocolViolation(f"{path} is a non-finite number")
            parent[key] = float(src)
        elif isinstance(src, str):
            parent[key] = str(src)
        elif isinstance(src, dict):
            if depth >= max_depth:
                raise LimitExceeded(f"{path} nests deeper than {max_depth} levels")
            new_dict: dict[str, Any] = {}
            parent[key] = new_dict
            for k, v in src.items():
                if not isinstance(k, str):
                    raise ProtocolViolation(f"{path} has a non-string key {_type_name(k)}")
                new_dict[str(k)] = None
                stack.append((v, new_dict, str(k), depth + 1, _child_path(path, f".{k[:40]}")))
        elif isinstance(src, list):
            if depth >= max_depth:
                raise LimitExceeded(f"{path} nests deeper than {max_depth} levels")
            new_list: list[Any] = [None] * len(src)
            parent[key] = new_list
            for i, v in enumerate(src):
                stack.append((v, new_list, i, depth + 1, _child_path(path, f"[{i}]")))
        else:
            raise ProtocolViolation(f"{path} is not a JSON value: {_type_name(src)}")
    return holder[0]


def _tool_problem(tool: object, path: str, revision: str) -> str | None:
    """Why ``tool`` is not a complete function tool call, or ``None`` if it is."""
    if not isinstance(tool, dict):
        return f"{path} must be an object, got {_type_name(tool)}"
    call_id = tool.get("id")
    if not isinstance(call_id, str) or not call_id:
        return f"{path}.id must be a non-empty string, got {_type_name(call_id)}"
    tool_type = tool.get("type")
    if not isinstance(tool_type, str) or tool_type not in TOOL_TYPES[revision]:
        return f"{path}.type must be one of {sorted(TOOL_TYPES[revision])}, got {_show(tool_type)}"
    function = tool.get("function")
    if not isinstance(function, dict):
        return f"{path}.function must be an object, got {_type_name(function)}"
    name = function.get("name")
    if not isinstance(name, str) or not name:
        return f"{path}.function.name must be a non-empty string, got {_type_name(name)}"
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        return f"{path}.function.arguments must be a string, got {_type_name(arguments)}"
    return None


def validate_message(
    message: object, *, where: str = "message", revision: str = CONTRACT_REVISION
) -> None:
    """Check a final completion message (non-streaming body, cache entry, snapshot).

    Requires an object with ``role == "assistant"``; ``content`` and
    ``reasoning_content`` absent, null or strings; ``tool_calls`` absent, null or a
    list of complete function tool calls (non-empty ``id``, ``type == "function"``,
    non-empty ``function.name``, string ``function.arguments``) with unique ids.
    Extension fields are allowed. Raises :class:`ProtocolViolation` naming the path,
    and :class:`UnsupportedProviderState` for a non-null legacy ``function_call``.
    """
    if not isinstance(revision, str) or revision not in MESSAGE_ROLES:
        raise UnsupportedProviderState(f"unknown contract revision {_show(revision)}")
    if not isinstance(message, dict):
        raise ProtocolViolation(f"{where} must be an object, got {_type_name(message)}")
    role = message.get("role")
    if not isinstance(role, str) or role not in MESSAGE_ROLES[revision]:
        raise ProtocolViolation(f"{where}.role must be 'assistant', got {_show(role)}")
    for key in sorted(MESSAGE_NULL_ONLY_FIELDS[revision]):
        if message.get(key) is not None:
            raise UnsupportedProviderState(
                f"{where}.{key} is not null; its semantics are not supported"
            )
    for key in ("content", "reasoning_content"):
        value = message.get(key)
        if value is not None and not isinstance(value, str):
            raise ProtocolViolation(
                f"{where}.{key} must be a string or null, got {_type_name(value)}"
            )
    tools = message.get("tool_calls")
    if tools is None:
        return
    if not isinstance(tools, list):
        raise ProtocolViolation(f"{where}.tool_calls must be a list, got {_type_name(tools)}")
    seen: set[str] = set()
    for position, tool in enumerate(tools):
        problem = _tool_problem(tool, f"{where}.tool_calls[{position}]", revision)
        if problem is not None:
            raise ProtocolViolation(problem[:300])
        call_id = tool["id"]
        if call_id in seen:
            raise ProtocolViolation(
                f"{where}.tool_calls[{position}].id {_show(call_id)} is a duplicate tool id"
            )
        seen.add(call_id)


def has_product(message: Mapping[str, Any]) -> bool:
    """The value predicate shared by the aggregator and the cache codec.

    True when the (already validated) message has at least one tool call or a
    non-empty ``content`` string. Reasoning alone is not a product. Raises nothing.
    """
    tools = message.get("tool_calls")
    if isinstance(tools, list) and tools:
        return True
    content = message.get("content")
    return isinstance(content, str) and len(content) > 0


# -------------------------------------------------------------------------- types


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """One frame that made real progress (design section 5).

    ``frame_index`` is the 0-based index of the frame in the stream; ``kinds`` is
    the sorted tuple of what progressed (values of ``PROGRESS_KINDS``). A frame
    yields at most one event however many fields or tools progressed in it.
    """

    frame_index: int
    kinds: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChatCompletionSnapshot:
    """The single-choice completion snapshot of the design (``OpenAIChatCompletion``).

    ``message`` is a JSON dict (role, content/reasoning_content only when they
    appeared, tool_calls sorted by index without the index field, arguments
    verbatim); ``finish_reason`` and ``response_id`` are the first non-null values
    or ``None``; ``usage`` is the last non-null usage object or ``None``. Frozen
    only against rebinding: the nested JSON is mutable, and every producer hands
    out an independent copy.
    """

    message: dict[str, Any]
    finish_reason: str | None
    response_id: str | None
    usage: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        """An independent JSON dict with the four snapshot fields."""
        result: dict[str, Any] = copy_json(
            {
                "message": self.message,
                "finish_reason": self.finish_reason,
                "response_id": self.response_id,
                "usage": self.usage,
            },
            what="snapshot",
        )
        return result


@dataclass(frozen=True, slots=True)
class ChatToolCall:
    """An executable function tool call: ``call_id`` is the tool call ``id``.

    ``arguments`` is the strictly parsed JSON object of the verbatim arguments text.
    """

    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RecoveryCall:
    """A complete tool call that is NOT executable, and why.

    ``arguments_text`` is the verbatim concatenated arguments string.
    """

    call_id: str
    name: str
    arguments_text: str
    reason: str


@dataclass(frozen=True, slots=True)
class ChatCompletionTurn:
    """The result of one successful attempt.

    ``calls`` is non-empty only when the terminal gate passed (``[DONE]`` for a
    stream, ``finish_reason == "tool_calls"``, every call's arguments a strict JSON
    object); otherwise every tool call of the message is in ``recovery_calls``.
    ``progress_events`` holds one event per progressing frame (empty for a
    non-streaming body). ``digest`` is the canonical digest of the snapshot and the
    call identities, taken at the end of parsing; :meth:`verify` re-checks it.
    """

    message: dict[str, Any]
    finish_reason: str | None
    response_id: str | None
    usage: dict[str, Any] | None
    calls: tuple[ChatToolCall, ...]
    recovery_calls: tuple[RecoveryCall, ...]
    progress_events: tuple[ProgressEvent, ...]
    streamed: bool
    digest: str = field(default="")

    @property
    def snapshot(self) -> ChatCompletionSnapshot:
        """An independent copy of the completion snapshot."""
        return ChatCompletionSnapshot(
            message=copy_json(self.message, what="message"),
            finish_reason=self.finish_reason,
            response_id=self.response_id,
            usage=copy_json(self.usage, what="usage"),
        )

    def digest_input(self) -> dict[str, Any]:
        """The JSON value the digest covers."""
        return {
            "message": self.message,
            "finish_reason": self.finish_reason,
            "response_id": self.response_id,
            "usage": self.usage,
            "call_ids": [c.call_id for c in self.calls],
            "recovery_call_ids": [c.call_id for c in self.recovery_calls],
        }

    def verify(self) -> None:
        """Raise :class:`~contracts.errors.SnapshotMutated` if the snapshot changed."""
        check_digest(self.digest_input(), self.digest, what="chat completion")


def _finish_turn(
    message: dict[str, Any],
    finish_reason: str | None,
    response_id: str | None,
    usage: dict[str, Any] | None,
    progress: tuple[ProgressEvent, ...],
    streamed: bool,
    revision: str,
) -> ChatCompletionTurn:
    """Apply the product predicate and the terminal gate; build the turn."""
    if not has_product(message):
        raise EmptyCompletion(
            "empty completion: no non-empty content and no complete tool call"
            + (" (reasoning_content alone is not a product)"
               if message.get("reasoning_content") else "")
        )
    tools = message.get("tool_calls")
    tool_list: list[dict[str, Any]] = tools if isinstance(tools, list) else []
    releases = (
        finish_reason is not None and FINISH_REASONS[revision].get(finish_reason, False)
    )
    calls: list[ChatToolCall] = []
    reasons: list[str] = []
    for position, tool in enumerate(tool_list):
        if not releases:
            reasons.append(f"finish_reason is {_show(finish_reason)}, not 'tool_calls'")
            continue
        path = f"tool_calls[{position}].function.arguments"
        try:
            parsed = strict_json.loads(tool["function"]["arguments"])
        except ContractError as exc:
            reasons.append(f"{path}: {exc.message}")
            continue
        if not isinstance(parsed, dict):
            reasons.append(f"{path} is JSON {_type_name(parsed)}, not an object")
            continue
        reasons.append("")
        calls.append(ChatToolCall(tool["id"], tool["function"]["name"], parsed))
    recovery: list[RecoveryCall] = []
    if any(reasons):
        # All or nothing: a turn never releases part of its calls.
        calls = []
        recovery = [
            RecoveryCall(
                tool["id"],
                tool["function"]["name"],
                tool["function"]["arguments"],
                reason or "another call of the turn is not executable",
            )
            for tool, reason in zip(tool_list, reasons, strict=True)
        ]
    turn = ChatCompletionTurn(
        message=message,
        finish_reason=finish_reason,
        response_id=response_id,
        usage=usage,
        calls=tuple(calls),
        recovery_calls=tuple(recovery),
        progress_events=progress,
        streamed=streamed,
    )
    object.__setattr__(turn, "digest", canonical_digest(turn.digest_input()))
    return turn


# ------------------------------------------------------------------------ stream


class _ToolBucket:
    __slots__ = ("index", "call_id", "tool_type", "name", "arguments", "arguments_seen")

    def __init__(self, index: int, limits: StreamLimits) -> None:
        self.index = index
        self.call_id: str | None = None
        self.tool_type: str | None = None
        self.name = FragmentBuffer(limits.max_fragment_bytes, f"tool_calls[index={index}] name")
        self.arguments = FragmentBuffer(
            limits.max_fragment_bytes, f"tool_calls[index={index}] arguments"
        )
        self.arguments_seen = False


class _Text:
    __slots__ = ("state", "buffer")

    def __init__(self, limit: int, what: str) -> None:
        self.state = _ABSENT
        self.buffer = FragmentBuffer(limit, what)


class ChatCompletionStream:
    """Incremental aggregator for one attempt's Chat Completions stream.

    ``feed(frame)`` takes one decoded ``data:`` payload (a chunk dict, or the string
    ``"[DONE]"``) and returns the frame's :class:`ProgressEvent` or ``None``.
    ``close()`` returns the :class:`ChatCompletionTurn`. Both raise a
    :class:`~contracts.errors.ContractError` on a rejected stream (see the module
    docstring); after any error the stream is poisoned and every later call raises.
    Create one object per attempt; it holds no shared state.
    """

    def __init__(
        self,
        *,
        limits: StreamLimits = DEFAULT_STREAM_LIMITS,
        revision: str = CONTRACT_REVISION,
    ) -> None:
        if not isinstance(revision, str) or revision not in DELTA_FIELDS:
            raise UnsupportedProviderState(f"unknown contract revision {_show(revision)}")
        self._limits = limits
        self._revision = revision
        self._delta_fields = DELTA_FIELDS[revision]
        self._tool_fields = TOOL_DELTA_FIELDS[revision]
        self._function_fields = FUNCTION_DELTA_FIELDS[revision]
        self._tool_types = TOOL_TYPES[revision]
        self._max_tool_index = MAX_TOOL_INDEX[revision]
        self._roles = MESSAGE_ROLES[revision]
        self._transitions = STREAM_TRANSITIONS[revision]
        self._poison = Poison()
        self._state = "streaming"
        self._frames = 0
        self._role_seen = False
        self._texts = {
            "content": _Text(limits.max_total_fragment_bytes, "content"),
            "reasoning_content": _Text(limits.max_total_fragment_bytes, "reasoning_content"),
        }
        self._tools: dict[int, _ToolBucket] = {}
        self._tool_ids: dict[str, int] = {}
        self._argument_bytes = 0
        self._response_id: str | None = None
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None
        self._progress: list[ProgressEvent] = []

    # -- public --------------------------------------------------------------

    @property
    def done(self) -> bool:
        """Whether ``[DONE]`` has been received."""
        return self._state == "done"

    @property
    def progress_events(self) -> tuple[ProgressEvent, ...]:
        """The progress events so far, in frame order."""
        return tuple(self._progress)

    def feed(self, frame: object) -> ProgressEvent | None:
        """Aggregate one frame; return its progress event, if it made progress.

        Raises :class:`ProviderError`, :class:`ProtocolViolation`,
        :class:`UnsupportedProviderState` or :class:`LimitExceeded`; the stream is
        poisoned afterwards.
        """
        return self._poison.run(lambda: self._feed(frame))

    def close(self) -> ChatCompletionTurn:
        """Finish the attempt and return the turn.

        Raises :class:`StreamTruncated` without ``[DONE]`` (whatever was received),
        :class:`ProtocolViolation` for a missing role or an incomplete tool call,
        :class:`EmptyCompletion` when there is no product.
        """
        return self._poison.finish(self._close)

    def snapshot(self) -> dict[str, Any]:
        """The message aggregated so far, as an independent dict (never executable).

        Tools appear with whatever they have; nothing is validated for completeness.
        Raises only if the stream is poisoned.
        """
        self._poison.check()
        return self._message(require_complete=False)

    # -- frames --------------------------------------------------------------

    def _feed(self, frame: object) -> ProgressEvent | None:
        index = self._frames
        where = f"event {index}"
        if index >= self._limits.max_events:
            raise LimitExceeded(f"more than {self._limits.max_events} frames", where=where)
        self._frames = index + 1
        if isinstance(frame, str):
            if frame != DONE:
                raise ProtocolViolation(
                    f"frame is a string other than {DONE!r}: {_show(frame)}", where=where
                )
            kind = "done"
        elif isinstance(frame, dict):
            kind = "chunk"
        else:
            raise ProtocolViolation(
                f"frame must be a JSON object or {DONE!r}, got {_type_name(frame)}", where=where
            )
        following = self._transitions[self._state].get(kind)
        if following is None:
            raise ProtocolViolation(
                f"{kind} frame not allowed in state {self._state!r}"
                + (f" (nothing may follow {DONE})" if self._state == "done" else ""),
                where=where,
            )
        if kind == "chunk" and isinstance(frame, dict):
            kinds = self._chunk(frame, where)
        else:
            kinds = set()
        self._state = following
        if not kinds:
            return None
        event = ProgressEvent(index, tuple(sorted(kinds)))
        self._progress.append(event)
        return event

    def _chunk(self, frame: dict[str, Any], where: str) -> set[str]:
        if "error" in frame:
            raise ProviderError(f"provider error frame: {_error_text(frame['error'])}", where=where)
        kinds: set[str] = set()
        if "choices" not in frame:
            raise ProtocolViolation("chunk has no 'choices' field", where=where)
        response_id = frame.get("id")
        if response_id is not None:
            if not isinstance(response_id, str):
                raise ProtocolViolation(
                    f"id must be a string or null, got {_type_name(response_id)}", where=where
                )
            self._response_id = _first_value(self._response_id, response_id, "id", where)
        usage = frame.get("usage")
        if usage is not None:
            if not isinstance(usage, dict):
                raise ProtocolViolation(
                    f"usage must be an object or null, got {_type_name(usage)}", where=where
                )
            self._usage = copy_json(usage, what="usage")
        choices = frame["choices"]
        if not isinstance(choices, list):
            raise ProtocolViolation(
                f"choices must be a list, got {_type_name(choices)}", where=where
            )
        if len(choices) > 1:
            raise ProtocolViolation(
                f"choices has {len(choices)} entries; exactly one choice is supported",
                where=where,
            )
        if choices:
            self._choice(choices[0], where, kinds)
        return kinds

    def _choice(self, choice: object, where: str, kinds: set[str]) -> None:
        if not isinstance(choice, dict):
            raise ProtocolViolation(
                f"choices[0] must be an object, got {_type_name(choice)}", where=where
            )
        choice_index = choice.get("index")
        if type(choice_index) is not int or choice_index != 0:
            raise ProtocolViolation(
                f"choices[0].index must be the integer 0, got {_type_name(choice_index)} "
                f"{_show(choice_index)}",
                where=where,
            )
        if "delta" not in choice:
            raise ProtocolViolation("choices[0].delta is missing", where=where)
        delta = choice["delta"]
        if not isinstance(delta, dict):
            raise ProtocolViolation(
                f"choices[0].delta must be an object, got {_type_name(delta)}", where=where
            )
        finish = choice.get("finish_reason")
        if finish is not None:
            if not isinstance(finish, str):
                raise ProtocolViolation(
                    f"choices[0].finish_reason must be a string or null, got {_type_name(finish)}",
                    where=where,
                )
            self._finish_reason = _first_value(
                self._finish_reason, finish, "choices[0].finish_reason", where
            )
        for key, value in delta.items():
            field_kind = self._delta_fields.get(key) if isinstance(key, str) else None
            if field_kind is None:
                raise ProtocolViolation(
                    f"choices[0].delta.{_key_name(key)} is an unknown delta field "
                    "(its merge semantics cannot be assumed)",
                    where=where,
                )
            if field_kind == "text":
                self._text(key, value, where, kinds)
            elif field_kind == "role":
                self._role(value, where)
            elif field_kind == "tool_calls":
                self._tool_calls(value, where, kinds)
            elif value is not None:  # "null_only"
                raise UnsupportedProviderState(
                    f"choices[0].delta.{key} is not null; its semantics are not supported",
                    where=where,
                )

    def _text(self, key: str, value: object, where: str, kinds: set[str]) -> None:
        text = self._texts[key]
        if value is None:
            if text.state == _ABSENT:
                text.state = _NULL
            return
        if not isinstance(value, str):
            raise ProtocolViolation(
                f"choices[0].delta.{key} must be a string or null, got {_type_name(value)}",
                where=where,
            )
        text.state = _TEXT
        if value:
            text.buffer.append(value)
            kinds.add(_TEXT_PROGRESS[key])

    def _role(self, value: object, where: str) -> None:
        if value is None:
            return
        if not isinstance(value, str) or value not in self._roles:
            raise ProtocolViolation(
                f"choices[0].delta.role must be 'assistant', got {_show(value)}", where=where
            )
        self._role_seen = True

    def _tool_calls(self, value: object, where: str, kinds: set[str]) -> None:
        if value is None:
            return
        if not isinstance(value, list):
            raise ProtocolViolation(
                f"choices[0].delta.tool_calls must be a list, got {_type_name(value)}",
                where=where,
            )
        for position, entry in enumerate(value):
            self._tool_delta(entry, f"choices[0].delta.tool_calls[{position}]", where, kinds)

    def _tool_delta(self, entry: object, path: str, where: str, kinds: set[str]) -> None:
        if not isinstance(entry, dict):
            raise ProtocolViolation(
                f"{path} must be an object, got {_type_name(entry)}", where=where
            )
        for key in entry:
            if not isinstance(key, str) or key not in self._tool_fields:
                raise ProtocolViolation(
                    f"{path}.{_key_name(key)} is an unknown tool-delta field", where=where
                )
        tool_index = entry.get("index")
        if type(tool_index) is not int or not 0 <= tool_index <= self._max_tool_index:
            raise ProtocolViolation(
                f"{path}.index must be an integer from 0 to {self._max_tool_index}, "
                f"got {_type_name(tool_index)} {_show(tool_index)}",
                where=where,
            )
        bucket = self._tools.get(tool_index)
        if bucket is None:
            if len(self._tools) >= self._limits.max_items:
                raise LimitExceeded(
                    f"more than {self._limits.max_items} tool calls", where=where
                )
            bucket = _ToolBucket(tool_index, self._limits)
            self._tools[tool_index] = bucket
        call_id = entry.get("id")
        if call_id is not None:
            if not isinstance(call_id, str) or not call_id:
                raise ProtocolViolation(
                    f"{path}.id must be a non-empty string or null, got {_show(call_id)}",
                    where=where,
                )
            if bucket.call_id is None:
                owner = self._tool_ids.get(call_id)
                if owner is not None:
                    raise ProtocolViolation(
                        f"{path}.id {_show(call_id)} is a duplicate tool id "
                        f"(already used by index {owner})",
                        where=where,
                    )
                bucket.call_id = call_id
                self._tool_ids[call_id] = tool_index
                kinds.add("tool_identity")
            elif bucket.call_id != call_id:
                raise ProtocolViolation(
                    f"{path}.id {_show(call_id)} conflicts with {_show(bucket.call_id)} "
                    f"for index {tool_index}",
                    where=where,
                )
        tool_type = entry.get("type")
        if tool_type is not None:
            if not isinstance(tool_type, str) or tool_type not in self._tool_types:
                raise ProtocolViolation(
                    f"{path}.type must be 'function' or null, got {_show(tool_type)}",
                    where=where,
                )
            if bucket.tool_type is None:
                bucket.tool_type = tool_type
                kinds.add("tool_identity")
            elif bucket.tool_type != tool_type:  # unreachable with one known type
                raise ProtocolViolation(f"{path}.type conflicts", where=where)
        function = entry.get("function")
        if function is None:
            return
        if not isinstance(function, dict):
            raise ProtocolViolation(
                f"{path}.function must be an object or null, got {_type_name(function)}",
                where=where,
            )
        for key in function:
            if not isinstance(key, str) or key not in self._function_fields:
                raise ProtocolViolation(
                    f"{path}.function.{_key_name(key)} is an unknown tool-delta field",
                    where=where,
                )
        name = function.get("name")
        if name is not None:
            if not isinstance(name, str):
                raise ProtocolViolation(
                    f"{path}.function.name must be a string or null, got {_type_name(name)}",
                    where=where,
                )
            if name:
                bucket.name.append(name)
                kinds.add("tool_name")
        arguments = function.get("arguments")
        if arguments is not None:
            if not isinstance(arguments, str):
                raise ProtocolViolation(
                    f"{path}.function.arguments must be a string or null, "
                    f"got {_type_name(arguments)}",
                    where=where,
                )
            bucket.arguments_seen = True
            if arguments:
                size = bucket.arguments.append(arguments)
                self._argument_bytes += size
                if self._argument_bytes > self._limits.max_total_fragment_bytes:
                    raise LimitExceeded(
                        f"tool arguments exceed {self._limits.max_total_fragment_bytes} "
                        "bytes in total",
                        where=where,
                    )
                kinds.add("tool_arguments")

    # -- end -----------------------------------------------------------------

    def _message(self, *, require_complete: bool) -> dict[str, Any]:
        message: dict[str, Any] = {}
        if self._role_seen:
            message["role"] = "assistant"
        elif require_complete:
            raise ProtocolViolation("message has no role: 'assistant' never appeared")
        for key, text in self._texts.items():
            if text.state == _TEXT:
                message[key] = text.buffer.text()
            elif text.state == _NULL:
                message[key] = None
        if self._tools:
            tools: list[dict[str, Any]] = []
            for tool_index in sorted(self._tools):
                bucket = self._tools[tool_index]
                if require_complete:
                    _check_bucket(bucket)
                function: dict[str, Any] = {}
                if bucket.name.size or require_complete:
                    function["name"] = bucket.name.text()
                if bucket.arguments_seen:
                    function["arguments"] = bucket.arguments.text()
                tool: dict[str, Any] = {}
                if bucket.call_id is not None:
                    tool["id"] = bucket.call_id
                if bucket.tool_type is not None:
                    tool["type"] = bucket.tool_type
                tool["function"] = function
                tools.append(tool)
            message["tool_calls"] = tools
        return message

    def _close(self) -> ChatCompletionTurn:
        if self._state != "done":
            raise StreamTruncated(
                f"stream ended without {DONE} after {self._frames} frames; "
                "nothing is salvaged"
            )
        message = self._message(require_complete=True)
        return _finish_turn(
            message,
            self._finish_reason,
            self._response_id,
            self._usage,
            tuple(self._progress),
            True,
            self._revision,
        )


def _check_bucket(bucket: _ToolBucket) -> None:
    path = f"tool_calls[index={bucket.index}]"
    if bucket.call_id is None:
        raise ProtocolViolation(f"incomplete tool call: {path}.id never appeared")
    if bucket.tool_type is None:
        raise ProtocolViolation(f"incomplete tool call: {path}.type never appeared")
    if not bucket.name.size:
        raise ProtocolViolation(f"incomplete tool call: {path}.function.name is empty")
    if not bucket.arguments_seen:
        raise ProtocolViolation(
            f"incomplete tool call: {path}.function.arguments never appeared"
        )


def _first_value(current: str | None, value: str, what: str, where: str) -> str:
    if current is None:
        return value
    if current != value:
        raise ProtocolViolation(
            f"{what} {_show(value)} conflicts with the first value {_show(current)}",
            where=where,
        )
    return current


def _error_text(error: object) -> str:
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            return message[:_MAX_ERROR_TEXT]
        return "error object" if error else "empty error object"
    if isinstance(error, str):
        return error[:_MAX_ERROR_TEXT]
    return f"error is {_type_name(error)}"


def parse_events(
    frames: Iterable[object],
    *,
    limits: StreamLimits = DEFAULT_STREAM_LIMITS,
    revision: str = CONTRACT_REVISION,
) -> ChatCompletionTurn:
    """Aggregate a whole stream of decoded frames (chunk dicts and ``"[DONE]"``).

    Equivalent to feeding every frame to a :class:`ChatCompletionStream` and
    closing it. Raises what ``feed``/``close`` raise.
    """
    stream = ChatCompletionStream(limits=limits, revision=revision)
    feed = stream.feed
    try:
        iterator = iter(frames)
    except TypeError as exc:
        raise ProtocolViolation("frames must be an iterable") from exc
    for frame in iterator:
        feed(frame)
    return stream.close()


def frames_from_fixture_events(events: Iterable[object]) -> list[object]:
    """Map fixture events to stream frames: :data:`FIXTURE_DONE_EVENT` becomes
    :data:`DONE`, every other event is passed through unchanged (the aggregator
    validates it). Raises :class:`ProtocolViolation` if ``events`` is not iterable.
    """
    try:
        return [DONE if event == FIXTURE_DONE_EVENT else event for event in events]
    except TypeError as exc:
        raise ProtocolViolation("fixture events must be an iterable") from exc


# ------------------------------------------------------------- non-streaming body


def parse_completion(
    body: object,
    *,
    revision: str = CONTRACT_REVISION,
) -> ChatCompletionTurn:
    """Parse a non-streaming ``chat.completion`` body into a turn.

    Requires an object without a top-level ``error`` key (else
    :class:`ProviderError`), exactly one choice whose ``index``, when present, is
    the integer 0, and a message accepted by :func:`validate_message`. The message
    is copied with its extension fields. ``finish_reason``/``id`` must be strings or
    null, ``usage`` an object or null. Raises :class:`ProtocolViolation`,
    :class:`EmptyCompletion` or :class:`LimitExceeded`.
    """
    if not isinstance(revision, str) or revision not in DELTA_FIELDS:
        raise UnsupportedProviderState(f"unknown contract revision {_show(revision)}")
    if not isinstance(body, dict):
        raise ProtocolViolation(f"body must be a JSON object, got {_type_name(body)}")
    if "error" in body:
        raise ProviderError(f"provider error body: {_error_text(body['error'])}")
    choices = body.get("choices")
    if not isinstance(choices, list):
        raise ProtocolViolation(f"choices must be a list, got {_type_name(choices)}")
    if len(choices) != 1:
        raise ProtocolViolation(
            f"choices has {len(choices)} entries; exactly one choice is required"
        )
    choice = choices[0]
    if not isinstance(choice, dict):
        raise ProtocolViolation(f"choices[0] must be an object, got {_type_name(choice)}")
    if "index" in choice:
        choice_index = choice["index"]
        if type(choice_index) is not int or choice_index != 0:
            raise ProtocolViolation(
                f"choices[0].index must be the integer 0 when present, "
                f"got {_type_name(choice_index)}"
            )
    if "message" not in choice:
        raise ProtocolViolation("choices[0].message is missing")
    validate_message(choice["message"], where="choices[0].message", revision=revision)
    message: dict[str, Any] = copy_json(choice["message"], what="choices[0].message")
    finish = choice.get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        raise ProtocolViolation(
            f"choices[0].finish_reason must be a string or null, got {_type_name(finish)}"
        )
    response_id = body.get("id")
    if response_id is not None and not isinstance(response_id, str):
        raise ProtocolViolation(f"id must be a string or null, got {_type_name(response_id)}")
    usage = body.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise ProtocolViolation(f"usage must be an object or null, got {_type_name(usage)}")
    usage_copy: dict[str, Any] | None = copy_json(usage, what="usage")
    return _finish_turn(message, finish, response_id, usage_copy, (), False, revision)


# ------------------------------------------------------------------ request side


def check_request(request: object, *, revision: str = CONTRACT_REVISION) -> None:
    """Check the request-side choice count of a fidelity request (design 3.2).

    ``n`` must be absent or the strict integer 1 (``True``, ``1.0``, ``null`` and
    every other value are rejected), both in the payload and in an ``extra_body``
    object (checked even when the other value would shadow it; a null
    ``extra_body`` is no extra body). Raises
    :class:`ProtocolViolation` if the request or its ``extra_body`` is not an
    object, :class:`UnsupportedProviderState` for another ``n``.
    """
    if not isinstance(revision, str) or revision not in REQUEST_CHOICE_COUNT:
        raise UnsupportedProviderState(f"unknown contract revision {_show(revision)}")
    if not isinstance(request, Mapping):
        raise ProtocolViolation(f"request must be an object, got {_type_name(request)}")
    wanted = REQUEST_CHOICE_COUNT[revision]
    for container_key in REQUEST_CHOICE_COUNT_CONTAINERS[revision]:
        if not container_key:
            container: object = request
            path = "n"
        elif request.get(container_key) is not None:  # null: the SDK's "no extra body"
            container = request[container_key]
            path = f"{container_key}.n"
            if not isinstance(container, Mapping):
                raise ProtocolViolation(
                    f"request {container_key} must be an object, got {_type_name(container)}",
                    where=container_key,
                )
        else:
            continue
        if not isinstance(container, Mapping) or "n" not in container:
            continue
        n = container["n"]
        if type(n) is not int or n != wanted:
            raise UnsupportedProviderState(
                f"request {path} must be absent or the integer {wanted}, "
                f"got {_type_name(n)} {_show(n)}",
                where=path,
            )
