"""A toy fuzz project for the tests of the pcfuzz command and the nightly: one target
whose bug a dictionary word finds in seconds, and the costs a night plans from."""

from __future__ import annotations

from pathlib import Path

BUG = '        raise KeyError("toy bug: FUZ prefix")\n'
FIX = "        return 4\n"

TOY = '''#!/usr/bin/env python3
"""Toy target for pcfuzz's own tests."""
import sys

import atheris


@atheris.instrument_func
def classify(data: bytes) -> int:
    if not data:
        return 0
    if data[:1] == b"{":
        return 1
    if data[:1] == b"[":
        return 2
    if data[:3] == b"FUZ":
''' + BUG + '''    return 3


def TestOneInput(data: bytes) -> None:
    classify(data)


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
'''


def write_target(fuzz_dir: Path, name: str, source: str, seeds: dict[str, bytes]) -> Path:
    path = fuzz_dir / f"fuzz_{name}.py"
    path.write_text(source, encoding="utf-8")
    path.chmod(0o755)
    (fuzz_dir / f"fuzz_{name}.dict").write_text('kw1="FUZ"\nkw2="{"\n', encoding="utf-8")
    (fuzz_dir / f"fuzz_{name}.options").write_text(
        f"[libfuzzer]\ndict = fuzz_{name}.dict\nmax_len = 64\ntimeout = 5\n", encoding="utf-8"
    )
    corpus = fuzz_dir / "corpus" / f"fuzz_{name}"
    corpus.mkdir(parents=True, exist_ok=True)
    for seed, data in seeds.items():
        (corpus / seed).write_bytes(data)
    return path



def seed_costs(fuzz_dir: Path, **costs: object) -> None:
    """What earlier nights measured for the toy tree (the plan's input): toy targets
    start in well under a second and the toy property suite collects in a few."""
    from pcfuzz.nightly.plan import Costs

    fields = {"startup_s": {"fuzz_toy": 0.5, "fuzz_sound": 0.5, "fuzz_slow": 0.5,
                            "fuzz_broken": 0.5},
              "collect_s": 3.0, "test_s": 0.05, "example_s": 0.01, "tests": 6,
              "coverage_s": 3.0}
    fields.update(costs)
    Costs(**fields).save(fuzz_dir / ".work" / "nightly_costs.json")  # type: ignore[arg-type]
