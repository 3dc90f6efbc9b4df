"""One report from the reports of a sharded night (``pcfuzz report merge``).

The merged ``summary.json`` has every shard's targets, the property suite's counts
summed and its tables joined, the mutants summed, findings grouped again by bug
fingerprint (a bug two shards found is one finding with both sources), coverage
measured again from the shards' coverage data files combined, and completeness: the
merged night is complete only if every shard 1..N is there and was complete. A shard
report is data: it is read as JSON and checked for its shape, nothing in it is run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from pcfuzz.errors import UsageError
from pcfuzz.nightly.report import (
    SCHEMA_PATH,
    findings,
    write_junit,
    write_markdown,
    write_summary,
)
from pcfuzz.nightly.verdict import exit_status

__all__ = ["merge_reports"]

_COUNTS = ("tests", "passed", "failed", "errors", "skipped")


def _load(directory: Path) -> dict[str, Any]:
    path = directory / "summary.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"{path} is not JSON: {exc}") from None
    if type(data) is not dict or data.get("format") != "pcfuzz-summary/1":
        raise UsageError(f"{path} is not a pcfuzz-summary/1 report")
    try:
        import jsonschema
    except ImportError:  # the harness extra brings it; without it, the shape checks below
        jsonschema = None
    if jsonschema is not None:
        schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
        error = jsonschema.exceptions.best_match(
            jsonschema.Draft7Validator(schema).iter_errors(data))
        if error is not None:
            where = "/".join(map(str, error.absolute_path)) or "the document"
            raise UsageError(f"{path} is not a valid report: at {where}: {error.message}"[:500])
    for key, kind in (("targets", list), ("properties", dict)):
        if type(data.get(key)) is not kind:
            raise UsageError(f"{path}: '{key}' must be a {kind.__name__}")
    return data


def _shard(data: dict[str, Any], where: Path) -> tuple[int, int] | None:
    shard = data.get("shard")
    if shard is None:
        return None
    if (type(shard) is not dict or type(shard.get("index")) is not int
            or type(shard.get("count")) is not int
            or not 1 <= shard["index"] <= shard["count"]):
        raise UsageError(f"{where}/summary.json: 'shard' must be {{index, count}}")
    return shard["index"], shard["count"]


def _combine_coverage(dirs: list[Path], out: Path) -> dict[str, Any]:
    from pcfuzz.nightly.transitions import summarize

    files = [d / "logs" / ".coverage" for d in dirs if (d / "logs" / ".coverage").is_file()]
    info: dict[str, Any] = {"status": "no data (no shard measured coverage)",
                            "line_percent": None, "branch_percent": None, "packages": [],
                            "transitions": {}}
    if not files:
        return info
    data = out / "logs" / ".coverage"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, "-m", "coverage", "combine", "--keep",
                           f"--data-file={data}", *map(str, files)],
                          capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0 or not data.is_file():
        info["status"] = f"failed: coverage combine exited {proc.returncode}"
        return info
    try:
        return summarize(data, out / "logs" / "coverage.json")
    except (subprocess.SubprocessError, OSError, ValueError, KeyError) as exc:
        info["status"] = f"failed: {exc}"[:200]
        return info


def _transitions(shards: list[dict[str, Any]]) -> dict[str, Any]:
    """Per contract: a row is never taken when no shard took it (a shard without the
    contract's targets took none and removes nothing)."""
    merged: dict[str, Any] = {}
    for data in shards:
        for contract, entry in ((data.get("coverage") or {}).get("transitions") or {}).items():
            if type(entry) is not dict or type(entry.get("never_taken")) is not list:
                continue
            never = {str(r) for r in entry["never_taken"]}
            into = merged.setdefault(contract, {"inputs": 0, "rows": 0, "never": never})
            into["inputs"] += int(entry.get("inputs") or 0)
            into["rows"] = max(into["rows"], int(entry.get("rows") or 0))
            into["never"] &= never
    return {c: {"inputs": e["inputs"], "rows": e["rows"], "taken": e["rows"] - len(e["never"]),
                "never_taken": sorted(e["never"])} for c, e in merged.items()}


def merge_reports(dirs: list[Path], out: Path) -> dict[str, Any]:
    """Merge the shard reports in ``dirs`` into ``out``; returns the merged summary."""
    if not dirs:
        raise UsageError("name at least one shard report directory")
    loaded = [(d, _load(d)) for d in dirs]
    shards = {d: _shard(data, d) for d, data in loaded}
    counts = {s[1] for s in shards.values() if s is not None}
    if len(counts) > 1:
        raise UsageError(f"the reports are shards of different counts: {sorted(counts)}")
    reasons: list[str] = []
    count = counts.pop() if counts else None
    if count is not None:
        seen: dict[int, Path] = {}
        for d, s in shards.items():
            if s is None:
                raise UsageError(f"{d} is not a shard's report (no 'shard' in its summary)")
            if s[0] in seen:
                raise UsageError(f"shard {s[0]}/{count} twice: {seen[s[0]]} and {d}")
            seen[s[0]] = d
        missing = [i for i in range(1, count + 1) if i not in seen]
        reasons += [f"shard {i}/{count}: its report is missing" for i in missing]
    summaries = [data for _, data in loaded]
    for d, data in loaded:
        own = shards[d]
        label = f"shard {own[0]}/{count}" if own is not None else str(d)
        if not data.get("complete"):
            found = data.get("incomplete_reasons") or ["incomplete (no reason recorded)"]
            reasons += [f"{label}: {r}" for r in found]
    out.mkdir(parents=True, exist_ok=True)
    targets = sorted((t for s in summaries for t in s["targets"]), key=lambda t: str(t["name"]))
    names = [t["name"] for t in targets]
    if len(set(names)) != len(names):
        raise UsageError("a target is in more than one report: "
                         f"{sorted({n for n in names if names.count(n) > 1})}")
    props: dict[str, Any] = dict(summaries[0]["properties"])
    for key in _COUNTS:
        props[key] = sum(int(s["properties"].get(key) or 0) for s in summaries)
    for key in ("failures", "skipped_tests", "unmatched", "table"):
        props[key] = [row for s in summaries for row in s["properties"].get(key) or []]
    selected = [s["properties"].get("selected") for s in summaries]
    props["selected"] = sum(selected) if all(type(n) is int for n in selected) else None
    props["duration_s"] = max(float(s["properties"].get("duration_s") or 0) for s in summaries)
    codes = [s["properties"].get("exit_code") for s in summaries]
    props["exit_code"] = next((c for c in codes if c not in (0, None)), codes[0])
    mutant_parts = [s.get("mutants") or {} for s in summaries]
    mutants = {
        "status": "measured" if any(m.get("total") for m in mutant_parts) else "off",
        "killed": sum(int(m.get("killed") or 0) for m in mutant_parts),
        "total": sum(int(m.get("total") or 0) for m in mutant_parts),
        "survivors": [x for m in mutant_parts for x in m.get("survivors") or []],
    }
    coverage = _combine_coverage(dirs, out)
    coverage["transitions"] = _transitions(summaries)
    for d in dirs:
        for plot in (d / "plots").glob("fuzz_*.svg"):
            (out / "plots").mkdir(parents=True, exist_ok=True)
            shutil.copy2(plot, out / "plots" / plot.name)
    merged: dict[str, Any] = {
        "format": "pcfuzz-summary/1",
        "started": min(str(s["started"]) for s in summaries),
        "finished": max(str(s["finished"]) for s in summaries),
        "duration_s": max(float(s.get("duration_s") or 0) for s in summaries),
        "budget_s": max(float(s.get("budget_s") or 0) for s in summaries),
        "jobs": sum(int(s.get("jobs") or 1) for s in summaries),
        "tools": summaries[0].get("tools") or {},
        "complete": True,
        "incomplete_reasons": [],
        "exit_status": 0,
        "new_crashes": sum(int(s.get("new_crashes") or 0) for s in summaries),
        "shards": [{"dir": str(d), "index": s[0] if s else None, "count": count,
                    "complete": bool(data.get("complete")),
                    "exit_status": data.get("exit_status")}
                   for (d, data), s in zip(loaded, shards.values(), strict=True)],
        "plan": {"shortfalls": [], "min_examples": max(
            int((s.get("plan") or {}).get("min_examples") or 1) for s in summaries)},
        "phases": [],
        "targets": targets,
        "properties": props,
        "coverage": coverage,
        "mutants": mutants,
    }
    merged.update(complete=not reasons, incomplete_reasons=reasons,
                  exit_status=exit_status(merged, reasons))
    merged["findings"] = findings(merged)
    write_summary(out, merged)
    write_markdown(out, merged)
    write_junit(out, merged, _cases(dirs))
    return merged


def _cases(dirs: list[Path]) -> list[Any]:
    import xml.etree.ElementTree as ET

    cases: list[Any] = []
    for d in dirs:
        junit = d / "properties-junit.xml"
        if junit.is_file():
            try:
                cases += list(ET.parse(junit).getroot().iter("testcase"))
            except ET.ParseError:
                continue
    return cases
