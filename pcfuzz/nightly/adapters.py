"""The user's adapters in the night (``pcfuzz nightly --adapter CONTRACT=module:function``).

Each adapter gets two things, both planned like the rest of the night:

* the conformance kit's families, as tests of the property phase: a pytest file
  written to the work directory, one ``pcfuzz_conformance`` test per adapter (one
  test per default family), sized and stopped by the property plugin like every
  property test (``pcfuzz/nightly/pytest_budget.py``); its findings are saved and
  replayed from ``<regressions dir>/conform/<adapter id>/``;
* one byte-level libFuzzer target over raw SSE bytes with the contract's own parser
  as the oracle (``fuzz/harness/adapter_target.py``), written to
  ``<work dir>/adapters/fuzz_adapter_<adapter id>.py`` with the wire target's
  dictionary, options and seeds, and fuzzed by the engine like any other target.

Only the command line or the configuration names code: each generated file imports
the adapter by the ``module:function`` declared there, and every file is rewritten
every night. No data file (a corpus, a regression, a report) ever names a module.

Configuration (when no ``--adapter`` is given): ``./pcfuzz.toml``'s ``[nightly]``
table, else ``./pyproject.toml``'s ``[tool.pcfuzz.nightly]`` table, key
``adapters``: a list of the same strings as ``--adapter``.
"""

from __future__ import annotations

import hashlib
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pcfuzz._data import fuzz_dir as shipped_fuzz_dir
from pcfuzz.engine.targets import Layout, Target
from pcfuzz.errors import UsageError
from pcfuzz.registry import NAMES

__all__ = [
    "AdapterSpec",
    "INPUTS",
    "adapter_lines",
    "adapter_summary",
    "parse_adapter",
    "read_config",
    "write_kit_tests",
    "write_targets",
]

INPUTS = ("events", "sse")
#: How the adapter is called (``pcfuzz conform --adapter-form``): ``plain``
#: ``adapter(stream) -> calls``, ``release`` ``adapter(stream, release, continuation)``.
FORMS = ("plain", "release")
#: Seconds a kit family test needs at least (its worker's start, the golden stream,
#: a few examples): the plan counts it for each family of each adapter.
KIT_TEST_S = 5.0
#: The generated pytest file, in ``<work dir>/adapters/``.
KIT_FILE = "test_pcfuzz_adapters.py"


@dataclass(frozen=True)
class AdapterSpec:
    """One adapter of the night: the contract it reads, what it is given and the
    ``module:function`` that names it."""

    contract: str
    function: str
    input: str = "events"
    form: str = "plain"

    @property
    def id(self) -> str:
        """``openai_chat_3f2a9c0d``: the contract and a digest of the declaration (file
        and folder names: they do not name the code)."""
        declared = f"{self.contract}={self.function}:{self.input}" + (
            ":release" if self.form == "release" else "")
        digest = hashlib.sha256(declared.encode()).hexdigest()[:8]
        return f"{self.contract.replace('-', '_')}_{digest}"

    @property
    def fuzzer(self) -> str:
        return f"fuzz_adapter_{self.id}"

    @property
    def test(self) -> str:
        return f"test_adapter_{self.id}"

    def declared(self) -> str:
        options = (":sse" if self.input == "sse" else "") + (
            ":release" if self.form == "release" else "")
        return f"{self.contract}{options}={self.function}"


def parse_adapter(text: str) -> AdapterSpec:
    """``CONTRACT=MODULE:FUNCTION`` (the adapter takes the decoded events),
    ``CONTRACT:sse=...`` (it takes the raw SSE bytes), ``CONTRACT:release=...`` (the
    release form, ``adapter(stream, release, continuation)``), or both:
    ``CONTRACT:sse:release=...``."""
    left, sep, function = text.partition("=")
    contract, _, options = left.partition(":")
    if not sep or not function:
        raise UsageError(f"--adapter must be CONTRACT=MODULE:FUNCTION (or CONTRACT:sse=..., "
                         f"CONTRACT:release=...), got {text!r}")
    if contract not in NAMES:
        raise UsageError(f"--adapter {text!r}: unknown contract {contract!r}; known: "
                         f"{', '.join(NAMES)}")
    input, form = "events", "plain"
    given = options.split(":") if options else []
    for option in given:
        if option in INPUTS and given.count(option) == 1 and input == "events":
            input = option
        elif option in FORMS and given.count(option) == 1 and form == "plain":
            form = option
        else:
            raise UsageError(f"--adapter {text!r}: unknown or repeated option {option!r}; "
                             f"known: an input ({', '.join(INPUTS)}) and a form "
                             f"({', '.join(FORMS)}), once each")
    module, colon, attr = function.rpartition(":")
    if not colon or not module or not attr:
        raise UsageError(f"--adapter {text!r}: the adapter must be module:function or "
                         f"path/to/file.py:function")
    return AdapterSpec(contract, function, input, form)


