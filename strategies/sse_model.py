"""The reference SSE decoder without hypothesis: a deliberately simple decoder of whole
byte strings (a byte-by-byte line splitter and ``str.partition``), written
independently of ``contracts.sse``, reporting the same outcome classes and byte
offsets the decoder promises (``docs/sse.md``). It is the differential oracle of the
``sse`` fuzz target and checks the ``fixture`` target's wire fixtures; both import
this module, not :mod:`.sse` (which re-exports it), so their start-up does not import
hypothesis.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BOM", "MAX_RETRY_DIGITS", "ExpectedEvent", "RefError", "RefEvent",
           "reference_decode", "split_at"]

BOM = b"\xef\xbb\xbf"
MAX_RETRY_DIGITS = 18

# (event, data, id, retry, byte_offset, index), as SSEEvent's fields in order.
ExpectedEvent = tuple[str, str, "str | None", "int | None", int, int]


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` cut at the sorted offsets ``cuts`` (empty pieces allowed)."""
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


# ---------------------------------------------------------------------------
# The reference decoder: whole bytes in, events or one error out.


@dataclass(frozen=True)
class RefEvent:
    event: str
    data: str
    id: str | None
    retry: int | None
    byte_offset: int
    index: int

    def as_tuple(self) -> ExpectedEvent:
        return (self.event, self.data, self.id, self.retry, self.byte_offset, self.index)


@dataclass(frozen=True)
class RefError:
    """``kind``: ``"utf8"``, ``"limit"`` or ``"truncated"``; ``where``: ``"byte N"``."""

    kind: str
    where: str


def reference_decode(
    data: bytes, *, max_line_bytes: int = 16 * 1024 * 1024,
    max_event_bytes: int = 16 * 1024 * 1024,
) -> list[RefEvent] | RefError:
    """Decode a whole stream, one byte at a time; no chunking, no fast paths."""
    pos = 3 if data[:3] == BOM else 0
    lines: list[tuple[int, bytes, bool]] = []  # (offset, content, terminated)
    n = len(data)
    while pos < n:
        end = pos
        while end < n and data[end] not in (0x0A, 0x0D):
            end += 1
        if end == n:
            lines.append((pos, data[pos:], False))
            break
        lines.append((pos, data[pos:end], True))
        pos = end + 2 if data[end] == 0x0D and end + 1 < n and data[end + 1] == 0x0A else end + 1
    events: list[RefEvent] = []
    id_buffer: str | None = None
    retry: int | None = None
    event_type = ""
    data_lines: list[str] = []
    seen_data = False
    start = -1
    size = 0
    for offset, content, terminated in lines:
        if len(content) > max_line_bytes:
            return RefError("limit", f"byte {offset}")
        if not terminated:
            return RefError("truncated", f"byte {start if start >= 0 else offset}")
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError as exc:
            return RefError("utf8", f"byte {offset + exc.start}")
        if text == "":
            if seen_data:
                events.append(RefEvent(event_type or "message", "\n".join(data_lines),
                                       id_buffer, retry, start, len(events)))
            data_lines, seen_data, event_type, start, size = [], False, "", -1, 0
            continue
        if text.startswith(":"):
            continue
        if start < 0:
            start = offset
        size += len(content)
        if size > max_event_bytes:
            return RefError("limit", f"byte {offset}")
        name, colon, value = text.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data_lines.append(value)
            seen_data = True
        elif name == "event":
            event_type = value
        elif name == "id" and "\x00" not in value:
            id_buffer = value
        elif name == "retry" and value != "" and all(c in "0123456789" for c in value):
            if len(value) > MAX_RETRY_DIGITS:
                return RefError("limit", f"byte {offset}")
            retry = int(value)
    if start >= 0:
        return RefError("truncated", f"byte {start}")
    return events
