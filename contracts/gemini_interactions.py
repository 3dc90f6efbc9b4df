"""Gemini Interactions v1: streamed-turn parser, snapshots and continuation builders.

Pinned contract: API version ``v1`` (never the ``v1beta`` union), contract revision
``2026-07-21``, SDK type baseline google-genai 2.12.1, typed-sse-projection (each
event is the JSON object of one SSE ``data`` field, discriminated by ``event_type``).

The stream object follows the h11 shape: :class:`GeminiInteractionsStream` takes one
event dict per :meth:`~GeminiInteractionsStream.feed` and returns a
:class:`GeminiInteractionsTurn` from :meth:`~GeminiInteractionsStream.close`. Legal
event sequences, step types, delta types and interaction statuses are data tables
keyed by contract revision; a lookup miss is the rejection. After any
:class:`~contracts.errors.ContractError` the stream is poisoned.

Rules (see ``docs/gemini_interactions.md`` for the decisions behind each):

* ``index`` on ``step.start``/``step.delta``/``step.stop`` is only an association key
  inside one stream (any int32, negative and non-contiguous allowed); steps keep the
  order of their ``step.start``.
* Function arguments are the concatenation of ``arguments_delta.arguments`` strings
  (the field is optional; absent is no fragment, never ``"None"``), parsed strictly
  at ``step.stop``; with no fragments the arguments object of ``step.start`` (e.g.
  ``{}``) is the result.
* ``event_id``: a replay with the same id and identical payload is ignored; the same
  id with another payload is a conflict.
* ``interaction.status_update`` is optional and never overrides the terminal; the
  Interaction status in ``interaction.completed`` is the authority. Calls are
  released only for status ``requires_action``.
* Only ``function_call`` steps are client-executed. Step types outside the pinned v1
  union (e.g. the v1beta MCP-server steps) fail closed.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ._stream import DEFAULT_STREAM_LIMITS, Poison, StreamLimits
from .digest import canonical_bytes, canonical_digest, check_digest
from .errors import (
    ContinuationError,
    ContractError,
    LimitExceeded,
    ProtocolViolation,
    ProviderError,
    SnapshotMutated,
    StreamTruncated,
    StrictJSONError,
    UnsupportedProviderState,
)
from .results import ModelVisibleToolResult, bind_results
from .strict_json import loads as strict_loads

__all__ = [
    "API_VERSION",
    "CONTRACT_REVISION",
    "SDK_BASELINE",
    "EVENT_TYPES",
    "STEP_TYPES",
    "V1BETA_ONLY_STEP_TYPES",
    "DELTA_TYPES",
    "INTERACTION_STATUSES",
    "GeminiFunctionCall",
    "GeminiInteractionsTurn",
    "GeminiInteractionSnapshot",
    "GeminiInteractionsStream",
    "parse_events",
    "parse_interaction",
    "build_gemini_interactions_continuation",
    "build_gemini_interactions_stateless_continuation",
]

API_VERSION: Final = "v1"
CONTRACT_REVISION: Final = "2026-07-21"
SDK_BASELINE: Final = ("google-genai", "2.12.1")

# --------------------------------------------------------------------------- tables

#: Known SSE ``event_type`` values per contract revision.
EVENT_TYPES: Final[dict[str, frozenset[str]]] = {
    "2026-07-21": frozenset(
        {
            "interaction.created",
            "step.start",
            "step.delta",
            "step.stop",
            "interaction.status_update",
            "interaction.completed",
            "error",
        }
    ),
}

#: The stable v1 Step discriminators (15) and the role of each. Only
#: ``client_call`` (``function_call``) is ever executed by the host.
STEP_TYPES: Final[dict[str, dict[str, str]]] = {
    "2026-07-21": {
        "user_input": "input",
        "model_output": "model_output",
        "thought": "thought",
        "function_call": "client_call",
        "function_result": "client_result",
        "code_execution_call": "hosted_call",
        "code_execution_result": "hosted_result",
        "url_context_call": "hosted_call",
        "url_context_result": "hosted_result",
        "google_search_call": "hosted_call",
        "google_search_result": "hosted_result",
        "file_search_call": "hosted_call",
        "file_search_result": "hosted_result",
        "google_maps_call": "hosted_call",
        "google_maps_result": "hosted_result",
    },
}

#: Step types present in the v1beta / SDK preview union but not in stable v1.
V1BETA_ONLY_STEP_TYPES: Final[dict[str, frozenset[str]]] = {
    "2026-07-21": frozenset({"mcp_server_tool_call", "mcp_server_tool_result"}),
}

_CONTENT_DELTAS: Final = frozenset({"text", "image", "audio", "document", "video"})

#: ``step.delta`` ``delta.type`` values allowed per step type.
DELTA_TYPES: Final[dict[str, dict[str, frozenset[str]]]] = {
    "2026-07-21": {
        "user_input": _CONTENT_DELTAS,
        "model_output": _CONTENT_DELTAS | {"text_annotation_delta"},
        "thought": frozenset({"thought_summary", "thought_signature"}),
        "function_call": frozenset({"arguments_delta"}),
        "function_result": frozenset({"function_result"}),
        "code_execution_call": frozenset({"code_execution_call"}),
        "code_execution_result": frozenset({"code_execution_result"}),
        "url_context_call": frozenset({"url_context_call"}),
        "url_context_result": frozenset({"url_context_result"}),
        "google_search_call": frozenset({"google_search_call"}),
        "google_search_result": frozenset({"google_search_result"}),
        "file_search_call": frozenset({"file_search_call"}),
        "file_search_result": frozenset({"file_search_result"}),
        "google_maps_call": frozenset({"google_maps_call"}),
        "google_maps_result": frozenset({"google_maps_result"}),
    },
}

#: Interaction statuses and what each means at the terminal.
INTERACTION_STATUSES: Final[dict[str, dict[str, str]]] = {
    "2026-07-21": {
        "in_progress": "non_terminal",
        "requires_action": "tool_turn",
        "completed": "final",
        "failed": "provider_failure",
        "cancelled": "provider_failure",
        "incomplete": "provider_failure",
    },
}

#: Optional total-usage fields; absent is ``None``, never 0.
USAGE_TOTAL_FIELDS: Final = ("total_input_tokens", "total_output_tokens", "total_tokens")

#: Bound on nesting of any JSON value read from an event or caller input.
MAX_JSON_DEPTH: Final = 64
#: Bound on the nodes visited when copying one JSON value. A Python caller can pass
#: an object graph with shared references whose JSON expansion is exponential in its
#: size; the budget keeps the copy linear in what is actually read.
MAX_JSON_NODES: Final = 250_000
#: Bound on integer magnitude (about 1,000 decimal digits, the strict JSON loader's
#: number-literal bound); larger integers cannot even be serialized for the digest.
MAX_INT_BITS: Final = 3_322
_INT32_MIN: Final = -(2**31)
_INT32_MAX: Final = 2**31 - 1

Origin = Literal["stream", "create", "get"]

# --------------------------------------------------------------------- JSON helpers


def _json_copy(value: object, where: str, error: type[ContractError] = ProtocolViolation) -> Any:
    """Deep-copy a JSON-compatible value iteratively, validating every node.

    Only exact ``dict`` (str keys), ``list``, ``str`` (no lone surrogates), ``int``
    (at most :data:`MAX_INT_BITS` bits), ``bool``, finite ``float`` and ``None`` pass;
    depth is bounded by :data:`MAX_JSON_DEPTH`, nodes by :data:`MAX_JSON_NODES`.
    """
    holder: list[Any] = [None]
    stack: list[tuple[object, Any, Any, int]] = [(value, holder, 0, 0)]
    nodes = 0
    while stack:
        src, container, key, depth = stack.pop()
        nodes += 1
        if nodes > MAX_JSON_NODES:
            raise LimitExceeded(f"JSON value with more than {MAX_JSON_NODES} nodes at {where}")
        kind = type(src)
        if kind is str:
            _check_text(src, where, error)  # type: ignore[arg-type]
            container[key] = src
        elif kind is int:
            if src.bit_length() > MAX_INT_BITS:  # type: ignore[attr-defined]
                raise LimitExceeded(f"integer with more than {MAX_INT_BITS} bits at {where}")
            container[key] = src
        elif src is None or kind is bool:
            container[key] = src
        elif kind is float:
            if not math.isfinite(src):  # type: ignore[arg-type]
                raise error(f"non-finite number at {where}")
            container[key] = src
        elif kind is dict or kind is list:
            if depth >= MAX_JSON_DEPTH:
                raise LimitExceeded(f"JSON nesting deeper than {MAX_JSON_DEPTH} at {where}")
            if kind is dict:
                new_dict: dict[str, Any] = {}
                container[key] = new_dict
                for k, v in src.items():  # type: ignore[attr-defined]
                    if type(k) is not str:
                        raise error(f"non-string object key at {where}")
                    _check_text(k, where, error)
                    new_dict[k] = None
                    stack.append((v, new_dict, k, depth + 1))
            else:
                items: list[Any] = list(src)  # type: ignore[call-overload]
                new_list: list[Any] = [None] * len(items)
                container[key] = new_list
                for i, v in enumerate(items):
                    stack.append((v, new_list, i, depth + 1))
        else:
            raise error(f"value of type {kind.__name__} is not JSON at {where}")
    return holder[0]


def _check_text(text: str, where: str, error: type[ContractError]) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise error(f"string with a lone surrogate code point at {where}") from exc


def _check_config(revision: object, limits: object) -> None:
    if type(revision) is not str or revision not in EVENT_TYPES:
        raise UnsupportedProviderState(f"unknown contract revision {revision!r}")
    if not isinstance(limits, StreamLimits):
        raise ProtocolViolation(f"limits must be a StreamLimits, got {type(limits).__name__}")


def _fingerprint(value: Any, where: str) -> bytes:
    try:
        return hashlib.sha256(canonical_bytes(value)).digest()
    except SnapshotMutated as exc:
        raise ProtocolViolation(f"payload is not canonical JSON at {where}") from exc


def _req_str(obj: Mapping[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if type(value) is not str or not value:
        raise ProtocolViolation(f"{where}.{key} must be a non-empty string")
    return value


def _req_dict(obj: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    value = obj.get(key)
    if type(value) is not dict:
        raise ProtocolViolation(f"{where}.{key} must be an object")
    return value


def _status_kind(status: object, revision: str, where: str) -> str:
    if type(status) is not str:
        raise ProtocolViolation(f"{where} must be a string")
    kind = INTERACTION_STATUSES[revision].get(status)
    if kind is None:
        raise UnsupportedProviderState(f"unknown interaction status {status!r} at {where}")
    return kind


def _step_role(step_type: object, revision: str, where: str) -> str:
    if type(step_type) is not str:
        raise ProtocolViolation(f"{where}.type must be a string")
    role = STEP_TYPES[revision].get(step_type)
    if role is None:
        if step_type in V1BETA_ONLY_STEP_TYPES[revision]:
            raise UnsupportedProviderState(
                f"step type {step_type!r} at {where} belongs to the v1beta union, "
                "not the pinned stable v1 contract"
            )
        raise UnsupportedProviderState(f"unknown step type {step_type!r} at {where}")
    return role


def _check_usage(usage: object, where: str) -> dict[str, Any] | None:
    if usage is None:
        return None
    if type(usage) is not dict:
        raise ProtocolViolation(f"{where} must be an object")
    for field in USAGE_TOTAL_FIELDS:
        if field in usage:
            value = usage[field]
            if type(value) is not int or value < 0:
                raise ProtocolViolation(f"{where}.{field} must be a non-negative integer")
    return usage


def _terminal_gate(status: str, kind: str, n_calls: int, where: str) -> None:
    """Apply the terminal status: raise unless the turn may be returned."""
    if kind == "non_terminal":
        raise ProtocolViolation(f"terminal interaction has non-terminal status {status!r} at {where}")
    if kind == "provider_failure":
        raise ProviderError(f"interaction ended with status {status!r} at {where}")
    if kind == "tool_turn" and n_calls == 0:
        raise ProtocolViolation(f"status requires_action without a function_call step at {where}")
    if kind == "final" and n_calls:
        raise UnsupportedProviderState(
            f"status {status!r} with {n_calls} unanswered function_call step(s) at {where}"
        )


# ------------------------------------------------------------------ public types


@dataclass(frozen=True, slots=True)
class GeminiFunctionCall:
    """A client-executable ``function_call`` step.

    ``call_id`` is the function-call step's ``id`` (what a ``function_result`` step's
    ``call_id`` must equal); ``arguments`` is the strictly parsed JSON object;
    ``index`` is the stream association key (``None`` for snapshots) and never a
    position in ``steps``.
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    index: int | None = None


