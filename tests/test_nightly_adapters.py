"""The user's code in the night (issue 22 item 6): ``pcfuzz nightly --adapter
CONTRACT=module:function`` (or the configuration's adapters) runs the conformance
kit's families for each adapter in the property phase and one byte-level libFuzzer
target per adapter with the contract's parser as the oracle; the plan counts both;
findings, regressions and the report are per adapter; only the command line or the
configuration names code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pcfuzz.cli import main
from pcfuzz.engine.targets import Layout
from pcfuzz.errors import UsageError
from pcfuzz.nightly.adapters import (
    AdapterSpec,
    parse_adapter,
    read_config,
    write_kit_tests,
    write_targets,
)
from pcfuzz.nightly.plan import Costs, make_plan

TESTS = Path(__file__).resolve().parent
NAIVE = "openai-chat=_gateway_chat:naive"


# ----------------------------------------------------------------- declaring adapters


def test_an_adapter_is_declared_as_contract_equals_module_function() -> None:
    assert parse_adapter(NAIVE) == AdapterSpec("openai-chat", "_gateway_chat:naive", "events")
    sse = parse_adapter("anthropic-messages:sse=gw/parser.py:parse_bytes")
    assert (sse.contract, sse.function, sse.input) == ("anthropic-messages",
                                                        "gw/parser.py:parse_bytes", "sse")
    assert sse.declared() == "anthropic-messages:sse=gw/parser.py:parse_bytes"
    # the folder and target names carry a digest, never the module's name
    assert sse.fuzzer.startswith("fuzz_adapter_anthropic_messages_") and "gw" not in sse.id


def test_an_adapter_of_the_release_form_is_declared_with_release() -> None:
    spec = parse_adapter("anthropic-messages:sse:release=gw.stream:run")
    assert (spec.input, spec.form) == ("sse", "release")
    assert spec.declared() == "anthropic-messages:sse:release=gw.stream:run"
    assert parse_adapter("anthropic-messages:release:sse=gw.stream:run") == spec
    plain = parse_adapter("anthropic-messages:sse=gw.stream:run")
    assert plain.form == "plain" and plain.id != spec.id


@pytest.mark.parametrize(("text", "message"), [
    ("_gateway_chat:naive", "must be CONTRACT=MODULE:FUNCTION"),
    ("nope=_gateway_chat:naive", "unknown contract 'nope'"),
    ("openai-chat:bytes=_gateway_chat:naive", "unknown or repeated option 'bytes'"),
    ("openai-chat:release:release=_gateway_chat:naive", "unknown or repeated option 'release'"),
    ("openai-chat:sse:events=_gateway_chat:naive", "unknown or repeated option 'events'"),
    ("openai-chat=_gateway_chat", "must be module:function"),
])
def test_a_bad_declaration_is_a_usage_error(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_adapter(text)


def test_the_configuration_declares_them_when_the_command_line_does_not(
        tmp_path: Path) -> None:
    assert read_config(tmp_path) == []
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pcfuzz.nightly]\nadapters = ["openai-chat=gw:a"]\n', encoding="utf-8")
    assert read_config(tmp_path) == ["openai-chat=gw:a"]
    (tmp_path / "pcfuzz.toml").write_text(
        '[nightly]\nadapters = ["anthropic-messages:sse=gw:b"]\n', encoding="utf-8")
    assert read_config(tmp_path) == ["anthropic-messages:sse=gw:b"]  # pcfuzz.toml first
    (tmp_path / "bad.toml").write_text('[nightly]\nadapters = "gw:a"\n', encoding="utf-8")
    with pytest.raises(UsageError, match="adapters must be a list"):
        read_config(tmp_path, tmp_path / "bad.toml")
    with pytest.raises(UsageError, match="does not exist"):
        read_config(tmp_path, tmp_path / "missing.toml")


def test_an_adapter_that_cannot_be_imported_stops_the_night_before_it_starts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--fuzz-dir", str(tmp_path), "nightly", "--budget", "60", "--report",
                 str(tmp_path / "report"), "--adapter", "openai-chat=no_such_module:f"])
    assert code == 2
    assert "cannot import 'no_such_module'" in capsys.readouterr().err
    assert not (tmp_path / "report").exists()


# ----------------------------------------------------------------- the plan


def test_the_plan_counts_the_kit_tests_and_the_adapters_targets() -> None:
    costs = Costs(collect_s=3.0, tests=1, test_s=0.05, example_s=0.01)
    common = dict(budget_s=60, jobs=2, properties=True, coverage=False, mutants=False,
                  minimize=False, costs=costs)
    without = make_plan(fuzzers=[], **common)  # type: ignore[arg-type]
    adapter = parse_adapter(NAIVE)
    with_kit = make_plan(fuzzers=[adapter.fuzzer], kit_tests=5, **common)  # type: ignore[arg-type]
    assert with_kit.startup_s == {adapter.fuzzer: 3.0}
    assert with_kit.properties_s >= costs.suite(1) + 5 * 5.0
    assert not without.shortfalls and not with_kit.shortfalls
    short = make_plan(fuzzers=[adapter.fuzzer], kit_tests=40,  # type: ignore[arg-type]
                      **{**common, "budget_s": 40})
    assert any("40 adapter kit tests" in s for s in short.shortfalls), short.shortfalls


# ----------------------------------------------------------------- the generated files


def test_the_generated_files_name_the_declared_adapter_and_nothing_else(tmp_path: Path) -> None:
    layout = Layout(fuzz_dir=tmp_path / "fuzz", regressions_dir=tmp_path / "regs",
                    work_dir=tmp_path / "work")
    adapter = parse_adapter(NAIVE)
    (target,) = write_targets([adapter], layout, TESTS)
    source = target.path.read_text(encoding="utf-8")
    assert "import_adapter('_gateway_chat:naive', instrumented=True)" in source
    assert "instrument_imports" not in source  # (tests/test_fuzz_instrumentation.py)
    assert "TestOneInput = make_adapter_target('openai-chat', ADAPTER, input='events')" in source
    assert os.access(target.path, os.X_OK)
    assert target.dict_path is not None and target.per_input_timeout() == 10
    seeds = sorted(p.name for p in target.seed_corpus.iterdir())
    assert "wire_fixture.sse" in seeds  # the wire target's seeds
    kit = write_kit_tests([adapter], layout, TESTS).read_text(encoding="utf-8")
    assert f"{adapter.test} = pcfuzz_conformance(" in kit
    assert "load_adapter('_gateway_chat:naive')" in kit
    assert f"regressions={str(tmp_path / 'regs' / 'conform' / adapter.id)!r}" in kit


def _whole_and_cut(tmp_path: Path, contract: str, terminal: bytes) -> tuple[Path, Path]:
    """The contract's golden stream, whole and cut just before ``terminal``."""
    from pcfuzz.conform.validate import golden_payload

    sse, _ = golden_payload(contract, "sse")
    whole, cut = tmp_path / "whole.sse", tmp_path / "cut.sse"
    whole.write_bytes(sse)
    cut.write_bytes(sse[:sse.index(terminal)])
    return whole, cut


