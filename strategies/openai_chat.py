"""Hypothesis strategies for OpenAI Chat Completions streams.

A completion *model* (message content, reasoning, tool calls, finish reason,
response id, usage) is rendered into a stream of decoded ``data:`` frames with
arbitrary fragmenting: content split anywhere (empty fragments and nulls
included), tool calls interleaved across frames in any order, a tool's ``id`` and
``type`` arriving in a later fragment than its first one and repeated afterwards,
non-contiguous tool indexes, frames mixing fields of several channels, usage-only
frames, metadata fields. The rendering also computes, on its own, the expected
message after every frame and which frames make progress (design section 5).

Mutators turn a valid stream into one that must be rejected, each with the
expected error class.

This module models the protocol independently: it never imports the parser's
tables or helpers.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from pcfuzz.contracts.errors import ContractError, ProtocolViolation, ProviderError, StreamTruncated

DONE = "[DONE]"

class _Absent:
    """Sentinel for "this message key never appeared"."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()

# What this model believes (independently of the parser) about the pinned shape.
MODEL_FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter", "function_call")
MODEL_DELTA_KEYS = ("role", "content", "reasoning_content", "tool_calls", "refusal",
                    "function_call")
MODEL_TOOL_KEYS = ("index", "id", "type", "function")

# The model's own reading of the legacy text projection (design 3.4 ``_finalize_text``):
# a think block runs from ``<think>`` to the next ``</think>`` or to the end; blocks
# are dropped, then the surrounding whitespace. A regular expression here, a
# ``str.find`` scan in the parser: two independent implementations.
_MODEL_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)


def model_projection(content: Any) -> str:
    """The projected text of ``content`` (``""`` for absent, null or non-string)."""
    if not isinstance(content, str):
        return ""
    return _MODEL_THINK_BLOCK.sub("", content).strip()


@dataclass(frozen=True)
class ToolModel:
    """One function tool call: bucket ``index``, identity, name, verbatim arguments."""

    index: int
    call_id: str
    name: str
    arguments: str
    arguments_is_object: bool

    def message_entry(self) -> dict[str, Any]:
        return {
            "id": self.call_id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class CompletionModel:
    """The completion a stream should aggregate to.

    ``content``/``reasoning``: ``ABSENT`` (never sent), ``None`` (only ever null),
    or the concatenated text.
    """

    response_id: str | None
    content: Any
    reasoning: Any
    tools: tuple[ToolModel, ...]
    finish_reason: str | None
    usage: dict[str, Any] | None

    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant"}
        if self.content is not ABSENT:
            message["content"] = self.content
        if self.reasoning is not ABSENT:
            message["reasoning_content"] = self.reasoning
        if self.tools:
            message["tool_calls"] = [
                t.message_entry() for t in sorted(self.tools, key=lambda t: t.index)
            ]
        return message

    @property
    def has_product(self) -> bool:
        # Complete tools, or non-empty projected text (which needs non-empty raw text).
        return bool(self.tools) or model_projection(self.content) != ""

    @property
    def executable(self) -> bool:
        """Whether the calls are released (given a complete stream)."""
        return (
            bool(self.tools)
            and self.finish_reason == "tool_calls"
            and all(t.arguments_is_object for t in self.tools)
        )

    def body(self) -> dict[str, Any]:
        """The equivalent non-streaming response body."""
        body: dict[str, Any] = {
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "fixture-model",
            "choices": [
                {"index": 0, "message": self.message(), "finish_reason": self.finish_reason}
            ],
        }
        if self.response_id is not None:
            body["id"] = self.response_id
        if self.usage is not None:
            body["usage"] = copy.deepcopy(self.usage)
        return body


@dataclass
class RenderedStream:
    """Frames of one rendering, with the model's own expectations.

    ``frames`` ends with ``"[DONE]"``. ``partial_messages[k]`` is the message
    expected after the first ``k`` frames (``k`` from 0 to ``len(frames) - 1``).
    ``progress_frames`` are the indexes of frames that make progress.
    """

    model: CompletionModel
    frames: list[Any]
    partial_messages: list[dict[str, Any]]
    progress_frames: list[int]
    labels: list[str] = field(default_factory=list)

    def chunk_frames(self) -> list[dict[str, Any]]:
        return [f for f in self.frames if isinstance(f, dict)]


# ------------------------------------------------------------------ model pieces

ids = st.text(min_size=1, max_size=12)
names = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=10
)
# Texts that are often whitespace and think blocks only: the projection's cases.
_THINK_PIECES = st.sampled_from(
    ["<think>", "</think>", "<think>r</think>", " ", "\n", "\t", "\u3000", "a", "<thi", "nk>"]
)
think_texts = st.lists(_THINK_PIECES, max_size=6).map("".join)
texts = st.one_of(st.text(max_size=30), think_texts)
#: Content with no product: nothing, empty, whitespace, think blocks only.
empty_projection_texts = st.one_of(
    st.sampled_from(["", " ", "\n\t ", "<think>x</think>", " <think>a</think>\n<think>b",
                     "<think>unclosed answer"]),
    think_texts.filter(lambda t: model_projection(t) == ""),
)
json_objects = st.dictionaries(
    st.text(max_size=5),
    st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.text(max_size=8)),
    max_size=4,
)


