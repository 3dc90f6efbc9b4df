"""The OpenAI Chat Completions parsers: the per-attempt stream aggregator and the
non-streaming body parser, both ending in the same terminal gate.

Every field read is a row of the revision's tables (:mod:`._tables`): a level's
fields are checked by :func:`._turn.read_fields` and each field's *rule* picks its
handler here. The handler tables are checked against :data:`._tables.LEVEL_RULES`
at import, so a rule without a handler fails at import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from .. import strict_json
from .._kinds import INT64_MAX
from .._protocols import CallProtocol, StreamProtocol, TurnProtocol
from .._stream import (
    FragmentBuffer,
    StreamBase,
    StreamLimits,
    check_stream_limits,
    drive,
)
from .._values import copy_json, preview
from ..digest import canonical_digest
from ..errors import (
    ContractError,
    EmptyCompletion,
    LimitExceeded,
    ProtocolViolation,
    ProviderError,
    StreamTruncated,
    UnsupportedProviderState,
)
from ._tables import (
    DONE,
    FIXTURE_DONE_EVENT,
    LEVEL_RULES,
    REVISION,
    REVISIONS,
    Field,
    RevisionTables,
)
from ._turn import (
    CONTRACT_NAME,
    ChatCompletionTurn,
    ChatToolCall,
    ProgressEvent,
    RecoveryCall,
    has_product,
    levels_of,
    read_fields,
    tables_for,
    validate_message,
)

__all__ = [
    "ChatCompletionStream",
    "parse_events",
    "parse_completion",
    "frames_from_fixture_events",
]

# Characters of a provider error message kept in a ProviderError.
_MAX_ERROR_TEXT: Final = 200

# Text states of one text channel of the delta.
_ABSENT: Final = 0
_NULL: Final = 1
_TEXT: Final = 2


def _append(buffer: FragmentBuffer, fragment: str, at: str, name: str) -> int:
    try:
        return buffer.append(fragment)
    except LimitExceeded as exc:
        raise LimitExceeded(exc.message, where=f"{at}.{name}") from None


def _error_text(error: object) -> str:
    """The provider's own message (shortened), without calling anything on ``error``."""
    if type(error) is dict:
        for key, value in error.items():
            if type(key) is str and key == "message" and type(value) is str and value:
                return preview(value, _MAX_ERROR_TEXT)
        return "error object" if error else "empty error object"
    if type(error) is str:
        return preview(error, _MAX_ERROR_TEXT)
    return f"error is {preview(error)}"


def _finish_turn(
    message: dict[str, Any],
    finish_reason: str | None,
    response_id: str | None,
    usage: dict[str, Any] | None,
    progress: tuple[ProgressEvent, ...],
    streamed: bool,
    revision: str,
    where: str,
    model_reported: str | None,
) -> ChatCompletionTurn:
    """Apply the product predicate and the terminal gate; build the turn."""
    tables = tables_for(revision)
    if not has_product(message):
        content = message.get("content")
        raise EmptyCompletion(
            "empty completion: no complete tool call and no content whose text "
            "projection (think blocks and surrounding whitespace dropped) is non-empty"
            + (" (the content is only whitespace and think blocks)"
               if type(content) is str and content else "")
            + (" (reasoning_content alone is not a product)"
               if message.get("reasoning_content") else ""),
            where=where,
        )
    tools_field = tables.field_for("message", "tool_calls")
    id_field = tables.field_for("tool_call", "tool_id")
    function_field = tables.field_for("tool_call", "function")
    name_field = tables.field_for("function", "tool_name")
    arguments_field = tables.field_for("function", "tool_arguments")
    tools = message.get(tools_field)
    tool_list: list[dict[str, Any]] = tools if type(tools) is list else []
    releases = finish_reason is not None and tables.finish_reasons.get(finish_reason, False)
    calls: list[ChatToolCall] = []
    reasons: list[str] = []
    for position, tool in enumerate(tool_list):
        if not releases:
            reasons.append(f"finish_reason is {preview(finish_reason)}, not 'tool_calls'")
            continue
        path = f"{tools_field}[{position}].{function_field}.{arguments_field}"
        try:
            parsed = strict_json.loads(tool[function_field][arguments_field])
        except ContractError as exc:
            reasons.append(f"{path}: {exc}")
            continue
        if type(parsed) is not dict:
            reasons.append(f"{path} is JSON {preview(parsed)}, not an object")
            continue
        reasons.append("")
        calls.append(ChatToolCall(tool[id_field], tool[function_field][name_field], parsed))
    recovery: list[RecoveryCall] = []
    if any(reasons):
        # All or nothing: a turn never releases part of its calls.
        calls = []
        recovery = [
            RecoveryCall(
                tool[id_field],
                tool[function_field][name_field],
                tool[function_field][arguments_field],
                reason or "another call of the turn is not executable",
            )
            for tool, reason in zip(tool_list, reasons, strict=True)
        ]
    turn = ChatCompletionTurn(
        message=message,
        finish_reason=finish_reason,
        response_id=response_id,
        usage=usage,
        calls=tuple(calls),
        recovery_calls=tuple(recovery),
        progress_events=progress,
        streamed=streamed,
        revision=revision,
        model_reported=model_reported,
    )
    object.__setattr__(turn, "digest", canonical_digest(turn.snapshot()))
    return turn


