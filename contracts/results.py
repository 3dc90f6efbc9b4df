"""Tool results and result-set binding: exactly one result per call.

A continuation builder accepts only :class:`ModelVisibleToolResult` values: the
projection of a tool result that may be shown to the model. Internal audit data
(who ran the tool, approvals, raw side-effect records) belongs in the host's own
ledger and has no field here, so no builder can leak it into a request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .errors import ResultBindingError

__all__ = ["ModelVisibleToolResult", "bind_results"]


@dataclass(frozen=True, slots=True)
class ModelVisibleToolResult:
    """A tool result that may be sent to the model.

    ``call_id`` is the provider's association key (OpenAI/Gemini ``call_id``,
    Anthropic ``tool_use_id``), treated as opaque text. ``output`` is the text the
    model sees. ``is_error`` marks a failed execution; providers that support it
    natively (Anthropic) receive it as such, never disguised as success.
    """

    call_id: str
    output: str
    is_error: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.call_id, str) or not self.call_id:
            raise ResultBindingError("result call_id must be a non-empty string")
        if not isinstance(self.output, str):
            raise ResultBindingError(
                f"result output for call {self.call_id!r} must be a string, "
                f"got {type(self.output).__name__}"
            )
        if not isinstance(self.is_error, bool):
            raise ResultBindingError(
                f"result is_error for call {self.call_id!r} must be a bool"
            )


def bind_results(
    call_ids: Sequence[str],
    results: Iterable[ModelVisibleToolResult] | Mapping[str, ModelVisibleToolResult],
) -> dict[str, ModelVisibleToolResult]:
    """Bind results to calls: exactly one result for every call id, no other.

    ``results`` is an iterable of :class:`ModelVisibleToolResult` or a mapping from
    call id to result (whose key must equal the result's own ``call_id``). Returns a
    dict in the order of ``call_ids``. Raises :class:`ResultBindingError` on a
    missing, extra or duplicate result, a value of another type, or duplicate call
    ids in the turn itself.
    """
    expected = list(call_ids)
    seen: set[str] = set()
    for call_id in expected:
        if call_id in seen:
            raise ResultBindingError(f"turn has duplicate call id {call_id!r}")
        seen.add(call_id)
    if isinstance(results, Mapping):
        items: list[ModelVisibleToolResult] = []
        for key, value in results.items():
            if not isinstance(value, ModelVisibleToolResult):
                raise ResultBindingError(
                    f"result for {key!r} is {type(value).__name__}, "
                    "not ModelVisibleToolResult"
                )
            if key != value.call_id:
                raise ResultBindingError(
                    f"result mapping key {key!r} differs from its call_id {value.call_id!r}"
                )
            items.append(value)
    elif isinstance(results, (str, bytes)):
        raise ResultBindingError("results must be a collection of ModelVisibleToolResult")
    else:
        items = []
        for position, value in enumerate(results):
            if not isinstance(value, ModelVisibleToolResult):
                raise ResultBindingError(
                    f"result {position} is {type(value).__name__}, not ModelVisibleToolResult"
                )
            items.append(value)
    bound: dict[str, ModelVisibleToolResult] = {}
    for item in items:
        if item.call_id in bound:
            raise ResultBindingError(f"duplicate result for call {item.call_id!r}")
        bound[item.call_id] = item
    extra = [c for c in bound if c not in seen]
    if extra:
        raise ResultBindingError(f"result for unknown call {extra[0]!r}")
    missing = [c for c in expected if c not in bound]
    if missing:
        raise ResultBindingError(f"missing result for call {missing[0]!r}")
    return {c: bound[c] for c in expected}
