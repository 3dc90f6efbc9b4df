"""Server-sent events, written independently of ``contracts.sse``.

Three pieces, none of which imports the decoder:

* an **encoder** from a structured stream (blocks of field, comment and unknown
  lines, each line with its own line ending; optional BOM) to bytes, together with
  the events a WHATWG decoder must dispatch (the *model*), computed on the structure,
  never by parsing bytes;
* a deliberately simple **reference decoder** of whole byte strings (a byte-by-byte
  line splitter and ``str.partition``), used as the differential oracle of the fuzz
  target; it reports the same outcome classes and byte offsets the decoder promises
  (``docs/sse.md``); it lives in :mod:`.sse_model`, without hypothesis, for the
  fuzz targets, and is re-exported here;
* **renderers** from each contract's event dicts to SSE bytes, with random line
  endings, comments, optional BOM, multi-line ``data`` (JSON with newlines between
  tokens) and, for Gemini, ``id:`` lines.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from pcfuzz.contracts.registry import NAMES
from pcfuzz.strategies.sse_model import (
    BOM,
    ExpectedEvent,
    RefError,
    RefEvent,
    reference_decode,
    split_at,
)

__all__ = [
    "BOM",
    "ENDINGS",
    "Line",
    "Encoded",
    "ExpectedEvent",
    "encode",
    "sse_streams",
    "chunkings",
    "split_at",
    "reference_decode",
    "RefEvent",
    "RefError",
    "render_events",
    "render_api_events",
    "RENDER_MODES",
]

ENDINGS = ("\r\n", "\n", "\r")
FIELDS = ("data", "event", "id", "retry")


@dataclass(frozen=True)
class Line:
    """One line of a structured stream.

    ``kind``: ``"field"`` (``name``, ``value``; ``space`` = one space after the
    colon), ``"bare"`` (a line that is only ``name``, no colon), ``"comment"``
    (``value`` after the ``:``) or ``"blank"``.
    """

    kind: str
    name: str = ""
    value: str = ""
    space: bool = True


@dataclass(frozen=True)
class Encoded:
    """Bytes of a stream and what a decoder must make of them."""

    data: bytes
    events: list[ExpectedEvent]
    last_event_id: str | None
    labels: frozenset[str]


def _line_text(line: Line) -> str:
    if line.kind == "blank":
        return ""
    if line.kind == "comment":
        return ":" + line.value
    if line.kind == "bare":
        return line.name
    # A value starting with a space needs the separating space, or one is lost.
    space = " " if (line.space or line.value.startswith(" ")) else ""
    return f"{line.name}:{space}{line.value}"


def encode(lines: list[Line], endings: list[str], *, bom: bool) -> Encoded:
    """Encode ``lines`` with ``endings[i]`` after line ``i``; compute the model.

    An LF ending after an empty line that follows a CR ending would merge with that
    CR into one CRLF ending; such an ending is written as CRLF instead.
    """
    out = bytearray(BOM if bom else b"")
    labels: set[str] = {"bom"} if bom else set()
    events: list[ExpectedEvent] = []
    id_buffer: str | None = None
    last_event_id: str | None = None
    retry: int | None = None
    event_type = ""
    data: list[str] | None = None
    start = -1
    previous = ""
    for line, ending in zip(lines, endings, strict=True):
        text = _line_text(line)
        if previous == "\r" and text == "" and ending == "\n":
            ending = "\r\n"
        labels.add({"\r\n": "crlf", "\n": "lf", "\r": "cr"}[ending])
        offset = len(out)
        out += text.encode("utf-8")
        out += ending.encode("ascii")
        previous = ending
        if line.kind == "blank":
            last_event_id = id_buffer
            if data is not None:
                events.append(
                    (event_type or "message", "\n".join(data), id_buffer, retry, start, len(events))
                )
            elif event_type:
                labels.add("event type reset without data")
            data, event_type, start = None, "", -1
            continue
        if line.kind == "comment":
            labels.add("comment")
            continue
        if start < 0:
            start = offset
        name, value = line.name, ("" if line.kind == "bare" else line.value)
        if line.kind == "bare":
            labels.add("line without colon")
        if name == "data":
            data = [] if data is None else data
            data.append(value)
            if len(data) == 2:
                labels.add("multi-line data")
        elif name == "event":
            event_type = value
        elif name == "id":
            if "\x00" in value:
                labels.add("id with NUL ignored")
            else:
                id_buffer = value
        elif name == "retry":
            if value and all("0" <= c <= "9" for c in value):
                retry = int(value)
            else:
                labels.add("invalid retry ignored")
        else:
            labels.add("unknown field")
    return Encoded(bytes(out), events, last_event_id, frozenset(labels))


_value_chars = st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n")
values = st.text(_value_chars, max_size=12)
_unknown_names = st.text(
    st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n:\ufeff"),
    min_size=1,
    max_size=6,
).filter(lambda n: n not in FIELDS)


@st.composite
def _field_line(draw: st.DrawFn) -> Line:
    kind = draw(st.sampled_from(["data", "data", "data", "event", "id", "retry", "unknown",
                                 "bare"]))
    space = draw(st.booleans())
    if kind == "bare":
        return Line("bare", name=draw(st.sampled_from(FIELDS + ("x",))))
    if kind == "unknown":
        return Line("field", name=draw(_unknown_names), value=draw(values), space=space)
    if kind == "id":
        value = draw(values | st.just("a\x00b"))
    elif kind == "retry":
        value = draw(st.from_regex(r"[0-9]{1,18}", fullmatch=True) | values)
    else:
        value = draw(values)
    return Line("field", name=kind, value=value, space=space)


@st.composite
def sse_streams(draw: st.DrawFn, *, max_blocks: int = 6) -> Encoded:
    """A stream of blocks, each ending with a blank line: field lines (data mostly),
    comments, lines without a colon, unknown fields; any line ending per line;
    optional BOM; optional comments after the last block."""
    lines: list[Line] = []
    for _ in range(draw(st.integers(0, max_blocks))):
        for _ in range(draw(st.integers(0, 4))):
            if draw(st.integers(0, 5)) == 0:
                lines.append(Line("comment", value=draw(values)))
            else:
                lines.append(draw(_field_line()))
        lines.append(Line("blank"))
    for _ in range(draw(st.integers(0, 1))):
        lines.append(Line("comment", value=draw(values)))
    endings = draw(st.lists(st.sampled_from(ENDINGS), min_size=len(lines),
                            max_size=len(lines)))
    return encode(lines, endings, bom=draw(st.booleans()))


@st.composite
def chunkings(draw: st.DrawFn, data: bytes) -> list[int]:
    """Sorted cut points, biased towards the byte after a CR (inside CRLF), inside
    multi-byte characters and inside a leading BOM."""
    if len(data) < 2:
        return []
    interesting = [i for i in range(1, len(data))
                   if data[i - 1] == 0x0D or 0x80 <= data[i] <= 0xBF or i < 3]
    anywhere = st.integers(1, len(data) - 1)
    pick = st.sampled_from(interesting) | anywhere if interesting else anywhere
    return sorted(set(draw(st.lists(pick, max_size=8))))


# ---------------------------------------------------------------------------
# Renderers: contract event dicts -> SSE bytes.

RENDER_MODES = NAMES


def _data_lines(payload: str) -> list[str]:
    return payload.split("\n")


def render_events(contract: str, events: list[Any], rng: random.Random) -> bytes:
    """Render a valid event list of ``contract`` to SSE bytes the way its API would
    frame it, with random line endings, comments, a BOM, multi-line JSON data.

    * openai-responses: ``event: <type>`` + ``data: <json>``;
    * anthropic-messages: ``event: <event>`` + ``data: <json of data>``;
    * gemini-interactions: optional ``id: <event_id>`` + optional
      ``event: <event_type>`` + ``data: <json>``;
    * openai-chat: ``data: <json>``; the string ``"[DONE]"`` (or the fixture form
      ``{"data": "[DONE]"}``) becomes ``data: [DONE]``.
    """
    ending = rng.choice(ENDINGS + ("mixed",))
    parts: list[str] = []
    ids = rng.random() < 0.5
    names = rng.random() < 0.5

    def line(text: str) -> None:
        end = rng.choice(ENDINGS) if ending == "mixed" else ending
        if end == "\n" and text == "" and parts and parts[-1].endswith("\r"):
            end = "\r\n"
        parts.append(text + end)

    for event in events:
        if rng.random() < 0.1:
            line(": keep-alive")
        if contract == "openai-chat":
            if event == "[DONE]" or event == {"data": "[DONE]"}:
                payload = "[DONE]"
            else:
                payload = _json(event, rng)
        elif contract == "anthropic-messages":
            line(f"event: {event['event']}")
            payload = _json(event["data"], rng)
        elif contract == "openai-responses":
            line(f"event: {event['type']}")
            payload = _json(event, rng)
        else:
            if ids and "event_id" in event:
                line(f"id: {event['event_id']}")
            if names:
                line(f"event: {event['event_type']}")
            payload = _json(event, rng)
        for text in _data_lines(payload):
            line("data: " + text)
        line("")
    body = "".join(parts).encode("utf-8")
    return (BOM + body) if rng.random() < 0.2 else body


def render_api_events(contract: str, events: list[Any]) -> bytes:
    """Render a valid event list of ``contract`` the way its API frames it on the
    wire, deterministically: LF line endings, one compact JSON ``data:`` line per
    event, no BOM, no comments; ``event:`` names for openai-responses and
    anthropic-messages, ``id: <event_id>`` lines for gemini-interactions events that
    carry one, bare ``data:`` frames and ``data: [DONE]`` for openai-chat. Used for
    the ``wire-sse-bytes`` fixtures."""
    out: list[str] = []
    for event in events:
        if contract == "openai-chat":
            if event == "[DONE]" or event == {"data": "[DONE]"}:
                out.append("data: [DONE]\n\n")
                continue
            payload = event
        elif contract == "anthropic-messages":
            out.append(f"event: {event['event']}\n")
            payload = event["data"]
        elif contract == "openai-responses":
            out.append(f"event: {event['type']}\n")
            payload = event
        else:
            if "event_id" in event:
                out.append(f"id: {event['event_id']}\n")
            payload = event
        out.append(f"data: {json.dumps(payload, separators=(',', ':'), ensure_ascii=False)}\n\n")
    return "".join(out).encode("utf-8")


def _json(value: Any, rng: random.Random) -> str:
    indent = rng.choice([None, None, None, 0, 1])
    return json.dumps(value, ensure_ascii=rng.random() < 0.5, indent=indent)
