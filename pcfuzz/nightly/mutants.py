"""``pcfuzz mutants``: how strong is the harness? Mutate ``contracts/`` and see whether
the tests notice.

A small built-in AST mutator (no third-party tool: mutmut 3 instruments and runs the
package from its own ``mutants/`` copy by its import name, and here the import name
``pcfuzz.contracts`` maps onto the ``contracts/`` folder, so every mutant would need
that mapping rebuilt; this module does it with one import hook). Operators, each one
mutant per site:

- ``guard-off``: ``if COND: raise ...`` becomes ``if False: raise ...`` (a rejection
  turned off);
- ``compare-flip``: ``<`` <-> ``>=``, ``<=`` <-> ``>``, ``==`` <-> ``!=``, ``in`` <->
  ``not in``, ``is`` <-> ``is not`` (one comparison of a chain);
- ``and-or``: ``and`` <-> ``or``;
- ``not-dropped``: ``not X`` becomes ``X``.

The sample is drawn with a fixed seed (the same sites night after night unless the
code changes). Each mutant is the original tree copied to a temporary directory with
one source span replaced; pytest then runs the mutated file's own example tests (by
module name, see :func:`tests_for`; the ``*_properties`` modules are left to the
property phase) under the ``dev`` profile with ``-x`` and a per-mutant timeout, in a process whose import hook maps ``pcfuzz.contracts`` onto the copy (the
run checks that the tests imported the copy; else it is an ``error``). The same tests
run once on the unmutated copy first (without ``-x``): a test that fails there is
named and deselected for the mutants; if the run fails otherwise, the mutants it
judges are ``error`` (not counted). A failing run kills the mutant; a passing one is a survivor;
a timeout counts as killed (the mutant made something loop) and is labelled so.
"""

from __future__ import annotations

import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

__all__ = ["CONTRACTS_HOOK", "Mutant", "find_mutants", "run_mutants", "tests_for"]

SEED = 16
#: Mutants argued equivalent in docs/fuzzing.md ("Known equivalent"): no input can tell
#: them from the original, so no test can kill them. Each is (file, operator, the
#: mutated source text before the arrow), matched by text, not by line number, and
#: must match exactly one mutant (a test checks it, so the list cannot rot). They are
#: left out of the sample and listed apart in the report, never counted as killed.
EQUIVALENT: tuple[tuple[str, str, str], ...] = (
    # the fast path's empty-string check: `or` only sends more to the general path
    ("contracts/gemini_interactions/_stream.py", "and-or",
     "check == _NONEMPTY and not value"),
    # fields_ok is a message-free pre-check; False only defers to check_fields
    ("contracts/_kinds.py", "compare-flip", "type(value) is not exact"),
    # a listed item is executable exactly when it has an argument buffer
    ("contracts/openai_responses/_stream.py", "and-or",
     "not state.spec.executable or state.args is None"),
    # an import-time self-check of a constant
    ("contracts/_values.py", "guard-off", "_DEFAULTS.max_depth < 2"),
    # the Chat fast path's first-value check: `or` only re-stores an equal str
    ("contracts/openai_chat/_stream.py", "and-or",
     "response_id is not None and first_values.get(plan.response_id) != response_id"),
)
PER_MUTANT_TIMEOUT_S = 60.0
_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.LtE: ast.Gt, ast.Gt: ast.LtE,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}

#: The start of a process whose ``pcfuzz.contracts`` is the folder named by its first
#: argument (popped): an import hook ahead of the installed package. Shared with the
#: tests that run a planted copy of the contracts.
CONTRACTS_HOOK = '''\
import importlib.abc, importlib.util, sys
from pathlib import Path
ROOT = Path(sys.argv.pop(1))

class _Copy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "pcfuzz.contracts" and not name.startswith("pcfuzz.contracts."):
            return None
        base = ROOT.joinpath(*name.split(".")[2:])
        if (base / "__init__.py").is_file():
            return importlib.util.spec_from_file_location(
                name, base / "__init__.py", submodule_search_locations=[str(base)])
        if base.with_suffix(".py").is_file():
            return importlib.util.spec_from_file_location(name, base.with_suffix(".py"))
        return None

sys.meta_path.insert(0, _Copy())
'''

