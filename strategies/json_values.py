"""Hypothesis strategies: JSON values, their many serializations, and attacks on them.

* :func:`json_values`: JSON-compatible Python values (no NaN, no infinities, no lone
  surrogates; ``int`` and ``float`` kept apart).
* :func:`documents`: a value and one of its serializations, drawn with varied
  whitespace (only the four JSON whitespace characters), string escapes (raw,
  short escapes, ``\\uXXXX`` in either case, surrogate pairs for astral characters),
  key order, number spellings (``1E+2``, ``0.10e1``, ``-0``) and extra nesting.
  ``Document.value`` is what a correct parser must return, keys in text order.
* :func:`attacks`: a valid document with one attack spliced in, the error class a
  strict loader must raise, and the limits to load it with. Each ``Attack.kind``
  is one attack class (see :data:`ATTACK_KINDS`).
* :func:`mutated_documents`: valid documents damaged at the byte/character level
  (deletions, insertions of JSON tokens and bad bytes, duplications, truncation),
  for "nothing but ContractError escapes" properties.

This module models JSON on its own (RFC 8259); it never imports the loader's
helpers or tables, only the public ``JSONLimits`` to state limits. ``same`` (deep
equality with types) and ``limits_exceeded`` (an independent limit measurement) live
in :mod:`.json_model`, without hypothesis, and are re-exported here.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

from pcfuzz.contracts.errors import ContractError, LimitExceeded, StrictJSONError
from pcfuzz.contracts.strict_json import JSONLimits
from pcfuzz.strategies.json_model import depth_of, limits_exceeded, same

__all__ = [
    "ATTACK_KINDS",
    "Attack",
    "Document",
    "Mutated",
    "MUTATION_KINDS",
    "SMALL_LIMITS",
    "attacks",
    "documents",
    "json_values",
    "limits_exceeded",
    "mutated_documents",
    "same",
]

JSON_WHITESPACE = (" ", "\t", "\n", "\r")
# Characters that other grammars (Python's str.isspace, JavaScript, YAML) treat as
# white space but JSON does not.
NON_JSON_WHITESPACE = ("\u00a0", "\x0c", "\x0b", "\x85", "\u2028", "\u2029", "\u3000",
                       "\ufeff", "\u1680", "\u200b", "\x1c", "\x00")
SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f",
                 "\n": "\\n", "\r": "\\r", "\t": "\\t"}
BOMS = {
    "utf-8": b"\xef\xbb\xbf",
    "utf-16-le": b"\xff\xfe",
    "utf-16-be": b"\xfe\xff",
    "utf-32-le": b"\xff\xfe\x00\x00",
    "utf-32-be": b"\x00\x00\xfe\xff",
}
INVALID_UTF8 = {
    "truncated-2": b"\xc3",
    "truncated-3": b"\xe2\x82",
    "truncated-4": b"\xf0\x9f\x98",
    "overlong-2": b"\xc0\xaf",
    "overlong-3": b"\xe0\x80\xaf",
    "overlong-4": b"\xf0\x80\x80\xaf",
    "cesu-high": b"\xed\xa0\x80",
    "cesu-low": b"\xed\xbf\xbf",
    "cesu-pair": b"\xed\xa0\xbd\xed\xb8\x80",
    "continuation": b"\x80",
    "byte-ff": b"\xff",
    "byte-fe": b"\xfe",
    "above-10ffff": b"\xf4\x90\x80\x80",
    "five-byte": b"\xf8\x88\x80\x80\x80",
}
LONE_SURROGATE_ESCAPES = (
    "\\ud800", "\\uDBFF", "\\udc00", "\\uDFFF", "\\ud83d", "\\ude00",
    "\\ud83d\\u0041", "\\ud83d\\ud83d", "\\ude00\\ud83d", "\\ud83dx", "\\ud83d\\\\ude00",
    "\\ud83d\\n",
)
NON_FINITE_TOKENS = ("NaN", "Infinity", "-Infinity")
ATTACK_KINDS = (
    "duplicate_key", "non_finite_token", "overflow_number", "bom", "invalid_utf8",
    "lone_surrogate_escape", "lone_surrogate_code_point", "deep_nesting", "huge_number",
    "long_string", "too_many_items", "too_many_values", "too_large", "trailing_data",
    "non_json_whitespace", "empty", "control_character",
)
MUTATION_KINDS = ("delete", "insert_token", "insert_bytes", "duplicate", "replace", "truncate")

# Tight limits that small generated documents reach, so properties exercise every
# limit check (and the fast path's refusal to run) without megabyte inputs.
SMALL_LIMITS = JSONLimits(
    max_bytes=400,
    max_depth=5,
    max_string_chars=12,
    max_number_chars=12,
    max_container_items=6,
    max_values=30,
)


@dataclass(frozen=True)
class Document:
    """A JSON value and one serialization of it; ``value`` keeps keys in text order."""

    value: Any
    text: str


@dataclass(frozen=True)
class Attack:
    """A document carrying one attack of class ``kind``, the error class a strict
    loader must raise for it, and the limits to load it with (None: defaults)."""

    kind: str
    data: bytes | str
    error: type[ContractError]
    limits: JSONLimits | None = None


@dataclass(frozen=True)
class Mutated:
    """A damaged document: ``kind`` names the last mutation applied."""

    kind: str
    data: bytes | str


# --- values ------------------------------------------------------------------------

json_text = st.text(st.characters(codec="utf-8"), max_size=12)
# String content that needs no escaping, to write fragments by hand.
_plain_text = st.text(st.sampled_from("abz 09_-\u00e9\u4e2d\U0001f600"), max_size=4)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**80), max_value=10**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | json_text
)


def json_values(max_leaves: int = 30) -> st.SearchStrategy[Any]:
    """JSON values: None, bool, int, finite float, str, list and str-keyed dict."""
    return st.recursive(
        json_scalars,
        lambda children: st.lists(children, max_size=6)
        | st.dictionaries(json_text, children, max_size=6),
        max_leaves=max_leaves,
    )


# --- serialization -----------------------------------------------------------------


class _Slot:
    """A place in a value where an attack fragment is written verbatim."""

    def __init__(self, fragment: str) -> None:
        self.fragment = fragment


def _ws(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(("", "", "", " ", "\n", "  ", "\t", "\r\n", " \n\t\r ")))


def _number(draw: st.DrawFn, value: int | float) -> str:
    if isinstance(value, int):
        if value == 0 and draw(st.booleans()):
            return "-0"
        return str(value)
    literal = repr(value)
    style = draw(st.sampled_from(("repr", "upper", "shift", "zeros")))
    if style == "upper":
        return literal.replace("e", "E")
    if style == "zeros" and "." in literal:
        mantissa, _, exponent = literal.partition("e")
        return mantissa + "0" * draw(st.integers(1, 4)) + ("e" + exponent if exponent else "")
    if style == "shift":
        # The same decimal value with the point moved: parses to the same double.
        shift = draw(st.integers(-3, 3))
        digits = format(Decimal(literal).scaleb(-shift), "f")
        return f"{digits}{draw(st.sampled_from(('e', 'E')))}{'+' if shift >= 0 and draw(st.booleans()) else ''}{shift}"
    return literal


def _escape_char(char: str, style: int) -> str:
    code = ord(char)
    if style == 0 and char not in '"\\' and code >= 0x20:
        return char
    if style == 1 and char in SHORT_ESCAPES:
        return SHORT_ESCAPES[char]
    if char not in '"\\' and code >= 0x20 and style == 3:
        return char
    hex_format = "\\u{:04X}" if style == 2 else "\\u{:04x}"
    if code > 0xFFFF:
        code -= 0x10000
        return hex_format.format(0xD800 + (code >> 10)) + hex_format.format(0xDC00 + (code & 0x3FF))
    return hex_format.format(code)


def _string(draw: st.DrawFn, text: str) -> str:
    mode = draw(st.sampled_from(("raw", "raw", "ascii", "mixed")))
    if mode == "raw":
        styles = [0] * len(text)
    elif mode == "ascii":
        styles = [draw(st.sampled_from((1, 2)))] * len(text)
    else:
        styles = draw(st.lists(st.integers(0, 3), min_size=len(text), max_size=len(text)))
    # Characters that must be escaped fall through to an escape in every style.
    return '"' + "".join(_escape_char(c, s) for c, s in zip(text, styles, strict=True)) + '"'


def _serialize(draw: st.DrawFn, value: Any) -> tuple[Any, str]:
    """Serialize ``value``; return (the value a parser must produce, the text)."""
    if isinstance(value, _Slot):
        return None, value.fragment
    if value is None:
        return None, "null"
    if isinstance(value, bool):
        return value, "true" if value else "false"
    if isinstance(value, (int, float)):
        return value, _number(draw, value)
    if isinstance(value, str):
        return value, _string(draw, value)
    if isinstance(value, list):
        parts, out = [], []
        for item in value:
            parsed, text = _serialize(draw, item)
            out.append(parsed)
            parts.append(_ws(draw) + text + _ws(draw))
        return out, "[" + (",".join(parts) if parts else _ws(draw)) + "]"
    items = draw(st.permutations(list(value.items())))
    parts, obj = [], {}
    for key, item in items:
        parsed, text = _serialize(draw, item)
        obj[key] = parsed
        parts.append(_ws(draw) + _string(draw, key) + _ws(draw) + ":" + _ws(draw) + text + _ws(draw))
    return obj, "{" + (",".join(parts) if parts else _ws(draw)) + "}"


@st.composite
def documents(
    draw: st.DrawFn, values: st.SearchStrategy[Any] | None = None, *, deep: bool = True
) -> Document:
    """A value and a serialization of it (varied whitespace, escapes, key order,
    number spellings), sometimes wrapped in extra arrays/objects; with ``deep`` up to
    depth 512 (the loader's default limit), else a few levels."""
    value = draw(values if values is not None else json_values())
    room = 512 - depth_of(value)
    wrap = draw(st.sampled_from((0, 0, 0, 0, 1, 3, 40, room) if deep else (0, 0, 1, 3)))
    for _ in range(wrap):
        value = [value] if draw(st.booleans()) else {"k": value}
    parsed, text = _serialize(draw, value)
    return Document(parsed, _ws(draw) + text + _ws(draw))


# --- attacks -----------------------------------------------------------------------


def _with_slot(draw: st.DrawFn, value: Any, fragment: str) -> str:
    """Serialize ``value`` with ``fragment`` spliced in as one value somewhere."""
    value = copy.deepcopy(value)
    slot = _Slot(fragment)
    containers: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, dict)):
            containers.append(item)
            stack.extend(item.values() if isinstance(item, dict) else item)
    if not containers or draw(st.integers(0, 4)) == 0:
        target: Any = draw(st.sampled_from(([slot], {"k": slot}, slot)))
        if containers and target is not slot:
            # keep the original document beside the attack
            target = [value, slot] if isinstance(target, list) else {"orig": value, "attack": slot}
        value = target
    else:
        container = draw(st.sampled_from(containers))
        if isinstance(container, list):
            container.insert(draw(st.integers(0, len(container))), slot)
        else:
            key = "attack"
            while key in container:
                key += "_"
            container[key] = slot
    return _serialize(draw, value)[1]


