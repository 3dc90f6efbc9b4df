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
   not overwrite a protected field.

Re-exported by :mod:`contracts.anthropic_messages`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from .digest import check_digest
from .errors import ContinuationError, ContractError, ResultBindingError
from .results import ModelVisibleToolResult, bind_results

if TYPE_CHECKING:
    from .anthropic_messages import AnthropicMessagesTurn

__all__ = ["build_anthropic_messages_continuation", "FORCED_RECOVERY_PREFIX"]

#: Start of the model-visible text of a forced recovery result.
FORCED_RECOVERY_PREFIX: Final = "Tool call was not executed: "

_HISTORY_KEYS: Final = frozenset({"role", "content"})


def _copy(value: Any, what: str) -> Any:
    from .anthropic_messages import json_copy

    try:
        return json_copy(value, what, error=ContinuationError)
    except ContinuationError:
        raise
    except ContractError as exc:
        raise ContinuationError(exc.message) from exc


def _text_blocks(value: Any, what: str) -> Any:
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not value:
        raise ContinuationError(f"{what} must be a string or a non-empty list of text blocks")
    for i, block in enumerate(value):
        if (
            not isinstance(block, dict)
            or block.get("type") != "text"
            or not isinstance(block.get("text"), str)
        ):
            raise ContinuationError(f"{what}[{i}] must be a text block with a string 'text'")
    return _copy(value, what)


def _ends_with_server_tool_result(message: dict[str, Any], result_types: frozenset[str]) -> bool:
    content = message.get("content")
    if not isinstance(content, list) or not content:
        return False
    last = content[-1]
    return isinstance(last, dict) and last.get("type") in result_types


def _check_history(
    history: Any, *, capability: bool, result_types: frozenset[str], roles: frozenset[str]
) -> list[dict[str, Any]]:
    if isinstance(history, (str, bytes, dict)) or not isinstance(history, Sequence):
        raise ContinuationError("history must be a list of messages")
    if not history:
        raise ContinuationError("history must not be empty: the turn answered some user message")
    out: list[dict[str, Any]] = []
    for i, message in enumerate(history):
        path = f"history[{i}]"
        if not isinstance(message, dict):
            raise ContinuationError(f"{path} must be an object")
        extra = [k for k in message if k not in _HISTORY_KEYS]
        if extra:
            raise ContinuationError(f"{path} has unknown key {str(extra[0])!r}")
        role = message.get("role")
        if not isinstance(role, str) or role not in roles:
            raise ContinuationError(f"{path}.role must be one of {sorted(roles)}")
        content = message.get("content")
        if role == "system":
            _text_blocks(content, f"{path}.content")
        elif isinstance(content, list):
            for j, block in enumerate(content):
                if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                    raise ContinuationError(f"{path}.content[{j}] must be a typed block")
        elif not isinstance(content, str):
            raise ContinuationError(f"{path}.content must be a string or a list of blocks")
        out.append(message)
    # Positional rules for mid-conversation system messages.
    for i, message in enumerate(out):
        if message["role"] != "system":
            continue
        if capability is not True:
            raise ContinuationError(
                f"history[{i}] has role 'system': mid-conversation system messages need an "
                "explicit mid_conversation_system_capability=True proof for the model"
            )
        prev = out[i - 1] if i > 0 else None
        if prev is None:
            raise ContinuationError(
                f"history[{i}]: a system message must follow a user turn (use top-level system)"
            )
        if prev["role"] == "system":
            continue  # same group
        if prev["role"] == "assistant" and not _ends_with_server_tool_result(prev, result_types):
            raise ContinuationError(
                f"history[{i}]: a system message may follow an assistant turn only when that "
                "turn ends in a server-tool result"
            )
        # Find the end of the group: what follows must be the end or an assistant turn.
        j = i
        while j < len(out) and out[j]["role"] == "system":
            j += 1
        if j < len(out) and out[j]["role"] != "assistant":
            raise ContinuationError(
                f"history[{j}]: after a system group only an assistant turn or the end may follow"
            )
    if out[0]["role"] != "user":
        raise ContinuationError("history[0] must be a user message")
    last_non_system = next(m for m in reversed(out) if m["role"] != "system")
    # A system group at the end (already placed by the rules above, e.g. after an
    # assistant turn ending in a server-tool result) separates the replayed turn.
    if last_non_system["role"] != "user" and out[-1]["role"] != "system":
        raise ContinuationError(
            "history must end with a user message or a mid-conversation system group "
            "(an assistant prefill before a tool turn is not replayable by this builder)"
        )
    return [_copy(m, f"history[{i}]") for i, m in enumerate(out)]