# ------------------------------------------------------------------------ stream


class _ToolBucket:
    __slots__ = ("index", "call_id", "tool_type", "name", "arguments", "arguments_seen")

    def __init__(self, index: int, limits: StreamLimits) -> None:
        self.index = index
        self.call_id: str | None = None
        self.tool_type: str | None = None
        self.name = FragmentBuffer(limits.max_fragment_bytes, f"tool_calls[index={index}] name")
        self.arguments = FragmentBuffer(
            limits.max_fragment_bytes, f"tool_calls[index={index}] arguments"
        )
        self.arguments_seen = False


class _Text:
    __slots__ = ("state", "buffer")

    def __init__(self, limit: int, what: str) -> None:
        self.state = _ABSENT
        self.buffer = FragmentBuffer(limit, what)


# A handler gets (stream, field name, value or None, path of the object holding the
# field) and returns whether the frame progressed; a tool handler also gets the
# tool's bucket. The field's ``where`` is built only when something is raised.
_Handler = Callable[["ChatCompletionStream", str, Any, str], bool]
_ToolHandler = Callable[["ChatCompletionStream", "_ToolBucket", str, Any, str], bool]


class ChatCompletionStream(StreamBase):
    """Incremental aggregator for one attempt's Chat Completions stream.

    ``feed(frame)`` takes one decoded ``data:`` payload (a chunk dict, or the string
    ``"[DONE]"``) and returns the frame's :class:`ProgressEvent` or ``None``.
    ``close()`` returns the :class:`ChatCompletionTurn`. Both raise a
    :class:`~contracts.errors.ContractError` on a rejected stream; after any
    exception the stream is poisoned and every later call raises a
    ``ContractError``. Create one object per attempt; it holds no shared state.
    ``revision`` must be a key of ``REVISIONS`` and ``limits`` a
    :class:`~contracts._stream.StreamLimits` or ``None`` (else
    :class:`~contracts.errors.InvalidArgument`).
    """

    def __init__(self, *, revision: str = REVISION, limits: StreamLimits | None = None) -> None:
        tables, limits = self._begin(revision, limits, REVISIONS, CONTRACT_NAME)
        self._tables = tables
        self._limits = limits
        self._levels = levels_of(revision)
        # The fast path for the common chunk shapes, or None (the general path only):
        # it stands in for the handlers it was built with, so none if one was replaced.
        self._plan: _FastPlan | None = _PLANS.get(revision) if _handlers_intact() else None
        self._index_field = tables.field_for("tool_delta", "tool_index")
        self._transitions = tables.transitions
        self._state = tables.initial_state
        self._frames = 0
        self._role: str | None = None
        self._texts = {
            name: _Text(limits.max_total_fragment_bytes, name)
            for name in tables.fields_for("delta", "text")
        }
        self._tools: dict[int, _ToolBucket] = {}
        self._tool_ids: dict[str, int] = {}
        self._argument_bytes = 0
        # chunk ``id`` / choice ``finish_reason`` -> its first non-null value.
        self._first_values: dict[str, str] = {}
        self._usage: dict[str, Any] | None = None
        self._model: str | None = None
        self._progress: list[ProgressEvent] = []
        # What the current frame progressed in; reset by every feed.
        self._kinds: set[str] = set()

    # -- public --------------------------------------------------------------

    @property
    def done(self) -> bool:
        """Whether ``[DONE]`` has been received."""
        return self._state in self._tables.closing_states

    @property
    def progress_events(self) -> tuple[ProgressEvent, ...]:
        """The progress events so far, in frame order."""
        return tuple(self._progress)

    def feed(self, event: object) -> ProgressEvent | None:
        """Aggregate one frame; return its progress event, if it made progress.

        Raises :class:`~contracts.errors.ProviderError`,
        :class:`~contracts.errors.ProtocolViolation`,
        :class:`~contracts.errors.UnsupportedProviderState` or
        :class:`~contracts.errors.LimitExceeded`; the stream is poisoned afterwards.
        """
        return self._poison.run(lambda: self._feed(event))

    def close(self) -> ChatCompletionTurn:
        """Finish the attempt and return the turn.

        Raises :class:`~contracts.errors.StreamTruncated` without ``[DONE]``
        (whatever was received), :class:`~contracts.errors.ProtocolViolation` for a
        missing role or an incomplete tool call,
        :class:`~contracts.errors.EmptyCompletion` when there is no product.
        """
        return self._poison.finish(self._close)

    def snapshot(self) -> dict[str, Any]:
        """The message aggregated so far, as an independent dict (never executable).

        Tools appear with whatever they have; nothing is validated for completeness.
        Raises only if the stream is poisoned or closed.
        """
        self._poison.check()
        return self._message(require_complete=False)

    # -- frames --------------------------------------------------------------

    def _feed(self, frame: object) -> ProgressEvent | None:
        index = self._frames
        if index >= self._limits.max_events:
            raise LimitExceeded(f"more than {self._limits.max_events} frames",
                                where=f"event {index}")
        self._frames = index + 1
        if type(frame) is str:
            if frame != DONE:
                raise ProtocolViolation(
                    f"frame is a string other than {DONE!r}: {preview(frame)}",
                    where=f"event {index}",
                )
            kind = "done"
        elif type(frame) is dict:
            kind = "chunk"
        else:
            raise ProtocolViolation(
                f"frame must be a JSON object or {DONE!r}, got {preview(frame)}",
                where=f"event {index}",
            )
        following = self._transitions[self._state].get(kind)
        if following is None:
            after_done = self._state in self._tables.closing_states
            raise ProtocolViolation(
                f"{kind} frame not allowed in state {self._state!r}"
                + (f" (nothing may follow {DONE})" if after_done else ""),
                where=f"event {index}",
            )
        kinds: set[str] = set()
        self._kinds = kinds
        if kind == "chunk":
            plan = self._plan
            if plan is None or not self._fast_chunk(plan, frame, index):  # type: ignore[arg-type]
                self._level("chunk", frame, f"event {index}")  # type: ignore[arg-type]
        self._state = following
        if not kinds:
            return None
        event = ProgressEvent(index, tuple(kinds) if len(kinds) == 1 else tuple(sorted(kinds)))
        self._progress.append(event)
        return event

    def _level(self, level: str, value: dict[str, Any], at: str) -> None:
        handlers = _HANDLERS[level]
        for _, name, spec, item in read_fields(value, self._levels[level], at):
            if handlers[spec.rule](self, name, item, at) and spec.progress:
                self._kinds.add(spec.progress)

    def _fast_chunk(self, plan: _FastPlan, frame: dict[str, Any], index: int) -> bool:
        """Read a chunk of a common shape as the general path would, faster.

        Returns False, having changed nothing, for any chunk it does not cover; the
        caller then reads it with the general path. Phase 1 only looks: exact
        string keys at every level, no unknown key on a closed level, each known
        field of its kind or null where the table allows it, no provider error, at
        most one choice with the supported index, a known role and tool type, a
        tool index in range -- every rule of :func:`._turn.read_fields` and every
        handler check that needs no state. Phase 2 applies the handlers' effects in
        table order; where a handler can still fail (a conflicting first value, a
        limit, a duplicate tool id), the same handler or the same message raises
        with the same ``where``. The kinds written below as types are the ones
        :func:`_plan_for` found in the tables (else there is no plan).
        """
        for key in frame:
            if type(key) is not str:
                return False
        if plan.error in frame:
            return False
        get = frame.get
        choices = get(plan.choices)
        if type(choices) is not list or len(choices) > 1:
            return False
        response_id = get(plan.response_id)
        if response_id is not None and type(response_id) is not str:
            return False
        model = get(plan.model)
        if model is not None and type(model) is not str:
            return False
        usage = get(plan.usage)
        if usage is not None and type(usage) is not dict:
            return False
        choice: dict[str, Any] | None = None
        delta: Any = None
        finish: Any = None
        if choices:
            choice = choices[0]
            if type(choice) is not dict:
                return False
            for key in choice:
                if type(key) is not str:
                    return False
            get = choice.get
            choice_index = get(plan.choice_index)
            if type(choice_index) is not int or choice_index != plan.choice_index_value:
                return False
            delta = get(plan.delta_field)
            if type(delta) is not dict:
                return False
            finish = get(plan.finish_reason)
            if finish is not None and type(finish) is not str:
                return False
            specs = plan.delta
            for key, value in delta.items():
                if type(key) is not str:
                    return False
                spec = specs.get(key)
                if spec is None or (
                    type(value) is not spec[0] if value is not None else not spec[1]
                ):
                    return False
            role = delta.get(plan.role)
            if role is not None and role not in plan.roles:
                return False
            tools = delta.get(plan.tool_calls)
            if tools:
                tool_fields = plan.tool_fields
                function_fields = plan.function_fields
                for entry in tools:
                    if type(entry) is not dict:
                        return False
                    for key in entry:
                        if type(key) is not str or key not in tool_fields:
                            return False
                    get = entry.get
                    tool_index = get(plan.tool_index)
                    if type(tool_index) is not int or not 0 <= tool_index <= plan.max_tool_index:
                        return False
                    value = get(plan.tool_id)
                    if value is not None and (type(value) is not str or not value):
                        return False
                    value = get(plan.tool_type)
                    if value is not None and (
                        type(value) is not str or value not in plan.tool_types
                    ):
                        return False
                    function = get(plan.function_field)
                    if function is not None:
                        if type(function) is not dict:
                            return False
                        for key in function:
                            if type(key) is not str or key not in function_fields:
                                return False
                        get = function.get
                        value = get(plan.name)
                        if value is not None and type(value) is not str:
                            return False
                        value = get(plan.arguments)
                        if value is not None and type(value) is not str:
                            return False
        # Phase 2: the effects, in table order.
        first_values = self._first_values
        if response_id is not None and first_values.get(plan.response_id) != response_id:
            self._on_first_value(plan.response_id, response_id, f"event {index}")
        if model and self._model is None:
            self._model = model
        if usage is not None:
            self._on_usage(plan.usage, usage, f"event {index}")
        if choice is None:
            return True
        items = (
            delta.items() if len(delta) < 2
            else [(name, delta[name]) for name in plan.delta_order if name in delta]
        )
        for name, value in items:
            rule = plan.delta_rules[name]
            if rule == "tool_calls":
                if value is not None:
                    for position, entry in enumerate(value):
                        self._fast_tool(plan, entry, index, position)
            elif rule == "text":
                text = self._texts[name]
                if value is None:
                    if text.state == _ABSENT:
                        text.state = _NULL
                    continue
                text.state = _TEXT
                if value:
                    try:
                        text.buffer.append(value)
                    except LimitExceeded as exc:
                        raise LimitExceeded(
                            exc.message, where=f"{plan.delta_at(index)}.{name}"
                        ) from None
                    progress = plan.progress[name]
                    if progress:
                        self._kinds.add(progress)
            elif rule == "role" and value is not None:
                self._role = value
        if finish is not None and first_values.get(plan.finish_reason) != finish:
            self._on_first_value(plan.finish_reason, finish, f"event {index}.{plan.choices}[0]")
        return True

    def _fast_tool(self, plan: _FastPlan, entry: dict[str, Any], index: int,
                   position: int) -> None:
        """Phase 2 of :meth:`_fast_chunk` for one tool delta phase 1 accepted."""
        tool_index = entry[plan.tool_index]
        bucket = self._tools.get(tool_index)
        if bucket is None:
            bucket = self._bucket(tool_index, plan.entry_at(index, position), plan.tool_index)
        kinds = self._kinds
        tool_id = entry.get(plan.tool_id)
        if tool_id is not None and self._on_tool_id(
            bucket, plan.tool_id, tool_id, plan.entry_at(index, position)
        ):
            progress = plan.progress_tool[plan.tool_id]
            if progress:
                kinds.add(progress)
        tool_type = entry.get(plan.tool_type)
        if tool_type is not None and self._on_tool_type(
            bucket, plan.tool_type, tool_type, plan.entry_at(index, position)
        ):
            progress = plan.progress_tool[plan.tool_type]
            if progress:
                kinds.add(progress)
        function = entry.get(plan.function_field)
        if function is None:
            return
        name = function.get(plan.name)
        if name and self._on_tool_name(
            bucket, plan.name, name, plan.function_at(index, position)
        ):
            progress = plan.progress_function[plan.name]
            if progress:
                kinds.add(progress)
        arguments = function.get(plan.arguments)
        if arguments is None:
            return
        bucket.arguments_seen = True
        if not arguments:
            return
        try:
            size = bucket.arguments.append(arguments)
        except LimitExceeded as exc:
            raise LimitExceeded(
                exc.message, where=f"{plan.function_at(index, position)}.{plan.arguments}"
            ) from None
        total = self._argument_bytes + size
        self._argument_bytes = total
        if total > self._limits.max_total_fragment_bytes:
            raise self._arguments_total(
                f"{plan.function_at(index, position)}.{plan.arguments}"
            )
        progress = plan.progress_function[plan.arguments]
        if progress:
            kinds.add(progress)

    def _on_error(self, name: str, value: Any, at: str) -> bool:
        raise ProviderError(f"provider error frame: {_error_text(value)}", where=f"{at}.{name}")

    def _on_choices(self, name: str, value: Any, at: str) -> bool:
        if len(value) > 1:
            raise ProtocolViolation(
                f"{name} has {len(value)} entries; exactly one choice is supported", where=f"{at}.{name}"
            )
        if value:
            choice = value[0]
            choice_at = f"{at}.{name}[0]"
            if type(choice) is not dict:
                raise ProtocolViolation(f"choice must be an object, got {preview(choice)}",
                                        where=choice_at)
            self._level("choice", choice, choice_at)
        return False

    def _on_first_value(self, name: str, value: Any, at: str) -> bool:
        # ``id`` and ``finish_reason``: the first non-null value is fixed; an equal
        # later value is fine, a different one fails.
        if value is not None:
            first = self._first_values.get(name)
            if first is not None and first != value:
                raise ProtocolViolation(
                    f"{name} {preview(value)} conflicts with the first value {preview(first)}",
                    where=f"{at}.{name}",
                )
            self._first_values[name] = value
        return False

    def _on_model(self, name: str, value: Any, at: str) -> bool:
        # model_reported: the first valid (non-empty string) value is kept; a later
        # one, equal or not, never overwrites it.
        if value and self._model is None:
            self._model = value
        return False

    def _on_usage(self, name: str, value: Any, at: str) -> bool:
        if value is not None:
            self._usage = copy_json(value, what=name, where=f"{at}.{name}")
        return False

    def _on_choice_index(self, name: str, value: Any, at: str) -> bool:
        if value != self._tables.choice_index:
            raise ProtocolViolation(
                f"{name} must be the integer {self._tables.choice_index}, got {preview(value)}",
                where=f"{at}.{name}",
            )
        return False

    def _on_delta(self, name: str, value: Any, at: str) -> bool:
        self._level("delta", value, f"{at}.{name}")
        return False

    def _on_role(self, name: str, value: Any, at: str) -> bool:
        if value is not None:
            if value not in self._tables.message_roles:
                raise ProtocolViolation(
                    f"{name} must be one of {sorted(self._tables.message_roles)}, "
                    f"got {preview(value)}",
                    where=f"{at}.{name}",
                )
            self._role = value
        return False

    def _on_text(self, name: str, value: Any, at: str) -> bool:
        text = self._texts[name]
        if value is None:
            if text.state == _ABSENT:
                text.state = _NULL
            return False
        text.state = _TEXT
        if not value:
            return False
        _append(text.buffer, value, at, name)
        return True

    def _on_null_only(self, name: str, value: Any, at: str) -> bool:
        if value is not None:
            raise UnsupportedProviderState(
                f"{name} is not null; its semantics are not supported", where=f"{at}.{name}"
            )
        return False

    def _on_tool_calls(self, name: str, value: Any, at: str) -> bool:
        if value is None:
            return False
        level = self._levels["tool_delta"]
        index_field = self._index_field
        for position, entry in enumerate(value):
            entry_at = f"{at}.{name}[{position}]"
            if type(entry) is not dict:
                raise ProtocolViolation(f"tool delta must be an object, got {preview(entry)}",
                                        where=entry_at)
            # All fields are checked before the bucket is chosen by the index.
            present = list(read_fields(entry, level, entry_at))
            bucket = self._bucket(entry[index_field], entry_at, index_field)
            self._tool_level("tool_delta", bucket, present, entry_at)
        return False

    def _tool_level(
        self,
        level: str,
        bucket: _ToolBucket,
        present: Iterable[tuple[int, str, Field, Any]],
        at: str,
    ) -> None:
        handlers = _TOOL_HANDLERS[level]
        for _, name, spec, item in present:
            if handlers[spec.rule](self, bucket, name, item, at) and spec.progress:
                self._kinds.add(spec.progress)

    def _bucket(self, tool_index: int, at: str, name: str) -> _ToolBucket:
        if not 0 <= tool_index <= self._tables.max_tool_index:
            raise ProtocolViolation(
                f"index must be an integer from 0 to {self._tables.max_tool_index}, "
                f"got {preview(tool_index)}",
                where=f"{at}.{name}",
            )
        bucket = self._tools.get(tool_index)
        if bucket is None:
            if len(self._tools) >= self._limits.max_items:
                raise LimitExceeded(
                    f"more than {self._limits.max_items} tool calls", where=f"{at}.{name}"
                )
            bucket = _ToolBucket(tool_index, self._limits)
            self._tools[tool_index] = bucket
        return bucket

    def _on_tool_id(self, bucket: _ToolBucket, name: str, value: Any, at: str) -> bool:
        if value is None or not _first_identity(bucket.call_id, value, name, bucket, at):
            return False
        owner = self._tool_ids.get(value)
        if owner is not None:
            raise ProtocolViolation(
                f"{name} {preview(value)} is a duplicate tool id (already used by index {owner})",
                where=f"{at}.{name}",
            )
        bucket.call_id = value
        self._tool_ids[value] = bucket.index
        return True

    def _on_tool_type(self, bucket: _ToolBucket, name: str, value: Any, at: str) -> bool:
        if value is None:
            return False
        if value not in self._tables.tool_types:
            raise ProtocolViolation(
                f"{name} must be one of {sorted(self._tables.tool_types)} or null, "
                f"got {preview(value)}",
                where=f"{at}.{name}",
            )
        if not _first_identity(bucket.tool_type, value, name, bucket, at):
            return False
        bucket.tool_type = value
        return True

    def _on_function(self, bucket: _ToolBucket, name: str, value: Any, at: str) -> bool:
        if value is None:
            return False
        function_at = f"{at}.{name}"
        present = read_fields(value, self._levels["function_delta"], function_at)
        self._tool_level("function_delta", bucket, present, function_at)
        return False

    def _on_tool_name(self, bucket: _ToolBucket, name: str, value: Any, at: str) -> bool:
        if not value:
            return False
        _append(bucket.name, value, at, name)
        return True

    def _on_tool_arguments(self, bucket: _ToolBucket, name: str, value: Any, at: str) -> bool:
        if value is None:
            return False
        bucket.arguments_seen = True
        if not value:
            return False
        self._argument_bytes += _append(bucket.arguments, value, at, name)
        if self._argument_bytes > self._limits.max_total_fragment_bytes:
            raise self._arguments_total(f"{at}.{name}")
        return True

    def _arguments_total(self, where: str) -> LimitExceeded:
        return LimitExceeded(
            f"tool arguments exceed {self._limits.max_total_fragment_bytes} bytes in total",
            where=where,
        )

    # -- end -----------------------------------------------------------------

    def _message(self, *, require_complete: bool) -> dict[str, Any]:
        tables = self._tables
        message: dict[str, Any] = {}
        role_field = tables.field_for("delta", "role")
        if self._role is not None:
            message[role_field] = self._role
        elif require_complete:
            raise ProtocolViolation(
                f"message has no {role_field}: it never appeared", where=f"message.{role_field}"
            )
        for key, text in self._texts.items():
            if text.state == _TEXT:
                message[key] = text.buffer.text()
            elif text.state == _NULL:
                message[key] = None
        if self._tools:
            id_field = tables.field_for("tool_call", "tool_id")
            type_field = tables.field_for("tool_call", "tool_type")
            function_field = tables.field_for("tool_call", "function")
            name_field = tables.field_for("function", "tool_name")
            arguments_field = tables.field_for("function", "tool_arguments")
            tools: list[dict[str, Any]] = []
            for tool_index in sorted(self._tools):
                bucket = self._tools[tool_index]
                if require_complete:
                    _check_bucket(bucket)
                function: dict[str, Any] = {}
                if bucket.name.size or require_complete:
                    function[name_field] = bucket.name.text()
                if bucket.arguments_seen:
                    function[arguments_field] = bucket.arguments.text()
                tool: dict[str, Any] = {}
                if bucket.call_id is not None:
                    tool[id_field] = bucket.call_id
                if bucket.tool_type is not None:
                    tool[type_field] = bucket.tool_type
                tool[function_field] = function
                tools.append(tool)
            message[tables.field_for("delta", "tool_calls")] = tools
        return message

    def _close(self) -> ChatCompletionTurn:
        if self._state not in self._tables.closing_states:
            raise StreamTruncated(
                f"stream ended without {DONE} after {self._frames} frames; nothing is salvaged",
                where=f"after event {self._frames - 1}" if self._frames else "empty stream",
            )
        message = self._message(require_complete=True)
        return _finish_turn(
            message,
            self._first_values.get(self._tables.field_for("choice", "finish_reason")),
            self._first_values.get(self._tables.field_for("chunk", "response_id")),
            self._usage,
            tuple(self._progress),
            True,
            self._revision,
            "message",
            self._model,
        )


