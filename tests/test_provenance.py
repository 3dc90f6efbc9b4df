"""Source-URL provenance: red-team examples first, then properties.

Rules (see docs/provenance.md): official documentation hosts and the provider's SDK
repository only; https only; no userinfo, port or query; exact lowercase ASCII hosts;
path hygiene segment by segment; characters a WHATWG parser strips or rewrites are
rejected; loopback only with an explicit opt-in.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from _fuzz import load_fuzz_target
from hypothesis import event, example, given
from hypothesis import strategies as st

from pcfuzz.contracts.errors import ContractError, SourceURLError
from pcfuzz.contracts.provenance import MAX_URL_LENGTH, validate_source_url
from pcfuzz.strategies.source_urls import (
    ATTACKS,
    DOC_HOSTS,
    PROVIDERS,
    SDK_REPOSITORIES,
    accepted_url_problem,
    attacked_source_urls,
    loopback_source_urls,
    official_source_urls,
    url_like_text,
)

OPENAI_REPO = "https://github.com/openai/openai-python"
ANTHROPIC_REPO = "https://github.com/anthropics/anthropic-sdk-python"
GOOGLE_REPO = "https://github.com/googleapis/python-genai"


def rejected(url: object, provider: str = "openai", **kwargs: object) -> SourceURLError:
    with pytest.raises(SourceURLError) as info:
        validate_source_url(url, provider=provider, **kwargs)  # type: ignore[arg-type]
    return info.value


# --- accepted ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "url"),
    [
        ("openai", "https://platform.openai.com/docs/api-reference/responses-streaming"),
        ("openai", "https://developers.openai.com/api/docs/guides/function-calling"),
        ("openai", OPENAI_REPO),
        ("openai", OPENAI_REPO + "/blob/v2.46.0/src/openai/types/responses/"
                                "response_stream_event.py#L1-L40"),
        ("anthropic", "https://docs.anthropic.com/en/api/messages-streaming"),
        ("anthropic", "https://docs.claude.com/en/docs/build-with-claude/streaming"),
        ("anthropic", "https://platform.claude.com/docs/en/api/messages"),
        ("anthropic", ANTHROPIC_REPO + "/tree/v0.117.0/src/anthropic/types"),
        ("google", "https://ai.google.dev/gemini-api/docs/interactions#streaming"),
        ("google", GOOGLE_REPO + "/blob/v2.12.1/google/genai/interactions.py"),
        ("google", GOOGLE_REPO + "/compare/v2.12.0...v2.12.1"),
        ("google", "https://ai.google.dev/api/interactions%3Astream"),
    ],
)
def test_official_source_is_accepted_unchanged(provider: str, url: str) -> None:
    assert validate_source_url(url, provider=provider) is url


def test_every_documented_host_and_repository_is_accepted() -> None:
    for provider in PROVIDERS:
        for host in DOC_HOSTS[provider]:
            url = f"https://{host}/docs"
            assert validate_source_url(url, provider=provider) == url
        owner, repo = SDK_REPOSITORIES[provider]
        url = f"https://github.com/{owner}/{repo}/releases"
        assert validate_source_url(url, provider=provider) == url


# --- userinfo, scheme, port --------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://user@platform.openai.com/docs",
        "https://user:secret@platform.openai.com/docs",
        "https://@platform.openai.com/docs",
        "https://:@platform.openai.com/docs",
        "https://platform.openai.com@evil.example/docs",
        "https://platform.openai.com:443@evil.example/docs",
    ],
)
def test_url_userinfo_is_rejected(url: str) -> None:
    error = rejected(url)
    assert error.where == "userinfo"
    assert "userinfo" in str(error)


@pytest.mark.parametrize(
    "url",
    [
        "http://platform.openai.com/docs",
        "http://github.com/openai/openai-python",
        "HTTP://platform.openai.com/docs",
    ],
)
def test_http_source_is_rejected(url: str) -> None:
    assert rejected(url).where == "scheme"


@pytest.mark.parametrize(
    "url",
    [
        "HTTPS://platform.openai.com/docs",
        "Https://platform.openai.com/docs",
        "ftp://platform.openai.com/docs",
        "javascript://platform.openai.com/docs",
        "https:platform.openai.com/docs",
        "https:/platform.openai.com/docs",
    ],
)
def test_scheme_must_be_lowercase_https_with_slashes(url: str) -> None:
    assert rejected(url).where == "scheme"


@pytest.mark.parametrize(
    "url",
    [
        "https://platform.openai.com:443/docs",
        "https://platform.openai.com:/docs",
        "https://platform.openai.com:8443/docs",
        "https://github.com:443/openai/openai-python",
    ],
)
def test_any_port_is_rejected_even_the_default(url: str) -> None:
    error = rejected(url)
    assert error.where == "port"
    assert "port" in str(error)


# --- hosts ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "url"),
    [
        ("openai", "https://platform.openai.com.evil.example/docs"),
        ("openai", "https://evilplatform.openai.com/docs"),
        ("openai", "https://api.platform.openai.com/docs"),
        ("openai", "https://openai.com/docs"),
        ("openai", "https://platform.openai.co/docs"),
        ("openai", "https://www.github.com/openai/openai-python"),
        ("openai", "https://gist.github.com/openai/openai-python"),
        ("anthropic", "https://docs.anthropic.com.evil.example/en"),
        ("anthropic", "https://evil-docs.claude.com/en"),
        ("google", "https://ai.google.devx/docs"),
        ("google", "https://ai.google.dev.example/docs"),
        ("google", "https://raw.githubusercontent.com/googleapis/python-genai/main/x"),
    ],
)
def test_lookalike_official_subdomain_is_rejected(provider: str, url: str) -> None:
    assert rejected(url, provider).where == "host"


@pytest.mark.parametrize(
    ("provider", "url", "reason"),
    [
        ("openai", "https://x.platform.openai.com/docs", "is a subdomain of official host"),
        ("google", "https://x.github.com/googleapis/python-genai", "is a subdomain of"),
        ("openai", "https://platform.openai.com-x/docs", "extends official host"),
        ("anthropic", "https://evildocs.claude.com/x", "is a lookalike of official host"),
    ],
)
def test_lookalike_host_is_named_as_such(provider: str, url: str, reason: str) -> None:
    # Not just "not an official source": the message says which official host the
    # URL imitates and how.
    assert reason in str(rejected(url, provider))


@pytest.mark.parametrize(
    ("provider", "url"),
    [
        ("anthropic", "https://docs.anthropic.com./en/api"),
        ("openai", "https://platform.openai.com./docs"),
        ("google", "https://github.com./googleapis/python-genai"),
    ],
)
def test_trailing_dot_host_is_rejected(provider: str, url: str) -> None:
    error = rejected(url, provider)
    assert error.where == "host"
    assert "trailing dot" in str(error)


@pytest.mark.parametrize(
    "url",
    [
        "https://Platform.openai.com/docs",
        "https://PLATFORM.OPENAI.COM/docs",
        "https://GitHub.com/openai/openai-python",
    ],
)
def test_uppercase_host_is_rejected_not_lowercased(url: str) -> None:
    error = rejected(url)
    assert error.where == "host"
    assert "uppercase" in str(error)


@pytest.mark.parametrize(
    "url",
    [
        "https://xn--latform-2of.openai.com/docs",
        "https://platform.xn--openai-9ta.com/docs",
    ],
)
def test_punycode_host_is_rejected(url: str) -> None:
    assert "punycode" in str(rejected(url))


@pytest.mark.parametrize(
    "url",
    [
        "https://pl\u0430tform.openai.com/docs",  # Cyrillic a
        "https://platform.openai.com\u3002/docs",  # ideographic full stop
        "https://platform\uff0eopenai.com/docs",  # fullwidth full stop
        "https://github.com/openai/openai\u2010python",
    ],
)
def test_non_ascii_anywhere_is_rejected(url: str) -> None:
    assert "non-ASCII" in str(rejected(url))


@pytest.mark.parametrize(
    "url",
    [
        "https://140.82.112.3/openai/openai-python",
        "https://[2606:4700::1111]/docs",
        "https://0x7f.1/docs",
        "https://2130706433/docs",
    ],
)
def test_ip_literal_host_is_rejected(url: str) -> None:
    error = rejected(url)
    assert error.where == "host"
    assert "IP" in str(error)


@pytest.mark.parametrize(
    ("provider", "url"),
    [
        ("openai", "https://docs.anthropic.com/en/api"),
        ("anthropic", "https://ai.google.dev/gemini-api/docs"),
        ("google", "https://platform.openai.com/docs"),
    ],
)
def test_another_providers_documentation_host_is_rejected(provider: str, url: str) -> None:
    assert "official host of provider" in str(rejected(url, provider))


# --- repositories -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "url"),
    [
        ("openai", ANTHROPIC_REPO + "/blob/main/README.md"),
        ("openai", GOOGLE_REPO),
        ("anthropic", OPENAI_REPO + "/tree/v2.46.0"),
        ("anthropic", GOOGLE_REPO),
        ("google", OPENAI_REPO),
        ("google", ANTHROPIC_REPO + "/blob/v0.117.0/src/anthropic/types/message.py"),
    ],
)
def test_cross_sdk_repository_is_rejected(provider: str, url: str) -> None:
    error = rejected(url, provider)
    assert error.where == "path"
    assert "cross-SDK repository" in str(error)


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/openai",
        "https://github.com/openai/openai-python-evil",
        "https://github.com/openai/openai-python.git",
        "https://github.com/openai-evil/openai-python",
        "https://github.com/evil/openai-python/blob/main/x.py",
        "https://github.com/openai/openai-node",
        "https://github.com/OpenAI/openai-python",
        "https://github.com/openai/OpenAI-Python",
    ],
)
def test_github_path_must_stay_inside_the_pinned_repository(url: str) -> None:
    assert rejected(url).where == "path"


# --- path hygiene ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        OPENAI_REPO + "/../../anthropics/anthropic-sdk-python",
        OPENAI_REPO + "/./blob/main",
        OPENAI_REPO + "/..",
        "https://github.com/openai/../evil/openai-python",
        "https://platform.openai.com/docs/../../x",
        OPENAI_REPO + "/%2e%2e/x",
        OPENAI_REPO + "/%2E%2E/x",
        OPENAI_REPO + "/.%2e/x",
        OPENAI_REPO + "/%2e./x",
        OPENAI_REPO + "/%2e/x",
        OPENAI_REPO + "/.../x",
    ],
)
def test_dot_segment_is_rejected(url: str) -> None:
    error = rejected(url)
    assert error.where is not None and error.where.startswith("path segment")
    assert "dot segment" in str(error)


@pytest.mark.parametrize(
    "url",
    [
        OPENAI_REPO + "/a%2fb",
        OPENAI_REPO + "%2f..%2f..%2fanthropics",
        OPENAI_REPO + "/a%2Fb",
        OPENAI_REPO + "/a%5cb",
        OPENAI_REPO + "/..%5C..%5Cx",
        "https://platform.openai.com/docs%2fapi",
    ],
)
def test_encoded_separator_is_rejected(url: str) -> None:
    assert "encoded separator" in str(rejected(url))


@pytest.mark.parametrize(
    "url",
    [
        OPENAI_REPO + "//blob/main",
        "https://github.com//openai/openai-python",
        "https://github.com/openai//openai-python",
        OPENAI_REPO + "/blob/main/",
        "https://platform.openai.com/docs/",
        "https://platform.openai.com/",
    ],
)
def test_repeated_separator_and_empty_segment_are_rejected(url: str) -> None:
    assert "empty path segment" in str(rejected(url))


@pytest.mark.parametrize(
    "url",
    [
        OPENAI_REPO + "\\..\\..\\anthropics",
        "https://github.com\\openai/openai-python",
        "https:\\\\platform.openai.com/docs",
        "https://platform.openai.com/docs\\x",
    ],
)
def test_backslash_is_rejected(url: str) -> None:
    assert "backslash" in str(rejected(url))


@pytest.mark.parametrize(
    "url",
    [
        OPENAI_REPO + "/%252e%252e/x",
        OPENAI_REPO + "/%252f",
        OPENAI_REPO + "/a%25",
        OPENAI_REPO + "/%25%32%65",
    ],
)
def test_nested_percent_encoding_is_rejected(url: str) -> None:
    assert "nested percent-encoding" in str(rejected(url))


@pytest.mark.parametrize(
    "url",
    [
        OPENAI_REPO + "/%",
        OPENAI_REPO + "/a%2",
        OPENAI_REPO + "/%zz",
        OPENAI_REPO + "/%g0",
        OPENAI_REPO + "/%-1x",
        OPENAI_REPO + "/%%32e",
    ],
)
def test_percent_encoding_is_validated_before_decoding(url: str) -> None:
    assert "malformed percent-encoding" in str(rejected(url))


@pytest.mark.parametrize("escape", ["%61", "%41", "%7E", "%2D", "%5F", "%30"])
def test_needless_encoding_of_unreserved_characters_is_rejected(escape: str) -> None:
    assert "needless percent-encoding" in str(rejected(OPENAI_REPO + f"/x{escape}y"))


@pytest.mark.parametrize("escape", ["%00", "%09", "%0A", "%20", "%7F", "%C3%A9", "%FF"])
def test_encoded_control_space_or_non_ascii_byte_is_rejected(escape: str) -> None:
    assert "percent-encoded byte" in str(rejected(OPENAI_REPO + f"/x{escape}y"))


@pytest.mark.parametrize("char", [";", ":", "@", '"', "<", ">", "`", "{", "}", "|", "^", "[", "]"])
def test_path_character_outside_the_conservative_grammar_is_rejected(char: str) -> None:
    assert "not allowed in path segment" in str(rejected(OPENAI_REPO + f"/a{char}b"))


# --- characters a WHATWG parser strips or rewrites -------------------------------------


@pytest.mark.parametrize(
    ("url", "what"),
    [
        ("https://platform.openai.com/do\tcs", "tab"),
        ("https://platform.openai.com/do\ncs", "newline"),
        ("https://platform.openai.com/do\rcs", "carriage return"),
        ("ht\ttps://platform.openai.com/docs", "tab"),
        ("https://plat\nform.openai.com/docs", "newline"),
        (OPENAI_REPO + "/.\t./x", "tab"),
        (" https://platform.openai.com/docs", "leading space"),
        ("https://platform.openai.com/docs ", "trailing space"),
        ("https://platform.openai.com/do cs", "inner space"),
        ("\x00https://platform.openai.com/docs", "control character"),
        ("https://platform.openai.com/docs\x1f", "control character"),
        ("https://platform.openai.com/docs\x7f", "control character"),
    ],
)
def test_characters_a_url_parser_strips_are_rejected_not_normalized(url: str, what: str) -> None:
    error = rejected(url)
    assert what in str(error)
    assert error.where is not None and error.where.startswith("index ")


# The characters the validator reads one by one, written down here from the module
# docstring's grammar (printable ASCII, no backslash; RFC 3986 pchar minus ";", ":",
# "@" and "%" for segments; RFC 3986 fragment minus "%" for fragments).
PRINTABLE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "\\")
SEGMENT_CHARS = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,="
)
FRAGMENT_CHARS = SEGMENT_CHARS + ";:@/?"
STRIPPED = ["\t", "\n", "\r", " ", "\\", "\x00", "\x1f", "\x7f", "\x80", "\xe9",
            "\u2028", "\uff0e", "\udc80"]


def test_the_first_stripped_character_is_named_not_a_later_one() -> None:
    # A search that scans from the end, or stops at the first non-ASCII character
    # only, names the wrong index.
    error = rejected("https://platform.openai.com/a b\tc\u00e9")
    assert error.where == "index 29" and "inner space" in str(error)
    error = rejected("https://platform.openai.com/\u00e9\\")
    assert error.where == "index 28" and "non-ASCII character U+00E9" in str(error)


@given(
    st.text(alphabet=PRINTABLE, max_size=40),
    st.sampled_from(STRIPPED),
    st.text(max_size=20),
)
def test_the_first_character_outside_printable_ascii_is_named_with_its_index(
    before: str, bad: str, after: str
) -> None:
    event(f"stripped character {bad!r}")
    prefix = "https://platform.openai.com/" + before
    error = rejected(prefix + bad + after)
    assert error.where == f"index {len(prefix)}"
    assert f"at index {len(prefix)}" in str(error)


HEX = "0123456789abcdefABCDEF"
UNRESERVED = SEGMENT_CHARS[:66]  # letters, digits, "-._~"


def segment_error(segment: str) -> tuple[str, bool] | None:
    """The segment rules as a loop over the characters (the module docstring's
    order: grammar left to right, then separators, dot segment, byte range, needless
    escapes): (what is wrong, whether it is a grammar error) or None."""
    decoded: list[str] = []
    needless = ""
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "%":
            pair = segment[index + 1 : index + 3]
            if len(pair) != 2 or any(c not in HEX for c in pair):
                return (f"malformed percent-encoding {segment[index : index + 3]!r} in "
                        f"segment {segment!r} ('%' must be followed by two hex digits)"), True
            if pair == "25":
                return (f"nested percent-encoding '%{pair}' in segment {segment!r} "
                        "(an encoded '%' decodes into a second escape)"), True
            decoded.append(chr(int(pair, 16)))
            if decoded[-1] in UNRESERVED and not needless:
                needless = "%" + pair
            index += 3
            continue
        if char not in SEGMENT_CHARS:
            return f"character {char!r} is not allowed in path segment {segment!r}", True
        decoded.append(char)
        index += 1
    text = "".join(decoded)
    if "/" in text or "\\" in text:
        return f"encoded separator in path segment {segment!r} (decodes to {text!r})", False
    if text and set(text) == {"."}:
        how = "" if text == segment else f" (decodes to {text!r})"
        return f"dot segment {segment!r}{how}", False
    for char in text:
        if not 0x21 <= ord(char) <= 0x7E:
            return (f"percent-encoded byte 0x{ord(char):02X} in segment {segment!r} "
                    "(controls, spaces and non-ASCII bytes are not allowed)"), False
    if needless:
        return (f"needless percent-encoding {needless!r} of an unreserved character in "
                f"segment {segment!r} (it normalizes differently across URL parsers)"), False
    return None


ESCAPES = ["%2e", "%2E", "%2f", "%5C", "%25", "%41", "%7e", "%7F", "%20", "%e9", "%00",
           "%3a", "%G1", "%4", "%", "%%"]


@given(
    st.lists(
        st.lists(st.one_of(st.text(alphabet=SEGMENT_CHARS + ":;@[]\"{}", max_size=4),
                           st.sampled_from(ESCAPES)), min_size=1, max_size=5).map("".join),
        min_size=1, max_size=4,
    ),
    st.one_of(st.none(), st.text(alphabet=FRAGMENT_CHARS + "%#<>[]{}|^`\"", max_size=12)),
)
@example(["%2e%2E"], None)
@example(["a", "b%2Fc"], None)
@example(["a%7Fb%41"], None)
@example(["a%41%2d"], None)
@example(["a%3A%41"], None)
@example(["a%41", "%25"], None)
@example(["a%4"], None)
@example(["a%20"], None)
@example(["b%3F", "a%5c"], None)
@example(["b%3F", "c%40", "d%2E"], None)
@example(["a%e9;"], None)
@example(["docs", "x%3A"], "a<b")
def test_path_and_fragment_are_judged_as_a_loop_over_their_characters_would(
    segments: list[str], fragment: str | None
) -> None:
    # The validator finds the first error of a segment with regexes (how far the
    # grammar holds, then the decoded text); a loop over the characters is the
    # reference: same verdict, same message, same part.
    url = "https://ai.google.dev/" + "/".join(segments)
    if fragment is not None:
        url += "#" + fragment
    expected: tuple[str, str] | None = None
    for number, segment in enumerate(segments, start=1):
        if not segment:
            expected = (f"empty path segment {number} (a repeated '//' or a trailing '/')",
                        f"path segment {number}")
            event("empty segment")
            break
        found = segment_error(segment)
        if found is not None:
            what, grammar = found
            event(f"{'grammar' if grammar else 'meaning'}: {what.split(' ')[0]}")
            expected = (what, f"path segment {number}")
            break
    else:
        event("escaped segments pass" if "%" in url.split("#")[0] else "plain segments pass")
        if fragment == "":
            expected = ("empty fragment (a bare '#')", "fragment")
        elif fragment is not None:
            bad = [c for c in fragment if c not in FRAGMENT_CHARS]
            if bad:
                event("fragment error")
                expected = (f"character {bad[0]!r} is not allowed in fragment {fragment!r}",
                            "fragment")
    if expected is None:
        assert validate_source_url(url, provider="google") is url
        return
    error = rejected(url, provider="google")
    assert (error.message.split(" rejected: ", 1)[1], error.where) == expected


def test_every_official_host_passes_the_host_spelling_checks() -> None:
    # The validator skips the spelling checks for a host that is official for the
    # provider: sound only while each listed host is one they accept as written.
    from pcfuzz.contracts import provenance

    reject = provenance._Rejector("https://x/", "openai")
    hosts = {provenance.GITHUB_HOST}
    for sources in provenance.OFFICIAL_SOURCES.values():
        hosts |= sources.doc_hosts
    for host in sorted(hosts):
        provenance._check_host_spelling(host, reject)
    with pytest.raises(SourceURLError):
        provenance._check_host_spelling("Docs.Anthropic.com", reject)


ALL_OFFICIAL_HOSTS = sorted({"github.com", *(h for hosts in DOC_HOSTS.values() for h in hosts)})


@given(
    st.text(alphabet="abcgithu.-", max_size=6),
    st.one_of(st.sampled_from(ALL_OFFICIAL_HOSTS), st.text(alphabet="abcdmo.-", max_size=10)),
    st.text(alphabet="abcgithu.-", max_size=6),
    st.sampled_from(PROVIDERS),
)
@example("a", "platform.openai.com", "", "openai")
@example("", "github.com", ".x", "google")
@example("x.", "docs.claude.com", "", "anthropic")
@example("b", "ai.google.dev", "", "openai")
def test_host_shortcut_decides_as_the_lookalike_loop(
    before: str, middle: str, after: str, provider: str
) -> None:
    # The validator skips its loop over the official hosts (subdomain, extension,
    # lookalike) when the host contains none of them; with the loop always run, the
    # verdict and message are the same.
    from pcfuzz.contracts import provenance

    url = f"https://{before}{middle}{after}/docs"
    host = before + middle + after
    own = [h for h in {"github.com", *DOC_HOSTS[provider]} if h in host]
    event("contains an official host of the provider" if own else "contains none of them")

    def outcome() -> tuple[str, str | None]:
        try:
            return validate_source_url(url, provider=provider), None
        except SourceURLError as exc:
            return exc.message, exc.where

    fast = outcome()
    saved = provenance._CONTAINS_OFFICIAL_HOST
    provenance._CONTAINS_OFFICIAL_HOST = {p: re.compile("") for p in PROVIDERS}
    try:
        assert outcome() == fast
    finally:
        provenance._CONTAINS_OFFICIAL_HOST = saved


@given(
    st.one_of(url_like_text(),
              st.tuples(st.sampled_from(["https://", "http://"]),
                        st.sampled_from(ALL_OFFICIAL_HOSTS),
                        st.sampled_from(["", "/", "/docs", "/a/%41", "/x#y", ":443/x", "@/x"]),
                        ).map("".join),
              st.tuples(st.sampled_from(["https://", "http://", "HTTPS://", "https:/", "http:"]),
                        st.text(alphabet="ab/?#:.@[]%", max_size=12),
                        st.sampled_from(ALL_OFFICIAL_HOSTS + ["127.0.0.1:8080", "localhost"]),
                        st.text(alphabet="ab/?#:.@%", max_size=12)).map("".join)),
    st.sampled_from(PROVIDERS),
    st.booleans(),
)
@example("http://platform.openai.com/docs", "openai", True)
@example("https://github.com/openai/openai-python", "google", False)
@example("https://a", "openai", False)  # a host rejected with the allowed hosts listed
def test_simple_url_shortcut_splits_as_the_steps_do(url: str, provider: str, local: bool) -> None:
    # One regex cuts the common shape (https or http, "//", no "?" before "#") into
    # scheme, authority, path and fragment, and an official host over https skips the
    # authority checks; with both shortcuts disabled the steps cut and check every
    # URL: same verdict, same message, same part.
    from pcfuzz.contracts import provenance

    def outcome() -> tuple[str, str | None]:
        try:
            return validate_source_url(url, provider=provider,
                                       allow_local_source_urls=local), None
        except SourceURLError as exc:
            return exc.message, exc.where

    fast = outcome()
    event(f"{'accepted' if fast[1] is None else 'rejected at ' + fast[1].split(' ')[0]}")
    event("simple shape" if provenance._SIMPLE_URL.match(url) else "other shape")
    saved = provenance._SIMPLE_URL, provenance._OFFICIAL_HOSTS
    provenance._SIMPLE_URL = re.compile(r"(?!)")
    # The official-host shortcut is a membership test; the host checks' messages and
    # lookalike loop iterate the same hosts. Membership says no here (the shortcut
    # never applies), iteration still gives every host (before, empty sets also
    # emptied "allowed: ..." in a rejection, and a random seed's 'https://a' failed).
    provenance._OFFICIAL_HOSTS = {p: _NeverMember(h) for p, h in saved[1].items()}
    try:
        assert outcome() == fast
    finally:
        provenance._SIMPLE_URL, provenance._OFFICIAL_HOSTS = saved


class _NeverMember(frozenset[str]):
    """The hosts when iterated, none of them when tested for membership."""

    def __contains__(self, item: object) -> bool:
        return False


def test_query_string_is_rejected() -> None:
    for url in (
        "https://platform.openai.com/docs?x=1",
        "https://platform.openai.com/docs?",
        "https://platform.openai.com?/docs",
        OPENAI_REPO + "?next=https://evil.example/",
    ):
        assert rejected(url).where == "query"


def test_fragment_uses_a_conservative_character_set() -> None:
    assert validate_source_url(OPENAI_REPO + "#readme", provider="openai")
    assert validate_source_url(OPENAI_REPO + "/blob/main/x.py#L1-L9", provider="openai")
    for url in (OPENAI_REPO + "#", OPENAI_REPO + "#a%2e", OPENAI_REPO + "#a#b",
                OPENAI_REPO + '#a"b', OPENAI_REPO + "#<x>"):
        assert rejected(url).where == "fragment"


def test_fragment_cannot_smuggle_a_host() -> None:
    error = rejected("https://platform.openai.com#@evil.example/docs")
    assert error.where == "path"


# --- malformed input (data boundary) -----------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["", "not a url", "platform.openai.com/docs", "https://", "https:", "://x", "https//x",
     "https:///platform.openai.com/docs", "https://platform.openai.com", "%", "#", "https://#x",
     "https://:443/docs", "https://./docs", "https://.openai.com/docs", "https://a..b/docs"],
)
def test_malformed_url_is_rejected(url: str) -> None:
    rejected(url)


@pytest.mark.parametrize("value", [None, b"https://platform.openai.com/docs", 42, ["x"]])
def test_non_string_url_is_rejected(value: object) -> None:
    assert rejected(value).where == "url"


def test_unknown_provider_is_rejected() -> None:
    for provider in ("gemini", "OpenAI", "", None):
        with pytest.raises(SourceURLError) as info:
            validate_source_url(
                "https://platform.openai.com/docs",
                provider=provider,  # type: ignore[arg-type]
            )
        assert info.value.where == "provider"


def test_overlong_url_is_rejected_by_the_length_limit() -> None:
    url = OPENAI_REPO + "/" + "a" * MAX_URL_LENGTH
    error = rejected(url)
    assert error.where == "url"
    assert str(MAX_URL_LENGTH) in str(error)


def test_error_message_names_the_url_and_the_provider() -> None:
    error = rejected("https://docs.anthropic.com/en", "openai")
    assert "'https://docs.anthropic.com/en'" in str(error)
    assert "'openai'" in str(error)


# --- local loopback opt-in ---------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/fixtures/openai.json",
        "http://localhost:8000/fixtures/openai.json",
        "http://[::1]:8000/fixtures/openai.json",
        "https://127.0.0.1/fixtures/x",
        "http://localhost/x#top",
    ],
)
def test_local_loopback_needs_the_explicit_opt_in(url: str) -> None:
    rejected(url)
    rejected(url, allow_local_source_urls=False)
    for provider in PROVIDERS:
        assert validate_source_url(url, provider=provider, allow_local_source_urls=True) == url


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.2/x",
        "http://0.0.0.0:8000/x",
        "http://127.1/x",
        "http://2130706433/x",
        "http://localhost.evil.example/x",
        "http://127.0.0.1.nip.io/x",
        "http://evil.example/x",
        "http://platform.openai.com/docs",
        "http://LOCALHOST/x",
        "http://[::ffff:127.0.0.1]/x",
        "http://[0:0:0:0:0:0:0:1]/x",
    ],
)
def test_local_opt_in_opens_loopback_only(url: str) -> None:
    rejected(url, allow_local_source_urls=True)


@pytest.mark.parametrize(
    ("url", "where"),
    [
        ("http://user@127.0.0.1:8000/x", "userinfo"),
        ("http://127.0.0.1:80/x", "port"),
        ("https://127.0.0.1:443/x", "port"),
        ("http://127.0.0.1:/x", "port"),
        ("http://127.0.0.1:08000/x", "port"),
        ("http://127.0.0.1:65536/x", "port"),
        ("http://127.0.0.1:8000/../x", "path segment 1"),
        ("http://127.0.0.1:8000//x", "path segment 1"),
        ("http://127.0.0.1:8000/%2e%2e/x", "path segment 1"),
        ("http://127.0.0.1:8000", "path"),
        ("http://127.0.0.1:8000/x?y", "query"),
    ],
)
def test_loopback_urls_keep_every_other_rule(url: str, where: str) -> None:
    assert rejected(url, allow_local_source_urls=True).where == where


def test_local_opt_in_still_accepts_official_sources() -> None:
    url = OPENAI_REPO + "/blob/main/README.md"
    assert validate_source_url(url, provider="openai", allow_local_source_urls=True) == url
    rejected(ANTHROPIC_REPO, "openai", allow_local_source_urls=True)


@pytest.mark.parametrize("flag", [1, "yes", None])
def test_local_opt_in_must_be_exactly_a_bool(flag: object) -> None:
    assert rejected("http://127.0.0.1:8000/x", allow_local_source_urls=flag).where == (
        "allow_local_source_urls"
    )


# --- properties ------------------------------------------------------------------------


@given(data=st.data())
def test_valid_official_url_is_accepted_and_urlsplit_agrees(data: st.DataObject) -> None:
    provider = data.draw(st.sampled_from(PROVIDERS))
    url = data.draw(official_source_urls(provider))
    parts = urlsplit(url)
    event(f"provider={provider} host={parts.netloc}")
    assert validate_source_url(url, provider=provider) is url
    assert parts.scheme == "https"
    assert parts.username is None and parts.password is None and parts.port is None
    assert parts.netloc in {*DOC_HOSTS[provider], "github.com"}
    if parts.netloc == "github.com":
        owner, repo = SDK_REPOSITORIES[provider]
        assert parts.path.split("/")[1:3] == [owner, repo]
    assert accepted_url_problem(url, provider, allow_local=False) is None


@given(provider=st.sampled_from(PROVIDERS), url=loopback_source_urls())
def test_loopback_url_is_accepted_only_with_opt_in(provider: str, url: str) -> None:
    event(f"loopback host={urlsplit(url).hostname}")
    with pytest.raises(SourceURLError):
        validate_source_url(url, provider=provider)
    assert validate_source_url(url, provider=provider, allow_local_source_urls=True) is url
    assert accepted_url_problem(url, provider, allow_local=True) is None


@pytest.mark.parametrize("attack", sorted(ATTACKS))
@given(data=st.data())
def test_every_attack_class_is_rejected(attack: str, data: st.DataObject) -> None:
    provider = data.draw(st.sampled_from(PROVIDERS))
    attacked = data.draw(attacked_source_urls(provider, attack))
    event(f"attack={attacked.attack} provider={provider}")
    with pytest.raises(SourceURLError):
        validate_source_url(attacked.url, provider=provider)


@given(provider=st.sampled_from(PROVIDERS), text=url_like_text(), local=st.booleans())
def test_arbitrary_text_raises_only_source_url_error(provider: str, text: str, local: bool) -> None:
    try:
        accepted = validate_source_url(text, provider=provider, allow_local_source_urls=local)
    except SourceURLError as error:
        event(f"rejected at {str(error.where).split(' ')[0]}")
        return
    except ContractError as error:  # pragma: no cover - a wrong subclass is a bug
        raise AssertionError(f"wrong error class {type(error).__name__}") from error
    event("accepted")
    assert accepted is text
    assert accepted_url_problem(text, provider, allow_local=local) is None


@pytest.mark.parametrize("attack", sorted(ATTACKS))
@given(data=st.data())
def test_fuzz_oracle_flags_every_attack_class(attack: str, data: st.DataObject) -> None:
    # The fuzz target's oracle must have teeth: it flags each attack on its own,
    # so a validator that accepted one would crash the target.
    provider = data.draw(st.sampled_from(PROVIDERS))
    attacked = data.draw(attacked_source_urls(provider, attack))
    event(f"attack={attack}")
    assert accepted_url_problem(attacked.url, provider, allow_local=False) is not None


# --- the fuzz target ---------------------------------------------------------------


def _fuzz_target() -> Any:
    return load_fuzz_target("fuzz_source_url")


@pytest.mark.parametrize(
    "data",
    [b"", b"\x00", b"\x00https://platform.openai.com/docs", b"\x05http://[::1]:8000/x",
     b"\x02https://ai.google.dev/\xff\xfe", b"\x01https://docs.claude.com/\xed\xa0\x80"],
)
def test_fuzz_target_accepts_and_rejects_without_crashing(data: bytes) -> None:
    _fuzz_target().TestOneInput(data)


def test_fuzz_target_crashes_when_the_validator_accepts_an_attack(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = _fuzz_target()
    monkeypatch.setattr(target, "validate_source_url", lambda url, **_: url)
    for data in (b"\x00https://user@platform.openai.com/docs",
                 b"\x00https://github.com/openai/openai-python/../../anthropics/x",
                 b"\x00https://platform.openai.com:443/docs",
                 b"\x00https://platform.openai.com/do\tcs",
                 b"\x00https://github.com/openai/openai-python/compare/a...b%3Ac%3Amain"):
        with pytest.raises(RuntimeError):
            target.TestOneInput(data)


_EDIT_CHARS = st.sampled_from(list("/\\.%@:#?;~-_ \t\nAaZz09") + ["%2e", "%2f", "%25", "\u0430"])


@given(data=st.data())
def test_near_valid_urls_are_rejected_or_satisfy_the_oracle(data: st.DataObject) -> None:
    # Single edits of valid URLs probe the boundary of the grammar from both sides.
    provider = data.draw(st.sampled_from(PROVIDERS))
    url = data.draw(official_source_urls(provider))
    kind = data.draw(st.sampled_from(["insert", "delete", "replace"]))
    i = data.draw(st.integers(0, len(url) - 1))
    piece = data.draw(_EDIT_CHARS)
    edited = {
        "insert": url[:i] + piece + url[i:],
        "delete": url[:i] + url[i + 1:],
        "replace": url[:i] + piece + url[i + 1:],
    }[kind]
    try:
        validate_source_url(edited, provider=provider)
    except SourceURLError:
        event(f"{kind}: rejected")
        return
    event(f"{kind}: accepted")
    assert accepted_url_problem(edited, provider, allow_local=False) is None, edited


# --- GitHub paths carry no percent-escape ----------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        # A compare range naming a fork: GitHub decodes %3A before routing.
        OPENAI_REPO + "/compare/main...evil%3Aopenai-python%3Amain",
        OPENAI_REPO + "/blob/v2.46.0%3Aevil/x.py",
        OPENAI_REPO + "/a%3Bb",
        OPENAI_REPO + "/a%40b",
        OPENAI_REPO + "/a%3fb",
        GOOGLE_REPO + "/blob/v2.12.1/google/genai/x%21.py",
    ],
)
def test_github_path_must_not_carry_percent_escapes(url: str) -> None:
    provider = "google" if url.startswith(GOOGLE_REPO) else "openai"
    error = rejected(url, provider)
    assert error.where is not None and error.where.startswith("path segment")
    assert "percent-encoding in GitHub path" in str(error)
    # The same escape stays acceptable on a documentation host (no router decoding).
    doc_url = "https://platform.openai.com/docs" + url[len(OPENAI_REPO):]
    if url.startswith(OPENAI_REPO):
        assert validate_source_url(doc_url, provider="openai") is doc_url


class _LyingStr(str):
    """A str subclass that checks as one text and prints as another."""

    def __str__(self) -> str:
        return "https://user@evil.example/x"

    def __format__(self, spec: str) -> str:
        return str(self)

    def __len__(self) -> int:
        return 10


def test_str_subclass_url_or_provider_is_rejected() -> None:
    # The validator would check the str data, the caller would use str()/format()/len().
    url = _LyingStr("https://platform.openai.com/docs")
    assert f"{url}" != str.__str__(url)
    assert rejected(url).where == "url"
    assert rejected(_LyingStr(OPENAI_REPO + "/" + "a" * MAX_URL_LENGTH)).where == "url"
    with pytest.raises(SourceURLError) as info:
        validate_source_url(
            "https://platform.openai.com/docs", provider=_LyingStr("openai")
        )
    assert info.value.where == "provider"


# --- the brief's red-team list: every one rejected, with the reason that applies --------


@pytest.mark.parametrize(
    ("url", "local", "where"),
    [
        ("https:/github.com/openai/openai-python", False, "scheme"),
        ("https:\\\\github.com/openai/openai-python", False, "index 6"),
        ("https://github.com\t/openai/openai-python", False, "index 18"),
        ("https://github.com/openai/openai-python/%2e%2E/", False, "path segment 3"),
        ("https://github.com/openai/openai-python/a%2F..", False, "path segment 3"),
        ("https://github.com/openai/openai-python/./", False, "path segment 3"),
        ("https://github.com/openai/openai-python/a/..%2f", False, "path segment 4"),
        ("https://github.com/openai/openai-python/a/.%00", False, "path segment 4"),
        ("https://platform\uff0eopenai.com/docs", False, "index 16"),
        ("https://github\uff0ecom/openai/openai-python", False, "index 14"),
        ("https://platform.openai.com/docs/%E2%80%AEtxt.exe", False, "path segment 2"),
        ("https://github.com/openai/openai-python.git/..", False, "path segment 3"),
        ("https://github.com/openai/openai-python/../anthropics/anthropic-sdk-python",
         False, "path segment 3"),
        ("https://github.com/openai/openai-python@evil/", False, "path segment 2"),
        ("https://github.com:/openai/openai-python", False, "port"),
        ("https://github.com./openai/openai-python", False, "host"),
        ("https://0x7f.1/x", True, "host"),
        ("http://0x7f.1/x", True, "scheme"),
        ("http://127.0.0.1.nip.io/x", True, "scheme"),
        ("https://127.0.0.1.nip.io/x", True, "host"),
        ("http://127.1/x", True, "scheme"),
        ("https://127.1/x", True, "host"),
        ("http://[::ffff:127.0.0.1]/x", True, "scheme"),
        ("https://[::ffff:127.0.0.1]/x", True, "host"),
        ("http://localhost./x", True, "scheme"),
        ("https://localhost./x", True, "host"),
        ("HTTPS://github.com/openai/openai-python", False, "scheme"),
        ("https:github.com/openai/openai-python", False, "scheme"),
        ("https://github.com/openai/openai-python#a#b", False, "fragment"),
        ("https://github.com/openai/openai-python#L1#L2", False, "fragment"),
    ],
)
def test_red_team_list_is_rejected_where_it_goes_wrong(url: str, local: bool, where: str) -> None:
    error = rejected(url, allow_local_source_urls=local)
    assert error.where == where, str(error)


# --- differential oracle: a real WHATWG URL parser (Node.js), skipped without node ---------

_WHATWG_SCRIPT = r"""
const rl = require('readline').createInterface({input: process.stdin, terminal: false});
rl.on('line', (line) => {
  let out;
  try {
    const u = new URL(JSON.parse(line));
    out = {href: u.href, protocol: u.protocol, username: u.username, password: u.password,
           host: u.host, hostname: u.hostname, port: u.port, pathname: u.pathname,
           search: u.search, hash: u.hash};
  } catch (e) {
    out = {error: String(e && e.message)};
  }
  process.stdout.write(JSON.stringify(out) + '\n');
});
"""


class _WhatwgParser:
    """One long-lived Node.js process parsing URLs with its built-in WHATWG ``URL``."""

    def __init__(self, node: str) -> None:
        self._process = subprocess.Popen(
            [node, "-e", _WHATWG_SCRIPT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def parse(self, url: str) -> dict[str, str]:
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(json.dumps(url) + "\n")
        stdin.flush()
        result: dict[str, str] = json.loads(stdout.readline())
        return result

    def close(self) -> None:
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                stream.close()
        self._process.wait(timeout=10)


@pytest.fixture(scope="module")
def whatwg() -> Iterator[_WhatwgParser]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js (the WHATWG URL oracle) is not installed")
    parser = _WhatwgParser(node)
    yield parser
    parser.close()


def whatwg_disagreement(url: str, parsed: dict[str, str]) -> str | None:
    """How the WHATWG parse of an accepted ``url`` differs from ``urlsplit``'s, if it does."""
    if "error" in parsed:
        return f"WHATWG rejects it: {parsed['error']}"
    if parsed["href"] != url:
        return f"WHATWG rewrites it to {parsed['href']!r}"
    parts = urlsplit(url)
    expected = {
        "protocol": parts.scheme + ":",
        "username": parts.username or "",
        "password": parts.password or "",
        "host": parts.netloc,
        "port": "" if parts.port is None else str(parts.port),
        "pathname": parts.path,
        "search": "?" + parts.query if parts.query else "",
        "hash": "#" + parts.fragment if parts.fragment else "",
    }
    for key, value in expected.items():
        if parsed[key] != value:
            return f"{key}: WHATWG {parsed[key]!r}, urlsplit {value!r}"
    return None


