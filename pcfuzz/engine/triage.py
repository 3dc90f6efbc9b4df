"""Crash replay and fingerprints: which bug does an input trigger?

An input is replayed through its target in a separate process (``replay.py``); the
fingerprint of a crash is the exception type plus the top three *project* frames
(innermost first, as ``path:function``; paths relative to the project, no line
numbers, so an unrelated edit above the bug keeps the fingerprint). Frames of the
standard library and of installed packages are skipped. A hang is fingerprinted from
the stack :mod:`faulthandler` dumps when the replay's per-input timeout fires.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pcfuzz._data import package_dir
from pcfuzz.engine.targets import Target, subprocess_env
from pcfuzz.errors import UsageError

__all__ = [
    "Crash",
    "Outcome",
    "ReplayError",
    "TriageGroup",
    "artifact_kind",
    "bug_fingerprint",
    "code_frame",
    "fingerprint_of",
    "replay",
    "triage",
]

_HELPER = Path(__file__).with_name("replay.py")
_MARK = "PCFUZZ-REPLAY "
_FAULT_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')
_TIMEOUT_DUMP = re.compile(r"^Timeout \(\d+:\d\d:\d\d(?:\.\d+)?\)!", re.MULTILINE)
_FATAL = re.compile(r"^Fatal Python error: (.+)$", re.MULTILINE)
_TOP_FRAMES = 3
#: pcfuzz's own folders, named as in the repository whether they run from a checkout
#: (``<repo>/contracts``) or installed (``site-packages/pcfuzz/contracts``): a crash
#: fingerprints the same either way.
#: The tool itself (``pcfuzz/engine``, ``pcfuzz/nightly``, ...) comes last: an installed
#: pcfuzz keeps the mapped folders inside it.
_CODE_DIRS = (*(package_dir(f"pcfuzz.{name}") for name in ("contracts", "strategies", "fuzz")),
              Path(__file__).resolve().parent.parent)
_LIBRARY_ROOTS = tuple(
    str(Path(p).resolve())
    for p in {
        sysconfig.get_paths()["stdlib"],
        sysconfig.get_paths()["platstdlib"],
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
    }
)


class ReplayError(UsageError):
    """The replay process itself failed (e.g. the target does not import): the
    target cannot run, a usage error."""


@dataclass(frozen=True)
class Crash:
    """A crash as seen by replay: exception type, message and stack (innermost first)."""

    exception: str
    message: str
    frames: tuple[tuple[str, int, str], ...]
    kind: str = "crash"  # crash | timeout | oom


@dataclass(frozen=True)
class Outcome:
    """Replay result of one input: ``crash`` is ``None`` when the input passes."""

    path: Path
    crash: Crash | None


def _project_frame(filename: str, roots: Sequence[Path]) -> str | None:
    try:
        resolved = Path(filename).resolve()
    except (OSError, RuntimeError):
        return None
    text = str(resolved)
    if resolved == _HELPER.resolve():
        return None  # the replay driver, not the code under test
    for code in _CODE_DIRS:
        if resolved.is_relative_to(code):
            return f"{code.name}/{resolved.relative_to(code).as_posix()}"
    if "site-packages" in resolved.parts or text.startswith(_LIBRARY_ROOTS):
        return None
    for root in roots:
        if resolved.is_relative_to(root):
            return resolved.relative_to(root).as_posix()
    return None


_QUOTED = re.compile(r"""'[^']*'|"[^"]*"|b'[^']*'""")
_NUMBER = re.compile(r"\d+")


def message_shape(message: str) -> str:
    """The fixed part of an exception message: up to the first ``": "``, quoted text
    dropped, digits as ``N``. ``"accepted source 'x': bad"`` -> ``"accepted source"``;
    ``"'NoneType' object is not subscriptable"`` -> ``"object is not subscriptable"``.
    It tells apart two oracle checks raising the same type in the same function,
    while the input-dependent details stay out of the fingerprint."""
    head = message.split(": ", 1)[0]
    head = _NUMBER.sub("N", _QUOTED.sub("", head))
    return " ".join(head.split())[:80]


def fingerprint_of(crash: Crash, project_root: Path) -> tuple[str, list[str]]:
    """``(fingerprint, top frames)``: e.g. ``KeyError-3f2a1b9c0d``, ``["fuzz/x.py:check"]``.

    The hash covers the kind, the exception type, :func:`message_shape` and the top
    frames: the innermost project frames, or, when the stack has none (a crash inside
    a library called directly by the harness), the innermost frames.
    """
    roots = [project_root.resolve()]
    top: list[str] = []
    for filename, _line, func in crash.frames:
        rel = _project_frame(filename, roots)
        if rel is not None:
            top.append(f"{rel}:{func}")
        if len(top) == _TOP_FRAMES:
            break
    if not top:
        frames = [(f, fn) for f, _l, fn in crash.frames if Path(f).name != _HELPER.name]
        top = [f"{Path(f).name}:{fn}" for f, fn in frames[:_TOP_FRAMES]]
    key = "|".join([crash.kind, crash.exception, message_shape(crash.message), *top])
    digest = hashlib.sha1(key.encode(), usedforsecurity=False).hexdigest()[:10]
    label = re.sub(r"[^A-Za-z0-9]+", "", crash.exception.rsplit(".", 1)[-1]) or "Crash"
    if crash.kind != "crash":
        label = crash.kind.capitalize()
    return f"{label}-{digest}", top


_HARNESS_FILE = re.compile(r"^(fuzz_.*|test_.*|conftest)\.py$")


def code_frame(frames: Sequence[tuple[str, int, str]]) -> str | None:
    """The innermost frame of the code under test, as ``contracts/<file>:<function>``
    (or ``<file name>:<function>`` for code outside pcfuzz): not the standard
    library, installed packages, pcfuzz's ``fuzz/``, ``strategies/`` and tool folders, a
    fuzz target (``fuzz_*.py``), a test module (``test_*.py``, ``conftest.py``, any
    file in a ``tests`` folder), the replay driver. ``frames`` innermost first. ``None`` when there is no such frame
    (the failure is an oracle's or a test's own check)."""
    for filename, _line, func in frames:
        try:
            resolved = Path(filename).resolve()
        except (OSError, RuntimeError):
            continue
        for code in _CODE_DIRS:
            if resolved.is_relative_to(code):
                if code.name != "contracts":
                    break
                return f"contracts/{resolved.relative_to(code).as_posix()}:{func}"
        else:
            if "contracts" in resolved.parts[:-1]:  # another copy (a planted or mutated one)
                cut = len(resolved.parts) - 1 - resolved.parts[::-1].index("contracts")
                return "/".join(resolved.parts[cut:]) + f":{func}"
            if ("site-packages" in resolved.parts or str(resolved).startswith(_LIBRARY_ROOTS)
                    or _HARNESS_FILE.match(resolved.name) or resolved.parent.name == "tests"
                    or filename.startswith("<")):
                continue
            return f"{resolved.name}:{func}"
    return None


def bug_fingerprint(exception: str, message: str,
                    frames: Sequence[tuple[str, int, str]]) -> str | None:
    """One name for one bug, whoever found it (a fuzz target, a property test):
    ``bug-<Exception>-<hash>`` of the exception class (without its module), the
    :func:`message_shape` and the innermost frame of the code under test
    (:func:`code_frame`). ``None`` when no frame is in the code under test: then the
    failure is a check of the harness itself, and only its own fingerprint names it."""
    where = code_frame(frames)
    if where is None:
        return None
    name = exception.rsplit(".", 1)[-1]
    key = "|".join([name, message_shape(message), where])
    digest = hashlib.sha1(key.encode(), usedforsecurity=False).hexdigest()[:10]
    return f"bug-{re.sub(r'[^A-Za-z0-9]+', '', name) or 'Crash'}-{digest}"


def artifact_kind(path: Path) -> str:
    """libFuzzer names artifacts by kind: ``crash-``, ``timeout-``, ``oom-``, ``leak-``,
    ``slow-unit-``. Anything else (a promoted regression, a hand-made file) is a crash."""
    for kind in ("timeout", "oom", "leak", "slow-unit"):
        if path.name.startswith(kind + "-"):
            return kind
    return "crash"


def _parse_fault_dump(stderr: str) -> tuple[tuple[str, int, str], ...]:
    frames: list[tuple[str, int, str]] = []
    in_dump = False
    for line in stderr.splitlines():
        if "most recent call first" in line:
            if frames:
                break  # first thread only: the one running the input
            in_dump = True
            continue
        if in_dump:
            m = _FAULT_FRAME.match(line)
            if m:
                frames.append((m["file"], int(m["line"]), m["func"]))
            elif frames:
                break
    return tuple(frames)


def replay(
    target: Target,
    inputs: Sequence[Path],
    *,
    timeout_s: float | None = None,
    memory_mb: int | None = None,
) -> list[Outcome]:
    """Run each input once through ``target.TestOneInput`` in a child process.

    Returns one :class:`Outcome` per input, in order. A hang (past ``timeout_s``,
    default the target's per-input timeout) is a ``timeout`` crash; a child that dies
    without reporting (signal, abort) is a ``crash`` named ``ProcessDied``; replay then
    resumes with the next input in a fresh process.
    """
    original = list(inputs)
    # The child runs in the fuzz dir: relative paths would name other files there.
    inputs = [Path(p).resolve() for p in original]
    per_input = float(timeout_s if timeout_s is not None else target.per_input_timeout())
    extra = {"PCFUZZ_REPLAY_AS_MB": str(memory_mb)} if memory_mb else None
    env = subprocess_env(target.layout, extra)
    results: dict[Path, Crash | None] = {}
    pending = list(inputs)
    while pending:
        # the file system's bytes, NUL-ended: any name arrives as it is (replay.py)
        feed = b"".join(os.fsencode(p) + b"\0" for p in pending)
        ran = subprocess.run(
            [sys.executable, str(_HELPER), str(target.path), str(per_input)],
            input=feed,
            capture_output=True,
            env=env,
            cwd=target.layout.fuzz_dir,
            timeout=per_input * len(pending) + 120,
            check=False,
        )
        proc = subprocess.CompletedProcess(
            ran.args, ran.returncode, ran.stdout.decode("utf-8", "replace"),
            ran.stderr.decode("utf-8", "replace"))
        started: Path | None = None
        for line in proc.stdout.splitlines():
            if not line.startswith(_MARK):
                continue
            record = json.loads(line[len(_MARK):])
            if "start" in record:
                started = Path(record["start"])
                continue
            path = Path(record["input"])
            started = None
            if record["outcome"] == "pass":
                results[path] = None
            else:
                results[path] = Crash(
                    exception=record["exception"],
                    message=record["message"],
                    frames=tuple((f, int(n), fn) for f, n, fn in record["frames"]),
                )
        if started is not None:
            dump = _parse_fault_dump(proc.stderr)
            fatal = _FATAL.search(proc.stderr)
            if dump and _TIMEOUT_DUMP.search(proc.stderr):
                results[started] = Crash(
                    "Timeout", f"no result after {per_input:.0f}s", dump, "timeout"
                )
            elif fatal:
                results[started] = Crash("FatalError", fatal.group(1)[:300], dump, "crash")
            else:
                tail = proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
                results[started] = Crash("ProcessDied", tail[0][:300], dump, "crash")
        elif proc.returncode != 0 and not results:
            raise ReplayError(
                f"replay of {target.name} failed (exit {proc.returncode}): "
                + proc.stderr.strip()[-2000:]
            )
        pending = [p for p in pending if p not in results]
    return [Outcome(path=o, crash=results[p]) for o, p in zip(original, inputs, strict=True)]


@dataclass
class TriageGroup:
    """Artifacts sharing one fingerprint, with the smallest one minimized."""

    fingerprint: str
    crash: Crash
    top_frames: list[str]
    artifacts: list[Path] = field(default_factory=list)
    smallest: Path | None = None
    minimized: Path | None = None

    @property
    def minimized_size(self) -> int:
        path = self.minimized or self.smallest
        return path.stat().st_size if path is not None else 0


def triage(
    target: Target,
    artifacts: Sequence[Path],
    *,
    out_dir: Path | None = None,
    minimize: bool = True,
    minimize_budget_s: float = 20,
) -> tuple[list[TriageGroup], list[Path]]:
    """Group ``artifacts`` by fingerprint; minimize each group's smallest input into
    ``out_dir`` (``-minimize_crash``, kept only if the fingerprint is unchanged).
    Returns the groups (most artifacts first) and the artifacts that no longer crash.
    """
    from pcfuzz.engine.libfuzzer import minimize_crash

    groups: dict[str, TriageGroup] = {}
    no_longer: list[Path] = []
    by_kind: dict[str, list[Path]] = {}
    for path in artifacts:
        by_kind.setdefault(artifact_kind(path), []).append(path)
    root = target.layout.project_root
    for kind, paths in by_kind.items():
        memory = 4096 if kind == "oom" else None
        for outcome in replay(target, paths, memory_mb=memory):
            crash = outcome.crash
            if crash is None:
                no_longer.append(outcome.path)
                continue
            fp, top = fingerprint_of(crash, root)
            group = groups.setdefault(fp, TriageGroup(fp, crash, top))
            group.artifacts.append(outcome.path)
    for group in groups.values():
        group.smallest = min(group.artifacts, key=lambda p: (p.stat().st_size, p.name))
        if not minimize or out_dir is None:
            continue
        out = out_dir / group.fingerprint

        def same(path: Path, fp: str = group.fingerprint) -> bool:
            (res,) = replay(target, [path])
            return res.crash is not None and fingerprint_of(res.crash, root)[0] == fp

        if group.crash.kind == "crash" and group.smallest.stat().st_size > 1:
            best = minimize_crash(
                target, group.smallest, out, budget_s=minimize_budget_s, still_same=same
            )
        else:
            best = group.smallest
        if best == group.smallest:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(group.smallest.read_bytes())
        group.minimized = out
    ordered = sorted(groups.values(), key=lambda g: (-len(g.artifacts), g.fingerprint))
    return ordered, no_longer
