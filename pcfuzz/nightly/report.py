"""The nightly report: ``summary.json``, ``summary.md``, ``junit.xml`` and SVG plots.

``summary.json`` is the source of truth (schema: ``pcfuzz/nightly/summary.schema.json``); the
Markdown, the JUnit XML and the plots render from it and from the campaigns' samples.
The plots are written by hand (no plotting dependency): features and corpus size over
the campaign's wall-clock time, from libFuzzer's status lines.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from pcfuzz import files
from pcfuzz.engine.libfuzzer import Sample
from pcfuzz.errors import UsageError
from pcfuzz.nightly.adapters import adapter_lines

__all__ = ["SCHEMA_PATH", "append_history", "render_svg", "render_trend_svg", "write_junit", "write_markdown", "write_summary"]

SCHEMA_PATH = Path(__file__).with_name("summary.schema.json")
_MAX_POINTS = 600


def write_summary(report_dir: Path, summary: dict[str, Any]) -> Path:
    path = report_dir / "summary.json"
    path.write_text(json.dumps(summary, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path


def _n(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}".rstrip("0").rstrip(".")


def _kb(size: int) -> str:
    return f"{size / 1024:,.1f} KB" if size >= 1024 else f"{size} B"


def append_history(path: Path, summary: dict[str, Any]) -> Path:
    """Append tonight's ``summary.json`` as one line of ``path`` (JSON lines)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(summary, separators=(",", ":")) + "\n")
    return path


def trend_point(summary: dict[str, Any]) -> dict[str, float | None]:
    """The figures charted across nights, from one summary."""
    targets = summary.get("targets", [])
    cov = summary.get("coverage") or {}
    mut = summary.get("mutants") or {}
    return {
        "line %": cov.get("line_percent"),
        "branch %": cov.get("branch_percent"),
        "corpus files": float(sum(t["corpus_after"]["files"] for t in targets)),
        "exec/s": float(sum(t["exec_per_s"] for t in targets)),
        "kill %": (100.0 * mut["killed"] / mut["total"]) if mut.get("total") else None,
    }


#: The largest history file read back (a night's line is a few kB).
HISTORY_MAX_BYTES = 256 * 1024 * 1024


def read_history(path: Path, last: int = 60) -> list[dict[str, Any]]:
    """The last nights of a history file (data: each line one summary); a file that
    cannot be read (missing, not a regular file, not UTF-8, too large) is no history,
    a line that is not a JSON object is skipped."""
    out = []
    try:
        text = files.read_text(path, limit=HISTORY_MAX_BYTES, what="history")
    except UsageError:
        return []
    for line in text.splitlines()[-last:]:
        try:
            loaded = files.parse_json(line, source="history line")
        except UsageError:
            continue
        if isinstance(loaded, dict):
            out.append(loaded)
    return out


