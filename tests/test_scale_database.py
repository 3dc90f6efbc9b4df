"""A hypothesis example database shared through a real redis server (``--database
redis://...``): what one runner finds, the next replays first; a server that goes away
makes the night incomplete and loses nothing the runner saved.

The server is a real ``redis-server`` on 127.0.0.1 and a free port (``.ci/run`` installs
the Debian package); outside CI the tests skip, with that reason, where it is absent.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

redis = pytest.importorskip("redis", reason="the scale extra (redis) is not installed")

from pcfuzz.cli import main  # noqa: E402
from pcfuzz.database import describe, lost, open_database  # noqa: E402
from pcfuzz.errors import UsageError  # noqa: E402


@dataclass
class Server:
    url: str
    proc: subprocess.Popen[bytes]

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed: .ci/run installs the Debian package")
        pytest.skip("redis-server is not installed (Debian package redis-server)")
    port = _free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)
    for _ in range(200):
        try:
            client.ping()
            break
        except redis.exceptions.ConnectionError:
            time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("redis-server did not answer")
    try:
        yield Server(url, proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def test_the_shared_database_holds_what_each_runner_saves_and_survives_the_server(
        server: Server, tmp_path: Path) -> None:
    a = open_database(server.url, local=tmp_path / "a", lost_marker=tmp_path / "a-lost.json")
    b = open_database(server.url, local=tmp_path / "b", lost_marker=tmp_path / "b-lost.json")
    a.save(b"test-key", b"found by a")
    assert set(b.fetch(b"test-key")) == {b"found by a"}  # through the server
    server.kill()
    a.save(b"test-key", b"found after the server went away")  # no error escapes
    # nothing a saved is lost: the local database has both
    assert set(a.fetch(b"test-key")) == {b"found by a", b"found after the server went away"}
    reason = lost(tmp_path / "a-lost.json")
    assert reason is not None and "stopped answering" in reason
    assert lost(tmp_path / "never-written.json") is None


def test_a_read_only_database_replays_and_writes_nothing(server: Server, tmp_path: Path) -> None:
    writer = open_database(server.url, local=tmp_path / "w")
    writer.save(b"k", b"v")
    reader = open_database(server.url, local=tmp_path / "r", readonly=True)
    assert set(reader.fetch(b"k")) == {b"v"}
    reader.save(b"k", b"not kept")
    assert set(writer.fetch(b"k")) == {b"v"}


def test_urls_are_checked_and_shown_without_a_password(tmp_path: Path) -> None:
    assert describe("redis://user:secret@host:6379/0") == "redis://***@host:6379/0"
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(UsageError, match="not a directory"):
        open_database(str(tmp_path / "file"), local=tmp_path / "l")


PROPERTY = '''
import os
from pathlib import Path

from hypothesis import given, settings, strategies as st


@settings(max_examples=300, derandomize=False, deadline=None)
@given(st.integers())
def test_below_a_thousand(x):
    seen = Path(os.environ["SEEN"])
    if not seen.exists():
        seen.write_text(str(x))
    assert x < 1000
'''


def _pytest(tests: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "pcfuzz.nightly.pytest_budget",
                           "-p", "no:cacheprovider", "-q", str(tests)], cwd=tests.parent,
                          env=env, capture_output=True, text=True, timeout=300, check=False)


def test_a_failure_one_runner_found_is_the_first_example_the_next_runner_replays(
        server: Server, tmp_path: Path) -> None:
    tests = tmp_path / "props" / "test_shared.py"
    tests.parent.mkdir()
    tests.write_text(PROPERTY, encoding="utf-8")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PCFUZZ_", "HYPOTHESIS"))}
    first: dict[str, str] = {}
    for runner, url in (("a", server.url), ("b", server.url), ("control", None)):
        env = dict(base, SEEN=str(tmp_path / f"seen-{runner}"),
                   PCFUZZ_HYPOTHESIS_DB=str(tmp_path / f"local-{runner}"))
        if url is not None:
            env.update(PCFUZZ_DATABASE_URL=url,
                       PCFUZZ_DATABASE_LOST=str(tmp_path / f"lost-{runner}.json"))
        else:
            env.update(PCFUZZ_DATABASE_URL=str(tmp_path / "local-control"))
        run = _pytest(tests, env)
        assert run.returncode == 1, run.stdout + run.stderr  # each finds the bug
        assert "x=1000" in run.stdout, run.stdout
        first[runner] = (tmp_path / f"seen-{runner}").read_text()
    # runner b never ran the test before, on its own disk: its first example is a's
    # minimal failure, from the shared server; a runner without it starts elsewhere
    assert first["b"] == "1000"
    assert first["control"] != "1000"
    assert lost(tmp_path / "lost-a.json") is None and lost(tmp_path / "lost-b.json") is None


KILLS_THE_SERVER = '''
import os
import signal

from hypothesis import given, strategies as st


@given(st.integers())
def test_first_kills_the_server(x):
    pid = int(os.environ["REDIS_PID"])
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    assert int(str(x)) == x


@given(st.integers())
def test_then_another_runs(x):
    assert x == x
'''


def test_a_night_whose_database_goes_away_is_incomplete_never_green(
        server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("atheris")
    from _toy import BUG, FIX, TOY, seed_costs, write_target

    fuzz = tmp_path / "fuzz"
    fuzz.mkdir()
    write_target(fuzz, "toy", TOY.replace(BUG, FIX), {"a": b"{}"})
    seed_costs(fuzz, tests=2)
    props = tmp_path / "props"
    props.mkdir()
    (props / "test_kill.py").write_text(KILLS_THE_SERVER, encoding="utf-8")
    monkeypatch.setenv("REDIS_PID", str(server.proc.pid))
    report = tmp_path / "report"
    status = main(["--fuzz-dir", str(fuzz), "nightly", "--budget", "40", "--jobs", "2",
                   "--report", str(report), "--property-tests", str(props),
                   "--database", server.url, "--hypothesis-db", str(tmp_path / "local"),
                   "--no-minimize", "--no-coverage"])
    summary = json.loads((report / "summary.json").read_text())
    assert status == 3, summary["incomplete_reasons"]
    assert any(r.startswith("example database lost: redis://127.0.0.1:")
               for r in summary["incomplete_reasons"]), summary["incomplete_reasons"]
    assert summary["properties"]["passed"] == 2  # the tests themselves passed


def test_conform_runners_share_a_redis_database_and_a_lost_server_is_incomplete(
        server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from _releases_early import releases_early

    from pcfuzz.conform import kit

    def run(local: str, examples: int) -> kit.Report:
        db = open_database(server.url, local=tmp_path / local)
        return kit.conform(releases_early, "anthropic-messages", families=["truncation"],
                           max_examples=examples, database=db, regressions=None)

    first = run("a", 100)
    assert first.findings, first.text()
    # Another runner, its own empty local directory: the server's copy is replayed first.
    second = run("b", 1)
    assert [f.key for f in second.findings] == [
        first.findings[0].key], second.text()
    monkeypatch.chdir(tmp_path)
    server.kill()
    # 50 examples: with 5, a random-seed run missed releases_early about one time in
    # fourteen (nothing replayed: the server is gone and this directory's database empty)
    base = ["conform", "--contract", "anthropic-messages", "--family", "truncation",
            "--max-examples", "50", "--database", server.url, "--regressions", "none"]
    assert main([*base, "--adapter", "pcfuzz.conform.adapters:anthropic_messages"]) == 3
    out = capsys.readouterr().out
    assert "INCOMPLETE: the shared example database was lost" in out, out
    # A finding wins over the lost server (exit 1, as in the nightly).
    assert main([*base, "--adapter", "_releases_early:releases_early"]) == 1
