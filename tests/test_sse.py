"""contracts.sse: the WHATWG event-stream decoder. One example test per rule (each
breaks a naive splitter), then properties against an independent encoder/model and
reference decoder (``strategies.sse``)."""

from __future__ import annotations

from typing import Any

import pytest
from _cost import best_cpu_time
from hypothesis import event, example, given
from hypothesis import strategies as st

from pcfuzz.bench.resources import decoder_memory
from pcfuzz.contracts.errors import (
    ContractError,
    LimitExceeded,
    ProtocolViolation,
    StreamTruncated,
)
from pcfuzz.contracts.sse import MAX_RETRY_DIGITS, SSEDecoder, SSEEvent, decode_sse
from pcfuzz.strategies.sse import (
    BOM,
    Encoded,
    RefError,
    chunkings,
    reference_decode,
    split_at,
    sse_streams,
)


def tuples(events: list[SSEEvent]) -> list[tuple[Any, ...]]:
    return [(e.event, e.data, e.id, e.retry, e.byte_offset, e.index) for e in events]


def data_of(raw: bytes) -> list[str]:
    return [e.data for e in decode_sse(raw)]


def feed_pieces(pieces: list[bytes], **limits: int) -> list[SSEEvent]:
    decoder = SSEDecoder(**limits)
    events: list[SSEEvent] = []
    for piece in pieces:
        events += decoder.feed(piece)
    events += decoder.close()
    return events


def outcome(pieces: list[bytes], **limits: int) -> object:
    """Events as tuples, or (error class name, where)."""
    try:
        return tuples(feed_pieces(pieces, **limits))
    except ContractError as exc:
        return (type(exc).__name__, exc.where)


_KIND = {"utf8": "ProtocolViolation", "limit": "LimitExceeded", "truncated": "StreamTruncated"}


def reference_outcome(data: bytes, **limits: int) -> object:
    ref = reference_decode(data, **limits)
    if isinstance(ref, RefError):
        return (_KIND[ref.kind], ref.where)
    return [r.as_tuple() for r in ref]


# ------------------------------------------------------------------ line endings


def test_lf_crlf_and_cr_each_end_a_line() -> None:
    for end in (b"\n", b"\r\n", b"\r"):
        assert data_of(b"data: a" + end + b"data: b" + end + end) == ["a\nb"]


def test_mixed_line_endings_in_one_stream() -> None:
    assert data_of(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n") == ["a", "b", "c"]


def test_cr_at_chunk_end_and_lf_at_next_chunk_start_are_one_line_ending() -> None:
    # A naive splitter sees CR (end of line), then LF: a blank line that dispatches
    # "a" early and loses "b" into a separate event.
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\ndata: b\r\n\r\n") == [SSEEvent("message", "a\nb", None, None, 0, 0)]
    assert decoder.close() == []


def test_lf_after_a_cr_that_was_followed_by_more_bytes_is_its_own_line_ending() -> None:
    # Regression (found by the chunking property): a CR inside one feed followed by an
    # incomplete line must not swallow an LF that starts the next feed.
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\rdata: b") == []
    assert decoder.feed(b"\n:\n\n") == [SSEEvent("message", "a\nb", None, None, 0, 0)]


def test_cr_cr_is_two_line_endings_not_one() -> None:
    assert data_of(b"data: a\r\rdata: b\r\r") == ["a", "b"]


def test_cr_line_ending_dispatches_without_waiting_for_the_next_byte() -> None:
    decoder = SSEDecoder()
    assert [e.data for e in decoder.feed(b"data: a\r\r")] == ["a"]
    # The following LF still belongs to the second CR: no second blank line.
    assert decoder.feed(b"\n") == []
    assert decoder.close() == []


def test_lf_skip_applies_only_to_the_byte_right_after_a_cr() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a\r")
    decoder.feed(b"\n")
    # This LF is a blank line of its own: it dispatches.
    assert [e.data for e in decoder.feed(b"\n")] == ["a"]


def test_byte_offsets_count_every_line_ending_byte() -> None:
    raw = b"data: a\r\n\r\n: c\rdata: b\n\n"
    assert [e.byte_offset for e in decode_sse(raw)] == [0, 15]
    assert raw[15:22] == b"data: b"


# ------------------------------------------------------------------ BOM


def test_one_leading_bom_is_ignored() -> None:
    events = decode_sse(BOM + b"data: a\n\n")
    assert tuples(events) == [("message", "a", None, None, 3, 0)]


def test_bom_split_across_feeds_is_ignored() -> None:
    for cut in (1, 2, 3):
        raw = BOM + b"data: a\n\n"
        assert [e.data for e in feed_pieces([raw[:cut], raw[cut:]])] == ["a"]
        assert [e.data for e in feed_pieces([bytes([b]) for b in raw])] == ["a"]


def test_second_bom_is_not_ignored() -> None:
    # Only one BOM is stripped: the second one is part of the field name, which is
    # then unknown ("\ufeffdata"), so the line is ignored and nothing is dispatched.
    assert decode_sse(BOM + BOM + b"data: a\n\n") == []


def test_bom_after_stream_start_is_content() -> None:
    assert data_of(b"data: \xef\xbb\xbfa\n\n") == ["\ufeffa"]
    assert data_of(b"\n" + BOM + b"data: a\n\n") == []


def test_partial_bom_is_invalid_utf8_not_silently_dropped() -> None:
    with pytest.raises(ProtocolViolation) as info:
        decode_sse(b"\xef\xbbdata: a\n\n")
    assert info.value.where == "byte 0"


def test_partial_bom_at_close_is_truncation() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"\xef\xbb") == []
    with pytest.raises(StreamTruncated) as info:
        decoder.close()
    assert info.value.where == "byte 0"


