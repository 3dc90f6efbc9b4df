"""contracts.strict_json: strict JSON with explicit limits, equal to json.loads on acceptance.

Example tests name every JSON case of the seed's "Fixture provenance" and "Data
boundary" rows (duplicate keys, non-finite values, BOM, non-UTF-8, overly deep /
large / long JSON) plus the loader's own rules; property tests generalize them with
the strategies in ``strategies.json_values``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from _cost import assert_linear_cost
from _fuzz import load_fuzz_target
from hypothesis import event, example, given
from hypothesis import strategies as st

from pcfuzz.contracts import strict_json
from pcfuzz.contracts.errors import ContractError, LimitExceeded, StrictJSONError
from pcfuzz.contracts.strict_json import DEFAULT_LIMITS, JSONLimits, loads
from pcfuzz.strategies import json_values as jv
from pcfuzz.strategies.json_values import same

ROOT = Path(__file__).resolve().parent.parent




def assert_accepted_like_json(data: bytes | str, limits: JSONLimits | None = None) -> Any:
    value = loads(data, limits=limits)
    assert same(value, json.loads(data)), (value, data)
    return value


def rejects(data: Any, error: type[ContractError], *, limits: JSONLimits | None = None) -> str:
    with pytest.raises(ContractError) as info:
        loads(data, limits=limits)
    assert type(info.value) is error, (type(info.value), info.value)
    assert info.value.where, "every rejection says where"
    return str(info.value)


# --- input types -------------------------------------------------------------------


def test_accepts_utf8_bytes_and_str_equal_to_json_loads() -> None:
    for doc in [
        '{"a": [1, -0, 2.5, -0.0, 1E+2, true, false, null, "x\\n\\u00e9\\ud83d\\ude00"]}',
        "[]",
        "{}",
        '"\u00e9\U0001f600"',
        " \t\r\n0 \n",
        "-1.5e-3",
        '{"": {"": []}}',
        '"\\"\\\\\\/\\b\\f\\n\\r\\t"',
    ]:
        assert same(assert_accepted_like_json(doc), assert_accepted_like_json(doc.encode()))


def test_int_stays_int_and_float_stays_float() -> None:
    assert type(loads("1")) is int and type(loads("1.0")) is float and type(loads("1e0")) is float
    assert loads("[true]")[0] is True


def test_input_must_be_bytes_or_str() -> None:
    for bad in [None, 1, 1.5, ["{}"], {"a": 1}, memoryview(b"{}"), object()]:
        message = rejects(bad, StrictJSONError)
        assert "bytes" in message and "str" in message
    buffer: Any = bytearray(b"[1]")  # accepted like bytes (see Decisions)
    assert loads(buffer) == [1]


def test_limits_argument_must_be_json_limits() -> None:
    with pytest.raises(StrictJSONError):
        loads("1", limits={"max_depth": 3})  # type: ignore[arg-type]


# --- duplicate keys ----------------------------------------------------------------


def test_duplicate_keys_are_rejected_at_any_depth() -> None:
    rejects('{"a":1,"a":2}', StrictJSONError)
    rejects('{"a":1,"b":{"c":1,"c":1}}', StrictJSONError)
    rejects('[[[{"x":[{"k":null,"k":null}]}]]]', StrictJSONError)
    rejects(b'{"a":{},"b":[],"a":{}}', StrictJSONError)


def test_duplicate_keys_equal_only_after_escape_decoding_are_rejected() -> None:
    message = rejects('{"a":1,"\\u0061":2}', StrictJSONError)
    assert "duplicate" in message
    rejects('{"\\u00e9":1,"\u00e9":2}', StrictJSONError)
    rejects('{"\\ud83d\\ude00":1,"\U0001f600":2}', StrictJSONError)
    rejects('{"/":1,"\\/":2}', StrictJSONError)
    rejects('{"\\n":1,"\\u000a":2}', StrictJSONError)
    rejects('{"\\u00C9":1,"\\u00c9":2}', StrictJSONError)


def test_keys_that_differ_only_in_normalization_are_distinct() -> None:
    # NFC and NFD spellings are different strings to JSON and to json.loads.
    assert len(assert_accepted_like_json('{"\u00e9":1,"e\u0301":2}')) == 2


def test_duplicate_key_error_points_at_the_second_key() -> None:
    message = rejects('{\n  "a": 1,\n  "a": 2\n}', StrictJSONError)
    assert "line 3 column 3" in message


# --- numbers -----------------------------------------------------------------------


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "nan", "inf", "-inf", "+1"])
def test_non_finite_tokens_are_rejected(token: str) -> None:
    for doc in [token, f"[{token}]", f'{{"a":{token}}}', f"[1, {token}]"]:
        rejects(doc, StrictJSONError)


@pytest.mark.parametrize(
    "literal", ["1e400", "-1e400", "1.8e308", "-2E+308", "1" * 400 + ".0", "0.1e310"]
)
def test_numbers_overflowing_to_infinity_are_rejected(literal: str) -> None:
    assert math.isinf(json.loads(literal))  # what json.loads would have let through
    message = rejects(f'{{"v":[{literal}]}}', StrictJSONError)
    assert "infinity" in message


def test_largest_finite_double_is_accepted() -> None:
    assert_accepted_like_json("1.7976931348623157e308")
    assert_accepted_like_json("-1.7976931348623157e308")


def test_underflow_to_zero_is_accepted_like_json_loads() -> None:
    # Decision: rounding a tiny literal to 0.0 (or to a subnormal) is ordinary binary
    # floating point, like 0.1 not being exact; the value is finite.
    assert same(assert_accepted_like_json("1e-400"), 0.0)
    assert same(assert_accepted_like_json("-1e-400"), -0.0)
    assert assert_accepted_like_json("5e-324") == 5e-324


def test_number_grammar_is_json_not_python() -> None:
    for doc in ["01", "1.", ".5", "1e", "-", "--1", "0x10", "1_000", "\u0661", "[1.e5]"]:
        rejects(doc, StrictJSONError)


def test_a_long_but_ordinary_number_literal_is_accepted() -> None:
    fraction = "0." + "1234567890" * 8  # 80 digits
    assert_accepted_like_json(f"[{fraction}, -{fraction}e-5]")
    assert_accepted_like_json("1" * 120)  # a 120-digit integer stays an exact int


def test_a_100000_digit_integer_is_rejected_by_the_limit_not_the_int_guard() -> None:
    message = rejects("1" * 100_000, LimitExceeded)
    assert "number literal longer than 1000" in message
    rejects("[" + "9" * 100_000 + "]", LimitExceeded)
    rejects("0." + "9" * 100_000, LimitExceeded)


@pytest.mark.skipif(sys.get_int_max_str_digits() == 0, reason="int digit guard disabled")
def test_raised_number_limit_still_fails_closed_at_the_interpreter_guard() -> None:
    limits = JSONLimits(max_number_chars=10_000)
    digits = "7" * (sys.get_int_max_str_digits() + 1)
    rejects(digits, LimitExceeded, limits=limits)
    assert loads("0." + digits, limits=limits) == float("0." + digits)


# --- encoding ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "doc",
    [
        b"\xef\xbb\xbf{}",
        "\ufeff{}".encode("utf-16-le"),
        b"\xff\xfe" + "{}".encode("utf-16-le"),
        b"\xfe\xff" + "{}".encode("utf-16-be"),
        b"\xff\xfe\x00\x00" + "{}".encode("utf-32-le"),
        b"\x00\x00\xfe\xff" + "{}".encode("utf-32-be"),
        "\ufeff{}",
    ],
)
def test_byte_order_marks_are_rejected(doc: bytes | str) -> None:
    assert "byte order mark" in rejects(doc, StrictJSONError)


def test_json_in_utf16_without_bom_is_rejected() -> None:
    doc = '{"a":1}'.encode("utf-16-le")
    assert json.loads(doc) == {"a": 1}  # json.loads guesses the encoding; we do not
    rejects(doc, StrictJSONError)


@pytest.mark.parametrize(
    ("fragment", "what"),
    [
        (b"\xe2\x82", "truncated 3-byte sequence"),
        (b"\xf0\x9f\x98", "truncated 4-byte sequence"),
        (b"\xc0\xaf", "overlong '/'"),
        (b"\xe0\x80\xaf", "overlong 3-byte '/'"),
        (b"\xc1\xbf", "overlong 2-byte"),
        (b"\xed\xa0\x80", "CESU-8 high surrogate"),
        (b"\xed\xa0\xbd\xed\xb8\x80", "CESU-8 surrogate pair"),
        (b"\x80", "lone continuation byte"),
        (b"\xff", "0xFF"),
        (b"\xf4\x90\x80\x80", "above U+10FFFF"),
        (b"\xf8\x88\x80\x80\x80", "5-byte form"),
    ],
)
def test_invalid_utf8_is_rejected_with_its_byte_offset(fragment: bytes, what: str) -> None:
    for doc in [b'{"k":"ab' + fragment + b'"}', b'["\xc3\xa9",' + fragment + b"]"]:
        message = rejects(doc, StrictJSONError)
        offset = doc.index(fragment)
        assert "UTF-8" in message and f"byte offset {offset}" in message, (what, message)


@pytest.mark.parametrize(
    "literal",
    [
        '"\\ud800"',
        '"\\uDBFF"',
        '"\\udc00"',  # lone low surrogate
        '"x\\ude00y"',
        '"\\ud83d"',
        '"\\ud83dx"',
        '"\\ud83d\\u0041"',  # high followed by a non-surrogate escape
        '"\\ud83d\\ud83d"',  # high followed by high
        '"\\ude00\\ud83d"',  # pair in the wrong order
        '"\\ud83d\\\\ude00"',  # high followed by an escaped backslash, not an escape
    ],
)
def test_lone_surrogate_escapes_are_rejected(literal: str) -> None:
    json.loads(literal)  # json.loads would accept it
    for doc in [literal, f"[{literal}]", f'{{{literal}:1}}', f'{{"k":{literal}}}']:
        message = rejects(doc, StrictJSONError)
        rejects(doc.encode(), StrictJSONError)
        assert "surrogate" in message


def test_lone_surrogate_error_points_at_the_escape() -> None:
    assert "column 20" in rejects('["ab\\n\\ud83d\\ude00x\\ud83d"]', StrictJSONError)


def test_surrogate_pair_escape_is_accepted() -> None:
    assert assert_accepted_like_json('"\\ud83d\\ude00"') == "\U0001f600"
    assert assert_accepted_like_json('{"\\uD83D\\uDE00":"\\\\ud800"}') == {"\U0001f600": "\\ud800"}


@pytest.mark.parametrize("code_point", ["\ud800", "\udfff", "\udc80"])
def test_lone_surrogate_code_points_in_str_input_are_rejected(code_point: str) -> None:
    for doc in [f'"{code_point}"', f'{{"a{code_point}":1}}', f"[1]{code_point}"]:
        assert "surrogate" in rejects(doc, StrictJSONError)


# --- document framing --------------------------------------------------------------


@pytest.mark.parametrize("doc", ["", b"", " ", "\n\t\r ", b"   "])
def test_empty_input_is_rejected(doc: bytes | str) -> None:
    rejects(doc, StrictJSONError)


@pytest.mark.parametrize("doc", ['{"a":1}x', "[1]]", "1 2", '{} {}', '"a","b"', "null\x00", "[]\n,"])
def test_trailing_data_is_rejected(doc: str) -> None:
    assert "trailing data" in rejects(doc, StrictJSONError)


@pytest.mark.parametrize("space", ["\u00a0", "\x0c", "\x0b", "\x85", "\u2028", "\u3000", "\ufeff", "\x00"])
def test_non_json_whitespace_is_rejected(space: str) -> None:
    for doc in [f"{space}1", f"1{space}", f"[1,{space}2]", f'{{"a"{space}:1}}', f"[{space}]"]:
        rejects(doc, StrictJSONError)
        rejects(doc.encode(), StrictJSONError)


def test_json_whitespace_is_accepted_everywhere() -> None:
    assert_accepted_like_json(' \t\n\r{ \t\n\r"a" \t\n\r: \t\n\r[ \t\n\r1 \t\n\r, 2 ] } \r\n')


@pytest.mark.parametrize("control", [chr(c) for c in [0, 1, 9, 10, 13, 0x1F]])
def test_unescaped_control_characters_in_strings_are_rejected(control: str) -> None:
    rejects(f'["a{control}b"]', StrictJSONError)
    rejects(f'{{"a{control}":1}}', StrictJSONError)
    assert assert_accepted_like_json(json.dumps(f"a{control}b")) == f"a{control}b"


def test_noncharacters_are_accepted_like_json_loads() -> None:
    # Decision: U+FFFE, U+FFFF, U+FDD0 and U+10FFFF are Unicode scalar values that
    # every UTF-8 decoder and JSON parser reads the same way; unlike I-JSON we accept.
    for doc in ['"\\ufffe\\uffff\\ufdd0"', '"\\udbff\\udfff"', '"\U0010ffff\ufffe"']:
        assert_accepted_like_json(doc)
        assert_accepted_like_json(doc.encode())


def test_large_integers_keep_their_exact_value() -> None:
    # Decision: like json.loads, an integer beyond 2**53 stays an exact int.
    assert loads(str(2**64 + 1)) == 2**64 + 1


def test_delete_and_c1_controls_may_appear_raw_in_strings() -> None:
    assert assert_accepted_like_json('"\x7f\x80\x9f"') == "\x7f\x80\x9f"


@pytest.mark.parametrize(
    "doc",
    ["[1,]", '{"a":1,}', "[,1]", '{"a"}', "{1:2}", "{'a':1}", '["a]', '"\\x41"', "tru", "nul",
     "True", "[1 2]", '{"a":1 "b":2}', "]", "{", "[", '"\\u12"', '"\\u12G4"'],
)
def test_malformed_json_is_rejected(doc: str) -> None:
    rejects(doc, StrictJSONError)


# --- limits ------------------------------------------------------------------------


def test_limits_are_a_frozen_dataclass_with_the_documented_defaults() -> None:
    assert dataclasses.is_dataclass(JSONLimits)
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_LIMITS.max_depth = 10_000  # type: ignore[misc]
    assert DEFAULT_LIMITS == JSONLimits(
        max_bytes=16 * 1024 * 1024,
        max_depth=512,
        max_string_chars=4 * 1024 * 1024,
        max_number_chars=1_000,
        max_container_items=100_000,
        max_values=1_000_000,
    )
    assert JSONLimits.__doc__ is not None
    for field in dataclasses.fields(JSONLimits):
        assert f"``{field.name}``" in JSONLimits.__doc__, field.name


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "3", None])
def test_limits_must_be_positive_ints(bad: Any) -> None:
    with pytest.raises(ValueError):
        JSONLimits(max_depth=bad)


def test_nesting_at_the_depth_limit_is_accepted_and_one_deeper_is_rejected() -> None:
    assert_accepted_like_json("[" * 512 + "]" * 512)
    assert_accepted_like_json('{"a":' * 511 + "[]" + "}" * 511)
    message = rejects("[" * 513 + "]" * 513, LimitExceeded)
    assert "nesting deeper than 512" in message and "column 513" in message
    rejects("[" * 3 + "]" * 3, LimitExceeded, limits=JSONLimits(max_depth=2))
    assert loads("[[1]]", limits=JSONLimits(max_depth=2)) == [[1]]


def test_10000_deep_nesting_is_rejected_by_the_limit_not_recursion_error() -> None:
    for doc in ["[" * 10_000 + "]" * 10_000, '{"a":' * 10_000 + "1" + "}" * 10_000, "[" * 10_000]:
        rejects(doc, LimitExceeded)


def test_a_deep_caller_stack_does_not_turn_nesting_into_recursion_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The json C scanner counts against the interpreter's recursion limit; a caller
    # already deep in its own stack must still get a value, not a RecursionError.
    doc = "[" * 500 + "]" * 500
    used_iterative: list[bool] = []
    real_parse = strict_json._parse

    def spy(*args: Any) -> Any:
        used_iterative.append(True)
        return real_parse(*args)

    monkeypatch.setattr(strict_json, "_parse", spy)

    def descend(levels: int) -> Any:
        if levels:
            return descend(levels - 1)
        return loads(doc)

    frames, frame = 0, sys._getframe()
    while frame.f_back is not None:
        frames, frame = frames + 1, frame.f_back
    result = descend(sys.getrecursionlimit() - frames - 40)
    assert same(result, json.loads(doc))
    assert used_iterative, "the json scanner hit the recursion limit and the parser took over"


def test_a_40kb_arguments_string_is_accepted() -> None:
    arguments = json.dumps({"text": "lorem ipsum " * 3_400, "n": list(range(50))})
    assert len(arguments) > 40_000
    event = json.dumps({"type": "response.function_call_arguments.done", "arguments": arguments})
    assert assert_accepted_like_json(event.encode())["arguments"] == arguments


def test_a_50mb_string_is_rejected_by_the_size_limit_before_decoding() -> None:
    doc = b'"' + b"a" * 50_000_000 + b'"'
    message = rejects(doc, LimitExceeded)
    assert "50000002 bytes" in message
    rejects(doc.decode("ascii"), LimitExceeded)


def test_size_limit_counts_utf8_bytes_for_str_input_too() -> None:
    limits = JSONLimits(max_bytes=10)
    assert loads('"\u00e9\u00e9\u00e9\u00e9"', limits=limits) == "\u00e9" * 4  # 10 bytes
    rejects('"\u00e9\u00e9\u00e9\u00e9\u00e9"', LimitExceeded, limits=limits)  # 7 chars, 12 bytes
    rejects('"\u00e9\u00e9\u00e9\u00e9\u00e9"'.encode(), LimitExceeded, limits=limits)
    rejects(" " * 11, LimitExceeded, limits=limits)


def test_string_limit_counts_decoded_characters_of_values_and_keys() -> None:
    limits = JSONLimits(max_string_chars=4)
    assert loads('["\\u0061\\u0061\\u0061\\u0061"]', limits=limits) == ["aaaa"]
    assert loads('{"\\ud83d\\ude00abc":"abcd"}', limits=limits) == {"\U0001f600abc": "abcd"}
    rejects('["abcde"]', LimitExceeded, limits=limits)
    rejects('{"abcde":1}', LimitExceeded, limits=limits)


def test_item_limit_applies_to_arrays_and_objects() -> None:
    limits = JSONLimits(max_container_items=3)
    assert loads('[1,2,{"a":1,"b":2,"c":3}]', limits=limits)[2] == {"a": 1, "b": 2, "c": 3}
    rejects("[1,2,3,4]", LimitExceeded, limits=limits)
    rejects('{"a":1,"b":2,"c":3,"d":4}', LimitExceeded, limits=limits)
    assert "more than 100000" in rejects("[" + "0," * 100_000 + "0]", LimitExceeded)


def test_value_limit_counts_every_value_in_the_document() -> None:
    limits = JSONLimits(max_values=4)
    assert loads('[1,{"k":[]}]', limits=limits) == [1, {"k": []}]  # 4 values; keys do not count
    rejects('[1,{"k":[2]}]', LimitExceeded, limits=limits)
    rejects("[[],[],[],[]]", LimitExceeded, limits=limits)


def test_number_limit_counts_the_literal_as_written() -> None:
    limits = JSONLimits(max_number_chars=6)
    assert loads("[-1.5e3, 123456]", limits=limits) == [-1500.0, 123456]
    rejects("-1.5e10", LimitExceeded, limits=limits)
    rejects("1234567", LimitExceeded, limits=limits)


# --- error locations ---------------------------------------------------------------


def test_errors_give_line_column_and_byte_offset() -> None:
    doc = '{\n  "\u00e9": [1,\n   NaN]\n}'
    message = rejects(doc.encode(), StrictJSONError)
    assert "line 3 column 4" in message
    assert f"byte offset {doc.encode().index(b'NaN')}" in message
    message = rejects(doc, StrictJSONError)
    assert f"char offset {doc.index('NaN')}" in message


# --- the two paths -----------------------------------------------------------------


def iterative(doc: bytes | str, limits: JSONLimits = DEFAULT_LIMITS) -> Any:
    """The iterative parser alone, bypassing the json-scanner fast path."""
    text = doc.decode("utf-8") if isinstance(doc, bytes) else doc
    return strict_json._parse(text, limits, isinstance(doc, bytes))


def test_the_iterative_parser_accepts_what_the_fast_path_accepts() -> None:
    for doc in ['{"a":[1,2.5,{"b":null}],"c":"\\u00e9"}', "[" * 512 + "]" * 512, '"x"', "-0"]:
        assert same(iterative(doc), loads(doc))


# --- review: attacks on the fast path, the argument checks and locations ----------


class _FakeStr:
    """Claims to be a str through ``__class__`` (isinstance believes it)."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return str


