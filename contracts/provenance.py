"""Source-URL provenance: bind each fixture source to its provider's official places.

:func:`validate_source_url` accepts a URL only when it points at one of the
provider's official documentation hosts or inside the provider's official Python
SDK repository on GitHub, written in a deliberately small ASCII grammar:

    https://HOST/SEGMENT(/SEGMENT)*[#FRAGMENT]

No userinfo, no port, no query, lowercase scheme and host, every path segment
non-empty and free of dot segments, separators (plain, encoded or as a
backslash), nested or malformed percent-encoding; on GitHub no percent-encoding
at all (its router decodes escapes, so ``%3A`` in a compare range can name a fork). Characters a WHATWG URL parser
would strip or rewrite (tab, newline, carriage return, leading/trailing spaces,
backslash, non-ASCII, an uppercase or trailing-dot host) are rejected rather than
normalized, so whatever is accepted parses to the same host and path in a browser
and in :func:`urllib.parse.urlsplit`.

This is metadata hygiene, not an authenticity proof: it does not sign content, pin
TLS, or show that the page says what a fixture claims.

``allow_local_source_urls=True`` additionally opens loopback URLs
(``127.0.0.1``, ``[::1]``, ``localhost``; ``http`` or ``https``; an optional
non-default port) for a local fixture harness. It never opens any other host.

The tables below are data: a later review adds a host or a repository here, and the
tests enumerate them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ._values import preview
from .errors import SourceURLError

__all__ = [
    "OfficialSources",
    "OFFICIAL_SOURCES",
    "GITHUB_HOST",
    "LOOPBACK_HOSTS",
    "MAX_URL_LENGTH",
    "validate_source_url",
]


@dataclass(frozen=True, slots=True)
class OfficialSources:
    """One provider's official places: documentation hosts and its SDK repository."""

    doc_hosts: frozenset[str]
    github_owner: str
    github_repo: str


#: Reviewed 2026-07-21. Exact hosts only: no subdomain of these is official.
OFFICIAL_SOURCES: Mapping[str, OfficialSources] = MappingProxyType(
    {
        "openai": OfficialSources(
            doc_hosts=frozenset({"platform.openai.com", "developers.openai.com"}),
            github_owner="openai",
            github_repo="openai-python",
        ),
        "anthropic": OfficialSources(
            doc_hosts=frozenset(
                {"docs.anthropic.com", "docs.claude.com", "platform.claude.com"}
            ),
            github_owner="anthropics",
            github_repo="anthropic-sdk-python",
        ),
        "google": OfficialSources(
            doc_hosts=frozenset({"ai.google.dev"}),
            github_owner="googleapis",
            github_repo="python-genai",
        ),
    }
)

GITHUB_HOST = "github.com"

# Every host that is official for a provider: its documentation hosts and GitHub.
_OFFICIAL_HOSTS: Mapping[str, frozenset[str]] = MappingProxyType(
    {name: sources.doc_hosts | {GITHUB_HOST} for name, sources in OFFICIAL_SOURCES.items()}
)
# Whether a host contains one of them (one regex per provider).
_CONTAINS_OFFICIAL_HOST: Mapping[str, re.Pattern[str]] = MappingProxyType(
    {name: re.compile("|".join(map(re.escape, sorted(hosts))))
     for name, hosts in _OFFICIAL_HOSTS.items()}
)

#: Hosts opened by ``allow_local_source_urls=True`` (and only by it).
LOOPBACK_HOSTS: frozenset[str] = frozenset({"127.0.0.1", "[::1]", "localhost"})

#: Longer URLs are rejected before any other work.
MAX_URL_LENGTH = 2048

# The default port of each scheme: WHATWG drops it (":443" -> no port), so an
# explicit default port would not round-trip; loopback URLs may not spell it.
_DEFAULT_PORTS: Mapping[str, int] = MappingProxyType({"http": 80, "https": 443})

