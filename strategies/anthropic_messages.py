"""Hypothesis strategies for the Anthropic Messages wire-SSE envelope projection.

An independent model of the protocol (it never imports the parser's tables): a
turn is an ordered list of blocks (text, thinking, redacted thinking, server tool
use + server tool result, client tool use with arguments), a stop reason and
cumulative usage. :func:`render` turns a model into envelopes
``{"event": name, "data": {...}}`` with fragment boundaries anywhere (empty
fragments, splits inside ``\\u`` escapes and surrogate-pair escapes) and pings
anywhere. Mutators produce invalid or non-releasing variants together with the
outcome the contract requires.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, cast

import hypothesis
from hypothesis import strategies as st

from pcfuzz.strategies.call_mutation_labels import call_mutation_labels
from pcfuzz.strategies.hostile_arguments import bad_arguments
from pcfuzz.strategies.realism import check_level
from pcfuzz.strategies.tool_names import tool_names

__all__ = [
    "Block",
    "TurnModel",
    "Mutated",
    "KNOWN_STOP_REASONS",
    "PINNED_REVISION",
    "REVISIONS",
    "STOP_REASONS",
    "MUTATIONS",
    "MUTATION_LABELS",
    "SERVER_RESULT_TYPES",
    "turn_models",
    "render",
    "valid_streams",
    "mutated_streams",
    "expected_client_ids",
    "split_text",
    "DRIFT_POINTS",
    "known_keys",
    "drift_schema",
    "drift_strategies",
    "pinned_event_strategy",
]

# The protocol as this model understands it (written from the references, not
# imported from the parser, so the two can disagree and a test can notice).
KNOWN_STOP_REASONS = (
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
)
#: The contract revisions this model renders, the pinned one first, and each one's
#: stop reasons (from each pinned SDK's ``StopReason``, written down here: anthropic
#: 2.15.0 lists the same seven as the pinned baseline, so 2026-12-01 changes no shape
#: this model renders; the tables are per revision so that a later one can differ).
PINNED_REVISION = "2026-07-21"
REVISIONS = ("2026-07-21", "2026-12-01")
STOP_REASONS: dict[str, tuple[str, ...]] = {
    "2026-07-21": KNOWN_STOP_REASONS,
    "2026-12-01": KNOWN_STOP_REASONS,
}
SERVER_RESULT_TYPES = (
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
)
SERVER_TOOL_NAMES = ("web_search", "web_fetch", "code_execution", "tool_search_tool_regex")


@dataclass(frozen=True)
class Block:
    """One content block of the model; ``kind`` is the wire ``type``."""

    kind: str
    fields: dict[str, Any] = field(default_factory=dict)
    # For text/thinking: the full text; for tool uses: the JSON input text.
    stream_text: str = ""
    eager_truncate: int = 0  # chars dropped from the end of a client input (eager mode)


@dataclass(frozen=True)
class TurnModel:
    """A complete assistant message as a sequence of blocks and a terminal."""

    message_id: str
    model: str
    blocks: tuple[Block, ...]
    stop_reason: str
    input_tokens: int
    output_start: int
    output_end: int
    revision: str = PINNED_REVISION
    #: how realistic its rendering is (:mod:`.realism`): ``sdk`` puts pings only after
    #: message_start
    realism: str = "hostile"


@dataclass(frozen=True)
class Mutated:
    """A mutated stream and what the contract demands of it.

    ``expect`` is an error class name (``"ProtocolViolation"``, ...) or
    ``"no_calls"`` (the stream parses, but releases nothing) or ``"recovery"``
    (eager mode: parses, every client call is a recovery call).
    """

    mutation: str
    events: list[dict[str, Any]]
    expect: str
    eager: bool = False


_ids = st.text(
    alphabet=st.characters(codec="utf-8"), min_size=1, max_size=12
)
_names = st.from_regex(r"[a-zA-Z][a-zA-Z0-9_-]{0,15}", fullmatch=True)
#: a client call's name (the conformance kit may choose others: tool_names)
_call_names = tool_names(_names)
_text = st.text(max_size=40)
_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False, width=64)
    | st.text(max_size=12)
)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def _client_tool(draw: st.DrawFn, *, min_args: int = 0) -> Block:
    args = draw(st.dictionaries(st.text(max_size=8), _json_values, min_size=min_args, max_size=4))
    ensure_ascii = draw(st.booleans())
    text = "" if not args and draw(st.booleans()) else json.dumps(args, ensure_ascii=ensure_ascii)
    return Block(
        "tool_use",
        {"id": draw(_ids), "name": draw(_call_names), "input": {}},
        stream_text=text,
    )


#: Each server tool's result block type (realism ``sdk``: the API answers a tool with
#: its own result type; from anthropic's ``ServerToolUseBlock.name`` and result blocks).
SERVER_RESULT_OF: dict[str, tuple[str, ...]] = {
    "web_search": ("web_search_tool_result",),
    "web_fetch": ("web_fetch_tool_result",),
    "code_execution": ("code_execution_tool_result", "bash_code_execution_tool_result",
                       "text_editor_code_execution_tool_result"),
    "tool_search_tool_regex": ("tool_search_tool_result",),
}


def _error(kind: str, code: str = "unavailable") -> dict[str, Any]:
    return {"type": kind, "error_code": code}


_code_outputs = st.fixed_dictionaries({"stdout": _text, "stderr": _text,
                                       "return_code": st.integers(0, 255)})
#: A server tool result's ``content`` as the anthropic types declare it (realism
#: ``wire`` and ``sdk``): the result, or the error object of its result type.
SERVER_RESULT_CONTENT: dict[str, st.SearchStrategy[Any]] = {
    "web_search_tool_result": st.one_of(
        st.lists(st.fixed_dictionaries(
            {"type": st.just("web_search_result"), "title": _text,
             "url": st.just("https://example.com/"), "encrypted_content": _text},
            optional={"page_age": st.none() | _text}), max_size=2),
        st.just(_error("web_search_tool_result_error"))),
    "web_fetch_tool_result": st.sampled_from(
        ["url_not_accessible", "unavailable", "url_not_allowed"]).map(
        lambda code: _error("web_fetch_tool_result_error", code)),
    "code_execution_tool_result": st.one_of(
        _code_outputs.map(lambda o: {"type": "code_execution_result", "content": [], **o}),
        st.just(_error("code_execution_tool_result_error"))),
    "bash_code_execution_tool_result": st.one_of(
        _code_outputs.map(lambda o: {"type": "bash_code_execution_result", "content": [], **o}),
        st.just(_error("bash_code_execution_tool_result_error"))),
    "text_editor_code_execution_tool_result": st.just(
        _error("text_editor_code_execution_tool_result_error")),
    "tool_search_tool_result": st.one_of(
        st.just({"type": "tool_search_tool_search_result", "tool_references": []}),
        st.just(_error("tool_search_tool_result_error"))),
}


@st.composite
def _server_pair(draw: st.DrawFn, realism: str = "hostile") -> tuple[Block, Block]:
    tool_id = draw(_ids)
    args = draw(st.dictionaries(st.sampled_from(["query", "url", "code"]), _text, max_size=2))
    name = draw(st.sampled_from(SERVER_TOOL_NAMES))
    use = Block(
        "server_tool_use",
        {"id": tool_id, "name": name, "input": {}},
        stream_text=json.dumps(args) if args else "",
    )
    kind = draw(st.sampled_from(SERVER_RESULT_OF[name] if realism == "sdk"
                                else SERVER_RESULT_TYPES))
    content = (draw(st.lists(_json_values, max_size=2)) if realism == "hostile"
               else draw(SERVER_RESULT_CONTENT[kind]))
    result = Block(kind, {"tool_use_id": tool_id, "content": content})
    return use, result


@st.composite
def _blocks(draw: st.DrawFn, *, require_client: bool = False, realism: str = "hostile",
            ) -> list[Block]:
    kinds = draw(
        st.lists(
            st.sampled_from(["text", "thinking", "redacted", "server", "client", "client"]),
            max_size=6,
        )
    )
    if require_client and "client" not in kinds:
        kinds.insert(draw(st.integers(0, len(kinds))), "client")
    out: list[Block] = []
    for kind in kinds:
        if kind == "text":
            out.append(Block("text", {"text": ""}, stream_text=draw(_text)))
        elif kind == "thinking":
            out.append(
                Block(
                    "thinking",
                    {"thinking": "", "signature": draw(st.text(min_size=1, max_size=16))},
                    stream_text=draw(_text),
                )
            )
        elif kind == "redacted":
            out.append(Block("redacted_thinking", {"data": draw(st.text(min_size=1, max_size=16))}))
        elif kind == "server":
            out.extend(draw(_server_pair(realism)))
        else:
            out.append(draw(_client_tool()))
    # Ids are unique within a message.
    seen: set[str] = set()
    unique: list[Block] = []
    for block in out:
        ident = block.fields.get("id")
        if ident is not None:
            if ident in seen:
                suffix = 0
                while f"{ident}#{suffix}" in seen:
                    suffix += 1
                ident = f"{ident}#{suffix}"
                block = replace(block, fields={**block.fields, "id": ident})
            seen.add(ident)
        unique.append(block)
    # Server results must point at their own (possibly renamed) server_tool_use.
    fixed: list[Block] = []
    last_server: str | None = None
    for block in unique:
        if block.kind == "server_tool_use":
            last_server = block.fields["id"]
        elif block.kind in SERVER_RESULT_TYPES and last_server is not None:
            block = replace(block, fields={**block.fields, "tool_use_id": last_server})
        fixed.append(block)
    return fixed


@st.composite
def turn_models(
    draw: st.DrawFn, *, stop_reason: str | None = None, require_client: bool = False,
    revision: str = PINNED_REVISION, realism: str = "hostile",
) -> TurnModel:
    """A valid turn of ``revision``; ``stop_reason`` pins the terminal (default: drawn
    from the revision's stop reasons). ``realism`` (:mod:`.realism`): ``hostile`` draws
    a server tool result's ``content`` as arbitrary JSON (opaque to the contract);
    ``wire`` as the anthropic types declare it; ``sdk`` also answers each server tool
    with its own result type and puts pings only after ``message_start``."""
    check_level(realism)
    blocks = draw(_blocks(require_client=require_client, realism=realism))
    if stop_reason is None:
        has_client = any(b.kind == "tool_use" for b in blocks)
        stop_reason = draw(
            st.sampled_from(["tool_use"] if has_client else ["end_turn"])
            | st.sampled_from(STOP_REASONS[revision])
        )
    start = draw(st.integers(0, 50))
    return TurnModel(
        message_id=draw(_ids),
        model=draw(st.sampled_from(["fixture-model", "model-x"])),
        blocks=tuple(blocks),
        stop_reason=stop_reason,
        input_tokens=draw(st.integers(0, 10_000)),
        output_start=start,
        output_end=start + draw(st.integers(0, 500)),
        revision=revision,
        realism=realism,
    )


def split_text(draw: st.DrawFn, text: str) -> list[str]:
    """Split ``text`` at arbitrary positions; empty fragments are allowed."""
    if not text:
        return [""] * draw(st.integers(0, 2))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=6)))
    parts: list[str] = []
    prev = 0
    for cut in cuts:
        parts.append(text[prev:cut])
        prev = cut
    parts.append(text[prev:])
    return parts


def _ev(name: str, **data: Any) -> dict[str, Any]:
    return {"event": name, "data": {"type": name, **data}}


def render(draw: st.DrawFn, turn: TurnModel, *, pings: bool = True) -> list[dict[str, Any]]:
    """Render a turn model into a valid envelope list (inside a composite)."""
    events = [
        _ev(
            "message_start",
            message={
                "id": turn.message_id,
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": turn.model,
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": turn.input_tokens, "output_tokens": turn.output_start},
            },
        )
    ]
    for index, block in enumerate(turn.blocks):
        events.append(
            _ev("content_block_start", index=index, content_block={"type": block.kind, **block.fields})
        )
        if block.kind == "text":
            for part in split_text(draw, block.stream_text):
                events.append(
                    _ev("content_block_delta", index=index, delta={"type": "text_delta", "text": part})
                )
        elif block.kind == "thinking":
            signature = block.fields["signature"]
            events[-1]["data"]["content_block"]["signature"] = ""
            for part in split_text(draw, block.stream_text):
                events.append(
                    _ev(
                        "content_block_delta",
                        index=index,
                        delta={"type": "thinking_delta", "thinking": part},
                    )
                )
            events.append(
                _ev(
                    "content_block_delta",
                    index=index,
                    delta={"type": "signature_delta", "signature": signature},
                )
            )
        elif block.kind in ("tool_use", "server_tool_use"):
            text = block.stream_text
            if block.eager_truncate:
                text = text[: max(0, len(text) - block.eager_truncate)]
            for part in split_text(draw, text):
                events.append(
                    _ev(
                        "content_block_delta",
                        index=index,
                        delta={"type": "input_json_delta", "partial_json": part},
                    )
                )
        events.append(_ev("content_block_stop", index=index))
    events.append(
        _ev(
            "message_delta",
            delta={"stop_reason": turn.stop_reason, "stop_sequence": None},
            usage={"output_tokens": turn.output_end},
        )
    )
    events.append(_ev("message_stop"))
    if pings:
        for _ in range(draw(st.integers(0, 3))):
            at = draw(st.integers(1 if turn.realism == "sdk" else 0, len(events)))
            events.insert(at, _ev("ping"))
    return events


@st.composite
def valid_streams(
    draw: st.DrawFn, *, stop_reason: str | None = None, require_client: bool = False,
    revision: str = PINNED_REVISION, realism: str = "hostile",
) -> tuple[TurnModel, list[dict[str, Any]]]:
    """A valid turn model of ``revision`` and ``realism`` and its rendering."""
    turn = draw(turn_models(stop_reason=stop_reason, require_client=require_client,
                            revision=revision, realism=realism))
    return turn, render(draw, turn)


def expected_client_ids(turn: TurnModel) -> list[str]:
    """Ids of the client ``tool_use`` blocks, in block order."""
    return [b.fields["id"] for b in turn.blocks if b.kind == "tool_use"]


def _first(events: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(e for e in events if e["event"] == name)


def _index_of(events: list[dict[str, Any]], name: str) -> list[int]:
    return [i for i, e in enumerate(events) if e["event"] == name]


MUTATIONS = (
    "envelope_drift",
    "block_overlap",
    "reused_index",
    "dropped_stop",
    "truncation",
    "eager_invalid_json",
    "invalid_json_without_eager",
    "stop_reason_swap",
    "fallback_block",
    "unknown_block",
    "usage_regression",
    "delta_mismatch",
    "delta_for_closed_block",
    "error_event",
    "stop_reason_changed",
    "max_tokens_cuts_last_input",
    "non_direct_caller",
    "null_required_usage",
    "server_result_claims_client_id",
    "shared_call_id",
    "missing_call_id",
    "empty_call_id",
    "missing_name",
    "empty_name",
    "missing_arguments",
    "conflicting_arguments",
    "non_object_arguments",
    "non_finite_arguments",
    "duplicate_key_arguments",
    "non_strict_arguments",
    "event_after_terminal",
    "replay",
    "swap",
    "drop",
    "skipped_index",
)

#: What each mutation means for any parser (the conformance kit's labels, next to
#: the mutations so that a new one cannot be added unlabelled; a test checks both
#: lists agree): ``(label, family)``. ``safety``: the stream is not a complete,
#: unambiguous tool-use turn, so releasing any call is a violation. ``strictness``:
#: this project's own fail-closed policy (unknown shapes, usage, envelope drift).
MUTATION_LABELS: dict[str, tuple[str, str]] = {
    "envelope_drift": ("strictness", "drift"),
    "block_overlap": ("safety", "overlap"),
    "reused_index": ("safety", "reused_index"),
    "dropped_stop": ("safety", "overlap"),
    "truncation": ("safety", "truncation"),
    "eager_invalid_json": ("safety", "arguments"),
    "invalid_json_without_eager": ("safety", "arguments"),
    "stop_reason_swap": ("safety", "terminal"),
    "fallback_block": ("strictness", "unknown"),
    "unknown_block": ("strictness", "unknown"),
    "usage_regression": ("strictness", "usage"),
    "delta_mismatch": ("strictness", "drift"),
    "delta_for_closed_block": ("strictness", "drift"),
    "error_event": ("safety", "terminal"),
    "stop_reason_changed": ("safety", "terminal"),
    "max_tokens_cuts_last_input": ("safety", "terminal"),
    "non_direct_caller": ("strictness", "unknown"),
    "null_required_usage": ("strictness", "usage"),
    "server_result_claims_client_id": ("safety", "id_confusion"),
    **call_mutation_labels(without=frozenset({"invalid_json_arguments"})),
    "event_after_terminal": ("safety", "terminal"),
    "replay": ("safety", "replay"),
    "swap": ("safety", "reorder"),
    # A structural event lost (message_start, a block's start, the message_delta), or
    # a block index that skips one (a whole block, maybe a tool_use, never arrived).
    "drop": ("safety", "lifecycle"),
    "skipped_index": ("safety", "lifecycle"),
}

#: Mutations of one client call (its block's fields or input text).
_CALL_MUTATIONS = frozenset(call_mutation_labels(without=frozenset({"invalid_json_arguments"})))
#: The events that carry the message's structure (not its content): a replay, a drop
#: or a swap of one of them is what the state table rejects.
_STRUCTURAL = ("message_start", "content_block_start", "content_block_stop", "message_delta",
               "message_stop")


@st.composite
def mutated_streams(
    draw: st.DrawFn, mutation: str | None = None, *, tool_turn: bool = False,
    revision: str = PINNED_REVISION, realism: str = "hostile",
) -> Mutated:
    """A valid stream of ``revision`` with one mutation applied, and the required outcome.
    ``realism``: the level of the turn the mutation is drawn on (:func:`turn_models`).

    ``tool_turn``: mutate only turns that would release calls unmutated (at least
    one client call, ``stop_reason`` ``tool_use``) wherever the mutation leaves the
    terminal alone; the conformance kit uses it so that every example can catch a
    parser that releases what it should not.
    """
    name = mutation or draw(st.sampled_from(MUTATIONS))

    def turns(stop_reason: str | None = None) -> st.SearchStrategy[TurnModel]:
        if not tool_turn:
            return turn_models(stop_reason=stop_reason, revision=revision, realism=realism)
        return turn_models(stop_reason=stop_reason or "tool_use", require_client=True,
                           revision=revision, realism=realism)

    if name in ("eager_invalid_json", "invalid_json_without_eager", "max_tokens_cuts_last_input"):
        # Incomplete client input. Eager streaming excuses it anywhere (recovery);
        # without eager only a max_tokens cut of the LAST block is excused
        # (the tool-use page: max_tokens may cut a tool_use input); else a StrictJSONError.
        # The "Stop reasons" page: model_context_window_exceeded is a truncation too.
        stop = (
            draw(st.sampled_from(["max_tokens", "model_context_window_exceeded"]))
            if name == "max_tokens_cuts_last_input"
            else draw(st.sampled_from(["max_tokens", "tool_use", "end_turn"]))
        )
        turn = draw(turns(stop))
        extra = draw(_client_tool(min_args=1))
        blocks = list(turn.blocks)
        position = (
            len(blocks) if name == "max_tokens_cuts_last_input" else draw(st.integers(0, len(blocks)))
        )
        ids = {b.fields.get("id") for b in blocks}
        new_id = extra.fields["id"]
        while new_id in ids:
            new_id += "#x"
        extra = replace(extra, fields={**extra.fields, "id": new_id})
        # Dropping the closing brace leaves incomplete JSON (an object needs it).
        blocks.insert(position, replace(extra, eager_truncate=draw(st.integers(1, 2))))
        if name == "invalid_json_without_eager" and stop == "max_tokens" and position == len(blocks) - 1:
            blocks.append(Block("text", {"text": ""}, stream_text="after the cut"))
        turn = replace(turn, blocks=tuple(blocks))
        events = render(draw, turn)
        if name == "eager_invalid_json":
            return Mutated(name, events, "recovery", eager=True)
        if name == "max_tokens_cuts_last_input":
            return Mutated(name, events, "recovery")
        return Mutated(name, events, "StrictJSONError")
    if name == "fallback_block" or name == "unknown_block":
        turn = draw(turns())
        blocks = list(turn.blocks)
        if name == "fallback_block":
            inserted = Block(
                "fallback", {"from": {"model": "model-a"}, "to": {"model": "model-b"}}
            )
        else:
            inserted = Block(draw(st.sampled_from(["mcp_tool_use", "compaction", "future_block"])))
        blocks.insert(draw(st.integers(0, len(blocks))), inserted)
        events = render(draw, replace(turn, blocks=tuple(blocks)))
        return Mutated(name, events, "UnsupportedProviderState")
    if name == "stop_reason_swap":
        reason = draw(
            st.sampled_from([r for r in STOP_REASONS[revision] if r != "tool_use"])
            | st.from_regex(r"[a-z_]{3,20}", fullmatch=True).filter(lambda r: r != "tool_use")
        )
        turn = draw(turns(reason))
        return Mutated(name, render(draw, turn), "no_calls")
    if name == "usage_regression":
        turn = draw(turns())
        turn = replace(turn, output_start=turn.output_end + draw(st.integers(1, 50)))
        return Mutated(name, render(draw, turn), "ProtocolViolation")

    if name == "non_direct_caller":
        # A client tool_use called from code execution (programmatic tool calling).
        turn = draw(turns())
        if not any(b.kind == "tool_use" for b in turn.blocks):
            ids = {b.fields.get("id") for b in turn.blocks}
            call_id = "direct-or-not"
            while call_id in ids:
                call_id += "#x"
            client = Block("tool_use", {"id": call_id, "name": draw(_call_names), "input": {}},
                           stream_text="{}")
            turn = replace(turn, blocks=(*turn.blocks, client))
        events = render(draw, turn)
        start_events = [
            e for e in events
            if e["event"] == "content_block_start" and e["data"]["content_block"]["type"] == "tool_use"
        ]
        target = draw(st.sampled_from(start_events))
        target["data"]["content_block"]["caller"] = draw(
            st.sampled_from(
                [
                    {"type": "code_execution_20250825", "tool_id": "srv"},
                    {"type": "code_execution_20260120", "tool_id": "srv"},
                    {"type": "future_caller"},
                ]
            )
        )
        return Mutated(name, events, "UnsupportedProviderState")
    if name == "server_result_claims_client_id":
        # Only the host answers a client call: a server result naming one conflicts.
        turn = draw(turn_models(stop_reason="tool_use" if tool_turn else None,
                                require_client=True, revision=revision, realism=realism))
        blocks = list(turn.blocks)
        client_id = draw(st.sampled_from([b.fields["id"] for b in blocks if b.kind == "tool_use"]))
        forged = Block(
            draw(st.sampled_from(SERVER_RESULT_TYPES)), {"tool_use_id": client_id, "content": []}
        )
        blocks.insert(draw(st.integers(0, len(blocks))), forged)
        return Mutated(name, render(draw, replace(turn, blocks=tuple(blocks))), "ProtocolViolation")
    if name == "null_required_usage":
        turn = draw(turns())
        events = render(draw, turn)
        where = draw(st.sampled_from(["start_input", "start_output", "delta_output"]))
        if where == "delta_output":
            _first(events, "message_delta")["data"]["usage"]["output_tokens"] = None
        else:
            usage = _first(events, "message_start")["data"]["message"]["usage"]
            usage["input_tokens" if where == "start_input" else "output_tokens"] = None
        return Mutated(name, events, "ProtocolViolation")

    if name in _CALL_MUTATIONS:
        return _call_mutation(draw, name, revision, realism)

    turn = draw(turns())
    if name in ("block_overlap", "reused_index", "dropped_stop", "delta_mismatch",
                "delta_for_closed_block", "swap", "drop", "skipped_index"):
        if not turn.blocks:
            turn = replace(turn, blocks=(Block("text", {"text": ""}, stream_text="x"),))
    events = render(draw, turn, pings=False)

    if name == "envelope_drift":
        at = draw(st.integers(0, len(events) - 1))
        event = events[at]
        other = draw(
            st.sampled_from(
                [
                    n
                    for n in (
                        "message_start",
                        "content_block_start",
                        "content_block_delta",
                        "content_block_stop",
                        "message_delta",
                        "message_stop",
                        "ping",
                    )
                    if n != event["event"]
                ]
            )
        )
        if draw(st.booleans()):
            event["event"] = other
        else:
            event["data"]["type"] = other
        return Mutated(name, events, "ProtocolViolation")
    if name == "event_after_terminal":
        # Nothing but ping and error may follow message_stop.
        late = draw(st.sampled_from([
            _ev("content_block_start", index=len(turn.blocks),
                content_block={"type": "text", "text": ""}),
            _ev("message_delta", delta={"stop_reason": "tool_use", "stop_sequence": None},
                usage={"output_tokens": turn.output_end}),
            _ev("content_block_delta", index=max(0, len(turn.blocks) - 1),
                delta={"type": "text_delta", "text": "late"}),
            _ev("message_stop"),
        ]))
        events.append(late)
        return Mutated(name, events, "ProtocolViolation")
    if name == "replay":
        # A structural event delivered again later (the message_delta is exempt: a
        # repeated one changes nothing, a changed one is stop_reason_changed). Content
        # deltas are not replayed here: without sequence numbers a repeated fragment
        # is undetectable (it is simply more text).
        candidates = [i for i, e in enumerate(events)
                      if e["event"] in _STRUCTURAL and e["event"] != "message_delta"]
        at = draw(st.sampled_from(candidates))
        later = draw(st.integers(at + 1, len(events)))
        events.insert(later, json.loads(json.dumps(events[at])))
        return Mutated(name, events, "ProtocolViolation")
    if name == "swap":
        # Two events change places; at least one is structural, and never two content
        # deltas of one block (a reordered fragment is undetectable: other text).
        pairs = [(i, j) for i in range(len(events)) for j in range(i + 1, len(events))
                 if _swap_detectable(events[i], events[j])]
        i, j = draw(st.sampled_from(pairs))
        events[i], events[j] = events[j], events[i]
        return Mutated(name, events, "ProtocolViolation")
    if name == "drop":
        # A structural event lost (content_block_stop is dropped_stop, message_stop is
        # a truncation): no message_start, a block's start, or the message_delta.
        candidates = [i for i, e in enumerate(events)
                      if e["event"] in ("message_start", "content_block_start",
                                        "message_delta")]
        del events[draw(st.sampled_from(candidates))]
        return Mutated(name, events, "ProtocolViolation")
    if name == "skipped_index":
        # Blocks from k on are renumbered one higher: block k never arrived.
        k = draw(st.integers(0, len(turn.blocks) - 1))
        for e in events:
            if e["event"].startswith("content_block_") and e["data"]["index"] >= k:
                e["data"]["index"] += 1
        return Mutated(name, events, "ProtocolViolation")
    if name == "truncation":
        stop_at = _index_of(events, "message_stop")[0]
        # One draw in four cuts exactly message_stop off: the stream has said
        # stop_reason tool_use and every block is complete, the cut an accumulator
        # without a terminal gate releases from (uniform cuts reach it once in
        # several hundred examples: hypothesis favours small integers). The flag
        # shrinks to the uniform cut, so a minimal stream stays the shortest one.
        cut = stop_at if draw(st.integers(0, 3)) == 3 else draw(st.integers(0, stop_at))
        return Mutated(name, events[:cut], "StreamTruncated")
    if name == "error_event":
        at = draw(st.integers(0, len(events)))
        events.insert(
            at,
            _ev("error", error={"type": "overloaded_error", "message": "Overloaded"}),
        )
        return Mutated(name, events, "ProviderError")
    if name == "stop_reason_changed":
        delta = _index_of(events, "message_delta")[0]
        first = events[delta]["data"]["delta"]["stop_reason"]
        other = "end_turn" if first != "end_turn" else "tool_use"
        second = _ev(
            "message_delta",
            delta={"stop_reason": other, "stop_sequence": None},
            usage={"output_tokens": turn.output_end},
        )
        events.insert(delta + 1, second)
        return Mutated(name, events, "ProtocolViolation")

    starts = _index_of(events, "content_block_start")
    stops = _index_of(events, "content_block_stop")
    k = draw(st.integers(0, len(starts) - 1))
    index = events[starts[k]]["data"]["index"]
    if name == "block_overlap":
        # A second block starts (same or next index) while block k is still open.
        new_index = draw(st.sampled_from([index, index + 1]))
        events.insert(
            starts[k] + 1,
            _ev("content_block_start", index=new_index, content_block={"type": "text", "text": ""}),
        )
        return Mutated(name, events, "ProtocolViolation")
    if name == "reused_index":
        at = stops[k] + 1
        events.insert(
            at, _ev("content_block_start", index=index, content_block={"type": "text", "text": ""})
        )
        events.insert(at + 1, _ev("content_block_stop", index=index))
        return Mutated(name, events, "ProtocolViolation")
    if name == "dropped_stop":
        del events[stops[k]]
        if k == len(starts) - 1:
            # The last block left open when a truncating message_delta arrives is the
            # seed's cut-open block (closed by the truncation; a tool_use one becomes
            # a recovery call, never executed): not this mutation. Found by the nightly
            # property run. A non-truncating stop reason keeps the open block an error.
            delta = _first(events, "message_delta")["data"]["delta"]
            if delta["stop_reason"] in ("max_tokens", "model_context_window_exceeded"):
                delta["stop_reason"] = draw(st.sampled_from(["end_turn", "tool_use"]))
                hypothesis.event("dropped_stop: truncating stop reason replaced")
        return Mutated(name, events, "ProtocolViolation")
    if name == "delta_mismatch":
        kind = turn.blocks[k].kind
        wrong = {
            "text": {"type": "input_json_delta", "partial_json": "{}"},
            "thinking": {"type": "text_delta", "text": "x"},
            "tool_use": {"type": "text_delta", "text": "x"},
            "server_tool_use": {"type": "thinking_delta", "thinking": "x"},
        }.get(kind, {"type": "text_delta", "text": "x"})
        events.insert(starts[k] + 1, _ev("content_block_delta", index=index, delta=wrong))
        return Mutated(name, events, "ProtocolViolation")
    if name == "delta_for_closed_block":
        events.insert(
            stops[k] + 1,
            _ev("content_block_delta", index=index, delta={"type": "text_delta", "text": "late"}),
        )
        return Mutated(name, events, "ProtocolViolation")
    raise ValueError(f"unknown mutation {name!r}")


def _swap_detectable(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether swapping ``a`` (earlier) and ``b`` breaks the event flow for certain:
    a structural event is involved, neither is a ping, and they are not two deltas of
    one block (or two message_deltas, which are equal)."""
    if "ping" in (a["event"], b["event"]) or a["event"] == b["event"] == "message_delta":
        return False
    if a["event"] not in _STRUCTURAL and b["event"] not in _STRUCTURAL:
        return bool(a["data"].get("index") != b["data"].get("index"))
    return True


def _call_mutation(draw: st.DrawFn, name: str, revision: str, realism: str = "hostile",
                   ) -> Mutated:
    """One client ``tool_use`` of a tool turn changed (its id, name or input): the
    turn would release it unchanged; with the change nothing may run."""
    turn = draw(turn_models(stop_reason="tool_use", require_client=True, revision=revision,
                            realism=realism))
    blocks = list(turn.blocks)
    clients = [i for i, b in enumerate(blocks) if b.kind == "tool_use"]
    if name == "shared_call_id" and len(clients) < 2:
        extra = draw(_client_tool())
        ids = {b.fields.get("id") for b in blocks}
        new_id = extra.fields["id"]
        while new_id in ids:
            new_id += "#x"
        blocks.insert(draw(st.integers(0, len(blocks))),
                      replace(extra, fields={**extra.fields, "id": new_id}))
        clients = [i for i, b in enumerate(blocks) if b.kind == "tool_use"]
    at, *others = draw(st.permutations(clients))
    block = blocks[at]
    fields = dict(block.fields)
    text = block.stream_text
    expect = "ProtocolViolation"
    if name == "shared_call_id":
        fields["id"] = blocks[others[0]].fields["id"]
    elif name in ("missing_call_id", "missing_name", "missing_arguments"):
        del fields[{"missing_call_id": "id", "missing_name": "name",
                    "missing_arguments": "input"}[name]]
    elif name in ("empty_call_id", "empty_name"):
        fields["id" if name == "empty_call_id" else "name"] = ""
    elif name == "conflicting_arguments":
        # A non-empty start input and input fragments: which one is the call's?
        arguments = json.loads(text) if text else {}
        fields["input"] = {**arguments, "x_start": draw(st.integers(0, 9))}
        if not text:
            text = json.dumps(arguments)
    elif name == "non_object_arguments" and draw(st.booleans()):
        fields["input"] = json.loads(draw(st.sampled_from(["[]", "null", '"x"', "1"])))
        text = ""
        hypothesis.event("non_object_arguments: the start input")
    else:
        base = json.loads(text) if text else {}
        bad = draw(bad_arguments(name.removesuffix("_arguments"), base))
        text = bad.text
        expect = bad.strict_error or "ProtocolViolation"
    blocks[at] = replace(block, fields=fields, stream_text=text)
    events = render(draw, replace(turn, blocks=tuple(blocks)))
    return Mutated(name, events, expect)


# --------------------------------------------------------------------------- schema-driven drift
#
# Built on hypothesis-jsonschema (``from_schema``) over the pinned draft-07 event
# schemas in fixtures/schemas/anthropic_messages/. The schemas, not the parser,
# say which keys are known at each level; everything else is drift.

#: Where each pinned event may carry unknown optional fields (paths into the
#: envelope). The empty path is the envelope itself, which is closed.
DRIFT_POINTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "message_start": (("data",), ("data", "message"), ("data", "message", "usage")),
    "content_block_start": (("data",), ("data", "content_block")),
    "content_block_delta": (("data",), ("data", "delta")),
    "content_block_stop": (("data",),),
    "message_delta": (("data",), ("data", "delta"), ("data", "usage")),
    "message_stop": (("data",),),
    "ping": (("data",),),
}

