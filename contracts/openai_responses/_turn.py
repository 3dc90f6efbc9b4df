"""OpenAI Responses value types: the parsed turn, its calls, the provisional view."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..digest import verified_snapshot

__all__ = ["OpenAIResponsesCall", "PendingFunctionCall", "OpenAIResponsesTurn"]


@dataclass(frozen=True, slots=True, eq=False)
class OpenAIResponsesCall:
    """One executable ``function_call`` item of a completed Response.

    ``call_id`` is the association key for ``function_call_output`` (never ``item_id``);
    ``arguments`` is the strictly parsed JSON object; ``raw_item`` is the item dict of
    the terminal output (the same object as ``turn.output[output_index]``);
    ``caller`` is the raw ``caller`` metadata (``None`` or a direct caller, kept as-is).
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    item_id: str
    output_index: int
    raw_item: dict[str, Any]
    caller: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class PendingFunctionCall:
    """A provisional, NOT executable view of a function call still streaming.

    ``arguments_text`` is the concatenation of the fragments seen so far;
    ``arguments_done`` says whether ``response.function_call_arguments.done`` arrived.
    """

    output_index: int
    item_id: str
    call_id: str
    name: str
    arguments_text: str
    arguments_done: bool
    item_done: bool


@dataclass(frozen=True, slots=True, eq=False)
class OpenAIResponsesTurn:
    """A completed Response: raw data, executable calls and a snapshot digest.

    ``response`` is a private JSON copy of the terminal ``response`` object; ``output``
    is ``response["output"]`` (the raw output items, every type, in order). ``calls``
    holds the function calls (empty when none); ``is_tool_turn`` is True when the
    completed Response contains at least one function call (the host must run them
    and continue the loop: this is not a final answer); ``is_final_answer`` is True
    when it has no function call and at least one assistant message. ``revision`` is
    the contract revision the turn was parsed under; ``digest`` is the canonical
    digest of :meth:`snapshot`, recorded at parse time.
    """

    response_id: str
    status: str
    response: dict[str, Any]
    output: list[Any]
    calls: tuple[OpenAIResponsesCall, ...]
    is_tool_turn: bool
    is_final_answer: bool
    revision: str
    digest: str = field(default="")

    def snapshot(self) -> dict[str, Any]:
        """The canonical snapshot: raw terminal response plus derived call identities."""
        response = self.response
        return {
            "revision": self.revision,
            "response_id": self.response_id,
            "status": self.status,
            "response": response,
            "output_is_response_output": type(response) is dict
            and response.get("output") is self.output,
            "calls": [
                {
                    "call_id": call.call_id,
                    "name": call.name,
                    "item_id": call.item_id,
                    "output_index": call.output_index,
                    "arguments": call.arguments,
                    "raw_item_is_output_item": _is_output_item(self.output, call),
                    "caller": call.caller,
                }
                for call in self.calls
            ],
            "is_tool_turn": self.is_tool_turn,
            "is_final_answer": self.is_final_answer,
        }

    def check_unchanged(self) -> None:
        """Raise :class:`SnapshotMutated` if the turn changed since parsing.

        Whatever was stored into the turn since (a value JSON cannot carry, a container
        whose methods raise), the only exception is :class:`SnapshotMutated`.
        """
        verified_snapshot(self.snapshot, self.digest, what="OpenAI Responses turn")


def _is_output_item(output: object, call: OpenAIResponsesCall) -> bool:
    if type(output) is not list or type(call.output_index) is not int:
        return False
    if not 0 <= call.output_index < len(output):
        return False
    return output[call.output_index] is call.raw_item
