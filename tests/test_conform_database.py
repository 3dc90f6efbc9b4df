"""The conformance kit on a hypothesis example database (``conform(database=...)``,
``pcfuzz conform --database``, ``--pcfuzz-database``): a failing example one run
saved is the first example the next run replays. The shared redis server is tested
in ``test_scale_database.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _releases_early import releases_early
from hypothesis.database import DirectoryBasedExampleDatabase

from pcfuzz.cli import main
from pcfuzz.conform import kit
from pcfuzz.database import open_database

ADAPTER = "pcfuzz.conform.adapters:anthropic_messages"


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def _run(db: Any, examples: int, **kw: Any) -> kit.Report:
    return kit.conform(releases_early, "anthropic-messages", families=["truncation"],
                       max_examples=examples, database=db, **kw)


def test_a_failure_one_run_saved_is_the_next_runs_first_example(tmp_path: Path) -> None:
    db = DirectoryBasedExampleDatabase(str(tmp_path / "db"))
    first = _run(db, 100)
    assert [f.family for f in first.findings] == ["truncation"], first.text()
    assert _files(tmp_path / "db")
    # One example, seeded, without the database: the seed draws no failing stream ...
    assert not _run(None, 1, seed=0).findings
    # ... with it, the saved (shrunk) example is replayed first: found in one example
    # (hypothesis' minimal example, which may differ from the kit's pick of the same
    # size, e.g. in a call id: the same root cause).
    again = _run(db, 1)
    assert [f.key for f in again.findings] == [
        first.findings[0].key], again.text()
    # Every family keys its own examples: another family replays none of truncation's.
    other = kit.conform(releases_early, "anthropic-messages", families=["valid"],
                        max_examples=1, database=db)
    assert not other.findings
    with pytest.raises(kit.UsageError, match="a seed, not both"):
        _run(db, 1, seed=0)


def test_a_read_only_database_replays_and_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "db"
    _run(open_database(str(root), local=root, readonly=True), 100)
    assert not _files(root)
    _run(open_database(str(root), local=root), 100)
    saved = sorted(_files(root))
    again = _run(open_database(str(root), local=root, readonly=True), 1)
    assert again.findings and sorted(_files(root)) == saved


def test_pcfuzz_conform_database_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    base = ["conform", "--contract", "anthropic-messages", "--adapter", ADAPTER,
            "--family", "truncation", "--max-examples", "5"]
    for bad, message in [(["--database", "a-file"], "not a directory"),
                         (["--database", "redis://127.0.0.1:notaport/0"], "redis"),
                         (["--database", "db", "--seed", "1"], "exclude each other")]:
        assert main([*base, *bad]) == 2
        assert message in capsys.readouterr().err
    assert main([*base, "--database", "db", "--json", "--regressions", "none"]) == 0
    assert json.loads(capsys.readouterr().out)["database"] == "db"
    assert main([*base, "--database-readonly"]) == 0
    assert "example database: .pcfuzz/conform-db (read-only)" in capsys.readouterr().out
    assert not _files(tmp_path / ".pcfuzz" / "conform-db")


def test_the_pytest_option_passes_the_database_to_the_kit(tmp_path: Path) -> None:
    (tmp_path / "test_early.py").write_text(
        "from pcfuzz.conform.pytest_plugin import pcfuzz_conformance\n"
        "from _releases_early import releases_early\n"
        "test_early = pcfuzz_conformance('anthropic-messages', releases_early,\n"
        "                                families=['truncation'], regressions='none')\n",
        encoding="utf-8")
    # Autoload off, the plugin by module (as tests/test_conformance.py's tutorial runs).
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONPATH=str(Path(__file__).parent))

    def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
             "pcfuzz.conform.pytest_plugin", "test_early.py", *args],
            cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)

    readonly = pytest_run("--pcfuzz-database-readonly", "--pcfuzz-max-examples", "100")
    assert readonly.returncode == 1, readonly.stdout + readonly.stderr
    assert not _files(tmp_path / ".pcfuzz" / "conform-db")
    first = pytest_run("--pcfuzz-database", "db", "--pcfuzz-max-examples", "100")
    assert first.returncode == 1, first.stdout + first.stderr
    assert _files(tmp_path / "db")
    bad = pytest_run("--pcfuzz-database", "test_early.py")
    assert bad.returncode == 1 and "not a directory" in bad.stdout, bad.stdout + bad.stderr
    # Inside a night (`pcfuzz nightly --database`), with no option: the night's
    # database and local directory; outside a night the variables mean nothing.
    night = dict(PCFUZZ_DATABASE_URL=str(tmp_path / "night-db"),
                 PCFUZZ_HYPOTHESIS_DB=str(tmp_path / "night-local"),
                 PCFUZZ_DATABASE_LOST=str(tmp_path / "night-lost.json"))
    env.update(night)
    outside = pytest_run("--pcfuzz-max-examples", "100")
    assert outside.returncode == 1, outside.stdout + outside.stderr
    assert not (tmp_path / "night-db").exists()
    env["PCFUZZ_NIGHTLY"] = "1"
    inside = pytest_run("--pcfuzz-max-examples", "100")
    assert inside.returncode == 1, inside.stdout + inside.stderr
    assert _files(tmp_path / "night-db")
