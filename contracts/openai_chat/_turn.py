"""OpenAI Chat Completions value types, the message check and the product predicate.

:class:`ChatCompletionTurn` is what a parse returns: the single-choice completion
snapshot (``message``, ``finish_reason``, ``response_id``, ``usage``), the calls the
terminal gate released, the recovery calls it did not, and the canonical digest
of :meth:`ChatCompletionTurn.snapshot`. :func:`validate_message` and
:func:`has_product` are shared by the aggregator, the body parser and the cache
codec, so the three never disagree on what a valid, successful message is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

from .._kinds import KIND_WORDS, kind_ok
from .._stream import check_revision, drift_hint
from .._values import copy_json, preview
from ..digest import verified_snapshot
from ..errors import InvalidArgument, ProtocolViolation, UnsupportedProviderState
from ._tables import REVISION, REVISIONS, Field, RevisionTables

__all__ = [
    "ChatCompletionSnapshot",
    "ChatCompletionTurn",
    "ChatToolCall",
    "ProgressEvent",
    "RecoveryCall",
    "has_product",
    "project_text",
    "Level",
    "levels_of",
    "read_fields",
    "validate_message",
]

CONTRACT_NAME = "OpenAI Chat Completions"
#: Characters of the ``where`` prefix a caller may pass to :func:`validate_message`.
MAX_WHERE_CHARS = 200


def tables_for(revision: object) -> RevisionTables:
    """The tables of ``revision``; :class:`InvalidArgument` if unknown."""
    return check_revision(revision, REVISIONS, CONTRACT_NAME)


# How a level is named in an unknown-field message.
_LABELS: Final[Mapping[str, str]] = {
    "tool_delta": "tool-delta",
    "function_delta": "tool-delta",
    "body_choice": "choice",
    "tool_call": "tool call",
}


@dataclass(frozen=True, slots=True)
class Level:
    """One level of one revision, prepared for :func:`read_fields`: its fields, each
    field's position in the table with its row and, for a kind that is exactly one
    builtin type, that type (checked inline, without a :func:`kind_ok` call), the
    required names, closed or open, its label."""

    fields: Mapping[str, Field]
    slots: Mapping[str, tuple[int, Field, type | None]]
    required: frozenset[str]
    closed: bool
    label: str
    #: field unknown here -> the drift hint naming the other revisions that know it
    known_elsewhere: Mapping[str, str]


def _prepare(revision: str, tables: RevisionTables) -> Mapping[str, Level]:
    return {
        name: Level(
            fields=fields,
            slots={
                field: (position, spec, _EXACT_TYPES.get(spec.kind))
                for position, (field, spec) in enumerate(fields.items())
            },
            required=frozenset(field for field, spec in fields.items() if spec.required),
            closed=name in tables.closed_levels,
            label=_LABELS.get(name, name),
            known_elsewhere=_known_elsewhere(revision, name, fields),
        )
        for name, fields in tables.levels.items()
    }


def _known_elsewhere(revision: str, level: str, fields: Mapping[str, Field]) -> dict[str, str]:
    others = {key for t in REVISIONS.values() for key in t.levels[level]} - set(fields)
    hints: dict[str, str] = {}
    for key in sorted(others):

        def knows(tables: RevisionTables, field: str = key) -> bool:
            return field in tables.levels[level]

        hints[key] = drift_hint(REVISIONS, revision, knows)
    return hints


# Kinds that are exactly one builtin type (``kind_ok`` says the same for them,
# pinned by a test); the others (int64 range, non-empty, any) go through kind_ok.
_EXACT_TYPES: Final[Mapping[str, type]] = {
    "str": str, "object": dict, "array": list, "bool": bool,
}


_LEVELS: Final[Mapping[str, Mapping[str, Level]]] = {
    revision: _prepare(revision, tables) for revision, tables in REVISIONS.items()
}


def levels_of(revision: str) -> Mapping[str, Level]:
    """The prepared levels of a known ``revision`` (a key of ``REVISIONS``)."""
    return _LEVELS[revision]


def read_fields(
    container: dict[str, Any], level: Level, at: str
) -> Iterable[tuple[int, str, Field, Any]]:
    """Check one JSON object against its level's fields; return them in table order.

    ``container`` must be an exact ``dict`` (the caller checked its kind). Every key
    must be an exact ``str`` (a non-string key, or a ``str`` subclass whose
    ``__eq__``/``__hash__`` could run caller code during a lookup, is rejected before
    any lookup); on a closed level an unknown key fails as an unknown field. A
    required field must be present and a present value must be ``null`` (if the
    field is nullable) or of the field's kind. Gives ``(position, name, field,
    value)`` for each present field, in table order.

    When something is wrong, the fields are given one by one in table order and the
    problem is raised in its place, so the rules of earlier fields run first (a
    chunk's ``error`` is reported before a bad ``choices``). Raises
    :class:`ProtocolViolation` with ``where`` = the field's path under ``at``.
    """
    slots = level.slots
    found: list[tuple[int, str, Field, Any]] = []
    for key, value in container.items():
        slot = slots.get(key) if type(key) is str else None
        if slot is None:
            if type(key) is not str or level.closed:
                return _read_in_order(container, level, at)
            continue
        position, spec, exact = slot
        if value is None:
            if not spec.nullable:
                return _read_in_order(container, level, at)
        elif exact is not None:
            if type(value) is not exact:
                return _read_in_order(container, level, at)
        elif not kind_ok(value, spec.kind):
            return _read_in_order(container, level, at)
        found.append((position, key, spec, value))
    if not level.required <= container.keys():
        return _read_in_order(container, level, at)
    if len(found) > 1:
        found.sort()  # positions are unique: only they are compared
    return found


def _read_in_order(
    container: dict[str, Any], level: Level, at: str
) -> Iterator[tuple[int, str, Field, Any]]:
    fields = level.fields
    for key in container:
        if type(key) is not str:
            raise ProtocolViolation(
                f"{preview(key)} is an unknown {level.label} field (not a string key)"
                if level.closed
                else f"{level.label} has a non-string key {preview(key)}",
                where=at,
            )
        if level.closed and key not in fields:
            raise ProtocolViolation(
                f"{preview(key)} is an unknown {level.label} field "
                f"(its merge semantics cannot be assumed){level.known_elsewhere.get(key, '')}",
                where=f"{at}.{preview(key, 40)[1:-1]}",
            )
    for position, (name, spec) in enumerate(fields.items()):
        if name not in container:
            if spec.required:
                raise ProtocolViolation(
                    f"{level.label} has no {name!r} field", where=f"{at}.{name}"
                )
            continue
        value = container[name]
        if value is None and spec.nullable:
            yield position, name, spec, None
        elif value is not None and kind_ok(value, spec.kind):
            yield position, name, spec, value
        else:
            expected = KIND_WORDS[spec.kind] + (" or null" if spec.nullable else "")
            raise ProtocolViolation(
                f"{name} must be {expected}, got {preview(value)}", where=f"{at}.{name}"
            )


def validate_message(
    message: object, *, where: str = "message", revision: str = REVISION
) -> None:
    """Check a final completion message (non-streaming body, cache entry, snapshot).

    Driven by the revision's ``message``, ``tool_call`` and ``function`` levels:
    an object with ``role`` ``"assistant"``; ``content`` and ``reasoning_content``
    absent, null or strings; ``tool_calls`` absent, null or a list of complete
    function tool calls (non-empty ``id``, ``type`` ``"function"``, non-empty
    ``function.name``, string ``function.arguments``) with unique ids. Extension
    fields are allowed. Raises :class:`ProtocolViolation` (``where`` names the
    path under ``where``), :class:`UnsupportedProviderState` for a non-null legacy
    ``function_call`` or an unknown ``revision``.
    """
    if type(where) is not str or not 0 < len(where) <= MAX_WHERE_CHARS:
        raise InvalidArgument(
            f"where must be a string of 1 to {MAX_WHERE_CHARS} characters, got {preview(where)}",
            where="where",
        )
    at = where
    tables = tables_for(revision)
    if not kind_ok(message, "object"):
        raise ProtocolViolation(f"message must be an object, got {preview(message)}", where=at)
    levels = levels_of(revision)
    fields = read_fields(cast(dict[str, Any], message), levels["message"], at)
    for _, name, spec, value in fields:
        if spec.rule == "role":
            if value not in tables.message_roles:
                raise ProtocolViolation(
                    f"role must be one of {sorted(tables.message_roles)}, got {preview(value)}",
                    where=f"{at}.{name}",
                )
        elif spec.rule == "null_only":
            if value is not None:
                raise UnsupportedProviderState(
                    f"{name} is not null; its semantics are not supported", where=f"{at}.{name}"
                )
        elif spec.rule == "tool_calls" and value is not None:
            _check_tool_calls(value, tables, levels, f"{at}.{name}")


def _check_tool_calls(
    tools: list[Any], tables: RevisionTables, levels: Mapping[str, Level], at: str
) -> None:
    seen: set[str] = set()
    id_field = tables.field_for("tool_call", "tool_id")
    for position, tool in enumerate(tools):
        tool_at = f"{at}[{position}]"
        if not kind_ok(tool, "object"):
            raise ProtocolViolation(
                f"tool call must be an object, got {preview(tool)}", where=tool_at
            )
        for _, name, spec, value in read_fields(tool, levels["tool_call"], tool_at):
            if spec.rule == "tool_type" and value not in tables.tool_types:
                raise ProtocolViolation(
                    f"type must be one of {sorted(tables.tool_types)}, got {preview(value)}",
                    where=f"{tool_at}.{name}",
                )
            if spec.rule == "function":
                # Kinds and presence are all the function level checks.
                list(read_fields(value, levels["function"], f"{tool_at}.{name}"))
        call_id = tool[id_field]
        if call_id in seen:
            raise ProtocolViolation(
                f"id {preview(call_id)} is a duplicate tool id", where=f"{tool_at}.{id_field}"
            )
        seen.add(call_id)


def project_text(content: object, *, revision: str = REVISION) -> str:
    """The legacy text projection of a message's ``content`` (design 3.4 ``_finalize_text``).

    A pure function of its argument: ``None``, an absent value or anything that is
    not an exact ``str`` projects to ``""``. Otherwise every think block is dropped
    -- an open tag (``<think>``) up to and including the next close tag
    (``</think>``), or up to the end when no close tag follows (the model was still
    thinking) -- and then the surrounding whitespace (``str.strip()``). A close tag
    without an open tag before it is ordinary text. The protocol message itself is
    never projected: it keeps whitespace and think tags verbatim. One pass with
    ``str.find`` (linear; no regular expression backtracking). Raises only
    :class:`InvalidArgument` for an unknown ``revision``.
    """
    opening, closing = tables_for(revision).think_tags
    if type(content) is not str:
        return ""
    start = content.find(opening)
    if start < 0:
        return content.strip()
    kept: list[str] = []
    position = 0
    while start >= 0:
        kept.append(content[position:start])
        end = content.find(closing, start + len(opening))
        if end < 0:
            position = len(content)
            break
        position = end + len(closing)
        start = content.find(opening, position)
    kept.append(content[position:])
    return "".join(kept).strip()


def has_product(message: Mapping[str, Any]) -> bool:
    """The one success predicate, shared by the aggregator, the body parser and the
    cache codec (design 4.2, 6).

    True when ``message`` (a message :func:`validate_message` accepts) has at least
    one tool call (the parsers and the codec check tools for completeness before
    asking), or -- without tools -- a raw protocol ``content`` that is a non-empty
    string *and* whose legacy projection (:func:`project_text`) is non-empty.
    Whitespace-only, think-block-only and reasoning-only messages are no product.
    Anything that is not a plain JSON object is no product. Raises nothing.
    """
    if type(message) is not dict or not all(type(key) is str for key in message):
        return False
    tools = message.get("tool_calls")
    if type(tools) is list and tools:
        return True
    content = message.get("content")
    return type(content) is str and len(content) > 0 and project_text(content) != ""


# -------------------------------------------------------------------------- types


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """One frame that made real progress (design section 5).

    ``frame_index`` is the 0-based index of the frame in the stream; ``kinds`` is
    the sorted tuple of what progressed (values of ``PROGRESS_KINDS``). A frame
    yields at most one event however many fields or tools progressed in it.
    """

    frame_index: int
    kinds: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChatCompletionSnapshot:
    """The single-choice completion snapshot of the design (``OpenAIChatCompletion``).

    ``message`` is a JSON dict (role, content/reasoning_content only when they
    appeared, tool_calls sorted by index without the index field, arguments
    verbatim); ``finish_reason`` and ``response_id`` are the first non-null values
    or ``None``; ``usage`` is the last non-null usage object or ``None``. Frozen
    only against rebinding: the nested JSON is mutable, and every producer hands
    out an independent copy.
    """

    message: dict[str, Any]
    finish_reason: str | None
    response_id: str | None
    usage: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        """An independent JSON dict with the four snapshot fields.

        Raises :class:`ProtocolViolation` / :class:`~contracts.errors.LimitExceeded`
        if a field holds something JSON cannot carry.
        """
        result: dict[str, Any] = copy_json(
            {
                "message": self.message,
                "finish_reason": self.finish_reason,
                "response_id": self.response_id,
                "usage": self.usage,
            },
            what="snapshot",
        )
        return result


@dataclass(frozen=True, slots=True)
class ChatToolCall:
    """An executable function tool call: ``call_id`` is the tool call ``id``.

    ``arguments`` is the strictly parsed JSON object of the verbatim arguments text.
    """

    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RecoveryCall:
    """A complete tool call that is NOT executable, and why.

    ``arguments_text`` is the verbatim concatenated arguments string.
    """

    call_id: str
    name: str
    arguments_text: str
    reason: str


@dataclass(frozen=True, slots=True)
class ChatCompletionTurn:
    """The result of one successful attempt.

    ``calls`` is non-empty only when the terminal gate passed (``[DONE]`` for a
    stream, ``finish_reason == "tool_calls"``, every call's arguments a strict JSON
    object); otherwise every tool call of the message is in ``recovery_calls``.
    ``progress_events`` holds one event per progressing frame (empty for a
    non-streaming body). ``revision`` is the contract revision it was parsed under.
    ``model_reported`` is the first non-empty upstream ``model`` (never overwritten by
    a later one), or ``None``; it is metadata, outside the snapshot and the digest.
    ``digest`` is the canonical digest of :meth:`snapshot`, taken at the end of
    parsing; :meth:`check_unchanged` re-checks it.
    """

    message: dict[str, Any]
    finish_reason: str | None
    response_id: str | None
    usage: dict[str, Any] | None
    calls: tuple[ChatToolCall, ...]
    recovery_calls: tuple[RecoveryCall, ...]
    progress_events: tuple[ProgressEvent, ...]
    streamed: bool
    revision: str
    model_reported: str | None = None
    digest: str = field(default="")

    @property
    def completion(self) -> ChatCompletionSnapshot:
        """An independent copy of the completion snapshot (what the cache stores)."""
        return ChatCompletionSnapshot(
            message=copy_json(self.message, what="message"),
            finish_reason=self.finish_reason,
            response_id=self.response_id,
            usage=copy_json(self.usage, what="usage"),
        )

    def snapshot(self) -> dict[str, Any]:
        """The canonical snapshot the digest covers: the completion snapshot and the
        released calls as the host executes them (id, name, parsed arguments) and the
        recovery call ids (the live values, not a copy).
        """
        return {
            "message": self.message,
            "finish_reason": self.finish_reason,
            "response_id": self.response_id,
            "usage": self.usage,
            "calls": [
                {"call_id": c.call_id, "name": c.name, "arguments": c.arguments}
                for c in self.calls
            ],
            "recovery_call_ids": [c.call_id for c in self.recovery_calls],
        }

    def check_unchanged(self) -> None:
        """Raise :class:`~contracts.errors.SnapshotMutated` if the snapshot changed."""
        verified_snapshot(self.snapshot, self.digest, what="chat completion")
