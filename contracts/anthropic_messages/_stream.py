"""Anthropic Messages streaming contract (wire-SSE envelope projection).

Input is one event per SSE event, projected as ``{"event": name, "data": {...}}``:
the SSE event name and its JSON data, both kept and required to agree
(``event == data["type"]``). Revision ``2026-07-21`` follows the Streaming Messages
reference, the tool-use references and anthropic-python 0.117.0.

Event flow (the transition table in :mod:`._tables`): ``message_start`` -> per
block ``content_block_start`` / ``content_block_delta`` x N / ``content_block_stop``
-> one or more ``message_delta`` -> ``message_stop``. ``ping`` may appear anywhere;
``error`` raises :class:`ProviderError` wherever it appears. A truncating
``message_delta`` (``max_tokens``, ``model_context_window_exceeded``) may arrive while
a client ``tool_use`` block is still open (a recorded ``max_tokens`` shape: no
``content_block_stop``, the input cut mid-string): it closes that block, whose call
is a recovery call; every other ``message_delta`` in an open block is a
:class:`ProtocolViolation`.

Terminal gate: a client ``tool_use`` call is executable only when the last
``message_delta`` said ``stop_reason == "tool_use"``, ``message_stop`` arrived and
every client call's input parsed. Otherwise every client call of the turn is a
*recovery call*: never executed, answered with a forced ``is_error: true`` result
by the continuation builder. ``calls`` and ``recovery_calls`` partition the turn's
client ``tool_use`` blocks.

Nothing here does I/O; everything raised is a :class:`ContractError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, cast

from .._kinds import KIND_WORDS, kind_ok
from .._stream import (
    FragmentBuffer,
    StreamBase,
    StreamLimits,
    drive,
)
from .._values import copy_json, preview
from ..errors import (
    LimitExceeded,
    ProtocolViolation,
    ProviderError,
    StreamTruncated,
    StrictJSONError,
    UnsupportedProviderState,
)
from ..strict_json import loads as strict_loads
from ._tables import (
    ACT_APPEND_INPUT,
    ACT_APPEND_TEXT,
    ACT_CITATION,
    ACT_SIGNATURE,
    ACTIONS,
    INVALID_JSON_KEY,
    REVISION,
    REVISIONS,
    ROLE_CLIENT_TOOL_USE,
    ROLE_SERVER_TOOL_RESULT,
    S_INITIAL,
    S_STOPPED,
    TOOL_USE_ROLES,
    BlockSpec,
    RevisionTables,
)
from ._turn import AnthropicMessagesTurn, AnthropicRecoveryCall, AnthropicToolUse, seal

__all__ = ["AnthropicMessagesStream", "parse_events", "MAX_EAGER_TOOL_NAMES", "check_handlers"]

#: Tool names one ``eager_input_streaming`` collection may hold.
MAX_EAGER_TOOL_NAMES: Final = 10_000
#: Characters of one tool name in ``eager_input_streaming`` (API names are far shorter).
MAX_TOOL_NAME_CHARS: Final = 256
_ENVELOPE_KEYS: Final = frozenset({"event", "data"})
#: ``eager_input_streaming``: all tools (``True``), none, or the names declared so.
EagerOption = bool | list[str] | tuple[str, ...] | set[str] | frozenset[str]


def _object(value: object) -> dict[str, Any] | None:
    """``value`` if it is a plain JSON object (exactly a ``dict`` whose keys are all
    exactly ``str``), else ``None``. Reading such a dict with ``.get`` runs no caller
    code: every hash and equality test is ``str``'s own."""
    if type(value) is not dict:
        return None
    for key in value:
        if type(key) is not str:
            return None
    return value


class _OpenBlock:
    __slots__ = ("index", "type", "spec", "block", "text", "json", "signature_done")

    def __init__(self, index: int, btype: str, spec: BlockSpec, block: dict[str, Any]) -> None:
        self.index = index
        self.type = btype
        self.spec = spec
        self.block = block
        self.text: FragmentBuffer | None = None
        self.json: FragmentBuffer | None = None
        self.signature_done = False


class _ClientInput:
    __slots__ = ("index", "call_id", "name", "arguments", "error", "partial_json")

    def __init__(
        self,
        index: int,
        call_id: str,
        name: str,
        arguments: dict[str, Any] | None,
        error: str | None,
        partial_json: str | None,
    ) -> None:
        self.index = index
        self.call_id = call_id
        self.name = name
        self.arguments = arguments
        self.error = error
        self.partial_json = partial_json


