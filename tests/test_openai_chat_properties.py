"""Properties and a rule-based state machine for the Chat Completions aggregator.

The strategies model the protocol on their own (``strategies.openai_chat``); these
tests compare that model with the parser: valid renderings aggregate to the
model's message with the model's progress count, every mutation is rejected with
its class, schema-valid chunks never crash, arbitrary JSON only raises
``ContractError``, and the state machine checks the invariants after every step.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from _fuzz import load_fuzz_target
from _revisions import PINNED, each_revision, machines_per_revision, revision_settings
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from hypothesis_jsonschema import from_schema
from jsonschema import Draft7Validator

from pcfuzz.contracts.errors import (
    ContractError,
    ProtocolViolation,
    ProviderError,
    StreamTruncated,
    UnsupportedProviderState,
)
from pcfuzz.contracts.openai_chat import (
    REVISIONS,
    ChatCompletionStream,
    EmptyCompletion,
    parse_completion,
    parse_events,
)
from pcfuzz.contracts.openai_chat_cache import decode, encode
from pcfuzz.strategies.openai_chat import (
    DONE,
    CompletionModel,
    RenderedStream,
    completion_models,
    mutated_streams,
    rendered_streams,
)
from pcfuzz.strategies.openai_chat import REVISIONS as GEN_REVISIONS
from pcfuzz.strategies.revision_schemas import load_schemas

SCHEMAS = Path(__file__).resolve().parent.parent / "fixtures" / "schemas" / "openai_chat"
CHUNK_SCHEMA = json.loads((SCHEMAS / "chunk.json").read_text())
COMPLETION_SCHEMA = json.loads((SCHEMAS / "completion.json").read_text())
CHUNK_VALIDATOR = Draft7Validator(CHUNK_SCHEMA)
#: Each revision's chunk schema (fixtures/schemas/openai_chat/[<revision>/]chunk.json).
CHUNK_VALIDATORS = {revision: Draft7Validator(load_schemas("openai-chat", revision)["chunk"])
                    for revision in GEN_REVISIONS}
COMPLETION_VALIDATOR = Draft7Validator(COMPLETION_SCHEMA)


def _label(rendered: RenderedStream) -> None:
    model = rendered.model
    event(f"tools={min(len(model.tools), 3)}")
    event(f"finish_reason={model.finish_reason}")
    event(f"executable={model.executable}")
    event("content=" + ("absent" if model.content.__class__.__name__ == "_Absent"
                        else "null" if model.content is None else "text"))
    if any(isinstance(f, dict) and len(f.get("choices", [{}])[0].get("delta", {})) > 1
           for f in rendered.frames if isinstance(f, dict) and f.get("choices")):
        event("frame mixes delta fields")


def test_the_generator_renders_every_shipped_revision() -> None:
    assert sorted(GEN_REVISIONS) == sorted(REVISIONS)
    assert GEN_REVISIONS[0] == PINNED


@pytest.mark.parametrize("revision", GEN_REVISIONS)
def test_valid_streams_aggregate_to_the_model_message(revision: str) -> None:
    @revision_settings(revision)
    @given(rendered_streams(revision=revision))
    def check(rendered: RenderedStream) -> None:
        _label(rendered)
        turn = parse_events(rendered.frames, revision=revision)
        model = rendered.model
        assert turn.revision == revision
        assert turn.message == model.message()
        assert turn.finish_reason == model.finish_reason
        assert turn.response_id == model.response_id
        assert turn.usage == model.usage
        assert [e.frame_index for e in turn.progress_events] == rendered.progress_frames
        assert bool(turn.calls) == model.executable
        tools = model.message().get("tool_calls", [])
        if model.executable:
            assert [c.call_id for c in turn.calls] == [t["id"] for t in tools]
            assert [c.arguments for c in turn.calls] == [
                json.loads(t["function"]["arguments"]) for t in tools]
            assert turn.recovery_calls == ()
        else:
            assert [c.call_id for c in turn.recovery_calls] == [t["id"] for t in tools]
        turn.check_unchanged()

    check()


@given(rendered_streams(revision="2026-12-01"))
def test_todays_null_audio_is_unknown_to_the_pinned_revision(rendered: RenderedStream) -> None:
    has_audio = any(isinstance(f, dict) and f.get("choices")
                    and "audio" in f["choices"][0]["delta"] for f in rendered.frames)
    event(f"audio present={has_audio}")
    if not has_audio:
        assert parse_events(rendered.frames, revision=PINNED).message == rendered.model.message()
        return
    with pytest.raises(ProtocolViolation, match="drift: contract revision 2026-12-01"):
        parse_events(rendered.frames, revision=PINNED)


def _progress_labels(rendered: RenderedStream) -> set[str]:
    """Which kinds of progressing and non-progressing frames the stream holds."""
    labels = set()
    for index, frame in enumerate(rendered.frames):
        if frame == DONE:
            continue
        progressing = index in rendered.progress_frames
        if not frame["choices"]:
            labels.add("no progress: usage-only")
            continue
        choice = frame["choices"][0]
        delta = {k: v for k, v in choice["delta"].items() if k != "refusal"}
        if progressing:
            channels = {k for k in ("content", "reasoning_content") if delta.get(k)}
            channels |= {f"tool {t['index']}" for t in delta.get("tool_calls", [])}
            if len(channels) > 1:
                labels.add("progress: several fields or tools in one frame")
        elif not delta:
            labels.add("no progress: finish-only" if choice.get("finish_reason")
                       else "no progress: empty delta")
        elif set(delta) == {"role"}:
            labels.add("no progress: role-only")
        elif "tool_calls" in delta:
            labels.add("no progress: repeated identity or empty tool fragment")
        else:
            labels.add("no progress: empty or null text")
    return labels


def _observe_revision(rendered: RenderedStream, revision: str) -> None:
    """Show a revision's own delta fields are generated (2026-12-01: null ``audio``)."""
    fields = {k for f in rendered.frames if isinstance(f, dict)
              for c in f.get("choices") or [] for k in c.get("delta", {})}
    for name in sorted(fields & {"audio"}):
        event(f"{revision}: delta field {name}")


