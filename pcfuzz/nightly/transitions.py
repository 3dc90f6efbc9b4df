"""Rule coverage for the nightly report: which lines and branches of ``contracts/`` the
night ran, and which rows of each contract's transition table its streams took.

- Line and branch coverage: the property suite is measured from the end of its
  collection (``pcfuzz/nightly/pytest_budget.py``, ``PCFUZZ_COVERAGE_DATA``), limited to the
  ``contracts`` package, then (same data file, ``coverage run --append``) a replay of
  the final fuzz corpora (this module's ``__main__``), which also imports every module. :func:`summarize`
  turns the data into per-package figures (each provider package, and the shared
  modules together).
- Transitions: the replay decodes every corpus input of the provider targets into the
  event lists the target fed the parsers (raw SSE for the wire targets; for the
  structure-aware targets, the calls ``pcfuzz show`` records), feeds each list one
  event at a time to a fresh stream of the current revision, and records the
  ``(state, event)`` pair before each accepted event (or provider ``error`` event,
which the stream reports as ``ProviderError``). Every pair of
  ``REVISIONS[REVISION].transitions`` never taken is listed in ``summary.md``. A pair
  is "taken" only when the stream accepted the event there; the table row that
  rejects is not a row.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pcfuzz.contracts.registry import CONTRACTS as REGISTERED

__all__ = ["CONTRACTS", "coverage_available", "summarize", "trace_events", "transition_table"]

#: contract -> (package, stream class, how an event names itself in the table: its
#: type field, or ``chat`` for Chat's chunks, which carry none)
CONTRACTS: dict[str, tuple[str, str, str]] = {
    c.name: (c.package, c.stream_class, c.event_key or "chat") for c in REGISTERED}
#: Inputs replayed per target at most (the newest corpora can be large).
MAX_INPUTS_PER_TARGET = 400


def coverage_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("coverage") is not None


def contracts_dir() -> Path:
    import pcfuzz.contracts

    return Path(pcfuzz.contracts.__file__).resolve().parent


def coverage_prefix(data_file: Path, *, append: bool = False) -> list[str]:
    """``python -m coverage run`` limited to ``contracts/``, line and branch."""
    cmd = [sys.executable, "-m", "coverage", "run", "--branch", f"--data-file={data_file}",
           f"--source={contracts_dir()}"]
    return cmd + (["--append"] if append else [])


def transition_table(contract: str) -> list[tuple[str, str]]:
    """Every (state, event) row of the current revision's stream transitions."""
    import importlib

    package = importlib.import_module(f"pcfuzz.contracts.{CONTRACTS[contract][0]}")
    tables = package.REVISIONS[package.REVISION]
    return sorted((s, e) for s, row in tables.transitions.items() for e in row)


def _key(kind: str, event: Any) -> str | None:
    if kind == "chat":
        return "chunk" if type(event) is dict else ("done" if type(event) is str else None)
    if type(event) is dict:
        name = event.get(kind)
        return name if type(name) is str else None
    return None


def _state(stream: Any) -> str:
    # ``state`` where the stream exposes it, else the private attribute every stream has
    state = getattr(stream, "state", None)
    return str(state if isinstance(state, str) else stream._state)


def trace_events(contract: str, events: Iterable[Any]) -> set[tuple[str, str]]:
    """Feed ``events`` to a fresh stream; the (state, event) pairs it accepted."""
    import importlib

    from pcfuzz.contracts.errors import ContractError, ProviderError

    package, cls, kind = CONTRACTS[contract]
    stream = getattr(importlib.import_module(f"pcfuzz.contracts.{package}"), cls)()
    taken: set[tuple[str, str]] = set()
    for event in events:
        before, key = _state(stream), _key(kind, event)
        try:
            stream.feed(event)
        except ProviderError:
            # the provider's own error event: its row was taken, and it ends the stream
            if key is not None:
                taken.add((before, key))
            break
        except ContractError:
            break
        if key is not None:
            taken.add((before, key))
    return taken


def _wire_events(contract: str, data: bytes) -> Iterator[Any]:
    from pcfuzz.contracts.errors import ContractError
    from pcfuzz.contracts.sse import decode_sse
    from pcfuzz.contracts.wire import sse_to_events

    try:
        yield from sse_to_events(contract, decode_sse(data))
    except ContractError:
        return