def _calls_payload(calls: Sequence[GeminiFunctionCall]) -> list[dict[str, Any]]:
    return [
        {"call_id": c.call_id, "name": c.name, "arguments": c.arguments, "index": c.index}
        for c in calls
    ]


@dataclass(frozen=True, slots=True)
class GeminiInteractionsTurn:
    """A streamed turn that reached ``interaction.completed`` (origin ``"stream"``).

    ``steps`` are the step objects in ``step.start`` order (function-call
    ``arguments`` filled from the parsed deltas); ``step_deltas`` are the raw deltas
    of every non-function step; ``step_indexes`` the stream association keys.
    ``calls`` is non-empty only for status ``requires_action``. ``usage`` is the raw
    usage object of the terminal (``None`` if absent). ``digest`` is the canonical
    snapshot digest recorded at parse time.
    """

    interaction_id: str
    status: str
    steps: tuple[dict[str, Any], ...]
    step_deltas: tuple[tuple[dict[str, Any], ...], ...]
    step_indexes: tuple[int, ...]
    calls: tuple[GeminiFunctionCall, ...]
    usage: dict[str, Any] | None
    status_updates: tuple[str, ...]
    revision: str
    digest: str
    origin: Literal["stream"] = "stream"

    def snapshot(self) -> dict[str, Any]:
        """The canonical snapshot the digest covers (identities bound in)."""
        return {
            "contract": "gemini-interactions",
            "revision": self.revision,
            "origin": self.origin,
            "interaction_id": self.interaction_id,
            "status": self.status,
            "steps": list(self.steps),
            "step_deltas": [list(d) for d in self.step_deltas],
            "step_indexes": list(self.step_indexes),
            "calls": _calls_payload(self.calls),
            "usage": self.usage,
            "status_updates": list(self.status_updates),
        }

    def usage_totals(self) -> dict[str, int | None]:
        """``total_input_tokens``/``total_output_tokens``/``total_tokens``; absent is None."""
        return _usage_totals(self.usage)


