"""contracts.sse's fast path (whole common events, and runs of blank and comment
lines, matched in one call each, with any line endings, in ASCII text or undecoded
bytes) gives exactly what the line-by-line path gives.

Streams are built from common events (optional ``id``, optional ``event``, one or
several ``data`` lines, blank line; LF, CRLF or CR; ASCII or not) mixed with near
misses (id with NUL, fields in another order, comments, retry, invalid UTF-8 in a
value or a comment, a long comment, a cut last event) and fed whole (fast path), one
byte at a time (regions of one line: the general path), cut at random points (the
line an incomplete buffer completes, then the rest of the feed) and to the reference
decoder, under tight and default limits.
"""

from __future__ import annotations

from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts.errors import ContractError
from pcfuzz.contracts.sse import SSEDecoder
from pcfuzz.strategies.sse import RefError, reference_decode, split_at

_value = st.text(st.sampled_from("ab :é\x00"), max_size=6).map(
    lambda v: v.encode("utf-8").decode("ascii", "ignore"))

BLOCKS = {
    "common": lambda i, e, d: f"id: {i}\nevent: {e}\ndata: {d}\n\n",
    "data only": lambda i, e, d: f"data:{d}\n\n",
    "event+data": lambda i, e, d: f"event:{e}\ndata: {d}\n\n",
    "id+data": lambda i, e, d: f"id:{i}\ndata:{d}\n\n",
    "id with NUL": lambda i, e, d: f"id: {i}\x00\ndata: {d}\n\n",
    "other order": lambda i, e, d: f"event: {e}\nid: {i}\ndata: {d}\n\n",
    "two data lines": lambda i, e, d: f"data: {d}\ndata: {d}\n\n",
    "comment": lambda i, e, d: f": {d}\ndata: {d}\n\n",
    "retry": lambda i, e, d: f"retry: 12\ndata: {d}\n\n",
    "blank": lambda i, e, d: "\n",
    "no data": lambda i, e, d: f"event: {e}\n\n",
    "bare data": lambda i, e, d: "data\n\n",
    "crlf": lambda i, e, d: f"data: {d}\r\n\r\n",
    "non-ascii": lambda i, e, d: f"data: {d}é\n\n",
    "common crlf": lambda i, e, d: f"id: {i}\r\nevent: {e}\r\ndata: {d}\r\n\r\n",
    "common cr": lambda i, e, d: f"id:{i}\revent:{e}\rdata:{d}\r\r",
    "mixed endings": lambda i, e, d: f"event: {e}\r\ndata: {d}\r\n",
    "common non-ascii": lambda i, e, d: f"id: {i}\u4e2d\nevent: {e}é\ndata: {d}\U0001f600\n\n",
    "multi data": lambda i, e, d: f"id: {i}\ndata: {d}\ndata:{e}\ndata: \n\n",
    "data that looks like a field": lambda i, e, d: f"data: data: {d}\n\n",
    "data lines that look like fields": lambda i, e, d: f"data:data: {d}\ndata: data:\n\n",
    "multi data crlf": lambda i, e, d: f"data: {d}\r\ndata: {e}é\r\n\r\n",
    "bare data line": lambda i, e, d: f"data: {d}\ndata\n\n",
    "blank run": lambda i, e, d: "\n\r\n\r\r\n\n",
    "comment run": lambda i, e, d: f":{d}\r\n:\n\n: {e}\r",
    "long comment": lambda i, e, d: f": {d}{'c' * 20}\n\n",
    "non-ascii comment": lambda i, e, d: f": {d}é\n",
    "bad utf-8 data": lambda i, e, d: f"data: {d}\udcff\n\n",
    "bad utf-8 comment": lambda i, e, d: f": {d}\udcc3\n",
    "bad utf-8 id": lambda i, e, d: f"id: \udce2\udc82\ndata: {d}\n\n",
}


def outcome(pieces: list[bytes], limits: dict[str, int]) -> Any:
    decoder = SSEDecoder(**limits)
    out: list[Any] = []
    try:
        for piece in pieces:
            out += decoder.feed(piece)
        out += decoder.close()
    except ContractError as exc:
        return (type(exc).__name__, exc.where)
    return ([(e.event, e.data, e.id, e.retry, e.byte_offset, e.index) for e in out],
            decoder.last_event_id)