def _on_tool_index(
    stream: ChatCompletionStream, bucket: _ToolBucket, name: str, value: Any, where: str
) -> bool:
    # The tool index is the bucket key, read before the other fields (``_bucket``).
    return False


_S = ChatCompletionStream
#: level -> rule -> handler. Checked against ``LEVEL_RULES`` below, at import.
_HANDLERS: Final[Mapping[str, Mapping[str, _Handler]]] = {
    "chunk": {
        "error": _S._on_error,
        "choices": _S._on_choices,
        "response_id": _S._on_first_value,
        "model_reported": _S._on_model,
        "usage": _S._on_usage,
    },
    "choice": {
        "choice_index": _S._on_choice_index,
        "delta": _S._on_delta,
        "finish_reason": _S._on_first_value,
    },
    "delta": {
        "role": _S._on_role,
        "text": _S._on_text,
        "tool_calls": _S._on_tool_calls,
        "null_only": _S._on_null_only,
    },
}
_TOOL_HANDLERS: Final[Mapping[str, Mapping[str, _ToolHandler]]] = {
    "tool_delta": {
        "tool_index": _on_tool_index,
        "tool_id": _S._on_tool_id,
        "tool_type": _S._on_tool_type,
        "function": _S._on_function,
    },
    "function_delta": {
        "tool_name": _S._on_tool_name,
        "tool_arguments": _S._on_tool_arguments,
    },
}
del _S


