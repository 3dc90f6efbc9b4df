"""The fuzz targets instrument the code under test and nothing else, and start light.

Each target is imported in a fresh interpreter, as libFuzzer starts it, by
``tests/_instrumentation_probe.py``, then run on its seed corpus:

- no heavy module is imported at start-up (hypothesis and its JSON Schema plugin,
  jsonschema, and what ``importlib.metadata`` drags in: email, zipfile, socket);
- every module ``fuzz.harness.instrument`` patched is a module of ``pcfuzz.contracts``
  and every function written in it runs patched code;
- no function of any other module (standard library, strategies, harness, the target
  itself) carries atheris's instrumentation;
- every function of ``contracts/`` the seeds run is patched (a target whose list of
  modules under test misses one it runs fails here);
- the instrumentation cache gives the same code and the same counters as patching,
  and libFuzzer sees the same coverage features from either;
- the speed-ups of atheris's patcher (``instrument._speed_up_patcher``) leave the
  patched code as atheris's own steps make it.

A planted target proves the checks can fail. No timing is asserted: start-up times
are what ``pcfuzz bench --cases startup`` prints.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from pcfuzz.engine.targets import Layout, Target, discover
from pcfuzz.fuzz.harness import INSTRUMENT_CACHE_VARIABLE

pytest.importorskip("atheris")

LAYOUT = Layout.from_options()
TARGETS = discover(LAYOUT)
PROBE = Path(__file__).with_name("_instrumentation_probe.py")
#: Top-level packages no target may import at start-up.
HEAVY = ("hypothesis", "hypothesis_jsonschema", "jsonschema", "email", "zipfile", "socket")


def probe(path: Path, cache: Path, *extra: str) -> dict[str, Any]:
    env = {**os.environ, INSTRUMENT_CACHE_VARIABLE: str(cache), "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        [sys.executable, str(PROBE), str(path), *extra], env=env, capture_output=True,
        text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def heavy(report: dict[str, Any]) -> list[str]:
    return [m for m in report["modules"] if m.split(".")[0] in HEAVY
            or m == "importlib.metadata"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("instrumented")


@pytest.mark.parametrize("target", TARGETS, ids=[t.name for t in TARGETS])
def test_a_target_instruments_the_contracts_it_runs_and_nothing_else(
    target: Target, cache: Path
) -> None:
    report = probe(target.path, cache, "--seeds", str(target.seed_corpus))
    assert heavy(report) == [], f"{target.name} imports {heavy(report)} at start-up"
    assert report["instrumented"], f"{target.name} instruments nothing"
    outside = [m for m in report["instrumented"] if not m.startswith("pcfuzz.contracts.")]
    assert outside == [], f"{target.name} instruments {outside}"
    assert report["patched_elsewhere"] == [], (
        f"{target.name}: instrumented code outside the contracts")
    assert report["unpatched"] == [], f"{target.name}: functions left unpatched"
    assert report["ran"] > 0, f"the seeds of {target.name} ran no function of the contracts"
    assert report["ran_unpatched"] == [], (
        f"{target.name} runs contracts functions it does not instrument (add their "
        "modules to its instrument(...) list)")


@pytest.mark.parametrize("declared", ["_gateway_chat:naive", "_gateway_chat.py:naive"])
def test_an_adapters_target_instruments_the_contract_and_the_users_code_only(
        declared: str, tmp_path: Path) -> None:
    # The target `pcfuzz nightly --adapter` writes: the contract's stream path and the
    # user's code (a module's top-level package, or the file) patched, nothing else:
    # not the standard library the adapter imports, not the harness.
    from pcfuzz.nightly.adapters import parse_adapter, write_targets

    tests = Path(__file__).resolve().parent
    function = declared if ".py:" not in declared else str(tests / declared)
    layout = Layout(fuzz_dir=tmp_path / "fuzz", regressions_dir=tmp_path / "regs",
                    work_dir=tmp_path / "work")
    (target,) = write_targets([parse_adapter(f"openai-chat={function}")], layout, tests)
    report = probe(target.path, tmp_path / "cache", "--seeds", str(target.seed_corpus))
    assert heavy(report) == [], heavy(report)
    users = [m for m in report["instrumented"] if not m.startswith("pcfuzz.contracts.")]
    if ".py:" in declared:
        assert len(users) == 1 and users[0].startswith("_pcfuzz_adapter_"), users
    else:
        assert users == ["_gateway_chat"], users
    assert "pcfuzz.contracts.openai_chat._stream" in report["instrumented"]
    assert report["patched_elsewhere"] == [], report["patched_elsewhere"][:10]
    assert report["unpatched"] == [], report["unpatched"][:10]
    assert report["ran"] > 0 and report["ran_unpatched"] == [], report["ran_unpatched"]


def test_the_checks_catch_a_target_that_instruments_the_wrong_things(tmp_path: Path) -> None:
    # fuzz_source_url with its oracle taken from the hypothesis module, its code
    # under test left out of instrument(...), and a standard library module
    # instrumented the old way.
    original = (LAYOUT.fuzz_dir / "fuzz_source_url.py").read_text(encoding="utf-8")
    planted = original.replace(
        'with instrument(*contracts("errors", "provenance")):',
        'with atheris.instrument_imports():\n    import colorsys  # noqa: F401\n'
        'with instrument(*contracts("errors")):',
    ).replace("from pcfuzz.strategies.source_url_model import",
              "from pcfuzz.strategies.source_urls import")
    assert planted.count("colorsys") == 1 and "strategies.source_urls " in planted
    path = tmp_path / "fuzz_planted.py"
    path.write_text(planted, encoding="utf-8")
    seeds = LAYOUT.fuzz_dir / "corpus" / "fuzz_source_url"
    report = probe(path, tmp_path / "cache", "--seeds", str(seeds))
    assert "hypothesis" in heavy(report)
    assert any(name.startswith("colorsys.") for name in report["patched_elsewhere"])
    assert any(name.startswith("provenance.py:") for name in report["ran_unpatched"])


def test_the_instrumentation_cache_gives_the_code_that_patching_gives(tmp_path: Path) -> None:
    target = LAYOUT.fuzz_dir / "fuzz_wire_openai_chat.py"
    cold = probe(target, tmp_path)
    assert cold["cached"] == [] and list(tmp_path.glob("*.atheris"))
    warm = probe(target, tmp_path)
    assert warm["cached"] == warm["instrumented"] == cold["instrumented"]
    assert warm["code"] == cold["code"]
    assert warm["counters"] == cold["counters"]
    # A damaged file is a miss: every module is patched again, with the same
    # counters. (Not to the same bytes: which branch gets which of its module's
    # counters depends on the patcher's traversal order, which varies between
    # processes; the features libFuzzer counts do not, see the next test.)
    for path in tmp_path.glob("*.atheris"):
        path.write_bytes(b"damaged")
    again = probe(target, tmp_path)
    assert again["cached"] == [] and again["unpatched"] == []
    assert again["instrumented"] == cold["instrumented"]
    assert again["counters"] == cold["counters"]


_FEATURES = re.compile(r"INITED cov: (\d+) ft: (\d+)")


def test_libfuzzer_sees_the_same_coverage_from_cached_and_patched_modules(
    tmp_path: Path,
) -> None:
    target = next(t for t in TARGETS if t.name == "wire-gemini-interactions")
    env = {**os.environ, INSTRUMENT_CACHE_VARIABLE: str(tmp_path / "cache"),
           "PYTHONHASHSEED": "0"}
    figures = []
    for run in ("cold", "warm"):
        scratch = tmp_path / run
        scratch.mkdir()
        proc = subprocess.run(
            [sys.executable, str(target.path), "-runs=0", str(scratch),
             str(target.seed_corpus)],
            env=env, capture_output=True, text=True, timeout=300, check=False,
        )
        found = _FEATURES.search(proc.stderr)
        assert proc.returncode == 0 and found, proc.stderr[-2000:]
        figures.append((int(found.group(1)), int(found.group(2))))
    cold, warm = figures
    # Instrumented contracts give hundreds of coverage points on the seeds.
    assert cold[0] > 100
    assert warm == cold


def _function_codes(code: types.CodeType) -> list[types.CodeType]:
    """Every function, method and lambda code object inside ``code`` (nested ones too)."""
    found = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_flags & inspect.CO_OPTIMIZED and (
                    const.co_name == "<lambda>" or not const.co_name.startswith("<")):
                found.append(const)
            found += _function_codes(const)
    return found


def _fields(code: types.CodeType) -> tuple[Any, ...]:
    return (code.co_code, code.co_consts, code.co_names, code.co_varnames,
            code.co_stacksize, code.co_linetable, code.co_exceptiontable, code.co_flags)


def _per_instruction(one: Any, *, plain: bool = False) -> tuple[Any, ...]:
    """What the replaced ``Instruction`` methods give for ``one`` (an exception's
    type where they raise), with atheris's own methods if ``plain``."""
    from atheris import instrument_bytecode

    from pcfuzz.fuzz.harness import instrument

    cls = instrument_bytecode.Instruction
    results: list[Any] = []
    for name in ("length", "size", "to_bytes", "get_stack_effect"):
        method = instrument._PLAIN[name] if plain else cls.__dict__[name]
        call = method.fget if isinstance(method, property) else method
        try:
            results.append(call(one))
        except Exception as exc:  # noqa: BLE001 - the same failure both ways
            results.append(type(exc))
    return tuple(results)