def _eager_option(value: object) -> tuple[bool, frozenset[str]]:
    """``eager_input_streaming`` as (all tools, tool names); read without caller code."""
    if value is True or value is False:
        return value, frozenset()
    where = "eager_input_streaming"
    # Read through the builtin types' own methods: an overridden __iter__/__len__
    # of a caller's subclass never runs. The type is type(value), never isinstance(),
    # which believes a ``__class__`` property (and runs it).
    items: list[object]
    kind = type(value)
    if issubclass(kind, list):
        size, items = list.__len__(cast(list[object], value)), list.copy(cast(list[object], value))
    elif issubclass(kind, tuple):
        as_tuple = cast(tuple[object, ...], value)
        size, items = tuple.__len__(as_tuple), list(tuple.__getitem__(as_tuple, slice(None)))
    elif issubclass(kind, (set, frozenset)):
        members = frozenset(cast(frozenset[object], value))
        size, items = len(members), list(members)
    else:
        raise ProtocolViolation(
            f"eager_input_streaming must be a bool or a collection of tool names, got "
            f"{preview(value)}",
            where=where,
        )
    if size > MAX_EAGER_TOOL_NAMES:
        raise ProtocolViolation(
            f"eager_input_streaming names more than {MAX_EAGER_TOOL_NAMES} tools", where=where
        )
    names: set[str] = set()
    for name in items:
        if not issubclass(type(name), str) or str.__len__(cast(str, name)) > MAX_TOOL_NAME_CHARS:
            raise ProtocolViolation(
                f"eager_input_streaming tool names must be strings of at most "
                f"{MAX_TOOL_NAME_CHARS} characters, got {preview(name)}",
                where=where,
            )
        names.add(str.__str__(cast(str, name)))
    return False, frozenset(names)


def _check_no_start_input(ob: _OpenBlock, block: dict[str, Any], where: str) -> None:
    """A tool block whose input streams as fragments must start with ``input: {}``."""
    if block["input"] != {}:
        raise ProtocolViolation(
            f"{ob.type} block {ob.index} has both a non-empty start input and "
            "input_json_delta fragments",
            where=where,
        )