@each_revision
@given(st.data())
def test_incremental_feed_returns_exactly_the_model_progress(revision: str,
                                                             data: st.DataObject) -> None:
    rendered = data.draw(rendered_streams(revision=revision))
    _observe_revision(rendered, revision)
    stream = ChatCompletionStream(revision=revision)
    returned = [i for i, frame in enumerate(rendered.frames) if stream.feed(frame) is not None]
    event(f"progress frames={min(len(returned), 5)}")
    for label in sorted(_progress_labels(rendered)):
        event(label)
    assert returned == rendered.progress_frames
    assert len(stream.close().progress_events) == len(rendered.progress_frames)


@each_revision
@given(st.data())
def test_parsing_never_mutates_the_callers_frames_and_shares_nothing_with_them(
    revision: str, data: st.DataObject,
) -> None:
    rendered = data.draw(rendered_streams(product=None, revision=revision))
    _observe_revision(rendered, revision)
    frames = rendered.frames
    before = copy.deepcopy(frames)
    try:
        turn = parse_events(frames, revision=revision)
    except EmptyCompletion:
        event("empty completion")
        assert frames == before
        return
    assert frames == before
    event(f"usage={'object' if turn.usage is not None else 'none'}")
    # Mutating every caller frame afterwards changes nothing in the turn.
    for frame in frames:
        if isinstance(frame, dict):
            if isinstance(frame.get("usage"), dict):
                frame["usage"]["mutated"] = True
            for choice in frame["choices"]:
                for entry in choice["delta"].get("tool_calls") or []:
                    entry["id"] = "mutated"
    turn.check_unchanged()


@each_revision
@given(st.data())
def test_streams_without_product_are_empty_completions(revision: str,
                                                       data: st.DataObject) -> None:
    rendered = data.draw(rendered_streams(product=False, revision=revision))
    _observe_revision(rendered, revision)
    event("reasoning present" if "reasoning_content" in rendered.model.message()
          else "no reasoning")
    try:
        parse_events(rendered.frames, revision=revision)
    except EmptyCompletion:
        return
    raise AssertionError("an empty completion was accepted")


