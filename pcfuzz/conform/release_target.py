"""The byte-level fuzz target of a user's release-form adapter (``pcfuzz nightly
--adapter CONTRACT:release=module:function``): ``adapter(stream, release,
continuation)`` as in ``pcfuzz conform --adapter-form release``, the contract's own
parser as the oracle, on top of :mod:`pcfuzz.fuzz.harness.adapter_target` (the plain
form's target, whose checks of what a call is and which calls the contract releases
it reuses).

``stream`` hands out one item at a time: the decoded events, or the input cut before
each event's first line (``byte_offset``), so item ``k`` ends with event ``k``; bytes
that do not decode into events are skipped, as for an events adapter. Every
``release(call)`` counts as that call run, whatever the adapter does afterwards. A
crash (``RuntimeError``) is: a release of something that is not a call, a release
before the terminal event was delivered (:mod:`.timing`), a released call the
contract does not release, a follow-up request without exactly one result per
released call (:mod:`.followup`), more than :data:`MAX_RECORDS` releases or requests,
or a ``BaseException`` that is not an ``Exception``. An ``async def`` adapter is
awaited on one event loop per target process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from pcfuzz.conform.followup import check_request
from pcfuzz.conform.timing import early_release
from pcfuzz.contracts.errors import ContractError
from pcfuzz.contracts.sse import decode_sse
from pcfuzz.contracts.wire import sse_to_events
from pcfuzz.fuzz.harness.adapter_target import (
    awaited,
    check_released,
    escaped,
    released_calls,
)

__all__ = ["MAX_RECORDS", "make_release_target"]

#: Releases (and follow-up requests) recorded per input; one more is an error.
MAX_RECORDS = 64


def make_release_target(contract: str, adapter: Callable[..., Any], *,
                        input: str = "events") -> Callable[[bytes], None]:
    """The ``TestOneInput`` of a release-form ``adapter`` (see the module docstring)."""
    if input not in ("events", "sse"):
        raise ValueError(f"input must be 'events' or 'sse', got {input!r}")
    loops: list[Any] = []

    def test_one_input(data: bytes) -> None:
        try:
            sse = decode_sse(data)
            events = list(sse_to_events(contract, sse))
        except ContractError:
            return
        hooks = _Hooks(events if input == "events" else _frames(data, sse))
        try:
            awaited(adapter(hooks.stream(), hooks.release, hooks.continuation), loops)
        except Exception:  # noqa: BLE001 - a rejection; what it released still ran
            pass
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt, ...
            raise escaped(exc) from exc
        _check_releases(contract, data, events, hooks)

    return test_one_input


def _frames(data: bytes, events: list[Any]) -> list[bytes]:
    """The input cut before each event's first line (``byte_offset``), so that the
    first ``k`` items delivered hold exactly the first ``k`` events; bytes after the
    last event stay with it. Their concatenation is ``data``."""
    cuts = [0, *(e.byte_offset for e in events[1:]), len(data)]
    return [data[a:b] for a, b in zip(cuts, cuts[1:], strict=False)] if events else [data]


class _Hooks:
    """The release form's stream, ``release`` and ``continuation``: each release and
    request is recorded with the number of items delivered when it happened."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items
        self.delivered = 0
        self.releases: list[tuple[int, Any]] = []
        self.requests: list[tuple[int, Any]] = []

    def stream(self) -> Iterator[Any]:
        while self.delivered < len(self.items):
            self.delivered += 1
            yield self.items[self.delivered - 1]

    def release(self, call: Any) -> None:
        if len(self.releases) <= MAX_RECORDS:
            self.releases.append((self.delivered, call))

    def continuation(self, request: Any) -> None:
        if len(self.requests) <= MAX_RECORDS:
            self.requests.append((self.delivered, request))


def _check_releases(contract: str, data: bytes, events: list[Any], hooks: _Hooks) -> None:
    """The release form's oracle: each release is a call, released only once the
    terminal event was delivered, one the contract releases; each follow-up request
    carries exactly one result per released call."""
    if len(hooks.releases) > MAX_RECORDS or len(hooks.requests) > MAX_RECORDS:
        raise RuntimeError(f"the adapter released or requested more than {MAX_RECORDS} "
                           "times for one turn")
    calls = released_calls([call for _, call in hooks.releases])
    early = early_release(contract, events, [{"at": at, "call": call} for (at, _), call
                                             in zip(hooks.releases, calls, strict=True)])
    if early is not None:
        raise RuntimeError(f"the adapter {early.text()}")
    verdict = check_released(contract, data, calls)
    named = frozenset(c["call_id"] for c in (verdict.calls if verdict is not None else []))
    for _, request in hooks.requests:
        try:
            problem = check_request(contract, [c["call_id"] for c in calls], request, named)
        except Exception as exc:  # noqa: BLE001 - a hostile object
            raise RuntimeError(f"the adapter's follow-up request could not be read "
                               f"({type(exc).__name__} raised)") from exc
        if problem is not None:
            raise RuntimeError(f"the adapter's follow-up request: {problem.check}: "
                               f"{problem.text}"[:400])
