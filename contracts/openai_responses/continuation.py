"""OpenAI Responses tool-result continuations (stateful and stateless).

Both builders return a plain JSON-compatible ``POST /v1/responses`` body that sends one
``function_call_output`` per function call of a completed turn, associated by
``call_id`` (never the item ``id``). They:

* check the turn's snapshot digest first (:class:`SnapshotMutated` if the turn changed
  after parsing, nested changes included);
* bind results with :func:`contracts.results.bind_results` (exactly one
  :class:`ModelVisibleToolResult` per call; :class:`ResultBindingError` otherwise);
* resend ``instructions``, ``tools`` and caller request controls explicitly, and never
  let request controls set a protected field (the revision's
  ``protected_request_fields``) under any spelling (:class:`ContinuationError`);
* accept tools only in the native strict function shape (the revision's
  ``tool_fields``) and only if every function name observed in the turn is declared;
* copy everything they embed with :func:`contracts._values.copy_json`, so caller
  objects are never mutated or read through their own methods and the payload shares
  no object with them; add no field beyond the request body (no audit data).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from .._request import check_request_controls
from .._values import copy_caller_json, copy_json, preview
from ..errors import ContinuationError
from ..results import ModelVisibleToolResult, bind_results
from ._tables import REVISIONS, RevisionTables
from ._turn import OpenAIResponsesTurn

__all__ = [
    "build_openai_responses_continuation",
    "build_openai_responses_stateless_continuation",
]

#: Bounds of the strict-schema walk over a (copied) tool's ``parameters``.
MAX_SCHEMA_NODES: Final = 10_000
MAX_SCHEMA_DEPTH: Final = 64
_SCHEMA_CHILD_MAPS: Final = ("properties", "$defs", "definitions")
_SCHEMA_CHILD_LISTS: Final = ("anyOf", "allOf", "oneOf", "prefixItems")


def _require_turn(turn: object) -> tuple[OpenAIResponsesTurn, RevisionTables]:
    if type(turn) is not OpenAIResponsesTurn:
        raise ContinuationError(
            f"turn must be an OpenAIResponsesTurn, got {preview(turn)}", where="turn")
    # Digest first: nothing is copied from a turn that changed after parsing.
    turn.check_unchanged()
    tables = REVISIONS.get(turn.revision)
    if tables is None:
        raise ContinuationError(
            f"turn was parsed under revision {preview(turn.revision)}, which is not shipped",
            where="turn.revision")
    if not turn.calls:
        raise ContinuationError(
            "turn has no function calls; there is nothing to continue with results",
            where="turn.calls")
    return turn, tables


def _function_call_outputs(
    turn: OpenAIResponsesTurn,
    results: Iterable[ModelVisibleToolResult] | Mapping[str, ModelVisibleToolResult],
) -> list[dict[str, Any]]:
    bound = bind_results([call.call_id for call in turn.calls], results)
    outputs: list[dict[str, Any]] = []
    for call_id, result in bound.items():
        if result.is_error:
            raise ContinuationError(
                f"result for call {preview(call_id)} has is_error=True, but Responses "
                "function_call_output has no error flag; write the failure into the "
                "output text and pass is_error=False rather than send it as a success",
                where=f"results[{preview(call_id)}]")
        outputs.append(
            {"type": "function_call_output", "call_id": call_id, "output": result.output})
    return outputs


def _text(value: object, name: str, why: str = "") -> str:
    """A non-empty caller string, copied as an exact ``str`` within the JSON bounds."""
    if not issubclass(type(value), str):
        raise ContinuationError(f"{name} must be a non-empty string{why}, got {preview(value)}",
                                where=name)
    text: str = copy_json(value, what=name, error=ContinuationError, where=name)
    if not text:
        raise ContinuationError(f"{name} must be a non-empty string{why}", where=name)
    return text


def _json_list(value: object, name: str) -> list[Any]:
    """A JSON copy of a caller list or tuple (tuples are read as lists)."""
    copied: list[Any] = copy_caller_json(value, name, error=ContinuationError, list_only=True)
    return copied


def _controls(request_controls: object, tables: RevisionTables) -> dict[str, Any]:
    """The caller's request controls, copied, none of them a protected field."""
    if issubclass(type(request_controls), dict):
        # Copied first, so a key of a str subclass is rejected before anything calls
        # its methods (the shared check reads keys as they are).
        request_controls = copy_json(request_controls, what="request_controls",
                                     error=ContinuationError, where="request_controls")
    return check_request_controls(request_controls, tables.protected_request_fields,
                                  foreign=tables.foreign_structured_output_fields)


