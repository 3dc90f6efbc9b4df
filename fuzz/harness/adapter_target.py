"""The byte-level fuzz target of a user's adapter: raw SSE bytes of one turn, the
contract's own parser as the oracle.

``pcfuzz nightly --adapter CONTRACT=module:function`` writes one target file per
adapter into its work directory (``pcfuzz.nightly.adapters``); the file names the
adapter, as the command line or the configuration declared it, and nothing else:

    with instrument(*STREAM, *WIRE, *parser("openai-chat")):
        from pcfuzz.fuzz.harness.adapter_target import import_adapter, make_adapter_target
    ADAPTER = import_adapter("gateway.stream:calls", instrumented=True)
    TestOneInput = make_adapter_target("openai-chat", ADAPTER, input="events")

Instrumented: the contract's stream path (the decoder of an events adapter's input,
and the oracle) and the user's code (``instrumented=True``: the adapter's top-level
package), never the standard library, third parties or pcfuzz's harness.

Each input is the SSE bytes of one turn. The adapter gets them as they are
(``input="sse"``) or decoded into the contract's events by ``contracts.sse`` and
``contracts.wire.sse_to_events`` (``input="events"``; bytes that do not decode are
no turn an events adapter could be given, and are skipped). The verdict of
``fuzz.harness.verdict.check_bytes`` (the code path of ``pcfuzz check``) is the
oracle; a failure raises ``RuntimeError`` (a crash libFuzzer keeps):

* the adapter released a call the contract does not release: a call when the
  contract rejects the stream or withholds its calls, or a call that is not one of
  the contract's calls (another id, name or arguments). Releasing nothing is always
  allowed: an adapter may be stricter than the contract;
* the adapter returned something that is not a list of ``{"call_id": str, "name":
  str, "arguments": dict}``;
* the adapter raised a ``BaseException`` that is not an ``Exception``
  (``SystemExit``, ``KeyboardInterrupt``): raising an ``Exception`` is how it
  rejects a stream.

An ``async def`` adapter is awaited on one event loop per target process. The
release form (``CONTRACT:release=...``) has its own target,
``pcfuzz.conform.release_target``, built on this one's checks.

A hang is libFuzzer's own timeout (the target's ``.options``). The contract is
this project's fail-closed policy (docs/conformance.md, "In the nightly"): an
adapter that tolerates what the contract rejects (an unknown field, a usage
regression) is reported here even where the kit's default checks would not.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pcfuzz.contracts.errors import ContractError
from pcfuzz.contracts.sse import decode_sse
from pcfuzz.contracts.wire import sse_to_events
from pcfuzz.fuzz.harness.verdict import check_bytes

__all__ = ["awaited", "check_released", "escaped", "import_adapter",
           "make_adapter_target", "released_calls"]


def import_adapter(spec: str, *, instrumented: bool = False) -> Callable[[Any], Any]:
    """``module:function`` or ``path/to/file.py:function`` (dots after the colon walk
    attributes), imported as ``pcfuzz conform --adapter`` imports it. ``instrumented``:
    the user's code is imported patched for coverage (the adapter's top-level package,
    or the file; ``fuzz.harness.instrument.instrument_adapter``), nothing else."""
    module_name, _, attr = spec.rpartition(":")
    if module_name.endswith(".py") or "/" in module_name:
        path = Path(module_name)
        name = "_pcfuzz_adapter_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:8]
        found = importlib.util.spec_from_file_location(name, path)
        if found is None or found.loader is None:
            raise ImportError(f"cannot import {module_name!r}")
        if instrumented:
            from pcfuzz.fuzz.harness.instrument import instrumenting_loader

            found.loader = instrumenting_loader(found.loader)
        module = importlib.util.module_from_spec(found)
        sys.modules[name] = module
        found.loader.exec_module(module)
    elif instrumented:
        from pcfuzz.fuzz.harness.instrument import instrument_adapter

        with instrument_adapter(module_name):
            module = importlib.import_module(module_name)
    else:
        module = importlib.import_module(module_name)
    target: Any = module
    for part in attr.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"{spec!r} is not callable")
    adapter: Callable[[Any], Any] = target
    return adapter


def released_calls(value: Any) -> list[dict[str, Any]]:
    """The adapter's calls, each as its canonical JSON text for comparison (``True`` is
    not ``1``); ``RuntimeError`` when the value is not a list of calls."""
    if not isinstance(value, (list, tuple)):
        raise RuntimeError(f"the adapter returned {type(value).__name__}, not a list of calls")
    out = []
    for n, call in enumerate(list(value)):
        if not isinstance(call, dict) or set(call) != {"call_id", "name", "arguments"} \
                or type(call["call_id"]) is not str or type(call["name"]) is not str \
                or not isinstance(call["arguments"], dict):
            raise RuntimeError(f"the adapter's call {n} is not {{'call_id': str, 'name': str, "
                               f"'arguments': dict}}: {str(call)[:200]}")
        out.append(call)
    return out


def _key(call: dict[str, Any]) -> str:
    return json.dumps([call["call_id"], call["name"], call["arguments"]], sort_keys=True,
                      ensure_ascii=True)


def awaited(value: Any, loops: list[Any]) -> Any:
    """``value``, or what it resolves to when it is a coroutine (an ``async def``
    adapter), run on the target's one event loop (made on first use)."""
    if not inspect.iscoroutine(value):
        return value
    import asyncio

    if not loops:
        loops.append(asyncio.new_event_loop())
    return loops[0].run_until_complete(value)


def make_adapter_target(contract: str, adapter: Callable[..., Any], *,
                        input: str = "events") -> Callable[[bytes], None]:
    """The ``TestOneInput`` of ``adapter`` (see the module docstring); the release form's
    is :func:`pcfuzz.conform.release_target.make_release_target`."""
    if input not in ("events", "sse"):
        raise ValueError(f"input must be 'events' or 'sse', got {input!r}")
    loops: list[Any] = []

    def test_one_input(data: bytes) -> None:
        payload: Any = data
        if input == "events":
            try:
                payload = list(sse_to_events(contract, decode_sse(data)))
            except ContractError:
                return
        try:
            value = awaited(adapter(payload), loops)
        except Exception:  # noqa: BLE001 - the adapter rejected the stream: safe
            return
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt, ...
            raise escaped(exc) from exc
        check_released(contract, data, released_calls(value))

    return test_one_input


def escaped(exc: BaseException) -> RuntimeError:
    """The crash for an adapter that raised ``exc``, a ``BaseException`` that is not an
    ``Exception``."""
    return RuntimeError(f"the adapter raised {type(exc).__name__}, which is not an "
                        "Exception (it would end the process serving the turn)")


def check_released(contract: str, data: bytes, calls: list[dict[str, Any]]) -> Any:
    """The contract's verdict on ``data``; ``RuntimeError`` when ``calls`` holds one it
    does not release."""
    if not calls:
        return None
    verdict = check_bytes(contract, data, format="sse")
    allowed = {_key(c) for c in verdict.calls} if verdict.ok else set()
    extra = [c for c in calls if _key(c) not in allowed]
    if extra:
        why = (f"the contract rejects the stream: {verdict.violation['error']}: "
               f"{verdict.violation['message']}"[:300] if verdict.violation
               else "the contract releases no call" if not verdict.calls
               else "they are not the contract's calls")
        raise RuntimeError(f"the adapter released {len(extra)} call(s) the contract does "
                           f"not release ({why}): {json.dumps(extra)[:300]}")
    return verdict
