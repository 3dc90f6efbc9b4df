"""Gemini Interactions v1 continuation requests: stateful and stateless.

Both builders read a turn only through :func:`~._turn.verified_snapshot` (digest
checked first, then a fresh plain-JSON copy), so nothing a caller changes after
parsing, or during a callback, reaches the request. Every caller value is type- and
size-checked and copied by :func:`~contracts._values.copy_json` before it is used;
``request_controls`` follows the shared protected-field rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from .._kinds import check_fields
from .._request import check_request_controls
from .._stream import check_revision
from .._values import copy_caller_json, copy_json, preview
from ..errors import ContinuationError, ContractError, ResultBindingError
from ..results import ModelVisibleToolResult, bind_results
from ._tables import REPLAY_RULES, REVISIONS, RevisionTables, role_of
from ._turn import (
    CONTRACT,
    AnyTurn,
    GeminiInteractionSnapshot,
    GeminiInteractionsTurn,
    verified_snapshot,
)

__all__ = [
    "build_gemini_interactions_continuation",
    "build_gemini_interactions_stateless_continuation",
]

_CALL_FIELDS: Final = {"call_id": "nonempty_str", "name": "nonempty_str"}


def _checked_turn(turn: object) -> tuple[dict[str, Any], RevisionTables]:
    """The verified snapshot of a parsed tool turn with calls, and its revision's tables."""
    if type(turn) is not GeminiInteractionsTurn and type(turn) is not GeminiInteractionSnapshot:
        raise ContinuationError(
            f"turn must be a parsed Gemini Interactions turn or snapshot, got {preview(turn)}",
            where="turn",
        )
    # Digest first: nothing is read from a turn that changed after parsing.
    data = verified_snapshot(turn)
    tables = check_revision(data.get("revision"), REVISIONS, "Gemini Interactions")
    calls = data.get("calls")
    if data.get("contract") != CONTRACT or type(data.get("steps")) is not list or (
        type(calls) is not list
    ):
        raise ContinuationError("turn was not produced by the parser", where="turn")
    for i, call in enumerate(calls):
        if type(call) is not dict:
            raise ContinuationError("turn was not produced by the parser", where=f"turn.calls[{i}]")
        check_fields(call, _CALL_FIELDS, f"turn.calls[{i}]", ContinuationError)
    status = data.get("status")
    if type(status) is not str or tables.statuses.get(status) != "tool_turn" or not calls:
        raise ContinuationError(
            f"interaction {preview(data.get('interaction_id'))} has status {preview(status)}; "
            "only a requires_action turn with calls can be continued",
            where="turn.status",
        )
    return data, tables


def _caller_text(value: object, what: str, *, nonempty: bool) -> str:
    if type(value) is not str or (nonempty and not value):
        words = "a non-empty string" if nonempty else "a string or None"
        raise ContinuationError(f"{what} must be {words}, got {preview(value)}", where=what)
    text: str = copy_json(value, what=what, error=ContinuationError, where=what)
    return text


def _caller_list(value: object, what: str) -> list[Any]:
    """A JSON copy of a caller's list or tuple (read through the builtin type, bounded)."""
    copied: list[Any] = copy_caller_json(value, what, error=ContinuationError, list_only=True)
    return copied


def _caller_object(value: object, what: str) -> dict[str, Any]:
    copied = copy_json(value, what=what, error=ContinuationError, where=what)
    if type(copied) is not dict:
        raise ContinuationError(f"{what} must be an object, got {preview(value)}", where=what)
    return copied