_ALPHA = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS = frozenset("0123456789")
_HEXDIGITS = frozenset("0123456789abcdefABCDEF")
_UNRESERVED = _ALPHA | _DIGITS | frozenset("-._~")
# Path segment characters: RFC 3986 pchar minus ";" (urllib.parse.urlparse and
# servlet containers split path parameters on it), ":" and "@" (authority look-alikes),
# with "%" allowed only as a well-formed escape (checked separately).
_SEGMENT_CHARS = _UNRESERVED | frozenset("!$&'()*+,=")
# Fragment characters: RFC 3986 fragment minus "%" (no escapes in fragments).
_FRAGMENT_CHARS = _UNRESERVED | frozenset("!$&'()*+,;=:@/?")
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.")
_SHOWN_URL_CHARS = 160


def _one_of(chars: frozenset[str]) -> str:
    """A regex character class of exactly ``chars``."""
    return "[" + "".join(re.escape(c) for c in sorted(chars)) + "]"


# C-level steps (one regex each) for what a loop over the characters would find,
# built from the sets above: the first character outside U+0021..U+007E or a
# backslash; a segment of plain characters (no escape: it decodes to itself); how
# far a segment keeps the grammar (plain characters, escapes other than "%25"); an
# escape; the first character a fragment does not allow.
_NOT_PLAIN_ASCII = re.compile(r"[^\x21-\x5b\x5d-\x7e]")
_NOT_PRINTABLE_ASCII = re.compile(r"[^\x21-\x7e]")
_PLAIN_SEGMENT = re.compile(_one_of(_SEGMENT_CHARS) + "+")
_SEGMENT_GRAMMAR = re.compile(f"(?:{_one_of(_SEGMENT_CHARS)}|%(?!25)[0-9A-Fa-f]{{2}})*")
_ESCAPE = re.compile("%([0-9A-Fa-f]{2})")
_UNRESERVED_CHAR = re.compile(_one_of(_UNRESERVED))
_NOT_FRAGMENT_CHAR = re.compile("[^" + _one_of(_FRAGMENT_CHARS)[1:])
# A whole path of plain segments, and a dot segment in it: most paths take these two
# steps instead of one per segment.
_PLAIN_PATH = re.compile(f"(?:/{_one_of(_SEGMENT_CHARS)}+)+")
_DOT_SEGMENT = re.compile(r"/\.+(?=/|\Z)")
# A URL whose scheme is http or https, followed by "//", with no "?" before its first
# "#": (scheme, authority, path or None, fragment or None), as _split cuts it.
_SIMPLE_URL = re.compile(r"(https?)://([^/?#]*)(/[^?#]*)?(?:#(.*))?\Z", re.DOTALL)


def _escapes_of(values: frozenset[int]) -> str:
    """A regex of the escapes of exactly ``values`` (either case of hex digit)."""
    spellings = sorted(
        f"%{high}{low}"
        for value in values
        for high in {f"{value:02x}"[0], f"{value:02X}"[0]}
        for low in {f"{value:02x}"[1], f"{value:02X}"[1]}
    )
    return "(?:" + "|".join(spellings) + ")"


# The escapes a segment may keep: printable ASCII that is no separator, no "%" (a
# nested escape) and no unreserved character (a needless escape).
_KEPT_ESCAPES = frozenset(range(0x21, 0x7F)) - {
    ord(c) for c in "/\\%" } - {ord(c) for c in _UNRESERVED}
# The segments a path starts with that every check of _check_segment passes (plain
# characters and kept escapes, not only dots): the loop over segments starts after
# them.
_GOOD_SEGMENTS_FIRST = re.compile(
    f"(?:/(?!\\.+(?:/|\\Z))(?:{_one_of(_SEGMENT_CHARS)}|{_escapes_of(_KEPT_ESCAPES)})++"
    "(?=/|\\Z))*+")


@dataclass(frozen=True, slots=True)
class _Split:
    scheme: str
    authority: str
    path: str
    fragment: str | None


def _shown(url: str) -> str:
    if len(url) > _SHOWN_URL_CHARS:
        return repr(url[:_SHOWN_URL_CHARS]) + "..."
    return repr(url)


class _Rejector:
    """Builds a :class:`SourceURLError` naming what, which URL part, and the URL."""

    __slots__ = ("_url", "_provider")

    def __init__(self, url: str, provider: str) -> None:
        self._url = url
        self._provider = provider

    def __call__(self, what: str, part: str) -> SourceURLError:
        return SourceURLError(
            f"source URL {_shown(self._url)} for provider {self._provider!r} "
            f"rejected: {what}",
            where=part,
        )


