"""Shared pieces of the incremental, sans-IO stream objects.

Every provider stream follows h11's "poison on error" rule: once a
:class:`~contracts.errors.ContractError` has been raised from ``feed`` or
``close``, every later call raises again, so no caller can continue from a broken
state. Stream limits are explicit and documented.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from .errors import ContractError, LimitExceeded, ProtocolViolation

__all__ = ["StreamLimits", "DEFAULT_STREAM_LIMITS", "Poison", "FragmentBuffer"]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """Bounds for one provider stream.

    ``max_events``: events fed to one stream object (pings and replays count).
    ``max_fragment_bytes``: UTF-8 bytes of one call's accumulated argument text.
    ``max_total_fragment_bytes``: UTF-8 bytes of all argument text in the turn.
    ``max_items``: output items / content blocks / steps in one turn.
    """

    max_events: int = 100_000
    max_fragment_bytes: int = 1_000_000
    max_total_fragment_bytes: int = 8_000_000
    max_items: int = 4_096


DEFAULT_STREAM_LIMITS = StreamLimits()


class Poison:
    """Remembers the first error of a stream and re-raises it on every later call."""

    __slots__ = ("_error", "_closed")

    def __init__(self) -> None:
        self._error: ContractError | None = None
        self._closed = False

    def check(self) -> None:
        """Raise if the stream is poisoned or already closed."""
        if self._error is not None:
            raise type(self._error)(
                f"stream is unusable after an earlier error: {self._error.message}",
                where=self._error.where,
            ) from self._error
        if self._closed:
            raise ProtocolViolation("stream already closed")

    def poison(self, error: ContractError) -> None:
        if self._error is None:
            self._error = error

    def mark_closed(self) -> None:
        self._closed = True

    @property
    def poisoned(self) -> bool:
        """True once any ContractError has been raised through this stream."""
        return self._error is not None

    def run(self, step: Callable[[], _T]) -> _T:
        """Run one ``feed`` step: refuse if poisoned/closed, poison on a ContractError."""
        self.check()
        try:
            return step()
        except ContractError as exc:
            self.poison(exc)
            raise

    def finish(self, step: Callable[[], _T]) -> _T:
        """Run the ``close`` step like :meth:`run`, then mark the stream closed."""
        result = self.run(step)
        self.mark_closed()
        return result


class FragmentBuffer:
    """Accumulates text fragments as a list (no ``str +=``) with a byte bound."""

    __slots__ = ("_parts", "_size", "_limit", "_what")

    def __init__(self, limit: int, what: str, initial: str = "") -> None:
        self._parts: list[str] = []
        self._size = 0
        self._limit = limit
        self._what = what
        if initial:
            self.append(initial)

    def append(self, fragment: str) -> int:
        """Append ``fragment``; return its UTF-8 size. Raises :class:`LimitExceeded`."""
        size = len(fragment.encode("utf-8", "surrogatepass"))
        if self._size + size > self._limit:
            raise LimitExceeded(
                f"{self._what} exceeds {self._limit} bytes of argument text"
            )
        self._parts.append(fragment)
        self._size += size
        return size

    @property
    def size(self) -> int:
        return self._size

    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""
