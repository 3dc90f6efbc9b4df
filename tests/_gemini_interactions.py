"""Shared helpers of the gemini interactions tests (events, fixtures, builders), imported by the
test modules of that contract (a test module never imports another test module)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from pcfuzz.contracts.gemini_interactions import (
    build_gemini_interactions_continuation,
    build_gemini_interactions_stateless_continuation,
)
from pcfuzz.contracts.results import ModelVisibleToolResult

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "gemini_interactions.json"


def fixture_events() -> list[dict[str, Any]]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))["events"]


def ev(kind: str, **fields: Any) -> dict[str, Any]:
    return {"event_type": kind, **fields}


def created(iid: str = "i-1") -> dict[str, Any]:
    return ev("interaction.created", interaction={"id": iid, "status": "in_progress"})


def completed(status: str = "requires_action", iid: str = "i-1", **extra: Any) -> dict[str, Any]:
    return ev("interaction.completed", interaction={"id": iid, "status": status, **extra})


def call_events(index: int, call_id: str, name: str, *fragments: str,
                initial: Any = None) -> list[dict[str, Any]]:
    step: dict[str, Any] = {"type": "function_call", "id": call_id, "name": name}
    step["arguments"] = {} if initial is None else initial
    out = [ev("step.start", index=index, step=step)]
    out += [ev("step.delta", index=index, delta={"type": "arguments_delta", "arguments": f})
            for f in fragments]
    out.append(ev("step.stop", index=index))
    return out


def one_call_stream(index: int = 0) -> list[dict[str, Any]]:
    return [created(), *call_events(index, "c-1", "lookup", '{"a":', "1}"), completed()]


TOOLS = [
    {"type": "function", "name": "lookup_order", "parameters": {"type": "object"}},
    {"type": "function", "name": "lookup_customer", "parameters": {"type": "object"}},
]
RESULTS = [ModelVisibleToolResult("call-alpha", "shipped"),
           ModelVisibleToolResult("call-beta", "gold")]
USER_INPUT = {"type": "user_input", "content": [{"type": "text", "text": "Where is A-100?"}]}


def stateful(turn: Any, **overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = dict(
        model="fixture-model", tools=TOOLS, system_instruction="Be brief.",
        generation_config={"temperature": 0.0}, previous_interaction_was_stored=True,
        store=False,
    )
    kwargs.update(overrides)
    return build_gemini_interactions_continuation(turn, RESULTS, **kwargs)


def stateless(turn: Any, **overrides: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = dict(
        model="fixture-model", tools=TOOLS, system_instruction="Be brief.",
        generation_config=None,
    )
    kwargs.update(overrides)
    return build_gemini_interactions_stateless_continuation(turn, RESULTS, **kwargs)


def snapshot_obj(origin: str, *, thought: dict[str, Any] | None = None) -> dict[str, Any]:
    steps: list[dict[str, Any]] = []
    if origin == "get":
        steps.append(copy.deepcopy(USER_INPUT))
    steps.append(thought or {"type": "thought", "signature": "c2ln",
                             "summary": [{"type": "text", "text": "two lookups"}]})
    steps.append({"type": "function_call", "id": "call-alpha", "name": "lookup_order",
                  "arguments": {"order_ref": "A-100"}})
    steps.append({"type": "function_call", "id": "call-beta", "name": "lookup_customer",
                  "arguments": {"customer_ref": "C-7"}})
    return {"id": "interaction-7f3a", "status": "requires_action", "steps": steps}


# ------------------------------------------------------------------- fixture
