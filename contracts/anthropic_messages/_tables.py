"""Anthropic Messages revisions as data: every table the parser and the builder consult.

One :class:`RevisionTables` per pinned revision in :data:`REVISIONS`. The parser is
driven by these tables: the transition table (a lookup miss is the illegal
transition), the block and delta types (fields, kinds, which deltas fit which block
and what each delta does), the stop reasons and the usage counters; the builder by
the continuable stop reasons, history roles and protected request fields.
:func:`check_tables` runs for every revision at import, so a forgotten row is a
``RuntimeError`` at import rather than a ``KeyError`` in production.

Adding a revision: a new ``RevisionTables`` entry (usually
``dataclasses.replace`` of the previous one) plus fixtures and tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Final

from .._kinds import check_kinds
from .._request import check_foreign_rows
from ..registry import check_revisions

__all__ = [
    "REVISION",
    "REVISIONS",
    "RevisionTables",
    "BlockSpec",
    "DeltaSpec",
    "INVALID_JSON_KEY",
    "check_tables",
]

#: The default revision: the newest one shipped.
#: (``2026-07-21`` is the seed's pinned baseline, kept exactly as pinned beside it.)
REVISION: Final = "2026-12-01"

#: Key under which the raw text of an incomplete tool input is replayed:
#: ``tool_use.input`` must be an object, so the partial text is wrapped, as the
#: fine-grained tool streaming page advises, instead of being repaired or dropped.
INVALID_JSON_KEY: Final = "INVALID_JSON"

# Block roles: what a block type means for execution and replay.
ROLE_TEXT: Final = "text"
ROLE_THINKING: Final = "thinking"
ROLE_REDACTED_THINKING: Final = "redacted_thinking"
ROLE_CLIENT_TOOL_USE: Final = "client_tool_use"
ROLE_SERVER_TOOL_USE: Final = "server_tool_use"
ROLE_SERVER_TOOL_RESULT: Final = "server_tool_result"
ROLE_OPAQUE: Final = "opaque"
ROLES: Final = frozenset(
    {
        ROLE_TEXT,
        ROLE_THINKING,
        ROLE_REDACTED_THINKING,
        ROLE_CLIENT_TOOL_USE,
        ROLE_SERVER_TOOL_USE,
        ROLE_SERVER_TOOL_RESULT,
        ROLE_OPAQUE,
    }
)
#: Roles whose blocks carry a tool use ``id``, a ``name`` and a streamed ``input``.
TOOL_USE_ROLES: Final = frozenset({ROLE_CLIENT_TOOL_USE, ROLE_SERVER_TOOL_USE})
#: Fields every block of a role must require (kind included): what the parser reads.
ROLE_FIELDS: Final[Mapping[str, Mapping[str, str]]] = {
    ROLE_CLIENT_TOOL_USE: {"id": "nonempty_str", "name": "nonempty_str", "input": "object"},
    ROLE_SERVER_TOOL_USE: {"id": "nonempty_str", "name": "nonempty_str", "input": "object"},
    ROLE_SERVER_TOOL_RESULT: {"tool_use_id": "nonempty_str"},
}

# What a delta does to its open block (the parser has one handler per action).
ACT_APPEND_TEXT: Final = "append_text"  # to the block's ``text_field`` buffer
ACT_APPEND_INPUT: Final = "append_input"  # to the tool input buffer
ACT_SIGNATURE: Final = "signature"  # sets ``signature``; the block's last delta
ACT_CITATION: Final = "citation"  # appends to ``citations``
ACTIONS: Final = frozenset({ACT_APPEND_TEXT, ACT_APPEND_INPUT, ACT_SIGNATURE, ACT_CITATION})

# Parser states (h11-style: a table lookup miss is the illegal transition).
S_INITIAL: Final = "initial"
S_MESSAGE: Final = "message"
S_BLOCK: Final = "block"
S_MESSAGE_DELTA: Final = "message_delta"
S_STOPPED: Final = "stopped"
STATES: Final = frozenset({S_INITIAL, S_MESSAGE, S_BLOCK, S_MESSAGE_DELTA, S_STOPPED})
#: Events every state accepts: ``ping`` keeps the state, ``error`` raises.
ANYWHERE_EVENTS: Final = ("ping", "error")
#: History roles the builder implements (``system`` with its positional rules).
BUILDER_HISTORY_ROLES: Final = frozenset({"user", "assistant", "system"})


@dataclass(frozen=True, slots=True)
class BlockSpec:
    """One known content block type.

    ``required`` / ``optional`` map a field to its kind (:mod:`contracts._kinds`;
    an optional field may also be ``null``). ``deltas``: the delta types that fit.
    ``text_field``: the field that streamed text accumulates into (``None``: no
    text deltas). ``signed``: the block must close with a non-empty ``signature``.
    """

    role: str
    required: Mapping[str, str]
    optional: Mapping[str, str]
    deltas: frozenset[str]
    text_field: str | None = None
    signed: bool = False


@dataclass(frozen=True, slots=True)
class DeltaSpec:
    """One known delta type: the field it carries, that field's kind, what it does."""

    field: str
    kind: str
    action: str


