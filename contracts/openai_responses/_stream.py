"""OpenAI Responses API: an incremental, sans-IO parser of one streamed Response.

The input is the typed-SSE projection of ``POST /v1/responses`` with ``stream: true``:
one JSON object per server-sent event, keyed by ``type`` and ``sequence_number``
(the shape of openai-python's ``ResponseStreamEvent`` union). The parser releases
function calls only after a ``response.completed`` whose terminal ``output`` agrees
with every item lifecycle seen in the stream.

Rules (the tables in ``_tables.py`` are the contract):

* ``sequence_number`` is required on every event and strictly increases; it need not
  start at 0 or be contiguous.
* The stream moves through the states of ``transitions`` (``initial`` ->
  ``streaming`` -> ``completed``); an event type without a row in the current state
  is an illegal transition.
* Every output item binds its whole lifecycle by ``output_index``:
  ``response.output_item.added`` -> item sub-events -> ``response.output_item.done``,
  each step a row of ``item_transitions``; item sub-events name both
  ``output_index`` and ``item_id``, so two calls' argument deltas may interleave in
  any order (there is no "current call").
* ``response.function_call_arguments.done`` (``arguments``, ``name``), the done item
  and the terminal output agree with the concatenated deltas on ``id``, ``call_id``,
  ``name`` and ``arguments``; the terminal output holds every added item, in order,
  byte-for-byte equal (canonical JSON) to its done form.
* Arguments are parsed with :mod:`contracts.strict_json` only at the terminal and must
  be a JSON object.
* ``response.failed``, ``response.incomplete``, ``error``, EOF before the terminal and
  any illegal sequence release nothing.
* Unknown optional fields are kept in the raw data; unknown event types, item types,
  statuses, caller types and function namespaces fail closed.

Events are plain JSON values of exact builtin types (what :mod:`contracts.strict_json`
produces); objects the parser keeps or reads below the event's top level are copied
with :func:`contracts._values.copy_json` first, so no caller method is ever called.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from .. import strict_json
from .._kinds import KIND_WORDS, check_fields, kind_ok
from .._stream import (
    FragmentBuffer,
    StreamBase,
    StreamLimits,
    check_stream_limits,
    drift_hint,
    drive,
)
from .._values import copy_json, preview
from ..digest import canonical_bytes, canonical_digest
from ..errors import (
    LimitExceeded,
    ProtocolViolation,
    ProviderError,
    SnapshotMutated,
    StreamTruncated,
    StrictJSONError,
    UnsupportedProviderState,
)
from ._tables import (
    I_DONE,
    MAX_IDENTIFIER_CHARS,
    MAX_SEQUENCE_NUMBER,
    REVISION,
    REVISIONS,
    ROLE_ARGS_DELTA,
    ROLE_ARGS_DONE,
    ROLE_COMPLETED,
    ROLE_CREATED,
    ROLE_ERROR,
    ROLE_ITEM_ADDED,
    ROLE_ITEM_DONE,
    ROLE_ITEM_PART,
    ROLE_PROVIDER_TERMINAL,
    ROLE_STATUS,
    ROLES,
    S_COMPLETED,
    S_INITIAL,
    EventSpec,
    ItemSpec,
    RevisionTables,
)
from ._turn import OpenAIResponsesCall, OpenAIResponsesTurn, PendingFunctionCall

if TYPE_CHECKING:
    from .._protocols import CallProtocol, StreamProtocol, TurnProtocol

__all__ = ["OpenAIResponsesStream", "parse_events"]

CONTRACT: Final = "OpenAI Responses"


def _optional_elsewhere(revision: str, event_type: str, field: str) -> str:
    """A drift hint naming the revisions whose ``event_type`` does not require ``field``."""

    def accepts(tables: RevisionTables) -> bool:
        spec = tables.events.get(event_type)
        return spec is not None and field not in spec.required

    return drift_hint(REVISIONS, revision, accepts)


def _canonical(value: Any, where: str) -> bytes:
    """Canonical bytes of a value already copied by ``copy_json`` (exact JSON types)."""
    try:
        return canonical_bytes(value)
    except SnapshotMutated as exc:  # only a RecursionError can get here
        raise LimitExceeded(f"value cannot be serialised canonically: {exc.message}",
                            where=where) from exc


class _Part:
    """Lifecycle state of one content/summary part of an item (internal)."""

    __slots__ = ("type", "text_field", "text", "text_done", "done")

    def __init__(self, part_type: str, text_field: str, limit: int, what: str) -> None:
        self.type = part_type
        self.text_field = text_field
        self.text = FragmentBuffer(limit, what)
        self.text_done = False
        self.done = False


class _Item:
    """Lifecycle state of one output item (internal): ``state`` is a row of
    ``item_transitions``."""

    __slots__ = (
        "index", "type", "spec", "item_id", "state", "done_bytes",
        "call_id", "name", "args", "caller_bytes", "parts",
    )

    def __init__(self, index: int, item_type: str, spec: ItemSpec, item_id: str,
                 families: tuple[str, ...]) -> None:
        self.index = index
        self.type = item_type
        self.spec = spec
        self.item_id = item_id
        self.state = spec.first_state
        self.done_bytes = b""
        self.call_id = ""
        self.name = ""
        self.args: FragmentBuffer | None = None
        self.caller_bytes = b"null"
        self.parts: dict[str, list[_Part]] = {family: [] for family in families}


class OpenAIResponsesStream(StreamBase):
    """Incremental, sans-IO parser of one streamed OpenAI Response.

    Feed each decoded event (a dict) with :meth:`feed`; call :meth:`close` at end of
    stream to get the :class:`OpenAIResponsesTurn`. Nothing is executable before a
    valid ``response.completed``: :attr:`calls` is empty until then. Every rejection is
    a :class:`~contracts.errors.ContractError` (``ProtocolViolation`` for illegal shapes
    or order, ``ProviderError`` for failed/incomplete/error, ``StreamTruncated`` for EOF
    before the terminal, ``UnsupportedProviderState`` for unknown or unimplemented
    semantics, ``LimitExceeded``, ``StrictJSONError``); the constructor raises
    ``InvalidArgument`` for an unknown revision and for
    bad limits. After anything was raised from ``feed``/``close`` every later call
    raises a ``ContractError`` (poison on any exception).
    """

    def __init__(self, *, revision: str = REVISION, limits: StreamLimits | None = None) -> None:
        self._tables, self._limits = self._begin(revision, limits, REVISIONS, CONTRACT)
        self._state = S_INITIAL
        self._count = 0
        self._last_seq = -1
        self._response_id: str | None = None
        self._items: list[_Item] = []
        self._item_ids: set[str] = set()
        self._call_ids: set[str] = set()
        self._fragment_bytes = 0
        self._turn: OpenAIResponsesTurn | None = None
        self._families = {
            item_type: tuple(family for (owner, family) in self._tables.part_types
                             if owner == item_type)
            for item_type in self._tables.items
        }

    # -- public ------------------------------------------------------------

    @property
    def state(self) -> str:
        """The stream state (a row of ``REVISIONS[revision].transitions``)."""
        return self._state

    @property
    def events_fed(self) -> int:
        """How many events were fed (accepted or not)."""
        return self._count

    @property
    def response_id(self) -> str | None:
        """The Response id from ``response.created`` (``None`` before it)."""
        return self._response_id

    @property
    def terminated(self) -> bool:
        """True once a valid ``response.completed`` was accepted (False once poisoned)."""
        return self._state == S_COMPLETED and not self._poison.poisoned

    @property
    def calls(self) -> tuple[OpenAIResponsesCall, ...]:
        """Executable calls: empty until a valid ``response.completed`` was accepted,
        and empty again once the stream is poisoned (e.g. by an event after it)."""
        if self._turn is None or not self.terminated:
            return ()
        return self._turn.calls

    def pending_calls(self) -> tuple[PendingFunctionCall, ...]:
        """Provisional view of every function call seen so far (never executable)."""
        out: list[PendingFunctionCall] = []
        for item in self._items:
            if item.spec.executable and item.args is not None:
                out.append(PendingFunctionCall(
                    output_index=item.index, item_id=item.item_id, call_id=item.call_id,
                    name=item.name, arguments_text=item.args.text(),
                    arguments_done=item.state not in self._args_open_states(),
                    item_done=item.state == I_DONE,
                ))
        return tuple(out)

    def feed(self, event: object) -> None:
        """Consume one event. Raises a ContractError (and poisons) on any violation."""
        self._poison.run(lambda: self._feed(event))

    def close(self) -> OpenAIResponsesTurn:
        """End of stream: return the turn, or raise ``StreamTruncated`` before a terminal."""
        return self._poison.finish(self._close)

    def _close(self) -> OpenAIResponsesTurn:
        if self._state != S_COMPLETED or self._turn is None:
            raise StreamTruncated(
                "stream ended before response.completed; no call is released",
                where=f"after event {self._count - 1}" if self._count else "empty stream",
            )
        return self._turn

    # -- dispatch ----------------------------------------------------------

    def _feed(self, event: object) -> None:
        index = self._count
        self._count += 1
        where = f"event {index}"
        if index >= self._limits.max_events:
            raise LimitExceeded(f"more than {self._limits.max_events} events", where=where)
        if type(event) is not dict:
            raise ProtocolViolation(f"event must be a JSON object, got {preview(event)}",
                                    where=where)
        self._object(event, "event", where, keep=False)
        event_type = event.get("type")
        if type(event_type) is not str:
            raise ProtocolViolation(
                f"event field 'type' must be a string, got {preview(event_type)}",
                where=f"{where}.type")
        tables = self._tables
        spec = tables.events.get(event_type)
        if spec is None:
            known = tables.unmodeled_events.get(event_type)
            if known is not None:
                raise UnsupportedProviderState(
                    f"event type {preview(event_type)} is known but not implemented by "
                    f"contract revision {self._revision} ({known})", where=where)
            hint = drift_hint(REVISIONS, self._revision,
                              lambda t: event_type in t.events or event_type in t.unmodeled_events)
            raise UnsupportedProviderState(
                f"unknown event type {preview(event_type)} could change execution semantics"
                f"{hint}", where=where)
        where = f"{where} ({event_type})"
        nxt = tables.transitions[self._state].get(event_type)
        if nxt is None:
            raise ProtocolViolation(
                f"{event_type} is not allowed in state {self._state!r}: "
                f"{tables.states[self._state]}", where=where)
        seq = event.get("sequence_number")
        if type(seq) is not int or not kind_ok(seq, "int"):
            raise ProtocolViolation(
                "sequence_number is required and must be an integer in int64 range",
                where=f"{where}.sequence_number")
        if not 0 <= seq <= MAX_SEQUENCE_NUMBER:
            raise ProtocolViolation(f"sequence_number {seq} is negative",
                                    where=f"{where}.sequence_number")
        if seq <= self._last_seq:
            raise ProtocolViolation(
                f"sequence_number {seq} does not increase (previous {self._last_seq}): "
                "duplicate, replayed or reordered event", where=f"{where}.sequence_number")
        self._last_seq = seq
        for name, kind in spec.required.items():
            if not kind_ok(event.get(name), kind):
                hint = "" if name in event else _optional_elsewhere(
                    self._revision, event_type, name)
                raise ProtocolViolation(
                    f"required field {name!r} must be {KIND_WORDS[kind]}, got "
                    f"{preview(event.get(name))}{hint}", where=f"{where}.{name}")
        _HANDLERS[spec.role](self, event, event_type, spec, where)
        self._state = nxt

    # -- response-level events --------------------------------------------

    def _object(self, value: dict[str, Any], what: str, where: str, *,
                keep: bool) -> dict[str, Any]:
        """An exact dict made safe to read with ``get``: a private ``copy_json`` copy when
        it is kept or serialised (every value then of an exact JSON type), else the dict
        itself once its keys are exact strings (iterating an exact dict and looking up
        exact-str keys run no caller code; values read from it are type-checked)."""
        if keep:
            copied: dict[str, Any] = copy_json(value, what=what, where=where)
            return copied
        for key in value:
            if type(key) is not str:
                raise ProtocolViolation(f"{what} has a non-string key {preview(key)}",
                                        where=where)
        return value

    def _response(self, event: dict[str, Any], event_type: str, where: str, *,
                  keep: bool = False) -> dict[str, Any]:
        """The event's Response (a private copy if ``keep``), its id and status checked."""
        response = self._object(event["response"], "response", where, keep=keep)
        response_id = response.get("id")
        if type(response_id) is not str or not response_id:
            raise ProtocolViolation(
                f"response.id must be a non-empty string, got {preview(response_id)}",
                where=f"{where}.response.id")
        if len(response_id) > MAX_IDENTIFIER_CHARS:
            raise LimitExceeded(f"response.id longer than {MAX_IDENTIFIER_CHARS} characters",
                                where=f"{where}.response.id")
        if self._response_id is not None and response_id != self._response_id:
            raise ProtocolViolation(
                f"response.id {preview(response_id)} differs from the stream's "
                f"{preview(self._response_id)}", where=f"{where}.response.id")
        status = response.get("status")
        if type(status) is not str:
            raise ProtocolViolation(f"response.status must be a string, got {preview(status)}",
                                    where=f"{where}.response.status")
        if status not in self._tables.response_statuses:
            raise UnsupportedProviderState(f"unknown response status {preview(status)}",
                                           where=f"{where}.response.status")
        allowed = self._tables.response_event_statuses[event_type]
        if status not in allowed:
            raise ProtocolViolation(
                f"{event_type} carries response.status {preview(status)}; expected one of "
                f"{sorted(allowed)}", where=f"{where}.response.status")
        return response

    def _on_created(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                    where: str) -> None:
        response = self._response(event, event_type, where)
        output = response.get("output", [])
        if type(output) is not list or output:
            raise ProtocolViolation(
                "response.created must carry an empty output list; items enter only "
                "through response.output_item.added", where=f"{where}.response.output")
        self._response_id = response["id"]

    def _on_status(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                   where: str) -> None:
        self._response(event, event_type, where)

    def _on_error(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                  where: str) -> None:
        raise ProviderError(
            f"provider error event (code {preview(event.get('code'))}): "
            f"{preview(event['message'], 200)}; no call is released", where=where)

    def _on_provider_terminal(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                              where: str) -> None:
        response = self._object(event["response"], "response", where, keep=True)
        details = response.get("error") or response.get("incomplete_details")
        if type(details) is dict:
            details = details.get("code") or details.get("reason") or details.get("message")
        raise ProviderError(
            f"{event_type} (status {preview(response.get('status'))}, details "
            f"{preview(details)}); no call is released", where=where)

    # -- item lifecycle ------------------------------------------------------

    def _args_open_states(self) -> frozenset[str]:
        """Item states that still accept an argument delta."""
        return frozenset(state for state, row in self._tables.item_transitions.items()
                         if ROLE_ARGS_DELTA in row)

    def _item_step(self, state: _Item, role: str, event_type: str, where: str) -> str:
        """The item's next lifecycle state for an event of ``role``; a miss is illegal."""
        nxt = self._tables.item_transitions[state.state].get(role)
        if nxt is None:
            raise ProtocolViolation(
                f"{event_type} not allowed: output item {state.index} ({state.type}) is in "
                f"state {state.state!r}: {self._tables.item_states[state.state]}",
                where=where)
        return nxt

    def _identifier(self, obj: dict[str, Any], name: str, where: str) -> str:
        value = obj.get(name)
        if type(value) is not str or not value:
            raise ProtocolViolation(f"{name} must be a non-empty string, got {preview(value)}",
                                    where=f"{where}.{name}")
        if len(value) > MAX_IDENTIFIER_CHARS:
            raise LimitExceeded(f"{name} longer than {MAX_IDENTIFIER_CHARS} characters",
                                where=f"{where}.{name}")
        return value

    def _item_shape(self, item: dict[str, Any], where: str, *, at_done: bool) -> tuple[
            str, ItemSpec]:
        tables = self._tables
        item_type = item.get("type")
        if type(item_type) is not str:
            raise ProtocolViolation(f"item.type must be a string, got {preview(item_type)}",
                                    where=f"{where}.item.type")
        item_spec = tables.items.get(item_type)
        if item_spec is None:
            known = tables.unmodeled_items.get(item_type)
            if known is not None:
                raise UnsupportedProviderState(
                    f"output item type {preview(item_type)} is known but not implemented by "
                    f"contract revision {self._revision} ({known})", where=f"{where}.item.type")
            raise UnsupportedProviderState(
                f"unknown output item type {preview(item_type)} could change execution "
                "semantics", where=f"{where}.item.type")
        check_fields(item, item_spec.checked_fields, f"{where}.item", label="item field ")
        status = item.get("status")
        if status is not None or item_spec.status_required:
            if type(status) is not str:
                raise ProtocolViolation(f"item.status must be a string, got {preview(status)}",
                                        where=f"{where}.item.status")
            if status not in tables.item_statuses:
                raise UnsupportedProviderState(f"unknown item status {preview(status)}",
                                               where=f"{where}.item.status")
            allowed = tables.item_statuses_at_done if at_done else tables.item_statuses_at_added
            if status not in allowed:
                if at_done and status in tables.item_statuses_failed_at_done:
                    raise ProviderError(
                        f"output item ended {status}; no call is released",
                        where=f"{where}.item.status")
                raise ProtocolViolation(
                    f"item.status {status!r} not allowed here (expected {sorted(allowed)})",
                    where=f"{where}.item.status")
        for name, value in item_spec.constants.items():
            if item[name] != value:
                raise ProtocolViolation(f"{item_type} output item must have {name} {value!r}",
                                        where=f"{where}.item.{name}")
        return item_type, item_spec

    def _caller(self, item: dict[str, Any], where: str) -> bytes:
        namespace = item.get("namespace")
        if namespace is not None:
            raise UnsupportedProviderState(
                "function_call with a namespace is not implemented (namespaced tool "
                "semantics could change which function runs)", where=f"{where}.item.namespace")
        caller = item.get("caller")
        if caller is None:
            return b"null"
        if type(caller) is not dict:
            raise ProtocolViolation(f"item.caller must be an object or null, got {preview(caller)}",
                                    where=f"{where}.item.caller")
        caller = self._object(caller, "item.caller", where, keep=True)
        caller_type = caller.get("type")
        if type(caller_type) is not str:
            raise ProtocolViolation(
                f"item.caller.type must be a string, got {preview(caller_type)}",
                where=f"{where}.item.caller.type")
        supported = self._tables.caller_types.get(caller_type)
        if supported is None:
            raise UnsupportedProviderState(f"unknown caller type {preview(caller_type)}",
                                           where=f"{where}.item.caller.type")
        if not supported:
            raise UnsupportedProviderState(
                f"caller type {preview(caller_type)} (programmatic tool calling) is not "
                "implemented; it is not downgraded to an ordinary call",
                where=f"{where}.item.caller.type")
        return _canonical(caller, f"{where}.item.caller")

    def _on_item_added(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                       where: str) -> None:
        output_index: int = event["output_index"]
        if output_index != len(self._items):
            raise ProtocolViolation(
                f"output_index {output_index} is not the next output index "
                f"{len(self._items)}", where=f"{where}.output_index")
        if len(self._items) >= self._limits.max_items:
            raise LimitExceeded(f"more than {self._limits.max_items} output items",
                                where=where)
        # Copied although not kept: the added item must be plain JSON within the bounds
        # like its done form, not only in the fields read here.
        item = self._object(event["item"], "item", where, keep=True)
        item_type, item_spec = self._item_shape(item, where, at_done=False)
        item_id = self._identifier(item, "id", f"{where}.item")
        if item_id in self._item_ids:
            raise ProtocolViolation(f"duplicate output item id {preview(item_id)}",
                                    where=f"{where}.item.id")
        state = _Item(output_index, item_type, item_spec, item_id, self._families[item_type])
        if item_spec.executable:
            state.call_id = self._identifier(item, "call_id", f"{where}.item")
            if state.call_id in self._call_ids:
                raise ProtocolViolation(f"duplicate call_id {preview(state.call_id)}",
                                        where=f"{where}.item.call_id")
            state.name = self._identifier(item, "name", f"{where}.item")
            state.caller_bytes = self._caller(item, where)
            state.args = FragmentBuffer(
                self._limits.max_fragment_bytes, f"arguments of output item {output_index}")
            self._append(state.args, item["arguments"], f"{where}.item.arguments")
            self._call_ids.add(state.call_id)
        self._item_ids.add(item_id)
        self._items.append(state)

    def _open_item(self, event: dict[str, Any], spec: EventSpec, where: str) -> _Item:
        output_index: int = event["output_index"]
        if not 0 <= output_index < len(self._items):
            raise ProtocolViolation(f"output_index {output_index} names no added item",
                                    where=f"{where}.output_index")
        state = self._items[output_index]
        if event["item_id"] != state.item_id:
            raise ProtocolViolation(
                f"item_id {preview(event['item_id'])} is not the id of output item "
                f"{output_index} ({preview(state.item_id)})", where=f"{where}.item_id")
        if state.type not in spec.item_types:
            raise ProtocolViolation(f"event does not apply to a {state.type!r} item",
                                    where=where)
        return state

    def _append(self, buffer: FragmentBuffer, fragment: str, where: str) -> None:
        try:
            size = buffer.append(fragment)
        except LimitExceeded as exc:
            raise LimitExceeded(exc.message, where=where) from exc
        self._fragment_bytes += size
        if self._fragment_bytes > self._limits.max_total_fragment_bytes:
            raise LimitExceeded(
                f"streamed argument and text bytes of the turn exceed "
                f"{self._limits.max_total_fragment_bytes} bytes", where=where)

    def _on_args_delta(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                       where: str) -> None:
        state = self._open_item(event, spec, where)
        nxt = self._item_step(state, ROLE_ARGS_DELTA, event_type, where)
        if state.args is None:  # pragma: no cover - the tables bind only executable items
            raise ProtocolViolation("no argument buffer", where=where)
        self._append(state.args, event["delta"], f"{where}.delta")
        state.state = nxt

    def _on_args_done(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                      where: str) -> None:
        state = self._open_item(event, spec, where)
        nxt = self._item_step(state, ROLE_ARGS_DONE, event_type, where)
        name = event.get("name")
        if name is not None and (type(name) is not str or name != state.name):
            raise ProtocolViolation(
                f"name {preview(name)} differs from the item's name {preview(state.name)}",
                where=f"{where}.name")
        if state.args is None or event["arguments"] != state.args.text():
            raise ProtocolViolation(
                "arguments differ from the concatenated argument deltas",
                where=f"{where}.arguments")
        state.state = nxt

    def _on_item_part(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                      where: str) -> None:
        state = self._open_item(event, spec, where)
        nxt = self._item_step(state, ROLE_ITEM_PART, event_type, where)
        part_spec = self._tables.part_events[event_type]
        parts = state.parts[part_spec.family]
        index: int = event[part_spec.index_field]
        index_where = f"{where}.{part_spec.index_field}"
        if part_spec.action == "add":
            if index != len(parts):
                raise ProtocolViolation(
                    f"{part_spec.index_field} {index} is not the next part index "
                    f"{len(parts)}", where=index_where)
            added = self._object(event["part"], "part", where, keep=False)
            part_type = added.get("type")
            if type(part_type) is not str:
                raise ProtocolViolation(f"part.type must be a string, got {preview(part_type)}",
                                        where=f"{where}.part.type")
            text_field = self._tables.part_types[(state.type, part_spec.family)].get(part_type)
            if text_field is None:
                raise UnsupportedProviderState(
                    f"part type {preview(part_type)} is not implemented for "
                    f"{state.type} {part_spec.family}", where=f"{where}.part.type")
            initial = added.get(text_field, "")
            if type(initial) is not str:
                raise ProtocolViolation(
                    f"part.{text_field} must be a string, got {preview(initial)}",
                    where=f"{where}.part.{text_field}")
            part = _Part(part_type, text_field, self._limits.max_fragment_bytes,
                         f"{part_spec.family} part {index} of output item {state.index}")
            self._append(part.text, initial, f"{where}.part.{text_field}")
            parts.append(part)
            state.state = nxt
            return
        if not 0 <= index < len(parts):
            raise ProtocolViolation(f"{part_spec.index_field} {index} names no added part",
                                    where=index_where)
        part = parts[index]
        if part.done:
            raise ProtocolViolation(f"part {index} is already done", where=index_where)
        if part_spec.part_type is not None and part.type != part_spec.part_type:
            raise ProtocolViolation(
                f"event applies to a {part_spec.part_type!r} part, part {index} is "
                f"{part.type!r}", where=where)
        if part_spec.action == "delta":
            if part.text_done:
                raise ProtocolViolation(f"text delta after the text of part {index} was done",
                                        where=where)
            self._append(part.text, event["delta"], f"{where}.delta")
        elif part_spec.action == "text_done":
            if part.text_done:
                raise ProtocolViolation(f"text of part {index} done twice", where=where)
            if part_spec.text_field is None or (
                    event[part_spec.text_field] != part.text.text()):
                raise ProtocolViolation(
                    f"final text of part {index} differs from the concatenated deltas",
                    where=f"{where}.{part_spec.text_field}")
            part.text_done = True
        elif part_spec.action == "done":
            final = self._object(event["part"], "part", where, keep=False)
            final_type = final.get("type")
            if type(final_type) is not str or final_type != part.type:
                raise ProtocolViolation(f"part.type differs from the added part {index}",
                                        where=f"{where}.part.type")
            final_text = final.get(part.text_field)
            if type(final_text) is not str or final_text != part.text.text():
                raise ProtocolViolation(
                    f"part.{part.text_field} differs from the concatenated deltas",
                    where=f"{where}.part.{part.text_field}")
            part.done = True
        state.state = nxt

    def _check_parts(self, state: _Item, item: dict[str, Any], where: str) -> None:
        """A done message/reasoning item must hold exactly the streamed parts.

        Only the part families the item type has (per the part-type table) are parts;
        a same-named field on another item type is unknown optional drift, kept as-is.
        """
        for family, parts in state.parts.items():
            for position, part in enumerate(parts):
                if not part.done:
                    raise ProtocolViolation(
                        f"{family} part {position} of output item {state.index} was never "
                        "done", where=where)
            final = item.get(family)
            if final is None and not parts:
                continue
            if type(final) is not list or len(final) != len(parts):
                raise ProtocolViolation(
                    f"item.{family} does not hold the {len(parts)} streamed parts",
                    where=f"{where}.item.{family}")
            for position, (raw, part) in enumerate(zip(final, parts, strict=True)):
                if (type(raw) is not dict or raw.get("type") != part.type
                        or raw.get(part.text_field) != part.text.text()):
                    raise ProtocolViolation(
                        f"item.{family}[{position}] differs from its streamed part",
                        where=f"{where}.item.{family}[{position}]")

    def _on_item_done(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                      where: str) -> None:
        output_index: int = event["output_index"]
        if not 0 <= output_index < len(self._items):
            raise ProtocolViolation(f"output_index {output_index} names no added item",
                                    where=f"{where}.output_index")
        state = self._items[output_index]
        if not self._tables.item_transitions[state.state]:
            # A finished item accepts nothing; checked before its content is read.
            self._item_step(state, ROLE_ITEM_DONE, event_type, where)
        item = self._object(event["item"], "item", where, keep=True)
        item_type, _ = self._item_shape(item, where, at_done=True)
        if item_type != state.type:
            raise ProtocolViolation(
                f"done item type {preview(item_type)} differs from added type {state.type!r}",
                where=f"{where}.item.type")
        if item.get("id") != state.item_id:
            raise ProtocolViolation(
                f"done item id differs from the added item id {preview(state.item_id)}",
                where=f"{where}.item.id")
        if state.spec.executable:
            self._check_call_identity(state, item, f"{where}.item")
            nxt = self._item_step(state, ROLE_ITEM_DONE, event_type, where)
            if self._caller(item, where) != state.caller_bytes:
                raise ProtocolViolation("done item caller differs from the added item",
                                        where=f"{where}.item.caller")
        else:
            nxt = self._item_step(state, ROLE_ITEM_DONE, event_type, where)
            self._check_parts(state, item, where)
        state.done_bytes = _canonical(item, f"{where}.item")
        state.state = nxt

    def _check_call_identity(self, state: _Item, item: dict[str, Any], where: str) -> None:
        if item.get("call_id") != state.call_id:
            raise ProtocolViolation(
                f"call_id differs from the added item's call_id {preview(state.call_id)}",
                where=f"{where}.call_id")
        if item.get("name") != state.name:
            raise ProtocolViolation(
                f"name differs from the added item's name {preview(state.name)}",
                where=f"{where}.name")
        if state.args is None or item.get("arguments") != state.args.text():
            raise ProtocolViolation(
                "arguments differ from the concatenated argument deltas",
                where=f"{where}.arguments")

    # -- the terminal ------------------------------------------------------

    def _on_completed(self, event: dict[str, Any], event_type: str, spec: EventSpec,
                      where: str) -> None:
        # A private JSON copy: the caller's event dicts can change later without
        # touching the turn, and every value in the turn is plain JSON data.
        response = self._response(event, event_type, where, keep=True)
        for name in self._tables.completed_null_fields:
            if response.get(name) is not None:
                raise ProtocolViolation(f"completed response carries a non-null {name}",
                                        where=f"{where}.response.{name}")
        output = response.get("output")
        if type(output) is not list:
            raise ProtocolViolation(
                f"response.output must be an array, got {preview(output)}",
                where=f"{where}.response.output")
        for state in self._items:
            if state.state != I_DONE:
                raise ProtocolViolation(
                    f"output item {state.index} ({state.type}) was never done before "
                    "response.completed", where=where)
        if len(output) != len(self._items):
            raise ProtocolViolation(
                f"terminal output has {len(output)} items but the stream added "
                f"{len(self._items)}", where=f"{where}.response.output")
        for state, raw in zip(self._items, output, strict=True):
            path = f"{where}.response.output[{state.index}]"
            if type(raw) is not dict:
                raise ProtocolViolation(f"output item must be an object, got {preview(raw)}",
                                        where=path)
            if raw.get("type") != state.type or raw.get("id") != state.item_id:
                raise ProtocolViolation(
                    f"terminal output item is not the {state.type!r} item "
                    f"{preview(state.item_id)} added at this index", where=path)
            if state.spec.executable:
                self._check_call_identity(state, raw, path)
            if _canonical(raw, path) != state.done_bytes:
                raise ProtocolViolation(
                    "terminal output item differs from its response.output_item.done form",
                    where=path)
        calls: list[OpenAIResponsesCall] = []
        has_answer = False
        for state in self._items:
            has_answer = has_answer or state.spec.final_answer
            if not state.spec.executable or state.args is None:
                continue
            path = f"{where}.response.output[{state.index}].arguments"
            try:
                arguments = strict_json.loads(state.args.text())
            except (StrictJSONError, LimitExceeded) as exc:
                raise type(exc)(f"arguments are not strict JSON: {exc.message}",
                                where=path) from exc
            if type(arguments) is not dict:
                raise ProtocolViolation(
                    f"arguments must be a JSON object, got {preview(arguments)}", where=path)
            raw_item: dict[str, Any] = output[state.index]
            calls.append(OpenAIResponsesCall(
                call_id=state.call_id, name=state.name, arguments=arguments,
                item_id=state.item_id, output_index=state.index, raw_item=raw_item,
                caller=raw_item.get("caller"),
            ))
        turn = OpenAIResponsesTurn(
            response_id=response["id"], status=response["status"], response=response,
            output=output, calls=tuple(calls), is_tool_turn=bool(calls),
            is_final_answer=not calls and has_answer, revision=self._revision,
        )
        try:
            digest = canonical_digest(turn.snapshot())
        except SnapshotMutated as exc:  # pragma: no cover - the copy is plain JSON
            raise LimitExceeded(exc.message, where=where) from exc
        object.__setattr__(turn, "digest", digest)
        self._turn = turn