def _check_characters(url: str, reject: _Rejector) -> None:
    """Only printable ASCII, no backslash: anything else a URL parser strips or rewrites."""
    # The first character outside U+0021..U+007E or a backslash, found in C; the
    # loop below then names it (every later character is never looked at).
    found = _NOT_PLAIN_ASCII.search(url)
    if found is None:
        return  # U+0021..U+007E without a backslash: nothing below would reject it
    last = len(url) - 1
    for index in range(found.start(), len(url)):
        char = url[index]
        code = ord(char)
        if char in "\t\n\r":
            name = {"\t": "tab", "\n": "newline", "\r": "carriage return"}[char]
            raise reject(
                f"{name} at index {index} (a WHATWG URL parser silently removes it)",
                f"index {index}",
            )
        if code < 0x20 or code == 0x7F:
            raise reject(
                f"control character U+{code:04X} at index {index}", f"index {index}"
            )
        if char == " ":
            position = (
                "leading" if index == 0 else "trailing" if index == last else "inner"
            )
            raise reject(
                f"{position} space at index {index} (a URL parser strips or "
                "percent-encodes it)",
                f"index {index}",
            )
        if char == "\\":
            raise reject(
                f"backslash at index {index} (a WHATWG URL parser reads it as '/')",
                f"index {index}",
            )
        if code > 0x7E:
            raise reject(
                f"non-ASCII character U+{code:04X} at index {index}", f"index {index}"
            )


def _split(url: str, allow_http: bool, reject: _Rejector) -> _Split:
    simple = _SIMPLE_URL.match(url)
    if simple is not None and (allow_http or simple.group(1) == "https"):
        # The common shape in one step: what the steps below find in it.
        return _Split(simple.group(1), simple.group(2), simple.group(3) or "",
                      simple.group(4))
    scheme_end = url.find(":")
    if scheme_end <= 0:
        raise reject("no scheme: a source URL must start with 'https://'", "scheme")
    scheme = url[:scheme_end]
    lowered = scheme.lower()
    if lowered not in _DEFAULT_PORTS:
        raise reject(f"scheme {scheme!r} is not allowed (https only)", "scheme")
    if scheme != lowered:
        raise reject(f"scheme {scheme!r} must be lowercase", "scheme")
    if scheme == "http" and not allow_http:
        raise reject(
            "plain http source is not allowed (https only; loopback needs "
            "allow_local_source_urls=True)",
            "scheme",
        )
    rest = url[scheme_end + 1 :]
    if not rest.startswith("//"):
        raise reject(f"scheme must be followed by '//' ('{scheme}://host/...')", "scheme")
    rest = rest[2:]
    fragment: str | None = None
    hash_at = rest.find("#")
    if hash_at >= 0:
        fragment = rest[hash_at + 1 :]
        rest = rest[:hash_at]
    if "?" in rest:
        raise reject("a query string is not allowed", "query")
    slash_at = rest.find("/")
    if slash_at < 0:
        return _Split(scheme, rest, "", fragment)
    return _Split(scheme, rest[:slash_at], rest[slash_at:], fragment)


def _looks_like_ipv4(host: str) -> bool:
    # WHATWG parses a host as IPv4 when its last label is numeric (decimal, 0x hex).
    labels = host.split(".")
    last = labels[-1] if labels[-1] or len(labels) == 1 else labels[-2]
    if not last:
        return False
    if all(c in _DIGITS for c in last):
        return True
    return last[:2] in ("0x", "0X") and all(c in _HEXDIGITS for c in last[2:])


def _check_host_spelling(host: str, reject: _Rejector) -> None:
    """Reject hosts a URL parser would rewrite, and IP literals, with a precise reason."""
    if not host:
        raise reject("missing host", "host")
    if host.startswith("["):
        raise reject(f"IP literal host {host!r} is not allowed", "host")
    if any("A" <= c <= "Z" for c in host):
        raise reject(
            f"host {host!r} has uppercase letters (a URL parser lowercases it); "
            "write it in lowercase",
            "host",
        )
    if "%" in host:
        raise reject(f"percent-encoded host {host!r} is not allowed", "host")
    if host.endswith("."):
        raise reject(f"trailing dot in host {host!r}", "host")
    bad = [c for c in host if c not in _HOST_CHARS]
    if bad:
        raise reject(f"character {bad[0]!r} is not allowed in host {host!r}", "host")
    labels = host.split(".")
    if any(label.startswith("xn--") for label in labels):
        raise reject(f"IDNA/punycode host {host!r} is not allowed", "host")
    if any(not label for label in labels):
        raise reject(f"empty label in host {host!r}", "host")
    if _looks_like_ipv4(host):
        raise reject(f"IP address host {host!r} is not allowed", "host")


