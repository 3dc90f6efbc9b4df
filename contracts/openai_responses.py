"""OpenAI Responses API: an incremental, sans-IO parser of one streamed Response.

The input is the typed-SSE projection of ``POST /v1/responses`` with ``stream: true``:
one JSON object per server-sent event, keyed by ``type`` and ``sequence_number``
(the shape of openai-python's ``ResponseStreamEvent`` union). The parser releases
function calls only after a ``response.completed`` whose terminal ``output`` agrees
with every item lifecycle seen in the stream.

Rules (pinned contract revision ``2026-07-21``; the tables below are the contract):

* ``sequence_number`` is required on every event and strictly increases; it need not
  start at 0 or be contiguous.
* Every output item binds its whole lifecycle by ``output_index``:
  ``response.output_item.added`` -> item sub-events -> ``response.output_item.done``;
  item sub-events name both ``output_index`` and ``item_id``, so two calls' argument
  deltas may interleave in any order (there is no "current call").
* ``response.function_call_arguments.done`` (``arguments``, ``name``), the done item
  and the terminal output agree with the concatenated deltas on ``id``, ``call_id``,
  ``name`` and ``arguments``; the terminal output holds every added item, in order,
  byte-for-byte equal (canonical JSON) to its done form.
* Arguments are parsed with :mod:`contracts.strict_json` only at the terminal and must
  be a JSON object.
* ``response.failed``, ``response.incomplete``, ``error``, EOF before the terminal and
  any illegal sequence release nothing.
* Unknown optional fields are kept in the raw data; unknown event types, item types,
  statuses, caller types and function namespaces fail closed.

Everything here is standard library only; every rejection is a
:class:`~contracts.errors.ContractError`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import strict_json
from ._stream import DEFAULT_STREAM_LIMITS, FragmentBuffer, Poison, StreamLimits
from .digest import canonical_digest, check_digest
from .errors import (
    LimitExceeded,
    ProtocolViolation,
    ProviderError,
    SnapshotMutated,
    StreamTruncated,
    StrictJSONError,
    UnsupportedProviderState,
)

__all__ = [
    "CONTRACT_REVISION",
    "REVISIONS",
    "RevisionSpec",
    "EventSpec",
    "ItemSpec",
    "PartEventSpec",
    "OpenAIResponsesCall",
    "PendingFunctionCall",
    "OpenAIResponsesTurn",
    "OpenAIResponsesStream",
    "parse_events",
    "build_openai_responses_continuation",
    "build_openai_responses_stateless_continuation",
]

CONTRACT_REVISION = "2026-07-21"

# Longest provider identifier (item id, call_id, response id, function name) accepted.
MAX_IDENTIFIER_CHARS = 4_096
# Largest sequence_number accepted (int64 range; Python ints are unbounded).
MAX_SEQUENCE_NUMBER = 2**63 - 1
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1

# Field kinds used in the tables: JSON type names.
STRING = "string"
INTEGER = "integer"
OBJECT = "object"
ARRAY = "array"


@dataclass(frozen=True, slots=True)
class EventSpec:
    """One modeled event type: its handler role, required fields and binding.

    ``role`` selects the transition; ``required`` maps each required field (besides
    ``type`` and ``sequence_number``) to its JSON kind; ``item_types`` names the
    output item types an item-bound event may refer to (empty: not item-bound);
    ``meaning`` is the lifecycle meaning, for docs and error messages.
    """

    role: str
    required: Mapping[str, str]
    item_types: frozenset[str]
    meaning: str


@dataclass(frozen=True, slots=True)
class ItemSpec:
    """One modeled output item type: required fields and what it means to the host."""

    required: Mapping[str, str]
    status_required: bool
    executable: bool
    meaning: str


@dataclass(frozen=True, slots=True)
class RevisionSpec:
    """The whole pinned contract of one revision, as data."""

    events: Mapping[str, EventSpec]
    unmodeled_events: Mapping[str, str]
    items: Mapping[str, ItemSpec]
    unmodeled_items: Mapping[str, str]
    item_statuses: Mapping[str, str]
    item_statuses_at_added: frozenset[str]
    item_statuses_at_done: frozenset[str]
    response_statuses: Mapping[str, str]
    # response-carrying event type -> statuses its ``response.status`` may have
    response_event_statuses: Mapping[str, frozenset[str]]
    caller_types: Mapping[str, bool]
    part_events: Mapping[str, PartEventSpec]
    part_types: Mapping[tuple[str, str], Mapping[str, str]]
    # Response fields that must be null (or absent) in a ``response.completed``: a
    # non-null value contradicts the completed status, so the terminal fails closed.
    completed_null_fields: tuple[str, ...] = ("error", "incomplete_details")


_ITEM_ID = {"item_id": STRING, "output_index": INTEGER}
_MESSAGE = frozenset({"message"})
_REASONING = frozenset({"reasoning"})
_FUNCTION_CALL = frozenset({"function_call"})


def _fields(*parts: Mapping[str, str]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for part in parts:
        merged.update(part)
    return merged


_EVENTS_2026_07_21: dict[str, EventSpec] = {
    "response.created": EventSpec(
        "created", {"response": OBJECT}, frozenset(),
        "first event; names the Response id every later snapshot must carry"),
    "response.queued": EventSpec(
        "status", {"response": OBJECT}, frozenset(),
        "progress notification (queued); not a terminal, releases nothing"),
    "response.in_progress": EventSpec(
        "status", {"response": OBJECT}, frozenset(),
        "progress notification (in_progress); not a terminal, releases nothing"),
    "response.output_item.added": EventSpec(
        "item_added", {"item": OBJECT, "output_index": INTEGER}, frozenset(),
        "opens the lifecycle of output item output_index (must be the next index)"),
    "response.output_item.done": EventSpec(
        "item_done", {"item": OBJECT, "output_index": INTEGER}, frozenset(),
        "closes the lifecycle of output item output_index with its final form"),
    "response.function_call_arguments.delta": EventSpec(
        "args_delta", _fields({"delta": STRING}, _ITEM_ID), _FUNCTION_CALL,
        "appends one argument fragment to the open function_call item"),
    "response.function_call_arguments.done": EventSpec(
        "args_done",
        _fields({"arguments": STRING, "name": STRING}, _ITEM_ID), _FUNCTION_CALL,
        "final arguments and name of the open function_call item"),
    "response.content_part.added": EventSpec(
        "item_part", _fields({"content_index": INTEGER, "part": OBJECT}, _ITEM_ID),
        _MESSAGE | _REASONING, "opens a content part inside an open item"),
    "response.content_part.done": EventSpec(
        "item_part", _fields({"content_index": INTEGER, "part": OBJECT}, _ITEM_ID),
        _MESSAGE | _REASONING, "closes a content part inside an open item"),
    "response.output_text.delta": EventSpec(
        "item_part",
        _fields({"content_index": INTEGER, "delta": STRING, "logprobs": ARRAY}, _ITEM_ID),
        _MESSAGE, "text fragment of an open message item"),
    "response.output_text.done": EventSpec(
        "item_part",
        _fields({"content_index": INTEGER, "text": STRING, "logprobs": ARRAY}, _ITEM_ID),
        _MESSAGE, "final text of one content part of an open message item"),
    "response.output_text.annotation.added": EventSpec(
        "item_part",
        _fields({"annotation": OBJECT, "annotation_index": INTEGER,
                 "content_index": INTEGER}, _ITEM_ID),
        _MESSAGE, "annotation on a text part of an open message item"),
    "response.refusal.delta": EventSpec(
        "item_part", _fields({"content_index": INTEGER, "delta": STRING}, _ITEM_ID),
        _MESSAGE, "refusal fragment of an open message item"),
    "response.refusal.done": EventSpec(
        "item_part", _fields({"content_index": INTEGER, "refusal": STRING}, _ITEM_ID),
        _MESSAGE, "final refusal text of an open message item"),
    "response.reasoning_summary_part.added": EventSpec(
        "item_part", _fields({"part": OBJECT, "summary_index": INTEGER}, _ITEM_ID),
        _REASONING, "opens a summary part of an open reasoning item"),
    "response.reasoning_summary_part.done": EventSpec(
        "item_part", _fields({"part": OBJECT, "summary_index": INTEGER}, _ITEM_ID),
        _REASONING, "closes a summary part of an open reasoning item"),
    "response.reasoning_summary_text.delta": EventSpec(
        "item_part", _fields({"delta": STRING, "summary_index": INTEGER}, _ITEM_ID),
        _REASONING, "summary text fragment of an open reasoning item"),
    "response.reasoning_summary_text.done": EventSpec(
        "item_part", _fields({"text": STRING, "summary_index": INTEGER}, _ITEM_ID),
        _REASONING, "final summary text of an open reasoning item"),
    "response.reasoning_text.delta": EventSpec(
        "item_part", _fields({"content_index": INTEGER, "delta": STRING}, _ITEM_ID),
        _REASONING, "reasoning text fragment of an open reasoning item"),
    "response.reasoning_text.done": EventSpec(
        "item_part", _fields({"content_index": INTEGER, "text": STRING}, _ITEM_ID),
        _REASONING, "final reasoning text of an open reasoning item"),
    "response.completed": EventSpec(
        "completed", {"response": OBJECT}, frozenset(),
        "terminal: the Response finished; its output is authoritative"),
    "response.failed": EventSpec(
        "failed", {"response": OBJECT}, frozenset(),
        "terminal: the Response failed; releases nothing"),
    "response.incomplete": EventSpec(
        "incomplete", {"response": OBJECT}, frozenset(),
        "terminal: the Response stopped early; releases nothing"),
    "error": EventSpec(
        "error", {"message": STRING}, frozenset(),
        "in-stream error; releases nothing"),
}

@dataclass(frozen=True, slots=True)
class PartEventSpec:
    """How an item sub-event acts on a part of a message or reasoning item.

    ``family`` is the item array the part belongs to (``content`` or ``summary``),
    ``index_field`` the event field holding the part's index in that array, ``action``
    one of ``add``, ``delta``, ``text_done``, ``annotate``, ``done``; ``part_type`` is
    the part type a ``delta``/``text_done`` applies to and ``text_field`` the event
    field carrying the fragment or the final text.
    """

    family: str
    index_field: str
    action: str
    part_type: str | None
    text_field: str | None


_PART_EVENTS_2026_07_21: dict[str, PartEventSpec] = {
    "response.content_part.added": PartEventSpec("content", "content_index", "add", None, None),
    "response.content_part.done": PartEventSpec("content", "content_index", "done", None, None),
    "response.output_text.delta": PartEventSpec(
        "content", "content_index", "delta", "output_text", "delta"),
    "response.output_text.done": PartEventSpec(
        "content", "content_index", "text_done", "output_text", "text"),
    "response.output_text.annotation.added": PartEventSpec(
        "content", "content_index", "annotate", "output_text", None),
    "response.refusal.delta": PartEventSpec(
        "content", "content_index", "delta", "refusal", "delta"),
    "response.refusal.done": PartEventSpec(
        "content", "content_index", "text_done", "refusal", "refusal"),
    "response.reasoning_text.delta": PartEventSpec(
        "content", "content_index", "delta", "reasoning_text", "delta"),
    "response.reasoning_text.done": PartEventSpec(
        "content", "content_index", "text_done", "reasoning_text", "text"),
    "response.reasoning_summary_part.added": PartEventSpec(
        "summary", "summary_index", "add", None, None),
    "response.reasoning_summary_part.done": PartEventSpec(
        "summary", "summary_index", "done", None, None),
    "response.reasoning_summary_text.delta": PartEventSpec(
        "summary", "summary_index", "delta", "summary_text", "delta"),
    "response.reasoning_summary_text.done": PartEventSpec(
        "summary", "summary_index", "text_done", "summary_text", "text"),
}

# (item type, part family) -> part type -> the part field holding its text.
# A part type not listed for its item fails closed: a replayed item could not be
# proven complete.
_PART_TYPES_2026_07_21: dict[tuple[str, str], dict[str, str]] = {
    ("message", "content"): {"output_text": "text", "refusal": "refusal"},
    ("reasoning", "content"): {"reasoning_text": "text"},
    ("reasoning", "summary"): {"summary_text": "text"},
}


# Known event types of the pinned SDK union that this revision does not model.
# They belong to hosted/built-in tools or output modalities whose items this
# contract does not implement, so their appearance fails closed.
_UNMODELED_EVENTS_2026_07_21: dict[str, str] = {
    name: "known event of an unmodeled built-in tool or modality"
    for name in (
        "response.audio.delta",
        "response.audio.done",
        "response.audio.transcript.delta",
        "response.audio.transcript.done",
        "response.code_interpreter_call_code.delta",
        "response.code_interpreter_call_code.done",
        "response.code_interpreter_call.completed",
        "response.code_interpreter_call.in_progress",
        "response.code_interpreter_call.interpreting",
        "response.file_search_call.completed",
        "response.file_search_call.in_progress",
        "response.file_search_call.searching",
        "response.web_search_call.completed",
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.image_generation_call.completed",
        "response.image_generation_call.generating",
        "response.image_generation_call.in_progress",
        "response.image_generation_call.partial_image",
        "response.mcp_call_arguments.delta",
        "response.mcp_call_arguments.done",
        "response.mcp_call.completed",
        "response.mcp_call.failed",
        "response.mcp_call.in_progress",
        "response.mcp_list_tools.completed",
        "response.mcp_list_tools.failed",
        "response.mcp_list_tools.in_progress",
        "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done",
    )
}

_ITEMS_2026_07_21: dict[str, ItemSpec] = {
    "function_call": ItemSpec(
        {"id": STRING, "call_id": STRING, "name": STRING, "arguments": STRING,
         "status": STRING},
        status_required=True, executable=True,
        meaning="client function call; executable after a good terminal"),
    "message": ItemSpec(
        {"id": STRING, "role": STRING, "content": ARRAY, "status": STRING},
        status_required=True, executable=False,
        meaning="assistant message (text/refusal); replayed, never executed"),
    "reasoning": ItemSpec(
        {"id": STRING, "summary": ARRAY},
        status_required=False, executable=False,
        meaning="reasoning item; replayed in stateless continuations, never executed"),
}

_UNMODELED_ITEMS_2026_07_21: dict[str, str] = {
    "function_call_output": "tool result item; never model output in this contract",
    "file_search_call": "hosted tool call",
    "web_search_call": "hosted tool call",
    "computer_call": "client computer-use action (not a function call)",
    "computer_call_output": "computer-use result item",
    "program": "programmatic tool calling program",
    "program_output": "programmatic tool calling result",
    "tool_search_call": "hosted tool search",
    "tool_search_output": "hosted tool search result",
    "additional_tools": "tool set change mid-response",
    "compaction": "context compaction item",
    "image_generation_call": "hosted tool call",
    "code_interpreter_call": "hosted tool call",
    "local_shell_call": "client shell action (not a function call)",
    "local_shell_call_output": "client shell result",
    "shell_call": "client shell action (not a function call)",
    "shell_call_output": "client shell result",
    "apply_patch_call": "client patch action (not a function call)",
    "apply_patch_call_output": "client patch result",
    "mcp_call": "remote MCP tool call",
    "mcp_list_tools": "remote MCP tool listing",
    "mcp_approval_request": "remote MCP approval request",
    "mcp_approval_response": "remote MCP approval response",
    "custom_tool_call": "client custom (free-form) tool call",
    "custom_tool_call_output": "custom tool result",
}

_ITEM_STATUSES_2026_07_21 = {
    "in_progress": "item still streaming (the only status allowed at added)",
    "completed": "item finished (the only status allowed at done and in the terminal)",
    "incomplete": "item cut short by the provider; the turn releases nothing",
}

_RESPONSE_STATUSES_2026_07_21 = {
    "queued": "accepted, waiting; non-terminal",
    "in_progress": "generating; non-terminal",
    "completed": "finished; the only status that can release calls",
    "failed": "failed; releases nothing",
    "incomplete": "stopped early (e.g. max_output_tokens); releases nothing",
    "cancelled": "cancelled; releases nothing",
}

REVISIONS: dict[str, RevisionSpec] = {
    "2026-07-21": RevisionSpec(
        events=_EVENTS_2026_07_21,
        unmodeled_events=_UNMODELED_EVENTS_2026_07_21,
        items=_ITEMS_2026_07_21,
        unmodeled_items=_UNMODELED_ITEMS_2026_07_21,
        item_statuses=_ITEM_STATUSES_2026_07_21,
        item_statuses_at_added=frozenset({"in_progress"}),
        item_statuses_at_done=frozenset({"completed"}),
        response_statuses=_RESPONSE_STATUSES_2026_07_21,
        response_event_statuses={
            "response.created": frozenset({"queued", "in_progress"}),
            "response.queued": frozenset({"queued"}),
            "response.in_progress": frozenset({"in_progress"}),
            "response.completed": frozenset({"completed"}),
            "response.failed": frozenset({"failed"}),
            "response.incomplete": frozenset({"incomplete"}),
        },
        # caller.type -> supported. "direct" is an ordinary call (kept as-is);
        # "program" is programmatic tool calling, whose semantics are not implemented.
        caller_types={"direct": True, "program": False},
        part_events=_PART_EVENTS_2026_07_21,
        part_types=_PART_TYPES_2026_07_21,
    ),
}

_KIND_CHECK: dict[str, type | tuple[type, ...]] = {
    STRING: str,
    OBJECT: dict,
    ARRAY: list,
}


# ---------------------------------------------------------------------------
# Public value types


@dataclass(frozen=True, slots=True, eq=False)
class OpenAIResponsesCall:
    """One executable ``function_call`` item of a completed Response.

    ``call_id`` is the association key for ``function_call_output`` (never ``item_id``);
    ``arguments`` is the strictly parsed JSON object; ``raw_item`` is the item dict of
    the terminal output (the same object as ``turn.output[output_index]``);
    ``caller`` is the raw ``caller`` metadata (``None`` or a direct caller, kept as-is).
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    item_id: str
    output_index: int
    raw_item: dict[str, Any]
    caller: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class PendingFunctionCall:
    """A provisional, NOT executable view of a function call still streaming.

    ``arguments_text`` is the concatenation of the fragments seen so far;
    ``arguments_done`` says whether ``response.function_call_arguments.done`` arrived.
    """

    output_index: int
    item_id: str
    call_id: str
    name: str
    arguments_text: str
    arguments_done: bool
    item_done: bool


