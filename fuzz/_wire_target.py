"""The shared body of the byte-level wire targets ``fuzz_wire_<contract>.py``.

Each target feeds its whole input, as raw SSE bytes of one turn, to
:func:`fuzz._check.check_bytes` (the code path of ``pcfuzz check``). Oracle (a failure
raises ``RuntimeError``; ``assert`` would vanish under ``-O``):

* only ``ContractError`` may escape the wire path: ``check_bytes`` catches nothing
  else, so any other exception propagates and is a crash;
* a rejected stream has no executable calls;
* an accepted stream is the same Turn (digest, calls) through
  ``contracts.wire.parse_sse`` and, cut into pieces at points chosen from the input,
  through ``parse_sse_chunks``;
* an accepted stream cut at its first terminal event (Responses
  ``response.completed``, Messages ``message_stop``, Interactions
  ``interaction.completed``, Chat ``data: [DONE]``; that event and everything after it
  removed), or cut inside that event, never yields executable calls. (Not "remove
  only the terminal event": a Gemini stream may legally replay it later, and that
  replay then completes the turn.)
"""

from __future__ import annotations

from collections.abc import Callable

from pcfuzz.contracts.errors import ContractError
from pcfuzz.contracts.sse import SSEEvent, decode_sse
from pcfuzz.contracts.strict_json import loads
from pcfuzz.contracts.wire import parse_sse, parse_sse_chunks
from pcfuzz.fuzz._check import Verdict, check_bytes

__all__ = ["make_target", "terminal_event"]


def _gemini_terminal(sse: SSEEvent) -> bool:
    if "interaction.completed" not in sse.data:
        return False
    try:
        value = loads(sse.data)
    except ContractError:
        return False
    return type(value) is dict and value.get("event_type") == "interaction.completed"


_TERMINAL: dict[str, Callable[[SSEEvent], bool]] = {
    "openai-responses": lambda sse: sse.event == "response.completed",
    "anthropic-messages": lambda sse: sse.event == "message_stop",
    "gemini-interactions": _gemini_terminal,
    "openai-chat": lambda sse: sse.data == "[DONE]",
}


def terminal_event(contract: str, data: bytes) -> SSEEvent | None:
    """The first SSE event of ``data`` that is ``contract``'s terminal event."""
    for sse in decode_sse(data):
        if _TERMINAL[contract](sse):
            return sse
    return None


def _fail_if_calls(verdict: Verdict, what: str, data: bytes) -> None:
    if verdict.ok or verdict.calls:
        raise RuntimeError(f"{what} yielded executable calls {verdict.calls!r}: {data[:300]!r}")


def _cuts(data: bytes) -> list[int]:
    # Three cut points derived from the input itself (deterministic, cheap).
    n = len(data)
    if n < 2:
        return []
    seed = sum(data[:64]) + n
    return sorted({1 + seed % (n - 1), 1 + (seed * 7919) % (n - 1), n // 2})


def make_target(contract: str) -> Callable[[bytes], None]:
    def test_one_input(data: bytes) -> None:
        verdict = check_bytes(contract, data, format="sse")
        if not verdict.ok:
            _fail_if_calls(verdict, "a rejected stream", data)
            return
        turn = parse_sse(contract, data)
        if turn.digest != verdict.digest:
            raise RuntimeError(f"pcfuzz check and parse_sse disagree on {data[:300]!r}")
        cuts = _cuts(data)
        bounds = [0, *cuts, len(data)]
        pieces = [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
        if parse_sse_chunks(contract, pieces).digest != turn.digest:
            raise RuntimeError(f"the Turn depends on the chunking {cuts}: {data[:300]!r}")
        terminal = terminal_event(contract, data)
        if terminal is None:
            raise RuntimeError(f"an accepted {contract} stream has no terminal event: "
                               f"{data[:300]!r}")
        start = terminal.byte_offset
        # The end of the event's first line: still before its dispatching blank line.
        end = min((i for i in (data.find(b"\n", start), data.find(b"\r", start)) if i >= 0),
                  default=len(data))
        for cut in {start, start + 1, end}:
            _fail_if_calls(check_bytes(contract, data[:cut], format="sse"),
                           f"the stream cut at byte {cut} (terminal event at {start})", data)

    return test_one_input