@dataclass(frozen=True, slots=True)
class GeminiInteractionSnapshot:
    """A non-streamed Interaction object (origin ``"create"`` or ``"get"``).

    A create-response snapshot holds only model-generated steps; a GET snapshot holds
    the input history too. ``calls`` is non-empty only for status
    ``requires_action``; they are the function-call steps of the current turn.
    """

    interaction_id: str
    origin: Literal["create", "get"]
    status: str
    steps: tuple[dict[str, Any], ...]
    calls: tuple[GeminiFunctionCall, ...]
    usage: dict[str, Any] | None
    revision: str
    digest: str

    def snapshot(self) -> dict[str, Any]:
        """The canonical snapshot the digest covers (identities bound in)."""
        return {
            "contract": "gemini-interactions",
            "revision": self.revision,
            "origin": self.origin,
            "interaction_id": self.interaction_id,
            "status": self.status,
            "steps": list(self.steps),
            "calls": _calls_payload(self.calls),
            "usage": self.usage,
        }

    def usage_totals(self) -> dict[str, int | None]:
        """``total_input_tokens``/``total_output_tokens``/``total_tokens``; absent is None."""
        return _usage_totals(self.usage)


def _usage_totals(usage: Mapping[str, Any] | None) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for field in USAGE_TOTAL_FIELDS:
        value = usage.get(field) if usage is not None else None
        out[field] = value if type(value) is int else None
    return out


# ------------------------------------------------------------------- the stream


class _Step:
    __slots__ = ("index", "type", "role", "start", "deltas", "stopped", "parts", "size",
                 "initial", "arguments")

    def __init__(self, index: int, step_type: str, role: str, start: dict[str, Any]) -> None:
        self.index = index
        self.type = step_type
        self.role = role
        self.start = start
        self.deltas: list[dict[str, Any]] = []
        self.stopped = False
        self.parts: list[str] = []
        self.size = 0
        self.initial: dict[str, Any] | None = None
        self.arguments: dict[str, Any] | None = None


