"""Where pcfuzz finds what it ships, and whether it runs from a source checkout.

Shipped data (seed corpora, dictionaries, options, fuzz targets, the summary schema,
fixtures and their schemas) is package data of ``pcfuzz.fuzz`` and
``pcfuzz.fixtures``, found with :mod:`importlib.resources`, so the same lookups work
from a checkout (the folders ``fuzz/``, ``fixtures/``) and from an installed wheel
(``site-packages/pcfuzz/fuzz/``, ``site-packages/pcfuzz/fixtures/``). The shipped
data is read-only: nothing pcfuzz writes goes there (see ``docs/fuzzing.md``,
"Where things are written").
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["checkout_root", "docs_dir", "fixtures_dir", "fuzz_dir", "package_dir"]


def package_dir(package: str) -> Path:
    """The directory of a pcfuzz package on disk (``pcfuzz.fuzz``, ``pcfuzz.fixtures``).

    pcfuzz runs its fuzz targets as executable files, so it needs its packages
    unpacked on disk (``pip install`` does that); a zipped install is refused here
    with a message rather than failing later on a missing file.
    """
    root = resources.files(package)
    path = Path(str(root))
    if not path.is_dir():
        raise RuntimeError(
            f"pcfuzz: package data {package} is not a directory on disk ({root}); "
            "install pcfuzz unpacked (pip install pcfuzz)"
        )
    return path.resolve()


def fuzz_dir() -> Path:
    """The shipped fuzz targets with their ``.dict``, ``.options`` and ``corpus/``."""
    return package_dir("pcfuzz.fuzz")


def fixtures_dir() -> Path:
    """The shipped fixtures: ``<contract>.json``, ``wire/``, ``schemas/`` (each later
    contract revision in a ``<revision>`` folder beside the pinned files)."""
    return package_dir("pcfuzz.fixtures")


def checkout_root() -> Path | None:
    """The repository root when this pcfuzz runs from a source checkout (an editable
    install, or the folders on ``sys.path``); ``None`` when it runs from a wheel.

    A checkout is recognised by the layout of the repository around the running
    code: ``pyproject.toml`` and ``tests/`` beside the ``fuzz/`` folder. An installed
    ``pcfuzz.fuzz`` sits in ``site-packages/pcfuzz/``, which has neither.
    """
    root = fuzz_dir().parent
    if (root / "pyproject.toml").is_file() and (root / "tests").is_dir():
        return root
    return None


def docs_dir() -> Path:
    """The documentation pages (``docs/`` of a checkout; ``pcfuzz/docs`` installed)."""
    return package_dir("pcfuzz.docs")
