"""Value types of a parsed Anthropic Messages turn, its snapshot and its digest check."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ..digest import canonical_bytes
from ..digest import verified_snapshot as shared_verified_snapshot
from ..errors import SnapshotMutated
from ._tables import REVISIONS

__all__ = [
    "AnthropicToolUse",
    "AnthropicRecoveryCall",
    "AnthropicMessagesTurn",
    "seal",
    "verified_snapshot",
]

@dataclass(frozen=True, slots=True)
class AnthropicToolUse:
    """An executable client ``tool_use`` call (released only by the terminal gate).

    ``call_id`` is the block's ``id`` (the ``tool_use_id`` a result must carry),
    ``arguments`` the strictly parsed ``input`` object (a private copy), ``index``
    the block index in the message ``content``.
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    index: int

    @property
    def tool_use_id(self) -> str:
        """The provider's name for :attr:`call_id`."""
        return self.call_id


@dataclass(frozen=True, slots=True)
class AnthropicRecoveryCall:
    """A client ``tool_use`` call that must NOT be executed.

    Its continuation result is forced to ``is_error: true``. ``reason`` says why
    (invalid/incomplete eager input, truncation, a stop reason that releases
    nothing). ``arguments`` is the parsed input when it was complete, else
    ``None``; ``partial_json`` is the raw accumulated input text when it did not
    parse, else ``None``.
    """

    call_id: str
    name: str
    index: int
    reason: str
    arguments: dict[str, Any] | None
    partial_json: str | None

    @property
    def tool_use_id(self) -> str:
        """The provider's name for :attr:`call_id`."""
        return self.call_id


@dataclass(frozen=True, slots=True)
class AnthropicMessagesTurn:
    """One parsed assistant message (a complete stream up to ``message_stop``).

    ``blocks``: the final content blocks, raw, in index order (text and thinking
    accumulated, tool inputs parsed; an incomplete input replayed as
    ``{"INVALID_JSON": text}``). ``message``: ``message_start.message`` as sent.
    ``usage``: the cumulative usage after the last ``message_delta``.
    ``stop_reason``: raw, including unknown future values. ``delta``: the merged
    non-null fields of every ``message_delta.delta`` (raw; e.g. ``stop_details``,
    ``container`` and future optional fields). ``calls``: executable calls (empty
    unless the terminal gate passed). ``recovery_calls``: every other client call.
    ``digest``: SHA-256 of the canonical :meth:`snapshot` at parse time, and
    ``snapshot_bytes`` its size; a turn built by hand has neither and fails
    :meth:`check_unchanged`.
    """

    revision: str
    message: dict[str, Any]
    blocks: tuple[dict[str, Any], ...]
    stop_reason: str
    stop_sequence: str | None
    usage: dict[str, Any]
    delta: dict[str, Any]
    calls: tuple[AnthropicToolUse, ...]
    recovery_calls: tuple[AnthropicRecoveryCall, ...]
    digest: str = field(default="")
    snapshot_bytes: int = field(default=0)

    @property
    def stop_reason_known(self) -> bool:
        """Whether :attr:`stop_reason` is in the turn revision's table."""
        tables = REVISIONS.get(self.revision) if type(self.revision) is str else None
        return tables is not None and type(self.stop_reason) is str and (
            self.stop_reason in tables.stop_reasons
        )

    def snapshot(self) -> dict[str, Any]:
        """The canonical snapshot the digest covers (a live view, not a copy).

        Raises :class:`SnapshotMutated` if a field holding calls or blocks was
        replaced by something other than the tuple of the types parsing made.
        """
        if (
            type(self.blocks) is not tuple
            or type(self.calls) is not tuple
            or type(self.recovery_calls) is not tuple
            or any(type(c) is not AnthropicToolUse for c in self.calls)
            or any(type(c) is not AnthropicRecoveryCall for c in self.recovery_calls)
        ):
            raise SnapshotMutated("turn fields were replaced after parsing", where="turn")
        return {
            "revision": self.revision,
            "message": self.message,
            "blocks": list(self.blocks),
            "stop_reason": self.stop_reason,
            "stop_sequence": self.stop_sequence,
            "usage": self.usage,
            "delta": self.delta,
            "calls": [[c.call_id, c.name, c.index, c.arguments] for c in self.calls],
            "recovery_calls": [
                [c.call_id, c.name, c.index, c.reason, c.arguments, c.partial_json]
                for c in self.recovery_calls
            ],
        }

    def check_unchanged(self) -> None:
        """Raise :class:`SnapshotMutated` if the turn changed since it was parsed."""
        verified_snapshot(self)


def seal(turn: AnthropicMessagesTurn) -> AnthropicMessagesTurn:
    """Record the digest and size of ``turn``'s canonical snapshot (parse time only)."""
    data = canonical_bytes(turn.snapshot())
    object.__setattr__(turn, "digest", hashlib.sha256(data).hexdigest())
    object.__setattr__(turn, "snapshot_bytes", len(data))
    return turn


def verified_snapshot(turn: AnthropicMessagesTurn) -> dict[str, Any]:
    """An independent copy of ``turn.snapshot()``, checked against the parse-time digest.

    :func:`contracts.digest.verified_snapshot`, bounded by the snapshot's size at parse
    time (``snapshot_bytes``): an unchanged snapshot has no more values, items or
    characters than it had bytes, so anything larger has changed and is rejected before
    it is digested. Raises :class:`SnapshotMutated`.
    """
    copy = shared_verified_snapshot(
        turn.snapshot, turn.digest, what="anthropic messages turn", size=turn.snapshot_bytes
    )
    if type(copy) is not dict:  # pragma: no cover - snapshot() builds a dict
        raise SnapshotMutated("turn snapshot is not an object", where="turn")
    result: dict[str, Any] = copy
    return result
