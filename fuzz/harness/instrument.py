"""Instrument the code under test, and nothing else.

``atheris.instrument_imports()`` instruments every module first imported under it:
the standard library modules the contracts import (``json``, ``datetime``,
``hashlib``, ...), and with them everything they import. Its ``include=`` works on
top-level package names only, so ``include=["pcfuzz"]`` would take the strategies
and the harness too. Patching bytecode is the start-up cost of a Python target
(20-60 microseconds an instruction on a shared 2-core machine), and coverage
from code that is not under test only misleads the fuzzer. So a target names the
modules of ``pcfuzz.contracts`` its inputs run::

    with instrument(*STREAM, *WIRE, *parser("openai-chat")):
        import pcfuzz.contracts.wire

Under :func:`instrument`, a module is instrumented when its name is one of the names
given or below one of them (a package name takes its submodules); every other module,
of the standard library, of pcfuzz or of anyone, is imported as usual.
``tests/test_fuzz_instrumentation.py`` runs every target on its seeds and checks that
each function of the contracts it runs is instrumented code and that nothing else is.

What is patched: every function, method and lambda of a module, with
``atheris.patch_code`` (the patcher of ``atheris.instrument_imports``, with the same
data-flow tracing). Module and class bodies are not: they run once, at import,
before the first input, and would only add start-up time.
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from typing import Any

import atheris

__all__ = ["CONTRACTS", "INSTRUMENTED", "STREAM", "WIRE", "contracts", "instrument",
           "is_instrumented", "parser", "provider"]

#: The package under test; :func:`instrument` takes names inside it only.
CONTRACTS = "pcfuzz.contracts"
#: Every module instrumented so far in this process, by name.
INSTRUMENTED: set[str] = set()
#: The marker ``atheris.patch_code`` leaves in the constants of a patched code object.
_MARKER = "__ATHERIS_INSTRUMENTED__"


def contracts(*names: str) -> tuple[str, ...]:
    """Full names of modules of the contracts: ``contracts("sse")`` is
    ``("pcfuzz.contracts.sse",)``."""
    return tuple(f"{CONTRACTS}.{name}" for name in names)


#: What every stream parser runs: errors, strict JSON, the value copier, the field
#: kinds, the shared stream machinery (poison, limits) and the digest of a Turn.
STREAM = contracts("errors", "strict_json", "_values", "_kinds", "_stream", "digest")
#: What reading raw SSE bytes into events adds.
WIRE = contracts("sse", "wire")


def parser(contract: str) -> tuple[str, ...]:
    """The modules of one provider's stream parser (``openai-chat`` or
    ``openai_chat``): its stream, tables and Turn, not its request builders."""
    package = contract.replace("-", "_")
    return contracts(f"{package}._stream", f"{package}._tables", f"{package}._turn")


def provider(contract: str) -> tuple[str, ...]:
    """A whole provider package (parser, request builders, cache) and the shared
    modules its request builders run (tool results, the request-controls rule)."""
    return (*contracts(contract.replace("-", "_")), *contracts("results", "_request"))


def _within(name: str, roots: Sequence[str]) -> bool:
    return any(name == root or name.startswith(root + ".") for root in roots)


def _patch(code: types.CodeType) -> types.CodeType:
    """``code`` (a module or class body) with every function inside it patched."""
    consts = list(code.co_consts)
    for index, const in enumerate(consts):
        if not isinstance(const, types.CodeType):
            continue
        if not const.co_flags & inspect.CO_OPTIMIZED:
            consts[index] = _patch(const)  # a class body: patch its methods
        elif const.co_name == "<lambda>" or not const.co_name.startswith("<"):
            # Comprehensions and generator expressions are left to the patcher of
            # the function around them (it leaves them alone, as atheris does).
            consts[index] = atheris.patch_code(const, True)
    return code.replace(co_consts=tuple(consts))


class _InstrumentingLoader(Loader):
    """Wraps the loader that found the module: same module, patched code."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def create_module(self, spec: ModuleSpec) -> types.ModuleType | None:
        module: types.ModuleType | None = self._inner.create_module(spec)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        name = module.__name__
        code = self._inner.get_code(name)
        if code is None:
            raise ImportError(f"no code to instrument for {name}", name=name)
        exec(_patch(code), module.__dict__)  # noqa: S102 - the module's own code
        INSTRUMENTED.add(name)

    def __getattr__(self, name: str) -> Any:
        # get_source (tracebacks), get_filename, is_package, resource readers, ...
        return getattr(self._inner, name)


class _Finder(MetaPathFinder):
    def __init__(self, roots: Sequence[str]) -> None:
        self.roots = tuple(roots)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> ModuleSpec | None:
        if not _within(fullname, self.roots):
            return None
        later = sys.meta_path[sys.meta_path.index(self) + 1:]
        for finder in later:
            find = getattr(finder, "find_spec", None)
            spec: ModuleSpec | None = find(fullname, path, target) if find is not None else None
            if spec is None or spec.loader is None:
                continue
            if not hasattr(spec.loader, "get_code"):
                return spec  # an extension module or an opaque loader: no bytecode
            spec.loader = _InstrumentingLoader(spec.loader)
            return spec
        return None


@contextmanager
def instrument(*modules: str) -> Iterator[None]:
    """Within the block, import ``modules`` (names in ``pcfuzz.contracts``; a
    package name takes its submodules) instrumented and everything else as usual.

    A module already imported before the block stays as it is (as with
    ``atheris.instrument_imports``): a process that imported the contracts first,
    such as a test importing the targets, runs them uninstrumented. Raises
    ``ValueError`` for a name outside the contracts.
    """
    if not modules:
        raise ValueError("instrument() needs the modules under test")
    outside = [m for m in modules if m == CONTRACTS or not _within(m, (CONTRACTS,))]
    if outside:
        raise ValueError(f"instrument() takes modules of {CONTRACTS} only, not {outside}")
    finder = _Finder(modules)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


def is_instrumented(function: Any) -> bool:
    """Whether ``function`` (a function or method) runs patched bytecode."""
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    return isinstance(code, types.CodeType) and _MARKER in code.co_consts