class GeminiInteractionsStream:
    """Incremental, sans-IO parser of one Interactions v1 event stream.

    ``feed(event)`` takes one event dict (the decoded SSE ``data`` object);
    ``close()`` returns the :class:`GeminiInteractionsTurn`. Raises only
    :class:`~contracts.errors.ContractError` subclasses: ``ProtocolViolation``
    (illegal sequence/shape, event-id conflict), ``UnsupportedProviderState``
    (unknown event/step/delta type or status, v1beta-only steps),
    ``ProviderError`` (``error`` event, failed/cancelled/incomplete terminal),
    ``StreamTruncated`` (close before ``interaction.completed``),
    ``StrictJSONError``/``LimitExceeded``. After an error every call raises.
    """

    def __init__(
        self, *, limits: StreamLimits = DEFAULT_STREAM_LIMITS, revision: str = CONTRACT_REVISION
    ) -> None:
        _check_config(revision, limits)
        self._limits = limits
        self._revision = revision
        self._poison = Poison()
        self._state = "idle"
        self._events = 0
        self._seen_ids: dict[str, bytes] = {}
        self._steps: list[_Step] = []
        self._by_index: dict[int, _Step] = {}
        self._call_ids: set[str] = set()
        self._answered_ids: set[str] = set()
        self._fragment_bytes = 0
        self._interaction_id = ""
        self._status = ""
        self._usage: dict[str, Any] | None = None
        self._status_updates: list[str] = []

    # public API
    def feed(self, event: object) -> None:
        """Consume one event. Raises a ``ContractError`` and poisons on rejection."""
        self._poison.run(lambda: self._feed(event))

    def close(self) -> GeminiInteractionsTurn:
        """End of stream: return the turn, or raise (``StreamTruncated`` before the terminal)."""
        return self._poison.finish(self._close)

    # internals
    def _feed(self, event: object) -> None:
        n = self._events
        self._events += 1
        where = f"event {n}"
        if n >= self._limits.max_events:
            raise LimitExceeded(f"more than {self._limits.max_events} events at {where}")
        if type(event) is not dict:
            raise ProtocolViolation(f"{where} must be an object, got {type(event).__name__}")
        ev: dict[str, Any] = _json_copy(event, where)
        event_type = ev.get("event_type")
        if type(event_type) is not str:
            raise ProtocolViolation(f"{where}.event_type must be a string")
        if event_type not in EVENT_TYPES[self._revision]:
            raise UnsupportedProviderState(f"unknown event_type {event_type!r} at {where}")
        if "event_id" in ev:
            event_id = ev["event_id"]
            if type(event_id) is not str or not event_id:
                raise ProtocolViolation(f"{where}.event_id must be a non-empty string")
            fingerprint = _fingerprint(ev, where)
            seen = self._seen_ids.get(event_id)
            if seen is not None:
                if seen == fingerprint:
                    return  # idempotent redelivery: already applied once
                raise ProtocolViolation(
                    f"event_id {event_id!r} replayed with a different payload at {where}"
                )
            self._seen_ids[event_id] = fingerprint
        transition = _TRANSITIONS[self._state].get(event_type)
        if transition is None:
            raise ProtocolViolation(
                f"{event_type} is not allowed in state {self._state!r} at {where}"
            )
        handler, next_state = transition
        handler(self, ev, where)
        self._state = next_state

    def _index(self, ev: Mapping[str, Any], where: str) -> int:
        index = ev.get("index")
        if type(index) is not int:
            raise ProtocolViolation(f"{where}.index must be an integer")
        if not _INT32_MIN <= index <= _INT32_MAX:
            raise ProtocolViolation(f"{where}.index {index} outside int32")
        return index

    def _open_step(self, ev: Mapping[str, Any], where: str) -> _Step:
        index = self._index(ev, where)
        step = self._by_index.get(index)
        if step is None:
            raise ProtocolViolation(f"{where} refers to index {index} without step.start")
        if step.stopped:
            raise ProtocolViolation(f"{where} refers to index {index} after its step.stop")
        return step

    def _on_created(self, ev: dict[str, Any], where: str) -> None:
        interaction = _req_dict(ev, "interaction", where)
        self._interaction_id = _req_str(interaction, "id", f"{where}.interaction")
        kind = _status_kind(interaction.get("status"), self._revision,
                            f"{where}.interaction.status")
        if kind != "non_terminal":
            raise ProtocolViolation(f"{where}: interaction.created with a terminal status")

    def _on_step_start(self, ev: dict[str, Any], where: str) -> None:
        index = self._index(ev, where)
        step = _req_dict(ev, "step", where)
        step_type = step.get("type")
        role = _step_role(step_type, self._revision, f"{where}.step")
        if index in self._by_index:
            raise ProtocolViolation(f"{where}: index {index} already used in this stream")
        if len(self._steps) >= self._limits.max_items:
            raise LimitExceeded(f"more than {self._limits.max_items} steps at {where}")
        state = _Step(index, str(step_type), role, step)
        if role == "client_call":
            call_id = _req_str(step, "id", f"{where}.step")
            _req_str(step, "name", f"{where}.step")
            if call_id in self._call_ids:
                raise ProtocolViolation(f"{where}: duplicate function_call id {call_id!r}")
            if call_id in self._answered_ids:
                raise ProtocolViolation(
                    f"{where}: function_call {call_id!r} is already answered by a "
                    "function_result step in this stream"
                )
            self._call_ids.add(call_id)
            initial = step.get("arguments")
            if initial is not None and type(initial) is not dict:
                raise ProtocolViolation(f"{where}.step.arguments must be an object")
            state.initial = initial
        elif role == "client_result":
            self._note_result(step, f"{where}.step")
        self._steps.append(state)
        self._by_index[index] = state

    def _note_result(self, obj: Mapping[str, Any], where: str) -> None:
        """Record a streamed function_result's call_id; an answered call is never released."""
        call_id = obj.get("call_id")
        if type(call_id) is not str:
            return
        if call_id in self._call_ids:
            raise ProtocolViolation(
                f"{where}: function_call {call_id!r} is already answered by a "
                "function_result step in this stream"
            )
        self._answered_ids.add(call_id)

    def _on_step_delta(self, ev: dict[str, Any], where: str) -> None:
        step = self._open_step(ev, where)
        delta = _req_dict(ev, "delta", where)
        delta_type = delta.get("type")
        if type(delta_type) is not str:
            raise ProtocolViolation(f"{where}.delta.type must be a string")
        allowed = DELTA_TYPES[self._revision][step.type]
        if delta_type not in allowed:
            known = any(delta_type in s for s in DELTA_TYPES[self._revision].values())
            if not known:
                raise UnsupportedProviderState(f"unknown delta type {delta_type!r} at {where}")
            raise ProtocolViolation(
                f"delta type {delta_type!r} not allowed for a {step.type} step at {where}"
            )
        if step.role != "client_call":
            if step.role == "client_result":
                self._note_result(delta, f"{where}.delta")
            step.deltas.append(delta)
            return
        if not _ARGUMENTS_DELTA_KEYS.issuperset(delta):
            # Unknown fields are kept raw; they make the step unprovable for replay.
            step.deltas.append(delta)
        fragment = delta.get("arguments")
        if fragment is None:
            return  # optional field: absent (or null) is no fragment, never "None"
        if type(fragment) is not str:
            raise ProtocolViolation(f"{where}.delta.arguments must be a string")
        if not fragment:
            return
        if step.initial:
            raise ProtocolViolation(
                f"{where}: argument deltas after a non-empty step.start arguments object"
            )
        size = len(fragment.encode("utf-8", "surrogatepass"))
        if step.size + size > self._limits.max_fragment_bytes:
            raise LimitExceeded(
                f"arguments of step index {step.index} exceed "
                f"{self._limits.max_fragment_bytes} bytes at {where}"
            )
        if self._fragment_bytes + size > self._limits.max_total_fragment_bytes:
            raise LimitExceeded(
                f"argument text exceeds {self._limits.max_total_fragment_bytes} bytes at {where}"
            )
        step.parts.append(fragment)
        step.size += size
        self._fragment_bytes += size

    def _on_step_stop(self, ev: dict[str, Any], where: str) -> None:
        step = self._open_step(ev, where)
        step.stopped = True
        if step.role != "client_call":
            return
        if step.parts:
            text = "".join(step.parts)
            step.parts = []
            try:
                parsed = strict_loads(text)
            except (StrictJSONError, LimitExceeded) as exc:
                raise type(exc)(
                    f"arguments of step index {step.index}: {exc.message}", where=where
                ) from exc
            if type(parsed) is not dict:
                raise ProtocolViolation(
                    f"arguments of step index {step.index} are not a JSON object at {where}"
                )
            step.arguments = _json_copy(parsed, f"{where} arguments")
        elif step.initial is not None:
            step.arguments = step.initial
        else:
            raise ProtocolViolation(
                f"function_call step index {step.index} stopped without arguments at {where}"
            )

    def _on_status_update(self, ev: dict[str, Any], where: str) -> None:
        interaction_id = _req_str(ev, "interaction_id", where)
        if interaction_id != self._interaction_id:
            raise ProtocolViolation(f"{where}.interaction_id differs from interaction.created")
        status = ev.get("status")
        _status_kind(status, self._revision, f"{where}.status")
        self._status_updates.append(str(status))  # informational only

    def _on_completed(self, ev: dict[str, Any], where: str) -> None:
        interaction = _req_dict(ev, "interaction", where)
        interaction_id = _req_str(interaction, "id", f"{where}.interaction")
        if interaction_id != self._interaction_id:
            raise ProtocolViolation(f"{where}.interaction.id differs from interaction.created")
        status = interaction.get("status")
        kind = _status_kind(status, self._revision, f"{where}.interaction.status")
        for step in self._steps:
            if not step.stopped:
                raise ProtocolViolation(
                    f"step index {step.index} has no step.stop before interaction.completed "
                    f"at {where}"
                )
        steps = interaction.get("steps")
        if steps is not None and (type(steps) is not list or steps):
            raise UnsupportedProviderState(
                f"{where}.interaction.steps is non-empty; terminal step reconciliation is "
                "not part of the pinned stream contract"
            )
        self._usage = _check_usage(interaction.get("usage"), f"{where}.interaction.usage")
        n_calls = sum(1 for s in self._steps if s.role == "client_call")
        _terminal_gate(str(status), kind, n_calls, where)
        self._status = str(status)

    def _on_error(self, ev: dict[str, Any], where: str) -> None:
        error = ev.get("error")
        code = message = None
        if type(error) is dict:
            code, message = error.get("code"), error.get("message")
        code_s = code if type(code) is str else "?"
        message_s = message if type(message) is str else "no message"
        raise ProviderError(f"error event (code {code_s!r}): {message_s[:200]}", where=where)

    def _close(self) -> GeminiInteractionsTurn:
        if self._state != "done":
            open_steps = sum(1 for s in self._steps if not s.stopped)
            raise StreamTruncated(
                f"stream ended before interaction.completed after {self._events} events "
                f"({open_steps} step(s) still open)"
            )
        steps: list[dict[str, Any]] = []
        calls: list[GeminiFunctionCall] = []
        for st in self._steps:
            raw = dict(st.start)
            if st.role == "client_call" and st.arguments is not None:
                raw["arguments"] = st.arguments
                if self._status == "requires_action":
                    calls.append(
                        GeminiFunctionCall(
                            call_id=str(raw["id"]),
                            name=str(raw["name"]),
                            arguments=_json_copy(st.arguments, "arguments"),
                            index=st.index,
                        )
                    )
            steps.append(raw)
        turn = GeminiInteractionsTurn(
            interaction_id=self._interaction_id,
            status=self._status,
            steps=tuple(steps),
            step_deltas=tuple(tuple(st.deltas) for st in self._steps),
            step_indexes=tuple(st.index for st in self._steps),
            calls=tuple(calls),
            usage=self._usage,
            status_updates=tuple(self._status_updates),
            revision=self._revision,
            digest="",
        )
        object.__setattr__(turn, "digest", canonical_digest(turn.snapshot()))
        return turn


