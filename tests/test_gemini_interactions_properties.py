"""Properties and a rule-based state machine for the Gemini Interactions v1 contract.

The strategies model the protocol independently (``strategies.gemini_interactions``);
only the parser's public API is imported here.
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
    multiple,
    precondition,
    rule,
)
from jsonschema import Draft7Validator

from pcfuzz.contracts.errors import (
    ContinuationError,
    ContractError,
    ProtocolViolation,
    ProviderError,
    StreamTruncated,
    UnsupportedProviderState,
)
from pcfuzz.contracts.gemini_interactions import (
    REVISIONS,
    GeminiInteractionsStream,
    build_gemini_interactions_continuation,
    build_gemini_interactions_stateless_continuation,
    parse_events,
    parse_interaction,
)
from pcfuzz.contracts.results import ModelVisibleToolResult
from pcfuzz.strategies import gemini_interactions as gs
from pcfuzz.strategies.revision_schemas import load_schemas

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "schemas" / "gemini_interactions"
#: Each revision's schemas (fixtures/schemas/gemini_interactions/[<revision>/]).
REVISION_VALIDATORS = {
    revision: {name: Draft7Validator(schema)
               for name, schema in load_schemas("gemini-interactions", revision).items()}
    for revision in gs.REVISIONS}
USER_INPUT = {"type": "user_input", "content": [{"type": "text", "text": "question"}]}


def _observe(rendered: gs.RenderedStream) -> None:
    m = rendered.model
    event(f"status={m.status}")
    event(f"event_ids={m.with_event_ids}")
    event(f"usage={'absent' if m.usage is None else sorted(m.usage)}")
    if any(s.index < 0 for s in m.steps):
        event("negative index")
    if any(s.absent_argument_deltas for s in m.steps):
        event("arguments_delta without arguments")
    if any(s.type == "function_call" and not s.fragments for s in m.steps):
        event("call completes from step.start arguments")
    if any(e["event_type"] == "interaction.status_update" for e in rendered.events):
        event("status_update present")
    event(f"steps={len(m.steps)}")
    _observe_revision(rendered.events, m.revision)


def _observe_revision(events: list[dict[str, Any]], revision: str) -> None:
    """Show that a later revision's shapes are generated (new steps and statuses)."""
    later = gs.LATER_HOSTED_STEP_TYPES[revision]
    for e in events:
        kind = e.get("step", e.get("delta", {})).get("type")
        if kind in later:
            event(f"{revision}: {e['event_type']} {kind}")
        status = e.get("status", e.get("interaction", {}).get("status"))
        if status in (*gs.CONTINUATION_STATUSES[revision], "queued"):
            event(f"{revision}: {e['event_type']} status {status}")


def _tools_for(calls: Any) -> list[dict[str, Any]]:
    names = sorted({c.name for c in calls})
    return [{"type": "function", "name": n, "parameters": {"type": "object"}} for n in names]


def test_the_generator_renders_every_shipped_revision() -> None:
    assert sorted(gs.REVISIONS) == sorted(REVISIONS)
    assert gs.REVISIONS[0] == PINNED


@pytest.mark.parametrize("revision", gs.REVISIONS)
def test_valid_stream_releases_exactly_the_models_function_calls(revision: str) -> None:
    @revision_settings(revision)
    @given(gs.rendered_streams(revision=revision))
    def check(rendered: gs.RenderedStream) -> None:
        _observe(rendered)
        turn = parse_events(rendered.events, revision=revision)
        assert turn.revision == revision
        assert [(c.call_id, c.name, c.arguments) for c in turn.calls] == rendered.expected_calls()
        assert [s["type"] for s in turn.steps] == [s.type for s in rendered.start_order]
        assert turn.status == rendered.model.status
        totals = turn.usage_totals()
        for key, value in totals.items():
            expected = (rendered.model.usage or {}).get(key)
            assert value == expected  # absent is None, never 0

    check()


@given(gs.rendered_streams(revision="2026-12-01"))
def test_todays_shapes_under_the_pinned_revision_fail_closed_or_agree(
        rendered: gs.RenderedStream) -> None:
    # A stream of today's shapes either uses only pinned shapes (the same turn under both
    # revisions) or is rejected by 2026-07-21 with a message naming the drift.
    current = parse_events(copy.deepcopy(rendered.events), revision="2026-12-01")
    try:
        pinned = parse_events(copy.deepcopy(rendered.events), revision=PINNED)
    except UnsupportedProviderState as exc:
        event("rejected by the pinned revision")
        assert "drift: contract revision 2026-12-01" in str(exc)
        return
    event("pinned shapes only")
    assert pinned.calls == current.calls and pinned.status == current.status


