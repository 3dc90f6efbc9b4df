"""The ``pcfuzz`` command, run for real on small budgets against toy targets.

The toy targets live in ``tmp_path`` (never in ``contracts/``): ``fuzz_toy.py`` is
deliberately broken (a ``KeyError`` on inputs starting with ``b"FUZ"``, which libFuzzer
finds within seconds with the ``"FUZ"`` dictionary entry); ``fixing`` it rewrites that
line. The command is pointed at the toy tree with ``--fuzz-dir`` (the pytest replay
with ``PCFUZZ_FUZZ_DIR`` / ``PCFUZZ_REGRESSIONS_DIR``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pcfuzz.cli import main
from pcfuzz.engine.libfuzzer import count_features, parse_status_line
from pcfuzz.engine.targets import Layout, TargetNotFound, resolve
from pcfuzz.engine.triage import Crash, fingerprint_of
from pcfuzz.nightly.report import SCHEMA_PATH

# No module-level skip for the nightly job: it deselects example tests itself, and a
# skipped module would show in its junit.xml as a "collection skipped" case.
pytest.importorskip("atheris")

from _toy import BUG, FIX, TOY, seed_costs, write_target

REPO = Path(__file__).resolve().parent.parent
@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """A project tree with one broken toy target; returns its fuzz dir."""
    fuzz_dir = tmp_path / "fuzz"
    fuzz_dir.mkdir()
    (tmp_path / "tests" / "regressions").mkdir(parents=True)
    write_target(fuzz_dir, "toy", TOY, {"object": b"{}", "array": b"[]"})
    return fuzz_dir


def _fix(fuzz_dir: Path, name: str = "toy") -> None:
    path = fuzz_dir / f"fuzz_{name}.py"
    path.write_text(path.read_text(encoding="utf-8").replace(BUG, FIX), encoding="utf-8")


def _pcfuzz(fuzz_dir: Path, *args: str) -> int:
    return main(["--fuzz-dir", str(fuzz_dir), *args])


def _pytest_replay(fuzz_dir: Path) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ,
        PCFUZZ_FUZZ_DIR=str(fuzz_dir),
        PCFUZZ_REGRESSIONS_DIR=str(fuzz_dir.parent / "tests" / "regressions"),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    )
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(REPO / "tests" / "test_fuzz_targets.py")],
        cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=120,
    )


# -- parsing and fingerprints --------------------------------------------------------


def test_status_line_parser_reads_in_process_and_fork_lines() -> None:
    s = parse_status_line(
        "#4096\tpulse  cov: 120 ft: 300 corp: 12/1Kb lim: 43 exec/s: 2048 rss: 45Mb"
    )
    assert s is not None
    assert (s.kind, s.execs, s.cov, s.ft) == ("pulse", 4096, 120, 300)
    assert (s.corpus_files, s.corpus_bytes, s.exec_per_s, s.rss_mb) == (12, 1024, 2048, 45)
    n = parse_status_line(
        "#11\tNEW    cov: 28 ft: 28 corp: 5/23b lim: 5 exec/s: 0 rss: 42Mb L: 5/5 MS: 1 ManualDict-"
    )
    assert n is not None and (n.kind, n.corpus_bytes) == ("NEW", 23)
    f = parse_status_line(
        "#3537: cov: 80 ft: 58 corp: 10 exec/s 0 oom/timeout/crash: 0/0/88 time: 7s job: 90"
    )
    assert f is not None and (f.kind, f.execs, f.ft, f.fork_crashes) == ("fork", 3537, 58, 88)
    assert parse_status_line("INFO: Seed: 1234") is None


def test_fingerprint_is_exception_and_top_project_frames_not_line_numbers(tmp_path: Path) -> None:
    target = str(tmp_path / "fuzz" / "fuzz_x.py")
    library = str(Path(json.__file__))
    a = Crash("KeyError", "'a'", ((library, 10, "decode"), (target, 12, "check"), (target, 3, "TestOneInput")))
    moved = Crash("KeyError", "'b'", ((library, 99, "decode"), (target, 40, "check"), (target, 7, "TestOneInput")))
    other_type = Crash("IndexError", "'a'", a.frames)
    other_func = Crash("KeyError", "'a'", ((target, 12, "parse"), (target, 3, "TestOneInput")))
    fp, top = fingerprint_of(a, tmp_path)
    assert fp.startswith("KeyError-")
    assert top == ["fuzz/fuzz_x.py:check", "fuzz/fuzz_x.py:TestOneInput"]
    assert fingerprint_of(moved, tmp_path)[0] == fp
    assert fingerprint_of(other_type, tmp_path)[0] != fp
    assert fingerprint_of(other_func, tmp_path)[0] != fp
    # two oracle checks in one function: the message's fixed part tells them apart,
    # the input quoted in it does not
    one = Crash("RuntimeError", "parser accepted what json.loads rejects: b'{1'", a.frames[1:])
    same = Crash("RuntimeError", "parser accepted what json.loads rejects: b'[[['", a.frames[1:])
    two = Crash("RuntimeError", "parser and json.loads disagree on b'{1'", a.frames[1:])
    assert fingerprint_of(one, tmp_path)[0] == fingerprint_of(same, tmp_path)[0]
    assert fingerprint_of(one, tmp_path)[0] != fingerprint_of(two, tmp_path)[0]


def test_target_names_accept_short_snake_fuzzer_and_contract_forms(toy: Path) -> None:
    write_target(toy, "openai_responses", TOY, {"a": b"{}"})
    layout = Layout.from_options(str(toy))
    for name in ("openai-responses", "openai_responses", "fuzz_openai_responses",
                 str(toy / "fuzz_openai_responses.py")):
        assert resolve(layout, name).fuzzer == "fuzz_openai_responses"
    assert resolve(layout, "toy").name == "toy"
    with pytest.raises(TargetNotFound, match="known targets: openai-responses, toy"):
        resolve(layout, "gemini-interactions")
    assert _pcfuzz(toy, "fuzz", "no-such-target", "--time", "1") == 2


def test_campaign_command_sets_corpus_dictionary_options_limits_and_artifacts(toy: Path) -> None:
    from pcfuzz.engine.libfuzzer import Campaign

    target = resolve(Layout.from_options(str(toy)), "toy")
    cmd = Campaign(target, 30).command()
    assert cmd[:2] == [sys.executable, str(target.path)]  # absolute: re-exec modes rerun it
    assert f"-dict={toy / 'fuzz_toy.dict'}" in cmd
    assert "-max_len=64" in cmd and "-timeout=5" in cmd  # from the .options file
    assert "-rss_limit_mb=2048" in cmd and "-max_total_time=30" in cmd
    assert f"-artifact_prefix={toy / '.work' / 'fuzz_toy' / 'artifacts'}{os.sep}" in cmd
    # new inputs go to the working corpus (first), the seeds are read (second)
    assert cmd[-2:] == [str(toy / ".work" / "fuzz_toy" / "corpus"), str(toy / "corpus" / "fuzz_toy")]
    assert not any(c.startswith("-fork") for c in cmd)
    forked = Campaign(target, 30, jobs=3, timeout=2, rss_limit_mb=512).command()
    assert {"-fork=3", "-ignore_crashes=1", "-timeout=2", "-rss_limit_mb=512"} <= set(forked)


def test_replay_fingerprints_a_hang_from_the_stack_it_dumps(toy: Path) -> None:
    from pcfuzz.engine.triage import replay

    source = TOY.replace(BUG, '        while True:\n            pass\n')
    write_target(toy, "hang", source, {"a": b"{}"})
    target = resolve(Layout.from_options(str(toy)), "hang")
    hang = toy.parent / "timeout-by-hand"
    hang.write_bytes(b"FUZ")
    ok = toy.parent / "ok"
    ok.write_bytes(b"[]")
    first, second, third = replay(target, [ok, hang, ok], timeout_s=1)
    assert first.crash is None and third.crash is None  # replay resumes after the hang
    assert second.crash is not None and second.crash.kind == "timeout"
    fp, top = fingerprint_of(second.crash, toy.parent)
    assert fp.startswith("Timeout-") and top[0] == "fuzz/fuzz_hang.py:classify"


def test_replay_reports_a_crashing_corpus_input(toy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (toy / "corpus" / "fuzz_toy" / "bad").write_bytes(b"FUZZ")
    assert _pcfuzz(toy, "replay", "toy") == 1
    assert "CORPUS CRASH" in capsys.readouterr().out


def test_list_shows_targets_corpus_sizes_and_last_run(toy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _pcfuzz(toy, "list") == 0
    out = capsys.readouterr().out
    assert "toy" in out and "fuzz_toy" in out and "2 (4 B)" in out and "last run" in out


# -- the whole crash workflow ----------------------------------------------------------


def test_broken_target_is_found_triaged_promoted_replayed_then_fixed(
    toy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # fuzz: found within seconds, the campaign stops at the crash, exit status 1
    assert _pcfuzz(toy, "fuzz", "toy", "--time", "60") == 1
    fuzz_out = capsys.readouterr()
    artifacts = toy / ".work" / "fuzz_toy" / "artifacts"
    crashes = sorted(artifacts.glob("crash-*"))
    assert crashes and all(c.read_bytes().startswith(b"FUZ") for c in crashes)
    assert "crashes 1" in fuzz_out.out
    assert "ft " in fuzz_out.err and "exec/s" in fuzz_out.err  # the progress line
    # a second, padded artifact of the same bug: triage groups the two
    (artifacts / "crash-padded").write_bytes(b"FUZ" + b"x" * 40)
    assert _pcfuzz(toy, "triage", str(artifacts)) == 1
    out = capsys.readouterr().out
    assert "1 distinct crashes" in out
    (group,) = json.loads((artifacts / "minimized" / "triage.json").read_text())
    assert group["fingerprint"].startswith("KeyError-")
    assert group["frames"][0] == "fuzz/fuzz_toy.py:classify"
    assert len(group["artifacts"]) == len(crashes) + 1
    minimized = Path(group["minimized"])
    assert minimized.read_bytes().startswith(b"FUZ") and minimized.stat().st_size <= 4
    # promote the padded one: it is minimized on the way into the store
    assert _pcfuzz(toy, "promote", str(artifacts / "crash-padded"), "--target", "toy") == 0
    capsys.readouterr()
    store = toy.parent / "tests" / "regressions" / "fuzz_toy"
    (sidecar,) = store.glob("*.meta.json")
    meta = json.loads(sidecar.read_text())
    assert meta["fingerprint"] == group["fingerprint"] and meta["target"] == "fuzz_toy"
    assert meta["exception"] == "KeyError" and meta["expect"] == "pass"
    assert {"python", "atheris", "hypothesis", "pcfuzz"} <= set(meta["tools"])
    stored = store / meta["input"]
    assert stored.read_bytes().startswith(b"FUZ") and len(stored.read_bytes()) < 43
    # pytest replays it as failing until fixed
    red = _pytest_replay(toy)
    assert red.returncode == 1, red.stdout
    assert f"FAILED tests/test_fuzz_targets.py::test_regression_input_no_longer_crashes[fuzz_toy/{stored.name}]" in red.stdout
    assert _pcfuzz(toy, "replay") == 1
    assert "still failing" in capsys.readouterr().out
    # fix the bug: replay reports it fixed, pytest is green
    _fix(toy)
    assert _pcfuzz(toy, "replay") == 0
    out = capsys.readouterr().out
    assert f"fixed          {stored.name}" in out
    green = _pytest_replay(toy)
    assert green.returncode == 0, green.stdout


def test_keep_going_fuzzes_on_after_a_crash_and_triage_groups_the_repeats(
    toy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _pcfuzz(toy, "fuzz", "toy", "--time", "8", "--keep-going") == 1
    out = capsys.readouterr().out
    artifacts = toy / ".work" / "fuzz_toy" / "artifacts"
    crashes = sorted(artifacts.glob("crash-*"))
    assert len(crashes) > 1, out  # the fork-mode phase found the bug again
    last = json.loads((toy / ".work" / "fuzz_toy" / "last_run.json").read_text())
    assert last["duration_s"] >= 6 and last["executions"] > 0
    assert _pcfuzz(toy, "triage", str(artifacts), "--no-minimize") == 1
    assert "1 distinct crashes" in capsys.readouterr().out


def test_known_failure_regression_is_strict_xfail_until_sidecar_updated(
    toy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crash = toy.parent / "crash-by-hand"
    crash.write_bytes(b"FUZ!")
    assert _pcfuzz(toy, "promote", str(crash), "--target", "toy", "--expect-crash",
                   "--no-minimize") == 0
    result = _pytest_replay(toy)
    assert result.returncode == 0 and "1 xfailed" in result.stdout, result.stdout
    assert _pcfuzz(toy, "replay") == 0  # known and still crashing: not a new failure
    _fix(toy)
    result = _pytest_replay(toy)
    assert result.returncode == 1 and "XPASS(strict)" in result.stdout, result.stdout
    assert _pcfuzz(toy, "replay") == 1
    assert "run pcfuzz replay --update" in capsys.readouterr().out
    assert _pcfuzz(toy, "replay", "--update") == 0
    (sidecar,) = (toy.parent / "tests" / "regressions" / "fuzz_toy").glob("*.meta.json")
    meta = json.loads(sidecar.read_text())
    assert meta["expect"] == "pass" and "fixed" in meta
    assert _pytest_replay(toy).returncode == 0


def test_promote_refuses_an_input_that_does_not_crash(toy: Path) -> None:
    harmless = toy.parent / "harmless"
    harmless.write_bytes(b"{}")
    assert _pcfuzz(toy, "promote", str(harmless), "--target", "toy") == 1
    assert not (toy.parent / "tests" / "regressions" / "fuzz_toy").exists()


# -- corpus minimization ---------------------------------------------------------------


def _pad_seeds(toy: Path) -> Path:
    seeds = toy / "corpus" / "fuzz_toy"
    for i in range(12):  # same branches as the two seeds and one plain input
        (seeds / f"obj{i}").write_bytes(b"{" + bytes([97 + i]))
        (seeds / f"arr{i}").write_bytes(b"[" + bytes([97 + i]))
        (seeds / f"plain{i}").write_bytes(b"p" + bytes([97 + i]))
    return seeds


def test_minimize_shrinks_padded_corpus_and_keeps_every_feature(
    toy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seeds = _pad_seeds(toy)
    target = resolve(Layout.from_options(str(toy)), "toy")
    names_before = {p.name for p in seeds.iterdir()}
    files_before = len(names_before)
    features_before = count_features(target, [seeds])
    assert _pcfuzz(toy, "minimize", "toy", "--seeds") == 0
    line = capsys.readouterr().out
    assert f"toy: swapped: files {files_before} -> " in line
    files_after = len(list(seeds.iterdir()))
    assert files_after < files_before
    assert count_features(target, [seeds]) == features_before
    assert f"features {features_before} -> {features_before}" in line
    # seeds that survive keep their descriptive names
    assert {p.name for p in seeds.iterdir()} <= names_before


def test_minimize_keeps_old_corpus_when_features_would_drop(
    toy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pcfuzz.engine.corpus as corpus_module

    seeds = _pad_seeds(toy)
    before = sorted(p.name for p in seeds.iterdir())
    real = corpus_module.count_features
    calls: list[int] = []

    def lossy(target: object, dirs: list[Path], timeout_s: float = 600) -> int | None:
        value = real(target, dirs)  # type: ignore[arg-type]
        calls.append(1)
        return None if value is None else value - (len(calls) > 1)

    monkeypatch.setattr(corpus_module, "count_features", lossy)
    assert _pcfuzz(toy, "minimize", "toy", "--seeds") == 1
    assert "kept" in capsys.readouterr().out
    assert sorted(p.name for p in seeds.iterdir()) == before


# -- the nightly job ---------------------------------------------------------------------

PROPERTY = '''import os

from hypothesis import given, strategies as st


@given(st.integers())
def test_nightly_profile_is_selected_by_name(x):
    assert os.environ["HYPOTHESIS_PROFILE"] == "nightly"
    assert os.environ["PCFUZZ_HYPOTHESIS_DB"].endswith("nightly-db")
    assert int(str(x)) == x


def test_plain_example_runs_on_every_push_not_at_night():
    assert True
'''

SLOW_PROPERTIES = '''
import time

from hypothesis import event


@given(st.integers())
def test_cheap(x):
    event("parity " + str(x % 2))
    assert x + 0 == x


@given(st.integers(min_value=0, max_value=3))
def test_slow(x):
    time.sleep(0.2)
    assert x <= 3


@given(st.text())
def test_medium_a(s):
    time.sleep(0.01)
    assert s == s[:]


@given(st.binary())
def test_medium_b(b):
    time.sleep(0.01)
    assert bytes(b) == b


@given(st.lists(st.integers()))
def test_sorted(xs):
    assert sorted(sorted(xs)) == sorted(xs)
'''
#: Slack over the budget a night may take on a loaded machine (process exits, the
#: last write): the one real-time bound of these tests, deliberately generous.
BUDGET_SLACK_S = 20


def test_nightly_writes_summary_markdown_junit_and_plots_that_parse(
    toy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    # CI set: hypothesis would load its own ci profile; the job must pick nightly by name
    monkeypatch.setenv("CI", "true")
    write_target(toy, "sound", TOY.replace(BUG, FIX), {"a": b"{}"})
    seed_costs(toy)
    props = tmp_path / "props"
    props.mkdir()
    (props / "test_toy_property.py").write_text(PROPERTY, encoding="utf-8")
    report = tmp_path / "report"
    status = _pcfuzz(toy, "nightly", "--budget", "75", "--jobs", "2", "--report", str(report),
                     "--property-tests", str(props), "--no-minimize",
                     "--hypothesis-db", str(tmp_path / "nightly-db"))
    assert status == 1  # the broken toy target: a new crash, whatever else the night did
    summary = json.loads((report / "summary.json").read_text())
    jsonschema.validate(summary, json.loads(SCHEMA_PATH.read_text()))
    by_name = {t["name"]: t for t in summary["targets"]}
    assert set(by_name) == {"sound", "toy"}
    assert by_name["toy"]["status"] == "crash" and by_name["toy"]["crashes"][0]["new"]
    assert by_name["sound"]["status"] == "ok" and by_name["sound"]["executions"] > 0
    assert summary["new_crashes"] == 1 and summary["exit_status"] == 1
    assert summary["properties"]["profile"] == "nightly"
    assert summary["properties"]["passed"] == 1, summary["properties"]
    assert summary["properties"]["selected"] == 1  # the example test is deselected
    kept = report / by_name["toy"]["crashes"][0]["input"]
    assert kept.read_bytes().startswith(b"FUZ")
    md = (report / "summary.md").read_text()
    assert "| toy | crash |" in md and "| sound | ok |" in md and "## Property suite" in md
    junit = ET.parse(report / "junit.xml").getroot()
    cases = {c.get("name"): c for c in junit.iter("testcase")}
    assert {"toy", "sound", "test_nightly_profile_is_selected_by_name"} <= set(cases)
    assert "test_plain_example_runs_on_every_push_not_at_night" not in cases  # deselected
    assert cases["toy"].find("failure") is not None
    assert cases["sound"].find("failure") is None
    for t in summary["targets"]:
        svg = ET.parse(report / t["plot"]).getroot()
        assert svg.tag == "{http://www.w3.org/2000/svg}svg"


def test_a_generous_night_is_complete_within_its_budget_and_runs_every_property_test(
    toy: Path, tmp_path: Path
) -> None:
    # The one real-time run: a budget several times what the plan needs, a generous
    # slack, and every other figure asserted from what the night reports.
    _fix(toy)
    write_target(toy, "sound", TOY.replace(BUG, FIX), {"a": b"{}"})
    seed_costs(toy)
    props = tmp_path / "props"
    props.mkdir()
    (props / "test_toy_property.py").write_text(PROPERTY + SLOW_PROPERTIES, encoding="utf-8")
    report = tmp_path / "report"
    started = time.monotonic()
    status = _pcfuzz(toy, "nightly", "--budget", "60", "--jobs", "2", "--report", str(report),
                     "--property-tests", str(props), "--hypothesis-db",
                     str(tmp_path / "nightly-db"))
    took = time.monotonic() - started
    summary = json.loads((report / "summary.json").read_text())
    assert took <= 60 + BUDGET_SLACK_S, took
    assert status == 0 and summary["complete"], summary["incomplete_reasons"]
    assert summary["incomplete_reasons"] == []
    phases = {p["name"]: p for p in summary["phases"]}
    assert {"fuzzing", "properties", "report"} <= set(phases)
    assert "mutants" not in phases  # off by default under 300 s
    props_info = summary["properties"]
    # five properties of very different cost: each ran, none skipped. How many
    # examples each was given follows the machine: on a loaded one collection can run
    # past the share the examples were sized for, and every test after that gets the
    # minimum, one (the sizing itself is asserted from injected costs and a fake clock
    # in tests/test_nightly_plan.py). The slow test never runs more examples than the
    # cheap one before it, and fewer whenever the cheap one was sized (the slow one is
    # stopped at the end of its slice).
    assert props_info["skipped"] == 0 and props_info["skipped_tests"] == [], props_info
    assert props_info["passed"] == 6, props_info
    table = {row["name"].rsplit("::", 1)[-1]: row for row in props_info["table"]}
    assert all(row["examples"] >= 1 for row in table.values()), table
    cheap, slow = table["test_cheap"], table["test_slow"]
    assert cheap["examples"] >= slow["examples"], table
    if cheap["planned"] > 1:
        assert cheap["examples"] > slow["examples"], table
    assert "parity" in " ".join(table["test_cheap"]["events"]), table["test_cheap"]
    assert all(t["executions"] > 0 for t in summary["targets"])
    md = (report / "summary.md").read_text()
    assert md.startswith("# pcfuzz nightly report\n\n**Complete**")
    assert "phases (planned / used s)" in md and "| `" in md
    # what the night measured is what the next one plans from
    from pcfuzz.nightly.plan import Costs

    measured = Costs.load(toy / ".work" / "nightly_costs.json")
    assert measured.collect_s is not None and measured.tests == 6
    assert set(measured.startup_s) >= {"fuzz_toy", "fuzz_sound"}


def test_a_budget_too_small_is_an_incomplete_night_whose_report_opens_with_why(
    toy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fix(toy)
    report = tmp_path / "report"
    assert _pcfuzz(toy, "nightly", "--budget", "5", "--report", str(report),
                   "--properties", "off") == 3
    summary = json.loads((report / "summary.json").read_text())
    assert summary["exit_status"] == 3 and not summary["complete"]
    assert any(r.startswith("budget too small: fuzzing: 1 targets") for r in
               summary["incomplete_reasons"]), summary["incomplete_reasons"]
    md = (report / "summary.md").read_text().splitlines()
    assert md[2].startswith("**INCOMPLETE**"), md[:6]
    assert md[4].startswith("- budget too small: fuzzing"), md[:6]
    assert "INCOMPLETE" in capsys.readouterr().err


def test_a_target_that_cannot_run_makes_the_night_incomplete(toy: Path, tmp_path: Path) -> None:
    _fix(toy)
    seed_costs(toy)
    write_target(toy, "broken", TOY.replace("import atheris\n", "import atheris\nimport no_such_module\n"), {"a": b"{}"})
    report = tmp_path / "report"
    assert _pcfuzz(toy, "nightly", "--budget", "40", "--jobs", "2", "--report", str(report),
                   "--properties", "off", "--no-minimize", "--no-coverage") == 3
    summary = json.loads((report / "summary.json").read_text())
    rows = {t["name"]: t for t in summary["targets"]}
    assert rows["broken"]["status"] == "error" and "no_such_module" in rows["broken"]["error"]
    assert rows["toy"]["status"] == "ok" and summary["new_crashes"] == 0
    assert any(r.startswith("target broken: 0 executions") and "no_such_module" in r
               for r in summary["incomplete_reasons"]), summary["incomplete_reasons"]
    md = (report / "summary.md").read_text()
    assert "no_such_module" in md.split("## Fuzz targets")[1]  # the table says why
    junit = ET.parse(report / "junit.xml").getroot()
    (case,) = [c for c in junit.iter("testcase") if c.get("name") == "broken"]
    assert case.find("error") is not None


SLOW_IMPORT = TOY.replace("import atheris\n", "import atheris\nimport time\ntime.sleep(600)\n")


def test_a_target_slowed_at_import_makes_the_night_incomplete_not_green(
    toy: Path, tmp_path: Path
) -> None:
    # a test double of a target whose start-up eats its whole slot
    _fix(toy)
    seed_costs(toy)
    write_target(toy, "slow", SLOW_IMPORT, {"a": b"{}"})
    report = tmp_path / "report"
    status = _pcfuzz(toy, "nightly", "--budget", "40", "--jobs", "2", "--report", str(report),
                     "--properties", "off", "--no-minimize", "--no-coverage")
    summary = json.loads((report / "summary.json").read_text())
    assert status == 3, summary["incomplete_reasons"]
    assert any(r.startswith("target slow: 0 executions") for r in summary["incomplete_reasons"])
    rows = {t["name"]: t for t in summary["targets"]}
    assert rows["toy"]["executions"] > 0 and rows["slow"]["executions"] == 0


def test_a_property_path_that_selects_no_test_makes_the_night_incomplete(
    toy: Path, tmp_path: Path
) -> None:
    _fix(toy)
    seed_costs(toy)
    props = tmp_path / "props"
    props.mkdir()
    (props / "test_examples_only.py").write_text("def test_one():\n    assert True\n",
                                                 encoding="utf-8")
    report = tmp_path / "report"
    status = _pcfuzz(toy, "nightly", "--budget", "40", "--jobs", "2", "--report", str(report),
                     "--property-tests", str(props), "--no-minimize", "--no-coverage")
    summary = json.loads((report / "summary.json").read_text())
    assert status == 3
    assert any("pytest selected no test (exit 5)" in r for r in summary["incomplete_reasons"])


def test_every_argument_of_every_subcommand_has_help() -> None:
    import argparse

    from pcfuzz.cli import build_parser

    parser = build_parser()
    missing = []
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in [("pcfuzz", parser), *sub.choices.items()]:
        for action in p._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            if not action.help:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert missing == [], missing
