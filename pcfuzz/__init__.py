"""pcfuzz: offline contracts and a fuzzing harness for streamed LLM tool-calling APIs.

Installed, the project's folders are subpackages of this one: ``pcfuzz.contracts``
(the standard-library-only parsers and builders), ``pcfuzz.strategies`` (hypothesis
strategies), ``pcfuzz.fuzz`` (the fuzz targets and what they share) and
``pcfuzz.fixtures`` (pinned fixtures and schemas, data only). The tool itself lives
in ``pcfuzz.cli``, ``pcfuzz.engine``, ``pcfuzz.nightly``, ``pcfuzz.conform`` and
``pcfuzz.bench``.

Importing this package imports nothing else: fuzz targets instrument everything
imported under them, so ``__version__`` is looked up only when read.
"""

from __future__ import annotations

__all__ = ["__version__", "version"]

_VERSION: str | None = None


def _metadata_version() -> str | None:
    """The ``Version:`` of the first pcfuzz metadata directory on ``sys.path`` (as
    :mod:`importlib.metadata` finds it: ``pcfuzz-<v>.dist-info/METADATA`` or
    ``pcfuzz.egg-info/PKG-INFO``), read without importing :mod:`importlib.metadata`,
    which costs more than the rest of ``pcfuzz --version``; ``None`` for anything
    less plain (then :mod:`importlib.metadata` decides)."""
    import os
    import sys

    for entry in sys.path:
        folder = entry or "."
        try:
            names = sorted(os.listdir(folder))
        except (OSError, TypeError):
            continue
        for name in names:
            stem, dot, kind = name.lower().rpartition(".")
            if not dot or kind not in ("dist-info", "egg-info"):
                continue
            if stem.split("-")[0].replace(".", "_") != "pcfuzz":
                continue
            meta = os.path.join(folder, name, "METADATA" if kind == "dist-info" else "PKG-INFO")
            try:
                with open(meta, encoding="utf-8") as handle:
                    head = [handle.readline() for _ in range(8)]
            except (OSError, UnicodeDecodeError):
                return None
            found = [line[len("Version:"):].strip() for line in head
                     if line.startswith("Version:")]
            return found[0] if found and found[0] else None
    return None


def version() -> str:
    """The installed distribution's version (``0+unknown`` when not installed)."""
    global _VERSION
    if _VERSION is None:
        _VERSION = _metadata_version()
    if _VERSION is None:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as distribution_version

        try:
            _VERSION = distribution_version("pcfuzz")
        except PackageNotFoundError:  # pragma: no cover - an uninstalled checkout
            _VERSION = "0+unknown"
    return _VERSION


def __getattr__(name: str) -> str:
    if name == "__version__":
        return version()
    raise AttributeError(f"module 'pcfuzz' has no attribute {name!r}")
