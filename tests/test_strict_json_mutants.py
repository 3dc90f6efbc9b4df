"""Strict JSON tests written from a surviving mutant (``pcfuzz mutants``): the
one-regex object-key path applies the string length limit to the key exactly at the
limit (``>`` -> ``>=`` rejects a key at the limit; the guard off accepts a long key).
"""

from __future__ import annotations

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts.errors import LimitExceeded
from pcfuzz.contracts.strict_json import JSONLimits, loads


@given(limit=st.integers(1, 40), over=st.integers(0, 2), escaped=st.booleans())
def test_object_key_length_limit_is_exact_on_both_key_paths(
    limit: int, over: int, escaped: bool
) -> None:
    # An escape sends the key down the general string path; without one it takes the
    # one-regex path. Both apply max_string_chars to the decoded key, exactly.
    event(f"{'escaped' if escaped else 'plain'} key, {over} over the limit")
    key = "k" * (limit + over)
    raw = key if not escaped else "\\u006b" + key[1:]
    text = '{"a": 1, "' + raw + '": 2}'
    limits = JSONLimits(max_string_chars=limit)
    if over == 0:
        assert loads(text, limits=limits) == {"a": 1, key: 2}
    else:
        with pytest.raises(LimitExceeded, match="characters"):
            loads(text, limits=limits)


@pytest.mark.parametrize("bad", [0, -(10**5000), None, 1.5, object()],
                         ids=["zero", "huge-negative", "none", "float", "object"])
def test_a_bad_jsonlimits_field_is_an_invalid_argument(bad: object) -> None:
    # a ContractError (and still a ValueError), whose message never calls repr() on a
    # caller's object or an int past the interpreter's digit limit
    from pcfuzz.contracts.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="JSONLimits.max_depth must be a positive int"):
        JSONLimits(max_depth=bad)  # type: ignore[arg-type]
