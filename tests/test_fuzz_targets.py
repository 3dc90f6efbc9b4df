"""Every fuzz target, replayed by pytest: seed corpus and regression store.

Targets are discovered (``fuzz/fuzz_*.py``), so a new target is covered as soon as it
lands. For each target:

- it follows the conventions libFuzzer's fork/merge/minimize modes and OSS-Fuzz rely on
  (executable, ``#!/usr/bin/env python3`` shebang, ``TestOneInput`` at module level,
  a dictionary, a non-empty seed corpus);
- every seed corpus input runs through ``TestOneInput`` without an exception escaping;
- every regression input (``tests/regressions/fuzz_<name>/``) does too. A regression
  whose sidecar says ``"expect": "crash"`` (a known open bug) is a strict xfail: it
  must still crash, and its fix turns the run red until the sidecar is updated
  (``pcfuzz replay --update``). Any other regression that crashes fails the suite, so a
  freshly promoted crash is red until fixed.

``PCFUZZ_FUZZ_DIR`` and ``PCFUZZ_REGRESSIONS_DIR`` point the replay at another tree
(the ``pcfuzz`` command's own tests use that).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from _fuzz import load_fuzz_target

from pcfuzz.engine.property_regressions import store_dir
from pcfuzz.engine.regressions import entries, input_files
from pcfuzz.engine.targets import Layout, Target, discover

LAYOUT = Layout.from_options()
TARGETS = discover(LAYOUT)
_MODULES: dict[Path, ModuleType] = {}


def _load(target: Target) -> ModuleType:
    if target.path not in _MODULES:
        _MODULES[target.path] = load_fuzz_target(
            target.path, module_name=f"_fuzz_target_{target.fuzzer}"
        )
    return _MODULES[target.path]


def _entry(target: Target) -> Callable[[bytes], None]:
    fn = getattr(_load(target), "TestOneInput", None)
    assert callable(fn), f"{target.path.name} defines no module-level TestOneInput"
    return fn  # type: ignore[no-any-return]


def _corpus_cases() -> list[object]:
    cases: list[object] = []
    for t in TARGETS:
        for path in input_files(t.seed_corpus):
            cases.append(pytest.param(t, path, id=f"{t.fuzzer}/{path.name}"))
    return cases


def _regression_cases() -> list[object]:
    cases: list[object] = []
    for t in TARGETS:
        for e in entries(t.regressions):
            marks = []
            if e.expect == "crash":
                marks.append(
                    pytest.mark.xfail(
                        strict=True,
                        raises=Exception,
                        reason=f"known open bug {e.fingerprint} (sidecar expect: crash)",
                    )
                )
            cases.append(pytest.param(t, e.path, id=f"{t.fuzzer}/{e.path.name}", marks=marks))
    return cases


@pytest.mark.parametrize("target", TARGETS, ids=[t.fuzzer for t in TARGETS])
def test_target_follows_libfuzzer_and_oss_fuzz_conventions(target: Target) -> None:
    first = target.path.read_text(encoding="utf-8").splitlines()[0]
    assert first == "#!/usr/bin/env python3", f"{target.path.name}: shebang is {first!r}"
    assert os.access(target.path, os.X_OK), (
        f"{target.path.name} is not executable; libFuzzer's fork/merge/minimize modes "
        "re-run it by its own command line"
    )
    assert target.dict_path is not None, f"{target.fuzzer}.dict is missing"
    assert input_files(target.seed_corpus), f"seed corpus corpus/{target.fuzzer}/ is empty"
    _entry(target)


@pytest.mark.parametrize(("target", "path"), _corpus_cases())
def test_seed_corpus_input_replays_without_crash(target: Target, path: Path) -> None:
    _entry(target)(path.read_bytes())


@pytest.mark.parametrize(("target", "path"), _regression_cases())
def test_regression_input_no_longer_crashes(target: Target, path: Path) -> None:
    _entry(target)(path.read_bytes())


def test_every_regression_directory_names_an_existing_target() -> None:
    # `properties/` holds promoted property-test failures (tests/test_property_regressions.py)
    known = {t.fuzzer for t in TARGETS} | {store_dir(LAYOUT.regressions_dir).name}
    root = LAYOUT.regressions_dir
    dirs = [p for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
    orphans = sorted(p.name for p in dirs if p.name not in known)
    assert not orphans, f"regression folders without a target: {orphans}"
