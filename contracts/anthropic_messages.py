"""Anthropic Messages streaming contract (wire-SSE envelope projection).

Input is one event per SSE event, projected as ``{"event": name, "data": {...}}``:
the SSE event name and its JSON data, both kept and required to agree
(``event == data["type"]``). The pinned revision ``2026-07-21`` follows the
Streaming Messages reference, the tool-use references and anthropic-python
0.117.0 (``RawMessageStreamEvent``, ``ContentBlock``, ``RawContentBlockDelta``,
``MessageDeltaUsage``, ``StopReason``).

Event flow (a table, :data:`REVISIONS`): ``message_start`` -> per block
``content_block_start`` / ``content_block_delta`` x N / ``content_block_stop`` ->
one or more ``message_delta`` -> ``message_stop``. ``ping`` may appear anywhere;
``error`` raises :class:`ProviderError` wherever it appears.

Terminal gate: a client ``tool_use`` call is executable only when the last
``message_delta`` said ``stop_reason == "tool_use"``, ``message_stop`` arrived and
every client call's input parsed. Otherwise every client call of the turn is a
*recovery call*: never executed, answered with a forced ``is_error: true`` result
by :func:`build_anthropic_messages_continuation`. ``calls`` and
``recovery_calls`` partition the turn's client ``tool_use`` blocks.

Nothing here does I/O; everything raised is a :class:`ContractError`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeGuard

from ._stream import DEFAULT_STREAM_LIMITS, FragmentBuffer, Poison, StreamLimits
from .digest import canonical_digest
from .errors import (
    ContractError,
    LimitExceeded,
    ProtocolViolation,
    ProviderError,
    StreamTruncated,
    StrictJSONError,
    UnsupportedProviderState,
)
from .strict_json import loads as strict_loads

__all__ = [
    "PINNED_REVISION",
    "REVISIONS",
    "INVALID_JSON_KEY",
    "MAX_RAW_DEPTH",
    "json_copy",
    "BlockSpec",
    "DeltaSpec",
    "RevisionTables",
    "AnthropicToolUse",
    "AnthropicRecoveryCall",
    "AnthropicMessagesTurn",
    "AnthropicMessagesStream",
    "parse_events",
    "build_anthropic_messages_continuation",
]

PINNED_REVISION: Final = "2026-07-21"

#: Key under which the raw text of an incomplete eager-streamed input is replayed:
#: ``tool_use.input`` must be an object, so the partial text is wrapped, as the
#: fine-grained tool streaming page advises, instead of being repaired or dropped.
INVALID_JSON_KEY: Final = "INVALID_JSON"

#: Nesting bound for every raw JSON value the parser retains (message, blocks,
#: usage, citations). Keeps copying and digesting iterative-safe and linear.
MAX_RAW_DEPTH: Final = 64

#: Integers in retained raw data must stay within this magnitude (JSON interop
#: range; also keeps canonical serialization linear).
# Integers up to 1,000 decimal digits, the strict JSON loader's default number
# limit: a tool argument that strict_json accepts must not fail here, and the digest
# (json.dumps) stays clear of Python's 4,300-digit int-to-str guard.
_MAX_INT: Final = 10**1000

# Block roles: what a block type means for execution and replay.
ROLE_TEXT: Final = "text"
ROLE_THINKING: Final = "thinking"
ROLE_REDACTED_THINKING: Final = "redacted_thinking"
ROLE_CLIENT_TOOL_USE: Final = "client_tool_use"
ROLE_SERVER_TOOL_USE: Final = "server_tool_use"
ROLE_SERVER_TOOL_RESULT: Final = "server_tool_result"
ROLE_OPAQUE: Final = "opaque"

# Parser states (h11-style: a table lookup miss is the illegal transition).
S_INITIAL: Final = "initial"
S_MESSAGE: Final = "message"
S_BLOCK: Final = "block"
S_MESSAGE_DELTA: Final = "message_delta"
S_STOPPED: Final = "stopped"


@dataclass(frozen=True, slots=True)
class BlockSpec:
    """One known content block type: its role, required fields and allowed deltas.

    ``required`` maps a field name to its JSON kind (``"str"``, ``"nonempty_str"``,
    ``"object"``, ``"any"``); ``optional`` likewise, where ``None`` is also allowed.
    """

    role: str
    required: Mapping[str, str]
    optional: Mapping[str, str]
    deltas: frozenset[str]


@dataclass(frozen=True, slots=True)
class DeltaSpec:
    """One known delta type: the field it carries and that field's JSON kind."""

    field: str
    kind: str


@dataclass(frozen=True, slots=True)
class RevisionTables:
    """All protocol knowledge of one pinned contract revision, as data."""

    event_types: frozenset[str]
    transitions: Mapping[str, Mapping[str, str]]
    blocks: Mapping[str, BlockSpec]
    unsupported_blocks: Mapping[str, str]
    deltas: Mapping[str, DeltaSpec]
    stop_reasons: frozenset[str]
    executable_stop_reason: str
    truncation_stop_reasons: frozenset[str]
    continuable_stop_reasons: frozenset[str]
    usage_counters: tuple[str, ...]
    protected_request_fields: frozenset[str]
    history_roles: frozenset[str]
    client_caller_types: frozenset[str]
    required_start_usage: tuple[str, ...]
    required_delta_usage: tuple[str, ...]