def render_trend_svg(points: Sequence[dict[str, float | None]]) -> str:
    """One small panel per figure, night by night (left to right)."""
    names = ["line %", "branch %", "kill %", "corpus files", "exec/s"]
    pw, ph, gap = 180, 70, 16
    width, height = len(names) * (pw + gap) + gap, ph + 50
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="10">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    for i, name in enumerate(names):
        x0, y0 = gap + i * (pw + gap), 20
        vals = [(n, p[name]) for n, p in enumerate(points) if p.get(name) is not None]
        top = max([v for _, v in vals if v is not None] or [1.0]) or 1.0
        if name.endswith("%"):
            top = 100.0
        out.append(f'<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
        last = f"{vals[-1][1]:,.1f}" if vals else "-"
        out.append(f'<text x="{x0}" y="{y0 - 6}">{escape(name)}: {last} (max {top:,.0f})</text>')
        span = max(1, len(points) - 1)
        coords = [(x0 + pw * n / span, y0 + ph - ph * float(v or 0) / top) for n, v in vals]
        if len(coords) > 1:
            d = "M" + "L".join(f"{x:.1f},{y:.1f}" for x, y in coords)
            out.append(f'<path d="{d}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
        for x, y in coords:
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="#1f77b4"/>')
        out.append(f'<text x="{x0}" y="{y0 + ph + 14}">{len(points)} nights</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _coverage_lines(summary: dict[str, Any]) -> list[str]:
    cov = summary.get("coverage")
    if not cov:
        return []
    lines = ["", "## Rule coverage of contracts/", ""]
    if cov.get("line_percent") is None:
        return lines + [f"- not measured: {cov.get('status')}"]
    lines += [
        f"- over the property suite and a replay of the final corpora: lines "
        f"**{cov['line_percent']}%**, branches **{cov['branch_percent']}%**",
        "",
        "| package | lines % | branches % | statements | branches |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [f"| {p['name']} | {p['line_percent']} | {p['branch_percent']} | {p['lines']} | "
              f"{p['branches']} |" for p in cov["packages"]]
    if cov.get("transitions"):
        lines += ["", "Stream transitions (state --event-->) the replayed corpora took, per "
                  "contract; the rows never taken are rules the night did not exercise:", ""]
        for name, t in cov["transitions"].items():
            lines.append(f"- {name}: {t['taken']}/{t['rows']} table rows taken "
                         f"({t['inputs']} inputs)")
            if t["never_taken"]:
                lines.append("  - never taken: " + ", ".join(f"`{r}`" for r in t["never_taken"]))
    return lines


def _mutant_lines(summary: dict[str, Any]) -> list[str]:
    mut = summary.get("mutants")
    if not mut:
        return []
    lines = ["", "## Mutants (harness power)", ""]
    if not mut.get("total"):
        return lines + [f"- {mut.get('status')}"]
    rate = 100.0 * mut["killed"] / mut["total"]
    lines.append(f"- {mut['killed']}/{mut['total']} sampled mutants of contracts/ killed "
                 f"(**{rate:.0f}%**); {len(mut['survivors'])} survived")
    lines += [f"  - SURVIVED `{s['file']}:{s['line']}` {s['operator']}: "
              f"`{s['change'].replace('`', '')}`" for s in mut["survivors"]]
    if mut.get("equivalent"):
        lines.append(f"- left out of the sample: {len(mut['equivalent'])} mutants argued "
                     "equivalent in docs/fuzzing.md (\"Known equivalent\"): "
                     + ", ".join(f"`{e['file']}:{e['line']}` {e['operator']}"
                                 for e in mut["equivalent"]))
    return lines


def findings(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per bug: the crashes of every fuzz target and the failures of every
    property test, grouped by their bug fingerprint (``bug``; a finding without one,
    an oracle's or a test's own check, is grouped by its own fingerprint, or stands
    alone)."""
    groups: dict[str, dict[str, Any]] = {}
    for t in summary["targets"]:
        for c in t["crashes"]:
            key = c.get("bug") or c["fingerprint"]
            entry = groups.setdefault(key, {
                "fingerprint": key, "exception": c["exception"], "message": c["message"],
                "where": c.get("where"), "new": False, "sources": []})
            entry["new"] = entry["new"] or bool(c["new"])
            entry["sources"].append({"kind": "fuzz target", "name": t["name"],
                                     "fingerprint": c["fingerprint"], "input": c["input"]})
    for f in summary["properties"]["failures"]:
        key = f.get("bug") or f.get("fingerprint") or f"test {f['name']}"
        first = f["message"].partition("\n")[0]
        exception, _, message = first.partition(": ")
        entry = groups.setdefault(key, {
            "fingerprint": key, "exception": exception or "failure", "message": message,
            "where": f.get("where"), "new": True, "sources": []})
        entry["new"] = True
        entry["sources"].append({"kind": "property test", "name": f["name"],
                                 "fingerprint": f.get("fingerprint"),
                                 "input": f.get("capture")})
    return sorted(groups.values(), key=lambda g: (-len(g["sources"]), g["fingerprint"]))


def _finding_lines(summary: dict[str, Any]) -> list[str]:
    found = summary.get("findings") or []
    if not found:
        return []
    lines = ["", "## Findings (one per bug)", "",
             "Grouped by bug fingerprint (exception class, the message's fixed part, the "
             "innermost frame in the code under test), whoever found it.", ""]
    for g in found:
        where = f" at `{g['where']}`" if g.get("where") else ""
        msg = escape(g["message"][:120])
        lines.append(f"- `{g['fingerprint']}`: {g['exception']}{where}: {msg} "
                     f"({len(g['sources'])} source{'s' * (len(g['sources']) != 1)})")
        for src in g["sources"]:
            inp = f", `{src['input']}`" if src.get("input") else ""
            lines.append(f"  - {src['kind']} `{src['name']}`{inp}")
    return lines


def _target_note(row: dict[str, Any]) -> str:
    """Why a target ran as it did: its error, its rounds, an early plateau."""
    parts = []
    if row.get("error"):
        parts.append(str(row["error"]))
    rounds = row.get("rounds") or []
    if len(rounds) > 1:
        parts.append(f"{len(rounds)} rounds")
    if row.get("plateaued") or any(r.get("plateaued") for r in rounds):
        parts.append("stopped at a plateau")
    text = "; ".join(parts) or "-"
    return escape(text[:300]).replace("|", "\\|").replace("\n", " ")


def write_markdown(
    report_dir: Path, summary: dict[str, Any], history: Path | None = None
) -> Path:
    """A person's view of ``summary.json`` (and, with ``history``, the trend)."""
    lines = ["# pcfuzz nightly report", ""]
    reasons = summary.get("incomplete_reasons") or []
    if reasons:
        lines += [f"**INCOMPLETE**: this run did less than it planned (exit status "
                  f"{summary['exit_status']}); every reason:", ""]
        lines += [f"- {escape(r)}" for r in reasons]
        lines.append("")
    elif "complete" in summary:
        lines += ["**Complete**: every target executed, every selected property test ran, "
                  "every planned phase did its work.", ""]
    lines += [
        f"- started {summary['started']}, took {summary['duration_s']:.0f} s "
        f"(budget {summary['budget_s']:.0f} s, jobs {summary['jobs']})",
        "- tools: " + ", ".join(f"{k} {v}" for k, v in summary["tools"].items()),
        f"- **new crashes: {summary['new_crashes']}**; exit status {summary['exit_status']}",
        "",
        "## Fuzz targets",
        "",
        "| target | status | time s | fuzzing s | executions | exec/s | cov | ft | "
        "corpus before | corpus after | new crashes | note |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    if summary.get("phases"):
        at = lines.index("## Fuzz targets") - 1
        lines[at:at] = [
            "- phases (planned / used s): "
            + ", ".join(f"{p['name']} {p['planned_s']:.0f} / {p['used_s']:.0f}"
                        for p in summary["phases"]),
        ]
    for t in summary["targets"]:
        new = sum(1 for c in t["crashes"] if c["new"])
        lines.append(
            f"| {t['name']} | {t['status']} | {t['duration_s']:.0f} | "
            f"{float(t.get('fuzz_s') or 0.0):.0f} | {t['executions']:,} | "
            f"{_n(t['exec_per_s'])} | {t['coverage']['cov']} | {t['coverage']['ft']} | "
            f"{t['corpus_before']['files']} ({_kb(t['corpus_before']['bytes'])}) | "
            f"{t['corpus_after']['files']} ({_kb(t['corpus_after']['bytes'])}) | {new} | "
            f"{_target_note(t)} |"
        )
    lines += adapter_lines(summary)
    lines += _finding_lines(summary)
    crashes = [(t, c) for t in summary["targets"] for c in t["crashes"]]
    if crashes:
        lines += [
            "",
            "## Crashes",
            "",
            "| target | fingerprint | new | exception | top frames | artifacts | input |",
            "|---|---|---|---|---|---:|---|",
        ]
        for t, c in crashes:
            frames = "<br>".join(f"`{f}`" for f in c["frames"]) or "-"
            msg = escape(c["message"][:80]).replace("|", "\\|")
            lines.append(
                f"| {t['name']} | `{c['fingerprint']}` | {'yes' if c['new'] else 'known'} | "
                f"{c['exception']}: {msg} | {frames} | {c['artifacts']} | `{c['input']}` |"
            )
        lines += ["", "Reproduce, read and keep each finding:", ""]
        for t, c in crashes:
            inp = c.get("input_path") or c["input"]
            lines += [
                f"- `{c['fingerprint']}` ({t['name']}):",
                f"  - reproduce: `{sys.executable} {c.get('target_path', t['fuzzer'] + '.py')} {inp}`",
                f"  - read: `pcfuzz show {inp} --target {t['name']}`",
                f"  - keep: `pcfuzz promote {inp} --target {t['name']}`",
            ]
    lines += [
        "",
        "## Corpus minimization",
        "",
        "| target | result | files | bytes | features | s | note |",
        "|---|---|---|---|---|---:|---|",
    ]
    for t in summary["targets"]:
        m = t["minimize"]
        lines.append(
            f"| {t['name']} | {m['status']} | {m['files_before']} -> {m['files_after']} | "
            f"{m['bytes_before']:,} -> {m['bytes_after']:,} | "
            f"{m['features_before']} -> {m['features_after']} | "
            f"{float(m.get('seconds') or 0):.1f} | {escape(m['detail']) or '-'} |"
        )
    left = [t["name"] for t in summary["targets"]
            if t["minimize"]["status"] != "swapped"
            and not t["minimize"]["detail"].startswith("unchanged")]
    if left:
        lines += ["", "Not minimized tonight (the reason is in the note): "
                  + ", ".join(left) + "."]
    p = summary["properties"]
    lines += [
        "",
        "## Property suite",
        "",
        f"- mode `{p['mode']}`, hypothesis profile `{p['profile']}`, "
        f"budget {p['budget_s']:.0f} s, took {p['duration_s']:.0f} s, pytest exit {p['exit_code']}",
        f"- tests {p['tests']}: passed {p['passed']}, failed {p['failed']}, "
        f"errors {p['errors']}, skipped {p['skipped']}",
    ]
    for f in p["failures"]:
        first, _, rest = f["message"].partition("\n")
        lines.append(f"  - FAILED `{f['name']}`: {first[:200]}")
        if f.get("capture_path"):
            lines += [f"    - read: `{f['capture_path']}` (the failing example's calls "
                      "and event list)",
                      f"    - keep: `pcfuzz promote {f['capture_path']}`"]
        if rest:
            lines += ["", "    ```", *("    " + r for r in rest.splitlines()), "    ```", ""]
    if p.get("skipped_tests"):
        lines.append("- skipped (named):")
        lines += [f"  - `{s['name']}`: {s['reason']}" for s in p["skipped_tests"]]
    if p.get("unmatched"):
        lines.append("- results not matched to the record of their run (examples unknown):")
        lines += [f"  - `{name}`" for name in p["unmatched"]]
    if p.get("table"):
        lines += [
            "",
            "| property test | result | examples (planned) | time s | events (% of generated) |",
            "|---|---|---:|---:|---|",
        ]
        for row in p["table"]:
            events = "; ".join(f"{escape(k)[:60]} {v:g}%" for k, v in row["events"].items())
            planned = "-" if row["planned"] is None else str(row["planned"])
            lines.append(
                f"| `{row['name']}` | {row['result']} | {row['examples']} ({planned}) | "
                f"{row['seconds']:.1f} | {events.replace('|', '/') or '-'} |"
            )
    lines += _coverage_lines(summary) + _mutant_lines(summary)
    if history is not None:
        nights = read_history(history)
        if nights:
            trend = report_dir / "plots" / "trend.svg"
            trend.parent.mkdir(parents=True, exist_ok=True)
            trend.write_text(render_trend_svg([trend_point(n) for n in nights]), encoding="utf-8")
            lines += ["", "## Trend", "", f"{len(nights)} nights in the history "
                      "(coverage, kill rate, corpus size, exec/s): ![trend](plots/trend.svg)"]
    lines += ["", "Plots: " + ", ".join(f"[{t['name']}]({t['plot']})" for t in summary["targets"])]
    path = report_dir / "summary.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_junit(
    report_dir: Path, summary: dict[str, Any], property_cases: Sequence[ET.Element]
) -> Path:
    """One test case per fuzz target (fails on a new crash, errors on a runner error)
    and one per property test (copied from pytest's own JUnit output)."""
    root = ET.Element("testsuites", name="pcfuzz nightly")
    fuzz_suite = ET.SubElement(root, "testsuite", name="fuzz-targets")
    failures = errors = 0
    for t in summary["targets"]:
        case = ET.SubElement(
            fuzz_suite,
            "testcase",
            classname="fuzz",
            name=t["name"],
            time=f"{t['duration_s']:.2f}",
        )
        new = [c for c in t["crashes"] if c["new"]]
        if new:
            failures += 1
            fail = ET.SubElement(
                case, "failure", message=f"{len(new)} new crash(es): "
                + ", ".join(c["fingerprint"] for c in new)
            )
            fail.text = "\n".join(
                f"{c['fingerprint']} {c['exception']}: {c['message']}\n  "
                + "\n  ".join(c["frames"])
                + f"\n  input: {c['input']}"
                for c in new
            )
        elif t["status"] == "skipped":
            ET.SubElement(case, "skipped", message=t["error"] or "not run")
        elif t["error"]:
            errors += 1
            ET.SubElement(case, "error", message=t["error"])
        out = ET.SubElement(case, "system-out")
        out.text = (
            f"executions={t['executions']} exec_per_s={t['exec_per_s']} "
            f"ft={t['coverage']['ft']} corpus={t['corpus_after']['files']}"
        )
    fuzz_suite.set("tests", str(len(summary["targets"])))
    fuzz_suite.set("failures", str(failures))
    fuzz_suite.set("errors", str(errors))
    prop_suite = ET.SubElement(root, "testsuite", name="properties")
    counts = {"failure": 0, "error": 0, "skipped": 0}
    for case in property_cases:
        prop_suite.append(case)
        for kind in counts:
            if case.find(kind) is not None:
                counts[kind] += 1
    prop_suite.set("tests", str(len(property_cases)))
    prop_suite.set("failures", str(counts["failure"]))
    prop_suite.set("errors", str(counts["error"]))
    prop_suite.set("skipped", str(counts["skipped"]))
    ET.indent(root)
    path = report_dir / "junit.xml"
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return path


def _ticks(top: float, count: int = 4) -> list[float]:
    if top <= 0:
        return [0.0]
    raw = top / count
    magnitude = 10 ** (len(str(int(raw))) - 1) if raw >= 1 else 1
    step = max(1.0, float(-(-raw // magnitude) * magnitude))
    out, value = [0.0], 0.0
    while value < top:
        value += step
        out.append(value)
    return out


def render_svg(
    title: str,
    samples: Sequence[Sample],
    budget_s: float,
    crashes: Sequence[float] = (),
) -> str:
    """Coverage features (left axis) and corpus files (right axis) over time, as SVG;
    ``crashes`` (seconds) are marked as red vertical lines."""
    width, height = 640, 320
    left, right, top, bottom = 60, 60, 40, 40
    pw, ph = width - left - right, height - top - bottom
    pts = list(samples)
    if len(pts) > _MAX_POINTS:  # a long campaign prints thousands of NEW lines
        step = len(pts) / _MAX_POINTS
        pts = [pts[int(i * step)] for i in range(_MAX_POINTS)] + [pts[-1]]
    t_max = max([budget_s, *(s.t for s in pts)] or [1.0]) or 1.0
    ft_max = max([1, *(s.ft for s in pts)])
    corp_max = max([1, *(s.corpus_files for s in pts)])
    ft_ticks, corp_ticks, t_ticks = _ticks(ft_max), _ticks(corp_max), _ticks(t_max)
    ft_top, corp_top, t_top = ft_ticks[-1], corp_ticks[-1], t_ticks[-1]

    def x(t: float) -> float:
        return left + pw * t / t_top

    def y(v: float, vmax: float) -> float:
        return top + ph - ph * v / vmax

    def path(values: list[tuple[float, float]], vmax: float) -> str:
        if not values:
            return ""
        d = [f"M{x(values[0][0]):.1f},{y(values[0][1], vmax):.1f}"]
        for (_, prev), (t, v) in zip(values, values[1:], strict=False):
            # step plot: a figure holds until libFuzzer reports the next one
            d.append(f"L{x(t):.1f},{y(prev, vmax):.1f}L{x(t):.1f},{y(v, vmax):.1f}")
        return "".join(d)

    ft_series = [(s.t, float(s.ft)) for s in pts]
    corp_series = [(s.t, float(s.corpus_files)) for s in pts]
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">'
        f"{escape(title)}</text>",
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>',
    ]
    for v in ft_ticks:
        yy = y(v, ft_top)
        out.append(f'<line x1="{left}" y1="{yy:.1f}" x2="{left + pw}" y2="{yy:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end" fill="#1f77b4">{v:.0f}</text>')
    for v in corp_ticks:
        yy = y(v, corp_top)
        out.append(f'<text x="{left + pw + 6}" y="{yy + 4:.1f}" fill="#d62728">{v:.0f}</text>')
    for v in t_ticks:
        xx = x(v)
        out.append(f'<line x1="{xx:.1f}" y1="{top + ph}" x2="{xx:.1f}" y2="{top + ph + 4}" stroke="#999"/>')
        out.append(f'<text x="{xx:.1f}" y="{top + ph + 16}" text-anchor="middle">{v:.0f}</text>')
    out += [
        f'<text x="{left + pw / 2}" y="{height - 6}" text-anchor="middle">seconds</text>',
        f'<text x="14" y="{top + ph / 2}" transform="rotate(-90 14 {top + ph / 2})" '
        f'text-anchor="middle" fill="#1f77b4">coverage features (ft)</text>',
        f'<text x="{width - 10}" y="{top + ph / 2}" transform="rotate(90 {width - 10} '
        f'{top + ph / 2})" text-anchor="middle" fill="#d62728">corpus files</text>',
    ]
    if pts:
        out.append(
            f'<path d="{path(ft_series, ft_top)}" fill="none" stroke="#1f77b4" stroke-width="2"/>'
        )
        out.append(
            f'<path d="{path(corp_series, corp_top)}" fill="none" stroke="#d62728" '
            f'stroke-width="2" stroke-dasharray="5,3"/>'
        )
    else:
        out.append(
            f'<text x="{left + pw / 2}" y="{top + ph / 2}" text-anchor="middle" fill="#999">'
            "no status lines</text>"
        )
    for when in crashes:
        xx = x(min(max(0.0, when), t_top))
        out.append(
            f'<line class="crash" x1="{xx:.1f}" y1="{top}" x2="{xx:.1f}" y2="{top + ph}" '
            f'stroke="#d00" stroke-width="1.5"><title>crash at {when:.0f}s</title></line>'
        )
        out.append(f'<text x="{xx + 3:.1f}" y="{top + 12}" fill="#d00">crash</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rel(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return path.name


def tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(text[-lines:])[-600:]