@each_revision
@given(st.data())
def test_every_mutation_is_rejected_with_its_error_class(
    revision: str, data: st.DataObject,
) -> None:
    kind, frames, expected = data.draw(mutated_streams(revision=revision))
    event(f"mutation={kind}")
    if kind == "unknown_delta_field" and any(
            isinstance(f, dict) and "audio" in (f.get("choices") or [{}])[0].get("delta", {})
            for f in frames):
        event(f"{revision}: audio is an unknown delta field")
    try:
        parse_events(frames, revision=revision)
    except ContractError as exc:
        note(f"{kind}: {exc}")
        assert isinstance(exc, expected), (kind, type(exc), expected)
        if expected is ProtocolViolation:
            assert not isinstance(exc, EmptyCompletion)
        return
    raise AssertionError(f"mutation {kind} was accepted")


@each_revision
@given(completion_models(), st.data())
def test_stream_and_nonstreaming_body_agree(revision: str, model: CompletionModel,
                                            data: st.DataObject) -> None:
    rendered = data.draw(rendered_streams(model, revision=revision))
    _observe_revision(rendered, revision)
    streamed = parse_events(rendered.frames, revision=revision)
    body = model.body()
    assert COMPLETION_VALIDATOR.is_valid(body)
    unary = parse_completion(body, revision=revision)
    event(f"executable={model.executable}")
    assert unary.message == streamed.message
    assert unary.calls == streamed.calls
    assert [r.call_id for r in unary.recovery_calls] == [
        r.call_id for r in streamed.recovery_calls]
    assert unary.digest == streamed.digest


@each_revision
@given(st.data())
def test_generated_chunks_validate_against_their_revisions_chunk_schema(
        revision: str, data: st.DataObject) -> None:
    rendered = data.draw(rendered_streams(product=None, revision=revision))
    _observe_revision(rendered, revision)
    chunks = rendered.chunk_frames()
    event(f"chunks={min(len(chunks), 10)}")
    for chunk in chunks:
        errors = list(CHUNK_VALIDATORS[revision].iter_errors(chunk))
        assert not errors, (revision, errors[0].message)


SHAPE_MUTATIONS = ("error_frame", "bool_choice_index", "bool_tool_index", "extra_choice",
                   "unknown_delta_field", "unknown_tool_delta_field", "wrong_role",
                   "non_object_frame", "tool_index_out_of_range", "wrong_field_type")


@each_revision
@given(st.data())
def test_the_revisions_chunk_schema_rejects_every_shape_mutation(
        revision: str, data: st.DataObject) -> None:
    # The schema is checked from both sides by the model: generated chunks validate
    # (above) and every shape mutation produces a chunk the schema rejects (here);
    # schema-drawn chunks drive the drift properties below.
    kind, frames, _ = data.draw(mutated_streams(kinds=SHAPE_MUTATIONS, revision=revision))
    event(f"mutation={kind}")
    chunks = [f for f in frames if f != DONE]
    assert any(not CHUNK_VALIDATORS[revision].is_valid(f) for f in chunks), (revision, kind)


# ============================================ schema-driven drift (jsonschema)

# What the aggregator reads, as this test understands the contract (not imported
# from the parser): everything else at these two levels is metadata.
READ_CHUNK_KEYS = ("id", "choices", "usage")
READ_CHOICE_KEYS = ("index", "delta", "finish_reason")
KNOWN_DELTA_KEYS = ("role", "content", "reasoning_content", "tool_calls", "refusal",
                    "function_call")
#: Delta fields each revision knows beyond the pinned ones (openai 3.57.0: ``audio``).
LATER_DELTA_KEYS: dict[str, tuple[str, ...]] = {"2026-07-21": (), "2026-12-01": ("audio",)}
ROLE_FRAME = {"choices": [{"index": 0, "delta": {"role": "assistant"}}]}
DRIFT_HEALTH = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]


def _pinned_shape(frame: dict[str, Any], revision: str) -> dict[str, Any]:
    """``frame`` without the delta fields ``revision`` adds (for the pinned schema)."""
    frame = copy.deepcopy(frame)
    for choice in frame.get("choices") or []:
        for key in LATER_DELTA_KEYS[revision]:
            choice.get("delta", {}).pop(key, None)
    return frame


def _outcome(frames: list[Any], revision: str) -> tuple[Any, ...]:
    try:
        turn = parse_events(frames, revision=revision)
    except ContractError as exc:
        return ("rejected", type(exc).__name__)
    return ("accepted", turn.message, turn.finish_reason, turn.response_id, turn.usage,
            turn.calls, [r.call_id for r in turn.recovery_calls])


