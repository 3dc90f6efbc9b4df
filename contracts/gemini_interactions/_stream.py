"""The Gemini Interactions v1 parsers: the incremental stream, ``parse_events``, ``parse_interaction``.

:class:`GeminiInteractionsStream` takes one event dict per ``feed`` (the JSON object
of one SSE ``data`` field, discriminated by ``event_type``) and returns a
:class:`~._turn.GeminiInteractionsTurn` from ``close``. What is legal is the
revision's tables (``_tables.py``): a lookup miss is the rejection. Any exception
raised from ``feed``/``close`` poisons the stream.

Rules (see ``docs/gemini_interactions.md`` for the decisions behind each):

* ``index`` on ``step.start``/``step.delta``/``step.stop`` is only an association key
  inside one stream (any int32, negative and non-contiguous allowed); steps keep the
  order of their ``step.start``.
* Function arguments are the concatenation of ``arguments_delta.arguments`` strings
  (the field is optional; absent is no fragment, never ``"None"``), parsed strictly
  at ``step.stop``; with no fragments the arguments object of ``step.start`` (e.g.
  ``{}``) is the result.
* ``event_id``: a replay with the same id and identical payload is ignored; the same
  id with another payload is a conflict.
* Resumption: the stream exposes ``interaction_id`` and the high-water ``event_id``
  (``last_event_id``; together ``resume_point``), what a caller persists to resume a
  stored Interaction's GET stream; the resumed stream's events are fed to the same
  stream (or to one rebuilt by :func:`resume_stream` from the persisted events), so
  replayed events are idempotent and a conflicting payload under a seen id fails.
* ``interaction.status_update`` is optional and never overrides the terminal; the
  Interaction status in ``interaction.completed`` is the authority. Calls are
  released only for a status meaning a tool turn (``requires_action``); a
  continuation status (``requires_continuation``, revision 2026-12-01) returns the turn
  with nothing released, and a status whose meaning is not pinned (``idle``) fails
  closed.
* Only ``function_call`` steps are client-executed. Step types outside the revision's
  v1 union (e.g. the v1beta MCP-server steps) fail closed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from .._kinds import INT64_MAX, INT64_MIN, check_fields, fields_ok, kind_ok
from .._stream import (
    FragmentBuffer,
    StreamBase,
    StreamLimits,
    check_revision,
    check_stream_limits,
    drive,
)
from .._values import NOT_FAST, copy_json, fast_copy, flat_copy, preview
from ..digest import canonical_bytes
from ..errors import (
    ContractError,
    InvalidArgument,
    LimitExceeded,
    ProtocolViolation,
    ProviderError,
    StreamTruncated,
    StrictJSONError,
    UnsupportedProviderState,
)
from ..strict_json import JSONLimits
from ..strict_json import loads as strict_loads
from ._tables import (
    INPUT_ROLES,
    REVISION,
    REVISIONS,
    RevisionTables,
    meaning_of,
    role_of,
)
from ._turn import (
    MAX_RESUME_ID_CHARS,
    GeminiFunctionCall,
    GeminiInteractionSnapshot,
    GeminiInteractionsTurn,
    GeminiResumePoint,
    check_resume_point,
    seal,
)

if TYPE_CHECKING:
    from .._protocols import CallProtocol, StreamProtocol, TurnProtocol

__all__ = ["GeminiInteractionsStream", "parse_events", "parse_interaction", "resume_stream"]

#: The copier's bound on string length (its default limits).
_MAX_STRING_CHARS: Final = JSONLimits().max_string_chars
#: The contract's name in messages about its revision.
_CONTRACT_NAME: Final = "Gemini Interactions"


def _check_usage(tables: RevisionTables, usage: object, where: str) -> dict[str, Any] | None:
    """The raw usage object (``None`` if absent); its total fields must be ints >= 0."""
    if usage is None:
        return None
    if type(usage) is not dict:
        raise ProtocolViolation(f"usage must be an object, got {preview(usage)}", where=where)
    for field in tables.usage_total_fields:
        if field in usage:
            value = usage[field]
            if type(value) is not int or value < 0:
                raise ProtocolViolation(
                    f"{field} must be a non-negative integer, got {preview(value)}",
                    where=f"{where}.{field}",
                )
    return usage


def _terminal_gate(status: str, meaning: str, n_calls: int, where: str) -> None:
    """Apply the terminal status: raise unless the turn may be returned."""
    if meaning == "non_terminal":
        raise ProtocolViolation(
            f"terminal interaction has non-terminal status {preview(status)}", where=where
        )
    if meaning == "provider_failure":
        raise ProviderError(f"interaction ended with status {preview(status)}", where=where)
    if meaning == "tool_turn" and n_calls == 0:
        raise ProtocolViolation(
            f"status {preview(status)} (requires_action) without a function_call step",
            where=where,
        )
    # meaning "continuation" (requires_continuation): returned with nothing released,
    # whatever steps it holds (the caller resumes it; it is not a tool turn)
    if meaning == "final" and n_calls:
        raise UnsupportedProviderState(
            f"status {preview(status)} with {n_calls} unanswered function_call step(s)",
            where=where,
        )


def _id_too_long(what: str, value: str, where: str) -> LimitExceeded:
    """An id no resume point can hold: the provider's, rejected when it arrives (a
    stream that accepted it would make ``resume_point`` fail later, blaming the
    caller)."""
    return LimitExceeded(
        f"{what} of {len(value)} characters, over the {MAX_RESUME_ID_CHARS} a resume "
        "point holds",
        where=where,
    )


def _already_answered(call_id: str, where: str) -> ProtocolViolation:
    """A streamed function_call and a streamed function_result for it: never released."""
    return ProtocolViolation(
        f"function_call {preview(call_id)} is already answered by a function_result step "
        "in this stream",
        where=where,
    )


# How _read_exact checks a known envelope field: the kinds of the tables, each also
# checked as a JSON value within the default bounds (the copier's).
_INT, _STR, _NONEMPTY, _OBJECT, _OTHER = range(5)
_CODES: Final[Mapping[str, int]] = {"int": _INT, "str": _STR, "nonempty_str": _NONEMPTY,
                                    "object": _OBJECT}
#: event_type -> (every known envelope key, (field, check, required) per known field).
_Shapes = dict[str, tuple[frozenset[str], tuple[tuple[str, int, bool], ...]]]


def _shapes(tables: RevisionTables) -> _Shapes:
    """Each event type's envelope as _read_exact reads it (built once per stream)."""
    shapes: _Shapes = {}
    for event_type, row in tables.event_fields.items():
        fields = [(f, _CODES.get(k, _OTHER), True) for f, k in row.items()]
        fields += [(f, _CODES.get(k, _OTHER), False)
                   for f, k in tables.optional_event_fields.items()]
        known = frozenset(row) | frozenset(tables.optional_event_fields) | {"event_type"}
        shapes[event_type] = (known, tuple(fields))
    return shapes


