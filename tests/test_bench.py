"""``pcfuzz bench``: the record structure and verdicts, on a tiny subset of cases.

Never a timing threshold: speed is what the command prints; these tests only prove
that it measures every selected case, states ratio, spread, rate, goal and verdict,
and writes one JSON record per case.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pcfuzz.bench import data as bench_data
from pcfuzz.bench import runner
from pcfuzz.cli import main
from pcfuzz.engine.targets import Layout, discover

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
    expected = len(runner.EVENT_GOALS) + 2 * len(bench_data.STREAMS)
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
        runner.Record(case="a", group="events", candidate="x", baseline="y", ratio=1.2,
                      ratio_min=1.0, ratio_max=1.4, rate=10.0, rate_unit="MB/s", goal=1.3,
                      better="lower", met=True, rounds=3),
        runner.Record(case="b", group="fuzz", candidate="x", baseline="y", ratio=0.2,
                      ratio_min=0.1, ratio_max=0.3, rate=5.0, rate_unit="exec/s", goal=0.5,
                      better="higher", met=False, rounds=1),
    ]
    lines = runner.table(records, markdown=True).splitlines()
    assert lines[0].startswith("| case |") and len(lines) == 2 + len(records)
    assert "| met |" in lines[2] and "| MISSED |" in lines[3]
    assert ">= 0.5" in lines[3] and "<= 1.3" in lines[2]


def test_unknown_case_group_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--cases", "events,nonsense"]) == 2
    assert "nonsense" in capsys.readouterr().err


def test_baseline_fuzz_target_is_not_a_discovered_target() -> None:
    # It lives with the benchmark (pcfuzz/bench/), outside the fuzz project.
    layout = Layout.from_options()
    assert Path(runner.__file__).with_name(runner.BASELINE_TARGET).is_file()
    assert not (layout.fuzz_dir / runner.BASELINE_TARGET).exists()
    names = [t.path.name for t in discover(layout)]
    assert names and runner.BASELINE_TARGET not in names


@pytest.mark.parametrize("total", [2_000, 8_000])
def test_bench_streams_parse_to_two_calls(total: int) -> None:
    import importlib

    for contract, build in bench_data.STREAMS.items():
        frames, texts = build(total)
        assert len(texts) == total, contract
        turn = importlib.import_module(f"pcfuzz.contracts.{contract}").parse_events(frames)
        assert len(turn.calls) == 2, contract


def test_wire_case_has_a_floor_row_and_an_sdk_row_per_contract(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pcfuzz.bench import wire

    # One SDK reported absent, whatever is installed: its row says so instead of a ratio.
    missing = "no_such_sdk_package_for_the_bench_test"
    monkeypatch.setitem(wire.SDK_PATHS, "openai_chat",
                        (missing, "-", wire.SDK_PATHS["openai_chat"][2]))
    monkeypatch.setattr(runner, "SDK_EVENTS", 20)
    records = runner.run(runner.Options(quick=True, rounds=1, groups=("wire",)))
    assert len(records) == 2 * len(bench_data.STREAMS)
    floors = [r for r in records if "floor pipeline" in r.case]
    sdks = [r for r in records if "SDK" in r.case]
    assert len(floors) == len(sdks) == len(bench_data.STREAMS)
    for record in floors:
        assert record.ratio is not None and record.goal == runner.WIRE_GOAL
        assert record.met is (record.ratio <= record.goal)
    chat = next(r for r in sdks if "openai_chat" in r.case)
    assert chat.ratio is None and chat.met is None and "not installed" in chat.note
    for record in sdks:
        assert record.goal == runner.SDK_GOAL
        assert (record.ratio is None) == ("skipped" in record.note), record


def test_floor_pipelines_find_every_call_of_the_bench_streams() -> None:
    from pcfuzz.bench import wire
    from pcfuzz.contracts.wire import parse_sse

    for contract, floor in wire.FLOORS.items():
        raw = bench_data.sse_bytes(contract, 60)
        turn = parse_sse(contract.replace("_", "-"), raw)
        arguments = floor(raw)
        assert turn.calls
        assert sorted(json.dumps(c.arguments, sort_keys=True) for c in turn.calls) == sorted(
            json.dumps(a, sort_keys=True) for a in arguments.values()), contract


def test_startup_case_gives_seconds_beside_python_and_a_goal_per_row(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from pcfuzz.bench import startup
    from pcfuzz.engine.targets import Target

    layout = Layout.from_options()
    strict = next(t for t in discover(layout) if t.name == "strict-json")
    # A target that dies before its first input: its rows say so instead of a figure.
    broken = tmp_path / "fuzz_broken.py"
    broken.write_text("raise SystemExit(3)\n", encoding="utf-8")
    targets = [strict, Target(fuzzer="fuzz_broken", path=broken, layout=layout)]
    monkeypatch.setattr(startup, "discover", lambda _layout: targets)
    records = runner.run(runner.Options(rounds=1, groups=("startup",)))

    assert {r.group for r in records} == {"startup"}
    assert len({r.case for r in records}) == len(records) == 1 + 3 + 4 * len(targets)
    baseline, *rows = records
    assert "python -c pass" in baseline.case and baseline.goal is None
    assert baseline.ratio is not None and baseline.ratio > 0 and baseline.met is None
    # Every measurement after the first row ran after its own python -c pass.
    # (A CPU-time row comes from the same starts as the wall-time row before it.)
    assert baseline.rounds == sum(r.rounds for r in rows
                                  if r.ratio is not None and not r.case.endswith("CPU time"))
    goals = {"import pcfuzz.contracts": startup.IMPORT_GOAL,
             "pcfuzz --version": startup.VERSION_GOAL, "pcfuzz check": startup.CHECK_GOAL,
             "strict-json": startup.STARTUP_GOAL, "broken": startup.STARTUP_GOAL}
    for record in rows:
        assert [g for key, g in goals.items() if key in record.case] == [record.goal], record
        cpu = record.case.endswith(", CPU time")
        assert record.better == "lower" and record.rate_unit == (
            "x wall / CPU" if cpu else "x python -c pass")
        if "broken" in record.case:
            assert record.ratio is None and record.met is None and "failed" in record.note
            continue
        assert record.ratio is not None and record.rate is not None, record
        assert record.ratio_min is not None and record.ratio_max is not None
        assert 0 < record.ratio_min <= record.ratio <= record.ratio_max
        assert record.rounds == 1
        assert record.met is (record.ratio <= record.goal)
        if cpu:  # the same start as the row before it: its rate is that wall over this CPU
            # (not CPU <= wall: the wall time stops at the first execution, the CPU
            # time counts the process to its exit; on an idle machine it can be more)
            wall = rows[rows.index(record) - 1]
            assert wall.case + ", CPU time" == record.case and wall.ratio is not None
            assert record.rate is not None and record.rounds == wall.rounds
            assert abs(record.rate - wall.ratio / record.ratio) <= 0.1, (wall, record)
    assert [r.case.split(": start to first execution, ", 1)[1] for r in rows
            if "strict-json" in r.case] == ["cold", "cold, CPU time", "warm", "warm, CPU time"]
    printed = runner.table(records)
    assert f"{baseline.ratio:.2f} s" in printed and "<= 1.0" in printed
    # --quick: warm starts only.
    quick = runner.run(runner.Options(quick=True, rounds=1, groups=("startup",)))
    assert [r.case for r in quick] == [r.case for r in records if ", cold" not in r.case]


def test_byte_level_fuzz_targets_carry_the_throughput_goal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # exec/s stand-ins (the runs themselves take seconds each): the baseline 100,
    # strict-json 60, source-url 40, every other target 10.
    rates = {runner.BASELINE_TARGET: 100.0, "fuzz_strict_json.py": 60.0,
             "fuzz_source_url.py": 40.0}
    # the ceiling run of a byte-level target (its code not instrumented) is the
    # driver with the target's path first: 30 more than the target itself
    def rate(path: Path, flags: list[str], seconds: float, layout: object) -> float:
        if path.name == runner.CEILING_DRIVER:
            return rates[Path(flags[0]).name] + 30.0
        return rates.get(path.name, 10.0)

    monkeypatch.setattr(runner, "_exec_per_s", rate)
    records = runner.run(runner.Options(quick=True, rounds=1, groups=("fuzz",)))
    by_case = {r.case: r for r in records}
    assert by_case["fuzz strict-json"].goal == by_case["fuzz source-url"].goal == 0.5
    assert by_case["fuzz strict-json"].ratio == 0.6 and by_case["fuzz strict-json"].met
    assert by_case["fuzz source-url"].ratio == 0.4 and by_case["fuzz source-url"].met is False
    ceilings = {r.case: r for r in records if "(ceiling)" in r.case}
    assert sorted(ceilings) == [
        "fuzz source-url, code under test not instrumented (ceiling)",
        "fuzz strict-json, code under test not instrumented (ceiling)"]
    assert ceilings["fuzz strict-json, code under test not instrumented (ceiling)"].ratio == 0.9
    assert all(r.goal is None and r.met is None for r in ceilings.values())
    others = [r for r in records if r.case.startswith("fuzz ") and r.goal is None
              and "baseline" not in r.case and r.case not in ceilings]
    assert len(others) == len(discover(Layout.from_options())) - 2
    assert all(r.ratio == 0.1 and r.met is None for r in others)


def test_fuzz_targets_option_runs_the_baseline_and_the_named_targets_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran: list[str] = []

    def fake_rate(path: Path, flags: object, seconds: float, layout: object) -> float:
        ran.append(path.name)
        return 100.0 if path.name == runner.BASELINE_TARGET else 50.0

    monkeypatch.setattr(runner, "_exec_per_s", fake_rate)
    status = main(["bench", "--quick", "--cases", "fuzz", "--fuzz-targets", "source-url"])
    assert status == 0
    assert ran == [runner.BASELINE_TARGET, "fuzz_source_url.py", runner.CEILING_DRIVER,
                   runner.BASELINE_TARGET]
    printed = capsys.readouterr().out
    assert "fuzz source-url" in printed and "fuzz strict-json" not in printed


def test_the_ceiling_driver_runs_a_target_with_the_code_under_test_not_instrumented(
    tmp_path: Path,
) -> None:
    """The ceiling row's driver: the target's contract modules are imported plainly (no
    function of theirs is instrumented code) and libFuzzer runs the target."""
    import subprocess
    import sys

    driver = Path(runner.__file__).with_name(runner.CEILING_DRIVER)
    target = Layout.from_options().fuzz_dir / "fuzz_strict_json.py"
    probe = (
        "import sys; sys.argv[1:] = [sys.argv[1]]\n"
        "from pcfuzz.bench.uninstrumented_target import _load\n"
        "test = _load(sys.argv.pop(1))\n"
        "from pcfuzz.contracts import errors, strict_json\n"
        "from pcfuzz.fuzz.harness.instrument import is_instrumented\n"
        "print([is_instrumented(f) for f in (strict_json.loads, strict_json._parse,"
        " errors.ContractError.__init__)])\n"
    )
    found = subprocess.run([sys.executable, "-c", probe, str(target)], capture_output=True,
                           text=True, timeout=120, check=False)
    assert found.stdout.strip() == "[False, False, False]", found.stdout + found.stderr
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    run = subprocess.run([sys.executable, str(driver), str(target), "-runs=300",
                          "-print_final_stats=1", str(corpus)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "stat::number_of_executed_units: 300" in run.stderr, run.stderr[-2000:]


def test_unknown_fuzz_target_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--cases", "fuzz", "--fuzz-targets", "strict-json,nonsense"]) == 2
    assert "nonsense" in capsys.readouterr().err
