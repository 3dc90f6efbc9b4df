"""Gemini Interactions v1 as data: one :class:`RevisionTables` per contract revision.

Every table here drives the parser (``_stream.py``) or the builders
(``continuation.py``); a lookup miss is the rejection. Each revision is
cross-checked at import (:func:`check_tables`), so a forgotten row fails when the
module loads, never as a ``KeyError`` in production. Adding revision N+1 is a new
entry in :data:`REVISIONS` (plus fixtures and tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final

from .._kinds import check_kinds
from .._request import check_foreign_rows
from .._stream import drift_hint
from .._values import preview
from ..errors import ContractError, ProtocolViolation, UnsupportedProviderState
from ..registry import check_revisions

__all__ = [
    "REVISION",
    "REVISIONS",
    "RevisionTables",
    "ROLES",
    "INPUT_ROLES",
    "STATUS_MEANINGS",
    "REPLAY_RULES",
    "check_tables",
    "role_of",
    "meaning_of",
]

#: The default revision: the newest one shipped (``2026-07-21`` is the seed's pinned
#: baseline, kept exactly as pinned beside it; ``fixtures/CHANGELOG.md`` lists each change).
REVISION: Final = "2026-12-01"

#: What a step is to the host; the parser and builders dispatch on roles, never on
#: step type names. Only ``client_call`` (``function_call``) is ever executed.
ROLES: Final = frozenset(
    {"input", "model_output", "thought", "client_call", "client_result",
     "hosted_call", "hosted_result"}
)
#: Roles that are input history: a create snapshot holds none, and a GET snapshot's
#: current turn starts after the last of them.
INPUT_ROLES: Final = frozenset({"input", "client_result"})
#: What an Interaction status means at the terminal (the terminal gate's cases).
#: ``continuation``: the provider stopped before completion and the interaction is to be
#: resumed (a continuation token), not answered: the turn is returned, nothing released.
#: ``unsupported``: a status the SDK lists whose meaning for execution is not pinned:
#: rejected wherever it appears (fail closed).
STATUS_MEANINGS: Final = frozenset(
    {"non_terminal", "tool_turn", "final", "provider_failure", "continuation", "unsupported"}
)
#: How a stateless continuation proves a step of each role can be replayed losslessly
#: (``continuation.py`` has one check per rule; ``opaque`` always fails closed).
REPLAY_RULES: Final = frozenset({"call", "result", "input", "thought", "text_output", "opaque"})


@dataclass(frozen=True, slots=True)
class RevisionTables:
    """Everything one contract revision pins; kinds are the ``contracts._kinds`` words."""

    #: state -> event_type -> next state; a miss is an illegal transition.
    transitions: Mapping[str, Mapping[str, str]]
    initial_state: str
    #: The state ``close()`` requires (reached only by the terminal event).
    final_state: str
    #: event_type -> required envelope fields -> kind (the set of event types).
    event_fields: Mapping[str, Mapping[str, str]]
    #: Optional envelope fields -> kind, checked when present.
    optional_event_fields: Mapping[str, str]
    #: Range of ``index`` on step events (an association key, int32).
    index_range: tuple[int, int]
    #: Required fields of the Interaction object (created/completed events, snapshots).
    interaction_fields: Mapping[str, str]
    #: Interaction status -> meaning (one of STATUS_MEANINGS).
    statuses: Mapping[str, str]
    #: Optional total-usage fields (non-negative ints; absent is None, never 0).
    usage_total_fields: tuple[str, ...]
    #: Step discriminator -> role (one of ROLES).
    step_types: Mapping[str, str]
    #: Step discriminators of the v1beta/SDK preview union that stable v1 lacks.
    v1beta_only_step_types: frozenset[str]
    #: role -> required fields of a ``step.start`` step object -> kind.
    stream_step_fields: Mapping[str, Mapping[str, str]]
    #: role -> required fields of a step in a create/GET snapshot -> kind.
    snapshot_step_fields: Mapping[str, Mapping[str, str]]
    #: step type -> ``step.delta`` ``delta.type`` values allowed on it.
    delta_types: Mapping[str, frozenset[str]]
    #: Fields of the pinned ``arguments_delta``; others are kept raw and block replay.
    arguments_delta_fields: frozenset[str]
    #: role -> replay rule (one of REPLAY_RULES) for a stateless continuation.
    replay_rules: Mapping[str, str]
    #: Fields a replayable text content item may carry.
    text_content_fields: frozenset[str]
    #: Native function declaration: field -> kind (all others rejected), and the required ones.
    function_tool_fields: Mapping[str, str]
    function_tool_required: frozenset[str]
    #: Google-hosted tool declarations passed through (their steps are in the union).
    hosted_tool_types: frozenset[str]
    #: ``response_format`` discriminators passed through unvalidated.
    response_format_media: frozenset[str]
    #: ``response_format`` of type ``text``: its fields and allowed ``mime_type`` values.
    text_format_fields: frozenset[str]
    text_mime_types: frozenset[str]
    #: Request fields a builder owns; ``request_controls`` may not set them (any spelling).
    protected_request_fields: frozenset[str]
    #: Where Interactions puts the structured final format (the builder's own
    #: ``response_format`` argument), and every other API's structured-output field ->
    #: why ``request_controls`` may not carry it.
    structured_output_field: str
    foreign_structured_output_fields: Mapping[str, str]
    #: ``response_format.type`` values of Chat Completions' shape -> why they are not
    #: Interactions' (same field name, different contract).
    foreign_response_format_types: Mapping[str, str]
    #: Top-level fields of a GenerateContent response (REST camelCase and SDK
    #: snake_case): an event without ``event_type`` (or an object without ``status``)
    #: that has one is a GenerateContent chunk, named so in the rejection.
    generate_content_fields: frozenset[str]


_CONTENT_DELTAS: Final = frozenset({"text", "image", "audio", "document", "video"})
_NO_FIELDS: Final[Mapping[str, str]] = {}

# API version v1 (never the v1beta union), read from the google-genai 2.12.1 types.
_V1_2026_07_21: Final = RevisionTables(
    transitions={
        "idle": {"interaction.created": "open", "error": "idle"},
        "open": {
            "step.start": "open",
            "step.delta": "open",
            "step.stop": "open",
            "interaction.status_update": "open",
            "interaction.completed": "done",
            "error": "open",
        },
        "done": {},
    },
    initial_state="idle",
    final_state="done",
    event_fields={
        "interaction.created": {"interaction": "object"},
        "step.start": {"index": "int", "step": "object"},
        "step.delta": {"index": "int", "delta": "object"},
        "step.stop": {"index": "int"},
        "interaction.status_update": {"interaction_id": "nonempty_str", "status": "str"},
        "interaction.completed": {"interaction": "object"},
        "error": _NO_FIELDS,
    },
    optional_event_fields={"event_id": "nonempty_str"},
    index_range=(-(2**31), 2**31 - 1),
    interaction_fields={"id": "nonempty_str", "status": "str"},
    statuses={
        "in_progress": "non_terminal",
        "requires_action": "tool_turn",
        "completed": "final",
        "failed": "provider_failure",
        "cancelled": "provider_failure",
        "incomplete": "provider_failure",
    },
    usage_total_fields=("total_input_tokens", "total_output_tokens", "total_tokens"),
    # The 15 stable v1 Step discriminators (google-genai 2.12.1's union minus MCP).
    step_types={
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
    v1beta_only_step_types=frozenset({"mcp_server_tool_call", "mcp_server_tool_result"}),
    stream_step_fields={
        "input": _NO_FIELDS,
        "model_output": _NO_FIELDS,
        "thought": _NO_FIELDS,
        "client_call": {"id": "nonempty_str", "name": "nonempty_str"},
        "client_result": _NO_FIELDS,
        "hosted_call": _NO_FIELDS,
        "hosted_result": _NO_FIELDS,
    },
    snapshot_step_fields={
        "input": _NO_FIELDS,
        "model_output": _NO_FIELDS,
        "thought": _NO_FIELDS,
        "client_call": {"id": "nonempty_str", "name": "nonempty_str", "arguments": "object"},
        "client_result": {"call_id": "nonempty_str"},
        "hosted_call": _NO_FIELDS,
        "hosted_result": _NO_FIELDS,
    },
    delta_types={
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
    arguments_delta_fields=frozenset({"type", "arguments"}),
    replay_rules={
        "input": "input",
        "model_output": "text_output",
        "thought": "thought",
        "client_call": "call",
        "client_result": "result",
        "hosted_call": "opaque",
        "hosted_result": "opaque",
    },
    text_content_fields=frozenset({"type", "text", "annotations"}),
    function_tool_fields={
        "type": "str", "name": "nonempty_str", "description": "str", "parameters": "object",
    },
    function_tool_required=frozenset({"type", "name", "parameters"}),
    hosted_tool_types=frozenset(
        {"google_search", "code_execution", "url_context", "file_search", "google_maps"}
    ),
    response_format_media=frozenset({"audio", "image", "video"}),
    text_format_fields=frozenset({"type", "mime_type", "schema"}),
    text_mime_types=frozenset({"application/json", "text/plain"}),
    protected_request_fields=frozenset(
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
    ),
    # The seed: "Do not copy Chat Completions response_format or one provider's field
    # to all three." Chat's response_format has Interactions' name: request_controls
    # cannot set it (protected), and its shapes are named when passed as the argument.
    structured_output_field="response_format",
    foreign_structured_output_fields={
        "text": (
            "that is OpenAI Responses' structured-output field (text.format); "
            "Interactions takes the structured final format as response_format "
            "(the builder's response_format argument)"
        ),
        "output_config": (
            "that is Anthropic Messages' structured-output field (output_config.format); "
            "Interactions takes the structured final format as response_format "
            "(the builder's response_format argument)"
        ),
    },
    foreign_response_format_types={
        "json_schema": "Chat Completions' response_format shape",
        "json_object": "Chat Completions' response_format shape",
    },
    # GenerateContentResponse: candidates[].content.parts, promptFeedback (the safety
    # envelope), usageMetadata, modelVersion, responseId.
    generate_content_fields=frozenset(
        {
            "candidates", "promptFeedback", "usageMetadata", "modelVersion", "responseId",
            "prompt_feedback", "usage_metadata", "model_version", "response_id",
        }
    ),
)

# -- revision 2026-12-01: today's shapes, read from the google-genai 3.6.1 types -------
# (google.genai.interactions, defined in google.genai._gaos.types.interactions). Each
# change is a row of fixtures/CHANGELOG.md; everything else is the pinned row unchanged.

_NEW_STEPS_2026_12_01: Final[Mapping[str, str]] = {
    # Server-side steps of the current Step union: nothing the client executes or
    # answers, so hosted roles (never executable; stateless replay fails closed).
    "processing_call": "hosted_call",
    "processing_result": "hosted_result",
    "retrieval_call": "hosted_call",
    "retrieval_result": "hosted_result",
    "tool_search_call": "hosted_call",
    "tool_search_result": "hosted_result",
}

_V1_2026_12_01: Final = replace(
    _V1_2026_07_21,
    statuses={
        **_V1_2026_07_21.statuses,
        # accepted and waiting, like in_progress
        "queued": "non_terminal",
        # decoding stopped at the per-request token limit; resumed with the
        # continuation_token (google.genai._interactions_continuation), never answered
        # with function results: the turn is returned and releases nothing
        "requires_continuation": "continuation",
        # the provider stopped the interaction at its budget: releases nothing
        "budget_exceeded": "provider_failure",
        # no documented meaning for a stream's terminal or for tool execution
        "idle": "unsupported",
    },
    step_types={**_V1_2026_07_21.step_types, **_NEW_STEPS_2026_12_01},
    delta_types={
        **_V1_2026_07_21.delta_types,
        **{step: frozenset({step}) for step in _NEW_STEPS_2026_12_01},
    },
)

#: Every shipped revision; the keys are what ``revision=`` accepts.
REVISIONS: Final[Mapping[str, RevisionTables]] = {
    "2026-07-21": _V1_2026_07_21,
    "2026-12-01": _V1_2026_12_01,
}
check_revisions("gemini-interactions", REVISIONS)


def check_tables(tables: RevisionTables, name: str) -> None:
    """Raise ``RuntimeError`` (a table bug, found at import) unless ``tables`` is whole.

    Every state named by a transition exists; every event type has a transition out of
    some state and a field row, and nothing else does; every status has a known
    meaning and some status means each of ``tool_turn``/``final``; every step type has
    a known role and a delta row, and every role a field row for streams and snapshots
    and a replay rule; ``function_call`` is the one client-executed step; every kind is
    in the ``_kinds`` vocabulary.
    """

    def fail(problem: str) -> RuntimeError:
        return RuntimeError(f"gemini_interactions revision {name}: {problem}")

    states = set(tables.transitions)
    for want in (tables.initial_state, tables.final_state):
        if want not in states:
            raise fail(f"state {want!r} has no transition row")
    event_types = set(tables.event_fields)
    used: set[str] = set()
    for state, row in tables.transitions.items():
        for event_type, target in row.items():
            if event_type not in event_types:
                raise fail(f"transition {state}/{event_type} names an unknown event type")
            if target not in states:
                raise fail(f"transition {state}/{event_type} leads to unknown state {target!r}")
            used.add(event_type)
    if used != event_types:
        raise fail(f"event types without a transition: {sorted(event_types - used)}")
    for event_type, row in tables.event_fields.items():
        check_kinds(row, f"{name} event_fields[{event_type}]")
    check_kinds(tables.optional_event_fields, f"{name} optional_event_fields")
    check_kinds(tables.interaction_fields, f"{name} interaction_fields")
    if not {"id", "status"} <= set(tables.interaction_fields):
        raise fail("interaction_fields must require id and status")
    meanings = set(tables.statuses.values())
    if not meanings <= STATUS_MEANINGS:
        raise fail(f"unknown status meanings {sorted(meanings - STATUS_MEANINGS)}")
    if not {"tool_turn", "final", "non_terminal"} <= meanings:
        raise fail("statuses need a tool_turn, a final and a non_terminal status")
    roles = set(tables.step_types.values())
    if not roles <= ROLES:
        raise fail(f"unknown step roles {sorted(roles - ROLES)}")
    if [t for t, r in tables.step_types.items() if r == "client_call"] != ["function_call"]:
        raise fail("exactly one step type, function_call, is client-executed")
    if set(tables.step_types) & tables.v1beta_only_step_types:
        raise fail("a v1beta-only step type is also in the v1 union")
    if set(tables.delta_types) != set(tables.step_types):
        raise fail("delta_types must have exactly one row per step type")
    if "arguments_delta" not in tables.delta_types["function_call"]:
        raise fail("function_call steps need the arguments_delta delta type")
    for label, rows in (("stream_step_fields", tables.stream_step_fields),
                        ("snapshot_step_fields", tables.snapshot_step_fields),
                        ("replay_rules", tables.replay_rules)):
        if set(rows) != ROLES:
            raise fail(f"{label} must have exactly one row per role")
    for label, rows in (("stream_step_fields", tables.stream_step_fields),
                        ("snapshot_step_fields", tables.snapshot_step_fields)):
        for role, fields in rows.items():
            check_kinds(fields, f"{name} {label}[{role}]")
    if not set(tables.replay_rules.values()) <= REPLAY_RULES:
        raise fail("replay_rules names an unknown rule")
    check_kinds(tables.function_tool_fields, f"{name} function_tool_fields")
    if not tables.function_tool_required <= set(tables.function_tool_fields):
        raise fail("function_tool_required names a field without a kind")
    if tables.index_range[0] > tables.index_range[1]:
        raise fail("index_range is empty")
    problem = check_foreign_rows(
        tables.structured_output_field,
        tables.foreign_structured_output_fields,
        tables.protected_request_fields,
    )
    if problem is not None:
        raise fail(problem)
    if tables.structured_output_field not in tables.protected_request_fields:
        raise fail("the builder's own response_format must be a protected field")
    known = tables.response_format_media | {"text"}
    if set(tables.foreign_response_format_types) & known:
        raise fail("a foreign response_format type is also an Interactions type")
    if "candidates" not in tables.generate_content_fields or tables.generate_content_fields & (
        set(tables.interaction_fields) | {"event_type", "steps", "status"}
    ):
        raise fail("generate_content_fields must name candidates and no Interactions field")



# ------------------------------------------------------------- lookups in the tables


def role_of(
    tables: RevisionTables,
    step_type: object,
    where: str,
    *,
    shape: type[ContractError] = ProtocolViolation,
    unknown: type[ContractError] = UnsupportedProviderState,
) -> str:
    """The role of a step type: ``shape`` if not a string, ``unknown`` outside the v1 union."""
    if type(step_type) is not str:
        raise shape(f"step type must be a string, got {preview(step_type)}", where=f"{where}.type")
    role = tables.step_types.get(step_type)
    if role is None:
        if step_type in tables.v1beta_only_step_types:
            raise unknown(
                f"step type {preview(step_type)} belongs to the v1beta union, not the pinned "
                "stable v1 contract",
                where=f"{where}.type",
            )
        hint = drift_hint(REVISIONS, _name_of(tables),
                          lambda t: step_type in t.step_types)
        raise unknown(f"unknown step type {preview(step_type)}{hint}", where=f"{where}.type")
    return role


def meaning_of(tables: RevisionTables, status: object, where: str) -> str:
    """What an Interaction status means; ``UnsupportedProviderState`` for an unknown one."""
    if type(status) is not str:
        raise ProtocolViolation(f"status must be a string, got {preview(status)}", where=where)
    meaning = tables.statuses.get(status)
    if meaning is None:
        hint = drift_hint(REVISIONS, _name_of(tables), lambda t: status in t.statuses)
        raise UnsupportedProviderState(
            f"unknown interaction status {preview(status)}{hint}", where=where
        )
    if meaning == "unsupported":
        raise UnsupportedProviderState(
            f"interaction status {preview(status)} is known but its meaning for tool "
            f"execution is not pinned by contract revision {_name_of(tables)}",
            where=where,
        )
    return meaning


def _name_of(tables: RevisionTables) -> str:
    """The revision name of ``tables`` (identity lookup; on rejection paths only)."""
    for name, candidate in REVISIONS.items():
        if candidate is tables:
            return name
    return "?"


# At import: a table bug fails here, never as a KeyError while parsing.

for _name, _revision_tables in REVISIONS.items():
    check_tables(_revision_tables, _name)
del _name, _revision_tables
