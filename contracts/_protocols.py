"""The shape every provider contract has: one Protocol for a call, a turn, a stream.

mypy checks each provider's classes against these (see the ``TYPE_CHECKING`` block at
the end of each ``_stream.py``); the cross-contract tests check the same at run time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

__all__ = ["CallProtocol", "TurnProtocol", "StreamProtocol"]

TurnT_co = TypeVar("TurnT_co", covariant=True)


class CallProtocol(Protocol):
    """An executable call: what the host runs and answers with one result."""

    @property
    def call_id(self) -> str:
        """The provider's association key, opaque text (Anthropic's ``tool_use`` id)."""

    @property
    def name(self) -> str:
        """The function / tool name."""

    @property
    def arguments(self) -> Mapping[str, Any]:
        """The strictly parsed argument object."""


class TurnProtocol(Protocol):
    """A parsed turn: what happened, and which calls the host may execute."""

    @property
    def revision(self) -> str:
        """The contract revision the turn was parsed under (a key of ``REVISIONS``)."""

    @property
    def calls(self) -> tuple[CallProtocol, ...]:
        """Executable calls; empty unless the provider's terminal gate passed."""

    @property
    def digest(self) -> str:
        """SHA-256 of the canonical snapshot, taken once when the turn was parsed."""

    def snapshot(self) -> dict[str, Any]:
        """The canonical snapshot (raw items/blocks/steps and derived identities)."""

    def check_unchanged(self) -> None:
        """Raise :class:`~contracts.errors.SnapshotMutated` if the turn changed since parsing."""


class StreamProtocol(Protocol[TurnT_co]):
    """An incremental, sans-IO parser of one turn; poisoned by any exception."""

    @property
    def revision(self) -> str:
        """The contract revision this stream enforces."""

    @property
    def poisoned(self) -> bool:
        """True once anything was raised from ``feed`` or ``close``."""

    def feed(self, event: object, /) -> object:
        """Consume one event. Raises a :class:`~contracts.errors.ContractError` subclass."""

    def close(self) -> TurnT_co:
        """End of stream: the turn, or a :class:`~contracts.errors.ContractError`."""
