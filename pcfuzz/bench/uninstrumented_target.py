#!/usr/bin/env python3
"""Ceiling of ``pcfuzz bench``'s fuzz throughput case: a byte-level fuzz target run by
libFuzzer with the code under test *not* instrumented.

Usage: ``uninstrumented_target.py TARGET.py [libFuzzer flags] [corpus]``. Every
module of ``pcfuzz.contracts`` is imported plainly before the target is loaded, so the
target's ``instrument(...)`` block finds them imported and leaves them as they are
(``pcfuzz.fuzz.harness.instrument.instrument``); only a one-line wrapper around the
target's ``TestOneInput`` is instrumented, to give libFuzzer the counters it needs.
With no coverage feedback the corpus does not grow and the inputs stay as small as
the mutations of an empty corpus make them, about what the baseline target runs.

What it measures: the executions per second the target's own work allows (its
contract code, its oracle, atheris and libFuzzer) when instrumentation costs
nothing. Instrumenting the code under test can only lower it, so a target whose
ceiling is near a goal cannot reach that goal by running fewer instrumented steps.
Not a target itself: its name does not start with ``fuzz_``.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Callable

import atheris

import pcfuzz.contracts


def _load(path: str) -> Callable[[bytes], None]:
    for info in pkgutil.walk_packages(pcfuzz.contracts.__path__, "pcfuzz.contracts."):
        importlib.import_module(info.name)
    spec = importlib.util.spec_from_file_location("_pcfuzz_target_under_bench", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"uninstrumented_target: cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    test: Callable[[bytes], None] = module.TestOneInput
    return test


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit("usage: uninstrumented_target.py TARGET.py [libFuzzer arguments]")
    test = _load(sys.argv.pop(1))

    def one(data: bytes) -> None:
        test(data)

    atheris.Setup(sys.argv, atheris.instrument_func(one))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
