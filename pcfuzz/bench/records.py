"""The records of ``pcfuzz bench``: one :class:`Record` per case, the run's
:class:`Options`, and the verdict of a figure against its goal. Shared by
:mod:`.runner` and the case modules beside it (:mod:`.startup`, :mod:`.resources`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = ["CASE_GROUPS", "Options", "Record", "verdict"]

#: Case groups in the order they run; ``--cases`` selects among them.
CASE_GROUPS = ("events", "documents", "streams", "wire", "scaling", "resources", "fuzz",
               "startup", "hypothesis")


@dataclass
class Record:
    """One line of the result table (one JSON record per case)."""

    case: str
    group: str
    candidate: str
    baseline: str
    ratio: float | None
    ratio_min: float | None
    ratio_max: float | None
    rate: float | None
    rate_unit: str
    goal: float | None
    better: str  # "lower" (a time ratio, an exponent) or "higher" (a throughput ratio)
    met: bool | None
    rounds: int
    note: str = ""

    def verdict(self) -> str:
        if self.met is None:
            return "-" if self.goal is None else "n/a"
        return "met" if self.met else "MISSED"


@dataclass
class Options:
    quick: bool = False
    rounds: int | None = None
    groups: Sequence[str] = CASE_GROUPS
    fuzz_seconds: float | None = None
    #: Names of the fuzz targets the ``fuzz`` case runs (``None``: every target).
    fuzz_targets: Sequence[str] | None = None
    progress: Callable[[str], None] = field(default=lambda line: None)

    @property
    def n_rounds(self) -> int:
        return self.rounds or (5 if self.quick else 11)

    @property
    def round_seconds(self) -> float:
        # Time per side per round.
        return 0.04 if self.quick else 0.12


def verdict(ratio: float | None, goal: float | None, better: str) -> bool | None:
    if ratio is None or goal is None:
        return None
    return ratio <= goal if better == "lower" else ratio >= goal