@dataclass(frozen=True, slots=True)
class RevisionTables:
    """All protocol knowledge of one pinned contract revision, as data."""

    event_types: frozenset[str]
    transitions: Mapping[str, Mapping[str, str]]
    message_fields: Mapping[str, str]
    blocks: Mapping[str, BlockSpec]
    unsupported_blocks: Mapping[str, str]
    deltas: Mapping[str, DeltaSpec]
    stop_reasons: frozenset[str]
    executable_stop_reason: str
    truncation_stop_reasons: frozenset[str]
    #: Roles of an open block that a truncating ``message_delta`` may close (the block
    #: never got its ``content_block_stop``): its call is a recovery call, never
    #: executable. Needs the ``block --message_delta--> message_delta`` transition.
    truncation_closes_open_roles: frozenset[str]
    continuable_stop_reasons: frozenset[str]
    usage_counters: tuple[str, ...]
    required_start_usage: tuple[str, ...]
    required_delta_usage: tuple[str, ...]
    client_caller_types: frozenset[str]
    protected_request_fields: frozenset[str]
    history_roles: frozenset[str]
    #: Where Messages puts the structured final format (a dotted path), and every
    #: other API's structured-output field -> why ``request_controls`` may not carry it.
    structured_output_field: str
    foreign_structured_output_fields: Mapping[str, str]


def _server_result() -> BlockSpec:
    return BlockSpec(
        role=ROLE_SERVER_TOOL_RESULT,
        required={"tool_use_id": "nonempty_str", "content": "any"},
        optional={"caller": "object"},
        deltas=frozenset(),
    )


def _tool_use(role: str) -> BlockSpec:
    return BlockSpec(
        role=role,
        required=ROLE_FIELDS[role],
        optional={"caller": "object"},
        deltas=frozenset({"input_json_delta"}),
    )


_CORE_TRANSITIONS: Final = {
    S_INITIAL: {"message_start": S_MESSAGE},
    S_MESSAGE: {"content_block_start": S_BLOCK, "message_delta": S_MESSAGE_DELTA},
    # message_delta in a block: only a truncation (max_tokens) may close the open block
    # (truncation_closes_open_roles); the handler rejects every other case.
    S_BLOCK: {
        "content_block_delta": S_BLOCK,
        "content_block_stop": S_MESSAGE,
        "message_delta": S_MESSAGE_DELTA,
    },
    S_MESSAGE_DELTA: {"message_delta": S_MESSAGE_DELTA, "message_stop": S_STOPPED},
    S_STOPPED: {},
}


def _with_anywhere(core: Mapping[str, Mapping[str, str]]) -> dict[str, Mapping[str, str]]:
    return {
        state: {**row, **{name: state for name in ANYWHERE_EVENTS}} for state, row in core.items()
    }