@each_revision
@given(st.data())
def test_rendered_events_validate_against_their_revisions_schemas(
        revision: str, data: st.DataObject) -> None:
    rendered = data.draw(gs.rendered_streams(revision=revision))
    validators = REVISION_VALIDATORS[revision]
    for e in rendered.events:
        # the combined schema and the event type's own file
        for validator in (validators["event"], validators[e["event_type"].replace(".", "_")]):
            errors = list(validator.iter_errors(e))
            assert not errors, (revision, e, errors[0].message)
    event(f"event kinds={len({e['event_type'] for e in rendered.events})}")
    _observe_revision(rendered.events, revision)


@each_revision
@given(st.data())
def test_identical_event_id_replay_is_idempotent(revision: str, data: st.DataObject) -> None:
    model = data.draw(gs.turn_models(revision=revision))
    model.with_event_ids = True
    rendered = data.draw(gs.rendered_streams(model))
    replayed = data.draw(gs.replayed_same(rendered))
    event(f"replayed {next(e['event_type'] for e in replayed if replayed.count(e) > 1)}")
    _observe_revision(replayed, revision)
    assert (parse_events(replayed, revision=revision).digest
            == parse_events(rendered.events, revision=revision).digest)


@each_revision
@given(st.data())
def test_event_id_conflict_always_fails(revision: str, data: st.DataObject) -> None:
    model = data.draw(gs.turn_models(revision=revision))
    model.with_event_ids = True
    rendered = data.draw(gs.rendered_streams(model))
    mutated = data.draw(gs.replayed_conflict(rendered))
    first: dict[str, dict[str, Any]] = {}
    for e in mutated:
        if e["event_id"] in first and first[e["event_id"]] != e:
            nested = "x_conflict" not in e
            event(f"conflict on {e['event_type']} ({'nested' if nested else 'top-level'} change)")
        first.setdefault(e["event_id"], e)
    _observe_revision(mutated, revision)
    with pytest.raises(ProtocolViolation, match="different payload"):
        parse_events(mutated, revision=revision)


@each_revision
@given(st.data())
def test_truncated_stream_releases_nothing(revision: str, data: st.DataObject) -> None:
    rendered = data.draw(gs.rendered_streams(min_calls=1, revision=revision))
    cut = data.draw(gs.truncated(rendered))
    event(f"cut after {cut[-1]['event_type'] if cut else 'nothing'}")
    _observe_revision(cut, revision)
    with pytest.raises(StreamTruncated):
        parse_events(cut, revision=revision)


@each_revision
@given(st.data())
def test_step_outside_the_v1_union_fails_closed(revision: str, data: st.DataObject) -> None:
    # outside the revision's union: for 2026-07-21 that includes 2026-12-01's new steps
    rendered = data.draw(gs.rendered_streams(revision=revision))
    mutated = data.draw(gs.with_foreign_step(rendered))
    kind = [e for e in mutated if e.get("step", {}).get("id") == "x"][0]["step"]["type"]
    event(f"foreign step {kind}")
    with pytest.raises(UnsupportedProviderState) as exc:
        parse_events(mutated, revision=revision)
    if kind in gs.LATER_HOSTED_STEP_TYPES["2026-12-01"]:
        event("a later revision's step under the pinned one")
        assert "drift: contract revision 2026-12-01" in str(exc.value)


@each_revision
@given(st.data())
def test_delta_outside_the_v1_union_fails_closed(revision: str, data: st.DataObject) -> None:
    rendered = data.draw(gs.rendered_streams(min_calls=1, revision=revision))
    mutated = data.draw(gs.with_foreign_delta(rendered))
    kind = [e for e in mutated if e.get("delta", {}).get("arguments") == "{}"
            and e["delta"]["type"] != "arguments_delta"][0]["delta"]["type"]
    event(f"foreign delta {kind}")
    _observe_revision(mutated, revision)
    if kind in gs.LATER_HOSTED_STEP_TYPES[revision]:
        # the revision knows this delta type, for its own step: on another step it is
        # a protocol violation, not an unknown shape
        event(f"{revision}: a known delta type on another step")
        with pytest.raises(ProtocolViolation, match="not allowed for a"):
            parse_events(mutated, revision=revision)
        return
    with pytest.raises(UnsupportedProviderState):
        parse_events(mutated, revision=revision)


_ERRORS = {"ProviderError": ProviderError, "ProtocolViolation": ProtocolViolation,
           "UnsupportedProviderState": UnsupportedProviderState}


