"""Fixture documents (format ``pcfuzz-fixture/1``) and their attack mutations.

An independent model of the fixture format: the expected metadata per contract and
per contract revision is written down here again from the format's documentation
(``fixtures/README.md``), never imported from ``contracts.fixtures``, so a wrong pin in
the loader fails a test instead of being copied into it. Every builder and strategy
takes a ``revision`` (default: the pinned ``2026-07-21``; :func:`fixture_documents`
draws one of :data:`REVISIONS`).

Plain builders (:func:`valid_fixture_document`, :func:`render_fixture`) serve the
example tests; hypothesis strategies (:func:`fixture_documents`,
:func:`mutated_fixtures`) serve the properties. The expected metadata
(:data:`EXPECTED`, :data:`EXPECTED_BY_REVISION`) lives in :mod:`.fixture_model`,
without hypothesis, for the fuzz target, and is re-exported here.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from pcfuzz.contracts.registry import NAMES
from pcfuzz.strategies.fixture_model import (
    CONTRACTS,
    EXPECTED,
    EXPECTED_BY_REVISION,
    REVISION,
    REVISIONS,
    ExpectedContract,
    expected,
)
from pcfuzz.strategies.source_urls import (
    SDK_REPOSITORIES,
    SourceURL,
    attacked_source_urls,
    source_url_parts,
)

__all__ = [
    "BASELINE_KEYS",
    "STABILITY_KEYS",
    "CONTRACTS",
    "DOCUMENT_KEYS",
    "EXPECTED",
    "EXPECTED_BY_REVISION",
    "ExpectedContract",
    "FixtureMutation",
    "MUTATIONS",
    "MUTATION_NAMES",
    "REVISION",
    "REVISIONS",
    "expected",
    "fixture_documents",
    "fixture_json_schema",
    "fixture_source_urls",
    "mutated_fixtures",
    "render_fixture",
    "valid_fixture_document",
]


def valid_fixture_document(
    contract: str,
    *,
    revision: str = REVISION,
    sources: list[str] | None = None,
    events: list[Any] | None = None,
) -> dict[str, Any]:
    """A fixture document (a fresh dict) the loader must accept for ``contract`` at
    ``revision``."""
    exp = expected(contract, revision)
    return {
        "format": "pcfuzz-fixture/1",
        "contract": contract,
        "provider": exp.provider,
        "api_family": exp.api_family,
        "api_version": exp.api_version,
        "contract_revision": revision,
        "projection_layer": exp.projection_layer,
        "stability": {"api_family": exp.api_family_stability, "model": exp.model_stability},
        "sdk_baseline": {"package": exp.sdk_package, "version": exp.sdk_version},
        "reviewed": revision,
        "sources": [exp.example_source] if sources is None else sources,
        "checked": "synthetic test fixture: metadata only",
        "events": [{"type": "synthetic.event", "n": 0}] if events is None else events,
    }


def render_fixture(document: Any, *, indent: int | None = 2) -> bytes:
    """Serialize a document as strict UTF-8 JSON bytes (no BOM, finite numbers)."""
    return json.dumps(document, indent=indent, ensure_ascii=False, allow_nan=False).encode(
        "utf-8"
    )


# --- hypothesis strategies ---------------------------------------------------------

_json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=6,
)
_events = st.lists(
    st.dictionaries(st.text(max_size=10), _json_values, max_size=4), min_size=1, max_size=4
)


_light_events = st.lists(
    st.fixed_dictionaries({"type": st.text(max_size=8), "n": st.integers(0, 9)}),
    min_size=1,
    max_size=3,
)


# Written from the format documentation: a GitHub source shows the SDK baseline tag.
_SDK_REF_KINDS = ("blob", "tree")


def _pin_to_baseline(parts: SourceURL, contract: str, kind: str, revision: str) -> str:
    if not parts.is_github:
        return parts.url
    tag = "v" + expected(contract, revision).sdk_version
    segments = parts.segments[:2] + (kind, tag) + parts.segments[2:]
    return SourceURL(parts.provider, "https", "github.com", "", segments, parts.fragment).url


def fixture_source_urls(contract: str, revision: str = REVISION) -> st.SearchStrategy[str]:
    """Official sources a fixture of ``contract`` at ``revision`` may cite (GitHub: at
    the revision's baseline tag)."""
    provider = EXPECTED[contract].provider
    return st.builds(
        lambda parts, kind: _pin_to_baseline(parts, contract, kind, revision),
        source_url_parts(provider),
        st.sampled_from(_SDK_REF_KINDS),
    )


#: Review dates a generated fixture may carry: its revision's date or any later one.
_REVIEW_DATES = ("2026-07-21", "2026-07-22", "2026-12-01", "2026-12-31", "2027-02-28")


@st.composite
def fixture_documents(draw: st.DrawFn, *, light: bool = False,
                      revision: str | None = None) -> dict[str, Any]:
    """Valid fixture documents: any contract, any revision (unless ``revision`` is
    given), 1-4 official sources, 1-4 events.

    ``light=True`` draws small fixed-shape events (cheaper, for metadata mutations).
    """
    contract = draw(st.sampled_from(CONTRACTS))
    if revision is None:
        revision = draw(st.sampled_from(REVISIONS))
    sources = draw(
        st.lists(
            fixture_source_urls(contract, revision), min_size=1, max_size=2 if light else 4,
            unique=True,
        )
    )
    events = draw(_light_events if light else _events)
    doc = valid_fixture_document(contract, revision=revision, sources=sources, events=events)
    doc["checked"] = draw(st.text(min_size=1, max_size=40).filter(lambda s: bool(s.strip())))
    doc["reviewed"] = draw(st.sampled_from([d for d in _REVIEW_DATES if d >= revision]))
    return doc


#: The documented top-level keys and ``sdk_baseline`` keys (independent of the loader).
DOCUMENT_KEYS: frozenset[str] = frozenset({
    "format", "contract", "provider", "api_family", "api_version", "contract_revision",
    "projection_layer", "stability", "sdk_baseline", "reviewed", "sources", "checked",
    "events",
})
BASELINE_KEYS: frozenset[str] = frozenset({"package", "version"})
STABILITY_KEYS: frozenset[str] = frozenset({"api_family", "model"})


def fixture_json_schema(contract: str, *, allow_extra_fields: bool,
                        revision: str = REVISION) -> dict[str, Any]:
    """A Draft-7 JSON Schema of valid ``contract`` fixtures at ``revision``, written
    from the format doc.

    With ``allow_extra_fields=True`` the top level, ``stability`` and ``sdk_baseline``
    admit unknown
    properties (schema drift); the loader must reject every such instance.
    """
    exp = expected(contract, revision)
    owner, repo = SDK_REPOSITORIES[exp.provider]
    tag = "v" + exp.sdk_version
    source_choices = [
        exp.example_source,
        exp.example_source + "#top",
        f"https://github.com/{owner}/{repo}/blob/{tag}/README.md",
        f"https://github.com/{owner}/{repo}/tree/{tag}",
    ]
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "required": sorted(DOCUMENT_KEYS),
        "additionalProperties": allow_extra_fields,
        "properties": {
            "format": {"const": "pcfuzz-fixture/1"},
            "contract": {"const": contract},
            "provider": {"const": exp.provider},
            "api_family": {"const": exp.api_family},
            "api_version": {"const": exp.api_version},
            "contract_revision": {"const": revision},
            "projection_layer": {"const": exp.projection_layer},
            "stability": {
                "type": "object",
                "required": sorted(STABILITY_KEYS),
                "additionalProperties": allow_extra_fields,
                "properties": {
                    "api_family": {"const": exp.api_family_stability},
                    "model": {"const": exp.model_stability},
                },
            },
            "sdk_baseline": {
                "type": "object",
                "required": sorted(BASELINE_KEYS),
                "additionalProperties": allow_extra_fields,
                "properties": {
                    "package": {"const": exp.sdk_package},
                    "version": {"const": exp.sdk_version},
                },
            },
            "reviewed": {"enum": [revision, "2026-12-31", "2030-02-28"]},
            "sources": {
                "type": "array", "minItems": 1, "maxItems": 4, "uniqueItems": True,
                "items": {"enum": source_choices},
            },
            "checked": {"enum": ["event shapes against the reference", "x"]},
            "events": {"type": "array", "minItems": 1, "maxItems": 3,
                       "items": {"type": "object", "maxProperties": 3}},
        },
    }