_ARGUMENTS_DELTA_KEYS: Final = frozenset({"type", "arguments"})
_Handler = Any
_TRANSITIONS: Final[dict[str, dict[str, tuple[_Handler, str]]]] = {
    "idle": {
        "interaction.created": (GeminiInteractionsStream._on_created, "open"),
        "error": (GeminiInteractionsStream._on_error, "idle"),
    },
    "open": {
        "step.start": (GeminiInteractionsStream._on_step_start, "open"),
        "step.delta": (GeminiInteractionsStream._on_step_delta, "open"),
        "step.stop": (GeminiInteractionsStream._on_step_stop, "open"),
        "interaction.status_update": (GeminiInteractionsStream._on_status_update, "open"),
        "interaction.completed": (GeminiInteractionsStream._on_completed, "done"),
        "error": (GeminiInteractionsStream._on_error, "open"),
    },
    "done": {},
}


def parse_events(
    events: Iterable[object],
    *,
    limits: StreamLimits = DEFAULT_STREAM_LIMITS,
    revision: str = CONTRACT_REVISION,
) -> GeminiInteractionsTurn:
    """Parse a complete event sequence; see :class:`GeminiInteractionsStream`."""
    stream = GeminiInteractionsStream(limits=limits, revision=revision)
    if isinstance(events, (str, bytes, bytearray, Mapping)):
        raise ProtocolViolation("events must be a sequence of event objects")
    try:
        iterator = iter(events)
    except TypeError as exc:
        raise ProtocolViolation(
            f"events must be a sequence of event objects, got {type(events).__name__}"
        ) from exc
    for event in iterator:
        stream.feed(event)
    return stream.close()


# ------------------------------------------------------------------ snapshots

_INPUT_ROLES: Final = frozenset({"input", "client_result"})


