"""The public names ARCHITECTURE promises, checked across all four contracts.

Every contract module has ``parse_events`` and an incremental stream class with
``feed``/``close``; every turn has ``.calls``, ``.digest`` and keeps its raw data;
every call has ``.call_id``, ``.name`` and ``.arguments`` (a dict). The golden
fixture of each contract parses to a turn whose calls are released, and the same
events fed one by one give the same turn (split invariance).
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from pcfuzz.contracts.errors import ContractError, StreamTruncated
from pcfuzz.contracts.fixtures import load_fixture
from pcfuzz.contracts.registry import CONTRACTS as REGISTERED

ROOT = Path(__file__).resolve().parent.parent


def _chat_frames(events: list[Any]) -> list[Any]:
    from pcfuzz.contracts.openai_chat import frames_from_fixture_events

    return list(frames_from_fixture_events(events))


def _same(events: list[Any]) -> list[Any]:
    return events


#: Fixture events to parser input where the two differ (Chat's fixtures hold its frames'
#: JSON form; its parser takes frames and the DONE sentinel).
_INPUTS: dict[str, Callable[[list[Any]], list[Any]]] = {"openai-chat": _chat_frames}
# contract -> (module, stream class, fixture-events-to-parser-input), from the registry
CONTRACTS: dict[str, tuple[str, str, Callable[[list[Any]], list[Any]]]] = {
    c.name: (f"pcfuzz.contracts.{c.package}", c.stream_class, _INPUTS.get(c.name, _same))
    for c in REGISTERED
}


def _fixture_input(contract: str) -> list[Any]:
    fixture = load_fixture(ROOT / "fixtures" / f"{contract.replace('-', '_')}.json")
    assert fixture.contract == contract
    return CONTRACTS[contract][2](list(fixture.events))


def _call_view(calls: Iterable[Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(c.call_id, c.name, c.arguments) for c in calls]


@pytest.mark.parametrize("contract", sorted(CONTRACTS))
def test_fixture_turn_exposes_the_promised_names(contract: str) -> None:
    module = importlib.import_module(CONTRACTS[contract][0])
    turn = module.parse_events(copy.deepcopy(_fixture_input(contract)))
    assert isinstance(turn.calls, tuple)
    assert len(turn.calls) >= 2, "each golden fixture holds two parallel calls"
    for call in turn.calls:
        assert isinstance(call.call_id, str) and call.call_id
        assert isinstance(call.name, str) and call.name
        assert isinstance(call.arguments, dict)
    assert len({c.call_id for c in turn.calls}) == len(turn.calls)
    assert isinstance(turn.digest, str) and len(turn.digest) == 64


@pytest.mark.parametrize("contract", sorted(CONTRACTS))
def test_incremental_feed_equals_whole_parse(contract: str) -> None:
    name, stream_class, _ = CONTRACTS[contract]
    module = importlib.import_module(name)
    events = _fixture_input(contract)
    whole = module.parse_events(copy.deepcopy(events))
    stream = getattr(module, stream_class)()
    for event in copy.deepcopy(events):
        stream.feed(event)
    incremental = stream.close()
    assert _call_view(incremental.calls) == _call_view(whole.calls)
    assert incremental.digest == whole.digest


@pytest.mark.parametrize("contract", sorted(CONTRACTS))
def test_every_proper_prefix_of_the_fixture_releases_nothing(contract: str) -> None:
    module = importlib.import_module(CONTRACTS[contract][0])
    events = _fixture_input(contract)
    for cut in range(len(events)):
        try:
            turn = module.parse_events(copy.deepcopy(events[:cut]))
        except ContractError as exc:
            # Truncation is the expected outcome; an empty stream may be a violation.
            assert cut == 0 or isinstance(exc, StreamTruncated), (cut, exc)
        else:
            pytest.fail(f"{contract}: prefix of {cut}/{len(events)} events gave a turn "
                        f"with {len(turn.calls)} calls")


@pytest.mark.parametrize("contract", sorted(CONTRACTS))
def test_stream_is_poisoned_after_an_error(contract: str) -> None:
    name, stream_class, _ = CONTRACTS[contract]
    module = importlib.import_module(name)
    events = _fixture_input(contract)
    stream = getattr(module, stream_class)()
    with pytest.raises(ContractError):
        stream.feed({"this is": "not an event of any contract"})
    # A valid continuation cannot revive it.
    with pytest.raises(ContractError):
        stream.feed(copy.deepcopy(events[0]))
    with pytest.raises(ContractError):
        stream.close()


# ------------------------------------------------------------------ one shape

PACKAGE_MODULES = ("__init__.py", "_tables.py", "_stream.py", "_turn.py", "continuation.py")
CONTRACTS_DIR = ROOT / "contracts"


def _package(contract: str) -> Path:
    return CONTRACTS_DIR / CONTRACTS[contract][0].split(".")[-1]


def _imports(path: Path) -> list[tuple[int, str]]:
    """(level, module) of every import in a file: level 0 is absolute."""
    import ast

    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or ""))
        elif isinstance(node, ast.Import):
            found.extend((0, alias.name) for alias in node.names)
    return found


@pytest.mark.parametrize("contract", sorted(CONTRACTS))
def test_every_contract_is_a_package_of_the_same_modules(contract: str) -> None:
    package = _package(contract)
    assert package.is_dir(), f"{contract}: contracts/{package.name}/ is not a package"
    for name in PACKAGE_MODULES:
        assert (package / name).is_file(), f"{contract}: {package.name}/{name} is missing"


@pytest.mark.parametrize("contract", sorted(CONTRACTS))
def test_the_registry_lists_the_revisions_each_package_ships(contract: str) -> None:
    """``pcfuzz check --revision`` lists revisions from the registry, without importing
    the packages; each package's ``REVISIONS`` keys are its entry's, in order."""
    module = importlib.import_module(CONTRACTS[contract][0])
    (registered,) = [c for c in REGISTERED if c.name == contract]
    assert tuple(module.REVISIONS) == registered.revisions
    assert module.REVISION in registered.revisions


def test_tables_whose_revisions_differ_from_the_registry_fail_at_import() -> None:
    from pcfuzz.contracts.registry import check_revisions

    check_revisions("openai-chat", ["2026-07-21", "2026-12-01"])
    for wrong in (["2026-07-21"], ["2026-12-01", "2026-07-21"],
                  ["2026-07-21", "2026-12-01", "2027-01-01"]):
        with pytest.raises(RuntimeError, match="registry entry"):
            check_revisions("openai-chat", wrong)


@pytest.mark.parametrize("contract", sorted(CONTRACTS))
def test_package_init_only_reexports(contract: str) -> None:
    import ast

    tree = ast.parse((_package(contract) / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            continue
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
                "__all__"]:
            continue
        pytest.fail(f"{contract}: __init__.py line {node.lineno} is not a re-export")


@pytest.mark.parametrize("contract", sorted(CONTRACTS))
def test_continuation_never_imports_the_stream(contract: str) -> None:
    imported = _imports(_package(contract) / "continuation.py")
    # ``.._stream`` (the shared stream helpers) is fine; ``._stream`` is the parser.
    assert (1, "_stream") not in imported, f"{contract}: continuation.py imports the stream"


def test_contracts_imports_only_the_standard_library_and_itself_relatively() -> None:
    import sys

    for path in sorted(CONTRACTS_DIR.rglob("*.py")):
        for level, module in _imports(path):
            if level:
                continue
            top = module.split(".")[0]
            assert top in sys.stdlib_module_names or top == "__future__", (
                f"{path.relative_to(ROOT)} imports {module!r}: only the standard library, "
                "and contracts itself relatively")


def test_contracts_never_decide_a_type_with_isinstance() -> None:
    # isinstance() believes (and runs) a ``__class__`` property, so a caller's object
    # could steer a branch or raise from it: every type test in contracts/ is
    # ``type(x) is T`` or ``issubclass(type(x), T)`` (tests/test_hostile_arguments.py,
    # test_every_impostor_in_every_argument_raises_only_contract_errors).
    import ast

    found = []
    for path in sorted(CONTRACTS_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "isinstance"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, f"isinstance() in contracts/: {found}"


def test_every_error_class_lives_in_errors() -> None:
    import pkgutil

    import pcfuzz.contracts as contracts
    from pcfuzz.contracts import errors

    for info in pkgutil.walk_packages(contracts.__path__, "pcfuzz.contracts."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if not (isinstance(value, type) and issubclass(value, BaseException)):
                continue
            if issubclass(value, ContractError):
                assert value.__module__ == "pcfuzz.contracts.errors", (
                    f"{info.name} defines error class {value.__name__}")
                assert getattr(errors, value.__name__) is value
            else:
                # Only private control-flow exceptions that never leave their module.
                assert value.__module__ == "builtins" or value.__name__.startswith("_"), (
                    f"{info.name} defines public exception {value.__name__}")


@pytest.mark.parametrize("contract", sorted(CONTRACTS))
def test_same_names_for_the_same_concept(contract: str) -> None:
    name, stream_class, _ = CONTRACTS[contract]
    module = importlib.import_module(name)
    assert isinstance(module.REVISION, str) and module.REVISION in module.REVISIONS
    assert all(type(t).__name__ == "RevisionTables" for t in module.REVISIONS.values())
    assert not hasattr(module, "CONTRACT_REVISION") and not hasattr(module, "PINNED_REVISION")
    turn = module.parse_events(copy.deepcopy(_fixture_input(contract)))
    assert turn.revision == module.REVISION
    stream = getattr(module, stream_class)()
    assert stream.revision == module.REVISION and stream.poisoned is False


@pytest.mark.parametrize("contract", sorted(CONTRACTS))
def test_turn_and_stream_satisfy_the_protocols(contract: str) -> None:
    from pcfuzz.contracts._protocols import CallProtocol, StreamProtocol, TurnProtocol

    name, stream_class, _ = CONTRACTS[contract]
    module = importlib.import_module(name)
    turn = module.parse_events(copy.deepcopy(_fixture_input(contract)))
    stream = getattr(module, stream_class)()
    for protocol, value in ((TurnProtocol, turn), (StreamProtocol, stream)):
        for member in protocol.__dict__:
            if not member.startswith("_"):
                assert hasattr(value, member), f"{contract}: {type(value).__name__}.{member}"
    for call in turn.calls:
        for member in ("call_id", "name", "arguments"):
            assert hasattr(call, member)
    assert CallProtocol is not None


@pytest.mark.parametrize("contract", sorted(CONTRACTS))
def test_snapshot_is_what_the_digest_covers_and_check_unchanged_sees_mutation(
        contract: str) -> None:
    from pcfuzz.contracts.digest import canonical_digest
    from pcfuzz.contracts.errors import SnapshotMutated

    module = importlib.import_module(CONTRACTS[contract][0])
    turn = module.parse_events(copy.deepcopy(_fixture_input(contract)))
    snapshot = turn.snapshot()
    assert isinstance(snapshot, dict)
    assert canonical_digest(snapshot) == turn.digest
    turn.check_unchanged()
    turn.calls[0].arguments["injected"] = True
    with pytest.raises(SnapshotMutated):
        turn.check_unchanged()
