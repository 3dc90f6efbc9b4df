"""Saved findings: a minimal failing stream per file, replayed first by every later
run (the command, the pytest helper, the nightly), until the user deletes it.

A regression file is data: the scenario (contract, family, mutation, label, what is
expected, the turn's calls, the events) and the texts of the finding. It never names
code: not the adapter, not a module, not where the adapter raised.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pcfuzz.conform.report import Finding

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
    """Saved scenarios of ``contract``, oldest name first (unreadable files skipped)."""
    from pcfuzz.strategies.conformance import Scenario

    if root is None:
        return
    directory = root / contract
    if not directory.is_dir():
        return
    for path in sorted(directory.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8", errors="surrogatepass"))
            if isinstance(data, dict) and data.get("format") == REGRESSION_FORMAT:
                scenario = Scenario.from_json(data)
            else:
                continue
        except (OSError, ValueError, KeyError, TypeError):
            continue
        yield path, scenario
