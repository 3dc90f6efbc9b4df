"""`pcfuzz drift`: the installed SDK types against each revision (oracle tests)."""

from __future__ import annotations

import json

import pytest
from _oracles import marks

from pcfuzz.cli import main
from pcfuzz.conform import drift

pytestmark = [*marks("openai"), *marks("anthropic"), *marks("google-genai")]


def rows(contract: str, revision: str = "2026-07-21") -> set[tuple[str, str, str, bool]]:
    data = drift.report([contract], revision)
    return {(r["axis"], r["change"], r["value"], r["execution"])
            for r in data["contracts"][contract]["changes"]}


def test_responses_arguments_done_lost_name() -> None:
    assert ("fields of response.function_call_arguments.done", "not in SDK", "name",
            True) in rows("openai-responses")


def test_interactions_gained_statuses_and_steps() -> None:
    got = rows("gemini-interactions")
    for status in ("requires_continuation", "queued", "idle"):
        assert ("interaction statuses", "new", status, True) in got
    for step in ("processing_call", "processing_result", "retrieval_call", "retrieval_result",
                 "tool_search_call", "tool_search_result"):
        assert ("step types", "new", step, True) in got


def test_anthropic_stop_reasons_are_already_pinned() -> None:
    # model_context_window_exceeded is in the SDK's StopReason and in 2026-07-21:
    # no stop-reason row at all.
    from anthropic.types.stop_reason import StopReason

    assert "model_context_window_exceeded" in drift._literals(StopReason)
    assert not [r for r in rows("anthropic-messages") if r[0] == "stop reasons"]


def test_set_and_field_changes_classify_execution() -> None:
    import pydantic

    class Event(pydantic.BaseModel):
        a: str
        b: str | None = None
        c: int

    got = drift._field_changes("x", "fields", ["a", "b", "gone"], Event)
    assert [(r.change, r.value, r.execution) for r in got] == [
        ("now optional", "b", True), ("not in SDK", "gone", True), ("now required", "c", False)]
    got = drift._set_changes("x", "statuses", ["old", "same"], ["same", "fresh"])
    assert [(r.change, r.value, r.execution) for r in got] == [
        ("new", "fresh", True), ("removed", "old", False)]


def test_the_newest_revision_has_no_execution_drift_against_the_pinned_sdks() -> None:
    # 2026-12-01 was read from the installed SDK versions: every remaining row is
    # information (a removed value, a newly required field, a field kept required).
    data = drift.report(drift.CONTRACTS)
    assert {e["revision"] for e in data["contracts"].values()} == {"2026-12-01"}
    assert data["execution_drift"] is False, [
        r for e in data["contracts"].values() for r in e["changes"] if r["execution"]]


def test_function_call_item_id_and_status_are_kept_required_with_a_reason() -> None:
    for revision in ("2026-07-21", "2026-12-01"):
        got = rows("openai-responses", revision)
        for field in ("id", "status"):
            assert ("fields of function_call items", "kept required", field, False) in got
    assert all(reason for reasons in drift.KEPT_REQUIRED.values()
               for reason in reasons.values())


def test_deltas_of_v1beta_only_steps_are_no_drift() -> None:
    # the mcp_server_tool_* steps fail closed at step.start, so their deltas are unreachable
    for revision in ("2026-07-21", "2026-12-01"):
        assert not [r for r in rows("gemini-interactions", revision)
                    if r[0] == "step delta types" and r[2].startswith("mcp_server_tool")]


def test_cli_table_json_and_strict(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["drift", "--contract", "gemini-interactions", "--revision", "2026-07-21"]) == 0
    table = capsys.readouterr().out
    assert "requires_continuation" in table and "EXECUTION" in table
    assert main(["drift", "--contract", "openai-responses", "--json",
                 "--revision", "2026-07-21"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["execution_drift"] is True
    assert data["contracts"]["openai-responses"]["revision"] == "2026-07-21"
    assert main(["drift", "--strict", "--contract", "openai-responses",
                 "--revision", "2026-07-21"]) == 1
    capsys.readouterr()
    # the default is the newest revision, which has no execution drift
    assert main(["drift", "--strict", "--contract", "openai-responses", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["contracts"]["openai-responses"]["revision"] == "2026-12-01"
    # Anthropic has only an informational row (a beta block the SDK no longer lists).
    assert main(["drift", "--strict", "--contract", "anthropic-messages",
                 "--revision", "2026-07-21"]) == 0