@each_revision
@given(st.data())
def test_only_requires_action_releases_calls(revision: str, data: st.DataObject) -> None:
    # Every status any revision knows (and unknown ones), as the terminal of a turn with
    # calls, gets the outcome the revision's status table gives it; only requires_action
    # releases the calls (requires_continuation, since 2026-12-01, returns the turn with
    # nothing released; budget_exceeded fails as the provider's; idle fails closed).
    rendered = data.draw(gs.rendered_streams(min_calls=1, revision=revision))
    statuses = (*gs.ALL_KNOWN_STATUSES, *gs.UNKNOWN_STATUSES)
    # half the time a status a later revision added (under the pinned revision: one
    # it must reject naming the drift), so each run reaches them
    added = tuple(sorted(set(gs.ALL_KNOWN_STATUSES) - set(gs.TERMINAL_OUTCOMES[PINNED])))
    if data.draw(st.booleans(), label="a later revision's status"):
        statuses = added
    mutated = data.draw(gs.with_status(rendered, statuses))
    status = mutated[-1]["interaction"]["status"]
    n_calls = len(rendered.model.function_calls())
    expected = gs.terminal_outcome(revision, status, n_calls)
    event(f"{revision}: terminal status {status!r} -> {expected}")
    if expected != "accepted":
        with pytest.raises(_ERRORS[expected]) as exc:
            parse_events(mutated, revision=revision)
        if status not in gs.TERMINAL_OUTCOMES[revision] and status in gs.ALL_KNOWN_STATUSES:
            assert "drift: contract revision" in str(exc.value)
        return
    turn = parse_events(mutated, revision=revision)
    assert turn.status == status
    released = [(c.call_id, c.name, c.arguments) for c in turn.calls]
    model_calls = [(s.call_id, s.name, s.arguments) for s in rendered.start_order
                   if s.type == "function_call"]  # whatever the model's own status was
    assert released == (model_calls if status == "requires_action" else [])
    if status != "requires_action":
        assert turn.calls == ()


@each_revision
@given(st.data())
def test_event_shaped_garbage_raises_only_contract_errors(revision: str,
                                                          data: st.DataObject) -> None:
    events = data.draw(st.lists(gs.loose_events(revision), max_size=8))
    _observe_revision(events, revision)
    try:
        turn = parse_events([{"event_type": "interaction.created",
                              "interaction": {"id": "i", "status": "in_progress"}}, *events],
                            revision=revision)
    except ContractError as exc:
        event(f"rejected: {type(exc).__name__}")
    else:
        event("accepted")
        assert turn.status == "requires_action" or not turn.calls


def _replayable_and_hosted(revision: str) -> tuple[str, ...]:
    """Replayable step types, plus (in a revision that has them) its new server-side ones."""
    return ("thought", "model_output", *gs.LATER_HOSTED_STEP_TYPES[revision])


@each_revision
@given(st.data())
def test_continuations_bind_exactly_the_turns_call_ids(revision: str, data: st.DataObject) -> None:
    rendered = data.draw(gs.rendered_streams(
        min_calls=1, other_types=_replayable_and_hosted(revision), revision=revision))
    _observe_revision(rendered.events, revision)
    turn = parse_events(rendered.events, revision=revision)
    if rendered.model.status in gs.CONTINUATION_STATUSES[revision]:
        # a continuation is resumed, not answered: no function results bind to it
        event("continuation turn: the builder refuses it")
        assert turn.calls == ()
        with pytest.raises(ContinuationError):
            build_gemini_interactions_continuation(
                turn, [ModelVisibleToolResult(c[0], "ok") for c in rendered.model.function_calls()],
                model="m", tools=_tools_for(turn.calls), system_instruction=None,
                generation_config=None, previous_interaction_was_stored=True, store=False)
        return
    results = [ModelVisibleToolResult(c.call_id, "ok") for c in reversed(turn.calls)]
    body = build_gemini_interactions_continuation(
        turn, results, model="m", tools=_tools_for(turn.calls), system_instruction=None,
        generation_config=None, previous_interaction_was_stored=True, store=False)
    assert [s["call_id"] for s in body["input"]] == [c.call_id for c in turn.calls]
    has_other = any(s["type"] != "function_call" for s in turn.steps)
    event(f"stream has non-call steps={has_other}")
    if has_other:
        with pytest.raises(ContinuationError):
            build_gemini_interactions_stateless_continuation(
                turn, results, model="m", tools=_tools_for(turn.calls), system_instruction=None,
                generation_config=None, prior_input_steps=[USER_INPUT])


