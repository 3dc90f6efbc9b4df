"""Server-sent events: an incremental, sans-IO decoder of raw ``text/event-stream`` bytes.

Implements the WHATWG HTML "event stream interpretation" algorithm, stricter than a
browser wherever silence would lose information:

* line endings CRLF, LF and CR (a CR ending one ``feed`` and an LF starting the next
  are one line ending); exactly one UTF-8 byte order mark at stream start is ignored;
* comment lines (``:`` first); the fields ``event``, ``data``, ``id`` and ``retry``
  with the spec's rules; unknown fields are ignored; an event is dispatched by a blank
  line and only when at least one ``data`` line was seen;
* invalid UTF-8 anywhere is a :class:`~contracts.errors.ProtocolViolation`
  (``where="byte N"``), never a replacement character;
* a line longer than ``max_line_bytes`` or an event whose field lines exceed
  ``max_event_bytes`` is a :class:`~contracts.errors.LimitExceeded`;
* ``close()`` on a stream that ends inside an event or a line raises
  :class:`~contracts.errors.StreamTruncated` (the spec silently discards it).

Every rejection is a :class:`~contracts.errors.ContractError`; after one, the decoder
is poisoned and every later ``feed``/``close`` raises. Rules, decisions and tests:
``docs/sse.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, cast

from .errors import ContractError, LimitExceeded, ProtocolViolation, StreamTruncated

__all__ = [
    "SSEEvent",
    "SSEDecoder",
    "decode_sse",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_EVENT_BYTES",
    "MAX_RETRY_DIGITS",
]

#: Default bound on one line, line ending excluded: room for a completed-response
#: snapshot (strict JSON's own default document bound is the same 16 MiB).
DEFAULT_MAX_LINE_BYTES: Final = 16 * 1024 * 1024
#: Default bound on one event: the bytes of its field lines, line endings excluded.
DEFAULT_MAX_EVENT_BYTES: Final = 16 * 1024 * 1024
#: A ``retry`` value with more digits is a :class:`LimitExceeded`, not a silent clamp.
MAX_RETRY_DIGITS: Final = 18

_BOM: Final = b"\xef\xbb\xbf"

# The common event, matched whole by one C call on ASCII text without CR: an optional
# ``id`` line (no NUL: such an id is ignored, left to the general path), an optional
# ``event`` line, one ``data`` line, the blank line. Each value after one optional
# space, exactly as the general path reads it. Anything else goes line by line.
_COMMON_EVENT: Final = re.compile(
    r"(?:id: ?([^\n\x00]*)\n)?(?:event: ?([^\n]*)\n)?data: ?([^\n]*)\n\n"
)


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event.

    ``event``: the ``event`` field, ``"message"`` when absent or empty. ``data``: the
    ``data`` lines joined with ``"\\n"``. ``id``: the last event ID in force when the
    event was dispatched (WHATWG: an ``id`` field survives later events that have
    none; ``None`` if the stream never set one, ``""`` after an empty ``id:``).
    ``retry``: the reconnection time in milliseconds in force when dispatched
    (``None`` if never set). ``byte_offset``: stream offset of the event's first
    field line (a BOM counts). ``index``: 0-based count of dispatched events.
    """

    event: str
    data: str
    id: str | None
    retry: int | None
    byte_offset: int
    index: int


def _check_limit(value: object, name: str) -> int:
    if type(value) is not int or value < 1:
        raise ProtocolViolation(
            f"{name} must be a positive int, got {type(value).__name__}",
            where=f"argument {name}",
        )
    return value


def _as_bytes(data: object) -> bytes:
    # type(), not isinstance(): isinstance() believes a ``__class__`` property. A
    # subclass is read by its real content (base-class slicing): its overrides
    # (find, decode, __bytes__, __buffer__, ...) are never called.
    kind = type(data)
    if kind is bytes:
        return cast(bytes, data)
    if issubclass(kind, bytes):
        return bytes.__getitem__(cast(bytes, data), slice(None))
    if issubclass(kind, bytearray):
        # A copy: later mutation of the caller's buffer cannot change buffered data.
        return bytes(bytearray.__getitem__(cast(bytearray, data), slice(None)))
    raise ProtocolViolation(
        f"SSE input must be bytes or bytearray, got {kind.__name__}", where="argument data"
    )


