"""Every distinct bug in one run, each once (issue 22 items 2, 3): a run goes on
after the first failure of a family until its budget ends, findings are grouped by
root cause (not by mutation), replayed regressions are named by file, and one whole
run on a naive Chat accumulator lists all of its distinct bugs, each once. That run is
bounded by examples and seeded, not by a budget: a 60 s budget found only three of
the five bugs on a machine loaded four times over, so its verdict was the machine's
speed. That the budget bounds a run, shrinking included, is tested with small budgets
in tests/test_conform_budget.py. (A careful gateway passing the kit, and each unsafe
call it would run failing it: tests/test_conformance_naive.py.)
"""

from __future__ import annotations

import json
from pathlib import Path

import _conform_cli
import _gateway_chat
import _one_bug_adapters
import pytest

from pcfuzz.conform.kit import conform

#: The bugs of the naive accumulator (tests/_gateway_chat.py), one finding each, and the
#: mutations of strategies/openai_chat.py that reach each (the finding names one of
#: them, the others under "also found by").
NAIVE_MUTATIONS = {
    "no_done_gate": {"missing_done", "truncated"},
    "ignores_error_frames": {"error_frame", "degenerate_error_frame"},
    "stops_at_done": {"frame_after_done"},
    "last_finish_reason_wins": {"conflicting_finish_reason"},
    "id_may_change": {"conflicting_tool_id", "duplicate_tool_id"},
}


@pytest.mark.slow
def test_one_run_on_a_naive_accumulator_lists_every_distinct_bug(tmp_path: Path) -> None:
    assert set(NAIVE_MUTATIONS) == set(_gateway_chat.NAIVE)
    run, _ = _conform_cli.run(tmp_path, "--contract", "openai-chat", "--adapter",
                              "_gateway_chat:naive", "--max-examples", "25", "--seed", "0",
                              "--json")
    assert run.returncode == 1, run.stderr
    report = json.loads(run.stdout)
    found = [{v["mutation"], *(where.split()[1] for where in v.get("also") or {})}
             for v in report["violations"]]
    for bug, mutations in NAIVE_MUTATIONS.items():
        assert sum(bool(m & mutations) for m in found) == 1, (bug, found)
    # Every bug is listed and no key twice. Known gap: one cause can still be listed
    # under a second key when the adapter fails it at a different event (seen in
    # longer runs: 8 keys for the 5 bugs); each bug counted once above is the part
    # that holds.
    keys = [v["key"] for v in report["violations"]]
    assert len(keys) == len(set(keys)) >= len(NAIVE_MUTATIONS), keys
    for violation in report["violations"]:
        assert violation["unsafe_at"] and violation["fix"], violation


def test_one_cause_found_by_two_families_is_one_finding() -> None:
    # the issue: calls_not_requested and stop_reason_swap reported apart for one
    # end_turn bug
    report = conform(_one_bug_adapters.anthropic_ignores_stop_reason, "anthropic-messages",
                     families=["valid", "terminal"], max_examples=80, seed=0,
                     regressions=None)
    assert len(report.findings) == 1, report.text()
    finding = report.findings[0]
    assert finding.key == "released:withheld:terminal"
    assert "tool_use" in finding.rule, finding.rule
    other = "terminal" if finding.family == "valid" else "valid"
    assert any(where.startswith(f"[{other}]") for where in finding.also), finding.also


def test_replayed_regressions_are_named_and_name_no_code(tmp_path: Path) -> None:
    saved = tmp_path / "regressions"
    first, _ = _conform_cli.run(tmp_path, "--contract", "openai-chat", "--adapter",
                                "_gateway_chat:naive", "--family", "truncation",
                                "--max-examples", "30", "--seed", "0",
                                "--regressions", str(saved))
    assert first.returncode == 1, first.stdout + first.stderr
    files = sorted(saved.glob("openai-chat/*"))
    assert files and all("_gateway_chat" not in f.read_text(encoding="utf-8") for f in files)
    again, _ = _conform_cli.run(tmp_path, "--contract", "openai-chat", "--adapter",
                                "_gateway_chat:naive", "--family", "valid",
                                "--max-examples", "3", "--regressions", str(saved))
    document = next(f for f in files if f.suffix == ".json")
    rule = json.loads(document.read_text(encoding="utf-8"))["rule"]
    assert rule and "[DONE]" in rule, rule
    assert f"  still failing: {document}: {rule}" in again.stdout, again.stdout
    assert "1 still failing" in again.stderr and str(document) in again.stderr


