#!/usr/bin/env python3
"""Throughput of ``contracts.sse`` as a ratio to ``bytes.splitlines`` of the same data.

Run from the repository root: ``python benchmarks/bench_sse.py``.

The data is the 2,000-event two-call Responses stream of
``bench_openai_responses.py`` rendered as SSE (``event:`` + ``data:`` + blank line).
Each line prints MB/s of the decoder and of ``bytes.splitlines`` on the same bytes,
measured in alternating rounds in the same run, and their ratio:

* fed whole, with LF, CRLF and CR-only line endings, and with non-ASCII data;
* fed in 4 KB chunks (a socket read) and one event per ``feed``;
* the whole wire path, ``contracts.wire.parse_sse`` (bytes -> Turn), against a floor
  pipeline on the same bytes: ``splitlines`` + ``json.loads`` of every data line + a
  minimal dict accumulator of the argument deltas (no validation at all).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_openai_responses import two_call_stream  # noqa: E402
from bench_strict_json import paired  # noqa: E402

from pcfuzz.contracts.sse import SSEDecoder, decode_sse  # noqa: E402
from pcfuzz.contracts.wire import parse_sse  # noqa: E402


def render(events: list[dict[str, Any]], ending: str = "\n") -> bytes:
    out = []
    for event in events:
        out.append(f"event: {event['type']}{ending}data: {json.dumps(event)}{ending}{ending}")
    return "".join(out).encode("utf-8")


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def feed_all(pieces: list[bytes]) -> list[Any]:
    decoder = SSEDecoder()
    events: list[Any] = []
    for piece in pieces:
        events += decoder.feed(piece)
    decoder.close()
    return events


def ratio_line(label: str, data: bytes, ours: Any) -> None:
    base, mine = paired(data.splitlines, ours)
    mb = len(data) / 1e6
    print(
        f"{label:<44} {mb / mine:8.1f} MB/s  splitlines {mb / base:8.1f} MB/s  "
        f"ratio {mine / base:6.1f}x"
    )


def floor(data: bytes) -> dict[str, str]:
    """The least any consumer pays: split, json.loads, accumulate deltas."""
    args: dict[str, list[str]] = {}
    for line in data.splitlines():
        if line.startswith(b"data: "):
            event = json.loads(line[6:])
            if event["type"] == "response.function_call_arguments.delta":
                args.setdefault(event["item_id"], []).append(event["delta"])
    return {key: "".join(parts) for key, parts in args.items()}


def main() -> None:
    events = two_call_stream()
    lf = render(events)
    print(f"python {sys.version.split()[0]}; stream: {len(events)} events, {len(lf) / 1e3:.0f} KB")
    ratio_line("whole feed, LF", lf, lambda: decode_sse(lf))
    crlf = render(events, "\r\n")
    ratio_line("whole feed, CRLF", crlf, lambda: decode_sse(crlf))
    cr = render(events, "\r")
    ratio_line("whole feed, CR only", cr, lambda: decode_sse(cr))
    for event in events:
        if "delta" in event:
            event["delta"] = event["delta"] + "é"
    utf8 = render(events)
    ratio_line("whole feed, LF, non-ASCII data", utf8, lambda: decode_sse(utf8))
    pieces = chunked(lf, 4096)
    ratio_line("4 KB chunks, LF", lf, lambda: feed_all(pieces))
    per_event = [block + b"\n\n" for block in lf.split(b"\n\n")[:-1]]
    ratio_line("one event per feed, LF", lf, lambda: feed_all(per_event))
    # Whole wire path vs the floor pipeline on the same bytes.
    events = two_call_stream()
    raw = render(events)
    base, mine = paired(lambda: floor(raw), lambda: parse_sse("openai-responses", raw))
    print(
        f"{'wire path parse_sse (bytes -> Turn)':<44} {mine * 1e3:8.2f} ms   floor "
        f"{base * 1e3:8.2f} ms            ratio {mine / base:6.1f}x"
    )


if __name__ == "__main__":
    main()