class _FakeBytes:
    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return bytes


class _LyingBytes(bytes):
    """Overrides every method the loader could call to look at its content."""

    def decode(self, *args: Any, **kwargs: Any) -> Any:
        return '"\ud800"'

    def __len__(self) -> int:
        return 0

    def startswith(self, *args: Any) -> bool:
        return False


class _RaisingBytearray(bytearray):
    def decode(self, *args: Any, **kwargs: Any) -> Any:
        raise KeyError("decode")


class _LyingStr(str):
    def __str__(self) -> str:
        return "[2]"

    def encode(self, *args: Any, **kwargs: Any) -> Any:
        return b""

    def count(self, *args: Any) -> int:
        return 0


def test_input_type_is_decided_by_the_real_type_not_the_class_attribute() -> None:
    # isinstance() trusts a ``__class__`` property; the loader must not.
    assert isinstance(_FakeStr(), str) and isinstance(_FakeBytes(), bytes)
    rejects(_FakeStr(), StrictJSONError)
    rejects(_FakeBytes(), StrictJSONError)


def test_bytes_and_str_subclasses_are_read_by_their_real_content() -> None:
    # A subclass may override decode/len/startswith/encode/count; the loader reads the
    # underlying buffer, so what it judges is what the bytes or characters really are.
    assert loads(_LyingBytes(b"[1]")) == [1]
    assert "byte order mark" in rejects(_LyingBytes(b"\xef\xbb\xbf[1]"), StrictJSONError)
    rejects(_LyingBytes(b"1" * 20), LimitExceeded, limits=JSONLimits(max_bytes=10))
    rejects(_LyingBytes(b'["\xed\xa0\x80"]'), StrictJSONError)
    assert loads(_RaisingBytearray(b"[1]")) == [1]
    assert loads(_LyingStr("[1]")) == [1]
    rejects(_LyingStr("[" * 600 + "]" * 600), LimitExceeded)
    rejects(_LyingStr('"\ud800"'), StrictJSONError)


