"""The adapter's own process: ``python -m pcfuzz.conform.worker CAPTURE_FILE``.

The kit never calls an adapter in its own process when it can import it in another
(:mod:`pcfuzz.conform.sandbox`): a process can be stopped when a call hangs (a thread
cannot), its standard output and error can be taken whole at the file descriptor
(so ``pcfuzz conform --json`` prints one JSON object whatever the adapter prints),
and whatever the adapter does to its process (``sys.exit``, ``os._exit``, a crash)
ends this process, not the run.

Protocol, on the pipes the parent made (stdin and stdout when started; both are
moved to other descriptors at once, and the adapter's 0/1/2 point at ``/dev/null``
and the capture file): each message is an 8-byte big-endian length and a body. The
parent's bodies are pickles (the handshake ``{"reference", "sys_path", "cwd"}``, then
one payload per call: the events or the SSE bytes); this process answers in JSON,
never in pickle, so nothing the adapter writes can make the parent run code. For an
adapter of the release form (the handshake's ``"form": "release"``) each
``release(call)`` and ``continuation(request)`` is sent the moment it happens
(``{"release": {"at": events delivered, "call": ...}}``), before the call's final
answer, so the parent has them even when the adapter then hangs or ends this process.

An ``async def`` adapter (or any adapter whose call returns a coroutine) is awaited
on one event loop (:class:`EventLoop`) that lives as long as this process, so the
adapter's loop-bound state (a client session, a queue, a cached task) is built once
per run, not once per example; the parent's per-call timeout applies to the awaited
call as to any other (the parent stops the process).

Standard library only, besides :mod:`pcfuzz.conform.loader` (the same
``module:function`` import as the command's). The readers below are also what the
in-process (thread) mode of the sandbox uses.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import pickle
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

__all__ = [
    "FORMS",
    "MAX_CALLS",
    "MAX_CONTINUATIONS",
    "MAX_DEPTH",
    "MAX_NODES",
    "OUTPUT_LIMIT",
    "EventLoop",
    "call_adapter",
    "describe_exception",
    "main",
    "read_calls",
    "read_message",
    "safe_text",
    "type_name",
    "write_message",
]

#: A returned list longer than this is not a list of calls any turn has.
MAX_CALLS = 1_000
#: Arguments nested deeper than this are reported, not compared (the contracts' strict
#: JSON allows 512 levels by default; a valid generated turn has a handful).
MAX_DEPTH = 200
#: Values (all levels) in one returned list of calls.
MAX_NODES = 200_000
#: Follow-up requests one release-form call may hand over (one is what a turn has).
MAX_CONTINUATIONS = 10
#: How an adapter is called: ``adapter(events) -> calls`` or ``adapter(stream,
#: release, continuation)`` (docs/conformance.md, "Two forms").
FORMS = ("plain", "release")
#: Bytes of one call's captured output kept for the finding.
OUTPUT_LIMIT = 4_000
_HEADER = struct.Struct(">Q")
_JSON_LEAVES = (str, int, float, bool, type(None))
_QUALNAME = type.__dict__["__qualname__"]


def safe_text(value: Any, limit: int = 300) -> str:
    """``str(value)`` that never raises (a hostile ``__str__``) and is a real str."""
    try:
        text = str(value)
        text = str.__str__(text) if isinstance(text, str) else "?"
    except BaseException as exc:  # noqa: BLE001 - whatever the adapter's object does
        return f"(str() raised {type(exc).__name__})"
    return text if len(text) <= limit else text[:limit] + "..."


def type_name(value: Any) -> str:
    """The qualified name of ``value``'s type, read through ``type``'s own descriptor
    (a metaclass cannot override it)."""
    name = _QUALNAME.__get__(type(value))
    return name if type(name) is str else "?"


def describe_exception(exc: BaseException) -> dict[str, Any]:
    """Type, message and where it was raised (the innermost frame), each read so that
    no ``__str__`` or ``__repr__`` of the adapter's can raise here."""
    where = ""
    site = ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        code = tb.tb_frame.f_code
        where = f"{Path(code.co_filename).name}:{tb.tb_lineno} in {code.co_name}"
        site = f"{code.co_filename}:{tb.tb_lineno}"
    message = safe_text(exc)
    if isinstance(exc, SystemExit):
        message = f"SystemExit({safe_text(exc.code, 60)})"
    return {"type": type_name(exc), "message": message, "where": where, "site": site}


class _Malformed(Exception):
    pass


