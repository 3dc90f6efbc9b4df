"""Run in a fresh interpreter by ``tests/test_fuzz_instrumentation.py``: import one fuzz
target the way libFuzzer starts it (by path, nothing imported before), optionally
run its seed corpus, and print one JSON report on stdout:

* ``modules``: every module name in ``sys.modules`` after the target's imports;
* ``instrumented``: the modules ``fuzz.harness.instrument`` patched, and ``cached``:
  those it loaded from its cache;
* ``patched_elsewhere``: functions carrying atheris's marker in a module outside
  ``pcfuzz.contracts`` (the standard library, the strategies, the harness, the target);
* ``unpatched``: functions defined in an instrumented module that run unpatched code;
* ``counters``: the next coverage counter atheris would hand out (how many the
  imports reserved);
* ``code``: per instrumented module, a digest of its functions' code objects;
* with ``--seeds DIR``: ``ran_unpatched``, the functions of ``contracts/`` that the
  seed inputs ran (calls seen by ``sys.setprofile``) whose code is not patched.

Usage: ``python _instrumentation_probe.py TARGET.py [--seeds DIR]``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

MARKER = "__ATHERIS_INSTRUMENTED__"


def patched(code: types.CodeType) -> bool:
    return MARKER in code.co_consts


def canonical(value: object) -> object:
    """A comparable form of a code object and its constants: the bytecode, names and
    tables, constants recursively (``marshal.dumps`` is not: its output depends on
    which objects happen to be shared), the atheris module by name."""
    if isinstance(value, types.CodeType):
        return ("code", value.co_name, value.co_code, value.co_names, value.co_varnames,
                value.co_freevars, value.co_cellvars, value.co_flags, value.co_argcount,
                value.co_kwonlyargcount, value.co_stacksize, value.co_exceptiontable,
                value.co_linetable, tuple(canonical(c) for c in value.co_consts))
    if isinstance(value, types.ModuleType):
        return ("module", value.__name__)
    if isinstance(value, tuple):
        return ("tuple", tuple(canonical(c) for c in value))
    if isinstance(value, frozenset):
        return ("frozenset", tuple(sorted(repr(canonical(c)) for c in value)))
    return (type(value).__name__, repr(value))


def functions(namespace: dict[str, Any], owner: str) -> list[tuple[str, types.CodeType]]:
    """(qualified name, code) of the functions and methods written in a module's file
    (not those a decorator generates, such as a dataclass's ``__init__``)."""
    source = namespace.get("__file__")
    found = []
    for name, value in list(namespace.items()):
        members = [(name, value)]
        if isinstance(value, type) and value.__module__ == owner:
            members = [(f"{name}.{a}", getattr(m, "__func__", m)) for a, m in vars(value).items()]
        for qualified, function in members:
            if (isinstance(function, types.FunctionType) and function.__module__ == owner
                    and function.__code__.co_filename == source):
                found.append((qualified, function.__code__))
    return found


def main(argv: list[str]) -> int:
    target = Path(argv[1]).resolve()
    seeds = Path(argv[argv.index("--seeds") + 1]) if "--seeds" in argv else None
    spec = importlib.util.spec_from_file_location("_probed_target", target)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    import atheris

    from pcfuzz.fuzz.harness import instrument

    counters = atheris._reserve_counter()
    report: dict[str, Any] = {
        "modules": sorted(sys.modules),
        "instrumented": sorted(instrument.INSTRUMENTED),
        "cached": sorted(instrument.CACHED),
        "counters": counters,
        "patched_elsewhere": [],
        "unpatched": [],
        "code": {},
    }
    for name, loaded in sorted(sys.modules.items()):
        namespace = getattr(loaded, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        owner = loaded.__name__ if name != "_probed_target" else "_probed_target"
        defined = functions(namespace, owner)
        if name in instrument.INSTRUMENTED:
            report["unpatched"] += [f"{name}.{q}" for q, code in defined if not patched(code)]
            digest = hashlib.sha256()
            for qualified, code in sorted(defined, key=lambda item: item[0]):
                digest.update(qualified.encode() + repr(canonical(code)).encode())
            report["code"][name] = digest.hexdigest()
        elif not name.startswith(("pcfuzz.contracts", "atheris")):  # atheris: the patcher
            report["patched_elsewhere"] += [f"{name}.{q}" for q, code in defined if patched(code)]

    if seeds is not None:
        contracts_dir = str(Path(sys.modules["pcfuzz.contracts"].__file__ or "").parent)
        ran: set[types.CodeType] = set()

        def profile(frame: types.FrameType, event: str, arg: object) -> None:
            if event == "call" and frame.f_code.co_filename.startswith(contracts_dir):
                ran.add(frame.f_code)

        sys.setprofile(profile)
        try:
            for path in sorted(seeds.iterdir()):
                if path.is_file():
                    module.TestOneInput(path.read_bytes())
        finally:
            sys.setprofile(None)
        # Comprehensions and generator expressions stay unpatched by design (the
        # patcher of atheris.instrument_imports leaves them too); the rest must not.
        report["ran_unpatched"] = sorted(
            f"{Path(code.co_filename).name}:{code.co_qualname}" for code in ran
            if not patched(code) and (code.co_name == "<lambda>" or code.co_name[0] != "<")
        )
        report["ran"] = len(ran)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
