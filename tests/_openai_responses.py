"""Shared helpers of the openai responses tests (events, fixtures, builders), imported by the
test modules of that contract (a test module never imports another test module)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from pcfuzz.contracts import openai_responses as oair
from pcfuzz.contracts.fixtures import load_fixture
from pcfuzz.contracts.openai_responses import (
    build_openai_responses_continuation,
    build_openai_responses_stateless_continuation,
)
from pcfuzz.contracts.results import ModelVisibleToolResult
from pcfuzz.strategies.openai_responses import strict_tool

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "openai_responses.json"

# Positions in the fixture (asserted by test_fixture_layout_is_as_documented).
CREATED, IN_PROGRESS = 0, 1
REASONING_DONE, MESSAGE_ADDED, TEXT_DELTA, MESSAGE_DONE = 8, 9, 11, 15
CALL_A_ADDED, CALL_B_ADDED = 16, 17
FIRST_DELTA, ARGS_DONE_B, ARGS_DONE_A, ITEM_DONE_B, ITEM_DONE_A, COMPLETED = 18, 25, 26, 27, 28, 29


def fixture_events() -> list[dict[str, Any]]:
    return copy.deepcopy(load_fixture(FIXTURE).events)


def terminal_output(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    output: list[dict[str, Any]] = events[COMPLETED]["response"]["output"]
    return output


def call_tuples(turn: oair.OpenAIResponsesTurn) -> list[tuple[Any, ...]]:
    return [(c.call_id, c.name, c.arguments, c.item_id, c.output_index) for c in turn.calls]


def renumber(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for number, event in enumerate(events):
        event["sequence_number"] = 10 + 3 * number
    return events


def R(call_id: str, output: str = '{"status":"shipped"}') -> ModelVisibleToolResult:
    return ModelVisibleToolResult(call_id=call_id, output=output)


TOOLS = [strict_tool("lookup_order", {"order_ref": {"type": "string"},
                                      "include_items": {"type": "boolean"}})]
RESULTS = [R("call-A"), R("call-B")]


def stateful(turn: oair.OpenAIResponsesTurn, **overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "model": "fixture-model", "previous_response_was_stored": True, "store": False,
        "instructions": "Controlled instructions", "tools": TOOLS,
        "request_controls": {"tool_choice": "auto", "parallel_tool_calls": False,
                             "max_output_tokens": 512},
    }
    results = overrides.pop("results", RESULTS)
    kwargs.update(overrides)
    return build_openai_responses_continuation(turn, results, **kwargs)


PRIOR = [{"type": "message", "role": "user", "content": "Where are orders A-1001 and B-2002?"}]


def stateless(turn: oair.OpenAIResponsesTurn, **overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "model": "fixture-model", "prior_input_items": PRIOR,
        "instructions": "Controlled instructions", "tools": TOOLS,
        "request_controls": {"tool_choice": "auto"},
    }
    results = overrides.pop("results", RESULTS)
    kwargs.update(overrides)
    return build_openai_responses_stateless_continuation(turn, results, **kwargs)


# ---------------------------------------------------------------------------
# Fixture and the happy path
