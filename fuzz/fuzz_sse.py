#!/usr/bin/env python3
"""Atheris target: ``contracts.sse.SSEDecoder``, differential against a simple
reference decoder and split-invariant.

Input layout: if the first byte is ``0xFF`` (never part of UTF-8, so no plain SSE
file starts with it) it is a header: a ``FuzzedDataProvider`` over the rest picks
tight limits (``max_line_bytes`` 1..64, ``max_event_bytes`` 1..128, so every limit is
reachable by a small input), the stream bytes and up to 8 cut points. Any other
first byte: the whole input is the stream, with the default limits, and a
``FuzzedDataProvider`` over the same bytes picks the cut points, so plain ``.sse``
captures are valid seeds.

Oracle (a failure raises ``RuntimeError``; ``assert`` would vanish under ``-O``):

* only ``ContractError`` may escape the decoder;
* fed whole, the outcome equals the reference decoding
  (``strategies.sse_model.reference_decode``, a byte-by-byte line splitter written
  independently of the decoder): the same events (type, data, id, retry, byte
  offset, index), or the same error class at the same ``where``;
* fed in pieces cut at the chosen points, and (inputs up to 512 bytes) one byte at a
  time, the outcome is the same again.
"""

from __future__ import annotations

import sys
from typing import Any

import atheris

from pcfuzz.fuzz.harness.instrument import contracts, instrument

with instrument(*contracts("errors", "sse")):
    from pcfuzz.contracts.errors import ContractError
    from pcfuzz.contracts.sse import SSEDecoder, SSEEvent

# The oracle is harness code (an independent model); it is not instrumented.
from pcfuzz.strategies.sse_model import RefError, reference_decode, split_at

HEADER = 0xFF
ONE_BYTE_FEEDS_UP_TO = 512
_KIND = {"utf8": "ProtocolViolation", "limit": "LimitExceeded", "truncated": "StreamTruncated"}


def split_input(data: bytes) -> tuple[bytes, dict[str, int], list[int]]:
    """(stream, decoder limits, sorted cut points) encoded in ``data``."""
    if data[:1] == bytes([HEADER]):
        fdp = atheris.FuzzedDataProvider(data[1:])
        limits = {
            "max_line_bytes": fdp.ConsumeIntInRange(1, 64),
            "max_event_bytes": fdp.ConsumeIntInRange(1, 128),
        }
        n_cuts = fdp.ConsumeIntInRange(0, 8)
        stream = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, fdp.remaining_bytes()))
        cuts = [fdp.ConsumeIntInRange(0, len(stream)) for _ in range(n_cuts)]
        return stream, limits, sorted(cuts)
    fdp = atheris.FuzzedDataProvider(data)
    cuts = [fdp.ConsumeIntInRange(0, len(data)) for _ in range(fdp.ConsumeIntInRange(0, 8))]
    return data, {}, sorted(cuts)


def _tuples(events: list[SSEEvent]) -> list[tuple[Any, ...]]:
    return [(e.event, e.data, e.id, e.retry, e.byte_offset, e.index) for e in events]


def outcome(pieces: list[bytes], limits: dict[str, int]) -> object:
    """Events as tuples, or (error class name, where)."""
    decoder = SSEDecoder(**limits)
    events: list[SSEEvent] = []
    try:
        for piece in pieces:
            events += decoder.feed(piece)
        events += decoder.close()
    except ContractError as exc:
        return (type(exc).__name__, exc.where)
    return _tuples(events)


def reference_outcome(stream: bytes, limits: dict[str, int]) -> object:
    ref = reference_decode(stream, **limits)
    if isinstance(ref, RefError):
        return (_KIND[ref.kind], ref.where)
    return [r.as_tuple() for r in ref]


def TestOneInput(data: bytes) -> None:
    stream, limits, cuts = split_input(data)
    whole = outcome([stream], limits)
    expected = reference_outcome(stream, limits)
    if whole != expected:
        raise RuntimeError(
            f"decoder and reference disagree on {stream[:200]!r} ({limits}): "
            f"{str(whole)[:300]} != {str(expected)[:300]}"
        )
    pieces = split_at(stream, cuts)
    if outcome(pieces, limits) != whole:
        raise RuntimeError(f"outcome depends on the cut points {cuts}: {stream[:200]!r}")
    if len(stream) <= ONE_BYTE_FEEDS_UP_TO:
        bytewise = [stream[i : i + 1] for i in range(len(stream))]
        if outcome(bytewise, limits) != whole:
            raise RuntimeError(f"outcome differs when fed one byte at a time: {stream[:200]!r}")


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
