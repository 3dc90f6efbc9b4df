"""Anthropic Messages tool-result continuation: stateless, complete-history replay.

Messages has no server conversation handle, so the next request replays:

1. the caller's ``history`` (the ``messages`` that produced the turn);
2. the turn's complete assistant content, identical to ``turn.blocks`` in order
   (text, thinking and redacted thinking with signatures, server-tool blocks,
   every ``tool_use``);
3. ONE user message whose content starts with one ``tool_result`` block per
   client ``tool_use`` (block order; native ``is_error``); optional text after;
4. top-level ``model``, ``max_tokens``, ``tools`` (``name``, ``description``,
   ``input_schema``), optional ``system`` and explicit request controls, which may
   not set a protected field under any spelling, nor another API's structured-output
   field (Messages' own is ``output_config.format``).

A schema transformed before sending (the seed: "When Anthropic's structured-output SDK
helper transforms a schema, retain both original and actually-sent schema") is
described by an :class:`AnthropicSentSchema`: the original (what the host validates
locally; the transform may have dropped constraints) and the sent schema, for a client
tool's ``input_schema`` or for ``output_config.format.schema``. The builder checks
that each record's ``sent`` is exactly what the request carries for its target, so
the pair the host keeps describes this request; it adds nothing to the body.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, Final, cast

from .._kinds import kind_ok
from .._request import check_request_controls
from .._stream import check_revision
from .._values import copy_caller_json, preview
from ..errors import ContinuationError, LimitExceeded, ResultBindingError
from ..results import ModelVisibleToolResult, bind_results
from ._tables import REVISIONS, ROLE_SERVER_TOOL_RESULT
from ._turn import AnthropicMessagesTurn, verified_snapshot

__all__ = [
    "build_anthropic_messages_continuation",
    "FORCED_RECOVERY_PREFIX",
    "AnthropicSentSchema",
    "MAX_SENT_SCHEMAS",
]

#: Records one ``sent_schemas`` collection may hold (one per tool and one for the
#: structured final format; the API allows far fewer tools).
MAX_SENT_SCHEMAS: Final = 10_000

#: Start of the model-visible text of a forced recovery result.
FORCED_RECOVERY_PREFIX: Final = "Tool call was not executed: "

_HISTORY_KEYS: Final = frozenset({"role", "content"})
#: History block types and the key that carries a tool use id.
_HISTORY_ID_KEYS: Final = {"tool_use": "id", "server_tool_use": "id", "tool_result": "tool_use_id"}

# One client call of the turn: (block index, call id, name, recovery reason or None).
_Client = tuple[int, str, str, str | None]


@dataclass(frozen=True, slots=True)
class AnthropicSentSchema:
    """A JSON Schema transformed before sending, with both versions kept.

    ``target`` is a client tool name (the schema is that tool's ``input_schema``) or
    ``"output_config.format"`` (the structured final format's ``schema``).
    ``original`` is the schema before the transform: the host validates tool input
    or the final answer against it locally, because a transform (such as the SDK's
    structured-output helper) may drop constraints the API does not support.
    ``sent`` is the transformed schema the request carries. Make one with
    :meth:`of`, which keeps independent JSON copies of both.
    """

    target: str
    original: dict[str, Any]
    sent: dict[str, Any]

    @classmethod
    def of(cls, target: str, original: Mapping[str, Any],
           sent: Mapping[str, Any]) -> AnthropicSentSchema:
        """A record holding JSON copies of ``original`` and ``sent``.

        Raises :class:`ContinuationError` unless ``target`` is a non-empty string and
        both schemas are JSON objects (:class:`LimitExceeded` past a copy bound).
        """
        name = _json_value(target, "target")
        if not kind_ok(name, "nonempty_str"):
            raise ContinuationError(
                f"target must be a non-empty string, got {preview(target)}", where="target"
            )
        copies = []
        for what, schema in (("original", original), ("sent", sent)):
            copied = _json_value(schema, what)
            if type(copied) is not dict:
                raise ContinuationError(f"{what} must be a JSON Schema object", where=what)
            copies.append(copied)
        return cls(name, copies[0], copies[1])


def _json_value(value: object, what: str) -> Any:
    """A bounded JSON copy of a caller value; a top-level tuple is read as a list."""
    return copy_caller_json(value, what, error=ContinuationError)


def _text_blocks(value: Any, what: str) -> Any:
    if type(value) is str:
        return value
    if type(value) is not list or not value:
        raise ContinuationError(
            f"{what} must be a string or a non-empty list of text blocks", where=what
        )
    for i, block in enumerate(value):
        if (
            type(block) is not dict
            or block.get("type") != "text"
            or type(block.get("text")) is not str
        ):
            raise ContinuationError(
                f"{what}[{i}] must be a text block with a string 'text'", where=f"{what}[{i}]"
            )
    return value


def _ends_with_server_tool_result(message: dict[str, Any], result_types: frozenset[str]) -> bool:
    content = message.get("content")
    if type(content) is not list or not content:
        return False
    last = content[-1]
    return type(last) is dict and last.get("type") in result_types


def _check_history(
    history: Any, *, capability: bool, result_types: frozenset[str], roles: frozenset[str]
) -> list[dict[str, Any]]:
    if type(history) is not list:
        raise ContinuationError("history must be a list of messages", where="history")
    if not history:
        raise ContinuationError(
            "history must not be empty: the turn answered some user message", where="history"
        )
    for i, message in enumerate(history):
        path = f"history[{i}]"
        if type(message) is not dict:
            raise ContinuationError(f"{path} must be an object", where=path)
        extra = [k for k in message if k not in _HISTORY_KEYS]
        if extra:
            raise ContinuationError(f"{path} has unknown key {preview(extra[0])}", where=path)
        role = message.get("role")
        if type(role) is not str or role not in roles:
            raise ContinuationError(f"{path}.role must be one of {sorted(roles)}", where=path)
        content = message.get("content")
        if role == "system":
            _text_blocks(content, f"{path}.content")
        elif type(content) is list:
            for j, block in enumerate(content):
                if type(block) is not dict or type(block.get("type")) is not str:
                    raise ContinuationError(
                        f"{path}.content[{j}] must be a typed block", where=f"{path}.content[{j}]"
                    )
        elif type(content) is not str:
            raise ContinuationError(
                f"{path}.content must be a string or a list of blocks", where=path
            )
    _check_system_positions(history, capability=capability, result_types=result_types)
    if history[0]["role"] != "user":
        raise ContinuationError("history[0] must be a user message", where="history[0]")
    last_non_system = next(m for m in reversed(history) if m["role"] != "system")
    # A system group at the end (already placed by the rules above, e.g. after an
    # assistant turn ending in a server-tool result) separates the replayed turn.
    if last_non_system["role"] != "user" and history[-1]["role"] != "system":
        raise ContinuationError(
            "history must end with a user message or a mid-conversation system group "
            "(an assistant prefill before a tool turn is not replayable by this builder)",
            where="history",
        )
    return history


def _check_system_positions(
    history: list[dict[str, Any]], *, capability: bool, result_types: frozenset[str]
) -> None:
    """The seed's positional rules for mid-conversation system messages."""
    for i, message in enumerate(history):
        if message["role"] != "system":
            continue
        where = f"history[{i}]"
        if capability is not True:
            raise ContinuationError(
                f"{where} has role 'system': mid-conversation system messages need an "
                "explicit mid_conversation_system_capability=True proof for the model",
                where=where,
            )
        prev = history[i - 1] if i > 0 else None
        if prev is None:
            raise ContinuationError(
                f"{where}: a system message must follow a user turn (use top-level system)",
                where=where,
            )
        if prev["role"] == "system":
            continue  # same group
        if prev["role"] == "assistant" and not _ends_with_server_tool_result(prev, result_types):
            raise ContinuationError(
                f"{where}: a system message may follow an assistant turn only when that "
                "turn ends in a server-tool result",
                where=where,
            )
        # Find the end of the group: what follows must be the end or an assistant turn.
        j = i
        while j < len(history) and history[j]["role"] == "system":
            j += 1
        if j < len(history) and history[j]["role"] != "assistant":
            raise ContinuationError(
                f"history[{j}]: after a system group only an assistant turn or the end may follow",
                where=f"history[{j}]",
            )


def _check_not_replayed(history: list[dict[str, Any]], turn_ids: set[str]) -> None:
    # The turn appended to its own history (a double append) would replay or answer
    # a call twice; the ids of one turn are unique, so any match is that mistake.
    for i, message in enumerate(history):
        content = message.get("content")
        if type(content) is not list:
            continue
        for j, block in enumerate(content):
            key = _HISTORY_ID_KEYS.get(block["type"])
            value = block.get(key) if key is not None else None
            if type(value) is str and value in turn_ids:
                raise ContinuationError(
                    f"history[{i}].content[{j}] already holds tool use id {preview(value)} of "
                    "this turn: the turn is replayed by the builder, not by the history",
                    where=f"history[{i}].content[{j}]",
                )


def _check_tools(tools: Any, client_names: Iterable[str]) -> list[dict[str, Any]]:
    if type(tools) is not list:
        raise ContinuationError("tools must be a list of tool definitions", where="tools")
    seen: set[str] = set()
    custom: set[str] = set()
    for i, tool in enumerate(tools):
        path = f"tools[{i}]"
        if type(tool) is not dict:
            raise ContinuationError(f"{path} must be an object", where=path)
        name = tool.get("name")
        if type(name) is not str or not name:
            raise ContinuationError(f"{path}.name must be a non-empty string", where=path)
        if name in seen:
            raise ContinuationError(f"{path}: duplicate tool name {preview(name)}", where=path)
        seen.add(name)
        ttype = tool.get("type")
        if ttype is None or ttype == "custom":
            schema = tool.get("input_schema")
            if type(schema) is not dict or schema.get("type") != "object":
                raise ContinuationError(
                    f"{path}.input_schema must be a JSON Schema object with type 'object'",
                    where=path,
                )
            if "description" in tool and type(tool["description"]) is not str:
                raise ContinuationError(f"{path}.description must be a string", where=path)
            custom.add(name)
        elif type(ttype) is not str:
            raise ContinuationError(f"{path}.type must be a string", where=path)
    for name in client_names:
        if name not in custom:
            raise ContinuationError(
                f"tools do not declare the client tool {preview(name)} used in this turn",
                where="tools",
            )
    return tools


def _check_sent_schemas(
    records: object,
    tools: list[dict[str, Any]],
    controls: dict[str, Any],
    final_format: str,
) -> None:
    """Each record's ``sent`` must be exactly what the request carries for its target."""
    if records is None:
        return
    if issubclass(type(records), tuple):  # type(), never isinstance(): see _bind
        records = list(tuple.__getitem__(cast(tuple[object, ...], records), slice(None)))
    if type(records) is not list:
        raise ContinuationError(
            f"sent_schemas must be a list or tuple of AnthropicSentSchema, got "
            f"{preview(records)}",
            where="sent_schemas",
        )
    if len(records) > MAX_SENT_SCHEMAS:
        raise LimitExceeded(
            f"sent_schemas has more than {MAX_SENT_SCHEMAS} records", where="sent_schemas"
        )
    by_name = {tool["name"]: tool for tool in tools}
    seen: set[str] = set()
    for i, record in enumerate(records):
        where = f"sent_schemas[{i}]"
        if type(record) is not AnthropicSentSchema:
            raise ContinuationError(
                f"{where} must be an AnthropicSentSchema, got {preview(record)}", where=where
            )
        # Re-copied: the record's dicts are the caller's to mutate after creation.
        target = _json_value(record.target, f"{where}.target")
        original = _json_value(record.original, f"{where}.original")
        sent = _json_value(record.sent, f"{where}.sent")
        if not kind_ok(target, "nonempty_str") or type(original) is not dict or (
            type(sent) is not dict
        ):
            raise ContinuationError(
                f"{where} must have a string target and two JSON Schema objects", where=where
            )
        if target in seen:
            raise ContinuationError(f"{where}: second record for {preview(target)}", where=where)
        seen.add(target)
        if target == final_format:
            config = controls.get(final_format.partition(".")[0])
            fmt = config.get(final_format.partition(".")[2]) if type(config) is dict else None
            carried = fmt.get("schema") if type(fmt) is dict else None
            place = f"request_controls.{final_format}.schema"
        else:
            tool = by_name.get(target)
            if tool is None or tool.get("type") not in (None, "custom"):
                raise ContinuationError(
                    f"{where}: target {preview(target)} is neither a declared client tool "
                    f"nor {final_format!r}",
                    where=where,
                )
            carried = tool.get("input_schema")
            place = f"tools[{preview(target)}].input_schema"
        if carried != sent:
            raise ContinuationError(
                f"{where}: the sent schema for {preview(target)} is not what the request "
                f"carries at {place}; the record must describe the schema actually sent",
                where=where,
            )


def _client_calls(snapshot: dict[str, Any]) -> list[_Client]:
    """The turn's client calls from its verified snapshot, in block order."""
    out: list[_Client] = []
    for key, width in (("calls", 4), ("recovery_calls", 6)):
        for i, entry in enumerate(snapshot[key]):
            where = f"turn.{key}[{i}]"
            if (
                type(entry) is not list
                or len(entry) != width
                or not kind_ok(entry[0], "nonempty_str")
                or not kind_ok(entry[1], "str")
                or not kind_ok(entry[2], "int")
                or (width == 6 and not kind_ok(entry[3], "str"))
            ):
                raise ContinuationError(f"{where} is not a parsed call", where=where)
            out.append((entry[2], entry[0], entry[1], entry[3] if width == 6 else None))
    out.sort(key=lambda c: c[0])
    if len({c[1] for c in out}) != len(out):
        raise ContinuationError("turn has duplicate call ids", where="turn")
    return out


def _bind(
    client: list[_Client], results: object
) -> dict[str, ModelVisibleToolResult]:
    """Bind results to the executable calls; one for a recovery call is rejected.

    Reads at most one value more than there are executable calls: more cannot bind.
    """
    executable = [c[1] for c in client if c[3] is None]
    recovery = {c[1] for c in client if c[3] is not None}
    # type(), never isinstance(): isinstance() believes (and runs) a ``__class__``
    # property of the caller's object.
    kind = type(results)
    if issubclass(kind, (str, bytes, bytearray)):
        raise ResultBindingError(
            f"results must be a collection of ModelVisibleToolResult, got {preview(results)}",
            where="results",
        )
    limit = len(executable) + 1
    supplied: list[Any] | dict[Any, Any]
    try:
        if issubclass(kind, Mapping):
            supplied = dict(islice(iter(cast(Mapping[Any, Any], results).items()), limit))
            values = list(supplied.values())
        else:
            supplied = values = list(islice(iter(results), limit))  # type: ignore[call-overload]
    except Exception as exc:
        raise ResultBindingError(
            f"reading results raised {type(exc).__name__}; results must be a plain collection",
            where="results",
        ) from exc
    for position, value in enumerate(values):
        if type(value) is ModelVisibleToolResult and value.call_id in recovery:
            raise ResultBindingError(
                f"result {position} is for recovery call {preview(value.call_id)}: its result "
                "is forced to is_error=true and must not be supplied",
                where=f"results[{position}]",
            )
    return bind_results(executable, supplied)


def build_anthropic_messages_continuation(
    turn: AnthropicMessagesTurn,
    results: Iterable[ModelVisibleToolResult] | Mapping[str, ModelVisibleToolResult],
    *,
    history: Sequence[Mapping[str, Any]],
    model: str,
    max_tokens: int,
    tools: Sequence[Mapping[str, Any]],
    system: str | Sequence[Mapping[str, Any]] | None = None,
    request_controls: Mapping[str, Any] | None = None,
    mid_conversation_system_capability: bool = False,
    user_text: str | None = None,
    sent_schemas: Sequence[AnthropicSentSchema] | None = None,
) -> dict[str, Any]:
    """Build the next Messages request body after a tool turn.

    ``results``: exactly one :class:`ModelVisibleToolResult` per EXECUTABLE call
    (``turn.calls``), as an iterable or a mapping from call id. Recovery calls get a
    forced ``is_error: true`` result; a result supplied for a recovery call is
    rejected (:class:`ResultBindingError`), so a host cannot report success for a
    call that must not have run. ``history`` and ``tools`` are lists (or tuples),
    ``system`` a string or a list of text blocks, ``request_controls`` a dict;
    each is copied within the bounds of :class:`~contracts.strict_json.JSONLimits`.
    ``sent_schemas``: one :class:`AnthropicSentSchema` per schema the caller
    transformed before sending (a client tool's ``input_schema`` or
    ``output_config.format.schema`` in ``request_controls``); each record's ``sent``
    must equal what the body carries for its target, at most one record per target.

    Returns a new JSON-compatible dict; no caller object is mutated or aliased, and
    the assistant content is the copy of ``turn.blocks`` that the digest check
    verified. Raises :class:`SnapshotMutated` if the turn changed after parsing,
    :class:`ResultBindingError` for missing/extra/duplicate/recovery results,
    :class:`LimitExceeded` past a copy bound, :class:`ContinuationError` for every
    other invalid input (a turn without client calls or with a stop reason that has
    no continuation, history shape or system-message placement, a history that
    already holds an id of this turn, undeclared client tool, a request control that
    spells a protected field or another API's structured-output field in any case or
    separator style, a ``sent_schemas`` record that does not describe the request).
    """
    if type(turn) is not AnthropicMessagesTurn:
        raise ContinuationError(
            f"turn must be an AnthropicMessagesTurn, got {preview(turn)}", where="turn"
        )
    snapshot = verified_snapshot(turn)
    tables = check_revision(snapshot["revision"], REVISIONS, "anthropic_messages")
    client = _client_calls(snapshot)
    if not client:
        raise ContinuationError(
            "turn has no client tool_use block; no tool results to send", where="turn"
        )
    stop_reason = snapshot["stop_reason"]
    if type(stop_reason) is not str or stop_reason not in tables.continuable_stop_reasons:
        raise ContinuationError(
            f"no tool-result continuation for stop_reason {preview(stop_reason)}", where="turn"
        )
    model_name = _json_value(model, "model")
    if not kind_ok(model_name, "nonempty_str"):
        raise ContinuationError(
            f"model must be a non-empty string, got {preview(model)}", where="model"
        )
    if not kind_ok(max_tokens, "int") or max_tokens < 1:
        raise ContinuationError(
            f"max_tokens must be a positive integer, got {preview(max_tokens)}", where="max_tokens"
        )
    if type(mid_conversation_system_capability) is not bool:
        raise ContinuationError(
            "mid_conversation_system_capability must be a bool",
            where="mid_conversation_system_capability",
        )
    text = None if user_text is None else _json_value(user_text, "user_text")
    if text is not None and not kind_ok(text, "nonempty_str"):
        raise ContinuationError(
            f"user_text must be a non-empty string or None, got {preview(user_text)}",
            where="user_text",
        )

    bound = _bind(client, results)
    result_types = frozenset(
        name for name, spec in tables.blocks.items() if spec.role == ROLE_SERVER_TOOL_RESULT
    )
    messages = _check_history(
        _json_value(history, "history"),
        capability=mid_conversation_system_capability,
        result_types=result_types,
        roles=tables.history_roles,
    )
    blocks = snapshot["blocks"]
    _check_not_replayed(
        messages, {b["id"] for b in blocks if type(b) is dict and type(b.get("id")) is str}
    )
    tool_defs = _check_tools(_json_value(tools, "tools"), [name for _, _, name, _ in client])
    body = check_request_controls(
        request_controls,
        tables.protected_request_fields,
        foreign=tables.foreign_structured_output_fields,
    )
    _check_sent_schemas(sent_schemas, tool_defs, body, tables.structured_output_field)
    if system is not None:
        body["system"] = _text_blocks(_json_value(system, "system"), "system")

    content: list[dict[str, Any]] = []
    for _, call_id, _, reason in client:
        if reason is None:
            result = bound[call_id]
            content.append(
                {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": result.output,
                    "is_error": result.is_error,
                }
            )
        else:
            content.append(
                {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": FORCED_RECOVERY_PREFIX + reason,
                    "is_error": True,
                }
            )
    if text is not None:
        content.append({"type": "text", "text": text})
    body["model"] = model_name
    body["max_tokens"] = max_tokens
    body["tools"] = tool_defs
    body["messages"] = [
        *messages,
        {"role": "assistant", "content": blocks},
        {"role": "user", "content": content},
    ]
    return body