def _two_spellings(draw: st.DrawFn, key: str) -> tuple[str, str]:
    first = _string(draw, key)
    for _ in range(8):
        second = _string(draw, key)
        if second != first:
            return first, second
    return first, first


@st.composite
def attacks(draw: st.DrawFn, kind: str | None = None) -> Attack:  # noqa: C901
    """A document carrying exactly one attack of class ``kind`` (drawn from
    :data:`ATTACK_KINDS` when None); one branch per attack class."""
    if kind is None:
        kind = draw(st.sampled_from(ATTACK_KINDS))
    elif kind not in ATTACK_KINDS:
        raise ValueError(f"unknown attack kind {kind!r}")
    base = draw(json_values(max_leaves=12))
    limits: JSONLimits | None = None
    error: type[ContractError] = StrictJSONError
    data: bytes | str

    if kind == "duplicate_key":
        key = draw(json_text)
        first, second = _two_spellings(draw, key)
        members = [f"{first}:{_serialize(draw, draw(json_scalars))[1]}",
                   f"{second}:{_serialize(draw, draw(json_scalars))[1]}"]
        other = draw(json_text.filter(lambda k: k != key))
        members.insert(draw(st.integers(0, 2)), f"{_string(draw, other)}:0")
        data = _with_slot(draw, base, "{" + ",".join(members) + "}")
    elif kind == "non_finite_token":
        data = _with_slot(draw, base, draw(st.sampled_from(NON_FINITE_TOKENS)))
    elif kind == "overflow_number":
        sign = draw(st.sampled_from(("", "-")))
        mantissa = draw(st.sampled_from(("1", "9.99", "1.7976931348623159", "2", "0.1", "1" * 30)))
        exponent = draw(st.integers(310, 100_000))
        data = _with_slot(draw, base, f"{sign}{mantissa}{draw(st.sampled_from(('e', 'E', 'e+')))}{exponent}")
    elif kind == "bom":
        text = draw(documents(st.just(base), deep=False)).text
        encoding = draw(st.sampled_from((*BOMS, "str")))
        data = "\ufeff" + text if encoding == "str" else BOMS[encoding] + text.encode(encoding)
    elif kind == "invalid_utf8":
        text = draw(documents(st.just(base), deep=False)).text
        cut = draw(st.integers(0, len(text)))
        bad = INVALID_UTF8[draw(st.sampled_from(sorted(INVALID_UTF8)))]
        data = text[:cut].encode() + bad + text[cut:].encode()
    elif kind == "lone_surrogate_escape":
        literal = '"' + draw(_plain_text) + draw(st.sampled_from(LONE_SURROGATE_ESCAPES)) + '"'
        data = _with_slot(draw, base, literal if draw(st.booleans()) else "{" + literal + ":1}")
        if draw(st.booleans()):
            data = data.encode()
    elif kind == "lone_surrogate_code_point":
        surrogate = chr(draw(st.integers(0xD800, 0xDFFF)))
        data = _with_slot(draw, base, '"' + surrogate + '"')
    elif kind == "deep_nesting":
        error = LimitExceeded
        levels = draw(st.integers(513, 3_000))
        opener = draw(st.sampled_from(("[", '{"a":', '[{"":')))
        closer = {"[": "]", '{"a":': "}", '[{"":': "}]"}[opener]
        body = opener * levels + "0" + closer * levels
        if draw(st.booleans()):
            body = body[: draw(st.integers(levels * len(opener), len(body)))]  # unclosed
        data = _with_slot(draw, base, body)
    elif kind == "huge_number":
        error = LimitExceeded
        digits = "".join(draw(st.lists(st.sampled_from("0123456789"), min_size=1, max_size=3)))
        digits = ("1" + digits * 6_000)[: draw(st.integers(1_001, 6_000))]
        form = draw(st.sampled_from(("int", "negative", "fraction", "exponent")))
        literal = {"int": digits, "negative": "-" + digits, "fraction": "0." + digits,
                   "exponent": "1e" + digits}[form]
        data = _with_slot(draw, base, literal)
    elif kind == "long_string":
        error = LimitExceeded
        limit = draw(st.integers(1, 20))
        limits = JSONLimits(max_string_chars=limit)
        long_text = draw(st.text(st.characters(codec="utf-8"),
                                 min_size=limit + 1, max_size=limit + 20))
        literal = _string(draw, long_text)
        data = _with_slot(draw, base, literal if draw(st.booleans()) else "{" + literal + ":1}")
    elif kind in ("too_many_items", "too_many_values"):
        error = LimitExceeded
        limit = draw(st.integers(1, 10))
        count = limit + 1 + draw(st.integers(0, 5))
        if kind == "too_many_items":
            limits = JSONLimits(max_container_items=limit)
        else:
            limits = JSONLimits(max_values=limit)
        if draw(st.booleans()):
            fragment = "[" + ",".join(["0"] * count) + "]"
        else:
            fragment = "{" + ",".join(f'"k{i}":null' for i in range(count)) + "}"
        data = _with_slot(draw, base, fragment)
    elif kind == "too_large":
        error = LimitExceeded
        text = draw(documents(st.just(base), deep=False)).text
        if len(text.encode()) < 2:
            text += " "
        size = len(text.encode())
        limits = JSONLimits(max_bytes=draw(st.integers(1, size - 1)))
        data = text.encode() if draw(st.booleans()) else text
    elif kind == "trailing_data":
        text = draw(documents(st.just(base), deep=False)).text
        garbage = draw(st.sampled_from(("x", ",", "]", "}", "1", '""', "{}", "[]", "\x00", "/",
                                        "null", ":", "-", "\\", "\ufeff")))
        data = text + draw(st.sampled_from(JSON_WHITESPACE)) + garbage
    elif kind == "non_json_whitespace":
        space = draw(st.sampled_from(NON_JSON_WHITESPACE))
        scalar = _serialize(draw, draw(json_scalars))[1]
        where = draw(st.sampled_from(("before", "after", "start", "end")))
        if where in ("start", "end"):
            text = draw(documents(st.just(base), deep=False)).text
            data = space + text if where == "start" else text + space
        else:
            data = _with_slot(draw, base, space + scalar if where == "before" else scalar + space)
        if draw(st.booleans()):
            data = data.encode()
    elif kind == "empty":
        empties: tuple[bytes | str, ...] = ("", b"", " ", "\n\r\t ", b"  \n")
        data = draw(st.sampled_from(empties))
    else:  # control_character
        control = chr(draw(st.integers(0, 0x1F)))
        literal = '"' + draw(_plain_text) + control + draw(_plain_text) + '"'
        data = _with_slot(draw, base, literal if draw(st.booleans()) else "{" + literal + ":1}")
        if draw(st.booleans()):
            data = data.encode()
    return Attack(kind, data, error, limits)


