"""OpenAI Chat Completions revision tables: the fields the parsers read, as data.

Every table the aggregator, the body parser, the message check, the request check
and the cache codec consult lives here, keyed by revision in :data:`REVISIONS`.
A field is a :class:`Field`: its JSON kind (the :mod:`contracts._kinds`
vocabulary), the *rule* (the handler that merges or checks it), whether it is
required, whether ``null`` is allowed, and the progress kind it reports. A level is
*closed* (an unknown key fails: delta, tool delta, function delta) or *open* (other
keys are metadata outside the snapshot and are not read: chunk, choice, body,
message, tool call, function).

:func:`check_tables` runs at import for every revision and raises ``RuntimeError``
on a table bug (an unknown kind, a rule without a handler, a rule that must occur
once but does not, a transition to an unknown state, ...), so a forgotten row fails
here, not as a ``KeyError`` in production. Adding a revision is a new
:class:`RevisionTables` entry plus tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final

from .._kinds import INT64_MAX, check_kinds
from ..registry import check_revisions

#: The default revision: the newest shipped one (``2026-07-21`` is the seed's pinned
#: baseline, kept exactly as pinned beside it; ``fixtures/CHANGELOG.md`` lists each change).
REVISION: Final = "2026-12-01"

#: The stream sentinel, as the decoded ``data:`` payload.
DONE: Final = "[DONE]"

#: How a fixture file (whose events must all be JSON objects) writes the sentinel.
FIXTURE_DONE_EVENT: Final = {"data": "[DONE]"}

#: Progress kinds a frame can carry (design section 5).
PROGRESS_KINDS: Final = (
    "content",
    "reasoning_content",
    "tool_name",
    "tool_arguments",
    "tool_identity",
)

#: What a stream frame is: a chunk object, or the ``[DONE]`` sentinel.
FRAME_KINDS: Final = frozenset({"chunk", "done"})

#: The rules (handlers) each level knows. A table row naming another rule is a
#: table bug; the parsers check at import that each has exactly these handlers.
LEVEL_RULES: Final[Mapping[str, frozenset[str]]] = {
    "chunk": frozenset({"error", "choices", "response_id", "model_reported", "usage"}),
    "choice": frozenset({"choice_index", "delta", "finish_reason"}),
    "delta": frozenset({"role", "text", "tool_calls", "null_only"}),
    "tool_delta": frozenset({"tool_index", "tool_id", "tool_type", "function"}),
    "function_delta": frozenset({"tool_name", "tool_arguments"}),
    "body": frozenset({"error", "choices", "response_id", "model_reported", "usage"}),
    "body_choice": frozenset({"choice_index", "message", "finish_reason"}),
    "message": frozenset({"role", "text", "tool_calls", "null_only"}),
    "tool_call": frozenset({"tool_id", "tool_type", "function"}),
    "function": frozenset({"tool_name", "tool_arguments"}),
}

# Rules that must name exactly one field of their level (the parser looks the field
# up by its rule); the others may name any number.
_SINGLE_RULES: Final[Mapping[str, frozenset[str]]] = {
    "chunk": frozenset({"error", "choices", "response_id", "model_reported", "usage"}),
    "choice": frozenset({"choice_index", "delta", "finish_reason"}),
    "delta": frozenset({"role", "tool_calls"}),
    "tool_delta": frozenset({"tool_index", "tool_id", "tool_type", "function"}),
    "function_delta": frozenset({"tool_name", "tool_arguments"}),
    "body": frozenset({"error", "choices", "response_id", "model_reported", "usage"}),
    "body_choice": frozenset({"message", "finish_reason"}),
    "message": frozenset({"role", "tool_calls"}),
    "tool_call": frozenset({"tool_id", "tool_type", "function"}),
    "function": frozenset({"tool_name", "tool_arguments"}),
}

# Rules whose field must be present (required) and never null, because the parser
# cannot do without it: a choice list, a delta, a tool's bucket key.
_REQUIRED_RULES: Final[Mapping[str, frozenset[str]]] = {
    "chunk": frozenset({"choices"}),
    "choice": frozenset({"choice_index", "delta"}),
    "tool_delta": frozenset({"tool_index"}),
    "body": frozenset({"choices"}),
    "body_choice": frozenset({"message"}),
    "message": frozenset({"role"}),
    "tool_call": frozenset({"tool_id", "tool_type", "function"}),
    "function": frozenset({"tool_name", "tool_arguments"}),
}


@dataclass(frozen=True, slots=True)
class Field:
    """One known field of one level.

    ``kind``: the JSON kind of a non-null value (:data:`contracts._kinds.KINDS`).
    ``rule``: the handler that merges or checks the value (one of the level's
    :data:`LEVEL_RULES`). ``required``: absence fails. ``nullable``: ``null`` is
    allowed (and handed to the rule, which may treat it as absent). ``progress``:
    the progress kind the field reports when its rule says it progressed.
    """

    kind: str
    rule: str
    required: bool = False
    nullable: bool = True
    progress: str | None = None


@dataclass(frozen=True, slots=True)
class RevisionTables:
    """Everything one revision of the Chat Completions contract reads.

    ``levels`` maps a level name (a key of :data:`LEVEL_RULES`) to its fields in the
    order the parser handles them; ``closed_levels`` are the levels where an unknown
    key fails. ``choice_index``: the index the one supported choice must carry.
    ``max_tool_index``: the largest ``delta.tool_calls[].index`` (int64 on the wire).
    ``tool_types``/``message_roles``: accepted values. ``finish_reasons``: known
    values and whether each may release calls (an unknown value is kept and never
    releases). ``initial_state``/``transitions``: the stream states and the frame
    kinds each accepts (h11-style: a lookup miss is the illegal transition);
    ``closing_states``: where ``close()`` may return a turn (after ``[DONE]``).
    ``request_choice_count``/``request_choice_containers``: the ``n`` a request may
    ask for and where (``""`` is the payload itself). ``response_modes``: the
    request's response modes, the first being the default (legacy ``text``);
    ``fidelity_mode``: the one mode this library aggregates (``openai``).
    ``think_tags``: the open and close tag of a think block, which the legacy text
    projection drops. ``cache_key_ignored_fields``: request fields that are not part
    of the answer (transport and bookkeeping) and so stay out of the cache key.
    """

    levels: Mapping[str, Mapping[str, Field]]
    closed_levels: frozenset[str]
    choice_index: int
    max_tool_index: int
    tool_types: frozenset[str]
    message_roles: frozenset[str]
    finish_reasons: Mapping[str, bool]
    initial_state: str
    transitions: Mapping[str, Mapping[str, str]]
    closing_states: frozenset[str]
    request_choice_count: int
    request_choice_containers: tuple[str, ...]
    response_modes: tuple[str, ...]
    fidelity_mode: str
    think_tags: tuple[str, str]
    cache_key_ignored_fields: frozenset[str]

    def field_for(self, level: str, rule: str) -> str:
        """The name of the one field of ``level`` that ``rule`` handles."""
        for name, spec in self.levels[level].items():
            if spec.rule == rule:
                return name
        raise RuntimeError(f"no {level} field has rule {rule!r}")  # check_tables rules it out

    def fields_for(self, level: str, rule: str) -> tuple[str, ...]:
        """The names of every field of ``level`` that ``rule`` handles, in table order."""
        return tuple(name for name, spec in self.levels[level].items() if spec.rule == rule)


_TEXT: Final = Field("str", "text")

_R_2026_07_21: Final = RevisionTables(
    levels={
        # Top-level chunk fields. ``error`` first: any value (null, {}, "x") is a
        # provider error, reported before anything else is read.
        "chunk": {
            "error": Field("any", "error"),
            "id": Field("str", "response_id"),
            # The first non-empty model is kept (design 3.4/4.1 model_reported).
            "model": Field("str", "model_reported"),
            "usage": Field("object", "usage"),
            "choices": Field("array", "choices", required=True, nullable=False),
        },
        "choice": {
            "index": Field("int", "choice_index", required=True, nullable=False),
            "delta": Field("object", "delta", required=True, nullable=False),
            "finish_reason": Field("str", "finish_reason"),
        },
        # ``choices[0].delta`` (design 4.1). ``refusal`` and the legacy
        # ``function_call`` are known to the pinned SDK but have no merge rule
        # here: accepted only as null.
        "delta": {
            "role": Field("str", "role"),
            "content": Field("str", "text", progress="content"),
            "reasoning_content": Field("str", "text", progress="reasoning_content"),
            "tool_calls": Field("array", "tool_calls"),
            "refusal": Field("any", "null_only"),
            "function_call": Field("any", "null_only"),
        },
        # One ``delta.tool_calls[]`` entry: ``index`` is the bucket key, read first.
        "tool_delta": {
            "index": Field("int", "tool_index", required=True, nullable=False),
            "id": Field("nonempty_str", "tool_id", progress="tool_identity"),
            "type": Field("str", "tool_type", progress="tool_identity"),
            "function": Field("object", "function"),
        },
        "function_delta": {
            "name": Field("str", "tool_name", progress="tool_name"),
            "arguments": Field("str", "tool_arguments", progress="tool_arguments"),
        },
        # The non-streaming ``chat.completion`` body.
        "body": {
            "error": Field("any", "error"),
            "choices": Field("array", "choices", required=True, nullable=False),
            "id": Field("str", "response_id"),
            "model": Field("str", "model_reported"),
            "usage": Field("object", "usage"),
        },
        "body_choice": {
            "index": Field("int", "choice_index", nullable=False),
            "message": Field("object", "message", required=True, nullable=False),
            "finish_reason": Field("str", "finish_reason"),
        },
        # A final message (body, cache entry, aggregated snapshot). Extension
        # fields are kept; the legacy ``function_call`` is an execution request
        # this contract does not implement, so it is accepted only as null.
        "message": {
            "role": Field("str", "role", required=True, nullable=False),
            "content": _TEXT,
            "reasoning_content": _TEXT,
            "tool_calls": Field("array", "tool_calls"),
            "function_call": Field("any", "null_only"),
        },
        "tool_call": {
            "id": Field("nonempty_str", "tool_id", required=True, nullable=False),
            "type": Field("str", "tool_type", required=True, nullable=False),
            "function": Field("object", "function", required=True, nullable=False),
        },
        "function": {
            "name": Field("nonempty_str", "tool_name", required=True, nullable=False),
            "arguments": Field("str", "tool_arguments", required=True, nullable=False),
        },
    },
    closed_levels=frozenset({"delta", "tool_delta", "function_delta"}),
    choice_index=0,
    max_tool_index=INT64_MAX,
    tool_types=frozenset({"function"}),
    message_roles=frozenset({"assistant"}),
    finish_reasons={
        "stop": False,
        "length": False,
        "tool_calls": True,
        "content_filter": False,
        "function_call": False,
    },
    initial_state="streaming",
    transitions={
        "streaming": {"chunk": "streaming", "done": "done"},
        "done": {},
    },
    closing_states=frozenset({"done"}),
    request_choice_count=1,
    # The payload itself, and the SDK's ``extra_body`` (merged into the payload,
    # so it may shadow or be shadowed by the top-level value).
    request_choice_containers=("", "extra_body"),
    response_modes=("text", "openai"),
    fidelity_mode="openai",
    think_tags=("<think>", "</think>"),
    # Transport (``stream``, ``stream_options``: set by the caller's library, not
    # the answer) and bookkeeping fields that never change what the model says.
    cache_key_ignored_fields=frozenset({
        "stream", "stream_options", "user", "metadata", "store",
        "prompt_cache_key", "safety_identifier",
    }),
)

# Revision 2026-12-01: today's shapes, read from the openai 3.57.0 types. The one change
# (a row of fixtures/CHANGELOG.md): ChoiceDelta (openai.types.chat.chat_completion_chunk)
# gained ``audio`` (ChoiceDeltaAudio | None). Audio output has no merge rule in this
# contract, so, like ``refusal``, it is accepted only as null; a real audio delta still
# fails closed (the delta level stays closed).
_R_2026_12_01: Final = replace(
    _R_2026_07_21,
    levels={
        **_R_2026_07_21.levels,
        "delta": {**_R_2026_07_21.levels["delta"], "audio": Field("any", "null_only")},
    },
)

#: Every shipped revision; the keys are what ``revision=`` accepts.
REVISIONS: Final[Mapping[str, RevisionTables]] = {
    "2026-07-21": _R_2026_07_21,
    "2026-12-01": _R_2026_12_01,
}
check_revisions("openai-chat", REVISIONS)


def check_tables(tables: RevisionTables, revision: str) -> None:
    """Raise ``RuntimeError`` if ``tables`` is not a consistent revision.

    Every level is known and present with its rules known; every kind is in the
    shared vocabulary; each single rule names exactly one field; the fields the
    parser cannot do without are required and non-null; progress kinds are known;
    the aggregated message's fields exist in the message level; transitions name
    only known states and frame kinds; the value sets are non-empty.
    """
    where = f"openai_chat revision {revision}"
    if set(tables.levels) != set(LEVEL_RULES):
        raise RuntimeError(f"{where}: levels {sorted(tables.levels)} != {sorted(LEVEL_RULES)}")
    if not tables.closed_levels <= set(LEVEL_RULES):
        raise RuntimeError(f"{where}: unknown closed level in {sorted(tables.closed_levels)}")
    for level, fields in tables.levels.items():
        check_kinds({name: spec.kind for name, spec in fields.items()}, f"{where} {level}")
        for name, spec in fields.items():
            if spec.rule not in LEVEL_RULES[level]:
                raise RuntimeError(f"{where}: {level}.{name} has unknown rule {spec.rule!r}")
            if spec.progress is not None and spec.progress not in PROGRESS_KINDS:
                raise RuntimeError(f"{where}: {level}.{name} has unknown progress kind")
        for rule in _SINGLE_RULES.get(level, frozenset()):
            count = sum(1 for spec in fields.values() if spec.rule == rule)
            if count != 1:
                raise RuntimeError(f"{where}: {level} has {count} fields with rule {rule!r}")
        for rule in _REQUIRED_RULES.get(level, frozenset()):
            spec = fields[tables.field_for(level, rule)]
            if not spec.required or spec.nullable:
                raise RuntimeError(f"{where}: {level} rule {rule!r} must be required, not null")
    delta, message = tables.levels["delta"], tables.levels["message"]
    for name, spec in delta.items():
        # The aggregated message is checked as a message: each delta field that
        # lands in it must be a message field with the same rule.
        if spec.rule in ("role", "text", "tool_calls") and (
            name not in message or message[name].rule != spec.rule
        ):
            raise RuntimeError(f"{where}: delta.{name} has no message field with its rule")
    for stream_level, final_level in (("tool_delta", "tool_call"), ("function_delta", "function")):
        for rule in ("tool_id", "tool_type", "function", "tool_name", "tool_arguments"):
            if rule in LEVEL_RULES[stream_level] and rule in LEVEL_RULES[final_level]:
                if tables.field_for(stream_level, rule) != tables.field_for(final_level, rule):
                    raise RuntimeError(f"{where}: {stream_level} and {final_level} name {rule} apart")
    if type(tables.choice_index) is not int or tables.choice_index < 0:
        raise RuntimeError(f"{where}: choice_index must be a non-negative int")
    if type(tables.max_tool_index) is not int or not 0 <= tables.max_tool_index <= INT64_MAX:
        raise RuntimeError(f"{where}: max_tool_index must be an int64")
    for what, values in (
        ("tool_types", tables.tool_types),
        ("message_roles", tables.message_roles),
        ("finish_reasons", frozenset(tables.finish_reasons)),
    ):
        if not values or not all(type(v) is str and v for v in values):
            raise RuntimeError(f"{where}: {what} must be non-empty strings")
    if not any(tables.finish_reasons.values()):
        raise RuntimeError(f"{where}: no finish reason releases calls")
    states = set(tables.transitions)
    if tables.initial_state not in states:
        raise RuntimeError(f"{where}: initial state {tables.initial_state!r} has no row")
    if not tables.closing_states or not tables.closing_states <= states:
        raise RuntimeError(f"{where}: closing states {sorted(tables.closing_states)} unknown")
    for state, row in tables.transitions.items():
        for frame_kind, target in row.items():
            if frame_kind not in FRAME_KINDS or target not in states:
                raise RuntimeError(f"{where}: transition {state} --{frame_kind}--> {target}")
    if type(tables.request_choice_count) is not int or tables.request_choice_count < 1:
        raise RuntimeError(f"{where}: request_choice_count must be a positive int")
    if "" not in tables.request_choice_containers:
        raise RuntimeError(f"{where}: the payload itself must be a request_choice_container")
    modes = tables.response_modes
    if not modes or len(set(modes)) != len(modes) or not all(type(m) is str for m in modes):
        raise RuntimeError(f"{where}: response_modes must be distinct strings")
    if tables.fidelity_mode not in modes[1:]:
        raise RuntimeError(f"{where}: fidelity_mode must be a non-default response mode")
    opening, closing = tables.think_tags
    if not (type(opening) is str and type(closing) is str and opening and closing
            and opening != closing):
        raise RuntimeError(f"{where}: think_tags must be two distinct non-empty strings")
    if "messages" in tables.cache_key_ignored_fields or not all(
        type(name) is str for name in tables.cache_key_ignored_fields
    ):
        raise RuntimeError(f"{where}: cache_key_ignored_fields must be strings, never messages")


for _name, _entry in REVISIONS.items():
    check_tables(_entry, _name)
del _name, _entry