def _server_result(name: str) -> tuple[str, BlockSpec]:
    return name, BlockSpec(
        role=ROLE_SERVER_TOOL_RESULT,
        required={"tool_use_id": "nonempty_str", "content": "any"},
        optional={"caller": "object"},
        deltas=frozenset(),
    )


_TOOL_USE_FIELDS: Final = {"id": "nonempty_str", "name": "nonempty_str", "input": "object"}

_BLOCKS_2026_07_21: Final[dict[str, BlockSpec]] = dict(
    [
        (
            "text",
            BlockSpec(
                role=ROLE_TEXT,
                required={"text": "str"},
                optional={"citations": "array"},
                deltas=frozenset({"text_delta", "citations_delta"}),
            ),
        ),
        (
            "thinking",
            BlockSpec(
                role=ROLE_THINKING,
                required={"thinking": "str"},
                optional={"signature": "str"},
                deltas=frozenset({"thinking_delta", "signature_delta"}),
            ),
        ),
        (
            "redacted_thinking",
            BlockSpec(
                role=ROLE_REDACTED_THINKING,
                required={"data": "str"},
                optional={},
                deltas=frozenset(),
            ),
        ),
        (
            "tool_use",
            BlockSpec(
                role=ROLE_CLIENT_TOOL_USE,
                required=_TOOL_USE_FIELDS,
                optional={"caller": "object"},
                deltas=frozenset({"input_json_delta"}),
            ),
        ),
        (
            "server_tool_use",
            BlockSpec(
                role=ROLE_SERVER_TOOL_USE,
                required=_TOOL_USE_FIELDS,
                optional={"caller": "object"},
                deltas=frozenset({"input_json_delta"}),
            ),
        ),
        _server_result("web_search_tool_result"),
        _server_result("web_fetch_tool_result"),
        _server_result("code_execution_tool_result"),
        _server_result("bash_code_execution_tool_result"),
        _server_result("text_editor_code_execution_tool_result"),
        _server_result("tool_search_tool_result"),
        (
            "container_upload",
            BlockSpec(
                role=ROLE_OPAQUE,
                required={"file_id": "str"},
                optional={},
                deltas=frozenset(),
            ),
        ),
    ]
)

_DELTAS_2026_07_21: Final = {
    "text_delta": DeltaSpec("text", "str"),
    "input_json_delta": DeltaSpec("partial_json", "str"),
    "citations_delta": DeltaSpec("citation", "object"),
    "thinking_delta": DeltaSpec("thinking", "str"),
    "signature_delta": DeltaSpec("signature", "str"),
}

_CORE_TRANSITIONS: Final = {
    S_INITIAL: {"message_start": S_MESSAGE},
    S_MESSAGE: {"content_block_start": S_BLOCK, "message_delta": S_MESSAGE_DELTA},
    S_BLOCK: {"content_block_delta": S_BLOCK, "content_block_stop": S_MESSAGE},
    S_MESSAGE_DELTA: {"message_delta": S_MESSAGE_DELTA, "message_stop": S_STOPPED},
    S_STOPPED: {},
}


def _with_anywhere(core: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    # ping keeps the state everywhere; error is accepted everywhere and raises.
    out: dict[str, dict[str, str]] = {}
    for state, row in core.items():
        full = dict(row)
        full["ping"] = state
        full["error"] = state
        out[state] = full
    return out


REVISIONS: Final[dict[str, RevisionTables]] = {
    "2026-07-21": RevisionTables(
        event_types=frozenset(
            {
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop",
                "ping",
                "error",
            }
        ),
        transitions=_with_anywhere(_CORE_TRANSITIONS),
        blocks=_BLOCKS_2026_07_21,
        unsupported_blocks={
            "fallback": (
                "the server-side-fallback beta (server-side-fallback-2026-06-01) 'fallback' "
                "block is not part of the pinned contract; its replay position rules are "
                "not implemented"
            ),
        },
        deltas=_DELTAS_2026_07_21,
        stop_reasons=frozenset(
            {
                "end_turn",
                "max_tokens",
                "stop_sequence",
                "tool_use",
                "pause_turn",
                "refusal",
                "model_context_window_exceeded",
            }
        ),
        executable_stop_reason="tool_use",
        # "Stop reasons and fallback": treat model_context_window_exceeded as truncated.
        truncation_stop_reasons=frozenset({"max_tokens", "model_context_window_exceeded"}),
        continuable_stop_reasons=frozenset({"tool_use", "max_tokens"}),
        usage_counters=(
            "input_tokens",
            "output_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ),
        protected_request_fields=frozenset({"model", "messages", "system", "tools", "max_tokens"}),
        history_roles=frozenset({"user", "assistant", "system"}),
        # ToolUseBlock.caller: only a direct call from the model is in the pinned
        # contract; server-tool callers (programmatic tool calling) fail closed.
        client_caller_types=frozenset({"direct"}),
        required_start_usage=("input_tokens", "output_tokens"),
        required_delta_usage=("output_tokens",),
    ),
}


# ---------------------------------------------------------------------------
# Bounded, iterative JSON-value validation + copy
# ---------------------------------------------------------------------------


def json_copy(
    value: Any,
    what: str,
    *,
    error: type[ContractError] = ProtocolViolation,
    where: str | None = None,
    max_depth: int = MAX_RAW_DEPTH,
) -> Any:
    """Return a deep copy of a JSON-compatible value, iteratively, with bounds.

    Accepts dict (str keys), list, str, bool, int (|x| < 10**1000), finite float and
    None. Raises ``error`` for any other type, :class:`LimitExceeded` past
    ``max_depth`` nesting or the integer bound. Never recurses.
    """
    holder: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int, str]] = [(value, holder, 0, 0, what)]
    while stack:
        src, parent, key, depth, path = stack.pop()
        if isinstance(src, dict):
            if depth >= max_depth:
                raise LimitExceeded(f"{path} nests deeper than {max_depth} levels", where=where)
            new_dict: dict[str, Any] = {}
            for k, v in src.items():
                if not isinstance(k, str):
                    raise error(f"{path} has a non-string key {type(k).__name__}", where=where)
                new_dict[k] = None
                stack.append((v, new_dict, k, depth + 1, f"{path}.{k}"))
            parent[key] = new_dict
        elif isinstance(src, list):
            if depth >= max_depth:
                raise LimitExceeded(f"{path} nests deeper than {max_depth} levels", where=where)
            new_list: list[Any] = [None] * len(src)
            for i, v in enumerate(src):
                stack.append((v, new_list, i, depth + 1, f"{path}[{i}]"))
            parent[key] = new_list
        elif src is None or isinstance(src, (str, bool)):
            parent[key] = src
        elif isinstance(src, int):
            if not -_MAX_INT < src < _MAX_INT:
                raise LimitExceeded(f"{path} integer out of range", where=where)
            parent[key] = int(src)
        elif isinstance(src, float):
            if not math.isfinite(src):
                raise error(f"{path} is a non-finite number", where=where)
            parent[key] = float(src)
        else:
            raise error(f"{path} is {type(src).__name__}, not a JSON value", where=where)
    return holder[0]