# --- mutations ---------------------------------------------------------------------

MUTATION_TOKENS = (
    "{", "}", "[", "]", ",", ":", '"', "\\", "\\u", "\\ud800", "\\udc00", "NaN", "Infinity",
    "-", "1e999", "0", "-0", "1e-999", "true", "null", " ", "\n", "\u00a0", "\x0c", "\ufeff",
    '"a":1', '"a":', "9" * 40, "[" * 600, "\x00", "\ud800",
    # review additions: escaped quotes and backslashes (string-literal pre-scans),
    # split or mismatched surrogate escapes, huge exponents with few digits, more
    # non-JSON whitespace.
    '\\"', "\\\\", "\\ud83d\\ude00", "\\ud83d\\u0041", "\\\\ud800", "1e999999999999",
    "0e99999", "1.0e-99999", ".5", "+1", "01", "\u2028", "\x0b",
)
MUTATION_BYTES = tuple(INVALID_UTF8.values()) + tuple(BOMS.values()) + (b"\x00", b"\xc3\xa9")


@st.composite
def mutated_documents(draw: st.DrawFn) -> Mutated:
    """A valid document (as bytes or str) damaged by one to three mutations."""
    doc = draw(documents(json_values(max_leaves=15)))
    as_bytes = draw(st.booleans())
    data: Any = doc.text.encode("utf-8", "surrogatepass") if as_bytes else doc.text
    kind = "none"
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(MUTATION_KINDS))
        size = len(data)
        start = draw(st.integers(0, size))
        stop = draw(st.integers(start, min(size, start + 8)))
        if kind == "delete":
            data = data[:start] + data[stop:]
        elif kind == "insert_token":
            token = draw(st.sampled_from(MUTATION_TOKENS))
            piece = token.encode("utf-8", "surrogatepass") if as_bytes else token
            data = data[:start] + piece + data[start:]
        elif kind == "insert_bytes":
            if as_bytes:
                piece = draw(st.sampled_from(MUTATION_BYTES) | st.binary(min_size=1, max_size=4))
            else:
                piece = draw(st.text(min_size=1, max_size=4))
            data = data[:start] + piece + data[start:]
        elif kind == "duplicate":
            data = data[:stop] + data[start:stop] + data[stop:]
        elif kind == "replace":
            if size:
                index = min(start, size - 1)
                if as_bytes:
                    data = data[:index] + bytes([draw(st.integers(0, 255))]) + data[index + 1:]
                else:
                    data = data[:index] + draw(st.characters()) + data[index + 1:]
        else:  # truncate
            data = data[:start]
    return Mutated(kind, data)
