#!/usr/bin/env python3
"""Throughput of the Chat Completions aggregator on a 2,000-chunk two-call stream.

The stream has exactly 2,000 chunks plus ``[DONE]``: a role chunk, a chunk that
opens both tool calls (identity and name), 1,996 chunks alternating argument
fragments of the two calls (interleaved by index), a finish chunk and a
usage-only chunk. Prints chunks/s of ``parse_events`` (decoded dicts in, turn
out), of the incremental stream, and of strict JSON decoding plus aggregation,
each as a ratio to plain ``json.loads`` of the same chunks' JSON texts measured in
the same run (the cost of merely decoding the ``data:`` lines). Best of several
repeats with ``time.perf_counter``. Standard library + the project; no network.

    python benchmarks/bench_openai_chat.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pcfuzz.bench.data import chat_stream  # noqa: E402
from pcfuzz.contracts import strict_json  # noqa: E402
from pcfuzz.contracts.openai_chat import DONE, ChatCompletionStream, parse_events  # noqa: E402

TARGET_CHUNKS = 2_000


def two_call_stream(total: int = TARGET_CHUNKS) -> list[dict[str, Any]]:
    """The benchmark's chunks (without the ``[DONE]`` sentinel)."""
    frames, _ = chat_stream(total)
    return frames[:-1]


def best_of(repeat: int, function: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    chunks = two_call_stream()
    texts = [json.dumps(c, separators=(",", ":")).encode() for c in chunks]
    frames: list[object] = [*chunks, DONE]

    turn = parse_events(frames)
    if len(turn.calls) != 2 or len(turn.calls[0].arguments["items"]) != (TARGET_CHUNKS - 4) // 2 - 1:
        raise SystemExit("benchmark stream did not aggregate to two executable calls")

    def baseline() -> None:
        loads = json.loads
        for text in texts:
            loads(text)

    def incremental() -> None:
        stream = ChatCompletionStream()
        feed = stream.feed
        for frame in frames:
            feed(frame)
        stream.close()

    def strict_pipeline() -> None:
        stream = ChatCompletionStream()
        loads = strict_json.loads
        for text in texts:
            stream.feed(loads(text))
        stream.feed(DONE)
        stream.close()

    t_base = best_of(args.repeat, baseline)
    rows = [
        ("json.loads of the chunks (baseline)", t_base),
        ("parse_events(decoded chunks)", best_of(args.repeat, lambda: parse_events(frames))),
        ("ChatCompletionStream.feed x N + close", best_of(args.repeat, incremental)),
        ("strict_json.loads + feed (full pipeline)", best_of(args.repeat, strict_pipeline)),
    ]
    print(f"{TARGET_CHUNKS} chunks, two interleaved calls, best of {args.repeat} "
          f"(python {sys.version.split()[0]})")
    for label, seconds in rows:
        print(f"  {label:<42} {seconds * 1e3:8.2f} ms  {TARGET_CHUNKS / seconds:12,.0f} chunks/s"
              f"  x{seconds / t_base:5.2f} of json.loads")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
