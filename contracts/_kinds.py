"""One vocabulary for the JSON kinds that revision tables name for a field.

Every provider's ``_tables.py`` writes required and optional fields as
``{"field": kind}`` with a kind from :data:`KINDS`; the parser checks values with
:func:`kind_ok` and words its messages with :data:`KIND_WORDS`. Each revision's tables
are checked against this vocabulary when they are built (:func:`check_kinds`), so a
misspelled kind fails at import, not as a silent mismatch in production.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ._values import preview
from .errors import ContractError, ProtocolViolation

__all__ = [
    "KINDS", "KIND_WORDS", "INT64_MIN", "INT64_MAX", "kind_ok", "check_kinds", "check_fields",
    "fields_ok",
]

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1

#: kind -> how a message says it ("must be ...").
KIND_WORDS: Final[Mapping[str, str]] = {
    "str": "a string",
    "nonempty_str": "a non-empty string",
    "int": "a 64-bit integer",
    "number": "a number",
    "bool": "a boolean",
    "object": "an object",
    "array": "an array",
    "any": "present",
}
KINDS: Final = frozenset(KIND_WORDS)


def kind_ok(value: object, kind: str) -> bool:
    """Whether ``value`` (an exact JSON type, as strict JSON produces) is of ``kind``.

    ``int`` is a 64-bit integer and never a ``bool``: the providers' integers are 64-bit
    at most, and a bound keeps every accepted integer cheap to compare and render.
    ``number`` is such an integer or a finite float. Unknown kinds are never ok.
    """
    cls = type(value)
    if kind == "str":
        return cls is str
    if kind == "nonempty_str":
        return cls is str and value != ""
    if kind == "int":
        return cls is int and INT64_MIN <= value <= INT64_MAX  # type: ignore[operator]
    if kind == "number":
        if cls is float:
            return value == value and value not in (float("inf"), float("-inf"))
        return cls is int and INT64_MIN <= value <= INT64_MAX  # type: ignore[operator]
    if kind == "bool":
        return cls is bool
    if kind == "object":
        return cls is dict
    if kind == "array":
        return cls is list
    return kind == "any"


def check_kinds(fields: Mapping[str, str], where: str) -> None:
    """Raise ``RuntimeError`` (at import: a table bug, not an input) for an unknown kind."""
    for name, kind in fields.items():
        if kind not in KINDS:
            raise RuntimeError(f"{where}: field {name!r} has unknown kind {kind!r}")


def check_fields(
    obj: Mapping[str, Any],
    fields: Mapping[str, str],
    where: str,
    error: type[ContractError] = ProtocolViolation,
    *,
    label: str = "",
) -> None:
    """Raise ``error`` (at ``where.<field>``) unless every field of ``fields`` has its kind.

    The message says ``<label><field> must be <kind>, got <preview>`` (or "it is
    absent"); fields are checked in table order, so the first bad one is reported.
    """
    for field, kind in fields.items():
        value = obj.get(field)
        if not kind_ok(value, kind):
            got = f"got {preview(value)}" if field in obj else "it is absent"
            raise error(
                f"{label}{field} must be {KIND_WORDS[kind]}, {got}", where=f"{where}.{field}"
            )


#: Kinds that are one exact type (checked inline by :func:`fields_ok`).
_EXACT_KINDS: Final[Mapping[str, type]] = {"str": str, "object": dict, "array": list,
                                            "bool": bool}


def fields_ok(obj: Mapping[str, Any], fields: Mapping[str, str]) -> bool:
    """Whether :func:`check_fields` would pass (no message formatted: the common case)."""
    for field, kind in fields.items():
        value = obj.get(field)
        exact = _EXACT_KINDS.get(kind)
        if exact is not None:
            if type(value) is not exact:
                return False
        elif not kind_ok(value, kind):
            return False
    return True
