"""Deprecated name of :mod:`pcfuzz.conform.adapters`, kept for one release."""

from pcfuzz.conform.adapters import *  # noqa: F403
