"""Property-test failures as readable regression files, replayed by pytest.

The nightly property run (``pcfuzz/nightly/pytest_budget.py`` with ``PCFUZZ_PROPERTY_FAILURES``
set to a directory) records, once a hypothesis test has failed, every call the test
makes into ``pcfuzz.contracts`` (as ``pcfuzz show`` does for a fuzz target: only the
outermost calls, arguments copied at the call). Hypothesis ends a failing test by
running its minimal falsifying example once more; the calls of that run and the
exception are written as one JSON document::

    {"format": "pcfuzz-property-regression/1",
     "test": "tests/test_x.py::test_y",
     "contract": "openai-responses", "revision": "2026-07-21",
     "events": [...],                 # the event list of the call that failed
     "calls": [{"call": "parse_events", "module": "pcfuzz.contracts...",
                "instance": null, "args": [[...]], "kwargs": {...},
                "outcome": "raised KeyError: ..."}],
     "arguments": {...},              # the test's drawn arguments (repr where not JSON)
     "failure": {"exception": ..., "message": ..., "frames": [...],
                 "fingerprint": ..., "bug": "bug-KeyError-..." or null},
     "expect": "pass", "date": ..., "tools": {...}}

``pcfuzz promote FILE.json`` replays it and stores it as
``<regressions>/properties/<fingerprint>.json``; ``tests/test_property_regressions.py``
replays every stored file: the recorded calls run again, in order (a constructor
makes the object the later method calls use), against the current contracts. The
replay fails when any call lets anything but a ``ContractError`` escape (the house
rule every contract keeps). A failure that was the property's own check (an
assertion in the test, no exception from the contracts) does not reproduce by
replaying the calls: promote refuses it and says to keep the arguments as an
``@example`` on the test instead.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib
import inspect
import json
import re
import traceback
from pathlib import Path
from typing import Any

__all__ = [
    "FORMAT",
    "ReplayResult",
    "build_document",
    "load",
    "promote",
    "replay",
    "store_dir",
    "write_failure",
]

FORMAT = "pcfuzz-property-regression/1"
#: Calls kept per document (a state machine can make thousands).
MAX_CALLS = 500


def store_dir(regressions_dir: Path) -> Path:
    """Where promoted property failures live, beside the fuzz targets' folders."""
    return regressions_dir / "properties"


class _Lossy:
    """Tracks whether a value had to be shown with ``repr`` (not JSON)."""

    def __init__(self) -> None:
        self.lossy = False

    def default(self, value: Any) -> Any:
        if isinstance(value, (bytes, bytearray)):
            return {"$bytes": bytes(value).decode("latin-1")}
        if isinstance(value, (set, frozenset, tuple)):
            return list(value)
        self.lossy = True
        return {"$repr": repr(value)[:2000]}


def _jsonable(value: Any, lossy: _Lossy) -> Any:
    try:
        return json.loads(json.dumps(value, default=lossy.default, allow_nan=False))
    except (ValueError, TypeError, RecursionError):
        lossy.lossy = True
        return {"$repr": repr(value)[:2000]}


def _contract_of(module: str) -> tuple[str | None, str | None]:
    """``pcfuzz.contracts.openai_responses._stream`` -> (``openai-responses``, its
    current ``REVISION``)."""
    parts = module.split(".")
    if len(parts) < 3 or parts[:2] != ["pcfuzz", "contracts"]:
        return None, None
    name = parts[2]
    try:
        revision = getattr(importlib.import_module(".".join(parts[:3])), "REVISION", None)
    except ImportError:
        revision = None
    return name.replace("_", "-"), revision if isinstance(revision, str) else None


def _event_list(call: dict[str, Any]) -> list[Any] | None:
    for arg in call["args"]:
        if isinstance(arg, list):
            return arg
    return None


def _events(calls: list[dict[str, Any]]) -> list[Any]:
    """The event list a person reads: the list argument of the call that raised (else
    of the last call with one), or the events fed one by one to the stream that
    raised (else to the last stream fed)."""
    failed = [c for c in calls if c["outcome"] != "returned"]
    for pool in (failed, list(reversed(calls))):
        for call in pool:
            found = _event_list(call)
            if found is not None:
                return found
            if call["call"].endswith(".feed") and call["instance"] is not None:
                return [c["args"][0] for c in calls
                        if c["instance"] == call["instance"] and c["call"].endswith(".feed")
                        and c["args"]]
    return []


