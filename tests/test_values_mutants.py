"""``copy_json``'s limits check from a surviving mutant: a ``JSONLimits`` whose
constructor check was bypassed is re-checked (the guard turned off let a zero or
non-int limit through to the copy)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts._request import MAX_CONTROL_KEY_CHARS, check_request_controls
from pcfuzz.contracts._values import copy_json
from pcfuzz.contracts.errors import ContinuationError, InvalidArgument
from pcfuzz.contracts.strict_json import JSONLimits

_FIELDS = list(JSONLimits.__slots__)


def _bypassed(name: str, value: Any) -> JSONLimits:
    limits = JSONLimits()
    object.__setattr__(limits, name, value)  # what the frozen constructor would refuse
    return limits


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "3", None])
def test_a_bypassed_limit_is_rejected_when_used(bad: Any) -> None:
    with pytest.raises(InvalidArgument, match="must be a positive int") as info:
        copy_json([], what="value", limits=_bypassed("max_depth", bad))
    assert "JSONLimits.max_depth" in str(info.value)
    assert copy_json([], what="value", limits=_bypassed("max_depth", 1)) == []


@given(name=st.sampled_from(_FIELDS), bad=st.one_of(st.integers(max_value=0), st.booleans(),
                                                     st.floats(), st.text(max_size=2)))
def test_every_bypassed_limit_field_is_rechecked(name: str, bad: Any) -> None:
    event(f"{name}: {type(bad).__name__}")
    with pytest.raises(InvalidArgument, match=f"JSONLimits.{name}"):
        copy_json({}, what="value", limits=_bypassed(name, bad))


def test_a_request_controls_key_over_the_character_limit_is_rejected() -> None:
    """From a surviving mutant: the key-length guard of ``check_request_controls``
    turned off let a key of any length through."""
    longest = "k" * MAX_CONTROL_KEY_CHARS
    assert check_request_controls({longest: 1}, ("model",)) == {longest: 1}
    with pytest.raises(ContinuationError, match=f"over {MAX_CONTROL_KEY_CHARS} characters"):
        check_request_controls({longest + "k": 1}, ("model",))
