"""Deprecated name of :mod:`pcfuzz.conform.oracles`, kept for one release."""

from pcfuzz.conform.oracles import *  # noqa: F403