def parse_interaction(
    interaction: object,
    *,
    origin: Literal["create", "get"],
    revision: str = CONTRACT_REVISION,
    limits: StreamLimits = DEFAULT_STREAM_LIMITS,
) -> GeminiInteractionSnapshot:
    """Parse a non-streamed Interaction object (create response or GET) into a snapshot.

    ``origin="create"``: ``steps`` must hold only model-generated steps. ``origin="get"``:
    ``steps`` must start with the ``user_input`` history. ``steps`` must be present.
    Raises ``ProtocolViolation`` (shape), ``UnsupportedProviderState`` (unknown or
    v1beta-only step type, unknown status), ``ProviderError`` (failed/cancelled/
    incomplete), ``LimitExceeded``.
    """
    if origin not in ("create", "get"):
        raise ProtocolViolation(f"snapshot origin must be 'create' or 'get', got {origin!r}")
    _check_config(revision, limits)
    if type(interaction) is not dict:
        raise ProtocolViolation("interaction must be an object")
    obj: dict[str, Any] = _json_copy(interaction, "interaction")
    interaction_id = _req_str(obj, "id", "interaction")
    kind = _status_kind(obj.get("status"), revision, "interaction.status")
    raw_steps = obj.get("steps")
    if type(raw_steps) is not list:
        raise ProtocolViolation("interaction.steps must be a list (a complete snapshot)")
    if len(raw_steps) > limits.max_items:
        raise LimitExceeded(f"more than {limits.max_items} steps in interaction.steps")
    roles: list[str] = []
    call_ids: set[str] = set()
    for i, step in enumerate(raw_steps):
        where = f"interaction.steps[{i}]"
        if type(step) is not dict:
            raise ProtocolViolation(f"{where} must be an object")
        role = _step_role(step.get("type"), revision, where)
        roles.append(role)
        if role == "client_call":
            call_id = _req_str(step, "id", where)
            _req_str(step, "name", where)
            _req_dict(step, "arguments", where)
            if call_id in call_ids:
                raise ProtocolViolation(f"{where}: duplicate function_call id {call_id!r}")
            call_ids.add(call_id)
        elif role == "client_result":
            _req_str(step, "call_id", where)
    if origin == "create":
        for i, role in enumerate(roles):
            if role in _INPUT_ROLES:
                raise ProtocolViolation(
                    f"interaction.steps[{i}]: a create response holds only model-generated steps"
                )
        current = 0
    else:
        if not roles or roles[0] != "input":
            raise ProtocolViolation("interaction.steps[0]: a GET snapshot starts with user_input")
        current = max(i for i, r in enumerate(roles) if r in _INPUT_ROLES) + 1
        answered = {
            s["call_id"] for s, r in zip(raw_steps, roles, strict=True) if r == "client_result"
        }
        for i in range(current):
            if roles[i] == "client_call" and raw_steps[i]["id"] not in answered:
                raise ProtocolViolation(
                    f"interaction.steps[{i}]: earlier function_call has no function_result"
                )
    status = str(obj["status"])
    current_calls = [
        s for s, r in zip(raw_steps[current:], roles[current:], strict=True) if r == "client_call"
    ]
    _terminal_gate(status, kind, len(current_calls), "interaction.status")
    calls: tuple[GeminiFunctionCall, ...] = ()
    if status == "requires_action":
        calls = tuple(
            GeminiFunctionCall(
                call_id=s["id"], name=s["name"], arguments=_json_copy(s["arguments"], "arguments")
            )
            for s in current_calls
        )
    snap = GeminiInteractionSnapshot(
        interaction_id=interaction_id,
        origin=origin,
        status=status,
        steps=tuple(raw_steps),
        calls=calls,
        usage=_check_usage(obj.get("usage"), "interaction.usage"),
        revision=revision,
        digest="",
    )
    object.__setattr__(snap, "digest", canonical_digest(snap.snapshot()))
    return snap


# --------------------------------------------------------------- continuations

#: Request fields a builder owns; ``request_controls`` may not set them.
PROTECTED_REQUEST_FIELDS: Final = frozenset(
    {
        "model",
        "input",
        "store",
        "previous_interaction_id",
        "tools",
        "system_instruction",
        "generation_config",
        "response_format",
        "response_mime_type",
        "agent",
    }
)


def _field_key(name: str) -> str:
    """Fold case and ``_``/``-`` so ``previousInteractionId`` matches ``previous_interaction_id``."""
    return name.replace("_", "").replace("-", "").casefold()


_PROTECTED_KEYS: Final = frozenset(_field_key(f) for f in PROTECTED_REQUEST_FIELDS)
_FUNCTION_TOOL_KEYS: Final = frozenset({"type", "name", "description", "parameters"})
#: Google-hosted tool declarations passed through (their steps are in the v1 union).
HOSTED_TOOL_TYPES: Final[dict[str, frozenset[str]]] = {
    "2026-07-21": frozenset(
        {"google_search", "code_execution", "url_context", "file_search", "google_maps"}
    ),
}
_RESPONSE_FORMAT_MEDIA: Final = frozenset({"audio", "image", "video"})
_TEXT_MIME_TYPES: Final = frozenset({"application/json", "text/plain"})

AnyTurn = GeminiInteractionsTurn | GeminiInteractionSnapshot


def _check_turn(turn: object) -> AnyTurn:
    if not isinstance(turn, (GeminiInteractionsTurn, GeminiInteractionSnapshot)):
        raise ContinuationError(
            f"turn must be a parsed Gemini Interactions turn or snapshot, got {type(turn).__name__}"
        )
    # Digest first: nothing is copied from a turn that changed after parsing.
    check_digest(turn.snapshot(), turn.digest, what=f"gemini interaction ({turn.origin})")
    if turn.status != "requires_action" or not turn.calls:
        raise ContinuationError(
            f"interaction {turn.interaction_id!r} has status {turn.status!r}; only a "
            "requires_action turn with calls can be continued"
        )
    return turn


def _caller_json(value: object, where: str) -> Any:
    return _json_copy(value, where, ContinuationError)


