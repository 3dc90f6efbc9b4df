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

from contracts.gemini_interactions import parse_events  # noqa: E402

N_EVENTS = 2_000
REPEATS = 7


def build_events(with_event_ids: bool) -> list[dict[str, Any]]:
    n_deltas = N_EVENTS - 6
    events: list[dict[str, Any]] = [
        {"event_type": "interaction.created",
         "interaction": {"id": "interaction-bench", "status": "in_progress"}},
        {"event_type": "step.start", "index": 0,
         "step": {"type": "function_call", "id": "call-a", "name": "lookup_order",
                  "arguments": {}}},
        {"event_type": "step.start", "index": 1,
         "step": {"type": "function_call", "id": "call-b", "name": "lookup_customer",
                  "arguments": {}}},
    ]
    per_call = n_deltas // 2
    fragments: dict[int, list[str]] = {}
    for index in (0, 1):
        body = ",".join(f'"k{i}":"value-{index}-{i}"' for i in range(per_call - 2))
        fragments[index] = ["{", *[p + "," for p in body.split(",")[:-1]],
                            body.split(",")[-1], "}"]
    for i in range(per_call):
        for index in (0, 1):
            events.append({"event_type": "step.delta", "index": index,
                           "delta": {"type": "arguments_delta",
                                     "arguments": fragments[index][i]}})
    events.append({"event_type": "step.stop", "index": 1})
    events.append({"event_type": "step.stop", "index": 0})
    events.append({"event_type": "interaction.completed",
                   "interaction": {"id": "interaction-bench", "status": "requires_action",
                                   "usage": {"total_input_tokens": 10,
                                             "total_output_tokens": 2000}}})
    if with_event_ids:
        for n, e in enumerate(events):
            e["event_id"] = f"ev-{n:06d}"
    if len(events) != N_EVENTS:
        raise SystemExit(f"built {len(events)} events, expected {N_EVENTS}")
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