def _items(value: Any) -> list[Any]:
    """The elements of a list or tuple (subclasses read through the base type's own
    methods: an overridden ``__iter__`` never runs)."""
    if isinstance(value, list):
        return list.copy(value)
    return list(tuple.__getitem__(value, slice(None)))


def _step(path: str, part: str) -> str:
    """A value's path for messages, cut after 80 characters."""
    if len(path) >= 80:
        return path if path.endswith("...") else path + "..."
    return path + part


def _copy_json(value: Any, path: str, budget: list[int]) -> Any:
    """A plain copy of a JSON-typed value (iterative; bounded depth and size)."""
    root: list[Any] = [None]
    stack: list[tuple[Any, list[Any] | dict[str, Any], Any, str, int]] = [
        (value, root, 0, path, 1)]
    while stack:
        node, parent, slot, where, depth = stack.pop()
        budget[0] -= 1
        if budget[0] < 0:
            raise _Malformed(f"the returned calls hold more than {MAX_NODES} values")
        if depth > MAX_DEPTH:
            raise _Malformed(f"{where} is nested deeper than {MAX_DEPTH} levels")
        kind = type(node)
        if kind in _JSON_LEAVES:
            parent[slot] = node
        elif isinstance(node, bool):
            parent[slot] = bool(node)
        elif isinstance(node, str):
            parent[slot] = str.__str__(node)
        elif isinstance(node, int):
            parent[slot] = int.__index__(node)
        elif isinstance(node, float):
            parent[slot] = float.__float__(node)
        elif isinstance(node, dict):
            copy: dict[str, Any] = {}
            parent[slot] = copy
            for key, item in list(dict.items(node)):
                if type(key) is not str:
                    raise _Malformed(f"{where} has a key of type {type_name(key)}, not str")
                copy[key] = None
                stack.append((item, copy, key, _step(where, f".{key}"), depth + 1))
        elif isinstance(node, (list, tuple)):
            items = _items(node)
            out: list[Any] = [None] * len(items)
            parent[slot] = out
            stack.extend((item, out, n, _step(where, f"[{n}]"), depth + 1)
                         for n, item in enumerate(items))
        else:
            raise _Malformed(f"{where} is a {type_name(node)}, not a JSON value")
    return root[0]


def read_calls(value: Any) -> tuple[list[dict[str, Any]] | None, str]:
    """``(calls, "")`` for a list of ``{"call_id": str, "name": str, "arguments":
    dict}`` (copied into plain types), else ``(None, what is wrong)``. Never raises
    and never runs a method the returned object overrides."""
    try:
        if not isinstance(value, (list, tuple)):
            return None, f"expected a list of calls, got {type_name(value)}"
        items = _items(value)
        if len(items) > MAX_CALLS:
            return None, f"expected a list of calls, got a list of {len(items)} items"
        budget = [MAX_NODES]
        calls: list[dict[str, Any]] = []
        for n, call in enumerate(items):
            if not isinstance(call, dict):
                return None, (f"call {n}: expected a dict with exactly call_id, name, "
                              f"arguments, got {type_name(call)}")
            keys = list(dict.keys(call))
            names = sorted(k if type(k) is str else type_name(k) for k in keys)
            if len(keys) != 3 or set(names) != {"call_id", "name", "arguments"} or any(
                    type(k) is not str for k in keys):
                return None, (f"call {n}: expected a dict with exactly call_id, name, "
                              f"arguments, got {names[:10]}")
            call_id = dict.__getitem__(call, "call_id")
            name = dict.__getitem__(call, "name")
            arguments = dict.__getitem__(call, "arguments")
            if type(call_id) is not str or type(name) is not str:
                return None, (f"call {n}: call_id and name must be str, got "
                              f"{type_name(call_id)} and {type_name(name)}")
            if not isinstance(arguments, dict):
                return None, f"call {n}: arguments must be a dict, got {type_name(arguments)}"
            calls.append({"call_id": call_id, "name": name,
                          "arguments": _copy_json(arguments, f"call {n}: arguments", budget)})
        return calls, ""
    except _Malformed as exc:
        return None, str(exc)
    except BaseException as exc:  # noqa: BLE001 - a hostile object
        return None, f"the returned value could not be read ({type(exc).__name__} raised)"