def _graft_chunk_metadata(frame: dict[str, Any], drawn: dict[str, Any]) -> list[str]:
    """Copy the metadata (unread fields) of a schema-drawn chunk onto ``frame``."""
    grafted = []
    for key, value in drawn.items():
        if key not in READ_CHUNK_KEYS:
            frame[key] = copy.deepcopy(value)
            grafted.append("top-level")
    if frame["choices"] and drawn["choices"]:
        for key, value in drawn["choices"][0].items():
            if key not in READ_CHOICE_KEYS:
                frame["choices"][0][key] = copy.deepcopy(value)
                grafted.append("choice")
    return grafted


@each_revision
@settings(suppress_health_check=DRIFT_HEALTH)
@given(from_schema(CHUNK_SCHEMA), st.data())
def test_schema_drawn_chunk_metadata_drift_never_changes_the_outcome(
    revision: str, drawn: dict[str, Any], data: st.DataObject
) -> None:
    # Unknown optional fields at the chunk and choice level (object, created,
    # model, logprobs, vendor keys: whatever the pinned schema leaves open) are
    # metadata: grafted onto any frame of a valid stream of any revision, they
    # change nothing.
    rendered = data.draw(rendered_streams(product=None, revision=revision))
    assert CHUNK_VALIDATOR.is_valid(drawn)
    frames = copy.deepcopy(rendered.frames)
    at = data.draw(st.sampled_from([i for i, f in enumerate(frames) if f != DONE]))
    grafted = _graft_chunk_metadata(frames[at], drawn)
    assert CHUNK_VALIDATOR.is_valid(_pinned_shape(frames[at], revision))
    unknown = set(drawn) - {*READ_CHUNK_KEYS, "object", "created", "model",
                            "system_fingerprint"}
    event("drift: unknown top-level field" if unknown else
          "drift: known metadata only" if "top-level" in grafted else "drift: none at top")
    event("drift: choice metadata" if "choice" in grafted else "drift: no choice metadata")
    expected = _outcome(rendered.frames, revision)
    event(f"outcome: {expected[0]}"
          + (f", executable={bool(expected[5])}" if expected[0] == "accepted" else ""))
    assert _outcome(frames, revision) == expected


@each_revision
@settings(suppress_health_check=DRIFT_HEALTH)
@given(from_schema(CHUNK_SCHEMA).filter(lambda c: bool(c["choices"])),
       st.text(min_size=1, max_size=12).filter(
           lambda k: k not in KNOWN_DELTA_KEYS and k != "audio") | st.just("audio"),
       st.none() | st.text(max_size=3) | st.just({}))
def test_schema_drawn_chunk_with_an_unknown_delta_field_fails_closed(
    revision: str, chunk: dict[str, Any], key: str, value: Any
) -> None:
    # Unknown in the revision: any field neither pinned nor added by it. ("audio" is
    # known since 2026-12-01, as null only: null is accepted there, and a non-null
    # audio delta fails closed as unsupported.)
    assert CHUNK_VALIDATOR.is_valid(chunk)
    # The schema cannot say everything (unique tool ids): the chunk without the
    # unknown key may already be rejected, and then any rejection will do.
    plain = ChatCompletionStream(revision=revision)
    plain.feed(ROLE_FRAME)
    try:
        plain.feed(copy.deepcopy(chunk))
        plain_accepted = True
    except ContractError:
        plain_accepted = False
    chunk["choices"][0]["delta"][key] = value
    assert not CHUNK_VALIDATOR.is_valid(chunk)
    event(f"unknown delta value: {type(value).__name__}")
    event(f"chunk without the unknown key accepted: {plain_accepted}")
    stream = ChatCompletionStream(revision=revision)
    stream.feed(ROLE_FRAME)
    if key in LATER_DELTA_KEYS[revision]:
        event(f"{revision}: {key} delta, {'null' if value is None else 'not null'}")
        if value is None and plain_accepted:
            stream.feed(chunk)  # known to this revision, as null
            return
        with pytest.raises(ContractError) as exc:
            stream.feed(chunk)
        if plain_accepted:
            assert type(exc.value) is UnsupportedProviderState, exc.value
        return
    try:
        stream.feed(chunk)
    except ProtocolViolation as exc:
        assert "unknown delta field" in str(exc) or not plain_accepted
        if key == "audio":
            event(f"{revision}: audio is an unknown delta field")
        return
    raise AssertionError("an unknown delta field was accepted")


