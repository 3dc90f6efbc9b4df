"""A property of the whole ``pcfuzz`` command: whatever the arguments and files, it
ends with a documented status, says so without a traceback, writes only where it was
told, and does not hang.

Each example builds a small world in a fresh temporary directory (the current
directory for the run): a toy fuzz target with a seed corpus, a regression store with
inputs and (often corrupt) sidecars, promoted property documents, crash artifacts,
captures (valid, truncated, mutated, random), property-failure documents (recorded
from real calls, then damaged or made hostile), and special paths: a FIFO, a symlink
loop, a directory, a missing file, a name that is not UTF-8, a device. It then runs
``pcfuzz.cli.main`` in this process on an argument vector drawn for one subcommand
(its real options with valid, malformed and hostile values; positionals from the
world) or on plain junk, with ``--work-dir`` and ``--regressions-dir`` inside the
world and standard streams of strict UTF-8. Asserted for every example:

- the exit status is 0, 1, 2 or 3 (70 is a bug of pcfuzz; argparse's own exits are
  0 and 2);
- nothing on standard error looks like a traceback;
- the run ends within :data:`PER_CALL_S` (an alarm turns a hang into a failure);
- nothing is written outside the world: the checkout and the temporary directory's
  fallback for bug reports are compared before and after the whole test.

The subcommands that legitimately run long (``fuzz``, ``nightly``, ``minimize``,
``mutants``, ``bench``; ``conform``, which runs hypothesis itself; ``drift``, which
reads no file and spends seconds walking the SDKs' types, tests/test_pcfuzz_drift.py)
are parsed for real but not run: their argument validation is what is tested here;
the others (``list``, ``check``, ``show``, ``promote``, ``triage``, ``replay``) run.
The test is parametrized by subcommand (and plain junk), so every one is reached in
every run; ``--hypothesis-show-statistics`` shows the statuses, documents and file
kinds reached. Each gets an eighth of the loaded profile's examples (tests/conftest.py),
at least 5.

What an in-process run cannot show (Ctrl-C, a full disk on standard output, a reader
that closes the pipe early) is run in subprocesses by tests/test_pcfuzz_hostile.py.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pcfuzz.cli import build_parser, main
from pcfuzz.cli.app import COMMANDS, TABLE
from pcfuzz.contracts.openai_chat import ChatCompletionStream, parse_events
from pcfuzz.engine.property_regressions import FORMAT, build_document
from pcfuzz.engine.show import Recorder, recording

REPO = Path(__file__).resolve().parent.parent
#: Seconds one run may take before it counts as a hang.
PER_CALL_S = 60
#: The statuses a run may end with (argparse's own exits are among them).
STATUSES = {0, 1, 2, 3}
#: Run for real? The others are parsed (their option validation is under test) but
#: their ``run`` is replaced: they fuzz, run test suites or hypothesis for minutes.
PARSE_ONLY = frozenset({"fuzz", "nightly", "minimize", "mutants", "bench", "conform",
                        "drift"})
#: The path kinds a subcommand's positional is drawn from half of the time.
RELEVANT = {
    "check": ["capture", "json lines", "fixture", "not UTF-8 name", "stdin"],
    "show": ["seed", "crash artifact"],
    "promote": ["document", "crash artifact"],
    "triage": ["artifacts dir"],
}

TOY = '''#!/usr/bin/env python3
"""A toy target (no atheris needed to replay it)."""


def TestOneInput(data: bytes) -> None:
    if data[:3] == b"FUZ":
        raise KeyError("toy bug")
'''


def _capture() -> bytes:
    document = json.loads((REPO / "fixtures" / "wire" / "openai_chat.sse.json").read_text())
    return str(document["sse"]).encode("utf-8")


def _recorded_document() -> dict[str, Any]:
    """A real property-failure document: calls recorded into the Chat contract."""
    space: dict[str, Any] = {"ChatCompletionStream": ChatCompletionStream,
                             "parse_events": parse_events}
    rec = Recorder()
    with recording([space], rec):
        stream = space["ChatCompletionStream"]()
        for call in (lambda: stream.feed({"id": "c", "choices": []}),
                     lambda: space["parse_events"]([{"id": "c"}, "[DONE]"])):
            try:
                call()
            except Exception:  # noqa: BLE001, S110 - the contracts reject these
                pass
    return build_document(test="tests/t.py::t", calls=rec.calls, arguments={"x": 1},
                          exc=KeyError("planted"))


CAPTURE = _capture()
DOCUMENT = _recorded_document()
PARSER = build_parser()
SUBPARSERS: dict[str, argparse.ArgumentParser] = next(
    a for a in PARSER._actions if a.dest == "command").choices  # type: ignore[assignment]


# -- the world ------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=8)


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` as it is, truncated, with bytes flipped, or with junk appended."""
    how = draw(st.sampled_from(["as is", "truncated", "flipped", "appended"]))
    if how == "truncated" and data:
        return data[:draw(st.integers(0, len(data) - 1))]
    if how == "flipped" and data:
        out = bytearray(data)
        for _ in range(draw(st.integers(1, 4))):
            out[draw(st.integers(0, len(out) - 1))] = draw(st.integers(0, 255))
        return bytes(out)
    if how == "appended":
        return data + draw(st.binary(max_size=16))
    return data


