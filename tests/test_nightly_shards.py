"""Sharded nights: a deterministic split by name, and one report merged from the
shards' reports (the merged night is complete only if every shard was)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pcfuzz.cli import main
from pcfuzz.errors import UsageError
from pcfuzz.nightly.merge import merge_reports
from pcfuzz.nightly.report import SCHEMA_PATH
from pcfuzz.nightly.shard import Shard, parse_shard, shard_of

pytest.importorskip("atheris")

from _toy import BUG, FIX, TOY, seed_costs, write_target  # noqa: E402


@given(names=st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=40, unique=True),
       count=st.integers(1, 8), added=st.text(min_size=1, max_size=30))
def test_every_name_has_one_shard_and_adding_one_moves_no_other(
        names: list[str], count: int, added: str) -> None:
    before = {n: shard_of(n, count) for n in names}
    assert all(1 <= s <= count for s in before.values())
    assert sum(Shard(i, count).owns(n) for n in names for i in range(1, count + 1)) == len(names)
    after = {n: shard_of(n, count) for n in [*names, added]}
    assert all(after[n] == before[n] for n in names)


@pytest.mark.parametrize("text", ["0/2", "3/2", "1/0", "a/b", "2", "", "1/2/3", "-1/2"])
def test_a_shard_that_is_not_I_of_N_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError):
        parse_shard(text)
    assert parse_shard("2/3") == Shard(2, 3)


def _night(toy: Path, tmp: Path, shard: str, report: Path) -> int:
    return main(["--fuzz-dir", str(toy), "nightly", "--budget", "30", "--jobs", "2",
                 "--report", str(report), "--shard", shard, "--properties", "off",
                 "--no-minimize", "--no-coverage"])


def test_two_shards_split_the_targets_and_merge_into_their_union(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toy = tmp_path / "fuzz"
    toy.mkdir()
    (tmp_path / "tests" / "regressions").mkdir(parents=True)
    names = ["alpha", "beta", "gamma", "delta"]
    for name in names:
        write_target(toy, name, TOY.replace(BUG, FIX),
                      {"a": b"{}"})
    seed_costs(toy, startup_s={f"fuzz_{n}": 0.5 for n in names})
    owners = {n: shard_of(f"fuzz_{n}", 2) for n in names}
    reports = [tmp_path / "r1", tmp_path / "r2"]
    for i, report in enumerate(reports, 1):
        _night(toy, tmp_path, f"{i}/2", report)
        summary = json.loads((report / "summary.json").read_text())
        assert summary["shard"] == {"index": i, "count": 2}
        assert sorted(t["name"] for t in summary["targets"]) == sorted(
            n for n, s in owners.items() if s == i)
    out = tmp_path / "merged"
    status = main(["report", "merge", *map(str, reports), "--out", str(out)])
    merged = json.loads((out / "summary.json").read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(merged, json.loads(SCHEMA_PATH.read_text()))
    assert sorted(t["name"] for t in merged["targets"]) == sorted(names)
    shards = [json.loads((r / "summary.json").read_text()) for r in reports]
    assert merged["complete"] == all(s["complete"] for s in shards)
    assert status == (0 if merged["complete"] else 3)
    assert "merged 2 report(s)" in capsys.readouterr().out
    # one shard missing: never complete
    again = merge_reports([reports[0]], tmp_path / "half")
    assert not again["complete"]
    assert "shard 2/2: its report is missing" in again["incomplete_reasons"]


def _summary(shard: tuple[int, int] | None, **kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "format": "pcfuzz-summary/1", "started": "2026-12-01T00:00:00Z",
        "finished": "2026-12-01T00:10:00Z", "duration_s": 600, "budget_s": 600, "jobs": 2,
        "tools": {}, "complete": True, "incomplete_reasons": [], "exit_status": 0,
        "new_crashes": 0, "targets": [],
        "shard": None if shard is None else {"index": shard[0], "count": shard[1]},
        "properties": {"mode": "full", "profile": "nightly", "database": "db", "budget_s": 1,
                       "duration_s": 1, "tests": 1, "passed": 1, "failed": 0, "errors": 0,
                       "skipped": 0, "failures": [], "skipped_tests": [], "table": [],
                       "selected": 1, "exit_code": 0},
        "phases": [], "findings": [],
    }
    base.update(kw)
    return base


def _write(directory: Path, summary: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return directory


CRASH = {"fingerprint": "KeyError-0123456789", "kind": "crash", "exception": "KeyError", "message": "m",
         "frames": [], "artifacts": 1, "input": "crashes/x", "new": True, "time_s": None,
         "bug": "bug-KeyError-abc", "where": "contracts/x.py:f"}


def _target(name: str, crashes: list[dict[str, Any]]) -> dict[str, Any]:
    corpus = {"files": 1, "bytes": 2}
    return {"name": name, "fuzzer": f"fuzz_{name}", "executions": 10, "crashes": crashes,
            "status": "crash" if crashes else "ok", "error": None, "budget_s": 10.0,
            "duration_s": 10.0, "exec_per_s": 1.0, "coverage": {"cov": 1, "ft": 1},
            "corpus_before": corpus, "corpus_after": corpus, "new_inputs": 0,
            "stopped_at_crash": False, "plot": f"plots/fuzz_{name}.svg", "log": "",
            "minimize": {"status": "skipped", "detail": "", "files_before": 1,
                         "files_after": 1, "bytes_before": 2, "bytes_after": 2,
                         "features_before": None, "features_after": None}}


def test_a_bug_two_shards_found_is_one_finding_and_an_incomplete_shard_spoils_the_night(
        tmp_path: Path) -> None:
    one = _write(tmp_path / "one", _summary((1, 2), targets=[_target("a", [CRASH])],
                                            new_crashes=1, exit_status=1))
    two = _write(tmp_path / "two", _summary(
        (2, 2), targets=[_target("b", [dict(CRASH, fingerprint="KeyError-abcdef0123")])],
        new_crashes=1, exit_status=1, complete=False,
        incomplete_reasons=["target c: 0 executions (x)"]))
    merged = merge_reports([one, two], tmp_path / "out")
    (finding,) = merged["findings"]
    assert finding["fingerprint"] == "bug-KeyError-abc" and len(finding["sources"]) == 2
    assert merged["new_crashes"] == 2 and merged["exit_status"] == 1
    assert merged["incomplete_reasons"] == ["shard 2/2: target c: 0 executions (x)"]
    assert (tmp_path / "out" / "summary.md").read_text().splitlines()[2].startswith(
        "**INCOMPLETE**")


@pytest.mark.parametrize(("summaries", "words"), [
    ([(1, 2), (1, 2)], "shard 1/2 twice"),
    ([(1, 2), (1, 3)], "different counts"),
    ([(1, 2), None], "not a shard's report"),
])
def test_reports_that_are_not_one_nights_shards_are_a_usage_error(
        tmp_path: Path, summaries: list[tuple[int, int] | None], words: str) -> None:
    dirs = [_write(tmp_path / f"r{n}", _summary(s)) for n, s in enumerate(summaries)]
    with pytest.raises(UsageError, match=words):
        merge_reports(dirs, tmp_path / "out")


def test_a_directory_without_a_report_is_a_usage_error_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "summary.json").write_text('{"format": "x"}', encoding="utf-8")
    (tmp_path / "hollow").mkdir()
    (tmp_path / "hollow" / "summary.json").write_text(json.dumps(
        _summary((1, 1), targets=[{"name": "x"}])), encoding="utf-8")
    for d in ("empty", "bad", "hollow"):
        assert main(["report", "merge", str(tmp_path / d), "--out", str(tmp_path / "o")]) == 2
        assert "pcfuzz report:" in capsys.readouterr().err