def test_oversized_str_subclass_is_rejected_before_it_is_copied() -> None:
    import tracemalloc

    big = _LyingStr("a" * (DEFAULT_LIMITS.max_bytes + 1))
    tracemalloc.start()
    try:
        rejects(big, LimitExceeded)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak


def test_memoryview_and_other_buffers_are_rejected_not_read() -> None:
    # Decision: bytes, bytearray and str only; a memoryview (possibly released) or
    # array is a different type with its own length/format semantics.
    import array

    released = memoryview(b"[1]")
    released.release()
    for bad in [memoryview(b"[1]"), released, array.array("b", b"[1]")]:
        assert "argument data" in rejects(bad, StrictJSONError)


def _tampered(**values: Any) -> JSONLimits:
    limits = JSONLimits()
    for name, value in values.items():
        object.__setattr__(limits, name, value)
    return limits


class _FakeLimits:
    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return JSONLimits


class _LimitsSubclass(JSONLimits):
    pass


@pytest.mark.parametrize(
    "limits",
    [
        _FakeLimits(),
        JSONLimits.__new__(JSONLimits),  # never initialized: no fields at all
        _tampered(max_depth=0),
        _tampered(max_bytes=-5),
        _tampered(max_values="x"),
        _tampered(max_string_chars=True),
        _tampered(max_number_chars=2.5),
        _tampered(max_container_items=None),
        _LimitsSubclass(),
    ],
    ids=["fake-class", "uninitialized", "zero-depth", "negative-bytes", "str-values",
         "bool-strings", "float-numbers", "none-items", "subclass"],
)
def test_limits_must_be_an_intact_json_limits(limits: Any) -> None:
    # Decision: loads re-checks its limits (the constructor's check can be bypassed)
    # and accepts exactly JSONLimits, not a subclass that could compute its fields.
    assert "argument limits" in rejects(b"[1]", StrictJSONError, limits=limits)
    rejects("[1]", StrictJSONError, limits=limits)


