"""The ``pcfuzz`` command against hostile files and arguments (issue 23, the tool side).

Each test pins one finding measured from outside the project:

- a FIFO, a device, a terminal on standard input or a symlink loop is refused with a
  message, never waited on, never a traceback;
- corrupt sidecars and names that are not UTF-8 are a message, never a traceback.
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
from pcfuzz.engine.regressions import entries

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