def _check_tools(tables: RevisionTables, tools: object, calls: list[dict[str, Any]]) -> list[Any]:
    copied = _caller_list(tools, "tools")
    names: set[str] = set()
    for i, tool in enumerate(copied):
        where = f"tools[{i}]"
        if type(tool) is not dict:
            raise ContinuationError(f"a tool must be an object, got {preview(tool)}", where=where)
        tool_type = tool.get("type")
        if tool_type == "function":
            if "strict" in tool:
                raise ContinuationError(
                    "Gemini function declarations have no 'strict' field", where=f"{where}.strict"
                )
            extra = sorted(set(tool) - set(tables.function_tool_fields))
            if extra:
                raise ContinuationError(
                    f"unknown function declaration field {preview(extra[0])}", where=where
                )
            for field, kind in tables.function_tool_fields.items():
                if field in tool or field in tables.function_tool_required:
                    check_fields(tool, {field: kind}, where, ContinuationError)
            name: str = tool["name"]
            if name in names:
                raise ContinuationError(
                    f"duplicate function declaration {preview(name)}", where=f"{where}.name"
                )
            names.add(name)
        elif type(tool_type) is not str or tool_type not in tables.hosted_tool_types:
            raise ContinuationError(
                f"tool type {preview(tool_type)} is not a pinned v1 tool type",
                where=f"{where}.type",
            )
    for call in calls:
        if call["name"] not in names:
            raise ContinuationError(
                f"call {preview(call['call_id'])} names function {preview(call['name'])}, "
                "which tools does not declare",
                where="tools",
            )
    return copied


def _check_response_format(tables: RevisionTables, response_format: object) -> dict[str, Any]:
    rf = _caller_object(response_format, "response_format")
    rf_type = rf.get("type")
    if type(rf_type) is str and rf_type in tables.response_format_media:
        return rf
    foreign = (
        tables.foreign_response_format_types.get(rf_type) if type(rf_type) is str else None
    )
    if foreign is not None:
        raise ContinuationError(
            f"response_format type {preview(rf_type)} is {foreign}, not Interactions': a "
            "JSON final is {'type': 'text', 'mime_type': 'application/json', 'schema': ...}",
            where="response_format.type",
        )
    if rf_type != "text":
        raise ContinuationError(
            f"response_format type {preview(rf_type)} is not a known discriminator",
            where="response_format.type",
        )
    extra = sorted(set(rf) - tables.text_format_fields)
    if extra:
        raise ContinuationError(
            f"unknown response_format field {preview(extra[0])}", where="response_format"
        )
    mime = rf.get("mime_type")
    if type(mime) is not str or mime not in tables.text_mime_types:
        raise ContinuationError(
            f"response_format mime_type {preview(mime)} is not a text mime type",
            where="response_format.mime_type",
        )
    if mime == "application/json":
        if type(rf.get("schema")) is not dict:
            raise ContinuationError(
                "response_format schema must be a JSON schema object",
                where="response_format.schema",
            )
    elif "schema" in rf:
        raise ContinuationError(
            "response_format schema requires mime_type application/json",
            where="response_format.schema",
        )
    return rf


def _base_request(
    tables: RevisionTables,
    calls: list[dict[str, Any]],
    *,
    model: object,
    tools: object,
    system_instruction: object,
    generation_config: object,
    response_format: object,
    request_controls: object,
) -> dict[str, Any]:
    request: dict[str, Any] = {"model": _caller_text(model, "model", nonempty=True)}
    if system_instruction is not None:
        request["system_instruction"] = _caller_text(
            system_instruction, "system_instruction", nonempty=False
        )
    request["tools"] = _check_tools(tables, tools, calls)
    if generation_config is not None:
        request["generation_config"] = _caller_object(generation_config, "generation_config")
    if response_format is not None:
        request["response_format"] = _check_response_format(tables, response_format)
    controls = check_request_controls(
        request_controls,
        tables.protected_request_fields,
        foreign=tables.foreign_structured_output_fields,
    )
    request.update(controls)
    return request


