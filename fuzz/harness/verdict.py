"""The verdict on one captured turn: the code path of ``pcfuzz check`` and of the
byte-level wire fuzz targets.

:func:`check_bytes` reads raw SSE bytes, JSON lines of parser events, or a
``pcfuzz-fixture/1`` document (a ``wire-sse-bytes`` fixture is checked as its SSE
bytes, any other layer as its events). The verdict comes from the wire path
(:class:`contracts.sse.SSEDecoder`, :func:`contracts.wire.sse_to_events`, the
contract's ``parse_events``), driven here so that the first violation is located as
an SSE event index and a byte offset. Only :class:`~contracts.errors.ContractError`
is caught: any other exception is a bug and propagates (the byte-level fuzz targets
run :func:`check_bytes` and crash on it).

The contract revision: ``revision`` when given; otherwise a fixture is parsed under
its own ``contract_revision`` and raw SSE or JSON lines under the contract's
default, the newest shipped revision.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pcfuzz.contracts.errors import ContractError
from pcfuzz.contracts.registry import CONTRACTS, NAMES
from pcfuzz.contracts.sse import SSEDecoder, SSEEvent
from pcfuzz.contracts.strict_json import loads
from pcfuzz.contracts.wire import sse_to_events
from pcfuzz.errors import UsageError

__all__ = ["FORMATS", "REVISIONS", "SUFFIXES", "Verdict", "check_bytes", "sniff"]

FORMATS = ("auto", "sse", "jsonl", "fixture")
#: The format a file's suffix implies (others are sniffed: :func:`sniff`).
SUFFIXES = {".sse": "sse", ".txt": "sse", ".jsonl": "jsonl", ".json": "fixture"}



# ---------------------------------------------------------------------------
# Per-contract accessors. The provider modules are public API; anything that may be
# renamed (a status accessor, recovery calls) is read here, in one table each.

# A provider package is imported when a check first names its contract (start-up:
# ``pcfuzz check`` of one contract imports that one; the registry lists the revisions).

#: Every contract revision some contract ships (each contract's ``REVISIONS``, as the
#: registry lists them; each package checks its tables against its entry at import).
REVISIONS: tuple[str, ...] = tuple(sorted({r for c in CONTRACTS for r in c.revisions}))


_ENTRIES = {c.name: c for c in CONTRACTS}
#: The provider package of each contract checked so far, by name.
_MODULES: dict[str, Any] = {}


def _module(contract: str) -> Any:
    """The provider package of ``contract`` (a registered name), imported now if needed."""
    module = _MODULES.get(contract)
    if module is None:
        module = _MODULES[contract] = importlib.import_module(
            f"pcfuzz.contracts.{_ENTRIES[contract].package}")
    return module


#: The ``parse_events`` of each contract checked so far (:func:`_parser` fills it).
_PARSE: dict[str, Callable[..., Any]] = {}


def _parser(contract: str) -> Callable[..., Any]:
    parse = _PARSE.get(contract)
    if parse is None:
        parse = _PARSE[contract] = _module(contract).parse_events
    return parse


#: The Turn attribute with the provider's stop reason or status, per contract.
_STATUS: dict[str, str] = {c.name: c.status_field for c in CONTRACTS}

# Field names of the raw objects that carry executable calls, at the SDK baselines
# pinned in contracts/fixtures.py (fixtures/schemas/): any other key was kept as-is
# by the parser and is listed as an unknown field. Chat builds its message from
# deltas and rejects unknown delta fields, so it keeps none.
_CALL_FIELDS: dict[str, frozenset[str]] = {
    "openai-responses": frozenset(
        {"type", "id", "call_id", "name", "arguments", "status", "caller", "namespace"}),
    "anthropic-messages": frozenset({"type", "id", "name", "input", "caller"}),
    "gemini-interactions": frozenset(
        {"type", "id", "name", "call_id", "arguments", "signature"}),
}
#: The call fields a later revision's SDK types add (revision 2026-12-01: openai 3.57.0
#: ResponseFunctionToolCall.async, anthropic 2.15.0 ToolUseBlock.toolset_name): kept
#: by the parser like any optional field, and not unknown under that revision.
_NEW_CALL_FIELDS: dict[str, dict[str, frozenset[str]]] = {
    "2026-12-01": {
        "openai-responses": frozenset({"async"}),
        "anthropic-messages": frozenset({"toolset_name"}),
    },
}


def _call_objects(contract: str, turn: Any) -> list[tuple[str, Any]]:
    """(path, raw object) of each executable call."""
    if contract == "openai-responses":
        return [(f"response.output[{c.output_index}]", c.raw_item) for c in turn.calls]
    if contract == "anthropic-messages":
        blocks = turn.blocks
        return [(f"message.content[{c.index}]", blocks[c.index]) for c in turn.calls
                if 0 <= c.index < len(blocks)]
    if contract == "gemini-interactions":
        where = {index: n for n, index in enumerate(turn.step_indexes)}
        out = []
        for c in turn.calls:
            n = where.get(c.index)
            if n is not None:
                out.append((f"steps[{n}]", turn.steps[n]))
        return out
    return []


def _unknown_fields(contract: str, turn: Any) -> list[str]:
    known = _CALL_FIELDS.get(contract)
    if known is None:
        return []
    known = known | _NEW_CALL_FIELDS.get(turn.revision, {}).get(contract, frozenset())
    return [f"{path}.{key}" for path, obj in _call_objects(contract, turn)
            if isinstance(obj, dict) for key in obj if key not in known]


def _recovery(contract: str, turn: Any) -> list[dict[str, Any]]:
    # Only Messages and Chat turns have recovery calls.
    if contract not in ("anthropic-messages", "openai-chat"):
        return []
    return [{"call_id": c.call_id, "name": c.name, "reason": c.reason}
            for c in turn.recovery_calls]


# ---------------------------------------------------------------------------
# The verdict


@dataclass
class Verdict:
    """What ``pcfuzz check`` says about one captured turn.

    ``terminal``: the contract's terminal event arrived, the stream ended cleanly and
    the parser returned a Turn (only then are ``calls`` executable). ``status``: the
    provider's stop reason or status of that Turn (``None`` otherwise). ``revision``:
    the contract revision the capture was parsed under. ``events``:
    SSE events (or JSON lines) handed to the parser. ``violation``: ``None`` or
    ``{"error", "message", "event_index", "byte_offset"}`` for the first violation;
    ``event_index`` is the SSE event (or JSON line, 0-based) being handled, the
    number of events for an error at the end of the stream; ``byte_offset`` is the
    offset in the checked bytes (for a ``wire-sse-bytes`` fixture: in its ``sse``).
    """

    contract: str
    source: str
    format: str
    terminal: bool = False
    status: Any = None
    revision: str | None = None
    digest: str | None = None
    events: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)
    recovery_calls: list[dict[str, Any]] = field(default_factory=list)
    unknown_fields: list[str] = field(default_factory=list)
    violation: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.violation is None and self.terminal

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def to_json(self) -> dict[str, Any]:
        return {
            "contract": self.contract,
            "source": self.source,
            "format": self.format,
            "ok": self.ok,
            "terminal": self.terminal,
            "status": self.status,
            "revision": self.revision,
            "digest": self.digest,
            "events": self.events,
            "calls": self.calls,
            "recovery_calls": self.recovery_calls,
            "unknown_fields": self.unknown_fields,
            "violation": self.violation,
        }

    def render(self) -> str:
        lines = [f"{self.source}: {self.contract}, {self.format}, {self.events} events"]
        if self.ok:
            lines.append(f"  verdict:  OK, complete turn (status {self.status!r})")
        else:
            lines.append("  verdict:  REJECTED, no executable calls")
        lines.append(f"  terminal: {'yes' if self.terminal else 'no'}")
        if self.terminal:
            lines.append(f"  status:   {self.status}")
        if self.revision is not None:
            lines.append(f"  revision: {self.revision}")
        if self.terminal:
            lines.append(f"  digest:   {self.digest}")
        lines.append(f"  calls:    {len(self.calls)} executable")
        for call in self.calls:
            lines.append(f"    {call['call_id']}  {call['name']}({_summary(call['arguments'])})")
        if self.recovery_calls:
            lines.append(f"  recovery: {len(self.recovery_calls)} (not executable)")
            for call in self.recovery_calls:
                lines.append(f"    {call['call_id']}  {call['name']}: {call['reason']}")
        if self.terminal:
            if self.contract not in _CALL_FIELDS:
                kept = "none exposed by this contract's turn"
            else:
                kept = ", ".join(self.unknown_fields) or "none"
            lines.append(f"  unknown fields kept on calls: {kept}")
        v = self.violation
        if v is not None:
            at = []
            if v["event_index"] is not None:
                at.append(f"event {v['event_index']}")
            if v["byte_offset"] is not None:
                at.append(f"byte {v['byte_offset']}")
            lines.append(f"  violation: {v['error']} at {', '.join(at) or 'document'}")
            lines.append(f"    {v['message']}")
        return "\n".join(lines)


def _summary(arguments: Any, width: int = 72) -> str:
    text = json.dumps(arguments, ensure_ascii=False, separators=(", ", ": "), sort_keys=True)
    return text if len(text) <= width else text[: width - 3] + "..."


def _violation(exc: ContractError, index: int | None, offset: int | None) -> dict[str, Any]:
    return {
        "error": type(exc).__name__,
        "message": str(exc),
        "event_index": index,
        "byte_offset": offset,
    }


_BYTE = re.compile(r"byte (\d+)")


class _Cursor:
    """Where the pipeline is: the event being handled, events handed over, the end."""

    __slots__ = ("current_index", "current_offset", "handed", "at_end", "in_decoder")

    def __init__(self) -> None:
        self.current_index: int | None = None
        self.current_offset: int | None = None
        self.handed = 0
        self.at_end = False
        self.in_decoder = False  # an error now is the SSE decoder's own


def _sse_source(contract: str, data: bytes, cursor: _Cursor) -> Iterator[Any]:
    decoder = SSEDecoder()

    def tracked() -> Iterator[SSEEvent]:
        cursor.in_decoder = True
        batch = decoder.feed(data)
        cursor.in_decoder = False
        for sse in batch:
            cursor.current_index, cursor.current_offset = sse.index, sse.byte_offset
            cursor.handed += 1
            yield sse
        cursor.current_index = cursor.current_offset = None
        cursor.at_end = True
        cursor.in_decoder = True
        decoder.close()
        cursor.in_decoder = False

    yield from sse_to_events(contract, tracked())


def _sse_error_location(data: bytes, exc: ContractError) -> tuple[int | None, int | None]:
    """(event index, byte offset) of an SSE-layer error, whose ``where`` is ``byte N``."""
    match = _BYTE.fullmatch(exc.where or "")
    if match is None:
        return None, None
    offset = int(match.group(1))
    try:  # events completed before the offset: the failing one is the next
        index = len(SSEDecoder().feed(data[:offset]))
    except ContractError:
        index = None
    return index, offset


def _jsonl_source(contract: str, data: bytes, cursor: _Cursor) -> Iterator[Any]:
    offset = 0
    index = 0
    for line in data.splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        if not line.strip():
            continue
        cursor.current_index, cursor.current_offset = index, start
        cursor.handed += 1
        index += 1
        value = loads(line.rstrip(b"\r\n"))
        if contract == "openai-chat" and value == _module(contract).FIXTURE_DONE_EVENT:
            value = _module(contract).DONE
        yield value
    cursor.current_index = cursor.current_offset = None
    cursor.at_end = True


def _events_source(contract: str, events: list[Any], cursor: _Cursor) -> Iterator[Any]:
    if contract == "openai-chat":
        events = _module(contract).frames_from_fixture_events(events)
    for index, value in enumerate(events):
        cursor.current_index = index
        cursor.handed += 1
        yield value
    cursor.current_index = None
    cursor.at_end = True


def sniff(data: bytes) -> str:
    """``jsonl`` when the first non-blank byte is ``{`` or ``\"``, else ``sse``."""
    head = data.lstrip(b" \t\r\n\xef\xbb\xbf")[:1]
    return "jsonl" if head in (b"{", b'"') else "sse"


def check_bytes(contract: str, data: bytes, *, format: str = "sse",
                source: str = "<bytes>", revision: str | None = None) -> Verdict:
    """Check ``data`` as one turn of ``contract``; return the :class:`Verdict`.

    ``format``: ``sse``, ``jsonl``, ``fixture`` or ``auto`` (sniffed as for stdin).
    ``revision``: the contract revision to parse under; ``None``: a fixture's own
    ``contract_revision``, else the contract's default (newest) revision.
    Never raises a :class:`ContractError` (it becomes the verdict's violation); an
    unknown ``contract``, ``format`` or ``revision``, or a fixture of another
    contract, is a :class:`UsageError`. Any other exception is a bug and propagates.
    """
    if contract not in NAMES:
        raise UsageError(f"unknown contract {contract!r}; known: {', '.join(NAMES)}")
    if format not in FORMATS:
        raise UsageError(f"unknown format {format!r}; known: {', '.join(FORMATS)}")
    known = _ENTRIES[contract].revisions
    if revision is not None and revision not in known:
        raise UsageError(f"unknown revision {revision!r} of {contract}; "
                         f"known: {', '.join(sorted(known))}")
    if format == "auto":
        format = sniff(data)
    verdict = Verdict(contract=contract, source=source, format=format)
    cursor = _Cursor()
    if format == "fixture":
        from pcfuzz.contracts.fixtures import WIRE_LAYER, load_fixture_bytes

        try:
            fixture = load_fixture_bytes(data, origin=source)
        except ContractError as exc:
            verdict.violation = _violation(exc, None, None)
            return verdict
        if fixture.contract != contract:
            raise UsageError(f"{source} is a fixture of {fixture.contract}, not {contract}")
        if revision is None:
            revision = fixture.contract_revision
        if fixture.projection_layer == WIRE_LAYER and fixture.sse is not None:
            data, verdict.format = fixture.sse, "fixture (wire-sse-bytes)"
            events: Iterator[Any] = _sse_source(contract, data, cursor)
        else:
            verdict.format = f"fixture ({fixture.projection_layer})"
            events = _events_source(contract, fixture.events, cursor)
    elif format == "jsonl":
        events = _jsonl_source(contract, data, cursor)
    else:
        events = _sse_source(contract, data, cursor)
    module = _module(contract)
    verdict.revision = module.REVISION if revision is None else revision
    try:
        turn = _parser(contract)(events, revision=verdict.revision)
    except ContractError as exc:
        verdict.events = cursor.handed
        if cursor.in_decoder:
            # Raised by the SSE decoder itself: ``where`` is its byte offset.
            index, offset = _sse_error_location(data, exc)
        elif cursor.at_end:
            index, offset = cursor.handed, len(data)
        else:
            index, offset = cursor.current_index, cursor.current_offset
        verdict.violation = _violation(exc, index, offset)
        return verdict
    verdict.events = cursor.handed
    verdict.terminal = True
    verdict.status = getattr(turn, _STATUS[contract])
    verdict.revision = turn.revision
    verdict.digest = turn.digest
    verdict.calls = [{"call_id": c.call_id, "name": c.name, "arguments": c.arguments}
                     for c in turn.calls]
    verdict.recovery_calls = _recovery(contract, turn)
    verdict.unknown_fields = _unknown_fields(contract, turn)
    return verdict
