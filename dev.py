#!/usr/bin/env python3
"""The project's two entry points; each sets itself up the first time.

    python3 dev.py fuzz [pcfuzz nightly options]   # short fuzz campaign + report
    python3 dev.py test                            # the full test suite

Needs nothing but Python 3.11+. The first run creates ``.venv`` and installs the
project with its ``harness``, ``oracles``, ``frameworks``, ``scale`` and ``dev`` extras; a later run reinstalls only when
``pyproject.toml`` changed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".pcfuzz-installed"

# pytest exit codes: 0 passed, 1 failed, 5 "no tests collected".
PYTEST_NO_TESTS = 5


def log(message: str) -> None:
    print(f"[dev] {message}", flush=True)


def ensure_venv() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py may run on an old python3
        sys.exit(f"[dev] Python 3.11+ is required, this is {sys.version.split()[0]}")
    extras = ["pytest-xdist"]  # the runs below use PARALLEL
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()
                            + " ".join(extras).encode()).hexdigest()
    if STAMP.exists() and STAMP.read_text().strip() == wanted and PY.exists():
        return
    if not PY.exists():
        log(f"creating virtual environment {VENV.name}/")
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    log("installing pcfuzz with extras [harness,oracles,frameworks,scale,dev] (first run only)")
    must([str(PY), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-e", f"{ROOT}[harness,oracles,frameworks,scale,dev]"])
    STAMP.write_text(wanted)


def must(cmd: list[str], env: dict[str, str] | None = None) -> None:
    code = subprocess.call(cmd, cwd=ROOT, env=env)
    if code != 0:
        sys.exit(code)


def pytest_step(label: str, cmd: list[str], env: dict[str, str]) -> None:
    log(label)
    code = subprocess.call(cmd, cwd=ROOT, env=env)
    if code == PYTEST_NO_TESTS:
        log(f"{label}: pytest collected no tests; that is a broken suite, not a pass")
        sys.exit(1)
    if code != 0:
        log(f"{label}: failed (pytest exit {code})")
        sys.exit(code)


#: Interpreter flags of both pytest runs, as in the seed's two runs: ``-B`` writes no
#: bytecode (a stale ``.pyc`` can never stand in for the source under test) and
#: ``-W error`` makes every warning a failure. The second run adds ``-O``.
PYTHON_FLAGS = ("-B", "-W", "error")


#: pytest-xdist: one worker per CPU, idle workers take queued tests from busy ones (a
#: few tests run for minutes; plain round-robin left one CPU idle at the end).
PARALLEL = ("-n", "auto", "--dist", "worksteal")


def contract_tests(root: Path = ROOT) -> list[str]:
    """The contracts' own tests, as in the seed's ``-O`` run: ``tests/test_<m>*.py`` for
    every public module and package ``m`` of ``contracts/`` (a new contract's tests
    join by their name)."""
    names = sorted(p.stem for p in (root / "contracts").iterdir()
                   if not p.name.startswith("_") and (p.suffix == ".py" or p.is_dir()))
    return sorted({str(t.relative_to(root)) for name in names
                   for t in (root / "tests").glob(f"test_{name}*.py")})


def pytest_runs(python: str, profile: str, extra: list[str]) -> list[tuple[str, list[str], str]]:
    """The two pytest runs of ``dev.py test`` as (label, command, hypothesis profile).

    The whole suite (``profile``, with statistics), then the contracts' own tests under
    ``-O`` with the quick ``optimized`` profile, which proves that no check in contracts/
    relies on ``assert`` (the seed's second run). Both use :data:`PYTHON_FLAGS` and
    :data:`PARALLEL`; ``extra`` goes to both.
    """
    flags = " ".join(PYTHON_FLAGS)
    return [
        (
            f"python {flags} -m pytest (hypothesis profile {profile})",
            [python, *PYTHON_FLAGS, "-m", "pytest", "-p", "no:cacheprovider", *PARALLEL,
             "--hypothesis-show-statistics", "--durations=30", *extra],
            profile,
        ),
        (
            f"python -O {flags} -m pytest: the contracts' tests (hypothesis profile optimized)",
            [python, "-O", *PYTHON_FLAGS, "-m", "pytest", "-p", "no:cacheprovider", "-q",
             *PARALLEL, *contract_tests(), *extra],
            "optimized",
        ),
    ]


def cmd_test(extra: list[str]) -> None:
    ensure_venv()
    env = dict(os.environ)
    # Our own `ci` profile in CI (hypothesis would otherwise pick its built-in one),
    # `dev` on a laptop; HYPOTHESIS_PROFILE set by the caller wins.
    profile = env.get("HYPOTHESIS_PROFILE") or ("ci" if env.get("CI") else "dev")
    for label, cmd, run_profile in pytest_runs(str(PY), profile, extra):
        pytest_step(label, cmd, dict(env, HYPOTHESIS_PROFILE=run_profile))
    kit_at_newest()
    log("ruff check")
    must([str(BIN / "ruff"), "check", "."])
    log("mypy --strict contracts")
    must([str(BIN / "mypy"), "--strict", "contracts"])
    log("mypy --strict -p pcfuzz (fuzz/ and strategies/ under their installed names)")
    typecheck_installed_names()
    log("all checks passed")


#: A second environment with only the ``harness`` extra, resolved to the newest releases
#: its ranges admit: the kit's tests run there too (the main environment holds the
#: ``dev`` pins, the lowest of the ranges).
NEWEST = ROOT / ".venv-newest"
NEWEST_PY = NEWEST / ("Scripts" if os.name == "nt" else "bin") / (
    "python.exe" if os.name == "nt" else "python")


def kit_at_newest() -> None:
    """The conformance kit's tests under the newest hypothesis the ``harness`` extra
    admits (a team's environment), with the quick ``dev`` profile."""
    stamp = NEWEST / ".pcfuzz-installed"
    extras = ["pytest-xdist"]  # the runs below use PARALLEL
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()
                            + " ".join(extras).encode()).hexdigest()
    if not (stamp.exists() and stamp.read_text().strip() == wanted and NEWEST_PY.exists()):
        log(f"creating {NEWEST.name}/: the harness extra at the newest releases it admits")
        venv.EnvBuilder(with_pip=True, clear=True).create(NEWEST)
        must([str(NEWEST_PY), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
              "--upgrade", "-e", f"{ROOT}[harness]", *extras])
        stamp.write_text(wanted)
    version = subprocess.run([str(NEWEST_PY), "-c", "import hypothesis; print(hypothesis.__version__)"],
                             capture_output=True, text=True, check=False).stdout.strip()
    # the kit's own tests (its API, CLI and plugin); the rule-by-rule and naive-parser
    # files exercise the strategies, which the main run covers
    tests = ["tests/test_conformance.py"]
    pytest_step(f"the kit's tests at the newest hypothesis the harness extra admits ({version})",
                [str(NEWEST_PY), *PYTHON_FLAGS, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                 *PARALLEL, *tests], dict(os.environ, HYPOTHESIS_PROFILE="dev"))


#: The folders the installed ``pcfuzz`` package maps (pyproject's package-dir): mypy
#: cannot follow that mapping, so it checks a tree of links that has the installed shape.
MAPPED = ("contracts", "strategies", "fuzz", "fixtures", "docs")


def typecheck_installed_names() -> None:
    """``mypy --strict -p pcfuzz`` on ``build/typecheck/pcfuzz``: links to what ``pcfuzz/``
    holds (its modules and the tool's packages) and to the mapped folders, so
    ``from pcfuzz.fuzz import ...`` resolves as installed."""
    tree = ROOT / "build" / "typecheck"
    package = tree / "pcfuzz"
    if package.exists():
        for entry in package.iterdir():
            entry.unlink()
    package.mkdir(parents=True, exist_ok=True)
    for source in sorted((ROOT / "pcfuzz").iterdir()):
        if source.suffix == ".py" or (source / "__init__.py").is_file():
            (package / source.name).symlink_to(source, target_is_directory=source.is_dir())
    for name in MAPPED:
        (package / name).symlink_to(ROOT / name, target_is_directory=True)
    code = subprocess.call(
        [str(BIN / "mypy"), "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir",
         str(tree / ".mypy_cache"), "-p", "pcfuzz"], cwd=tree)
    if code != 0:
        sys.exit(code)


def cmd_fuzz(extra: list[str]) -> None:
    ensure_venv()
    # 180 s on two CPUs: every target fuzzes 10 s or more after its start-up and every
    # property test runs; a night with ten examples per test uses 600 s or more. The
    # exit status passes through: 0 complete and clean, 1 a finding, 3 incomplete.
    args = extra or ["--budget", "180", "--report", "reports/latest"]
    sys.exit(subprocess.call([str(BIN / "pcfuzz"), "nightly", *args], cwd=ROOT))


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in {"test", "fuzz", "setup"}:
        sys.exit(__doc__)
    command, extra = sys.argv[1], sys.argv[2:]
    if command == "test":
        cmd_test(extra)
    elif command == "fuzz":
        cmd_fuzz(extra)
    else:
        ensure_venv()


if __name__ == "__main__":
    main()
