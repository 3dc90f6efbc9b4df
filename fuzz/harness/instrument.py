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

The target of a user's adapter (``pcfuzz nightly --adapter``) also instruments the
user's code, with :func:`instrument_adapter`: the adapter's top-level package (the
adapter and the parser it wraps), not what that package imports from elsewhere; an
adapter given by file path has that file patched (:func:`instrumenting_loader`).

What is patched: every function, method and lambda of a module, with
``atheris.patch_code`` (the patcher of ``atheris.instrument_imports``, with the same
data-flow tracing). Module and class bodies are not: they run once, at import,
before the first input, and would only add start-up time. With the atheris whose
patcher source was read for it, :func:`_speed_up_patcher` drops a step of the
patcher whose result is thrown away and compares instructions by identity in C: the
same patched code in about 60% of the time.

Patched modules are cached. Patching a stream parser's modules costs a second or
more; libFuzzer's fork, merge and minimize modes and every campaign of the nightly
start the target again, and each start would pay it. A patched module uses the
coverage counters reserved while it was patched, a contiguous range: counters are
numbered in the order modules are patched, and a target imports its modules in the
same order every time. So each patched module is stored (``marshal``, the atheris
module object in its constants replaced by a placeholder) under a name made of the
module's name, a digest of its source, the Python magic number and the patcher's own
source, and the number of the first counter of its range; a later start that
reserves that same first counter loads the file, reserves the rest of the range and
checks it ends on the counter recorded. Anything else (no file, a different source,
a damaged file, counters out of step) patches afresh. (A fresh patch need not equal
the stored one byte for byte: which branch gets which counter of the range follows
the patcher's traversal order, which varies between processes.) Where:
``$PCFUZZ_INSTRUMENT_CACHE`` if set (the ``pcfuzz`` command sets it to
``instrumented/`` in the work directory, which CI caches with the corpora), else the
``__pycache__`` folder beside the module (not written under
``PYTHONDONTWRITEBYTECODE``, like the ``.pyc`` files there); a directory that cannot
be written only costs the patching again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import marshal
import os
import re
import sys
import tempfile
import types
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from typing import Any

import atheris

from pcfuzz.fuzz.harness import INSTRUMENT_CACHE_VARIABLE

__all__ = ["CACHED", "CACHE_VARIABLE", "CONTRACTS", "INSTRUMENTED", "STREAM", "WIRE",
           "adapter_roots", "contracts", "instrument", "instrument_adapter",
           "instrumenting_loader", "is_instrumented", "parser", "provider"]

#: The package under test; :func:`instrument` takes names inside it only.
CONTRACTS = "pcfuzz.contracts"
#: Every module instrumented so far in this process, by name.
INSTRUMENTED: set[str] = set()
#: Those of them loaded from the cache (the rest were patched in this process).
CACHED: set[str] = set()
#: The marker ``atheris.patch_code`` leaves in the constants of a patched code object.
_MARKER = "__ATHERIS_INSTRUMENTED__"
#: Where patched modules are cached (default: ``__pycache__`` beside each module).
CACHE_VARIABLE = INSTRUMENT_CACHE_VARIABLE
#: Stands for the atheris module (not marshallable) in a cached code object.
_PLACEHOLDER = "\x00pcfuzz: the atheris module\x00"
#: Bump when what is cached changes meaning.
_FORMAT = b"pcfuzz-instrumented/1"


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


#: SHA-256 of the atheris patcher source (``instrument_bytecode.py`` of atheris 3.0.0)
#: that :func:`_speed_up_patcher` was read against.
_REVIEWED_PATCHER = "5b7a28e4a2682081d77dbcc315c1344fe947f55c024583d48e7c4a45b5ec15e1"
#: Whether this process patches with the speed-ups (see :func:`_speed_up_patcher`).
_SPED_UP: list[bool] = []
#: The ``Instruction`` attributes the speed-ups replaced, as atheris wrote them.
_PLAIN: dict[str, Any] = {}


def _no_expansion(self: Any) -> list[Any]:
    return []


def _speed_up_patcher() -> bool:
    """Make atheris's patcher faster without changing what it produces, on the source
    it was read against only (any other atheris patches as it ships); whether it did.

    * ``Instrumentor.to_code`` builds every instruction's expansion (EXTENDED_ARGs and
      CACHEs as separate ``Instruction`` objects) into a list it never reads: a
      third of the patching time. The expansion is skipped (``to_bytes``, whose
      output is the code, still checks each instruction's size).
    * ``Instruction`` compares and hashes by identity in Python (``id(self) ==
      id(other)``, ``hash = id(self)``): ``object``'s identity comparison and hash,
      in C, say the same. Only the order of a set of instructions changes, which
      follows addresses either way (so counter numbering already varies between
      processes; the cache is built for that, see the module docstring).

    * ``Instruction.length``, ``size``, ``to_bytes`` and ``get_stack_effect`` look an
      instruction's inline cache count up through its name (``dis.opname``, then
      ``dis.opmap``, then ``opcode._inline_cache_entries``) on every call, and
      ``to_code`` calls ``size`` for every instruction on every pass over the
      offsets: the same figures from tables indexed by opcode, built once (on the
      Pythons whose ``_inline_cache_entries`` is such a table, 3.11 and 3.12).

    Together about half the patching time of a stream target (docs/fuzzing.md).
    ``tests/test_fuzz_instrumentation.py`` checks that the patched code is the same
    with and without them, and each replaced method's result on every instruction.
    """
    if _SPED_UP:
        return _SPED_UP[0]
    from atheris import instrument_bytecode

    try:
        with open(instrument_bytecode.__file__, "rb") as f:
            reviewed = hashlib.sha256(f.read()).hexdigest() == _REVIEWED_PATCHER
    except (OSError, TypeError):
        reviewed = False
    if reviewed:
        instruction = instrument_bytecode.Instruction
        for name in ("expanded_instructions", "__eq__", "__hash__"):
            _PLAIN[name] = instruction.__dict__[name]
        instruction.expanded_instructions = _no_expansion
        instruction.__eq__ = object.__eq__
        instruction.__hash__ = object.__hash__
        tables = _opcode_tables(instrument_bytecode)
        if tables:
            for name, value in tables.items():
                _PLAIN[name] = instruction.__dict__[name]
                setattr(instruction, name, value)
    _SPED_UP.append(reviewed)
    return reviewed


def _opcode_tables(instrument_bytecode: Any) -> dict[str, Any]:
    """``Instruction.length``, ``size``, ``to_bytes`` and ``get_stack_effect``
    computed from tables indexed by opcode; none where the cache counts are no such
    table (Python 3.13 keys them by name)."""
    import dis
    import opcode

    entries = getattr(opcode, "_inline_cache_entries", None)
    if not isinstance(entries, list) or len(entries) != 256:
        return {}
    caches = tuple(int(n) for n in entries)
    cache_bytes = tuple(bytes((dis.opmap["CACHE"], 0)) * n for n in caches)
    extended, nop = dis.opmap["EXTENDED_ARG"], dis.opmap["NOP"]
    have_argument = dis.HAVE_ARGUMENT
    stack_effect = dis.stack_effect
    uncalculated = instrument_bytecode._UncalculatedArgSentinel

    def length(self: Any) -> int:
        # 1 + the CACHEs + an EXTENDED_ARG per byte of the argument past the first.
        count: int = 1 + caches[self.opcode]
        arg = self.arg
        if arg is not None and arg is not uncalculated and arg > 0xFF:
            count += 1 if arg <= 0xFFFF else 2 if arg <= 0xFFFFFF else 3
        return count

    def size(self: Any) -> int:
        return 2 * length(self)

    def to_bytes(self: Any) -> bytes:
        width: int = self._get_arg_size()  # raises on an uncalculated argument
        arg: int = self.arg or 0
        op: int = self.opcode
        if width == 2:
            return bytes((op, arg & 0xFF)) + cache_bytes[op]
        code = [op, arg & 0xFF]
        for _ in range(width // 2 - 1):
            arg >>= 8
            code = [extended, arg & 0xFF, *code]
        return bytes(code) + cache_bytes[op]

    def get_stack_effect(self: Any) -> int:
        op = self.opcode
        if op == extended or op == nop:
            return 0
        arg = self.arg
        if arg is uncalculated:
            return stack_effect(op, 0)
        return stack_effect(op, arg if op >= have_argument else None)

    return {"length": property(length), "size": property(size), "to_bytes": to_bytes,
            "get_stack_effect": get_stack_effect}


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


def _replace_consts(code: types.CodeType, old: Any, new: Any) -> types.CodeType:
    """``code`` with every constant that is ``old`` (nested code included) ``new``."""
    consts = tuple(
        _replace_consts(c, old, new) if isinstance(c, types.CodeType)
        else new if c is old or (type(c) is str and c == old) else c
        for c in code.co_consts
    )
    return code.replace(co_consts=consts)


def _constants(code: types.CodeType) -> Iterator[Any]:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _constants(const)
        else:
            yield const


_PATCHER: list[bytes] = []


def _patcher_digest() -> bytes:
    """The patcher's identity: the source of atheris's bytecode instrumentation."""
    if not _PATCHER:
        digest = hashlib.sha256(_FORMAT)
        digest.update(importlib.util.MAGIC_NUMBER)
        digest.update(str(sys.flags.optimize).encode())
        folder = os.path.dirname(atheris.__file__)
        for name in ("instrument_bytecode.py", "version_dependent.py"):
            try:
                with open(os.path.join(folder, name), "rb") as f:
                    digest.update(f.read())
            except OSError:
                digest.update(b"?" + name.encode())
        _PATCHER.append(digest.digest())
    return _PATCHER[0]


class _Cache:
    """The patched code of one module, stored for the next start (see the module
    docstring); every failure is a miss."""

    def __init__(self, name: str, loader: Any) -> None:
        self.stem: str | None = None
        self.path: str | None = None
        self.writable = False
        try:
            origin: str = loader.get_filename(name)
            source: bytes = loader.get_data(origin)
            folder = os.environ.get(CACHE_VARIABLE) or os.path.dirname(
                importlib.util.cache_from_source(origin))
        except (AttributeError, ImportError, OSError, ValueError, NotImplementedError):
            return  # no source file: patched at every start
        key = hashlib.sha256(_patcher_digest() + name.encode() + b"\0" + source).hexdigest()
        self.stem = os.path.join(folder, f"{name}.{key[:20]}.")
        # Beside the module it is a byte-code cache like ``__pycache__/*.pyc``, and
        # PYTHONDONTWRITEBYTECODE stops its writes too; a directory named in the
        # environment is written to regardless.
        self.writable = bool(os.environ.get(CACHE_VARIABLE)) or not sys.dont_write_bytecode

    def load(self, first: int) -> types.CodeType | None:
        """The cached code whose counters start after ``first``, its counters
        reserved in this process; None on a miss."""
        if self.stem is None:
            return None
        self.path = f"{self.stem}{first}.atheris"
        try:
            with open(self.path, "rb") as f:
                last, code = marshal.loads(f.read())
        except (OSError, ValueError, EOFError, TypeError):
            return None
        if type(last) is not int or not isinstance(code, types.CodeType) or last <= first:
            return None
        counter = first
        for _ in range(last - first):
            counter = atheris._reserve_counter()
        if counter != last:
            # Out of step: the counters taken are spent, the module is patched with
            # the next ones, and that patch is not stored under ``first``.
            self.path = None
            return None
        return _replace_consts(code, _PLACEHOLDER, sys.modules["atheris"])

    def store(self, last: int, code: types.CodeType) -> None:
        """Store ``code``, patched with the counters after the ``first`` of
        :meth:`load` and before ``last``."""
        if self.path is None or not self.writable:
            return
        if any(type(c) is str and c == _PLACEHOLDER for c in _constants(code)):
            return
        folder = os.path.dirname(self.path)
        try:
            data = marshal.dumps((last, _replace_consts(code, sys.modules["atheris"],
                                                        _PLACEHOLDER)))
            os.makedirs(folder, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
            with os.fdopen(handle, "wb") as f:
                f.write(data)
            os.replace(temporary, self.path)
        except (OSError, ValueError):
            return
        # Files of this module patched from another source (or by another patcher)
        # are stale: remove them, so edits do not pile files up.
        mine = os.path.basename(self.path).rsplit(".", 2)[0]
        name = mine.rsplit(".", 1)[0]
        stale = re.compile(re.escape(name) + r"\.[0-9a-f]{20}\.[0-9]+\.atheris")
        try:
            for entry in os.listdir(folder):
                if stale.fullmatch(entry) and entry.rsplit(".", 2)[0] != mine:
                    os.remove(os.path.join(folder, entry))
        except OSError:
            pass


class _InstrumentingLoader(Loader):
    """Wraps the loader that found the module: same module, patched code."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def create_module(self, spec: ModuleSpec) -> types.ModuleType | None:
        module: types.ModuleType | None = self._inner.create_module(spec)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        name = module.__name__
        cache = _Cache(name, self._inner)
        # One counter before and one after the module's own: they bracket its range.
        first = atheris._reserve_counter()
        code = cache.load(first)
        if code is not None:
            CACHED.add(name)
        else:
            plain = self._inner.get_code(name)
            if plain is None:
                raise ImportError(f"no code to instrument for {name}", name=name)
            code = _patch(plain)
            cache.store(atheris._reserve_counter(), code)
        exec(code, module.__dict__)  # noqa: S102 - the module's own code
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
    with _instrumenting(modules):
        yield


@contextmanager
def _instrumenting(roots: Sequence[str]) -> Iterator[None]:
    """Within the block, modules named ``roots`` or below them are imported patched."""
    _speed_up_patcher()
    finder = _Finder(roots)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


def adapter_roots(module: str) -> tuple[str, ...]:
    """What a user's adapter in ``module`` instruments: the package it belongs to (its
    top-level name: the user's own code, such as the parser the adapter wraps), or,
    for an adapter that ships inside pcfuzz, its own module only (pcfuzz's tool code
    is not under test)."""
    top = module.partition(".")[0]
    return (module,) if top == "pcfuzz" else (top,)


@contextmanager
def instrument_adapter(module: str) -> Iterator[None]:
    """Within the block, the modules of :func:`adapter_roots` of ``module`` are imported
    patched (the code under test of an adapter target); the standard library, third
    parties and pcfuzz's own modules are imported as usual."""
    with _instrumenting(adapter_roots(module)):
        yield


def instrumenting_loader(loader: Any) -> Loader:
    """``loader`` (of a module imported from a file path, such as an adapter given as
    ``path/to/file.py:function``) wrapped so that the module it executes is patched."""
    return _InstrumentingLoader(loader)


def is_instrumented(function: Any) -> bool:
    """Whether ``function`` (a function or method) runs patched bytecode."""
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    return isinstance(code, types.CodeType) and _MARKER in code.co_consts