def check_handlers(handlers: Mapping[str, Mapping[str, object]]) -> None:
    """Raise ``RuntimeError`` unless ``handlers`` has exactly one handler per rule of
    each level the stream dispatches (run at import on the stream's own tables)."""
    for level, row in handlers.items():
        if level not in LEVEL_RULES or set(row) != LEVEL_RULES[level]:
            raise RuntimeError(f"openai_chat: {level} handlers do not match the level's rules")


check_handlers({**_HANDLERS, **_TOOL_HANDLERS})


# ------------------------------------------------------------- the fast path


# The shape the fast path is written for: per level, each field's (rule, kind,
# required, nullable) in table order. A revision whose tables say otherwise for any
# of these levels gets no plan and reads every chunk with the general path.
_FAST_SHAPE: Final[Mapping[str, tuple[tuple[str, str, bool, bool], ...]]] = {
    "chunk": (
        ("error", "any", False, True),
        ("response_id", "str", False, True),
        ("model_reported", "str", False, True),
        ("usage", "object", False, True),
        ("choices", "array", True, False),
    ),
    "choice": (
        ("choice_index", "int", True, False),
        ("delta", "object", True, False),
        ("finish_reason", "str", False, True),
    ),
    "tool_delta": (
        ("tool_index", "int", True, False),
        ("tool_id", "nonempty_str", False, True),
        ("tool_type", "str", False, True),
        ("function", "object", False, True),
    ),
    "function_delta": (
        ("tool_name", "str", False, True),
        ("tool_arguments", "str", False, True),
    ),
}
_FAST_OPEN: Final = ("chunk", "choice")
_FAST_CLOSED: Final = ("delta", "tool_delta", "function_delta")
# Delta fields are looked up by name (the level's fields vary): each is read as
# exactly this type, or for kind ``any`` only as null.
_FAST_TYPES: Final[Mapping[str, type]] = {
    "str": str, "object": dict, "array": list, "bool": bool,
}
_FAST_DELTA_RULES: Final = frozenset({"role", "text", "tool_calls", "null_only"})


