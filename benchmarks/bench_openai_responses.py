#!/usr/bin/env python3
"""Throughput of ``contracts.openai_responses.parse_events`` on a 2,000-event stream.

The stream is one Response with two parallel function calls whose argument deltas
interleave (created, 2 x in_progress, 2 x added, 1,990 deltas, 2 x arguments.done,
2 x item done, completed = 2,000 events). The baseline, measured in the same run, is
plain ``json.loads`` of the same events serialized one per line (what any consumer
pays to decode them). Figures: best and median of repeated runs, events/s, and the
ratio parse_events / json.loads.

    python benchmarks/bench_openai_responses.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pcfuzz.bench.data import responses_stream  # noqa: E402
from pcfuzz.contracts.openai_responses import parse_events  # noqa: E402

EVENTS = 2_000


def two_call_stream() -> list[dict[str, Any]]:
    """A valid 2,000-event stream: two calls, deltas alternating between them."""
    events, _ = responses_stream(EVENTS)
    return events


def measure(fn: Any, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    events = two_call_stream()
    if len(events) != EVENTS:
        raise SystemExit(f"stream has {len(events)} events, expected {EVENTS}")
    lines = [json.dumps(e, separators=(",", ":")) for e in events]
    turn = parse_events(events)
    if len(turn.calls) != 2:
        raise SystemExit("benchmark stream did not release two calls")

    def baseline() -> None:
        for line in lines:
            json.loads(line)

    # Warm up both, then interleave the measurements so load affects both alike.
    baseline()
    parse_events(events)
    parse_times: list[float] = []
    json_times: list[float] = []
    for _ in range(args.repeat):
        json_times += measure(baseline, 1)
        parse_times += measure(lambda: parse_events(events), 1)
    for label, times in (("parse_events", parse_times), ("json.loads baseline", json_times)):
        best, median = min(times), statistics.median(times)
        print(f"{label:22s} best {best * 1e3:8.3f} ms  median {median * 1e3:8.3f} ms  "
              f"{EVENTS / median:12,.0f} events/s (median)  {EVENTS / best:12,.0f} events/s (best)")
    ratio_median = statistics.median(parse_times) / statistics.median(json_times)
    ratio_best = min(parse_times) / min(json_times)
    print(f"ratio parse_events / json.loads: {ratio_median:.2f}x (median), {ratio_best:.2f}x (best)"
          f"  [{EVENTS} events, {args.repeat} runs each, python {sys.version.split()[0]}]")


if __name__ == "__main__":
    main()