def _is_object_schema(node: Mapping[str, Any]) -> bool:
    node_type = node.get("type")
    if node_type == "object" or "properties" in node:
        return True
    return type(node_type) is list and "object" in node_type


def _check_strict_schema(parameters: Any, where: str) -> None:
    """Iteratively check OpenAI strict-mode object rules on a copied JSON Schema tree."""
    if type(parameters) is not dict or parameters.get("type") != "object":
        raise ContinuationError(f"{where} must be a JSON Schema with type 'object'",
                                where=where)
    stack: list[tuple[Any, str, int]] = [(parameters, where, 0)]
    seen = 0
    while stack:
        node, path, depth = stack.pop()
        seen += 1
        if seen > MAX_SCHEMA_NODES:
            raise ContinuationError(f"{where} has more than {MAX_SCHEMA_NODES} schema nodes",
                                    where=where)
        if depth > MAX_SCHEMA_DEPTH:
            raise ContinuationError(f"schema is nested deeper than {MAX_SCHEMA_DEPTH}",
                                    where=path)
        if type(node) is not dict:
            raise ContinuationError("schema node must be an object", where=path)
        if _is_object_schema(node):
            properties = node.get("properties", {})
            if type(properties) is not dict:
                raise ContinuationError("properties must be an object",
                                        where=f"{path}.properties")
            if node.get("additionalProperties") is not False:
                raise ContinuationError(
                    "additionalProperties must be false in a strict tool schema",
                    where=f"{path}.additionalProperties")
            required = node.get("required", [])
            if (type(required) is not list
                    or not all(type(name) is str for name in required)
                    or len(set(required)) != len(required)
                    or set(required) != set(properties)):
                raise ContinuationError(
                    "required must list every property exactly once in a strict tool schema",
                    where=f"{path}.required")
        for key in _SCHEMA_CHILD_MAPS:
            children = node.get(key)
            if children is None:
                continue
            if type(children) is not dict:
                raise ContinuationError(f"{key} must be an object", where=f"{path}.{key}")
            for name, child in children.items():
                stack.append((child, f"{path}.{key}.{preview(name, 40)[1:-1]}", depth + 1))
        for key in _SCHEMA_CHILD_LISTS:
            children = node.get(key)
            if children is None:
                continue
            if type(children) is not list:
                raise ContinuationError(f"{key} must be an array", where=f"{path}.{key}")
            for position, child in enumerate(children):
                stack.append((child, f"{path}.{key}[{position}]", depth + 1))
        items = node.get("items")
        if items is not None:
            stack.append((items, f"{path}.items", depth + 1))


def _require_tools(tools: object, turn: OpenAIResponsesTurn,
                   tables: RevisionTables) -> list[dict[str, Any]]:
    copied = _json_list(tools, "tools")
    names: set[str] = set()
    for position, tool in enumerate(copied):
        where = f"tools[{position}]"
        if type(tool) is not dict:
            raise ContinuationError(f"{where} must be an object, got {preview(tool)}",
                                    where=where)
        extra = sorted(key for key in tool if key not in tables.tool_fields)
        if extra:
            raise ContinuationError(
                f"{where} has fields outside the native strict function shape: "
                f"{[preview(key) for key in extra[:10]]}", where=where)
        if tool.get("type") != "function":
            raise ContinuationError(f"{where}.type must be 'function'", where=f"{where}.type")
        name = tool.get("name")
        if type(name) is not str or not name:
            raise ContinuationError(f"{where}.name must be a non-empty string, got "
                                    f"{preview(name)}", where=f"{where}.name")
        if name in names:
            raise ContinuationError(f"{where}.name {preview(name)} is declared twice",
                                    where=f"{where}.name")
        if tool.get("strict") is not True:
            raise ContinuationError(f"{where}.strict must be true", where=f"{where}.strict")
        description = tool.get("description")
        if description is not None and type(description) is not str:
            raise ContinuationError(f"{where}.description must be a string",
                                    where=f"{where}.description")
        _check_strict_schema(tool.get("parameters"), f"{where}.parameters")
        names.add(name)
    for call in turn.calls:
        if call.name not in names:
            raise ContinuationError(
                f"tools do not declare function {preview(call.name)} observed in the turn "
                f"(call {preview(call.call_id)})", where="tools")
    return copied


def _body(turn: OpenAIResponsesTurn, tables: RevisionTables, state: dict[str, Any], *,
          model: object, instructions: object, request_controls: object, tools: object,
          input_items: list[Any]) -> dict[str, Any]:
    """``{"model", <state>, "instructions", <request_controls...>, "tools", "input"}``."""
    payload: dict[str, Any] = {"model": _text(model, "model"), **state}
    payload["instructions"] = _text(
        instructions, "instructions",
        ": they do not inherit through previous_response_id and are resent explicitly "
        "on every turn")
    payload.update(_controls(request_controls, tables))
    payload["tools"] = _require_tools(tools, turn, tables)
    payload["input"] = input_items
    return payload


