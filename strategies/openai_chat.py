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
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import strategies as st

from pcfuzz.contracts.errors import ContractError, ProtocolViolation, ProviderError, StreamTruncated
from pcfuzz.strategies.call_mutation_labels import call_mutation_labels
from pcfuzz.strategies.hostile_arguments import bad_arguments
from pcfuzz.strategies.realism import check_level
from pcfuzz.strategies.tool_names import tool_names

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
#: a call's name (the conformance kit may choose others: tool_names)
_call_names = tool_names(names)
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
        tools.append(ToolModel(index, call_id, draw(_call_names), arguments, is_object))
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


def _sdk_tool_atoms(draw: st.DrawFn, tool: ToolModel) -> list[tuple[str, Any]]:
    """A call as the API streams it (realism ``sdk``): the first fragment carries the
    index, id, type and the whole name with ``""`` or a first piece of the arguments;
    every later fragment only the index and a further piece of the arguments."""
    pieces: list[str] = [p for p in _split(draw, tool.arguments, allow_null=False)
                         if isinstance(p, str) and p]
    first_piece = ""
    use_first: bool = draw(st.booleans())
    if pieces and use_first:
        first_piece = pieces.pop(0)
    fragments: list[dict[str, Any]] = [
        {"index": tool.index, "id": tool.call_id, "type": "function",
         "function": {"name": tool.name, "arguments": first_piece}}]
    fragments += [{"index": tool.index, "function": {"arguments": p}} for p in pieces]
    return [(f"tool:{tool.index}", f) for f in fragments]


def _tool_atoms(draw: st.DrawFn, tool: ToolModel, realism: str = "hostile",
                ) -> list[tuple[str, Any]]:
    if realism == "sdk":
        return _sdk_tool_atoms(draw, tool)
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
    revision: str = PINNED_REVISION, realism: str = "hostile",
) -> RenderedStream:
    """A model rendered into frames of ``revision``'s shapes, ending with ``[DONE]``.

    ``realism`` (:mod:`.realism`): ``hostile`` renders any fragmentation and envelope
    this model knows; ``wire`` gives every chunk its whole envelope (``id``,
    ``object``, ``created``, ``model``: the SDK's ``ChatCompletionChunk`` requires
    them) and no ``reasoning_content`` channel (a field the SDK type does not
    declare), so the model's response id is always set and its reasoning absent;
    ``sdk`` also fragments each call as the API does (:func:`_sdk_tool_atoms`) and
    numbers the calls 0, 1, 2 ... in order of their first fragment (the SDK's own
    accumulator takes the index as a list position)."""
    check_level(realism)
    if model is None:
        model = draw(completion_models(product=product))
    if realism != "hostile":
        model = replace(model, reasoning=ABSENT,
                        response_id=model.response_id if model.response_id is not None
                        else draw(ids))
    channels: list[list[tuple[str, Any]]] = [
        [("role", "assistant")] * draw(st.integers(1, 2)),
        _text_atoms(draw, "content", model.content),
        _text_atoms(draw, "reasoning_content", model.reasoning),
    ]
    channels.extend(_tool_atoms(draw, t, realism) for t in model.tools)
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
    if realism == "sdk":
        atoms, model = _numbered_in_order(atoms, model)
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
    if realism != "hostile":
        for frame in frames:  # the chunk envelope, on every chunk
            frame.update({"id": model.response_id, "object": "chat.completion.chunk",
                          "created": 1_700_000_000, "model": "fixture-model"})
            if draw(st.integers(0, 5)) == 0:
                frame["system_fingerprint"] = None
            if model.usage is None and draw(st.integers(0, 5)) == 0:
                frame["usage"] = None
        if model.usage is not None:
            for frame in frames[:-1]:
                if "usage" not in frame and draw(st.integers(0, 5)) == 0:
                    frame["usage"] = None
        _null_delta_fields(draw, frames, revision)
        frames.append(DONE)
        return RenderedStream(model, frames, partial, progress)
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
    _null_delta_fields(draw, frames, revision)
    frames.append(DONE)
    return RenderedStream(model, frames, partial, progress)


