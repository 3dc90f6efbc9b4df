"""Value types of a parsed Gemini Interactions turn, and the check that it is unchanged.

A streamed turn (:class:`GeminiInteractionsTurn`) and a create/GET snapshot
(:class:`GeminiInteractionSnapshot`) both record, when parsed, the digest of their
canonical snapshot. :func:`verified_snapshot` is what every builder reads: the
snapshot copied as fresh plain JSON and checked against that digest
(:func:`contracts.digest.verified_snapshot`), so nothing a caller changed (or swapped
in) after parsing is ever read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar

from .._stream import check_revision
from .._values import preview
from ..digest import canonical_digest
from ..digest import verified_snapshot as shared_verified_snapshot
from ..errors import InvalidArgument, SnapshotMutated
from ._tables import REVISIONS

__all__ = [
    "CONTRACT",
    "GeminiFunctionCall",
    "GeminiResumePoint",
    "GeminiInteractionsTurn",
    "GeminiInteractionSnapshot",
    "AnyTurn",
    "seal",
    "verified_snapshot",
]

#: The contract name bound into every snapshot (and used in messages).
CONTRACT: Final = "gemini-interactions"


@dataclass(frozen=True, slots=True)
class GeminiFunctionCall:
    """A client-executable ``function_call`` step.

    ``call_id`` is the function-call step's ``id`` (what a ``function_result`` step's
    ``call_id`` must equal); ``arguments`` is the strictly parsed JSON object;
    ``index`` is the stream association key (``None`` for snapshots) and never a
    position in ``steps``.
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    index: int | None = None


#: Bound on each string of a resume point (ids are opaque tokens, not documents).
MAX_RESUME_ID_CHARS: Final = 4096


@dataclass(frozen=True, slots=True)
class GeminiResumePoint:
    """What a caller persists to resume a stored Interaction's GET stream.

    ``interaction_id`` names the Interaction (``GET .../interactions/{id}`` with
    ``stream=true``); ``last_event_id`` is the high-water ``event_id``, sent as
    ``last_event_id`` so the server resumes after that event. Both are non-empty
    ``str`` of at most :data:`MAX_RESUME_ID_CHARS` characters (else
    :class:`InvalidArgument`). It is not a recovery cursor for a creation POST: only
    a stored Interaction can be resumed.
    """

    interaction_id: str
    last_event_id: str

    def __post_init__(self) -> None:
        check_resume_point(self)


def check_resume_point(point: object) -> GeminiResumePoint:
    """Return ``point`` if it is an intact :class:`GeminiResumePoint` (exactly that
    class, fields re-checked: a frozen dataclass can be changed with
    ``object.__setattr__``); raise :class:`InvalidArgument` otherwise."""
    if type(point) is not GeminiResumePoint:
        raise InvalidArgument(
            f"resume point must be a GeminiResumePoint, got {preview(point)}", where="point"
        )
    for field in ("interaction_id", "last_event_id"):
        value = object.__getattribute__(point, field)
        if type(value) is not str or not value or len(value) > MAX_RESUME_ID_CHARS:
            raise InvalidArgument(
                f"{field} must be a non-empty str of at most {MAX_RESUME_ID_CHARS} "
                f"characters, got {preview(value)}",
                where=f"point.{field}",
            )
    return point


def _listed(value: object, field: str) -> list[Any]:
    """A tuple field of a turn as a list; anything swapped in for the tuple is rejected
    before it is iterated (an endless iterable could otherwise exhaust memory)."""
    if type(value) is not tuple:
        raise SnapshotMutated(
            f"turn field {field} is {preview(value)}, not the tuple recorded at parse time",
            where=f"turn.{field}",
        )
    return list(value)


def _calls_payload(calls: object) -> list[dict[str, Any]]:
    payload: list[dict[str, Any]] = []
    for call in _listed(calls, "calls"):
        if type(call) is not GeminiFunctionCall:
            raise SnapshotMutated(
                f"turn call is {preview(call)}, not a GeminiFunctionCall", where="turn.calls"
            )
        payload.append({"call_id": call.call_id, "name": call.name,
                        "arguments": call.arguments, "index": call.index})
    return payload