# ------------------------------------------------------------------ fields


def test_comment_lines_are_ignored_even_inside_an_event() -> None:
    assert data_of(b": hello\ndata: a\n:data: x\ndata: b\n\n") == ["a\nb"]


def test_multi_line_data_is_joined_with_lf() -> None:
    assert data_of(b"data: a\ndata:\ndata: b\n\n") == ["a\n\nb"]


def test_exactly_one_leading_space_after_the_colon_is_removed() -> None:
    assert data_of(b"data:a\n\ndata: a\n\ndata:  a\n\ndata:\ta\n\n") == ["a", "a", " a", "\ta"]


def test_line_without_colon_is_a_field_with_empty_value() -> None:
    assert data_of(b"data\n\n") == [""]
    assert tuples(decode_sse(b"event: x\nevent\ndata: a\n\n"))[0][0] == "message"
    assert decode_sse(b"id: 1\nid\ndata: a\n\n")[0].id == ""


def test_empty_data_field_dispatches_an_event_with_empty_data() -> None:
    assert tuples(decode_sse(b"data:\n\n")) == [("message", "", None, None, 0, 0)]


def test_event_without_data_is_not_dispatched_but_its_event_type_resets() -> None:
    events = decode_sse(b"event: first\n\ndata: a\n\nevent: x\nid: 7\n\n")
    assert tuples(events) == [("message", "a", None, None, 14, 0)]


def test_event_field_sets_the_type_and_empty_means_message() -> None:
    events = decode_sse(b"event: ping\ndata: a\n\nevent:\ndata: b\n\ndata: c\n\n")
    assert [e.event for e in events] == ["ping", "message", "message"]


def test_last_event_field_wins() -> None:
    assert decode_sse(b"event: a\nevent: b\ndata: x\n\n")[0].event == "b"


def test_id_survives_later_events_without_one() -> None:
    events = decode_sse(b"id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n")
    assert [e.id for e in events] == ["1", "1", "2"]


def test_id_containing_nul_is_ignored() -> None:
    events = decode_sse(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n")
    assert [e.id for e in events] == ["1", "1"]


def test_empty_id_sets_the_last_event_id_to_empty() -> None:
    events = decode_sse(b"id: 1\ndata: a\n\nid:\ndata: b\n\n")
    assert [e.id for e in events] == ["1", ""]


def test_no_id_ever_is_none() -> None:
    assert decode_sse(b"data: a\n\n")[0].id is None


def test_last_event_id_is_committed_at_the_blank_line_even_without_data() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"id: 5\n")
    assert decoder.last_event_id is None  # not before the blank line
    decoder.feed(b"\n")
    assert decoder.last_event_id == "5"
    assert decoder.feed(b"data: a\n\n")[0].id == "5"


