"""OpenAI Responses contract: properties and rule-based state machines.

The strategies model the protocol independently of the parser (they never import its
tables); the parser's public API is only driven and observed.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from _revisions import PINNED, each_revision, machines_per_revision, revision_settings
from hypothesis import assume, event, given
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from jsonschema import Draft7Validator

from pcfuzz.contracts.errors import (
    ContinuationError,
    ContractError,
    ProtocolViolation,
    ProviderError,
    ResultBindingError,
    SnapshotMutated,
    StreamTruncated,
    UnsupportedProviderState,
)
from pcfuzz.contracts.openai_responses import REVISIONS as CONTRACT_REVISIONS
from pcfuzz.contracts.openai_responses import (
    OpenAIResponsesStream,
    OpenAIResponsesTurn,
    build_openai_responses_continuation,
    build_openai_responses_stateless_continuation,
    parse_events,
)
from pcfuzz.contracts.results import ModelVisibleToolResult
from pcfuzz.strategies.openai_responses import (
    ARGS_DELTA,
    ARGS_DONE,
    ARGS_DONE_HAS_NAME,
    COMPLETED,
    MUTATORS_BY_NAME,
    TurnModel,
    arguments_dicts,
    json_values,
    mutated_streams,
    render,
    schema_instances,
    strict_tool,
    unknown_fields,
    valid_streams,
)
from pcfuzz.strategies.openai_responses import REVISIONS as GEN_REVISIONS
from pcfuzz.strategies.revision_schemas import load_schemas

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "schemas" / "openai_responses"
SCHEMAS = {path.name[: -len(".json")]: json.loads(path.read_text(encoding="utf-8"))
           for path in sorted(SCHEMA_DIR.glob("*.json"))}
VALIDATORS = {name: Draft7Validator(schema) for name, schema in SCHEMAS.items()}
#: Each revision's schemas (fixtures/schemas/openai_responses/[<revision>/]).
REVISION_VALIDATORS = {
    revision: {name: Draft7Validator(schema)
               for name, schema in load_schemas("openai-responses", revision).items()}
    for revision in GEN_REVISIONS}


def test_the_generator_renders_every_shipped_revision() -> None:
    assert sorted(GEN_REVISIONS) == sorted(CONTRACT_REVISIONS)
    assert GEN_REVISIONS[0] == PINNED


def calls_of(turn: OpenAIResponsesTurn) -> list[tuple[Any, ...]]:
    return [(c.call_id, c.name, c.arguments, c.item_id, c.output_index) for c in turn.calls]


def tools_for(model: TurnModel) -> list[dict[str, Any]]:
    return [strict_tool(name) for name in model.function_names()]


def _observe_revision(events: list[dict[str, Any]], revision: str) -> None:
    """Show that a revision's own shapes are generated (2026-12-01: no ``name`` on
    arguments.done)."""
    done = [e for e in events if e["type"] == ARGS_DONE]
    if done:
        event(f"{revision}: arguments.done "
              f"{'with' if all('name' in e for e in done) else 'without'} name")


# ---------------------------------------------------------------------------
# Stream properties


@pytest.mark.parametrize("revision", GEN_REVISIONS)
def test_valid_streams_release_exactly_the_model_calls(revision: str) -> None:
    @revision_settings(revision)
    @given(valid_streams(revision=revision))
    def check(drawn: tuple[TurnModel, Any]) -> None:
        model, events = drawn
        turn = parse_events(events, revision=revision)
        event(f"calls={len(model.expected_calls())}")
        event(f"items={len(model.items)}")
        assert turn.revision == revision
        assert calls_of(turn) == model.expected_calls()
        assert turn.is_tool_turn == bool(model.expected_calls())
        assert [item["id"] for item in turn.output] == [item.item_id for item in model.items]

    check()


@given(valid_streams(min_calls=1, revision="2026-12-01"))
def test_todays_streams_are_rejected_by_the_pinned_revision_naming_the_drift(
        drawn: tuple[TurnModel, Any]) -> None:
    # Rendered as openai 3.57.0 types define them: no name on arguments.done
    _, events = drawn
    event(f"arguments.done events={sum(1 for e in events if e['type'] == ARGS_DONE)}")
    with pytest.raises(ProtocolViolation, match="drift: contract revision 2026-12-01"):
        parse_events(events, revision=PINNED)


@each_revision
@given(st.data())
def test_unknown_optional_fields_are_tolerated(revision: str, data: st.DataObject) -> None:
    model, events = data.draw(valid_streams(drift=True, revision=revision))
    _observe_revision(events, revision)
    drifted = sum(1 for e in events if {"response_id", "obfuscation", "x_drift_note",
                                        "agent"} & set(e))
    event("drift present" if drifted else "no drift drawn")
    assert calls_of(parse_events(events, revision=revision)) == model.expected_calls()


@each_revision
@given(st.data())
def test_interleaving_of_call_fragments_does_not_change_calls(
        revision: str, data: st.DataObject) -> None:
    model, _ = data.draw(valid_streams(min_calls=2, revision=revision))
    other = render(model, data.draw(st.randoms(use_true_random=False)), revision=revision)
    _observe_revision(other, revision)
    order = [e["output_index"] for e in other if e["type"] == ARGS_DELTA]
    interleaved = any(a != b for a, b in zip(order, order[1:], strict=False))
    event("deltas interleaved" if interleaved else "deltas sequential")
    assert calls_of(parse_events(other, revision=revision)) == model.expected_calls()


@each_revision
@given(st.data(), st.lists(st.integers(1, 10**6), min_size=200, max_size=200),
       st.integers(0, 10**9))
def test_sequence_number_gaps_and_start_do_not_matter(revision: str, data: st.DataObject,
                                                      gaps: list[int], start: int) -> None:
    model, events = data.draw(valid_streams(revision=revision))
    seq = start
    for position, e in enumerate(events):
        e["sequence_number"] = seq
        seq += gaps[position % len(gaps)]
    event("starts at 0" if start == 0 else "starts elsewhere")
    assert calls_of(parse_events(events, revision=revision)) == model.expected_calls()


@each_revision
@given(st.data())
def test_sequence_number_must_increase(revision: str, data: st.DataObject) -> None:
    _, events = data.draw(valid_streams(revision=revision))
    position = data.draw(st.integers(1, len(events) - 1))
    earlier = data.draw(st.integers(0, position - 1))
    events[position]["sequence_number"] = events[earlier]["sequence_number"]
    event("duplicate of previous" if earlier == position - 1 else "reversed")
    with pytest.raises(ProtocolViolation, match="does not increase"):
        parse_events(events, revision=revision)


@pytest.mark.parametrize("revision", GEN_REVISIONS)
@pytest.mark.parametrize("name", sorted(MUTATORS_BY_NAME))
def test_mutated_streams_fail_or_release_exactly_the_model(name: str, revision: str) -> None:
    # One run per mutator, so that each attack class gets the profile's whole budget
    # (a single draw over all of them starved the late ones at the ci profile); every
    # revision holds the same invariant (later ones with the "-revision" profile).
    @revision_settings(revision)
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        model, mutator, events = data.draw(mutated_streams(min_calls=2 if name in (
            "retarget_delta", "shared_call_id") else 1, mutator=name, revision=revision))
        event(f"mutator={mutator.name}")
        try:
            turn = parse_events(events, revision=revision)
        except ContractError as exc:
            event(f"{mutator.name} -> {type(exc).__name__}")
            assert mutator.expectation != "ok", f"{mutator.name} must parse: {exc}"
            if mutator.error_names:
                assert type(exc).__name__ in mutator.error_names, exc
            return
        event(f"{mutator.name} -> accepted")
        assert mutator.expectation != "error", f"{mutator.name} must be rejected"
        assert calls_of(turn) == model.expected_calls()

    check()


@each_revision
@given(st.data())
def test_no_stream_without_its_terminal_releases_a_call(revision: str,
                                                         data: st.DataObject) -> None:
    _, events = data.draw(valid_streams(min_calls=1, revision=revision))
    cut = data.draw(st.integers(0, len(events) - 1))
    event("cut before any call" if cut < 3 else "cut after calls began")
    _observe_revision(events[:cut], revision)
    stream = OpenAIResponsesStream(revision=revision)
    for e in events[:cut]:
        stream.feed(e)
        assert stream.calls == ()
    with pytest.raises(StreamTruncated):
        stream.close()
    assert stream.calls == ()


@each_revision
@given(st.data())
def test_pending_arguments_are_prefixes_of_the_final_arguments(
        revision: str, data: st.DataObject) -> None:
    model, events = data.draw(valid_streams(min_calls=1, revision=revision))
    finals = {c[0]: json.dumps(c[2]) for c in model.expected_calls()}
    texts = {item.call_id: item.arguments_text for item in model.items
             if item.kind == "function_call"}
    _observe_revision(events, revision)
    stream = OpenAIResponsesStream(revision=revision)
    for e in events[:-1]:
        stream.feed(e)
        for pending in stream.pending_calls():
            assert texts[pending.call_id].startswith(pending.arguments_text)
            if pending.arguments_done:
                assert pending.arguments_text == texts[pending.call_id]
    event(f"calls={len(finals)}")
    stream.feed(events[-1])
    assert calls_of(stream.close()) == model.expected_calls()


@each_revision
@given(events=st.lists(st.fixed_dictionaries(
    {"type": st.sampled_from(sorted(SCHEMAS) + ["response.unknown"]),
     "sequence_number": st.integers(-2, 5) | st.booleans()},
    optional={"output_index": st.integers(-1, 3) | json_values,
              "item_id": st.text(max_size=3) | json_values,
              "delta": st.text(max_size=4) | json_values,
              "item": st.fixed_dictionaries({"type": st.sampled_from(
                  ["function_call", "message", "reasoning", "x"])},
                  optional={"id": st.text(max_size=3), "call_id": json_values,
                            "name": json_values, "arguments": json_values,
                            "status": json_values, "role": json_values,
                            "content": json_values, "summary": json_values,
                            "caller": json_values}),
              "response": st.fixed_dictionaries({}, optional={
                  "id": json_values, "status": json_values, "output": json_values,
                  "error": json_values}),
              "arguments": json_values, "name": json_values, "message": json_values,
              "part": json_values, "content_index": json_values,
              "summary_index": json_values, "text": json_values, "logprobs": json_values}),
    max_size=8))
def test_arbitrary_events_raise_only_contract_errors(revision: str,
                                                    events: list[dict[str, Any]]) -> None:
    try:
        turn = parse_events(events, revision=revision)
    except ContractError as exc:
        event(type(exc).__name__)
        return
    event("accepted")
    assert any(e["type"] == COMPLETED for e in events)
    assert all(isinstance(c.arguments, dict) for c in turn.calls)


# ---------------------------------------------------------------------------
# Schemas


@each_revision
@given(st.data())
def test_every_rendered_event_validates_against_its_revisions_schema(
        revision: str, data: st.DataObject) -> None:
    _, events = data.draw(valid_streams(drift=True, revision=revision))
    validators = REVISION_VALIDATORS[revision]
    for e in events:
        event(e["type"])
        errors = [err.message for err in validators[e["type"]].iter_errors(e)]
        assert not errors, (revision, e["type"], errors)


def test_schemas_are_draft07_and_cover_the_rendered_event_types() -> None:
    for name, schema in SCHEMAS.items():
        assert schema["$schema"] == "http://json-schema.org/draft-07/schema#", name
        assert schema["properties"]["type"] == {"const": name}
        assert "sequence_number" in schema["required"]
        Draft7Validator.check_schema(schema)
    assert SCHEMAS["response.function_call_arguments.done"]["required"] == sorted(
        ["type", "sequence_number", "item_id", "output_index", "arguments", "name"])


FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "openai_responses.json"
FIXTURE_EVENTS = json.loads(FIXTURE.read_text(encoding="utf-8"))["events"]
# Terminals that must fail whatever schema-valid shape and drift they carry.
FAILING_TERMINALS = ("response.failed", "response.incomplete", "error")
RESPONSE_SNAPSHOTS = ("response.created", "response.queued", "response.in_progress",
                      "response.completed")
# One drift strategy per group of schemas, so that every group gets the profile's full
# example budget (a single draw over all 19 would starve some types at the ci profile).
SCHEMA_DRIFT = {
    "failing terminal": schema_instances({n: SCHEMAS[n] for n in FAILING_TERMINALS}),
    "response snapshot": schema_instances({n: SCHEMAS[n] for n in RESPONSE_SNAPSHOTS}),
    "item event": schema_instances({n: s for n, s in SCHEMAS.items()
                                    if n not in FAILING_TERMINALS + RESPONSE_SNAPSHOTS}),
}


def _item_properties(schema: dict[str, Any], item_type: Any) -> Any:
    return schema.get("definitions", {}).get(item_type, {}).get("properties")


def _drift_of(name: str, instance: dict[str, Any]) -> dict[str, Any]:
    """The unknown fields of one schema instance: on the event, its Response, its item."""
    schema = SCHEMAS[name]
    item = instance.get("item")
    item_type = item.get("type") if isinstance(item, dict) else None
    return {
        "name": name,
        "top": unknown_fields(instance, schema["properties"]),
        "response": unknown_fields(
            instance.get("response"),
            schema["properties"].get("response", {}).get("properties")),
        "item_type": item_type,
        "item": unknown_fields(item, _item_properties(schema, item_type)),
    }


def _carries(events: list[dict[str, Any]], drift: dict[str, Any]) -> bool:
    if drift["name"] == "response.queued":
        return True
    return any(e["type"] == drift["name"] and (
        drift["item_type"] is None or e["item"]["type"] == drift["item_type"])
        for e in events)


def _apply(events: list[dict[str, Any]], drift: dict[str, Any], instance: dict[str, Any],
           ) -> None:
    name, item_type = drift["name"], drift["item_type"]
    if name == "response.queued":
        queued = copy.deepcopy(instance)
        queued["response"]["id"] = events[0]["response"]["id"]
        events.insert(1, queued)
        for number, e in enumerate(events):
            e["sequence_number"] = number
    for e in events:
        if e["type"] != name:
            continue
        e.update(copy.deepcopy(drift["top"]))
        if isinstance(e.get("response"), dict):
            e["response"].update(copy.deepcopy(drift["response"]))
        if isinstance(e.get("item"), dict) and e["item"]["type"] == item_type:
            e["item"].update(copy.deepcopy(drift["item"]))
    if name == "response.output_item.done":
        # The terminal repeats each done item byte for byte (decision 7), so drift on a
        # done item is drift on its terminal form too.
        for raw in events[-1]["response"]["output"]:
            if raw["type"] == item_type:
                raw.update(copy.deepcopy(drift["item"]))


@each_revision
@pytest.mark.parametrize("group", sorted(SCHEMA_DRIFT))
@given(data=st.data())
def test_schema_generated_drift_does_not_change_the_outcome(
        group: str, revision: str, data: st.DataObject) -> None:
    """Instances of the 19 pinned schemas (hypothesis-jsonschema) drive the drift.

    The unknown optional fields each instance carries (on the event, on its Response
    snapshot, on its output item) are spread over every event of that type of a valid
    stream (a rendered one, or the fixture when the rendering lacks a drifted event
    type); the calls must not change, and drift on the final forms is kept in raw. A
    failing terminal (failed/incomplete/error) is used whole, at any cut point, and must
    release nothing whatever schema-valid shape and extra fields it has. The stream is
    rendered at ``revision`` and parsed under it (the drift comes from the pinned
    schemas, whose fields every revision reads).
    """
    drawn = data.draw(valid_streams(min_calls=1, revision=revision))
    generated = [data.draw(SCHEMA_DRIFT[group], label="schema instance")]
    if group == "item event":
        # Item events drift together more often than not; a second instance of
        # another type rides along half of the time.
        second = data.draw(st.none() | SCHEMA_DRIFT[group], label="second instance")
        if second is not None and second[0] != generated[0][0]:
            generated.append(second)
    drifts: list[tuple[dict[str, Any], dict[str, Any]]] = []
    failing: dict[str, Any] | None = None
    for name, instance in generated:
        assert VALIDATORS[name].is_valid(instance)
        event(f"drift from {name}")
        if name in FAILING_TERMINALS:
            failing = failing or instance
            continue
        drift = _drift_of(name, instance)
        if drift["top"] or drift["response"] or drift["item"]:
            event("unknown fields drawn")
        drifts.append((drift, instance))
    _, events = drawn
    if not all(_carries(events, drift) for drift, _ in drifts):
        event("drift applied to the fixture stream")
        events = copy.deepcopy(FIXTURE_EVENTS)
    baseline = calls_of(parse_events(copy.deepcopy(events), revision=revision))
    for drift, instance in drifts:
        _apply(events, drift, instance)

    if failing is not None:
        cut = data.draw(st.integers(1, len(events) - 1))
        terminal = copy.deepcopy(failing)
        if isinstance(terminal.get("response"), dict):
            terminal["response"]["id"] = events[0]["response"]["id"]
        terminal["sequence_number"] = events[cut - 1]["sequence_number"] + 1
        event("failing terminal lists output items"
              if terminal.get("response", {}).get("output") else "failing terminal")
        stream = OpenAIResponsesStream(revision=revision)
        for e in events[:cut]:
            stream.feed(e)
        with pytest.raises(ProviderError):
            stream.feed(terminal)
        assert stream.calls == ()
        return

    turn = parse_events(events, revision=revision)
    assert calls_of(turn) == baseline
    for drift, _ in drifts:
        if drift["name"] == "response.completed":
            for key, value in drift["response"].items():
                assert turn.response[key] == value
        if drift["name"] == "response.output_item.done":
            kept = [raw for raw in turn.output if raw["type"] == drift["item_type"]]
            assert kept
            for raw in kept:
                for key, value in drift["item"].items():
                    assert raw[key] == value


# ---------------------------------------------------------------------------
# Continuation properties


@each_revision
@given(st.data())
def test_any_result_set_but_exactly_one_per_call_is_rejected(
        revision: str, data: st.DataObject) -> None:
    model, events = data.draw(valid_streams(min_calls=1, revision=revision))
    turn = parse_events(events, revision=revision)
    call_ids = [c.call_id for c in turn.calls]
    pool = call_ids + [item.item_id for item in model.items] + ["unknown-call"]
    chosen = data.draw(st.lists(st.sampled_from(pool), max_size=len(call_ids) + 2))
    results = [ModelVisibleToolResult(call_id, "out") for call_id in chosen]
    exact = sorted(chosen) == sorted(call_ids)
    event("exact result set" if exact else "wrong result set")
    stateful = data.draw(st.booleans())
    try:
        if stateful:
            payload = build_openai_responses_continuation(
                turn, results, model="m", previous_response_was_stored=True, store=False,
                instructions="i", tools=tools_for(model))
        else:
            payload = build_openai_responses_stateless_continuation(
                turn, results, model="m", prior_input_items=[{"role": "user", "content": "q"}],
                instructions="i", tools=tools_for(model))
    except ResultBindingError:
        assert not exact
        return
    assert exact
    sent = [i["call_id"] for i in payload["input"] if i.get("type") == "function_call_output"]
    assert sent == call_ids


SPELLINGS = {
    "exact": lambda f: f,
    "upper case": str.upper,
    "title case": str.title,
    "hyphens": lambda f: f.replace("_", "-"),
    "camel case": lambda f: f.split("_")[0] + "".join(w.title() for w in f.split("_")[1:]),
    "padded": lambda f: f" {f}\t",
}


@each_revision
@given(st.data(), st.sampled_from(
    ["model", "previous_response_id", "input", "store", "instructions", "tools"]),
    st.sampled_from(sorted(SPELLINGS)), json_values, st.booleans())
def test_protected_fields_cannot_be_overwritten(revision: str, data: st.DataObject, field: str,
                                                spelling: str, value: Any,
                                                stateful: bool) -> None:
    model, events = data.draw(valid_streams(min_calls=1, revision=revision))
    turn = parse_events(events, revision=revision)
    results = [ModelVisibleToolResult(c.call_id, "ok") for c in turn.calls]
    key = SPELLINGS[spelling](field)
    event(f"protected={field}")
    event(f"spelling={spelling}")
    with pytest.raises(ContinuationError, match="protected"):
        if stateful:
            build_openai_responses_continuation(
                turn, results, model="m", previous_response_was_stored=True, store=True,
                instructions="i", tools=tools_for(model), request_controls={key: value})
        else:
            build_openai_responses_stateless_continuation(
                turn, results, model="m", prior_input_items=[{"role": "user", "content": "q"}],
                instructions="i", tools=tools_for(model), request_controls={key: value})


@each_revision
@given(st.data())
def test_nested_mutation_of_the_turn_is_detected(revision: str, data: st.DataObject) -> None:
    model, events = data.draw(valid_streams(min_calls=1, revision=revision))
    turn = parse_events(events, revision=revision)
    index = data.draw(st.integers(0, len(turn.output) - 1))
    item = turn.output[index]
    key = data.draw(st.sampled_from(sorted(item)))
    new = data.draw(json_values)
    assume(item[key] != new)
    event(f"mutated {item['type']}.{key}")
    item[key] = new
    results = [ModelVisibleToolResult(c.call_id, "ok") for c in turn.calls]
    with pytest.raises(SnapshotMutated):
        build_openai_responses_stateless_continuation(
            turn, results, model="m", prior_input_items=[{"role": "user", "content": "q"}],
            instructions="i", tools=tools_for(model))


# ---------------------------------------------------------------------------
# Rule-based state machine: the incremental parser against a model


class ResponsesStreamMachine(RuleBasedStateMachine):
    """Drives OpenAIResponsesStream event by event while a model tracks the truth."""

    #: The contract revision the machine drives (a subclass per later revision).
    revision = PINNED

    fed = Bundle("fed")

    @initialize(start=st.integers(0, 10**6), response_id=st.text(min_size=1, max_size=8),
                calls=st.lists(st.tuples(st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
                                         arguments_dicts), max_size=3))
    def start(self, start: int, response_id: str,
              calls: list[tuple[str, dict[str, Any]]]) -> None:
        self.seq = start
        self.response_id = response_id
        self.counter = 0
        self.streams_finished = 0
        self._new_stream()
        for name, arguments in calls:  # parallel calls opened up front
            self._open_call(name, arguments)

    def _new_stream(self) -> None:
        # A stream that died or terminated is checked and replaced, so every step of
        # the program keeps exercising a live parser (events already fed stay in the
        # bundle: replaying them into the new stream must fail too).
        self.stream = OpenAIResponsesStream(revision=self.revision)
        self.items: list[dict[str, Any]] = []
        self.dead = False
        self.terminated = False
        self.turn: OpenAIResponsesTurn | None = None
        self._feed_ok({"type": "response.created", "response": self._response("in_progress")})

    def _finish(self) -> None:
        """Check the ended stream stays ended (poisoned or closed), then start another."""
        assert self.dead or self.terminated
        if self.dead:
            assert self.stream.calls == ()
        with pytest.raises(ContractError):
            self.stream.feed(self._stamp({"type": "response.in_progress",
                                          "response": self._response("in_progress")}))
        with pytest.raises(ContractError):
            self.stream.close()
        self.streams_finished += 1
        self._new_stream()

    # -- helpers ------------------------------------------------------------

    def _response(self, status: str, output: list[Any] | None = None) -> dict[str, Any]:
        return {"id": self.response_id, "object": "response", "status": status,
                "output": output if output is not None else []}

    def _name_of(self, item: dict[str, Any]) -> dict[str, Any]:
        """``name`` on arguments.done: in the revisions whose SDK type has it."""
        return {"name": item["name"]} if ARGS_DONE_HAS_NAME[self.revision] else {}

    def _stamp(self, e: dict[str, Any]) -> dict[str, Any]:
        self.seq += 1
        e["sequence_number"] = self.seq
        return e

    def _feed_ok(self, e: dict[str, Any]) -> dict[str, Any]:
        self.stream.feed(self._stamp(e))
        return e

    def _feed_fails(self, e: dict[str, Any], error: type[ContractError]) -> None:
        with pytest.raises(error):
            self.stream.feed(e)
        self.dead = True
        self._finish()

    def _fresh_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}\u00b7{self.counter}"

    def _done_item(self, item: dict[str, Any]) -> dict[str, Any]:
        if item["kind"] == "function_call":
            return {"id": item["id"], "type": "function_call", "status": "completed",
                    "call_id": item["call_id"], "name": item["name"],
                    "arguments": item["text"]}
        return {"id": item["id"], "type": "message", "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": item["text"]}]
                if item["stage"] >= 1 else []}

    def _open(self, kind: str) -> list[dict[str, Any]]:
        return [i for i in self.items if i["kind"] == kind and not i["done"]]

    def _progress_one(self) -> None:
        """One legal step toward a good terminal (used when an attack is skipped)."""
        for item in self.items:
            if item["done"]:
                continue
            bind = {"item_id": item["id"], "output_index": item["index"]}
            if item["kind"] == "function_call":
                if item["emitted"] < len(item["text"]):
                    fragment = item["text"][item["emitted"]:]
                    item["emitted"] = len(item["text"])
                    self._feed_ok({"type": ARGS_DELTA, **bind, "delta": fragment})
                elif not item["args_done"]:
                    item["args_done"] = True
                    self._feed_ok({"type": "response.function_call_arguments.done", **bind,
                                   **self._name_of(item), "arguments": item["text"]})
                else:
                    item["done"] = True
                    self._feed_ok({"type": "response.output_item.done",
                                   "output_index": item["index"],
                                   "item": self._done_item(item)})
                return
            if item["stage"] in (1, 2):
                self._message_step(item)
            else:
                item["done"] = True
                self._feed_ok({"type": "response.output_item.done",
                               "output_index": item["index"], "item": self._done_item(item)})
            return
        self._feed_ok({"type": "response.in_progress", "response": self._response("in_progress")})

    @property
    def alive(self) -> bool:
        return not self.dead and not self.terminated

    # -- rules ----------------------------------------------------------------

    @precondition(lambda self: self.alive and len(self.items) < 6)
    @rule(target=fed, name=st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
          arguments=arguments_dicts)
    def open_call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self._open_call(name, arguments)

    def _open_call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        item = {"kind": "function_call", "id": self._fresh_id("item"),
                "call_id": self._fresh_id("call"), "name": name, "arguments": arguments,
                "text": json.dumps(arguments), "emitted": 0, "args_done": False,
                "done": False, "index": len(self.items)}
        self.items.append(item)
        added = {"type": "function_call", "id": item["id"], "call_id": item["call_id"],
                 "name": name, "arguments": "", "status": "in_progress"}
        event("open call")
        return self._feed_ok({"type": "response.output_item.added",
                              "output_index": item["index"], "item": added})

    @precondition(lambda self: self.alive and len(self.items) < 6)
    @rule(target=fed, text=st.text(max_size=6))
    def open_message(self, text: str) -> dict[str, Any]:
        item = {"kind": "message", "id": self._fresh_id("msg"), "text": text, "stage": 0,
                "done": False, "index": len(self.items)}
        self.items.append(item)
        return self._feed_ok({"type": "response.output_item.added",
                              "output_index": item["index"],
                              "item": {"id": item["id"], "type": "message",
                                       "role": "assistant", "status": "in_progress",
                                       "content": []}})

    @precondition(lambda self: self.alive and any(
        i["emitted"] < len(i["text"]) for i in self._open("function_call")))
    @rule(target=fed, data=st.data())
    def emit_fragment(self, data: st.DataObject) -> dict[str, Any]:
        open_calls = [i for i in self._open("function_call") if i["emitted"] < len(i["text"])]
        item = data.draw(st.sampled_from(open_calls))
        remaining = len(item["text"]) - item["emitted"]
        size = data.draw(st.sampled_from([remaining, 1]) | st.integers(1, remaining))
        fragment = item["text"][item["emitted"]:item["emitted"] + size]
        item["emitted"] += size
        event("fragment to one of several open calls" if len(open_calls) > 1
              else "fragment to the only open call")
        return self._feed_ok({"type": ARGS_DELTA, "item_id": item["id"],
                              "output_index": item["index"], "delta": fragment})

    @precondition(lambda self: self.alive and any(
        i["emitted"] == len(i["text"]) and not i["args_done"]
        for i in self._open("function_call")))
    @rule(target=fed, data=st.data())
    def finish_arguments(self, data: st.DataObject) -> dict[str, Any]:
        ready = [i for i in self._open("function_call")
                 if i["emitted"] == len(i["text"]) and not i["args_done"]]
        item = data.draw(st.sampled_from(ready))
        item["args_done"] = True
        return self._feed_ok({"type": "response.function_call_arguments.done",
                              "item_id": item["id"], "output_index": item["index"],
                              **self._name_of(item), "arguments": item["text"]})

    @precondition(lambda self: self.alive and any(
        i["stage"] < 3 for i in self._open("message")))
    @rule(target=fed, data=st.data())
    def advance_message(self, data: st.DataObject) -> dict[str, Any]:
        item = data.draw(st.sampled_from([i for i in self._open("message") if i["stage"] < 3]))
        return self._message_step(item)

    def _message_step(self, item: dict[str, Any]) -> dict[str, Any]:
        bind = {"item_id": item["id"], "output_index": item["index"], "content_index": 0}
        stage = item["stage"]
        item["stage"] += 1
        if stage == 0:
            return self._feed_ok({"type": "response.content_part.added", **bind,
                                  "part": {"type": "output_text", "text": ""}})
        if stage == 1:
            return self._feed_ok({"type": "response.output_text.delta", **bind,
                                  "delta": item["text"], "logprobs": []})
        return self._feed_ok({"type": "response.content_part.done", **bind,
                              "part": {"type": "output_text", "text": item["text"]}})

    @precondition(lambda self: self.alive and any(
        (i["kind"] == "function_call" and i["args_done"])
        or (i["kind"] == "message" and i["stage"] in (0, 3))
        for i in self._open("function_call") + self._open("message")))
    @rule(target=fed, data=st.data())
    def close_item(self, data: st.DataObject) -> dict[str, Any]:
        ready = [i for i in self._open("function_call") if i["args_done"]] + [
            i for i in self._open("message") if i["stage"] in (0, 3)]
        item = data.draw(st.sampled_from(ready))
        item["done"] = True
        event(f"close {item['kind']}")
        return self._feed_ok({"type": "response.output_item.done",
                              "output_index": item["index"], "item": self._done_item(item)})

    @precondition(lambda self: self.alive)
    @rule(old=fed, how=st.sampled_from(["replay", "late"]), back=st.integers(0, 2),
          go=st.integers(0, 3))
    def replay_or_reorder_earlier_event(self, old: dict[str, Any], how: str, back: int,
                                        go: int) -> None:
        # Attacks end the stream; usually (and for hypothesis's favoured draw 0) progress
        # instead, so that programs reach good terminals with calls.
        if go < 3:
            self._progress_one()
            return
        again = copy.deepcopy(old)
        if how == "late":
            again["sequence_number"] = self.seq - back
        event(f"attack: {how}")
        self._feed_fails(again, ProtocolViolation)

    @precondition(lambda self: self.alive)
    @rule(how=st.sampled_from(["truncate", "response.tool_call.delta",
                               "response.custom_tool_call_input.delta", "Error"]),
          go=st.integers(0, 3))
    def truncate_or_inject_unknown_event(self, how: str, go: int) -> None:
        if go < 3:
            self._progress_one()
            return
        event(f"attack: {how}")
        if how == "truncate":
            with pytest.raises(StreamTruncated):
                self.stream.close()
            self.dead = True
            self._finish()
            return
        self._feed_fails(self._stamp({"type": how, "delta": "{}"}), UnsupportedProviderState)

    @precondition(lambda self: self.alive)
    @rule(kind=st.sampled_from(["completed"] * 4 + ["failed", "incomplete", "error"]),
          early=st.integers(0, 3), trailing=st.sampled_from([False, False, False, True]))
    def terminate(self, kind: str, early: int, trailing: bool) -> None:
        # Failure terminals and premature completion end the stream; most draws (and
        # hypothesis's favoured 0) instead finish every open item, event by event,
        # in item order, then send a good response.completed.
        if kind != "completed":
            if early < 3:
                self._progress_one()
                return
            event(f"terminal {kind}")
            e = ({"type": "error", "message": "boom"} if kind == "error"
                 else {"type": f"response.{kind}", "response": self._response(kind)})
            self._feed_fails(self._stamp(e), ProviderError)
            return
        if not all(i["done"] for i in self.items):
            if early == 3:
                event("terminal before every item was done")
                output = [self._done_item(i) for i in self.items]
                self._feed_fails(self._stamp({"type": COMPLETED, "response": self._response(
                    "completed", output)}), ProtocolViolation)
                return
            while not all(i["done"] for i in self.items):
                self._progress_one()
                assert self.stream.calls == ()
        output = [self._done_item(i) for i in self.items]
        calls = sum(i["kind"] == "function_call" for i in self.items)
        event(f"good terminal with {min(calls, 2)}{'+' if calls > 2 else ''} calls")
        self.stream.feed(self._stamp({"type": COMPLETED,
                                      "response": self._response("completed", output)}))
        if trailing:
            # An event after the terminal poisons the stream: the calls it had
            # released are withdrawn, and close() refuses the turn.
            event("event after a good terminal")
            assert len(self.stream.calls) == calls
            self._feed_fails(self._stamp({"type": "response.in_progress",
                                          "response": self._response("in_progress")}),
                             ProtocolViolation)
            return
        self.terminated = True
        self.turn = self.stream.close()
        self.after_a_good_terminal_calls_equal_the_model()
        self._finish()

    @rule(drift=st.none() | st.tuples(
        st.sampled_from(["response_id", "obfuscation", "x_new"]), json_values))
    def progress_notification(self, drift: tuple[str, Any] | None) -> None:
        assert self.alive
        e = {"type": "response.in_progress", "response": self._response("in_progress")}
        if drift is not None:
            event("drift field tolerated")
            e[drift[0]] = drift[1]
        self._feed_ok(e)

    # -- invariants ----------------------------------------------------------

    @invariant()
    def nothing_is_executable_before_the_terminal(self) -> None:
        if not self.terminated:
            assert self.stream.calls == ()

    @invariant()
    def parser_arguments_equal_the_model(self) -> None:
        if self.dead or self.terminated:
            return
        pending = {p.call_id: p for p in self.stream.pending_calls()}
        calls = [i for i in self.items if i["kind"] == "function_call"]
        assert set(pending) == {i["call_id"] for i in calls}
        for item in calls:
            view = pending[item["call_id"]]
            assert view.arguments_text == item["text"][:item["emitted"]]
            assert view.arguments_done == item["args_done"]
            assert view.item_done == item["done"]

    def after_a_good_terminal_calls_equal_the_model(self) -> None:
        if self.turn is None:
            return
        expected = [(i["call_id"], i["name"], i["arguments"], i["id"], i["index"])
                    for i in self.items if i["kind"] == "function_call"]
        assert calls_of(self.turn) == expected
        assert self.stream.calls == self.turn.calls
        assert self.turn.is_tool_turn == bool(expected)


# TestResponsesStreamMachine (2026-07-21) and TestResponsesStreamMachine20261201 (no
# ``name`` on arguments.done): the same machine and invariants per revision.
TestResponsesStreamMachine, TestResponsesStreamMachine20261201 = machines_per_revision(ResponsesStreamMachine)


# ---------------------------------------------------------------------------
# Rule-based state machine: continuations


class ResponsesContinuationMachine(RuleBasedStateMachine):
    """Grows and shrinks a result set; every build must bind exactly one per call."""

    #: The revision of the turn the results bind to (one TestCase per shipped revision).
    revision = PINNED

    @initialize(data=st.data())
    def parse(self, data: st.DataObject) -> None:
        self.model, events = data.draw(valid_streams(min_calls=1, revision=self.revision))
        _observe_revision(events, self.revision)
        self.turn = parse_events(events, revision=self.revision)
        assert self.turn.revision == self.revision
        self.call_ids = [c.call_id for c in self.turn.calls]
        self.results: list[ModelVisibleToolResult] = []
        self.tools = tools_for(self.model)
        self.tools_before = copy.deepcopy(self.tools)

    @rule(data=st.data())
    def add_result_for_a_call(self, data: st.DataObject) -> None:
        call_id = data.draw(st.sampled_from(self.call_ids))
        self.results.append(ModelVisibleToolResult(call_id, data.draw(st.text(max_size=5))))

    @rule(data=st.data())
    def add_result_by_item_id_or_unknown(self, data: st.DataObject) -> None:
        ids = [item.item_id for item in self.model.items] + ["unknown"]
        self.results.append(ModelVisibleToolResult(data.draw(st.sampled_from(ids)), "x"))

    @precondition(lambda self: bool(self.results))
    @rule(data=st.data())
    def remove_result(self, data: st.DataObject) -> None:
        del self.results[data.draw(st.integers(0, len(self.results) - 1))]

    @rule(stateful=st.booleans(), store=st.booleans())
    def build(self, stateful: bool, store: bool) -> None:
        exact = sorted(r.call_id for r in self.results) == sorted(self.call_ids)
        event("build with exact results" if exact else "build with wrong results")
        try:
            if stateful:
                payload = build_openai_responses_continuation(
                    self.turn, self.results, model="m", previous_response_was_stored=True,
                    store=store, instructions="i", tools=self.tools,
                    request_controls={"parallel_tool_calls": store})
            else:
                payload = build_openai_responses_stateless_continuation(
                    self.turn, self.results, model="m",
                    prior_input_items=[{"role": "user", "content": "q"}],
                    instructions="i", tools=self.tools)
        except ResultBindingError:
            assert not exact
            return
        assert exact
        sent = [i["call_id"] for i in payload["input"] if i.get("type") == "function_call_output"]
        assert sent == self.call_ids
        if stateful:
            assert payload["previous_response_id"] == self.turn.response_id
            assert payload["store"] is store
        else:
            assert payload["store"] is False and "previous_response_id" not in payload

    @rule(field=st.sampled_from(["model", "previous_response_id", "input", "store",
                                 "instructions", "tools", "conversation", "prompt"]),
          stateful=st.booleans())
    def overwrite_protected_field(self, field: str, stateful: bool) -> None:
        results = [ModelVisibleToolResult(c, "ok") for c in self.call_ids]
        event(f"overwrite {field}")
        with pytest.raises(ContinuationError, match="protected"):
            if stateful:
                build_openai_responses_continuation(
                    self.turn, results, model="m", previous_response_was_stored=True,
                    store=False, instructions="i", tools=self.tools,
                    request_controls={field: "attacker"})
            else:
                build_openai_responses_stateless_continuation(
                    self.turn, results, model="m",
                    prior_input_items=[{"role": "user", "content": "q"}],
                    instructions="i", tools=self.tools, request_controls={field: "attacker"})

    @invariant()
    def builders_never_mutate_the_turn_or_tools(self) -> None:
        self.turn.check_unchanged()
        assert self.tools == self.tools_before


TestResponsesContinuationMachine, TestResponsesContinuationMachine20261201 = machines_per_revision(ResponsesContinuationMachine)


def test_state_machine_event_repr_is_valid_python() -> None:
    e = {"type": ARGS_DELTA, "item_id": "item\u00b71", "output_index": 0, "delta": "{\"a\""}
    assert eval(repr(e)) == e  # noqa: S307 - the printed program must paste into a test
