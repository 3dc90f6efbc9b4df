"""The caller's gate: a check an integration applies after the adapter returns,
declared with ``pcfuzz conform --gate`` so that what it stops is reported apart.

Many integrations run the calls the parser returns only when the turn's own
terminal says "tool calls" (they read the reason the turn ended). A parser that
releases calls from, say, a truncated stream is then unsafe on its own but stopped
by the integration: the kit reports such an example as *stopped by your gate*
and does not fail the run for it. Which field and which value, per contract, from
the pinned contracts (not from this project's parser tables):

* ``finish_reason`` -- **openai-chat** only: the choice's ``finish_reason`` in a
  chunk (``choices[].finish_reason``); the gate passes when it is ``"tool_calls"``.
* ``stop_reason`` -- **anthropic-messages** only: the message's ``stop_reason``
  (``message_delta``'s ``delta.stop_reason``, or ``message_start``'s
  ``message.stop_reason``); the gate passes when it is ``"tool_use"``.
* ``none`` (default): no gate; every finding fails the run.

OpenAI Responses and Gemini Interactions have neither field: a Responses turn is
told by ``response.completed`` and the function_call items in its output, a Gemini
turn by ``interaction.completed`` with status ``requires_action``; neither gate
applies to them (a usage error).

The gate is modelled conservatively: an example counts as stopped only when NO
event of the stream carries the gate's value anywhere it is looked for (any chunk,
any choice; any ``message_start`` or ``message_delta``), so whichever of them an
integration reads, it would not have run the calls. Only findings where the adapter
released calls are ever stopped: a valid turn whose calls were not released, a
malformed return value, an escape, a hang are findings whatever the gate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pcfuzz.errors import UsageError

__all__ = ["GATES", "GATE_CONTRACTS", "check_gate", "gate_passes"]

GATES: tuple[str, ...] = ("none", "finish_reason", "stop_reason")
#: gate -> (the contract it applies to, the value that lets calls run)
GATE_CONTRACTS: dict[str, tuple[str, str]] = {
    "finish_reason": ("openai-chat", "tool_calls"),
    "stop_reason": ("anthropic-messages", "tool_use"),
}


def check_gate(contract: str, gate: str) -> str:
    """``gate`` when it is known and applies to ``contract``; else a usage error."""
    if gate not in GATES:
        raise UsageError(f"unknown gate {gate!r}; known: {', '.join(GATES)}")
    if gate != "none" and GATE_CONTRACTS[gate][0] != contract:
        applies, _ = GATE_CONTRACTS[gate]
        raise UsageError(f"--gate {gate} applies to {applies} only; {contract} has no "
                         f"{gate} (see the gate table in docs/conformance.md)")
    return gate


def _get(value: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def gate_passes(contract: str, gate: str, events: Sequence[Any]) -> bool:
    """Whether the integration's gate would let calls of this stream run: ``True``
    for ``none``, else whether any event carries the gate's value."""
    if gate == "none":
        return True
    _, value = GATE_CONTRACTS[gate]
    if gate == "finish_reason":
        for frame in events:
            choices = _get(frame, "choices")
            if isinstance(choices, list) and any(
                    _get(choice, "finish_reason") == value for choice in choices):
                return True
        return False
    for event in events:
        data = _get(event, "data")
        if (_get(data, "delta", "stop_reason") == value
                or _get(data, "message", "stop_reason") == value):
            return True
    return False