@each_revision
@given(st.data())
def test_create_and_get_snapshots_never_duplicate_input_history(
    revision: str, data: st.DataObject,
) -> None:
    rendered = data.draw(gs.rendered_streams(min_calls=1, other_types=("thought", "model_output"),
                                             revision=revision))
    create = parse_interaction(gs.interaction_object(rendered, "create", USER_INPUT),
                               origin="create", revision=revision)
    get = parse_interaction(gs.interaction_object(rendered, "get", USER_INPUT), origin="get",
                            revision=revision)
    if rendered.model.status in gs.CONTINUATION_STATUSES[revision]:
        event(f"{revision}: continuation snapshot releases nothing")
        assert create.calls == () and get.calls == ()
        assert create.status == get.status == rendered.model.status
        return
    results = [ModelVisibleToolResult(c.call_id, "r") for c in create.calls]
    kw: dict[str, Any] = dict(model="m", tools=_tools_for(create.calls),
                              system_instruction=None, generation_config=None)
    a = build_gemini_interactions_stateless_continuation(
        create, results, prior_input_steps=[USER_INPUT], **kw)
    b = build_gemini_interactions_stateless_continuation(get, results, **kw)
    event(f"steps replayed={len(a['input']) - 1 - len(results)}")
    assert a["input"] == b["input"]
    assert [s["type"] for s in a["input"]].count("user_input") == 1
    assert [c.call_id for c in create.calls] == [c.call_id for c in get.calls]
    with pytest.raises(ContinuationError):
        build_gemini_interactions_stateless_continuation(
            get, results, prior_input_steps=[USER_INPUT], **kw)


# --------------------------------------------------------------------- state machine

PINNED_TERMINALS = ("requires_action", "completed", "failed", "cancelled", "incomplete")
REPLAYABLE_STEP_TYPES = ("function_call", "thought", "model_output")


