"""``contracts._values``: the fast path of ``copy_json`` against its general path.

``fast_copy`` handles small values of exact builtin types with the default bounds
and answers ``NOT_FAST`` for anything else; ``copy_json`` then runs its general
(iterative, path-tracking) copier. The rule under test: the fast path never accepts
what the general path rejects, and what it returns is the general path's copy
exactly (types included: ``True`` is not ``1``, ``1`` is not ``1.0``), sharing no
container with the input.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts._request import check_request_controls
from pcfuzz.contracts._values import NOT_FAST, copy_caller_json, copy_json, fast_copy
from pcfuzz.contracts.errors import (
    ContinuationError,
    ContractError,
    LimitExceeded,
    ProtocolViolation,
)
from pcfuzz.contracts.strict_json import JSONLimits
from pcfuzz.strategies.json_values import json_values, same


class SubStr(str):
    pass


class SubInt(int):
    pass


class RaisingDict(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        raise KeyError("items")

    def __iter__(self) -> Any:
        raise KeyError("__iter__")


def general(value: object) -> Any:
    """copy_json's general path: explicit limits never take the fast path."""
    return copy_json(value, what="value", limits=JSONLimits())


def containers(value: Any) -> set[int]:
    found: set[int] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            found.add(id(node))
            stack.extend(node.values())
        elif type(node) is list:
            found.add(id(node))
            stack.extend(node)
    return found


def test_fast_path_keeps_exact_types_and_shares_nothing() -> None:
    value = {"a": 1, "b": True, "c": 1.0, "d": None, "e": "Zürich", "f": [1, True, 1.0],
             "g": {"h": False}}
    copied = fast_copy(value)
    assert copied is not NOT_FAST
    assert same(copied, value)  # a copier that normalized 1.0 or True to 1 fails here
    assert not containers(copied) & containers(value)
    assert same(copy_json(value, what="v"), value)


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ({"\ud800": 1}, ProtocolViolation),
        ({"k": "\udc00"}, ProtocolViolation),
        ({"k": [float("nan")]}, ProtocolViolation),
        ({"k": float("inf")}, ProtocolViolation),
        ({"k": 10**1000}, LimitExceeded),
        ({"k": (1, 2)}, ProtocolViolation),
        ({1: "k"}, ProtocolViolation),
        ({SubStr("k"): 1}, ProtocolViolation),
    ],
)
def test_what_the_general_path_rejects_never_takes_the_fast_path(
    value: Any, error: type[ContractError]
) -> None:
    assert fast_copy(value) is NOT_FAST
    with pytest.raises(error):
        copy_json(value, what="v")


def test_subclasses_and_deep_values_are_left_to_the_general_path() -> None:
    # Accepted, but by the general path, which reads subclasses through the builtin
    # methods and converts them; the fast path never calls a caller's method.
    for value in ({"k": SubStr("x")}, {"k": SubInt(3)}, RaisingDict(k=1),
                  {"a": {"b": {"c": 1}}}):
        assert fast_copy(value) is NOT_FAST
        assert same(copy_json(value, what="v"), general(value))


_odd_scalars = st.sampled_from(
    [float("nan"), float("inf"), 10**1000, -(10**1000), "\ud800", SubStr("s"), SubInt(1),
     (1,), b"x", object()]
)


@st.composite
def mixed_values(draw: st.DrawFn) -> Any:
    """JSON values with, sometimes, one value JSON cannot carry somewhere inside."""
    value = draw(json_values(max_leaves=12))
    if not draw(st.booleans()):
        return value
    odd = draw(_odd_scalars)
    if type(value) is dict and draw(st.booleans()):
        key = draw(st.sampled_from(["k", "\udfff", 7]))
        value[key] = odd  # type: ignore[index]
    elif type(value) is list:
        value.append(odd)
    elif type(value) is dict:
        inner = draw(st.sampled_from([[odd], {"x": odd}]))
        value["nested"] = inner
    else:
        value = [value, odd]
    return value


@given(mixed_values())
def test_fast_copy_is_the_general_copy_or_not_fast(value: Any) -> None:
    fast = fast_copy(value)
    try:
        expected = general(value)
    except ContractError:
        event("rejected by the general path")
        assert fast is NOT_FAST
        return
    if fast is NOT_FAST:
        event("accepted, general path")
        return
    event("accepted, fast path")
    assert same(fast, expected)
    assert not containers(fast) & containers(value)


def test_float_check_matches_isfinite() -> None:
    for real in (0.0, -0.0, 1e308, -1e308, 5e-324, float("nan"), float("inf"), float("-inf")):
        assert (fast_copy(real) is not NOT_FAST) == math.isfinite(real)


def test_request_controls_errors_from_inside_a_value_are_located() -> None:
    # Naive: copy_json without where= leaves the location empty for a bad nested value.
    with pytest.raises(ContinuationError) as bad:
        check_request_controls({"temperature": [float("nan")]}, ("model",))
    assert bad.value.where == "request_controls"
    deep: Any = 1
    for _ in range(600):
        deep = [deep]
    with pytest.raises(LimitExceeded) as big:
        check_request_controls({"x": deep}, ("model",), what="controls")
    assert big.value.where == "controls"


class _ClaimsTuple(list):  # type: ignore[type-arg]
    """A list that tells isinstance() it is a tuple."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return tuple


class _EvilTuple(tuple):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        raise RuntimeError("caller code ran")


def test_copy_caller_json_reads_tuples_through_tuple_and_never_trusts_class() -> None:
    # Naive (isinstance + tuple.__len__): the impostor escaped as a TypeError.
    assert copy_caller_json(_ClaimsTuple([1, 2]), "x", error=ContinuationError) == [1, 2]
    assert copy_caller_json(_EvilTuple((1, {"a": 2})), "x", error=ContinuationError) == [
        1, {"a": 2}]
    with pytest.raises(ContinuationError, match="must be a list") as caught:
        copy_caller_json({"a": 1}, "tools", error=ContinuationError, list_only=True)
    assert caught.value.where == "tools"
    with pytest.raises(LimitExceeded) as big:
        copy_caller_json((0,) * (JSONLimits().max_container_items + 1), "history",
                         error=ContinuationError)
    assert big.value.where == "history"


@given(st.lists(st.integers(-5, 5), max_size=8), st.booleans())
def test_copy_caller_json_copies_a_tuple_as_the_equal_list(items: list[int], as_tuple: bool) -> None:
    event(f"tuple: {as_tuple}")
    value = tuple(items) if as_tuple else items
    copied = copy_caller_json(value, "v", error=ContinuationError, list_only=True)
    assert copied == items and copied is not value