def _check_tools(tools: object, calls: Sequence[GeminiFunctionCall], revision: str) -> list[Any]:
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise ContinuationError("tools must be a list of tool declarations")
    copied: list[Any] = _caller_json(list(tools), "tools")
    names: set[str] = set()
    for i, tool in enumerate(copied):
        where = f"tools[{i}]"
        if type(tool) is not dict:
            raise ContinuationError(f"{where} must be an object")
        tool_type = tool.get("type")
        if tool_type == "function":
            if "strict" in tool:
                raise ContinuationError(
                    f"{where}.strict: Gemini function declarations have no 'strict' field"
                )
            extra = sorted(set(tool) - _FUNCTION_TOOL_KEYS)
            if extra:
                raise ContinuationError(f"{where}: unknown function declaration field {extra[0]!r}")
            name = tool.get("name")
            if type(name) is not str or not name:
                raise ContinuationError(f"{where}.name must be a non-empty string")
            if type(tool.get("parameters")) is not dict:
                raise ContinuationError(f"{where}.parameters must be a JSON schema object")
            if "description" in tool and type(tool["description"]) is not str:
                raise ContinuationError(f"{where}.description must be a string")
            if name in names:
                raise ContinuationError(f"{where}: duplicate function declaration {name!r}")
            names.add(name)
        elif tool_type not in HOSTED_TOOL_TYPES[revision]:
            raise ContinuationError(f"{where}.type {tool_type!r} is not a pinned v1 tool type")
    for call in calls:
        if call.name not in names:
            raise ContinuationError(
                f"call {call.call_id!r} names function {call.name!r}, which tools does not declare"
            )
    return copied


def _check_response_format(response_format: object) -> dict[str, Any] | None:
    if response_format is None:
        return None
    rf = _caller_json(response_format, "response_format")
    if type(rf) is not dict:
        raise ContinuationError("response_format must be an object")
    rf_type = rf.get("type")
    if rf_type in _RESPONSE_FORMAT_MEDIA:
        return rf
    if rf_type != "text":
        raise ContinuationError(f"response_format.type {rf_type!r} is not a known discriminator")
    extra = sorted(set(rf) - {"type", "mime_type", "schema"})
    if extra:
        raise ContinuationError(f"response_format: unknown field {extra[0]!r}")
    mime = rf.get("mime_type")
    if mime not in _TEXT_MIME_TYPES:
        raise ContinuationError(f"response_format.mime_type {mime!r} is not a text mime type")
    if mime == "application/json":
        if type(rf.get("schema")) is not dict:
            raise ContinuationError("response_format.schema must be a JSON schema object")
    elif "schema" in rf:
        raise ContinuationError("response_format.schema requires mime_type application/json")
    return rf


def _base_request(
    turn: AnyTurn,
    *,
    model: object,
    tools: object,
    system_instruction: object,
    generation_config: object,
    response_format: object,
    request_controls: object,
) -> dict[str, Any]:
    if type(model) is not str or not model:
        raise ContinuationError("model must be a non-empty string")
    request: dict[str, Any] = {"model": model}
    if system_instruction is not None:
        if type(system_instruction) is not str:
            raise ContinuationError("system_instruction must be a string or None")
        request["system_instruction"] = system_instruction
    request["tools"] = _check_tools(tools, turn.calls, turn.revision)
    if generation_config is not None:
        config = _caller_json(generation_config, "generation_config")
        if type(config) is not dict:
            raise ContinuationError("generation_config must be an object or None")
        request["generation_config"] = config
    rf = _check_response_format(response_format)
    if rf is not None:
        request["response_format"] = rf
    if request_controls is not None:
        controls = _caller_json(request_controls, "request_controls")
        if type(controls) is not dict:
            raise ContinuationError("request_controls must be an object")
        for key in controls:
            if _field_key(key) in _PROTECTED_KEYS:
                raise ContinuationError(f"request_controls may not set protected field {key!r}")
        request.update(controls)
    return request


def _result_steps(
    turn: AnyTurn, results: object
) -> list[dict[str, Any]]:
    try:
        bound = bind_results(
            [c.call_id for c in turn.calls],
            results,  # type: ignore[arg-type]
        )
    except TypeError as exc:
        raise ContinuationError("results must be a collection of ModelVisibleToolResult") from exc
    names = {c.call_id: c.name for c in turn.calls}
    steps: list[dict[str, Any]] = []
    for call_id, result in bound.items():
        output = str.__str__(result.output)  # plain text even from a str subclass
        _check_text(output, f"result for call {call_id!r}", ContinuationError)
        step: dict[str, Any] = {
            "type": "function_result",
            "call_id": call_id,
            "name": names[call_id],
            "result": output,
        }
        if result.is_error:
            step["is_error"] = True
        steps.append(step)
    return steps


