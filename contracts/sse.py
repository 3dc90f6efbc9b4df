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
from typing import Any, Final, cast

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

# Line endings as one token: CRLF (possessive: a CR followed by LF is never a CR line
# ending plus a blank line), CR, LF. Matching that alternation costs about three
# times a literal LF, so a region without CR (the common capture), or with CRLF
# only, gets patterns with its one literal line ending.
_ANY_EOL: Final = r"(?:\r\n?+|\n)"
# The common event, matched whole by one C call at an event boundary: an optional
# ``id`` line (no NUL: such an id is ignored, left to the general path), an optional
# ``event`` line, one ``data`` line, the blank line. Each value after one optional
# space, exactly as the general path reads it. (``{0}``: the line ending; ``{1}``:
# the characters that end a line's content, one negated character where the region
# allows, which the regex engine matches faster than a set.)
_EVENT: Final = (r"(?:id: ?([^{1}\x00]*+){0})?(?:event: ?([^{1}]*+){0})?"
                 r"data: ?([^{1}]*+){0}{0}")
# The same with 2 to _MULTI_DATA ``data:`` lines (JSON split over lines): group 3
# spans the data lines, whose values _DATA_VALUE reads.
_MULTI_DATA: Final = 64
_MULTI_EVENT: Final = (r"(?:id: ?([^{1}\x00]*+){0})?(?:event: ?([^{1}]*+){0})?"
                       r"((?:data:[^{1}]*+{0}){{2," + str(_MULTI_DATA) + r"}}){0}")
_DATA_VALUE: Final = re.compile(r"data: ?([^\r\n]*+)")
# A run of blank and comment lines at an event boundary: they change nothing there
# (the last event ID already is the id buffer), so the run is skipped whole; a run of
# line-ending characters is a run of blank lines, whatever their pairing. In
# undecoded (non-ASCII) text only ASCII comments: any other line is left to the
# general path, which checks its UTF-8.
_SKIP: Final = r"(?:[\r\n]++|:[^\r\n]*+[\r\n])++"
_SKIP_RAW: Final = r"(?:[\r\n]++|:[^\r\n\x80-\xff]*+[\r\n])++"
_COMMENT: Final = r":[^\r\n]*+"
# One line of the general path: its content and its line ending.
_LINE: Final = r"([^{1}]*+){0}"


class _Patterns:
    """The compiled patterns of one text kind (``str``, or undecoded bytes) and one
    line-ending kind (LF only, CRLF only, any)."""

    __slots__ = ("event", "multi", "skip", "comment", "line")

    def __init__(self, raw: bool, eol: str, ends: str) -> None:
        def compile_(pattern: str) -> re.Pattern[Any]:
            pattern = pattern.format(eol, ends)
            return re.compile(pattern.encode("ascii")) if raw else re.compile(pattern)

        self.event = compile_(_EVENT).match
        self.multi = compile_(_MULTI_EVENT).match
        self.skip = compile_(_SKIP_RAW if raw else _SKIP).match
        self.comment = compile_(_COMMENT).finditer
        self.line = compile_(_LINE).finditer


# (raw, kind) -> patterns; kind 0: no CR, 1: every CR in a CRLF, 2: anything else.
_PATTERNS: Final = {
    (raw, kind): _Patterns(raw, eol, ends)
    for raw in (False, True)
    for kind, (eol, ends) in enumerate(((r"\n", r"\n"), (r"\r\n", r"\r"), (_ANY_EOL, r"\r\n")))
}


# What a blank or comment line starts with (as str, and as a byte of undecoded text).
_SKIP_FIRST: Final = frozenset({"\n", "\r", ":", 0x0A, 0x0D, 0x3A})
# The data lines of one event are joined in chunks of this many lines, so a long
# event of short lines holds its text, not an object per line.
_DATA_CHUNK: Final = 64
# An incomplete line whose buffered bytes reach this is decoded as it grows (see
# _BigLine), so completing it never holds its bytes and its text at once.
_BLOCK: Final = 64 * 1024
_FIELD_BYTES: Final = frozenset({b"data", b"event", b"id", b"retry"})


_LONG_LINES: dict[int, re.Pattern[bytes]] = {}


def _long_line(max_line: int) -> re.Pattern[bytes]:
    """A run of more than ``max_line`` bytes without a line ending: found from a line
    start (the leftmost such run starts a line)."""
    pattern = _LONG_LINES.get(max_line)
    if pattern is None:
        if len(_LONG_LINES) > 16:
            _LONG_LINES.clear()
        pattern = _LONG_LINES[max_line] = re.compile(rb"[^\r\n]{%d}" % (max_line + 1))
    return pattern