_DRIFT_SCALAR: dict[str, Any] = {
    "type": ["null", "boolean", "string", "integer", "number"],
    "minimum": -(2**53),
    "maximum": 2**53,
    "maxLength": 12,
}
_DRIFT_VALUE: dict[str, Any] = {
    "anyOf": [
        _DRIFT_SCALAR,
        {"type": "array", "items": _DRIFT_SCALAR, "maxItems": 3},
        {"type": "object", "additionalProperties": _DRIFT_SCALAR, "maxProperties": 3},
    ]
}


def known_keys(schema: dict[str, Any], path: tuple[str, ...]) -> frozenset[str]:
    """Keys a pinned event schema names at ``path`` (union over ``oneOf`` branches)."""
    nodes = [schema]
    for key in path:
        nodes = [
            branch["properties"][key]
            for node in nodes
            for branch in node.get("oneOf", [node])
            if key in branch.get("properties", {})
        ]
    return frozenset(
        key for node in nodes for branch in node.get("oneOf", [node]) for key in branch.get("properties", {})
    )


def drift_schema(schema: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """A draft-07 schema of 1-3 fields the pinned ``schema`` does not name at ``path``."""
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "minProperties": 1,
        "maxProperties": 3,
        "propertyNames": {"not": {"enum": sorted(known_keys(schema, path))}},
        "additionalProperties": _DRIFT_VALUE,
    }


def drift_strategies(
    schemas: dict[str, dict[str, Any]],
) -> dict[tuple[str, tuple[str, ...]], st.SearchStrategy[dict[str, Any]]]:
    """``from_schema`` strategies of unknown fields for every drift point and the envelope.

    Keyed by ``(event name, path)``; build once (hypothesis-jsonschema
    canonicalizes each schema) and reuse.
    """
    from hypothesis_jsonschema import from_schema

    out: dict[tuple[str, tuple[str, ...]], st.SearchStrategy[dict[str, Any]]] = {}
    for name, points in DRIFT_POINTS.items():
        for path in ((), *points):
            out[(name, path)] = cast(
                "st.SearchStrategy[dict[str, Any]]",
                from_schema(drift_schema(schemas[name], path)))
    return out


def pinned_event_strategy(schemas: dict[str, dict[str, Any]]) -> st.SearchStrategy[Any]:
    """Arbitrary instances of the pinned envelope schemas (``from_schema``), any event."""
    from hypothesis_jsonschema import from_schema

    return st.one_of([from_schema(schemas[name]) for name in sorted(schemas)])