MESSAGE_KEYS = ("role", "content", "reasoning_content", "tool_calls", "function_call")


def _graft_body_extensions(body: dict[str, Any], drawn: dict[str, Any]) -> list[str]:
    """Copy the extension fields of a schema-drawn body onto ``body``."""
    grafted = []
    for key, value in drawn.items():
        # the body's own fields (design 4.1: error, choices, id, model, usage) are the
        # model's; a schema-drawn value there is no extension (the schema leaves
        # ``model`` untyped: a drawn [] was grafted and rightly rejected)
        if key not in ("error", "id", "choices", "model", "usage", "object"):
            body[key] = copy.deepcopy(value)
            grafted.append("top-level")
    choice, drawn_choice = body["choices"][0], drawn["choices"][0]
    for key, value in drawn_choice.items():
        if key not in ("index", "finish_reason", "message"):
            choice[key] = copy.deepcopy(value)
            grafted.append("choice")
    message, drawn_message = choice["message"], drawn_choice["message"]
    for key, value in drawn_message.items():
        if key not in MESSAGE_KEYS:
            message[key] = copy.deepcopy(value)
            grafted.append("message")
    for tool, drawn_tool in zip(message.get("tool_calls") or [],
                                drawn_message.get("tool_calls") or [], strict=False):
        for key, value in drawn_tool.items():
            if key not in ("id", "type", "function"):
                tool[key] = copy.deepcopy(value)
                grafted.append("tool")
        for key, value in drawn_tool["function"].items():
            if key not in ("name", "arguments"):
                tool["function"][key] = copy.deepcopy(value)
                grafted.append("function")
    return grafted


@each_revision
@settings(suppress_health_check=DRIFT_HEALTH)
@given(completion_models(), from_schema(COMPLETION_SCHEMA))
def test_schema_drawn_body_extension_fields_are_kept_and_change_no_decision(
    revision: str, model: CompletionModel, drawn: dict[str, Any]
) -> None:
    # The non-streaming body keeps extension fields verbatim (design 4.1); they
    # never change the product, the release decision or the call identities.
    assert COMPLETION_VALIDATOR.is_valid(drawn)
    plain = parse_completion(model.body(), revision=revision)
    body = model.body()
    grafted = _graft_body_extensions(body, drawn)
    assert COMPLETION_VALIDATOR.is_valid(body)
    for place in ("top-level", "choice", "message", "tool", "function"):
        event(f"drift: {place} extension" if place in grafted else f"drift: no {place} extension")
    original = copy.deepcopy(body)
    turn = parse_completion(body, revision=revision)
    assert body == original
    event(f"executable={bool(turn.calls)}")
    message = body["choices"][0]["message"]
    assert turn.message == message and turn.message is not message
    assert turn.calls == plain.calls
    assert [r.call_id for r in turn.recovery_calls] == [r.call_id for r in plain.recovery_calls]
    assert (turn.finish_reason, turn.response_id, turn.usage) == (
        plain.finish_reason, plain.response_id, plain.usage)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["choices", "index", "delta", "id", "type", "function", "name",
                         "arguments", "content", "role", "tool_calls", "usage", "error",
                         "finish_reason", "reasoning_content", "x"]), inner, max_size=4),
    max_leaves=12,
)


@each_revision
@given(st.lists(json_values | st.just(DONE), max_size=6))
def test_arbitrary_json_frames_raise_only_contract_errors(revision: str,
                                                          frames: list[Any]) -> None:
    try:
        turn = parse_events(frames, revision=revision)
    except ContractError as exc:
        event(f"rejected: {type(exc).__name__}")
        return
    event("accepted")
    assert turn.calls == () or turn.finish_reason == "tool_calls"


@each_revision
@given(st.data())
def test_stream_is_poisoned_after_any_rejection(revision: str, data: st.DataObject) -> None:
    rendered = data.draw(rendered_streams(revision=revision))
    stream = ChatCompletionStream(revision=revision)
    cut = data.draw(st.integers(0, len(rendered.frames) - 1))
    for frame in rendered.frames[:cut]:
        stream.feed(frame)
    bad = data.draw(st.sampled_from([{"error": None}, [], {"choices": [{}, {}]}]))
    event(f"rejected frame={type(bad).__name__}")
    try:
        stream.feed(bad)
    except ContractError as first:
        for action in (lambda: stream.feed(DONE), stream.close):
            try:
                action()
            except ContractError as later:
                assert type(later) is type(first)
            else:
                raise AssertionError("a poisoned stream accepted a call") from None
        return
    raise AssertionError("a bad frame was accepted")


