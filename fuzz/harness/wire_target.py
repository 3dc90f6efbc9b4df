"""The shared body of the byte-level wire targets ``fuzz_wire_<contract>.py``.

Each target feeds its whole input, as raw SSE bytes of one turn, to
:func:`fuzz.harness.verdict.check_bytes` (the code path of ``pcfuzz check``). Oracle (a failure
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

The older provider targets (``fuzz_<contract>.py``) select a mode from their first
byte and would read a capture as structure-aware bytes. :func:`route_sse` sends an
input that :func:`looks_like_sse` to this wire body instead (the same check as
``fuzz_wire_<contract>``), and :func:`note_sse_inputs` says so on stderr when such a
target is run on single files (libFuzzer's single-input mode).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from pcfuzz.contracts.errors import ContractError
from pcfuzz.contracts.sse import SSEEvent, decode_sse
from pcfuzz.contracts.strict_json import loads
from pcfuzz.contracts.wire import parse_sse, parse_sse_chunks
from pcfuzz.fuzz.harness.verdict import Verdict, check_bytes

__all__ = ["SSE_PREFIXES", "looks_like_sse", "make_target", "note_sse_inputs", "route_sse",
           "terminal_event"]


#: How an input that is raw SSE starts (after an optional UTF-8 BOM): a line with one
#: of the four fields, or a comment line.
SSE_PREFIXES = (b"event:", b"data:", b"id:", b"retry:", b":")


def looks_like_sse(data: bytes) -> bool:
    """True if ``data`` starts (after an optional UTF-8 BOM) like raw SSE: an
    ``event:``, ``data:``, ``id:`` or ``retry:`` field line, or a ``:`` comment."""
    return data.removeprefix(b"\xef\xbb\xbf").startswith(SSE_PREFIXES)


_ROUTED: dict[str, Callable[[bytes], None]] = {}


def route_sse(contract: str, data: bytes) -> bool:
    """Run ``data`` through the wire body of ``contract`` if it looks like raw SSE;
    return whether it did (the caller then skips its own modes)."""
    if not looks_like_sse(data):
        return False
    target = _ROUTED.get(contract)
    if target is None:
        target = _ROUTED[contract] = make_target(contract)
    target(data)
    return True


def note_sse_inputs(argv: Sequence[str], contract: str, out: TextIO | None = None) -> list[str]:
    """In single-input mode (file arguments), name each file that looks like raw SSE
    and where it goes; return the lines written (to ``out``, default stderr)."""
    lines = []
    for arg in argv[1:]:
        if arg.startswith("-"):
            continue
        path = Path(arg)
        try:
            if not path.is_file():
                continue
            with path.open("rb") as f:
                head = f.read(16)
        except OSError:
            continue
        if looks_like_sse(head):
            wire = "fuzz_wire_" + contract.replace("-", "_")
            lines.append(f"{arg}: looks like raw SSE (starts with an SSE field or comment "
                         f"line): run through the wire path, as {wire} does, not as "
                         "structure-aware bytes")
    stream = sys.stderr if out is None else out
    for line in lines:
        print(line, file=stream)
    return lines


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