def test_retry_takes_ascii_digits_only_else_is_ignored() -> None:
    decoder = SSEDecoder()
    for value in (b"1a", b"-1", b"1.5", b" 1", b"", "\u0661".encode(), "\u00b2".encode(), b"+3"):
        decoder.feed(b"retry: " + value + b"\n\n")
    assert decoder.retry is None
    decoder.feed(b"retry: 0015\n\n")
    assert decoder.retry == 15
    assert decoder.feed(b"data: a\n\n")[0].retry == 15


def test_retry_with_too_many_digits_is_limit_exceeded_not_clamped() -> None:
    assert decode_sse(b"retry: " + b"9" * MAX_RETRY_DIGITS + b"\ndata: a\n\n")[0].retry == int(
        "9" * MAX_RETRY_DIGITS
    )
    with pytest.raises(LimitExceeded) as info:
        decode_sse(b"data: a\n\nretry: " + b"9" * 5000 + b"\n\n")
    assert info.value.where == "byte 9"


def test_unknown_fields_and_wrong_case_are_ignored() -> None:
    assert data_of(b"foo: bar\nData: x\nDATA: y\ndata: a\n\n") == ["a"]
    assert decode_sse(b"foo: bar\n\n") == []


def test_field_value_keeps_later_colons() -> None:
    assert data_of(b'data: {"a": 1}\n\n') == ['{"a": 1}']


def test_index_counts_dispatched_events_only() -> None:
    events = decode_sse(b"data: a\n\nid: 1\n\n: c\n\ndata: b\n\n")
    assert [e.index for e in events] == [0, 1]


def test_nul_and_controls_in_data_are_kept() -> None:
    assert data_of("data: a\x00\x0b\x0c\x1c\x85b\n\n".encode()) == ["a\x00\x0b\x0c\x1c\x85b"]


def test_unicode_line_separators_are_not_line_endings() -> None:
    # str.splitlines would split on these; the SSE grammar does not.
    raw = "data: a\u2028b\u2029c\x85d\n\n".encode()
    assert data_of(raw) == ["a\u2028b\u2029c\x85d"]


# ------------------------------------------------------------------ UTF-8


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        (b"data: \xff\n\n", "byte 6"),
        (b"data: ok\n\ndata: \xc0\xaf\n\n", "byte 16"),  # overlong '/'
        (b"data: \xed\xa0\x80\n\n", "byte 6"),  # CESU-8 surrogate
        (b"data: \xe2\x82\n\n", "byte 6"),  # truncated before the line ending
        (b": \x80 comment\n", "byte 2"),
        (b"\xf4\x90\x80\x80: x\n", "byte 0"),  # above U+10FFFF
        (b"id: 1\nevent: \xfe\ndata: a\n\n", "byte 13"),
    ],
)
def test_invalid_utf8_is_a_protocol_violation_with_its_byte_offset(raw: bytes, where: str) -> None:
    with pytest.raises(ProtocolViolation) as info:
        decode_sse(raw)
    assert info.value.where == where
    with pytest.raises(ProtocolViolation) as info:
        feed_pieces([bytes([b]) for b in raw])
    assert info.value.where == where


def test_multibyte_character_split_across_feeds_decodes() -> None:
    raw = "data: é€😀\n\n".encode()
    for cut in range(1, len(raw)):
        assert [e.data for e in feed_pieces([raw[:cut], raw[cut:]])] == ["é€😀"]


def test_invalid_utf8_offset_counts_from_stream_start_across_feeds() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a\n\n")
    with pytest.raises(ProtocolViolation) as info:
        decoder.feed(b"data: b\xff\n")
    assert info.value.where == "byte 16"


# ------------------------------------------------------------------ limits


def test_line_over_max_line_bytes_is_limit_exceeded_and_at_the_limit_is_not() -> None:
    assert data_of(b"data: " + b"x" * 4 + b"\n\n") == ["xxxx"]
    ok = SSEDecoder(max_line_bytes=10)
    assert [e.data for e in ok.feed(b"data: xxxx\r\n\r\n")] == ["xxxx"]
    with pytest.raises(LimitExceeded) as info:
        decode_sse(b"data: a\n\ndata: xxxxx\n\n", max_line_bytes=10)
    assert info.value.where == "byte 9"


