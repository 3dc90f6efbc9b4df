"""The tool's house, checked on the AST: which package may import which, that public
modules use no private name of another module, that every subcommand module has the
one shape, that no module of the tool grows past its size, and that the list of
contracts exists once.

The layers, bottom to top (``docs/architecture.md``, "The tool's house"):

    contracts  <-  strategies  <-  fuzz/harness  <-  fuzz/fuzz_*.py (the targets)
    contracts, strategies, fuzz/harness, pcfuzz.{errors,registry,_data,files}  <-  engine
    engine  <-  nightly, bench;   conform;   cli  ->  engine, nightly, conform, bench
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from pcfuzz.contracts.registry import NAMES

ROOT = Path(__file__).resolve().parent.parent

#: Leaf modules of the tool every layer above the fuzz targets may use.
BASE = ("pcfuzz.contracts", "pcfuzz.strategies", "pcfuzz.errors", "pcfuzz.registry",
        "pcfuzz._data", "pcfuzz.database", "pcfuzz.files")
#: layer -> the pcfuzz packages/modules its modules may import (besides themselves).
ALLOWED: dict[str, tuple[str, ...]] = {
    "pcfuzz.strategies": ("pcfuzz.contracts", "pcfuzz._data"),
    "pcfuzz.fuzz.harness": ("pcfuzz.contracts", "pcfuzz.strategies", "pcfuzz.errors"),
    "pcfuzz.fuzz": ("pcfuzz.contracts", "pcfuzz.strategies", "pcfuzz.fuzz.harness"),
    "pcfuzz.engine": (*BASE, "pcfuzz.fuzz.harness"),
    "pcfuzz.nightly": (*BASE, "pcfuzz.engine"),
    "pcfuzz.bench": (*BASE, "pcfuzz.engine"),
    "pcfuzz.conform": (*BASE, "pcfuzz.fuzz.harness"),
    "pcfuzz.cli": (*BASE, "pcfuzz.fuzz.harness", "pcfuzz.engine", "pcfuzz.nightly",
                   "pcfuzz.conform", "pcfuzz.bench"),
    # the top-level modules: stdlib, the contracts and one another only
    "pcfuzz": ("pcfuzz.contracts",),
    # python -m pcfuzz: the command
    "pcfuzz.__main__": ("pcfuzz.cli",),
}
#: Old public names, one-line re-exports kept for one release: they may import the
#: tool (that is all they do), and nothing of the project may import them.
DEPRECATED = {"pcfuzz.fuzz.cli": "pcfuzz.cli",
              "pcfuzz.fuzz.pytest_plugin": "pcfuzz.conform.pytest_plugin",
              "pcfuzz.fuzz.oracles": "pcfuzz.conform.oracles",
              "pcfuzz.fuzz.adapters": "pcfuzz.conform.adapters"}
#: Folders of the repository -> the installed package they are.
FOLDERS = {"pcfuzz": "pcfuzz", "strategies": "pcfuzz.strategies", "fuzz": "pcfuzz.fuzz"}
#: No module of the tool is longer than this (lines).
MAX_LINES = 600


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT)
    parts = [FOLDERS[rel.parts[0]], *rel.parts[1:]]
    parts[-1] = parts[-1].removesuffix(".py")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(".".join(parts).split("."))


def tool_files() -> Iterator[Path]:
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "corpus" not in path.parts:
                yield path


def layer_of(name: str) -> str:
    """The most specific layer of ``ALLOWED`` that holds module ``name``."""
    best = ""
    for layer in ALLOWED:
        if (name == layer or name.startswith(layer + ".")) and len(layer) > len(best):
            best = layer
    if best == "pcfuzz" and name.count(".") > 1:
        raise AssertionError(f"{name} is in no layer of the tool's house")
    return best


def imports(path: Path, me: str) -> Iterator[tuple[int, str, list[str]]]:
    """(line, absolute module, imported names) of every import in ``path``, the file
    of module ``me``."""
    package = me
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            names = [a.name for a in node.names]
            yield node.lineno, base, names
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def forbidden_imports(path: Path, allowed: dict[str, tuple[str, ...]],
                      me: str | None = None) -> list[str]:
    """What ``path`` (module ``me``; by default named from its place in the repository)
    imports from pcfuzz outside its layer's allowance."""
    me = me or module_name(path)
    if me in DEPRECATED:
        return []
    layer = layer_of(me)
    bad = []
    for line, target, names in imports(path, me):
        if not _within(target, "pcfuzz"):
            continue
        targets = [target] if names == [] or target != "pcfuzz" else [
            f"pcfuzz.{n}" if importlib.util.find_spec(f"pcfuzz.{n}") else "pcfuzz"
            for n in names]
        for t in targets:
            if t == "pcfuzz":  # the root imports nothing
                continue
            if layer == "pcfuzz":
                # the top-level modules (errors, registry, database, _data) may use one
                # another; the tool's packages are above them
                if t.count(".") == 1 and not (ROOT / "pcfuzz" / t.split(".")[1]).is_dir():
                    continue
            elif _within(t, layer):
                continue
            if any(_within(t, ok) for ok in allowed[layer]):
                continue
            bad.append(f"{path.name}:{line}: {layer} -> {t}")
    return bad


