"""Calling the adapter under containment: a per-call timeout, its output captured,
whatever it raises or does to its process turned into an :class:`Outcome`.

Two modes:

* ``process`` (the command always, the Python API and the pytest helper whenever the
  adapter can be imported by name): the adapter runs in a worker process
  (:mod:`pcfuzz.conform.worker`) started once and kept; a call that does not answer
  within its timeout gets the worker killed (SIGKILL to its own process group) and
  the next call starts a new one. Only a process can really be stopped: Python has
  no way to end a thread stuck in a loop. The worker runs in a session of its own,
  so a Ctrl-C at the terminal reaches pcfuzz, not the adapter: a
  ``KeyboardInterrupt`` the adapter raises is the adapter's (a finding), one pcfuzz
  receives is the user's (the run stops and reports what it found).
* ``thread`` (an adapter no other process can import: a lambda, a closure): the call
  runs in a daemon thread with the same timeout and the same readers; a call that
  times out cannot be stopped, so the sandbox refuses every later call and the run
  ends with the finding. Output is captured at ``sys.stdout``/``sys.stderr`` only.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pickle
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

from pcfuzz.conform.loader import Adapter, adapter_reference
from pcfuzz.conform.worker import FORMS, OUTPUT_LIMIT, EventLoop, call_adapter, write_message
from pcfuzz.errors import UsageError

__all__ = ["DEFAULT_TIMEOUT_S", "FORMS", "ISOLATIONS", "Outcome", "Sandbox"]

#: Seconds one adapter call may take (``pcfuzz conform --adapter-timeout``).
DEFAULT_TIMEOUT_S = 10.0
ISOLATIONS = ("auto", "process", "thread")
#: Seconds a new worker may take to import the adapter and answer.
START_TIMEOUT_S = 60.0
#: The first call of a worker may take this many times the adapter timeout.
FIRST_CALL_FACTOR = 3.0
#: What the worker's end of the pipe says when the worker is gone.
_EOF = object()


def _record(answer: Any) -> tuple[str, dict[str, Any]] | None:
    """A release-form record the worker sent during a call (``{"release": {...}}``
    or ``{"continuation": {...}}``), or ``None`` for anything else."""
    if not isinstance(answer, dict) or len(answer) != 1:
        return None
    kind, record = next(iter(answer.items()))
    if kind not in ("release", "continuation") or not isinstance(record, dict):
        return None
    if type(record.get("at")) is not int:
        return None
    return kind, record


def _at(delivered: int) -> str:
    """When a release happened, by the events delivered until then."""
    if delivered <= 0:
        return "the start (before event 0 was delivered)"
    return f"event {delivered - 1}"


@dataclass
class Outcome:
    """What one adapter call did.

    ``kind``: ``returned`` (``calls``), ``raised`` (an ``Exception``: the stream was
    rejected), ``malformed`` (returned something that is not a list of calls),
    ``escaped`` (a ``BaseException`` that is not an ``Exception``: ``SystemExit``,
    ``KeyboardInterrupt``, ...), ``timeout`` (no answer within the adapter timeout),
    ``died`` (the worker process ended during the call), ``cut`` (stopped because the
    run's own time was up: not a finding), ``refused`` (thread mode after a timeout).

    The release form (``form="release"``) adds what the adapter did while it ran,
    whatever ``kind`` it then ended with: ``releases`` (``{"at": items delivered,
    "call": {...}}``, or ``"error"`` for an argument that is not a call),
    ``continuations`` (``{"at", "request"}`` or ``"error"``), ``delivered`` (items
    the adapter took) and ``returned`` (the type of what it returned, if not None).
    """

    kind: str
    calls: list[dict[str, Any]] | None = None
    type: str = ""
    message: str = ""
    #: where it was raised, for a person (``adapter.py:12 in parse``) and for grouping
    where: str = ""
    site: str = ""
    output: str = ""
    seconds: float = 0.0
    instance_of_adapter: bool = False
    form: str = "plain"
    releases: list[dict[str, Any]] = field(default_factory=list)
    continuations: list[dict[str, Any]] = field(default_factory=list)
    delivered: int = 0
    returned: str = ""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        return cls(kind=str(data["kind"]), calls=data.get("calls"),
                   type=str(data.get("type", "")), message=str(data.get("message", "")),
                   where=str(data.get("where", "")), site=str(data.get("site", "")),
                   output=str(data.get("output", "")),
                   seconds=float(data.get("seconds", 0.0)),
                   instance_of_adapter=bool(data.get("instance_of_adapter", False)),
                   form=str(data.get("form", "plain")),
                   delivered=int(data.get("delivered", 0)),
                   returned=str(data.get("returned", "")))

    @property
    def released(self) -> list[dict[str, Any]]:
        """The calls the adapter released (the release form), in release order."""
        return [r["call"] for r in self.releases if "call" in r]

    @property
    def rejected(self) -> bool:
        return self.kind == "raised"

    def describe(self) -> str:
        """What the adapter did, in one line (the finding's "got")."""
        if self.form == "release":
            return self._describe_release()
        return self._describe_end()

    def _describe_release(self) -> str:
        shown = [f"{json.dumps(r['call'], ensure_ascii=False)[:400]} at {_at(r['at'])}"
                 if "call" in r else f"something that is not a call ({r['error']}) at "
                 f"{_at(r['at'])}" for r in self.releases[:20]]
        released = (f"released {len(self.releases)} call(s): " + "; ".join(shown)
                    if self.releases else "released no call")
        more = "" if len(self.releases) <= 20 else f"; ... ({len(self.releases) - 20} more)"
        if self.kind == "returned":
            end = "returned" + (f" a {self.returned} (not read)" if self.returned else "")
        else:
            end = self._describe_end()
        sent = (f"; handed over {len(self.continuations)} follow-up request(s)"
                if self.continuations else "")
        return (f"{released}{more}; took {self.delivered} event(s), then {end}{sent}")[:4000]

    def _describe_end(self) -> str:
        if self.kind == "returned":
            calls = self.calls or []
            shown = json.dumps(calls, ensure_ascii=False)
            return f"returned {len(calls)} call(s): {shown[:2000]}"
        if self.kind == "raised":
            return f"rejected the stream: {self.type}: {self.message}"
        if self.kind == "malformed":
            return f"returned {self.type}, not a list of calls: {self.message}"
        if self.kind == "escaped":
            return (f"raised {self.type} ({self.message}), which is not an Exception"
                    + (f", at {self.where}" if self.where else ""))
        if self.kind == "timeout":
            return f"did not return within {self.seconds:g}s (stopped)"
        if self.kind == "died":
            return f"ended its process during the call ({self.message})"
        return self.message or self.kind


@dataclass
class Sandbox:
    """Calls one adapter, contained (see the module docstring).

    ``reference``: the ``module:function`` a worker imports (default: found from
    the callable, :func:`~pcfuzz.conform.loader.adapter_reference`). ``isolation``:
    ``auto`` (a process when there is a reference, else a thread), ``process`` or
    ``thread``. ``timeout_s``: seconds one call may take."""

    adapter: Adapter
    reference: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    isolation: str = "auto"
    #: how the adapter is called: ``plain`` or ``release`` (:data:`FORMS`)
    form: str = "plain"
    #: why the sandbox runs in a thread (empty: it runs in a process)
    note: str = ""
    mode: str = field(default="", init=False)
    refused: str = field(default="", init=False)
    _proc: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    _capture: str = field(default="", init=False, repr=False)
    _is_class: bool = field(default=False, init=False, repr=False)
    _answered: bool = field(default=False, init=False, repr=False)
    _timeout: float = field(default=0.0, init=False, repr=False)
    #: the event loop of an async adapter's calls in thread mode (the worker has its own)
    _loop: EventLoop = field(default_factory=EventLoop, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.isolation not in ISOLATIONS:
            raise UsageError(f"unknown isolation {self.isolation!r}; known: {ISOLATIONS}")
        if self.form not in FORMS:
            raise UsageError(f"unknown adapter form {self.form!r}; known: {', '.join(FORMS)}")
        if self.reference is None and self.isolation != "thread":
            self.reference = adapter_reference(self.adapter)
        if self.isolation == "thread" or self.reference is None:
            if self.isolation == "process":
                raise UsageError("this adapter cannot be imported by another process "
                                 "(a lambda, a closure, a local function): pass a "
                                 "module-level function")
            self.mode = "thread"
            self.note = self.note or ("in-process: the adapter cannot be imported by name "
                                      "(a lambda, a closure), so a hung call cannot be "
                                      "stopped")
        else:
            self.mode = "process"
        self._is_class = isinstance(self.adapter, type)

    # ------------------------------------------------------------------ process mode

    def _start(self, limit: float) -> bool:
        """Start the worker; ``False`` when it had not answered within ``limit``
        seconds, less than :data:`START_TIMEOUT_S` (the run's time was up first)."""
        if self._capture:
            Path(self._capture).unlink(missing_ok=True)
        fd, self._capture = tempfile.mkstemp(prefix="pcfuzz-adapter-", suffix=".out")
        os.close(fd)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "pcfuzz.conform.worker", self._capture],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            start_new_session=True, cwd=os.getcwd())
        if self._proc.stdin is None:
            raise RuntimeError("the worker's stdin is not a pipe")
        hello = {"reference": self.reference, "sys_path": [p for p in sys.path if p],
                 "cwd": os.getcwd(), "form": self.form}
        write_message(cast(BinaryIO, self._proc.stdin), pickle.dumps(hello))
        answer = self._receive(limit)
        if answer is None and limit < START_TIMEOUT_S:
            self._kill()
            return False
        if not isinstance(answer, dict) or not answer.get("ok"):
            error = (answer.get("error") if isinstance(answer, dict)
                     else "it ended while importing" if answer is _EOF else None)
            self._kill()
            if self.isolation == "process" or error is None:
                raise UsageError(f"the adapter's worker process cannot import "
                                 f"{self.reference!r}: {error or 'it did not answer'}")
            # importable here, not there (a module pytest imported by path): in-process
            self.mode = "thread"
            self.note = (f"in-process: a worker process could not import "
                         f"{self.reference} ({error}), so a hung call cannot be stopped")
        return True

    def _receive(self, timeout: float) -> Any:
        """The worker's next answer; ``None`` when it did not come in time, ``_EOF``
        when the worker closed its end (it is gone)."""
        proc = self._proc
        if proc is None or proc.stdout is None:
            return None
        end = time.monotonic() + max(0.0, timeout)
        fd = proc.stdout.fileno()
        chunks = bytearray()
        want = 8
        size: int | None = None
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, max(1, want - len(chunks)))
            if not chunk:
                return _EOF
            chunks += chunk
            if size is None and len(chunks) >= 8:
                size = int.from_bytes(chunks[:8], "big")
                want = 8 + size
            if size is not None and len(chunks) >= want:
                try:
                    return json.loads(bytes(chunks[8:want]).decode("ascii"))
                except ValueError:
                    return None

    def _kill(self) -> None:
        self._answered = False  # a new worker builds the adapter's lazy state again
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def _captured(self) -> str:
        try:
            with open(self._capture, "rb") as fh:
                data = fh.read(OUTPUT_LIMIT + 1)
        except OSError:
            return ""
        text = data[:OUTPUT_LIMIT].decode("utf-8", "replace")
        return text + ("\n..." if len(data) > OUTPUT_LIMIT else "")

    def _call_process(self, payload: Any, limit: float, budget: float | None) -> Outcome:
        if self._proc is None:
            begun = time.monotonic()
            if not self._start(START_TIMEOUT_S if budget is None
                               else max(0.0, min(START_TIMEOUT_S, budget))):
                return Outcome("cut", seconds=time.monotonic() - begun,
                               message="stopped: the run's time was up while the adapter's "
                                       "process started")
            if self.mode == "thread":
                return self._call_thread(payload, limit)
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise RuntimeError("no worker process")
        started = time.monotonic()
        try:
            write_message(cast(BinaryIO, proc.stdin), pickle.dumps(payload))
        except (BrokenPipeError, OSError):
            return self._died(started)
        records: dict[str, list[dict[str, Any]]] = {"release": [], "continuation": []}
        end = started + limit
        while True:
            answer = self._receive(end - time.monotonic())
            record = _record(answer)
            if record is None:
                break
            records[record[0]].append(record[1])
        if isinstance(answer, dict) and "kind" in answer:
            self._answered = True
            return self._with(Outcome.from_json(answer), records)
        if answer is _EOF or proc.poll() is not None:
            return self._with(self._died(started), records)
        output = self._captured()
        self._kill()
        seconds = time.monotonic() - started
        if limit < self._timeout and seconds < self._timeout:
            return self._with(Outcome("cut", seconds=seconds, output=output,
                                      message="stopped: the run's time was up during the "
                                              "call"), records)
        return self._with(Outcome("timeout", seconds=self._timeout, output=output), records)

    def _with(self, outcome: Outcome, records: dict[str, list[dict[str, Any]]]) -> Outcome:
        """``outcome`` with the release form's records, however the call ended."""
        if self.form == "release":
            outcome.form = "release"
            outcome.releases = records["release"]
            outcome.continuations = records["continuation"]
        return outcome

    def _died(self, started: float) -> Outcome:
        proc = self._proc
        code = None
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = proc.wait(timeout=5)
        output = self._captured()
        self._kill()
        if code is not None and code < 0:
            try:
                what = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                what = f"killed by signal {-code}"
        else:
            what = f"exit status {code}"
        return Outcome("died", message=what, output=output,
                       seconds=time.monotonic() - started)

    # ------------------------------------------------------------------ thread mode

    def _call_thread(self, payload: Any, limit: float) -> Outcome:
        if self.refused:
            return Outcome("refused", message=self.refused)
        if self.form == "release":  # the adapter gets its own copy of each item
            payload = [p if isinstance(p, (bytes, bytearray)) else json.loads(json.dumps(p))
                       for p in payload]
        elif not isinstance(payload, (bytes, bytearray)):
            payload = json.loads(json.dumps(payload))  # the adapter gets its own copy
        box: dict[str, Any] = {}
        records: dict[str, list[dict[str, Any]]] = {"release": [], "continuation": []}
        out = io.StringIO()

        def emit(kind: str, record: dict[str, Any]) -> None:
            records[kind].append(json.loads(json.dumps(record)))

        def run() -> None:
            box["result"] = call_adapter(self.adapter, payload, self.form, emit, self._loop)

        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = out
        started = time.monotonic()
        try:
            thread = threading.Thread(target=run, daemon=True, name="pcfuzz-adapter")
            thread.start()
            thread.join(limit)
        finally:
            sys.stdout, sys.stderr = saved
        seconds = time.monotonic() - started
        taken = {k: list(v) for k, v in records.items()}  # the thread may still add
        if "result" in box:
            self._answered = True
            outcome = Outcome.from_json(box["result"])
            outcome.output = out.getvalue()[:OUTPUT_LIMIT]
            return self._with(outcome, taken)
        if limit < self._timeout and seconds < self._timeout:
            self.refused = ("an earlier call was still running when the run's time was "
                            "up (in-process: it cannot be stopped)")
            return self._with(Outcome("cut", seconds=seconds, message=self.refused), taken)
        self.refused = (f"an earlier call did not return within {self._timeout:g}s and "
                        "an in-process adapter cannot be stopped: no further call")
        return self._with(Outcome("timeout", seconds=self._timeout,
                                  output=out.getvalue()[:OUTPUT_LIMIT]), taken)

    # ------------------------------------------------------------------ the API

    def call(self, payload: Any, limit_s: float | None = None) -> Outcome:
        """Call the adapter once with ``payload``; ``limit_s``: the run's time left
        (a call cut by it is ``cut``, not ``timeout``). The first call of a worker (or
        of the thread mode) may take :data:`FIRST_CALL_FACTOR` times the timeout: an
        adapter's lazy imports and caches are built there."""
        timeout = self.timeout_s * (FIRST_CALL_FACTOR if not self._answered else 1.0)
        self._timeout = timeout
        limit = timeout if limit_s is None else max(0.0, min(timeout, limit_s))
        if self.mode == "thread":
            return self._call_thread(payload, limit)
        return self._call_process(payload, limit, limit_s)

    @property
    def is_class(self) -> bool:
        return self._is_class

    def close(self) -> None:
        self._kill()
        if not self.refused:  # a call still running in its thread may hold the loop
            self._loop.close()
        if self._capture:
            Path(self._capture).unlink(missing_ok=True)
            self._capture = ""

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