#: History block types and the key that carries a tool use id.
_HISTORY_ID_KEYS: Final = {"tool_use": "id", "server_tool_use": "id", "tool_result": "tool_use_id"}


def _check_not_replayed(history: list[dict[str, Any]], turn_ids: set[str]) -> None:
    # The turn appended to its own history (a double append) would replay or answer
    # a call twice; the ids of one turn are unique, so any match is that mistake.
    for i, message in enumerate(history):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            btype = block.get("type") if isinstance(block, dict) else None
            key = _HISTORY_ID_KEYS.get(btype) if isinstance(btype, str) else None
            value = block.get(key) if key is not None else None
            if isinstance(value, str) and value in turn_ids:
                raise ContinuationError(
                    f"history[{i}].content[{j}] already holds tool use id {value[:64]!r} of "
                    "this turn: the turn is replayed by the builder, not by the history"
                )


def _check_tools(
    tools: Any, client_names: Iterable[str]
) -> list[dict[str, Any]]:
    if isinstance(tools, (str, bytes, dict)) or not isinstance(tools, Sequence):
        raise ContinuationError("tools must be a list of tool definitions")
    seen: set[str] = set()
    custom: set[str] = set()
    for i, tool in enumerate(tools):
        path = f"tools[{i}]"
        if not isinstance(tool, dict):
            raise ContinuationError(f"{path} must be an object")
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise ContinuationError(f"{path}.name must be a non-empty string")
        if name in seen:
            raise ContinuationError(f"{path}: duplicate tool name {name!r}")
        seen.add(name)
        ttype = tool.get("type")
        if ttype is None or ttype == "custom":
            schema = tool.get("input_schema")
            if not isinstance(schema, dict) or schema.get("type") != "object":
                raise ContinuationError(
                    f"{path}.input_schema must be a JSON Schema object with type 'object'"
                )
            if "description" in tool and not isinstance(tool["description"], str):
                raise ContinuationError(f"{path}.description must be a string")
            custom.add(name)
        elif not isinstance(ttype, str):
            raise ContinuationError(f"{path}.type must be a string")
    for name in client_names:
        if name not in custom:
            raise ContinuationError(
                f"tools do not declare the client tool {name!r} used in this turn"
            )
    return [_copy(t, f"tools[{i}]") for i, t in enumerate(tools)]


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
) -> dict[str, Any]:
    """Build the next Messages request body after a tool turn.

    ``results``: exactly one :class:`ModelVisibleToolResult` per EXECUTABLE call
    (``turn.calls``). Recovery calls get a forced ``is_error: true`` result; a
    result supplied for a recovery call is rejected (:class:`ResultBindingError`),
    so a host cannot report success for a call that must not have run.

    Returns a new JSON-compatible dict; no caller object is mutated or aliased.
    Raises :class:`SnapshotMutated` if the turn changed after parsing,
    :class:`ResultBindingError` for missing/extra/duplicate/recovery results,
    :class:`ContinuationError` for every other invalid input (a turn without
    client calls or with a stop reason that has no continuation, history shape or
    system-message placement, a history that already holds an id of this turn,
    undeclared client tool, protected request control or a case/space variant).
    """
    from .anthropic_messages import (
        REVISIONS,
        ROLE_SERVER_TOOL_RESULT,
        AnthropicMessagesTurn,
    )

    if not isinstance(turn, AnthropicMessagesTurn):
        raise ContinuationError("turn must be an AnthropicMessagesTurn")
    check_digest(turn.snapshot(), turn.digest, what="anthropic messages turn")
    tables = REVISIONS[turn.revision]
    client = sorted(
        [(c.index, c.call_id, c.name, None) for c in turn.calls]
        + [(c.index, c.call_id, c.name, c.reason) for c in turn.recovery_calls]
    )
    if not client:
        raise ContinuationError("turn has no client tool_use block; no tool results to send")
    if turn.stop_reason not in tables.continuable_stop_reasons:
        raise ContinuationError(
            f"no tool-result continuation for stop_reason {turn.stop_reason[:64]!r}"
        )
    if not isinstance(model, str) or not model:
        raise ContinuationError("model must be a non-empty string")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ContinuationError("max_tokens must be a positive integer")
    if not isinstance(mid_conversation_system_capability, bool):
        raise ContinuationError("mid_conversation_system_capability must be a bool")
    if user_text is not None and (not isinstance(user_text, str) or not user_text):
        raise ContinuationError("user_text must be a non-empty string or None")

    # Results: executable calls only; recovery calls are answered by the builder.
    if isinstance(results, Mapping):
        items: list[Any] = list(results.values())
        keys = list(results.keys())
    elif isinstance(results, (str, bytes)) or not isinstance(results, Iterable):
        raise ResultBindingError("results must be a collection of ModelVisibleToolResult")
    else:
        items = list(results)
        keys = []
    recovery_ids = {c.call_id for c in turn.recovery_calls}
    for position, value in enumerate(items):
        if isinstance(value, ModelVisibleToolResult) and value.call_id in recovery_ids:
            raise ResultBindingError(
                f"result {position} is for recovery call {value.call_id!r}: its result is "
                "forced to is_error=true and must not be supplied"
            )
    bound = bind_results(
        [c.call_id for c in turn.calls],
        dict(zip(keys, items, strict=True)) if keys else items,
    )

    result_types = frozenset(
        name for name, spec in tables.blocks.items() if spec.role == ROLE_SERVER_TOOL_RESULT
    )
    messages = _check_history(
        history,
        capability=mid_conversation_system_capability,
        result_types=result_types,
        roles=tables.history_roles,
    )
    _check_not_replayed(
        messages, {b["id"] for b in turn.blocks if isinstance(b.get("id"), str)}
    )
    tool_defs = _check_tools(tools, [name for _, _, name, _ in client])
    body: dict[str, Any] = {}
    if request_controls is not None:
        if not isinstance(request_controls, Mapping):
            raise ContinuationError("request_controls must be a mapping")
        protected = {name.casefold() for name in tables.protected_request_fields}
        for key in request_controls:
            if not isinstance(key, str):
                raise ContinuationError("request_controls keys must be strings")
            # Case and surrounding-space variants are rejected too: a gateway that
            # normalizes names must not turn them into an overwrite.
            if key.strip().casefold() in protected:
                raise ContinuationError(
                    f"request_controls may not set protected field {key[:64]!r}"
                )
        body = _copy(dict(request_controls), "request_controls")
    if system is not None:
        body["system"] = _text_blocks(
            list(system) if isinstance(system, tuple) else system, "system"
        )

    assistant = {"role": "assistant", "content": [_copy(b, "turn.blocks") for b in turn.blocks]}
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
    if user_text is not None:
        content.append({"type": "text", "text": user_text})
    body["model"] = model
    body["max_tokens"] = max_tokens
    body["tools"] = tool_defs
    body["messages"] = [*messages, assistant, {"role": "user", "content": content}]
    return body