@st.composite
def arguments_texts(draw: st.DrawFn) -> tuple[str, bool]:
    """Arguments text and whether it is a strict JSON object (known by construction)."""
    kind = draw(st.sampled_from(["object", "object", "object", "broken", "not_object"]))
    if kind == "object":
        return json.dumps(draw(json_objects), ensure_ascii=draw(st.booleans())), True
    if kind == "broken":
        text = json.dumps(draw(json_objects))
        return draw(st.sampled_from([text[:-1], "", "{", '{"a":1,"a":2}', "{NaN}"])), False
    return draw(st.sampled_from(["[]", "null", "1", '"x"', "true"])), False


@st.composite
def tool_models(draw: st.DrawFn, *, max_tools: int = 3) -> tuple[ToolModel, ...]:
    indexes = draw(st.lists(st.integers(0, 40), unique=True, max_size=max_tools))
    call_ids = draw(st.lists(ids, unique=True, min_size=len(indexes), max_size=len(indexes)))
    tools = []
    for index, call_id in zip(indexes, call_ids, strict=True):
        arguments, is_object = draw(arguments_texts())
        tools.append(ToolModel(index, call_id, draw(names), arguments, is_object))
    return tuple(tools)


usages = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "prompt_tokens": st.integers(0, 10_000),
            "completion_tokens": st.integers(0, 10_000),
            "total_tokens": st.integers(0, 20_000),
        },
        optional={"completion_tokens_details": st.fixed_dictionaries(
            {"reasoning_tokens": st.integers(0, 100)})},
    ),
)


@st.composite
def completion_models(draw: st.DrawFn, *, product: bool | None = True) -> CompletionModel:
    """A completion model. ``product=True``: has a product (the stream succeeds);
    ``False``: neither content nor tools (an empty completion); ``None``: either."""
    text_values = st.one_of(st.just(ABSENT), st.none(), texts)
    tools = draw(tool_models())
    content = draw(text_values)
    if product is False:
        tools = ()
        content = draw(st.one_of(st.sampled_from([ABSENT, None]), empty_projection_texts))
    elif product is True and not tools and model_projection(content) == "":
        content = draw(st.text(min_size=1, max_size=30).filter(lambda t: model_projection(t) != ""))
    finish = draw(st.one_of(
        st.none(),
        st.just("tool_calls") if tools else st.sampled_from(["stop", "length"]),
        st.sampled_from(MODEL_FINISH_REASONS),
    ))
    return CompletionModel(
        response_id=draw(st.one_of(st.none(), ids)),
        content=content,
        reasoning=draw(text_values),
        tools=tools,
        finish_reason=finish,
        usage=draw(usages),
    )


