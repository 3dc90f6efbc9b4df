"""Tool-call argument texts a strict reader must refuse, for every contract's mutators.

The seed's shared invariant 2: "Arguments must be a JSON object; duplicate keys,
NaN/Infinity, non-UTF-8 text, overly deep, or oversized values fail." Every contract
streams arguments as *text* (Chat ``function.arguments``, Responses argument deltas,
Anthropic ``partial_json``, Gemini ``arguments_delta.arguments``), so a hostile case is
a string: ``NaN`` is the three letters, a duplicate key is written twice, a lone
surrogate is the six characters ``\\ud800``. Each draw says which case it is (for
``hypothesis.event``) and which strict-JSON class refuses it, written down from
``docs/strict_json.md`` (never read from the parser): ``None`` for text that is valid
JSON but not an object.

Most cases are what ``json.loads`` accepts and a strict reader does not (the ones a
naive accumulator executes): non-object values, ``NaN``/``Infinity``, duplicate keys,
an overflowing number literal, a lone surrogate escape, a 1,001-digit integer, 513
levels of nesting. A BOM and broken text are rejected by ``json.loads`` too; they are
here because the contracts name them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hypothesis import strategies as st

__all__ = ["KINDS", "BadArguments", "bad_arguments", "make_bad_arguments",
           "random_bad_arguments", "splice_member"]

#: Argument problems, one mutation each in every contract (``<kind>_arguments``).
KINDS: tuple[str, ...] = ("non_object", "non_finite", "duplicate_key", "non_strict",
                          "invalid_json")

# The strict reader's bounds as docs/strict_json.md states them (JSONLimits defaults).
_MAX_NUMBER_CHARS = 1_000
_MAX_DEPTH = 512


@dataclass(frozen=True)
class BadArguments:
    """One hostile arguments text: ``case`` names it, ``strict_error`` is the class a
    strict reader raises (``None``: valid JSON that is not an object)."""

    kind: str
    case: str
    text: str
    strict_error: str | None


def splice_member(base: dict[str, Any], key: str, value_text: str) -> str:
    """``base`` as JSON text with one more member ``"key": <value_text>`` at the end
    (``value_text`` is written verbatim: it may be no valid JSON value on its own)."""
    head = json.dumps(base)
    member = json.dumps(key) + ": " + value_text
    return head[:-1] + (", " if base else "") + member + "}"


def _fresh_key(base: dict[str, Any], stem: str) -> str:
    key = stem
    while key in base:
        key += "_"
    return key


_NON_OBJECTS: tuple[str, ...] = ("[]", "[1, 2]", "null", "1", "-0.5", '"x"', '"{}"', "true",
                                 "false", '["a", {"b": 1}]')


class _Pick(Protocol):
    def __call__(self, options: Sequence[Any]) -> Any: ...


def make_bad_arguments(kind: str, base: dict[str, Any] | None, pick: _Pick,
                       pick_int: Callable[[int, int], int]) -> BadArguments:
    """The one builder behind :func:`bad_arguments` (hypothesis draws) and
    :func:`random_bad_arguments` (a ``random.Random``, for the fuzz-driven mutators):
    ``pick`` chooses one of a sequence, ``pick_int(a, b)`` an integer in ``[a, b]``."""
    obj = dict(base or {})
    if kind == "non_object":
        text = pick(_NON_OBJECTS)
        return BadArguments(kind, type(json.loads(text)).__name__, text, None)
    if kind == "non_finite":
        token = pick(("NaN", "Infinity", "-Infinity"))
        nested = pick((False, True))
        value = f"[{token}]" if nested else token
        text = splice_member(obj, _fresh_key(obj, "x"), value)
        return BadArguments(kind, token + (" nested" if nested else ""), text,
                            "StrictJSONError")
    if kind == "duplicate_key":
        case = pick(("top-level", "nested", "escaped"))
        if case == "nested":
            text = splice_member(obj, _fresh_key(obj, "x"), '{"b": 1, "b": 2}')
        else:
            if not obj:
                obj = {"a": 1}
            key = pick(sorted(obj))
            value = json.dumps(["another", obj[key]])  # never equal to the first value
            head = json.dumps(obj)
            if case == "escaped" and key and key.isascii():
                # the same key written with escapes: equal only after decoding
                written = "".join(f"\\u{ord(c):04x}" for c in key)
                text = head[:-1] + ', "' + written + '": ' + value + "}"
            else:
                case = "top-level"
                text = head[:-1] + ", " + json.dumps(key) + ": " + value + "}"
        return BadArguments(kind, case, text, "StrictJSONError")
    if kind == "non_strict":
        case = pick(("overflow", "lone_surrogate", "bom", "long_number", "deep"))
        key = _fresh_key(obj, "x")
        if case == "overflow":
            literal = pick(("1e400", "-1e400", "1.8e308"))
            return BadArguments(kind, case, splice_member(obj, key, literal),
                                "StrictJSONError")
        if case == "lone_surrogate":
            escape = pick(('"\\ud800"', '"a\\udc00"', '"\\ud83d x"'))
            return BadArguments(kind, case, splice_member(obj, key, escape),
                                "StrictJSONError")
        if case == "bom":
            return BadArguments(kind, case, "\ufeff" + json.dumps(obj), "StrictJSONError")
        if case == "long_number":
            digits = "9" * pick_int(_MAX_NUMBER_CHARS + 1, _MAX_NUMBER_CHARS + 50)
            return BadArguments(kind, case, splice_member(obj, key, digits), "LimitExceeded")
        depth = pick_int(_MAX_DEPTH, _MAX_DEPTH + 8)  # the object adds one level
        return BadArguments(kind, case, splice_member(obj, key, "[" * depth + "]" * depth),
                            "LimitExceeded")
    if kind == "invalid_json":
        text = json.dumps(obj)
        case = pick(("truncated", "unclosed", "single_quotes", "trailing"))
        if case == "truncated":
            text = text[:-1]
        elif case == "unclosed":
            text = splice_member(obj, _fresh_key(obj, "x"), '"open')[:-1]
        elif case == "single_quotes":
            text = "{'a': 1}"
        else:
            text = text + "}"
        return BadArguments(kind, case, text, "StrictJSONError")
    raise ValueError(f"unknown arguments kind {kind!r}")


@st.composite
def bad_arguments(draw: st.DrawFn, kind: str, base: dict[str, Any] | None = None,
                  ) -> BadArguments:
    """A hostile arguments text of ``kind`` (one of :data:`KINDS`), built around the
    call's own arguments object ``base`` where the case keeps an object."""
    return make_bad_arguments(kind, base, lambda options: draw(st.sampled_from(options)),
                              lambda a, b: draw(st.integers(a, b)))


def random_bad_arguments(kind: str, base: dict[str, Any] | None,
                         rng: random.Random) -> BadArguments:
    """:func:`bad_arguments` driven by ``rng`` (no hypothesis)."""
    return make_bad_arguments(kind, base, lambda options: options[rng.randrange(len(options))],
                              rng.randint)
