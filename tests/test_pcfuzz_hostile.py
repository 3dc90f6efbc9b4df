"""The ``pcfuzz`` command against hostile files and arguments (issue 23, the tool side).

Each test pins one finding measured from outside the project:

- a property-regression document is data: it names contract entry points of a closed
  table and never code; anything else is refused before any import (``promote`` and
  the pytest replay of the store alike);
- a FIFO, a device, a terminal on standard input or a symlink loop is refused with a
  message, never waited on, never a traceback;
- malformed documents, corrupt sidecars, names that are not UTF-8, bad numbers, a
  missing ``harness`` extra, ``pcfuzz mutants`` with nothing to judge: each is a usage
  error (2) or incomplete (3) with a message;
- an exception no subcommand anticipated is a bug: one line, the traceback in a file,
  exit status 70; Ctrl-C is 130, a full disk on standard output 3, a reader that stops
  early ends the run quietly (subprocesses: what an in-process run cannot show);
- ``pcfuzz check`` and ``pcfuzz --help`` import no other subcommand and none of the
  harness.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pcfuzz.cli import build_parser, main
from pcfuzz.cli.app import TABLE
from pcfuzz.cli.common import count, jobs, megabytes, seconds, seconds_or_zero, whole_seconds
from pcfuzz.contracts.errors import ContractError
from pcfuzz.contracts.registry import CONTRACTS as REGISTERED
from pcfuzz.contracts.registry import entry as registry_entry
from pcfuzz.engine import entry_points
from pcfuzz.engine.property_regressions import (
    FORMAT,
    DocumentError,
    build_document,
    load,
    replay,
    validate,
)
from pcfuzz.engine.regressions import entries
from pcfuzz.engine.show import Recorder, recording
from pcfuzz.errors import EXIT_BUG, HARNESS_MODULES

REPO = Path(__file__).resolve().parent.parent
SEED = REPO / "fuzz" / "corpus" / "fuzz_strict_json" / "array_scalars.json"
TIMEOUT_S = 120


def _sse() -> bytes:
    document = json.loads((REPO / "fixtures" / "wire" / "openai_chat.sse.json").read_text())
    return str(document["sse"]).encode("utf-8")


def _run(args: list[str], cwd: Path, *, env: dict[str, str] | None = None,
         stdin: Any = subprocess.DEVNULL) -> subprocess.CompletedProcess[bytes]:
    """``python -m pcfuzz ARGS``; a hang fails the test at the timeout."""
    return subprocess.run([sys.executable, "-m", "pcfuzz", *args], cwd=cwd,
                          env=env or dict(os.environ), stdin=stdin, capture_output=True,
                          timeout=TIMEOUT_S, check=False)


TOY = '''#!/usr/bin/env python3
"""A toy target: no atheris needed to replay it."""


def TestOneInput(data: bytes) -> None:
    if data[:3] == b"FUZ":
        raise KeyError("toy bug")
'''


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """A project tree with one toy target; returns its fuzz dir."""
    fuzz = tmp_path / "fuzz"
    (fuzz / "corpus" / "fuzz_toy").mkdir(parents=True)
    (fuzz / "fuzz_toy.py").write_text(TOY, encoding="utf-8")
    (fuzz / "fuzz_toy.py").chmod(0o755)
    (fuzz / "corpus" / "fuzz_toy" / "seed").write_bytes(b"{}")
    (tmp_path / "tests" / "regressions").mkdir(parents=True)
    return fuzz


# -- 1. a property-regression document never names code ---------------------------


PAYLOAD = '''\
from pathlib import Path
Path("imported").write_text("the payload's module was imported")


def run(*args, **kwargs):
    Path("called").write_text("the payload ran")
'''


def _document(calls: list[Any], fmt: str = FORMAT, **extra: Any) -> dict[str, Any]:
    return {"format": fmt, "test": "tests/test_x.py::test_y", "contract": None,
            "revision": None, "events": [], "calls": calls, "arguments": {},
            "failure": {"exception": "KeyError", "message": "m", "frames": [],
                        "where": None, "fingerprint": "KeyError-0", "bug": None},
            "expect": "pass", **extra}


def _call(name: str, *args: Any, **more: Any) -> dict[str, Any]:
    return {"call": name, "instance": None, "args": list(args), "kwargs": {},
            "outcome": "returned", **more}


HOSTILE = {
    # the measured probe: format 1 named a module and a function
    "format 1: os.mkdir": _document(
        [{"module": "os", "call": "mkdir", "instance": None, "args": ["pwned"],
          "kwargs": {}, "outcome": "returned"}], fmt="pcfuzz-property-regression/1"),
    "format 1: a module of the checkout": _document(
        [{"module": "pcfuzz_payload", "call": "run", "instance": None, "args": [],
          "kwargs": {}, "outcome": "returned"}], fmt="pcfuzz-property-regression/1"),
    "os.mkdir": _document([_call("os.mkdir", "pwned")]),
    "builtins.eval": _document([_call("builtins.eval", "__import__('os').mkdir('pwned')")]),
    "a module field": _document([_call("openai_chat.parse_events", [], module="pcfuzz_payload")]),
    "a private module": _document([_call("openai_chat._stream.parse_events", [])]),
    "a dunder": _document([_call("openai_chat.ChatCompletionStream.__init__")]),
    "a file reader": _document([_call("fixtures.load_fixture", "/etc/passwd")]),
    "a non-string name": _document([_call("x") | {"call": ["pcfuzz_payload", "run"]}]),
}


@pytest.mark.parametrize("doc", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_property_regression_document_never_names_code(
    doc: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "pcfuzz_payload.py").write_text(PAYLOAD, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "KeyError-0.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    store = tmp_path / "store"
    assert main(["--regressions-dir", str(store), "promote", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pcfuzz promote: ") and "Traceback" not in err, err
    assert "entry point" in err or "names modules" in err, err
    with pytest.raises(DocumentError):  # the pytest replay reads it through load()
        load(path)
    with pytest.raises(DocumentError):
        replay(doc)
    assert not any((tmp_path / name).exists() for name in ("pwned", "imported", "called"))
    assert "pcfuzz_payload" not in sys.modules
    assert not store.exists()


def test_the_pytest_replay_of_a_store_refuses_a_hostile_document(tmp_path: Path) -> None:
    store = tmp_path / "regressions"
    (store / "properties").mkdir(parents=True)
    (store / "properties" / "KeyError-0.json").write_text(
        json.dumps(HOSTILE["format 1: os.mkdir"]), encoding="utf-8")
    env = dict(os.environ, PCFUZZ_REGRESSIONS_DIR=str(store))
    env = {k: v for k, v in env.items() if not k.startswith("PYTEST_XDIST_")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(REPO / "tests" / "test_property_regressions.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    assert proc.returncode == 1 and "1 failed" in proc.stdout, proc.stdout + proc.stderr
    assert "DocumentError" in proc.stdout and "names modules" in proc.stdout
    assert not (tmp_path / "pwned").exists()


def test_the_entry_point_table_holds_public_contract_callables_only() -> None:
    table = entry_points.entries()
    for key in ("openai_chat.parse_events", "openai_chat.ChatCompletionStream",
                "openai_chat.ChatCompletionStream.feed", "strict_json.loads",
                "sse.SSEDecoder.feed", "results.bind_results", "wire.sse_to_events"):
        assert key in table, key
    for key, entry in table.items():
        assert not any(part.startswith("_") for part in key.split(".")), key
        assert entry.function.__module__.startswith("pcfuzz.contracts."), key
        assert not (isinstance(entry.function, type)
                    and issubclass(entry.function, BaseException)), key
    assert set(entry_points.EXCLUDED).isdisjoint(table)
    for name in ("os.mkdir", "builtins.eval", "", ["strict_json", "loads"], None):
        assert entry_points.lookup(name) is None


def test_recorded_calls_are_written_as_entry_points_and_replay() -> None:
    from pcfuzz.contracts import strict_json
    from pcfuzz.contracts.openai_chat import ChatCompletionStream, parse_events

    space: dict[str, Any] = {"ChatCompletionStream": ChatCompletionStream,
                             "parse_events": parse_events, "loads": strict_json.loads}
    rec = Recorder()
    with recording([space], rec):
        stream = space["ChatCompletionStream"]()
        for call in (lambda: stream.feed({"bad": 1}), lambda: space["parse_events"]([]),
                     lambda: space["loads"]("[1,")):
            with pytest.raises(ContractError):
                call()
    doc = build_document(test="t", calls=rec.calls, arguments={}, exc=KeyError("x"))
    assert [c["call"] for c in doc["calls"]] == [
        "openai_chat.ChatCompletionStream", "openai_chat.ChatCompletionStream.feed",
        "openai_chat.parse_events", "strict_json.loads"]
    assert doc["contract"] == "openai-chat" and doc["unreplayed"] == []
    assert validate(json.loads(json.dumps(doc))) is not None
    result = replay(doc)
    assert not result.reproduces and result.calls == 4, result.text()


# -- 2. nothing blocks: FIFOs, devices, a terminal ----------------------------------


@pytest.mark.parametrize("argv", [
    ["check", "--contract", "openai-chat", "{fifo}"],
    ["show", "{fifo}", "--target", "strict-json"],
    ["promote", "{fifo}", "--target", "strict-json"],
    ["triage", "{fifo}", "--target", "strict-json"],
    ["check", "--contract", "openai-chat", "/dev/zero"],
], ids=["check", "show", "promote", "triage", "check a device"])
def test_a_fifo_or_a_device_is_refused_without_blocking(argv: list[str], tmp_path: Path) -> None:
    fifo = tmp_path / "capture.sse"
    os.mkfifo(fifo)
    proc = _run([a.format(fifo=fifo) for a in argv], tmp_path)
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, err
    assert "not a regular file" in err or "not a directory" in err, err
    assert "Traceback" not in err


def test_check_refuses_a_terminal_on_standard_input(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    try:
        proc = _run(["check", "--contract", "openai-chat", "-"], tmp_path, stdin=follower)
    finally:
        os.close(leader)
        os.close(follower)
    assert proc.returncode == 2 and b"standard input is a terminal" in proc.stderr


# -- 3. usability: a message and a usage status, never a traceback -------------------


@pytest.mark.parametrize("argv", [
    ["check", "--contract", "openai-chat", "{loop}"],
    ["show", "{loop}", "--target", "strict-json"],
    ["promote", "{loop}", "--target", "strict-json"],
    ["triage", "{loop}", "--target", "strict-json"],
    ["--work-dir", "{loop}", "list"],
    ["--fuzz-dir", "{loop}", "list"],
], ids=["check", "show", "promote", "triage", "work dir", "fuzz dir"])
def test_a_symlink_loop_is_a_usage_error(argv: list[str], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    assert main([a.format(loop=tmp_path / "a") for a in argv]) == 2
    err = capsys.readouterr().err
    assert "symlink loop" in err.lower() and "Traceback" not in err, err


def _raw(text: str | bytes) -> bytes:
    return text.encode("utf-8") if isinstance(text, str) else text


#: The start of a document of the current format, as text.
HEAD = '{"format": "' + FORMAT + '", '
MALFORMED: dict[str, bytes] = {
    "no failure.exception": _raw(json.dumps(_document([]) | {"failure": {}})),
    "an unknown entry": _raw(json.dumps(_document([_call("nope.nope")]))),
    "calls: [5]": _raw(json.dumps(_document([5]))),  # type: ignore[list-item]
    "calls: an object": _raw(json.dumps(_document([]) | {"calls": {}})),
    "args: a string": _raw(json.dumps(_document([_call("strict_json.loads") | {"args": "x"}]))),
    "arguments that do not fit": _raw(json.dumps(_document(
        [_call("strict_json.loads", "[]") | {"kwargs": {"no_such": 1}}]))),
    "instance: true": _raw(json.dumps(_document([_call("strict_json.loads", "[]")
                                                 | {"instance": True}]))),
    "expect: maybe": _raw(json.dumps(_document([]) | {"expect": "maybe"})),
    "deep nesting": _raw(HEAD + '"calls": ' + "[" * 100_000),
    "deep but valid JSON": _raw(HEAD + '"calls": [' + "[" * 5_000 + "]" * 5_000 + "]}"),
    "NaN": _raw(HEAD + '"calls": [], "failure": {"exception": "E", "message": NaN}}'),
    "not UTF-8": _raw(HEAD + '"x": "') + b'\xff"}',
    "not JSON": _raw(HEAD),
}


@pytest.mark.parametrize("raw", list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_malformed_property_document_is_a_usage_error(
        raw: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "doc.json"
    path.write_bytes(raw)
    store = tmp_path / "store"
    assert main(["--regressions-dir", str(store), "promote", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pcfuzz promote: ") and "Traceback" not in err, err
    assert err.count("\n") == 1, err
    assert not store.exists()


def test_a_malformed_saved_conform_scenario_is_a_usage_error_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from pcfuzz.conform.kit import REGRESSION_FORMAT

    monkeypatch.chdir(tmp_path)
    saved = tmp_path / "saved" / "openai-chat"
    saved.mkdir(parents=True)
    (saved / "truncation-0.json").write_text(json.dumps(
        {"format": REGRESSION_FORMAT, "contract": "openai-chat", "family": "truncation",
         "mutation": "m", "label": "safety", "expect": "nothing", "strict_expect": "nothing",
         "events": [], "calls": [5]}), encoding="utf-8")
    (saved / "not-json.json").write_text("{", encoding="utf-8")  # not a scenario: skipped
    assert main(["conform", "--contract", "openai-chat", "--adapter",
                 "pcfuzz.conform.adapters:openai_chat", "--max-examples", "1", "--family",
                 "truncation", "--regressions", str(tmp_path / "saved")]) == 2
    err = capsys.readouterr().err
    assert "truncation-0.json is malformed" in err and "Traceback" not in err, err


def test_corrupt_sidecars_never_stop_replay_list_or_the_pytest_replay(
        toy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = toy.parent / "tests" / "regressions" / "fuzz_toy"
    store.mkdir(parents=True)
    for name, data, sidecar in [("a", b"{}", "{not json"), ("b", b"[]", "[1, 2]"),
                                ("c", b"FUZ!", '{"expect": "crash"}'),
                                ("d", b"x", "[" * 100_000)]:
        (store / f"{name}.bin").write_bytes(data)
        (store / f"{name}.meta.json").write_text(sidecar, encoding="utf-8")
    found = {e.path.name: e for e in entries(store)}
    assert sorted(n for n, e in found.items() if e.problem) == ["a.bin", "b.bin", "d.bin"]
    assert found["a.bin"].expect == "pass" and found["c.bin"].expect == "crash"
    assert main(["--fuzz-dir", str(toy), "list"]) == 0
    assert "4 (3 unreadable sidecars)" in capsys.readouterr().out
    assert main(["--fuzz-dir", str(toy), "replay", "toy"]) == 0
    out = capsys.readouterr().out
    assert out.count("bad sidecar") == 3 and "still failing (known) c.bin" in out, out
    env = dict(os.environ, PCFUZZ_FUZZ_DIR=str(toy),
               PCFUZZ_REGRESSIONS_DIR=str(toy.parent / "tests" / "regressions"))
    env = {k: v for k, v in env.items() if not k.startswith("PYTEST_XDIST_")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "regression",
         str(REPO / "tests" / "test_fuzz_targets.py")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 passed" in proc.stdout and "1 xfailed" in proc.stdout, proc.stdout


def test_a_file_name_that_is_not_utf8_is_shown_escaped_under_a_strict_locale(
        tmp_path: Path) -> None:
    name = os.fsdecode(b"capture-\xff.sse")
    (tmp_path / name).write_bytes(_sse())
    env = dict(os.environ, LC_ALL="C.UTF-8", PYTHONIOENCODING="utf-8:strict")
    for argv, status in ([["check", "--contract", "openai-chat", name], 0],
                         [["check", "--contract", "openai-chat", name + "-missing"], 2]):
        proc = _run(argv, tmp_path, env=env)
        assert proc.returncode == status, proc.stderr
        assert b"capture-\\xff.sse" in proc.stdout + proc.stderr
        assert b"Traceback" not in proc.stderr
    proc = _run(["check", "--contract", "openai-chat", "--json", name], tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["source"] == "capture-\\xff.sse"


def test_drift_with_an_unknown_revision_is_a_usage_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    for sdk in ("openai", "anthropic", "google.genai"):
        pytest.importorskip(sdk)
    assert main(["drift", "--revision", "2025-01-01"]) == 2
    err = capsys.readouterr().err
    assert "ships no revision '2025-01-01'" in err and "Traceback" not in err


BLOCKER = f'''\
import sys


class _NoHarness:
    """The harness extra is not installed: its modules cannot be found."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {sorted(HARNESS_MODULES)!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _NoHarness())