def _read_exact(event: dict[Any, Any], shapes: _Shapes) -> Any:
    """The stream's copy of a common event, its known fields checked; or ``NOT_FAST``.

    ``event`` is an exact ``dict``. Returned only when every key is an exact ``str``,
    ``event_type`` is one of the tables, every required field of its row is there,
    and every known field has its kind and is a JSON value within the copier's
    bounds (objects copied by :func:`fast_copy`); unknown fields (an open envelope)
    are copied by :func:`fast_copy` too. Anything else is ``NOT_FAST``: the caller
    copies the event with :func:`copy_json` and checks it the general way, so this
    never accepts what that path rejects, nor changes an error. Never raises, never
    runs caller code.
    """
    for key in event:
        if type(key) is not str:
            return NOT_FAST
    event_type = event.get("event_type")
    if type(event_type) is not str:
        return NOT_FAST
    shape = shapes.get(event_type)
    if shape is None:
        return NOT_FAST
    known, fields = shape
    ev = dict(event)
    if not known.issuperset(event):
        extra = fast_copy({k: v for k, v in event.items() if k not in known})
        if extra is NOT_FAST:
            return NOT_FAST
        ev.update(extra)
    for field, check, required in fields:
        value = event.get(field, NOT_FAST)
        if value is NOT_FAST:
            if required:
                return NOT_FAST
            continue
        cls = type(value)
        if check == _INT:
            if cls is not int or not INT64_MIN <= value <= INT64_MAX:
                return NOT_FAST
        elif check == _OBJECT:
            if cls is not dict:
                return NOT_FAST
            copied = flat_copy(value, dict)
            if copied is NOT_FAST:
                copied = fast_copy(value)
            if copied is NOT_FAST:
                return NOT_FAST
            ev[field] = copied
        elif check == _STR or check == _NONEMPTY:
            if cls is not str or (check == _NONEMPTY and not value):
                return NOT_FAST
            if not (value.isascii() or fast_copy(value) is not NOT_FAST):
                return NOT_FAST
            if len(value) > _MAX_STRING_CHARS:
                return NOT_FAST
        else:
            return NOT_FAST  # no such kind in the envelope rows today: the general path
    return ev


def _event_type_error(event_type: object, n: int) -> ContractError:
    """The rejection of an ``event_type`` that is not a string or not in the tables."""
    if type(event_type) is not str:
        return ProtocolViolation(
            f"event_type must be a string, got {preview(event_type)}",
            where=f"events[{n}].event_type",
        )
    return UnsupportedProviderState(
        f"unknown event_type {preview(event_type)}", where=f"events[{n}].event_type"
    )