class AnthropicMessagesStream(StreamBase):
    """Incremental, sans-IO parser of one Anthropic Messages stream.

    ``feed(event)`` takes one envelope ``{"event": name, "data": {...}}``;
    ``close()`` returns the :class:`AnthropicMessagesTurn`. Anything raised from
    ``feed``/``close`` poisons the stream: every later call raises a
    :class:`ContractError`. Events are read as exact JSON types (what the strict
    JSON loader produces; a subclass or a non-string key is rejected) and whatever
    the turn keeps is copied by :func:`contracts._values.copy_json` (one depth bound,
    512, for every value), so no caller method ever runs.

    ``revision``: a key of :data:`REVISIONS` (``InvalidArgument`` otherwise);
    ``limits``: a :class:`StreamLimits` or ``None`` for the defaults
    (``InvalidArgument`` otherwise).

    ``eager_input_streaming``: ``True`` when every client tool was declared with
    ``eager_input_streaming: true`` (fine-grained tool streaming), or a list, tuple
    or set of the tool names declared so (``ProtocolViolation`` otherwise). For
    those tools a client ``tool_use`` input that is invalid JSON at
    ``content_block_stop`` makes the call a recovery call. For other tools the same
    holds only for the LAST block of a turn whose final stop reason is a truncation
    (``max_tokens``, ``model_context_window_exceeded``): the documented cut. Any
    other invalid input raises :class:`StrictJSONError` (at the event that proves
    it is not such a cut) or :class:`ProtocolViolation` (complete non-object JSON).

    Raises: :class:`ProtocolViolation` (order, shape, drift, a server result naming
    a client call), :class:`ProviderError` (an ``error`` event),
    :class:`UnsupportedProviderState` (unknown event or block type, ``fallback``
    block, a client ``tool_use`` whose ``caller`` is not direct),
    :class:`StreamTruncated` (close before ``message_stop``),
    :class:`StrictJSONError`, :class:`LimitExceeded`.
    """

    def __init__(
        self,
        *,
        revision: str = REVISION,
        limits: StreamLimits | None = None,
        eager_input_streaming: EagerOption = False,
    ) -> None:
        self._t, self._limits = self._begin(revision, limits, REVISIONS, "anthropic_messages")
        self._eager_all, self._eager_names = _eager_option(eager_input_streaming)
        self._state = S_INITIAL
        self._events = 0
        self._message: dict[str, Any] = {}
        self._usage: dict[str, Any] = {}
        self._delta: dict[str, Any] = {}
        self._blocks: list[dict[str, Any]] = []
        self._open: _OpenBlock | None = None
        self._ids: set[str] = set()
        self._client_ids: set[str] = set()
        self._server_result_refs: set[str] = set()
        self._client: list[_ClientInput] = []
        self._stop_reason: str | None = None
        self._stop_sequence: str | None = None
        self._total_text = 0
        # A client input that did not parse without eager streaming: allowed only
        # as the LAST block of a turn whose final stop_reason is a truncation.
        self._unproven_cut: tuple[str, int] | None = None

    @property
    def state(self) -> str:
        """The current parser state name (for tests and diagnostics)."""
        return self._state

    # -- driving -----------------------------------------------------------

    def feed(self, event: object) -> None:
        """Consume one envelope. Raises a :class:`ContractError` (and poisons)."""
        self._poison.run(lambda: self._feed(event))

    def close(self) -> AnthropicMessagesTurn:
        """End the stream and return the turn.

        Raises :class:`StreamTruncated` unless ``message_stop`` was seen.
        """
        return self._poison.finish(self._close)

    # -- envelope ----------------------------------------------------------

    def _feed(self, raw: object) -> None:
        n = self._events
        self._events += 1
        where = f"event {n}"
        if self._events > self._limits.max_events:
            raise LimitExceeded(f"more than {self._limits.max_events} events", where=where)
        event = _object(raw)
        if event is None:
            raise ProtocolViolation(
                f"envelope must be an object with string keys, got {preview(raw)}", where=where
            )
        extra = [k for k in event if k not in _ENVELOPE_KEYS]
        if extra:
            raise ProtocolViolation(f"envelope has unknown key {preview(extra[0])}", where=where)
        name = event.get("event")
        data = _object(event.get("data"))
        if type(name) is not str:
            raise ProtocolViolation("envelope 'event' must be a string", where=where)
        if data is None:
            raise ProtocolViolation("envelope 'data' must be an object", where=where)
        dtype = data.get("type")
        if type(dtype) is not str:
            raise ProtocolViolation("data.type must be a string", where=where)
        if dtype != name:
            raise ProtocolViolation(
                f"envelope/data drift: event {preview(name)} != data.type {preview(dtype)}",
                where=where,
            )
        if name not in self._t.event_types:
            raise UnsupportedProviderState(
                f"unknown event type {preview(name)} in revision {self._revision}", where=where
            )
        nxt = self._t.transitions[self._state].get(name)
        if nxt is None:
            raise ProtocolViolation(self._illegal(name, data), where=where)
        _EVENT_HANDLERS[name](self, data, where)
        self._state = nxt

    def _illegal(self, name: str, data: dict[str, Any]) -> str:
        index = data.get("index")
        if name in ("content_block_delta", "content_block_stop") and type(index) is int:
            if self._open is None:
                if 0 <= index < len(self._blocks):
                    return f"{name} for closed block index {index}"
                return f"{name} for unknown block index {preview(index)}"
        if name == "content_block_start" and self._open is not None:
            return f"content_block_start while block index {self._open.index} is still open"
        return f"{name} not allowed in state {self._state!r}"

    # -- event handlers (dispatched through _EVENT_HANDLERS) -----------------

    def _on_ping(self, data: dict[str, Any], where: str) -> None:
        return None

    def _on_error(self, data: dict[str, Any], where: str) -> None:
        err = _object(data.get("error"))
        etype = err.get("type") if err is not None else None
        emsg = err.get("message") if err is not None else None
        etype_s = preview(etype, 200) if type(etype) is str else "<malformed>"
        emsg_s = preview(emsg, 500) if type(emsg) is str else "<no message>"
        raise ProviderError(
            f"error event: {etype_s}: {emsg_s}; the turn releases nothing", where=where
        )

    def _on_message_start(self, data: dict[str, Any], where: str) -> None:
        message = copy_json(data.get("message"), what="data.message", where=where)
        if type(message) is not dict:
            raise ProtocolViolation("message_start data.message must be an object", where=where)
        for key, kind in self._t.message_fields.items():
            if not kind_ok(message.get(key), kind):
                raise ProtocolViolation(
                    f"data.message.{key} must be {KIND_WORDS[kind]}", where=where
                )
        if message.get("type") != "message":
            raise ProtocolViolation("data.message.type must be 'message'", where=where)
        if message.get("role") != "assistant":
            raise ProtocolViolation("data.message.role must be 'assistant'", where=where)
        content = message.get("content")
        if type(content) is not list or content:
            raise ProtocolViolation(
                "data.message.content must be an empty array at message_start", where=where
            )
        if message.get("stop_reason") is not None:
            raise ProtocolViolation(
                "data.message.stop_reason must be null at message_start", where=where
            )
        usage = message["usage"]
        for key in self._t.required_start_usage:
            if not kind_ok(usage.get(key), "int"):
                raise ProtocolViolation(
                    f"data.message.usage.{key} is required and must be an integer", where=where
                )
        self._check_usage(usage, "data.message.usage", where)
        self._message = message
        # The turn's cumulative usage starts as an independent copy of message.usage.
        self._usage = copy_json(usage, what="data.message.usage", where=where)

    def _check_usage(self, usage: dict[str, Any], path: str, where: str) -> None:
        for key in self._t.usage_counters:
            value = usage.get(key)
            if value is None:
                continue
            if not kind_ok(value, "int") or value < 0:
                raise ProtocolViolation(f"{path}.{key} must be a non-negative integer", where=where)
            before = self._usage.get(key)
            if kind_ok(before, "int") and value < before:
                raise ProtocolViolation(
                    f"{path}.{key} went backwards ({before} -> {value}); usage is cumulative",
                    where=where,
                )

    def _on_block_start(self, data: dict[str, Any], where: str) -> None:
        self._check_unproven_cut(None, where)
        index = self._index(data, where)
        if index != len(self._blocks):
            if index < len(self._blocks):
                raise ProtocolViolation(f"block index {index} is reused", where=where)
            raise ProtocolViolation(
                f"block index {index} skips ahead; expected {len(self._blocks)}", where=where
            )
        if len(self._blocks) >= self._limits.max_items:
            raise LimitExceeded(f"more than {self._limits.max_items} content blocks", where=where)
        block = copy_json(data.get("content_block"), what="data.content_block", where=where)
        if type(block) is not dict:
            raise ProtocolViolation("data.content_block must be an object", where=where)
        btype = block.get("type")
        if type(btype) is not str:
            raise ProtocolViolation("data.content_block.type must be a string", where=where)
        unsupported = self._t.unsupported_blocks.get(btype)
        if unsupported is not None:
            raise UnsupportedProviderState(
                f"content block {index} type {preview(btype)}: {unsupported}", where=where
            )
        spec = self._t.blocks.get(btype)
        if spec is None:
            raise UnsupportedProviderState(
                f"unknown content block type {preview(btype)} at index {index} "
                f"(revision {self._revision})",
                where=where,
            )
        for key, kind in spec.required.items():
            if key not in block or not kind_ok(block[key], kind):
                raise ProtocolViolation(
                    f"data.content_block.{key} of {btype} block {index} must be {KIND_WORDS[kind]}",
                    where=where,
                )
        for key, kind in spec.optional.items():
            value = block.get(key)
            if value is not None and not kind_ok(value, kind):
                raise ProtocolViolation(
                    f"data.content_block.{key} of {btype} block {index} must be "
                    f"{KIND_WORDS[kind]} or null",
                    where=where,
                )
        if spec.role == ROLE_CLIENT_TOOL_USE:
            self._check_caller(block, index, where)
        if spec.role in TOOL_USE_ROLES:
            call_id = block["id"]
            if call_id in self._ids:
                raise ProtocolViolation(
                    f"duplicate tool use id {preview(call_id)} at block {index}", where=where
                )
            self._ids.add(call_id)
            if spec.role == ROLE_CLIENT_TOOL_USE:
                self._client_ids.add(call_id)
        # A server result may not answer a client call: only the host answers those.
        ref = block["tool_use_id"] if spec.role == ROLE_SERVER_TOOL_RESULT else None
        conflict = ref if ref in self._client_ids else None
        if spec.role == ROLE_CLIENT_TOOL_USE and block["id"] in self._server_result_refs:
            conflict = block["id"]
        if conflict is not None:
            raise ProtocolViolation(
                f"{btype} block {index}: tool use id {preview(conflict)} is both a client "
                "tool_use and the target of a server tool result",
                where=where,
            )
        if ref is not None:
            self._server_result_refs.add(ref)
        ob = _OpenBlock(index, btype, spec, block)
        if spec.text_field is not None:
            ob.text = self._buffer(f"{btype} block {index}", block[spec.text_field], where)
        if spec.signed:
            sig = block.get("signature")
            ob.signature_done = type(sig) is str and sig != ""
        if spec.role in TOOL_USE_ROLES:
            ob.json = FragmentBuffer(self._limits.max_fragment_bytes, f"input of block {index}")
        self._blocks.append(block)
        self._open = ob

    def _check_caller(self, block: dict[str, Any], index: int, where: str) -> None:
        caller = block.get("caller")
        ctype = caller.get("type") if type(caller) is dict else None
        if caller is not None and (
            type(ctype) is not str or ctype not in self._t.client_caller_types
        ):
            shown = preview(ctype) if type(ctype) is str else "<missing>"
            raise UnsupportedProviderState(
                f"tool_use block {index} has caller type {shown}: only "
                f"{sorted(self._t.client_caller_types)} callers are in the pinned contract "
                "(programmatic tool calling is not implemented)",
                where=where,
            )

    def _buffer(self, what: str, initial: str, where: str) -> FragmentBuffer:
        buf = FragmentBuffer(self._limits.max_total_fragment_bytes, what)
        self._append(buf, initial, where)
        return buf

    def _append(self, buf: FragmentBuffer | None, text: str, where: str) -> None:
        self._count_text(text, where)
        if buf is None:  # typed guard; the cross-check admits the delta only where it fits
            raise ProtocolViolation("delta for a block without a buffer", where=where)
        try:
            buf.append(text)
        except LimitExceeded as exc:
            raise LimitExceeded(exc.message, where=where) from exc

    def _count_text(self, text: str, where: str) -> None:
        # Streamed text is kept without a copy_json pass, so its one check is here:
        # a lone surrogate is no JSON text (the wire cannot carry one).
        try:
            self._total_text += len(text.encode("utf-8"))
        except UnicodeEncodeError:
            raise ProtocolViolation(
                "streamed text has a lone surrogate code point", where=where
            ) from None
        if self._total_text > self._limits.max_total_fragment_bytes:
            raise LimitExceeded(
                f"turn exceeds {self._limits.max_total_fragment_bytes} bytes of streamed text",
                where=where,
            )

    def _index(self, data: dict[str, Any], where: str) -> int:
        index = data.get("index")
        if type(index) is not int or not kind_ok(index, "int") or index < 0:
            raise ProtocolViolation("data.index must be a non-negative integer", where=where)
        return index

    def _current(self, data: dict[str, Any], name: str, where: str) -> _OpenBlock:
        index = self._index(data, where)
        ob = self._open
        if ob is None:  # unreachable through the table; kept as a typed guard
            raise ProtocolViolation(f"{name} with no open block", where=where)
        if index != ob.index:
            if index < len(self._blocks):
                raise ProtocolViolation(f"{name} for closed block index {index}", where=where)
            raise ProtocolViolation(f"{name} for unknown block index {index}", where=where)
        return ob

    def _on_block_delta(self, data: dict[str, Any], where: str) -> None:
        ob = self._current(data, "content_block_delta", where)
        delta = _object(data.get("delta"))
        if delta is None:
            raise ProtocolViolation("data.delta must be an object", where=where)
        dtype = delta.get("type")
        if type(dtype) is not str:
            raise ProtocolViolation("data.delta.type must be a string", where=where)
        dspec = self._t.deltas.get(dtype)
        if dspec is None:
            raise UnsupportedProviderState(
                f"unknown delta type {preview(dtype)} for block {ob.index}", where=where
            )
        if dtype not in ob.spec.deltas:
            raise ProtocolViolation(
                f"delta type {preview(dtype)} does not fit {ob.type} block {ob.index}", where=where
            )
        value = delta.get(dspec.field)
        if not kind_ok(value, dspec.kind):
            raise ProtocolViolation(
                f"data.delta.{dspec.field} must be {KIND_WORDS[dspec.kind]}", where=where
            )
        if ob.signature_done:
            raise ProtocolViolation(
                f"{dtype} after the signature of thinking block {ob.index}", where=where
            )
        _DELTA_ACTIONS[dspec.action](self, ob, value, where)

    def _append_text(self, ob: _OpenBlock, value: Any, where: str) -> None:
        self._append(ob.text, value, where)

    def _append_input(self, ob: _OpenBlock, value: Any, where: str) -> None:
        self._append(ob.json, value, where)

    def _set_signature(self, ob: _OpenBlock, value: Any, where: str) -> None:
        self._count_text(value, where)
        ob.block["signature"] = value
        ob.signature_done = True

    def _add_citation(self, ob: _OpenBlock, value: Any, where: str) -> None:
        value = copy_json(value, what="data.delta.citation", where=where)
        citations = ob.block.get("citations")
        if citations is None:
            ob.block["citations"] = [value]
        else:
            citations.append(value)

    def _on_block_stop(self, data: dict[str, Any], where: str) -> None:
        ob = self._current(data, "content_block_stop", where)
        spec = ob.spec
        if spec.text_field is not None and ob.text is not None:
            ob.block[spec.text_field] = ob.text.text()
        if spec.signed:
            sig = ob.block.get("signature")
            if type(sig) is not str or sig == "":
                raise ProtocolViolation(
                    f"{ob.type} block {ob.index} closed without a signature", where=where
                )
        if spec.role in TOOL_USE_ROLES:
            self._finish_input(ob, where)
        self._open = None

    def _finish_input(self, ob: _OpenBlock, where: str, cut_by: str | None = None) -> None:
        """Parse a tool block's input at its close; ``cut_by``: the truncating stop
        reason of a ``message_delta`` that closed the block without
        ``content_block_stop`` (the call is then a recovery call, whatever the input)."""
        block = ob.block
        text = ob.json.text() if ob.json is not None else ""
        client = ob.spec.role == ROLE_CLIENT_TOOL_USE
        eager = client and (self._eager_all or block["name"] in self._eager_names)
        arguments: dict[str, Any] | None
        error: str | None = None
        partial: str | None = None
        if cut_by is not None:
            arguments, error, partial = self._cut_input(ob, text, cut_by, where)
        elif text == "":
            # Zero-argument tools (or no input deltas): the input from block start.
            arguments = block["input"]
        else:
            _check_no_start_input(ob, block, where)
            try:
                parsed = strict_loads(text)
            except StrictJSONError as exc:
                message = f"input of {ob.type} block {ob.index} is not strict JSON: {exc.message}"
                if not client:
                    raise StrictJSONError(message, where=where) from exc
                parsed = None
                if eager:
                    error = f"input is not valid JSON ({exc.message})"
                else:
                    # Not yet an error: a max_tokens stop may cut the last input
                    # (documented). Anything else makes it a broken stream.
                    error = f"input is incomplete at a truncation ({exc.message})"
                    self._unproven_cut = (f"{message} ({where})", ob.index)
            except LimitExceeded as exc:
                raise LimitExceeded(
                    f"input of {ob.type} block {ob.index}: {exc.message}", where=where
                ) from exc
            if error is None and type(parsed) is not dict:
                if not eager:
                    raise ProtocolViolation(
                        f"input of {ob.type} block {ob.index} must be a JSON object, "
                        f"got {preview(parsed)}",
                        where=where,
                    )
                error = "input is not a JSON object"
            if error is None:
                arguments = parsed
                block["input"] = parsed
            else:
                arguments = None
                partial = text
                block["input"] = {INVALID_JSON_KEY: text}
        if client:
            self._client.append(
                _ClientInput(
                    ob.index,
                    block["id"],
                    block["name"],
                    # The call's arguments are independent of the replayed block's input.
                    copy_json(arguments, what="arguments", where=where)
                    if arguments is not None
                    else None,
                    error,
                    partial,
                )
            )

    def _cut_input(
        self, ob: _OpenBlock, text: str, cut_by: str, where: str
    ) -> tuple[None, str, str | None]:
        """The input of a block cut open by a truncation: kept for replay, never run."""
        block = ob.block
        error = (
            f"input cut by stop_reason {cut_by!r} before content_block_stop (the block was "
            "never closed)"
        )
        if text == "":
            return None, error, None  # the start input stays; nothing was streamed
        _check_no_start_input(ob, block, where)
        try:
            parsed = strict_loads(text)
        except StrictJSONError:
            parsed = None
        except LimitExceeded as exc:
            raise LimitExceeded(
                f"input of {ob.type} block {ob.index}: {exc.message}", where=where
            ) from exc
        # Replayed as sent when it happens to be a whole object; otherwise wrapped.
        block["input"] = parsed if type(parsed) is dict else {INVALID_JSON_KEY: text}
        return None, error, text

    def _close_cut_block(self, stop_reason: object, where: str) -> None:
        """A ``message_delta`` arrived while a block is open: legal only as the
        truncation that cut the block's input (``truncation_closes_open_roles``)."""
        ob = self._open
        if ob is None:  # typed guard; the table admits message_delta here only in a block
            return
        if type(stop_reason) is not str or stop_reason not in self._t.truncation_stop_reasons:
            raise ProtocolViolation(
                f"message_delta while block index {ob.index} is still open: only a truncating "
                f"stop_reason ({', '.join(sorted(self._t.truncation_stop_reasons))}) may cut "
                f"an open block, got {preview(stop_reason)}",
                where=where,
            )
        if ob.spec.role not in self._t.truncation_closes_open_roles:
            raise ProtocolViolation(
                f"message_delta while {ob.type} block index {ob.index} is still open: a "
                "truncation may leave only a client tool_use block open",
                where=where,
            )
        self._finish_input(ob, where, cut_by=stop_reason)
        self._open = None

    def _on_message_delta(self, data: dict[str, Any], where: str) -> None:
        delta = copy_json(data.get("delta"), what="data.delta", where=where)
        usage = copy_json(data.get("usage"), what="data.usage", where=where)
        if type(delta) is not dict:
            raise ProtocolViolation("message_delta data.delta must be an object", where=where)
        if type(usage) is not dict:
            raise ProtocolViolation("message_delta data.usage must be an object", where=where)
        stop_reason = delta.get("stop_reason")
        if stop_reason is not None and not kind_ok(stop_reason, "nonempty_str"):
            raise ProtocolViolation(
                "data.delta.stop_reason must be a non-empty string or null", where=where
            )
        stop_sequence = delta.get("stop_sequence")
        if stop_sequence is not None and type(stop_sequence) is not str:
            raise ProtocolViolation(
                "data.delta.stop_sequence must be a string or null", where=where
            )
        for key in self._t.required_delta_usage:
            if not kind_ok(usage.get(key), "int"):
                raise ProtocolViolation(
                    f"data.usage.{key} is required and must be an integer", where=where
                )
        self._check_usage(usage, "data.usage", where)
        if self._open is not None:
            self._close_cut_block(stop_reason, where)
        if stop_reason is not None:
            if self._stop_reason is not None and stop_reason != self._stop_reason:
                raise ProtocolViolation(
                    f"stop_reason changed from {preview(self._stop_reason)} to "
                    f"{preview(stop_reason)}",
                    where=where,
                )
            self._stop_reason = stop_reason
            self._check_unproven_cut(stop_reason, where)
        if stop_sequence is not None:
            self._stop_sequence = stop_sequence
        for key, value in usage.items():
            if value is not None:
                self._usage[key] = value
        for key, value in delta.items():
            if value is not None:
                self._delta[key] = value

    def _on_message_stop(self, data: dict[str, Any], where: str) -> None:
        if self._stop_reason is None:
            raise ProtocolViolation("message_stop without a stop_reason", where=where)
        self._check_unproven_cut(self._stop_reason, where)

    def _check_unproven_cut(self, stop_reason: str | None, where: str) -> None:
        # stop_reason None: another block starts, so the bad input was not the last.
        cut = self._unproven_cut
        if cut is None:
            return
        if stop_reason is not None and stop_reason in self._t.truncation_stop_reasons:
            return
        message, index = cut
        why = (
            f"block {index + 1} started after it"
            if stop_reason is None
            else f"stop_reason {preview(stop_reason)} is not a truncation"
        )
        raise StrictJSONError(
            f"{message}; without eager input streaming only a truncation (max_tokens) of "
            f"the last block may leave an input incomplete, but {why}",
            where=where,
        )

    # -- closing -----------------------------------------------------------

    def _close(self) -> AnthropicMessagesTurn:
        where = f"event {self._events}"
        if self._state != S_STOPPED:
            open_note = (
                f"; block index {self._open.index} still open" if self._open is not None else ""
            )
            raise StreamTruncated(
                f"stream ended in state {self._state!r} before message_stop{open_note}; "
                "nothing is released",
                where=where,
            )
        stop_reason = self._stop_reason
        if stop_reason is None:  # typed guard; message_stop already required it
            raise ProtocolViolation("no stop_reason", where=where)
        t = self._t
        invalid = [c for c in self._client if c.error is not None]
        calls: tuple[AnthropicToolUse, ...] = ()
        recovery: tuple[AnthropicRecoveryCall, ...] = ()
        if stop_reason == t.executable_stop_reason and not invalid:
            calls = tuple(
                AnthropicToolUse(c.call_id, c.name, c.arguments or {}, c.index)
                for c in self._client
            )
        else:
            recovery = tuple(
                AnthropicRecoveryCall(
                    c.call_id,
                    c.name,
                    c.index,
                    self._recovery_reason(c, invalid, stop_reason),
                    c.arguments,
                    c.partial_json,
                )
                for c in self._client
            )
        return seal(
            AnthropicMessagesTurn(
                revision=self._revision,
                message=self._message,
                blocks=tuple(self._blocks),
                stop_reason=stop_reason,
                stop_sequence=self._stop_sequence,
                usage=self._usage,
                delta=self._delta,
                calls=calls,
                recovery_calls=recovery,
            )
        )

    def _recovery_reason(
        self, c: _ClientInput, invalid: list[_ClientInput], stop_reason: str
    ) -> str:
        if c.error is not None:
            return f"tool_use block {c.index}: {c.error}; never executed"
        if invalid:
            return (
                f"sibling of tool_use block {invalid[0].index} whose input is "
                "incomplete; the turn is not executable"
            )
        if stop_reason in self._t.truncation_stop_reasons:
            return f"turn truncated (stop_reason {stop_reason!r}); not executable"
        return f"stop_reason {preview(stop_reason)} releases no calls"


