"""pytest plugin the nightly job loads (``-p fuzz._pytest_budget``) to spend the
property suite's share of the budget where it finds something.

- ``PCFUZZ_PROPERTIES_ONLY=1``: only hypothesis tests run (``@given`` tests and
  rule-based state machines); example tests are deterministic, CI runs them on every
  push, and a night adds nothing to them. The rest are deselected.
- ``PCFUZZ_PROPERTY_SHUFFLE_SEED``: the tests run in an order shuffled by this seed
  (the nightly job uses the date), so when the budget runs out, a different part of
  the suite is left out each night instead of always the same tail.
- ``PCFUZZ_PROPERTY_BUDGET_S`` (seconds, counted from the end of collection): tests
  that would start after it are skipped with the reason "nightly property budget
  exhausted" (they show in the JUnit report as skipped, not silently missing).
- ``PCFUZZ_PROPERTY_MAX_EXAMPLES`` (int): caps ``max_examples`` of the loaded
  hypothesis profile (the ``quick`` mode of a short run). The profile itself stays
  the one ``HYPOTHESIS_PROFILE`` names (``nightly``): random, with its database.
"""

from __future__ import annotations

import os
import random
import time

import pytest


def pytest_configure(config: pytest.Config) -> None:
    cap = os.environ.get("PCFUZZ_PROPERTY_MAX_EXAMPLES")
    if not cap:
        return
    from hypothesis import settings

    current = settings.get_current_profile_name()
    name = f"{current}-capped"
    settings.register_profile(
        name, parent=settings.get_profile(current), max_examples=max(1, int(cap))
    )
    settings.load_profile(name)


def _is_property(item: pytest.Item) -> bool:
    return bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False))


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if os.environ.get("PCFUZZ_PROPERTIES_ONLY") == "1":
        keep = [i for i in items if _is_property(i)]
        dropped = [i for i in items if not _is_property(i)]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    seed = os.environ.get("PCFUZZ_PROPERTY_SHUFFLE_SEED")
    if seed:
        random.Random(seed).shuffle(items)


_deadline: list[float] = []


def pytest_collection_finish(session: pytest.Session) -> None:
    budget = os.environ.get("PCFUZZ_PROPERTY_BUDGET_S")
    if budget:
        _deadline[:] = [time.monotonic() + float(budget)]


def pytest_runtest_setup(item: pytest.Item) -> None:
    if _deadline and time.monotonic() > _deadline[0]:
        pytest.skip("nightly property budget exhausted")
