"""``pcfuzz show INPUT --target T``: what a fuzz target actually ran for one input.

Structure-aware inputs are opaque bytes (a mode byte and a ``FuzzedDataProvider``
stream); the only faithful decoding is to run them. The target is loaded by path and
its ``TestOneInput`` runs once on the input while every call the harness makes into
``pcfuzz.contracts`` (functions, and methods of contract classes such as a stream's
``feed``) is recorded with its arguments, as copied at the moment of the call. Calls
the contracts make among themselves are not recorded: only the outermost ones, which
are what the target fed the code under test.

Rendered per group of consecutive calls: an event list (a list, or a run of ``feed``
calls with one event each) as JSON lines, bytes as the SSE text (escapes for what is
not UTF-8), a string as itself (a URL, a JSON text), anything else as ``repr``.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import inspect
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["Call", "Recorder", "load_target_module", "recording", "render", "show_input"]

#: Calls shown per group before the rest is summarized.
MAX_CALLS_SHOWN = 40


@dataclass
class Call:
    """One recorded call from the harness into the contracts."""

    name: str
    args: list[Any]
    kwargs: dict[str, Any]
    instance: int | None = None
    outcome: str = "returned"
    #: the module that defines the callable (``pcfuzz.contracts.<name>....``)
    module: str = ""


@dataclass
class Recorder:
    calls: list[Call] = field(default_factory=list)
    depth: int = 0
    instances: dict[int, int] = field(default_factory=dict)
    created: int = 0

    def reset(self) -> None:
        self.calls.clear()
        self.instances.clear()


def _snapshot(value: Any) -> Any:
    try:
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001 - an uncopyable argument is shown as it is
        return value


def _wrap(
    fn: Callable[..., Any], name: str, rec: Recorder, method: bool, init: bool = False
) -> Callable[..., Any]:
    @functools.wraps(fn)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        if rec.depth:
            return fn(*args, **kwargs)
        instance = None
        shown = list(args)
        if method and args:
            if init:  # a new object: ids of dead objects are reused
                rec.instances[id(args[0])] = rec.created = rec.created + 1
            instance = rec.instances.get(id(args[0]))
            shown = shown[1:]
        call = Call(name, [_snapshot(a) for a in shown],
                    {k: _snapshot(v) for k, v in kwargs.items()}, instance,
                    module=getattr(fn, "__module__", "") or "")
        rec.calls.append(call)
        rec.depth += 1
        try:
            return fn(*args, **kwargs)
        except BaseException as exc:
            call.outcome = f"raised {type(exc).__name__}: {str(exc)[:300]}"
            raise
        finally:
            rec.depth -= 1

    return recorded


def _is_entry(obj: Any) -> bool:
    module = getattr(obj, "__module__", "") or ""
    return module.startswith("pcfuzz.contracts") or module == "pcfuzz.fuzz.harness.verdict"


@contextmanager
def recording(namespaces: list[dict[str, Any]], rec: Recorder) -> Iterator[Recorder]:
    """Record calls into the contracts made from the given module namespaces."""
    undo: list[tuple[Any, str, Any]] = []
    patched_classes: set[int] = set()
    try:
        for ns in namespaces:
            for key, obj in list(ns.items()):
                if key.startswith("_") or not _is_entry(obj):
                    continue
                if inspect.isfunction(obj):
                    undo.append((ns, key, obj))
                    ns[key] = _wrap(obj, obj.__name__, rec, method=False)
                elif inspect.isclass(obj) and not issubclass(obj, BaseException):
                    if id(obj) in patched_classes:
                        continue
                    patched_classes.add(id(obj))
                    for attr, member in list(vars(obj).items()):
                        if not inspect.isfunction(member):
                            continue
                        if attr.startswith("_") and attr != "__init__":
                            continue
                        label = obj.__name__ if attr == "__init__" else f"{obj.__name__}.{attr}"
                        undo.append((obj, attr, member))
                        setattr(obj, attr, _wrap(member, label, rec, method=True,
                                                 init=attr == "__init__"))
        yield rec
    finally:
        for owner, key, original in reversed(undo):
            if isinstance(owner, dict):
                owner[key] = original
            else:
                setattr(owner, key, original)


def load_target_module(path: Path) -> ModuleType:
    """Execute a fuzz target file as a fresh module (as libFuzzer runs it: by path)."""
    spec = importlib.util.spec_from_file_location(f"_pcfuzz_show_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def _harness_namespaces(module: ModuleType) -> list[dict[str, Any]]:
    spaces = [vars(module)]
    for name, mod in list(sys.modules.items()):
        if name.startswith("pcfuzz.fuzz.harness.") and name != "pcfuzz.fuzz.harness.verdict":
            spaces.append(vars(mod))
    return spaces


def show_input(target_path: Path, data: bytes) -> tuple[list[Call], str]:
    """Run ``data`` once through the target; returns the recorded calls and the
    outcome (``"pass"`` or ``"crash: Type: message"``)."""
    module = load_target_module(target_path)
    entry = getattr(module, "TestOneInput", None)
    if entry is None:
        raise ImportError(f"{target_path} has no TestOneInput")
    rec = Recorder()
    with recording(_harness_namespaces(module), rec):
        try:
            entry(data)
        except Exception as exc:  # noqa: BLE001 - the crash is what we report
            outcome = f"crash: {type(exc).__name__}: {str(exc)[:500]}"
        else:
            outcome = "pass"
    return rec.calls, outcome


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr, allow_nan=True)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="backslashreplace")


def _main_arg(call: Call) -> tuple[Any, list[Any], dict[str, Any]]:
    """The argument that carries the input (bytes, an event list or event, else the
    first string), the other arguments, the keyword arguments."""
    for kinds in ((bytes, bytearray, list, dict), (str,)):
        for i, arg in enumerate(call.args):
            if isinstance(arg, kinds):
                return arg, call.args[:i] + call.args[i + 1:], call.kwargs
    if call.args:
        return call.args[0], call.args[1:], call.kwargs
    return None, [], call.kwargs


def _groups(calls: list[Call]) -> list[list[Call]]:
    """Calls grouped by (callable, object), in order of first appearance: the events
    fed to one stream read as one list even when other calls come between them."""
    groups: dict[tuple[str, int | None], list[Call]] = {}
    for call in calls:
        groups.setdefault((call.name, call.instance), []).append(call)
    return list(groups.values())


def _render_value(value: Any, many: bool) -> list[str]:
    if isinstance(value, (bytes, bytearray)):
        return [repr(bytes(value))] if many else _text(bytes(value)).splitlines() or ['""']
    if isinstance(value, str):
        return [_json(value)] if many else value.splitlines() or ['""']
    if isinstance(value, list):
        if many:
            return [_json(value)]
        return [_json(v) for v in value] or ["[]"]
    if isinstance(value, (dict, int, float, bool)) or value is None:
        return [_json(value)]
    return [repr(value)]


def render(calls: list[Call], outcome: str) -> str:
    """A person's view of the recorded calls (see the module docstring)."""
    out: list[str] = []
    for group in _groups(calls):
        head = group[0]
        who = f" (instance {head.instance})" if head.instance is not None else ""
        out.append(f"# {head.name}{who}: {len(group)} call{'s' * (len(group) != 1)}")
        many = len(group) > 1
        for n, call in enumerate(group):
            if n == MAX_CALLS_SHOWN:
                out.append(f"# ... {len(group) - n} more calls")
                break
            value, rest, kwargs = _main_arg(call)
            if value is not None or call.args:
                out += _render_value(value, many)
            extra = [repr(r) for r in rest] + [f"{k}={v!r}" for k, v in kwargs.items()]
            if extra:
                out.append("#   with " + ", ".join(extra)[:400])
            if call.outcome != "returned":
                out.append(f"#   -> {call.outcome}")
    if not calls:
        out.append("# the target made no call into the contracts for this input")
    out.append(f"# target outcome: {outcome}")
    return "\n".join(out) + "\n"


def render_json(calls: list[Call], outcome: str) -> str:
    """The same as JSON lines, one call per line, then the outcome."""
    lines = [
        _json({"call": c.name, "instance": c.instance, "args": [
            _text(bytes(a)) if isinstance(a, (bytes, bytearray)) else a for a in c.args
        ], "kwargs": c.kwargs, "outcome": c.outcome})
        for c in calls
    ]
    lines.append(_json({"target_outcome": outcome}))
    return "\n".join(lines) + "\n"
