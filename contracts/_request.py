"""The one rule for caller-supplied request fields, shared by every continuation builder.

A builder owns some request fields (the model, the history, the tools, the state
handle). ``request_controls`` may add other fields but never set an owned one, under
any spelling: a layer between the builder and the wire (an SDK, a gateway, a JSON
case converter) may normalize keys, so ``maxTokens``, ``max-tokens``, ``MAX_TOKENS``
and `` max_tokens`` are all the protected ``max_tokens``. Keys are compared by their
case-folded letters and digits only.

The same rule, with the same spelling-blind comparison, keeps out *foreign* fields:
another API's field for something this provider spells differently (the seed: each
provider puts the structured final format in its own field -- Responses
``text.format``, Anthropic ``output_config.format``, Gemini ``response_format`` --
and Chat Completions' ``response_format`` or one provider's field must not be copied
to all three). A foreign field is rejected with the reason its table gives.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, cast

from ._values import copy_json, preview
from .errors import ContinuationError
from .strict_json import JSONLimits

__all__ = [
    "field_key",
    "protected_keys",
    "check_request_controls",
    "check_foreign_rows",
    "MAX_CONTROL_KEYS",
    "STRUCTURED_OUTPUT_FIELDS",
]

#: The top-level request field that carries the structured final format, per API
#: (seed: "OpenAI Responses puts final format in text.format; Anthropic puts it in
#: output_config.format; Gemini Interactions puts it in response_format"; Chat
#: Completions has ``response_format``). Each builder's table names its own field and
#: lists every other one as foreign.
STRUCTURED_OUTPUT_FIELDS: Final = {
    "openai_responses": "text",
    "anthropic_messages": "output_config",
    "gemini_interactions": "response_format",
    "openai_chat": "response_format",
}

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
    foreign: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Return a JSON copy of ``request_controls`` (``None`` means none).

    Raises :class:`ContinuationError` unless it is a ``dict`` whose keys are non-empty
    strings (at most :data:`MAX_CONTROL_KEY_CHARS` characters, at most
    :data:`MAX_CONTROL_KEYS` of them) none of which is a protected field under any
    spelling; values are copied by :func:`~contracts._values.copy_json` (its errors
    are :class:`ContinuationError` or :class:`~contracts.errors.LimitExceeded`).

    ``foreign`` maps a field of another API to the reason it has no place in this
    request (e.g. another provider's structured-output field); such a key is rejected
    under any spelling too, with that reason in the message.
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
    alien = {field_key(name): (name, why) for name, why in (foreign or {}).items()}
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
        other = alien.get(field_key(key))
        if other is not None:
            variant = "" if key == other[0] else f" (a spelling of {other[0]!r})"
            raise ContinuationError(
                f"{what} may not set {preview(key)}{variant}: {other[1]}",
                where=f"{what}[{preview(key)}]",
            )
    copied = copy_json(
        request_controls, what=what, error=ContinuationError, where=what, limits=limits
    )
    if type(copied) is not dict:  # pragma: no cover - a dict copies to a dict
        raise ContinuationError(f"{what} must be a dict", where=what)
    return copied


def check_foreign_rows(
    own: str, foreign: Mapping[str, str], protected: Iterable[str]
) -> str | None:
    """The problem with one table's structured-output rows, or ``None`` (import-time
    cross-check of a revision's tables; a problem is a table bug).

    ``own`` is the provider's structured-output field as a dotted path (``text.format``);
    ``foreign`` must list exactly every other API's top-level structured-output field
    (:data:`STRUCTURED_OUTPUT_FIELDS`), each with a non-empty reason, none of them a
    spelling of ``own``'s top-level field or of a protected field.
    """
    top = own.partition(".")[0]
    if top not in STRUCTURED_OUTPUT_FIELDS.values():
        return f"structured-output field {own!r} is no API's structured-output field"
    wanted = set(STRUCTURED_OUTPUT_FIELDS.values()) - {top}
    if set(foreign) != wanted:
        return f"foreign structured-output fields {sorted(foreign)} != {sorted(wanted)}"
    owned = protected_keys(protected)
    for name, why in foreign.items():
        if type(why) is not str or not why.strip():
            return f"foreign field {name!r} needs a reason"
        if field_key(name) in owned:
            return f"foreign field {name!r} is also a protected field"
    return None