_BOOT = CONTRACTS_HOOK + '''\
import pytest
rc = int(pytest.main(sys.argv[1:]))
loaded = getattr(sys.modules.get("pcfuzz.contracts"), "__file__", None) or ""
if loaded and not loaded.startswith(str(ROOT)):
    rc = 97  # the tests ran against another copy: the run says nothing
sys.exit(rc)
'''


@dataclass
class Mutant:
    file: str  # relative to the contracts folder's parent: contracts/x.py
    line: int
    operator: str
    change: str
    span: tuple[int, int, int, int]  # lineno, col, end_lineno, end_col of the replaced text
    replacement: str
    status: str = "not run"  # killed | survived | timeout | not run
    seconds: float = 0.0


def _contracts_dir() -> Path:
    import pcfuzz.contracts

    return Path(pcfuzz.contracts.__file__).resolve().parent


def _sites(tree: ast.AST) -> Iterator[tuple[str, ast.AST, ast.AST]]:
    """(operator, node to replace, replacement node)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and node.body and isinstance(node.body[0], ast.Raise):
            yield "guard-off", node.test, ast.Constant(False)
        elif isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                flipped = _FLIP.get(type(op))
                if flipped is not None:
                    ops = list(node.ops)
                    ops[i] = flipped()
                    yield "compare-flip", node, ast.Compare(node.left, ops, node.comparators)
        elif isinstance(node, ast.BoolOp):
            other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            yield "and-or", node, ast.BoolOp(other, node.values)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield "not-dropped", node, node.operand


def _segment(raw: list[bytes], l0: int, c0: int, l1: int, c1: int) -> str:
    """The source text of a node (lines of UTF-8 bytes, ast's 1-based lines and byte
    columns), as ``ast.get_source_segment`` gives it."""
    if l0 == l1:
        return raw[l0 - 1][c0:c1].decode("utf-8")
    return b"".join([raw[l0 - 1][c0:], *raw[l0:l1 - 1], raw[l1 - 1][:c1]]).decode("utf-8")


def find_mutants(root: Path | None = None) -> list[Mutant]:
    """Every mutant of every module under ``contracts/`` (in file, line order)."""
    root = root or _contracts_dir()
    out: list[Mutant] = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        lines = source.splitlines()
        # split once: ast.get_source_segment splits the whole file again at every call,
        # which made collecting the tests that list the mutants take seconds
        raw = source.encode("utf-8").splitlines(keepends=True)
        rel = f"contracts/{path.relative_to(root).as_posix()}"
        for op, node, new in _sites(tree):
            end_line = node.end_lineno or node.lineno  # type: ignore[attr-defined]
            end_col = node.end_col_offset or 0  # type: ignore[attr-defined]
            start = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
            old = _segment(raw, start[0], start[1], end_line, end_col)
            text = f"({ast.unparse(new)})"
            line = lines[start[0] - 1].strip()
            out.append(Mutant(rel, start[0], op,
                              f"{' '.join(old.split())[:80]} -> {text[:80]}  [{line[:60]}]",
                              (start[0], start[1], end_line, end_col), text))
    return out


def _apply(source: str, m: Mutant) -> str:
    lines = source.splitlines(keepends=True)
    l0, c0, l1, c1 = m.span
    # columns are UTF-8 byte offsets in ast
    head = lines[l0 - 1].encode("utf-8")[:c0].decode("utf-8")
    tail = lines[l1 - 1].encode("utf-8")[c1:].decode("utf-8")
    return "".join(lines[: l0 - 1]) + head + m.replacement + tail + "".join(lines[l1:])


def tests_for(rel: str, tests_dir: Path) -> list[Path]:
    """The mutated module's own tests: ``contracts/<provider>/*`` -> the provider's test
    modules, ``contracts/<name>.py`` -> ``test_<name>*.py``; else the test modules that
    name the module; oracle tests are never included."""
    parts = Path(rel).parts
    stem = parts[1] if len(parts) > 2 else Path(parts[1]).stem
    found = sorted(p for p in tests_dir.glob(f"test_{stem.lstrip('_')}*.py"))
    if not found:
        found = sorted(p for p in tests_dir.glob("test_*.py")
                       if stem in p.read_text(encoding="utf-8"))
    return [p for p in found if not any(w in p.name for w in ("oracles", "packaging", "properties"))]


def _run_group(cmd: list[str], *, cwd: Path, env: dict[str, str],
               timeout: float) -> subprocess.CompletedProcess[str]:
    """``subprocess.run`` in a session of its own: at the timeout the whole process
    group is killed, so a test that started processes of its own cannot hold the
    output pipes open (and the phase past its end) after pytest is killed."""
    import signal

    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                            errors="replace", start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.communicate()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def is_equivalent(m: Mutant) -> bool:
    """Whether ``m`` is one of the :data:`EQUIVALENT` mutants."""
    before = m.change.split(" -> ", 1)[0]
    return any(m.file == file and m.operator == op and before == text
               for file, op, text in EQUIVALENT)


def run_mutants(
    *,
    budget_s: float,
    sample: int = 30,
    select: str | None = None,
    stream: IO[str] | None = None,
    env: dict[str, str] | None = None,
    timeout_s: float = PER_MUTANT_TIMEOUT_S,
    keep: Callable[[Mutant], bool] | None = None,
) -> dict[str, Any]:
    """Run a seeded sample of mutants until ``budget_s``; the summary.json entry.
    ``keep``: only the mutants of the sample it accepts run (a shard's part).
    Progress goes to ``stream`` (default: the standard error of the moment)."""
    from pcfuzz._data import checkout_root

    if stream is None:
        stream = sys.stderr

    started = time.monotonic()
    checkout = checkout_root()
    result: dict[str, Any] = {"status": "off", "killed": 0, "total": 0, "survivors": [],
                              "mutants": [], "sites": 0, "operator": "built-in AST mutator"}
    if checkout is None or not (checkout / "tests").is_dir():
        result["status"] = "no tests (an installed pcfuzz ships none)"
        return result
    root = _contracts_dir()
    every = find_mutants(root)
    result["sites"] = len(every)
    equivalent = [m for m in every if is_equivalent(m)]
    result["equivalent"] = [{"file": m.file, "line": m.line, "operator": m.operator,
                             "change": m.change} for m in equivalent]
    wanted = [w for w in (select or "").split(",") if w]
    pool = [m for m in every
            if (not wanted or any(w == f"{m.file}:{m.line}" or w in f"{m.file}:{m.line}:"
                                  for w in wanted))
            and (wanted or not is_equivalent(m))]
    chosen = random.Random(SEED).sample(pool, min(sample, len(pool)))
    if keep is not None:
        chosen = [m for m in chosen if keep(m)]
    stream.write(f"[mutants] {len(chosen)} of {len(every)} mutants, budget {budget_s:.0f}s\n")
    run_env = dict(env or os.environ)
    run_env.update({"HYPOTHESIS_PROFILE": "dev", "PYTHONDONTWRITEBYTECODE": "1"})
    run_env.pop("PCFUZZ_PROPERTIES_ONLY", None)
    baseline: dict[str, int] = {}
    deselected: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="pcfuzz-mutants-") as tmp:
        boot = Path(tmp) / "boot.py"
        boot.write_text(_BOOT, encoding="utf-8")
        for n, m in enumerate(chosen, 1):
            left = budget_s - (time.monotonic() - started)
            if left < 5.0:
                break
            copy = Path(tmp) / f"m{n}" / "contracts"
            shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__"))
            target = copy.parent / m.file
            target.write_text(_apply(target.read_text(encoding="utf-8"), m), encoding="utf-8")
            tests = tests_for(m.file, checkout / "tests")
            # --assert=plain: pytest's rewriting import hook would load pcfuzz.* ahead of
            # the mutated copy's hook
            cmd = [sys.executable, str(boot), str(copy), "-x", "-q", "-p", "no:cacheprovider",
                   "--assert=plain", "-m", "not slow and not oracle", "--no-header",
                   "-o", "addopts=", *map(str, tests)]
            key = " ".join(map(str, tests))
            if key not in baseline:  # the unmutated code must pass these tests
                base_copy = Path(tmp) / "base" / "contracts"
                if not base_copy.is_dir():
                    shutil.copytree(root, base_copy, ignore=shutil.ignore_patterns("__pycache__"))
                # no -x: every test that fails unmutated is named and deselected
                base_cmd = [*cmd[:2], str(base_copy), "-rf", *cmd[4:]]
                try:
                    base = _run_group(base_cmd, cwd=checkout, env=run_env,
                                      timeout=max(1.0, left))
                    failing = [line.split()[1] for line in base.stdout.splitlines()
                               if line.startswith("FAILED ")]
                    baseline[key] = 0 if base.returncode == 0 or (
                        base.returncode == 1 and failing) else base.returncode
                    deselected[key] = failing
                    for nodeid in failing:
                        stream.write(f"[mutants] fails unmutated, deselected: {nodeid}\n")
                except subprocess.TimeoutExpired:
                    baseline[key] = -1
                left = budget_s - (time.monotonic() - started)
            cmd += [f"--deselect={n}" for n in deselected.get(key, [])]
            began = time.monotonic()
            if baseline[key] != 0:
                m.status = "error"
                m.change += f"  (unmutated code fails these tests: exit {baseline[key]})"
            else:
                try:
                    proc = _run_group(cmd, cwd=checkout, env=run_env,
                                      timeout=min(timeout_s, max(1.0, left)))
                    m.status = {0: "survived", 1: "killed", 2: "killed"}.get(proc.returncode,
                                                                             "error")
                except subprocess.TimeoutExpired:
                    m.status = "timeout" if left > timeout_s else "not run"
            m.seconds = round(time.monotonic() - began, 1)
            shutil.rmtree(copy.parent, ignore_errors=True)
            stream.write(f"[mutants] {n}/{len(chosen)} {m.status:<8} {m.file}:{m.line} "
                         f"{m.operator}: {m.change[:90]}\n")
            stream.flush()
    ran = [m for m in chosen if m.status in ("killed", "survived", "timeout")]
    result.update(
        deselected=sorted({n for names in deselected.values() for n in names}),
        status="measured" if ran else "not run (budget)",
        killed=sum(1 for m in ran if m.status != "survived"),
        total=len(ran),
        survivors=[{"file": m.file, "line": m.line, "operator": m.operator, "change": m.change}
                   for m in ran if m.status == "survived"],
        mutants=[{k: v for k, v in asdict(m).items() if k not in ("span", "replacement")}
                 for m in chosen],
    )
    return result


def render(result: dict[str, Any]) -> str:
    total, killed = result["total"], result["killed"]
    rate = f"{100.0 * killed / total:.0f}%" if total else "-"
    lines = [f"mutants: {killed}/{total} killed ({rate}); {len(result['survivors'])} survived; "
             f"{result['sites']} sites in contracts/"]
    lines += [f"  SURVIVED {s['file']}:{s['line']} {s['operator']}: {s['change']}"
              for s in result["survivors"]]
    if result.get("equivalent"):
        lines.append(f"  left out of the sample: {len(result['equivalent'])} mutants argued "
                     "equivalent (docs/fuzzing.md, \"Known equivalent\")")
    return "\n".join(lines) + "\n"


def to_json(result: dict[str, Any]) -> str:
    return json.dumps(result, indent=1) + "\n"