_Spec = tuple[type, bool]  # (the exact type of a non-null value, null allowed)


class _Never:
    """No JSON value is of this type: a field with it is accepted only as null."""


@dataclass(frozen=True, slots=True)
class _FastPlan:
    """What :meth:`ChatCompletionStream._fast_chunk` reads, derived from one
    revision's tables by :func:`_plan_for`: the field names of the rules it applies,
    each delta field's exact type and nullability, the closed levels' field sets,
    the value sets and progress kinds."""

    delta: Mapping[str, _Spec]
    tool_fields: frozenset[str]
    function_fields: frozenset[str]
    error: str
    choices: str
    response_id: str
    model: str
    usage: str
    choice_index: str
    choice_index_value: int
    delta_field: str
    finish_reason: str
    role: str
    roles: frozenset[str]
    tool_calls: str
    delta_order: tuple[str, ...]
    delta_rules: Mapping[str, str]
    progress: Mapping[str, str | None]
    tool_index: str
    max_tool_index: int
    tool_id: str
    tool_type: str
    tool_types: frozenset[str]
    function_field: str
    progress_tool: Mapping[str, str | None]
    name: str
    arguments: str
    progress_function: Mapping[str, str | None]

    def delta_at(self, index: int) -> str:
        return f"event {index}.{self.choices}[0].{self.delta_field}"

    def entry_at(self, index: int, position: int) -> str:
        return f"{self.delta_at(index)}.{self.tool_calls}[{position}]"

    def function_at(self, index: int, position: int) -> str:
        return f"{self.entry_at(index, position)}.{self.function_field}"