@dataclass(frozen=True, slots=True, eq=False)
class OpenAIResponsesTurn:
    """A completed Response: raw data, executable calls and a snapshot digest.

    ``response`` is a private JSON copy of the terminal ``response`` object; ``output``
    is ``response["output"]`` (the raw output items, every type, in order). ``calls``
    holds the function calls (empty when none); ``is_tool_turn`` is True when the
    completed Response contains at least one function call (the host must run them
    and continue the loop: this is not a final answer); ``is_final_answer`` is True
    when it has no function call and at least one assistant message. ``digest`` is
    the canonical digest of :meth:`snapshot`, recorded at parse time.
    """

    response_id: str
    status: str
    response: dict[str, Any]
    output: list[Any]
    calls: tuple[OpenAIResponsesCall, ...]
    is_tool_turn: bool
    is_final_answer: bool
    contract_revision: str
    digest: str = field(default="")

    def snapshot(self) -> dict[str, Any]:
        """The canonical snapshot: raw terminal response plus derived call identities."""
        return {
            "contract_revision": self.contract_revision,
            "response_id": self.response_id,
            "status": self.status,
            "response": self.response,
            "output_is_response_output": self.response.get("output") is self.output
            if isinstance(self.response, dict) else False,
            "calls": [
                {
                    "call_id": call.call_id,
                    "name": call.name,
                    "item_id": call.item_id,
                    "output_index": call.output_index,
                    "arguments": call.arguments,
                    "raw_item_is_output_item": _is_output_item(self.output, call),
                    "caller": call.caller,
                }
                for call in self.calls
            ],
            "is_tool_turn": self.is_tool_turn,
            "is_final_answer": self.is_final_answer,
        }

    def check_unchanged(self) -> None:
        """Raise :class:`SnapshotMutated` if the turn changed since parsing."""
        check_digest(self.snapshot(), self.digest, what="OpenAI Responses turn")


