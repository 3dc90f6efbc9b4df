"""``pcfuzz bench --cases resources``: the resource rows of the "hostile streams" issue.

One quick run of the case through the command (one round): every row is a bench
record of its group, with a goal and the verdict of its figure; the rows cover the
decoder's memory, blank lines and every limit a big input can hit; the memory rows
(tracemalloc peaks, deterministic) meet their goal. Timing rows are ratios to a
baseline of the same run and are never asserted (a shared machine).
"""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest

from pcfuzz.bench import resources, runner
from pcfuzz.cli import main


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], str]:
    out = tmp_path_factory.mktemp("bench") / "resources.json"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main(["bench", "--quick", "--cases", "resources", "--rounds", "1",
                       "--json", str(out)])
    assert status == 0
    return json.loads(out.read_text(encoding="utf-8")), printed.getvalue()


def test_every_row_is_a_bench_record_with_a_goal_and_its_verdict(
    run: tuple[list[dict[str, Any]], str]
) -> None:
    records, printed = run
    assert records
    assert len({r["case"] for r in records}) == len(records), "case names are unique"
    for record in records:
        assert record["group"] == "resources"
        assert record["better"] == "lower"
        assert record["rounds"] == 1
        for name in ("ratio", "ratio_min", "ratio_max", "rate", "goal"):
            assert type(record[name]) is float, (name, record)
        assert 0 <= record["ratio_min"] <= record["ratio"] <= record["ratio_max"]
        assert record["met"] is (record["ratio"] <= record["goal"])
        assert record["case"] in printed
    goals = {r["goal"] for r in records}
    assert goals == {resources.MEMORY_GOAL, resources.THROUGHPUT_GOAL, *resources.GOALS.values()}


def test_the_rows_cover_memory_blank_lines_and_every_big_input_limit(
    run: tuple[list[dict[str, Any]], str]
) -> None:
    names = " | ".join(r["case"] for r in run[0])
    for shape in ("typical capture", "all CRLF blank lines", "one huge data line",
                  "many tiny events"):
        assert f"SSE decoder memory: {shape}" in names
    assert "LF blank lines, per byte vs a typical capture" in names
    for limit in ("max_container_items", "max_values", "max_depth", "max_string_chars",
                  "max_number_chars", "max_bytes", "SSE max_line_bytes", "SSE max_event_bytes",
                  "StreamLimits.max_events", "StreamLimits.max_fragment_bytes",
                  "StreamLimits.max_total_fragment_bytes", "StreamLimits.max_items"):
        assert limit in names, limit


def test_decoder_memory_rows_meet_their_goal(run: tuple[list[dict[str, Any]], str]) -> None:
    memory = [r for r in run[0] if r["case"].startswith("SSE decoder memory")]
    assert len(memory) >= 4
    for record in memory:
        assert record["rate_unit"] == "KiB peak"
        assert record["rate"] > 0
        assert record["met"], record


def test_resources_is_a_case_group_of_the_bench() -> None:
    assert "resources" in runner.CASE_GROUPS
    assert runner.CASES["resources"] is resources.resources_cases
