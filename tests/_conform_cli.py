"""Running ``pcfuzz conform`` as a user does, in a fresh process, for the kit's tests.

The adapters of ``tests/`` (``_gateway_chat``, ``_hostile_adapters``) are importable
by name. Every run shares one hypothesis directory, ``.hypothesis/conform-tests`` in
the checkout (ignored by git, like hypothesis' own): built cold, hypothesis' caches
cost the first run in a directory 8-12 s of its budget on a loaded machine, which
would leave a short test budget no example.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent
HOME = TESTS.parent / ".hypothesis" / "conform-tests"


def env() -> dict[str, str]:
    return dict(os.environ, HYPOTHESIS_STORAGE_DIRECTORY=str(HOME), PYTHONPATH=os.pathsep.join(
        [str(TESTS), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))


def warm() -> None:
    """Build hypothesis' caches in :data:`HOME` once (a run with no budget)."""
    marker = HOME / ".warm"
    if marker.is_file():
        return
    HOME.mkdir(parents=True, exist_ok=True)
    subprocess.run(command("--contract", "openai-chat", "--adapter",
                           "pcfuzz.conform.adapters:openai_chat", "--max-examples", "1"),
                   cwd=HOME, env=env(), capture_output=True, timeout=600, check=True)
    marker.write_text("built\n", encoding="utf-8")


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "pcfuzz", "conform", "--regressions", "none", *args]


def run(cwd: Path, *args: str, timeout: float = 600
        ) -> tuple[subprocess.CompletedProcess[str], float]:
    """``pcfuzz conform --regressions none ARGS`` in ``cwd``: the run and its seconds."""
    warm()
    started = time.monotonic()
    done = subprocess.run(command(*args), cwd=cwd, env=env(), capture_output=True, text=True,
                          timeout=timeout)
    return done, time.monotonic() - started
