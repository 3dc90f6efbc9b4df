"""What the fixture format documentation pins for each contract, without hypothesis:
:data:`EXPECTED` (the pinned revision) and :data:`EXPECTED_BY_REVISION`, an
independent table (not the loader's). Shared by :mod:`.fixture_docs` (which
re-exports it) and the ``fixture`` fuzz target's oracle, which imports this module so
that its start-up does not import hypothesis.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pcfuzz.contracts.registry import NAMES

__all__ = ["CONTRACTS", "EXPECTED", "EXPECTED_BY_REVISION", "REVISION", "REVISIONS",
           "ExpectedContract", "expected"]


@dataclass(frozen=True)
class ExpectedContract:
    """What the format documentation says one contract's fixture declares."""

    provider: str
    api_family: str
    api_version: str
    projection_layer: str
    sdk_package: str
    sdk_version: str
    example_source: str
    #: The seed's stability layers: the API family's own status and the model layer's.
    api_family_stability: str = "ga"
    model_stability: str = "synthetic"


REVISION = "2026-07-21"

EXPECTED: dict[str, ExpectedContract] = {
    "openai-responses": ExpectedContract(
        "openai", "responses", "v1", "typed-sse-projection", "openai", "2.46.0",
        "https://platform.openai.com/docs/api-reference/responses-streaming",
    ),
    "anthropic-messages": ExpectedContract(
        "anthropic", "messages", "2023-06-01", "wire-sse-envelope-projection",
        "anthropic", "0.117.0",
        "https://docs.claude.com/en/docs/build-with-claude/streaming",
    ),
    "gemini-interactions": ExpectedContract(
        "google", "interactions", "v1", "typed-sse-projection", "google-genai", "2.12.1",
        "https://ai.google.dev/gemini-api/docs/interactions",
    ),
    "openai-chat": ExpectedContract(
        "openai", "chat-completions", "v1", "typed-sse-projection", "openai", "2.46.0",
        "https://platform.openai.com/docs/api-reference/chat-streaming",
    ),
}
CONTRACTS: tuple[str, ...] = tuple(EXPECTED)
if CONTRACTS != NAMES:  # the expectations cover exactly the registered contracts
    raise RuntimeError(f"fixture_docs.EXPECTED covers {CONTRACTS}, the registry {NAMES}")

#: Every contract revision the format documents, the pinned one (:data:`REVISION`)
#: first. "Revision 2026-12-01 pins the same metadata except sdk_baseline.version:
#: openai 3.57.0, anthropic 2.15.0, google-genai 3.6.1" (fixtures/README.md).
REVISIONS: tuple[str, ...] = (REVISION, "2026-12-01")
_SDK_VERSIONS: dict[str, dict[str, str]] = {
    "2026-12-01": {"openai": "3.57.0", "anthropic": "2.15.0", "google-genai": "3.6.1"},
}
#: ``EXPECTED_BY_REVISION[revision][contract]``; ``EXPECTED`` is the pinned revision's.
EXPECTED_BY_REVISION: dict[str, dict[str, ExpectedContract]] = {
    REVISION: EXPECTED,
    **{revision: {contract: replace(exp, sdk_version=versions[exp.sdk_package])
                  for contract, exp in EXPECTED.items()}
       for revision, versions in _SDK_VERSIONS.items()},
}


def expected(contract: str, revision: str = REVISION) -> ExpectedContract:
    """What a fixture of ``contract`` at ``revision`` declares."""
    return EXPECTED_BY_REVISION[revision][contract]