def build_openai_responses_continuation(
    turn: OpenAIResponsesTurn,
    results: Iterable[ModelVisibleToolResult] | Mapping[str, ModelVisibleToolResult],
    *,
    model: str,
    previous_response_was_stored: bool,
    store: bool,
    instructions: str,
    tools: Sequence[Mapping[str, Any]],
    request_controls: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build a stateful continuation that chains on ``previous_response_id``.

    ``previous_response_id`` is always ``turn.response_id`` (the parsed, digest-checked
    Response), never a caller string. ``previous_response_was_stored`` must be literally
    ``True``: the caller's local proof that the previous Response is retrievable by the
    server (it is not sent). ``store`` is the new Response's own storage choice, an
    explicit bool. Returns ``{"model", "previous_response_id", "store", "instructions",
    <request_controls...>, "tools", "input"}`` with one ``function_call_output`` per call
    in call order.

    Raises :class:`SnapshotMutated` (checked first), :class:`ResultBindingError`,
    :class:`LimitExceeded` (a copied value past the JSON bounds), or
    :class:`ContinuationError` for every other invalid input.
    """
    checked, tables = _require_turn(turn)
    if previous_response_was_stored is not True:
        raise ContinuationError(
            "previous_response_was_stored must be True: previous_response_id needs a "
            "previous Response the server can retrieve; use the stateless builder "
            "otherwise", where="previous_response_was_stored")
    if type(store) is not bool:
        raise ContinuationError(f"store must be an explicit bool, got {preview(store)}",
                                where="store")
    outputs = _function_call_outputs(checked, results)
    return _body(checked, tables, {"previous_response_id": checked.response_id, "store": store},
                 model=model, instructions=instructions, request_controls=request_controls,
                 tools=tools, input_items=outputs)


def _require_prior_input(prior_input_items: object) -> list[Any]:
    copied = _json_list(prior_input_items, "prior_input_items")
    if not copied:
        raise ContinuationError(
            "prior_input_items must not be empty: a stateless continuation replays the "
            "whole conversation, starting with the prior input", where="prior_input_items")
    for position, item in enumerate(copied):
        where = f"prior_input_items[{position}]"
        if type(item) is not dict:
            raise ContinuationError(f"{where} must be an input item object, got "
                                    f"{preview(item)}", where=where)
        item_type = item.get("type")
        if item_type is None and type(item.get("role")) is not str:
            raise ContinuationError(f"{where} must have a 'type' or a 'role'", where=where)
        if item_type is not None and type(item_type) is not str:
            raise ContinuationError(f"{where}.type must be a string", where=f"{where}.type")
    return copied


def build_openai_responses_stateless_continuation(
    turn: OpenAIResponsesTurn,
    results: Iterable[ModelVisibleToolResult] | Mapping[str, ModelVisibleToolResult],
    *,
    model: str,
    prior_input_items: Sequence[Mapping[str, Any]],
    instructions: str,
    tools: Sequence[Mapping[str, Any]],
    request_controls: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build a stateless (``store: false``, no ``previous_response_id``) continuation.

    ``input`` is: copies of ``prior_input_items`` (the canonical prior input), then every
    item of the turn's ``response.output`` in original order (reasoning and message
    items included, verbatim), then one ``function_call_output`` per call in call order.
    Reasoning items must carry ``encrypted_content`` (without it they cannot be replayed
    when nothing is stored). Returns ``{"model", "store": False, "instructions",
    <request_controls...>, "tools", "input"}``.

    Raises :class:`SnapshotMutated` (checked first), :class:`ResultBindingError`,
    :class:`LimitExceeded` (a copied value past the JSON bounds), or
    :class:`ContinuationError` for every other invalid input.
    """
    checked, tables = _require_turn(turn)
    outputs = _function_call_outputs(checked, results)
    prior = _require_prior_input(prior_input_items)
    replayed: list[Any] = copy_json(checked.output, what="turn.output",
                                    error=ContinuationError, where="turn.output")
    for position, item in enumerate(replayed):
        if (type(item) is dict and item.get("type") == "reasoning"
                and type(item.get("encrypted_content")) is not str):
            raise ContinuationError(
                f"turn.output[{position}] is a reasoning item without encrypted_content; it "
                "cannot be replayed in a stateless (store: false) request",
                where=f"turn.output[{position}]")
    return _body(checked, tables, {"store": False},
                 model=model, instructions=instructions, request_controls=request_controls,
                 tools=tools, input_items=prior + replayed + outputs)
