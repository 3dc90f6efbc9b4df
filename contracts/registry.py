"""The one list of the contracts this package ships.

Every other list of contracts is derived from :data:`CONTRACTS` (the wire adapters in
:mod:`contracts.wire`, the ``pcfuzz`` command, the fuzz targets' routing, the kit);
tables keyed by contract name are cross-checked against it. Adding a provider is one
:class:`ContractEntry` here plus its package of the same five modules.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

__all__ = ["CONTRACTS", "NAMES", "ContractEntry", "check_revisions", "entry"]


@dataclass(frozen=True)
class ContractEntry:
    """One contract: its command-line name and where its parts are.

    ``package``: the provider package under ``contracts/`` (``openai_chat``);
    ``provider``: the provider of :func:`contracts.provenance.validate_source_url`;
    ``stream_class``: the incremental stream class the package exports;
    ``status_field``: the Turn attribute that holds the provider's stop reason or status;
    ``event_key``: the field that names an event's type (``None``: Chat chunks carry none);
    ``revisions``: the contract revisions the package ships, oldest first (the keys of
    its ``REVISIONS``, which checks them against this entry when its tables are built),
    so that a list of revisions needs no provider package imported.
    """

    name: str
    package: str
    provider: str
    stream_class: str
    status_field: str
    event_key: str | None
    revisions: tuple[str, ...]


CONTRACTS: Final[tuple[ContractEntry, ...]] = (
    ContractEntry("openai-responses", "openai_responses", "openai", "OpenAIResponsesStream",
                  "status", "type", ("2026-07-21", "2026-12-01")),
    ContractEntry("anthropic-messages", "anthropic_messages", "anthropic",
                  "AnthropicMessagesStream", "stop_reason", "event",
                  ("2026-07-21", "2026-12-01")),
    ContractEntry("gemini-interactions", "gemini_interactions", "google",
                  "GeminiInteractionsStream", "status", "event_type",
                  ("2026-07-21", "2026-12-01")),
    ContractEntry("openai-chat", "openai_chat", "openai", "ChatCompletionStream",
                  "finish_reason", None, ("2026-07-21", "2026-12-01")),
)
#: The command-line names, in the order of :data:`CONTRACTS`.
NAMES: Final[tuple[str, ...]] = tuple(c.name for c in CONTRACTS)
_BY_NAME: Final[dict[str, ContractEntry]] = {c.name: c for c in CONTRACTS}


def entry(name: str) -> ContractEntry:
    """The entry of contract ``name``; ``KeyError`` for an unknown name (callers that
    take a name from outside check it against :data:`NAMES` first)."""
    return _BY_NAME[name]


def check_revisions(name: str, revisions: Iterable[str]) -> None:
    """Raise ``RuntimeError`` (a table bug, at import) unless ``revisions``, the keys
    of a provider package's ``REVISIONS``, are the revisions of contract ``name``'s
    entry, in the same order."""
    shipped = tuple(revisions)
    if shipped != _BY_NAME[name].revisions:
        raise RuntimeError(f"{name} tables ship revisions {shipped}; the registry entry "
                           f"says {_BY_NAME[name].revisions}")
