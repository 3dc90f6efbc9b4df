#!/usr/bin/env python3
"""Atheris target: arbitrary bytes into ``contracts.fixtures.load_fixture_bytes``.

The whole input is the fixture document (so valid fixtures are natural seeds). It is
loaded without and then with ``allow_local_source_urls=True``. Only ``FixtureError``
may escape the loader. The oracle:

- the opt-in only opens: a document accepted without it is accepted, equal, with it;
- an accepted fixture declares a contract revision the format documents and exactly
  the metadata the documentation pins for its contract at that revision (an
  independent table, not the loader's), has a non-empty list
  of object events (or, in the ``wire-sse-bytes`` layer, no events and raw SSE
  bytes that ``strategies.sse_model.reference_decode`` decodes to at least one event
  without error), and every source re-parsed by ``urllib.parse.urlsplit`` is on
  an official host of the fixture's provider (or loopback with the opt-in), a GitHub
  source at ``blob/`` or ``tree/`` of the SDK baseline tag ``v<version>``.

A broken oracle raises ``RuntimeError`` (a crash; not ``assert``, which ``-O`` strips).
"""

from __future__ import annotations

import sys
from urllib.parse import urlsplit

import atheris

from pcfuzz.fuzz.harness.instrument import contracts, instrument

with instrument(*contracts("errors", "strict_json", "sse", "provenance", "fixtures")):
    from pcfuzz.contracts.errors import FixtureError
    from pcfuzz.contracts.fixtures import Fixture, load_fixture_bytes

# Harness code (independent models); not instrumented.
from pcfuzz.strategies.fixture_model import EXPECTED, EXPECTED_BY_REVISION
from pcfuzz.strategies.source_url_model import accepted_url_problem
from pcfuzz.strategies.sse_model import reference_decode

WIRE_LAYER = "wire-sse-bytes"


def check_fixture(fixture: Fixture, allow_local: bool) -> None:
    """Raise ``RuntimeError`` if an accepted fixture breaks a documented rule."""
    if fixture.contract not in EXPECTED:
        raise RuntimeError(f"accepted unknown contract {fixture.contract!r}")
    pins = EXPECTED_BY_REVISION.get(fixture.contract_revision)
    if pins is None:
        raise RuntimeError(f"accepted undocumented revision {fixture.contract_revision!r}")
    exp = pins[fixture.contract]
    wire = fixture.projection_layer == WIRE_LAYER
    declared = (
        fixture.provider, fixture.api_family, fixture.api_version,
        exp.projection_layer if wire else fixture.projection_layer,
        fixture.sdk_package, fixture.sdk_version,
        fixture.api_family_stability, fixture.model_stability,
    )
    pinned = (
        exp.provider, exp.api_family, exp.api_version, exp.projection_layer,
        exp.sdk_package, exp.sdk_version,
        exp.api_family_stability, exp.model_stability,
    )
    if declared != pinned:
        raise RuntimeError(f"accepted metadata {declared} differs from the pin {pinned}")
    if wire:
        decoded = reference_decode(fixture.sse) if isinstance(fixture.sse, bytes) else None
        if fixture.events or not isinstance(decoded, list) or not decoded:
            raise RuntimeError("accepted a wire fixture without a complete SSE stream")
    elif not fixture.events or not all(isinstance(e, dict) for e in fixture.events):
        raise RuntimeError("accepted an empty event list or a non-object event")
    if not fixture.sources:
        raise RuntimeError("accepted a fixture without sources")
    tag = "v" + exp.sdk_version
    for url in fixture.sources:
        problem = accepted_url_problem(url, fixture.provider, allow_local)
        if problem is not None:
            raise RuntimeError(f"accepted source {url!r}: {problem}")
        parts = urlsplit(url)
        if parts.netloc == "github.com" and parts.path.split("/")[3:5] not in (
            ["blob", tag], ["tree", tag]
        ):
            raise RuntimeError(f"accepted SDK source {url!r} not at the baseline tag {tag}")


def TestOneInput(data: bytes) -> None:
    try:
        strict = load_fixture_bytes(data)
    except FixtureError:
        strict = None
    try:
        opened = load_fixture_bytes(data, allow_local_source_urls=True)
    except FixtureError as exc:
        if strict is not None:
            raise RuntimeError(
                "the loopback opt-in rejected a fixture accepted without it"
            ) from exc
        return
    if strict is not None:
        if strict != opened:
            raise RuntimeError("the loopback opt-in changed an accepted fixture")
        check_fixture(strict, allow_local=False)
    check_fixture(opened, allow_local=True)


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
