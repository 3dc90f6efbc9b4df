"""The one rule for caller-supplied request fields, shared by every continuation builder.

A builder owns some request fields (the model, the history, the tools, the state
handle). ``request_controls`` may add other fields but never set an owned one, under
any spelling: a layer between the builder and the wire (an SDK, a gateway, a JSON
case converter) may normalize keys, so ``maxTokens``, ``max-tokens``, ``MAX_TOKENS``
and `` max_tokens`` are all the protected ``max_tokens``. Keys are compared by their
case-folded letters and digits only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, cast

from ._values import copy_json, preview
from .errors import ContinuationError
from .strict_json import JSONLimits

__all__ = ["field_key", "protected_keys", "check_request_controls", "MAX_CONTROL_KEYS"]

#: Keys one ``request_controls`` mapping may carry.
MAX_CONTROL_KEYS: Final = 1_000
#: Characters of one ``request_controls`` key.
MAX_CONTROL_KEY_CHARS: Final = 256


def field_key(name: str) -> str:
    """``name`` reduced to its case-folded letters and digits (``Previous-Response_ID``
    -> ``previousresponseid``): the identity under which protected fields are compared."""
    return "".join(ch for ch in name.casefold() if ch.isalnum())


def protected_keys(fields: Iterable[str]) -> dict[str, str]:
    """Map each protected field's :func:`field_key` to the field's own spelling."""
    return {field_key(name): name for name in fields}


def check_request_controls(
    request_controls: object,
    protected: Iterable[str],
    *,
    what: str = "request_controls",
    limits: JSONLimits | None = None,
) -> dict[str, Any]:
    """Return a JSON copy of ``request_controls`` (``None`` means none).

    Raises :class:`ContinuationError` unless it is a ``dict`` whose keys are non-empty
    strings (at most :data:`MAX_CONTROL_KEY_CHARS` characters, at most
    :data:`MAX_CONTROL_KEYS` of them) none of which is a protected field under any
    spelling; values are copied by :func:`~contracts._values.copy_json` (its errors
    are :class:`ContinuationError` or :class:`~contracts.errors.LimitExceeded`).
    """
    if request_controls is None:
        return {}
    if not issubclass(type(request_controls), dict):
        raise ContinuationError(
            f"{what} must be a dict or None, got {preview(request_controls)}", where=what
        )
    controls = cast(dict[object, Any], request_controls)
    if dict.__len__(controls) > MAX_CONTROL_KEYS:
        raise ContinuationError(f"{what} has more than {MAX_CONTROL_KEYS} keys", where=what)
    owned = protected_keys(protected)
    for key in dict.keys(controls):
        if not issubclass(type(key), str) or not str.__len__(cast(str, key)):
            raise ContinuationError(
                f"{what} keys must be non-empty strings, got {preview(key)}", where=what
            )
        key = str.__str__(cast(str, key))
        if len(key) > MAX_CONTROL_KEY_CHARS:
            raise ContinuationError(
                f"{what} key {preview(key)} is over {MAX_CONTROL_KEY_CHARS} characters",
                where=what,
            )
        field = owned.get(field_key(key))
        if field is not None:
            variant = "" if key == field else f" (a spelling of {field!r})"
            raise ContinuationError(
                f"{what} may not set protected field {preview(key)}{variant}",
                where=f"{what}[{preview(key)}]",
            )
    copied = copy_json(request_controls, what=what, error=ContinuationError, limits=limits)
    if not isinstance(copied, dict):  # pragma: no cover - a dict copies to a dict
        raise ContinuationError(f"{what} must be a dict", where=what)
    return copied