def _result_steps(calls: list[dict[str, Any]], results: object) -> list[dict[str, Any]]:
    try:
        bound = bind_results([c["call_id"] for c in calls], results)  # type: ignore[arg-type]
    except ContractError:
        raise
    except Exception as exc:
        # bind_results asks about ``results``' type (issubclass against the ABCs)
        # before it guards its reads; whatever that raises is a rejection too.
        raise ResultBindingError(
            f"reading the type of results raised {type(exc).__name__}", where="results"
        ) from exc
    names = {c["call_id"]: c["name"] for c in calls}
    steps: list[dict[str, Any]] = []
    for call_id, result in bound.items():
        where = f"results[{preview(call_id)}]"
        output = result.output
        if type(output) is not str:  # only a result changed after construction
            raise ContinuationError(f"result output must be a string, got {preview(output)}",
                                    where=where)
        step: dict[str, Any] = {
            "type": "function_result",
            "call_id": call_id,
            "name": names[call_id],
            "result": copy_json(output, what="result output", error=ContinuationError,
                                where=where),
        }
        if result.is_error is True:
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
    config are resent explicitly (``previous_interaction_id`` does not inherit them);
    ``tools`` is a list or tuple. The input is one ``function_result`` step per call.
    Raises ``SnapshotMutated`` (digest, checked first), ``ContinuationError``,
    ``ResultBindingError``, ``LimitExceeded`` (a caller value past the JSON bounds).
    """
    data, tables = _checked_turn(turn)
    if previous_interaction_was_stored is not True:
        raise ContinuationError(
            "previous_interaction_was_stored must be True: a stateful continuation needs "
            "proof that the prior interaction was stored",
            where="previous_interaction_was_stored",
        )
    if type(store) is not bool:
        raise ContinuationError(
            f"store must be an explicit bool for the new interaction, got {preview(store)}",
            where="store",
        )
    calls = data["calls"]
    request = _base_request(
        tables,
        calls,
        model=model,
        tools=tools,
        system_instruction=system_instruction,
        generation_config=generation_config,
        response_format=response_format,
        request_controls=request_controls,
    )
    request["previous_interaction_id"] = data["interaction_id"]
    request["store"] = store
    request["input"] = _result_steps(calls, results)
    return request


# -------------------------------------------------------------- replay proofs


def _replay_call(tables: RevisionTables, step: Mapping[str, Any], where: str) -> None:
    """A function_call: id/name/arguments were validated and parsed strictly."""


def _replay_result(tables: RevisionTables, step: Mapping[str, Any], where: str) -> None:
    call_id = step.get("call_id")
    if type(call_id) is not str or not call_id or "result" not in step:
        raise ContinuationError("function_result needs call_id and result", where=where)


def _replay_input(tables: RevisionTables, step: Mapping[str, Any], where: str) -> None:
    content = step.get("content")
    if content is not None:
        if type(content) is not list:
            raise ContinuationError(
                f"content must be a list, got {preview(content)}", where=f"{where}.content"
            )
        for j, item in enumerate(content):
            if type(item) is not dict or type(item.get("type")) is not str:
                raise ContinuationError(
                    "a content item must be a typed object", where=f"{where}.content[{j}]"
                )


def _replay_thought(tables: RevisionTables, step: Mapping[str, Any], where: str) -> None:
    signature = step.get("signature")
    if type(signature) is not str or not signature:
        raise ContinuationError("thought step without a signature cannot replay", where=where)
    summary = step.get("summary")
    if summary is None:
        return
    if type(summary) is not list:
        raise ContinuationError(
            f"summary must be a list, got {preview(summary)}", where=f"{where}.summary"
        )
    for j, item in enumerate(summary):
        if type(item) is not dict or type(item.get("type")) is not str:
            raise ContinuationError(
                "a summary item must be a typed object", where=f"{where}.summary[{j}]"
            )
        if item["type"] == "text" and type(item.get("text")) is not str:
            raise ContinuationError(
                "a text summary item needs a string text", where=f"{where}.summary[{j}].text"
            )


def _replay_text_output(tables: RevisionTables, step: Mapping[str, Any], where: str) -> None:
    content = step.get("content")
    if "error" in step or type(content) is not list:
        raise ContinuationError("model_output completeness is not provable", where=where)
    for j, item in enumerate(content):
        if (
            type(item) is not dict
            or item.get("type") != "text"
            or type(item.get("text")) is not str
            or set(item) - tables.text_content_fields
        ):
            raise ContinuationError(
                "only complete text model_output replays", where=f"{where}.content[{j}]"
            )


def _replay_opaque(tables: RevisionTables, step: Mapping[str, Any], where: str) -> None:
    raise ContinuationError(
        f"Google-hosted {step['type']} step completeness is not provable locally",
        where=where,
    )


#: replay rule -> its check; every rule of the tables has one (checked at import).
_REPLAY_CHECKS: Final = {
    "call": _replay_call,
    "result": _replay_result,
    "input": _replay_input,
    "thought": _replay_thought,
    "text_output": _replay_text_output,
    "opaque": _replay_opaque,
}
if set(_REPLAY_CHECKS) != REPLAY_RULES:
    raise RuntimeError("gemini_interactions: a replay rule has no check in continuation.py")


def _check_replayable(
    tables: RevisionTables, step: Mapping[str, Any], role: str, where: str, origin: str
) -> None:
    """Raise ContinuationError unless ``step`` is locally provable to replay losslessly.

    ``step["type"]`` is a step type of the revision (its ``role`` was looked up).
    """
    rule = tables.replay_rules[role]
    if origin == "stream" and rule != "call":
        raise ContinuationError(
            f"a streamed {step['type']} step cannot be reconstructed losslessly; "
            "continue from a create/GET snapshot or statefully",
            where=where,
        )
    _REPLAY_CHECKS[rule](tables, step, where)


def _history(
    tables: RevisionTables, prior_input_steps: object, current_ids: set[str]
) -> list[Any]:
    history = _caller_list(prior_input_steps, "prior_input_steps")
    if not history:
        raise ContinuationError("prior_input_steps must not be empty", where="prior_input_steps")
    for i, step in enumerate(history):
        where = f"prior_input_steps[{i}]"
        if type(step) is not dict:
            raise ContinuationError(f"a step must be an object, got {preview(step)}", where=where)
        role = role_of(tables, step.get("type"), where, shape=ContinuationError,
                       unknown=ContinuationError)
        if i == 0 and role != "input":
            raise ContinuationError("prior input must start with a user_input step", where=where)
        check_fields(step, tables.snapshot_step_fields[role], where, ContinuationError)
        _check_replayable(tables, step, role, where, "prior")
        # Neither a current call nor an answer to it may already sit in the history.
        key = {"client_call": "id", "client_result": "call_id"}.get(role)
        if key is not None and step[key] in current_ids:
            raise ContinuationError(
                f"prior input repeats call {preview(step[key])} of the current turn",
                where=f"{where}.{key}",
            )
    return history


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
    create-response snapshot the history is ``prior_input_steps`` (required, a list
    or tuple starting with ``user_input``); a GET snapshot already holds it, so
    passing ``prior_input_steps`` with it is a ``ContinuationError``. Streamed steps
    other than ``function_call``, thoughts without a signature, non-text model output
    and Google-hosted tool steps fail closed with ``ContinuationError``. Raises
    ``SnapshotMutated`` (digest, checked first), ``ResultBindingError`` and
    ``LimitExceeded`` too.
    """
    data, tables = _checked_turn(turn)
    origin = data.get("origin")
    deltas = data.get("step_deltas")
    turn_steps: list[Any] = data["steps"]
    for i, step in enumerate(turn_steps):
        where = f"turn.steps[{i}]"
        if type(step) is not dict:
            raise ContinuationError("turn was not produced by the parser", where=where)
        role = role_of(tables, step.get("type"), where, shape=ContinuationError,
                       unknown=ContinuationError)
        if origin == "stream" and role == "client_call" and (
            type(deltas) is not list or i >= len(deltas) or deltas[i]
        ):
            raise ContinuationError(
                "a streamed function_call whose deltas carried fields beyond 'arguments' is "
                "not provably reconstructable; continue statefully",
                where=where,
            )
        _check_replayable(tables, step, role, where, str(origin))
    calls = data["calls"]
    history: list[Any]
    if origin == "get":
        if prior_input_steps is not None:
            raise ContinuationError(
                "a GET snapshot already holds the input history; prior_input_steps must be None",
                where="prior_input_steps",
            )
        history = []
    else:
        if prior_input_steps is None:
            raise ContinuationError(
                f"a {preview(origin)} turn holds only model-generated steps; prior_input_steps "
                "(starting with user_input) is required",
                where="prior_input_steps",
            )
        history = _history(tables, prior_input_steps, {c["call_id"] for c in calls})
    request = _base_request(
        tables,
        calls,
        model=model,
        tools=tools,
        system_instruction=system_instruction,
        generation_config=generation_config,
        response_format=response_format,
        request_controls=request_controls,
    )
    request["store"] = False
    request["input"] = history + turn_steps + _result_steps(calls, results)
    return request