def _is_output_item(output: list[Any], call: OpenAIResponsesCall) -> bool:
    if not isinstance(output, list) or not 0 <= call.output_index < len(output):
        return False
    return output[call.output_index] is call.raw_item


# ---------------------------------------------------------------------------
# The stream


class _Part:
    """Lifecycle state of one content/summary part of an item (internal)."""

    __slots__ = ("type", "text_field", "text", "text_done", "done")

    def __init__(self, part_type: str, text_field: str, limit: int, what: str) -> None:
        self.type = part_type
        self.text_field = text_field
        self.text = FragmentBuffer(limit, what)
        self.text_done = False
        self.done = False


class _Item:
    """Lifecycle state of one output item (internal)."""

    __slots__ = (
        "index", "type", "item_id", "added_bytes", "done_bytes", "done_item",
        "call_id", "name", "args", "args_done", "caller_bytes", "parts",
    )

    def __init__(self, index: int, item_type: str, item_id: str) -> None:
        self.index = index
        self.type = item_type
        self.item_id = item_id
        self.added_bytes = b""
        self.done_bytes: bytes | None = None
        self.done_item: dict[str, Any] | None = None
        self.call_id = ""
        self.name = ""
        self.args: FragmentBuffer | None = None
        self.args_done = False
        self.caller_bytes = b"null"
        self.parts: dict[str, list[_Part]] = {"content": [], "summary": []}