_Handler = Callable[[OpenAIResponsesStream, dict[str, Any], str, EventSpec, str], None]

#: role -> handler; exactly the roles of the tables (checked below at import).
_HANDLERS: Final[Mapping[str, _Handler]] = {
    ROLE_CREATED: OpenAIResponsesStream._on_created,
    ROLE_STATUS: OpenAIResponsesStream._on_status,
    ROLE_ITEM_ADDED: OpenAIResponsesStream._on_item_added,
    ROLE_ITEM_DONE: OpenAIResponsesStream._on_item_done,
    ROLE_ARGS_DELTA: OpenAIResponsesStream._on_args_delta,
    ROLE_ARGS_DONE: OpenAIResponsesStream._on_args_done,
    ROLE_ITEM_PART: OpenAIResponsesStream._on_item_part,
    ROLE_COMPLETED: OpenAIResponsesStream._on_completed,
    ROLE_PROVIDER_TERMINAL: OpenAIResponsesStream._on_provider_terminal,
    ROLE_ERROR: OpenAIResponsesStream._on_error,
}
if set(_HANDLERS) != ROLES:  # pragma: no cover - a bug in this module, found at import
    raise RuntimeError(f"OpenAI Responses handlers {sorted(_HANDLERS)} != roles {sorted(ROLES)}")


def parse_events(
    events: Iterable[Any], *, revision: str = REVISION, limits: StreamLimits | None = None,
) -> OpenAIResponsesTurn:
    """Parse a whole event sequence; return the completed turn or raise a ContractError.

    ``events`` is read lazily and at most ``limits.max_events + 1`` times, so an endless
    iterable is rejected (:class:`LimitExceeded`) like a long list.
    """
    bounds = check_stream_limits(limits)
    stream = OpenAIResponsesStream(revision=revision, limits=bounds)
    return drive(stream.feed, stream.close, events, bounds.max_events)


if TYPE_CHECKING:
    def _conforms(
        s: OpenAIResponsesStream, t: OpenAIResponsesTurn, c: OpenAIResponsesCall,
    ) -> tuple[StreamProtocol[OpenAIResponsesTurn], TurnProtocol, CallProtocol]:
        return s, t, c
