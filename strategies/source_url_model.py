"""The source-URL oracle without hypothesis: the documented official places (hosts,
SDK repositories, loopback names) and :func:`accepted_url_problem`, written down
independently of ``contracts.provenance`` (never importing its tables or helpers).

Shared by the property tests (through :mod:`.source_urls`, which re-exports it) and
the ``source-url`` and ``fixture`` fuzz targets, which import this module so that
their start-up does not import hypothesis.
"""

from __future__ import annotations

import posixpath
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = ["DOC_HOSTS", "LOOPBACK", "PROVIDERS", "SDK_REPOSITORIES", "accepted_url_problem"]

# The documented official places, written down independently of the validator.
DOC_HOSTS: dict[str, tuple[str, ...]] = {
    "openai": ("platform.openai.com", "developers.openai.com"),
    "anthropic": ("docs.anthropic.com", "docs.claude.com", "platform.claude.com"),
    "google": ("ai.google.dev",),
}
SDK_REPOSITORIES: dict[str, tuple[str, str]] = {
    "openai": ("openai", "openai-python"),
    "anthropic": ("anthropics", "anthropic-sdk-python"),
    "google": ("googleapis", "python-genai"),
}
PROVIDERS: tuple[str, ...] = tuple(DOC_HOSTS)
LOOPBACK: tuple[str, ...] = ("127.0.0.1", "localhost", "[::1]")


# --- the oracle ----------------------------------------------------------------------

_STRIPPED = frozenset("\t\n\r\\")


def accepted_url_problem(url: str, provider: str, allow_local: bool) -> str | None:
    """For a URL the validator ACCEPTED: what is wrong with it, or ``None``.

    Re-parses with :func:`urllib.parse.urlsplit` and checks host, credentials, port,
    query and that the decoded, normalized path stays inside the pinned repository;
    also that no character a WHATWG parser would strip or rewrite is present.
    """
    if any(c in _STRIPPED or not (0x21 <= ord(c) <= 0x7E) for c in url):
        return "contains a character a WHATWG parser strips or rewrites"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"urlsplit failed: {exc}"
    if urlunsplit(parts) != url:
        return f"does not round-trip through urlsplit/urlunsplit ({urlunsplit(parts)!r})"
    if url[: len(parts.scheme) + 3] != parts.scheme + "://":
        return "scheme is not spelled in lowercase followed by '//'"
    if parts.username is not None or parts.password is not None:
        return "has credentials"
    if parts.query or "?" in url.split("#")[0]:
        return "has a query"
    host = parts.hostname
    loopback = {"127.0.0.1", "localhost", "::1"}
    is_local = allow_local and host in loopback
    if is_local:
        if parts.scheme not in ("http", "https"):
            return f"loopback scheme {parts.scheme!r}"
        if not parts.netloc.startswith(("127.0.0.1", "localhost", "[::1]")):
            return f"loopback host spelled {parts.netloc!r}"
        default = 80 if parts.scheme == "http" else 443
        if port == default:
            return "explicit default port"
    else:
        if parts.scheme != "https":
            return f"scheme {parts.scheme!r} is not https"
        if port is not None or ":" in parts.netloc:
            return "has a port"
        official = {*DOC_HOSTS[provider], "github.com"}
        if parts.netloc not in official or host != parts.netloc:
            return f"host {parts.netloc!r} is not official for {provider}"
    path = parts.path
    if not path.startswith("/"):
        return "path does not start with '/'"
    segments = path[1:].split("/")
    for raw in segments:
        text = unquote(raw)
        if not raw or set(text) == {"."} or "/" in text or "\\" in text or "%" in text:
            return f"path segment {raw!r} is empty, a dot segment or hides a separator"
    if not is_local and parts.netloc == "github.com":
        owner, repo = SDK_REPOSITORIES[provider]
        if segments[:2] != [owner, repo]:
            return f"GitHub path {path!r} is outside {owner}/{repo}"
        if "%" in path:
            return f"GitHub path {path!r} has a percent-escape (GitHub decodes it)"
        normalized = posixpath.normpath(unquote(path))
        if not (normalized + "/").startswith(f"/{owner}/{repo}/"):
            return f"GitHub path {path!r} normalizes outside {owner}/{repo}"
    return None
