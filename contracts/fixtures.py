"""Fixture files: strict JSON with pinned provenance metadata and a non-empty event list.

A fixture (format ``pcfuzz-fixture/1``, documented in ``fixtures/README.md``) is a
JSON object with exactly these keys: ``format``, ``contract``, ``provider``,
``api_family``, ``api_version``, ``contract_revision``, ``projection_layer``,
``stability`` (``api_family`` and ``model``), ``sdk_baseline`` (``package`` and
``version``), ``reviewed``, ``sources``,
``checked`` and ``events`` (a ``wire-sse-bytes`` fixture has ``sse``, the raw SSE
text of the turn, instead of ``events``). :func:`load_fixture` parses it with
:func:`contracts.strict_json.loads`, checks every key and type, pins each
contract's metadata from :data:`CONTRACT_PINS` (a Gemini fixture must say API
version ``v1``, never ``v1beta``; every fixture records the seed's four stability
layers: API version, the API family's own status, the model's and the SDK), validates every source URL with
:func:`contracts.provenance.validate_source_url` for the fixture's provider,
requires a GitHub source to show the SDK baseline tag (``blob/v<version>/...`` or
``tree/v<version>/...``), and rejects an empty event list or an event that is not a
JSON object; the ``sse`` text of a ``wire-sse-bytes`` fixture must decode with
:func:`contracts.sse.decode_sse` to at least one event and end at an event boundary.
:func:`load_fixture` reads regular files only (never waits on a FIFO).

Every rejection is a :class:`~contracts.errors.FixtureError`, chained
(``__cause__``) to the underlying ``StrictJSONError``, ``LimitExceeded``,
``SourceURLError`` or ``OSError`` when there is one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date
from types import MappingProxyType
from typing import Any, cast

from ._values import preview
from .errors import ContractError, FixtureError, LimitExceeded
from .provenance import validate_source_url
from .sse import decode_sse
from .strict_json import loads

__all__ = [
    "FIXTURE_FORMAT",
    "FIXTURE_KEYS",
    "WIRE_FIXTURE_KEYS",
    "WIRE_LAYER",
    "SDK_BASELINE_KEYS",
    "STABILITY_KEYS",
    "API_FAMILY_STABILITIES",
    "MODEL_STABILITIES",
    "PROJECTION_LAYERS",
    "MAX_FIXTURE_BYTES",
    "MAX_SOURCES",
    "MAX_CHECKED_CHARS",
    "SDK_SOURCE_REF_KINDS",
    "SDK_TAG_FORMAT",
    "ContractPin",
    "CONTRACT_PINS",
    "Fixture",
    "load_fixture",
    "load_fixture_bytes",
]

FIXTURE_FORMAT = "pcfuzz-fixture/1"

#: Exactly these top-level keys; a missing or an unknown key is a FixtureError.
FIXTURE_KEYS: frozenset[str] = frozenset(
    {
        "format",
        "contract",
        "provider",
        "api_family",
        "api_version",
        "contract_revision",
        "projection_layer",
        "stability",
        "sdk_baseline",
        "reviewed",
        "sources",
        "checked",
        "events",
    }
)
SDK_BASELINE_KEYS: frozenset[str] = frozenset({"package", "version"})
#: ``stability`` has exactly these keys: the API family's own status (the endpoint's
#: GA, legacy or preview status) and the model layer's.
STABILITY_KEYS: frozenset[str] = frozenset({"api_family", "model"})
#: Every API-family status the format knows: ``ga`` (generally available), ``legacy``
#: (superseded but fully supported, e.g. Gemini GenerateContent; not deprecated) and
#: ``preview`` (mutable; e.g. anything only in v1beta). A known status can still be
#: unpinned for a contract.
API_FAMILY_STABILITIES: frozenset[str] = frozenset({"ga", "legacy", "preview"})
#: Every model-layer status the format knows: ``synthetic`` (the fixture's model values
#: are synthetic opaque strings; no live-availability claim), ``stable``, ``preview``.
MODEL_STABILITIES: frozenset[str] = frozenset({"synthetic", "stable", "preview"})

#: The projection layer whose fixtures hold the raw SSE bytes of a turn.
WIRE_LAYER = "wire-sse-bytes"
#: A ``wire-sse-bytes`` fixture has exactly these keys: ``sse`` (the stream as text;
#: its bytes are ``sse.encode("utf-8")``) replaces ``events``.
WIRE_FIXTURE_KEYS: frozenset[str] = (FIXTURE_KEYS - {"events"}) | {"sse"}

#: Every projection layer name the format knows. A known name can still be unpinned
#: for a contract.
PROJECTION_LAYERS: frozenset[str] = frozenset(
    {"typed-sse-projection", "wire-sse-envelope-projection", WIRE_LAYER}
)

#: A GitHub source in a fixture must show the SDK baseline, not a moving branch or a
#: commit (GitHub serves fork commits under the parent repository's URLs):
#: ``https://github.com/<owner>/<repo>/<kind>/<tag>[/...]`` with ``kind`` one of these
#: and ``tag`` = ``SDK_TAG_FORMAT.format(version=<sdk_baseline.version>)``.
SDK_SOURCE_REF_KINDS: frozenset[str] = frozenset({"blob", "tree"})
SDK_TAG_FORMAT = "v{version}"

#: A fixture file larger than this is rejected before it is parsed.
MAX_FIXTURE_BYTES = 8_000_000
MAX_SOURCES = 64
MAX_CHECKED_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class ContractPin:
    """What a fixture of one contract must declare at one contract revision."""

    provider: str
    api_family: str
    api_version: str
    projection_layers: frozenset[str]
    sdk_package: str
    sdk_version: str
    #: The API family's own status (one of :data:`API_FAMILY_STABILITIES`).
    api_family_stability: str
    #: The model layer's status (one of :data:`MODEL_STABILITIES`).
    model_stability: str


_PINS_2026_07_21: Mapping[str, ContractPin] = MappingProxyType(
    {
        "openai-responses": ContractPin(
            provider="openai",
            api_family="responses",
            api_version="v1",
            projection_layers=frozenset({"typed-sse-projection", WIRE_LAYER}),
            sdk_package="openai",
            sdk_version="2.46.0",
            api_family_stability="ga",
            model_stability="synthetic",
        ),
        "anthropic-messages": ContractPin(
            provider="anthropic",
            api_family="messages",
            # The anthropic-version request header of the pinned wire contract.
            api_version="2023-06-01",
            projection_layers=frozenset({"wire-sse-envelope-projection", WIRE_LAYER}),
            sdk_package="anthropic",
            sdk_version="0.117.0",
            api_family_stability="ga",
            model_stability="synthetic",
        ),
        "gemini-interactions": ContractPin(
            provider="google",
            api_family="interactions",
            # Interactions is GA in v1; a v1beta union is a different contract.
            api_version="v1",
            projection_layers=frozenset({"typed-sse-projection", WIRE_LAYER}),
            sdk_package="google-genai",
            sdk_version="2.12.1",
            # GA since June 2026 (the seed's corrected conclusion): never
            # "preview"; GenerateContent, a different family, is "legacy".
            api_family_stability="ga",
            model_stability="synthetic",
        ),
        "openai-chat": ContractPin(
            provider="openai",
            api_family="chat-completions",
            api_version="v1",
            projection_layers=frozenset({"typed-sse-projection", WIRE_LAYER}),
            sdk_package="openai",
            sdk_version="2.46.0",
            # GA and supported beside Responses; the seed names no other status for it.
            api_family_stability="ga",
            model_stability="synthetic",
        ),
    }
)


def _current(pin: ContractPin, sdk_version: str) -> ContractPin:
    return replace(pin, sdk_version=sdk_version)


#: ``CONTRACT_PINS[contract_revision][contract]``. Revision ``2026-12-01`` (today's
#: shapes; ``fixtures/CHANGELOG.md``) differs from the pinned ``2026-07-21`` only in
#: the SDK baseline its fixtures were read from.
CONTRACT_PINS: Mapping[str, Mapping[str, ContractPin]] = MappingProxyType(
    {
        "2026-07-21": _PINS_2026_07_21,
        "2026-12-01": MappingProxyType(
            {
                "openai-responses": _current(_PINS_2026_07_21["openai-responses"], "3.57.0"),
                "anthropic-messages": _current(_PINS_2026_07_21["anthropic-messages"],
                                               "2.15.0"),
                "gemini-interactions": _current(_PINS_2026_07_21["gemini-interactions"],
                                                "3.6.1"),
                "openai-chat": _current(_PINS_2026_07_21["openai-chat"], "3.57.0"),
            }
        ),
    }
)

# Fields checked against the pin, in the order they are checked (contract first).
_PINNED_FIELDS: tuple[tuple[str, str], ...] = (
    ("provider", "provider"),
    ("api_family", "api_family"),
    ("api_version", "api_version"),
)


@dataclass(frozen=True, slots=True)
class Fixture:
    """A loaded fixture whose metadata matched its contract's pins.

    ``sources`` is a tuple of accepted official URLs; ``events`` is the list of
    event objects (dicts) exactly as parsed, in file order (empty for a
    ``wire-sse-bytes`` fixture). ``sse`` is the raw SSE bytes of a ``wire-sse-bytes``
    fixture (``None`` for every other layer). The seed's four stability layers are
    ``api_version``, ``api_family_stability``, ``model_stability`` and
    ``sdk_package``/``sdk_version``.
    """

    contract: str
    provider: str
    api_family: str
    api_version: str
    contract_revision: str
    projection_layer: str
    sdk_package: str
    sdk_version: str
    api_family_stability: str
    model_stability: str
    reviewed: str
    sources: tuple[str, ...]
    checked: str
    events: list[dict[str, Any]]
    sse: bytes | None = None


class _Fail:
    __slots__ = ("_origin",)

    def __init__(self, origin: str) -> None:
        self._origin = origin

    def __call__(self, message: str, field: str) -> FixtureError:
        return FixtureError(f"fixture {self._origin}: {message}", where=field)


def _string(document: Mapping[str, Any], key: str, fail: _Fail) -> str:
    value = document[key]
    if type(value) is not str:
        raise fail(f"{key} must be a string, got {type(value).__name__}", key)
    return value


def _pinned(value: str, expected: str, field: str, contract: str, fail: _Fail) -> None:
    if value != expected:
        raise fail(
            f"{field} must be {expected!r} for contract {contract!r}, got {value!r}",
            field,
        )


def _check_keys(found: Mapping[str, Any], wanted: frozenset[str], where: str, fail: _Fail) -> None:
    missing = sorted(wanted - found.keys())
    if missing:
        raise fail(f"missing key {missing[0]!r} in {where}", where)
    unknown = sorted(found.keys() - wanted)
    if unknown:
        raise fail(f"unknown key {unknown[0]!r} in {where}", where)


def _check_reviewed(value: str, revision: str, fail: _Fail) -> None:
    shape = value[:4] + value[5:7] + value[8:]
    if (
        len(value) != 10
        or value[4] != "-"
        or value[7] != "-"
        or any(c not in "0123456789" for c in shape)
    ):
        raise fail(f"reviewed must be a date YYYY-MM-DD, got {value!r}", "reviewed")
    try:
        reviewed = date.fromisoformat(value)
    except ValueError as exc:
        raise fail(f"reviewed is not a valid date: {value!r}", "reviewed") from exc
    if reviewed < date.fromisoformat(revision):
        raise fail(
            f"reviewed {value} is before contract revision {revision}", "reviewed"
        )


def _check_sdk_source_ref(url: str, pin: ContractPin, field: str, fail: _Fail) -> None:
    # Only called for a URL validate_source_url accepted; on github.com its path starts
    # with /<owner>/<repo> of the provider's SDK (checked there, not here).
    prefix = "https://github.com/"
    if not url.startswith(prefix):
        return
    path = url[len(prefix) :].partition("#")[0]
    segments = path.split("/")
    tag = SDK_TAG_FORMAT.format(version=pin.sdk_version)
    if len(segments) < 4 or segments[2] not in SDK_SOURCE_REF_KINDS or segments[3] != tag:
        kinds = "|".join(sorted(SDK_SOURCE_REF_KINDS))
        raise fail(
            f"{field} {url!r} must show the SDK baseline: "
            f"https://github.com/{segments[0]}/{segments[1]}/({kinds})/{tag}/... "
            "(a branch or commit can show other content, including a fork's)",
            field,
        )


def _check_stability(
    value: Any, pin: ContractPin, contract: str, fail: _Fail
) -> tuple[str, str]:
    if type(value) is not dict:
        raise fail(f"stability must be an object, got {type(value).__name__}", "stability")
    _check_keys(value, STABILITY_KEYS, "stability", fail)
    found: list[str] = []
    for key, known, expected in (
        ("api_family", API_FAMILY_STABILITIES, pin.api_family_stability),
        ("model", MODEL_STABILITIES, pin.model_stability),
    ):
        field = f"stability.{key}"
        got = value[key]
        if type(got) is not str:
            raise fail(f"{field} must be a string, got {type(got).__name__}", field)
        if got not in known:
            raise fail(
                f"unknown {field} {preview(got)} (known: {', '.join(sorted(known))})", field
            )
        _pinned(got, expected, field, contract, fail)
        found.append(got)
    return found[0], found[1]


def _check_sources(
    value: Any, provider: str, allow_local: bool, fail: _Fail, pin: ContractPin
) -> tuple[str, ...]:
    if type(value) is not list:
        raise fail(f"sources must be a list, got {type(value).__name__}", "sources")
    if not value:
        raise fail("sources must name at least one official URL", "sources")
    if len(value) > MAX_SOURCES:
        raise fail(f"sources has {len(value)} entries (limit {MAX_SOURCES})", "sources")
    seen: set[str] = set()
    for index, url in enumerate(value):
        field = f"sources[{index}]"
        if type(url) is not str:
            raise fail(f"{field} must be a string, got {type(url).__name__}", field)
        if url in seen:
            raise fail(f"{field} repeats source {url!r}", field)
        seen.add(url)
        try:
            validate_source_url(
                url, provider=provider, allow_local_source_urls=allow_local
            )
        except ContractError as exc:
            raise fail(f"{field} is not an accepted source: {exc}", field) from exc
        _check_sdk_source_ref(url, pin, field, fail)
    return tuple(value)


def _check_events(value: Any, fail: _Fail) -> list[dict[str, Any]]:
    if type(value) is not list:
        raise fail(f"events must be a list, got {type(value).__name__}", "events")
    if not value:
        raise fail("events must not be empty", "events")
    for index, event in enumerate(value):
        if type(event) is not dict:
            raise fail(
                f"event {index} must be a JSON object, got {type(event).__name__}",
                f"events[{index}]",
            )
    return value


def _check_sse(value: Any, fail: _Fail) -> bytes:
    if type(value) is not str:
        raise fail(f"sse must be a string, got {type(value).__name__}", "sse")
    try:
        data = value.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate (strict JSON rejects them)
        raise fail("sse is not encodable as UTF-8", "sse") from exc
    try:
        events = decode_sse(data)
    except ContractError as exc:
        raise fail(f"sse is not a complete SSE stream: {exc}", "sse") from exc
    if not events:
        raise fail("sse must hold at least one SSE event", "sse")
    return data


def load_fixture_bytes(
    data: bytes,
    *,
    allow_local_source_urls: bool = False,
    origin: str = "<bytes>",
) -> Fixture:
    """Parse and check a fixture document given as bytes (no I/O).

    ``origin`` names the document in error messages. Raises
    :class:`~contracts.errors.FixtureError` (only), chained to the underlying
    ``StrictJSONError`` / ``LimitExceeded`` / ``SourceURLError`` when there is one.
    """
    # Every caller value is judged by type(), never isinstance(), which believes (and
    # runs) a ``__class__`` property; a subclass is read by its real content through
    # the builtin type's own methods, so none of its overrides run.
    fail = _Fail(
        str.__str__(origin)
        if issubclass(type(origin), str) else "<bytes>"
    )
    if type(allow_local_source_urls) is not bool:
        raise fail("allow_local_source_urls must be a bool", "allow_local_source_urls")
    kind = type(data)
    if issubclass(kind, bytes):
        size = bytes.__len__(data)
        content = bytes.__getitem__(data, slice(None))
    elif issubclass(kind, bytearray):
        size = bytearray.__len__(cast(bytearray, data))
        content = b""  # copied below, once its size is known to be within the bound
    else:
        raise fail(f"fixture data must be bytes, got {kind.__name__}", "document")
    if size > MAX_FIXTURE_BYTES:
        limit = LimitExceeded(f"fixture is larger than {MAX_FIXTURE_BYTES} bytes")
        raise fail(str(limit), "document") from limit
    if issubclass(kind, bytearray):
        content = bytes(bytearray.__getitem__(cast(bytearray, data), slice(None)))
    try:
        document = loads(content)
    except ContractError as exc:
        raise fail(f"not strict JSON: {exc}", "document") from exc
    if type(document) is not dict:
        raise fail(
            f"top level must be a JSON object, got {type(document).__name__}", "document"
        )
    wire = document.get("projection_layer") == WIRE_LAYER
    if wire and "sse" not in document and "events" in document:
        raise fail(
            f"projection_layer {WIRE_LAYER!r} carries the stream as 'sse' (raw SSE text), "
            "not as 'events'",
            "projection_layer",
        )
    _check_keys(document, WIRE_FIXTURE_KEYS if wire else FIXTURE_KEYS, "document", fail)

    fmt = _string(document, "format", fail)
    if fmt != FIXTURE_FORMAT:
        raise fail(f"format must be {FIXTURE_FORMAT!r}, got {fmt!r}", "format")
    revision = _string(document, "contract_revision", fail)
    pins = CONTRACT_PINS.get(revision)
    if pins is None:
        raise fail(
            f"contract_revision {revision!r} is not pinned "
            f"(pinned: {', '.join(sorted(CONTRACT_PINS))})",
            "contract_revision",
        )
    contract = _string(document, "contract", fail)
    pin = pins.get(contract)
    if pin is None:
        raise fail(
            f"unknown contract {contract!r} at revision {revision} "
            f"(known: {', '.join(sorted(pins))})",
            "contract",
        )
    values: dict[str, str] = {}
    for key, attribute in _PINNED_FIELDS:
        values[key] = _string(document, key, fail)
        _pinned(values[key], getattr(pin, attribute), key, contract, fail)

    layer = _string(document, "projection_layer", fail)
    if layer not in PROJECTION_LAYERS:
        raise fail(
            f"unknown projection_layer {layer!r} "
            f"(known: {', '.join(sorted(PROJECTION_LAYERS))})",
            "projection_layer",
        )
    if layer not in pin.projection_layers:
        raise fail(
            f"projection_layer {layer!r} is not pinned for contract {contract!r} "
            f"(pinned: {', '.join(sorted(pin.projection_layers))})",
            "projection_layer",
        )

    baseline = document["sdk_baseline"]
    if type(baseline) is not dict:
        raise fail(
            f"sdk_baseline must be an object, got {type(baseline).__name__}",
            "sdk_baseline",
        )
    _check_keys(baseline, SDK_BASELINE_KEYS, "sdk_baseline", fail)
    for key, expected in (("package", pin.sdk_package), ("version", pin.sdk_version)):
        got = baseline[key]
        field = f"sdk_baseline.{key}"
        if type(got) is not str:
            raise fail(f"{field} must be a string, got {type(got).__name__}", field)
        _pinned(got, expected, field, contract, fail)

    stability = _check_stability(document["stability"], pin, contract, fail)

    reviewed = _string(document, "reviewed", fail)
    _check_reviewed(reviewed, revision, fail)
    checked = _string(document, "checked", fail)
    if not checked.strip():
        raise fail("checked must say what was checked against which reference", "checked")
    if len(checked) > MAX_CHECKED_CHARS:
        raise fail(
            f"checked is {len(checked)} characters long (limit {MAX_CHECKED_CHARS})",
            "checked",
        )
    sources = _check_sources(
        document["sources"], pin.provider, allow_local_source_urls, fail, pin
    )
    if wire:
        events: list[dict[str, Any]] = []
        sse: bytes | None = _check_sse(document["sse"], fail)
    else:
        events = _check_events(document["events"], fail)
        sse = None
    return Fixture(
        contract=contract,
        provider=values["provider"],
        api_family=values["api_family"],
        api_version=values["api_version"],
        contract_revision=revision,
        projection_layer=layer,
        sdk_package=pin.sdk_package,
        sdk_version=pin.sdk_version,
        api_family_stability=stability[0],
        model_stability=stability[1],
        reviewed=reviewed,
        sources=sources,
        checked=checked,
        events=events,
        sse=sse,
    )


def load_fixture(
    path: str | os.PathLike[str], *, allow_local_source_urls: bool = False
) -> Fixture:
    """Read the fixture file at ``path`` and check it (see :func:`load_fixture_bytes`).

    Raises :class:`~contracts.errors.FixtureError` (only): a missing or unreadable
    file is chained to its ``OSError``; anything but a regular file (a directory, a
    FIFO, a device) is rejected without waiting or reading; a file larger than
    :data:`MAX_FIXTURE_BYTES` is rejected without reading the rest.
    """
    # The path is read once, as an exact str: a str subclass is read through str's own
    # method, and an os.PathLike's __fspath__ (caller code) runs exactly once, guarded.
    if issubclass(type(path), str):
        origin = str.__str__(cast(str, path))
    elif issubclass(type(path), os.PathLike):
        try:
            raw = cast("os.PathLike[str]", path).__fspath__()
        except Exception as exc:
            raise FixtureError(
                f"fixture path's __fspath__ raised {type(exc).__name__}", where="path"
            ) from exc
        if type(raw) is not str:
            raise FixtureError(
                f"fixture path must give a str path, got {preview(raw)}", where="path"
            )
        origin = raw
    else:
        raise FixtureError(
            f"fixture path must be str or os.PathLike, got {preview(path)}", where="path"
        )
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; then only a regular
        # file is read (a FIFO, a device or /dev/zero-like file is refused).
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        descriptor = os.open(origin, flags)
        with open(descriptor, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise FixtureError(
                    f"fixture {preview(origin)} is not a regular file", where="path"
                )
            data = handle.read(MAX_FIXTURE_BYTES + 1)
    except OSError as exc:
        raise FixtureError(
            f"cannot read fixture {preview(origin, 200)}: {exc.strerror}", where="path"
        ) from exc
    except (TypeError, ValueError) as exc:
        raise FixtureError(
            f"cannot read fixture {preview(origin, 200)}: {type(exc).__name__}", where="path"
        ) from exc
    return load_fixture_bytes(
        data, allow_local_source_urls=allow_local_source_urls, origin=origin
    )
