#!/usr/bin/env python3
"""Throughput of ``contracts.strict_json.loads`` as a ratio to ``json.loads``.

Run from the repository root: ``python benchmarks/bench_strict_json.py``.

Prints, each measured in the same run against plain ``json.loads`` of the same data:

* a realistic ~2 KB provider event (a Responses ``response.completed`` snapshot
  with a function call), as ``bytes`` and as ``str``;
* the same event forced through the iterative parser (what a document pays when the
  fast path does not apply, e.g. one that holds surrogate-pair escapes);
* linearity: time per byte for ~10 KB and ~1 MB documents;
* pathological inputs (100,000-digit integer, 10,000-deep nesting, 50 MB string,
  ...): time to rejection, which must be far below the time ``json.loads`` needs.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pcfuzz.bench.data import provider_event  # noqa: E402
from pcfuzz.contracts import strict_json  # noqa: E402
from pcfuzz.contracts.errors import ContractError  # noqa: E402


def paired(
    baseline: Callable[[], Any], ours: Callable[[], Any], *, budget: float = 0.6, rounds: int = 7
) -> tuple[float, float]:
    """Best seconds per call of each function, measured in alternating rounds so that
    load from other processes hits both alike (the machine may be shared)."""
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            ours()
        elapsed = time.perf_counter() - start
        if elapsed > budget / rounds / 8 or calls > 1 << 22:
            break
        calls *= 2
    calls = max(1, int(calls * (budget / rounds / 2) / max(elapsed, 1e-9)))
    best = [float("inf"), float("inf")]
    for _ in range(rounds):
        for index, fn in enumerate((baseline, ours)):
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            best[index] = min(best[index], (time.perf_counter() - start) / calls)
    return best[0], best[1]


def ratio_line(label: str, data: bytes | str, *, slow: bool = False) -> None:
    if slow:
        # Both sides start from the same ``data``: the iterative parser's side pays
        # for the UTF-8 decoding that json.loads does on bytes as well.
        from_bytes = isinstance(data, bytes)

        def iterative() -> Any:
            text = data.decode("utf-8") if isinstance(data, bytes) else data
            return strict_json._parse(text, strict_json.DEFAULT_LIMITS, from_bytes)

        baseline, ours = paired(lambda: json.loads(data), iterative)
    else:
        baseline, ours = paired(lambda: json.loads(data), lambda: strict_json.loads(data))
    print(
        f"{label:<46} {len(data):>9} B  json.loads {baseline * 1e6:9.1f} us"
        f"  strict {ours * 1e6:9.1f} us  ratio {ours / baseline:5.2f}x"
    )


def _decode_then_parse(doc: bytes) -> Any:
    """The iterative parser alone, including the decoding json.loads also does."""
    return strict_json._parse(doc.decode("utf-8"), strict_json.DEFAULT_LIMITS, True)


def linearity() -> None:
    unit = json.dumps(provider_event()["response"], separators=(",", ":"))
    # ~4 MB holds more than max_container_items commas: the fast path's pre-scan
    # cannot rule out the item limit and the iterative parser runs.
    for label, count in (("~10 KB", 5), ("~100 KB", 50), ("~1 MB", 500), ("~4 MB", 2000)):
        doc = ("[" + ",".join([unit] * count) + "]").encode("utf-8")
        for path, slow in (("loads", False), ("iterative", True)):
            if slow:
                baseline, ours = paired(
                    partial(json.loads, doc),
                    partial(_decode_then_parse, doc),
                    budget=2.0,
                    rounds=3,
                )
            else:
                baseline, ours = paired(
                    partial(json.loads, doc),
                    partial(strict_json.loads, doc),
                    budget=2.0,
                    rounds=3,
                )
            print(
                f"linearity {label:<7} {path:<10} {len(doc):>9} B"
                f"  strict {ours / len(doc) * 1e9:7.2f} ns/B"
                f"  json.loads {baseline / len(doc) * 1e9:6.2f} ns/B"
                f"  ratio {ours / baseline:5.2f}x"
            )


def pathological() -> None:
    cases: list[tuple[str, bytes, bool]] = [
        ("100,000-digit integer", b"1" * 100_000, True),
        ("10,000-deep nesting", b"[" * 10_000 + b"]" * 10_000, False),
        ("50 MB string", b'"' + b"a" * 50_000_000 + b'"', True),
        ("1,000,000-item array (4 MB)", b"[" + b"0," * 999_999 + b"0]", True),
        ("800,000 empty arrays (2.4 MB)", b"[" + b"[]," * 799_999 + b"[]]", True),
        ("duplicate key after 1 MB", b'{"a":"' + b"x" * 1_000_000 + b'","a":1}', True),
        # Pre-scan attacks: an unterminated string full of escaped quotes behind 513
        # brackets (was quadratic), 16 MB of escapes behind a surrogate pair (was
        # 1.4 GB of regex backtracking state).
        ("513 [ + 1 MB of escaped quotes", b"[" * 513 + b'"' + b'a\\"' * 333_333, True),
        (
            "pair + 16 MB of escapes",
            b'"\\ud83d\\ude00' + b"\\n" * 8_388_000 + b'"',
            True,
        ),
    ]
    for label, doc, compare in cases:
        start = time.perf_counter()
        try:
            strict_json.loads(doc)
            outcome = "ACCEPTED (unexpected)"
        except ContractError as exc:
            outcome = f"{type(exc).__name__}: {exc.message[:48]}"
        ours = time.perf_counter() - start
        if compare:
            start = time.perf_counter()
            try:
                json.loads(doc)
            except (ValueError, RecursionError) as exc:
                _ = exc
            baseline = f"json.loads {(time.perf_counter() - start) * 1e3:8.2f} ms"
        else:
            baseline = "json.loads RecursionError (not timed)"
        print(f"reject {label:<30} {ours * 1e3:8.2f} ms  {baseline}  -> {outcome}")


def main() -> None:
    event = provider_event()
    compact = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    pretty = json.dumps(event, indent=2, ensure_ascii=False)
    print(f"python {sys.version.split()[0]}")
    ratio_line("2 KB event, compact bytes", compact)
    ratio_line("2 KB event, compact str", compact.decode("utf-8"))
    ratio_line("2 KB event, indented str", pretty)
    ratio_line("2 KB event, iterative parser (no fast path)", compact, slow=True)
    ratio_line("2 KB event, \\u escapes (ensure_ascii)", json.dumps(event))
    linearity()
    pathological()


if __name__ == "__main__":
    main()
