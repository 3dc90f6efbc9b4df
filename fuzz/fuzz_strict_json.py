#!/usr/bin/env python3
"""Atheris target: differential fuzzing of ``contracts.strict_json.loads`` against
``json.loads``.

Input layout: if the first byte is one of ``b s l B S L`` it is a header and the rest
is the document: ``b`` bytes as given, ``s`` text decoded from UTF-8 with
``surrogateescape`` (invalid bytes become lone surrogate code points), ``l`` text
decoded as Latin-1; upper case loads with tight limits (every limit reachable by a
small input). Any other first byte: the whole input is a ``bytes`` document with
the default limits, so plain JSON files are valid seeds.

Oracle (a failure raises ``RuntimeError``; ``assert`` would vanish under ``-O``),
in two modes. The fast oracle runs on every input:

* only ``ContractError`` may escape ``loads``;
* ACCEPTED: ``json.loads`` of the same text accepts and returns an equal value
  (types, sign of zero and key order included).

The deep oracle adds, on one input in ``DEEP_EVERY`` (chosen by a hash of the input,
so a saved input always gets the same checks) or on every input when the
environment sets ``PCFUZZ_DEEP_ORACLE=1``:

* ACCEPTED: the loader's iterative parser, run alone, returns the same value (the
  json-scanner fast path never accepts what the iterative parser would reject);
* REJECTED while ``json.loads`` accepts: the rejection must be a ``LimitExceeded``
  or have a documented strictness reason that an independent check finds (invalid
  UTF-8, BOM, duplicate key after decoding, NaN/Infinity or overflow to infinity,
  lone surrogate);
* limits, both directions, measured independently by
  ``strategies.json_model.limits_exceeded``: an accepted document is within every
  limit, and a ``LimitExceeded`` names a document that really exceeds one.
"""

from __future__ import annotations

import json
import math
import os
import sys
import zlib
from typing import Any

import atheris

from pcfuzz.fuzz.harness.instrument import contracts, instrument

with instrument(*contracts("errors", "strict_json")):
    from pcfuzz.contracts import strict_json
    from pcfuzz.contracts.errors import ContractError, LimitExceeded
    from pcfuzz.contracts.strict_json import DEFAULT_LIMITS, JSONLimits, loads

from pcfuzz.strategies.json_model import limits_exceeded, same

TIGHT_LIMITS = JSONLimits(
    max_bytes=300,
    max_depth=6,
    max_string_chars=10,
    max_number_chars=12,
    max_container_items=5,
    max_values=24,
)
BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
# The deep oracle costs several times the loader itself (the iterative parser and an
# independent limit measurement in Python); sampled, the fuzzer runs several times
# as many inputs through the fast oracle and still deep-checks a steady share.
DEEP_EVERY = 16
DEEP_ALWAYS = os.environ.get("PCFUZZ_DEEP_ORACLE", "") == "1"


def split_input(data: bytes) -> tuple[bytes | str, JSONLimits]:
    """(document, limits) encoded in ``data``; see the module docstring."""
    if not data or data[0] not in b"bslBSL":
        return data, DEFAULT_LIMITS
    head, body = chr(data[0]), data[1:]
    limits = TIGHT_LIMITS if head.isupper() else DEFAULT_LIMITS
    mode = head.lower()
    if mode == "s":
        return body.decode("utf-8", errors="surrogateescape"), limits
    if mode == "l":
        return body.decode("latin-1"), limits
    return body, limits




class _Reason(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Reason("duplicate key")
    return obj


def _constant(name: str) -> Any:
    raise _Reason(f"non-finite {name}")


def _float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _Reason("overflow to infinity")
    return value


def strictness_reason(doc: bytes | str) -> str | None:
    """An independent reason why strict JSON rejects a document json.loads accepts."""
    if isinstance(doc, bytes):
        if doc.startswith(BOMS):
            return "BOM"
        try:
            text = doc.decode("utf-8")
        except UnicodeDecodeError:
            return "invalid UTF-8"
    else:
        text = doc
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return "lone surrogate code point"
    try:
        value = json.loads(
            text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float
        )
    except _Reason as reason:
        return str(reason)
    except (ValueError, RecursionError):
        return None
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if any(0xD800 <= ord(c) <= 0xDFFF for c in item):
                return "lone surrogate escape"
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
    return None


def TestOneInput(data: bytes) -> None:
    check(data, deep=DEEP_ALWAYS or zlib.crc32(data) % DEEP_EVERY == 0)


def check(data: bytes, *, deep: bool) -> None:
    """The oracle on one input; ``deep`` adds the differential and limit checks."""
    doc, limits = split_input(data)
    try:
        # The default limits as None: what callers pass, and it spares every input the
        # per-call re-check of an explicit JSONLimits (tight-limit inputs still run it).
        value = loads(doc, limits=None if limits is DEFAULT_LIMITS else limits)
    except ContractError as exc:
        rejected: ContractError | None = exc
    else:
        rejected = None
    if rejected is not None and not deep:
        return
    text: str | None
    try:
        text = doc.decode("utf-8") if isinstance(doc, bytes) else doc
        expected = json.loads(text)
    except (ValueError, RecursionError):
        text, expected = None, None
        json_accepts = False
    else:
        json_accepts = True
    if rejected is None:
        if text is None or not json_accepts:
            raise RuntimeError(f"strict_json accepted what json.loads rejects: {doc[:200]!r}")
        if not same(value, expected):
            raise RuntimeError(f"strict_json and json.loads disagree on {doc[:200]!r}")
        if not deep:
            return
        alone = strict_json._parse(text, limits, isinstance(doc, bytes))
        if not same(alone, value):
            raise RuntimeError(f"fast path and iterative parser disagree on {doc[:200]!r}")
        excess = limits_exceeded(text, limits)
        if excess:
            raise RuntimeError(f"strict_json accepted a document over {excess}: {doc[:200]!r}")
        return
    if json_accepts and isinstance(rejected, LimitExceeded) and text is not None:
        if not limits_exceeded(text, limits):
            raise RuntimeError(
                f"LimitExceeded ({rejected}) for a document within every limit: {doc[:200]!r}"
            )
    if json_accepts and not isinstance(rejected, LimitExceeded):
        if strictness_reason(doc) is None:
            raise RuntimeError(
                f"strict_json rejected valid JSON without a documented reason "
                f"({rejected}): {doc[:200]!r}"
            )


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