@dataclass(frozen=True)
class FixtureMutation:
    """A named attack on a valid fixture: returns the bytes and the expected cause."""

    name: str
    apply: Callable[[dict[str, Any], st.DrawFn], bytes]
    #: name of the exception class expected as ``__cause__`` (None: no cause needed).
    cause: str | None


def _with(key: str, values: st.SearchStrategy[Any]) -> Callable[[dict[str, Any], st.DrawFn], bytes]:
    def apply(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
        mutated = copy.deepcopy(doc)
        mutated[key] = draw(values.filter(lambda v: v != doc[key]))
        return render_fixture(mutated)

    return apply


def _sdk(field: str, values: st.SearchStrategy[Any]) -> Callable[[dict[str, Any], st.DrawFn], bytes]:
    def apply(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
        mutated = copy.deepcopy(doc)
        mutated["sdk_baseline"][field] = draw(
            values.filter(lambda v: v != doc["sdk_baseline"][field])
        )
        return render_fixture(mutated)

    return apply


def _stability(field: str, values: st.SearchStrategy[Any]) -> Callable[
        [dict[str, Any], st.DrawFn], bytes]:
    def apply(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
        mutated = copy.deepcopy(doc)
        mutated["stability"][field] = draw(
            values.filter(lambda v: v != doc["stability"][field])
        )
        return render_fixture(mutated)

    return apply


def _wrong_projection_layer(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    mutated = copy.deepcopy(doc)
    mutated["projection_layer"] = draw(
        st.sampled_from(
            ["typed-sse-projection", "wire-sse-envelope-projection", "wire-sse-bytes",
             "sdk-objects", ""]
        ).filter(lambda v: v != doc["projection_layer"])
    )
    return render_fixture(mutated)


_SENTINEL = "pcfuzz-sentinel-event-7f3a"


def _splice_event(doc: dict[str, Any], raw_event: str) -> bytes:
    """The document with ``raw_event`` (raw JSON text) spliced in as its first event."""
    mutated = copy.deepcopy(doc)
    mutated["events"].insert(0, _SENTINEL)
    text = render_fixture(mutated, indent=None).decode("utf-8")
    return text.replace(json.dumps(_SENTINEL), raw_event, 1).encode("utf-8")


def _duplicate_key(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    # Repeat one key at the top level or inside an event; the second value is harmless.
    text = render_fixture(doc, indent=None).decode("utf-8")
    where = draw(st.sampled_from(["top", "event", "sdk"]))
    escape = draw(st.booleans())
    if where == "top":
        key = draw(st.sampled_from(sorted(doc)))
        spelled = json.dumps(key)
        if escape:
            spelled = f'"\\u{ord(key[0]):04x}{key[1:]}"'
        return ("{" + spelled + ":" + json.dumps(doc[key]) + "," + text[1:]).encode()
    if where == "sdk":
        return text.replace('"sdk_baseline": {', '"sdk_baseline": {"version": "x", ', 1).encode()
    return _splice_event(doc, '{"dup": 1, "dup": 2}')


def _non_finite(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    token = draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-1e999"]))
    return _splice_event(doc, '{"bad": ' + token + "}")


def _bom(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    body = render_fixture(doc)
    kind = draw(st.sampled_from(["utf-8", "utf-16-le", "utf-16-be"]))
    if kind == "utf-8":
        return b"\xef\xbb\xbf" + body
    bom = b"\xff\xfe" if kind == "utf-16-le" else b"\xfe\xff"
    return bom + body.decode("utf-8").encode(kind)


def _invalid_utf8(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    body = render_fixture(doc)
    junk = draw(st.sampled_from([b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82"]))
    return body.replace(b'"checked": "', b'"checked": "' + junk, 1)


def _empty_events(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    mutated = copy.deepcopy(doc)
    mutated["events"] = []
    return render_fixture(mutated)


def _non_object_event(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    mutated = copy.deepcopy(doc)
    index = draw(st.integers(0, len(mutated["events"])))
    mutated["events"].insert(index, draw(st.one_of(_json_scalars, st.lists(_json_scalars))))
    return render_fixture(mutated)


def _bad_source(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    mutated = copy.deepcopy(doc)
    attack = draw(attacked_source_urls(doc["provider"]))
    index = draw(st.integers(0, len(mutated["sources"])))
    mutated["sources"].insert(index, attack.url)
    return render_fixture(mutated)


def _non_string_source(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    mutated = copy.deepcopy(doc)
    bad = draw(st.one_of(_json_scalars.filter(lambda v: not isinstance(v, str)),
                         st.lists(st.just(doc["sources"][0]), min_size=1, max_size=2),
                         st.just({"url": doc["sources"][0]})))
    index = draw(st.integers(0, len(mutated["sources"])))
    mutated["sources"].insert(index, bad)
    return render_fixture(mutated)


def _unpinned_sdk_source(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    # An accepted GitHub URL of the right repository, but not at the baseline tag.
    mutated = copy.deepcopy(doc)
    owner, repo = SDK_REPOSITORIES[doc["provider"]]
    version = doc["sdk_baseline"]["version"]
    tail = draw(st.sampled_from([
        "", "/releases", "/blob/main/README.md", "/tree/main",
        "/blob/0123456789abcdef0123456789abcdef01234567/README.md",
        f"/blob/{version}/README.md", f"/blob/v{version}.1/x.py", f"/raw/v{version}/x.py",
        f"/commits/v{version}", f"/compare/v{version}...main", "/blob/V" + version + "/x",
    ]))
    index = draw(st.integers(0, len(mutated["sources"])))
    mutated["sources"].insert(index, f"https://github.com/{owner}/{repo}{tail}")
    return render_fixture(mutated)


def _deep_event(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    # Nesting beyond the JSON loader's depth limit, inside an event.
    depth = draw(st.integers(600, 20_000))
    opener = draw(st.sampled_from(["[", '{"a":']))
    closer = "]" if opener == "[" else "}"
    return _splice_event(doc, '{"deep": ' + opener * depth + "0" + closer * depth + "}")


def _huge_event_value(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    # One value over a JSON limit: a number with too many digits, a too-long string.
    kind = draw(st.sampled_from(["digits", "fraction", "string"]))
    if kind == "digits":
        value = "9" * draw(st.integers(1_001, 100_000))
    elif kind == "fraction":
        value = "0." + "1" * draw(st.integers(1_000, 5_000))
    else:
        value = '"' + "x" * (4 * 1024 * 1024 + 1) + '"'
    return _splice_event(doc, '{"huge": ' + value + "}")


def _unknown_key(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    mutated = copy.deepcopy(doc)
    key = draw(st.text(min_size=1, max_size=12).filter(lambda k: k not in doc))
    mutated[key] = draw(_json_scalars)
    return render_fixture(mutated)


def _missing_key(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    mutated = copy.deepcopy(doc)
    del mutated[draw(st.sampled_from(sorted(doc)))]
    return render_fixture(mutated)


def _wrong_type(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    mutated = copy.deepcopy(doc)
    key = draw(st.sampled_from(sorted(doc)))
    current = type(doc[key])
    mutated[key] = draw(
        st.one_of(_json_scalars, st.lists(_json_scalars, max_size=2), st.just({})).filter(
            lambda v: type(v) is not current
        )
    )
    return render_fixture(mutated)


def _truncated(doc: dict[str, Any], draw: st.DrawFn) -> bytes:
    body = render_fixture(doc)
    return body[: draw(st.integers(0, len(body) - 1))]


MUTATIONS: tuple[FixtureMutation, ...] = (
    FixtureMutation("wrong_api_version", _with("api_version", st.sampled_from(
        ["v1beta", "v1alpha", "v2", "2023-01-01", "2024-10-22", "V1", ""])), None),
    # Also the other shipped revision's date: relabeled without its pins, it is wrong.
    FixtureMutation("wrong_contract_revision", _with("contract_revision", st.sampled_from(
        ["2026-07-20", "2026-07-22", "2025-07-21", "latest", "", *REVISIONS])), None),
    FixtureMutation("wrong_projection_layer", _wrong_projection_layer, None),
    FixtureMutation("wrong_provider", _with("provider", st.sampled_from(
        ["openai", "anthropic", "google", "gemini", "OpenAI", ""])), None),
    FixtureMutation("wrong_api_family", _with("api_family", st.sampled_from(
        ["responses", "messages", "interactions", "chat-completions", "generate-content"])),
        None),
    FixtureMutation("wrong_contract", _with("contract", st.sampled_from(
        [*NAMES, "gemini-generate-content"])), None),
    FixtureMutation("wrong_format", _with("format", st.sampled_from(
        ["pcfuzz-fixture/2", "pcfuzz-fixture", ""])), None),
    FixtureMutation("wrong_sdk_package", _sdk("package", st.sampled_from(
        ["openai", "anthropic", "google-genai", "google-generativeai", ""])), None),
    # Also another revision's version of the same package (an SDK baseline that does
    # not belong to the declared revision).
    FixtureMutation("wrong_sdk_version", _sdk("version", st.sampled_from(
        ["2.46.1", "2.45.0", "0.116.0", "0.117.0", "2.12.1", "2.12.0", "", "2.46.0", "3.57.0",
         "2.15.0", "3.6.1"])), None),
    # The seed's corrected conclusion: Interactions is GA, never preview/beta; a family
    # status the format does not know (deprecated, beta) is no status at all.
    FixtureMutation("wrong_api_family_stability", _stability("api_family", st.sampled_from(
        ["preview", "legacy", "beta", "deprecated", "GA", "Ga", "", None, 1, ["ga"]])), None),
    FixtureMutation("wrong_model_stability", _stability("model", st.sampled_from(
        ["stable", "preview", "live", "Synthetic", "", None, True])), None),
    FixtureMutation("duplicate_key", _duplicate_key, "StrictJSONError"),
    FixtureMutation("non_finite_value", _non_finite, "StrictJSONError"),
    FixtureMutation("bom", _bom, "StrictJSONError"),
    FixtureMutation("invalid_utf8", _invalid_utf8, "StrictJSONError"),
    FixtureMutation("truncated_document", _truncated, "StrictJSONError"),
    FixtureMutation("empty_events", _empty_events, None),
    FixtureMutation("non_object_event", _non_object_event, None),
    FixtureMutation("bad_source_url", _bad_source, "SourceURLError"),
    FixtureMutation("non_string_source", _non_string_source, None),
    FixtureMutation("unpinned_sdk_source", _unpinned_sdk_source, None),
    FixtureMutation("deep_event", _deep_event, "LimitExceeded"),
    FixtureMutation("huge_event_value", _huge_event_value, "LimitExceeded"),
    FixtureMutation("unknown_top_level_key", _unknown_key, None),
    FixtureMutation("missing_top_level_key", _missing_key, None),
    FixtureMutation("wrong_field_type", _wrong_type, None),
)


MUTATION_NAMES: tuple[str, ...] = tuple(m.name for m in MUTATIONS)


@st.composite
def mutated_fixtures(
    draw: st.DrawFn, mutation: str | None = None
) -> tuple[str, bytes, str | None]:
    """(mutation name, fixture bytes the loader must reject, expected cause class name).

    ``mutation`` picks one named mutation; by default any.
    """
    doc = draw(fixture_documents(light=True))
    if mutation is None:
        chosen = draw(st.sampled_from(MUTATIONS))
    else:
        chosen = next(m for m in MUTATIONS if m.name == mutation)
    return chosen.name, chosen.apply(doc, draw), chosen.cause
