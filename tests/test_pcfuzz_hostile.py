"""The ``pcfuzz`` command against hostile files and arguments (issue 23, the tool side).

Each test pins one finding measured from outside the project:

- a property-regression document is data: it names contract entry points of a closed
  table and never code; anything else is refused before any import (``promote`` and
  the pytest replay of the store alike);
- a FIFO, a device, a terminal on standard input or a symlink loop is refused with a
  message, never waited on, never a traceback;
- malformed documents, corrupt sidecars and names that are not UTF-8 are a usage error
  (2) or a message, never a traceback.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pcfuzz.cli import main
from pcfuzz.contracts.errors import ContractError
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
                 "pcfuzz.conform.adapters:openai_chat", "--budget", "0", "--family",
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
