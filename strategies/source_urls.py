"""Source URLs: valid official URLs per provider, and attack transformations of them.

An independent model of the provenance rules, written from the documented host list
and grammar, never importing ``contracts.provenance``'s tables or helpers:

* valid: ``https://<official host>/<segment>(/<segment>)*[#fragment]`` where a GitHub
  URL starts with ``/<owner>/<repo>`` of the provider's SDK repository;
* attacks: named transformations of a valid URL that must be rejected.

:func:`accepted_url_problem` is the oracle shared by the property tests and the fuzz
target: for a URL the validator accepted, it re-parses it with
:func:`urllib.parse.urlsplit` and says what is wrong (``None`` when nothing is). It
and the documented hosts live in :mod:`.source_url_model`, without hypothesis, for
the fuzz targets, and are re-exported here.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import strategies as st

from pcfuzz.strategies.source_url_model import (
    DOC_HOSTS,
    LOOPBACK,
    PROVIDERS,
    SDK_REPOSITORIES,
    accepted_url_problem,
)

__all__ = [
    "ATTACKS",
    "DOC_HOSTS",
    "LOOPBACK",
    "PROVIDERS",
    "SDK_REPOSITORIES",
    "AttackedURL",
    "SourceURL",
    "accepted_url_problem",
    "attacked_source_urls",
    "loopback_source_urls",
    "official_source_urls",
    "source_url_parts",
    "url_like_text",
]

_UNRESERVED = string.ascii_letters + string.digits + "-._~"
_SEGMENT_PLAIN = _UNRESERVED + "!$&'()*+,="
_FRAGMENT = _UNRESERVED + "!$&'()*+,;=:@/?"
# Printable ASCII that may appear percent-encoded: not unreserved (would be a needless
# escape), not a separator, not '%' itself.
_ENCODABLE = [c for c in map(chr, range(0x21, 0x7F)) if c not in _UNRESERVED + "/\\%"]


@dataclass(frozen=True)
class SourceURL:
    """A URL built from parts; ``url`` is its spelling."""

    provider: str
    scheme: str
    host: str
    port: str  # "" or ":NNNN" (loopback only)
    segments: tuple[str, ...]
    fragment: str | None

    @property
    def url(self) -> str:
        path = "".join("/" + s for s in self.segments)
        tail = "" if self.fragment is None else "#" + self.fragment
        return f"{self.scheme}://{self.host}{self.port}{path}{tail}"

    @property
    def is_github(self) -> bool:
        return self.host == "github.com"


def _no_dot_only(segment: str) -> str:
    return segment + "a" if set(segment) == {"."} else segment


_escapes = st.tuples(st.sampled_from(_ENCODABLE), st.sampled_from("xX")).map(
    lambda pair: "%" + format(ord(pair[0]), "02" + pair[1])
)
# A path segment: plain pchars, sometimes with a well-formed escape of a reserved char.
_segments = st.one_of(
    st.text(_SEGMENT_PLAIN, min_size=1, max_size=10),
    st.tuples(st.text(_SEGMENT_PLAIN, max_size=4), _escapes, st.text(_SEGMENT_PLAIN, max_size=4))
    .map("".join),
).map(_no_dot_only)


# On GitHub no escape at all (its router decodes them before routing).
_plain_segments = st.text(_SEGMENT_PLAIN, min_size=1, max_size=10).map(_no_dot_only)


def _segment(*, github: bool = False) -> st.SearchStrategy[str]:
    return _plain_segments if github else _segments


_fragments = st.one_of(st.none(), st.text(_FRAGMENT, min_size=1, max_size=12))


@st.composite
def source_url_parts(draw: st.DrawFn, provider: str) -> SourceURL:
    """A valid official source URL for ``provider``, as parts."""
    on_github = draw(st.booleans())
    tail = tuple(
        draw(st.lists(_segment(github=on_github), min_size=0 if on_github else 1, max_size=5))
    )
    if on_github:
        host = "github.com"
        segments = SDK_REPOSITORIES[provider] + tail
    else:
        host = draw(st.sampled_from(DOC_HOSTS[provider]))
        segments = tail
    return SourceURL(provider, "https", host, "", segments, draw(_fragments))


def official_source_urls(provider: str) -> st.SearchStrategy[str]:
    """Valid official source URLs for ``provider`` (strings)."""
    return source_url_parts(provider).map(lambda parts: parts.url)


@st.composite
def loopback_source_urls(draw: st.DrawFn) -> str:
    """Loopback URLs accepted only with ``allow_local_source_urls=True``."""
    scheme = draw(st.sampled_from(["http", "https"]))
    default = 80 if scheme == "http" else 443
    port = draw(
        st.one_of(
            st.just(""),
            st.integers(1, 65535).filter(lambda p: p != default).map(lambda p: f":{p}"),
        )
    )
    host = draw(st.sampled_from(LOOPBACK))
    segments = tuple(draw(st.lists(_segment(), min_size=1, max_size=4)))
    return SourceURL("any", scheme, host, port, segments, draw(_fragments)).url


# --- attacks -----------------------------------------------------------------------


@dataclass(frozen=True)
class AttackedURL:
    """An attack class name and the URL it produced (always to be rejected)."""

    attack: str
    url: str


_Attack = Callable[[SourceURL, st.DrawFn], str]


def _replace_host(parts: SourceURL, host: str) -> str:
    return SourceURL(
        parts.provider, parts.scheme, host, parts.port, parts.segments, parts.fragment
    ).url


def _with_segments(parts: SourceURL, segments: tuple[str, ...]) -> str:
    return SourceURL(
        parts.provider, parts.scheme, parts.host, parts.port, segments, parts.fragment
    ).url


def _insert_segment(parts: SourceURL, draw: st.DrawFn, segment: str) -> str:
    # Anywhere after the pinned repository prefix, or anywhere on a documentation host.
    low = 2 if parts.is_github else 0
    index = draw(st.integers(low, len(parts.segments)))
    return _with_segments(parts, parts.segments[:index] + (segment,) + parts.segments[index:])


def _userinfo(parts: SourceURL, draw: st.DrawFn) -> str:
    info = draw(st.sampled_from(["user@", "user:pass@", "@", ":@", ":pass@", "evil.com@",
                                 parts.host + "@"]))
    if draw(st.booleans()):
        return _replace_host(parts, info + parts.host)
    # The official host in the userinfo, an attacker's host after it.
    return _replace_host(parts, parts.host + "@evil.example")


def _http(parts: SourceURL, draw: st.DrawFn) -> str:
    return "http" + parts.url[len("https"):]


def _scheme_case(parts: SourceURL, draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["HTTPS", "Https", "httpS"]))
    return scheme + parts.url[len("https"):]


def _scheme_shape(parts: SourceURL, draw: st.DrawFn) -> str:
    rest = parts.url[len("https://"):]
    prefix = draw(st.sampled_from(["https:", "https:/", "https:///", "//", "", "ftp://",
                                   "javascript://", "file://"]))
    return prefix + rest


def _port(parts: SourceURL, draw: st.DrawFn) -> str:
    port = draw(st.sampled_from([":443", ":", ":8443", ":0", ":80", ":0443", ":65536"]))
    return _replace_host(parts, parts.host + port)


def _lookalike_host(parts: SourceURL, draw: st.DrawFn) -> str:
    host = parts.host
    label = draw(st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=6))
    lookalike = draw(st.sampled_from([
        f"{host}.evil.example", f"{label}{host}", f"{label}.{host}", f"{host}{label}",
        f"{host}-{label}.example", f"www.{host}", host.replace(".", "-", 1),
        host.replace(".", "", 1),
    ]))
    return _replace_host(parts, lookalike)


def _uppercase_host(parts: SourceURL, draw: st.DrawFn) -> str:
    host = parts.host
    letters = [i for i, c in enumerate(host) if c.isalpha()]
    chosen = set(draw(st.lists(st.sampled_from(letters), min_size=1, unique=True)))
    return _replace_host(
        parts, "".join(c.upper() if i in chosen else c for i, c in enumerate(host))
    )


def _trailing_dot(parts: SourceURL, draw: st.DrawFn) -> str:
    return _replace_host(parts, parts.host + draw(st.sampled_from([".", ".."])))


_HOMOGLYPHS = {"a": "\u0430", "o": "\u043e", "e": "\u0435", "p": "\u0440", "c": "\u0441",
               "i": "\u0456"}


def _idn_host(parts: SourceURL, draw: st.DrawFn) -> str:
    host = parts.host
    if draw(st.booleans()):
        swappable = [i for i, c in enumerate(host) if c in _HOMOGLYPHS]
        i = draw(st.sampled_from(swappable))
        return _replace_host(parts, host[:i] + _HOMOGLYPHS[host[i]] + host[i + 1:])
    first, _, rest = host.partition(".")
    return _replace_host(parts, f"xn--{first}-9ta.{rest}")


def _ip_host(parts: SourceURL, draw: st.DrawFn) -> str:
    host = draw(st.sampled_from(["140.82.112.3", "[::1]", "127.0.0.1", "0x7f.1", "2130706433",
                                 "[2606:4700::1111]", "localhost", "0.0.0.0"]))
    return _replace_host(parts, host)


def _cross_provider_host(parts: SourceURL, draw: st.DrawFn) -> str:
    others = [h for p, hosts in DOC_HOSTS.items() if p != parts.provider for h in hosts]
    return _replace_host(parts, draw(st.sampled_from(others)))


def _cross_repository(parts: SourceURL, draw: st.DrawFn) -> str:
    owner, repo = SDK_REPOSITORIES[parts.provider]
    other = [r for p, r in SDK_REPOSITORIES.items() if p != parts.provider]
    head = draw(st.sampled_from([
        *other,
        (owner.upper(), repo), (owner, repo.title()), (owner, repo + "-evil"),
        (owner, repo + ".git"), (owner + "-evil", repo), ("evil", repo), (repo, owner),
    ]))
    tail = parts.segments[2:] if parts.is_github else parts.segments
    only_owner = draw(st.booleans()) and not tail
    segments = (head[0],) if only_owner else (*head, *tail)
    return SourceURL(parts.provider, "https", "github.com", "", segments, parts.fragment).url


def _dot_segment(parts: SourceURL, draw: st.DrawFn) -> str:
    return _insert_segment(parts, draw, draw(st.sampled_from([".", "..", "...", "...."])))


def _encoded_dot_segment(parts: SourceURL, draw: st.DrawFn) -> str:
    return _insert_segment(parts, draw, draw(st.sampled_from(
        ["%2e", "%2E", ".%2e", "%2e.", "%2E%2e", "%2e%2E", ".%2E"])))


def _nested_encoding(parts: SourceURL, draw: st.DrawFn) -> str:
    nested = draw(st.sampled_from(["%252e", "%252e%252e", "%252f", "%255c", "%25",
                                   "a%2541", "%25%32%65"]))
    return _insert_segment(parts, draw, nested)


def _empty_segment(parts: SourceURL, draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return parts.url.split("#")[0] + "/" + (
            "" if parts.fragment is None else "#" + parts.fragment)
    return _insert_segment(parts, draw, "")


def _encoded_separator(parts: SourceURL, draw: st.DrawFn) -> str:
    sep = draw(st.sampled_from(["%2f", "%2F", "%5c", "%5C"]))
    around = draw(st.sampled_from(["{}", "a{}", "{}b", "..{}..", "a{}..{}b"]))
    return _insert_segment(parts, draw, around.replace("{}", sep))


def _backslash(parts: SourceURL, draw: st.DrawFn) -> str:
    url = parts.url
    slashes = [i for i, c in enumerate(url) if c == "/"]
    i = draw(st.sampled_from(slashes))
    return url[:i] + "\\" + url[i + 1:] if draw(st.booleans()) else url[:i] + "\\" + url[i:]


def _strippable_control(parts: SourceURL, draw: st.DrawFn) -> str:
    url = parts.url
    i = draw(st.integers(0, len(url)))
    return url[:i] + draw(st.sampled_from(["\t", "\n", "\r"])) + url[i:]


def _leading_trailing_space(parts: SourceURL, draw: st.DrawFn) -> str:
    junk = draw(st.text(" \x00\x01\x08\x0b\x0c\x1f", min_size=1, max_size=3))
    where = draw(st.sampled_from(["lead", "trail", "both"]))
    url = parts.url
    return (junk if where != "trail" else "") + url + (junk if where != "lead" else "")


def _non_ascii(parts: SourceURL, draw: st.DrawFn) -> str:
    url = parts.url
    i = draw(st.integers(len("https://"), len(url)))
    char = draw(st.characters(min_codepoint=0x80, exclude_categories=["Cs"]))
    return url[:i] + char + url[i:]


def _bad_percent(parts: SourceURL, draw: st.DrawFn) -> str:
    bad = draw(st.sampled_from(["%", "%2", "%zz", "%g1", "%%", "a%", "%2x", "%-1"]))
    return _insert_segment(parts, draw, bad)


def _github_escape(parts: SourceURL, draw: st.DrawFn) -> str:
    # Any escape in a GitHub path: e.g. a compare range naming a fork with '%3A'.
    owner, repo = SDK_REPOSITORIES[parts.provider]
    escaped = draw(st.sampled_from([
        "main...evil%3A" + repo + "%3Amain", "v1%3Amain", "a%3Bb", "a%40b", "%3F", "x%21",
    ]))
    segments = (owner, repo) + parts.segments[2:] if parts.is_github else (owner, repo)
    index = draw(st.integers(2, len(segments)))
    segments = segments[:index] + (escaped,) + segments[index:]
    return SourceURL(parts.provider, "https", "github.com", "", segments, parts.fragment).url


def _query(parts: SourceURL, draw: st.DrawFn) -> str:
    base = parts.url.split("#")[0]
    return base + draw(st.sampled_from(["?", "?x=1", "?next=https://evil.example/"]))


def _missing_path(parts: SourceURL, draw: st.DrawFn) -> str:
    return f"https://{parts.host}" + draw(st.sampled_from(["", "/", "#top"]))


ATTACKS: dict[str, _Attack] = {
    "userinfo": _userinfo,
    "http_scheme": _http,
    "scheme_case": _scheme_case,
    "scheme_shape": _scheme_shape,
    "port": _port,
    "lookalike_host": _lookalike_host,
    "uppercase_host": _uppercase_host,
    "trailing_dot_host": _trailing_dot,
    "idn_host": _idn_host,
    "ip_literal_host": _ip_host,
    "cross_provider_host": _cross_provider_host,
    "cross_repository": _cross_repository,
    "github_percent_escape": _github_escape,
    "dot_segment": _dot_segment,
    "encoded_dot_segment": _encoded_dot_segment,
    "nested_encoding": _nested_encoding,
    "empty_segment": _empty_segment,
    "encoded_separator": _encoded_separator,
    "backslash": _backslash,
    "tab_newline_cr": _strippable_control,
    "leading_trailing_space_or_control": _leading_trailing_space,
    "non_ascii": _non_ascii,
    "bad_percent_encoding": _bad_percent,
    "query": _query,
    "missing_path": _missing_path,
}


@st.composite
def attacked_source_urls(
    draw: st.DrawFn, provider: str, attack: str | None = None
) -> AttackedURL:
    """A valid URL for ``provider`` transformed by the named attack (or any attack)."""
    parts = draw(source_url_parts(provider))
    name = attack if attack is not None else draw(st.sampled_from(sorted(ATTACKS)))
    return AttackedURL(name, ATTACKS[name](parts, draw))


# --- arbitrary URL-like text ----------------------------------------------------------

_PIECES = [
    "https://", "http://", "HTTPS://", "//", "/", "\\", "@", ":", ":443", "#", "?", "%",
    "%2e", "%2E", "%2f", "%5c", "%25", "%252e", ".", "..", "\t", "\n", " ", "\x00",
    "github.com", "openai", "openai-python", "anthropics", "anthropic-sdk-python",
    "googleapis", "python-genai", "platform.openai.com", "developers.openai.com",
    "docs.anthropic.com", "docs.claude.com", "platform.claude.com", "ai.google.dev",
    "127.0.0.1", "[::1]", "localhost", "evil.example", "xn--", "\u0430", "docs", "a",
]


_PATH_PIECES = [
    "/", "/", "/", "openai", "openai-python", "anthropics", "anthropic-sdk-python",
    "googleapis", "python-genai", "docs", "a", "~", "-", ".", "..", "%2e", "%2E", "%2f",
    "%5c", "%25", "%41", "%3A", "%40", "%3b", "%", "#", "?", "@", ":", ";", "=", "&",
    "\\", "%00", "%20",
]
_HOST_PIECES = [
    "github.com", "platform.openai.com", "developers.openai.com", "docs.anthropic.com",
    "docs.claude.com", "platform.claude.com", "ai.google.dev", "127.0.0.1", "[::1]",
    "localhost", "127.0.0.1:8000", "localhost:80", "[::1]:443", "user@github.com",
    "github.com:443", "GitHub.com", "github.com.",
]


def url_like_text() -> st.SearchStrategy[str]:
    """Text made of URL pieces and arbitrary characters (mostly invalid URLs)."""
    return st.one_of(
        st.text(max_size=60),
        st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=3)), max_size=14).map(
            "".join
        ),
        st.tuples(
            st.sampled_from(["https://", "http://"]),
            st.sampled_from(_HOST_PIECES),
            st.lists(st.sampled_from(_PATH_PIECES), max_size=12).map("".join),
        ).map("".join),
    )