_R_2026_07_21: Final = RevisionTables(
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
    message_fields={"id": "nonempty_str", "model": "str", "usage": "object"},
    blocks={
        "text": BlockSpec(
            role=ROLE_TEXT,
            required={"text": "str"},
            optional={"citations": "array"},
            deltas=frozenset({"text_delta", "citations_delta"}),
            text_field="text",
        ),
        "thinking": BlockSpec(
            role=ROLE_THINKING,
            required={"thinking": "str"},
            optional={"signature": "str"},
            deltas=frozenset({"thinking_delta", "signature_delta"}),
            text_field="thinking",
            signed=True,
        ),
        "redacted_thinking": BlockSpec(
            role=ROLE_REDACTED_THINKING, required={"data": "str"}, optional={}, deltas=frozenset()
        ),
        "tool_use": _tool_use(ROLE_CLIENT_TOOL_USE),
        "server_tool_use": _tool_use(ROLE_SERVER_TOOL_USE),
        "web_search_tool_result": _server_result(),
        "web_fetch_tool_result": _server_result(),
        "code_execution_tool_result": _server_result(),
        "bash_code_execution_tool_result": _server_result(),
        "text_editor_code_execution_tool_result": _server_result(),
        "tool_search_tool_result": _server_result(),
        "container_upload": BlockSpec(
            role=ROLE_OPAQUE, required={"file_id": "str"}, optional={}, deltas=frozenset()
        ),
    },
    unsupported_blocks={
        "fallback": (
            "the server-side-fallback beta (server-side-fallback-2026-06-01) 'fallback' "
            "block is not part of the pinned contract; its replay position rules are "
            "not implemented"
        ),
    },
    deltas={
        "text_delta": DeltaSpec("text", "str", ACT_APPEND_TEXT),
        "thinking_delta": DeltaSpec("thinking", "str", ACT_APPEND_TEXT),
        "input_json_delta": DeltaSpec("partial_json", "str", ACT_APPEND_INPUT),
        "citations_delta": DeltaSpec("citation", "object", ACT_CITATION),
        "signature_delta": DeltaSpec("signature", "str", ACT_SIGNATURE),
    },
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
    # A public recorded max_tokens stream ends with message_delta while the tool_use
    # block is still open (no content_block_stop, input cut mid-string).
    truncation_closes_open_roles=frozenset({ROLE_CLIENT_TOOL_USE}),
    continuable_stop_reasons=frozenset({"tool_use", "max_tokens"}),
    usage_counters=(
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ),
    required_start_usage=("input_tokens", "output_tokens"),
    required_delta_usage=("output_tokens",),
    # ToolUseBlock.caller: only a direct call from the model is in the pinned
    # contract; server-tool callers (programmatic tool calling) fail closed.
    client_caller_types=frozenset({"direct"}),
    protected_request_fields=frozenset({"model", "messages", "system", "tools", "max_tokens"}),
    history_roles=frozenset({"user", "assistant", "system"}),
    # The seed: "Do not copy Chat Completions response_format or one provider's field
    # to all three." Messages' own output_config passes through request_controls.
    structured_output_field="output_config.format",
    foreign_structured_output_fields={
        "response_format": (
            "that is Chat Completions' (and Gemini Interactions') structured-output "
            "field; Messages puts the structured final format in output_config.format"
        ),
        "text": (
            "that is OpenAI Responses' structured-output field (text.format); Messages "
            "puts the structured final format in output_config.format"
        ),
    },
)


def _fail(revision: str, problem: str) -> RuntimeError:
    return RuntimeError(f"anthropic_messages revision {revision}: {problem}")


def _check_block(revision: str, name: str, spec: BlockSpec, tables: RevisionTables) -> None:
    where = f"{revision} block {name!r}"
    check_kinds(spec.required, where)
    check_kinds(spec.optional, where)
    if spec.role not in ROLES:
        raise _fail(revision, f"block {name!r} has unknown role {spec.role!r}")
    for field, kind in ROLE_FIELDS.get(spec.role, {}).items():
        if spec.required.get(field) != kind:
            raise _fail(revision, f"{spec.role} block {name!r} must require {field!r} as {kind}")
    if set(spec.required) & set(spec.optional):
        raise _fail(revision, f"block {name!r} lists a field as required and optional")
    if spec.text_field is not None and spec.required.get(spec.text_field) != "str":
        raise _fail(revision, f"block {name!r} text_field must be a required str field")
    if spec.signed and spec.optional.get("signature") != "str":
        raise _fail(revision, f"signed block {name!r} needs an optional str 'signature'")
    for dtype in spec.deltas:
        delta = tables.deltas.get(dtype)
        if delta is None:
            raise _fail(revision, f"block {name!r} names unknown delta {dtype!r}")
        fits = {
            ACT_APPEND_TEXT: spec.text_field is not None,
            ACT_APPEND_INPUT: spec.role in TOOL_USE_ROLES,
            ACT_SIGNATURE: spec.signed,
            ACT_CITATION: spec.optional.get("citations") == "array",
        }.get(delta.action, False)
        if not fits:
            raise _fail(revision, f"delta {dtype!r} ({delta.action}) does not fit block {name!r}")


