"""One vocabulary for the JSON kinds that revision tables name for a field.

Every provider's ``_tables.py`` writes required and optional fields as
``{"field": kind}`` with a kind from :data:`KINDS`; the parser checks values with
:func:`kind_ok` and words its messages with :data:`KIND_WORDS`. Each revision's tables
are checked against this vocabulary when they are built (:func:`check_kinds`), so a
misspelled kind fails at import, not as a silent mismatch in production.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = ["KINDS", "KIND_WORDS", "INT64_MIN", "INT64_MAX", "kind_ok", "check_kinds"]

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
