"""Deprecated name of :mod:`pcfuzz.cli`, kept for one release."""

from pcfuzz.cli import main as main  # noqa: F401