def _canonical(value: Any, where: str) -> bytes:
    try:
        text = json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
            allow_nan=False,
        )
    except RecursionError as exc:
        raise LimitExceeded("value nested too deeply", where=where) from exc
    except (TypeError, ValueError) as exc:
        raise ProtocolViolation(f"value is not JSON-compatible: {exc}", where=where) from exc
    return text.encode("utf-8", "surrogatepass")


def _preview(value: Any) -> str:
    """A short, always-safe rendering of a provider value for an error message."""
    if isinstance(value, str):
        return repr(value[:200])
    if value is None:
        return "null"
    if isinstance(value, bool) or (isinstance(value, int) and _INT64_MIN <= value <= _INT64_MAX):
        return repr(value)
    if isinstance(value, float):
        return repr(value)[:40]
    return type(value).__name__


def _kind_ok(value: Any, kind: str) -> bool:
    if kind == INTEGER:
        # Bounded to int64 so that every accepted integer can be formatted and compared
        # cheaply (Python ints are unbounded; the API's are 64-bit at most).
        return (isinstance(value, int) and not isinstance(value, bool)
                and _INT64_MIN <= value <= _INT64_MAX)
    return isinstance(value, _KIND_CHECK[kind])


class OpenAIResponsesStream:
    """Incremental, sans-IO parser of one streamed OpenAI Response.

    Feed each decoded event (a dict) with :meth:`feed`; call :meth:`close` at end of
    stream to get the :class:`OpenAIResponsesTurn`. Nothing is executable before a
    valid ``response.completed``: :attr:`calls` is empty until then. Every rejection is
    a :class:`~contracts.errors.ContractError` (``ProtocolViolation`` for illegal shapes
    or order, ``ProviderError`` for failed/incomplete/error, ``StreamTruncated`` for EOF
    before the terminal, ``UnsupportedProviderState`` for unknown or unimplemented
    semantics, ``LimitExceeded``, ``StrictJSONError``); after one, every later call
    raises again (poison on error).
    """

    def __init__(
        self, *, revision: str = CONTRACT_REVISION, limits: StreamLimits | None = None
    ) -> None:
        spec = REVISIONS.get(revision) if isinstance(revision, str) else None
        if spec is None:
            raise UnsupportedProviderState(f"unknown contract revision {revision!r}")
        self._revision = revision
        self._spec = spec
        if limits is not None and not isinstance(limits, StreamLimits):
            raise ProtocolViolation("limits must be a StreamLimits or None")
        self._limits = limits if limits is not None else DEFAULT_STREAM_LIMITS
        self._poison = Poison()
        self._count = 0
        self._last_seq: int | None = None
        self._response_id: str | None = None
        self._items: list[_Item] = []
        self._item_ids: set[str] = set()
        self._call_ids: set[str] = set()
        self._fragment_bytes = 0
        self._turn: OpenAIResponsesTurn | None = None
        # Set on the first ContractError: a poisoned stream exposes no calls, even
        # when the error came after a good terminal (close() refuses the turn too).
        self._handlers = {
            "created": self._on_created,
            "status": self._on_status,
            "item_added": self._on_item_added,
            "item_done": self._on_item_done,
            "args_delta": self._on_args_delta,
            "args_done": self._on_args_done,
            "item_part": self._on_item_part,
            "completed": self._on_completed,
            "failed": self._on_provider_terminal,
            "incomplete": self._on_provider_terminal,
            "error": self._on_error,
        }

    # -- public ------------------------------------------------------------

    @property
    def revision(self) -> str:
        """The pinned contract revision this stream enforces."""
        return self._revision

    @property
    def events_fed(self) -> int:
        """How many events were fed (accepted or not)."""
        return self._count

    @property
    def response_id(self) -> str | None:
        """The Response id from ``response.created`` (``None`` before it)."""
        return self._response_id

    @property
    def terminated(self) -> bool:
        """True once a valid ``response.completed`` was accepted (False once poisoned)."""
        return self._turn is not None and not self._poison.poisoned

    @property
    def calls(self) -> tuple[OpenAIResponsesCall, ...]:
        """Executable calls: empty until a valid ``response.completed`` was accepted,
        and empty again once the stream is poisoned (e.g. by an event after it)."""
        if self._turn is None or self._poison.poisoned:
            return ()
        return self._turn.calls

    def pending_calls(self) -> tuple[PendingFunctionCall, ...]:
        """Provisional view of every function call seen so far (never executable)."""
        out: list[PendingFunctionCall] = []
        for item in self._items:
            if item.type == "function_call" and item.args is not None:
                out.append(PendingFunctionCall(
                    output_index=item.index, item_id=item.item_id, call_id=item.call_id,
                    name=item.name, arguments_text=item.args.text(),
                    arguments_done=item.args_done, item_done=item.done_bytes is not None,
                ))
        return tuple(out)

    def feed(self, event: Any) -> None:
        """Consume one event. Raises a ContractError (and poisons) on any violation."""
        self._poison.check()
        index = self._count
        self._count += 1
        self._poison.run(lambda: self._feed(event, index))

    def close(self) -> OpenAIResponsesTurn:
        """End of stream: return the turn, or raise ``StreamTruncated`` before a terminal."""
        return self._poison.finish(self._close)

    def _close(self) -> OpenAIResponsesTurn:
        if self._turn is None:
            raise StreamTruncated(
                "stream ended before response.completed; no call is released",
                where=f"after event {self._count - 1}" if self._count else "empty stream",
            )
        return self._turn

    # -- dispatch ----------------------------------------------------------

    def _feed(self, event: Any, index: int) -> None:
        where = f"event {index}"
        if index >= self._limits.max_events:
            raise LimitExceeded(f"more than {self._limits.max_events} events", where=where)
        if not isinstance(event, dict):
            raise ProtocolViolation(
                f"event must be a JSON object, got {type(event).__name__}", where=where)
        event_type = event.get("type")
        if not isinstance(event_type, str):
            raise ProtocolViolation("event field 'type' must be a string", where=f"{where}.type")
        spec = self._spec.events.get(event_type)
        if spec is None:
            shown = event_type[:80]
            if event_type in self._spec.unmodeled_events:
                raise UnsupportedProviderState(
                    f"event type {shown!r} is known but not implemented by contract "
                    f"revision {self._revision} "
                    f"({self._spec.unmodeled_events[event_type]})", where=where)
            raise UnsupportedProviderState(
                f"unknown event type {shown!r} could change execution semantics",
                where=where)
        where = f"{where} ({event_type})"
        if self._turn is not None:
            raise ProtocolViolation("event after the terminal response.completed", where=where)
        seq: Any = event.get("sequence_number")
        if not _kind_ok(seq, INTEGER):
            raise ProtocolViolation(
                "sequence_number is required and must be an integer in int64 range",
                where=f"{where}.sequence_number")
        if not 0 <= seq <= MAX_SEQUENCE_NUMBER:
            raise ProtocolViolation(
                f"sequence_number {seq} is negative", where=f"{where}.sequence_number")
        if self._last_seq is not None and seq <= self._last_seq:
            raise ProtocolViolation(
                f"sequence_number {seq} does not increase (previous {self._last_seq}): "
                "duplicate, replayed or reordered event", where=f"{where}.sequence_number")
        self._last_seq = seq
        for name, kind in spec.required.items():
            value = event.get(name)
            if not _kind_ok(value, kind):
                raise ProtocolViolation(
                    f"required field {name!r} must be a JSON {kind}", where=f"{where}.{name}")
        if self._response_id is None and spec.role not in ("created", "error", "failed",
                                                           "incomplete"):
            raise ProtocolViolation("the first event must be response.created", where=where)
        self._handlers[spec.role](event, event_type, spec, where)

    # -- response-level events --------------------------------------------

    def _response(self, event: dict[str, Any], event_type: str, where: str) -> dict[str, Any]:
        response: dict[str, Any] = event["response"]
        response_id = response.get("id")
        if not isinstance(response_id, str) or not response_id:
            raise ProtocolViolation("response.id must be a non-empty string",
                                    where=f"{where}.response.id")
        if len(response_id) > MAX_IDENTIFIER_CHARS:
            raise LimitExceeded("response.id too long", where=f"{where}.response.id")
        if self._response_id is not None and response_id != self._response_id:
            raise ProtocolViolation(
                f"response.id {response_id[:80]!r} differs from the stream's "
                f"{self._response_id[:80]!r}", where=f"{where}.response.id")
        status = response.get("status")
        if not isinstance(status, str):
            raise ProtocolViolation("response.status must be a string",
                                    where=f"{where}.response.status")
        if status not in self._spec.response_statuses:
            raise UnsupportedProviderState(
                f"unknown response status {status[:80]!r}", where=f"{where}.response.status")
        allowed = self._spec.response_event_statuses[event_type]
        if status not in allowed:
            raise ProtocolViolation(
                f"{event_type} carries response.status {status!r}; expected one of "
                f"{sorted(allowed)}", where=f"{where}.response.status")
        return response

    def _on_created(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                    where: str) -> None:
        if self._response_id is not None:
            raise ProtocolViolation("response.created repeated", where=where)
        response = self._response(event, event_type, where)
        output = response.get("output", [])
        if not isinstance(output, list) or output:
            raise ProtocolViolation(
                "response.created must carry an empty output list; items enter only "
                "through response.output_item.added", where=f"{where}.response.output")
        self._response_id = response["id"]

    def _on_status(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                   where: str) -> None:
        self._response(event, event_type, where)

    def _on_error(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                  where: str) -> None:
        code = _preview(event.get("code"))
        message = event["message"]
        raise ProviderError(
            f"provider error event (code {code}): {message[:200]}; "
            "no call is released", where=where)

    def _on_provider_terminal(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                              where: str) -> None:
        response = event["response"]
        status = _preview(response.get("status"))
        details = response.get("error") or response.get("incomplete_details")
        if isinstance(details, dict):
            details = details.get("code") or details.get("reason") or details.get("message")
        raise ProviderError(
            f"{event_type} (status {status}, details {_preview(details)}); "
            "no call is released", where=where)

    # -- item lifecycle ------------------------------------------------------

    def _identifier(self, obj: dict[str, Any], name: str, where: str) -> str:
        value = obj.get(name)
        if not isinstance(value, str) or not value:
            raise ProtocolViolation(f"{name} must be a non-empty string",
                                    where=f"{where}.{name}")
        if len(value) > MAX_IDENTIFIER_CHARS:
            raise LimitExceeded(f"{name} longer than {MAX_IDENTIFIER_CHARS} characters",
                                where=f"{where}.{name}")
        return value

    def _item_shape(self, item: dict[str, Any], where: str, *, at_done: bool) -> tuple[
            str, ItemSpec]:
        item_type = item.get("type")
        if not isinstance(item_type, str):
            raise ProtocolViolation("item.type must be a string", where=f"{where}.item.type")
        item_spec = self._spec.items.get(item_type)
        if item_spec is None:
            if item_type in self._spec.unmodeled_items:
                raise UnsupportedProviderState(
                    f"output item type {item_type!r} is known but not implemented by "
                    f"contract revision {self._revision} "
                    f"({self._spec.unmodeled_items[item_type]})", where=f"{where}.item.type")
            raise UnsupportedProviderState(
                f"unknown output item type {item_type[:80]!r} could change execution "
                "semantics", where=f"{where}.item.type")
        for name, kind in item_spec.required.items():
            if name == "status" and not item_spec.status_required:
                continue
            if not _kind_ok(item.get(name), kind):
                raise ProtocolViolation(f"item field {name!r} must be a JSON {kind}",
                                        where=f"{where}.item.{name}")
        status = item.get("status")
        if status is not None or item_spec.status_required:
            if not isinstance(status, str):
                raise ProtocolViolation("item.status must be a string",
                                        where=f"{where}.item.status")
            if status not in self._spec.item_statuses:
                raise UnsupportedProviderState(f"unknown item status {status[:80]!r}",
                                               where=f"{where}.item.status")
            allowed = (self._spec.item_statuses_at_done if at_done
                       else self._spec.item_statuses_at_added)
            if status not in allowed:
                if at_done and status == "incomplete":
                    raise ProviderError("output item ended incomplete; no call is released",
                                        where=f"{where}.item.status")
                raise ProtocolViolation(
                    f"item.status {status!r} not allowed here (expected {sorted(allowed)})",
                    where=f"{where}.item.status")
        if item_type == "message" and item.get("role") != "assistant":
            raise ProtocolViolation("message output item must have role 'assistant'",
                                    where=f"{where}.item.role")
        return item_type, item_spec

    def _caller(self, item: dict[str, Any], where: str) -> bytes:
        namespace = item.get("namespace")
        if namespace is not None:
            raise UnsupportedProviderState(
                "function_call with a namespace is not implemented (namespaced tool "
                "semantics could change which function runs)", where=f"{where}.item.namespace")
        caller = item.get("caller")
        if caller is None:
            return b"null"
        if not isinstance(caller, dict):
            raise ProtocolViolation("item.caller must be an object or null",
                                    where=f"{where}.item.caller")
        caller_type = caller.get("type")
        if not isinstance(caller_type, str):
            raise ProtocolViolation("item.caller.type must be a string",
                                    where=f"{where}.item.caller.type")
        supported = self._spec.caller_types.get(caller_type)
        if supported is None:
            raise UnsupportedProviderState(f"unknown caller type {caller_type[:80]!r}",
                                           where=f"{where}.item.caller.type")
        if not supported:
            raise UnsupportedProviderState(
                f"caller type {caller_type!r} (programmatic tool calling) is not "
                "implemented; it is not downgraded to an ordinary call",
                where=f"{where}.item.caller.type")
        return _canonical(caller, f"{where}.item.caller")

    def _on_item_added(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                       where: str) -> None:
        output_index: int = event["output_index"]
        if output_index != len(self._items):
            raise ProtocolViolation(
                f"output_index {output_index} is not the next output index "
                f"{len(self._items)}", where=f"{where}.output_index")
        if len(self._items) >= self._limits.max_items:
            raise LimitExceeded(f"more than {self._limits.max_items} output items",
                                where=where)
        item: dict[str, Any] = event["item"]
        item_type, _ = self._item_shape(item, where, at_done=False)
        item_id = self._identifier(item, "id", f"{where}.item")
        if item_id in self._item_ids:
            raise ProtocolViolation(f"duplicate output item id {item_id[:80]!r}",
                                    where=f"{where}.item.id")
        state = _Item(output_index, item_type, item_id)
        if item_type == "function_call":
            state.call_id = self._identifier(item, "call_id", f"{where}.item")
            if state.call_id in self._call_ids:
                raise ProtocolViolation(f"duplicate call_id {state.call_id[:80]!r}",
                                        where=f"{where}.item.call_id")
            state.name = self._identifier(item, "name", f"{where}.item")
            state.caller_bytes = self._caller(item, where)
            state.args = FragmentBuffer(
                self._limits.max_fragment_bytes, f"arguments of output item {output_index}")
            self._add_fragment(state, item["arguments"], f"{where}.item.arguments")
            self._call_ids.add(state.call_id)
        state.added_bytes = _canonical(item, f"{where}.item")
        self._item_ids.add(item_id)
        self._items.append(state)

    def _open_item(self, event: dict[str, Any], spec: EventSpec, where: str) -> _Item:
        output_index: int = event["output_index"]
        if not 0 <= output_index < len(self._items):
            raise ProtocolViolation(f"output_index {output_index} names no added item",
                                    where=f"{where}.output_index")
        state = self._items[output_index]
        if event["item_id"] != state.item_id:
            raise ProtocolViolation(
                f"item_id {str(event['item_id'])[:80]!r} is not the id of output item "
                f"{output_index} ({state.item_id[:80]!r})", where=f"{where}.item_id")
        if state.type not in spec.item_types:
            raise ProtocolViolation(
                f"event does not apply to a {state.type!r} item", where=where)
        if state.done_bytes is not None:
            raise ProtocolViolation(f"output item {output_index} is already done",
                                    where=where)
        return state

    def _add_fragment(self, state: _Item, fragment: str, where: str) -> None:
        if state.args is None:  # pragma: no cover - only function_call items get here
            raise ProtocolViolation("no argument buffer", where=where)
        try:
            size = state.args.append(fragment)
        except LimitExceeded as exc:
            raise LimitExceeded(exc.message, where=where) from exc
        self._fragment_bytes += size
        if self._fragment_bytes > self._limits.max_total_fragment_bytes:
            raise LimitExceeded(
                f"argument text of the turn exceeds "
                f"{self._limits.max_total_fragment_bytes} bytes", where=where)

    def _on_args_delta(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                       where: str) -> None:
        state = self._open_item(event, spec, where)
        if state.args_done:
            raise ProtocolViolation(
                f"argument delta after arguments.done for output item {state.index}",
                where=where)
        self._add_fragment(state, event["delta"], f"{where}.delta")

    def _on_args_done(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                      where: str) -> None:
        state = self._open_item(event, spec, where)
        if state.args_done:
            raise ProtocolViolation(
                f"arguments.done repeated for output item {state.index}", where=where)
        name = event.get("name")
        if name is not None and name != state.name:
            raise ProtocolViolation(
                f"name {str(name)[:80]!r} differs from the item's name {state.name[:80]!r}",
                where=f"{where}.name")
        if state.args is None or event["arguments"] != state.args.text():
            raise ProtocolViolation(
                "arguments differ from the concatenated argument deltas",
                where=f"{where}.arguments")
        state.args_done = True

    def _on_item_part(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                      where: str) -> None:
        state = self._open_item(event, spec, where)
        part_spec = self._spec.part_events[event_type]
        parts = state.parts[part_spec.family]
        index: int = event[part_spec.index_field]
        index_where = f"{where}.{part_spec.index_field}"
        if part_spec.action == "add":
            if index != len(parts):
                raise ProtocolViolation(
                    f"{part_spec.index_field} {index} is not the next part index "
                    f"{len(parts)}", where=index_where)
            part_type = event["part"].get("type")
            if not isinstance(part_type, str):
                raise ProtocolViolation("part.type must be a string",
                                        where=f"{where}.part.type")
            text_field = self._spec.part_types.get((state.type, part_spec.family), {}).get(
                part_type)
            if text_field is None:
                raise UnsupportedProviderState(
                    f"part type {part_type[:80]!r} is not implemented for "
                    f"{state.type} {part_spec.family}", where=f"{where}.part.type")
            initial = event["part"].get(text_field, "")
            if not isinstance(initial, str):
                raise ProtocolViolation(f"part.{text_field} must be a string",
                                        where=f"{where}.part.{text_field}")
            part = _Part(part_type, text_field, self._limits.max_fragment_bytes,
                         f"{part_spec.family} part {index} of output item {state.index}")
            self._add_text(part, initial, f"{where}.part.{text_field}")
            parts.append(part)
            return
        if not 0 <= index < len(parts):
            raise ProtocolViolation(f"{part_spec.index_field} {index} names no added part",
                                    where=index_where)
        part = parts[index]
        if part.done:
            raise ProtocolViolation(f"part {index} is already done", where=index_where)
        if part_spec.part_type is not None and part.type != part_spec.part_type:
            raise ProtocolViolation(
                f"event applies to a {part_spec.part_type!r} part, part {index} is "
                f"{part.type!r}", where=where)
        if part_spec.action == "delta":
            if part.text_done:
                raise ProtocolViolation(f"text delta after the text of part {index} was done",
                                        where=where)
            self._add_text(part, event["delta"], f"{where}.delta")
        elif part_spec.action == "text_done":
            if part.text_done:
                raise ProtocolViolation(f"text of part {index} done twice", where=where)
            if part_spec.text_field is None or (
                    event[part_spec.text_field] != part.text.text()):
                raise ProtocolViolation(
                    f"final text of part {index} differs from the concatenated deltas",
                    where=f"{where}.{part_spec.text_field}")
            part.text_done = True
        elif part_spec.action == "done":
            final = event["part"]
            if final.get("type") != part.type:
                raise ProtocolViolation(f"part.type differs from the added part {index}",
                                        where=f"{where}.part.type")
            if final.get(part.text_field) != part.text.text():
                raise ProtocolViolation(
                    f"part.{part.text_field} differs from the concatenated deltas",
                    where=f"{where}.part.{part.text_field}")
            part.done = True

    def _add_text(self, part: _Part, fragment: str, where: str) -> None:
        try:
            size = part.text.append(fragment)
        except LimitExceeded as exc:
            raise LimitExceeded(exc.message, where=where) from exc
        self._fragment_bytes += size
        if self._fragment_bytes > self._limits.max_total_fragment_bytes:
            raise LimitExceeded(
                f"streamed text of the turn exceeds "
                f"{self._limits.max_total_fragment_bytes} bytes", where=where)

    def _check_parts(self, state: _Item, item: dict[str, Any], where: str) -> None:
        """A done message/reasoning item must hold exactly the streamed parts.

        Only the part families the item type has (per the part-type table) are parts;
        a same-named field on another item type is unknown optional drift, kept as-is.
        """
        for family, parts in state.parts.items():
            if (state.type, family) not in self._spec.part_types:
                continue
            for position, part in enumerate(parts):
                if not part.done:
                    raise ProtocolViolation(
                        f"{family} part {position} of output item {state.index} was never "
                        "done", where=where)
            final = item.get(family)
            if final is None and not parts:
                continue
            if not isinstance(final, list) or len(final) != len(parts):
                raise ProtocolViolation(
                    f"item.{family} does not hold the {len(parts)} streamed parts",
                    where=f"{where}.item.{family}")
            for position, (raw, part) in enumerate(zip(final, parts, strict=True)):
                if (not isinstance(raw, dict) or raw.get("type") != part.type
                        or raw.get(part.text_field) != part.text.text()):
                    raise ProtocolViolation(
                        f"item.{family}[{position}] differs from its streamed part",
                        where=f"{where}.item.{family}[{position}]")

    def _on_item_done(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                      where: str) -> None:
        output_index: int = event["output_index"]
        if not 0 <= output_index < len(self._items):
            raise ProtocolViolation(f"output_index {output_index} names no added item",
                                    where=f"{where}.output_index")
        state = self._items[output_index]
        if state.done_bytes is not None:
            raise ProtocolViolation(f"output item {output_index} is already done",
                                    where=where)
        item: dict[str, Any] = event["item"]
        item_type, _ = self._item_shape(item, where, at_done=True)
        if item_type != state.type:
            raise ProtocolViolation(
                f"done item type {item_type!r} differs from added type {state.type!r}",
                where=f"{where}.item.type")
        if item.get("id") != state.item_id:
            raise ProtocolViolation(
                f"done item id differs from the added item id {state.item_id[:80]!r}",
                where=f"{where}.item.id")
        if item_type == "function_call":
            self._check_call_identity(state, item, f"{where}.item")
            if not state.args_done:
                raise ProtocolViolation(
                    f"output item {output_index} done before "
                    "response.function_call_arguments.done", where=where)
            if self._caller(item, where) != state.caller_bytes:
                raise ProtocolViolation("done item caller differs from the added item",
                                        where=f"{where}.item.caller")
        else:
            self._check_parts(state, item, where)
        state.done_bytes = _canonical(item, f"{where}.item")
        state.done_item = item

    def _check_call_identity(self, state: _Item, item: dict[str, Any], where: str) -> None:
        if item.get("call_id") != state.call_id:
            raise ProtocolViolation(
                f"call_id differs from the added item's call_id {state.call_id[:80]!r}",
                where=f"{where}.call_id")
        if item.get("name") != state.name:
            raise ProtocolViolation(
                f"name differs from the added item's name {state.name[:80]!r}",
                where=f"{where}.name")
        if state.args is None or item.get("arguments") != state.args.text():
            raise ProtocolViolation(
                "arguments differ from the concatenated argument deltas",
                where=f"{where}.arguments")

    # -- the terminal ------------------------------------------------------

    def _on_completed(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                      where: str) -> None:
        response = self._response(event, event_type, where)
        for name in self._spec.completed_null_fields:
            if response.get(name) is not None:
                raise ProtocolViolation(f"completed response carries a non-null {name}",
                                        where=f"{where}.response.{name}")
        output = response.get("output")
        if not isinstance(output, list):
            raise ProtocolViolation("response.output must be an array",
                                    where=f"{where}.response.output")
        for state in self._items:
            if state.done_bytes is None:
                raise ProtocolViolation(
                    f"output item {state.index} ({state.type}) was never done before "
                    "response.completed", where=where)
        if len(output) != len(self._items):
            raise ProtocolViolation(
                f"terminal output has {len(output)} items but the stream added "
                f"{len(self._items)}", where=f"{where}.response.output")
        for state, raw in zip(self._items, output, strict=True):
            path = f"{where}.response.output[{state.index}]"
            if not isinstance(raw, dict):
                raise ProtocolViolation("output item must be an object", where=path)
            if raw.get("type") != state.type or raw.get("id") != state.item_id:
                raise ProtocolViolation(
                    f"terminal output item is not the {state.type!r} item "
                    f"{state.item_id[:80]!r} added at this index", where=path)
            if state.type == "function_call":
                self._check_call_identity(state, raw, path)
            if _canonical(raw, path) != state.done_bytes:
                raise ProtocolViolation(
                    "terminal output item differs from its response.output_item.done form",
                    where=path)
        # A private JSON copy: the caller's event dicts can change later without
        # touching the turn, and every value in the turn is plain JSON data.
        own: dict[str, Any] = json.loads(_canonical(response, f"{where}.response"))
        own_output: list[Any] = own["output"]
        calls: list[OpenAIResponsesCall] = []
        has_message = False
        for state in self._items:
            if state.type == "message":
                has_message = True
            if state.type != "function_call" or state.args is None:
                continue
            path = f"{where}.response.output[{state.index}].arguments"
            try:
                arguments = strict_json.loads(state.args.text())
            except (StrictJSONError, LimitExceeded) as exc:
                raise type(exc)(f"arguments are not strict JSON: {exc.message}",
                                where=path) from exc
            if not isinstance(arguments, dict):
                raise ProtocolViolation(
                    f"arguments must be a JSON object, got {type(arguments).__name__}",
                    where=path)
            raw_item = own_output[state.index]
            calls.append(OpenAIResponsesCall(
                call_id=state.call_id, name=state.name, arguments=arguments,
                item_id=state.item_id, output_index=state.index, raw_item=raw_item,
                caller=raw_item.get("caller"),
            ))
        turn = OpenAIResponsesTurn(
            response_id=own["id"], status=own["status"], response=own, output=own_output,
            calls=tuple(calls), is_tool_turn=bool(calls),
            is_final_answer=not calls and has_message, contract_revision=self._revision,
        )
        try:
            digest = canonical_digest(turn.snapshot())
        except SnapshotMutated as exc:  # pragma: no cover - own is plain JSON
            raise ProtocolViolation(exc.message, where=where) from exc
        object.__setattr__(turn, "digest", digest)
        self._turn = turn


def parse_events(
    events: Iterable[Any], *, revision: str = CONTRACT_REVISION,
    limits: StreamLimits | None = None,
) -> OpenAIResponsesTurn:
    """Parse a whole event sequence; return the completed turn or raise a ContractError."""
    stream = OpenAIResponsesStream(revision=revision, limits=limits)
    if isinstance(events, (str, bytes, bytearray, Mapping)):
        raise ProtocolViolation("events must be a sequence of event objects")
    try:
        iterator = iter(events)
    except TypeError as exc:
        raise ProtocolViolation("events must be iterable") from exc
    for event in iterator:
        stream.feed(event)
    return stream.close()


# The continuation builders live in their own module and are re-exported here.
from .openai_responses_continuation import (  # noqa: E402
    build_openai_responses_continuation,
    build_openai_responses_stateless_continuation,
)
