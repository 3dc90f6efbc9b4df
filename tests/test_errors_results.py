"""The error family and result-set binding (exactly one result per call)."""

from __future__ import annotations

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from contracts import errors
from contracts.results import ModelVisibleToolResult, bind_results


def test_every_public_error_is_a_contract_error() -> None:
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.ContractError), name


def test_error_message_says_where() -> None:
    exc = errors.ProtocolViolation("sequence_number must increase", where="event 7")
    assert "event 7" in str(exc) and exc.where == "event 7"


def R(call_id: str, output: str = "ok") -> ModelVisibleToolResult:
    return ModelVisibleToolResult(call_id=call_id, output=output)


def test_exactly_one_result_per_call_binds_in_call_order() -> None:
    bound = bind_results(["b", "a"], [R("a"), R("b")])
    assert list(bound) == ["b", "a"]


@pytest.mark.parametrize(
    "results, fault",
    [
        ([R("a")], "missing"),
        ([R("a"), R("b"), R("c")], "unknown call"),
        ([R("a"), R("a"), R("b")], "duplicate"),
    ],
)
def test_missing_extra_duplicate_results_fail(results: list[ModelVisibleToolResult],
                                              fault: str) -> None:
    with pytest.raises(errors.ResultBindingError, match=fault):
        bind_results(["a", "b"], results)


def test_results_must_be_model_visible_type() -> None:
    with pytest.raises(errors.ResultBindingError, match="not ModelVisibleToolResult"):
        bind_results(["a"], [{"call_id": "a", "output": "x"}])  # type: ignore[list-item]


def test_mapping_key_must_equal_call_id() -> None:
    with pytest.raises(errors.ResultBindingError, match="differs"):
        bind_results(["a"], {"a": R("b")})


def test_result_output_must_be_text() -> None:
    with pytest.raises(errors.ResultBindingError):
        ModelVisibleToolResult(call_id="a", output=None)  # type: ignore[arg-type]


ids = st.text(min_size=1, max_size=4)


@given(st.lists(ids, unique=True, max_size=5), st.lists(ids, max_size=7))
def test_binding_succeeds_iff_result_ids_equal_call_ids_exactly(
    call_ids: list[str], result_ids: list[str]
) -> None:
    exact = sorted(result_ids) == sorted(call_ids)
    event("exact set" if exact else "mismatched set")
    try:
        bound = bind_results(call_ids, [R(c) for c in result_ids])
    except errors.ResultBindingError:
        assert not exact
    else:
        assert exact and list(bound) == call_ids