def _same_payload(
    first: dict[str, Any] | bytes, again: dict[str, Any], event_id: str, n: int
) -> bool:
    """True if an event whose ``event_id`` came before repeats its first payload exactly.

    "Same payload" is the canonical JSON (sorted keys; ``1``, ``1.0`` and ``true``
    stay distinct) of both. ``first`` is the id's replay record (see
    ``GeminiInteractionsStream._record``): the first event as the stream copied it,
    serialized only now that the id came again (a stream whose ids never repeat never
    serializes such an event), or the SHA-256 of its canonical JSON. Raises for the
    same id with another payload.
    """
    if type(first) is bytes:
        same = hashlib.sha256(canonical_bytes(again)).digest() == first
    else:
        same = canonical_bytes(first) == canonical_bytes(again)
    if not same:
        raise ProtocolViolation(
            f"event_id {preview(event_id)} replayed with a different payload",
            where=f"event {n}",
        )
    return True


class _Step:
    """One step of the stream, keyed by its ``index``; kept in ``step.start`` order."""

    __slots__ = ("index", "type", "role", "start", "delta_types", "deltas", "stopped", "text",
                 "initial", "arguments")

    def __init__(
        self,
        index: int,
        step_type: str,
        role: str,
        start: dict[str, Any],
        delta_types: frozenset[str],
    ) -> None:
        self.index = index
        self.type = step_type
        self.role = role
        self.start = start
        #: The ``delta.type`` values this step type allows (its row of the tables).
        self.delta_types = delta_types
        self.deltas: list[dict[str, Any]] = []
        self.stopped = False
        self.text: FragmentBuffer | None = None
        self.initial: dict[str, Any] | None = None
        self.arguments: dict[str, Any] | None = None