class GeminiStreamMachine(RuleBasedStateMachine):
    """Drives one stream event by event against an independent model of the turn."""

    #: The contract revision the machine drives (one TestCase per shipped revision,
    #: ``machines_per_revision`` below); every rule draws that revision's shapes.
    revision = PINNED

    delivered = Bundle("delivered")

    @initialize(target=delivered, interaction_id=gs.opaque_ids)
    def start(self, interaction_id: str) -> dict[str, Any]:
        self.generation = 0
        self.turns_checked = 0
        return self._begin(interaction_id)

    @precondition(lambda self: self.dead or self.closed)
    @rule(target=delivered, interaction_id=gs.opaque_ids)
    def new_stream(self, interaction_id: str) -> dict[str, Any]:
        """After a close or an error, start the next stream so runs keep producing turns."""
        self.generation += 1
        event("new stream after " + ("error" if self.dead else "close"))
        return self._begin(interaction_id)

    def _begin(self, interaction_id: str) -> dict[str, Any]:
        self.stream = GeminiInteractionsStream(revision=self.revision)
        self.iid = interaction_id
        self.n = 0
        self.used_indexes: set[int] = set()
        self.open: dict[int, gs.StepModel] = {}
        self.pending: dict[int, list[str]] = {}
        self.order: list[gs.StepModel] = []
        self.dead = False
        self.completed_status: str | None = None
        self.closed = False
        self.turn: Any = None
        return self._feed("interaction.created",
                          interaction={"id": interaction_id, "status": "in_progress"})

    def _feed(self, kind: str, **fields: Any) -> dict[str, Any]:
        ev = {"event_type": kind, "event_id": f"g{self.generation}-{self.n}", **fields}
        self.n += 1
        self.stream.feed(copy.deepcopy(ev))
        return ev

    def _alive(self) -> bool:
        return not self.dead and self.completed_status is None

    @precondition(lambda self: self._alive())
    @rule(target=delivered, index=gs.INT32, data=st.data())
    def start_step(self, index: int, data: st.DataObject) -> dict[str, Any]:
        # replayable steps twice as often; every step of the revision's union; the
        # steps the revision added as often again (so short runs reach them)
        kinds = [st.sampled_from(REPLAYABLE_STEP_TYPES), st.sampled_from(REPLAYABLE_STEP_TYPES),
                 st.sampled_from(gs.step_types(self.revision))]
        if gs.LATER_HOSTED_STEP_TYPES[self.revision]:
            kinds.append(st.sampled_from(gs.LATER_HOSTED_STEP_TYPES[self.revision]))
        step_type = data.draw(st.one_of(kinds), label="step_type")
        return self._start(step_type, index, data)

    def _start(self, step_type: str, index: int, data: st.DataObject) -> dict[str, Any]:
        assume(index not in self.used_indexes)
        self.used_indexes.add(index)
        if step_type == "function_call":
            step = data.draw(gs.function_call_steps(index, f"call-{self.n}"))
        else:
            step = gs.StepModel(type=step_type, index=index, call_id=f"s-{self.n}",
                                text=data.draw(st.text(max_size=6)), revision=self.revision)
        self.open[index] = step
        self.pending[index] = [json.dumps(d) for d in step.deltas()]
        self.order.append(step)
        event(f"{self.revision}: start {step_type}" if step_type
              in gs.LATER_HOSTED_STEP_TYPES[self.revision] else f"start {step_type}")
        return self._feed("step.start", index=index, step=step.start_step())

    @precondition(lambda self: self._alive() and any(self.pending.values()))
    @rule(target=delivered, data=st.data())
    def delta(self, data: st.DataObject) -> dict[str, Any]:
        index = data.draw(st.sampled_from(sorted(i for i, p in self.pending.items() if p)))
        return self._feed("step.delta", index=index, delta=json.loads(self.pending[index].pop(0)))

    @precondition(lambda self: self._alive()
                  and any(not self.pending[i] for i in self.open))
    @rule(target=delivered, data=st.data())
    def stop(self, data: st.DataObject) -> dict[str, Any]:
        index = data.draw(st.sampled_from(sorted(i for i in self.open if not self.pending[i])))
        del self.open[index]
        return self._feed("step.stop", index=index)

    @precondition(lambda self: self._alive() and bool(self.open))
    @rule(target=delivered)
    def drain(self) -> Any:
        """Deliver every pending delta and stop every open step (round-robin)."""
        fed: list[dict[str, Any]] = []
        while any(self.pending[i] for i in self.open):
            for index in sorted(self.open):
                if self.pending[index]:
                    fed.append(self._feed("step.delta", index=index,
                                          delta=json.loads(self.pending[index].pop(0))))
        for index in sorted(self.open):
            fed.append(self._feed("step.stop", index=index))
        self.open.clear()
        return multiple(*fed)

    @precondition(lambda self: self._alive())
    @rule(target=delivered, data=st.data())
    def status_update(self, data: st.DataObject) -> dict[str, Any]:
        status = data.draw(st.sampled_from(
            (*PINNED_TERMINALS, *gs.NON_TERMINAL_STATUSES[self.revision],
             *gs.CONTINUATION_STATUSES[self.revision])), label="status")
        event(f"status_update {status}" if status not in PINNED_TERMINALS else "status_update")
        return self._feed("interaction.status_update", interaction_id=self.iid, status=status)

    def _current(self, ev: dict[str, Any]) -> bool:
        """Only events of the current stream can be redelivered to it."""
        return str(ev["event_id"]).startswith(f"g{self.generation}-")

    @rule(ev=delivered)
    def replay_identical(self, ev: dict[str, Any]) -> None:
        """Redelivery: a no-op while usable, an error once poisoned or closed."""
        if not self._current(ev):
            return
        if self.dead or self.closed:
            with pytest.raises(ContractError):
                self.stream.feed(copy.deepcopy(ev))
            return
        event(f"replay {ev['event_type']}")
        self.stream.feed(copy.deepcopy(ev))

    @precondition(lambda self: not self.dead and not self.closed)
    @rule(ev=delivered, roll=st.integers(0, 15))
    def replay_conflicting(self, ev: dict[str, Any], roll: int) -> None:
        if roll != 7 or not self._current(ev):
            return  # destructive rules fire rarely, so turns get long
        other = copy.deepcopy(ev)
        other["x_other"] = 1
        event("conflict")
        with pytest.raises(ProtocolViolation):
            self.stream.feed(other)
        self.dead = True

    @precondition(lambda self: self._alive())
    @rule(close_now=st.booleans(), index=gs.INT32, data=st.data())
    def finish_tool_turn(self, close_now: bool, index: int, data: st.DataObject) -> None:
        """Shortcut to the interesting terminal: start a function call if there is none,
        drain open steps, requires_action, and (usually) close at once, so the turn and
        snapshot checks run in most runs instead of a few."""
        if not any(s.type == "function_call" for s in self.order):
            assume(index not in self.used_indexes)
            self._start("function_call", index, data)
        if self.open:
            self.drain()
        event("finish tool turn")
        self._feed("interaction.completed",
                   interaction={"id": self.iid, "status": "requires_action"})
        self.completed_status = "requires_action"
        if close_now:
            self.close(roll=0)

    @precondition(lambda self: self._alive() and not self.open)
    @rule(data=st.data(), roll=st.integers(0, 4))
    def complete(self, data: st.DataObject, roll: int) -> None:
        # every status any revision knows: a later one's is unknown to an older revision
        status = data.draw(st.sampled_from((*PINNED_TERMINALS, *gs.ALL_KNOWN_STATUSES)),
                           label="status")
        self._complete(status, roll)

    def _terminal_ok(self, status: str, n_calls: int) -> bool:
        """Whether the model accepts ``status`` at the terminal (the gate, independently:
        the revision's status table in the strategies)."""
        return gs.terminal_outcome(self.revision, status, n_calls) == "accepted"

    def _complete(self, status: str, roll: int) -> None:
        n_calls = sum(1 for s in self.order if s.type == "function_call")
        if not n_calls and roll < 4:
            return  # let turns with calls be generated more often than empty ones
        if roll != 2:  # mostly the status the model's steps call for
            status = "requires_action" if n_calls else "completed"
        event(f"{self.revision}: terminal {status} calls={bool(n_calls)}")
        ev = {"event_type": "interaction.completed", "event_id": f"g{self.generation}-{self.n}",
              "interaction": {"id": self.iid, "status": status}}
        self.n += 1
        if self._terminal_ok(status, n_calls):
            self.stream.feed(ev)
            self.completed_status = status
        else:
            with pytest.raises(_ERRORS[gs.terminal_outcome(self.revision, status, n_calls)]):
                self.stream.feed(ev)
            self.dead = True

    @precondition(lambda self: not self.dead and not self.closed)
    @rule(roll=st.integers(0, 15))
    def close(self, roll: int) -> None:
        if self.completed_status is None:
            if roll != 7:  # hypothesis favours 0; fire on a middle value, rarely
                return
            event("truncated close")
            with pytest.raises(StreamTruncated):
                self.stream.close()
            self.dead = True
            return
        self.turn = self.stream.close()
        self.closed = True
        model_calls = [(s.call_id, s.name, s.arguments) for s in self.order
                       if s.type == "function_call"]
        got = [(c.call_id, c.name, c.arguments) for c in self.turn.calls]
        assert got == (model_calls if self.turn.status == "requires_action" else [])
        if self.turn.status == "requires_action":
            self._check_snapshot_history()

    def _check_snapshot_history(self) -> None:
        steps = [s.snapshot_step() for s in self.order]
        base = {"id": self.iid, "status": "requires_action"}
        if any(s.type in ("user_input", "function_result") for s in self.order):
            event("input steps in the stream: no create snapshot")
            with pytest.raises(ProtocolViolation):
                parse_interaction({**base, "steps": steps}, origin="create",
                                  revision=self.revision)
            return
        create = parse_interaction({**base, "steps": steps}, origin="create",
                                   revision=self.revision)
        get = parse_interaction({**base, "steps": [USER_INPUT, *steps]}, origin="get",
                                revision=self.revision)
        results = [ModelVisibleToolResult(c.call_id, "r") for c in create.calls]
        kw: dict[str, Any] = dict(model="m", tools=_tools_for(create.calls),
                                  system_instruction=None, generation_config=None)
        replayable = all(s.type in ("function_call", "thought", "model_output")
                         for s in self.order)
        if not replayable:
            event("snapshot holds hosted/input steps: fails closed")
            for snap, prior in ((create, [USER_INPUT]), (get, None)):
                with pytest.raises(ContinuationError):
                    build_gemini_interactions_stateless_continuation(
                        snap, results, prior_input_steps=prior, **kw)
            return
        event("create vs GET continuation")
        self.turns_checked += 1
        a = build_gemini_interactions_stateless_continuation(
            create, results, prior_input_steps=[USER_INPUT], **kw)
        b = build_gemini_interactions_stateless_continuation(get, results, **kw)
        assert a["input"] == b["input"]
        assert sum(1 for s in a["input"] if s["type"] == "user_input") == 1
        with pytest.raises(ContinuationError):
            build_gemini_interactions_stateless_continuation(
                get, results, prior_input_steps=[USER_INPUT], **kw)

    def teardown(self) -> None:
        event(f"create-vs-GET checks in this run={min(self.turns_checked, 3)}")

    @invariant()
    def nothing_executable_unless_requires_action(self) -> None:
        if self.turn is not None and self.turn.status != "requires_action":
            assert self.turn.calls == ()

    @invariant()
    def poisoned_stream_stays_poisoned(self) -> None:
        if self.dead:
            with pytest.raises(ContractError):
                self.stream.close()