def _plan_for(tables: RevisionTables) -> _FastPlan | None:
    """The fast path's plan for ``tables``, or None if they are shaped otherwise than
    the fast path is written for (then every chunk takes the general path)."""
    levels = tables.levels
    if any(level in tables.closed_levels for level in _FAST_OPEN):
        return None
    if not all(level in tables.closed_levels for level in _FAST_CLOSED):
        return None
    for level, shape in _FAST_SHAPE.items():
        found = tuple(
            (spec.rule, spec.kind, spec.required, spec.nullable)
            for spec in levels[level].values()
        )
        if found != shape:
            return None
    delta_specs: dict[str, _Spec] = {}
    for name, spec in levels["delta"].items():
        if spec.rule not in _FAST_DELTA_RULES or spec.required:
            return None
        if spec.kind == "any" and spec.rule == "null_only":
            delta_specs[name] = (_Never, spec.nullable)
        elif spec.kind in _FAST_TYPES and spec.rule != "null_only":
            delta_specs[name] = (_FAST_TYPES[spec.kind], spec.nullable)
        else:
            return None
    if not 0 <= tables.choice_index <= INT64_MAX:  # the general path's int kind
        return None
    delta = levels["delta"]

    def progress(level: str) -> dict[str, str | None]:
        return {name: spec.progress for name, spec in levels[level].items()}

    return _FastPlan(
        delta=delta_specs,
        tool_fields=frozenset(levels["tool_delta"]),
        function_fields=frozenset(levels["function_delta"]),
        error=tables.field_for("chunk", "error"),
        choices=tables.field_for("chunk", "choices"),
        response_id=tables.field_for("chunk", "response_id"),
        model=tables.field_for("chunk", "model_reported"),
        usage=tables.field_for("chunk", "usage"),
        choice_index=tables.field_for("choice", "choice_index"),
        choice_index_value=tables.choice_index,
        delta_field=tables.field_for("choice", "delta"),
        finish_reason=tables.field_for("choice", "finish_reason"),
        role=tables.field_for("delta", "role"),
        roles=tables.message_roles,
        tool_calls=tables.field_for("delta", "tool_calls"),
        delta_order=tuple(delta),
        delta_rules={name: spec.rule for name, spec in delta.items()},
        progress=progress("delta"),
        tool_index=tables.field_for("tool_delta", "tool_index"),
        max_tool_index=tables.max_tool_index,
        tool_id=tables.field_for("tool_delta", "tool_id"),
        tool_type=tables.field_for("tool_delta", "tool_type"),
        tool_types=tables.tool_types,
        function_field=tables.field_for("tool_delta", "function"),
        progress_tool=progress("tool_delta"),
        name=tables.field_for("function_delta", "tool_name"),
        arguments=tables.field_for("function_delta", "tool_arguments"),
        progress_function=progress("function_delta"),
    )