class GeminiInteractionsStream(StreamBase):
    """Incremental, sans-IO parser of one Interactions v1 event stream.

    ``feed(event)`` takes one event dict (the decoded SSE ``data`` object);
    ``close()`` returns the :class:`~._turn.GeminiInteractionsTurn`. Raises only
    :class:`~contracts.errors.ContractError` subclasses: ``ProtocolViolation``
    (illegal sequence/shape, event-id conflict), ``UnsupportedProviderState``
    (unknown event/step/delta type or status, v1beta-only steps),
    ``ProviderError`` (``error`` event, failed/cancelled/incomplete terminal),
    ``StreamTruncated`` (close before ``interaction.completed``),
    ``StrictJSONError``/``LimitExceeded`` (also an ``event_id`` or interaction id longer
    than a resume point holds), ``InvalidArgument`` (bad ``limits``, unknown ``revision``).
    Once anything was raised, every later call raises.
    """

    def __init__(self, *, revision: str = REVISION, limits: StreamLimits | None = None) -> None:
        self._tables, self._limits = self._begin(revision, limits, REVISIONS, _CONTRACT_NAME)
        self._state = self._tables.initial_state
        self._events = 0
        # event_id -> the replay record of the first event applied with it (_record,
        # _same_payload); one per event, holding no more than the stream keeps anyway.
        self._seen: dict[str, dict[str, Any] | bytes] = {}
        # The high-water event_id: that of the last event applied (a replay is not).
        self._last_event_id: str | None = None
        # Read on every event: copied out of the tables and limits once.
        self._max_events = self._limits.max_events
        self._optional_fields = tuple(self._tables.optional_event_fields.items())
        self._shapes = _shapes(self._tables)
        # event_type -> the size of an event with exactly its row's fields, event_type
        # and event_id: such an event has no unknown field (see _record). A status
        # update never gets this size: its record shares the interaction id.
        self._plain_sizes = {
            event_type: len(row) + 2 if event_type != "interaction.status_update" else -1
            for event_type, row in self._tables.event_fields.items()
        }
        self._index_low, self._index_high = self._tables.index_range
        self._arguments_delta_fields = self._tables.arguments_delta_fields
        self._steps: list[_Step] = []
        self._by_index: dict[int, _Step] = {}
        self._call_ids: set[str] = set()
        self._answered_ids: set[str] = set()
        self._fragment_bytes = 0
        self._interaction_id = ""
        self._status = ""
        self._usage: dict[str, Any] | None = None
        self._status_updates: list[str] = []

    @property
    def interaction_id(self) -> str | None:
        """The Interaction's id from ``interaction.created`` (``None`` before it)."""
        return self._interaction_id or None

    @property
    def last_event_id(self) -> str | None:
        """The high-water ``event_id``: that of the last event applied (first
        deliveries only; an identical replay of an earlier id does not move it, an
        event without an id leaves it as it was). ``None`` if no event had one."""
        return self._last_event_id

    @property
    def resume_point(self) -> GeminiResumePoint | None:
        """What to persist to resume this Interaction's GET stream after a disconnect:
        ``interaction_id`` + ``last_event_id``; ``None`` while either is unknown (then
        there is nothing a GET could resume after). Only meaningful for a stored
        Interaction (``store`` true): a creation POST is never replayed."""
        if not self._interaction_id or self._last_event_id is None:
            return None
        return GeminiResumePoint(self._interaction_id, self._last_event_id)

    def feed(self, event: object) -> None:
        """Consume one event. Raises a ``ContractError``; any exception poisons the stream."""
        # Poison.run without the closure it takes (one call less per event).
        poison = self._poison
        poison.check()
        try:
            self._feed(event)
        except BaseException as exc:
            poison.poison(exc)
            raise

    def close(self) -> GeminiInteractionsTurn:
        """End of stream: return the turn, or raise (``StreamTruncated`` before the terminal)."""
        return self._poison.finish(self._close)

    # ------------------------------------------------------------------ internals

    def _feed(self, event: object) -> None:
        n = self._events
        self._events = n + 1
        if n >= self._max_events:
            raise LimitExceeded(f"more than {self._max_events} events", where=f"event {n}")
        if type(event) is not dict:
            raise ProtocolViolation(
                f"an event must be an object, got {preview(event)}", where=f"event {n}"
            )
        # The stream's own copy, of exact JSON types. The common event is read field by
        # field (_read_exact: each known field checked once, as its kind and as JSON);
        # anything else, or anything in doubt, goes through the general copier, which
        # accepts it or raises what it always raised. Messages and where= are
        # formatted only on the way to a rejection.
        ev: dict[str, Any] = _read_exact(event, self._shapes)
        fields_checked = ev is not NOT_FAST
        if not fields_checked:
            ev = copy_json(event, what=f"events[{n}]", where=f"event {n}")
            event_type = ev.get("event_type")
            if event_type is None:
                _reject_generate_content(self._tables, ev, f"event {n}", f"events[{n}]")
            if type(event_type) is not str or event_type not in self._shapes:
                raise _event_type_error(event_type, n)
            for field, kind in self._optional_fields:
                if field in ev and not kind_ok(ev[field], kind):
                    check_fields(ev, {field: kind}, f"events[{n}]")  # raises, saying why
        event_type = ev["event_type"]
        event_id = ev.get("event_id")
        if event_id is not None:
            if len(event_id) > MAX_RESUME_ID_CHARS:
                raise _id_too_long("event_id", event_id, f"events[{n}].event_id")
            seen = self._seen.get(event_id)
            if seen is not None and _same_payload(seen, ev, event_id, n):
                return  # idempotent redelivery: already applied once
        next_state = self._tables.transitions[self._state].get(event_type)
        if next_state is None:
            raise ProtocolViolation(
                f"{event_type} is not allowed in state {self._state!r}", where=f"event {n}"
            )
        if not fields_checked:
            fields = self._tables.event_fields[event_type]
            if not fields_ok(ev, fields):
                check_fields(ev, fields, f"events[{n}]")  # raises, saying why
        _HANDLERS[event_type](self, ev, n)
        self._state = next_state
        if event_id is not None:
            # The event itself is its replay record when it holds nothing the stream
            # does not keep anyway: the common event, whose keys are its row, its
            # event_type and its event_id, is told by its size alone.
            self._seen[event_id] = (
                ev if len(ev) == self._plain_sizes[event_type] else self._record(ev, event_type))
            self._last_event_id = event_id

    def _record(self, ev: dict[str, Any], event_type: str) -> dict[str, Any] | bytes:
        """What the stream keeps of an applied event to compare a replay of its id.

        The event itself (compared lazily, see :func:`_same_payload`) when it holds
        nothing the stream does not keep anyway: its step, delta, argument text and
        status are the stream's own objects, and a status update's interaction id is
        replaced by the equal one of ``interaction.created``. An event with fields
        outside its envelope (kept nowhere else, of any size) is kept as the SHA-256 of
        its canonical JSON instead, computed now. So the records of N events cost a
        small constant each, not N copies of what they carried (Decision 40).
        """
        if not self._shapes[event_type][0].issuperset(ev):
            return hashlib.sha256(canonical_bytes(ev)).digest()
        if event_type == "interaction.status_update":
            ev["interaction_id"] = self._interaction_id  # equal: checked by its handler
        return ev

    def _index(self, ev: Mapping[str, Any], n: int) -> int:
        index: int = ev["index"]  # an int by the event's field row
        if not self._index_low <= index <= self._index_high:
            raise ProtocolViolation(
                f"index {index} is outside [{self._index_low}, {self._index_high}]",
                where=f"events[{n}].index",
            )
        return index

    def _open_step(self, ev: Mapping[str, Any], n: int) -> _Step:
        index: int = ev["index"]  # an int by the event's field row
        if not self._index_low <= index <= self._index_high:
            self._index(ev, n)  # raises, saying why
        step = self._by_index.get(index)
        if step is None:
            raise ProtocolViolation(
                f"refers to index {index} without step.start", where=f"events[{n}].index"
            )
        if step.stopped:
            raise ProtocolViolation(
                f"refers to index {index} after its step.stop", where=f"events[{n}].index"
            )
        return step

    def _on_created(self, ev: dict[str, Any], n: int) -> None:
        interaction: dict[str, Any] = ev["interaction"]
        where = f"events[{n}].interaction"
        check_fields(interaction, self._tables.interaction_fields, where)
        if len(interaction["id"]) > MAX_RESUME_ID_CHARS:
            raise _id_too_long("interaction id", interaction["id"], f"{where}.id")
        self._interaction_id = interaction["id"]
        meaning = meaning_of(self._tables, interaction["status"], f"{where}.status")
        if meaning != "non_terminal":
            raise ProtocolViolation(
                "interaction.created must carry a non-terminal status", where=f"{where}.status"
            )

    def _on_step_start(self, ev: dict[str, Any], n: int) -> None:
        index = self._index(ev, n)
        step: dict[str, Any] = ev["step"]
        where = f"events[{n}].step"
        role = role_of(self._tables, step.get("type"), where)
        if index in self._by_index:
            raise ProtocolViolation(
                f"index {index} already used in this stream", where=f"events[{n}].index"
            )
        if len(self._steps) >= self._limits.max_items:
            raise LimitExceeded(f"more than {self._limits.max_items} steps", where=where)
        check_fields(step, self._tables.stream_step_fields[role], where)
        state = _Step(index, step["type"], role, step, self._tables.delta_types[step["type"]])
        if role == "client_call":
            call_id: str = step["id"]
            if call_id in self._call_ids:
                raise ProtocolViolation(
                    f"duplicate function_call id {preview(call_id)}", where=f"{where}.id"
                )
            if call_id in self._answered_ids:
                raise _already_answered(call_id, f"{where}.id")
            self._call_ids.add(call_id)
            initial = step.get("arguments")
            if initial is not None and type(initial) is not dict:
                raise ProtocolViolation(
                    f"arguments must be an object, got {preview(initial)}",
                    where=f"{where}.arguments",
                )
            state.initial = initial
        elif role == "client_result":
            self._note_result(step, where)
        self._steps.append(state)
        self._by_index[index] = state

    def _note_result(self, obj: Mapping[str, Any], where: str) -> None:
        """Record a streamed function_result's call_id; an answered call is never released."""
        call_id = obj.get("call_id")
        if type(call_id) is not str:
            return
        if call_id in self._call_ids:
            raise _already_answered(call_id, f"{where}.call_id")
        self._answered_ids.add(call_id)

    def _on_step_delta(self, ev: dict[str, Any], n: int) -> None:
        # _open_step inline: the one event of every fragment.
        step = self._by_index.get(ev["index"])
        if step is None or step.stopped:
            step = self._open_step(ev, n)  # raises, saying why
        delta: dict[str, Any] = ev["delta"]
        delta_type = delta.get("type")
        if type(delta_type) is not str or delta_type not in step.delta_types:
            raise self._delta_type_error(step, delta_type, n)
        if step.role != "client_call":
            if step.role == "client_result":
                self._note_result(delta, f"events[{n}].delta")
            step.deltas.append(delta)
            return
        if not self._arguments_delta_fields.issuperset(delta):
            # Unknown fields are kept raw; they make the step unprovable for replay.
            step.deltas.append(delta)
        fragment = delta.get("arguments")
        if fragment is None:
            return  # optional field: absent (or null) is no fragment, never "None"
        if type(fragment) is not str:
            raise ProtocolViolation(
                f"arguments must be a string, got {preview(fragment)}",
                where=f"events[{n}].delta.arguments",
            )
        if not fragment:
            return
        if step.initial:
            raise ProtocolViolation(
                "argument deltas after a non-empty step.start arguments object",
                where=f"events[{n}].delta.arguments",
            )
        if step.text is None:
            step.text = FragmentBuffer(
                self._limits.max_fragment_bytes, f"arguments of step index {step.index}"
            )
        try:
            size = step.text.append(fragment)
        except LimitExceeded as exc:
            raise LimitExceeded(exc.message, where=f"events[{n}].delta.arguments") from exc
        self._fragment_bytes += size
        if self._fragment_bytes > self._limits.max_total_fragment_bytes:
            raise LimitExceeded(
                f"argument text exceeds {self._limits.max_total_fragment_bytes} bytes",
                where=f"events[{n}].delta.arguments",
            )

    def _delta_type_error(self, step: _Step, delta_type: object, n: int) -> ContractError:
        """Why a ``step.delta``'s ``delta.type`` is rejected for ``step``."""
        where = f"events[{n}].delta.type"
        if type(delta_type) is not str:
            return ProtocolViolation(
                f"delta type must be a string, got {preview(delta_type)}", where=where
            )
        if not any(delta_type in allowed for allowed in self._tables.delta_types.values()):
            return UnsupportedProviderState(f"unknown delta type {preview(delta_type)}",
                                            where=where)
        return ProtocolViolation(
            f"delta type {preview(delta_type)} not allowed for a {step.type} step", where=where
        )

    def _on_step_stop(self, ev: dict[str, Any], n: int) -> None:
        step = self._open_step(ev, n)
        step.stopped = True
        if step.role != "client_call":
            return
        where = f"event {n}"
        if step.text is not None:
            try:
                parsed = strict_loads(step.text.text())
            except (StrictJSONError, LimitExceeded) as exc:
                raise type(exc)(
                    f"arguments of step index {step.index}: {exc.message}", where=where
                ) from exc
            step.text = None
            if type(parsed) is not dict:
                raise ProtocolViolation(
                    f"arguments of step index {step.index} are not a JSON object", where=where
                )
            # strict_loads has the copier's bounds: its value is already plain JSON.
            step.arguments = parsed
        elif step.initial is not None:
            step.arguments = step.initial
        else:
            raise ProtocolViolation(
                f"function_call step index {step.index} stopped without arguments", where=where
            )

    def _on_status_update(self, ev: dict[str, Any], n: int) -> None:
        if ev["interaction_id"] != self._interaction_id:
            raise ProtocolViolation(
                "interaction_id differs from interaction.created",
                where=f"events[{n}].interaction_id",
            )
        status: str = ev["status"]
        meaning_of(self._tables, status, f"events[{n}].status")
        self._status_updates.append(status)  # informational only

    def _on_completed(self, ev: dict[str, Any], n: int) -> None:
        interaction: dict[str, Any] = ev["interaction"]
        where = f"events[{n}].interaction"
        check_fields(interaction, self._tables.interaction_fields, where)
        if interaction["id"] != self._interaction_id:
            raise ProtocolViolation(
                "interaction id differs from interaction.created", where=f"{where}.id"
            )
        status: str = interaction["status"]
        meaning = meaning_of(self._tables, status, f"{where}.status")
        for step in self._steps:
            if not step.stopped:
                raise ProtocolViolation(
                    f"step index {step.index} has no step.stop before interaction.completed",
                    where=f"event {n}",
                )
        steps = interaction.get("steps")
        if steps is not None and (type(steps) is not list or steps):
            raise UnsupportedProviderState(
                "interaction.steps is non-empty; terminal step reconciliation is not part of "
                "the pinned stream contract",
                where=f"{where}.steps",
            )
        self._usage = _check_usage(self._tables, interaction.get("usage"), f"{where}.usage")
        n_calls = sum(1 for s in self._steps if s.role == "client_call")
        _terminal_gate(status, meaning, n_calls, f"{where}.status")
        self._status = status

    def _on_error(self, ev: dict[str, Any], n: int) -> None:
        error = ev.get("error")
        code = message = None
        if type(error) is dict:
            code, message = error.get("code"), error.get("message")
        raise ProviderError(
            f"error event (code {preview(code)}): {preview(message, 200)}", where=f"event {n}"
        )

    def _close(self) -> GeminiInteractionsTurn:
        if self._state != self._tables.final_state:
            open_steps = sum(1 for s in self._steps if not s.stopped)
            raise StreamTruncated(
                f"stream ended before interaction.completed after {self._events} events "
                f"({open_steps} step(s) still open)",
                where=f"event {self._events}",
            )
        releases = self._tables.statuses[self._status] == "tool_turn"
        steps: list[dict[str, Any]] = []
        calls: list[GeminiFunctionCall] = []
        for st in self._steps:
            raw = dict(st.start)
            if st.arguments is not None:  # only client_call steps have arguments
                raw["arguments"] = st.arguments
                if releases:
                    calls.append(
                        GeminiFunctionCall(
                            call_id=raw["id"],
                            name=raw["name"],
                            arguments=copy_json(st.arguments, what="arguments"),
                            index=st.index,
                        )
                    )
            steps.append(raw)
        return seal(
            GeminiInteractionsTurn(
                interaction_id=self._interaction_id,
                status=self._status,
                steps=tuple(steps),
                step_deltas=tuple(tuple(st.deltas) for st in self._steps),
                step_indexes=tuple(st.index for st in self._steps),
                calls=tuple(calls),
                usage=self._usage,
                status_updates=tuple(self._status_updates),
                revision=self._revision,
                digest="",
            )
        )