def build_gemini_interactions_continuation(
    turn: AnyTurn,
    results: Iterable[ModelVisibleToolResult] | Mapping[str, ModelVisibleToolResult],
    *,
    model: str,
    tools: Sequence[Mapping[str, Any]],
    system_instruction: str | None,
    generation_config: Mapping[str, Any] | None,
    previous_interaction_was_stored: bool,
    store: bool,
    response_format: Mapping[str, Any] | None = None,
    request_controls: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build a stateful continuation (``previous_interaction_id``) request body.

    ``previous_interaction_was_stored`` must be literally ``True`` (proof that the
    prior Interaction is referenceable); ``store`` (a bool) independently decides
    whether the new Interaction is saved. Tools, system instruction and generation
    config are resent explicitly (``previous_interaction_id`` does not inherit them).
    The input is one ``function_result`` step per call. Raises ``SnapshotMutated``
    (digest, checked first), ``ContinuationError``, ``ResultBindingError``.
    """
    turn = _check_turn(turn)
    if previous_interaction_was_stored is not True:
        raise ContinuationError(
            "previous_interaction_was_stored must be True: a stateful continuation needs "
            "proof that the prior interaction was stored"
        )
    if type(store) is not bool:
        raise ContinuationError("store must be an explicit bool for the new interaction")
    request = _base_request(
        turn,
        model=model,
        tools=tools,
        system_instruction=system_instruction,
        generation_config=generation_config,
        response_format=response_format,
        request_controls=request_controls,
    )
    request["previous_interaction_id"] = turn.interaction_id
    request["store"] = store
    request["input"] = _result_steps(turn, results)
    return request


def _check_replayable(step: Mapping[str, Any], role: str, where: str, origin: str) -> None:
    """Raise ContinuationError unless ``step`` is locally provable to replay losslessly."""
    if role == "client_call":
        return  # id/name/arguments were validated and parsed strictly
    if origin == "stream":
        raise ContinuationError(
            f"{where}: a streamed {step.get('type')} step cannot be reconstructed losslessly; "
            "continue from a create/GET snapshot or statefully"
        )
    if role == "thought":
        signature = step.get("signature")
        if type(signature) is not str or not signature:
            raise ContinuationError(f"{where}: thought step without a signature cannot replay")
        summary = step.get("summary")
        if summary is not None:
            if type(summary) is not list:
                raise ContinuationError(f"{where}.summary must be a list")
            for j, item in enumerate(summary):
                if type(item) is not dict or type(item.get("type")) is not str:
                    raise ContinuationError(f"{where}.summary[{j}] must be a typed object")
                if item["type"] == "text" and type(item.get("text")) is not str:
                    raise ContinuationError(f"{where}.summary[{j}].text must be a string")
        return
    if role == "model_output":
        content = step.get("content")
        if "error" in step or type(content) is not list:
            raise ContinuationError(f"{where}: model_output completeness is not provable")
        for j, item in enumerate(content):
            if (
                type(item) is not dict
                or item.get("type") != "text"
                or type(item.get("text")) is not str
                or set(item) - {"type", "text", "annotations"}
            ):
                raise ContinuationError(
                    f"{where}.content[{j}]: only complete text model_output replays"
                )
        return
    if role == "input":
        content = step.get("content")
        if content is not None:
            if type(content) is not list:
                raise ContinuationError(f"{where}.content must be a list")
            for j, item in enumerate(content):
                if type(item) is not dict or type(item.get("type")) is not str:
                    raise ContinuationError(f"{where}.content[{j}] must be a typed object")
        return
    if role == "client_result":
        if type(step.get("call_id")) is not str or not step.get("call_id") or "result" not in step:
            raise ContinuationError(f"{where}: function_result needs call_id and result")
        return
    raise ContinuationError(
        f"{where}: Google-hosted {step.get('type')} step completeness is not provable locally"
    )


def build_gemini_interactions_stateless_continuation(
    turn: AnyTurn,
    results: Iterable[ModelVisibleToolResult] | Mapping[str, ModelVisibleToolResult],
    *,
    model: str,
    tools: Sequence[Mapping[str, Any]],
    system_instruction: str | None,
    generation_config: Mapping[str, Any] | None,
    prior_input_steps: Sequence[Mapping[str, Any]] | None = None,
    response_format: Mapping[str, Any] | None = None,
    request_controls: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build a stateless continuation (``store=false``, no ``previous_interaction_id``).

    ``input`` is one canonical Step array: the input history, the turn's complete
    model-generated steps, then one ``function_result`` per call. For a stream or a
    create-response snapshot the history is ``prior_input_steps`` (required, starting
    with ``user_input``); a GET snapshot already holds it, so passing
    ``prior_input_steps`` with it is a ``ContinuationError``. Streamed steps other than
    ``function_call``, thoughts without a signature, non-text model output and
    Google-hosted tool steps fail closed with ``ContinuationError``. Raises
    ``SnapshotMutated`` (digest, checked first) and ``ResultBindingError`` too.
    """
    turn = _check_turn(turn)
    revision = turn.revision
    # Copy the turn's steps right after the digest check, before any caller object
    # (prior_input_steps, tools, results) is iterated: a callback that mutates the
    # turn can then no longer change what is replayed.
    turn_steps: list[Any] = []
    for i, step in enumerate(turn.steps):
        where = f"turn.steps[{i}]"
        role = STEP_TYPES[revision][str(step.get("type"))]
        if (turn.origin == "stream" and role == "client_call"
                and isinstance(turn, GeminiInteractionsTurn) and turn.step_deltas[i]):
            raise ContinuationError(
                f"{where}: a streamed function_call whose deltas carried fields beyond "
                "'arguments' is not provably reconstructable; continue statefully"
            )
        _check_replayable(step, role, where, turn.origin)
        turn_steps.append(_json_copy(step, where, ContinuationError))
    history: list[Any]
    if turn.origin == "get":
        if prior_input_steps is not None:
            raise ContinuationError(
                "a GET snapshot already holds the input history; prior_input_steps must be None"
            )
        history = []
    else:
        if prior_input_steps is None:
            raise ContinuationError(
                f"a {turn.origin} turn holds only model-generated steps; prior_input_steps "
                "(starting with user_input) is required"
            )
        if isinstance(prior_input_steps, (str, bytes, Mapping)) or not isinstance(
            prior_input_steps, Sequence
        ):
            raise ContinuationError("prior_input_steps must be a list of steps")
        history = _caller_json(list(prior_input_steps), "prior_input_steps")
        if not history:
            raise ContinuationError("prior_input_steps must not be empty")
        for i, step in enumerate(history):
            where = f"prior_input_steps[{i}]"
            if type(step) is not dict:
                raise ContinuationError(f"{where} must be an object")
            try:
                role = _step_role(step.get("type"), revision, where)
            except ContractError as exc:
                raise ContinuationError(exc.message) from exc
            if i == 0 and role != "input":
                raise ContinuationError(f"{where} must be a user_input step")
            if role == "client_call":
                if (type(step.get("id")) is not str or type(step.get("name")) is not str
                        or type(step.get("arguments")) is not dict):
                    raise ContinuationError(f"{where}: function_call needs id, name, arguments")
            _check_replayable(step, role, where, "prior")
        current_ids = {c.call_id for c in turn.calls}
        for i, step in enumerate(history):
            # Neither the call nor an answer to it may already sit in the history.
            key = "id" if step.get("type") == "function_call" else "call_id"
            if step.get("type") in ("function_call", "function_result") and (
                step.get(key) in current_ids
            ):
                raise ContinuationError(
                    f"prior_input_steps[{i}] repeats call {step.get(key)!r} of the current turn"
                )
    request = _base_request(
        turn,
        model=model,
        tools=tools,
        system_instruction=system_instruction,
        generation_config=generation_config,
        response_format=response_format,
        request_controls=request_controls,
    )
    request["store"] = False
    request["input"] = history + turn_steps + _result_steps(turn, results)
    return request