def test_every_import_of_the_tool_follows_its_layer() -> None:
    bad = [b for path in tool_files() for b in forbidden_imports(path, ALLOWED)]
    assert not bad, "imports outside the allowed layers:\n" + "\n".join(bad)


def test_the_import_check_catches_a_forbidden_import(tmp_path: Path) -> None:
    # The check is not vacuous: a fuzz target importing the nightly, the engine
    # importing the command line, each is reported.
    planted = tmp_path / "fuzz_planted.py"
    planted.write_text("from pcfuzz.nightly.pipeline import run_nightly\n", encoding="utf-8")
    engine = tmp_path / "planted.py"
    engine.write_text("import pcfuzz.cli.app\nfrom pcfuzz import nightly\nfrom ..cli import app\n",
                      encoding="utf-8")
    found = (forbidden_imports(planted, ALLOWED, "pcfuzz.fuzz.fuzz_planted")
             + forbidden_imports(engine, ALLOWED, "pcfuzz.engine.planted"))
    assert any("pcfuzz.fuzz -> pcfuzz.nightly.pipeline" in b for b in found), found
    assert any("pcfuzz.engine -> pcfuzz.cli.app" in b for b in found), found
    assert any("pcfuzz.engine -> pcfuzz.nightly" in b for b in found), found
    assert any(b.startswith("planted.py:3: pcfuzz.engine -> pcfuzz.cli") for b in found), found


def private_uses(path: Path) -> list[str]:
    """Private names (``_x``) of other modules that ``path`` imports or reads."""
    me = module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: dict[str, str] = {}  # local alias -> module it names
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pcfuzz"):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: "
                               f"from {node.module} import {alias.name}")
                modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("pcfuzz"):
                    modules[alias.asname or alias.name.split(".")[0]] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in modules and node.attr.startswith("_")
                and not node.attr.startswith("__") and modules[node.value.id] != me):
            bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: "
                       f"{modules[node.value.id]}.{node.attr}")
    return bad


def test_no_module_of_the_tool_uses_a_private_name_of_another() -> None:
    # The fuzz targets are white-box scripts, not modules anyone imports: the strict
    # JSON target compares the fast path with the iterative parser it falls back to.
    bad = [b for path in tool_files() if not path.name.startswith("fuzz_")
           for b in private_uses(path)]
    assert not bad, "private names used across modules:\n" + "\n".join(bad)


def test_nothing_imports_the_deprecated_names() -> None:
    users = []
    for folder in ("pcfuzz", "strategies", "fuzz", "tests", "benchmarks", "docs"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == Path(__file__).name or "corpus" in path.parts:
                continue
            if folder in FOLDERS and module_name(path) in DEPRECATED:
                continue
            text = path.read_text(encoding="utf-8")
            users += [f"{path.relative_to(ROOT)}: {old}" for old in DEPRECATED if old in text]
    for doc in sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]:
        # the one paragraph that names the old names says they are kept for one release
        lines = [line for line in doc.read_text(encoding="utf-8").splitlines()
                 if "for one release" not in line]
        text = "\n".join(lines)
        users += [f"{doc.relative_to(ROOT)}: {old}" for old in DEPRECATED if old in text]
    assert not users, "use the new names:\n" + "\n".join(users)


@pytest.mark.parametrize("old", sorted(DEPRECATED))
def test_the_deprecated_names_still_reexport_the_new_ones(old: str) -> None:
    module = importlib.import_module(old)
    new = importlib.import_module(DEPRECATED[old])
    names = [n for n in vars(module) if not n.startswith("_")]
    assert names, f"{old} re-exports nothing"
    for name in names:
        assert getattr(module, name) is getattr(new, name), (old, name)