def check_tables(revision: str, tables: RevisionTables) -> None:
    """Raise ``RuntimeError`` if ``tables`` are inconsistent (a table bug, not an input).

    Checks: the transition table covers exactly the parser's states, names only known
    states and event types, and uses every event type; ``ping``/``error`` are accepted
    in every state (``ping`` keeping it); every kind is known; every block role is
    known and requires the fields the parser reads for it; every delta a block names
    exists, has a known action and fits the block; stop-reason sets are known stop
    reasons; required usage counters are usage counters; unsupported and supported
    block types are disjoint; the builder implements every history role.
    """
    if set(tables.transitions) != STATES:
        raise _fail(revision, f"transition states {sorted(tables.transitions)} != {sorted(STATES)}")
    used: set[str] = set()
    for state, row in tables.transitions.items():
        for event, target in row.items():
            if event not in tables.event_types:
                raise _fail(revision, f"state {state!r} names unknown event {event!r}")
            if target not in STATES:
                raise _fail(revision, f"{state!r} --{event}--> unknown state {target!r}")
            used.add(event)
        for event in ANYWHERE_EVENTS:
            if row.get(event) != state:
                raise _fail(revision, f"state {state!r} must accept {event!r} and keep its state")
    if used != tables.event_types:
        missing = sorted(tables.event_types - used)
        raise _fail(revision, f"event types without a transition: {missing}")
    check_kinds(tables.message_fields, f"{revision} message_fields")
    if tables.message_fields.get("usage") != "object":
        raise _fail(revision, "message_fields must require 'usage' as an object")
    for name, spec in tables.blocks.items():
        _check_block(revision, name, spec, tables)
    for dtype, delta in tables.deltas.items():
        check_kinds({delta.field: delta.kind}, f"{revision} delta {dtype!r}")
        if delta.action not in ACTIONS:
            raise _fail(revision, f"delta {dtype!r} has unknown action {delta.action!r}")
    if set(tables.blocks) & set(tables.unsupported_blocks):
        raise _fail(revision, "a block type is both supported and unsupported")
    if not tables.truncation_closes_open_roles <= TOOL_USE_ROLES:
        raise _fail(revision, "only a tool-use block may be closed by a truncation")
    closes = tables.transitions[S_BLOCK].get("message_delta") == S_MESSAGE_DELTA
    if closes != bool(tables.truncation_closes_open_roles):
        raise _fail(
            revision,
            "block --message_delta--> message_delta exists exactly when a truncation may "
            "close an open block",
        )
    known = tables.stop_reasons
    if tables.executable_stop_reason not in known or not (
        tables.truncation_stop_reasons <= known and tables.continuable_stop_reasons <= known
    ):
        raise _fail(revision, "a stop-reason set names an unknown stop reason")
    if not set(tables.required_start_usage + tables.required_delta_usage) <= set(
        tables.usage_counters
    ):
        raise _fail(revision, "a required usage counter is not a usage counter")
    if not {"user", "assistant"} <= tables.history_roles <= BUILDER_HISTORY_ROLES:
        raise _fail(revision, f"history roles {sorted(tables.history_roles)} are not implemented")
    if not tables.client_caller_types or not tables.protected_request_fields:
        raise _fail(revision, "client_caller_types and protected_request_fields may not be empty")
    problem = check_foreign_rows(
        tables.structured_output_field,
        tables.foreign_structured_output_fields,
        tables.protected_request_fields,
    )
    if problem is not None:
        raise _fail(revision, problem)


# Revision 2026-12-01, read from the anthropic 2.15.0 types: no change that reaches
# execution (fixtures/CHANGELOG.md). The current SDK no longer lists the beta
# ``fallback`` block; it stays an unsupported block here, so a stream that still carries
# it fails closed with its own message instead of "unknown block".
_R_2026_12_01: Final = replace(_R_2026_07_21)

#: Every shipped revision; the keys are what ``revision=`` accepts.
REVISIONS: Final[Mapping[str, RevisionTables]] = MappingProxyType(
    {"2026-07-21": _R_2026_07_21, "2026-12-01": _R_2026_12_01}
)
check_revisions("anthropic-messages", REVISIONS)

if REVISION not in REVISIONS:  # pragma: no cover - a table bug
    raise RuntimeError(f"default revision {REVISION} is not in REVISIONS")
for _revision, _revision_tables in REVISIONS.items():
    check_tables(_revision, _revision_tables)
del _revision, _revision_tables
