"""Every shipped contract revision: its fixtures, its pins, and today's shapes.

Revision ``2026-07-21`` is the seed's pinned baseline (top-level ``fixtures/<contract>.json``);
each later revision has its fixtures in ``fixtures/<contract>/<revision>/``. A fixture
of today's shape (field sets as the current SDK types define them) parses under its
revision and, where a required field or a known value differs, is rejected under the
pinned revision with a message that names the drift (the revision that accepts it).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from pcfuzz.contracts.errors import ContractError
from pcfuzz.contracts.fixtures import CONTRACT_PINS, load_fixture

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
PINNED = "2026-07-21"
CONTRACTS = ("openai_responses", "anthropic_messages", "gemini_interactions", "openai_chat")


def _module(name: str) -> Any:
    return importlib.import_module(f"pcfuzz.contracts.{name}")


def _revision_fixtures() -> list[Path]:
    return sorted(p for name in CONTRACTS for p in (FIXTURES / name).glob("*/*.json"))


def _frames(name: str, events: list[Any]) -> list[Any]:
    if name == "openai_chat":
        return list(_module(name).frames_from_fixture_events(events))
    return events


def test_every_contract_ships_the_pinned_and_a_newer_default_revision() -> None:
    for name in CONTRACTS:
        module = _module(name)
        assert PINNED in module.REVISIONS
        assert module.REVISION == max(module.REVISIONS) > PINNED
        assert set(module.REVISIONS) <= set(CONTRACT_PINS)


@pytest.mark.parametrize("name", CONTRACTS)
def test_every_later_revision_has_its_fixture_directory(name: str) -> None:
    for revision in _module(name).REVISIONS:
        if revision == PINNED:
            assert (FIXTURES / f"{name}.json").is_file()
        else:
            assert sorted((FIXTURES / name / revision).glob("*.json")), (name, revision)


@pytest.mark.parametrize("path", _revision_fixtures(), ids=lambda p: "/".join(p.parts[-3:]))
def test_revision_fixture_loads_with_its_pins_and_parses_under_its_revision(path: Path) -> None:
    name, revision = path.parts[-3], path.parts[-2]
    fixture = load_fixture(path)
    assert fixture.contract_revision == revision
    assert fixture.contract.replace("-", "_") == name
    assert fixture.sdk_version == CONTRACT_PINS[revision][fixture.contract].sdk_version
    module = _module(name)
    turn = module.parse_events(_frames(name, list(fixture.events)), revision=revision)
    assert turn.revision == revision
    assert turn.calls, "each fixture is a tool turn whose calls are released"


# Today's shape against the pinned revision: each fixture that differs in a required
# field or a known value is rejected there, naming the drift; the others are accepted
# with the same calls (nothing changed that reaches execution).
REJECTED_UNDER_PINNED = {
    "openai_responses": r"required field 'name'.*drift: contract revision 2026-12-01",
    "gemini_interactions": r"unknown interaction status 'queued'.*drift: contract revision "
                           r"2026-12-01",
    "openai_chat": r"'audio' is an unknown delta field.*drift: contract revision 2026-12-01",
}


@pytest.mark.parametrize("path", _revision_fixtures(), ids=lambda p: "/".join(p.parts[-3:]))
def test_todays_shape_under_the_pinned_revision_is_rejected_naming_the_drift(
        path: Path) -> None:
    name = path.parts[-3]
    module = _module(name)
    frames = _frames(name, list(load_fixture(path).events))
    current = module.parse_events(frames, revision=path.parts[-2])
    pattern = REJECTED_UNDER_PINNED.get(name)
    if pattern is None:
        pinned = module.parse_events(frames, revision=PINNED)
        assert [(c.call_id, c.arguments) for c in pinned.calls] == [
            (c.call_id, c.arguments) for c in current.calls]
        return
    with pytest.raises(ContractError, match=pattern):
        module.parse_events(frames, revision=PINNED)


@pytest.mark.parametrize("name", CONTRACTS)
def test_the_pinned_fixture_still_parses_under_every_revision(name: str) -> None:
    # The pinned shapes are a subset of today's in every contract: what was accepted
    # stays accepted, with the same released calls.
    module = _module(name)
    events = list(load_fixture(FIXTURES / f"{name}.json").events)
    calls = {
        revision: [(c.call_id, c.arguments) for c in module.parse_events(
            _frames(name, events), revision=revision).calls]
        for revision in module.REVISIONS
    }
    assert len(set(map(repr, calls.values()))) == 1, calls
