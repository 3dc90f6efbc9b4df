"""Promoted property-test failures, replayed by pytest.

Each ``tests/regressions/properties/<fingerprint>.json`` (written by ``pcfuzz promote``
from the document the nightly property run captured, format
``pcfuzz-property-regression/2``) holds the calls a failing property made into the
contracts and the event list it ran. Its calls run again, in order, against the
current contracts: any exception other than a ``ContractError`` escaping a call fails
the test (``expect: "crash"`` makes it a strict xfail, a known open bug). A document
names contract entry points of a closed table, never code: one naming anything else
fails its test before any call runs.
``PCFUZZ_REGRESSIONS_DIR`` points the replay at another store (the nightly tests use it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pcfuzz.engine.property_regressions import load, replay, store_dir
from pcfuzz.engine.targets import Layout
from pcfuzz.errors import UsageError

STORE = store_dir(Layout.from_options().regressions_dir)


def _cases() -> list[object]:
    cases: list[object] = []
    for path in sorted(STORE.glob("*.json")) if STORE.is_dir() else []:
        marks = []
        try:
            expect = load(path).get("expect")
        except UsageError:
            expect = "pass"  # the test reports the bad document (nothing of it runs)
        if expect == "crash":
            marks.append(pytest.mark.xfail(strict=True, reason=f"known open bug {path.stem}"))
        cases.append(pytest.param(path, id=path.name, marks=marks))
    if not cases:  # say why nothing ran, rather than pytest's "empty parameter set"
        cases.append(pytest.param(None, id="empty-store", marks=pytest.mark.skip(
            reason="no property failure promoted yet (pcfuzz promote FILE.json adds one)")))
    return cases


@pytest.mark.parametrize("path", _cases())
def test_promoted_property_failure_no_longer_fails(path: Path) -> None:
    doc = load(path)
    result = replay(doc)
    assert not result.reproduces, (
        f"{path.name} ({doc.get('test')}, contract {doc.get('contract')} revision "
        f"{doc.get('revision')}): {result.text()}")
