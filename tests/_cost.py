"""Cost checks without wall-clock thresholds.

The project measures speed in benchmarks, not timed tests. A few tests still must
prove that an adversarial input costs *linear* work (a denial-of-service property,
not a speed figure). They compare against a baseline measured in the same test, on
the same machine, moments apart: the cost of plain ``json.loads`` on a benign
document of the same size. A linear loader stays within a small constant factor of
it; a quadratic one is thousands of times over at a megabyte. Both sides are timed
in this thread's CPU time, not wall-clock time: on a shared machine a long call is
preempted more often than a short one, and in a random-seed run beside another
test suite (five busy processes on two cores) wall-clock timing put a linear shape
at 291x while its CPU time stays near 25x. Best-of-N on both sides absorbs the rest
(cache and frequency noise).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable

from pcfuzz.contracts.errors import ContractError

# strict_json's slowest linear path (the iterative parser) is ~10-20x json.loads;
# quadratic behaviour at ~1 MB is >1000x. The factor sits far from both.
LINEAR_FACTOR = 200.0


def best_cpu_time(work: Callable[[], object], rounds: int) -> float:
    """The least thread CPU time of ``rounds`` calls of ``work`` (what it raises
    propagates)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.thread_time()
        work()
        best = min(best, time.thread_time() - start)
    return best


def _best_of(work: Callable[[], object], rounds: int) -> float:
    def rejected_or_not() -> None:
        with contextlib.suppress(ContractError):
            work()

    return best_cpu_time(rejected_or_not, rounds)


def benign_document(size: int) -> str:
    """A valid JSON array of short strings, about ``size`` characters long."""
    return "[" + '"abc",' * max(1, size // 6) + '"abc"]'


def cost_ratio(work: Callable[[], object], size: int, *, rounds: int = 3) -> float:
    """Cost of ``work`` (ContractErrors suppressed) over json.loads of ``size`` chars."""
    baseline_doc = benign_document(max(size, 10_000))
    baseline = _best_of(lambda: json.loads(baseline_doc), rounds)
    return _best_of(work, rounds) / max(baseline, 1e-6)


def assert_linear_cost(work: Callable[[], object], size: int, what: str) -> None:
    """Fail if ``work`` costs more than LINEAR_FACTOR x json.loads on ``size`` chars."""
    ratio = cost_ratio(work, size)
    assert ratio < LINEAR_FACTOR, (
        f"{what}: {ratio:.0f}x json.loads of a benign document of the same size "
        f"(limit {LINEAR_FACTOR:.0f}x): not linear"
    )
