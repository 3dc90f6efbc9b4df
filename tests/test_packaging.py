"""The installed names: every package folder is listed under ``pcfuzz`` in pyproject."""

from __future__ import annotations

import tomllib
from pathlib import Path

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