def _check_official_host(host: str, provider: str, reject: _Rejector) -> None:
    sources = OFFICIAL_SOURCES[provider]
    if host == GITHUB_HOST or host in sources.doc_hosts:
        return
    for other, other_sources in OFFICIAL_SOURCES.items():
        if other != provider and host in other_sources.doc_hosts:
            raise reject(
                f"host {host!r} is an official host of provider {other!r}, "
                f"not of {provider!r}",
                "host",
            )
    if host in LOOPBACK_HOSTS:
        raise reject(
            f"loopback host {host!r} needs allow_local_source_urls=True", "host"
        )
    # A host that contains no official host can be no subdomain, extension or
    # lookalike of one (each of those contains it): the loop would find nothing.
    contains = _CONTAINS_OFFICIAL_HOST[provider].search(host) is not None
    official_hosts = sorted(_OFFICIAL_HOSTS[provider])
    for official in official_hosts if contains else ():
        if host.endswith("." + official):
            raise reject(
                f"host {host!r} is a subdomain of official host {official!r}; "
                "only the exact host is official",
                "host",
            )
        if host.startswith(official):
            raise reject(
                f"host {host!r} extends official host {official!r} with a suffix",
                "host",
            )
        if host.endswith(official):
            raise reject(
                f"host {host!r} is a lookalike of official host {official!r}", "host"
            )
    allowed = ", ".join(official_hosts)
    raise reject(
        f"host {host!r} is not an official source for provider {provider!r} "
        f"(allowed: {allowed})",
        "host",
    )


def _check_segment(segment: str, number: int, reject: _Rejector) -> None:
    """One path segment: grammar, percent-encoding (before decoding), then meaning."""
    part = f"path segment {number}"
    if not segment:
        raise reject(
            f"empty path segment {number} (a repeated '//' or a trailing '/')", part
        )
    if _PLAIN_SEGMENT.fullmatch(segment) is not None:
        # No escape: the segment decodes to itself, holds no separator and only
        # printable ASCII; what is left of the checks below is the dot segment.
        if segment.strip("."):
            return
        raise reject(f"dot segment {segment!r}", part)
    # The grammar in one step: plain characters and escapes other than "%25", as
    # far as they go; where they stop, the first error, named as a loop over the
    # characters would name it.
    index = _SEGMENT_GRAMMAR.match(segment).end()  # type: ignore[union-attr]
    if index < len(segment):
        char = segment[index]
        if char == "%":
            pair = segment[index + 1 : index + 3]
            if len(pair) != 2 or any(c not in _HEXDIGITS for c in pair):
                raise reject(
                    f"malformed percent-encoding {segment[index : index + 3]!r} in "
                    f"segment {segment!r} ('%' must be followed by two hex digits)",
                    part,
                )
            raise reject(
                f"nested percent-encoding '%{pair}' in segment {segment!r} "
                "(an encoded '%' decodes into a second escape)",
                part,
            )
        raise reject(
            f"character {char!r} is not allowed in path segment {segment!r}", part
        )
    # Decoded with C-level steps: the text between escapes, and the escapes' bytes
    # (each one character of Latin-1) in their places.
    pieces = _ESCAPE.split(segment)
    pairs = pieces[1::2]
    escaped = bytes.fromhex("".join(pairs)).decode("latin-1")
    pieces[1::2] = escaped
    text = "".join(pieces)
    if "/" in text or "\\" in text:
        raise reject(
            f"encoded separator in path segment {segment!r} (decodes to {text!r})",
            part,
        )
    if set(text) == {"."}:
        how = "" if text == segment else f" (decodes to {text!r})"
        raise reject(f"dot segment {segment!r}{how}", part)
    # Plain characters are printable ASCII: only an escape can decode outside it.
    outside = _NOT_PRINTABLE_ASCII.search(escaped)
    if outside is not None:
        raise reject(
            f"percent-encoded byte 0x{ord(outside.group()):02X} in segment {segment!r} "
            "(controls, spaces and non-ASCII bytes are not allowed)",
            part,
        )
    unreserved = _UNRESERVED_CHAR.search(escaped)
    if unreserved is not None:
        raise reject(
            f"needless percent-encoding '%{pairs[unreserved.start()]}' of an unreserved "
            f"character in segment {segment!r} (it normalizes differently "
            "across URL parsers)",
            part,
        )