@given(st.lists(st.tuples(st.sampled_from(sorted(BLOCKS)), _value, _value, _value),
                max_size=8),
       st.sampled_from(["", "data: cut", "data: cut\n", "id: 9\n", "data: cut\r"]),
       st.sampled_from([{}, {"max_line_bytes": 8, "max_event_bytes": 16},
                        {"max_line_bytes": 24, "max_event_bytes": 40}]),
       st.lists(st.integers(0, 400), max_size=6))
def test_fast_path_equals_line_by_line_and_reference(
    blocks: list[tuple[str, str, str, str]], tail: str, limits: dict[str, int],
    cuts: list[int],
) -> None:
    for name, *_ in blocks:
        event(name)
    data = ("".join(BLOCKS[n](i, e, d) for n, i, e, d in blocks) + tail).encode(
        "utf-8", "surrogateescape")
    whole = outcome([data], limits)
    assert whole == outcome([data[i : i + 1] for i in range(len(data))], limits)
    assert whole == outcome(split_at(data, sorted(min(c, len(data)) for c in cuts)), limits)
    ref = reference_decode(data, **limits)
    if isinstance(ref, RefError):
        event(f"error {ref.kind}")
        assert isinstance(whole, tuple) and whole[1] == ref.where
    else:
        assert whole[0] == [r.as_tuple() for r in ref]


_BIG_LINES = {
    "data": lambda v: f"data: {v}\n",
    "data crlf": lambda v: f"data:{v}\r\n",
    "event": lambda v: f"event: {v}\r",
    "id": lambda v: f"id: {v}\n",
    "id with NUL": lambda v: f"id: {v}\x00\n",
    "retry": lambda v: f"retry: {len(v)}{'7' * len(v)}\n",
    "comment": lambda v: f": {v}\n",
    "unknown field": lambda v: f"x-{v}: {v}\n",
    "no colon": lambda v: f"{v}\n",
    "bad utf-8": lambda v: f"data: {v}\udcff{v}\n",
    "bad utf-8 at the end": lambda v: f"data: {v}\udce2\udc82\n",
}


@given(st.lists(st.tuples(st.sampled_from(sorted(_BIG_LINES)),
                          st.text(st.sampled_from("abé中\U0001f600: "), min_size=1, max_size=40),
                          st.booleans()), min_size=1, max_size=5),
       st.sampled_from([{}, {"max_line_bytes": 60, "max_event_bytes": 150}]),
       st.lists(st.integers(0, 600), max_size=8),
       st.integers(2, 40))
def test_long_lines_decoded_as_they_grow_equal_the_reference(
    lines: list[tuple[str, str, bool]], limits: dict[str, int], cuts: list[int], step: int
) -> None:
    # A line whose buffer reaches _BLOCK bytes is decoded as it grows (in production
    # 64 KiB); with the block made a few bytes long every such path (a value split
    # inside a multi-byte character, an invalid byte remembered until the line ends,
    # a line that turns out too long, a comment, a field of another name) runs on
    # small inputs, fed in pieces, against the whole-feed outcome and the reference.
    import pcfuzz.contracts.sse as sse

    text = "".join(_BIG_LINES[kind](value) + ("\n" if end else "")
                   for kind, value, end in lines)
    data = text.encode("utf-8", "surrogateescape")
    for kind, _, _ in lines:
        event(kind)
    pieces = split_at(data, sorted(min(c, len(data)) for c in cuts))
    saved = sse._BLOCK
    try:
        sse._BLOCK = 5
        pieced = outcome(pieces, limits)
        bytewise = outcome([data[i : i + 1] for i in range(len(data))], limits)
        stepped = outcome([data[i : i + step] for i in range(0, len(data), step)], limits)
    finally:
        sse._BLOCK = saved
    whole = outcome([data], limits)
    assert pieced == whole == bytewise == stepped
    ref = reference_decode(data, **limits)
    if isinstance(ref, RefError):
        event(f"error {ref.kind}")
        assert isinstance(whole, tuple) and whole[1] == ref.where
    else:
        assert whole[0] == [r.as_tuple() for r in ref]