def _kind_ok(value: Any, kind: str) -> bool:
    if kind == "str":
        return isinstance(value, str)
    if kind == "nonempty_str":
        return isinstance(value, str) and value != ""
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    return kind == "any"


_KIND_WORDS: Final = {
    "str": "a string",
    "nonempty_str": "a non-empty string",
    "object": "an object",
    "array": "an array",
    "int": "an integer",
    "any": "present",
}


# ---------------------------------------------------------------------------
# Public result types
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AnthropicToolUse:
    """An executable client ``tool_use`` call (released only by the terminal gate).

    ``call_id`` is the block's ``id`` (the ``tool_use_id`` a result must carry),
    ``arguments`` the strictly parsed ``input`` object (a private copy), ``index``
    the block index in the message ``content``.
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    index: int

    @property
    def tool_use_id(self) -> str:
        """The provider's name for :attr:`call_id`."""
        return self.call_id


@dataclass(frozen=True, slots=True)
class AnthropicRecoveryCall:
    """A client ``tool_use`` call that must NOT be executed.

    Its continuation result is forced to ``is_error: true``. ``reason`` says why
    (invalid/incomplete eager input, truncation, a stop reason that releases
    nothing). ``arguments`` is the parsed input when it was complete, else
    ``None``; ``partial_json`` is the raw accumulated input text when it did not
    parse, else ``None``.
    """

    call_id: str
    name: str
    index: int
    reason: str
    arguments: dict[str, Any] | None
    partial_json: str | None

    @property
    def tool_use_id(self) -> str:
        """The provider's name for :attr:`call_id`."""
        return self.call_id


@dataclass(frozen=True, slots=True)
class AnthropicMessagesTurn:
    """One parsed assistant message (a complete stream up to ``message_stop``).

    ``blocks``: the final content blocks, raw, in index order (text and thinking
    accumulated, tool inputs parsed; an incomplete eager input replayed as
    ``{"INVALID_JSON": text}``). ``message``: ``message_start.message`` as sent.
    ``usage``: the cumulative usage after the last ``message_delta``.
    ``stop_reason``: raw, including unknown future values. ``delta``: the merged
    non-null fields of every ``message_delta.delta`` (raw; e.g. ``stop_details``,
    ``container`` and future optional fields). ``calls``: executable
    calls (empty unless the terminal gate passed). ``recovery_calls``: every other
    client call. ``digest``: canonical digest of :meth:`snapshot` at parse time.
    """

    revision: str
    message: dict[str, Any]
    blocks: tuple[dict[str, Any], ...]
    stop_reason: str
    stop_sequence: str | None
    usage: dict[str, Any]
    delta: dict[str, Any]
    calls: tuple[AnthropicToolUse, ...]
    recovery_calls: tuple[AnthropicRecoveryCall, ...]
    digest: str = field(default="")

    @property
    def stop_reason_known(self) -> bool:
        """Whether :attr:`stop_reason` is in the pinned revision's table."""
        return self.stop_reason in REVISIONS[self.revision].stop_reasons

    def snapshot(self) -> dict[str, Any]:
        """The canonical snapshot the digest covers (live view, not a copy)."""
        return {
            "revision": self.revision,
            "message": self.message,
            "blocks": list(self.blocks),
            "stop_reason": self.stop_reason,
            "stop_sequence": self.stop_sequence,
            "usage": self.usage,
            "delta": self.delta,
            "calls": [[c.call_id, c.name, c.index, c.arguments] for c in self.calls],
            "recovery_calls": [
                [c.call_id, c.name, c.index, c.reason, c.arguments, c.partial_json]
                for c in self.recovery_calls
            ],
        }


