"""OpenAI Responses: the pinned contract as data, one :class:`RevisionTables` per revision.

Everything the parser and the builders consult lives here: modeled and known-but-
unmodeled event and item types, required fields (in the :mod:`contracts._kinds`
vocabulary), the stream's state transitions and each item's lifecycle (h11-style: a
lookup miss *is* the illegal transition), statuses, part rules, caller types and the
request fields a builder owns. Adding revision N+1 is a new entry of :data:`REVISIONS`.

Each revision is cross-checked at import by :func:`check_tables` (every role has its
fields, every response-carrying event a status row, every part event a part row,
transitions name only known states and events, every item can finish, ...): a
forgotten row is a ``RuntimeError`` at import, never a ``KeyError`` in production.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final

from .._kinds import check_kinds
from .._request import check_foreign_rows
from ..registry import check_revisions

__all__ = [
    "REVISION",
    "REVISIONS",
    "RevisionTables",
    "EventSpec",
    "ItemSpec",
    "PartEventSpec",
    "check_tables",
]

#: The default revision: the newest one shipped (``2026-07-21`` is the seed's pinned
#: baseline, kept exactly as pinned beside it; ``fixtures/CHANGELOG.md`` lists each change).
REVISION: Final = "2026-12-01"

#: Longest provider identifier (item id, call_id, response id, function name) accepted.
MAX_IDENTIFIER_CHARS: Final = 4_096
#: Largest ``sequence_number`` accepted (the int64 range; it must also be non-negative).
MAX_SEQUENCE_NUMBER: Final = 2**63 - 1

# -- handler roles (the stream has exactly one handler per role) -------------------
ROLE_CREATED: Final = "created"
ROLE_STATUS: Final = "status"
ROLE_ITEM_ADDED: Final = "item_added"
ROLE_ITEM_DONE: Final = "item_done"
ROLE_ARGS_DELTA: Final = "args_delta"
ROLE_ARGS_DONE: Final = "args_done"
ROLE_ITEM_PART: Final = "item_part"
ROLE_COMPLETED: Final = "completed"
ROLE_PROVIDER_TERMINAL: Final = "provider_terminal"
ROLE_ERROR: Final = "error"

#: role -> the fields its handler reads unconditionally, with their kinds. Every event
#: of that role must require at least these (so ``event[name]`` cannot miss).
ROLE_FIELDS: Final[Mapping[str, Mapping[str, str]]] = {
    ROLE_CREATED: {"response": "object"},
    ROLE_STATUS: {"response": "object"},
    ROLE_ITEM_ADDED: {"item": "object", "output_index": "int"},
    ROLE_ITEM_DONE: {"item": "object", "output_index": "int"},
    ROLE_ARGS_DELTA: {"delta": "str", "item_id": "str", "output_index": "int"},
    ROLE_ARGS_DONE: {"arguments": "str", "item_id": "str", "output_index": "int"},
    ROLE_ITEM_PART: {"item_id": "str", "output_index": "int"},
    ROLE_COMPLETED: {"response": "object"},
    ROLE_PROVIDER_TERMINAL: {"response": "object"},
    ROLE_ERROR: {"message": "str"},
}
ROLES: Final = frozenset(ROLE_FIELDS)
#: Roles whose handler checks ``response.status`` against ``response_event_statuses``.
RESPONSE_STATUS_ROLES: Final = frozenset({ROLE_CREATED, ROLE_STATUS, ROLE_COMPLETED})
#: Roles that act on one open item, named by ``output_index`` and ``item_id``.
ITEM_EVENT_ROLES: Final = frozenset({ROLE_ARGS_DELTA, ROLE_ARGS_DONE, ROLE_ITEM_PART})
#: Roles whose handler always raises (the provider reported failure).
RAISING_ROLES: Final = frozenset({ROLE_PROVIDER_TERMINAL, ROLE_ERROR})

# -- stream states ------------------------------------------------------------------
S_INITIAL: Final = "initial"
S_STREAMING: Final = "streaming"
S_COMPLETED: Final = "completed"

# -- item lifecycle states ----------------------------------------------------------
I_ARGUMENTS: Final = "arguments"
I_ARGUMENTS_DONE: Final = "arguments_done"
I_OPEN: Final = "open"
I_DONE: Final = "done"

#: Actions of a part event on a part of a message or reasoning item.
PART_ACTIONS: Final = frozenset({"add", "delta", "text_done", "annotate", "done"})


@dataclass(frozen=True, slots=True)
class EventSpec:
    """One modeled event type: its handler role, required fields and binding.

    ``role`` selects the handler; ``required`` maps each required field (besides
    ``type`` and ``sequence_number``) to its kind; ``item_types`` names the output item
    types an item-bound event may act on (empty: not item-bound).
    """

    role: str
    required: Mapping[str, str]
    item_types: frozenset[str]


@dataclass(frozen=True, slots=True)
class ItemSpec:
    """One modeled output item type.

    ``required`` maps required fields to kinds (``status`` is checked only when
    ``status_required`` or present); ``constants`` are fields with one allowed value
    (a message's ``role`` is ``assistant``); ``first_state`` is the item's lifecycle
    state after ``output_item.added`` (a row of ``item_transitions``);
    ``executable``: the item is a client function call, released after a good
    terminal; ``final_answer``: a completed turn without calls that holds such an
    item is a final answer.
    """

    required: Mapping[str, str]
    status_required: bool
    constants: Mapping[str, str]
    first_state: str
    executable: bool
    final_answer: bool

    @property
    def checked_fields(self) -> Mapping[str, str]:
        """The ``required`` fields checked on every item (``status`` only if required)."""
        if self.status_required:
            return self.required
        return {name: kind for name, kind in self.required.items() if name != "status"}


@dataclass(frozen=True, slots=True)
class PartEventSpec:
    """How an item sub-event acts on a part of a message or reasoning item.

    ``family`` is the item array the part belongs to (``content`` or ``summary``),
    ``index_field`` the event field holding the part's index in that array, ``action``
    one of :data:`PART_ACTIONS`; ``part_type`` is the part type a ``delta``/``text_done``/
    ``annotate`` applies to and ``text_field`` the event field carrying the fragment or
    the final text.
    """

    family: str
    index_field: str
    action: str
    part_type: str | None
    text_field: str | None


@dataclass(frozen=True, slots=True)
class RevisionTables:
    """The whole contract of one revision, as data (cross-checked by :func:`check_tables`)."""

    events: Mapping[str, EventSpec]
    unmodeled_events: Mapping[str, str]
    # stream state -> what it means (worded into illegal-transition messages)
    states: Mapping[str, str]
    # stream state -> event type -> next state; a miss is an illegal transition
    transitions: Mapping[str, Mapping[str, str]]
    items: Mapping[str, ItemSpec]
    unmodeled_items: Mapping[str, str]
    # item lifecycle state -> what it means (worded into illegal-transition messages)
    item_states: Mapping[str, str]
    # item lifecycle state -> event role -> next item state; a miss is illegal
    item_transitions: Mapping[str, Mapping[str, str]]
    item_statuses: Mapping[str, str]
    item_statuses_at_added: frozenset[str]
    item_statuses_at_done: frozenset[str]
    # statuses that, at ``output_item.done``, mean the provider cut the item short
    item_statuses_failed_at_done: frozenset[str]
    response_statuses: Mapping[str, str]
    # response-carrying event type -> statuses its ``response.status`` may have
    response_event_statuses: Mapping[str, frozenset[str]]
    # Response fields that must be null (or absent) in a ``response.completed``: a
    # non-null value contradicts the completed status, so the terminal fails closed.
    completed_null_fields: tuple[str, ...]
    # caller.type -> supported
    caller_types: Mapping[str, bool]
    part_events: Mapping[str, PartEventSpec]
    # (item type, part family) -> part type -> the part field holding its text
    part_types: Mapping[tuple[str, str], Mapping[str, str]]
    # request fields a continuation builder owns (request_controls may not set them)
    protected_request_fields: frozenset[str]
    # keys a native strict function tool may carry
    tool_fields: frozenset[str]
    # where this API puts the structured final format (a dotted path), and every other
    # API's structured-output field -> why request_controls may not carry it
    structured_output_field: str
    foreign_structured_output_fields: Mapping[str, str]


def _fields(*parts: Mapping[str, str]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for part in parts:
        merged.update(part)
    return merged


_ITEM_ID: Final = {"item_id": "str", "output_index": "int"}
_NONE: Final[frozenset[str]] = frozenset()
_MESSAGE: Final = frozenset({"message"})
_REASONING: Final = frozenset({"reasoning"})
_FUNCTION_CALL: Final = frozenset({"function_call"})

_EVENTS_2026_07_21: Final[Mapping[str, EventSpec]] = {
    "response.created": EventSpec(ROLE_CREATED, {"response": "object"}, _NONE),
    "response.queued": EventSpec(ROLE_STATUS, {"response": "object"}, _NONE),
    "response.in_progress": EventSpec(ROLE_STATUS, {"response": "object"}, _NONE),
    "response.output_item.added": EventSpec(
        ROLE_ITEM_ADDED, {"item": "object", "output_index": "int"}, _NONE),
    "response.output_item.done": EventSpec(
        ROLE_ITEM_DONE, {"item": "object", "output_index": "int"}, _NONE),
    "response.function_call_arguments.delta": EventSpec(
        ROLE_ARGS_DELTA, _fields({"delta": "str"}, _ITEM_ID), _FUNCTION_CALL),
    "response.function_call_arguments.done": EventSpec(
        ROLE_ARGS_DONE, _fields({"arguments": "str", "name": "str"}, _ITEM_ID), _FUNCTION_CALL),
    "response.content_part.added": EventSpec(
        ROLE_ITEM_PART, _fields({"content_index": "int", "part": "object"}, _ITEM_ID),
        _MESSAGE | _REASONING),
    "response.content_part.done": EventSpec(
        ROLE_ITEM_PART, _fields({"content_index": "int", "part": "object"}, _ITEM_ID),
        _MESSAGE | _REASONING),
    "response.output_text.delta": EventSpec(
        ROLE_ITEM_PART,
        _fields({"content_index": "int", "delta": "str", "logprobs": "array"}, _ITEM_ID),
        _MESSAGE),
    "response.output_text.done": EventSpec(
        ROLE_ITEM_PART,
        _fields({"content_index": "int", "text": "str", "logprobs": "array"}, _ITEM_ID),
        _MESSAGE),
    "response.output_text.annotation.added": EventSpec(
        ROLE_ITEM_PART,
        _fields({"annotation": "object", "annotation_index": "int", "content_index": "int"},
                _ITEM_ID),
        _MESSAGE),
    "response.refusal.delta": EventSpec(
        ROLE_ITEM_PART, _fields({"content_index": "int", "delta": "str"}, _ITEM_ID), _MESSAGE),
    "response.refusal.done": EventSpec(
        ROLE_ITEM_PART, _fields({"content_index": "int", "refusal": "str"}, _ITEM_ID), _MESSAGE),
    "response.reasoning_summary_part.added": EventSpec(
        ROLE_ITEM_PART, _fields({"part": "object", "summary_index": "int"}, _ITEM_ID),
        _REASONING),
    "response.reasoning_summary_part.done": EventSpec(
        ROLE_ITEM_PART, _fields({"part": "object", "summary_index": "int"}, _ITEM_ID),
        _REASONING),
    "response.reasoning_summary_text.delta": EventSpec(
        ROLE_ITEM_PART, _fields({"delta": "str", "summary_index": "int"}, _ITEM_ID), _REASONING),
    "response.reasoning_summary_text.done": EventSpec(
        ROLE_ITEM_PART, _fields({"text": "str", "summary_index": "int"}, _ITEM_ID), _REASONING),
    "response.reasoning_text.delta": EventSpec(
        ROLE_ITEM_PART, _fields({"content_index": "int", "delta": "str"}, _ITEM_ID), _REASONING),
    "response.reasoning_text.done": EventSpec(
        ROLE_ITEM_PART, _fields({"content_index": "int", "text": "str"}, _ITEM_ID), _REASONING),
    "response.completed": EventSpec(ROLE_COMPLETED, {"response": "object"}, _NONE),
    "response.failed": EventSpec(ROLE_PROVIDER_TERMINAL, {"response": "object"}, _NONE),
    "response.incomplete": EventSpec(ROLE_PROVIDER_TERMINAL, {"response": "object"}, _NONE),
    "error": EventSpec(ROLE_ERROR, {"message": "str"}, _NONE),
}

_STATES_2026_07_21: Final[Mapping[str, str]] = {
    S_INITIAL: "the first event must be response.created",
    S_STREAMING: "response.created was seen; waiting for items and the terminal",
    S_COMPLETED: "nothing may come after the terminal response.completed",
}

# The provider-failure events are legal wherever the stream is open; their handler
# raises ProviderError (poisoning the stream), so their "next state" is never entered.
_FAILURES: Final = ("response.failed", "response.incomplete", "error")
_IN_STREAM: Final = (
    "response.queued",
    "response.in_progress",
    "response.output_item.added",
    "response.output_item.done",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.content_part.added",
    "response.content_part.done",
    "response.output_text.delta",
    "response.output_text.done",
    "response.output_text.annotation.added",
    "response.refusal.delta",
    "response.refusal.done",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
    "response.reasoning_text.delta",
    "response.reasoning_text.done",
)

_TRANSITIONS_2026_07_21: Final[Mapping[str, Mapping[str, str]]] = {
    S_INITIAL: {
        "response.created": S_STREAMING,
        **{name: S_INITIAL for name in _FAILURES},
    },
    S_STREAMING: {
        **{name: S_STREAMING for name in _IN_STREAM},
        "response.completed": S_COMPLETED,
        **{name: S_STREAMING for name in _FAILURES},
    },
    S_COMPLETED: {},
}

_ITEM_STATES_2026_07_21: Final[Mapping[str, str]] = {
    I_ARGUMENTS: "its arguments are streaming; output_item.done cannot come before "
                 "response.function_call_arguments.done",
    I_ARGUMENTS_DONE: "its arguments are done; no argument event may come after "
                      "arguments.done",
    I_OPEN: "its parts are streaming",
    I_DONE: "it is already done",
}

_ITEM_TRANSITIONS_2026_07_21: Final[Mapping[str, Mapping[str, str]]] = {
    # a function call: argument deltas, then arguments.done, then output_item.done
    I_ARGUMENTS: {ROLE_ARGS_DELTA: I_ARGUMENTS, ROLE_ARGS_DONE: I_ARGUMENTS_DONE},
    I_ARGUMENTS_DONE: {ROLE_ITEM_DONE: I_DONE},
    # a message or reasoning item: part events, then output_item.done
    I_OPEN: {ROLE_ITEM_PART: I_OPEN, ROLE_ITEM_DONE: I_DONE},
    I_DONE: {},
}

_PART_EVENTS_2026_07_21: Final[Mapping[str, PartEventSpec]] = {
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

# A part type not listed for its item fails closed: a replayed item could not be
# proven complete.
_PART_TYPES_2026_07_21: Final[Mapping[tuple[str, str], Mapping[str, str]]] = {
    ("message", "content"): {"output_text": "text", "refusal": "refusal"},
    ("reasoning", "content"): {"reasoning_text": "text"},
    ("reasoning", "summary"): {"summary_text": "text"},
}

# Known event types of the pinned SDK union that this revision does not model. They
# belong to hosted/built-in tools or output modalities whose items this contract does
# not implement, so their appearance fails closed.
_UNMODELED_EVENTS_2026_07_21: Final[Mapping[str, str]] = {
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

_ITEMS_2026_07_21: Final[Mapping[str, ItemSpec]] = {
    # client function call; executable after a good terminal
    "function_call": ItemSpec(
        {"id": "str", "call_id": "str", "name": "str", "arguments": "str", "status": "str"},
        status_required=True, constants={}, first_state=I_ARGUMENTS,
        executable=True, final_answer=False),
    # assistant message (text/refusal); replayed, never executed
    "message": ItemSpec(
        {"id": "str", "role": "str", "content": "array", "status": "str"},
        status_required=True, constants={"role": "assistant"}, first_state=I_OPEN,
        executable=False, final_answer=True),
    # reasoning item; replayed in stateless continuations, never executed
    "reasoning": ItemSpec(
        {"id": "str", "summary": "array"},
        status_required=False, constants={}, first_state=I_OPEN,
        executable=False, final_answer=False),
}

_UNMODELED_ITEMS_2026_07_21: Final[Mapping[str, str]] = {
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

_ITEM_STATUSES_2026_07_21: Final[Mapping[str, str]] = {
    "in_progress": "item still streaming (the only status allowed at added)",
    "completed": "item finished (the only status allowed at done and in the terminal)",
    "incomplete": "item cut short by the provider; the turn releases nothing",
}

_RESPONSE_STATUSES_2026_07_21: Final[Mapping[str, str]] = {
    "queued": "accepted, waiting; non-terminal",
    "in_progress": "generating; non-terminal",
    "completed": "finished; the only status that can release calls",
    "failed": "failed; releases nothing",
    "incomplete": "stopped early (e.g. max_output_tokens); releases nothing",
    "cancelled": "cancelled; releases nothing",
}

# ``conversation`` is a second server-side state handle: joining it would change which
# history the model sees. ``prompt`` references a stored prompt template, which carries
# its own instructions, tools and model beside the explicitly resent ones.
_PROTECTED_REQUEST_FIELDS_2026_07_21: Final = frozenset({
    "model", "previous_response_id", "input", "store", "instructions", "tools",
    "conversation", "prompt",
})

# Other keys (``allowed_callers``, ``defer_loading``) change who may call a tool or
# when it exists: fail closed.
_TOOL_FIELDS_2026_07_21: Final = frozenset({"type", "name", "parameters", "strict", "description"})

# The seed: "Do not copy Chat Completions response_format or one provider's field to all
# three." Responses has neither field; sent, they would be ignored or rejected upstream
# while the caller believes the final answer is constrained.
_FOREIGN_STRUCTURED_OUTPUT_FIELDS_2026_07_21: Final = {
    "response_format": (
        "that is Chat Completions' (and Gemini Interactions') structured-output field; "
        "Responses puts the structured final format in text.format"),
    "output_config": (
        "that is Anthropic Messages' structured-output field (output_config.format); "
        "Responses puts the structured final format in text.format"),
}

_PINNED_2026_07_21: Final = RevisionTables(
    events=_EVENTS_2026_07_21,
    unmodeled_events=_UNMODELED_EVENTS_2026_07_21,
    states=_STATES_2026_07_21,
    transitions=_TRANSITIONS_2026_07_21,
    items=_ITEMS_2026_07_21,
    unmodeled_items=_UNMODELED_ITEMS_2026_07_21,
    item_states=_ITEM_STATES_2026_07_21,
    item_transitions=_ITEM_TRANSITIONS_2026_07_21,
    item_statuses=_ITEM_STATUSES_2026_07_21,
    item_statuses_at_added=frozenset({"in_progress"}),
    item_statuses_at_done=frozenset({"completed"}),
    item_statuses_failed_at_done=frozenset({"incomplete"}),
    response_statuses=_RESPONSE_STATUSES_2026_07_21,
    response_event_statuses={
        "response.created": frozenset({"queued", "in_progress"}),
        "response.queued": frozenset({"queued"}),
        "response.in_progress": frozenset({"in_progress"}),
        "response.completed": frozenset({"completed"}),
    },
    completed_null_fields=("error", "incomplete_details"),
    # "direct" is an ordinary call (kept as-is); "program" is programmatic tool
    # calling, whose semantics are not implemented.
    caller_types={"direct": True, "program": False},
    part_events=_PART_EVENTS_2026_07_21,
    part_types=_PART_TYPES_2026_07_21,
    protected_request_fields=_PROTECTED_REQUEST_FIELDS_2026_07_21,
    tool_fields=_TOOL_FIELDS_2026_07_21,
    structured_output_field="text.format",
    foreign_structured_output_fields=_FOREIGN_STRUCTURED_OUTPUT_FIELDS_2026_07_21,
)

# -- revision 2026-12-01: today's shapes, read from the openai 3.57.0 types ------------
# Each change is a row of fixtures/CHANGELOG.md (what changed, the SDK type, what the
# parser now does). Everything not named here is the pinned revision's row unchanged.

_EVENTS_2026_12_01: Final[Mapping[str, EventSpec]] = {
    **_EVENTS_2026_07_21,
    # ResponseFunctionCallArgumentsDoneEvent has no ``name`` any more; the handler
    # already checks a present ``name`` against the added item's (the item is the
    # authority for the name), so only the requirement goes.
    "response.function_call_arguments.done": EventSpec(
        ROLE_ARGS_DONE, _fields({"arguments": "str"}, _ITEM_ID), _FUNCTION_CALL),
    # ResponseOutputTextAnnotationAddedEvent.annotation is Optional; the parser never
    # reads it (the done item's content carries the annotations that are replayed).
    "response.output_text.annotation.added": EventSpec(
        ROLE_ITEM_PART,
        _fields({"annotation_index": "int", "content_index": "int"}, _ITEM_ID),
        _MESSAGE),
}

# New in the SDK's ResponseStreamEvent union: events of items this contract does not
# implement (compaction, the hosted shell tool). Known, and still failing closed.
_UNMODELED_EVENTS_2026_12_01: Final[Mapping[str, str]] = {
    **_UNMODELED_EVENTS_2026_07_21,
    "response.compaction.compacting": "known event of the unmodeled compaction item",
    **{name: "known event of the unmodeled shell_call item"
       for name in (
           "response.shell_call_command.added",
           "response.shell_call_command.delta",
           "response.shell_call_command.done",
           "response.shell_call_output_content.delta",
           "response.shell_call_output_content.done",
       )},
}

_CURRENT_2026_12_01: Final = replace(
    _PINNED_2026_07_21,
    events=_EVENTS_2026_12_01,
    unmodeled_events=_UNMODELED_EVENTS_2026_12_01,
)

#: Every shipped revision; the keys are what ``revision=`` accepts.
REVISIONS: Final[Mapping[str, RevisionTables]] = {
    "2026-07-21": _PINNED_2026_07_21,
    "2026-12-01": _CURRENT_2026_12_01,
}
check_revisions("openai-responses", REVISIONS)


# ---------------------------------------------------------------------------------
# The cross-check: run for every revision at import.


def _fail(revision: str, problem: str) -> RuntimeError:
    return RuntimeError(f"OpenAI Responses tables of revision {revision!r}: {problem}")


def _reachable(transitions: Mapping[str, Mapping[str, str]], start: str) -> set[str]:
    seen = {start}
    todo = [start]
    while todo:
        for nxt in transitions.get(todo.pop(), {}).values():
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _check_events(t: RevisionTables, revision: str) -> None:
    overlap = set(t.events) & set(t.unmodeled_events)
    if overlap:
        raise _fail(revision, f"event types both modeled and unmodeled: {sorted(overlap)}")
    for name, spec in t.events.items():
        where = f"revision {revision} event {name}"
        check_kinds(spec.required, where)
        if spec.role not in ROLES:
            raise _fail(revision, f"event {name!r} has role {spec.role!r} with no handler")
        for field, kind in ROLE_FIELDS[spec.role].items():
            if spec.required.get(field) != kind:
                raise _fail(revision, f"event {name!r} must require {field!r} as {kind!r} "
                                      f"(its {spec.role} handler reads it)")
        if (spec.role in ITEM_EVENT_ROLES) != bool(spec.item_types):
            raise _fail(revision, f"event {name!r}: item types are set exactly for the "
                                  "item-bound roles")
        unknown = spec.item_types - set(t.items)
        if unknown:
            raise _fail(revision, f"event {name!r} binds unknown item types {sorted(unknown)}")
        if (spec.role in RESPONSE_STATUS_ROLES) != (name in t.response_event_statuses):
            raise _fail(revision, f"event {name!r}: a response-status row exists exactly "
                                  "for the events whose handler checks response.status")
        if (spec.role == ROLE_ITEM_PART) != (name in t.part_events):
            raise _fail(revision, f"event {name!r}: a part row exists exactly for the "
                                  "item_part events")
    for name, statuses in t.response_event_statuses.items():
        unknown = statuses - set(t.response_statuses)
        if name not in t.events or unknown or not statuses:
            raise _fail(revision, f"response status row {name!r} names an unknown event "
                                  f"or unknown statuses {sorted(unknown)}")
    for name in t.part_events:
        if name not in t.events:
            raise _fail(revision, f"part row {name!r} names no modeled event")


def _check_transitions(t: RevisionTables, revision: str) -> None:
    if set(t.transitions) != set(t.states) or S_INITIAL not in t.states:
        raise _fail(revision, "transitions must have one row per state, 'initial' included")
    if S_COMPLETED not in t.states or t.transitions[S_COMPLETED]:
        raise _fail(revision, "the 'completed' state must exist and accept no event")
    legal: set[str] = set()
    for state, row in t.transitions.items():
        for name, nxt in row.items():
            spec = t.events.get(name)
            if spec is None:
                raise _fail(revision, f"transition {state}/{name} names no modeled event")
            if nxt not in t.states:
                raise _fail(revision, f"transition {state}/{name} leads to unknown state {nxt!r}")
            if spec.role == ROLE_COMPLETED and nxt != S_COMPLETED:
                raise _fail(revision, f"terminal {name!r} must lead to 'completed'")
            if spec.role != ROLE_COMPLETED and nxt == S_COMPLETED:
                raise _fail(revision, f"only the terminal leads to 'completed', not {name!r}")
            if spec.role in RAISING_ROLES and nxt != state:
                raise _fail(revision, f"{name!r} always raises; its row must keep the state")
            legal.add(name)
    never = set(t.events) - legal
    if never:
        raise _fail(revision, f"modeled events legal in no state: {sorted(never)}")
    unreachable = set(t.states) - _reachable(t.transitions, S_INITIAL)
    if unreachable:
        raise _fail(revision, f"states unreachable from 'initial': {sorted(unreachable)}")


def _check_items(t: RevisionTables, revision: str) -> None:
    overlap = set(t.items) & set(t.unmodeled_items)
    if overlap:
        raise _fail(revision, f"item types both modeled and unmodeled: {sorted(overlap)}")
    if set(t.item_states) != set(t.item_transitions):
        raise _fail(revision, "item transitions must have one row per item state")
    if I_DONE not in t.item_transitions or t.item_transitions[I_DONE]:
        raise _fail(revision, "the item state 'done' must exist and accept no event")
    for state, row in t.item_transitions.items():
        for role, nxt in row.items():
            if role not in ITEM_EVENT_ROLES | {ROLE_ITEM_DONE}:
                raise _fail(revision, f"item transition {state}/{role}: not an item role")
            if nxt not in t.item_transitions:
                raise _fail(revision, f"item transition {state}/{role} leads to unknown "
                                      f"state {nxt!r}")
            if (role == ROLE_ITEM_DONE) != (nxt == I_DONE):
                raise _fail(revision, f"item transition {state}/{role}: exactly "
                                      "output_item.done finishes an item")
    for item_type, spec in t.items.items():
        check_kinds(spec.required, f"revision {revision} item {item_type}")
        if not {"id"} <= set(spec.required) or spec.required["id"] != "str":
            raise _fail(revision, f"item {item_type!r} must require a string id")
        if spec.status_required and spec.required.get("status") != "str":
            raise _fail(revision, f"item {item_type!r} requires a status but not as 'str'")
        for field in spec.constants:
            if spec.required.get(field) != "str":
                raise _fail(revision, f"item {item_type!r} constant {field!r} must be a "
                                      "required string")
        if spec.executable:
            for field in ("call_id", "name", "arguments"):
                if spec.required.get(field) != "str":
                    raise _fail(revision, f"executable item {item_type!r} must require "
                                          f"{field!r} as 'str'")
        if spec.first_state not in t.item_transitions:
            raise _fail(revision, f"item {item_type!r} starts in unknown state "
                                  f"{spec.first_state!r}")
        reachable = _reachable(t.item_transitions, spec.first_state)
        if I_DONE not in reachable:
            raise _fail(revision, f"item {item_type!r} can never be done")
        roles = {role for state in reachable for role in t.item_transitions[state]}
        for name, event in t.events.items():
            if item_type in event.item_types and event.role not in roles:
                raise _fail(revision, f"event {name!r} binds {item_type!r} items but no "
                                      "state of their lifecycle accepts it")
            if item_type in event.item_types and event.role in (ROLE_ARGS_DELTA, ROLE_ARGS_DONE):
                if not spec.executable:
                    raise _fail(revision, f"argument event {name!r} binds the non-executable "
                                          f"item {item_type!r}")
    statuses = set(t.item_statuses)
    for label, subset in (("at added", t.item_statuses_at_added),
                          ("at done", t.item_statuses_at_done),
                          ("failed at done", t.item_statuses_failed_at_done)):
        if not subset <= statuses:
            raise _fail(revision, f"item statuses {label} are not all known: {sorted(subset)}")
    if t.item_statuses_at_done & t.item_statuses_failed_at_done:
        raise _fail(revision, "an item status cannot both finish and fail an item")
    for caller_type, supported in t.caller_types.items():
        if type(caller_type) is not str or type(supported) is not bool:
            raise _fail(revision, f"caller row {caller_type!r} must map a string to a bool")


def _check_parts(t: RevisionTables, revision: str) -> None:
    for (item_type, family), types in t.part_types.items():
        if item_type not in t.items or t.items[item_type].executable:
            raise _fail(revision, f"part row ({item_type}, {family}) names no part-carrying "
                                  "item")
        if not types:
            raise _fail(revision, f"part row ({item_type}, {family}) allows no part type")
    for name, part in t.part_events.items():
        event = t.events[name]
        if part.action not in PART_ACTIONS:
            raise _fail(revision, f"part row {name!r} has unknown action {part.action!r}")
        if event.required.get(part.index_field) != "int":
            raise _fail(revision, f"part row {name!r}: index field {part.index_field!r} is "
                                  "not a required int")
        if part.action in ("add", "done") and event.required.get("part") != "object":
            raise _fail(revision, f"part row {name!r}: {part.action} needs a required 'part'")
        needs_type = part.action in ("delta", "text_done", "annotate")
        if needs_type != (part.part_type is not None):
            raise _fail(revision, f"part row {name!r}: a part type is set exactly for "
                                  "delta/text_done/annotate")
        needs_text = part.action in ("delta", "text_done")
        if needs_text != (part.text_field is not None):
            raise _fail(revision, f"part row {name!r}: a text field is set exactly for "
                                  "delta/text_done")
        if part.text_field is not None and event.required.get(part.text_field) != "str":
            raise _fail(revision, f"part row {name!r}: text field {part.text_field!r} is not "
                                  "a required string")
        for item_type in event.item_types:
            if (item_type, part.family) not in t.part_types:
                raise _fail(revision, f"part row {name!r}: {item_type!r} items have no "
                                      f"{part.family!r} parts")
        if part.part_type is not None and not any(
                part.part_type in t.part_types[(item_type, part.family)]
                for item_type in event.item_types):
            raise _fail(revision, f"part row {name!r}: part type {part.part_type!r} is not "
                                  "allowed on any item it binds")


def _check_other(t: RevisionTables, revision: str) -> None:
    if not t.response_statuses or not t.item_statuses:
        raise _fail(revision, "status tables must not be empty")
    if "completed" not in t.response_event_statuses.get("response.completed", ()):
        raise _fail(revision, "response.completed must carry the 'completed' status")
    for name in (*t.protected_request_fields, *t.tool_fields, *t.completed_null_fields):
        if type(name) is not str or not name:
            raise _fail(revision, f"field name {name!r} must be a non-empty string")
    if not {"type", "name", "parameters", "strict"} <= t.tool_fields:
        raise _fail(revision, "tool fields must allow the native strict function shape")
    problem = check_foreign_rows(t.structured_output_field,
                                 t.foreign_structured_output_fields, t.protected_request_fields)
    if problem is not None:
        raise _fail(revision, problem)


def check_tables(tables: RevisionTables, revision: str) -> None:
    """Raise ``RuntimeError`` (a table bug, found at import) unless ``tables`` is whole."""
    _check_events(tables, revision)
    _check_transitions(tables, revision)
    _check_items(tables, revision)
    _check_parts(tables, revision)
    _check_other(tables, revision)


for _revision, _tables in REVISIONS.items():
    check_tables(_tables, _revision)
