"""OpenAI Responses tool-result continuations (stateful and stateless).

Both builders return a plain JSON-compatible ``POST /v1/responses`` body that sends one
``function_call_output`` per function call of a completed turn, associated by
``call_id`` (never the item ``id``). They:

* check the turn's snapshot digest first (:class:`SnapshotMutated` if the turn changed
  after parsing, nested changes included);
* bind results with :func:`contracts.results.bind_results` (exactly one
  :class:`ModelVisibleToolResult` per call; :class:`ResultBindingError` otherwise);
* resend ``instructions``, ``tools`` and caller request controls explicitly, and never
  let request controls set a protected field or a case/separator variant of one
  (:class:`ContinuationError`);
* accept tools only in the native strict function shape and only if every function
  name observed in the turn is declared;
* copy everything they embed (JSON round trip), so caller objects are never mutated
  and the payload shares no object with them; add no field beyond the request body
  (no audit data).

Re-exported from :mod:`contracts.openai_responses`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .errors import ContinuationError, ResultBindingError
from .results import ModelVisibleToolResult, bind_results

if TYPE_CHECKING:  # pragma: no cover
    from .openai_responses import OpenAIResponsesTurn

__all__ = [
    "PROTECTED_FIELDS",
    "STATELESS_PROTECTED_FIELDS",
    "TOOL_FIELDS",
    "build_openai_responses_continuation",
    "build_openai_responses_stateless_continuation",
]

# Request fields a builder owns; request_controls may not set them.
# ``conversation`` is a second server-side state handle: joining it would change which
# history the model sees. ``prompt`` references a stored prompt template, which carries
# its own instructions, tools and model beside the explicitly resent ones. Both are
# protected as well.
PROTECTED_FIELDS = frozenset(
    {"model", "previous_response_id", "input", "store", "instructions", "tools",
     "conversation", "prompt"}
)
STATELESS_PROTECTED_FIELDS = PROTECTED_FIELDS
# Keys a native strict function tool may carry (others, e.g. ``allowed_callers`` or
# ``defer_loading``, change who may call the tool or when it exists: fail closed).
TOOL_FIELDS = frozenset({"type", "name", "parameters", "strict", "description"})
# Bounds of the iterative strict-schema walk.
MAX_SCHEMA_NODES = 10_000
MAX_SCHEMA_DEPTH = 64
_SCHEMA_CHILD_MAPS = ("properties", "$defs", "definitions")
_SCHEMA_CHILD_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")


def _json_copy(value: Any, what: str) -> Any:
    """A deep copy made of plain JSON values; rejects anything JSON cannot carry as-is."""
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
        copy = json.loads(text)
    except RecursionError as exc:
        raise ContinuationError(f"{what} is nested too deeply") from exc
    except (TypeError, ValueError) as exc:
        raise ContinuationError(f"{what} is not JSON-compatible: {exc}") from exc
    try:
        same = bool(copy == value)
    except RecursionError as exc:  # pragma: no cover - dumps would have failed first
        raise ContinuationError(f"{what} is nested too deeply") from exc
    if not same:
        raise ContinuationError(
            f"{what} does not survive a JSON round trip unchanged (tuples, non-string "
            "keys or other non-JSON values)")
    return copy


def _require_turn(turn: Any) -> OpenAIResponsesTurn:
    from .openai_responses import OpenAIResponsesTurn

    if not isinstance(turn, OpenAIResponsesTurn):
        raise ContinuationError(
            f"turn must be an OpenAIResponsesTurn, got {type(turn).__name__}")
    # Digest first: nothing is copied from a turn that changed after parsing.
    turn.check_unchanged()
    if not turn.calls:
        raise ContinuationError(
            "turn has no function calls; there is nothing to continue with results")
    return turn


def _function_call_outputs(
    turn: OpenAIResponsesTurn,
    results: Iterable[ModelVisibleToolResult] | Mapping[str, ModelVisibleToolResult],
) -> list[dict[str, Any]]:
    if isinstance(results, (str, bytes, bytearray)) or not isinstance(
            results, (Mapping, Iterable)):
        raise ResultBindingError(
            "results must be a collection of ModelVisibleToolResult (one per function call)")
    bound = bind_results([call.call_id for call in turn.calls], results)
    outputs: list[dict[str, Any]] = []
    for call_id, result in bound.items():
        if result.is_error:
            raise ContinuationError(
                f"result for call {call_id!r} has is_error=True, but Responses "
                "function_call_output has no error flag; write the failure into the "
                "output text and pass is_error=False rather than send it as a success")
        outputs.append(
            {"type": "function_call_output", "call_id": call_id, "output": result.output})
    return outputs


def _require_model(model: Any) -> str:
    if not isinstance(model, str) or not model:
        raise ContinuationError("model must be a non-empty string")
    return model


def _require_instructions(instructions: Any) -> str:
    if not isinstance(instructions, str) or not instructions:
        raise ContinuationError(
            "instructions must be a non-empty string: they do not inherit through "
            "previous_response_id and are resent explicitly on every turn")
    return instructions


def _is_object_schema(node: Mapping[str, Any]) -> bool:
    node_type = node.get("type")
    if node_type == "object" or "properties" in node:
        return True
    return isinstance(node_type, list) and "object" in node_type


def _check_strict_schema(parameters: Any, where: str) -> None:
    """Iteratively check OpenAI strict-mode object rules on a JSON Schema tree."""
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        raise ContinuationError(f"{where} must be a JSON Schema with type 'object'")
    stack: list[tuple[Any, str, int]] = [(parameters, where, 0)]
    seen = 0
    while stack:
        node, path, depth = stack.pop()
        seen += 1
        if seen > MAX_SCHEMA_NODES:
            raise ContinuationError(f"{where} has more than {MAX_SCHEMA_NODES} schema nodes")
        if depth > MAX_SCHEMA_DEPTH:
            raise ContinuationError(f"{path} is nested deeper than {MAX_SCHEMA_DEPTH}")
        if not isinstance(node, dict):
            raise ContinuationError(f"{path} must be a schema object")
        if _is_object_schema(node):
            properties = node.get("properties", {})
            if not isinstance(properties, dict):
                raise ContinuationError(f"{path}.properties must be an object")
            if node.get("additionalProperties") is not False:
                raise ContinuationError(
                    f"{path}.additionalProperties must be false in a strict tool schema")
            required = node.get("required", [])
            if (not isinstance(required, list)
                    or not all(isinstance(name, str) for name in required)
                    or len(set(required)) != len(required)
                    or set(required) != set(properties)):
                raise ContinuationError(
                    f"{path}.required must list every property exactly once in a strict "
                    "tool schema")
        for key in _SCHEMA_CHILD_MAPS:
            children = node.get(key)
            if children is None:
                continue
            if not isinstance(children, dict):
                raise ContinuationError(f"{path}.{key} must be an object")
            for name, child in children.items():
                stack.append((child, f"{path}.{key}.{name}", depth + 1))
        for key in _SCHEMA_CHILD_LISTS:
            children = node.get(key)
            if children is None:
                continue
            if not isinstance(children, list):
                raise ContinuationError(f"{path}.{key} must be an array")
            for position, child in enumerate(children):
                stack.append((child, f"{path}.{key}[{position}]", depth + 1))
        items = node.get("items")
        if items is not None:
            stack.append((items, f"{path}.items", depth + 1))


def _require_tools(tools: Any, turn: OpenAIResponsesTurn) -> list[dict[str, Any]]:
    if isinstance(tools, (str, bytes, bytearray, Mapping)) or not isinstance(tools, Sequence):
        raise ContinuationError("tools must be a sequence of function tool objects")
    copied: list[dict[str, Any]] = []
    names: set[str] = set()
    for position, tool in enumerate(tools):
        where = f"tools[{position}]"
        if not isinstance(tool, dict):
            raise ContinuationError(f"{where} must be an object")
        extra = sorted(str(key) for key in tool if key not in TOOL_FIELDS)
        if extra:
            raise ContinuationError(
                f"{where} has fields outside the native strict function shape: {extra}")
        if tool.get("type") != "function":
            raise ContinuationError(f"{where}.type must be 'function'")
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise ContinuationError(f"{where}.name must be a non-empty string")
        if name in names:
            raise ContinuationError(f"{where}.name {name!r} is declared twice")
        if tool.get("strict") is not True:
            raise ContinuationError(f"{where}.strict must be true")
        description = tool.get("description")
        if description is not None and not isinstance(description, str):
            raise ContinuationError(f"{where}.description must be a string")
        _check_strict_schema(tool.get("parameters"), f"{where}.parameters")
        names.add(name)
        copied.append(_json_copy(tool, where))
    for call in turn.calls:
        if call.name not in names:
            raise ContinuationError(
                f"tools do not declare function {call.name!r} observed in the turn "
                f"(call {call.call_id!r})")
    return copied


def _spelling(key: str) -> str:
    """A key reduced to its case-folded letters and digits (``Previous-Response_ID`` ->
    ``previousresponseid``): a layer that normalizes keys could map a variant onto a
    protected field, so variants are protected too."""
    return "".join(ch for ch in key.casefold() if ch.isalnum())


def _require_controls(
    request_controls: Any, protected: frozenset[str]
) -> dict[str, Any]:
    if request_controls is None:
        return {}
    if not isinstance(request_controls, Mapping):
        raise ContinuationError("request_controls must be a mapping or None")
    controls: dict[str, Any] = {}
    protected_spellings = {_spelling(name): name for name in protected}
    for key, value in request_controls.items():
        if not isinstance(key, str) or not key:
            raise ContinuationError("request_controls keys must be non-empty strings")
        if key in protected:
            raise ContinuationError(
                f"request_controls may not set protected field {key!r}")
        variant_of = protected_spellings.get(_spelling(key))
        if variant_of is not None:
            raise ContinuationError(
                f"request_controls key {key[:80]!r} is a spelling variant of protected "
                f"field {variant_of!r}")
        controls[key] = _json_copy(value, f"request_controls[{key!r}]")
    return controls


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

    Raises :class:`SnapshotMutated` (checked first), :class:`ResultBindingError`, or
    :class:`ContinuationError` for every other invalid input.
    """
    checked = _require_turn(turn)
    if previous_response_was_stored is not True:
        raise ContinuationError(
            "previous_response_was_stored must be True: previous_response_id needs a "
            "previous Response the server can retrieve; use the stateless builder "
            "otherwise")
    if not isinstance(store, bool):
        raise ContinuationError("store must be an explicit bool")
    outputs = _function_call_outputs(checked, results)
    payload: dict[str, Any] = {
        "model": _require_model(model),
        "previous_response_id": checked.response_id,
        "store": store,
        "instructions": _require_instructions(instructions),
    }
    payload.update(_require_controls(request_controls, PROTECTED_FIELDS))
    payload["tools"] = _require_tools(tools, checked)
    payload["input"] = outputs
    return payload


