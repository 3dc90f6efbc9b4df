"""``pcfuzz check``: verdicts on captured turns.

In process (``fuzz.harness.verdict.check_bytes``): every ``wire-sse-bytes`` fixture of every
revision is a complete valid turn with the golden fixture's calls under its revision,
and EVERY proper prefix of its bytes is rejected without executable calls; a capture
of today's shape checked under the pinned revision is rejected naming the drift; violations are located by event index and
byte offset; any bytes give a verdict (only ``ContractError`` becomes one: any other
exception propagates and fails these tests). A few real runs of the command check the
exit statuses, ``--json`` and ``-`` for standard input.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from pcfuzz.contracts import anthropic_messages, gemini_interactions, openai_chat, openai_responses
from pcfuzz.contracts.fixtures import load_fixture
from pcfuzz.contracts.wire import parse_sse
from pcfuzz.fuzz.harness.verdict import UsageError, Verdict, check_bytes
from pcfuzz.strategies.wire_fixtures import CONTRACTS, PINNED, golden_path, wire_path, wire_paths

ROOT = Path(__file__).resolve().parent.parent
PARSERS: dict[str, Any] = {
    "openai-responses": openai_responses.parse_events,
    "anthropic-messages": anthropic_messages.parse_events,
    "gemini-interactions": gemini_interactions.parse_events,
    "openai-chat": openai_chat.parse_events,
}
MODULES: dict[str, Any] = {
    "openai-responses": openai_responses,
    "anthropic-messages": anthropic_messages,
    "gemini-interactions": gemini_interactions,
    "openai-chat": openai_chat,
}
VERDICT_KEYS = {"contract", "terminal", "status", "calls", "recovery_calls", "unknown_fields",
                "violation"}


#: (contract, revision) of every shipped wire fixture.
WIRE = [(contract, revision) for contract, revision, _ in wire_paths()]
WIRE_IDS = [f"{contract}@{revision}" for contract, revision in WIRE]


def wire_bytes(contract: str, revision: str = PINNED) -> bytes:
    sse = load_fixture(wire_path(contract, revision)).sse
    assert sse is not None
    return sse


def golden_events(contract: str, revision: str = PINNED) -> list[Any]:
    return list(load_fixture(golden_path(contract, revision)).events)


def golden_calls(contract: str, revision: str = PINNED) -> list[dict[str, Any]]:
    events = golden_events(contract, revision)
    if contract == "openai-chat":
        events = openai_chat.frames_from_fixture_events(events)
    turn = PARSERS[contract](events, revision=revision)
    return [{"call_id": c.call_id, "name": c.name, "arguments": c.arguments} for c in turn.calls]


def _pythonpath() -> str:
    # This checkout first; the caller's own entries after it.
    return os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=_pythonpath())
    return subprocess.run([sys.executable, "-m", "pcfuzz", "check", *args], input=stdin,
                          capture_output=True, cwd=ROOT, env=env, timeout=120, check=False)


def assert_rejected(verdict: Verdict) -> None:
    assert verdict.exit_code == 1 and not verdict.ok
    assert verdict.calls == [] and verdict.violation is not None
    assert not verdict.terminal and verdict.status is None


# --- the wire fixtures and every prefix ------------------------------------------------


@pytest.mark.parametrize(("contract", "revision"), WIRE, ids=WIRE_IDS)
def test_wire_fixture_is_a_complete_turn_with_the_golden_calls(contract: str,
                                                              revision: str) -> None:
    raw = wire_bytes(contract, revision)
    for verdict in (check_bytes(contract, raw, format="sse", revision=revision),
                    check_bytes(contract, raw, format="auto", revision=revision),
                    # a fixture is checked under its own contract_revision by default
                    check_bytes(contract, wire_path(contract, revision).read_bytes(),
                                format="fixture")):
        assert verdict.exit_code == 0 and verdict.ok and verdict.terminal
        assert verdict.violation is None and verdict.revision == revision
        assert verdict.calls == golden_calls(contract, revision)
        assert verdict.digest == parse_sse(contract, raw, revision=revision).digest
        assert VERDICT_KEYS <= verdict.to_json().keys()


@pytest.mark.parametrize("contract", CONTRACTS)
def test_raw_sse_is_checked_under_the_default_revision_unless_told(contract: str) -> None:
    default = MODULES[contract].REVISION
    assert default != PINNED
    raw = wire_bytes(contract, PINNED)
    assert check_bytes(contract, raw).revision == default
    assert check_bytes(contract, raw, revision=PINNED).revision == PINNED
    fixture = wire_path(contract, PINNED).read_bytes()
    assert check_bytes(contract, fixture, format="fixture").revision == PINNED
    assert check_bytes(contract, fixture, format="fixture", revision=default).revision == default


def test_an_unknown_revision_is_a_usage_error() -> None:
    for revision in ("2026-07-20", "latest", ""):
        with pytest.raises(UsageError, match="unknown revision"):
            check_bytes("openai-chat", wire_bytes("openai-chat"), revision=revision)


# Today's shape under the pinned revision: rejected naming the drift, where the shapes
# differ in required fields or known values. Anthropic has no such difference between
# its revisions (fixtures/CHANGELOG.md): its capture of today's shape is accepted under
# both, with the same calls.
DRIFT = {
    "openai-responses": "required field 'name'",
    "gemini-interactions": "unknown interaction status 'queued'",
    "openai-chat": "'audio' is an unknown delta field",
}


@pytest.mark.parametrize("contract", CONTRACTS)
def test_todays_capture_under_the_pinned_revision_names_the_drift(contract: str) -> None:
    current = [r for c, r in WIRE if c == contract and r != PINNED]
    assert current
    for revision in current:
        data = wire_path(contract, revision).read_bytes()
        ok = check_bytes(contract, data, format="fixture")
        assert ok.ok and ok.revision == revision
        old = check_bytes(contract, data, format="fixture", revision=PINNED)
        assert old.revision == PINNED
        if contract not in DRIFT:
            assert old.ok and old.calls == ok.calls
            continue
        assert_rejected(old)
        assert old.violation is not None
        message = old.violation["message"]
        assert DRIFT[contract] in message and "drift" in message, message
        assert f"contract revision {revision} accepts this shape" in message, message


EXPECTED_STATUS = {
    "openai-responses": "completed",
    "anthropic-messages": "tool_use",
    "gemini-interactions": "requires_action",
    "openai-chat": "tool_calls",
}


@pytest.mark.parametrize("contract", CONTRACTS)
def test_status_is_the_providers_stop_reason_or_status(contract: str) -> None:
    assert check_bytes(contract, wire_bytes(contract)).status == EXPECTED_STATUS[contract]


@pytest.mark.parametrize(("contract", "revision"), WIRE, ids=WIRE_IDS)
def test_every_truncated_prefix_is_rejected_without_calls(contract: str, revision: str) -> None:
    raw = wire_bytes(contract, revision)
    kinds: set[str] = set()
    for cut in range(len(raw)):
        verdict = check_bytes(contract, raw[:cut], format="sse", revision=revision)
        assert_rejected(verdict)
        assert verdict.violation is not None
        kinds.add(verdict.violation["error"])
    assert "StreamTruncated" in kinds


@pytest.mark.parametrize(("contract", "revision"), WIRE, ids=WIRE_IDS)
def test_golden_events_as_json_lines_and_the_typed_fixture_give_the_same_verdict(
    contract: str, revision: str,
) -> None:
    lines = b"".join(json.dumps(e).encode() + b"\n" for e in golden_events(contract, revision))
    by_lines = check_bytes(contract, lines, format="jsonl", revision=revision)
    by_fixture = check_bytes(contract, golden_path(contract, revision).read_bytes(),
                             format="fixture")
    by_bytes = check_bytes(contract, wire_bytes(contract, revision), revision=revision)
    for verdict in (by_lines, by_fixture):
        assert verdict.ok and verdict.digest == by_bytes.digest
        assert verdict.calls == by_bytes.calls and verdict.revision == revision
    assert check_bytes(contract, lines, format="auto").format == "jsonl"
    cut = check_bytes(contract, lines[: lines.rindex(b"\n", 0, -1) + 1], format="jsonl",
                      revision=revision)
    assert_rejected(cut)
    assert cut.violation is not None and cut.violation["error"] == "StreamTruncated"


# --- locating the first violation -----------------------------------------------------


def test_invalid_utf8_is_located_by_byte_and_event() -> None:
    raw = wire_bytes("openai-chat")
    third = raw.index(b"data:", raw.index(b"\n\n", raw.index(b"\n\n") + 2))
    verdict = check_bytes("openai-chat", raw[: third + 10] + b"\xff" + raw[third + 10 :])
    assert_rejected(verdict)
    assert verdict.violation == {
        "error": "ProtocolViolation",
        "message": verdict.violation["message"] if verdict.violation else "",
        "event_index": 2,
        "byte_offset": third + 10,
    }


def test_bad_json_in_one_event_names_that_event_and_its_offset() -> None:
    raw = wire_bytes("anthropic-messages")
    starts = [0] + [i + 2 for i in range(len(raw)) if raw.startswith(b"\n\n", i)][:-1]
    target = starts[4]
    line = raw.index(b"data: ", target) + 6
    broken = raw[:line] + b"{,}" + raw[raw.index(b"\n", line) :]
    verdict = check_bytes("anthropic-messages", broken)
    assert_rejected(verdict)
    assert verdict.violation is not None
    assert (verdict.violation["error"], verdict.violation["event_index"],
            verdict.violation["byte_offset"]) == ("StrictJSONError", 4, target)


def test_missing_terminal_event_is_located_at_the_end() -> None:
    raw = wire_bytes("openai-chat")
    cut = raw[: raw.rindex(b"data: [DONE]")]
    verdict = check_bytes("openai-chat", cut)
    assert_rejected(verdict)
    assert verdict.violation is not None
    assert verdict.violation["error"] == "StreamTruncated"
    assert (verdict.violation["event_index"], verdict.violation["byte_offset"]) == (
        verdict.events, len(cut))


def test_unknown_fields_on_a_call_are_listed() -> None:
    events = copy.deepcopy(golden_events("anthropic-messages"))
    for ev in events:
        block = ev["data"].get("content_block")
        if ev["event"] == "content_block_start" and block["type"] == "tool_use":
            block["x_future"] = 1
            break
    lines = b"".join(json.dumps(e).encode() + b"\n" for e in events)
    verdict = check_bytes("anthropic-messages", lines, format="jsonl")
    assert verdict.ok  # an unknown optional block field is kept, not fatal
    assert verdict.unknown_fields == ["message.content[2].x_future"]
    assert check_bytes("anthropic-messages", wire_bytes("anthropic-messages")).unknown_fields == []


@pytest.mark.parametrize(("contract", "field", "value"), [
    ("openai-responses", "async", False),      # openai 3.57.0 ResponseFunctionToolCall
    ("anthropic-messages", "toolset_name", "orders"),  # anthropic 2.15.0 ToolUseBlock
])
def test_a_call_field_of_the_current_sdk_is_unknown_only_under_the_pinned_revision(
        contract: str, field: str, value: Any) -> None:
    events = copy.deepcopy(golden_events(contract, "2026-12-01"))
    for ev in events:
        if contract == "openai-responses" and ev["type"] in (
                "response.output_item.added", "response.output_item.done") \
                and ev["item"]["type"] == "function_call":
            ev["item"][field] = value
        if contract == "openai-responses" and ev["type"] == "response.completed":
            for item in ev["response"]["output"]:
                if item["type"] == "function_call":
                    item[field] = value
        if contract == "openai-responses" and ev["type"] == "response.function_call_arguments.done":
            ev["name"] = "lookup_order"  # the pinned shape, so the pinned revision parses it
        if contract == "anthropic-messages" and ev["event"] == "content_block_start" \
                and ev["data"]["content_block"]["type"] == "tool_use":
            ev["data"]["content_block"][field] = value
    lines = b"".join(json.dumps(e).encode() + b"\n" for e in events)
    current = check_bytes(contract, lines, format="jsonl", revision="2026-12-01")
    assert current.ok and current.unknown_fields == []
    pinned = check_bytes(contract, lines, format="jsonl", revision=PINNED)
    assert pinned.ok and pinned.unknown_fields
    assert all(path.endswith(f".{field}") for path in pinned.unknown_fields)


def test_fixture_of_another_contract_or_unknown_names_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        check_bytes("openai-chat", wire_path("openai-responses").read_bytes(), format="fixture")
    with pytest.raises(UsageError):
        check_bytes("openai", b"")
    with pytest.raises(UsageError):
        check_bytes("openai-chat", b"", format="xml")


def test_broken_fixture_file_is_a_violation_not_a_crash() -> None:
    verdict = check_bytes("openai-chat", b'{"format": 1}', format="fixture")
    assert_rejected(verdict)
    assert verdict.violation is not None and verdict.violation["error"] == "FixtureError"


# --- never crashes -------------------------------------------------------------------


def _mutate(raw: bytes, data: st.DataObject) -> bytes:
    out = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["flip", "delete", "insert", "cut", "swap_line"]))
        event(op)
        if not out:
            break
        at = data.draw(st.integers(0, len(out) - 1))
        if op == "flip":
            out[at] = data.draw(st.integers(0, 255))
        elif op == "delete":
            del out[at : at + data.draw(st.integers(1, 16))]
        elif op == "insert":
            out[at:at] = data.draw(st.sampled_from(
                [b"\n", b"\r", b"\n\n", b"data: ", b"event: ping\n", b"id: 9\n", b"{", b"\xc3",
                 b"data: [DONE]\n\n", b": c\n"]))
        elif op == "cut":
            del out[at:]
        else:
            lines = bytes(out).split(b"\n")
            i, j = (data.draw(st.integers(0, len(lines) - 1)) for _ in range(2))
            lines[i], lines[j] = lines[j], lines[i]
            out = bytearray(b"\n".join(lines))
    return bytes(out)


def _consistent(contract: str, raw: bytes, verdict: Verdict) -> None:
    assert isinstance(verdict, Verdict)
    json.dumps(verdict.to_json())
    verdict.render()
    if verdict.ok:
        event("still a valid turn")
        assert verdict.digest == parse_sse(contract, raw).digest
    else:
        event(f"rejected: {verdict.violation['error'] if verdict.violation else '?'}")
        assert verdict.calls == [] and verdict.exit_code == 1


@given(contract=st.sampled_from(CONTRACTS), raw=st.binary(max_size=400),
       fmt=st.sampled_from(["sse", "jsonl", "auto", "fixture"]))
def test_random_bytes_give_a_verdict_never_an_exception(contract: str, raw: bytes,
                                                         fmt: str) -> None:
    verdict = check_bytes(contract, raw, format=fmt)
    assert not verdict.ok or fmt in ("sse", "auto")
    if fmt in ("sse", "auto") and verdict.format == "sse":
        _consistent(contract, raw, verdict)
    else:
        assert isinstance(verdict, Verdict)
        json.dumps(verdict.to_json())


@given(contract=st.sampled_from(CONTRACTS), data=st.data())
def test_mutated_fixture_bytes_give_a_verdict_never_an_exception(
    contract: str, data: st.DataObject
) -> None:
    raw = _mutate(wire_bytes(contract), data)
    _consistent(contract, raw, check_bytes(contract, raw, format="sse"))


# --- the command -------------------------------------------------------------------------


def test_command_on_a_wire_fixture_exits_0_and_prints_the_calls() -> None:
    proc = run("--contract", "openai-chat", "fixtures/wire/openai_chat.sse.json")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert "OK, complete turn" in out and "call-A" in out and "call-B" in out


def test_command_checks_todays_capture_under_its_revision_and_names_the_drift() -> None:
    path = "fixtures/wire/2026-12-01/openai_responses.sse.json"
    proc = run("--contract", "openai-responses", path)
    assert proc.returncode == 0, proc.stderr
    assert "revision: 2026-12-01" in proc.stdout.decode()
    proc = run("--contract", "openai-responses", "--revision", "2026-07-21", path)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout.decode()
    assert "REJECTED" in out and "revision: 2026-07-21" in out
    assert "drift: contract revision 2026-12-01 accepts this shape" in out


def test_command_json_from_stdin_on_a_truncated_capture_exits_1() -> None:
    raw = wire_bytes("gemini-interactions")
    proc = run("--contract", "gemini-interactions", "--json", "-", stdin=raw[: len(raw) // 2])
    assert proc.returncode == 1, proc.stderr
    verdict = json.loads(proc.stdout)
    assert VERDICT_KEYS <= verdict.keys()
    assert verdict["terminal"] is False and verdict["calls"] == []
    assert verdict["violation"]["error"] == "StreamTruncated"
    assert isinstance(verdict["violation"]["byte_offset"], int)
    proc = run("--contract", "gemini-interactions", "--json", "-", stdin=raw)
    assert proc.returncode == 0 and json.loads(proc.stdout)["terminal"] is True


@pytest.mark.parametrize(
    "args",
    [
        ("--contract", "openai-assistants", "fixtures/wire/openai_chat.sse.json"),
        ("--contract", "openai-chat", "fixtures/wire/does-not-exist.sse"),
        ("--contract", "openai-chat", "fixtures/wire"),
        ("--contract", "openai-chat", "fixtures/wire/openai_responses.sse.json"),
        ("fixtures/wire/openai_chat.sse.json",),
        ("--contract", "openai-chat", "--revision", "2026-07-20",
         "fixtures/wire/openai_chat.sse.json"),
    ],
    ids=["unknown contract", "missing file", "directory", "other contract's fixture",
         "no contract", "unknown revision"],
)
def test_command_usage_errors_exit_2(args: tuple[str, ...]) -> None:
    proc = run(*args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr


def test_every_check_argument_has_help_text() -> None:
    proc = subprocess.run([sys.executable, "-m", "pcfuzz", "check", "--help"], capture_output=True,
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=_pythonpath()), timeout=60,
                          check=False)
    assert proc.returncode == 0
    text = proc.stdout.decode()
    for needle in ("--contract", "FILE", "--json", "--format", "standard input", "--revision",
                   "contract_revision"):
        assert needle in text


def test_readme_example_is_the_real_output() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```console\n$ pcfuzz check ", 1)[1].split("```", 1)[0]
    command, _, shown = block.partition("\n")
    proc = run(*command.split())
    assert proc.returncode == 0
    assert proc.stdout.decode() == shown


# --- the byte-level wire fuzz targets run this code path --------------------------------


def _wire_target(contract: str) -> Any:
    from _fuzz import load_fuzz_target

    return load_fuzz_target(f"fuzz_wire_{contract.replace('-', '_')}")


@pytest.mark.parametrize("contract", CONTRACTS)
def test_wire_target_runs_check_bytes(contract: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import pcfuzz.fuzz.harness.wire_target as shared

    seen: list[int] = []

    def counting(*args: Any, **kwargs: Any) -> Verdict:
        seen.append(1)
        return check_bytes(*args, **kwargs)

    target = _wire_target(contract)
    monkeypatch.setattr(shared, "check_bytes", counting)
    target.TestOneInput(wire_bytes(contract))
    assert len(seen) >= 2  # the input, then the cuts at its terminal event


@pytest.mark.parametrize("contract", CONTRACTS)
def test_wire_target_oracle_catches_a_parser_that_ignores_truncation(
    contract: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pcfuzz.fuzz.harness.verdict as check

    target = _wire_target(contract)
    good = parse_sse(contract, wire_bytes(contract))
    monkeypatch.setitem(check._PARSE, contract, lambda events, **_: (list(events), good)[1])
    with pytest.raises(RuntimeError, match="yielded executable calls"):
        target.TestOneInput(wire_bytes(contract))


def test_wire_target_lets_a_non_contract_error_escape(monkeypatch: pytest.MonkeyPatch) -> None:
    import pcfuzz.fuzz.harness.verdict as check

    def broken(events: Any, **_: Any) -> Any:
        raise KeyError("a parser bug")

    target = _wire_target("openai-chat")
    monkeypatch.setitem(check._PARSE, "openai-chat", broken)
    with pytest.raises(KeyError):
        target.TestOneInput(wire_bytes("openai-chat"))


@given(contract=st.sampled_from(CONTRACTS), data=st.data())
def test_wire_target_accepts_any_input(contract: str, data: st.DataObject) -> None:
    if data.draw(st.booleans()):
        raw = data.draw(st.binary(max_size=200))
    else:
        raw = _mutate(wire_bytes(contract), data)
    event("valid turn" if check_bytes(contract, raw).ok else "rejected")
    _TARGETS.setdefault(contract, _wire_target(contract)).TestOneInput(raw)


_TARGETS: dict[str, Any] = {}
