#!/usr/bin/env python3
"""Atheris target: arbitrary text into ``contracts.provenance.validate_source_url``.

Input layout: the first byte picks the provider (``byte % 3``: openai, anthropic,
google) and the loopback opt-in (bit 2); the rest is decoded as UTF-8 with
``surrogateescape`` (so invalid bytes become lone surrogates) and validated.

Only ``SourceURLError`` may escape the validator. An ACCEPTED URL must be returned
unchanged and, re-parsed by ``urllib.parse.urlsplit``, show the pinned host, no
credentials, no port (loopback: no default port), no query, and a path whose
segments are neither empty, dot segments nor hidden separators, inside the pinned
SDK repository on GitHub; otherwise the target raises ``RuntimeError`` (a crash;
not ``assert``, which ``-O`` strips).
"""

from __future__ import annotations

import sys

import atheris

from pcfuzz.fuzz.harness.instrument import contracts, instrument

with instrument(*contracts("errors", "provenance")):
    from pcfuzz.contracts.errors import SourceURLError
    from pcfuzz.contracts.provenance import validate_source_url

# The oracle is harness code (an independent model); it is not instrumented.
from pcfuzz.strategies.source_url_model import accepted_url_problem

PROVIDERS = ("openai", "anthropic", "google")


def split_input(data: bytes) -> tuple[str, bool, str]:
    """(provider, allow_local_source_urls, url text) encoded in ``data``."""
    if not data:
        return PROVIDERS[0], False, ""
    head = data[0]
    text = data[1:].decode("utf-8", errors="surrogateescape")
    return PROVIDERS[head % 3], bool(head & 4), text


def TestOneInput(data: bytes) -> None:
    provider, allow_local, url = split_input(data)
    try:
        accepted = validate_source_url(
            url, provider=provider, allow_local_source_urls=allow_local
        )
    except SourceURLError:
        return
    if accepted is not url:
        raise RuntimeError(f"accepted URL was not returned unchanged: {url!r}")
    problem = accepted_url_problem(url, provider, allow_local)
    if problem is not None:
        raise RuntimeError(
            f"validator accepted {url!r} for {provider} (local={allow_local}): {problem}"
        )


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
