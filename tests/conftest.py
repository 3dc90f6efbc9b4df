"""Hypothesis settings profiles: dev (default), ci, nightly.

Select with ``--hypothesis-profile NAME`` or ``HYPOTHESIS_PROFILE=NAME``. Tests never
hard-code ``max_examples`` or ``stateful_step_count``: the profile decides.
Hypothesis loads its own built-in ``ci`` profile when ``CI`` is set; we register our
own ``ci`` and load the profile explicitly, so the nightly job must (and does) select
``nightly`` by name.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile(
    "dev",
    max_examples=25,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=_SLOW_OK,
)

# ci: sized so that `.ci/run` (this suite on two workers, the -O run of the contracts'
# tests, the kit at the newest hypothesis, the type checks and the main job) stays
# under 25 minutes on a 2-core machine. Measured: at 150 examples and 40 steps the
# suite alone took 53 minutes on one core, at 50 and 25 still 23 minutes on two
# loaded workers, at 30 and 20 18 minutes on two idle ones; depth belongs to the
# nightly profile.
# optimized: the `python -O` run of the contracts' tests in `dev.py test`. It shows that
# no check relies on `assert` (every code path, not example depth): few examples.
settings.register_profile(
    "optimized",
    max_examples=5,
    stateful_step_count=5,
    deadline=None,
    suppress_health_check=_SLOW_OK,
)

settings.register_profile(
    "ci",
    max_examples=25,
    stateful_step_count=15,
    # Shared 2-core runners: wall-clock deadlines only produce flaky reds.
    deadline=None,
    # Reproducible gate: the same examples on every run; the nightly job explores.
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=_SLOW_OK,
)

settings.register_profile(
    "nightly",
    max_examples=5_000,
    stateful_step_count=100,
    deadline=None,
    derandomize=False,
    database=DirectoryBasedExampleDatabase(
        os.environ.get(
            "PCFUZZ_HYPOTHESIS_DB",
            str(Path(__file__).resolve().parent.parent / ".hypothesis" / "nightly-db"),
        )
    ),
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    print_blob=True,
    suppress_health_check=_SLOW_OK,
)

# Each profile has a "<name>-revision" sibling: the examples a property or state
# machine runs for a contract revision other than the pinned 2026-07-21 (see
# tests/_revisions.py). The pinned revision keeps the full profile; the others share
# the invariants with fewer examples, so adding a revision does not double the
# suite's time. Nightly runs every revision in full. (ci: 0.4 of 25; measured at 150
# examples: running every property, state machine and oracle test for 2026-12-01 too
# added 62-92 s at 0.25.)
for _name, _fraction in (("dev", 0.4), ("optimized", 0.5), ("ci", 0.4), ("nightly", 1.0)):
    _parent = settings.get_profile(_name)
    settings.register_profile(
        f"{_name}-revision",
        parent=_parent,
        max_examples=max(1, int(_parent.max_examples * _fraction)),
        stateful_step_count=max(1, int(_parent.stateful_step_count * max(_fraction, 0.5))),
    )

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

#: Examples per scenario family where a test runs the *whole* conformance kit (every
#: family of a contract, tests/test_conformance.py) against a parser that must pass:
#: there each example costs a family run of rendering, copying and parsing, and the
#: per-rule property tests already cover the same models and mutators at the
#: profile's max_examples. Sized so the kit still runs against all four contracts in
#: every run (measured at ``ci``: 150 examples per family made tests/test_conformance.py
#: the suite's slowest file by minutes). Unknown profiles use their max_examples.
CONFORM_EXAMPLES = {"dev": 10, "ci": 10, "nightly": 300}


@pytest.fixture(scope="session")
def conform_examples() -> int:
    """Examples per family for whole-kit conformance runs, by hypothesis profile."""
    profile = os.environ.get("HYPOTHESIS_PROFILE", "dev")
    return CONFORM_EXAMPLES.get(profile, settings.default.max_examples)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """Run a ``@given`` test parametrized by ``revision`` (``_revisions.each_revision``)
    with that revision's settings: the pinned revision keeps the test's own settings,
    a later one gets the ``<profile>-revision`` sibling's example counts."""
    callspec = getattr(item, "callspec", None)
    revision = callspec.params.get("revision") if callspec is not None else None
    test = getattr(item, "obj", None)
    if not isinstance(revision, str) or not getattr(test, "is_hypothesis_test", False):
        return (yield)
    from _revisions import settings_for

    own = test._hypothesis_internal_use_settings  # type: ignore[union-attr]
    test._hypothesis_internal_use_settings = settings_for(own, revision)  # type: ignore[union-attr]
    try:
        return (yield)
    finally:
        test._hypothesis_internal_use_settings = own  # type: ignore[union-attr]
