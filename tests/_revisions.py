"""Contract revisions in the property and state-machine suites.

Every property and state machine in the contract property files runs once per shipped
revision (``tests/test_revision_suites.py`` fails when one does not). The pinned
revision (``2026-07-21``) runs with the active hypothesis profile; every other shipped
revision runs the same invariants with the active profile's ``<name>-revision``
sibling (registered in ``conftest.py``), looked up by name, so no test hard-codes an
example count.

Two ways to run a property per revision:

- ``@each_revision`` on a ``@given`` test that takes a ``revision`` argument: pytest
  parametrizes it, and ``conftest.py`` runs each later revision's item with
  :func:`settings_for` (the decorator's settings with the sibling's example counts).
- ``TestM, TestM20261201 = machines_per_revision(M)``: one ``TestCase`` per revision
  of a ``RuleBasedStateMachine`` whose ``revision`` class attribute the machine reads;
  named ``Test<Machine>`` (pinned) and ``Test<Machine><YYYYMMDD>`` (later ones, see
  :func:`machine_name`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from hypothesis import settings

PINNED = "2026-07-21"
_CONTRACTS = ("openai_responses", "anthropic_messages", "gemini_interactions", "openai_chat")

#: Every revision some contract ships, oldest first (each contract ships all of them:
#: ``test_every_contract_ships_every_suite_revision`` checks it).
SHIPPED: tuple[str, ...] = tuple(sorted({
    r for name in _CONTRACTS
    for r in importlib.import_module(f"pcfuzz.contracts.{name}").REVISIONS
}))

_F = TypeVar("_F", bound=Callable[..., Any])


def revision_settings(revision: str) -> settings:
    """The settings a property for ``revision`` runs with (profile lookup, never a count)."""
    active = settings.get_current_profile_name()
    if revision == PINNED:
        return settings.get_profile(active)
    base = active.removesuffix("-revision")
    try:
        return settings.get_profile(f"{base}-revision")
    except Exception:  # a profile without a sibling (hypothesis' own): run it as is
        return settings.get_profile(active)


def settings_for(current: settings, revision: str) -> settings:
    """``current`` (a test's own settings) with the example counts of ``revision``."""
    if revision == PINNED:
        return current
    sibling = revision_settings(revision)
    return settings(
        current,
        max_examples=min(current.max_examples, sibling.max_examples),
        stateful_step_count=min(current.stateful_step_count, sibling.stateful_step_count),
    )


def each_revision(test: _F) -> _F:
    """Parametrize a ``@given`` test by ``revision`` over every shipped revision."""
    marked: _F = pytest.mark.parametrize("revision", SHIPPED)(test)
    return marked


def machine_name(base: str, revision: str) -> str:
    """``Test<Machine>`` for the pinned revision, ``Test<Machine><YYYYMMDD>`` otherwise."""
    return base if revision == PINNED else base + revision.replace("-", "")


def machines_per_revision(machine: type[Any]) -> tuple[Any, ...]:
    """One ``TestCase`` of ``machine`` per shipped revision, in :data:`SHIPPED` order,
    each a subclass whose ``revision`` class attribute is that revision, with that
    revision's settings. Unpack them into module-level names (pytest collects those;
    the benchmark finds them by the ``Test...Machine... = machines_per_revision(``
    line): a new revision then fails at import until it gets its name."""
    cases = []
    for revision in SHIPPED:
        sub = type(f"{machine.__name__}_{revision.replace('-', '_')}", (machine,),
                   {"revision": revision, "__doc__": machine.__doc__})
        case = sub.TestCase
        case.settings = settings_for(settings.default, revision)
        cases.append(case)
    return tuple(cases)


def later_revisions(revisions: Any) -> list[str]:
    """The shipped revisions other than the pinned one, oldest first."""
    return sorted(r for r in revisions if r != PINNED)
