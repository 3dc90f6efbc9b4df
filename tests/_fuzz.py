"""Load a fuzz target module the way libFuzzer runs it: by file path, not by package.

Targets are scripts (``fuzz/fuzz_<name>.py``); tests import them by path to call
``TestOneInput`` and their oracles directly. Each call returns a freshly executed
module, so tests never share a target's module state.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

FUZZ_DIR = Path(__file__).resolve().parent.parent / "fuzz"


def load_fuzz_target(target: str | Path, *, module_name: str | None = None) -> ModuleType:
    """Execute ``fuzz/<target>.py`` (or the file ``target``) as a fresh module.

    Skips the calling test when atheris is not installed.
    """
    pytest.importorskip("atheris")
    path = target if isinstance(target, Path) else FUZZ_DIR / f"{target}.py"
    spec = importlib.util.spec_from_file_location(
        module_name or f"_{path.stem}_under_test", path
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module
