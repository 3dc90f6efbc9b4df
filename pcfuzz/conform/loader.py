"""Finding the adapter: ``module:function`` (or ``path/to/file.py:function``) to a
callable, and back from a callable to the reference a worker process imports.

Standard library and :mod:`pcfuzz.errors` only: the adapter's worker process
(:mod:`pcfuzz.conform.worker`) imports this module and nothing else of pcfuzz.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pcfuzz.errors import UsageError

__all__ = ["Adapter", "UsageError", "adapter_reference", "load_adapter"]

Adapter = Callable[[Any], Any]


def _import_module(module_name: str) -> Any:
    if module_name.endswith(".py") or "/" in module_name:
        path = Path(module_name)
        if not path.is_file():
            raise UsageError(f"adapter file {module_name!r} does not exist")
        name = "_pcfuzz_adapter_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:8]
        if name in sys.modules:
            return sys.modules[name]
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise UsageError(f"cannot import {module_name!r}")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module
        try:
            loader_spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return module
    return importlib.import_module(module_name)


def load_adapter(spec: str) -> Adapter:
    """``module:function`` or ``path/to/file.py:function`` (dots in the function
    part walk attributes). The current directory is importable.

    Importing runs the module's code: anything it raises, ``SystemExit`` included,
    is a :class:`UsageError` naming the module."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--adapter must be module:function, got {spec!r}")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = _import_module(module_name)
    except UsageError:
        raise
    except (Exception, SystemExit) as exc:
        raise UsageError(f"cannot import {module_name!r}: {type(exc).__name__}: "
                         f"{_safe_str(exc)}") from exc
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise UsageError(f"{module_name!r} has no attribute {attr!r}")
        target = getattr(target, part)
    if not callable(target):
        raise UsageError(f"{spec!r} is not callable")
    adapter: Adapter = target
    return adapter


def _safe_str(exc: BaseException) -> str:
    try:
        return str.__str__(str(exc))[:300]
    except BaseException as inner:  # noqa: BLE001 - a hostile __str__
        return f"(its message could not be read: str() raised {type(inner).__name__})"


def adapter_reference(adapter: Any) -> str | None:
    """A ``module:qualified.name`` a fresh process imports to get ``adapter`` back, or
    ``None`` (a lambda, a closure, a function defined inside another, a bound method
    or any object that its module does not hold under its name)."""
    module_name = getattr(adapter, "__module__", None)
    qualname = getattr(adapter, "__qualname__", None)
    if type(module_name) is not str or type(qualname) is not str or "<" in qualname:
        return None
    module = sys.modules.get(module_name)
    if module is None or module_name == "__main__":
        return None
    target: Any = module
    for part in qualname.split("."):
        target = getattr(target, part, None)
        if target is None:
            return None
    if target is not adapter:
        return None
    path = getattr(module, "__file__", None)
    if module_name.startswith("_pcfuzz_adapter_") and isinstance(path, str):
        return f"{path}:{qualname}"  # loaded from a file path by load_adapter
    return f"{module_name}:{qualname}"
