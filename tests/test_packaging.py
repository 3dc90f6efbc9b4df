"""The installed names: every package folder is listed under ``pcfuzz`` in pyproject; the
built wheel carries what the command reads and runs from an empty directory."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _config() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)


def test_every_package_folder_is_installed_under_pcfuzz() -> None:
    setuptools = _config()["tool"]["setuptools"]  # type: ignore[index]
    mapping: dict[str, str] = setuptools["package-dir"]
    listed = set(setuptools["packages"])
    found = set()
    for name, folder in mapping.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            relative = init.parent.relative_to(base)
            found.add(".".join([name, *relative.parts]) if relative.parts else name)
    assert found == listed, f"missing: {sorted(found - listed)}, stale: {sorted(listed - found)}"
    assert all(name == "pcfuzz" or name.startswith("pcfuzz.") for name in listed)


def test_no_generic_top_level_names_are_installed() -> None:
    setuptools = _config()["tool"]["setuptools"]  # type: ignore[index]
    assert {name.split(".")[0] for name in setuptools["packages"]} == {"pcfuzz"}


def test_nothing_outside_contracts_imports_the_bare_folder_names() -> None:
    """In a checkout ``import contracts`` would also work (the repository root is on
    sys.path) and load a second copy whose error classes are different objects."""
    import re

    pattern = re.compile(r"^\s*(from|import)\s+(contracts|strategies|fuzz)\b", re.M)
    offenders = []
    for folder in ("strategies", "fuzz", "tests", "benchmarks", "pcfuzz"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "corpus" in path.parts or "regressions" in path.parts:
                continue
            if pattern.search(path.read_text(encoding="utf-8")):
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, f"import pcfuzz.<name>, not the bare folder: {offenders}"


# -- the built wheel, installed into a fresh virtual environment -----------------------

#: What the wheel is built from (copied, so the build never touches the checkout's
#: build/ or *.egg-info, whose stale files could leak into a wheel).
BUILD_INPUTS = ("pyproject.toml", "setup.py", "README.md",
                "pcfuzz", "contracts", "strategies", "fuzz", "fixtures", "docs")
#: Files a command reads at run time, by their checkout paths.
SHIPPED_DATA = ("fuzz/corpus/*/*", "fuzz/*.dict", "fuzz/*.options", "fuzz/fuzz_*.py",
                "pcfuzz/nightly/summary.schema.json", "docs/*.md",
                "fixtures/*.json", "fixtures/wire/*",
                "fixtures/schemas/*/*", "fixtures/README.md", "fixtures/CHANGELOG.md",
                "contracts/py.typed",
                # every later contract revision: golden, wire and schema files
                "fixtures/*/20*/*.json", "fixtures/wire/20*/*", "fixtures/schemas/*/20*/*")
PACKAGE_DIRS = {"pcfuzz": "pcfuzz", "contracts": "pcfuzz/contracts",
                "strategies": "pcfuzz/strategies", "fuzz": "pcfuzz/fuzz",
                "fixtures": "pcfuzz/fixtures", "docs": "pcfuzz/docs"}


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None,
         timeout: float = 120) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert proc.returncode == 0, f"{cmd} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


def _can_build_without_isolation() -> bool:
    """setuptools 70.1+ builds wheels by itself; an older one needs the wheel package."""
    try:
        major, minor = (int(x) for x in metadata.version("setuptools").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return False
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


def _build_wheel(tmp: Path) -> Path:
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", ".work", "artifacts", "*.egg-info")
    for name in BUILD_INPUTS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, src / name)
    no_isolation = ["--no-build-isolation"] if _can_build_without_isolation() else []
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", *no_isolation,
          "--wheel-dir", str(tmp / "dist"), str(src)], cwd=tmp, timeout=300)
    (wheel,) = (tmp / "dist").glob("pcfuzz-*.whl")
    return wheel


def _clean_env(venv_bin: Path) -> dict[str, str]:
    """No PYTHONPATH, no PCFUZZ_* variable: only the installed pcfuzz can answer."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PCFUZZ_") and k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
    env["PATH"] = os.pathsep.join([str(venv_bin), env.get("PATH", "")])
    return env


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")
            if "__pycache__" not in p.parts}