def test_incomplete_line_over_the_limit_fails_before_its_line_ending_arrives() -> None:
    decoder = SSEDecoder(max_line_bytes=10)
    decoder.feed(b"data: a\n\n")
    for byte in b"data: xxxx":
        decoder.feed(bytes([byte]))
    with pytest.raises(LimitExceeded) as info:
        decoder.feed(b"x")
    assert info.value.where == "byte 9"


def test_event_over_max_event_bytes_is_limit_exceeded_and_at_the_limit_is_not() -> None:
    # Field lines count without their line endings; comments and blank lines do not.
    raw = b"data: ab\r\n: a long comment that is not counted\ndata: cd\r\n\r\n"
    assert data_of(raw) == ["ab\ncd"]
    assert [e.data for e in decode_sse(raw, max_event_bytes=16)] == ["ab\ncd"]
    with pytest.raises(LimitExceeded) as info:
        decode_sse(raw, max_event_bytes=15)
    assert info.value.where == "byte 47"


def test_non_data_field_lines_count_towards_the_event_limit() -> None:
    with pytest.raises(LimitExceeded):
        decode_sse(b"id: 1\n" * 100, max_event_bytes=400)


def test_limit_resets_at_each_blank_line() -> None:
    raw = b"data: abcd\n\n" * 50
    assert len(decode_sse(raw, max_event_bytes=10)) == 50


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "5", None, 2**0 - 1])
def test_limits_must_be_positive_ints(bad: object) -> None:
    for name in ("max_line_bytes", "max_event_bytes"):
        with pytest.raises(ContractError) as info:
            SSEDecoder(**{name: bad})  # type: ignore[arg-type]
        assert info.value.where == f"argument {name}"


# ------------------------------------------------------------------ close


def test_incomplete_event_at_close_is_stream_truncated_with_its_offset() -> None:
    decoder = SSEDecoder()
    assert [e.data for e in decoder.feed(b"data: a\n\n: c\nid: 1\ndata: b\n")] == ["a"]
    with pytest.raises(StreamTruncated) as info:
        decoder.close()
    assert info.value.where == "byte 13"


def test_incomplete_line_at_close_is_stream_truncated() -> None:
    for raw, where in [(b"data: a\n\ndata: b", "byte 9"), (b"data: a\n\n: keep", "byte 9"),
                       (b"data", "byte 0")]:
        with pytest.raises(StreamTruncated) as info:
            decode_sse(raw)
        assert info.value.where == where


def test_single_field_line_without_blank_line_is_truncation_not_an_event() -> None:
    with pytest.raises(StreamTruncated):
        decode_sse(b"data: a\n")
    with pytest.raises(StreamTruncated):
        decode_sse(b"event: x\n")


def test_stream_ending_at_an_event_boundary_closes_cleanly() -> None:
    for raw in (b"", b"data: a\n\n", b"data: a\n\n: bye\n", b"data: a\r\r", BOM, b": x\r\n"):
        decoder = SSEDecoder()
        decoder.feed(raw)
        assert decoder.close() == []


def test_feed_and_close_after_close_raise() -> None:
    decoder = SSEDecoder()
    decoder.close()
    with pytest.raises(ProtocolViolation):
        decoder.feed(b"data: a\n\n")
    with pytest.raises(ProtocolViolation):
        decoder.close()


@pytest.mark.parametrize(
    "bad_call",
    [
        lambda d: d.feed(b"data: \xff\n"),
        lambda d: d.feed("data: a\n\n"),
        lambda d: d.feed(b"data: " + b"x" * 100),
        lambda d: (d.feed(b"data: a\n"), d.close()),
    ],
)
def test_decoder_is_poisoned_after_any_error(bad_call: Any) -> None:
    decoder = SSEDecoder(max_line_bytes=50)
    with pytest.raises(ContractError) as first:
        bad_call(decoder)
    assert decoder.poisoned
    for later in (lambda: decoder.feed(b"data: ok\n\n"), decoder.close):
        with pytest.raises(type(first.value)) as info:
            later()
        assert "unusable" in info.value.message


