"""Shared pieces of the oracle tests (tests/test_oracles_*.py): marks and the
conformance check against the SDK types (strategies/sdk_oracles.py)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import event

from pcfuzz.strategies import sdk_oracles


def marks(distribution: str) -> list[pytest.MarkDecorator]:
    """``oracle``, skipped with the reason when the SDK is absent."""
    reason = sdk_oracles.missing(distribution)
    return [pytest.mark.oracle, pytest.mark.skipif(reason is not None, reason=reason or "")]


def assert_conforms(contract: str, events: list[Any], revision: str | None = None) -> set[str]:
    """Every finding is a named difference of ``revision`` (``None``: only the
    differences of every revision); the names of those seen (also as events)."""
    seen: set[str] = set()
    unexplained = []
    for n, ev in enumerate(events):
        for finding in sdk_oracles.validate(contract, ev, f"event {n}"):
            difference = sdk_oracles.explain(contract, ev, finding, revision)
            if difference is None:
                unexplained.append(finding)
            else:
                seen.add(difference.name)
    if unexplained:  # not `assert`: helpers are not rewritten, and -O strips asserts
        raise AssertionError(f"generator shapes the SDK rejects: {unexplained[:3]}")
    for name in sorted(seen):
        event(f"named difference: {name}")
    return seen