def test_no_module_of_the_tool_is_longer_than_the_limit() -> None:
    long = []
    for folder in ("pcfuzz", "fuzz/harness"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            count = len(path.read_text(encoding="utf-8").splitlines())
            if count > MAX_LINES:
                long.append(f"{path.relative_to(ROOT)}: {count} lines")
    assert not long, f"split these modules (limit {MAX_LINES} lines):\n" + "\n".join(long)


def test_fuzz_keeps_only_what_libfuzzer_sees() -> None:
    extra = []
    for path in sorted((ROOT / "fuzz").iterdir()):
        name = path.name
        if path.is_dir():
            if name not in {"corpus", "harness", "__pycache__", ".work", "artifacts"}:
                extra.append(name)
        elif not (name.startswith("fuzz_") and path.suffix in {".py", ".dict", ".options"}
                  or name == "__init__.py"
                  or module_name(path) in DEPRECATED):
            extra.append(name)
    assert not extra, f"fuzz/ holds only targets, .dict, .options, corpus/, harness/: {extra}"


def test_every_subcommand_module_has_the_one_shape() -> None:
    from pcfuzz.cli.app import COMMANDS, TABLE

    folder = ROOT / "pcfuzz" / "cli"
    seen = []
    rows = {module: (name, help) for name, module, help in TABLE}
    for path in sorted(folder.glob("*.py")):
        if path.stem in {"__init__", "app", "common"}:
            continue
        module = importlib.import_module(f"pcfuzz.cli.{path.stem}")
        for name in ("NAME", "HELP", "DESCRIPTION", "add_parser", "run"):
            assert hasattr(module, name), f"pcfuzz/cli/{path.name} has no {name}"
        seen.append(module.NAME)
        # the top-level parser is built from the table: it must say what the module says
        assert rows.get(path.stem) == (module.NAME, module.HELP), path
        # the help text is plain text for a terminal: no reST markup
        for text in (module.HELP, module.DESCRIPTION):
            assert "``" not in text and ":func:" not in text and ":class:" not in text, path
    assert sorted(seen) == sorted(COMMANDS)


def test_every_help_text_is_plain_and_names_only_shipped_docs(
        capsys: pytest.CaptureFixture[str]) -> None:
    from pcfuzz._data import docs_dir
    from pcfuzz.cli.app import COMMANDS, main

    for argv in [["--help"], *([c, "--help"] for c in COMMANDS)]:
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 0
        text = capsys.readouterr().out
        assert "``" not in text and ":func:" not in text, argv
        for word in text.split():
            if word.startswith("docs/"):
                assert (docs_dir() / word.removeprefix("docs/").strip(".,;:)")).is_file(), word
    with pytest.raises(SystemExit):
        main(["--help"])
    top = capsys.readouterr().out
    for command in COMMANDS:
        assert f"pcfuzz {command}" in top, f"the synopsis leaves out {command}"


def test_the_list_of_contracts_exists_once() -> None:
    """No module writes the contract names out as a list of its own: each reads the
    registry (``contracts/registry.py``). Tests may pin the public names."""
    offenders = []
    for folder in ("pcfuzz", "strategies", "fuzz", "contracts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "registry.py" and path.parent.name == "contracts":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                    names = {e.value for e in node.elts
                             if isinstance(e, ast.Constant) and e.value in NAMES}
                    if names == set(NAMES):
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, "read pcfuzz.contracts.registry instead:\n" + "\n".join(offenders)


def test_tables_keyed_by_contract_cover_the_registry() -> None:
    from pcfuzz.conform import adapters, drift
    from pcfuzz.fuzz.harness import verdict
    from pcfuzz.nightly import transitions
    from pcfuzz.strategies import conformance, fixture_docs, sdk_oracles

    for table in (adapters.ADAPTERS, adapters.SSE_ADAPTERS, drift.RUNNERS, verdict._STATUS,
                  transitions.CONTRACTS, fixture_docs.EXPECTED, sdk_oracles.CONTRACT_SDK):
        assert set(table) == set(NAMES), table
    assert conformance.CONTRACTS == NAMES


def test_no_test_module_imports_another_test_module() -> None:
    """Shared helpers live in ``tests/_<name>.py``; importing a test module would run
    its tests' collection twice and tie one module's tests to another's names."""
    offenders = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            offenders += [f"{path.name}:{node.lineno}: {n}" for n in names  # type: ignore[attr-defined]
                          if n.split(".")[0].startswith(("test_", "conftest"))]
    assert not offenders, "\n".join(offenders)