# --------------------------------------------------------------------- rendering


def _split(draw: st.DrawFn, text: str, *, allow_null: bool) -> list[str | None]:
    """Split ``text`` into ordered pieces, with extra empty pieces (and nulls)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=4)))
    pieces: list[str | None] = []
    start = 0
    for cut in cuts:
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    if allow_null and draw(st.booleans()):
        pieces.insert(draw(st.integers(0, len(pieces))), None)
    return pieces


def _text_atoms(draw: st.DrawFn, channel: str, value: Any) -> list[tuple[str, Any]]:
    if value is ABSENT:
        return []
    if value is None:
        return [(channel, None)] * draw(st.integers(1, 2))
    return [(channel, piece) for piece in _split(draw, value, allow_null=True)]


def _tool_atoms(draw: st.DrawFn, tool: ToolModel) -> list[tuple[str, Any]]:
    name_pieces = [p for p in _split(draw, tool.name, allow_null=False) if p is not None]
    arg_pieces = [p for p in _split(draw, tool.arguments, allow_null=True)]
    if all(p is None for p in arg_pieces):
        arg_pieces.append(tool.arguments)
    # Interleave name and arguments pieces, keeping each in order.
    order = draw(st.permutations([0] * len(name_pieces) + [1] * len(arg_pieces)))
    fragments: list[dict[str, Any]] = []
    ni = ai = 0
    for channel in order:
        function: dict[str, Any] = {}
        if channel == 0:
            function["name"] = name_pieces[ni]
            ni += 1
        else:
            function["arguments"] = arg_pieces[ai]
            ai += 1
        if len(fragments) > 0 and draw(st.booleans()):
            previous = fragments[-1]["function"]
            key = next(iter(function))
            if key not in previous:
                previous[key] = function[key]
                continue
        fragments.append({"function": function})
    for _ in range(draw(st.integers(0, 1))):
        fragments.insert(draw(st.integers(0, len(fragments))), {})
    # The identity arrives in some fragment (not necessarily the first) and may be
    # repeated in later ones.
    for key, value in (("id", tool.call_id), ("type", "function")):
        first = draw(st.integers(0, len(fragments) - 1))
        fragments[first][key] = value
        for later in range(first + 1, len(fragments)):
            if draw(st.integers(0, 3)) == 0:
                fragments[later][key] = value
    return [(f"tool:{tool.index}", {"index": tool.index, **f}) for f in fragments]


#: The contract revisions this model renders, the pinned one first, and the delta
#: fields each knows beyond the pinned ones (written down from the openai types, not
#: read from the parser's tables): openai 3.57.0's ChoiceDelta has ``audio``, which
#: carries nothing in a text/tool turn (null).
PINNED_REVISION = "2026-07-21"
REVISIONS = ("2026-07-21", "2026-12-01")
NULL_DELTA_FIELDS: dict[str, tuple[str, ...]] = {"2026-07-21": (), "2026-12-01": ("audio",)}
#: Delta fields a revision does not know although a later one does (fail closed there).
UNKNOWN_DELTA_FIELDS: dict[str, tuple[str, ...]] = {"2026-07-21": ("audio",), "2026-12-01": ()}


@st.composite
def rendered_streams(
    draw: st.DrawFn, model: CompletionModel | None = None, *, product: bool | None = True,
    revision: str = PINNED_REVISION,
) -> RenderedStream:
    """A model rendered into frames of ``revision``'s shapes, ending with ``[DONE]``."""
    if model is None:
        model = draw(completion_models(product=product))
    channels: list[list[tuple[str, Any]]] = [
        [("role", "assistant")] * draw(st.integers(1, 2)),
        _text_atoms(draw, "content", model.content),
        _text_atoms(draw, "reasoning_content", model.reasoning),
    ]
    channels.extend(_tool_atoms(draw, t) for t in model.tools)
    if model.finish_reason is not None:
        channels.append([("finish", model.finish_reason)] * draw(st.integers(1, 2)))
    channels.append([("empty", None)] * draw(st.integers(0, 2)))
    channels = [c for c in channels if c]
    # Random interleaving that keeps each channel's order.
    atoms: list[tuple[str, Any]] = []
    positions = [0] * len(channels)
    while True:
        live = [i for i, c in enumerate(channels) if positions[i] < len(c)]
        if not live:
            break
        pick = live[draw(st.integers(0, len(live) - 1))]
        atoms.append(channels[pick][positions[pick]])
        positions[pick] += 1
    # Group atoms into deltas; a frame never holds the same key twice.
    groups: list[list[tuple[str, Any]]] = []
    for atom in atoms:
        if len(groups) > 0 and draw(st.booleans()):
            used = {a[0] for a in groups[-1]}
            if atom[0] not in used and atom[0] != "empty" and "empty" not in used:
                groups[-1].append(atom)
                continue
        groups.append([atom])
    frames: list[Any] = []
    progress: list[int] = []
    partial: list[dict[str, Any]] = [{}]
    state = _PartialState()
    for group in groups:
        frame, progressed = _frame(draw, group, state)
        if progressed:
            progress.append(len(frames))
        frames.append(frame)
        partial.append(state.message())
    # An earlier usage object is replaced by the last one.
    earlier_usage = model.usage is not None and draw(st.booleans())
    for _ in range(int(earlier_usage)):
        # A whole usage object (the SDK's CompletionUsage requires all three counters).
        tokens = draw(st.integers(0, 9))
        frames.append({"choices": [], "usage": {"prompt_tokens": tokens, "completion_tokens": 0,
                                                "total_tokens": tokens}})
        partial.append(state.message())
    if model.usage is not None:
        frames.append({"choices": [], "usage": copy.deepcopy(model.usage)})
        partial.append(state.message())
    # Response ids: per frame present, null or absent; one frame carries it.
    carriers = [i for i in range(len(frames))]
    chosen = draw(st.sampled_from(carriers)) if model.response_id is not None else -1
    for i, frame in enumerate(frames):
        mode = draw(st.sampled_from(["id", "null", "absent"]))
        if model.response_id is not None and (i == chosen or mode == "id"):
            frame["id"] = model.response_id
        elif mode == "null":
            frame["id"] = None
        if draw(st.integers(0, 5)) == 0:
            frame.update({"object": "chat.completion.chunk", "created": 1_700_000_000,
                          "model": "fixture-model", "system_fingerprint": None})
        if model.usage is None and draw(st.integers(0, 5)) == 0:
            frame["usage"] = None
    if model.usage is not None:
        # A null usage never replaces the last usage object.
        for frame in frames[:-1]:
            if "usage" not in frame and draw(st.integers(0, 5)) == 0:
                frame["usage"] = None
    for null_field in NULL_DELTA_FIELDS[revision]:
        for frame in frames:
            choices = frame.get("choices")
            if choices and draw(st.integers(0, 3)) == 0:
                choices[0]["delta"][null_field] = None
    frames.append(DONE)
    return RenderedStream(model, frames, partial, progress)