@dataclass(frozen=True)
class Installed:
    """The built wheel installed into a fresh virtual environment."""

    wheel: Path
    python: Path
    bin: Path
    env: dict[str, str]
    package: Path
    tmp: Path


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """Build the wheel once per run and install it into a fresh virtual environment.

    Offline and honest about what it borrows: the wheel is built with
    ``pip wheel --no-deps --no-build-isolation`` when this interpreter's setuptools can
    build wheels (70.1+, which the ``dev`` extra pins; else pip builds it in isolation
    from its configured index). The fresh environment is created by ``python -m venv``
    without system site-packages and without pip; this interpreter's pip installs the
    wheel into it with ``--no-deps --no-index``. The third-party dependencies (atheris,
    hypothesis, pytest) are not installed again: a ``.pth`` file puts this interpreter's
    site-packages *after* the fresh environment's own, so ``pcfuzz`` itself can only come
    from the wheel (checked by the tests: its files are in the fresh environment, and
    nothing from the checkout is on the path). Commands run with no ``PYTHONPATH`` and
    no ``PCFUZZ_*`` variable.
    """
    tmp_path = tmp_path_factory.mktemp("wheel")
    wheel = _build_wheel(tmp_path)
    venv_dir = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv_dir)], cwd=tmp_path)
    venv_bin = venv_dir / ("Scripts" if os.name == "nt" else "bin")
    venv_python = venv_bin / ("python.exe" if os.name == "nt" else "python")
    _run([sys.executable, "-m", "pip", "--python", str(venv_python), "install", "--quiet",
          "--no-deps", "--no-index", str(wheel)], cwd=tmp_path)
    env = _clean_env(venv_bin)
    site = Path(_run([str(venv_python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                      "['purelib'])"], cwd=tmp_path, env=env).stdout.strip())
    deps = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    (site / "_pcfuzz_test_deps.pth").write_text("\n".join(deps) + "\n", encoding="utf-8")
    return Installed(wheel, venv_python, venv_bin, env, site / "pcfuzz", tmp_path)


@pytest.mark.slow
def test_the_wheel_installs_and_runs_from_an_empty_directory(installed: Installed) -> None:
    """From an empty directory in the fresh environment, run ``pcfuzz --version``,
    ``python -m pcfuzz --version``, ``pcfuzz list`` (the shipped seed counts) and a
    5-second ``pcfuzz fuzz strict-json``. Nothing may be written into the installed
    package; the campaign's work directory must appear under the empty directory.
    """
    wheel, tmp_path = installed.wheel, installed.tmp
    with zipfile.ZipFile(wheel) as archive:
        infos = {info.filename: info for info in archive.infolist()}
    tops = {name.split("/")[0] for name in infos}
    assert tops == {"pcfuzz", wheel.name.split("-py3")[0] + ".dist-info"}, tops
    assert not tops & {"contracts", "strategies", "fuzz", "fixtures", "tests"}
    missing = []
    for pattern in SHIPPED_DATA:
        found = [p for p in ROOT.glob(pattern) if p.is_file()]
        assert found, f"nothing in the checkout matches {pattern}"
        for path in found:
            rel = path.relative_to(ROOT)
            name = "/".join([PACKAGE_DIRS[rel.parts[0]], *rel.parts[1:]])
            if name not in infos:
                missing.append(name)
    assert not missing, f"not in the wheel: {missing[:10]} ({len(missing)} files)"
    for name, info in infos.items():
        if re.fullmatch(r"pcfuzz/fuzz/fuzz_\w+\.py", name):
            assert (info.external_attr >> 16) & stat.S_IXUSR, f"{name} is not executable"

    venv_python, venv_bin, env = installed.python, installed.bin, installed.env
    package = installed.package
    before = _tree(package)

    empty = (tmp_path / "empty").resolve()
    empty.mkdir()
    where = _run([str(venv_python), "-c", "import sys, pcfuzz.fuzz, pcfuzz.contracts; "
                  "print(pcfuzz.fuzz.__file__); print(pcfuzz.contracts.__file__); "
                  "print('\\n'.join(sys.path))"], cwd=empty, env=env).stdout.splitlines()
    assert Path(where[0]).parent == package / "fuzz"
    assert Path(where[1]).parent == package / "contracts"
    assert str(ROOT) not in where[2:], "the checkout is on the fresh environment's path"

    # Crash fingerprints name pcfuzz's frames as in the repository, also from site-packages.
    frame = _run([str(venv_python), "-c", "from pathlib import Path; "
                  "import pcfuzz.contracts.strict_json as m; "
                  "from pcfuzz.engine.triage import _project_frame; "
                  "print(_project_frame(m.__file__, [Path.cwd()]))"], cwd=empty, env=env)
    assert frame.stdout.strip() == "contracts/strict_json.py"

    version = _config()["project"]["version"]  # type: ignore[index]
    for cmd in ([str(venv_bin / "pcfuzz"), "--version"],
                [str(venv_python), "-m", "pcfuzz", "--version"]):
        assert _run(cmd, cwd=empty, env=env).stdout.strip() == f"pcfuzz {version}"

    listed = _run([str(venv_bin / "pcfuzz"), "list"], cwd=empty, env=env).stdout
    seeds = {}
    for line in listed.splitlines()[2:]:
        name, fuzzer, count = line.split()[:3]
        seeds[fuzzer] = int(count)
    expected = {d.name: len({p.read_bytes() for p in d.iterdir() if p.is_file()})
                for d in (ROOT / "fuzz" / "corpus").iterdir()}
    assert seeds == expected, listed
    assert all(seeds.values()), listed

    fuzz = _run([str(venv_bin / "pcfuzz"), "fuzz", "strict-json", "--time", "5"],
                cwd=empty, env=env, timeout=90)
    work = empty / ".pcfuzz" / "work" / "fuzz_strict_json"
    assert (work / "last_run.json").is_file(), fuzz.stdout + fuzz.stderr
    assert json.loads((work / "last_run.json").read_text(encoding="utf-8"))["executions"] > 0
    assert (work / "logs" / "last.log").is_file()
    assert f"log: {work / 'logs' / 'last.log'}" in fuzz.stdout
    assert sorted(p.name for p in empty.iterdir()) == [".pcfuzz"]
    assert _tree(package) == before, "pcfuzz wrote into the installed package"


def _tutorial(directory: Path, *, break_gate: bool) -> None:
    """The tutorial's parser and its pytest file, copied as a user would; with
    ``break_gate`` the parser's terminal-gate line is removed (it then releases the
    calls of blocks that stopped before ``message_stop``)."""
    for name in ("toy_anthropic.py", "test_toy_anthropic.py"):
        shutil.copy(ROOT / "docs" / "examples" / name, directory / name)
    if break_gate:
        parser = directory / "toy_anthropic.py"
        text = parser.read_text(encoding="utf-8")
        gate = 'if not done or stop_reason != "tool_use":  # the terminal gate'
        assert gate in text
        parser.write_text(text.replace(gate, "if False:"), encoding="utf-8")
    shutil.rmtree(directory / "__pycache__", ignore_errors=True)


def _status(cmd: list[str], cwd: Path, env: dict[str, str], status: int,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert proc.returncode == status, (
        f"{cmd} exited {proc.returncode}, not {status}:\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.mark.slow
def test_the_installed_conformance_kit_on_the_tutorials_parser(installed: Installed) -> None:
    """The issue's "done when", in the fresh environment from an empty directory:
    ``pcfuzz conform`` reports the violations of the tutorial's parser with its
    terminal gate removed (exit 1, a minimal stream saved under the current
    directory) and passes the correct parser (exit 0, replaying that saved stream);
    the tutorial's pytest file, run by the environment's own pytest with the plugin
    found through its ``pytest11`` entry point (no ``-p``; the ``--pcfuzz-*`` option
    exists only if the plugin loaded), fails against the broken parser and passes
    against the correct one. ``PYTHONDONTWRITEBYTECODE``: the parser is rewritten in
    place between runs."""
    env = dict(installed.env, PYTHONDONTWRITEBYTECODE="1")
    pcfuzz = str(installed.bin / "pcfuzz")
    before = _tree(installed.package)
    work = (installed.tmp / "conform").resolve()
    work.mkdir()
    conform = [pcfuzz, "conform", "--contract", "anthropic-messages",
               "--adapter", "toy_anthropic:parse", "--max-examples", "40"]
    pytest_cmd = [str(installed.python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                  "--pcfuzz-max-examples", "25", "--pcfuzz-regressions", "none",
                  "test_toy_anthropic.py"]

    _tutorial(work, break_gate=True)
    broken = _status(conform, work, env, 1)
    violated = re.findall(r"^  found by:  \[(\w+)\]", broken.stdout, re.M)
    # Without the gate, a tool block that stopped releases its call: a cut after it
    # (truncation) or a failed/early terminal after it (terminal).
    assert {"truncation", "terminal"} & set(violated), broken.stdout
    assert (broken.stdout.count("minimal stream (")
            + broken.stdout.count("smallest stream found (")) == len(violated), broken.stdout
    assert "as SSE bytes:" in broken.stdout
    assert "conform: [1/" in broken.stderr, broken.stderr  # progress, one line per family
    saved = sorted((work / "conform-regressions" / "anthropic-messages").glob("*.json"))
    assert len(saved) == len(violated), broken.stdout
    assert all(p.with_suffix(".jsonl").is_file() and p.with_suffix(".sse").is_file()
               for p in saved)
    for path in saved:
        assert f"saved: {path.relative_to(work)}" in broken.stdout, path
        stream = [json.loads(line) for line in
                  path.with_suffix(".jsonl").read_text(encoding="utf-8").splitlines()]
        assert json.loads(path.read_text(encoding="utf-8"))["events"] == stream
    failed = _status(pytest_cmd, work, env, 1)
    assert re.search(r"FAILED test_toy_anthropic\.py::test_toy_parser\[(truncation|terminal)\]",
                     failed.stdout), failed.stdout
    assert "minimal stream (" in failed.stdout

    _tutorial(work, break_gate=False)
    fixed = _status(conform, work, env, 0)
    assert f"regressions replayed: {len(saved)} ({len(saved)} passing)" in fixed.stdout, (
        fixed.stdout)
    assert "no violations" in fixed.stdout
    passed = _status(pytest_cmd, work, env, 0)
    from pcfuzz.strategies.conformance import families

    default = len(families("anthropic-messages"))  # one test per default family
    assert f"{default} passed" in passed.stdout and "skipped" in passed.stdout, passed.stdout

    # .pcfuzz: where pcfuzz conform keeps hypothesis' cache; .hypothesis: hypothesis'
    # own cache when the user's pytest runs the plugin (their run, their directory).
    assert {p.name for p in work.iterdir()} <= {
        "conform-regressions", "test_toy_anthropic.py", "toy_anthropic.py", ".hypothesis",
        ".pcfuzz"}
    assert _tree(installed.package) == before, "pcfuzz wrote into the installed package"


def test_the_extras_a_team_installs_declare_ranges_not_pins() -> None:
    """``harness``, ``oracles`` and ``scale`` install beside a team's own pins; only the
    project's own ``dev`` environment pins, and it holds hypothesis at the harness's
    lowest, so ``dev.py test`` runs the kit's tests at both ends of the range."""
    import re

    extras = _config()["project"]["optional-dependencies"]  # type: ignore[index]
    for name in ("harness", "oracles", "scale"):
        for requirement in extras[name]:
            assert "==" not in requirement.split(";")[0], (name, requirement)
    (harness_hyp,) = [r for r in extras["harness"] if re.match(r"hypothesis(?![-\w])", r)]
    (dev_hyp,) = [r for r in extras["dev"] if re.match(r"hypothesis(?![-\w])", r)]
    low = re.search(r">=([\d.]+)", harness_hyp)
    assert low and f">={low.group(1)}" in dev_hyp, (harness_hyp, dev_hyp)
    assert "<7" in harness_hyp
