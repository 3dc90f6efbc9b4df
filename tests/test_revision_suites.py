"""Every property and state machine of the contract property files runs for every
shipped revision (issue 13: "both revisions pass the full property and state-machine
suites"): a meta-test over pytest's own collection, so the coverage cannot silently rot.

A property (a ``@given`` test, or one running hypothesis inside) counts as covered when
its collected node ids name every revision in ``tests._revisions.SHIPPED``
(``@each_revision``, or ``@pytest.mark.parametrize("revision", ...)``); a state machine
when a ``TestCase`` exists per revision (``machines_per_revision``: ``Test<Machine>`` is
the pinned one, ``Test<Machine><YYYYMMDD>`` a later one). What runs once on purpose is
listed in :data:`ONCE` with the reason; plain example tests may run once.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _revisions import PINNED, SHIPPED, settings_for
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent

#: The files whose properties exercise a contract's streams.
SUITE_FILES = (
    "tests/test_openai_responses_properties.py",
    "tests/test_anthropic_messages_properties.py",
    "tests/test_gemini_interactions_properties.py",
    "tests/test_openai_chat_properties.py",
    "tests/test_hostile_arguments.py",
    # resume/replay, truncation (open cut) and fast-path equivalence properties
    "tests/test_gemini_interactions_resume.py",
    "tests/test_gemini_interactions_fast_path.py",
    "tests/test_anthropic_messages_open_cut.py",
    "tests/test_openai_chat_fastpath.py",
    # the generators of every revision against the installed SDK types
    "tests/test_oracles_openai_responses.py",
    "tests/test_oracles_anthropic_messages.py",
    "tests/test_oracles_gemini_interactions.py",
    "tests/test_oracles_openai_chat.py",
)

#: Properties (``file::test``) that run once on purpose, and why. Each must still be
#: collected, be a property, and not already run per revision: a stale entry fails.
ONCE: dict[str, str] = {
    # cross-revision properties: one stream, both revisions, by construction
    "test_openai_responses_properties.py::"
    "test_todays_streams_are_rejected_by_the_pinned_revision_naming_the_drift":
        "parses 2026-12-01 streams under both revisions by design",
    "test_gemini_interactions_properties.py::"
    "test_todays_shapes_under_the_pinned_revision_fail_closed_or_agree":
        "parses 2026-12-01 streams under both revisions by design",
    "test_openai_chat_properties.py::test_todays_null_audio_is_unknown_to_the_pinned_revision":
        "parses 2026-12-01 streams under both revisions by design",
}

_NODE = re.compile(r"^(?P<file>tests/[\w/]+\.py)::(?P<name>[\w]+)(?:\[(?P<params>.*)\])?"
                   r"(?:::(?P<method>\w+))?$")
_REVISION = re.compile(r"\d{4}-\d{2}-\d{2}")
_MACHINE_SUFFIX = re.compile(r"^(?P<base>Test\w*?)(?P<date>\d{8})?$")


def _collected() -> dict[str, set[str]]:
    """``file::test`` (or ``file::TestMachine``) -> the revisions its node ids name."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         *SUITE_FILES],
        cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise AssertionError(f"collection failed:\n{run.stdout[-3000:]}\n{run.stderr[-2000:]}")
    out: dict[str, set[str]] = {}
    for line in run.stdout.splitlines():
        m = _NODE.match(line.strip())
        if m is None:
            continue
        file = Path(m["file"]).name
        if m["method"] is not None:  # a TestCase of a state machine
            s = _MACHINE_SUFFIX.match(m["name"])
            assert s is not None, line
            date = s["date"]
            revision = PINNED if date is None else f"{date[:4]}-{date[4:6]}-{date[6:]}"
            out.setdefault(f"{file}::{s['base']}", set()).add(revision)
        else:
            found = set(_REVISION.findall(m["params"] or ""))
            out.setdefault(f"{file}::{m['name']}", set()).update(found)
    return out


@pytest.fixture(scope="module")
def collected() -> dict[str, set[str]]:
    return _collected()


def _is_property(key: str) -> bool:
    """A state machine, a ``@given`` test, or a test that runs hypothesis inside
    (``given(...)`` on a nested function, ``find(...)``). Plain example tests are not
    required to run per revision."""
    file, name = key.split("::")
    if name.endswith("Machine"):
        return True
    test = getattr(importlib.import_module(Path(file).stem), name)
    if getattr(test, "is_hypothesis_test", False):
        return True
    source = inspect.getsource(test)
    return "@given(" in source or " find(" in source


def test_every_contract_ships_every_suite_revision() -> None:
    assert PINNED in SHIPPED and len(SHIPPED) >= 2
    for name in ("openai_responses", "anthropic_messages", "gemini_interactions",
                 "openai_chat"):
        assert tuple(sorted(importlib.import_module(
            f"pcfuzz.contracts.{name}").REVISIONS)) == SHIPPED, name


def test_every_property_and_state_machine_runs_for_every_revision(
        collected: dict[str, set[str]]) -> None:
    assert len(collected) > 40  # the collection really read the files
    missing = {key: sorted(set(SHIPPED) - revisions) for key, revisions in collected.items()
               if key not in ONCE and set(SHIPPED) - revisions and _is_property(key)}
    assert not missing, f"run for only some revisions (add @each_revision): {missing}"


def test_every_state_machine_has_a_testcase_per_revision(
        collected: dict[str, set[str]]) -> None:
    machines = {k: v for k, v in collected.items() if k.split("::")[1].endswith("Machine")}
    assert len(machines) >= 5, sorted(machines)
    assert all(revisions == set(SHIPPED) for revisions in machines.values()), machines


def test_every_exemption_is_collected_and_still_runs_once(
        collected: dict[str, set[str]]) -> None:
    for key, reason in ONCE.items():
        assert reason
        assert key in collected, f"stale exemption (no such test): {key}"
        assert _is_property(key), f"stale exemption (not a property): {key}"
        assert collected[key] != set(SHIPPED), f"stale exemption (runs per revision): {key}"


def test_a_later_revision_runs_with_the_revision_sibling_profile() -> None:
    # The conftest hook hands each later revision's item settings_for(...): the test's
    # own settings with the `<profile>-revision` example counts; the pinned keeps them.
    own = settings(settings.default, deadline=None)
    assert settings_for(own, PINNED) is own
    for revision in SHIPPED:
        if revision == PINNED:
            continue
        later = settings_for(own, revision)
        sibling = settings.get_profile(
            settings.get_current_profile_name().removesuffix("-revision") + "-revision")
        assert later.max_examples == min(own.max_examples, sibling.max_examples)
        assert later.deadline is None
