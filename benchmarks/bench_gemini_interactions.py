#!/usr/bin/env python3
"""Throughput of ``contracts.gemini_interactions.parse_events`` on a two-call stream.

The stream has exactly 2,000 events: ``interaction.created``, two interleaved
``function_call`` steps whose arguments arrive in 1,994 ``arguments_delta``
fragments, two ``step.stop`` and ``interaction.completed``. The
baseline, measured in the same run, is plain ``json.loads`` of the same events
(one JSON text per event, as an SSE ``data`` field carries them). Figures are the
best of several repeats (``time.perf_counter``), reported as events/s and as a ratio
to the baseline. Run: ``python benchmarks/bench_gemini_interactions.py``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pcfuzz.bench.data import gemini_stream  # noqa: E402
from pcfuzz.contracts.gemini_interactions import parse_events  # noqa: E402

N_EVENTS = 2_000
REPEATS = 7


def build_events(with_event_ids: bool) -> list[dict[str, Any]]:
    events, _ = gemini_stream(N_EVENTS, with_event_ids=with_event_ids)
    return events


def best_of(fn: Any) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    print(f"python {sys.version.split()[0]}; {N_EVENTS} events, two calls; "
          f"best of {REPEATS} runs")
    for with_ids in (True, False):
        events = build_events(with_ids)
        texts = [json.dumps(e) for e in events]
        turn = parse_events(events)
        if [c.call_id for c in turn.calls] != ["call-a", "call-b"]:
            raise SystemExit("benchmark stream did not parse to two calls")
        t_json = best_of(lambda texts=texts: [json.loads(t) for t in texts])
        t_parse = best_of(lambda events=events: parse_events(events))
        t_both = best_of(lambda texts=texts: parse_events([json.loads(t) for t in texts]))
        label = "with event_id" if with_ids else "without event_id"
        print(f"[{label}]")
        print(f"  json.loads baseline : {N_EVENTS / t_json:12,.0f} events/s ({t_json * 1e3:.2f} ms)")
        print(f"  parse_events        : {N_EVENTS / t_parse:12,.0f} events/s ({t_parse * 1e3:.2f} ms)"
              f"  = {t_parse / t_json:.2f}x json.loads time")
        print(f"  json.loads + parse  : {N_EVENTS / t_both:12,.0f} events/s ({t_both * 1e3:.2f} ms)"
              f"  = {t_both / t_json:.2f}x json.loads time")


if __name__ == "__main__":
    main()
