"""Wire adapters: the raw SSE bytes of one turn -> the contract's Turn.

Each adapter decodes the bytes with :class:`~contracts.sse.SSEDecoder`, parses every
``data`` payload with :func:`~contracts.strict_json.loads`, checks that the SSE layer
and the JSON layer agree, and feeds the resulting events, in order, to the contract's
own ``parse_events``:

=====================  ==============================================================
contract               SSE event -> parser event
=====================  ==============================================================
openai-responses       ``data`` JSON object; the ``event:`` name must equal its ``type``
anthropic-messages     ``{"event": <event: name>, "data": <data JSON>}`` envelope (the
                       parser checks ``event == data.type``)
gemini-interactions    ``data`` JSON object with ``event_type``; an ``event:`` name,
                       when not the default ``message``, must equal ``event_type``; a
                       non-empty last event ID in force must equal the event's
                       ``event_id`` when it has one, and is its ``event_id`` when it
                       has none (so the stream's replay rule keys on it)
openai-chat            ``data`` JSON chunk object, or the sentinel ``data: [DONE]``
                       (the literal line only: the JSON string ``"[DONE]"`` or any
                       other non-object is rejected); an ``event:`` name other than
                       the default ``message`` is rejected
=====================  ==============================================================

SSE events map one to one onto parser events, so a parser's ``event N`` is SSE event
``N``. Disagreements between the layers are :class:`ProtocolViolation`; every error
raised while an SSE event is being handled gets ``SSE event N at byte B`` added to its
``where``. SSE-layer errors (invalid UTF-8, limits) raise as the decoder meets them; a
capture cut inside an event raises :class:`StreamTruncated` after the complete events
before the cut were parsed (so a provider ``error`` event before the cut is reported
first). Nothing but :class:`~contracts.errors.ContractError` escapes for any input.

A provider package is imported when its contract is first used, not with this module:
a caller of one contract (``pcfuzz check``, a wire fuzz target) imports, compiles and
(in a target) instruments that one only. A fuzz target imports its parser inside its
``instrument(...)`` block itself, as it would without this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from importlib import import_module
from typing import TYPE_CHECKING, Any, Final, TypeAlias, cast

from ._values import preview
from .errors import ContractError, ProtocolViolation
from .registry import CONTRACTS as _REGISTERED
from .registry import NAMES
from .sse import MAX_RETRY_DIGITS, SSEDecoder, SSEEvent
from .strict_json import loads

if TYPE_CHECKING:
    # A provider package is imported when its contract is first used (see
    # :func:`_adapter`), so a caller of one contract (``pcfuzz check``, a wire fuzz
    # target) imports that one; ``Turn`` is built on first access at run time.
    from .anthropic_messages import AnthropicMessagesTurn
    from .gemini_interactions import GeminiInteractionsTurn
    from .openai_chat import ChatCompletionTurn
    from .openai_responses import OpenAIResponsesTurn

__all__ = [
    "CONTRACTS",
    "Turn",
    "parse_sse",
    "parse_sse_chunks",
    "parse_openai_responses_sse",
    "parse_anthropic_messages_sse",
    "parse_gemini_interactions_sse",
    "parse_openai_chat_sse",
    "sse_to_events",
]

if TYPE_CHECKING:
    Turn: TypeAlias = (
        OpenAIResponsesTurn | AnthropicMessagesTurn | GeminiInteractionsTurn
        | ChatCompletionTurn
    )


def __getattr__(name: str) -> Any:
    """``Turn``, the union of the four Turn types, imports the four packages when read."""
    if name == "Turn":
        turns = [getattr(_package(c), _TURN_CLASS[c]) for c in NAMES]
        union = turns[0]
        for turn in turns[1:]:
            union = union | turn
        return union
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: The contract names the wire adapters accept (the command-line names): the registry's.
CONTRACTS: Final[tuple[str, ...]] = NAMES


def _where(sse: SSEEvent) -> str:
    return f"SSE event {sse.index} at byte {sse.byte_offset}"


def _json(sse: SSEEvent) -> Any:
    try:
        return loads(sse.data)
    except ContractError as exc:
        _locate(exc, f"data of {_where(sse)}")
        raise


def _json_object(sse: SSEEvent, key: str) -> dict[str, Any]:
    value = _json(sse)
    if type(value) is not dict:
        raise ProtocolViolation(
            f"SSE data must be a JSON object, got {type(value).__name__}", where=_where(sse)
        )
    if type(value.get(key)) is not str:
        raise ProtocolViolation(f"SSE data has no string {key!r}", where=_where(sse))
    return value


def _responses_event(sse: SSEEvent) -> Any:
    value = _json_object(sse, "type")
    if sse.event != value["type"]:
        raise ProtocolViolation(
            f"SSE event name {sse.event[:64]!r} != data.type {value['type'][:64]!r}",
            where=_where(sse),
        )
    return value


def _anthropic_event(sse: SSEEvent) -> Any:
    return {"event": sse.event, "data": _json(sse)}


def _gemini_event(sse: SSEEvent) -> Any:
    value = _json_object(sse, "event_type")
    if sse.event != "message" and sse.event != value["event_type"]:
        raise ProtocolViolation(
            f"SSE event name {sse.event[:64]!r} != data.event_type "
            f"{value['event_type'][:64]!r}",
            where=_where(sse),
        )
    if sse.id:
        if "event_id" not in value:
            # On the wire the id in force IS the event's id (what a reconnecting
            # client sends as Last-Event-ID), so the stream's replay rule keys on it:
            # the same id again with the same payload is a redelivery, with another
            # payload a conflict.
            value["event_id"] = sse.id
        elif value["event_id"] != sse.id:
            raise ProtocolViolation(
                f"SSE id {sse.id[:64]!r} != data.event_id {preview(value['event_id'])}",
                where=_where(sse),
            )
    return value


def _chat_event(sse: SSEEvent) -> Any:
    if sse.event != "message":
        raise ProtocolViolation(
            f"Chat Completions streams carry no SSE event names, got {sse.event[:64]!r}",
            where=_where(sse),
        )
    if sse.data == "[DONE]":
        # The literal line, which is the parser's own sentinel (``openai_chat.DONE``,
        # compared by value).
        return sse.data
    value = _json(sse)
    if type(value) is not dict:
        # The parser takes the str "[DONE]" as its sentinel; on the wire only the
        # literal line is, so the JSON string "[DONE]" (and any other non-object)
        # is rejected here, before it could become one.
        raise ProtocolViolation(
            f"Chat Completions SSE data must be a JSON object (a chunk) or exactly [DONE], "
            f"got {preview(value)}",
            where=_where(sse),
        )
    return value


_Parser = Callable[..., Any]
#: contract -> its SSE-event converter; its parser is its package's ``parse_events``.
_ADAPTERS: Final[dict[str, Callable[[SSEEvent], Any]]] = {
    "openai-responses": _responses_event,
    "anthropic-messages": _anthropic_event,
    "gemini-interactions": _gemini_event,
    "openai-chat": _chat_event,
}
#: contract -> the name of its Turn class in its package (for ``Turn``).
_TURN_CLASS: Final[dict[str, str]] = {
    "openai-responses": "OpenAIResponsesTurn",
    "anthropic-messages": "AnthropicMessagesTurn",
    "gemini-interactions": "GeminiInteractionsTurn",
    "openai-chat": "ChatCompletionTurn",
}
#: The ``parse_events`` of each contract used so far.
_PARSERS: dict[str, _Parser] = {}


if tuple(_ADAPTERS) != NAMES or tuple(_TURN_CLASS) != NAMES:
    # one adapter per registered contract, in registry order
    raise RuntimeError(f"contracts.wire adapters {tuple(_ADAPTERS)} != registry {NAMES}")


#: contract -> its provider package's name under ``contracts``.
_PACKAGE: Final[dict[str, str]] = {c.name: c.package for c in _REGISTERED}


def _package(contract: str) -> Any:
    """The provider package of a registered contract, imported (relatively) if needed."""
    return import_module(f".{_PACKAGE[contract]}", __package__)


def _locate(exc: ContractError, where: str) -> None:
    # Same object, same type (a provider's subclass keeps its identity); only the
    # location grows. Messages are rebuilt the way ContractError builds them.
    exc.where = f"{exc.where}; {where}" if exc.where else where
    exc.args = (f"{exc.message} (at {exc.where})",)


def _adapter(contract: object) -> tuple[Callable[[SSEEvent], Any], _Parser]:
    if type(contract) is not str or contract not in _ADAPTERS:
        shown = repr(contract)[:64] if type(contract) is str else type(contract).__name__
        raise ProtocolViolation(
            f"unknown contract {shown}; known: {', '.join(CONTRACTS)}", where="argument contract"
        )
    parse = _PARSERS.get(contract)
    if parse is None:
        parse = _PARSERS[contract] = _package(contract).parse_events
    return _ADAPTERS[contract], parse


class _Cursor:
    """Which SSE event the parser is handling, for error locations."""

    __slots__ = ("current",)

    def __init__(self) -> None:
        self.current: SSEEvent | None = None


def _decoded(chunks: Iterable[bytes], cursor: _Cursor) -> Iterator[SSEEvent]:
    decoder = SSEDecoder()
    if issubclass(type(chunks), (bytes, bytearray, str)):
        raise ProtocolViolation(
            f"chunks must be an iterable of bytes chunks, got {type(chunks).__name__}",
            where="argument chunks",
        )
    try:
        iterator = iter(chunks)
    except TypeError:
        raise ProtocolViolation(
            f"chunks must be an iterable of bytes chunks, got {type(chunks).__name__}",
            where="argument chunks",
        ) from None
    for chunk in iterator:
        # Errors of the decoder itself carry their own byte offset.
        cursor.current = None
        batch = decoder.feed(chunk)
        for sse in batch:
            cursor.current = sse
            yield sse
    cursor.current = None
    decoder.close()


#: Bound of an SSE event's ``index`` and ``byte_offset`` read from a caller: as
#: StreamLimits bounds, machine-sized (a decoder never counts that far).
_MAX_POSITION: Final = 2**62
_MAX_RETRY: Final = 10**MAX_RETRY_DIGITS - 1


def _check_sse(sse: SSEEvent, n: int) -> None:
    """Check a caller-built SSEEvent's fields: exact types, sane ranges.

    The decoder only builds events that pass; a caller can build any (the dataclass
    does not check, and a frozen one can be changed with ``object.__setattr__``), so
    every field is checked before anything reads it: a ``str`` subclass's ``__ne__``
    or an ``int`` of 5,000 digits (whose ``str()`` raises) must not run or escape.
    """

    def bad(field: str, wanted: str, value: object) -> ProtocolViolation:
        return ProtocolViolation(
            f"SSEEvent.{field} must be {wanted}, got {preview(value)}",
            where=f"argument events[{n}].{field}",
        )

    for field in ("event", "data"):
        value = getattr(sse, field)
        if type(value) is not str:
            raise bad(field, "a str", value)
    value = sse.id
    if value is not None and type(value) is not str:
        raise bad("id", "a str or None", value)
    value = sse.retry
    if value is not None and (type(value) is not int or not 0 <= value <= _MAX_RETRY):
        raise bad("retry", f"None or an int from 0 to {_MAX_RETRY}", value)
    for field in ("byte_offset", "index"):
        value = getattr(sse, field)
        if type(value) is not int or not 0 <= value <= _MAX_POSITION:
            raise bad(field, "an int from 0 to 2**62", value)


def sse_to_events(contract: str, events: Iterable[SSEEvent]) -> Iterator[Any]:
    """Map decoded SSE events to ``contract``'s parser events, checking that the SSE
    and JSON layers agree (see the module docstring). Each event must be an exact
    :class:`~contracts.sse.SSEEvent` whose fields have their exact types and sane
    ranges (``str`` event and data, ``str``/``None`` id, ``int`` >= 0 and not
    ``bool`` for retry, byte offset and index, within bounds), else
    :class:`ProtocolViolation` at ``argument events[N].<field>``. Raises
    :class:`ProtocolViolation` / :class:`~contracts.errors.StrictJSONError` /
    :class:`~contracts.errors.LimitExceeded` lazily, while iterating."""
    convert, _ = _adapter(contract)
    if issubclass(type(events), (str, bytes, bytearray, dict)):
        raise ProtocolViolation(
            f"events must be an iterable of SSEEvent, got {preview(events)}",
            where="argument events",
        )
    try:
        iterator = iter(events)
    except Exception as exc:
        raise ProtocolViolation(
            f"events must be an iterable of SSEEvent, got {preview(events)}",
            where="argument events",
        ) from exc
    index = 0
    while True:
        try:
            sse = next(iterator)
        except StopIteration:
            return
        except ContractError:
            raise
        except Exception as exc:
            raise ProtocolViolation(
                f"reading the SSE events raised {type(exc).__name__}",
                where=f"argument events[{index}]",
            ) from exc
        if type(sse) is not SSEEvent:
            raise ProtocolViolation(
                f"expected SSEEvent, got {preview(sse)}", where=f"argument events[{index}]"
            )
        _check_sse(sse, index)
        index += 1
        yield convert(sse)


def parse_sse_chunks(
    contract: str, chunks: Iterable[bytes], *, revision: str | None = None
) -> Turn:
    """Like :func:`parse_sse`, over the bytes of one turn given as chunks split
    anywhere (pulled lazily, as the parser consumes events)."""
    convert, parse = _adapter(contract)
    cursor = _Cursor()

    def events() -> Iterator[Any]:
        for sse in _decoded(chunks, cursor):
            yield convert(sse)

    try:
        if revision is None:
            turn = parse(events())
        else:
            turn = parse(events(), revision=revision)
    except ContractError as exc:
        if cursor.current is not None and "SSE event" not in (exc.where or ""):
            _locate(exc, _where(cursor.current))
        raise
    result: Turn = turn
    return result


def parse_sse(contract: str, data: bytes, *, revision: str | None = None) -> Turn:
    """Parse the raw SSE bytes of one turn of ``contract`` (one of :data:`CONTRACTS`)
    into its Turn, through the contract's ``parse_events``.

    ``revision``: the contract revision (``None``: the contract's pinned default).
    Returns the Turn ``parse_events`` returns for the same events. Raises a
    :class:`~contracts.errors.ContractError`: what the decoder, strict JSON or the
    parser raise, :class:`ProtocolViolation` for an unknown contract or a
    disagreement between the SSE and JSON layers, :class:`StreamTruncated` for a
    capture cut inside an event or before the terminal event.
    """
    return parse_sse_chunks(contract, (data,), revision=revision)


def parse_openai_responses_sse(data: bytes, *, revision: str | None = None) -> OpenAIResponsesTurn:
    """:func:`parse_sse` for ``openai-responses``."""
    return cast("OpenAIResponsesTurn", parse_sse("openai-responses", data, revision=revision))


def parse_anthropic_messages_sse(data: bytes, *, revision: str | None = None) -> AnthropicMessagesTurn:
    """:func:`parse_sse` for ``anthropic-messages``."""
    return cast("AnthropicMessagesTurn", parse_sse("anthropic-messages", data, revision=revision))


def parse_gemini_interactions_sse(data: bytes, *, revision: str | None = None) -> GeminiInteractionsTurn:
    """:func:`parse_sse` for ``gemini-interactions``."""
    return cast("GeminiInteractionsTurn", parse_sse("gemini-interactions", data, revision=revision))


def parse_openai_chat_sse(data: bytes, *, revision: str | None = None) -> ChatCompletionTurn:
    """:func:`parse_sse` for ``openai-chat``."""
    return cast("ChatCompletionTurn", parse_sse("openai-chat", data, revision=revision))
