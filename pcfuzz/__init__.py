"""pcfuzz: offline contracts and a fuzzing harness for streamed LLM tool-calling APIs.

Installed, the project's folders are subpackages of this one: ``pcfuzz.contracts``
(the standard-library-only parsers and builders), ``pcfuzz.strategies`` (hypothesis
strategies), ``pcfuzz.fuzz`` (fuzz targets and the ``pcfuzz`` command) and
``pcfuzz.fixtures`` (pinned fixtures and schemas, data only).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("pcfuzz")
except PackageNotFoundError:  # pragma: no cover - running from an uninstalled checkout
    __version__ = "0+unknown"

__all__ = ["__version__"]
