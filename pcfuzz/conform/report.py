"""What a conformance run found: one :class:`Finding` per root cause, one
:class:`FamilyResult` per scenario family, the :class:`Report` of the run (text and
JSON)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FamilyResult", "Finding", "Gated", "Replayed", "Report"]


def _json_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@dataclass
class Finding:
    """One violated invariant, one root cause, with its minimal stream."""

    contract: str
    family: str
    mutation: str
    label: str
    invariant: str
    expected: str
    got: str
    events: list[Any]
    sse: str | None
    origin: str = "generated"  # or "regression"
    saved: str | None = None
    #: the rule in words (from the strategies' rule table, else from the explanation)
    rule: str = ""
    #: the event that makes the stream unsafe, as this project's parser sees it
    unsafe_at: str = ""
    #: expected against got, call by call and field by field
    diff: list[str] = field(default_factory=list)
    #: the kind of change that fixes it, in one line
    fix: str = ""
    #: what groups findings of one root cause
    key: str = ""
    #: what the adapter printed while it ran the minimal stream
    output: str = ""
    #: why the stream may not be minimal (shrinking stopped when the time was up)
    note: str = ""
    #: other families and mutations whose streams failed for the same root cause
    also: dict[str, int] = field(default_factory=dict)
    #: the realism level of the generator that produced the stream (sdk, wire, hostile)
    realism: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "contract": self.contract, "family": self.family, "mutation": self.mutation,
            "label": self.label, "rule": self.rule, "invariant": self.invariant,
            "unsafe_at": self.unsafe_at, "expected": self.expected, "got": self.got,
            "diff": self.diff, "fix": self.fix, "key": self.key, "output": self.output,
            "note": self.note, "also": self.also, "events": self.events, "sse": self.sse,
            "origin": self.origin, "saved": self.saved, "realism": self.realism or None,
        }

    def headline(self) -> str:
        """One line that starts with the rule (pytest's short summary shows it)."""
        rule = self.rule or self.invariant
        return f"{rule} [{self.family}/{self.mutation}]"

    def text(self, number: int) -> str:
        origin = ", replayed regression" if self.origin == "regression" else ""
        # a valid stream's failure may come from a shape only some levels generate
        level = (f", realism {self.realism}" if self.realism
                 and self.mutation in ("none", "calls_not_requested") else "")
        lines = [f"VIOLATION {number}: {self.rule or self.invariant}",
                 f"  found by:  [{self.family}] {self.mutation} "
                 f"({self.label}{origin}{level})"]
        if self.unsafe_at:
            lines.append(f"  unsafe at: {self.unsafe_at}")
        lines += [f"  expected:  {self.expected}", f"  got:       {self.got}"]
        for n, line in enumerate(self.diff):
            lines.append(("  diff:      " if n == 0 else "             ") + line)
        if self.fix:
            lines.append(f"  fix:       {self.fix}")
        if not self.rule:
            lines.append(f"  invariant: {self.invariant}")
        if self.output.strip():
            lines.append("  the adapter printed:")
            lines += ["    | " + line for line in self.output.rstrip("\n").split("\n")[:40]]
        what = "smallest stream found" if self.note else "minimal stream"
        lines.append(f"  {what} ({len(self.events)} events, JSON lines)"
                     + (f" [{self.note}]" if self.note else "") + ":")
        lines += ["    " + _json_line(e) for e in self.events]
        if self.sse is not None:
            lines.append("  as SSE bytes:")
            lines += (["    " + line for line in self.sse.rstrip("\n").split("\n")]
                      if self.sse else ["    (empty)"])
        if self.also:
            lines.append("  also found by: " + ", ".join(
                f"{where} ({count} example{'s' if count != 1 else ''})"
                for where, count in sorted(self.also.items())))
        if self.saved:
            lines.append(f"  saved: {self.saved}")
        return "\n".join(lines)


@dataclass
class FamilyResult:
    family: str
    labels: list[str]
    examples: int
    seconds: float
    violation: bool
    note: str = ""
    #: distinct root causes first found in this family
    findings: int = 0


@dataclass
class Gated:
    """Examples the integration's declared gate (``--gate``) stops: released calls
    the integration would not run. Reported apart; they do not fail the run."""

    family: str
    mutation: str
    rule: str
    examples: int
    #: the smallest stream of this root cause seen
    events: list[Any]

    def to_json(self) -> dict[str, Any]:
        return {"family": self.family, "mutation": self.mutation, "rule": self.rule,
                "examples": self.examples, "events": self.events}

    def line(self) -> str:
        return (f"  [{self.family}] {self.mutation}: {self.rule} ({self.examples} "
                f"example{'s' if self.examples != 1 else ''}, smallest {len(self.events)} "
                "events)")


@dataclass
class Replayed:
    """One saved regression replayed at the start of a run."""

    path: str
    passing: bool
    rule: str = ""


@dataclass
class Report:
    contract: str
    adapter: str
    input: str
    strict: bool
    families: list[FamilyResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    regressions_replayed: int = 0
    regressions_fixed: int = 0
    replayed: list[Replayed] = field(default_factory=list)
    seconds: float = 0.0
    #: how the run was bounded ("60s budget", "100 examples per family")
    plan: str = ""
    #: why the run stopped before its plan was done (empty: it did not)
    interrupted: str = ""
    #: what the run could not do (a family with no example, an adapter that hung ...)
    incomplete: list[str] = field(default_factory=list)
    #: how the adapter was called ("in a worker process", "in-process: ...")
    isolation: str = ""
    #: the hypothesis example database the search used (no password), or ""
    database: str = ""
    #: how the adapter was called: ``plain`` or ``release``
    form: str = "plain"
    #: the integration's declared gate (``--gate``), and what it stopped
    gate: str = "none"
    gated: list[Gated] = field(default_factory=list)
    #: the names generated calls carried ("identifiers", "hostile", or the list)
    tool_names: str = ""
    #: ``--mutation``/``--exclude`` as given ("" when not filtered)
    selection: str = ""
    #: how realistic the generated streams were (``--realism``)
    realism: str = ""

    @property
    def failed(self) -> bool:
        return bool(self.findings)

    @property
    def complete(self) -> bool:
        return not self.interrupted and not self.incomplete

    def to_json(self) -> dict[str, Any]:
        return {
            "contract": self.contract, "adapter": self.adapter, "input": self.input,
            "strict": self.strict, "form": self.form,
            "seconds": round(self.seconds, 2), "plan": self.plan,
            "isolation": self.isolation, "database": self.database or None,
            "complete": self.complete,
            "interrupted": self.interrupted or None, "incomplete": self.incomplete,
            "regressions": {"replayed": self.regressions_replayed,
                            "passing": self.regressions_fixed,
                            "still_failing": [r.path for r in self.replayed if not r.passing]},
            "families": [
                {"family": f.family, "labels": f.labels, "examples": f.examples,
                 "seconds": round(f.seconds, 2), "findings": f.findings,
                 "result": "violation" if f.violation else "ok", "note": f.note}
                for f in self.families
            ],
            "violations": [f.to_json() for f in self.findings],
            "tool_names": self.tool_names or None, "selection": self.selection or None,
            "realism": self.realism or None,
            "gate": self.gate,
            "stopped_by_gate": [g.to_json() for g in self.gated],
        }

    def header(self) -> list[str]:
        mode = "strict (safety + strictness)" if self.strict else "default (safety + correct output)"
        out = [f"pcfuzz conform: {self.contract} against {self.adapter} "
               f"(input {self.input}, "
               + ("release form, " if self.form == "release" else "")
               + f"checks {mode}"
               + (f", {self.plan}" if self.plan else "") + ")"]
        if self.isolation:
            out.append(f"adapter called {self.isolation}")
        if self.database:
            out.append(f"example database: {self.database}")
        if self.realism:
            out.append(f"realism: {self.realism}")
        if self.tool_names:
            out.append(f"tool names: {self.tool_names}")
        if self.selection:
            out.append(f"mutations: {self.selection}")
        if self.gate != "none":
            out.append(f"your gate: {self.gate} (what it stops is reported apart and does "
                       "not fail the run)")
        return out

    def replay_lines(self) -> list[str]:
        still = [r for r in self.replayed if not r.passing]
        out = [f"regressions replayed: {self.regressions_replayed} "
               f"({self.regressions_fixed} passing"
               + (f", {len(still)} still failing" if still else "") + ")"]
        out += [f"  still failing: {r.path}" + (f": {r.rule}" if r.rule else "") for r in still]
        return out

    def summary(self) -> list[str]:
        """The family table and the verdict, without the findings' texts."""
        out = self.header() + self.replay_lines()
        if self.families:
            width = max(len(f.family) for f in self.families)
            out.append(f"  {'family':<{width}}  {'labels':<24}  {'examples':>8}  result")
            for f in self.families:
                result = (f"VIOLATION ({f.findings} finding{'s' if f.findings != 1 else ''})"
                          if f.findings else "VIOLATION" if f.violation else "ok")
                if f.note:
                    result += f" ({f.note})"
                out.append(f"  {f.family:<{width}}  {'+'.join(f.labels):<24}  "
                           f"{f.examples:>8}  {result}")
        return out

    def verdict(self) -> str:
        found = (f"{len(self.findings)} violation(s)" if self.findings else "no violations")
        if self.gated:
            found += f" ({len(self.gated)} more stopped by your gate)"
        line = f"{found} in {self.seconds:.1f}s"
        if self.interrupted:
            line += f"; INCOMPLETE: {self.interrupted}"
        elif self.incomplete:
            line += "; INCOMPLETE: " + "; ".join(self.incomplete)
        return line

    def text(self, *, findings: bool = True) -> str:
        out = self.summary()
        if findings:
            for n, finding in enumerate(self.findings, start=1):
                out += ["", finding.text(n)]
        elif self.findings:
            out.append("")
            out += [f"VIOLATION {n}: {f.headline()}" for n, f in enumerate(self.findings, 1)]
        if self.gated:
            out += ["", f"stopped by your gate ({self.gate}): calls released where the "
                    "stream's own terminal does not ask for them; your integration does "
                    "not run them, so they do not fail the run:"]
            out += [g.line() for g in self.gated]
        out += ["", self.verdict()]
        return "\n".join(out)