@pytest.mark.parametrize(
    "doc",
    [
        "[" * 513 + '"' + 'a\\"' * 40_000,  # depth pre-scan
        '{"a":' * 513 + '"' + 'a\\"' * 40_000,
        "[" * 600 + '"\\"' * 40_000,
    ],
)
def test_depth_pre_scan_is_linear_on_unterminated_strings_full_of_escaped_quotes(
    doc: str,
) -> None:
    # A string-literal regex that fails on an unterminated literal restarts at every
    # escaped quote: quadratic (seconds for 100 KB, hours for 16 MB).
    rejects(doc, LimitExceeded)
    rejects(doc.encode(), LimitExceeded)
    assert_linear_cost(lambda: loads(doc), len(doc), "depth pre-scan, str")
    assert_linear_cost(lambda: loads(doc.encode()), len(doc), "depth pre-scan, bytes")


def test_string_length_pre_scan_is_linear_on_unterminated_strings_full_of_escaped_quotes() -> None:
    limits = JSONLimits(max_string_chars=10)
    for doc in ['"' + 'a\\"' * 40_000, '["ab",' + '"' + '\\"' * 60_000]:
        rejects(doc, StrictJSONError, limits=limits)
        assert_linear_cost(lambda d=doc: loads(d, limits=limits), len(doc),  # type: ignore[misc]
                           "string-length pre-scan")


@pytest.mark.parametrize(
    "doc",
    [
        '["\\ud83d\\ude00' + "\\n" * 500_000 + '"]',  # surrogate pre-scan, fast path
        '["' + "\\n" * 500_000 + '\\ud800"]',  # iterative parser locating a lone escape
        "[" * 513 + '"' + "\\n" * 500_000 + '"',  # depth pre-scan
    ],
    ids=["pair-then-escapes", "escapes-then-lone", "deep-then-escapes"],
)
def test_pre_scans_use_memory_proportional_to_the_input_not_to_its_escapes(doc: str) -> None:
    # A regex repetition that can backtrack keeps a frame per iteration: ~90 bytes of
    # memory per escape (1.4 GB for a 16 MB document).
    import tracemalloc

    for data in (doc, doc.encode()):
        tracemalloc.start()
        try:
            with contextlib.suppress(ContractError):
                loads(data)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 12 * len(data), peak / len(data)  # measured after the fix: <= 4