def _null_delta_fields(draw: st.DrawFn, frames: list[Any], revision: str) -> None:
    for null_field in NULL_DELTA_FIELDS[revision]:
        for frame in frames:
            choices = frame.get("choices")
            if choices and draw(st.integers(0, 3)) == 0:
                choices[0]["delta"][null_field] = None


def _numbered_in_order(atoms: list[tuple[str, Any]], model: CompletionModel,
                       ) -> tuple[list[tuple[str, Any]], CompletionModel]:
    """The calls renumbered 0, 1, 2 ... in order of their first fragment."""
    order: dict[int, int] = {}
    for kind, value in atoms:
        if kind.startswith("tool:"):
            order.setdefault(value["index"], len(order))
    out: list[tuple[str, Any]] = []
    for kind, value in atoms:
        if kind.startswith("tool:"):
            value = {**value, "index": order[value["index"]]}
            kind = f"tool:{value['index']}"
        out.append((kind, value))
    tools = tuple(replace(t, index=order[t.index]) for t in model.tools)
    return out, replace(model, tools=tools)


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
    "degenerate_error_frame": ProviderError,
    "missing_done": StreamTruncated,
    "truncated": StreamTruncated,
    "conflicting_tool_id": ProtocolViolation,
    "conflicting_finish_reason": ProtocolViolation,
    "conflicting_response_id": ProtocolViolation,
    "bool_choice_index": ProtocolViolation,
    "bool_tool_index": ProtocolViolation,
    "extra_choice": ProtocolViolation,
    "choice_index": ProtocolViolation,
    "unknown_delta_field": ProtocolViolation,
    "unknown_tool_delta_field": ProtocolViolation,
    "frame_after_done": ProtocolViolation,
    "wrong_role": ProtocolViolation,
    "non_object_frame": ProtocolViolation,
    "duplicate_tool_id": ProtocolViolation,
    "shared_call_id": ProtocolViolation,
    "missing_call_id": ProtocolViolation,
    "empty_call_id": ProtocolViolation,
    "missing_name": ProtocolViolation,
    "empty_name": ProtocolViolation,
    "missing_arguments": ProtocolViolation,
    "non_function_type": ProtocolViolation,
    "tool_index_out_of_range": ProtocolViolation,
    "wrong_field_type": ProtocolViolation,
}
#: Mutations whose stream is a well-formed completion the terminal gate must not
#: release: the arguments text of one call is no strict JSON object (every call then
#: goes to ``recovery_calls``: all or nothing), or the finish reason is not
#: ``tool_calls``. ``mutated_streams`` gives ``None`` as their error class.
WITHHELD: tuple[str, ...] = (
    "non_object_arguments",
    "non_finite_arguments",
    "duplicate_key_arguments",
    "non_strict_arguments",
    "invalid_json_arguments",
    "non_tool_terminal",
)

#: What each mutation means for any parser (the conformance kit's labels; a test
#: checks both tables agree): ``(label, family)``. ``safety``: the stream is not a
#: complete, unambiguous turn, so releasing any call is a violation. ``strictness``:
#: this project's fail-closed policy (shapes, types, unknown fields).
MUTATION_LABELS: dict[str, tuple[str, str]] = {
    "error_frame": ("safety", "terminal"),
    # An error key whose value is null, {}, a string: the seed fails it, the SDK's
    # stream reader (``if data.get("error")``) does not: this project's policy.
    "degenerate_error_frame": ("strictness", "terminal"),
    "missing_done": ("safety", "truncation"),
    "truncated": ("safety", "truncation"),
    "conflicting_tool_id": ("safety", "id_confusion"),
    "conflicting_finish_reason": ("safety", "terminal"),
    "conflicting_response_id": ("strictness", "drift"),
    "bool_choice_index": ("strictness", "drift"),
    "bool_tool_index": ("strictness", "drift"),
    # A second choice carrying only text: choice 0's calls are intact (seed 3.2: more
    # than one choice is a protocol failure; this project's policy for releasing).
    "extra_choice": ("strictness", "drift"),
    # Calls of a choice other than 0 (the one choice renumbered, or a second choice
    # carrying its own call): honouring them executes another completion's calls.
    "choice_index": ("safety", "choice"),
    "unknown_delta_field": ("strictness", "drift"),
    "unknown_tool_delta_field": ("strictness", "drift"),
    "frame_after_done": ("safety", "terminal"),
    "wrong_role": ("strictness", "drift"),
    "non_object_frame": ("strictness", "drift"),
    "duplicate_tool_id": ("safety", "id_confusion"),
    **call_mutation_labels(without=frozenset({"conflicting_arguments"})),
    "non_tool_terminal": ("safety", "terminal"),
    # A call whose type is not "function" (openai's later "custom" tools take free
    # text) or never arrives: this project's policy (the name and id are intact).
    "non_function_type": ("strictness", "drift"),
    "tool_index_out_of_range": ("strictness", "drift"),
    "wrong_field_type": ("strictness", "drift"),
}