# The handler rows the fast path applies the effects of (inline or by calling them).
_FAST_HANDLERS: Final = {
    level: dict(row) for level, row in {**_HANDLERS, **_TOOL_HANDLERS}.items()
}


def _handlers_intact() -> bool:
    """Whether the handler tables still hold the handlers the fast path stands in for."""
    current = {**_HANDLERS, **_TOOL_HANDLERS}
    return all(dict(current.get(level, {})) == row for level, row in _FAST_HANDLERS.items())


#: revision -> its fast path's plan (a revision without one reads the general path).
_PLANS: Final[Mapping[str, _FastPlan]] = {
    revision: plan
    for revision, plan in ((r, _plan_for(t)) for r, t in REVISIONS.items())
    if plan is not None
}


def _first_identity(
    current: str | None, value: str, name: str, bucket: _ToolBucket, at: str
) -> bool:
    """Whether ``value`` is the tool's first ``name`` (an identity, never concatenated):
    an equal repeat is idempotent (False), a different value fails."""
    if current is None:
        return True
    if current != value:
        raise ProtocolViolation(
            f"{name} {preview(value)} conflicts with {preview(current)} for index {bucket.index}",
            where=f"{at}.{name}",
        )
    return False


def _check_bucket(bucket: _ToolBucket) -> None:
    path = f"message.tool_calls[index={bucket.index}]"
    if bucket.call_id is None:
        raise ProtocolViolation("incomplete tool call: id never appeared", where=f"{path}.id")
    if bucket.tool_type is None:
        raise ProtocolViolation("incomplete tool call: type never appeared", where=f"{path}.type")
    if not bucket.name.size:
        raise ProtocolViolation(
            "incomplete tool call: function.name is empty", where=f"{path}.function.name"
        )
    if not bucket.arguments_seen:
        raise ProtocolViolation(
            "incomplete tool call: function.arguments never appeared",
            where=f"{path}.function.arguments",
        )


