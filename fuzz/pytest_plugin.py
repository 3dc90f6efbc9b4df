"""Deprecated name of :mod:`pcfuzz.conform.pytest_plugin`, kept for one release."""

from pcfuzz.conform.pytest_plugin import pcfuzz_conformance as pcfuzz_conformance  # noqa: F401