def build_document(
    *,
    test: str,
    calls: list[Any],
    arguments: dict[str, Any],
    exc: BaseException,
) -> dict[str, Any]:
    """The regression document of one failing property test (see the module doc);
    ``calls`` are :class:`pcfuzz.engine.show.Call` records of the failing run."""
    from pcfuzz.engine.regressions import tool_versions
    from pcfuzz.engine.triage import bug_fingerprint, code_frame, message_shape

    lossy = _Lossy()
    shown = [
        {"call": c.name, "module": c.module, "instance": c.instance,
         "args": _jsonable(c.args, lossy), "kwargs": _jsonable(c.kwargs, lossy),
         "outcome": c.outcome}
        for c in calls[:MAX_CALLS]
    ]
    here = Path(__file__).resolve().parent  # the recording and budget wrappers' frames
    frames = [(f.filename, f.lineno or 0, f.name)
              for f in traceback.extract_tb(exc.__traceback__)
              if Path(f.filename).resolve().parent != here][::-1]
    exception = type(exc).__name__
    message = str(exc)[:1000]
    bug = bug_fingerprint(exception, message, frames)
    key = "|".join([test, exception, message_shape(message)])
    own = f"{re.sub(r'[^A-Za-z0-9]+', '', exception) or 'Failure'}-" + hashlib.sha1(
        key.encode(), usedforsecurity=False).hexdigest()[:10]
    contract = revision = None
    failing = [c for c in shown if c["outcome"] != "returned"] or shown[::-1]
    for call in failing:
        contract, revision = _contract_of(call["module"])
        given = call["kwargs"].get("revision")
        if isinstance(given, str):
            revision = given
        if contract is not None:
            break
    return {
        "format": FORMAT,
        "test": test,
        "contract": contract,
        "revision": revision,
        "events": _events(shown),
        "calls": shown,
        "truncated_calls": max(0, len(calls) - MAX_CALLS),
        "lossy": lossy.lossy,
        "arguments": _jsonable(arguments, lossy),
        "failure": {
            "exception": exception,
            "message": message,
            "frames": [f"{Path(f).name}:{fn}" for f, _l, fn in frames[:6]],
            "where": code_frame(frames),
            "fingerprint": bug or own,
            "bug": bug,
        },
        "expect": "pass",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "tools": tool_versions(),
    }


def write_failure(directory: Path, doc: dict[str, Any]) -> Path:
    """``<directory>/<fingerprint>.json`` (a later failure of the same bug with fewer
    calls replaces it)."""
    directory.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", doc["failure"]["fingerprint"])
    path = directory / f"{name}.json"
    if path.is_file():
        try:
            if len(json.loads(path.read_text(encoding="utf-8")).get("calls", [])) <= len(
                    doc["calls"]):
                return path
        except (ValueError, AttributeError):
            pass
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load(path: Path) -> dict[str, Any]:
    """Read and check one regression document; ``ValueError`` says what is wrong."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} document")
    if not isinstance(doc.get("calls"), list) or not isinstance(doc.get("failure"), dict):
        raise ValueError(f"{path}: 'calls' (a list) and 'failure' (an object) are required")
    return doc


class ReplayResult:
    """What replaying a document's calls did: ``escaped`` is the exception (type name
    and message) that escaped a call, ``None`` when every call returned or raised a
    ``ContractError``."""

    def __init__(self, escaped: tuple[str, str, int] | None, calls: int,
                 exc: BaseException | None = None) -> None:
        self.escaped = escaped
        self.calls = calls
        self.exc = exc

    @property
    def reproduces(self) -> bool:
        return self.escaped is not None

    def text(self) -> str:
        if self.escaped is None:
            return f"{self.calls} calls replayed: every one returned or raised a ContractError"
        name, message, n = self.escaped
        return f"call {n} let {name} escape: {message[:300]}"


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$bytes"} and isinstance(value["$bytes"], str):
            return value["$bytes"].encode("latin-1")
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def replay(doc: dict[str, Any]) -> ReplayResult:
    """Run the document's calls again against the current ``pcfuzz.contracts``."""
    from pcfuzz.contracts.errors import ContractError

    objects: dict[int, Any] = {}
    for n, call in enumerate(doc["calls"], start=1):
        module = importlib.import_module(call["module"])
        args = _decode(call["args"])
        kwargs = _decode(call["kwargs"])
        name: str = call["call"]
        instance = call.get("instance")
        try:
            if "." in name:
                obj = objects.get(instance) if instance is not None else None
                if obj is None:
                    continue  # its constructor raised (a ContractError) or was not recorded
                getattr(obj, name.rsplit(".", 1)[1])(*args, **kwargs)
                continue
            fn = getattr(module, name)
            if (doc.get("revision") and "revision" not in kwargs
                    and _takes_revision(fn)):
                kwargs["revision"] = doc["revision"]
            made = fn(*args, **kwargs)
            if instance is not None:
                objects[instance] = made
        except ContractError:
            continue
        except Exception as exc:  # noqa: BLE001 - anything else escaping is the bug
            return ReplayResult((type(exc).__name__, str(exc), n), n, exc)
    return ReplayResult(None, len(doc["calls"]))


def _takes_revision(fn: Any) -> bool:
    try:
        return "revision" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def promote(source: Path, regressions_dir: Path, *, expect: str = "pass") -> tuple[Path, str]:
    """Copy a captured failure into the store after checking it reproduces; returns
    the stored path and the replay's description. ``ValueError`` when it does not
    reproduce (see the module doc)."""
    doc = load(source)
    result = replay(doc)
    if not result.reproduces:
        args = json.dumps(doc.get("arguments"), ensure_ascii=False)[:300]
        raise ValueError(
            f"{source.name}: replaying its {result.calls} contract calls does not fail "
            f"({doc['failure']['exception']} came from the test's own check, not from the "
            f"contracts); keep it as an @example on {doc.get('test')} instead: {args}")
    doc["expect"] = "crash" if expect == "crash" else "pass"
    doc["promoted"] = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    doc["source"] = source.name
    out = store_dir(regressions_dir) / f"{Path(source).stem}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return out, result.text()