# ============================================================ state machine


class ChatStreamMachine(RuleBasedStateMachine):
    """Drives one stream frame by frame against the independent model.

    Invariants after every step: the snapshot equals the model's message so far;
    the progress events are exactly the model's progressing frames; nothing is
    executable before ``[DONE]`` (closing a copy of the fed frames truncates);
    at every terminal state the cache codec round-trips the snapshot.
    """

    #: The contract revision the machine drives (a subclass per later revision).
    revision = PINNED

    def __init__(self) -> None:
        super().__init__()
        self.rendered: RenderedStream | None = None
        self._reset()

    def _reset(self) -> None:
        self.stream = ChatCompletionStream(revision=self.revision)
        self.position = 0
        self.fed: list[Any] = []
        self.expected_progress: list[int] = []
        self.terminal = False
        self.interrupt_at: int | None = None

    @initialize(data=st.data(), interrupt_at=st.none() | st.none() | st.integers(0, 12))
    def start(self, data: st.DataObject, interrupt_at: int | None) -> None:
        rendered = data.draw(rendered_streams(product=None, revision=self.revision),
                             label="rendered")
        _observe_revision(rendered, self.revision)
        self.rendered = rendered
        self.interrupt_at = interrupt_at
        event(f"tools={len(rendered.model.tools)}")

    @precondition(lambda self: self.terminal)
    @rule(data=st.data(), interrupt_at=st.none() | st.none() | st.integers(0, 12))
    def start_another_attempt(self, data: st.DataObject, interrupt_at: int | None) -> None:
        # Each attempt gets a fresh aggregator; nothing carries over.
        self._reset()
        self.start(data, interrupt_at)

    def _may_interrupt(self) -> bool:
        return (not self.terminal and self.interrupt_at is not None
                and self.position >= self.interrupt_at)

    def _frames_left(self) -> bool:
        assert self.rendered is not None
        return not self.terminal and self.position < len(self.rendered.frames) - 1

    def _feed(self, frame: Any, progresses: bool) -> None:
        frame_index = len(self.fed)
        result = self.stream.feed(copy.deepcopy(frame))
        self.fed.append(frame)
        assert (result is not None) == progresses
        if progresses:
            assert result is not None and result.frame_index == frame_index
            self.expected_progress.append(frame_index)

    @precondition(lambda self: self._frames_left())
    @rule(count=st.integers(1, 6))
    def feed_next_frames(self, count: int) -> None:
        assert self.rendered is not None
        for _ in range(count):
            if not self._frames_left():
                break
            progresses = self.position in self.rendered.progress_frames
            self._feed(self.rendered.frames[self.position], progresses)
            self.position += 1

    @precondition(lambda self: not self.terminal)
    @rule(kind=st.sampled_from(["empty_delta", "role_only", "null_usage", "repeat_identity"]))
    def feed_frame_without_progress(self, kind: str) -> None:
        assert self.rendered is not None
        if kind == "role_only" and "role" not in self.stream.snapshot():
            kind = "empty_delta"  # a first role would change the message
        if kind == "repeat_identity":
            known = self.stream.snapshot().get("tool_calls", [])
            model_tools = sorted(self.rendered.model.tools, key=lambda t: t.index)
            candidates = [(m.index, t["id"]) for m, t in zip(model_tools, known, strict=False)
                          if "id" in t and m.call_id == t["id"]]
            if not candidates:
                kind = "empty_delta"
            else:
                index, call_id = candidates[0]
                frame = {"choices": [{"index": 0, "delta": {
                    "tool_calls": [{"index": index, "id": call_id}]}}]}
        if kind == "empty_delta":
            frame = {"choices": [{"index": 0, "delta": {}}]}
        elif kind == "role_only":
            frame = {"choices": [{"index": 0, "delta": {"role": "assistant"}}]}
        elif kind == "null_usage":
            frame = {"choices": [], "usage": None}
        event(f"no-progress frame={kind}")
        self._feed(frame, progresses=False)

    @precondition(lambda self: not self.terminal and not self._frames_left())
    @rule()
    def feed_done_and_close(self) -> None:
        assert self.rendered is not None
        self.stream.feed(DONE)
        self.fed.append(DONE)
        self.terminal = True
        model = self.rendered.model
        if not model.has_product:
            try:
                self.stream.close()
            except EmptyCompletion:
                event("terminal: empty completion")
                return
            raise AssertionError("empty completion accepted")
        turn = self.stream.close()
        event(f"terminal: executable={bool(turn.calls)}")
        assert turn.message == model.message()
        assert [e.frame_index for e in turn.progress_events] == self.expected_progress
        assert bool(turn.calls) == model.executable
        snapshot = turn.completion
        assert decode(encode(snapshot)) == snapshot

    @precondition(lambda self: self._may_interrupt())
    @rule()
    def close_before_done(self) -> None:
        self.terminal = True
        event("terminal: truncated")
        try:
            self.stream.close()
        except StreamTruncated:
            pass
        else:
            raise AssertionError("close before [DONE] returned a turn")
        try:
            self.stream.feed(DONE)
        except StreamTruncated:
            return
        raise AssertionError("a truncated stream accepted [DONE]")

    @precondition(lambda self: self._may_interrupt())
    @rule(error=st.sampled_from([None, {}, {"message": "x"}]))
    def feed_error_frame(self, error: Any) -> None:
        self.terminal = True
        event("terminal: provider error")
        try:
            self.stream.feed({"error": error, "choices": []})
        except ProviderError:
            pass
        else:
            raise AssertionError("an error frame was accepted")
        try:
            self.stream.close()
        except ProviderError:
            return
        raise AssertionError("an errored stream closed")

    @rule()
    def check_the_model_is_consistent(self) -> None:
        # Always enabled, so the machine can make progress after a terminal state.
        assert self.rendered is not None
        assert self.rendered.frames[-1] == DONE

    @invariant()
    def snapshot_equals_the_model_message(self) -> None:
        if self.rendered is None or self.terminal:
            return
        assert self.stream.snapshot() == self.rendered.partial_messages[self.position]

    @invariant()
    def progress_count_equals_the_model_count(self) -> None:
        if self.rendered is None or self.terminal:
            return
        assert [e.frame_index for e in self.stream.progress_events] == self.expected_progress

    @invariant()
    def nothing_is_executable_before_done(self) -> None:
        if self.rendered is None or DONE in self.fed:
            return
        try:
            parse_events(self.fed, revision=self.revision)
        except StreamTruncated:
            return
        raise AssertionError("a stream without [DONE] produced a turn")