def _check_path(path: str, reject: _Rejector) -> list[str]:
    if not path:
        raise reject("missing path: name the page or file ('https://host/...')", "path")
    segments = path[1:].split("/")
    if _PLAIN_PATH.fullmatch(path) is not None and _DOT_SEGMENT.search(path) is None:
        return segments  # what the loop below finds in every segment: nothing
    # The loop finds nothing in the good segments the path starts with either.
    good = path.count("/", 0, _GOOD_SEGMENTS_FIRST.match(path).end())  # type: ignore[union-attr]
    for number, segment in enumerate(segments[good:], start=good + 1):
        _check_segment(segment, number, reject)
    return segments


def _check_fragment(fragment: str | None, reject: _Rejector) -> None:
    if fragment is None:
        return
    if not fragment:
        raise reject("empty fragment (a bare '#')", "fragment")
    bad = _NOT_FRAGMENT_CHAR.search(fragment)  # the first character not allowed, in C
    if bad is not None:
        raise reject(
            f"character {bad.group()!r} is not allowed in fragment {fragment!r}",
            "fragment",
        )


def _check_repository(segments: list[str], provider: str, reject: _Rejector) -> None:
    sources = OFFICIAL_SOURCES[provider]
    owner, repo = sources.github_owner, sources.github_repo
    head = segments[:2]
    if head == [owner, repo]:
        return
    for other, other_sources in OFFICIAL_SOURCES.items():
        if other != provider and head == [
            other_sources.github_owner,
            other_sources.github_repo,
        ]:
            raise reject(
                f"cross-SDK repository: github.com/{'/'.join(head)} is the SDK of "
                f"provider {other!r}, not of {provider!r} "
                f"(expected github.com/{owner}/{repo}/...)",
                "path",
            )
    if [s.lower() for s in head] == [owner.lower(), repo.lower()]:
        raise reject(
            f"repository path /{'/'.join(head)} must match /{owner}/{repo} in exact case",
            "path",
        )
    raise reject(
        f"GitHub path /{'/'.join(head)} is outside the official SDK repository "
        f"(expected /{owner}/{repo}/...)",
        "path",
    )


def _check_github_segments_are_plain(segments: list[str], reject: _Rejector) -> None:
    """No percent-escape at all in a GitHub path: its router decodes them.

    GitHub decodes escapes before routing, so an encoded ':' or '/' inside a ref or
    a compare range (``compare/main...evil%3Afork%3Amain``) can name another
    repository's content under the pinned repository's path. SDK file paths and tags
    never need an escape.
    """
    for number, segment in enumerate(segments, start=1):
        if "%" in segment:
            raise reject(
                f"percent-encoding in GitHub path segment {segment!r} (GitHub decodes "
                "it before routing, so an encoded ':' or '/' can name another "
                "repository); write SDK paths without escapes",
                f"path segment {number}",
            )


def _check_loopback_authority(split: _Split, reject: _Rejector) -> None:
    authority = split.authority
    if authority.startswith("["):
        close = authority.find("]")
        host, port = authority[: close + 1], authority[close + 1 :]
        if close < 0:
            raise reject(f"unterminated IP literal in {authority!r}", "host")
    else:
        colon = authority.find(":")
        host, port = (authority, "") if colon < 0 else (authority[:colon], authority[colon:])
    if host not in LOOPBACK_HOSTS:
        raise reject(f"host {host!r} is not a loopback host", "host")
    if not port:
        return
    digits = port[1:]
    if not port.startswith(":") or not digits:
        raise reject(f"empty or malformed port in {authority!r}", "port")
    if any(c not in _DIGITS for c in digits) or len(digits) > 5 or digits[0] == "0":
        raise reject(
            f"port {digits!r} must be decimal 1-65535 without leading zeros", "port"
        )
    number = int(digits)
    if number > 65535:
        raise reject(f"port {number} is out of range", "port")
    if number == _DEFAULT_PORTS[split.scheme]:
        raise reject(
            f"explicit default port {number} for {split.scheme} (a URL parser drops it); "
            "omit it",
            "port",
        )