_Handler = Callable[[GeminiInteractionsStream, dict[str, Any], int], None]
#: event_type -> handler; every event type of every revision has one (checked below).
_HANDLERS: Final[dict[str, _Handler]] = {
    "interaction.created": GeminiInteractionsStream._on_created,
    "step.start": GeminiInteractionsStream._on_step_start,
    "step.delta": GeminiInteractionsStream._on_step_delta,
    "step.stop": GeminiInteractionsStream._on_step_stop,
    "interaction.status_update": GeminiInteractionsStream._on_status_update,
    "interaction.completed": GeminiInteractionsStream._on_completed,
    "error": GeminiInteractionsStream._on_error,
}


def check_handlers(handlers: Mapping[str, object]) -> None:
    """Raise ``RuntimeError`` unless every event type of every revision has a handler."""
    for name, tables in REVISIONS.items():
        missing = set(tables.event_fields) - set(handlers)
        if missing:
            raise RuntimeError(
                f"gemini_interactions revision {name}: event types without a handler: "
                f"{sorted(missing)}"
            )


def parse_events(
    events: Iterable[object],
    *,
    revision: str = REVISION,
    limits: StreamLimits | None = None,
) -> GeminiInteractionsTurn:
    """Parse a complete event sequence; see :class:`GeminiInteractionsStream`.

    ``events`` is read at most ``limits.max_events + 1`` times, so an endless
    iterable is rejected like a long list.
    """
    stream = GeminiInteractionsStream(revision=revision, limits=limits)
    # The unguarded _feed: the first exception ends this call and the stream with it
    # (no one else holds it), so poisoning it per event would guard nothing.
    return drive(stream._feed, stream.close, events, stream._max_events)