# ------------------------------------------------------------------ arguments


class _Bytes(bytes):
    def find(self, *a: Any) -> int:  # type: ignore[override]
        raise RuntimeError("override called")

    rfind = find  # type: ignore[assignment]

    def decode(self, *a: Any) -> str:  # type: ignore[override]
        raise RuntimeError("override called")

    def __bytes__(self) -> bytes:
        raise RuntimeError("override called")

    def __len__(self) -> int:
        raise RuntimeError("override called")

    def __getitem__(self, i: Any) -> Any:
        raise RuntimeError("override called")

    def startswith(self, *a: Any) -> bool:  # type: ignore[override]
        raise RuntimeError("override called")


class _ByteArray(bytearray):
    def __bytes__(self) -> bytes:
        return b"data: smuggled\n\n"

    def __getitem__(self, i: Any) -> Any:
        raise RuntimeError("override called")


class _Pretender:
    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return bytes


def test_bytes_and_bytearray_subclasses_are_read_by_their_real_content() -> None:
    assert [e.data for e in SSEDecoder().feed(_Bytes(b"data: a\n\n"))] == ["a"]
    assert [e.data for e in SSEDecoder().feed(_ByteArray(b"data: a\n\n"))] == ["a"]


def test_bytearray_is_copied_so_later_mutation_changes_nothing() -> None:
    buffer = bytearray(b"data: abc")
    decoder = SSEDecoder()
    decoder.feed(buffer)
    buffer[6:9] = b"XYZ"
    assert [e.data for e in decoder.feed(b"\n\n")] == ["abc"]


@pytest.mark.parametrize(
    "bad",
    ["data: a\n\n", memoryview(b"data: a\n\n"), None, 7, [b"data: a\n\n"], _Pretender(),
     bytes, object(), 1.0, (b"x",)],
    ids=lambda v: type(v).__name__,
)
def test_non_bytes_arguments_are_contract_errors(bad: object) -> None:
    decoder = SSEDecoder()
    with pytest.raises(ContractError) as info:
        decoder.feed(bad)  # type: ignore[arg-type]
    assert info.value.where == "argument data"
    with pytest.raises(ContractError):
        decode_sse(bad)  # type: ignore[arg-type]


@given(st.one_of(st.none(), st.integers(), st.text(), st.floats(), st.lists(st.binary()),
                 st.dictionaries(st.text(), st.binary()), st.booleans()))
def test_only_contract_error_escapes_for_any_argument(value: object) -> None:
    event(type(value).__name__)
    with pytest.raises(ContractError):
        SSEDecoder().feed(value)  # type: ignore[arg-type]
    if type(value) is not int or value < 1:
        with pytest.raises(ContractError):
            SSEDecoder(max_line_bytes=value)  # type: ignore[arg-type]


# ------------------------------------------------------------------ linear time


def test_one_long_line_fed_in_small_pieces_costs_linear_work() -> None:
    # Baseline in the same run: the same bytes in the same 16-byte feeds, but forming
    # short lines, so nothing can be re-scanned. A decoder that re-scans or re-joins
    # its growing buffer on every feed copies ~1 MB per feed of a 2 MB line: hundreds
    # of times the baseline even at memcpy speed; a linear one stays near it.
    pieces = 128 * 1024
    long_line = [b"x" * 16] * pieces
    short_lines = [b": 3456789abcdef\n"] * pieces

    def run(chunks: list[bytes]) -> None:
        decoder = SSEDecoder()
        feed = decoder.feed
        for chunk in chunks:
            feed(chunk)

    # thread CPU time (tests/_cost.py: preemption on a shared machine is no cost)
    ratio = (best_cpu_time(lambda: run(long_line), 2)
             / best_cpu_time(lambda: run(short_lines), 2))
    assert ratio < 5, f"one long line costs {ratio:.1f}x short lines: not linear"


