"""Stage 1 of the night on its slots: the property suite and the mutants each hold a
slot for their planned time, the fuzz targets take turns on every slot.

The decisions are pure functions of the clock's readings, tested with made-up
numbers (``tests/test_nightly_plan.py``):

* :func:`target_share`: when a slot frees, the next target gets the free
  core-seconds left until the end of the stage divided by the targets still
  waiting: a target that ran short (it plateaued, it crashed) leaves its time to
  the ones after it;
* :func:`plateaued`: a campaign that has fuzzed :data:`MIN_FUZZ_S` and found no
  new coverage feature for a while stops and yields the rest of its slot;
* :func:`second_round`: time left once every target had its turn goes to the
  targets whose coverage was still growing when they stopped.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from pcfuzz.engine.libfuzzer import Sample
from pcfuzz.nightly.plan import MIN_FUZZ_S

__all__ = ["PLATEAU_MIN_S", "PLATEAU_SHARE", "Stage", "plateaued", "second_round",
           "target_share"]

#: A campaign is plateaued when no new feature came for this long ...
PLATEAU_MIN_S = 6.0
#: ... and for this share of the time it has fuzzed.
PLATEAU_SHARE = 0.4


def target_share(now: float, end: float, busy_until: Sequence[float], waiting: int) -> float:
    """Slot seconds (start-up included) for the next target, started ``now`` on a free
    slot: the free core-seconds of every slot until ``end`` (the other slots are busy
    until ``busy_until``), divided by the ``waiting`` targets this one included."""
    free = max(0.0, end - now) + sum(max(0.0, end - max(now, b)) for b in busy_until)
    return free / max(1, waiting)


def plateaued(samples: Sequence[Sample], elapsed: float) -> bool:
    """Whether a campaign ``elapsed`` seconds in should stop: it has fuzzed (since its
    first status line) at least :data:`MIN_FUZZ_S`, and its feature count did not grow
    in the last ``max(PLATEAU_MIN_S, PLATEAU_SHARE * fuzzed)`` seconds."""
    if not samples:
        return False
    first = samples[0].t
    fuzzed = elapsed - first
    if fuzzed < MIN_FUZZ_S:
        return False
    window = max(PLATEAU_MIN_S, PLATEAU_SHARE * fuzzed)
    if fuzzed < window:
        return False
    before = [s.ft for s in samples if s.t <= elapsed - window]
    if not before:
        return False
    return samples[-1].ft <= max(before)


def second_round(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Fuzzers whose coverage still grew when their campaign ended (not plateaued, no
    crash, executed): the most recently growing first."""
    growing = [r for r in rows if r.get("executions") and not r.get("plateaued")
               and not r.get("crashes") and r.get("status") == "ok"]
    growing.sort(key=lambda r: -float(r.get("growth_per_s") or 0.0))
    return [str(r["fuzzer"]) for r in growing if float(r.get("growth_per_s") or 0.0) > 0]


@dataclass
class Stage:
    """Runs fixed tasks (each holds one slot for its own planned time) and a queue of
    fuzz targets on ``jobs`` slots until ``end`` (``clock()`` readings)."""

    jobs: int
    end: float
    clock: Callable[[], float] = time.monotonic
    #: (name, planned seconds, function) of the tasks that hold a slot each
    fixed: list[tuple[str, float, Callable[[], Any]]] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)

    def run(self, fuzzers: list[str], fuzz: Callable[[str, float, float, int], dict[str, Any]],
            min_slot_s: float, rounds: int = 2) -> list[dict[str, Any]]:
        """Run the fixed tasks and every fuzzer (``fuzz(fuzzer, slot_s, deadline,
        round)`` returns its row); then, while time is left, a second round for the
        targets still growing. Returns the rows of every campaign, in start order."""
        rows: list[dict[str, Any]] = []
        lock = threading.Lock()
        busy: dict[Future[Any], tuple[str, float]] = {}
        queue = [(f, 1) for f in fuzzers]
        fixed_names = {name for name, _, _ in self.fixed}
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for name, seconds, task in self.fixed:
                future = pool.submit(task)
                busy[future] = (name, self.clock() + seconds)
            done_first_round = False
            while True:
                while len(busy) < self.jobs and queue:
                    fuzzer, round_ = queue.pop(0)
                    now = self.clock()
                    waiting = len(queue) + 1
                    # a fixed task past its planned end (pytest's collection ran long)
                    # may hold its slot until the end of the stage
                    until = [self.end if name in fixed_names and b <= now else b
                             for name, b in busy.values()]
                    share = target_share(now, self.end, until, waiting)
                    if round_ > 1 and share < min_slot_s:
                        queue.clear()
                        break
                    slot = min(share, max(0.0, self.end - now))
                    future = pool.submit(fuzz, fuzzer, slot, now + slot, round_)
                    busy[future] = (fuzzer, now + slot)
                if not busy:
                    break
                finished, _ = wait(list(busy), timeout=1.0, return_when=FIRST_COMPLETED)
                for future in finished:
                    name, _ = busy.pop(future)
                    value = future.result()
                    with lock:
                        if isinstance(value, dict) and "fuzzer" in value:
                            rows.append(value)
                        else:
                            self.results[name] = value
                first = [r for r in rows if r.get("round", 1) == 1]
                if not queue and not done_first_round and rounds > 1 \
                        and len(first) == len(fuzzers):
                    done_first_round = True
                    queue = [(f, 2) for f in second_round(first)]
        return rows
