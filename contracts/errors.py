"""The one error family of the contracts.

Every rejection raised by ``contracts`` is a :class:`ContractError`. For any input,
a parser either returns or raises a ``ContractError``; any other exception escaping
(``KeyError``, ``TypeError``, ``RecursionError``, ...) is a bug, and the fuzz targets
treat it as a crash.

Each error carries an optional *where*: an event index, a field path, a byte offset or
a line/column. The message always names what was wrong and, when known, where.

Each class also carries a :attr:`ContractError.disposition`, so a caller that retries
(a gateway) can decide from the class alone: :data:`TRANSIENT` (the provider's answer
failed the contract; another attempt may succeed), :data:`REJECTED` (the caller's
request or arguments can never succeed as given: do not retry), :data:`MISS` (a cache
entry that cannot be replayed: go to the source, nothing failed).
"""

from __future__ import annotations

from typing import ClassVar, Final

__all__ = [
    "TRANSIENT",
    "REJECTED",
    "MISS",
    "DISPOSITIONS",
    "ContractError",
    "StrictJSONError",
    "LimitExceeded",
    "SourceURLError",
    "FixtureError",
    "ProtocolViolation",
    "StreamTruncated",
    "ProviderError",
    "UnsupportedProviderState",
    "ResultBindingError",
    "SnapshotMutated",
    "ContinuationError",
    "InvalidArgument",
    "EmptyCompletion",
    "CacheMiss",
]


#: The provider's answer failed the contract; another attempt may succeed.
TRANSIENT: Final = "transient"
#: The caller's request or arguments can never succeed as given; do not retry.
REJECTED: Final = "rejected"
#: A cache entry that cannot be replayed; fetch from the source instead.
MISS: Final = "miss"
DISPOSITIONS: Final = (TRANSIENT, REJECTED, MISS)


class ContractError(Exception):
    """Base of every rejection. ``where`` locates the fault (may be ``None``).

    ``disposition`` (a class attribute, one of :data:`DISPOSITIONS`) says how a
    retrying caller treats the class; the base class is :data:`REJECTED`, so an
    unclassified failure is never retried in a loop.
    """

    disposition: ClassVar[str] = REJECTED

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.message = message
        self.where = where
        super().__init__(f"{message} (at {where})" if where else message)


class StrictJSONError(ContractError):
    """Input is not strict JSON: syntax, duplicate key, non-finite number, encoding."""

    disposition: ClassVar[str] = TRANSIENT


class LimitExceeded(ContractError):
    """An explicit size, depth, count or length limit was exceeded."""

    disposition: ClassVar[str] = TRANSIENT


class SourceURLError(ContractError):
    """A provenance URL is not an accepted official source for its provider."""


class FixtureError(ContractError):
    """A fixture file is malformed or its pinned metadata does not match."""


class ProtocolViolation(ContractError):
    """An event sequence or event shape the pinned contract does not allow."""

    disposition: ClassVar[str] = TRANSIENT


class StreamTruncated(ContractError):
    """The stream ended (EOF / close) before the provider's terminal event."""

    disposition: ClassVar[str] = TRANSIENT


class ProviderError(ContractError):
    """The provider reported failure: an error event, a failed or incomplete terminal."""

    disposition: ClassVar[str] = TRANSIENT


class UnsupportedProviderState(ContractError):
    """A known-but-unimplemented or unknown semantic that could change execution."""

    disposition: ClassVar[str] = TRANSIENT


class ResultBindingError(ContractError):
    """Tool results do not bind exactly one result to every call of the turn."""


class SnapshotMutated(ContractError):
    """A parsed turn changed after parsing (its canonical digest no longer matches)."""


class ContinuationError(ContractError):
    """A continuation request cannot be built from the given inputs."""


class InvalidArgument(ContractError, ValueError):
    """A caller argument (limits, revision, options) has the wrong type or value.

    Also a :class:`ValueError`, so code that validated configuration with
    ``except ValueError`` keeps working; it is a :class:`ContractError` like every
    other rejection.
    """

    disposition: ClassVar[str] = REJECTED


class EmptyCompletion(ProtocolViolation):
    """A completed Chat stream or body with neither non-empty content nor a complete tool.

    Distinct so a gateway can classify it as a retryable empty completion; it is a
    :class:`ProtocolViolation` for everyone else.
    """


class CacheMiss(ContractError):
    """A Chat Completions cache entry that cannot be replayed as a successful completion."""

    disposition: ClassVar[str] = MISS