_Handler = Callable[[AnthropicMessagesStream, dict[str, Any], str], None]
_Action = Callable[[AnthropicMessagesStream, _OpenBlock, Any, str], None]

#: Event type -> handler. Every event type of every revision has one (checked below).
_EVENT_HANDLERS: Final[dict[str, _Handler]] = {
    "message_start": AnthropicMessagesStream._on_message_start,
    "content_block_start": AnthropicMessagesStream._on_block_start,
    "content_block_delta": AnthropicMessagesStream._on_block_delta,
    "content_block_stop": AnthropicMessagesStream._on_block_stop,
    "message_delta": AnthropicMessagesStream._on_message_delta,
    "message_stop": AnthropicMessagesStream._on_message_stop,
    "ping": AnthropicMessagesStream._on_ping,
    "error": AnthropicMessagesStream._on_error,
}
#: Delta action (``DeltaSpec.action``) -> handler.
_DELTA_ACTIONS: Final[dict[str, _Action]] = {
    ACT_APPEND_TEXT: AnthropicMessagesStream._append_text,
    ACT_APPEND_INPUT: AnthropicMessagesStream._append_input,
    ACT_SIGNATURE: AnthropicMessagesStream._set_signature,
    ACT_CITATION: AnthropicMessagesStream._add_citation,
}


