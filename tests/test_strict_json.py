"""contracts.strict_json: strict JSON with explicit limits, equal to json.loads on acceptance.

Example tests name every JSON case of the seed's "Fixture provenance" and "Data
boundary" rows (duplicate keys, non-finite values, BOM, non-UTF-8, overly deep /
large / long JSON) plus the loader's own rules; property tests generalize them with
the strategies in ``strategies.json_values``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from contracts import strict_json
from contracts.errors import ContractError, LimitExceeded, StrictJSONError
from contracts.strict_json import DEFAULT_LIMITS, JSONLimits, loads
from strategies import json_values as jv

ROOT = Path(__file__).resolve().parent.parent


def same(a: Any, b: Any) -> bool:
    """Deep equality that also compares types (True is not 1, 1 is not 1.0), the
    sign of zero and key order. Iterative: documents may nest 512 levels."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, float):
            if x != y or math.copysign(1.0, x) != math.copysign(1.0, y):
                return False
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(x, dict):
            if list(x) != list(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif x != y:
            return False
    return True


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
        expected = iterative(doc.text, lim)
    except ContractError as exc:
        event(f"iterative rejects: {type(exc).__name__}")
        with pytest.raises(type(exc)):
            loads(doc.text, limits=lim)
        return
    event("iterative accepts")
    assert same(loads(doc.text, limits=lim), expected)


# --- the fuzz target ---------------------------------------------------------------


def test_fuzz_target_runs_over_its_seed_corpus() -> None:
    import importlib.util

    path = ROOT / "fuzz" / "fuzz_strict_json.py"
    pytest.importorskip("atheris")
    spec = importlib.util.spec_from_file_location("fuzz_strict_json_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    corpus = sorted((ROOT / "fuzz" / "corpus" / "fuzz_strict_json").iterdir())
    assert len(corpus) >= 10
    for seed in corpus:
        module.TestOneInput(seed.read_bytes())
