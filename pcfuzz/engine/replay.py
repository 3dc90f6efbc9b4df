"""Replay inputs through one fuzz target, in a process of its own (run as a script).

    python pcfuzz/engine/replay.py TARGET_FILE TIMEOUT_S < NUL-separated-input-paths

Imports the target (no fuzzing), then calls ``TestOneInput`` on each input; the paths
come on standard input as the file system's bytes, each ended by a NUL byte (so that
any name, not UTF-8 or holding a newline, arrives as it is). For each
input it prints, on stdout, a line ``PCFUZZ-REPLAY {json}``: first ``{"start": path}``,
then ``{"input": path, "outcome": "pass"}`` or ``{"input": path, "outcome": "crash",
"exception": ..., "message": ..., "frames": [[file, line, function], ...]}`` (innermost
frame first). A hang past TIMEOUT_S makes :mod:`faulthandler` dump the stack on stderr
and exit; the caller reads that dump as the fingerprint of the hang.
"""

from __future__ import annotations

import faulthandler
import importlib.util
import json
import os
import sys
import traceback
from pathlib import Path

MARK = "PCFUZZ-REPLAY "


def _emit(record: dict[str, object]) -> None:
    sys.stdout.write(MARK + json.dumps(record) + "\n")
    sys.stdout.flush()


def _qualname(exc: BaseException) -> str:
    cls = type(exc)
    if cls.__module__ in {"builtins", "__main__"}:
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def main(argv: list[str]) -> int:
    target_file, timeout_s = Path(argv[1]), float(argv[2])
    limit_mb = os.environ.get("PCFUZZ_REPLAY_AS_MB")
    if limit_mb:
        import resource

        cap = int(limit_mb) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    sys.path.insert(0, str(target_file.parent))
    spec = importlib.util.spec_from_file_location(f"_pcfuzz_target_{target_file.stem}", target_file)
    if spec is None or spec.loader is None:
        print(f"cannot import {target_file}", file=sys.stderr)
        return 2
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    test_one_input = module.TestOneInput
    faulthandler.enable()  # a fatal error (segfault, abort) dumps the stack too
    me = str(Path(__file__).resolve())
    for raw in sys.stdin.buffer.read().split(b"\0"):
        if not raw:
            continue
        path = os.fsdecode(raw)
        data = Path(path).read_bytes()
        _emit({"start": path})
        faulthandler.dump_traceback_later(timeout_s, exit=True)
        try:
            test_one_input(data)
        except BaseException as exc:  # noqa: BLE001 - everything escaping is a crash
            faulthandler.cancel_dump_traceback_later()
            frames = [
                [f.filename, f.lineno or 0, f.name]
                for f in traceback.extract_tb(exc.__traceback__)
                if str(Path(f.filename).resolve()) != me
            ]
            frames.reverse()
            _emit(
                {
                    "input": path,
                    "outcome": "crash",
                    "exception": _qualname(exc),
                    "message": str(exc)[:300],
                    "frames": frames,
                }
            )
            if isinstance(exc, KeyboardInterrupt):
                raise
            continue
        faulthandler.cancel_dump_traceback_later()
        _emit({"input": path, "outcome": "pass"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