def parse_events(
    events: Iterable[object],
    *,
    revision: str = REVISION,
    limits: StreamLimits | None = None,
) -> ChatCompletionTurn:
    """Aggregate a whole stream of decoded frames (chunk dicts and ``"[DONE]"``).

    Equivalent to feeding every frame to a :class:`ChatCompletionStream` and
    closing it; ``events`` is read at most ``limits.max_events + 1`` times. Raises
    what the constructor, ``feed`` and ``close`` raise, and
    :class:`~contracts.errors.ProtocolViolation` if ``events`` is not an iterable
    or raises while it is read.
    """
    bounds = check_stream_limits(limits)
    stream = ChatCompletionStream(revision=revision, limits=bounds)
    # The unguarded _feed: the first exception ends this call and the stream with it
    # (no one else holds it), so poisoning it per event would guard nothing.
    return drive(stream._feed, stream.close, events, bounds.max_events)


def frames_from_fixture_events(
    events: Iterable[object], *, limits: StreamLimits | None = None
) -> list[object]:
    """Map fixture events to stream frames: exactly :data:`FIXTURE_DONE_EVENT` becomes
    :data:`DONE`, every other event is passed through unchanged (the aggregator
    validates it). Reads at most ``limits.max_events`` events; raises
    :class:`~contracts.errors.ProtocolViolation` if ``events`` is not an iterable or
    raises while read, :class:`~contracts.errors.LimitExceeded` beyond the bound.
    """
    bounds = check_stream_limits(limits)
    frames: list[object] = []

    def collect(event: object) -> None:
        if len(frames) >= bounds.max_events:
            raise LimitExceeded(f"more than {bounds.max_events} fixture events",
                                where=f"event {len(frames)}")
        frames.append(DONE if _is_fixture_done(event) else event)

    return drive(collect, lambda: frames, events, bounds.max_events)


def _is_fixture_done(event: object) -> bool:
    # Compared field by field on exact types: ``==`` on a caller's object could run
    # its code.
    if type(event) is not dict or len(event) != len(FIXTURE_DONE_EVENT):
        return False
    for key, value in event.items():
        if type(key) is not str or type(value) is not str:
            return False
        if FIXTURE_DONE_EVENT.get(key) != value:
            return False
    return True


# ------------------------------------------------------------- non-streaming body


def parse_completion(body: object, *, revision: str = REVISION) -> ChatCompletionTurn:
    """Parse a non-streaming ``chat.completion`` body into a turn.

    Driven by the revision's ``body`` and ``body_choice`` levels: an object without
    a top-level ``error`` key (else :class:`~contracts.errors.ProviderError`),
    exactly one choice whose ``index``, when present, is the integer 0, and a
    message accepted by :func:`validate_message`, copied with its extension fields.
    ``finish_reason``/``id`` must be strings or null, ``usage`` an object or null.
    Raises :class:`~contracts.errors.ProtocolViolation`,
    :class:`~contracts.errors.EmptyCompletion` or
    :class:`~contracts.errors.LimitExceeded`.
    """
    tables = tables_for(revision)
    at = "body"
    if type(body) is not dict:
        raise ProtocolViolation(f"body must be a JSON object, got {preview(body)}", where=at)
    values: dict[str, Any] = {}  # rule -> value
    levels = levels_of(revision)
    for _, name, spec, value in read_fields(body, levels["body"], at):
        where = f"{at}.{name}"
        if spec.rule == "error":
            raise ProviderError(f"provider error body: {_error_text(value)}", where=where)
        if spec.rule == "choices" and len(value) != 1:
            raise ProtocolViolation(
                f"{name} has {len(value)} entries; exactly one choice is required", where=where
            )
        if spec.rule == "usage" and value is not None:
            value = copy_json(value, what=name, where=where)
        values[spec.rule] = value
    choice_at = f"{at}.{tables.field_for('body', 'choices')}[0]"
    choice = values["choices"][0]
    if type(choice) is not dict:
        raise ProtocolViolation(f"choice must be an object, got {preview(choice)}",
                                where=choice_at)
    for _, name, spec, value in read_fields(choice, levels["body_choice"], choice_at):
        where = f"{choice_at}.{name}"
        if spec.rule == "choice_index" and value != tables.choice_index:
            raise ProtocolViolation(
                f"{name} must be the integer {tables.choice_index} when present, "
                f"got {preview(value)}",
                where=where,
            )
        if spec.rule == "message":
            validate_message(value, where=where, revision=revision)
            value = copy_json(value, what=name, where=where)
        values[spec.rule] = value
    return _finish_turn(
        values["message"],
        values.get("finish_reason"),
        values.get("response_id"),
        values.get("usage"),
        (),
        False,
        revision,
        f"{choice_at}.{tables.field_for('body_choice', 'message')}",
        values.get("model_reported") or None,
    )


if TYPE_CHECKING:

    def _conforms(
        s: ChatCompletionStream, t: ChatCompletionTurn, c: ChatToolCall
    ) -> tuple[StreamProtocol[ChatCompletionTurn], TurnProtocol, CallProtocol]:
        return s, t, c