def _is_loopback_authority(authority: str) -> bool:
    if authority.startswith("[::1]"):
        return True
    colon = authority.find(":")
    host = authority if colon < 0 else authority[:colon]
    return host in LOOPBACK_HOSTS


def validate_source_url(
    url: str, *, provider: str, allow_local_source_urls: bool = False
) -> str:
    """Return ``url`` unchanged if it is an accepted official source for ``provider``.

    ``provider`` is ``"openai"``, ``"anthropic"`` or ``"google"``. Accepted: an
    ``https`` URL on one of the provider's documentation hosts, or on ``github.com``
    inside the provider's SDK repository (path starting with ``/<owner>/<repo>`` in
    exact case, and no percent-escape anywhere in a GitHub path), in the grammar
    described in the module docstring. ``url`` and ``provider`` must be exactly
    ``str`` (a subclass is rejected). With
    ``allow_local_source_urls=True`` (exactly ``True``), loopback URLs are accepted
    too, for any provider.

    Raises :class:`~contracts.errors.SourceURLError` (and nothing else, for any
    argument values) whose message names what was wrong and whose ``where`` names
    the URL part (``scheme``, ``host``, ``port``, ``userinfo``, ``path``,
    ``path segment N``, ``query``, ``fragment`` or a character index).
    """
    if type(provider) is not str or provider not in OFFICIAL_SOURCES:
        raise SourceURLError(
            f"unknown provider {preview(provider)} (known: {', '.join(sorted(OFFICIAL_SOURCES))})",
            where="provider",
        )
    if type(allow_local_source_urls) is not bool:  # never isinstance(): see fixtures
        raise SourceURLError(
            "allow_local_source_urls must be a bool, got "
            f"{type(allow_local_source_urls).__name__}",
            where="allow_local_source_urls",
        )
    if type(url) is not str:
        # Exactly str: a subclass can override find/split/iteration, so the text we
        # checked would not be the text the caller goes on to use.
        raise SourceURLError(
            f"source URL must be a str (not a subclass), got {type(url).__name__}",
            where="url",
        )
    if len(url) > MAX_URL_LENGTH:
        raise SourceURLError(
            f"source URL is {len(url)} characters long (limit {MAX_URL_LENGTH})",
            where="url",
        )
    reject = _Rejector(url, provider)
    if not url:
        raise reject("empty URL", "url")
    _check_characters(url, reject)
    split = _split(url, allow_local_source_urls, reject)
    authority = split.authority
    # An official host over https: no userinfo, no loopback, no port, no IP
    # literal, and spelled as the host checks want (each listed host passes them,
    # tests/test_provenance.py checks it), so none of the checks below applies.
    local = False
    if split.scheme != "https" or authority not in _OFFICIAL_HOSTS[provider]:
        if "@" in authority:
            raise reject(
                "userinfo ('user@' or '@', even empty) is not allowed in the authority",
                "userinfo",
            )
        local = allow_local_source_urls and _is_loopback_authority(authority)
        if local:
            _check_loopback_authority(split, reject)
        else:
            if split.scheme != "https":
                raise reject(
                    "plain http is allowed only for loopback hosts (https only)", "scheme"
                )
            if authority.startswith("["):
                raise reject(f"IP literal host {authority!r} is not allowed", "host")
            if ":" in authority:
                host, _, port = authority.partition(":")
                what = "an empty port ':'" if not port else f"port {port!r}"
                raise reject(
                    f"{what} is not allowed (no port at all, not even ':443')", "port"
                )
            _check_host_spelling(authority, reject)
            _check_official_host(authority, provider, reject)
    segments = _check_path(split.path, reject)
    _check_fragment(split.fragment, reject)
    if not local and authority == GITHUB_HOST:
        _check_repository(segments, provider, reject)
        if "%" in split.path:
            _check_github_segments_are_plain(segments, reject)
    return url