def test_the_patcher_speed_ups_leave_the_patched_code_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each function of a stream target's modules, traced once by atheris's
    ``Instrumentor``, becomes the same code object with and without the speed-ups,
    each replaced method gives the same on each of its instructions (and on every
    argument width); and ``Instruction`` equality and hashing stay identity."""
    from atheris import instrument_bytecode

    from pcfuzz.fuzz.harness import instrument

    if not instrument._speed_up_patcher():
        pytest.skip("another atheris than the one the speed-ups were read against")
    instruction = instrument_bytecode.Instruction
    names = [*instrument.STREAM, *instrument.WIRE, *instrument.parser("openai-chat")]
    codes = []
    for name in names:
        origin = importlib.util.find_spec(name).origin  # type: ignore[union-attr]
        assert origin is not None
        source = Path(origin).read_bytes()
        codes += _function_codes(compile(source, origin, "exec", dont_inherit=True))
    assert len(codes) > 150
    differ = []
    for code in codes:
        instrumentor = instrument_bytecode.Instrumentor(code)
        instrumentor.trace_control_flow()
        instrumentor.trace_data_flow()
        with monkeypatch.context() as plain:  # atheris's own steps first
            for name, value in instrument._PLAIN.items():
                plain.setattr(instruction, name, value)
            assert instruction.expanded_instructions is not instrument._no_expansion
            slow = instrumentor.to_code()
        fast = instrumentor.to_code()
        if _fields(fast) != _fields(slow):
            differ.append(code.co_qualname)
        for one in instrumentor.instructions:  # each replaced method, one by one
            if _per_instruction(one) != _per_instruction(one, plain=True):
                differ.append(f"{code.co_qualname}: {one.mnemonic} {one.arg!r}")
    assert differ == []
    sentinel = instrument_bytecode._UncalculatedArgSentinel
    jump = instrument_bytecode._generate_instruction("JUMP_FORWARD", None)
    for arg in (None, sentinel, 0, 0xFF, 0x100, 0xFFFF, 0x10000, 0xFFFFFF, 0x1000000):
        jump.arg = arg
        assert _per_instruction(jump) == _per_instruction(jump, plain=True), arg

    one = instrument_bytecode._generate_instruction("NOP", 0)
    other = instrument_bytecode._generate_instruction("NOP", 0)
    assert one == one and one != other and len({one, other, one}) == 2
    assert [other, one].index(one) == 1 and hash(one) == hash(one)