# ---------------------------------------------------------------------------
# The stream
# ---------------------------------------------------------------------------


class _OpenBlock:
    __slots__ = (
        "index",
        "type",
        "spec",
        "block",
        "text",
        "json",
        "signature_done",
        "had_json",
        "start_event",
    )

    def __init__(self, index: int, btype: str, spec: BlockSpec, block: dict[str, Any]) -> None:
        self.index = index
        self.type = btype
        self.spec = spec
        self.block = block
        self.text: FragmentBuffer | None = None
        self.json: FragmentBuffer | None = None
        self.signature_done = False
        self.had_json = False
        self.start_event = 0


class _ClientInput:
    __slots__ = ("index", "call_id", "name", "arguments", "error", "partial_json")

    def __init__(
        self,
        index: int,
        call_id: str,
        name: str,
        arguments: dict[str, Any] | None,
        error: str | None,
        partial_json: str | None,
    ) -> None:
        self.index = index
        self.call_id = call_id
        self.name = name
        self.arguments = arguments
        self.error = error
        self.partial_json = partial_json


class AnthropicMessagesStream:
    """Incremental, sans-IO parser of one Anthropic Messages stream.

    ``feed(event)`` takes one envelope ``{"event": name, "data": {...}}``;
    ``close()`` returns the :class:`AnthropicMessagesTurn`. Any
    :class:`ContractError` poisons the stream: every later call raises again.

    ``eager_input_streaming``: ``True`` when every client tool was declared with
    ``eager_input_streaming: true`` (fine-grained tool streaming), or the
    collection of tool names declared so. For those tools a client ``tool_use``
    input that is invalid JSON at ``content_block_stop`` makes the call a
    recovery call. For other tools the same holds only for the LAST block of a
    turn whose final stop reason is a truncation (``max_tokens``,
    ``model_context_window_exceeded``): the documented cut. Any other invalid
    input raises :class:`StrictJSONError` (at the event that proves it is not
    such a cut) or :class:`ProtocolViolation` (complete non-object JSON).

    Raises: :class:`ProtocolViolation` (order, shape, drift, a server result
    naming a client call), :class:`ProviderError` (an ``error`` event),
    :class:`UnsupportedProviderState` (unknown event or block type, ``fallback``
    block, a client ``tool_use`` whose ``caller`` is not direct), :class:`StreamTruncated` (close before
    ``message_stop``), :class:`StrictJSONError`, :class:`LimitExceeded`.
    """

    def __init__(
        self,
        *,
        limits: StreamLimits = DEFAULT_STREAM_LIMITS,
        eager_input_streaming: bool | Collection[str] = False,
        revision: str = PINNED_REVISION,
    ) -> None:
        tables = REVISIONS.get(revision) if isinstance(revision, str) else None
        if tables is None:
            raise UnsupportedProviderState(f"unknown contract revision {revision!r}")
        if not isinstance(limits, StreamLimits):
            raise ProtocolViolation("limits must be a StreamLimits")
        self._eager_all = False
        self._eager_names: frozenset[str] = frozenset()
        if isinstance(eager_input_streaming, bool):
            self._eager_all = eager_input_streaming
        elif isinstance(eager_input_streaming, (str, bytes)) or not isinstance(
            eager_input_streaming, Iterable
        ):
            raise ProtocolViolation(
                "eager_input_streaming must be a bool or a collection of tool names"
            )
        else:
            names = list(eager_input_streaming)
            if not all(isinstance(n, str) for n in names):
                raise ProtocolViolation("eager_input_streaming tool names must be strings")
            self._eager_names = frozenset(names)
        self._revision = revision
        self._t = tables
        self._limits = limits
        self._poison = Poison()
        self._state = S_INITIAL
        self._events = 0
        self._message: dict[str, Any] = {}
        self._usage: dict[str, Any] = {}
        self._delta: dict[str, Any] = {}
        self._blocks: list[dict[str, Any]] = []
        self._open: _OpenBlock | None = None
        self._ids: set[str] = set()
        self._client_ids: set[str] = set()
        self._server_result_refs: set[str] = set()
        self._client: list[_ClientInput] = []
        self._stop_reason: str | None = None
        self._stop_sequence: str | None = None
        self._total_text = 0
        # A client input that did not parse without eager streaming: allowed only
        # as the LAST block of a turn whose final stop_reason is a truncation.
        self._unproven_cut: tuple[str, int] | None = None
        self._handlers = {
            "message_start": self._on_message_start,
            "content_block_start": self._on_block_start,
            "content_block_delta": self._on_block_delta,
            "content_block_stop": self._on_block_stop,
            "message_delta": self._on_message_delta,
            "message_stop": self._on_message_stop,
            "ping": self._on_ping,
            "error": self._on_error,
        }

    @property
    def state(self) -> str:
        """The current parser state name (for tests and diagnostics)."""
        return self._state

    # -- driving -----------------------------------------------------------

    def feed(self, event: Any) -> None:
        """Consume one envelope. Raises a :class:`ContractError` (and poisons)."""
        self._poison.run(lambda: self._feed(event))

    def close(self) -> AnthropicMessagesTurn:
        """End the stream and return the turn.

        Raises :class:`StreamTruncated` unless ``message_stop`` was seen.
        """
        return self._poison.finish(self._close)

    # -- envelope ----------------------------------------------------------

    def _feed(self, event: Any) -> None:
        n = self._events
        self._events += 1
        where = f"event {n}"
        if self._events > self._limits.max_events:
            raise LimitExceeded(f"more than {self._limits.max_events} events", where=where)
        if not isinstance(event, dict):
            raise ProtocolViolation(
                f"envelope must be an object, got {type(event).__name__}", where=where
            )
        extra = [k for k in event if k not in ("event", "data")]
        if extra:
            raise ProtocolViolation(f"envelope has unknown key {str(extra[0])!r}", where=where)
        name = event.get("event")
        data = event.get("data")
        if not isinstance(name, str):
            raise ProtocolViolation("envelope 'event' must be a string", where=where)
        if not isinstance(data, dict):
            raise ProtocolViolation("envelope 'data' must be an object", where=where)
        dtype = data.get("type")
        if not isinstance(dtype, str):
            raise ProtocolViolation("data.type must be a string", where=where)
        if dtype != name:
            raise ProtocolViolation(
                f"envelope/data drift: event {name[:64]!r} != data.type {dtype[:64]!r}",
                where=where,
            )
        if name not in self._t.event_types:
            raise UnsupportedProviderState(
                f"unknown event type {name[:64]!r} in pinned revision {self._revision}",
                where=where,
            )
        row = self._t.transitions[self._state]
        nxt = row.get(name)
        if nxt is None:
            raise ProtocolViolation(self._illegal(name, data), where=where)
        self._handlers[name](data, where, n)
        self._state = nxt

    def _illegal(self, name: str, data: dict[str, Any]) -> str:
        index = data.get("index")
        if name in ("content_block_delta", "content_block_stop") and _is_int(index):
            if self._open is None:
                if 0 <= index < len(self._blocks):
                    return f"{name} for closed block index {index}"
                return f"{name} for unknown block index {index}"
        if name == "content_block_start" and self._open is not None:
            return f"content_block_start while block index {self._open.index} is still open"
        return f"{name} not allowed in state {self._state!r}"

    # -- handlers ----------------------------------------------------------

    def _on_ping(self, data: dict[str, Any], where: str, n: int) -> None:
        return None

    def _on_error(self, data: dict[str, Any], where: str, n: int) -> None:
        err = data.get("error")
        etype = err.get("type") if isinstance(err, dict) else None
        emsg = err.get("message") if isinstance(err, dict) else None
        etype_s = etype[:200] if isinstance(etype, str) else "<malformed>"
        emsg_s = emsg[:500] if isinstance(emsg, str) else "<no message>"
        raise ProviderError(
            f"error event: {etype_s}: {emsg_s}; the turn releases nothing", where=where
        )

    def _on_message_start(self, data: dict[str, Any], where: str, n: int) -> None:
        message = data.get("message")
        if not isinstance(message, dict):
            raise ProtocolViolation("message_start data.message must be an object", where=where)
        for key, kind in (("id", "nonempty_str"), ("model", "str"), ("usage", "object")):
            if not _kind_ok(message.get(key), kind):
                raise ProtocolViolation(
                    f"data.message.{key} must be {_KIND_WORDS[kind]}", where=where
                )
        if message.get("type") != "message":
            raise ProtocolViolation("data.message.type must be 'message'", where=where)
        if message.get("role") != "assistant":
            raise ProtocolViolation("data.message.role must be 'assistant'", where=where)
        content = message.get("content")
        if not isinstance(content, list) or content:
            raise ProtocolViolation(
                "data.message.content must be an empty array at message_start", where=where
            )
        if message.get("stop_reason") is not None:
            raise ProtocolViolation(
                "data.message.stop_reason must be null at message_start", where=where
            )
        copied = json_copy(message, "data.message", where=where)
        usage = copied["usage"]
        for key in self._t.required_start_usage:
            if not _is_int(usage.get(key)):
                raise ProtocolViolation(
                    f"data.message.usage.{key} is required and must be an integer", where=where
                )
        self._check_usage(usage, "data.message.usage", where)
        self._message = copied
        self._usage = json_copy(usage, "data.message.usage", where=where)

    def _check_usage(self, usage: dict[str, Any], path: str, where: str) -> None:
        for key in self._t.usage_counters:
            value = usage.get(key)
            if value is None:
                continue
            if not _is_int(value) or value < 0:
                raise ProtocolViolation(
                    f"{path}.{key} must be a non-negative integer", where=where
                )
            before = self._usage.get(key)
            if _is_int(before) and value < before:
                raise ProtocolViolation(
                    f"{path}.{key} went backwards ({before} -> {value}); usage is cumulative",
                    where=where,
                )

    def _on_block_start(self, data: dict[str, Any], where: str, n: int) -> None:
        self._check_unproven_cut(None, where)
        index = self._index(data, where)
        if index != len(self._blocks):
            if index < len(self._blocks):
                raise ProtocolViolation(f"block index {index} is reused", where=where)
            raise ProtocolViolation(
                f"block index {index} skips ahead; expected {len(self._blocks)}", where=where
            )
        if len(self._blocks) >= self._limits.max_items:
            raise LimitExceeded(f"more than {self._limits.max_items} content blocks", where=where)
        raw = data.get("content_block")
        if not isinstance(raw, dict):
            raise ProtocolViolation("data.content_block must be an object", where=where)
        btype = raw.get("type")
        if not isinstance(btype, str):
            raise ProtocolViolation("data.content_block.type must be a string", where=where)
        unsupported = self._t.unsupported_blocks.get(btype)
        if unsupported is not None:
            raise UnsupportedProviderState(
                f"content block {index} type {btype!r}: {unsupported}", where=where
            )
        spec = self._t.blocks.get(btype)
        if spec is None:
            raise UnsupportedProviderState(
                f"unknown content block type {btype[:64]!r} at index {index} "
                f"(pinned revision {self._revision})",
                where=where,
            )
        for key, kind in spec.required.items():
            if key not in raw or not _kind_ok(raw[key], kind):
                raise ProtocolViolation(
                    f"data.content_block.{key} of {btype} block {index} must be "
                    f"{_KIND_WORDS[kind]}",
                    where=where,
                )
        for key, kind in spec.optional.items():
            value = raw.get(key)
            if value is not None and not _kind_ok(value, kind):
                raise ProtocolViolation(
                    f"data.content_block.{key} of {btype} block {index} must be "
                    f"{_KIND_WORDS[kind]} or null",
                    where=where,
                )
        if spec.role == ROLE_CLIENT_TOOL_USE:
            caller = raw.get("caller")
            ctype = caller.get("type") if isinstance(caller, dict) else None
            if caller is not None and (
                not isinstance(ctype, str) or ctype not in self._t.client_caller_types
            ):
                shown = repr(ctype[:64]) if isinstance(ctype, str) else "<missing>"
                raise UnsupportedProviderState(
                    f"tool_use block {index} has caller type {shown}: only "
                    f"{sorted(self._t.client_caller_types)} callers are in the pinned contract "
                    "(programmatic tool calling is not implemented)",
                    where=where,
                )
        block = json_copy(raw, "data.content_block", where=where)
        if spec.role in (ROLE_CLIENT_TOOL_USE, ROLE_SERVER_TOOL_USE):
            call_id = block["id"]
            if call_id in self._ids:
                raise ProtocolViolation(
                    f"duplicate tool use id {call_id[:64]!r} at block {index}", where=where
                )
            self._ids.add(call_id)
            if spec.role == ROLE_CLIENT_TOOL_USE:
                self._client_ids.add(call_id)
        # A server result may not answer a client call: only the host answers those.
        ref = block["tool_use_id"] if spec.role == ROLE_SERVER_TOOL_RESULT else None
        conflict = ref if ref in self._client_ids else None
        if spec.role == ROLE_CLIENT_TOOL_USE and block["id"] in self._server_result_refs:
            conflict = block["id"]
        if conflict is not None:
            raise ProtocolViolation(
                f"{btype} block {index}: tool use id {conflict[:64]!r} is both a client "
                "tool_use and the target of a server tool result",
                where=where,
            )
        if ref is not None:
            self._server_result_refs.add(ref)
        ob = _OpenBlock(index, btype, spec, block)
        ob.start_event = n
        if spec.role == ROLE_TEXT:
            ob.text = self._buffer(f"text block {index}", block["text"], where)
        elif spec.role == ROLE_THINKING:
            ob.text = self._buffer(f"thinking block {index}", block["thinking"], where)
            sig = block.get("signature")
            ob.signature_done = isinstance(sig, str) and sig != ""
        elif spec.role in (ROLE_CLIENT_TOOL_USE, ROLE_SERVER_TOOL_USE):
            ob.json = FragmentBuffer(self._limits.max_fragment_bytes, f"input of block {index}")
        self._blocks.append(block)
        self._open = ob

    def _buffer(self, what: str, initial: str, where: str) -> FragmentBuffer:
        buf = FragmentBuffer(self._limits.max_total_fragment_bytes, what)
        self._count_text(initial, where)
        try:
            buf.append(initial)
        except LimitExceeded as exc:
            raise LimitExceeded(exc.message, where=where) from exc
        return buf

    def _count_text(self, text: str, where: str) -> int:
        size = len(text.encode("utf-8", "surrogatepass"))
        self._total_text += size
        if self._total_text > self._limits.max_total_fragment_bytes:
            raise LimitExceeded(
                f"turn exceeds {self._limits.max_total_fragment_bytes} bytes of streamed text",
                where=where,
            )
        return size

    def _index(self, data: dict[str, Any], where: str) -> int:
        index: Any = data.get("index")
        if not _is_int(index) or index < 0:
            raise ProtocolViolation("data.index must be a non-negative integer", where=where)
        return int(index)

    def _current(self, data: dict[str, Any], name: str, where: str) -> _OpenBlock:
        index = self._index(data, where)
        ob = self._open
        if ob is None:  # unreachable through the table; kept as a typed guard
            raise ProtocolViolation(f"{name} with no open block", where=where)
        if index != ob.index:
            if index < len(self._blocks):
                raise ProtocolViolation(f"{name} for closed block index {index}", where=where)
            raise ProtocolViolation(f"{name} for unknown block index {index}", where=where)
        return ob

    def _on_block_delta(self, data: dict[str, Any], where: str, n: int) -> None:
        ob = self._current(data, "content_block_delta", where)
        delta = data.get("delta")
        if not isinstance(delta, dict):
            raise ProtocolViolation("data.delta must be an object", where=where)
        dtype = delta.get("type")
        if not isinstance(dtype, str):
            raise ProtocolViolation("data.delta.type must be a string", where=where)
        dspec = self._t.deltas.get(dtype)
        if dspec is None:
            raise UnsupportedProviderState(
                f"unknown delta type {dtype[:64]!r} for block {ob.index}", where=where
            )
        if dtype not in ob.spec.deltas:
            raise ProtocolViolation(
                f"delta type {dtype!r} does not fit {ob.type} block {ob.index}", where=where
            )
        value: Any = delta.get(dspec.field)
        if not _kind_ok(value, dspec.kind):
            raise ProtocolViolation(
                f"data.delta.{dspec.field} must be {_KIND_WORDS[dspec.kind]}", where=where
            )
        if ob.signature_done:
            raise ProtocolViolation(
                f"{dtype} after the signature of thinking block {ob.index}", where=where
            )
        if dtype == "input_json_delta":
            buf = ob.json
            if buf is None:  # typed guard; the table admits this delta only for tool blocks
                raise ProtocolViolation("input_json_delta without an input buffer", where=where)
            self._count_text(value, where)
            try:
                buf.append(value)
            except LimitExceeded as exc:
                raise LimitExceeded(exc.message, where=where) from exc
            ob.had_json = True
        elif dtype in ("text_delta", "thinking_delta"):
            tbuf = ob.text
            if tbuf is None:  # typed guard
                raise ProtocolViolation(f"{dtype} without a text buffer", where=where)
            self._count_text(value, where)
            try:
                tbuf.append(value)
            except LimitExceeded as exc:
                raise LimitExceeded(exc.message, where=where) from exc
        elif dtype == "signature_delta":
            self._count_text(value, where)
            ob.block["signature"] = value
            ob.signature_done = True
        elif dtype == "citations_delta":
            citation = json_copy(value, "data.delta.citation", where=where)
            citations = ob.block.get("citations")
            if citations is None:
                ob.block["citations"] = [citation]
            else:
                citations.append(citation)

    def _on_block_stop(self, data: dict[str, Any], where: str, n: int) -> None:
        ob = self._current(data, "content_block_stop", where)
        block = ob.block
        role = ob.spec.role
        if role == ROLE_TEXT and ob.text is not None:
            block["text"] = ob.text.text()
        elif role == ROLE_THINKING and ob.text is not None:
            block["thinking"] = ob.text.text()
            sig = block.get("signature")
            if not isinstance(sig, str) or sig == "":
                raise ProtocolViolation(
                    f"thinking block {ob.index} closed without a signature", where=where
                )
        elif role in (ROLE_CLIENT_TOOL_USE, ROLE_SERVER_TOOL_USE) and ob.json is not None:
            self._finish_input(ob, where)
        self._open = None

    def _finish_input(self, ob: _OpenBlock, where: str) -> None:
        block = ob.block
        text = ob.json.text() if ob.json is not None else ""
        client = ob.spec.role == ROLE_CLIENT_TOOL_USE
        eager = client and (self._eager_all or block["name"] in self._eager_names)
        arguments: dict[str, Any] | None
        error: str | None = None
        partial: str | None = None
        if text == "":
            # Zero-argument tools (or no input deltas): the input from block start.
            arguments = block["input"]
        else:
            if block["input"] != {}:
                raise ProtocolViolation(
                    f"{ob.type} block {ob.index} has both a non-empty start input and "
                    "input_json_delta fragments",
                    where=where,
                )
            try:
                parsed = strict_loads(text)
            except StrictJSONError as exc:
                message = f"input of {ob.type} block {ob.index} is not strict JSON: {exc.message}"
                if not client:
                    raise StrictJSONError(message, where=where) from exc
                parsed = None
                if eager:
                    error = f"input is not valid JSON ({exc.message})"
                else:
                    # Not yet an error: a max_tokens stop may cut the last input
                    # (documented). Anything else makes it a broken stream.
                    error = f"input is incomplete at a truncation ({exc.message})"
                    self._unproven_cut = (f"{message} ({where})", ob.index)
            except LimitExceeded as exc:
                raise LimitExceeded(
                    f"input of {ob.type} block {ob.index}: {exc.message}", where=where
                ) from exc
            if error is None and not isinstance(parsed, dict):
                if not eager:
                    raise ProtocolViolation(
                        f"input of {ob.type} block {ob.index} must be a JSON object, "
                        f"got {type(parsed).__name__}",
                        where=where,
                    )
                error = "input is not a JSON object"
            if error is None:
                arguments = json_copy(parsed, f"input of block {ob.index}", where=where)
                block["input"] = arguments
            else:
                arguments = None
                partial = text
                block["input"] = {INVALID_JSON_KEY: text}
        if client:
            self._client.append(
                _ClientInput(
                    ob.index,
                    block["id"],
                    block["name"],
                    json_copy(arguments, "arguments") if arguments is not None else None,
                    error,
                    partial,
                )
            )

    def _on_message_delta(self, data: dict[str, Any], where: str, n: int) -> None:
        delta = data.get("delta")
        usage = data.get("usage")
        if not isinstance(delta, dict):
            raise ProtocolViolation("message_delta data.delta must be an object", where=where)
        if not isinstance(usage, dict):
            raise ProtocolViolation("message_delta data.usage must be an object", where=where)
        stop_reason = delta.get("stop_reason")
        if stop_reason is not None and (not isinstance(stop_reason, str) or stop_reason == ""):
            raise ProtocolViolation(
                "data.delta.stop_reason must be a non-empty string or null", where=where
            )
        stop_sequence = delta.get("stop_sequence")
        if stop_sequence is not None and not isinstance(stop_sequence, str):
            raise ProtocolViolation("data.delta.stop_sequence must be a string or null", where=where)
        for key in self._t.required_delta_usage:
            if not _is_int(usage.get(key)):
                raise ProtocolViolation(
                    f"data.usage.{key} is required and must be an integer", where=where
                )
        self._check_usage(usage, "data.usage", where)
        if stop_reason is not None:
            if self._stop_reason is not None and stop_reason != self._stop_reason:
                raise ProtocolViolation(
                    f"stop_reason changed from {self._stop_reason[:64]!r} to "
                    f"{stop_reason[:64]!r}",
                    where=where,
                )
            self._stop_reason = stop_reason
            self._check_unproven_cut(stop_reason, where)
        if stop_sequence is not None:
            self._stop_sequence = stop_sequence
        copied = json_copy(usage, "data.usage", where=where)
        for key, value in copied.items():
            if value is not None:
                self._usage[key] = value
        for key, value in json_copy(delta, "data.delta", where=where).items():
            if value is not None:
                self._delta[key] = value

    def _on_message_stop(self, data: dict[str, Any], where: str, n: int) -> None:
        if self._stop_reason is None:
            raise ProtocolViolation("message_stop without a stop_reason", where=where)
        self._check_unproven_cut(self._stop_reason, where)

    def _check_unproven_cut(self, stop_reason: str | None, where: str) -> None:
        # stop_reason None: another block starts, so the bad input was not the last.
        cut = self._unproven_cut
        if cut is None:
            return
        if stop_reason is not None and stop_reason in self._t.truncation_stop_reasons:
            return
        message, index = cut
        why = (
            f"block {index + 1} started after it"
            if stop_reason is None
            else f"stop_reason {stop_reason[:64]!r} is not a truncation"
        )
        raise StrictJSONError(
            f"{message}; without eager input streaming only a truncation (max_tokens) of "
            f"the last block may leave an input incomplete, but {why}",
            where=where,
        )

    # -- closing -----------------------------------------------------------

    def _close(self) -> AnthropicMessagesTurn:
        if self._state != S_STOPPED:
            open_note = (
                f"; block index {self._open.index} still open" if self._open is not None else ""
            )
            raise StreamTruncated(
                f"stream ended in state {self._state!r} before message_stop{open_note}; "
                "nothing is released",
                where=f"event {self._events}",
            )
        stop_reason = self._stop_reason
        if stop_reason is None:  # typed guard; message_stop already required it
            raise ProtocolViolation("no stop_reason")
        t = self._t
        invalid = [c for c in self._client if c.error is not None]
        executable = stop_reason == t.executable_stop_reason and not invalid
        calls: tuple[AnthropicToolUse, ...] = ()
        recovery: tuple[AnthropicRecoveryCall, ...] = ()
        if executable:
            calls = tuple(
                AnthropicToolUse(c.call_id, c.name, c.arguments or {}, c.index)
                for c in self._client
            )
        else:
            out: list[AnthropicRecoveryCall] = []
            for c in self._client:
                if c.error is not None:
                    reason = f"tool_use block {c.index}: {c.error}; never executed"
                elif invalid:
                    reason = (
                        f"sibling of tool_use block {invalid[0].index} whose input is "
                        "incomplete; the turn is not executable"
                    )
                elif stop_reason in t.truncation_stop_reasons:
                    reason = f"turn truncated (stop_reason {stop_reason!r}); not executable"
                else:
                    reason = f"stop_reason {stop_reason[:64]!r} releases no calls"
                out.append(
                    AnthropicRecoveryCall(
                        c.call_id, c.name, c.index, reason, c.arguments, c.partial_json
                    )
                )
            recovery = tuple(out)
        turn = AnthropicMessagesTurn(
            revision=self._revision,
            message=self._message,
            blocks=tuple(self._blocks),
            stop_reason=stop_reason,
            stop_sequence=self._stop_sequence,
            usage=self._usage,
            delta=self._delta,
            calls=calls,
            recovery_calls=recovery,
        )
        object.__setattr__(turn, "digest", canonical_digest(turn.snapshot()))
        return turn


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_events(
    events: Iterable[Any],
    *,
    limits: StreamLimits = DEFAULT_STREAM_LIMITS,
    eager_input_streaming: bool | Collection[str] = False,
    revision: str = PINNED_REVISION,
) -> AnthropicMessagesTurn:
    """Parse a complete list of envelopes; see :class:`AnthropicMessagesStream`.

    Raises every error the stream raises; a non-iterable ``events`` raises
    :class:`ProtocolViolation`.
    """
    stream = AnthropicMessagesStream(
        limits=limits, eager_input_streaming=eager_input_streaming, revision=revision
    )
    if isinstance(events, (str, bytes, dict)) or not isinstance(events, Iterable):
        raise ProtocolViolation("events must be an iterable of envelopes")
    for event in events:
        stream.feed(event)
    return stream.close()


from .anthropic_messages_continuation import (  # noqa: E402  (re-export; avoids a cycle)
    build_anthropic_messages_continuation,
)