class _TurnMethods:
    """What a streamed turn and a snapshot share beyond their fields."""

    __slots__ = ()
    usage: dict[str, Any] | None
    revision: str
    digest: str

    interaction_id: str
    origin: str
    status: str
    steps: tuple[dict[str, Any], ...]

    def snapshot(self) -> dict[str, Any]:
        raise NotImplementedError  # pragma: no cover - both turn classes define it

    def _identity(self) -> dict[str, Any]:
        """The snapshot's first keys: what the turn is bound to, and its raw steps."""
        return {
            "contract": CONTRACT,
            "revision": self.revision,
            "origin": self.origin,
            "interaction_id": self.interaction_id,
            "status": self.status,
            "steps": _listed(self.steps, "steps"),
        }

    def check_unchanged(self) -> None:
        """Raise :class:`~contracts.errors.SnapshotMutated` if the turn changed since parsing."""
        verified_snapshot(self)

    def usage_totals(self) -> dict[str, int | None]:
        """The revision's total-usage fields; an absent or non-integer one is ``None``, not 0."""
        tables = check_revision(self.revision, REVISIONS, CONTRACT)
        values = self.usage if type(self.usage) is dict else {}
        out: dict[str, int | None] = {}
        for field in tables.usage_total_fields:
            value = values.get(field)
            out[field] = value if type(value) is int else None
        return out


@dataclass(frozen=True, slots=True)
class GeminiInteractionsTurn(_TurnMethods):
    """A streamed turn that reached ``interaction.completed`` (origin ``"stream"``).

    ``steps`` are the step objects in ``step.start`` order (function-call
    ``arguments`` filled from the parsed deltas); ``step_deltas`` are the raw deltas
    of every non-function step (and argument deltas with unknown fields);
    ``step_indexes`` the stream association keys. ``calls`` is non-empty only for a
    status meaning a tool turn (``requires_action``). ``usage`` is the raw usage
    object of the terminal (``None`` if absent). ``digest`` is the canonical
    snapshot digest recorded at parse time.
    """

    interaction_id: str
    status: str
    steps: tuple[dict[str, Any], ...]
    step_deltas: tuple[tuple[dict[str, Any], ...], ...]
    step_indexes: tuple[int, ...]
    calls: tuple[GeminiFunctionCall, ...]
    usage: dict[str, Any] | None
    status_updates: tuple[str, ...]
    revision: str
    digest: str
    origin: Literal["stream"] = "stream"

    def snapshot(self) -> dict[str, Any]:
        """The canonical snapshot the digest covers (identities bound in)."""
        return {
            **self._identity(),
            "step_deltas": [_listed(d, "step_deltas") for d in _listed(self.step_deltas,
                                                                        "step_deltas")],
            "step_indexes": _listed(self.step_indexes, "step_indexes"),
            "calls": _calls_payload(self.calls),
            "usage": self.usage,
            "status_updates": _listed(self.status_updates, "status_updates"),
        }


@dataclass(frozen=True, slots=True)
class GeminiInteractionSnapshot(_TurnMethods):
    """A non-streamed Interaction object (origin ``"create"`` or ``"get"``).

    A create-response snapshot holds only model-generated steps; a GET snapshot holds
    the input history too. ``calls`` is non-empty only for a tool-turn status
    (``requires_action``); they are the function-call steps of the current turn.
    """

    interaction_id: str
    origin: Literal["create", "get"]
    status: str
    steps: tuple[dict[str, Any], ...]
    calls: tuple[GeminiFunctionCall, ...]
    usage: dict[str, Any] | None
    revision: str
    digest: str

    def snapshot(self) -> dict[str, Any]:
        """The canonical snapshot the digest covers (identities bound in)."""
        return {
            **self._identity(),
            "calls": _calls_payload(self.calls),
            "usage": self.usage,
        }


AnyTurn = GeminiInteractionsTurn | GeminiInteractionSnapshot
_AnyTurnT = TypeVar("_AnyTurnT", GeminiInteractionsTurn, GeminiInteractionSnapshot)


def seal(turn: _AnyTurnT) -> _AnyTurnT:
    """Record the digest of a freshly built turn's snapshot (done once, at parse time)."""
    object.__setattr__(turn, "digest", canonical_digest(turn.snapshot()))
    return turn


def verified_snapshot(turn: _TurnMethods) -> dict[str, Any]:
    """Return the turn's snapshot as fresh plain JSON if it still has its recorded digest.

    :func:`contracts.digest.verified_snapshot` with ``exact``: containers must be the
    exact, unshared dicts and lists the parser built. The result is exactly what the
    digest covers, of exact builtin types, sharing nothing with the turn. Raises
    :class:`~contracts.errors.SnapshotMutated` if the turn changed after parsing,
    including when a swapped-in value raises while it is rendered.
    """
    fresh = shared_verified_snapshot(
        turn.snapshot, turn.digest, what=f"gemini interaction {type(turn).__name__}",
        exact=True,
    )
    if type(fresh) is not dict:  # pragma: no cover - snapshot() builds a dict
        raise SnapshotMutated("turn snapshot is not an object", where="turn")
    result: dict[str, Any] = fresh
    return result