@pytest.fixture
def cut_stream(tmp_path: Path) -> tuple[Path, Path]:
    """The golden Chat stream, whole and cut just before ``data: [DONE]``."""
    return _whole_and_cut(tmp_path, "openai-chat", b"data: [DONE]")


def _run_target(tmp_path: Path, declared: str, data: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("atheris")
    layout = Layout(fuzz_dir=tmp_path / "fuzz", regressions_dir=tmp_path / "regs",
                    work_dir=tmp_path / "work")
    (target,) = write_targets([parse_adapter(declared)], layout, TESTS)
    return subprocess.run([sys.executable, str(target.path), str(data)], capture_output=True,
                          text=True, timeout=300)


def test_the_adapters_target_crashes_when_it_releases_what_the_contract_does_not(
        tmp_path: Path, cut_stream: tuple[Path, Path]) -> None:
    whole, cut = cut_stream
    assert _run_target(tmp_path, NAIVE, whole).returncode == 0
    run = _run_target(tmp_path, NAIVE, cut)
    assert run.returncode != 0
    said = run.stdout + run.stderr  # atheris prints the exception on stdout
    assert ("RuntimeError: the adapter released 2 call(s) the contract does not release (the "
            "contract rejects the stream: StreamTruncated: stream ended without [DONE]") \
        in said, said[-2000:]


@pytest.fixture
def anthropic_streams(tmp_path: Path) -> tuple[Path, Path]:
    """The golden Anthropic stream, whole and cut just before ``message_stop``."""
    return _whole_and_cut(tmp_path, "anthropic-messages", b"event: message_stop")


@pytest.mark.parametrize(("adapter", "said"), [
    ("early_then_raises", "RuntimeError: the adapter released before the terminal event: "
                          "call '"),
    ("answers_first_call_twice", "RuntimeError: the adapter's follow-up request: "
                                 "duplicate_result: two results for call '"),
    ("releases_a_string", "RuntimeError: the adapter's call 0 is not"),
])
def test_a_release_form_adapters_target_checks_when_and_what_it_releases(
        tmp_path: Path, anthropic_streams: tuple[Path, Path], adapter: str, said: str) -> None:
    whole, _ = anthropic_streams
    run = _run_target(tmp_path, f"anthropic-messages:release=_release_adapters:{adapter}",
                      whole)
    assert run.returncode != 0
    assert said in run.stdout + run.stderr, (run.stdout + run.stderr)[-2000:]


@pytest.mark.parametrize("declared", [
    "anthropic-messages:release=pcfuzz.conform.adapters:anthropic_messages_release",
    "anthropic-messages:sse:release=pcfuzz.conform.adapters:anthropic_messages_release_sse",
])
def test_this_projects_release_form_adapters_pass_their_targets(
        tmp_path: Path, anthropic_streams: tuple[Path, Path], declared: str) -> None:
    for data in anthropic_streams:
        run = _run_target(tmp_path, declared, data)
        assert run.returncode == 0, (run.stdout + run.stderr)[-2000:]
    kit = write_kit_tests([parse_adapter(declared)], Layout(
        fuzz_dir=tmp_path / "f", regressions_dir=tmp_path / "r", work_dir=tmp_path / "w"),
        TESTS).read_text(encoding="utf-8")
    assert "form='release'" in kit


def test_this_projects_parser_passes_its_own_adapter_target(
        tmp_path: Path, cut_stream: tuple[Path, Path]) -> None:
    for data in cut_stream:
        run = _run_target(tmp_path, "openai-chat=pcfuzz.conform.adapters:openai_chat", data)
        assert run.returncode == 0, run.stderr[-2000:]


# ----------------------------------------------------------------- a night with an adapter

CHEAP = """\
from hypothesis import given, strategies as st


@given(st.integers())
def test_cheap(x):
    assert int(str(x)) == x
"""


def test_a_night_with_an_adapter_fuzzes_it_and_reports_per_adapter(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("atheris")
    jsonschema = pytest.importorskip("jsonschema")
    fuzz_dir, work, regs, props = (tmp_path / n for n in ("fuzz", "work", "regs", "props"))
    for folder in (fuzz_dir, work, props):
        folder.mkdir()
    (props / "test_cheap.py").write_text(CHEAP, encoding="utf-8")
    # the night knows this tiny suite (the defaults plan for this project's 400 tests)
    Costs(collect_s=3.0, tests=1, test_s=0.05, example_s=0.01).save(work / "nightly_costs.json")
    report = tmp_path / "report"
    monkeypatch.chdir(TESTS)  # where the adapter imports from, as a user's project root
    status = main(["--fuzz-dir", str(fuzz_dir), "--work-dir", str(work), "--regressions-dir",
                   str(regs), "nightly", "--budget", "80", "--jobs", "2", "--report",
                   str(report), "--property-tests", str(props), "--no-coverage",
                   "--no-minimize", "--no-mutants", "--hypothesis-db", str(tmp_path / "db"),
                   "--adapter", NAIVE])
    capsys.readouterr()
    summary = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    schema = json.loads((Path(__file__).resolve().parent.parent / "pcfuzz" / "nightly"
                         / "summary.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(summary, schema)
    assert status == 1, summary["incomplete_reasons"]
    (adapter,) = summary["adapters"]
    assert (adapter["contract"], adapter["adapter"]) == ("openai-chat", "_gateway_chat:naive")
    kit, fuzz = adapter["kit"], adapter["fuzz"]
    from pcfuzz.strategies.conformance import families

    # one kit test per default family of the contract
    assert kit["ran"] and kit["tests"] == len(families("openai-chat")), kit
    assert kit["failed"] >= 1, kit
    assert all(f["rule"] for f in kit["failures"]), kit
    assert fuzz["target"] == "adapter-" + adapter["id"].replace("_", "-")
    assert fuzz["executions"] > 0, fuzz
    md = (report / "summary.md").read_text(encoding="utf-8")
    assert "## Your adapters" in md and "`_gateway_chat:naive` (events)" in md
    saved = list((regs / "conform" / adapter["id"]).rglob("*"))
    assert saved and all("_gateway_chat" not in p.read_text(encoding="utf-8")
                         for p in saved if p.is_file())