def read_config(directory: Path, path: Path | None = None) -> list[str]:
    """The ``adapters`` of ``path`` (a ``pcfuzz.toml`` or a ``pyproject.toml``), or
    of the first of those two in ``directory``; ``[]`` when there is none."""
    candidates = [path] if path is not None else [directory / "pcfuzz.toml",
                                                 directory / "pyproject.toml"]
    for candidate in candidates:
        if candidate is None or not candidate.is_file():
            if path is not None:
                raise UsageError(f"configuration file {path} does not exist")
            continue
        try:
            data = tomllib.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, UnicodeError, tomllib.TOMLDecodeError) as exc:
            raise UsageError(f"cannot read {candidate}: {exc}") from exc
        table: Any = data.get("nightly") if candidate.name != "pyproject.toml" else (
            data.get("tool", {}).get("pcfuzz", {}).get("nightly"))
        if table is None:
            continue
        adapters = table.get("adapters", []) if isinstance(table, dict) else None
        if not isinstance(adapters, list) or not all(isinstance(a, str) for a in adapters):
            raise UsageError(f"{candidate}: adapters must be a list of "
                             "\"CONTRACT=MODULE:FUNCTION\" strings")
        return list(adapters)
    return []


# --------------------------------------------------------------------- the files


def _folder(layout: Layout) -> Path:
    return layout.work_dir / "adapters"


def write_targets(adapters: list[AdapterSpec], layout: Layout, root: Path,
                  timeout_s: int = 10) -> list[Target]:
    """One fuzz target per adapter (see the module docstring); ``root``: the directory
    the adapters import from (where ``pcfuzz nightly`` was started)."""
    folder = _folder(layout)
    folder.mkdir(parents=True, exist_ok=True)
    own = Layout(fuzz_dir=folder, regressions_dir=layout.regressions_dir,
                 work_dir=layout.work_dir, installed=layout.installed)
    shipped = shipped_fuzz_dir()
    targets = []
    for adapter in adapters:
        wire = "fuzz_wire_" + adapter.contract.replace("-", "_")
        path = folder / f"{adapter.fuzzer}.py"
        path.write_text(_target_source(adapter, root), encoding="utf-8")
        path.chmod(0o755)
        dictionary = shipped / f"{wire}.dict"
        if dictionary.is_file():
            shutil.copyfile(dictionary, path.with_suffix(".dict"))
        path.with_suffix(".options").write_text(
            f"[libfuzzer]\ndict = {adapter.fuzzer}.dict\nmax_len = 16384\n"
            f"timeout = {timeout_s}\n", encoding="utf-8")
        seeds = folder / "corpus" / adapter.fuzzer
        seeds.mkdir(parents=True, exist_ok=True)
        for seed in sorted((shipped / "corpus" / wire).glob("*")):
            if seed.is_file() and not (seeds / seed.name).exists():
                shutil.copyfile(seed, seeds / seed.name)
        targets.append(Target(fuzzer=adapter.fuzzer, path=path.resolve(), layout=own))
    return targets


def _make_target(adapter: AdapterSpec) -> str:
    """The generated target's ``TestOneInput`` line(s): the plain form's target, or the
    release form's (``pcfuzz.conform.release_target``)."""
    if adapter.form == "release":
        return ("from pcfuzz.conform.release_target import make_release_target  # noqa: E402\n"
                f"\nTestOneInput = make_release_target({adapter.contract!r}, ADAPTER, "
                f"input={adapter.input!r})")
    return (f"TestOneInput = make_adapter_target({adapter.contract!r}, ADAPTER, "
            f"input={adapter.input!r})")


def _target_source(adapter: AdapterSpec, root: Path) -> str:
    return f'''#!/usr/bin/env python3
"""Written by pcfuzz nightly for --adapter {adapter.declared()}: the byte-level
target of that adapter (fuzz/harness/adapter_target.py). Rewritten every night."""

import sys

import atheris

from pcfuzz.fuzz.harness.instrument import STREAM, WIRE, instrument, parser

sys.path.insert(0, {str(root)!r})

# The contract's stream path (the events decoder and the oracle), then the user's
# code (the adapter's top-level package), instrumented; nothing else.
with instrument(*STREAM, *WIRE, *parser({adapter.contract!r})):
    import pcfuzz.contracts.{adapter.contract.replace("-", "_")}  # noqa: F401
    from pcfuzz.fuzz.harness.adapter_target import import_adapter, make_adapter_target

ADAPTER = import_adapter({adapter.function!r}, instrumented=True)
{_make_target(adapter)}


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
'''