def check_handlers(revisions: Mapping[str, RevisionTables]) -> None:
    """Raise ``RuntimeError`` unless every event type and delta action has a handler."""
    if set(_DELTA_ACTIONS) != ACTIONS:
        raise RuntimeError(f"delta actions {sorted(ACTIONS)} != handlers {sorted(_DELTA_ACTIONS)}")
    for name, tables in revisions.items():
        missing = tables.event_types - set(_EVENT_HANDLERS)
        if missing:
            raise RuntimeError(
                f"anthropic_messages revision {name}: no handler for {sorted(missing)}"
            )


check_handlers(REVISIONS)


def parse_events(
    events: object,
    *,
    revision: str = REVISION,
    limits: StreamLimits | None = None,
    eager_input_streaming: EagerOption = False,
) -> AnthropicMessagesTurn:
    """Parse a complete iterable of envelopes; see :class:`AnthropicMessagesStream`.

    Raises every error the stream raises; ``events`` that is not an iterable of
    events (a string, a mapping, a non-iterable) or raises while it is read is a
    :class:`ProtocolViolation`; at most ``limits.max_events + 1`` events are read.
    """
    stream = AnthropicMessagesStream(
        revision=revision, limits=limits, eager_input_streaming=eager_input_streaming
    )
    return drive(stream.feed, stream.close, events, stream._limits.max_events)


if TYPE_CHECKING:
    from .._protocols import CallProtocol, StreamProtocol, TurnProtocol

    def _conforms(
        s: AnthropicMessagesStream, t: AnthropicMessagesTurn, c: AnthropicToolUse
    ) -> tuple[StreamProtocol[AnthropicMessagesTurn], TurnProtocol, CallProtocol]:
        return s, t, c