class _BigLine:
    """The decoded part of an incomplete line of at least :data:`_BLOCK` bytes.

    ``name``: the field the line sets (``data``/``event``/``id``/``retry``), ``""`` for
    another field (it still counts towards the event size), ``None`` for a comment.
    ``parts``: the decoded value so far (kept for the four fields only: the text of a
    comment or another field is decoded to check it, and dropped). ``size``: the
    line's bytes decoded (or, after an invalid byte, counted) so far. ``bad``: stream
    offset of its first invalid UTF-8 byte, or -1; reported when the line completes,
    since its length is checked first.
    """

    __slots__ = ("name", "parts", "size", "bad", "reason")

    def __init__(self) -> None:
        self.name: str | None = ""  # decided from the line's first bytes
        self.parts: list[str] = []
        self.size = 0
        self.bad = -1
        self.reason = ""


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


def _values(
    m: re.Match[Any], view: memoryview | None, several: bool
) -> tuple[str | None, str | None, str] | None:
    """The id, event name and data of a matched event (:data:`_EVENT`, or with
    ``several`` :data:`_MULTI_EVENT`); ``view``: the undecoded buffer, whose values
    are decoded from it (``None`` if one is not UTF-8: the general path reports it)."""
    ident, name, data = m.groups()
    if view is not None:
        try:
            if ident is not None:
                ident = str(view[m.start(1) : m.end(1)], "utf-8")
            if name is not None:
                name = str(view[m.start(2) : m.end(2)], "utf-8")
            data = str(view[m.start(3) : m.end(3)], "utf-8")
        except UnicodeDecodeError:
            return None
    if several:
        data = "\n".join(_DATA_VALUE.findall(data))
    return ident, name, data


