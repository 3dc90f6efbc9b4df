"""The error family and result-set binding (exactly one result per call)."""

from __future__ import annotations

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts import errors
from pcfuzz.contracts.digest import canonical_digest, check_digest
from pcfuzz.contracts.results import ModelVisibleToolResult, bind_results


def test_every_public_error_is_a_contract_error() -> None:
    dispositions = {errors.TRANSIENT, errors.REJECTED, errors.MISS}
    for name in errors.__all__:
        value = getattr(errors, name)
        if isinstance(value, type):
            assert issubclass(value, errors.ContractError), name
            assert value.disposition in dispositions, name
        else:
            assert value in dispositions or value == errors.DISPOSITIONS, name


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


@st.composite
def call_ids_and_results(draw: st.DrawFn) -> tuple[list[str], list[str], str]:
    """A turn's call ids and a result id list: exact (shuffled) or one fault injected."""
    call_ids = draw(st.lists(ids, unique=True, max_size=5))
    result_ids = list(draw(st.permutations(call_ids)))
    fault = draw(st.sampled_from(["exact", "missing", "extra", "duplicate"]))
    if fault == "missing" and result_ids:
        result_ids.pop(draw(st.integers(0, len(result_ids) - 1)))
    elif fault == "extra":
        result_ids.append(draw(ids.filter(lambda c: c not in call_ids)))
    elif fault == "duplicate" and result_ids:
        result_ids.append(draw(st.sampled_from(result_ids)))
    else:
        fault = "exact"
    return call_ids, result_ids, fault


@given(call_ids_and_results())
def test_binding_succeeds_iff_result_ids_equal_call_ids_exactly(
    case: tuple[list[str], list[str], str],
) -> None:
    call_ids, result_ids, fault = case
    event(f"fault: {fault}")
    try:
        bound = bind_results(call_ids, [R(c) for c in result_ids])
    except errors.ResultBindingError:
        assert fault != "exact"
    else:
        assert fault == "exact"
        assert list(bound) == call_ids
        assert all(bound[c].call_id == c for c in call_ids)


def test_digest_detects_nested_mutation() -> None:
    snapshot = {"items": [{"type": "function_call", "arguments": {"a": [1, 2]}}]}
    recorded = canonical_digest(snapshot)
    check_digest(snapshot, recorded)
    snapshot["items"][0]["arguments"]["a"].append(3)  # type: ignore[index]
    with pytest.raises(errors.SnapshotMutated):
        check_digest(snapshot, recorded)


def test_digest_rejects_non_json_values_as_mutation() -> None:
    with pytest.raises(errors.SnapshotMutated):
        canonical_digest({"x": float("nan")})
    with pytest.raises(errors.SnapshotMutated):
        canonical_digest({"x": object()})


def test_contracts_import_only_the_standard_library() -> None:
    import ast
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "contracts"
    allowed = set(sys.stdlib_module_names) | {"contracts", "__future__"}
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] in allowed, f"{path.name} imports {name}"
