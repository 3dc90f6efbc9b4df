#!/usr/bin/env python3
"""Throughput of the Anthropic Messages parser on a 2,000-event two-call stream.

Prints events/s of ``parse_events`` (envelope dicts in, turn out) and of the
incremental stream, each as a ratio to plain ``json.loads`` of the same events'
data JSON measured in the same run (the cost of merely decoding the SSE data
lines). Standard library + the project; no network.

    python benchmarks/bench_anthropic_messages.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pcfuzz.bench.data import anthropic_stream  # noqa: E402
from pcfuzz.contracts.anthropic_messages import AnthropicMessagesStream, parse_events  # noqa: E402

TARGET_EVENTS = 2_000


def two_call_stream(total: int = TARGET_EVENTS) -> list[dict[str, Any]]:
    """message_start, a text block, two tool_use blocks sharing the deltas, terminal."""
    events, _ = anthropic_stream(total)
    return events


def best_of(repeat: int, fn: Any) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    events = two_call_stream()
    n = len(events)
    turn = parse_events(events)
    if len(turn.calls) != 2 or n != TARGET_EVENTS:
        raise SystemExit(f"benchmark stream is wrong: {n} events, {len(turn.calls)} calls")
    lines = [json.dumps(e["data"]) for e in events]

    def baseline() -> None:
        for line in lines:
            json.loads(line)

    def whole() -> None:
        parse_events(events)

    def incremental() -> None:
        stream = AnthropicMessagesStream()
        for e in events:
            stream.feed(e)
        stream.close()

    def decode_and_parse() -> None:
        stream = AnthropicMessagesStream()
        for e, line in zip(events, lines, strict=True):
            stream.feed({"event": e["event"], "data": json.loads(line)})
        stream.close()

    t_base = best_of(args.repeat, baseline)
    rows = [
        ("json.loads of the data lines (baseline)", t_base),
        ("parse_events", best_of(args.repeat, whole)),
        ("stream.feed x N + close", best_of(args.repeat, incremental)),
        ("json.loads + feed + close", best_of(args.repeat, decode_and_parse)),
    ]
    print(f"stream: {n} events, 2 tool_use calls, {sum(len(x) for x in lines)} bytes of data JSON;"
          f" best of {args.repeat} runs")
    for label, seconds in rows:
        print(f"  {label:42s} {seconds * 1e3:8.2f} ms  {n / seconds:12,.0f} events/s"
              f"  {seconds / t_base:6.2f}x baseline time")


if __name__ == "__main__":
    main()