#: Error objects as the API streams them (openai's ``ErrorObject``: ``message`` and
#: ``type`` required, ``code`` and ``param`` optional strings): the first one is what
#: an ``error_frame`` shrinks to, never ``null`` or ``{}``.
_ERROR_OBJECTS = st.fixed_dictionaries(
    {
        "message": st.sampled_from(["The server had an error while processing your request.",
                                    "Rate limit reached for requests", "overloaded"]),
        "type": st.sampled_from(["server_error", "rate_limit_error", "invalid_request_error"]),
    },
    optional={"param": st.none(), "code": st.sampled_from([None, "server_error",
                                                           "rate_limit_exceeded"])},
)
#: The finish reasons of the SDK's ``Choice.finish_reason`` other than ``tool_calls``
#: (``None``: no finish reason at all).
NON_TOOL_FINISH_REASONS = (None, "stop", "length", "content_filter", "function_call")

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
    realism: str = "hostile",
) -> tuple[str, list[Any], type[ContractError] | None]:
    """A valid stream of ``revision`` with one mutation: ``(mutation, frames, expected
    error class)``; the class is ``None`` for the :data:`WITHHELD` mutations (the turn
    parses and releases nothing). ``kinds`` defaults to the rejected ones.

    ``models``: the completions to mutate (default: any with a product); the
    conformance kit passes executable ones, so every example can catch a parser
    that releases what it should not. ``realism``: the level of the stream the
    mutation is drawn on (:func:`rendered_streams`).
    """
    kind = draw(st.sampled_from(kinds))
    streams = (rendered_streams(revision=revision, realism=realism) if models is None
               else models.flatmap(lambda m: rendered_streams(m, revision=revision,
                                                              realism=realism)))
    rendered = draw(streams.filter(lambda r: _applicable(kind, r.frames, r.model)))
    frames = copy.deepcopy(rendered.frames)
    model = rendered.model
    body = frames[:-1]  # without [DONE]
    insert_at = draw(st.integers(0, len(body)))
    if kind in ("error_frame", "degenerate_error_frame"):
        error = (draw(_ERROR_OBJECTS) if kind == "error_frame"
                 else draw(st.sampled_from([None, {}, "", "boom", 0, False])))
        frame: dict[str, Any] = {"error": error}
        if draw(st.booleans()):
            frame.update({"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 0,
                                                   "total_tokens": 1}})
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
    elif kind == "choice_index":
        frames = _other_choice(draw, body, model) + [DONE]
    elif kind == "non_tool_terminal":
        frames = _non_tool_terminal(draw, body) + [DONE]
    elif kind in _CALL_MUTATIONS:
        tools = draw(st.permutations(model.tools))
        _mutate_call(draw, kind, body, tools[0], tools[1:])
        frames = body + [DONE]
    return kind, frames, MUTATIONS.get(kind)


_CALL_MUTATIONS = frozenset(
    {*call_mutation_labels(without=frozenset({"conflicting_arguments"})), "non_function_type"})


def _fragments(body: list[Any], index: int) -> list[dict[str, Any]]:
    """The tool-call fragments of tool bucket ``index``, in stream order."""
    return [entry for i in _tool_frames(body)
            for entry in body[i]["choices"][0]["delta"]["tool_calls"]
            if entry.get("index") == index]


