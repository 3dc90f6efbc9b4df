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


def version() -> str:
    """The installed distribution's version (``0+unknown`` when not installed)."""
    global _VERSION
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
