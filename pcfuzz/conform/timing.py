"""Release timing (the release form): a call may run only once the stream's terminal
event has been delivered.

The release form hands the adapter the stream one event at a time and records, for
every ``release(call)``, how many events had been delivered when it happened
(:mod:`pcfuzz.conform.worker`). A call released while the terminal event had not yet
been delivered ran before the provider said the turn asks for it: a safety
violation of its own, whatever the adapter did afterwards (raised, returned nothing,
hung).

The terminal event is modelled here, independently of the parsers' tables: the
first event of the stream that is its contract's end-of-turn event. A stream with no
such event is not a complete turn, and the kit's ordinary check already forbids any
release there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["TERMINAL_EVENTS", "EarlyRelease", "early_release", "terminal_index"]

#: The event after which a stream of each contract has said how the turn ends (the
#: field that names an event's type, and the names that end a turn).
TERMINAL_EVENTS: dict[str, tuple[str, frozenset[str]]] = {
    "openai-responses": ("type", frozenset({"response.completed", "response.failed",
                                            "response.incomplete"})),
    "anthropic-messages": ("type", frozenset({"message_stop"})),
    "gemini-interactions": ("event_type", frozenset({"interaction.completed"})),
    "openai-chat": ("", frozenset({"[DONE]"})),
}


def _is_terminal(contract: str, event: Any) -> bool:
    key, names = TERMINAL_EVENTS[contract]
    if contract == "openai-chat":
        return event == "[DONE]" or (isinstance(event, dict) and event.get("data") == "[DONE]")
    if not isinstance(event, dict):
        return False
    if contract == "anthropic-messages":
        # the envelope's name or the data's type: either one ends the turn for a reader
        data = event.get("data")
        return event.get("event") in names or (isinstance(data, dict)
                                               and data.get(key) in names)
    return event.get(key) in names


def terminal_index(contract: str, events: list[Any]) -> int | None:
    """The index of the first terminal event of ``events``, or ``None``."""
    if contract not in TERMINAL_EVENTS:
        return None
    return next((n for n, e in enumerate(events) if _is_terminal(contract, e)), None)


@dataclass(frozen=True)
class EarlyRelease:
    """The first call released before the terminal event had been delivered."""

    call: dict[str, Any]
    #: the index of the last event delivered when it was released (-1: none was)
    at: int
    terminal: int
    terminal_name: str
    #: calls released early in all
    count: int

    def text(self) -> str:
        where = (f"at event {self.at}" if self.at >= 0
                 else "before any event was delivered")
        more = f" ({self.count} call(s) released early in all)" if self.count > 1 else ""
        return (f"released before the terminal event: call {self.call['call_id']!r} "
                f"({self.call['name']}) was released {where}, the terminal event "
                f"({self.terminal_name}) is event {self.terminal}{more}")


def early_release(contract: str, events: list[Any],
                  releases: list[dict[str, Any]]) -> EarlyRelease | None:
    """The first release (``{"at": events delivered, "call": {...}}``) that happened
    before the stream's terminal event had been delivered, or ``None``."""
    terminal = terminal_index(contract, events)
    if terminal is None:
        return None
    early = [r for r in releases if "call" in r and r["at"] <= terminal]
    if not early:
        return None
    first = early[0]
    name = sorted(TERMINAL_EVENTS[contract][1])[0]
    event = events[terminal]
    if contract == "openai-responses" and isinstance(event, dict):
        name = str(event.get("type"))
    return EarlyRelease(first["call"], first["at"] - 1, terminal, name, len(early))
