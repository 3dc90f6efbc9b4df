"""Tool results and result-set binding: exactly one result per call.

A continuation builder accepts only :class:`ModelVisibleToolResult` values: the
projection of a tool result that may be shown to the model. Internal audit data
(who ran the tool, approvals, raw side-effect records) belongs in the host's own
ledger and has no field here, so no builder can leak it into a request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ._values import preview
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
        # str subclasses are stored as exact str (read through str's own method), so
        # an overridden __str__/__eq__/__hash__ cannot change what a builder sends.
        if not issubclass(type(self.call_id), str) or not str.__len__(self.call_id):
            raise ResultBindingError(
                f"result call_id must be a non-empty string, got {preview(self.call_id)}"
            )
        object.__setattr__(self, "call_id", str.__str__(self.call_id))
        if not issubclass(type(self.output), str):
            raise ResultBindingError(
                f"result output for call {preview(self.call_id)} must be a string, "
                f"got {preview(self.output)}"
            )
        object.__setattr__(self, "output", str.__str__(self.output))
        for name in ("call_id", "output"):
            text: str = getattr(self, name)
            if not text.isascii():
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    raise ResultBindingError(
                        f"result {name} for call {preview(self.call_id)} has a lone "
                        "surrogate code point (not sendable as UTF-8 JSON)"
                    ) from None
        if type(self.is_error) is not bool:
            raise ResultBindingError(
                f"result is_error for call {preview(self.call_id)} must be a bool"
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
    ids in the turn itself. It fails at the first duplicate or extra result and
    consumes at most one value more than there are calls, so an endless iterable
    costs no more than a finite one.
    """
    if type(call_ids) not in (list, tuple):
        raise ResultBindingError(f"call_ids must be a list or tuple, got {preview(call_ids)}")
    expected: list[str] = []
    seen: set[str] = set()
    for call_id in list(call_ids):
        if type(call_id) is not str or not call_id:
            raise ResultBindingError(f"call id {preview(call_id)} is not a non-empty string")
        if call_id in seen:
            raise ResultBindingError(f"turn has duplicate call id {preview(call_id)}")
        seen.add(call_id)
        expected.append(call_id)
    cls = type(results)
    is_mapping = issubclass(cls, Mapping)
    if issubclass(cls, (str, bytes, bytearray)) or not (is_mapping or issubclass(cls, Iterable)):
        raise ResultBindingError(
            f"results must be a collection of ModelVisibleToolResult, got {preview(results)}"
        )
    bound: dict[str, ModelVisibleToolResult] = {}
    try:
        pairs = iter(results.items()) if is_mapping else enumerate(results)  # type: ignore[union-attr]
        for position, (key, value) in enumerate(pairs):
            label = preview(key) if is_mapping else f"result {position}"
            if type(value) is not ModelVisibleToolResult:
                raise ResultBindingError(f"{label} is {preview(value)}, not ModelVisibleToolResult")
            if is_mapping and (type(key) is not str or key != value.call_id):
                raise ResultBindingError(
                    f"result mapping key {label} differs from its call_id {preview(value.call_id)}"
                )
            if value.call_id not in seen:
                raise ResultBindingError(f"result for unknown call {preview(value.call_id)}")
            if value.call_id in bound:
                raise ResultBindingError(f"duplicate result for call {preview(value.call_id)}")
            # Each accepted value is a distinct known call id, so at most
            # len(call_ids) + 1 values are ever read from an endless iterable.
            bound[value.call_id] = value
    except ResultBindingError:
        raise
    except Exception as exc:
        # A caller's iterable or mapping raised while being read: reject, never leak it.
        raise ResultBindingError(
            f"reading results raised {type(exc).__name__}; results must be a plain collection"
        ) from exc
    for call_id in expected:
        if call_id not in bound:
            raise ResultBindingError(f"missing result for call {preview(call_id)}")
    return {c: bound[c] for c in expected}