@pytest.mark.parametrize(
    ("provider", "url", "local"),
    [
        ("openai", OPENAI_REPO + "#a?b/c:@", False),
        ("openai", OPENAI_REPO + "/'x'", False),
        ("openai", OPENAI_REPO + "/.git", False),
        ("openai", OPENAI_REPO + "/...a", False),
        ("openai", OPENAI_REPO + "/a.", False),
        ("openai", OPENAI_REPO + "/.a/b~c_d-e", False),
        ("openai", OPENAI_REPO + "/blob/v2.46.0/x.py#L1-L2", False),
        ("openai", "https://platform.openai.com/docs/a%3Bb", False),
        ("openai", "https://platform.openai.com/docs/a%3fb", False),
        ("openai", "https://platform.openai.com/docs/a%23b", False),
        ("openai", "https://platform.openai.com/docs/a%7Cb%3A%40", False),
        ("openai", "https://platform.openai.com/docs/!$&'()*+,=", False),
        ("google", "https://ai.google.dev/api/interactions%3Astream#x;y=z", False),
        ("anthropic", "http://[::1]:8000/x", True),
        ("anthropic", "http://localhost:1/x", True),
        ("google", "https://localhost:65535/x#y", True),
        ("google", "https://127.0.0.1/fixtures/x", True),
    ],
)
def test_accepted_edge_urls_parse_identically_in_whatwg_and_urllib(
    whatwg: _WhatwgParser, provider: str, url: str, local: bool
) -> None:
    assert validate_source_url(url, provider=provider, allow_local_source_urls=local) is url
    assert whatwg_disagreement(url, whatwg.parse(url)) is None


