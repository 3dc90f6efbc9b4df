"""The public names ARCHITECTURE promises, checked across all four contracts.

Every contract module has ``parse_events`` and an incremental stream class with
``feed``/``close``; every turn has ``.calls``, ``.digest`` and keeps its raw data;
every call has ``.call_id``, ``.name`` and ``.arguments`` (a dict). The golden
fixture of each contract parses to a turn whose calls are released, and the same
events fed one by one give the same turn (split invariance).
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from contracts.errors import ContractError, StreamTruncated
from contracts.fixtures import load_fixture

ROOT = Path(__file__).resolve().parent.parent


def _chat_frames(events: list[Any]) -> list[Any]:
    from contracts.openai_chat import frames_from_fixture_events

    return list(frames_from_fixture_events(events))


def _same(events: list[Any]) -> list[Any]:
    return events


# contract -> (module, stream class, fixture-events-to-parser-input)
CONTRACTS: dict[str, tuple[str, str, Callable[[list[Any]], list[Any]]]] = {
    "openai-responses": ("contracts.openai_responses", "OpenAIResponsesStream", _same),
    "anthropic-messages": ("contracts.anthropic_messages", "AnthropicMessagesStream", _same),
    "gemini-interactions": (
        "contracts.gemini_interactions", "GeminiInteractionsStream", _same,
    ),
    "openai-chat": ("contracts.openai_chat", "ChatCompletionStream", _chat_frames),
}


def _fixture_input(contract: str) -> list[Any]:
    fixture = load_fixture(ROOT / "fixtures" / f"{contract.replace('-', '_')}.json")
    assert fixture.contract == contract
    return CONTRACTS[contract][2](list(fixture.events))


def _call_view(calls: Iterable[Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(c.call_id, c.name, c.arguments) for c in calls]


@pytest.mark.parametrize("contract", sorted(CONTRACTS))
def test_fixture_turn_exposes_the_promised_names(contract: str) -> None:
    module = importlib.import_module(CONTRACTS[contract][0])
    turn = module.parse_events(copy.deepcopy(_fixture_input(contract)))
    assert isinstance(turn.calls, tuple)
    assert len(turn.calls) >= 2, "each golden fixture holds two parallel calls"
    for call in turn.calls:
        assert isinstance(call.call_id, str) and call.call_id
        assert isinstance(call.name, str) and call.name
        assert isinstance(call.arguments, dict)
    assert len({c.call_id for c in turn.calls}) == len(turn.calls)
    assert isinstance(turn.digest, str) and len(turn.digest) == 64


@pytest.mark.parametrize("contract", sorted(CONTRACTS))
def test_incremental_feed_equals_whole_parse(contract: str) -> None:
    name, stream_class, _ = CONTRACTS[contract]
    module = importlib.import_module(name)
    events = _fixture_input(contract)
    whole = module.parse_events(copy.deepcopy(events))
    stream = getattr(module, stream_class)()
    for event in copy.deepcopy(events):
        stream.feed(event)
    incremental = stream.close()
    assert _call_view(incremental.calls) == _call_view(whole.calls)
    assert incremental.digest == whole.digest


@pytest.mark.parametrize("contract", sorted(CONTRACTS))
def test_every_proper_prefix_of_the_fixture_releases_nothing(contract: str) -> None:
    module = importlib.import_module(CONTRACTS[contract][0])
    events = _fixture_input(contract)
    for cut in range(len(events)):
        try:
            turn = module.parse_events(copy.deepcopy(events[:cut]))
        except ContractError as exc:
            # Truncation is the expected outcome; an empty stream may be a violation.
            assert cut == 0 or isinstance(exc, StreamTruncated), (cut, exc)
        else:
            pytest.fail(f"{contract}: prefix of {cut}/{len(events)} events gave a turn "
                        f"with {len(turn.calls)} calls")


@pytest.mark.parametrize("contract", sorted(CONTRACTS))
def test_stream_is_poisoned_after_an_error(contract: str) -> None:
    name, stream_class, _ = CONTRACTS[contract]
    module = importlib.import_module(name)
    events = _fixture_input(contract)
    stream = getattr(module, stream_class)()
    with pytest.raises(ContractError):
        stream.feed({"this is": "not an event of any contract"})
    # A valid continuation cannot revive it.
    with pytest.raises(ContractError):
        stream.feed(copy.deepcopy(events[0]))
    with pytest.raises(ContractError):
        stream.close()
