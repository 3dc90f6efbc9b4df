"""The nightly job's measures of its own power: rule coverage (transitions taken),
mutants, and the history trend."""

from __future__ import annotations

import ast
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _gemini_interactions import fixture_events
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.nightly.mutants import EQUIVALENT, _apply, find_mutants, is_equivalent, run_mutants
from pcfuzz.nightly.report import append_history, read_history, render_trend_svg, trend_point
from pcfuzz.nightly.transitions import CONTRACTS, trace_events, transition_table

MUTANTS = find_mutants()


def test_every_operator_has_sites_and_every_mutant_is_valid_python_that_differs() -> None:
    assert {m.operator for m in MUTANTS} == {"guard-off", "compare-flip", "and-or",
                                             "not-dropped"}
    root = Path(__file__).resolve().parents[1]
    for m in MUTANTS[::25]:
        source = (root / m.file).read_text(encoding="utf-8")
        mutated = _apply(source, m)
        ast.parse(mutated)
        assert mutated != source, m
        # only the mutated lines change
        changed = [i for i, (a, b) in enumerate(zip(source.splitlines(), mutated.splitlines(),
                                                    strict=False)) if a != b]
        assert changed and min(changed) + 1 == m.line, m


@given(index=st.integers(0, len(MUTANTS) - 1))
def test_a_mutant_changes_the_module_ast(index: int) -> None:
    m = MUTANTS[index]
    event(m.operator)
    root = Path(__file__).resolve().parents[1]
    source = (root / m.file).read_text(encoding="utf-8")
    assert ast.dump(ast.parse(_apply(source, m))) != ast.dump(ast.parse(source))


def test_each_mutant_argued_equivalent_is_exactly_one_mutant_of_today_s_code() -> None:
    # The list cannot rot: an entry whose code changed or moved to another file matches
    # nothing (or several) and fails here; the docs name every one.
    docs = (Path(__file__).resolve().parent.parent / "docs" / "fuzzing.md").read_text(
        encoding="utf-8")
    for file, operator, text in EQUIVALENT:
        hits = [m for m in MUTANTS
                if m.file == file and m.operator == operator and is_equivalent(m)
                and m.change.split(" -> ", 1)[0] == text]
        assert len(hits) == 1, (file, operator, text, hits)
        assert f"`{file}`" in docs, file
    assert sum(map(is_equivalent, MUTANTS)) == len(EQUIVALENT)


def test_mutants_argued_equivalent_are_left_out_of_the_sample_and_listed() -> None:
    # An empty selection matching nothing runs no mutant; the report still lists the
    # equivalent ones apart, and a selected equivalent mutant is run when asked for.
    result = run_mutants(budget_s=0, sample=len(MUTANTS), select="no/such/file.py:1")
    assert result["total"] == 0
    assert len(result["equivalent"]) == len(EQUIVALENT), result["equivalent"]
    assert {e["file"] for e in result["equivalent"]} == {f for f, _, _ in EQUIVALENT}


def test_a_guard_turned_off_is_killed_by_its_tests() -> None:
    # copy_json's non-string key guard: turned off, or its test flipped, test_values fails.
    # The guard is found by its text, so edits elsewhere in the file do not move it.
    source = (Path(__file__).resolve().parent.parent / "contracts" / "_values.py").read_text(
        encoding="utf-8").splitlines()
    line = next(n for n, text in enumerate(source, 1) if "if type(k) is not str:" in text)
    result = run_mutants(budget_s=600, sample=5, select=f"contracts/_values.py:{line}",
                         timeout_s=300)
    assert result["total"] == 2 and result["sites"] == len(MUTANTS), result
    assert result["killed"] == result["total"] and result["survivors"] == [], result


def test_the_fixture_stream_takes_its_rows_and_a_rejected_event_takes_none() -> None:
    table = set(transition_table("gemini-interactions"))
    taken = trace_events("gemini-interactions", fixture_events())
    assert ("idle", "interaction.created") in taken and taken <= table
    assert ("open", "interaction.completed") in taken
    # an event the state does not allow is not a taken row
    assert trace_events("gemini-interactions", [{"event_type": "step.start"}]) == set()
    assert all(transition_table(c) for c in CONTRACTS)


def test_history_appends_one_line_per_night_and_the_trend_plots_it(tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    nights = []
    for n in range(3):
        summary = {"targets": [{"corpus_after": {"files": 10 + n}, "exec_per_s": 100.0 * n}],
                   "coverage": {"line_percent": 50.0 + n, "branch_percent": 40.0},
                   "mutants": {"killed": n, "total": 3}}
        append_history(history, summary)
        nights.append(summary)
    assert [json.loads(line) for line in history.read_text().splitlines()] == nights
    points = [trend_point(s) for s in read_history(history)]
    assert points[-1]["kill %"] == pytest.approx(200 / 3) and points[0]["corpus files"] == 10
    svg = ET.fromstring(render_trend_svg(points))
    assert len(svg.findall("{http://www.w3.org/2000/svg}path")) == 5  # one line per figure
