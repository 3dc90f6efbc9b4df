"""Property-test failures as readable regression files, replayed by pytest.

The nightly property run (``pcfuzz/nightly/pytest_budget.py`` with ``PCFUZZ_PROPERTY_FAILURES``
set to a directory) records, once a hypothesis test has failed, every call the test
makes into ``pcfuzz.contracts`` (as ``pcfuzz show`` does for a fuzz target: only the
outermost calls, arguments copied at the call). Hypothesis ends a failing test by
running its minimal falsifying example once more; the calls of that run and the
exception are written as one JSON document::

    {"format": "pcfuzz-property-regression/2",
     "test": "tests/test_x.py::test_y",
     "contract": "openai-responses", "revision": "2026-07-21",
     "events": [...],                 # the event list of the call that failed
     "calls": [{"call": "openai_responses.parse_events",
                "instance": null, "args": [[...]], "kwargs": {...},
                "outcome": "raised KeyError: ..."}],
     "unreplayed": [...],             # calls outside the entry-point table, by name
     "arguments": {...},              # the test's drawn arguments (repr where not JSON)
     "failure": {"exception": ..., "message": ..., "frames": [...],
                 "fingerprint": ..., "bug": "bug-KeyError-..." or null},
     "expect": "pass", "date": ..., "tools": {...}}

``pcfuzz promote FILE.json`` replays it and stores it as
``<regressions>/properties/<fingerprint>.json``; ``tests/test_property_regressions.py``
replays every stored file: the recorded calls run again, in order (a constructor
makes the object the later method calls use), against the current contracts.

A document is data: each call names an entry of the closed table of contract entry
points (:mod:`pcfuzz.engine.entry_points`: ``openai_chat.parse_events``,
``openai_chat.ChatCompletionStream.feed``, ``strict_json.loads``, ...), never a module
or a function of its own choosing. :func:`load` checks the whole document (every name
in the table, every argument list fitting its entry's signature, the shape of every
field, its size and depth) before anything runs; anything else is a
:class:`DocumentError` (a usage error, exit status 2). A call the recorder saw outside
the table is not written as a call, only listed by name under ``unreplayed``. The
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pcfuzz import files
from pcfuzz.engine import entry_points
from pcfuzz.errors import UsageError

__all__ = [
    "FORMAT",
    "DocumentError",
    "DoesNotReproduce",
    "ReplayResult",
    "build_document",
    "load",
    "promote",
    "replay",
    "store_dir",
    "validate",
    "write_failure",
]

FORMAT = "pcfuzz-property-regression/2"
#: The format before calls named entry points (they named a module and a function).
OLD_FORMATS = ("pcfuzz-property-regression/1",)
#: Calls kept per document (a state machine can make thousands).
MAX_CALLS = 500
#: The largest instance number a call may carry (the recorder counts from 1).
MAX_INSTANCE = 10**9


class DocumentError(UsageError):
    """A property-regression document that cannot be replayed as it is: not one, a
    name outside the entry-point table, a malformed field. Nothing of it ran."""


class DoesNotReproduce(Exception):
    """Replaying the document's calls does not fail (see :func:`promote`)."""


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


def _revision_of(contract: str) -> str | None:
    """The current ``REVISION`` of a contract named by the registry."""
    from pcfuzz.contracts.registry import entry

    module = importlib.import_module(f"pcfuzz.contracts.{entry(contract).package}")
    revision = getattr(module, "REVISION", None)
    return revision if isinstance(revision, str) else None


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
    shown: list[dict[str, Any]] = []
    unreplayed: list[str] = []
    for c in calls[:MAX_CALLS]:
        key = entry_points.key_of(c.module, c.name)
        if key is None:
            unreplayed.append(f"{c.module}.{c.name}")
            continue
        shown.append({"call": key, "instance": c.instance,
                      "args": [_jsonable(a, lossy) for a in c.args],
                      "kwargs": {str(k): _jsonable(v, lossy) for k, v in c.kwargs.items()},
                      "outcome": c.outcome})
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
        contract = entry_points.contract_of(call["call"])
        revision = _revision_of(contract) if contract is not None else None
        given = call["kwargs"].get("revision") if isinstance(call["kwargs"], dict) else None
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
        "unreplayed": sorted(set(unreplayed)),
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
            kept = files.read_json(path, what="property failure")
            if isinstance(kept, dict) and isinstance(kept.get("calls"), list) and len(
                    kept["calls"]) <= len(doc["calls"]):
                return path
        except UsageError:
            pass  # unreadable: replaced
    path.write_text(_dumps(doc), encoding="utf-8")
    return path