def resume_stream(
    events: Iterable[object],
    point: GeminiResumePoint,
    *,
    revision: str = REVISION,
    limits: StreamLimits | None = None,
) -> GeminiInteractionsStream:
    """Rebuild an open stream from persisted state, ready for the resumed GET stream.

    ``events``: the events applied before the disconnect, as persisted by the caller
    (a stream cannot be resumed from the two ids alone: the steps started before the
    resume point are needed to finish the turn). ``point``: the
    :class:`GeminiResumePoint` persisted with them. Returns a new, unclosed
    :class:`GeminiInteractionsStream` that has applied ``events``; feed it the events
    of ``GET .../interactions/{point.interaction_id}?stream=true&last_event_id=...``
    and ``close()`` it. Replays of seen ids in that stream are idempotent; a
    conflicting payload fails.

    Raises what feeding ``events`` raises; :class:`InvalidArgument` for a bad
    ``point``; :class:`ProtocolViolation` if ``events`` are of another Interaction
    than ``point.interaction_id``, or do not hold ``point.last_event_id`` (resuming
    after an event the persisted events do not hold would skip events for good).
    """
    checked = check_resume_point(point)
    stream = GeminiInteractionsStream(revision=revision, limits=limits)
    drive(stream.feed, lambda: None, events, stream._max_events)
    if stream._interaction_id != checked.interaction_id:
        raise ProtocolViolation(
            f"the persisted events are of interaction {preview(stream._interaction_id)}, "
            f"the resume point names {preview(checked.interaction_id)}",
            where="point.interaction_id",
        )
    if checked.last_event_id not in stream._seen:
        raise ProtocolViolation(
            f"the persisted events do not hold event_id {preview(checked.last_event_id)}; "
            "resuming after it would skip the events in between",
            where="point.last_event_id",
        )
    return stream


