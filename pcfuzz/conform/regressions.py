"""Saved findings: a minimal failing stream per file, replayed first by every later
run (the command, the pytest helper, the nightly), until the user deletes it.

A regression file is data: the scenario (contract, family, mutation, label, what is
expected, the turn's calls, the events, the realism level that generated it) and the
texts of the finding. It never names
code: not the adapter, not a module, not where the adapter raised.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pcfuzz import files
from pcfuzz.conform.report import Finding
from pcfuzz.errors import UsageError

__all__ = ["REGRESSION_FORMAT", "regression_scenarios", "save_regression"]

REGRESSION_FORMAT = "pcfuzz-conform-regression/1"


def save_regression(root: Path, scenario: Any, finding: Finding) -> Path:
    """Write ``<root>/<contract>/<family>-<hash>.json`` (+ ``.jsonl`` and ``.sse``)."""
    directory = root / scenario.contract
    directory.mkdir(parents=True, exist_ok=True)
    body = json.dumps(scenario.to_json(), sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    path: Path = directory / f"{scenario.family}-{digest}.json"
    document = {"format": REGRESSION_FORMAT, **scenario.to_json(),
                "rule": finding.rule, "invariant": finding.invariant,
                "expected_text": finding.expected, "got": finding.got}
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n",
                    encoding="utf-8", errors="surrogatepass")
    path.with_suffix(".jsonl").write_text(
        "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in scenario.events),
        encoding="utf-8", errors="surrogatepass")
    if finding.sse is not None:
        path.with_suffix(".sse").write_text(finding.sse, encoding="utf-8")
    return path


def regression_scenarios(root: Path | None, contract: str) -> Iterator[tuple[Path, Any]]:
    """Saved scenarios of ``contract``, oldest name first. A saved scenario is data
    only (events, calls, expectations: nothing in it names code); a file that is not
    one is skipped, and one of this format that is malformed is a usage error naming
    the file (it would otherwise be a regression silently lost)."""
    from pcfuzz.strategies.conformance import EXPECTATIONS, REALISM_LEVELS, Scenario

    if root is None:
        return
    directory = root / contract
    if not directory.is_dir():
        return
    for path in sorted(directory.glob("*.json")):
        try:
            data = files.read_json(path, what="conform regression")
        except UsageError:
            continue  # not JSON, not a regular file: not a saved scenario
        if not isinstance(data, dict) or data.get("format") != REGRESSION_FORMAT:
            continue
        expected = (*EXPECTATIONS, None)
        if not (all(isinstance(data.get(k), str) for k in ("family", "mutation", "label"))
                and data.get("contract") == contract
                and isinstance(data.get("events"), list)
                and isinstance(data.get("calls"), list)
                and all(isinstance(c, dict) for c in data["calls"])
                and data.get("expect") in expected and data.get("strict_expect") in expected
                # absent in files saved before the levels: their streams were hostile
                and data.get("realism", "hostile") in REALISM_LEVELS):
            raise UsageError(f"saved scenario {files.shown(path)} is malformed: it needs "
                             f"contract {contract!r}, family, mutation and label (strings), "
                             "events and calls (lists), known expectations and a known "
                             "realism level (sdk, wire, hostile); fix or "
                             "delete it")
        yield path, Scenario.from_json(data)