def test_exact_depth_scan_runs_only_for_documents_the_scanner_accepted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The exact depth costs a Python-level step per bracket: a 4 MB run of ``{}``
    # that is invalid at byte 2 must not pay it (it took ~1 s per 16 MB).
    scans: list[int] = []
    real = strict_json._deeper_than
    monkeypatch.setattr(
        strict_json, "_deeper_than", lambda text, limit: scans.append(1) or real(text, limit)
    )
    rejects("{}" * 2_000_000, StrictJSONError)
    rejects("[" + "{]" * 2_000_000, StrictJSONError)
    assert scans == []
    rejects("[" * 600 + "]" * 600, LimitExceeded)
    assert scans == [1]


@pytest.mark.parametrize("levels", [513, 700, 999, 1_000, 1_001, 1_500, 5_000])
def test_nesting_between_the_limit_and_the_recursion_limit_is_rejected(levels: int) -> None:
    # json's scanner accepts up to the recursion limit (1000 frames) and raises
    # RecursionError beyond; the limit must decide either way.
    for doc in ["[" * levels + "]" * levels, '{"a":' * levels + "0" + "}" * levels]:
        assert "nesting deeper than 512" in rejects(doc, LimitExceeded)
        assert "nesting deeper than 512" in rejects(doc.encode(), LimitExceeded)


@pytest.mark.parametrize("padding", range(1_790, 2_060, 9))
def test_depth_limit_is_exact_wherever_the_deepest_point_falls(padding: int) -> None:
    # The depth scan works in chunks of brackets; the deepest run must be found
    # whether it sits inside a chunk or straddles a boundary.
    for inner, accepted in ((511, True), (512, False)):
        doc = '[' + '[],"[[[",' * padding + "[" * inner + "]" * inner + "]"
        if accepted:
            assert_accepted_like_json(doc)
        else:
            rejects(doc, LimitExceeded)


# Brackets inside strings, behind escaped quotes and escaped backslashes, each with
# its true nesting depth (brackets inside strings do not nest).
_STRING_RUN_DEPTHS = {
    '"[[[["': 0, '"]]]"': 0, '{"[":"{"}': 1, '"a\\"[[[\\\\"': 0, '"\\\\\\"]]"': 0,
    '"]\\\\"': 0, '"\\u0022["': 0,
}


@given(
    st.lists(st.integers(0, 600) | st.sampled_from(sorted(_STRING_RUN_DEPTHS)), max_size=12),
    st.integers(1, 600),
)
@example(runs=['{"[":"{"}'], limit=2)  # found at night: the old oracle counted '{' in strings
def test_depth_limit_is_exact_for_any_nesting_profile(runs: list[int | str], limit: int) -> None:
    parts = [run if isinstance(run, str) else "[" * run + "0" + "]" * run for run in runs]
    doc = "[" + ",".join(parts) + "]"
    depth = 1 + max(
        [0] + [run if isinstance(run, int) else _STRING_RUN_DEPTHS[run] for run in runs]
    )
    event("document spans several 4096-bracket chunks" if len(doc) > 4_096 else "one chunk")
    limits = JSONLimits(max_depth=limit)
    if depth > limit:
        event("over the limit")
        rejects(doc, LimitExceeded, limits=limits)
    else:
        event("within the limit")
        assert same(loads(doc, limits=limits), json.loads(doc))


