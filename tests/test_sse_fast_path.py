"""contracts.sse's fast path for ASCII LF text (whole common events matched in one
call) gives exactly what the line-by-line path gives.

Streams are built from common events (optional ``id``, optional ``event``, one
``data`` line, blank line) mixed with near misses (id with NUL, fields in another
order, two data lines, comments, retry, a CR or a non-ASCII byte somewhere, a cut
last event) and fed whole (fast path), one byte at a time (regions of one line: the
general path) and to the reference decoder, under tight and default limits.
"""

from __future__ import annotations

from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts.errors import ContractError
from pcfuzz.contracts.sse import SSEDecoder
from pcfuzz.strategies.sse import RefError, reference_decode

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
       st.sampled_from(["", "data: cut", "data: cut\n", "id: 9\n"]),
       st.sampled_from([{}, {"max_line_bytes": 8, "max_event_bytes": 16}]))
def test_fast_path_equals_line_by_line_and_reference(
    blocks: list[tuple[str, str, str, str]], tail: str, limits: dict[str, int]
) -> None:
    for name, *_ in blocks:
        event(name)
    data = ("".join(BLOCKS[n](i, e, d) for n, i, e, d in blocks) + tail).encode("utf-8")
    whole = outcome([data], limits)
    assert whole == outcome([data[i : i + 1] for i in range(len(data))], limits)
    ref = reference_decode(data, **limits)
    if isinstance(ref, RefError):
        event(f"error {ref.kind}")
        assert isinstance(whole, tuple) and whole[1] == ref.where
    else:
        assert whole[0] == [r.as_tuple() for r in ref]