class SSEDecoder:
    """Incremental decoder: ``feed(bytes) -> list[SSEEvent]``, then ``close()``.

    Sans-IO: it never reads or waits; feed it chunks split anywhere (inside a CRLF,
    inside a multi-byte character, one byte at a time) and it returns the same events
    as one whole ``feed``. Work is linear in the bytes fed: an incomplete line is kept
    as a list of parts and joined once, when its line ending arrives.

    Raises :class:`ProtocolViolation` (invalid UTF-8, ``where="byte N"``; a ``data``
    argument that is not ``bytes``/``bytearray``; a limit that is not a positive
    ``int``; use after ``close``), :class:`LimitExceeded` (``max_line_bytes``,
    ``max_event_bytes``, a ``retry`` of more than :data:`MAX_RETRY_DIGITS` digits) and
    :class:`StreamTruncated` (``close`` inside an event or a line). After any error
    every later call raises again.
    """

    __slots__ = (
        "_max_line", "_max_event", "_pos", "_started", "_head", "_cr", "_pending",
        "_pending_len", "_line_start", "_data", "_event_type", "_id_buffer",
        "_last_event_id", "_retry", "_event_start", "_event_size", "_index",
        "_error", "_closed",
    )

    def __init__(
        self,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    ) -> None:
        self._max_line = _check_limit(max_line_bytes, "max_line_bytes")
        self._max_event = _check_limit(max_event_bytes, "max_event_bytes")
        self._pos = 0  # stream offset of the next byte fed
        self._started = False  # BOM decision taken
        self._head = b""  # up to 2 bytes that may still become a BOM
        self._cr = False  # the last complete line ended with CR: skip one leading LF
        self._pending: list[bytes] = []  # parts of the incomplete line
        self._pending_len = 0
        self._line_start = 0  # stream offset of the incomplete line
        self._data: list[str] = []
        self._event_type = ""
        self._id_buffer: str | None = None
        self._last_event_id: str | None = None
        self._retry: int | None = None
        self._event_start = -1  # offset of the current event's first field line
        self._event_size = 0
        self._index = 0
        self._error: ContractError | None = None
        self._closed = False

    @property
    def last_event_id(self) -> str | None:
        """WHATWG's "last event ID string": the ``id`` buffer as of the last blank
        line (also one that dispatched nothing); ``None`` until an ``id`` is seen."""
        return self._last_event_id

    @property
    def retry(self) -> int | None:
        """The reconnection time (ms) set by the last valid ``retry`` field, or ``None``."""
        return self._retry

    @property
    def poisoned(self) -> bool:
        """True once any error has been raised through this decoder."""
        return self._error is not None

    def _check(self) -> None:
        if self._error is not None:
            raise type(self._error)(
                f"SSE decoder is unusable after an earlier error: {self._error.message}",
                where=self._error.where,
            ) from self._error
        if self._closed:
            raise ProtocolViolation("SSE decoder already closed")

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Decode the next chunk; return the events it completes (possibly none)."""
        self._check()
        try:
            return self._feed(_as_bytes(data))
        except ContractError as exc:
            self._error = exc
            raise

    def close(self) -> list[SSEEvent]:
        """End of stream. Returns ``[]`` (an event is only ever dispatched by a blank
        line); raises :class:`StreamTruncated` if the stream ended inside a line or
        after field lines that no blank line dispatched, ``where`` = the byte offset
        of that event's first field line (or of the incomplete line)."""
        self._check()
        try:
            events = self._close()
        except ContractError as exc:
            self._error = exc
            raise
        self._closed = True
        return events

    # ------------------------------------------------------------------ internals

    def _feed(self, data: bytes) -> list[SSEEvent]:
        base = self._pos
        self._pos += len(data)
        if not self._started:
            data = self._head + data
            base -= len(self._head)
            if len(data) < 3 and _BOM.startswith(data):
                self._head = data
                return []
            self._head = b""
            self._started = True
            if data.startswith(_BOM):
                data = data[3:]
                base += 3
        if not data:
            return []
        start = 0
        if self._cr:
            self._cr = False
            if data[0] == 0x0A:
                start = 1
        if not self._pending:
            self._line_start = base + start
        last = max(data.rfind(b"\n", start), data.rfind(b"\r", start))
        if last < 0:
            if start < len(data):
                self._pending.append(data[start:] if start else data)
                self._pending_len += len(data) - start
                self._check_pending()
            return []
        chunk = data[start : last + 1]
        if self._pending:
            self._pending.append(chunk)
            region = b"".join(self._pending)
        else:
            region = chunk
        region_base = self._line_start
        rest = data[last + 1 :]
        # Only a CR that is the last byte fed can pair with an LF of the next feed.
        self._cr = not rest and data[last] == 0x0D
        self._pending = [rest] if rest else []
        self._pending_len = len(rest)
        self._line_start = base + last + 1
        events = self._lines(region, region_base)
        self._check_pending()
        return events

    def _check_pending(self) -> None:
        if self._pending_len > self._max_line:
            raise LimitExceeded(
                f"SSE line exceeds {self._max_line} bytes", where=f"byte {self._line_start}"
            )

    def _lines(self, region: bytes, offset: int) -> list[SSEEvent]:
        """Process complete lines; ``region`` ends with a line ending."""
        if b"\r" not in region and region.isascii():
            return self._ascii_lf_lines(region.decode("ascii"), offset)
        events: list[SSEEvent] = []
        self._general(region, offset, events)
        return events

    def _ascii_lf_lines(self, text: str, offset: int) -> list[SSEEvent]:
        """:meth:`_lines` for ASCII text with LF endings only: characters are bytes.
        Whole common events (:data:`_COMMON_EVENT`) are matched at event boundaries
        in one C call each; any other block, up to its blank line, goes through
        :meth:`_general`. The events, offsets and errors are the general path's."""
        events: list[SSEEvent] = []
        match = _COMMON_EVENT.match
        n = len(text)
        pos = 0
        # Both limits hold for a whole event whose field lines sum to at most this.
        fits = min(self._max_line, self._max_event)
        retry = self._retry
        index = self._index
        id_buffer = self._id_buffer
        last_event_id = self._last_event_id
        while pos < n:
            if self._event_start < 0:
                m = match(text, pos)
                if m is not None:
                    end = m.end()
                    ident, name, data = m.groups()
                    # Field-line bytes: the block minus its line endings.
                    size = end - pos - 2 - (ident is not None) - (name is not None)
                    if size <= fits:
                        if ident is not None:
                            id_buffer = ident
                        last_event_id = id_buffer  # its blank line
                        events.append(SSEEvent(name or "message", data, id_buffer, retry,
                                               offset + pos, index))
                        index += 1
                        pos = end
                        continue
            # One block line by line: up to and including its blank line (or the end).
            if text.startswith("\n", pos):
                stop = pos + 1
            else:
                stop = text.find("\n\n", pos)
                stop = n if stop < 0 else stop + 2
            self._index = index
            self._id_buffer = id_buffer
            self._last_event_id = last_event_id
            self._general(text[pos:stop].encode("ascii"), offset + pos, events)
            retry = self._retry
            index = self._index
            id_buffer = self._id_buffer
            last_event_id = self._last_event_id
            pos = stop
        self._index = index
        self._id_buffer = id_buffer
        self._last_event_id = last_event_id
        return events

    def _general(self, region: bytes, offset: int, events: list[SSEEvent]) -> None:
        """Process complete lines one by one, appending dispatched events."""
        raws = region.splitlines(True)
        bad: UnicodeDecodeError | None = None
        try:
            text = region.decode("utf-8")
        except UnicodeDecodeError:
            # Slow path, in stream order: the lines before the first invalid one are
            # processed (their limit errors come first), then the invalid one fails.
            lines: list[str] = []
            for raw in raws:
                try:
                    lines.append(raw.rstrip(b"\r\n").decode("utf-8"))
                except UnicodeDecodeError as exc:
                    bad = exc
                    break
            ascii_only = False
        else:
            if "\r" in text:
                text = text.replace("\r\n", "\n").replace("\r", "\n")
            lines = text.split("\n")
            lines.pop()
            ascii_only = text.isascii()
        max_line = self._max_line
        max_event = self._max_event
        # The hot loop works on locals; the state is written back after it (after an
        # error the decoder is poisoned, so a half-written state is never used).
        data = self._data
        event_type = self._event_type
        id_buffer = self._id_buffer
        last_event_id = self._last_event_id
        event_start = self._event_start
        event_size = self._event_size
        index = self._index
        # Not strict: on the slow path ``lines`` stops before the first invalid line.
        for raw, line in zip(raws, lines, strict=False):
            pos = offset
            offset += len(raw)
            size = len(line) if ascii_only else len(raw.rstrip(b"\r\n"))
            if size > max_line:
                raise LimitExceeded(f"SSE line exceeds {max_line} bytes", where=f"byte {pos}")
            if not line:
                # Blank line: dispatch (WHATWG "dispatch the event").
                last_event_id = id_buffer
                if data:
                    events.append(
                        SSEEvent(event_type or "message", "\n".join(data), id_buffer,
                                 self._retry, event_start, index)
                    )
                    index += 1
                    data = []
                event_type = ""
                event_start = -1
                event_size = 0
                continue
            if line[0] == ":":
                continue
            if event_start < 0:
                event_start = pos
            event_size += size
            if event_size > max_event:
                raise LimitExceeded(
                    f"SSE event exceeds {max_event} bytes of field lines", where=f"byte {pos}"
                )
            if line.startswith("data:"):  # the common line: name is exactly "data"
                data.append(line[6:] if line.startswith(" ", 5) else line[5:])
                continue
            colon = line.find(":")
            if colon < 0:
                name, value = line, ""
            else:
                name = line[:colon]
                value = line[colon + 2 :] if line.startswith(" ", colon + 1) else line[colon + 1 :]
            if name == "data":
                data.append(value)
            elif name == "event":
                event_type = value
            elif name == "id":
                if "\x00" not in value:
                    id_buffer = value
            elif name == "retry":
                self._set_retry(value, pos)
        self._data = data
        self._event_type = event_type
        self._id_buffer = id_buffer
        self._last_event_id = last_event_id
        self._event_start = event_start
        self._event_size = event_size
        self._index = index
        if bad is not None:
            raw = raws[len(lines)]
            size = len(raw.rstrip(b"\r\n"))
            if size > max_line:
                raise LimitExceeded(
                    f"SSE line exceeds {max_line} bytes", where=f"byte {offset}"
                )
            raise ProtocolViolation(
                f"SSE stream is not valid UTF-8 ({bad.reason})",
                where=f"byte {offset + bad.start}",
            )

    def _set_retry(self, value: str, pos: int) -> None:
        # WHATWG: only ASCII digits set the reconnection time; anything else is ignored.
        if value and value.isascii() and value.isdigit():
            if len(value) > MAX_RETRY_DIGITS:
                raise LimitExceeded(
                    f"SSE retry value has more than {MAX_RETRY_DIGITS} digits",
                    where=f"byte {pos}",
                )
            self._retry = int(value)

    def _close(self) -> list[SSEEvent]:
        if not self._started:
            head, self._head = self._head, b""
            self._started = True
            self._pos -= len(head)
            self._feed(head)
        if self._event_start >= 0:
            raise StreamTruncated(
                "SSE stream ended inside an event (no blank line after its field lines)",
                where=f"byte {self._event_start}",
            )
        if self._pending:
            raise StreamTruncated(
                "SSE stream ended inside a line", where=f"byte {self._line_start}"
            )
        return []


def decode_sse(
    data: bytes,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
) -> list[SSEEvent]:
    """Decode a whole stream: ``feed(data)`` then ``close()`` on a fresh
    :class:`SSEDecoder` with these limits. Raises what they raise."""
    decoder = SSEDecoder(max_line_bytes=max_line_bytes, max_event_bytes=max_event_bytes)
    events = decoder.feed(data)
    events.extend(decoder.close())
    return events