def _require_prior_input(prior_input_items: Any) -> list[Any]:
    if (isinstance(prior_input_items, (str, bytes, bytearray, Mapping))
            or not isinstance(prior_input_items, Sequence)):
        raise ContinuationError("prior_input_items must be a sequence of input items")
    if not prior_input_items:
        raise ContinuationError(
            "prior_input_items must not be empty: a stateless continuation replays the "
            "whole conversation, starting with the prior input")
    copied: list[Any] = []
    for position, item in enumerate(prior_input_items):
        where = f"prior_input_items[{position}]"
        if not isinstance(item, dict):
            raise ContinuationError(f"{where} must be an input item object")
        item_type = item.get("type")
        if item_type is None and not isinstance(item.get("role"), str):
            raise ContinuationError(f"{where} must have a 'type' or a 'role'")
        if item_type is not None and not isinstance(item_type, str):
            raise ContinuationError(f"{where}.type must be a string")
        copied.append(_json_copy(item, where))
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

    Raises :class:`SnapshotMutated` (checked first), :class:`ResultBindingError`, or
    :class:`ContinuationError` for every other invalid input.
    """
    checked = _require_turn(turn)
    outputs = _function_call_outputs(checked, results)
    prior = _require_prior_input(prior_input_items)
    replayed: list[Any] = []
    for position, item in enumerate(checked.output):
        where = f"turn.output[{position}]"
        if (isinstance(item, dict) and item.get("type") == "reasoning"
                and not isinstance(item.get("encrypted_content"), str)):
            raise ContinuationError(
                f"{where} is a reasoning item without encrypted_content; it cannot be "
                "replayed in a stateless (store: false) request")
        replayed.append(_json_copy(item, where))
    payload: dict[str, Any] = {
        "model": _require_model(model),
        "store": False,
        "instructions": _require_instructions(instructions),
    }
    payload.update(_require_controls(request_controls, STATELESS_PROTECTED_FIELDS))
    payload["tools"] = _require_tools(tools, checked)
    payload["input"] = prior + replayed + outputs
    return payload
