"""Contract revisions in the property and state-machine suites.

The pinned revision (``2026-07-21``) runs with the active hypothesis profile; every
other shipped revision runs the same invariants with the active profile's
``<name>-revision`` sibling (registered in ``conftest.py``), looked up by name, so
no test hard-codes an example count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import settings

PINNED = "2026-07-21"

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


def later_revisions(revisions: Any) -> list[str]:
    """The shipped revisions other than the pinned one, oldest first."""
    return sorted(r for r in revisions if r != PINNED)