class _PartialState:
    """The model's own running view of the message (for the state machine)."""

    def __init__(self) -> None:
        self.role = False
        self.texts: dict[str, Any] = {}
        self.tools: dict[int, dict[str, Any]] = {}

    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = {}
        if self.role:
            message["role"] = "assistant"
        for key in ("content", "reasoning_content"):
            if key in self.texts:
                value = self.texts[key]
                message[key] = "".join(value) if isinstance(value, list) else None
        if self.tools:
            message["tool_calls"] = []
            for index in sorted(self.tools):
                t = self.tools[index]
                tool: dict[str, Any] = {}
                if "id" in t:
                    tool["id"] = t["id"]
                if "type" in t:
                    tool["type"] = t["type"]
                function: dict[str, Any] = {}
                if t["name"]:
                    function["name"] = "".join(t["name"])
                if t["arguments"] is not None:
                    function["arguments"] = "".join(t["arguments"])
                tool["function"] = function
                message["tool_calls"].append(tool)
        return message


def _frame(
    draw: st.DrawFn, group: list[tuple[str, Any]], state: _PartialState
) -> tuple[dict[str, Any], bool]:
    """Render one group of atoms into a chunk; update ``state``; say if it progressed."""
    delta: dict[str, Any] = {}
    choice: dict[str, Any] = {"index": 0, "delta": delta}
    progressed = False
    tool_entries: list[dict[str, Any]] = []
    for kind, value in group:
        if kind == "role":
            delta["role"] = value
            state.role = True
        elif kind in ("content", "reasoning_content"):
            delta[kind] = value
            if value is None:
                state.texts.setdefault(kind, None)
            else:
                if not isinstance(state.texts.get(kind), list):
                    state.texts[kind] = []
                state.texts[kind].append(value)
                progressed = progressed or value != ""
        elif kind == "finish":
            choice["finish_reason"] = value
        elif kind.startswith("tool:"):
            entry = copy.deepcopy(value)
            tool_entries.append(entry)
            t = state.tools.setdefault(entry["index"], {"name": [], "arguments": None})
            for identity in ("id", "type"):
                if identity in entry and identity not in t:
                    t[identity] = entry[identity]
                    progressed = True
            function = entry.get("function", {})
            if function.get("name"):
                t["name"].append(function["name"])
                progressed = True
            if function.get("arguments") is not None:
                if t["arguments"] is None:
                    t["arguments"] = []
                t["arguments"].append(function["arguments"])
                progressed = progressed or function["arguments"] != ""
    if tool_entries:
        delta["tool_calls"] = tool_entries
    if "finish_reason" not in choice and draw(st.integers(0, 3)) == 0:
        choice["finish_reason"] = None
    if draw(st.integers(0, 7)) == 0:
        choice["logprobs"] = None
    if draw(st.integers(0, 7)) == 0:
        delta.setdefault("refusal", None)
    return {"choices": [choice]}, progressed


