"""``pcfuzz bench``: the record structure and verdicts, on a tiny subset of cases.

Never a timing threshold: speed is what the command prints; these tests only prove
that it measures every selected case, states ratio, spread, rate, goal and verdict,
and writes one JSON record per case.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pcfuzz.fuzz import _bench, _bench_data
from pcfuzz.fuzz._targets import Layout, discover
from pcfuzz.fuzz.cli import main

FIELDS = {
    "case": str, "group": str, "candidate": str, "baseline": str, "rate_unit": str,
    "better": str, "rounds": int, "note": str,
}


def test_quick_bench_writes_one_record_per_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.json"
    status = main(["bench", "--quick", "--cases", "events,streams,scaling", "--rounds", "1",
                   "--json", str(out)])
    assert status == 0
    records = json.loads(out.read_text(encoding="utf-8"))
    expected = len(_bench.EVENT_GOALS) + 2 * len(_bench_data.STREAMS)
    assert len(records) == expected
    assert len({r["case"] for r in records}) == expected, "case names are unique"
    assert {r["group"] for r in records} == {"events", "streams", "scaling"}
    printed = capsys.readouterr().out
    for record in records:
        for name, kind in FIELDS.items():
            assert type(record[name]) is kind, (name, record)
        assert record["better"] in ("lower", "higher")
        assert record["rounds"] == 1
        for name in ("ratio", "ratio_min", "ratio_max", "rate", "goal"):
            assert isinstance(record[name], float), (name, record)
        assert record["ratio_min"] <= record["ratio"] <= record["ratio_max"]
        assert record["rate"] > 0
        # The verdict is the goal applied to the median ratio.
        assert record["met"] is (record["ratio"] <= record["goal"])
        assert record["case"] in printed
    assert "goal" in printed and "verdict" in printed


def test_markdown_table_has_a_row_per_record() -> None:
    records = [
        _bench.Record(case="a", group="events", candidate="x", baseline="y", ratio=1.2,
                      ratio_min=1.0, ratio_max=1.4, rate=10.0, rate_unit="MB/s", goal=1.3,
                      better="lower", met=True, rounds=3),
        _bench.Record(case="b", group="fuzz", candidate="x", baseline="y", ratio=0.2,
                      ratio_min=0.1, ratio_max=0.3, rate=5.0, rate_unit="exec/s", goal=0.5,
                      better="higher", met=False, rounds=1),
    ]
    lines = _bench.table(records, markdown=True).splitlines()
    assert lines[0].startswith("| case |") and len(lines) == 2 + len(records)
    assert "| met |" in lines[2] and "| MISSED |" in lines[3]
    assert ">= 0.5" in lines[3] and "<= 1.3" in lines[2]


def test_unknown_case_group_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--cases", "events,nonsense"]) == 2
    assert "nonsense" in capsys.readouterr().err


def test_baseline_fuzz_target_is_not_a_discovered_target() -> None:
    layout = Layout.from_options()
    assert (layout.fuzz_dir / _bench.BASELINE_TARGET).is_file()
    names = [t.path.name for t in discover(layout)]
    assert names and _bench.BASELINE_TARGET not in names


@pytest.mark.parametrize("total", [2_000, 8_000])
def test_bench_streams_parse_to_two_calls(total: int) -> None:
    import importlib

    for contract, build in _bench_data.STREAMS.items():
        frames, texts = build(total)
        assert len(texts) == total, contract
        turn = importlib.import_module(f"pcfuzz.contracts.{contract}").parse_events(frames)
        assert len(turn.calls) == 2, contract