# TestChatStreamMachine (2026-07-21) and TestChatStreamMachine20261201 (null ``audio``
# deltas): the same machine and invariants per revision.
TestChatStreamMachine, TestChatStreamMachine20261201 = machines_per_revision(ChatStreamMachine)


# ================================================= fuzz target, hypothesis-driven


def _load_fuzz_target() -> Any:
    return load_fuzz_target("fuzz_openai_chat")


_FUZZ_TARGET: dict[str, Any] = {}


def _has_audio_delta(frame: Any) -> bool:
    """A frame whose first choice's delta has an ``audio`` key (any of those levels
    may be missing, null or of another type in a drawn frame)."""
    choices = frame.get("choices") if isinstance(frame, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    delta = choice.get("delta") if isinstance(choice, dict) else None
    return isinstance(delta, dict) and "audio" in delta


@each_revision
@given(st.binary(min_size=8, max_size=300))
def test_structured_fuzz_target_oracles_hold_for_hypothesis_drawn_bytes(revision: str,
                                                                        data: bytes) -> None:
    # One harness, two drivers: the atheris target's structure-aware mode, driven
    # by hypothesis so a broken oracle shrinks and replays under pytest. The target
    # picks the revision by the input's length: padded here to pick ``revision``.
    if "module" not in _FUZZ_TARGET:
        _FUZZ_TARGET["module"] = _load_fuzz_target()
    module = _FUZZ_TARGET["module"]
    while module._revision_for(data) != revision:
        data += b"\x00"
    frames = module.structured_frames(data)[1]
    if any(_has_audio_delta(f) for f in frames):
        event(f"{revision}: frames with an audio delta")
    outcome = module.run_structured(data)
    event(f"fuzz outcome: {outcome.split()[0]}")