_MB = 1_000_000
_ADVERSARIAL_SHAPES: dict[str, Any] = {  # built lazily: ~1 MB each
    "many small strings": lambda: "[" + '"a",' * (_MB // 4) + '"a"]',
    "many escapes": lambda: '["' + "\\n\\u00e9\\/" * (_MB // 12) + '"]',
    "many surrogate pairs then a lone one": lambda: '["' + "\\ud83d\\ude00" * (_MB // 12) + '\\ud800"]',
    "deep but allowed, repeated": lambda: "[" + ",".join(["[" * 500 + "]" * 500] * (_MB // 1_001)) + "]",
    "511 brackets then junk": lambda: "[" * 511 + "x" * _MB,
    "513 brackets then escaped quotes": lambda: "[" * 513 + '"' + 'a\\"' * (_MB // 3),
    "keys with many escapes": lambda: "{" + ",".join(f'"\\u0061\\n{i}":0' for i in range(_MB // 20)) + "}",
    "many duplicate-candidate keys": lambda: "{" + ",".join(f'"k{i}":0' for i in range(90_000)) + ',"k0":1}',
    "brackets invalid at byte 2": lambda: "{}" * (_MB // 2),
    "huge exponents": lambda: "[" + "1.0e-99999," * (_MB // 11) + "1e999999999999]",
    "unterminated string of escaped quotes": lambda: '"' + '\\"' * (_MB // 2),
}


@pytest.mark.parametrize("shape", sorted(_ADVERSARIAL_SHAPES))
def test_adversarial_shapes_cost_linear_time(shape: str) -> None:
    # Within a constant factor of json.loads on a benign document of the same size;
    # anything quadratic is thousands of times over at a megabyte.
    doc = _ADVERSARIAL_SHAPES[shape]()
    for data in (doc, doc.encode()):
        assert_linear_cost(lambda d=data: loads(d), len(doc), shape)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        ("-0", 0),
        ("-0.0", -0.0),
        ("0e99999", 0.0),
        ("-0e99999", -0.0),
        ("0e999999999999999999999", 0.0),
        ("1.0e-99999", 0.0),
        ("-1.0e-99999", -0.0),
        ("1e-999999999999", 0.0),
        ("1E400", None),
        ("-1e400", None),
        ("1e999999999999", None),
        ("-1E+999999999999", None),
        ("9.9e308", None),
    ],
)
def test_huge_exponents_with_few_digits_are_decided_by_value_on_both_paths(
    literal: str, value: float | None
) -> None:
    # Underflow is a finite value (see Decisions); overflow is not JSON.
    for doc in [literal, f"[{literal}]", f'{{"v":{literal}}}']:
        # Deciding by value must not build 10**999999999999: compared with the same
        # literal of 1,000 repeated digits, which json.loads parses at once.
        assert_linear_cost(lambda d=doc: loads(d), 1_000, doc)  # type: ignore[misc]
        if value is None:
            assert "infinity" in rejects(doc, StrictJSONError)
            with pytest.raises(StrictJSONError):
                iterative(doc)
        else:
            result = assert_accepted_like_json(doc)
            assert same(result, json.loads(doc))
            assert same(iterative(doc), result)


@pytest.mark.parametrize("doc", ["01", "-01", "-", "1.", ".5", "+1", "-.5", "1.e1", "1e+", "0x1",
                                 "1ee1", "--0", "-a", "00", "1.5.5", "[-]", "[1.]", '{"a":01}'])
def test_number_grammar_is_rejected_on_both_paths(doc: str) -> None:
    rejects(doc, StrictJSONError)
    with pytest.raises(StrictJSONError):
        iterative(doc)


# Every place between tokens where JSON allows whitespace: one template, 18 slots.
_WS_TEMPLATE = '{0}{{{1}"a"{2}:{3}[{4}1{5},{6}"b"{7},{8}-0.5{9}]{10},{11}"c"{12}:{13}{{{14}}}{15},{16}"d":[{17}]}}{18}'
_SLOTS = _WS_TEMPLATE.count("{") - _WS_TEMPLATE.count("{{") * 2


@pytest.mark.parametrize("space", jv.NON_JSON_WHITESPACE)
def test_non_json_whitespace_is_rejected_in_every_position(space: str) -> None:
    for slot in range(_SLOTS):
        spaces = ["\r\n\t "] * _SLOTS
        assert_accepted_like_json(_WS_TEMPLATE.format(*spaces))
        spaces[slot] = space
        doc = _WS_TEMPLATE.format(*spaces)
        for data in (doc, doc.encode()):
            message = rejects(data, StrictJSONError)
            assert f"offset {doc.index(space) if isinstance(data, str) else doc.encode().index(space.encode())}" in message
            with pytest.raises(StrictJSONError):
                iterative(doc)


_WHERE = re.compile(r"line (\d+) column (\d+) \((byte|char) offset (\d+)\)|(byte|char) offset (\d+)")


def assert_location_is_right(data: bytes | str, exc: ContractError) -> None:
    """``where`` names line, column and offset (or just the offset of an encoding or
    size error), and line/column agree with the offset."""
    assert exc.where is not None
    match = _WHERE.fullmatch(exc.where)
    assert match is not None, exc.where
    if match.group(1) is None:
        assert match.group(5) == ("byte" if isinstance(data, bytes) else "char")
        assert 0 <= int(match.group(6)) <= len(data)
        return
    line, column, unit, offset = int(match[1]), int(match[2]), match[3], int(match[4])
    assert unit == ("byte" if isinstance(data, bytes) else "char")
    assert 0 <= offset <= len(data)
    prefix = data[:offset].decode("utf-8") if isinstance(data, bytes) else data[:offset]
    assert line == prefix.count("\n") + 1
    assert column == len(prefix) - (prefix.rfind("\n") + 1) + 1


@given(jv.mutated_documents(), st.sampled_from([None, jv.SMALL_LIMITS]))
def test_every_rejection_names_a_consistent_line_column_and_offset(
    mutated: jv.Mutated, limits: JSONLimits | None
) -> None:
    try:
        loads(mutated.data, limits=limits)
    except ContractError as exc:
        event(f"rejected {type(exc).__name__} ({'line/column' if 'line' in (exc.where or '') else 'offset only'})")
        assert_location_is_right(mutated.data, exc)
    else:
        event("accepted")


@pytest.mark.parametrize("kind", jv.ATTACK_KINDS)
@given(data=st.data())
def test_fast_path_and_iterative_parser_reject_each_attack_alike(
    kind: str, data: st.DataObject
) -> None:
    attack = data.draw(jv.attacks(kind))
    with pytest.raises(ContractError) as info:
        loads(attack.data, limits=attack.limits)
    assert_location_is_right(attack.data, info.value)
    limits = attack.limits or DEFAULT_LIMITS
    text = attack.data
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            event(f"attack {kind}: not UTF-8, decided before either path")
            return
    if (
        kind in ("bom", "lone_surrogate_code_point", "empty")  # decided before parsing
        or len(text.encode("utf-8", "surrogatepass")) > limits.max_bytes
    ):
        event(f"attack {kind}: decided before either path")
        return
    event(f"attack {kind}: iterative parser run alone")
    with pytest.raises(ContractError) as alone:
        strict_json._parse(text, limits, False)
    assert type(alone.value) is type(info.value), (alone.value, info.value)


# --- property tests ----------------------------------------------------------------


@given(jv.documents())
def test_generated_documents_are_accepted_and_equal_json_loads(doc: jv.Document) -> None:
    event(f"top-level {type(doc.value).__name__}")
    for data in (doc.text, doc.text.encode("utf-8")):
        value = loads(data)
        assert same(value, json.loads(data))
        assert same(value, doc.value)
        assert same(iterative(data), value)


@pytest.mark.parametrize("kind", jv.ATTACK_KINDS)
@given(data=st.data())
def test_each_attack_class_is_rejected_with_its_error(kind: str, data: st.DataObject) -> None:
    attack = data.draw(jv.attacks(kind))
    event(f"attack {attack.kind}: {type(attack.data).__name__} input")
    with pytest.raises(ContractError) as info:
        loads(attack.data, limits=attack.limits)
    assert type(info.value) is attack.error, (attack.kind, info.value)
    assert info.value.where


def check_only_contract_errors(data: bytes | str, limits: JSONLimits | None = None) -> None:
    """The oracle: loads returns or raises a ContractError; on acceptance json.loads
    accepts too and returns an equal value; the iterative parser agrees."""
    try:
        value = loads(data, limits=limits)
    except ContractError as exc:
        event(f"rejected: {type(exc).__name__}")
        return
    event("accepted")
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    assert same(value, json.loads(text))
    assert same(iterative(data, limits or DEFAULT_LIMITS), value)


@given(st.binary())
@example(b"\xef\xbb\xbf[]")
@example(b'{"a":1,"a":1}')
def test_arbitrary_bytes_raise_only_contract_errors(data: bytes) -> None:
    check_only_contract_errors(data)


@given(st.text())
@example("[\ud800]")
@example('"\\ud800"')
def test_arbitrary_text_raises_only_contract_errors(data: str) -> None:
    check_only_contract_errors(data)


@given(jv.mutated_documents(), st.sampled_from([None, jv.SMALL_LIMITS]))
def test_mutated_documents_raise_only_contract_errors(
    mutated: jv.Mutated, limits: JSONLimits | None
) -> None:
    event(f"mutation {mutated.kind}")
    check_only_contract_errors(mutated.data, limits)


@given(jv.documents(), st.sampled_from([None, jv.SMALL_LIMITS]))
def test_fast_path_and_iterative_parser_agree_under_any_limits(
    doc: jv.Document, limits: JSONLimits | None
) -> None:
    lim = limits or DEFAULT_LIMITS
    try:
        # loads checks the document's size before either parser sees it.
        strict_json._check_text(doc.text, lim)
        expected = iterative(doc.text, lim)
    except ContractError as exc:
        event(f"iterative rejects: {type(exc).__name__}")
        with pytest.raises(type(exc)):
            loads(doc.text, limits=lim)
        return
    event("iterative accepts")
    assert same(loads(doc.text, limits=lim), expected)


_ANY_LIMITS = st.builds(
    JSONLimits,
    max_bytes=st.integers(1, 400) | st.just(DEFAULT_LIMITS.max_bytes),
    max_depth=st.integers(1, 8),
    max_string_chars=st.integers(1, 15),
    max_number_chars=st.integers(1, 25),
    max_container_items=st.integers(1, 8),
    max_values=st.integers(1, 40),
)


@given(jv.documents(deep=False), _ANY_LIMITS, st.booleans())
def test_limits_are_exact_in_both_directions(
    doc: jv.Document, limits: JSONLimits, as_bytes: bool
) -> None:
    # Measured independently (json.loads with hooks, then a walk): a strict document
    # is accepted iff it is within every limit, and is otherwise a LimitExceeded.
    excess = jv.limits_exceeded(doc.text, limits)
    assert excess is not None
    data = doc.text.encode() if as_bytes else doc.text
    try:
        value = loads(data, limits=limits)
    except LimitExceeded:
        for name in excess:
            event(f"rejected, over {name}")
        assert excess, "LimitExceeded for a document within every limit"
        return
    event("accepted within every limit")
    assert not excess, f"accepted a document over {excess}"
    assert same(value, doc.value)


# --- the fuzz target ---------------------------------------------------------------


def test_fuzz_target_runs_over_its_seed_corpus() -> None:
    module = load_fuzz_target("fuzz_strict_json")
    corpus = sorted((ROOT / "fuzz" / "corpus" / "fuzz_strict_json").iterdir())
    assert len(corpus) >= 10
    for seed in corpus:
        module.TestOneInput(seed.read_bytes())


def test_fuzz_target_deep_oracle_runs_over_its_seed_corpus() -> None:
    # The target samples its deep oracle; here every seed gets it.
    module = load_fuzz_target("fuzz_strict_json")
    for seed in sorted((ROOT / "fuzz" / "corpus" / "fuzz_strict_json").iterdir()):
        module.check(seed.read_bytes(), deep=True)
    with pytest.raises(RuntimeError):
        # A broken loader is caught by the fast oracle alone.
        module.loads = lambda doc, limits: {"not": "json.loads"}
        module.check(b"[1]", deep=False)


# --- the accelerated iterative parser (issue 23: a limit stops the work) -------------


def _mode_outcome(text: str, limits: JSONLimits, mode: int) -> Any:
    try:
        return ("value", strict_json._parse(text, limits, False, mode))
    except ContractError as exc:
        return (type(exc).__name__, exc.where, exc.message)


def _assert_modes_agree(text: str, limits: JSONLimits) -> None:
    own = _mode_outcome(text, limits, strict_json._OWN)
    for mode in (strict_json._ACCELERATED, strict_json._LOCATE):
        other = _mode_outcome(text, limits, mode)
        if own[0] == "value":
            assert other[0] == "value" and same(other[1], own[1]), (mode, other[:2])
        else:
            assert other == own, mode


_DOCUMENTS = st.one_of(jv.documents().map(lambda d: d.text),
                       jv.mutated_documents().map(lambda m: m.data if isinstance(m.data, str)
                                                  else m.data.decode("utf-8", "replace")))


@given(_DOCUMENTS, st.sampled_from([DEFAULT_LIMITS, jv.SMALL_LIMITS]) | _ANY_LIMITS)
def test_accelerated_parser_agrees_with_its_own_steps(text: str, limits: JSONLimits) -> None:
    # The C-level steps (chunks of items, runs of flat items, containers scanned in a
    # window) only ever accept what the parser's own steps accept, with the same
    # value; every rejection, its class, location and message are the own steps'.
    _assert_modes_agree(text, limits)


@given(_DOCUMENTS, st.sampled_from([DEFAULT_LIMITS, jv.SMALL_LIMITS]) | _ANY_LIMITS,
       st.integers(1, 48))
def test_accelerated_parser_agrees_with_its_own_steps_in_small_windows(
    text: str, limits: JSONLimits, window: int
) -> None:
    # Windows of a few characters: values cut at a window's end (a number that would
    # parse short), windows renewed, the budget of characters read in vain.
    saved = strict_json._WINDOW
    strict_json._WINDOW = window
    try:
        _assert_modes_agree(text, limits)
    finally:
        strict_json._WINDOW = saved


_LIMIT_SHAPES = {
    "array of zeros": ("[" + ",".join(["0"] * 500_000) + "]", "items"),
    "object of members": ("{" + ",".join(f'"k{i}":0' for i in range(200_000)) + "}", "items"),
    "array of empty arrays": ("[" + ",".join(["[]"] * 400_000) + "]", "items"),
    "array of small objects": ("[" + ",".join(['{"a":1,"b":[2,3]}'] * 200_000) + "]", "items"),
    "array of one-item arrays": ("[" + ",".join(["[0]"] * 600_000) + "]", "values"),
}
_VALUES_LIMITS = JSONLimits(max_container_items=1_000_000)


@pytest.mark.parametrize("shape", sorted(_LIMIT_SHAPES))
def test_a_limit_stops_the_json_scanner_where_it_is_crossed(
    shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: the fast path had the json scanner build the whole document, walked it,
    # and the iterative parser ran again to find the error (rejecting 500,000 zeros
    # cost 5-11x json.loads accepting them). Now the item limit is doubted from the
    # commas before the scanner runs, and the iterative parser's C-level steps stop
    # at the limit. Counted, not timed: the characters handed to the json scanner
    # stay within the prefix before the crossing point, plus one window.
    doc, limit = _LIMIT_SHAPES[shape]
    scanned: list[int] = []
    real = strict_json._DEFAULT_SCAN

    def counting(text: str, at: int) -> Any:
        try:
            value, stop = real(text, at)
        except Exception:
            scanned.append(len(text) - at)
            raise
        scanned.append(stop - at)
        return value, stop

    monkeypatch.setattr(strict_json, "_DEFAULT_SCAN", counting)
    message = rejects(doc, LimitExceeded,
                      limits=_VALUES_LIMITS if limit == "values" else DEFAULT_LIMITS)
    crossing = int(re.search(r"char offset (\d+)", message).group(1))  # type: ignore[union-attr]
    assert ("values" in message) if limit == "values" else ("items" in message
                                                            or "members" in message)
    assert sum(scanned) <= crossing + strict_json._WINDOW, (sum(scanned), crossing, len(doc))


@pytest.mark.parametrize("max_items", [300, 1_000, 5_000])
def test_a_container_nested_in_a_chunk_is_held_to_the_item_limit(max_items: int) -> None:
    # A chunk cut at the commas before items that start with a bracket can hold a
    # nested container of many items: its own commas must bound them, or it is
    # measured (an item limit between _RUN and a window's length once slipped by).
    limits = JSONLimits(max_container_items=max_items)
    small = ",".join(["[1]"] * 140)  # the outer array stays within every limit tried
    doc = "[" + small + ",[" + ",".join(["0"] * (max_items + 1)) + "]," + small + "]"
    _assert_modes_agree(doc, limits)
    assert "more than" in rejects(doc, LimitExceeded, limits=limits)
    ok = "[" + small + ",[" + ",".join(["0"] * max_items) + "]," + small + "]"
    _assert_modes_agree(ok, limits)
    assert same(loads(ok, limits=limits), json.loads(ok))


def test_a_short_refused_document_is_read_by_the_own_steps_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Windows and runs cost more than they save on a few items (a rejected small
    # document, most of what a fuzzer feeds, took 3x as long with them); a longer
    # one still gets them. Both modes give the same verdict (_assert_modes_agree).
    modes: list[int] = []
    parse = strict_json._parse

    def spy(text: str, limits: JSONLimits, from_bytes: bool, mode: int = 0) -> Any:
        modes.append(mode)
        return parse(text, limits, from_bytes, mode)

    monkeypatch.setattr(strict_json, "_parse", spy)
    short = "[" + "0," * ((strict_json._OWN_STEPS_UP_TO - 3) // 2) + "]"
    long = "[" + "0," * strict_json._OWN_STEPS_UP_TO + "]"
    assert len(short) <= strict_json._OWN_STEPS_UP_TO < len(long)
    for doc in (short, long):
        with pytest.raises(StrictJSONError, match="trailing comma|expected"):
            loads(doc)
    assert modes == [strict_json._OWN, strict_json._ACCELERATED]


# --- the own steps' C-level shortcuts (issue 21, item 4: fuzz throughput) ------------
#
# Two shortcuts of the own steps (the mode that reads a short refused document): a
# chain of opening brackets opened in one step, and the flat items of an array
# (scalars and containers of scalars, each item with its comma) built by the json
# scanner in one step. The reference is the own steps with both disabled: same value,
# or same error class, place and message.

_PIECES = ["[", "[[", "[ [", "[\n[[", "]", "]]", ",", ", ", "0", "-0", "01", "1.5", "1e400",
           "-", "1234567890123", '"ab"', '"' + "x" * 14 + '"', '"\\u0041"', '"\\ud800"',
           "true", "nul", "{", "}", ":", '"k"', " ", "\n", "x", "[]", "[1,2,3,", "4,5,6",
           "[0],", "[1, 2],", '{"a":1},', '{"a":1,"a":2},', "{},", "[[0]],", '{"k":[1]},']


def _never(text: str, pos: int) -> None:
    return None


@contextlib.contextmanager
def _without_own_shortcuts() -> Any:
    saved = strict_json._OPEN_CHAIN, strict_json._runs_for
    strict_json._OPEN_CHAIN = re.compile(r"\[")  # a chain of one: nothing is taken
    strict_json._runs_for = lambda limits: (_never, _never)
    try:
        yield
    finally:
        strict_json._OPEN_CHAIN, strict_json._runs_for = saved


class _Seen:
    """Records which shortcut was reached (for ``hypothesis.event``)."""

    def __init__(self) -> None:
        self.chain = self.run = False
        self._chain, self._runs_for = strict_json._OPEN_CHAIN, strict_json._runs_for

    def __enter__(self) -> _Seen:
        chain, runs_for = self._chain, self._runs_for

        class Chain:
            def match(inner, text: str, pos: int) -> Any:  # noqa: N805
                found = chain.match(text, pos)
                self.chain = self.chain or found.group().count("[") > 1
                return found

        def recording_runs_for(limits: JSONLimits) -> Any:
            items, members = runs_for(limits)

            def match(text: str, pos: int) -> Any:
                found = items(text, pos)
                self.run = self.run or found is not None
                return found
            return match, members

        strict_json._OPEN_CHAIN = Chain()  # type: ignore[assignment]
        strict_json._runs_for = recording_runs_for
        return self

    def __exit__(self, *exc: object) -> None:
        strict_json._OPEN_CHAIN, strict_json._runs_for = self._chain, self._runs_for


def _loads_outcome(text: str, limits: JSONLimits) -> Any:
    try:
        return ("value", loads(text, limits=limits))
    except ContractError as exc:
        return (type(exc).__name__, exc.where, exc.message)


def _agree(fast: Any, slow: Any) -> None:
    if slow[0] == "value":
        assert fast[0] == "value" and same(fast[1], slow[1]), (fast[:2], slow[:2])
    else:
        assert fast == slow


@given(
    st.one_of(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=30).map("".join),
              _DOCUMENTS),
    st.sampled_from([DEFAULT_LIMITS, jv.SMALL_LIMITS]) | _ANY_LIMITS,
)
@example("[[[[[[[[1]]]]]]]]", JSONLimits(max_depth=5))
@example("[[ [\n[[]]]]]", DEFAULT_LIMITS)
@example("[[[[[[x", JSONLimits(max_values=3))
@example("[1,2,3,4,5,6,7,8]", JSONLimits(max_container_items=5))
@example("[1,2,3,4,5,6,7]", JSONLimits(max_container_items=5))
@example("[1,2,3,4,5,6,7]", JSONLimits(max_values=6))
@example("[1,2,3,4,5,6,7,8]", JSONLimits(max_values=5))
@example('[1,"abcdefgh",3,4]', JSONLimits(max_string_chars=4))
@example("[1,2,123456789,4,5]", JSONLimits(max_number_chars=4))
@example("[1,2,1e400,4,5]", DEFAULT_LIMITS)
@example("[1, 2 ,\n3,01,4]", DEFAULT_LIMITS)
@example("[[0],[0],[0],x", DEFAULT_LIMITS)
@example("[[1],[2],3]", JSONLimits(max_depth=1))
@example('[{"a":1,"a":2},0]', DEFAULT_LIMITS)
@example("[[1,2],[3,4],5,6]", JSONLimits(max_values=6))
@example("[[1,2],[3,4],5,6]", JSONLimits(max_values=7))
@example("[[1,2,3],0]", JSONLimits(max_container_items=2))
def test_own_step_shortcuts_agree_with_the_own_steps(text: str, limits: JSONLimits) -> None:
    with _Seen() as seen:
        own = _mode_outcome(text, limits, strict_json._OWN)
        through_loads = _loads_outcome(text, limits)
    event("bracket chain taken" if seen.chain else "no bracket chain")
    event("run of flat items matched" if seen.run else "no run of flat items")
    event("accepted" if own[0] == "value" else f"rejected: {own[0]}")
    with _without_own_shortcuts():
        _agree(own, _mode_outcome(text, limits, strict_json._OWN))
        _agree(through_loads, _loads_outcome(text, limits))
