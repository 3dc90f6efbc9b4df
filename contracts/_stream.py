"""Shared pieces of the incremental, sans-IO stream objects.

Every provider stream follows h11's "poison on error" rule: once *anything* has been
raised from ``feed`` or ``close`` (a :class:`~contracts.errors.ContractError`, or any
other exception, which is a bug in the contract or an interrupt), every later call
raises a ``ContractError`` again, so no caller can catch the exception and continue
from a half-updated state. Stream limits are explicit, documented and validated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import TypeVar, cast

from ._values import preview
from .errors import (
    ContractError,
    InvalidArgument,
    LimitExceeded,
    ProtocolViolation,
)

__all__ = [
    "StreamLimits",
    "DEFAULT_STREAM_LIMITS",
    "MAX_LIMIT",
    "check_stream_limits",
    "check_revision",
    "drift_hint",
    "Poison",
    "StreamBase",
    "FragmentBuffer",
    "drive",
]

#: Upper bound of every :class:`StreamLimits` field (2**62): larger values are not a
#: limit at all, and keep bound arithmetic in machine-sized integers.
MAX_LIMIT = 2**62

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

    def __post_init__(self) -> None:
        _check_fields(self)


def _check_fields(limits: StreamLimits) -> None:
    for field in fields(StreamLimits):
        value = getattr(limits, field.name)
        if type(value) is not int or not 1 <= value <= MAX_LIMIT:
            raise InvalidArgument(
                f"StreamLimits.{field.name} must be an int from 1 to 2**62, got {preview(value)}",
                where=f"limits.{field.name}",
            )


DEFAULT_STREAM_LIMITS = StreamLimits()


def check_stream_limits(limits: object) -> StreamLimits:
    """Return ``limits`` (``None`` means the defaults) if it is an intact :class:`StreamLimits`.

    Exactly that class (a subclass could override attribute access), with every
    field re-checked (a frozen dataclass's constructor check can be bypassed with
    ``object.__setattr__``). Raises :class:`InvalidArgument`.
    """
    if limits is None:
        return DEFAULT_STREAM_LIMITS
    if type(limits) is not StreamLimits:
        raise InvalidArgument(f"limits must be a StreamLimits, got {preview(limits)}", where="limits")
    _check_fields(limits)
    return limits


_Tables = TypeVar("_Tables")





def check_revision(revision: object, revisions: Mapping[str, _Tables], contract: str) -> _Tables:
    """Return the tables of ``revision``; raise :class:`InvalidArgument` if unknown.

    An unknown revision is the caller's configuration error (``disposition``
    "rejected": no retry can fix it), never a provider state.
    """
    if type(revision) is not str or revision not in revisions:
        known = ", ".join(sorted(revisions))
        raise InvalidArgument(
            f"unknown {contract} contract revision {preview(revision)} (known: {known})",
            where="revision",
        )
    return revisions[revision]


def drift_hint(
    revisions: Mapping[str, _Tables], current: str, accepts: Callable[[_Tables], bool]
) -> str:
    """Name the other shipped revisions that ``accepts`` the shape ``current`` rejects.

    Used on the rejection path only (never per event): the message of a stream parsed
    under an older revision says that the shape is a newer revision's, so a caller
    sees drift, not corruption. Returns ``""`` when no other revision accepts it.
    """
    names = [name for name, tables in revisions.items() if name != current and accepts(tables)]
    if not names:
        return ""
    return (f" (drift: contract revision {', '.join(names)} accepts this shape; this stream "
            f"is parsed under revision {current})")


class Poison:
    """Remembers the first exception of a stream and raises again on every later call.

    After a :class:`ContractError` the later calls raise the same class; after any
    other exception (a bug or an interrupt, which leaves the stream half-updated)
    they raise :class:`ProtocolViolation`.
    """

    __slots__ = ("_error", "_closed")

    def __init__(self) -> None:
        self._error: BaseException | None = None
        self._closed = False

    def check(self) -> None:
        """Raise if the stream is poisoned or already closed."""
        error = self._error
        if error is not None:
            # type(), never isinstance(): an exception raised by a caller's object
            # can claim any class through a ``__class__`` property.
            if issubclass(type(error), ContractError):
                contract_error = cast(ContractError, error)
                raise type(contract_error)(
                    f"stream is unusable after an earlier error: {contract_error.message}",
                    where=contract_error.where,
                ) from error
            raise ProtocolViolation(
                f"stream is unusable after an earlier {type(error).__name__} "
                "(not a contract rejection: a bug or an interrupt)"
            ) from error
        if self._closed:
            raise ProtocolViolation("stream already closed")

    def poison(self, error: BaseException) -> None:
        if self._error is None:
            self._error = error

    def mark_closed(self) -> None:
        self._closed = True

    @property
    def poisoned(self) -> bool:
        """True once anything has been raised through this stream."""
        return self._error is not None

    def run(self, step: Callable[[], _T]) -> _T:
        """Run one ``feed`` step: refuse if poisoned/closed, poison on any exception."""
        self.check()
        try:
            return step()
        except BaseException as exc:
            self.poison(exc)
            raise

    def finish(self, step: Callable[[], _T]) -> _T:
        """Run the ``close`` step like :meth:`run`, then mark the stream closed."""
        result = self.run(step)
        self.mark_closed()
        return result


class StreamBase:
    """What every provider stream exposes the same way: ``revision`` and ``poisoned``.

    A subclass's constructor starts with :meth:`_begin`, which checks the arguments
    every stream takes (``revision``, then ``limits``) and sets ``_revision`` and
    ``_poison`` (its :class:`Poison`).
    """

    _revision: str
    _poison: Poison

    def _begin(
        self, revision: object, limits: object, revisions: Mapping[str, _Tables], contract: str
    ) -> tuple[_Tables, StreamLimits]:
        """Return the tables of ``revision`` and the checked ``limits``.

        Raises :class:`InvalidArgument` (an unknown revision, bad limits) before the
        stream exists.
        """
        tables = check_revision(revision, revisions, contract)
        checked = check_stream_limits(limits)
        self._revision = cast(str, revision)  # check_revision: an exact str
        self._poison = Poison()
        return tables, checked

    @property
    def revision(self) -> str:
        """The contract revision this stream enforces."""
        return self._revision

    @property
    def poisoned(self) -> bool:
        """True once anything was raised from ``feed`` or ``close``."""
        return self._poison.poisoned


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
            raise LimitExceeded(f"{self._what} exceeds {self._limit} bytes of argument text")
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


_Turn = TypeVar("_Turn")


def drive(
    feed: Callable[[object], object],
    close: Callable[[], _Turn],
    events: object,
    max_events: int,
) -> _Turn:
    """Feed every event of ``events`` (an iterable), then close: ``parse_events``'s loop.

    A caller's iterable that is not iterable, or that raises while it is read, is
    rejected as :class:`ProtocolViolation` (a ``ContractError`` it raises, e.g. from a
    decoding layer producing the events, passes through unchanged); it is read at most ``max_events + 1``
    times (the stream's own event limit rejects the extra one), so an endless
    iterable costs no more than a long list. Exceptions from ``feed``/``close``
    themselves pass through unchanged (anything but a ContractError there is a bug
    the fuzzers must see).
    """
    if issubclass(type(events), (str, bytes, bytearray, Mapping)):
        raise ProtocolViolation(f"events must be an iterable of events, got {preview(events)}")
    try:
        iterator = iter(events)  # type: ignore[call-overload]
    except Exception as exc:
        raise ProtocolViolation(
            f"events must be an iterable of events, got {preview(events)}"
        ) from exc
    index = 0
    while index <= max_events:
        try:
            event = next(iterator)
        except StopIteration:
            break
        except ContractError:
            raise  # a decoding layer below (SSE, strict JSON) already rejected it
        except Exception as exc:
            raise ProtocolViolation(
                f"reading the events raised {type(exc).__name__}", where=f"event {index}"
            ) from exc
        feed(event)
        index += 1
    else:
        # The stream's own limit should have rejected event max_events already;
        # never close as if the stream had ended when the caller had more events.
        raise LimitExceeded(f"more than {max_events} events", where=f"event {index}")
    return close()