def _with(doc: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    out: Any = json.loads(json.dumps(doc))
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    result: dict[str, Any] = out
    return result


HOSTILE_NAMES = ["os.mkdir", "builtins.eval", "subprocess.run", "openai_chat._stream.x",
                 "openai_chat.ChatCompletionStream.__init__", "fixtures.load_fixture",
                 "strict_json.loads.__globals__"]


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    """Property-failure documents: recorded, damaged field by field, hostile, junk."""
    doc = DOCUMENT
    kind = draw(st.sampled_from(["recorded", "field", "hostile name", "module field",
                                 "old format", "junk", "deep"]))
    event(f"document: {kind}")
    if kind == "field":
        path = draw(st.sampled_from([["calls"], ["failure"], ["failure", "exception"],
                                     ["calls", 0], ["calls", 0, "args"],
                                     ["calls", 0, "kwargs"], ["calls", 0, "instance"],
                                     ["revision"], ["expect"], ["calls", 1, "call"]]))
        doc = _with(doc, path, draw(json_values))
    elif kind == "hostile name":
        doc = _with(doc, ["calls", 0, "call"], draw(st.sampled_from(HOSTILE_NAMES)))
    elif kind == "module field":
        doc = _with(doc, ["calls", 0, "module"], "os")
    elif kind == "old format":
        doc = _with(doc, ["format"], "pcfuzz-property-regression/1")
    elif kind == "junk":
        return json.dumps({"format": FORMAT, **draw(st.dictionaries(
            st.sampled_from(["calls", "failure", "revision", "test", "expect"]),
            json_values))}).encode()
    elif kind == "deep":
        depth = draw(st.integers(500, 3000))
        head = '{"format": "' + FORMAT + '", "calls": '
        return (head + "[" * depth + "]" * depth + "}").encode()
    return draw(damaged(json.dumps(doc, indent=1).encode()))


captures = st.one_of(
    damaged(CAPTURE),
    st.just(b"\n".join(json.dumps(e).encode() for e in [{"id": "c"}, "[DONE]"])),
    st.binary(max_size=64),
)
crash_inputs = st.one_of(st.binary(max_size=16), st.binary(max_size=8).map(b"FUZ".__add__))
sidecars = st.one_of(
    st.sampled_from(['{"expect": "crash"}', '{"expect": "pass"}', "{not json", "[1, 2]",
                     "[" * 2000, '{"fingerprint": 5}']),
    json_values.map(json.dumps),
).map(lambda text: text.encode())


@st.composite
def worlds(draw: st.DrawFn) -> dict[str, Any]:
    """What a world holds (written by :func:`_build`)."""
    return {
        "capture": draw(captures),
        "document": draw(documents()),
        "crashes": draw(st.lists(crash_inputs, max_size=3)),
        "regressions": draw(st.lists(st.tuples(crash_inputs, st.none() | sidecars),
                                     max_size=3)),
        "stored": draw(st.lists(documents(), max_size=2)),
    }


def _build(root: Path, spec: dict[str, Any]) -> dict[str, str]:
    """Write the world under ``root``; the paths a run may name, by kind."""
    fuzz = root / "fuzz"
    (fuzz / "corpus" / "fuzz_toy").mkdir(parents=True)
    (fuzz / "fuzz_toy.py").write_text(TOY, encoding="utf-8")
    (fuzz / "fuzz_toy.py").chmod(0o755)
    (fuzz / "corpus" / "fuzz_toy" / "seed").write_bytes(b"{}")
    os.mkfifo(fuzz / "corpus" / "fuzz_toy" / "a-fifo")
    store = root / "regressions" / "fuzz_toy"
    store.mkdir(parents=True)
    for n, (data, sidecar) in enumerate(spec["regressions"]):
        (store / f"r{n}.bin").write_bytes(data)
        if sidecar is not None:
            (store / f"r{n}.meta.json").write_bytes(sidecar)
    (root / "regressions" / "properties").mkdir()
    for n, doc in enumerate(spec["stored"]):
        (root / "regressions" / "properties" / f"p{n}.json").write_bytes(doc)
    artifacts = root / "arts" / "fuzz_toy"
    artifacts.mkdir(parents=True)
    for n, data in enumerate(spec["crashes"]):
        (artifacts / f"crash-{n}").write_bytes(data)
    (root / "capture.sse").write_bytes(spec["capture"])
    (root / "capture.jsonl").write_bytes(spec["capture"])
    (root / "failure.json").write_bytes(spec["document"])
    (root / os.fsdecode(b"name-\xff.sse")).write_bytes(spec["capture"])
    os.mkfifo(root / "fifo.sse")
    (root / "loop-a").symlink_to(root / "loop-b")
    (root / "loop-b").symlink_to(root / "loop-a")
    return {
        "capture": "capture.sse", "json lines": "capture.jsonl", "document": "failure.json",
        "crash artifact": str(artifacts / "crash-0"), "artifacts dir": str(artifacts),
        "seed": str(fuzz / "corpus" / "fuzz_toy" / "seed"), "store": str(store),
        "not UTF-8 name": os.fsdecode(b"name-\xff.sse"), "fifo": "fifo.sse",
        "symlink loop": "loop-a", "directory": "arts", "missing": "no-such-file",
        "device": "/dev/null", "fixture": str(REPO / "fixtures" / "wire" / "openai_chat.sse.json"),
        "stdin": "-",
    }


# -- argument vectors -------------------------------------------------------------------

NUMBERS = ["-5", "0", "0.001", "1", "3", "nan", "inf", "-inf", "1e400", "1e9", "x", ""]
#: Junk words: relative names only (a run may create what it is given, inside the world).
junk = st.text(st.characters(exclude_characters="/\x00", exclude_categories=("Cs",)),
               max_size=12).filter(lambda s: not s.startswith(("~", "-")) and ".." not in s)


@st.composite
def value_for(draw: st.DrawFn, action: argparse.Action, paths: dict[str, str],
              relevant: list[str] | None = None) -> str:
    if action.choices is not None and draw(st.booleans()):
        return str(draw(st.sampled_from(sorted(map(str, action.choices)))))
    if action.dest == "target" and draw(st.booleans()):
        return draw(st.sampled_from(["toy", "strict-json"]))
    if action.type not in (None, str):
        return draw(st.sampled_from(NUMBERS) | st.integers(-10, 10**6).map(str)
                    | st.floats(allow_nan=True).map(repr))
    kinds = sorted(paths) + ["junk"]
    if relevant and draw(st.booleans()):
        kinds = relevant
    kind = draw(st.sampled_from(kinds))
    event(f"path kind: {kind}")
    return draw(junk) if kind == "junk" else paths[kind]


@st.composite
def argv_for(draw: st.DrawFn, command: str, paths: dict[str, str]) -> list[str]:
    parser = SUBPARSERS[command]
    words: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        required = not action.option_strings and action.nargs != "*" or action.required
        if not required and not draw(st.integers(0, 3)) == 0:
            continue
        if action.nargs == 0:
            words.append(action.option_strings[0])
            continue
        many = draw(st.integers(0, 2)) if action.nargs in ("*", "+") else 1
        relevant = None if action.option_strings else RELEVANT.get(command)
        values = [draw(value_for(action, paths, relevant)) for _ in range(many)]
        words += ([action.option_strings[0]] if action.option_strings else []) + values
    return words


@st.composite
def runs(draw: st.DrawFn, command: str | None, paths: dict[str, str]) -> list[str]:
    """An argument vector for ``command``, or plain junk (``None``)."""
    if command is None:
        head = draw(st.sampled_from(list(COMMANDS)) | junk)
        event(f"junk after: {head if head in COMMANDS else 'junk'}")
        return [head, *draw(st.lists(junk | st.sampled_from(["-h", "--json", "-", "--"]),
                                     max_size=4))]
    return [command, *draw(argv_for(command, paths))]


# -- running one example ----------------------------------------------------------------


class _Hang(BaseException):
    pass


@contextmanager
def _alarm(seconds: int) -> Iterator[None]:
    def ring(signum: int, frame: object) -> None:
        raise _Hang(f"no end after {seconds} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _strict_stream(data: bytes = b"") -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="strict")


def _run(argv: list[str], stdin: bytes) -> tuple[int, str, float]:
    """``main(argv)`` with strict UTF-8 standard streams: (status, stderr, seconds)."""
    saved = sys.stdin, sys.stdout, sys.stderr
    out, err = _strict_stream(), _strict_stream()
    sys.stdin, sys.stdout, sys.stderr = _strict_stream(stdin), out, err
    started = time.monotonic()
    try:
        with _alarm(PER_CALL_S):
            try:
                status = main(argv)
            except SystemExit as stop:  # argparse: --help (0), a usage error (2)
                status = stop.code if isinstance(stop.code, int) else 2
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    err.flush()
    return status, err.buffer.getvalue().decode("utf-8"), time.monotonic() - started  # type: ignore[attr-defined]


def _parsed_only(args: argparse.Namespace) -> int:
    """Stands in for a long-running subcommand: its arguments parsed, nothing run."""
    for value in vars(args).values():
        if isinstance(value, float):
            assert value == value and abs(value) != float("inf"), args
    return 0


def _snapshot() -> dict[str, tuple[int, int]]:
    """Every file of the checkout (outside caches) and of the system's temporary
    fallback for bug reports, with size and modification time."""
    # caches; the nightly's report and its working corpora (fuzz/.work: the nightly runs
    # fuzz campaigns beside the property run that runs this very test); the second
    # environment of dev.py test
    skip = {".git", ".venv", ".venv-newest", "__pycache__", ".hypothesis", ".pytest_cache",
            ".mypy_cache", ".ruff_cache", "build", "pcfuzz.egg-info", "reports", ".work"}
    out = {}
    for base in (REPO, Path(tempfile.gettempdir()) / "pcfuzz-bugs"):
        for folder, dirs, names in os.walk(base):
            dirs[:] = [d for d in dirs if d not in skip]
            for name in names:
                path = os.path.join(folder, name)
                try:
                    st_ = os.lstat(path)
                except OSError:
                    continue
                out[path] = (st_.st_size, st_.st_mtime_ns)
    return out


@pytest.fixture(scope="module")
def unchanged_checkout() -> Iterator[None]:
    before = _snapshot()
    yield
    after = _snapshot()
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    assert changed == [], f"pcfuzz wrote outside the directories it was given: {changed[:20]}"


@pytest.fixture
def long_runs_parsed_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    for name, module, _help in TABLE:
        if name in PARSE_ONLY:
            monkeypatch.setattr(importlib.import_module(f"pcfuzz.cli.{module}"), "run",
                                _parsed_only)


#: Each subcommand (and junk) gets this share of the loaded profile's examples, at
#: least 5: ci 18 each (about 250 examples, well under a minute), dev 5.
PER_COMMAND = settings(max_examples=max(5, settings.default.max_examples // 8),
                       suppress_health_check=[HealthCheck.function_scoped_fixture,
                                              HealthCheck.too_slow,
                                              HealthCheck.data_too_large])


@pytest.mark.parametrize("command", [*COMMANDS, None], ids=[*COMMANDS, "junk"])
@PER_COMMAND
@given(spec=worlds(), data=st.data())
def test_any_arguments_and_files_end_with_a_documented_status(
        command: str | None, spec: dict[str, Any], data: st.DataObject,
        unchanged_checkout: None, long_runs_parsed_only: None) -> None:
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="pcfuzz-cli-") as tmp:
        root = Path(tmp)
        paths = _build(root, spec)
        argv = data.draw(runs(command, paths), label="argv")
        full = ["--fuzz-dir", str(root / "fuzz"), "--work-dir", str(root / "work"),
                "--regressions-dir", str(root / "regressions"), *argv]
        os.chdir(root)
        try:
            status, err, took = _run(full, stdin=spec["capture"])
        finally:
            os.chdir(here)
        event(f"exit status {status}")
        assert status in STATUSES, (status, err)
        assert "Traceback" not in err and 'File "' not in err, err
        assert not (root / "work" / "bugs").exists(), err
        assert took < PER_CALL_S