# TestGeminiStreamMachine (2026-07-21) and TestGeminiStreamMachine20261201: the same
# machine and invariants per revision; at 2026-12-01 its server-side steps (never
# executable), ``queued`` updates, ``requires_continuation`` terminals (nothing
# released), ``budget_exceeded`` (provider failure) and ``idle`` (fails closed).
TestGeminiStreamMachine, TestGeminiStreamMachine20261201 = machines_per_revision(GeminiStreamMachine)


# ------------------------------------------------------- schema-driven field drift

SCHEMAS = {
    path.stem: json.loads(path.read_text(encoding="utf-8"))
    for path in sorted(SCHEMA_DIR.glob("*.json"))
    if path.stem != "event"
}
# Which step a delta type belongs to: written here from the SDK's delta variants,
# independently of the parser's tables.
_STEP_FOR_DELTA = {
    **{t: "model_output" for t in ("text", "image", "audio", "document", "video",
                                   "text_annotation_delta")},
    "thought_summary": "thought",
    "thought_signature": "thought",
    "arguments_delta": "function_call",
}


def _strip_unknown(value: Any, schema: dict[str, Any]) -> Any:
    """Keep only the fields the pinned schema names, recursively where it names them."""
    props = schema.get("properties")
    if type(value) is not dict or props is None:
        return value
    return {k: _strip_unknown(v, props[k]) for k, v in value.items() if k in props}


