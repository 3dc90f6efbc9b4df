"""The shared value kinds (``contracts/_kinds.py``), from a surviving mutant: a
``number`` is a finite float or an int64 (``and`` -> ``or`` let NaN and the
infinities through)."""

from __future__ import annotations

import math

from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts._kinds import INT64_MAX, INT64_MIN, kind_ok


def test_non_finite_floats_are_not_numbers() -> None:
    for value in (math.inf, -math.inf, math.nan):
        assert not kind_ok(value, "number"), value
    assert kind_ok(1.5, "number") and kind_ok(-0.0, "number") and kind_ok(3, "number")


@given(value=st.floats())
def test_a_float_is_a_number_exactly_when_finite(value: float) -> None:
    event("finite" if math.isfinite(value) else "non-finite")
    assert kind_ok(value, "number") is math.isfinite(value)


def test_an_int_is_a_64_bit_integer_and_never_a_bool_or_a_float() -> None:
    """From a surviving mutant: ``INT64_MIN <= value <= INT64_MAX`` flipped to
    ``INT64_MIN > value <= INT64_MAX`` accepted only integers below the range."""
    for value in (0, 1, -1, INT64_MAX, INT64_MIN):
        assert kind_ok(value, "int"), value
    for value in (INT64_MAX + 1, INT64_MIN - 1, True, 1.0):
        assert not kind_ok(value, "int"), value