# --------------------------------------------------------------------- mutators

MUTATIONS: dict[str, type[ContractError]] = {
    "error_frame": ProviderError,
    "missing_done": StreamTruncated,
    "truncated": StreamTruncated,
    "conflicting_tool_id": ProtocolViolation,
    "conflicting_finish_reason": ProtocolViolation,
    "conflicting_response_id": ProtocolViolation,
    "bool_choice_index": ProtocolViolation,
    "bool_tool_index": ProtocolViolation,
    "extra_choice": ProtocolViolation,
    "unknown_delta_field": ProtocolViolation,
    "unknown_tool_delta_field": ProtocolViolation,
    "frame_after_done": ProtocolViolation,
    "wrong_role": ProtocolViolation,
    "non_object_frame": ProtocolViolation,
    "duplicate_tool_id": ProtocolViolation,
    "tool_index_out_of_range": ProtocolViolation,
    "wrong_field_type": ProtocolViolation,
}

#: What each mutation means for any parser (the conformance kit's labels; a test
#: checks both tables agree): ``(label, family)``. ``safety``: the stream is not a
#: complete, unambiguous turn, so releasing any call is a violation. ``strictness``:
#: this project's fail-closed policy (shapes, types, unknown fields).
MUTATION_LABELS: dict[str, tuple[str, str]] = {
    "error_frame": ("safety", "terminal"),
    "missing_done": ("safety", "truncation"),
    "truncated": ("safety", "truncation"),
    "conflicting_tool_id": ("safety", "id_confusion"),
    "conflicting_finish_reason": ("safety", "terminal"),
    "conflicting_response_id": ("strictness", "drift"),
    "bool_choice_index": ("strictness", "drift"),
    "bool_tool_index": ("strictness", "drift"),
    "extra_choice": ("strictness", "drift"),
    "unknown_delta_field": ("strictness", "drift"),
    "unknown_tool_delta_field": ("strictness", "drift"),
    "frame_after_done": ("safety", "terminal"),
    "wrong_role": ("strictness", "drift"),
    "non_object_frame": ("strictness", "drift"),
    "duplicate_tool_id": ("safety", "id_confusion"),
    "tool_index_out_of_range": ("strictness", "drift"),
    "wrong_field_type": ("strictness", "drift"),
}