def write_kit_tests(adapters: list[AdapterSpec], layout: Layout, root: Path) -> Path:
    """The property phase's file of kit tests, one ``pcfuzz_conformance`` per adapter
    over the contract's default families (none skipped: a skipped test would leave
    the night incomplete)."""
    folder = _folder(layout)
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        '"""Written by pcfuzz nightly: the conformance kit against each --adapter (or the',
        'configuration\'s adapters). Rewritten every night; edits are lost."""',
        "",
        "import sys",
        "",
        f"sys.path.insert(0, {str(root)!r})",
        "",
        "from pcfuzz.conform.loader import load_adapter  # noqa: E402",
        "from pcfuzz.conform.pytest_plugin import pcfuzz_conformance  # noqa: E402",
        "from pcfuzz.strategies.conformance import families  # noqa: E402",
        "",
    ]
    for adapter in adapters:
        regressions = layout.regressions_dir / "conform" / adapter.id
        lines += [
            f"# {adapter.declared()}",
            f"{adapter.test} = pcfuzz_conformance(",
            f"    {adapter.contract!r}, load_adapter({adapter.function!r}), "
            f"input={adapter.input!r}, form={adapter.form!r},",
            f"    families=families({adapter.contract!r}), regressions={str(regressions)!r})",
            "",
        ]
    path = folder / KIT_FILE
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


# --------------------------------------------------------------------- the report


def adapter_summary(adapters: list[AdapterSpec], rows: list[dict[str, Any]],
                    props: dict[str, Any], layout: Layout) -> list[dict[str, Any]]:
    """One entry per adapter for ``summary.json``: its kit tests (from the property
    table) and its fuzz target (from the target rows)."""
    out = []
    for adapter in adapters:
        mine = [r for r in props.get("table", []) if f"::{adapter.test}[" in r["name"]]
        failures = [f for f in props.get("failures", []) if f"::{adapter.test}[" in f["name"]]
        row = next((r for r in rows if r.get("fuzzer") == adapter.fuzzer), None)
        crashes = row["crashes"] if row else []
        out.append({
            "contract": adapter.contract,
            "adapter": adapter.function,
            "input": adapter.input,
            "form": adapter.form,
            "id": adapter.id,
            "kit": {
                "ran": bool(mine),
                "tests": len(mine),
                "passed": sum(1 for r in mine if r["result"] == "passed"),
                "failed": len(failures),
                "examples": sum(int(r.get("examples") or 0) for r in mine),
                "failures": [{"name": f["name"],
                              "rule": f["message"].partition("\n")[0][:300]}
                             for f in failures],
                "regressions": str(layout.regressions_dir / "conform" / adapter.id),
            },
            "fuzz": {
                "target": row["name"] if row else None,
                "status": row["status"] if row else "not run",
                "executions": int(row["executions"]) if row else 0,
                "new_crashes": sum(1 for c in crashes if c["new"]),
                "crashes": [{"fingerprint": c["fingerprint"], "message": c["message"][:300],
                             "input": c["input"], "new": c["new"]} for c in crashes],
            },
        })
    return out


def adapter_lines(summary: dict[str, Any]) -> list[str]:
    """The report's section on the user's adapters."""
    adapters = summary.get("adapters") or []
    if not adapters:
        return []
    lines = ["", "## Your adapters", "",
             "| adapter | contract | kit families | kit examples | kit findings | fuzz target "
             "| executions | new crashes |",
             "|---|---|---:|---:|---:|---|---:|---:|"]
    for a in adapters:
        kit, fuzz = a["kit"], a["fuzz"]
        families = f"{kit['passed']}/{kit['tests']}" if kit["ran"] else "not run"
        lines.append(f"| `{a['adapter']}` ({a['input']}) | {a['contract']} | {families} | "
                     f"{kit['examples']} | {kit['failed']} | {fuzz['target'] or '-'} "
                     f"({fuzz['status']}) | {fuzz['executions']:,} | {fuzz['new_crashes']} |")
    for a in adapters:
        for failure in a["kit"]["failures"]:
            lines.append(f"- `{a['adapter']}` `{failure['name'].rpartition('::')[2]}`: "
                         f"{failure['rule']}")
        for crash in a["fuzz"]["crashes"]:
            lines.append(f"- `{a['adapter']}` fuzz target: "
                         f"{'new' if crash['new'] else 'known'} `{crash['fingerprint']}`: "
                         f"{crash['message'][:200]} (`{crash['input']}`)")
        if a["kit"]["failures"]:
            lines.append(f"  - saved streams, replayed every night: `{a['kit']['regressions']}`")
    return lines