def _recorded_event_lists(target_path: Path, data: bytes) -> Iterator[list[Any]]:
    """The event lists a structure-aware target fed the contracts for ``data``."""
    from pcfuzz.engine.show import show_input

    calls, _outcome = show_input(target_path, data)
    fed: dict[int | None, list[Any]] = {}
    for call in calls:
        if call.name.endswith(".feed") and call.args:
            fed.setdefault(call.instance, []).append(call.args[0])
            continue
        for arg in call.args:
            if isinstance(arg, list) and arg and all(isinstance(a, dict | str) for a in arg):
                yield arg
                break
    yield from fed.values()


def replay_transitions(fuzz_dir: Path, work_dir: Path, deadline: float) -> dict[str, Any]:
    """Replay the corpora of the provider targets; per contract the table rows taken."""
    from pcfuzz.engine.regressions import input_files

    out: dict[str, Any] = {}
    for n, (contract, (package, _cls, _kind)) in enumerate(CONTRACTS.items()):
        # an equal share of what is left for each contract still to replay
        until = time.monotonic() + max(0.0, deadline - time.monotonic()) / (len(CONTRACTS) - n)
        taken: set[tuple[str, str]] = set()
        inputs = 0
        for fuzzer, wire in ((f"fuzz_wire_{package}", True), (f"fuzz_{package}", False)):
            path = fuzz_dir / f"{fuzzer}.py"
            dirs = [fuzz_dir / "corpus" / fuzzer, work_dir / fuzzer / "corpus"]
            files = [f for d in dirs if d.is_dir() for f in input_files(d)]
            for f in files[-MAX_INPUTS_PER_TARGET:]:
                if time.monotonic() > until:
                    break
                inputs += 1
                data = f.read_bytes()
                try:
                    lists = ([list(_wire_events(contract, data))] if wire
                             else list(_recorded_event_lists(path, data)))
                except Exception:  # noqa: BLE001 - a crashing input is the fuzzer's report
                    continue
                for events in lists:
                    taken |= trace_events(contract, events)
        table = transition_table(contract)
        out[contract] = {
            "inputs": inputs,
            "rows": len(table),
            "taken": sum(1 for row in table if row in taken),
            "never_taken": [f"{s} --{e}-->" for s, e in table if (s, e) not in taken],
        }
    return out


def summarize(data_file: Path, json_out: Path) -> dict[str, Any]:
    """Line and branch percentages of ``contracts/`` overall and per package."""
    subprocess.run(
        [sys.executable, "-m", "coverage", "json", f"--data-file={data_file}", "-o", str(json_out),
         "-q"], check=True, capture_output=True, timeout=120,
    )
    report = json.loads(json_out.read_text(encoding="utf-8"))
    root = contracts_dir()
    groups: dict[str, list[int]] = {}
    for name, entry in report["files"].items():
        # coverage.py names files relative to the current directory when it can
        parts = Path(name).resolve().parts
        if parts[:len(root.parts)] == root.parts:
            rel = parts[len(root.parts):]
        else:  # a copy elsewhere: what follows the last folder named like the package
            last = max((i for i, p in enumerate(parts) if p == root.name), default=-1)
            rel = parts[last + 1:]
        group = rel[0] if len(rel) > 1 else "shared modules"
        s = entry["summary"]
        acc = groups.setdefault(group, [0, 0, 0, 0])
        acc[0] += s["covered_lines"]
        acc[1] += s["num_statements"]
        acc[2] += s.get("covered_branches", 0)
        acc[3] += s.get("num_branches", 0)

    def pct(a: int, b: int) -> float:
        return round(100.0 * a / b, 1) if b else 100.0

    total = [sum(v[i] for v in groups.values()) for i in range(4)]
    return {
        "status": "measured",
        "line_percent": pct(total[0], total[1]),
        "branch_percent": pct(total[2], total[3]),
        "packages": [
            {"name": k, "line_percent": pct(v[0], v[1]), "branch_percent": pct(v[2], v[3]),
             "lines": v[1], "branches": v[3]}
            for k, v in sorted(groups.items())
        ],
    }


def main(argv: list[str]) -> int:
    """``python -m pcfuzz.nightly.transitions OUT.json FUZZ_DIR WORK_DIR SECONDS`` (the nightly
    runs it under coverage, appending to the property suite's data)."""
    out, fuzz_dir, work_dir, seconds = argv
    result = replay_transitions(Path(fuzz_dir), Path(work_dir),
                                time.monotonic() + float(seconds))
    Path(out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