# The int64 range of the wire format bounds a tool index (this model's own belief).
MODEL_MAX_TOOL_INDEX = 2**63 - 1


def _choice_frames(frames: list[Any]) -> list[int]:
    return [i for i, f in enumerate(frames) if isinstance(f, dict) and f.get("choices")]


def _tool_frames(frames: list[Any]) -> list[int]:
    return [
        i for i in _choice_frames(frames) if frames[i]["choices"][0]["delta"].get("tool_calls")
    ]


def _chunk(delta: dict[str, Any], **choice: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, **choice}]}


@st.composite
def mutated_streams(
    draw: st.DrawFn,
    kinds: tuple[str, ...] = tuple(MUTATIONS),
    models: st.SearchStrategy[CompletionModel] | None = None,
    revision: str = PINNED_REVISION,
) -> tuple[str, list[Any], type[ContractError]]:
    """A valid stream of ``revision`` with one mutation: ``(mutation, frames, expected
    error class)``.

    ``models``: the completions to mutate (default: any with a product); the
    conformance kit passes executable ones, so every example can catch a parser
    that releases what it should not.
    """
    kind = draw(st.sampled_from(kinds))
    streams = (rendered_streams(revision=revision) if models is None else models.flatmap(
        lambda m: rendered_streams(m, revision=revision)))
    rendered = draw(streams.filter(lambda r: _applicable(kind, r.frames, r.model)))
    frames = copy.deepcopy(rendered.frames)
    model = rendered.model
    body = frames[:-1]  # without [DONE]
    insert_at = draw(st.integers(0, len(body)))
    if kind == "error_frame":
        error = draw(st.sampled_from(
            [None, {}, {"message": "overloaded", "type": "server_error"}, "boom", 0]
        ))
        frame: dict[str, Any] = {"error": error}
        if draw(st.booleans()):
            frame.update({"choices": [], "usage": {"total_tokens": 1}})
        body.insert(insert_at, frame)
        frames = body + [DONE]
    elif kind == "missing_done":
        frames = body
    elif kind == "truncated":
        frames = body[: draw(st.integers(0, len(body)))]
    elif kind == "conflicting_tool_id":
        tool = draw(st.sampled_from(model.tools))
        other = draw(ids.filter(lambda s: s != tool.call_id))
        body.insert(insert_at, _chunk({"tool_calls": [{"index": tool.index, "id": other}]}))
        frames = body + [DONE]
    elif kind == "conflicting_finish_reason":
        values = draw(st.lists(st.sampled_from(MODEL_FINISH_REASONS), min_size=2, max_size=2,
                               unique=True))
        value = values[0] if values[0] != model.finish_reason else values[1]
        body.insert(insert_at, _chunk({}, finish_reason=value))
        if model.finish_reason is None:
            other = values[1] if values[1] != value else values[0]
            body.insert(draw(st.integers(0, len(body))), _chunk({}, finish_reason=other))
        frames = body + [DONE]
    elif kind == "conflicting_response_id":
        value = draw(ids.filter(lambda s: s != model.response_id))
        body.insert(insert_at, {"id": value, "choices": []})
        if model.response_id is None:
            other = value + "-other"
            body.insert(draw(st.integers(0, len(body))), {"id": other, "choices": []})
        frames = body + [DONE]
    elif kind == "bool_choice_index":
        at = draw(st.sampled_from(_choice_frames(body)))
        body[at]["choices"][0]["index"] = draw(st.booleans())
        frames = body + [DONE]
    elif kind == "bool_tool_index":
        at = draw(st.sampled_from(_tool_frames(body)))
        entries = body[at]["choices"][0]["delta"]["tool_calls"]
        entries[draw(st.integers(0, len(entries) - 1))]["index"] = draw(st.booleans())
        frames = body + [DONE]
    elif kind == "extra_choice":
        at = draw(st.sampled_from(range(len(body))))
        body[at]["choices"] = list(body[at].get("choices", [])) or [{"index": 0, "delta": {}}]
        body[at]["choices"].append({"index": 1, "delta": {"content": "x"}})
        frames = body + [DONE]
    elif kind == "unknown_delta_field":
        at = draw(st.sampled_from(_choice_frames(body)))
        # unknown in the stream's revision ("audio" is known, as null only, since 2026-12-01)
        key = draw(st.sampled_from(["annotations", "x_vendor", "Content", "tool_call",
                                    *UNKNOWN_DELTA_FIELDS[revision]]))
        body[at]["choices"][0]["delta"][key] = draw(st.sampled_from([None, "", {}, "x"]))
        frames = body + [DONE]
    elif kind == "unknown_tool_delta_field":
        at = draw(st.sampled_from(_tool_frames(body)))
        entries = body[at]["choices"][0]["delta"]["tool_calls"]
        key = draw(st.sampled_from(["custom", "name", "arguments", "x_vendor"]))
        entries[draw(st.integers(0, len(entries) - 1))][key] = None
        frames = body + [DONE]
    elif kind == "frame_after_done":
        frames = body + [DONE, _chunk({"content": "late"})]
    elif kind == "wrong_role":
        role = draw(st.sampled_from(["user", "system", "tool", "developer", "", "Assistant"]))
        body.insert(insert_at, _chunk({"role": role}))
        frames = body + [DONE]
    elif kind == "duplicate_tool_id":
        first, second = draw(st.permutations(model.tools))[:2]
        body.insert(insert_at, _chunk({"tool_calls": [{"index": second.index,
                                                       "id": first.call_id}]}))
        frames = body + [DONE]
    elif kind == "tool_index_out_of_range":
        at = draw(st.sampled_from(_tool_frames(body)))
        entries = body[at]["choices"][0]["delta"]["tool_calls"]
        entries[draw(st.integers(0, len(entries) - 1))]["index"] = draw(
            st.integers(MODEL_MAX_TOOL_INDEX + 1, 2**200))
        frames = body + [DONE]
    elif kind == "wrong_field_type":
        at = draw(st.sampled_from(_choice_frames(body)))
        frame = body[at]
        place = draw(st.sampled_from(["content", "reasoning_content", "finish_reason", "id",
                                      "usage", "delta", "tool_calls"]))
        bad = draw(st.sampled_from([1, True, 1.5, [], {"x": 1}, ["a"]]))
        if place in ("content", "reasoning_content", "tool_calls"):
            if place == "tool_calls" and isinstance(bad, list):
                bad = {"index": 0}
            frame["choices"][0]["delta"][place] = bad
        elif place == "finish_reason":
            frame["choices"][0]["finish_reason"] = bad
        elif place == "delta":
            frame["choices"][0]["delta"] = [] if isinstance(bad, dict) else bad
        elif place == "usage":
            frame["usage"] = [] if isinstance(bad, dict) else bad
        else:
            frame["id"] = bad
        frames = body + [DONE]
    elif kind == "non_object_frame":
        bad = draw(st.sampled_from([[], 0, "DONE", "[done]", True, 1.5]))
        body.insert(insert_at, bad)
        frames = body + [DONE]
    return kind, frames, MUTATIONS[kind]


def _applicable(kind: str, frames: list[Any], model: CompletionModel) -> bool:
    body = frames[:-1]
    if kind in ("conflicting_tool_id",):
        return bool(model.tools)
    if kind == "duplicate_tool_id":
        return len(model.tools) >= 2
    if kind in ("bool_choice_index", "unknown_delta_field", "wrong_field_type"):
        return bool(_choice_frames(body))
    if kind in ("bool_tool_index", "unknown_tool_delta_field", "tool_index_out_of_range"):
        return bool(_tool_frames(body))
    return True
