"""Corpus minimization: libFuzzer ``-merge=1`` into a fresh directory, swapped in only
when the merged corpus is non-empty and keeps every coverage feature."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pcfuzz.engine.libfuzzer import count_features, merge
from pcfuzz.engine.targets import Target, corpus_stats

__all__ = ["MinimizeResult", "minimize_corpus"]


@dataclass
class MinimizeResult:
    """Before/after figures of one minimization and what was done (``status``):
    ``swapped`` (the merged corpus replaced the old one), ``kept`` (the old one stays;
    ``detail`` says why) or ``skipped`` (nothing to minimize)."""

    status: str
    detail: str
    files_before: int = 0
    files_after: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    features_before: int | None = None
    features_after: int | None = None
    #: wall seconds of the whole minimization and of each step (features before, the
    #: merge, features after)
    seconds: float = 0.0
    steps: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self, name: str) -> str:
        return (
            f"{name}: {self.status}: files {self.files_before} -> {self.files_after}, "
            f"bytes {self.bytes_before:,} -> {self.bytes_after:,}, "
            f"features {self.features_before} -> {self.features_after}"
            + (f" ({self.detail})" if self.detail else "")
        )


def _sha1(path: Path) -> str:
    return hashlib.sha1(path.read_bytes(), usedforsecurity=False).hexdigest()


def minimize_corpus(
    target: Target,
    corpus: Path,
    extra: Sequence[Path] = (),
    *,
    time_limit_s: float | None = None,
) -> MinimizeResult:
    """Minimize ``corpus`` (merging in ``extra`` corpora, e.g. the seeds or the working
    corpus) in place. Files whose content was already in one of the inputs keep their
    original (descriptive) names; the rest are named by content hash.

    ``time_limit_s`` bounds the whole minimization: a step still running then is
    stopped and the old corpus stays (status ``kept``, detail "out of time").
    """
    deadline = None if time_limit_s is None else time.monotonic() + time_limit_s

    def left(default: float) -> float:
        if deadline is None:
            return default
        return max(0.1, min(default, deadline - time.monotonic()))

    began = time.monotonic()
    result = _minimize(target, corpus, extra, deadline, time_limit_s, left)
    result.seconds = round(time.monotonic() - began, 2)
    return result


def _minimize(
    target: Target, corpus: Path, extra: Sequence[Path], deadline: float | None,
    time_limit_s: float | None, left: Any,
) -> MinimizeResult:
    sources = [d for d in [corpus, *extra] if d.is_dir()]
    files_before, bytes_before = corpus_stats(*sources)
    result = MinimizeResult("skipped", "", files_before, files_before, bytes_before, bytes_before)
    if files_before == 0:
        result.detail = "empty corpus"
        return result
    fresh = corpus.with_name(corpus.name + ".merging")
    shutil.rmtree(fresh, ignore_errors=True)
    try:
        try:
            mark = time.monotonic()
            result.features_before = count_features(target, sources, left(600))
            result.steps["features_before"] = round(time.monotonic() - mark, 2)
            mark = time.monotonic()
            merged = merge(target, fresh, sources, left(1200))
            result.steps["merge"] = round(time.monotonic() - mark, 2)
            files_after, bytes_after = corpus_stats(fresh)
            result.files_after, result.bytes_after = files_after, bytes_after
            mark = time.monotonic()
            result.features_after = (
                count_features(target, [fresh], left(600)) if files_after else 0
            )
            result.steps["features_after"] = round(time.monotonic() - mark, 2)
        except subprocess.TimeoutExpired:
            result.status = "kept"
            result.detail = f"out of time ({time_limit_s:.0f}s)"
            result.files_after, result.bytes_after = files_before, bytes_before
            result.features_after = None
            return result
        result.status = "kept"
        if merged is None or files_after == 0:
            result.detail = "merge produced an empty corpus"
            result.files_after, result.bytes_after = files_before, bytes_before
            return result
        if result.features_before is None or result.features_after is None:
            result.detail = "could not measure coverage features (does an input crash?)"
            return result
        if result.features_after < result.features_before:
            result.detail = (
                f"merged corpus would lose features ({result.features_before} -> "
                f"{result.features_after})"
            )
            return result
        names: dict[str, str] = {}
        for src in sources:
            for path in sorted(src.iterdir()):
                if path.is_file() and not path.name.startswith("."):
                    names.setdefault(_sha1(path), path.name)
        for path in list(fresh.iterdir()):
            original = names.get(_sha1(path))
            if original and original != path.name and not (fresh / original).exists():
                path.rename(fresh / original)
        old = corpus.with_name(corpus.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if corpus.exists():
            corpus.rename(old)
        fresh.rename(corpus)
        shutil.rmtree(old, ignore_errors=True)
        result.status = "swapped"
        return result
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