def _dumps(doc: dict[str, Any]) -> str:
    """The document as readable JSON text; ASCII escapes where a string holds a lone
    surrogate (which UTF-8 cannot carry)."""
    text = json.dumps(doc, indent=1, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(doc, indent=1)
    return text + "\n"


@dataclass(frozen=True)
class _Call:
    """One checked call of a document: its entry, decoded arguments, instance."""

    entry: entry_points.Entry
    args: list[Any]
    kwargs: dict[str, Any]
    instance: int | None


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$bytes"} and isinstance(value["$bytes"], str):
            try:
                return value["$bytes"].encode("latin-1")
            except UnicodeEncodeError:
                return value  # not written by build_document: left as the object it is
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def _fits(entry: entry_points.Entry, args: list[Any], kwargs: dict[str, Any]) -> str | None:
    """Why the arguments do not fit the entry's signature, or ``None``."""
    try:
        signature = inspect.signature(entry.function)
    except (TypeError, ValueError):
        return None  # no signature to check against: the call itself decides
    try:
        if entry.is_method:
            signature.bind(None, *args, **kwargs)
        else:
            signature.bind(*args, **kwargs)
    except TypeError as exc:
        return str(exc)
    return None


def _checked_calls(doc: Any, source: str) -> list[_Call]:
    """The calls of a document once every part of it is known to be well formed (see
    the module doc); :class:`DocumentError` otherwise."""
    def bad(why: str) -> DocumentError:
        return DocumentError(f"{source}: {why}")

    if not isinstance(doc, dict):
        raise bad(f"not a {FORMAT} document (a JSON object is expected)")
    fmt = doc.get("format")
    if fmt in OLD_FORMATS:
        raise bad(f"format {fmt} names modules and functions, which a document may no "
                  f"longer do; capture the failure again (the nightly writes {FORMAT})")
    if fmt != FORMAT:
        raise bad(f"not a {FORMAT} document (format {fmt!r})"[:300])
    calls, failure = doc.get("calls"), doc.get("failure")
    if not isinstance(calls, list) or not isinstance(failure, dict):
        raise bad("'calls' (a list) and 'failure' (an object) are required")
    if not isinstance(failure.get("exception"), str) or not isinstance(
            failure.get("message", ""), str):
        raise bad("'failure' needs 'exception' (a string) and 'message' (a string)")
    for field in ("revision", "test", "contract"):
        if doc.get(field) is not None and not isinstance(doc[field], str):
            raise bad(f"'{field}' must be a string or null")
    if doc.get("expect", "pass") not in ("pass", "crash"):
        raise bad("'expect' must be \"pass\" or \"crash\"")
    if len(calls) > MAX_CALLS:
        raise bad(f"{len(calls)} calls; a document holds at most {MAX_CALLS}")
    out = []
    for n, call in enumerate(calls, start=1):
        if not isinstance(call, dict):
            raise bad(f"call {n} is not an object")
        key = call.get("call")
        entry = entry_points.lookup(key)
        if entry is None:
            named = json.dumps(key, ensure_ascii=True)[:120]
            raise bad(f"call {n} names {named}, which is not a contract entry point; a "
                      "document names only entries of pcfuzz's table (e.g. "
                      "openai_chat.parse_events, strict_json.loads), never code")
        if "module" in call:
            raise bad(f"call {n} names a module; a document names only entry points")
        args, kwargs = call.get("args", []), call.get("kwargs", {})
        if not isinstance(args, list) or not isinstance(kwargs, dict):
            raise bad(f"call {n} ({key}): 'args' must be a list and 'kwargs' an object")
        instance = call.get("instance")
        if instance is not None and (type(instance) is not int
                                     or not 0 < instance <= MAX_INSTANCE):
            raise bad(f"call {n} ({key}): 'instance' must be a positive integer or null")
        if not isinstance(call.get("outcome", ""), str):
            raise bad(f"call {n} ({key}): 'outcome' must be a string")
        args, kwargs = _decode(args), _decode(kwargs)
        why = _fits(entry, args, kwargs)
        if why is not None:
            raise bad(f"call {n}: its arguments do not fit {key}: {why}")
        out.append(_Call(entry, args, kwargs, instance))
    return out


def validate(doc: Any, source: str = "document") -> dict[str, Any]:
    """``doc`` once it is known to be a well-formed document (see the module doc);
    :class:`DocumentError` saying what is wrong otherwise."""
    _checked_calls(doc, source)
    result: dict[str, Any] = doc
    return result


def load(path: Path) -> dict[str, Any]:
    """Read and check one regression document; :class:`DocumentError` (a
    :class:`~pcfuzz.errors.UsageError`) says what is wrong. Nothing of it runs."""
    try:
        doc = files.read_json(path, what="property-regression document")
    except DocumentError:
        raise
    except UsageError as exc:
        raise DocumentError(str(exc)) from exc
    return validate(doc, files.shown(path))


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


def replay(doc: dict[str, Any]) -> ReplayResult:
    """Run the document's calls again against the current ``pcfuzz.contracts``; the
    document is checked first (:class:`DocumentError`: nothing ran)."""
    from pcfuzz.contracts.errors import ContractError

    calls = _checked_calls(doc, "document")
    revision = doc.get("revision")
    objects: dict[int, Any] = {}
    for n, call in enumerate(calls, start=1):
        entry, args, kwargs = call.entry, call.args, dict(call.kwargs)
        try:
            if entry.owner is not None:
                obj = objects.get(call.instance) if call.instance is not None else None
                if obj is None or not isinstance(obj, entry.owner):
                    continue  # its constructor raised (a ContractError) or was not recorded
                entry.function(obj, *args, **kwargs)
                continue
            if revision and "revision" not in kwargs and _takes_revision(entry.function):
                kwargs["revision"] = revision
            made = entry.function(*args, **kwargs)
            if call.instance is not None and entry.is_constructor:
                objects[call.instance] = made
        except ContractError:
            continue
        except Exception as exc:  # noqa: BLE001 - anything else escaping is the bug
            return ReplayResult((type(exc).__name__, str(exc), n), n, exc)
    return ReplayResult(None, len(calls))


def _takes_revision(fn: Any) -> bool:
    try:
        return "revision" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def promote(source: Path, regressions_dir: Path, *, expect: str = "pass") -> tuple[Path, str]:
    """Copy a captured failure into the store after checking it reproduces; returns
    the stored path and the replay's description. :class:`DocumentError` when it is
    not a well-formed document, :class:`DoesNotReproduce` when replaying it does not
    fail (see the module doc)."""
    doc = load(source)
    result = replay(doc)
    if not result.reproduces:
        args = json.dumps(doc.get("arguments"), ensure_ascii=False)[:300]
        raise DoesNotReproduce(
            f"{files.shown(source.name)}: replaying its {result.calls} contract calls does "
            f"not fail ({doc['failure']['exception']} came from the test's own check, not "
            f"from the contracts); keep it as an @example on {doc.get('test')} instead: {args}")
    doc["expect"] = "crash" if expect == "crash" else "pass"
    doc["promoted"] = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    doc["source"] = files.shown(source.name)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", files.shown(Path(source).stem)) or "document"
    out = store_dir(regressions_dir) / f"{stem}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(_dumps(doc), encoding="utf-8")
    return out, result.text()