def _mutate_call(draw: st.DrawFn, kind: str, body: list[Any], tool: ToolModel,
                 others: tuple[ToolModel, ...] | list[ToolModel]) -> None:
    """Change one call (``tool``) in every fragment that carries the field."""
    fragments = _fragments(body, tool.index)
    if kind == "shared_call_id":  # the call takes another call's id, everywhere
        for fragment in fragments:
            if "id" in fragment:
                fragment["id"] = others[0].call_id
    elif kind in ("missing_call_id", "empty_call_id"):
        for fragment in fragments:
            if "id" in fragment:
                if kind == "missing_call_id":
                    del fragment["id"]
                else:
                    fragment["id"] = ""
    elif kind == "non_function_type":
        custom = draw(st.booleans())
        for fragment in fragments:
            if "type" in fragment:
                if custom:
                    fragment["type"] = "custom"
                else:
                    del fragment["type"]
    elif kind in ("missing_name", "empty_name"):
        for fragment in fragments:
            function = fragment.get("function")
            if isinstance(function, dict) and "name" in function:
                if kind == "missing_name":
                    del function["name"]
                else:
                    function["name"] = ""
    elif kind == "missing_arguments":
        for fragment in fragments:
            function = fragment.get("function")
            if isinstance(function, dict):
                function.pop("arguments", None)
    else:
        base = json.loads(tool.arguments) if tool.arguments_is_object else {}
        bad = draw(bad_arguments(kind.removesuffix("_arguments"), base))
        slots = [f["function"] for f in fragments
                 if isinstance(f.get("function"), dict)
                 and f["function"].get("arguments") is not None]
        cuts = sorted(draw(st.lists(st.integers(0, len(bad.text)), min_size=len(slots) - 1,
                                    max_size=len(slots) - 1)))
        bounds = [0, *cuts, len(bad.text)]
        for slot, start, end in zip(slots, bounds[:-1], bounds[1:], strict=True):
            slot["arguments"] = bad.text[start:end]


def _other_choice(draw: st.DrawFn, body: list[Any], model: CompletionModel) -> list[Any]:
    """Tool calls under a choice index other than 0: the one choice renumbered, or a
    second choice (index 1) carrying a complete call of its own, in frames of its own
    or beside choice 0."""
    variant = draw(st.sampled_from(["renumbered", "second_choice_frames",
                                    "second_choice_beside"]))
    if variant == "renumbered" or not _choice_frames(body):
        number = draw(st.integers(1, 3))
        for i in _choice_frames(body):
            for choice in body[i]["choices"]:
                choice["index"] = number
        return body
    used = {t.index for t in model.tools}
    taken = {t.call_id for t in model.tools}
    call = {"index": draw(st.integers(0, 40).filter(lambda i: i not in used)),
            "id": draw(ids.filter(lambda s: s not in taken)), "type": "function",
            "function": {"name": draw(_call_names),
                         "arguments": json.dumps(draw(json_objects))}}
    second = {"index": 1, "delta": {"tool_calls": [call]}, "finish_reason": "tool_calls"}
    if variant == "second_choice_frames":
        body.insert(draw(st.integers(0, len(body))), {"choices": [second]})
    else:
        at = draw(st.sampled_from(_choice_frames(body)))
        body[at]["choices"].append(second)
    return body


def _non_tool_terminal(draw: st.DrawFn, body: list[Any]) -> list[Any]:
    """Every finish reason replaced by one that is not ``tool_calls`` (or removed)."""
    value = draw(st.sampled_from(NON_TOOL_FINISH_REASONS))
    found = False
    for i in _choice_frames(body):
        choice = body[i]["choices"][0]
        if choice.get("finish_reason") is not None:
            found = True
            if value is None:
                del choice["finish_reason"]
            else:
                choice["finish_reason"] = value
    if not found and value is not None:
        body.insert(draw(st.integers(0, len(body))), _chunk({}, finish_reason=value))
    return body


def _applicable(kind: str, frames: list[Any], model: CompletionModel) -> bool:
    body = frames[:-1]
    if kind in ("conflicting_tool_id",) or kind in _CALL_MUTATIONS:
        return len(model.tools) >= (2 if kind == "shared_call_id" else 1)
    if kind == "duplicate_tool_id":
        return len(model.tools) >= 2
    if kind in ("bool_choice_index", "unknown_delta_field", "wrong_field_type"):
        return bool(_choice_frames(body))
    if kind in ("bool_tool_index", "unknown_tool_delta_field", "tool_index_out_of_range"):
        return bool(_tool_frames(body))
    return True
