"""The minimization phase: merge-minimize the working corpora that changed, least
recently minimized first, each only when its measured cost fits what is left."""

from __future__ import annotations

import hashlib
import json
import time
from typing import IO, Any

from pcfuzz import files
from pcfuzz.engine.corpus import minimize_corpus
from pcfuzz.engine.targets import Target, corpus_stats
from pcfuzz.errors import UsageError
from pcfuzz.nightly.fuzzing import minimize_not_run

#: Per target, what its last minimization cost and which corpus it left.
MINIMIZE_STATE = "minimize.json"


#: Stopping a libFuzzer process group at a step's time limit (SIGTERM, its exit).
MINIMIZE_STOP_S = 1.5


#: Never measured: one target process start-up per step (3 steps), and per input.
MINIMIZE_STEP_S = 2.5


MINIMIZE_INPUT_S = 0.01


def _corpus_digest(target: Target) -> str:
    """Names and sizes of every file of the target's corpora (seed and working)."""

    h = hashlib.sha1(usedforsecurity=False)
    for d in target.corpus_dirs():
        if d.is_dir():
            for f in sorted(d.iterdir()):
                if f.is_file():
                    h.update(f"{d.name}/{f.name}:{f.stat().st_size}\n".encode())
    return h.hexdigest()


def _minimize_state(target: Target) -> dict[str, Any]:
    try:
        loaded = files.read_json(target.work / MINIMIZE_STATE, what="minimize state")
    except UsageError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _minimize_estimate(state: dict[str, Any], files: int, row: dict[str, Any]) -> float:
    """Seconds a minimization of ``files`` inputs will take: the last one's cost scaled
    by the corpus size (start-ups do not scale: half of it is taken as fixed). Never
    measured: twice its three steps as tonight's campaign measured them (its start-up,
    and the corpus run at its exec rate), or the cold defaults."""
    seconds, before = state.get("seconds"), state.get("files")
    if isinstance(seconds, (int, float)) and isinstance(before, int) and before > 0:
        return float(seconds) * (0.5 + 0.5 * files / before)
    startup = row.get("startup_s")
    rate = row.get("exec_per_s")
    step = float(startup) if isinstance(startup, (int, float)) and startup > 0 \
        else MINIMIZE_STEP_S
    per_input = 1.0 / float(rate) if isinstance(rate, (int, float)) and rate > 0 \
        else MINIMIZE_INPUT_S
    return 2.0 * 3 * (step + files * per_input)


def minimize_phase(
    targets: list[Target], rows: list[dict[str, Any]], end: float, stream: IO[str]
) -> None:
    """Minimize the working corpora until ``end``: a corpus unchanged since its last
    minimization is left alone; the others go least recently minimized first, each only if its
    estimated cost (its last minimization's, scaled) fits what is left, so the phase
    ends within its share and every target not minimized is named with the reason."""
    todo = [(t, r) for t, r in zip(targets, rows, strict=True) if r["status"] != "skipped"]
    # the longest unminimized first (never: first of all), then most new inputs: a
    # share too small for every target rotates through them night after night
    todo.sort(key=lambda tr: (float(_minimize_state(tr[0]).get("when") or 0.0),
                              -int(tr[1].get("new_inputs") or 0)))
    for target, row in todo:
        files, size = corpus_stats(*target.corpus_dirs())
        state = _minimize_state(target)
        digest = _corpus_digest(target)
        if state.get("digest") == digest:
            row["minimize"] = minimize_not_run(files, size,
                                                "unchanged since its last minimization")
            continue
        left = end - time.monotonic()
        left -= min(MINIMIZE_STOP_S, 0.3 * max(0.0, left))
        need = _minimize_estimate(state, files, row)
        # only what fits is started (a minimization cut short is an incomplete night);
        # the rest rotates to a later night, least recently minimized first
        if need > left:
            row["minimize"] = minimize_not_run(
                files, size, f"not minimized tonight: needs about {need:.0f}s, "
                f"{max(0.0, left):.0f}s left in the share (rotates to a later night)")
            stream.write(f"[minimize] {target.name}: {row['minimize']['detail']}\n")
            continue
        stream.write(f"[minimize] {target.name} ...\n")
        stream.flush()
        res = minimize_corpus(target, target.work_corpus, [target.seed_corpus],
                              time_limit_s=left)
        row["minimize"] = res.as_dict()
        if res.status == "swapped":
            row["corpus_after"] = {"files": res.files_after, "bytes": res.bytes_after}
        cut = res.detail.startswith("out of time")
        (target.work / MINIMIZE_STATE).write_text(json.dumps({
            # cut short: the time it had is a lower bound of what it needs
            "digest": None if cut else _corpus_digest(target),
            "seconds": max(res.seconds, 1.5 * need) if cut else res.seconds,
            "files": files, "steps": res.steps, "when": time.time()}) + "\n",
            encoding="utf-8")
        stream.write(f"[minimize] {res.line(target.name)} in {res.seconds:.1f}s\n")