# ----------------------------------------------------------------- snapshots

_ORIGINS: Final = ("create", "get")


def _reject_generate_content(
    tables: RevisionTables, obj: dict[str, Any], what: str, where: str
) -> None:
    """Raise if ``obj`` (without the Interactions discriminator) is GenerateContent's."""
    found = sorted(key for key in obj if key in tables.generate_content_fields)
    if found:
        raise ProtocolViolation(
            f"{what} is a GenerateContent response (it has {', '.join(found[:3])} and no "
            "Interactions discriminator), not an Interactions event or object: "
            "GenerateContent (contents -> candidates -> content.parts, candidate-level "
            "finishReason, a safety envelope; legacy but fully supported) is a separate "
            "API family this parser does not read",
            where=where,
        )


def parse_interaction(
    interaction: object,
    *,
    origin: str,
    revision: str = REVISION,
    limits: StreamLimits | None = None,
) -> GeminiInteractionSnapshot:
    """Parse a non-streamed Interaction object (create response or GET) into a snapshot.

    ``origin="create"``: ``steps`` must hold only model-generated steps. ``origin="get"``:
    ``steps`` must start with the ``user_input`` history. ``steps`` must be present.
    Raises ``ProtocolViolation`` (shape), ``UnsupportedProviderState`` (unknown or
    v1beta-only step type, unknown status, unknown revision), ``ProviderError``
    (failed/cancelled/incomplete), ``LimitExceeded``, ``InvalidArgument`` (``origin``
    not ``"create"``/``"get"``, bad ``limits``).
    """
    tables = check_revision(revision, REVISIONS, _CONTRACT_NAME)
    bounds = check_stream_limits(limits)
    if type(origin) is not str or origin not in _ORIGINS:
        raise InvalidArgument(
            f"snapshot origin must be 'create' or 'get', got {preview(origin)}", where="origin"
        )
    if type(interaction) is not dict:
        raise ProtocolViolation(
            f"interaction must be an object, got {preview(interaction)}", where="interaction"
        )
    obj: dict[str, Any] = copy_json(interaction, what="interaction", where="interaction")
    if "status" not in obj:
        _reject_generate_content(tables, obj, "interaction", "interaction")
    check_fields(obj, tables.interaction_fields, "interaction")
    status: str = obj["status"]
    meaning = meaning_of(tables, status, "interaction.status")
    raw_steps = obj.get("steps")
    if type(raw_steps) is not list:
        raise ProtocolViolation(
            f"steps must be a list (a complete snapshot), got {preview(raw_steps)}",
            where="interaction.steps",
        )
    if len(raw_steps) > bounds.max_items:
        raise LimitExceeded(f"more than {bounds.max_items} steps", where="interaction.steps")
    roles: list[str] = []
    call_ids: set[str] = set()
    for i, step in enumerate(raw_steps):
        where = f"interaction.steps[{i}]"
        if type(step) is not dict:
            raise ProtocolViolation(f"a step must be an object, got {preview(step)}", where=where)
        role = role_of(tables, step.get("type"), where)
        check_fields(step, tables.snapshot_step_fields[role], where)
        roles.append(role)
        if role == "client_call":
            if step["id"] in call_ids:
                raise ProtocolViolation(
                    f"duplicate function_call id {preview(step['id'])}", where=f"{where}.id"
                )
            call_ids.add(step["id"])
    if origin == "create":
        for i, role in enumerate(roles):
            if role in INPUT_ROLES:
                raise ProtocolViolation(
                    "a create response holds only model-generated steps",
                    where=f"interaction.steps[{i}]",
                )
        current = 0
    else:
        if not roles or roles[0] != "input":
            raise ProtocolViolation(
                "a GET snapshot starts with user_input", where="interaction.steps[0]"
            )
        current = max(i for i, r in enumerate(roles) if r in INPUT_ROLES) + 1
        answered = {
            s["call_id"] for s, r in zip(raw_steps, roles, strict=True) if r == "client_result"
        }
        for i in range(current):
            if roles[i] == "client_call" and raw_steps[i]["id"] not in answered:
                raise ProtocolViolation(
                    "earlier function_call has no function_result",
                    where=f"interaction.steps[{i}]",
                )
    current_calls = [
        s for s, r in zip(raw_steps[current:], roles[current:], strict=True) if r == "client_call"
    ]
    _terminal_gate(status, meaning, len(current_calls), "interaction.status")
    calls: tuple[GeminiFunctionCall, ...] = ()
    if meaning == "tool_turn":
        calls = tuple(
            GeminiFunctionCall(
                call_id=s["id"],
                name=s["name"],
                arguments=copy_json(s["arguments"], what="arguments"),
            )
            for s in current_calls
        )
    return seal(
        GeminiInteractionSnapshot(
            interaction_id=obj["id"],
            origin="create" if origin == "create" else "get",
            status=status,
            steps=tuple(raw_steps),
            calls=calls,
            usage=_check_usage(tables, obj.get("usage"), "interaction.usage"),
            revision=revision,
            digest="",
        )
    )


# At import: an event type without a handler fails here, never as a KeyError.
check_handlers(_HANDLERS)

if TYPE_CHECKING:

    def _conforms(
        s: GeminiInteractionsStream, t: GeminiInteractionsTurn, c: GeminiFunctionCall
    ) -> tuple[StreamProtocol[GeminiInteractionsTurn], TurnProtocol, CallProtocol]:
        return s, t, c

    def _conforms_snapshot(t: GeminiInteractionSnapshot) -> TurnProtocol:
        return t
