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

The release form (``CONTRACT:release=...``, ``form="release"``): the adapter is
``adapter(stream, release, continuation)`` as in ``pcfuzz conform --adapter-form
release``; ``stream`` hands out one item at a time (the decoded events, or the input
cut before each event's first line, so item ``k`` ends with event ``k``), and every
``release(call)`` counts as that call run, whatever the adapter does afterwards. A
failure is also a release of something that is not a call, a release before the
terminal event was delivered (``pcfuzz.conform.timing``), and a follow-up request
that does not carry exactly one result per released call
(``pcfuzz.conform.followup``). Bytes that do not decode into events are skipped in
this form, as for an events adapter. An ``async def`` adapter is awaited on one event
loop per target process.

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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pcfuzz.contracts.errors import ContractError
from pcfuzz.contracts.sse import decode_sse
from pcfuzz.contracts.wire import sse_to_events
from pcfuzz.fuzz.harness.verdict import check_bytes

__all__ = ["import_adapter", "make_adapter_target"]


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


def _calls(value: Any) -> list[dict[str, Any]]:
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


def _awaited(value: Any, loops: list[Any]) -> Any:
    """``value``, or what it resolves to when it is a coroutine (an ``async def``
    adapter), run on the target's one event loop (made on first use)."""
    if not inspect.iscoroutine(value):
        return value
    import asyncio

    if not loops:
        loops.append(asyncio.new_event_loop())
    return loops[0].run_until_complete(value)


def _frames(data: bytes, events: list[Any]) -> list[bytes]:
    """The input cut before each event's first line (``byte_offset``), so that the
    first ``k`` items delivered hold exactly the first ``k`` events; bytes after the
    last event stay with it. Their concatenation is ``data``."""
    cuts = [0, *(e.byte_offset for e in events[1:]), len(data)]
    return [data[a:b] for a, b in zip(cuts, cuts[1:], strict=False)] if events else [data]


class _Hooks:
    """The release form's stream, ``release`` and ``continuation``: each release and
    request is recorded with the number of items delivered when it happened."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items
        self.delivered = 0
        self.releases: list[tuple[int, Any]] = []
        self.requests: list[tuple[int, Any]] = []

    def stream(self) -> Iterator[Any]:
        while self.delivered < len(self.items):
            self.delivered += 1
            yield self.items[self.delivered - 1]

    def release(self, call: Any) -> None:
        if len(self.releases) <= MAX_RECORDS:
            self.releases.append((self.delivered, call))

    def continuation(self, request: Any) -> None:
        if len(self.requests) <= MAX_RECORDS:
            self.requests.append((self.delivered, request))


#: Releases (and follow-up requests) recorded per input; one more is an error.
MAX_RECORDS = 64


def make_adapter_target(contract: str, adapter: Callable[..., Any], *,
                        input: str = "events", form: str = "plain") -> Callable[[bytes], None]:
    """The ``TestOneInput`` of ``adapter`` (see the module docstring)."""
    if input not in ("events", "sse"):
        raise ValueError(f"input must be 'events' or 'sse', got {input!r}")
    if form not in ("plain", "release"):
        raise ValueError(f"form must be 'plain' or 'release', got {form!r}")
    loops: list[Any] = []

    def test_one_input(data: bytes) -> None:
        payload: Any = data
        sse: list[Any] = []
        events: list[Any] = []
        if input == "events" or form == "release":
            try:
                sse = decode_sse(data)
                events = list(sse_to_events(contract, sse))
            except ContractError:
                return
            if input == "events":
                payload = events
        hooks = None
        try:
            if form == "release":
                hooks = _Hooks(events if input == "events" else _frames(data, sse))
                _awaited(adapter(hooks.stream(), hooks.release, hooks.continuation), loops)
                value: Any = []
            else:
                value = _awaited(adapter(payload), loops)
        except Exception:  # noqa: BLE001 - the adapter rejected the stream: safe
            value = []  # (what it released before raising still ran)
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt, ...
            raise RuntimeError(f"the adapter raised {type(exc).__name__}, which is not an "
                               "Exception (it would end the process serving the turn)") from exc
        if hooks is not None:
            _check_releases(contract, data, events, hooks)
            return
        _check_calls(contract, data, _calls(value))

    return test_one_input


def _check_calls(contract: str, data: bytes, calls: list[dict[str, Any]]) -> Any:
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


def _check_releases(contract: str, data: bytes, events: list[Any], hooks: _Hooks) -> None:
    """The release form's oracle: each release is a call, released only once the
    terminal event was delivered, one the contract releases; each follow-up request
    carries exactly one result per released call."""
    from pcfuzz.conform.followup import check_request
    from pcfuzz.conform.timing import early_release

    if len(hooks.releases) > MAX_RECORDS or len(hooks.requests) > MAX_RECORDS:
        raise RuntimeError(f"the adapter released or requested more than {MAX_RECORDS} "
                           "times for one turn")
    calls = _calls([call for _, call in hooks.releases])
    early = early_release(contract, events, [{"at": at, "call": call} for (at, _), call
                                             in zip(hooks.releases, calls, strict=True)])
    if early is not None:
        raise RuntimeError(f"the adapter {early.text()}")
    verdict = _check_calls(contract, data, calls)
    named = frozenset(c["call_id"] for c in (verdict.calls if verdict is not None else []))
    for _, request in hooks.requests:
        try:
            problem = check_request(contract, [c["call_id"] for c in calls], request, named)
        except Exception as exc:  # noqa: BLE001 - a hostile object
            raise RuntimeError(f"the adapter's follow-up request could not be read "
                               f"({type(exc).__name__} raised)") from exc
        if problem is not None:
            raise RuntimeError(f"the adapter's follow-up request: {problem.check}: "
                               f"{problem.text}"[:400])