def _json_text_ok(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return False
    return True


def _ctx_call(index: int) -> list[dict[str, Any]]:
    return [{"event_type": "step.start", "index": index,
             "step": {"type": "function_call", "id": "ctx-call", "name": "f",
                      "arguments": {"k": 1}}},
            {"event_type": "step.stop", "index": index}]


def _ctx_created(iid: str = "ctx-i") -> dict[str, Any]:
    return {"event_type": "interaction.created", "interaction": {"id": iid,
                                                                 "status": "in_progress"}}


def _ctx_completed(status: str, iid: str = "ctx-i") -> dict[str, Any]:
    return {"event_type": "interaction.completed", "interaction": {"id": iid, "status": status}}


def _in_context(kind: str, e: dict[str, Any]) -> list[dict[str, Any]]:
    """Put one schema-generated event into the smallest stream where it matters."""
    if kind == "interaction_created":
        iid = e["interaction"]["id"]
        return [e, *_ctx_call(0), _ctx_completed("requires_action", iid)]
    if kind == "interaction_status_update":
        iid = e["interaction_id"]
        return [_ctx_created(iid), *_ctx_call(0), e, _ctx_completed("requires_action", iid)]
    if kind == "interaction_completed":
        return [_ctx_created(e["interaction"]["id"]), *_ctx_call(0), e]
    if kind == "error":
        return [_ctx_created(), e]
    index = e["index"]
    stop = {"event_type": "step.stop", "index": index}
    if kind == "step_start":
        is_call = e["step"]["type"] == "function_call"
        return [_ctx_created(), e, stop,
                _ctx_completed("requires_action" if is_call else "completed")]
    if kind == "step_stop":
        return [_ctx_created(), {"event_type": "step.start", "index": index,
                                 "step": {"type": "model_output"}}, e,
                _ctx_completed("completed")]
    step_type = _STEP_FOR_DELTA.get(e["delta"]["type"], e["delta"]["type"])
    start_step: dict[str, Any] = {"type": step_type}
    if step_type == "function_call":
        start_step.update(id="ctx-call", name="f", arguments={})
    start = {"event_type": "step.start", "index": index, "step": start_step}
    return [_ctx_created(), start, e, stop,
            _ctx_completed("requires_action" if step_type == "function_call" else "completed")]


def _outcome(events: list[dict[str, Any]], revision: str) -> tuple[Any, ...]:
    try:
        turn = parse_events(copy.deepcopy(events), revision=revision)
    except ContractError as exc:
        return ("rejected", type(exc).__name__)
    return ("accepted", turn.status, tuple((c.call_id, c.name, c.arguments) for c in turn.calls))


@each_revision
@given(st.data())
def test_unknown_optional_fields_never_change_the_parse_outcome(revision: str,
                                                                data: st.DataObject) -> None:
    """Events drawn from the pinned schemas (which allow unknown optional fields) parse,
    under every revision, exactly like the same events with every field the schema does
    not name removed."""
    from hypothesis_jsonschema import from_schema

    kind = data.draw(st.sampled_from(sorted(SCHEMAS)))
    schema = SCHEMAS[kind]
    drifted = data.draw(from_schema(schema))
    assert Draft7Validator(schema).is_valid(drifted)
    assume(_json_text_ok(drifted))
    pinned = _strip_unknown(drifted, schema)
    assert Draft7Validator(schema).is_valid(pinned)
    outcome = _outcome(_in_context(kind, drifted), revision)
    event(f"{kind}: unknown fields {'present' if drifted != pinned else 'absent'}, {outcome[0]}")
    assert outcome == _outcome(_in_context(kind, pinned), revision)


# ------------------------------------------------------------- review: generalizations


@each_revision
@given(st.data())
def test_unknown_fields_on_argument_deltas_keep_calls_but_block_stateless_replay(
    revision: str, data: st.DataObject,
) -> None:
    rendered = data.draw(gs.rendered_streams(min_calls=1, other_types=(), revision=revision,
                                             allow_continuation=False))
    deltas = [i for i, e in enumerate(rendered.events) if e["event_type"] == "step.delta"]
    assume(deltas)
    events = copy.deepcopy(rendered.events)
    target = events[data.draw(st.sampled_from(deltas))]
    field = data.draw(st.sampled_from(["signature", "x_future", "metadata"]))
    target["delta"][field] = data.draw(st.text(max_size=4) | st.integers())
    event(f"extra delta field {field}")
    turn = parse_events(events, revision=revision)
    assert [(c.call_id, c.name, c.arguments) for c in turn.calls] == rendered.expected_calls()
    results = [ModelVisibleToolResult(c.call_id, "ok") for c in turn.calls]
    kw: dict[str, Any] = dict(model="m", tools=_tools_for(turn.calls), system_instruction=None,
                              generation_config=None)
    with pytest.raises(ContinuationError, match="not provably"):
        build_gemini_interactions_stateless_continuation(
            turn, results, prior_input_steps=[USER_INPUT], **kw)
    assert build_gemini_interactions_continuation(
        turn, results, previous_interaction_was_stored=True, store=True, **kw)["input"]


@each_revision
@given(st.data())
def test_streamed_function_result_for_a_streamed_call_never_releases_it(
    revision: str, data: st.DataObject,
) -> None:
    rendered = data.draw(gs.rendered_streams(
        min_calls=1, other_types=gs.LATER_HOSTED_STEP_TYPES[revision], revision=revision,
        allow_continuation=False))
    events = copy.deepcopy(rendered.events)
    call_id = data.draw(st.sampled_from([c[0] for c in rendered.expected_calls()]))
    used = {e.get("index") for e in events}
    index = data.draw(gs.INT32.filter(lambda i: i not in used))
    pos = data.draw(st.integers(1, len(events) - 1))
    events[pos:pos] = [
        {"event_type": "step.start", "index": index,
         "step": {"type": "function_result", "call_id": call_id, "result": "done"}},
        {"event_type": "step.stop", "index": index},
    ]
    before_call = pos <= next(i for i, e in enumerate(events) if e.get("step", {}).get("id")
                              == call_id and e["event_type"] == "step.start")
    event(f"function_result {'before' if before_call else 'after'} its call")
    _observe_revision(events, revision)
    with pytest.raises(ProtocolViolation, match="already answered"):
        parse_events(events, revision=revision)


_PROTECTED = ("model", "input", "store", "previous_interaction_id", "tools",
              "system_instruction", "generation_config", "response_format")


@st.composite
def _spelling_variants(draw: st.DrawFn) -> str:
    words = draw(st.sampled_from(_PROTECTED)).split("_")
    style = draw(st.sampled_from(["camel", "upper", "kebab", "title", "mixed"]))
    event(f"protected spelling {style}")
    if style == "camel":
        return words[0] + "".join(w.capitalize() for w in words[1:])
    if style == "upper":
        return "_".join(words).upper()
    if style == "kebab":
        return "-".join(words)
    if style == "title":
        return "_".join(w.capitalize() for w in words)
    return "".join(draw(st.sampled_from([c.lower(), c.upper()])) for c in "_".join(words))


@each_revision
@given(_spelling_variants())
def test_protected_fields_cannot_be_set_under_any_spelling(revision: str, key: str) -> None:
    turn = parse_events(gs_fixture_events(), revision=revision)
    with pytest.raises(ContinuationError, match="protected"):
        build_gemini_interactions_continuation(
            turn, [ModelVisibleToolResult(c.call_id, "ok") for c in turn.calls], model="m",
            tools=_tools_for(turn.calls), system_instruction=None, generation_config=None,
            previous_interaction_was_stored=True, store=False, request_controls={key: "x"})


def gs_fixture_events() -> list[dict[str, Any]]:
    path = SCHEMA_DIR.parent.parent / "gemini_interactions.json"
    return list(json.loads(path.read_text(encoding="utf-8"))["events"])