def test_whatwg_oracle_has_teeth(whatwg: _WhatwgParser) -> None:
    # Inputs a naive validator accepts; the oracle must flag each one.
    for url in (
        "https://github.com/openai/openai-python/%2e%2E/x",
        "https://github.com\\openai/openai-python",
        "https://github.com/openai/openai-python/a\t/b",
        "HTTPS://github.com/openai/openai-python",
        "https://github.com:443/openai/openai-python",
        "https://GitHub.com/openai/openai-python",
        "https:github.com/openai/openai-python",
        "https://github.com/openai/openai-python/a b",
        "http://127.1/x",
        "https://platform\uff0eopenai.com/docs",
    ):
        assert whatwg_disagreement(url, whatwg.parse(url)) is not None, url


@given(data=st.data())
def test_every_accepted_url_parses_identically_in_whatwg_and_urllib(
    whatwg: _WhatwgParser, data: st.DataObject
) -> None:
    provider = data.draw(st.sampled_from(PROVIDERS))
    source = data.draw(st.sampled_from(["official", "loopback", "near-valid", "url-like"]))
    local = source == "loopback" or data.draw(st.booleans())
    if source == "official":
        url = data.draw(official_source_urls(provider))
    elif source == "loopback":
        url = data.draw(loopback_source_urls())
    elif source == "near-valid":
        base = data.draw(st.one_of(official_source_urls(provider), loopback_source_urls()))
        i = data.draw(st.integers(0, len(base)))
        piece = data.draw(_WHATWG_EDITS)
        cut = data.draw(st.integers(0, 1))
        url = base[:i] + piece + base[i + cut:]
    else:
        url = data.draw(url_like_text())
    try:
        validate_source_url(url, provider=provider, allow_local_source_urls=local)
    except SourceURLError:
        event(f"{source}: rejected")
        return
    event(f"{source}: accepted, compared with WHATWG")
    assert whatwg_disagreement(url, whatwg.parse(url)) is None, url


# Characters where WHATWG and urllib.parse are known to differ, or that WHATWG
# percent-encodes, strips or rewrites.
_WHATWG_EDITS = st.sampled_from(
    ["/", "\\", ".", "..", "%2e", "%2E", "%2f", "%5c", "%25", "%3F", "%3f", "%23", "%3A",
     "@", ":", ":443", ":80", "#", "?", ";", "'", "`", "^", "|", "{", "}", "<", ">", '"',
     " ", "\t", "\n", "\r", "\x00", "\x7f", "\u00a0", "\uff0e", "\u3002", "\u0430",
     "\u202e", "~", "!", "$", "&", "(", ")", "*", "+", ",", "=", "[", "]", "A", "0x"]
)


def test_a_huge_int_provider_is_a_source_url_error() -> None:
    # repr() of an int past the interpreter's digit limit raises ValueError; the message
    # shows a bounded preview instead (found by the hostile-arguments property)
    from pcfuzz.contracts.errors import SourceURLError
    from pcfuzz.contracts.provenance import validate_source_url

    with pytest.raises(SourceURLError, match="unknown provider") as info:
        validate_source_url("https://platform.openai.com/docs", provider=10**5000)
    assert info.value.where == "provider"