def test_one_byte_per_feed_keeps_the_pending_line_in_one_growing_buffer() -> None:
    # White-box companion of the cost test: one-byte feeds of an incomplete line go
    # into one buffer that grows in place (amortized: never re-joined per feed), which
    # holds the line's bytes and no object per feed (a list of one-byte parts held
    # 8x the line in pointers alone).
    decoder = SSEDecoder()
    for _ in range(1000):
        decoder.feed(b"x")
    assert type(decoder._pending) is bytearray  # noqa: SLF001
    assert decoder._pending == b"x" * 1000  # noqa: SLF001
    assert [e.data for e in decoder.feed(b"\n\n")] == []
    assert decoder._pending == b""  # noqa: SLF001


# ------------------------------------------------------------------ memory

_TYPICAL_EVENT = (b'id: ev-1\nevent: response.output_text.delta\ndata: {"type": '
                  b'"response.output_text.delta", "delta": "' + b"hello world " * 5
                  + b'", "sequence_number": 1}\n\n')
_MIB = 1 << 20
#: Input shapes (about 1 MiB each) for the decoder's memory bound.
MEMORY_SHAPES: dict[str, bytes] = {
    "typical capture, LF": _TYPICAL_EVENT * (_MIB // len(_TYPICAL_EVENT)),
    "typical capture, CRLF": (_TYPICAL_EVENT * (_MIB // len(_TYPICAL_EVENT))).replace(
        b"\n", b"\r\n"),
    "typical capture, CR": (_TYPICAL_EVENT * (_MIB // len(_TYPICAL_EVENT))).replace(
        b"\n", b"\r"),
    "typical capture, non-ASCII": (_TYPICAL_EVENT.replace(b"hello", "h\u00e9llo".encode())
                                   * (_MIB // len(_TYPICAL_EVENT))),
    "all CRLF blank lines": b"\r\n" * (_MIB // 2),
    "all LF blank lines": b"\n" * _MIB,
    "all comment lines": b":\n" * (_MIB // 2),
    "one huge data line": b"data: " + b"x" * (_MIB - 8) + b"\n\n",
    "many tiny events": b"data:\n\n" * (_MIB // 7),
    "one event of many tiny data lines": b"data:x\n" * (_MIB // 7) + b"\n",
    "multi-line JSON events": b'data: {\ndata:  "a": 1\ndata: }\n\n' * (_MIB // 35),
}


def decoder_memory_per_byte(pieces: list[bytes]) -> float:
    """Peak memory (tracemalloc) the decoder allocates while it is fed ``pieces``,
    minus what it returns (the events, which the caller keeps), per input byte: the
    measurement ``pcfuzz bench --cases resources`` reports."""
    return decoder_memory(pieces) / sum(map(len, pieces))


@pytest.mark.parametrize("shape", sorted(MEMORY_SHAPES))
def test_decoder_memory_is_at_most_twice_the_bytes_it_holds(shape: str) -> None:
    # The decoder walks a region line by line without materializing its lines (a
    # splitlines() list cost ~27x the input for CRLF blank lines), joins the data
    # lines of an event in chunks, and decodes once: at most 2 bytes of its own per
    # input byte, whatever the shape.
    assert decoder_memory_per_byte([MEMORY_SHAPES[shape]]) <= 2.0


@pytest.mark.parametrize("size", [1, 16, 4096])
def test_decoder_memory_for_one_line_fed_in_pieces_is_at_most_twice_the_line(size: int) -> None:
    line = b"data: " + b"x" * (_MIB // 4)
    pieces = [line[i : i + size] for i in range(0, len(line), size)] + [b"\n\n"]
    assert decoder_memory_per_byte(pieces) <= 2.0


# ------------------------------------------------------------------ the fast path

#: Shapes the fast path takes whole (one C call per event or per run of lines):
#: each must reach the line-by-line general path at most ``allowed`` times.
FAST_SHAPES: dict[str, tuple[bytes, int]] = {
    "LF blank lines": (b"\n" * 10_000, 0),
    "CRLF blank lines": (b"\r\n" * 10_000, 0),
    "CR blank lines": (b"\r" * 10_000, 0),
    "comment lines": (b": keep-alive\r\n" * 10_000, 0),
    "blank lines between events": ((b"data: x\n\n" + b"\n" * 50) * 200, 0),
    "CRLF events": (b"id: 1\r\nevent: e\r\ndata: {}\r\n\r\n" * 2_000, 0),
    "CR events": (b"event: e\rdata: {}\r\r" * 2_000, 0),
    "non-ASCII events": ("data: {\"t\": \"\u00e9\u4e2d\"}\n\n".encode() * 2_000, 0),
    "events with keep-alive comments": ((b": ping\n" + _TYPICAL_EVENT) * 2_000, 0),
}


@pytest.mark.parametrize("shape", sorted(FAST_SHAPES))
def test_every_common_line_shape_takes_the_fast_path(
    shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Blank lines went one by one through the general path (each a call with its
    # own decode and line split: 290-590x slower per byte than a typical capture),
    # and CRLF, CR and non-ASCII captures line by line. Counted, not timed.
    data, allowed = FAST_SHAPES[shape]
    calls = []
    general = SSEDecoder._general  # noqa: SLF001

    def counting(self: SSEDecoder, *args: Any) -> Any:
        calls.append(1)
        return general(self, *args)

    monkeypatch.setattr(SSEDecoder, "_general", counting)
    expected = tuples(feed_pieces([data[i : i + 1] for i in range(0, min(len(data), 3000))]
                                  + [data[3000:]]))
    calls.clear()
    assert tuples(decode_sse(data)) == expected
    assert len(calls) <= allowed


# ------------------------------------------------------------------ properties


def _label(enc: Encoded, cuts: list[int]) -> None:
    for label in sorted(enc.labels):
        event(label)
    data = enc.data
    if any(0 < c < len(data) and data[c - 1] == 0x0D and data[c] == 0x0A for c in cuts):
        event("split inside CRLF")
    if any(0 < c < len(data) and 0x80 <= data[c] <= 0xBF for c in cuts):
        event("split inside a multi-byte character")
    if enc.labels & {"cr"} and not enc.labels & {"lf", "crlf"}:
        event("CR-only line endings")
    if data.startswith(BOM) and any(0 < c < 3 for c in cuts):
        event("split inside the BOM")


@given(sse_streams())
def test_encoded_stream_decodes_to_the_model(enc: Encoded) -> None:
    for label in sorted(enc.labels):
        event(label)
    decoder = SSEDecoder()
    events = decoder.feed(enc.data)
    assert decoder.close() == []
    assert tuples(events) == enc.events
    assert decoder.last_event_id == enc.last_event_id


@given(st.data())
def test_any_chunking_gives_the_same_events_as_one_whole_feed_and_the_model(
    data: st.DataObject,
) -> None:
    enc = data.draw(sse_streams())
    cuts = data.draw(chunkings(enc.data))
    _label(enc, cuts)
    assert tuples(feed_pieces(split_at(enc.data, cuts))) == enc.events
    assert tuples(feed_pieces([enc.data])) == enc.events


@given(sse_streams())
def test_one_byte_at_a_time_gives_the_same_events(enc: Encoded) -> None:
    for label in sorted(enc.labels):
        event(label)
    assert tuples(feed_pieces([bytes([b]) for b in enc.data])) == enc.events


_sse_bytes = st.lists(
    st.sampled_from([b"data", b"event", b"id", b"retry", b":", b" ", b"\r", b"\n", b"\r\n",
                     b"a", b"\x00", BOM, b"\xef", b"\xc3", b"\xa9", b"\xff", b"7", b"x" * 9]),
    max_size=40,
).map(b"".join)


@given(_sse_bytes, st.integers(1, 30), st.integers(1, 60), st.data())
@example(b"\xef\xbb", 1, 1, None)
@example(b"data: a\r", 5, 5, None)
def test_decoder_agrees_with_the_reference_and_every_outcome_is_split_invariant(
    raw: bytes, max_line: int, max_event: int, data: st.DataObject | None
) -> None:
    limits = {"max_line_bytes": max_line, "max_event_bytes": max_event}
    whole = outcome([raw], **limits)
    expected = reference_outcome(raw, **limits)
    event(f"outcome: {whole[0] if isinstance(whole, tuple) else 'events'}")
    assert whole == expected
    cuts = data.draw(chunkings(raw)) if data is not None else list(range(1, len(raw)))
    assert outcome(split_at(raw, cuts), **limits) == whole