class EventLoop:
    """The one event loop an async adapter's calls share (made at the first coroutine,
    closed by :meth:`close`): one per worker process, or per in-process sandbox."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, coroutine: Any) -> Any:
        """Await ``coroutine`` on the loop and return its result (or raise what it
        raised)."""
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coroutine)

    def close(self) -> None:
        loop, self._loop = self._loop, None
        if loop is None or loop.is_closed():
            return
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        except BaseException:  # noqa: BLE001, S110 - the adapter's generators, at the end
            pass
        loop.close()


def awaited(value: Any, loop: EventLoop | None) -> Any:
    """``value``, or what it returns when it is a coroutine (an ``async def``
    adapter's call), awaited on ``loop`` (without one, on a loop of its own)."""
    # a type check, not an ``__await__`` lookup: nothing the adapter's object
    # overrides runs here
    if not inspect.iscoroutine(value):
        return value
    if loop is not None:
        return loop.run(value)
    once = EventLoop()
    try:
        return once.run(value)
    finally:
        once.close()


def call_adapter(adapter: Any, payload: Any, form: str = "plain",
                 emit: Callable[[str, dict[str, Any]], None] | None = None,
                 loop: EventLoop | None = None) -> dict[str, Any]:
    """Call the adapter once and say what happened, as plain JSON data:
    ``returned`` (the calls), ``malformed`` (not a list of calls), ``raised`` (an
    ``Exception``: the stream was rejected) or ``escaped`` (any other
    ``BaseException``: ``SystemExit``, ``KeyboardInterrupt``, ...). A coroutine the
    call returns (an ``async def`` adapter) is awaited on ``loop``, the run's one
    event loop (without one, on a loop of its own for this call).

    ``form="release"``: ``payload`` is the list of the stream's items (events, or each
    event's SSE frame), handed to ``adapter(stream, release, continuation)`` one at
    a time through an iterator; each ``release(call)`` and ``continuation(request)``
    is recorded with the number of items delivered when it happened and passed to
    ``emit(kind, record)`` at once (the worker sends it to the parent then, so a call
    that later hangs or ends its process has already told what it released). The
    return value is not read (only its type is kept); ``delivered`` says how many
    items the adapter took."""
    if form == "release":
        return _call_release_form(adapter, payload, emit or (lambda _kind, _record: None), loop)
    started = time.perf_counter()
    try:
        value = awaited(adapter(payload), loop)
    except Exception as exc:  # noqa: BLE001 - raising is how an adapter rejects
        out = {"kind": "raised", **describe_exception(exc)}
    except BaseException as exc:  # noqa: BLE001 - contained and reported
        out = {"kind": "escaped", **describe_exception(exc)}
    else:
        calls, problem = read_calls(value)
        if calls is not None:
            out = {"kind": "returned", "calls": calls}
        else:
            out = {"kind": "malformed", "message": problem, "type": type_name(value),
                   "instance_of_adapter": isinstance(adapter, type)
                   and isinstance(value, adapter)}
    out["seconds"] = round(time.perf_counter() - started, 6)
    return out


# --------------------------------------------------------------------- the release form


class _Feed:
    """The stream a release-form adapter reads: an iterator that hands out one item
    at a time and counts how many it has handed out (``delivered``). It has no
    length and cannot be indexed: like a live stream, what comes next is known only
    once it is taken."""

    def __init__(self, items: list[Any]) -> None:
        self._items = items
        self._lock = threading.Lock()
        self.delivered = 0

    def __iter__(self) -> _Feed:
        return self

    def __next__(self) -> Any:
        with self._lock:
            if self.delivered >= len(self._items):
                raise StopIteration
            item = self._items[self.delivered]
            self.delivered += 1
            return item

    def __repr__(self) -> str:
        return f"<pcfuzz stream: {self.delivered} item(s) delivered>"


class _Hooks:
    """``release`` and ``continuation`` of one call: each records what it was given
    and when (``at``: the items delivered so far), bounded, and stops recording when
    the call has ended (``close``)."""

    def __init__(self, feed: _Feed, emit: Callable[[str, dict[str, Any]], None]) -> None:
        self.feed, self.emit = feed, emit
        self.lock = threading.Lock()
        self.live = True
        self.counts = {"release": 0, "continuation": 0}

    def _record(self, kind: str, limit: int, record: dict[str, Any]) -> None:
        with self.lock:
            if not self.live:
                return  # after the call: belongs to no stream (see docs/conformance.md)
            self.counts[kind] += 1
            if self.counts[kind] > limit + 1:
                return
            if self.counts[kind] > limit:
                record = {"at": record["at"],
                          "error": f"more than {limit} {kind} calls for one stream"}
            self.emit(kind, record)

    def release(self, call: Any) -> None:
        """The framework would run ``call`` now."""
        at = self.feed.delivered
        calls, problem = read_calls([call])
        record: dict[str, Any] = ({"at": at, "call": calls[0]} if calls is not None
                                  else {"at": at, "error": problem.removeprefix("call 0: ")})
        self._record("release", MAX_CALLS, record)

    def continuation(self, request: Any) -> None:
        """The framework would send ``request`` next."""
        at = self.feed.delivered
        try:
            record = {"at": at, "request": _copy_json(request, "the request", [MAX_NODES])}
        except _Malformed as exc:
            record = {"at": at, "error": str(exc)}
        except BaseException as exc:  # noqa: BLE001 - a hostile object
            record = {"at": at, "error": f"the request could not be read "
                                         f"({type(exc).__name__} raised)"}
        self._record("continuation", MAX_CONTINUATIONS, record)

    def close(self) -> None:
        with self.lock:
            self.live = False


def _call_release_form(adapter: Any, items: Any,
                       emit: Callable[[str, dict[str, Any]], None],
                       loop: EventLoop | None = None) -> dict[str, Any]:
    feed = _Feed(list(items))
    hooks = _Hooks(feed, emit)
    started = time.perf_counter()
    try:
        value = awaited(adapter(feed, hooks.release, hooks.continuation), loop)
    except Exception as exc:  # noqa: BLE001 - raising is how an adapter rejects
        out = {"kind": "raised", **describe_exception(exc)}
    except BaseException as exc:  # noqa: BLE001 - contained and reported
        out = {"kind": "escaped", **describe_exception(exc)}
    else:
        out = {"kind": "returned", "returned": "" if value is None else type_name(value)}
    hooks.close()
    out.update(form="release", delivered=feed.delivered,
               seconds=round(time.perf_counter() - started, 6))
    return out


# --------------------------------------------------------------------- the protocol


def write_message(stream: BinaryIO, body: bytes) -> None:
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()


def read_message(stream: BinaryIO) -> bytes | None:
    """One message, or ``None`` at the end of the stream."""
    head = _read_exact(stream, _HEADER.size)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    return _read_exact(stream, size)


def _read_exact(stream: BinaryIO, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _watch_parent() -> None:
    """End this process when the parent is gone (killed with SIGKILL, say): an
    adapter stuck in a loop would otherwise run on forever."""
    parent = os.getppid()
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(3)


def _answer(out: BinaryIO, value: dict[str, Any]) -> None:
    write_message(out, json.dumps(value, ensure_ascii=True).encode("ascii"))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    capture_path = args[0]
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    capture = os.open(capture_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(capture, 1)
    os.dup2(capture, 2)
    threading.Thread(target=_watch_parent, daemon=True).start()
    stdout, stderr = sys.stdout, sys.stderr
    hello = read_message(proto_in)
    if hello is None:
        return 0
    setup = pickle.loads(hello)
    for entry in reversed(setup["sys_path"]):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    from pcfuzz.conform.loader import load_adapter

    try:
        adapter = load_adapter(setup["reference"])
    except BaseException as exc:  # noqa: BLE001 - told to the parent, which decides
        _answer(proto_out, {"ok": False, "error": f"{type_name(exc)}: {safe_text(exc)}"})
        return 0
    _answer(proto_out, {"ok": True, "is_class": isinstance(adapter, type)})
    form = setup.get("form", "plain")
    sending = threading.Lock()

    def emit(kind: str, record: dict[str, Any]) -> None:
        # a release reaches the parent the moment it happens: a call that then hangs
        # or ends this process has still told what it released
        with sending:
            _answer(proto_out, {kind: record})

    loop = EventLoop()
    while True:
        message = read_message(proto_in)
        if message is None:
            loop.close()
            return 0
        payload = pickle.loads(message)
        os.lseek(capture, 0, os.SEEK_SET)
        os.ftruncate(capture, 0)
        sys.stdout, sys.stderr = stdout, stderr
        result = call_adapter(adapter, payload, form, emit, loop)
        for stream in (sys.stdout, sys.stderr, stdout, stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001, S110 - a replaced or closed stream
                pass
        size = os.fstat(capture).st_size
        text = os.pread(capture, min(size, OUTPUT_LIMIT), 0).decode("utf-8", "replace")
        if size > OUTPUT_LIMIT:
            text += f"\n... ({size - OUTPUT_LIMIT} more bytes)"
        result["output"] = text
        _answer(proto_out, result)


if __name__ == "__main__":
    sys.exit(main())