'''


@pytest.mark.parametrize("argv", [
    ["conform", "--contract", "openai-chat", "--adapter",
     "pcfuzz.conform.adapters:openai_chat", "--budget", "1"],
    ["nightly", "--budget", "5", "--report", "report"],
    ["mutants", "--budget", "5"],
    ["bench", "--quick"],
    ["fuzz", "strict-json", "--time", "1"],
    ["minimize", "strict-json"],
    ["replay", "strict-json"],
    ["triage", ".", "--target", "strict-json"],
    ["show", str(SEED), "--target", "strict-json"],
    ["promote", str(SEED), "--target", "strict-json"],
], ids=lambda argv: argv[0])
def test_without_the_harness_extra_a_subcommand_names_the_install_command(
        argv: list[str], tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    here = tmp_path / "here"
    here.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(site), *filter(None, [os.environ.get("PYTHONPATH")])]),
        PCFUZZ_WORK_DIR=str(tmp_path / "work"), PCFUZZ_REGRESSIONS_DIR=str(tmp_path / "reg"))
    proc = _run(argv, here, env=env)
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, err
    assert err.startswith(f"pcfuzz {argv[0]}: needs the harness extra") and err.count("\n") == 1
    assert "pip install 'pcfuzz[harness]'" in err
    assert not any(here.iterdir()) and not (tmp_path / "work").exists()
    # check and list need no extra
    assert _run(["list"], here, env=env).returncode == 0
    (here / "capture.sse").write_bytes(_sse())
    assert _run(["check", "--contract", "openai-chat", "capture.sse"], here,
                env=env).returncode == 0


#: The argparse types that bound a number (every numeric option uses one).
NUMBER_TYPES = (seconds, seconds_or_zero, whole_seconds, jobs, count, megabytes)
#: Numeric options that take any integer (a seed).
ANY_INTEGER = {("conform", "--seed")}
#: Positional and required arguments that let a subcommand's options be parsed.
REQUIRED = {"fuzz": ["strict-json"], "triage": ["."], "promote": ["x"],
            "conform": ["--contract", "openai-chat", "--adapter", "m:f"]}


def _numeric_options() -> list[tuple[str, str, Any]]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    out = []
    for name, p in sub.choices.items():  # type: ignore[attr-defined]
        for action in p._actions:
            if action.type in (int, float) and (name, action.option_strings[0]) not in ANY_INTEGER:
                out.append((name, action.option_strings[0], action.type))
            elif action.type in NUMBER_TYPES:
                out.append((name, action.option_strings[0], action.type))
    return out


def test_every_numeric_option_is_bounded_by_its_type() -> None:
    options = _numeric_options()
    assert len(options) >= 14, options
    unbounded = [(name, opt) for name, opt, kind in options if kind not in NUMBER_TYPES]
    assert unbounded == [], f"plain int/float options accept -5, nan and inf: {unbounded}"


@pytest.mark.parametrize("value", ["-5", "0", "nan", "inf", "-inf", "1e400", "10**9",
                                   "", "5 s", "1e99"])
def test_a_negative_zero_or_not_finite_number_is_a_usage_error(
        value: str, capsys: pytest.CaptureFixture[str]) -> None:
    for name, option, kind in _numeric_options():
        if value == "0" and kind is seconds_or_zero:
            continue
        with pytest.raises(SystemExit) as stop:
            main([name, *REQUIRED.get(name, []), option, value])
        assert stop.value.code == 2, (name, option, value)
        err = capsys.readouterr().err
        assert f"argument {option}" in err and "Traceback" not in err, err


def test_mutants_with_nothing_to_judge_says_so(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    import pcfuzz._data

    assert main(["mutants", "--budget", "5", "--select", "contracts/no_such_file.py"]) == 2
    assert "matches no mutation site" in capsys.readouterr().err
    monkeypatch.setattr(pcfuzz._data, "checkout_root", lambda: None)  # an installed wheel
    assert main(["mutants", "--budget", "5"]) == 2
    err = capsys.readouterr().err
    assert "installed pcfuzz does not ship" in err and "killed" not in err


# -- 4. one place maps every ending to its status ------------------------------------


def test_an_unanticipated_exception_is_a_bug_with_its_traceback_in_a_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import pcfuzz.cli.list_targets

    def planted(args: object) -> int:
        raise ZeroDivisionError("planted")

    monkeypatch.setattr(pcfuzz.cli.list_targets, "run", planted)
    assert main(["--work-dir", str(tmp_path / "work"), "list"]) == EXIT_BUG
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "pcfuzz list: internal error, a bug in pcfuzz (ZeroDivisionError: planted)" in err
    (report,) = (tmp_path / "work" / "bugs").glob("bug-*.txt")
    assert str(report) in err
    text = report.read_text(encoding="utf-8")
    assert "Traceback" in text and "ZeroDivisionError: planted" in text and "'list'" in text


def test_an_os_error_on_a_named_path_is_a_usage_error(
        toy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--fuzz-dir", str(toy), "--work-dir", "/dev/null/work", "fuzz", "toy",
                 "--time", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pcfuzz fuzz: cannot use /dev/null/work") and "Traceback" not in err


def _spawn(args: list[str], cwd: Path, **kwargs: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "pcfuzz", *args], cwd=cwd,
                            stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs)


#: The number of read(2), by machine, as /proc/PID/syscall shows it.
READ_SYSCALL = {"x86_64": 0, "aarch64": 63}


def _wait_until_reading_stdin(pid: int) -> None:
    """Until the process is blocked reading file descriptor 0 (Linux), or a while."""
    number = READ_SYSCALL.get(os.uname().machine)
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            fields = Path(f"/proc/{pid}/syscall").read_text().split()
        except OSError:
            time.sleep(5)  # no way to look: past start-up on any machine this runs on
            return
        if number is None or (fields[:2] and fields[0] == str(number)
                              and int(fields[1], 16) == 0):
            return
        time.sleep(0.05)


def test_ctrl_c_ends_with_130_and_one_line(tmp_path: Path) -> None:
    # a check reading standard input from a pipe nobody writes: interrupted while waiting
    proc = subprocess.Popen([sys.executable, "-m", "pcfuzz", "check", "--contract",
                             "openai-chat", "-"], cwd=tmp_path, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _wait_until_reading_stdin(proc.pid)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 130, err
    assert err.decode() == "pcfuzz check: interrupted\n"


def test_a_full_disk_on_standard_output_is_incomplete(tmp_path: Path) -> None:
    (tmp_path / "capture.sse").write_bytes(_sse())
    with open("/dev/full", "wb") as full:
        proc = _spawn(["check", "--contract", "openai-chat", "capture.sse"], tmp_path,
                      stdout=full)
        _, err = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode == 3, err
    assert err.decode().startswith("pcfuzz check: could not write standard output")
    assert b"Traceback" not in err


def test_a_reader_that_stops_early_ends_the_run_quietly(tmp_path: Path) -> None:
    proc = _spawn(["--work-dir", str(tmp_path / "work"), "--help"], tmp_path,
                  stdout=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.close()  # nobody reads: the first write fails with a broken pipe
    _, err = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode in (0, 2, 3) and b"Traceback" not in err, err
    (tmp_path / "capture.sse").write_bytes(_sse() * 200)
    proc = _spawn(["check", "--contract", "openai-chat", "--json", "capture.sse"], tmp_path,
                  stdout=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(timeout=TIMEOUT_S)
    assert proc.returncode in (1, 3) and b"Traceback" not in err, err


def test_only_the_app_turns_an_outcome_into_an_exit_status() -> None:
    offenders = []
    for path in sorted((REPO / "pcfuzz" / "cli").glob("*.py")):
        if path.name == "app.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ExceptHandler) and (
                    node.type is None or isinstance(node.type, ast.Name)
                    and node.type.id in {"Exception", "BaseException", "SystemExit"}):
                offenders.append(f"{path.name}:{node.lineno}: broad except")
            if isinstance(node, ast.Attribute) and node.attr == "exit" and isinstance(
                    node.value, ast.Name) and node.value.id == "sys":
                offenders.append(f"{path.name}:{node.lineno}: sys.exit")
    assert offenders == []


# -- 5. start-up: the chosen subcommand only -------------------------------------------


_MODULES = "import sys\nfrom pcfuzz.cli import main\ntry:\n    main(sys.argv[1:])\n" \
           "finally:\n    print(' '.join(sorted(sys.modules)))\n"


def _modules_after(argv: list[str], cwd: Path) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", _MODULES, *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    return set(proc.stdout.splitlines()[-1].split())


def test_check_imports_neither_the_harness_nor_another_subcommand(tmp_path: Path) -> None:
    (tmp_path / "capture.sse").write_bytes(_sse())
    modules = _modules_after(["check", "--contract", "openai-chat", "capture.sse"], tmp_path)
    assert "pcfuzz.fuzz.harness.verdict" in modules  # the check ran
    assert not {m for m in modules if m.split(".")[0] in HARNESS_MODULES}
    assert not {m for m in modules if m.startswith(
        ("pcfuzz.nightly", "pcfuzz.conform", "pcfuzz.bench", "pcfuzz.strategies",
         "pcfuzz.engine"))}
    assert {m for m in modules if m.startswith("pcfuzz.cli.")} == {
        "pcfuzz.cli.app", "pcfuzz.cli.check", "pcfuzz.cli.common"}
    assert "pcfuzz._data" not in modules  # the epilog's lookup is for --help only


#: What ``pcfuzz check`` never imports, whatever it checks: the harness extra, the
#: metadata reader (``--version`` reads the metadata file itself) and what it pulls in,
#: and what only other subcommands run (processes, archives, schemas, the network).
NOT_FOR_CHECK = ("hypothesis", "atheris", "jsonschema", "pytest", "importlib.metadata",
                 "email", "zipfile", "tarfile", "csv", "socket", "subprocess", "tempfile",
                 "sqlite3", "multiprocessing", "concurrent", "asyncio", "unittest")
_CHECK = ("import sys\nfrom pcfuzz.cli import main\nstatus = main(sys.argv[1:])\n"
          "print(status)\nprint(' '.join(sorted(sys.modules)))\n")


def _check_imports(argv: list[str], cwd: Path) -> tuple[int, set[str]]:
    """The exit status of ``pcfuzz ARGV`` and every module it imported."""
    proc = subprocess.run([sys.executable, "-c", _CHECK, *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    lines = proc.stdout.splitlines()
    assert len(lines) >= 2, proc.stderr
    return int(lines[-2]), set(lines[-1].split())


def _providers(modules: set[str]) -> set[str]:
    """The contracts whose provider package is among ``modules``."""
    return {c.name for c in REGISTERED if f"pcfuzz.contracts.{c.package}" in modules}


@pytest.mark.parametrize("contract", [c.name for c in REGISTERED])
def test_check_imports_the_package_of_its_contract_only(contract: str, tmp_path: Path) -> None:
    """Start-up of ``pcfuzz check``: its imports are its cost (issue 21), so one
    contract's capture imports that contract's parser and nothing of the others, no
    fixture reader for raw SSE, and none of :data:`NOT_FOR_CHECK`."""
    package = registry_entry(contract).package
    document = json.loads((REPO / "fixtures" / "wire" / f"{package}.sse.json").read_text())
    (tmp_path / "capture.sse").write_bytes(str(document["sse"]).encode("utf-8"))
    status, modules = _check_imports(["check", "--contract", contract, "capture.sse"],
                                     tmp_path)
    assert status == 0  # a complete valid turn: the whole parse ran
    assert _providers(modules) == {contract}
    assert "pcfuzz.contracts.fixtures" not in modules
    assert "pcfuzz.contracts.provenance" not in modules
    assert sorted(m for m in modules if m.split(".")[0] in NOT_FOR_CHECK
                  or m in NOT_FOR_CHECK or m.startswith(tuple(f"{n}." for n in NOT_FOR_CHECK))
                  ) == []


def test_check_of_a_fixture_imports_its_contract_and_the_fixture_reader(
        tmp_path: Path) -> None:
    fixture = REPO / "fixtures" / "wire" / "openai_chat.sse.json"
    status, modules = _check_imports(["check", "--contract", "openai-chat", str(fixture)],
                                     tmp_path)
    assert status == 0
    assert _providers(modules) == {"openai-chat"}
    assert "pcfuzz.contracts.fixtures" in modules


def test_an_unknown_revision_is_refused_from_the_registry_alone(tmp_path: Path) -> None:
    """``--revision`` lists the revisions the registry names: a usage error imports no
    provider package, and names every shipped revision."""
    (tmp_path / "capture.sse").write_bytes(_sse())
    proc = subprocess.run(
        [sys.executable, "-c", _MODULES, "check", "--contract", "openai-chat",
         "--revision", "1999-01-01", "capture.sse"],
        cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    modules = set(proc.stdout.splitlines()[-1].split())
    assert proc.returncode == 2
    assert _providers(modules) == set()
    shipped = sorted({r for c in REGISTERED for r in c.revisions})
    assert shipped and all(r in proc.stderr for r in shipped), proc.stderr


def test_help_lists_every_subcommand_without_importing_one(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", _MODULES, "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    modules = set(proc.stdout.splitlines()[-1].split())
    assert {m for m in modules if m.startswith("pcfuzz.cli.")} == {"pcfuzz.cli.app"}
    assert not {m for m in modules if m.startswith("pcfuzz.contracts")}
    flat = "".join(proc.stdout.split())
    for name, _module, help in TABLE:
        assert f"    {name} " in proc.stdout and "".join(help.split()) in flat, name


def test_the_version_is_the_installed_metadata() -> None:
    from pcfuzz import version

    assert version() == importlib.metadata.version("pcfuzz")