class SSEDecoder:
    """Incremental decoder: ``feed(bytes) -> list[SSEEvent]``, then ``close()``.

    Sans-IO: it never reads or waits; feed it chunks split anywhere (inside a CRLF,
    inside a multi-byte character, one byte at a time) and it returns the same events
    as one whole ``feed``. Work is linear in the bytes fed: an incomplete line grows
    in one buffer, in place, and from 64 KiB on is decoded as it grows. Memory is at
    most twice the bytes it holds plus a constant: the complete lines of a feed are
    walked one regular-expression match at a time (whole common events and runs of
    blank and comment lines in one match each), never materialized as a list of
    lines, and a long event's data lines are joined in chunks.

    Raises :class:`ProtocolViolation` (invalid UTF-8, ``where="byte N"``; a ``data``
    argument that is not ``bytes``/``bytearray``; a limit that is not a positive
    ``int``; use after ``close``), :class:`LimitExceeded` (``max_line_bytes``,
    ``max_event_bytes``, a ``retry`` of more than :data:`MAX_RETRY_DIGITS` digits) and
    :class:`StreamTruncated` (``close`` inside an event or a line). After any error
    every later call raises again.
    """

    __slots__ = (
        "_max_line", "_max_event", "_pos", "_started", "_head", "_cr", "_pending", "_big",
        "_line_start", "_data", "_joined", "_event_type", "_id_buffer",
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
        # The incomplete line, grown in place (amortized linear, no object per feed).
        self._pending = bytearray()
        self._big: _BigLine | None = None  # its decoded part, once it is long
        self._line_start = 0  # stream offset of the incomplete line
        # The data lines of the current event; the first ``_joined`` entries are
        # chunks of _DATA_CHUNK lines already joined with "\n".
        self._data: list[str] = []
        self._joined = 0
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
        start = 0
        if not self._started:
            if self._head:
                data = self._head + data
                base -= len(self._head)
            if len(data) < 3 and _BOM.startswith(data):
                self._head = data
                return []
            self._head = b""
            self._started = True
            if data.startswith(_BOM):
                start = 3
        size = len(data)
        if start >= size:
            return []
        if self._cr:
            self._cr = False
            if data[start] == 0x0A:
                start += 1
        pending = self._pending
        if not pending and self._big is None:
            self._line_start = base + start
        last = max(data.rfind(b"\n", start), data.rfind(b"\r", start))
        if last < 0:
            if start < size:
                pending += memoryview(data)[start:]
                self._grow_pending()
            return []
        events: list[SSEEvent] = []
        if pending and self._big is None and last - start < _BLOCK:
            # A short buffer and a small feed (a socket read): one region, as if fed
            # whole.
            pending += memoryview(data)[start : last + 1]
            self._pending = bytearray()
            self._lines(pending, 0, len(pending), self._line_start, events,
                        raw=not pending.isascii())
            del pending
            start = last + 1
        elif pending or self._big is not None:
            # Only the line the buffer completes goes through it; the rest of the
            # feed is read where it is (no copy of the feed into the buffer).
            lf, cr = data.find(b"\n", start), data.find(b"\r", start)
            eol = lf if cr < 0 else cr if lf < 0 else min(lf, cr)
            cut = eol + 1
            if data[eol] == 0x0D and cut < size and data[cut] == 0x0A:
                cut += 1  # the LF of a CRLF
            pending += memoryview(data)[start:cut]
            if self._big is not None:
                self._finish_big_line(cut - eol, events)
                self._pending = bytearray()
            else:
                self._pending = bytearray()
                self._lines(pending, 0, len(pending), self._line_start, events, raw=True)
            del pending
            self._line_start = base + cut
            start = cut
        if start <= last:
            stop = last + 1
            if stop - start > self._max_line:
                # A region longer than a line may be: a line over the bound ends the
                # work at its start (the lines before it are processed first, so
                # the errors keep their order), not after the whole region is read.
                long = _long_line(self._max_line).search(data, start, stop)
                if long is not None:
                    self._lines(data, start, long.start(), base + start, events,
                                raw=not data.isascii())
                    raise LimitExceeded(f"SSE line exceeds {self._max_line} bytes",
                                        where=f"byte {base + long.start()}")
            self._lines(data, start, stop, base + start, events, raw=not data.isascii())
        # Only a CR that is the last byte fed can pair with an LF of the next feed.
        self._cr = last + 1 == size and data[last] == 0x0D
        self._line_start = base + last + 1
        if last + 1 < size:  # else the buffer is already empty
            self._pending = bytearray(memoryview(data)[last + 1 :])
            self._grow_pending()
        return events

    def _grow_pending(self) -> None:
        """The incomplete line grew: check its length; decode it once it is long."""
        big = self._big
        if (big.size if big is not None else 0) + len(self._pending) > self._max_line:
            raise LimitExceeded(
                f"SSE line exceeds {self._max_line} bytes", where=f"byte {self._line_start}"
            )
        if len(self._pending) >= _BLOCK:
            self._decode_pending(final=False)

    def _decode_pending(self, final: bool, eol: int = 0) -> None:
        """Move the buffered bytes of the incomplete line into its :class:`_BigLine`:
        all of them but the ``eol`` bytes of its line ending (``final``), else up to an
        incomplete UTF-8 sequence at the end."""
        buf = self._pending
        cut = len(buf) - eol
        big = self._big
        start = 0
        if big is None:
            # Which field: decided on the bytes (the four names are ASCII), so the
            # value is decoded once, from its first byte. Undecidable yet (no colon in
            # fewer than 7 bytes, or nothing after the colon): wait for more bytes.
            colon = buf.find(b":", 0, 7)
            if not final and (colon < 0 and cut < 7 or colon + 1 == cut):
                return
            big = self._big = _BigLine()
            if colon == 0:
                big.name = None  # a comment
            elif colon > 0 and bytes(buf[:colon]) in _FIELD_BYTES:
                big.name = bytes(buf[:colon]).decode("ascii")
                start = colon + 2 if buf[colon + 1 : colon + 2] == b" " else colon + 1
        if not final:
            # Back over continuation bytes to the last character's first byte; keep
            # that character for the next block if its bytes are not all here yet.
            lead = cut - 1
            while lead > cut - 4 and lead > start and 0x80 <= buf[lead] < 0xC0:
                lead -= 1
            first = buf[lead]
            need = 2 if 0xC0 <= first < 0xE0 else 3 if 0xE0 <= first < 0xF0 else (
                4 if 0xF0 <= first < 0xF8 else 1)
            if cut - lead < need:
                cut = lead
        view = memoryview(buf)
        if big.bad < 0:
            try:
                # The prefix of a field of ours is ASCII: the value is all to check.
                text = str(view[start:cut] if big.name else view[:cut], "utf-8")
            except UnicodeDecodeError as exc:
                big.bad = self._line_start + big.size + (start if big.name else 0) + exc.start
                big.reason = exc.reason
                big.parts = []
            else:
                if big.name and text:
                    big.parts.append(text)
        big.size += cut
        del view
        self._pending = bytearray() if final else bytearray(memoryview(buf)[cut:])

    def _finish_big_line(self, eol: int, events: list[SSEEvent]) -> None:
        """The long incomplete line got its line ending (``eol`` bytes, the last ones
        buffered): apply it as the general path applies a line."""
        self._decode_pending(final=True, eol=eol)
        big = self._big
        self._big = None
        if big is None:  # pragma: no cover - only called for a long line
            return
        pos = self._line_start
        size = big.size
        if size > self._max_line:
            raise LimitExceeded(f"SSE line exceeds {self._max_line} bytes", where=f"byte {pos}")
        if big.bad >= 0:
            raise ProtocolViolation(
                f"SSE stream is not valid UTF-8 ({big.reason})", where=f"byte {big.bad}"
            )
        if big.name is None:
            return  # a comment
        if self._event_start < 0:
            self._event_start = pos
        self._event_size += size
        if self._event_size > self._max_event:
            raise LimitExceeded(
                f"SSE event exceeds {self._max_event} bytes of field lines", where=f"byte {pos}"
            )
        name, parts = big.name, big.parts
        del big
        if not name:
            return  # a field that is none of ours
        value = "" if not parts else parts[0] if len(parts) == 1 else "".join(parts)
        del parts
        if name == "data":
            self._data.append(value)
            if len(self._data) - self._joined > _DATA_CHUNK:
                self._data[self._joined :] = ["\n".join(self._data[self._joined :])]
                self._joined += 1
        elif name == "event":
            self._event_type = value
        elif name == "id":
            if "\x00" not in value:
                self._id_buffer = value
        else:
            self._set_retry(value, pos)

    def _lines(
        self, buf: bytes | bytearray, lo: int, hi: int, offset: int, events: list[SSEEvent],
        raw: bool,
    ) -> None:
        """Process the complete lines ``buf[lo:hi]`` (ending with a line ending; stream
        offset of ``buf[lo]``: ``offset``), appending dispatched events.

        ASCII text is decoded once (characters are bytes there); anything else
        (``raw``) is matched as bytes (offsets stay byte offsets) and its values are
        decoded one by one, straight from the buffer. At an event boundary a common
        event (:data:`_EVENT`, or :data:`_MULTI_EVENT`) is taken whole, and a run of
        blank and comment lines skipped whole, each by one C call; anything else (a
        comment or ``retry`` inside an event, another field order, an id with NUL, a
        value that is not UTF-8, a block that could exceed a limit) goes through
        :meth:`_general` up to the next event boundary. The events, offsets and
        errors are the general path's."""
        text: str | bytes | bytearray
        if raw:
            text, view = buf, memoryview(buf)
            crs = buf.count(b"\r", lo, hi)
            kind = 0 if not crs else 1 if crs == buf.count(b"\r\n", lo, hi) == buf.count(
                b"\n", lo, hi) else 2
        else:
            text = str(memoryview(buf)[lo:hi], "ascii") if lo or hi < len(buf) else buf.decode()
            lo, hi = 0, len(text)  # text[0] is buf[lo], at stream offset ``offset``
            view = None
            crs = text.count("\r")
            kind = 0 if not crs else 1 if crs == text.count("\r\n") == text.count("\n") else 2
        patterns = _PATTERNS[raw, kind]
        delta = offset - lo  # stream offset of text[i] is delta + i
        event, multi, skip = patterns.event, patterns.multi, patterns.skip
        pos = lo
        max_line = self._max_line
        # Both limits hold for a whole event whose field lines, line endings included,
        # sum to at most this.
        fits = min(max_line, self._max_event)
        retry = self._retry
        index = self._index
        id_buffer = self._id_buffer
        last_event_id = self._last_event_id
        while pos < hi:
            if self._event_start < 0:
                if text[pos] in _SKIP_FIRST:  # a blank or comment line: no event here
                    m = skip(text, pos, hi)
                    if m is not None:
                        end = m.end()
                        if end - pos > max_line:
                            self._check_comments(patterns, text, pos, end, delta)
                        pos = end
                        continue
                m = event(text, pos, hi)
                if m is not None and view is None:  # the hot case: one event, decoded text
                    end = m.end()
                    if end - pos <= fits:
                        ident, name, data = m.groups()
                        if ident is not None:
                            id_buffer = ident
                        last_event_id = id_buffer  # its blank line (WHATWG)
                        events.append(SSEEvent(name or "message", data, id_buffer, retry,
                                               delta + pos, index))
                        index += 1
                        pos = end
                        continue
                else:
                    several = m is None
                    if several:
                        m = multi(text, pos, hi)
                    if m is not None:
                        end = m.end()
                        if end - pos <= fits:
                            parsed = _values(m, view, several)
                            if parsed is not None:
                                ident, name, data = parsed
                                if ident is not None:
                                    id_buffer = ident
                                last_event_id = id_buffer
                                events.append(SSEEvent(name or "message", data, id_buffer,
                                                       retry, delta + pos, index))
                                index += 1
                                pos = end
                                continue
                # (no second look for blank or comment lines: every such run starts
                # with a character of _SKIP_FIRST, already tried above)
            self._index = index
            self._id_buffer = id_buffer
            self._last_event_id = last_event_id
            pos = self._general(patterns, text, view, pos, hi, delta, events)
            retry = self._retry
            index = self._index
            id_buffer = self._id_buffer
            last_event_id = self._last_event_id
        self._index = index
        self._id_buffer = id_buffer
        self._last_event_id = last_event_id

    def _check_comments(
        self, patterns: _Patterns, text: str | bytes | bytearray, pos: int, end: int, delta: int
    ) -> None:
        """Raise for the first comment line over ``max_line_bytes`` in a skipped run of
        blank and comment lines (needed only when the run itself is longer)."""
        for m in patterns.comment(text, pos, end):
            if m.end() - m.start() > self._max_line:
                raise LimitExceeded(
                    f"SSE line exceeds {self._max_line} bytes", where=f"byte {delta + m.start()}"
                )

    def _general(
        self, patterns: _Patterns, text: str | bytes | bytearray, view: memoryview | None,
        pos: int, hi: int, delta: int, events: list[SSEEvent],
    ) -> int:
        """Process lines one by one from ``pos`` until the next event boundary (after a
        blank line, or after a line that starts no event) or ``hi``; return where it
        stopped. ``view``: the undecoded buffer, or ``None`` for decoded text."""
        max_line = self._max_line
        max_event = self._max_event
        # The loop works on locals; the state is written back after it (after an error
        # the decoder is poisoned, so a half-written state is never used).
        data = self._data
        joined = self._joined
        event_type = self._event_type
        id_buffer = self._id_buffer
        last_event_id = self._last_event_id
        event_start = self._event_start
        event_size = self._event_size
        index = self._index
        stop = hi
        for m in patterns.line(text, pos, hi):
            pos = delta + m.start()
            begin, end = m.span(1)
            size = end - begin
            # Per line: length, then UTF-8, then the event size.
            if size > max_line:
                raise LimitExceeded(f"SSE line exceeds {max_line} bytes", where=f"byte {pos}")
            if view is None:
                line = m.group(1)
            else:
                try:
                    line = str(view[begin:end], "utf-8")
                except UnicodeDecodeError as exc:
                    raise ProtocolViolation(
                        f"SSE stream is not valid UTF-8 ({exc.reason})",
                        where=f"byte {pos + exc.start}",
                    ) from None
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
                    joined = 0
                event_type = ""
                event_start = -1
                event_size = 0
            elif line[0] != ":":
                if event_start < 0:
                    event_start = pos
                event_size += size
                if event_size > max_event:
                    raise LimitExceeded(
                        f"SSE event exceeds {max_event} bytes of field lines", where=f"byte {pos}"
                    )
                colon = line.find(":")
                if colon < 0:
                    name, value = line, ""
                else:
                    name = line[:colon]
                    value = (line[colon + 2 :] if line.startswith(" ", colon + 1)
                             else line[colon + 1 :])
                if name == "data":
                    data.append(value)
                    if len(data) - joined > _DATA_CHUNK:
                        data[joined:] = ["\n".join(data[joined:])]
                        joined += 1
                elif name == "event":
                    event_type = value
                elif name == "id":
                    if "\x00" not in value:
                        id_buffer = value
                elif name == "retry":
                    self._set_retry(value, pos)
            if event_start < 0:
                stop = m.end()
                break
        self._data = data
        self._joined = joined
        self._event_type = event_type
        self._id_buffer = id_buffer
        self._last_event_id = last_event_id
        self._event_start = event_start
        self._event_size = event_size
        self._index = index
        return stop

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
        if self._pending or self._big is not None:
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
