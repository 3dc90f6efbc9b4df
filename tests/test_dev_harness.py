"""dev.py's test runs: the seed's two runs use ``-B`` and ``-W error`` both (and ``-O``
in the second), so a stale bytecode file can never stand in for the source and a
warning is a failure in the normal run too, not only in the optimized one."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from hypothesis import event, given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent


def _dev() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pcfuzz_dev_script", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _interpreter_flags(cmd: list[str]) -> list[str]:
    """The interpreter options of ``python <flags> -m pytest ...``."""
    return cmd[1 : cmd.index("-m")]


def test_both_harness_runs_use_no_bytecode_and_warnings_as_errors() -> None:
    runs = _dev().pytest_runs("python", "ci", [])
    assert len(runs) == 2
    normal, optimized = (_interpreter_flags(cmd) for _, cmd, _ in runs)
    # The normal run lacked both flags before: a warning passed there silently.
    assert normal == ["-B", "-W", "error"]
    assert optimized == ["-O", "-B", "-W", "error"]
    assert [profile for _, _, profile in runs] == ["ci", "optimized"]
    for label, cmd, _ in runs:
        assert "-B -W error" in label
        assert cmd[cmd.index("-m") + 1] == "pytest"
        assert cmd[cmd.index("-n"):cmd.index("-n") + 4] == ["-n", "auto", "--dist", "worksteal"]


def test_the_optimized_run_selects_every_test_file_of_a_public_contract_module() -> None:
    dev = _dev()
    _, optimized = (cmd for _, cmd, _ in dev.pytest_runs("python", "ci", []))
    files = [arg for arg in optimized if arg.startswith("tests/")]
    assert files == dev.contract_tests()
    # every contract module with tests is in, and nothing of the tool is
    for expected in ("tests/test_strict_json.py", "tests/test_provenance.py",
                     "tests/test_openai_chat_properties.py", "tests/test_sse.py",
                     "tests/test_gemini_interactions_resume.py", "tests/test_fixtures.py"):
        assert expected in files, expected
    assert not [f for f in files if "pcfuzz" in f or "nightly" in f or "conformance" in f]
    assert all((ROOT / f).is_file() for f in files)


@given(
    profile=st.sampled_from(["dev", "ci", "nightly"]),
    extra=st.lists(st.sampled_from(["-k", "gemini", "-x", "-W", "ignore", "-O", "tests"]),
                   max_size=6),
)
def test_harness_flags_hold_for_every_extra_argument_list(profile: str, extra: list[str]) -> None:
    # Extra arguments go to pytest, after -m pytest: they can never drop or override
    # an interpreter flag (a "-W ignore" in extra is pytest's -W, not python's).
    event(f"extra has {min(len(extra), 3)}+ args")
    for _, cmd, _ in _dev().pytest_runs("python", profile, extra):
        flags = _interpreter_flags(cmd)
        assert flags[-3:] == ["-B", "-W", "error"]
        assert cmd[len(cmd) - len(extra):] == extra


def test_the_typecheck_tree_links_every_folder_the_package_maps() -> None:
    # mypy checks fuzz/ and strategies/ through links with the installed shape; a
    # folder mapped in pyproject but not linked would go unchecked (or fail to import).
    import tomllib

    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["setuptools"]["package-dir"]
    mapped = {folder for name, folder in mapping.items() if name != "pcfuzz"}
    assert set(_dev().MAPPED) == mapped
