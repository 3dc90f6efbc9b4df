"""Hypothesis strategies and plain renderers for OpenAI Responses event streams.

An independent model of the protocol: this module never imports the parser's tables
or helpers. A :class:`TurnModel` (ordered output items: reasoning, assistant messages
and function calls with ``call_id``, name and an arguments dict) is rendered into a
valid typed-SSE-projection event list with a random but legal interleaving of item
sub-events and random sequence-number gaps. Mutators produce the attack classes
(reorder, duplicate/replay, truncate, drop, corrupt a fragment, identity swaps,
unknown fields, unknown item/event types, programmatic callers, failed terminals),
each with what the parser must do with it.

The model, its renderers (which take a :class:`random.Random`) and the mutators live
in :mod:`.openai_responses_model`, without hypothesis, for the atheris target; this
module re-exports them and wraps them in hypothesis strategies.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from pcfuzz.strategies.call_mutation_labels import call_mutation_labels
from pcfuzz.strategies.hostile_arguments import random_bad_arguments
from pcfuzz.strategies.openai_responses_model import (
    ARGS_DELTA,
    ARGS_DONE,
    ARGS_DONE_HAS_NAME,
    COMPLETED,
    CREATED,
    DRIFT_FIELD_NAMES,
    ERROR,
    FAILED,
    IN_PROGRESS,
    INCOMPLETE,
    ITEM_ADDED,
    ITEM_DONE,
    ITEM_KINDS,
    OTHER_ITEM_TYPES,
    PINNED_REVISION,
    REVISIONS,
    UNKNOWN_EVENT_TYPES,
    UNKNOWN_ITEM_TYPES,
    ItemModel,
    Mutator,
    TurnModel,
    dict_field,
    indexes,
    m_corrupt_fragment,
    m_drop,
    m_failed_terminal,
    m_identity_swap,
    m_programmatic_caller,
    m_replay,
    m_replay_renumbered,
    m_retarget_delta,
    m_swap,
    m_swap_renumbered,
    m_truncate,
    m_unknown_event_type,
    m_unknown_fields,
    m_unknown_item_type,
    random_model,
    render,
    renumber,
    response_object,
    strict_tool,
    unknown_fields,
)
from pcfuzz.strategies.openai_responses_model import (
    MUTATION_LABELS as MODEL_MUTATION_LABELS,
)
from pcfuzz.strategies.openai_responses_model import (
    MUTATORS as MODEL_MUTATORS,
)
from pcfuzz.strategies.realism import check_level
from pcfuzz.strategies.tool_names import tool_names

__all__ = [
    "ARGS_DELTA",
    "ARGS_DONE",
    "ARGS_DONE_HAS_NAME",
    "COMPLETED",
    "CREATED",
    "DRIFT_FIELD_NAMES",
    "ERROR",
    "FAILED",
    "INCOMPLETE",
    "IN_PROGRESS",
    "ITEM_ADDED",
    "ITEM_DONE",
    "ITEM_KINDS",
    "ItemModel",
    "MUTATION_LABELS",
    "MUTATORS",
    "MUTATORS_BY_NAME",
    "Mutator",
    "OTHER_ITEM_TYPES",
    "PINNED_REVISION",
    "REVISIONS",
    "TurnModel",
    "UNKNOWN_EVENT_TYPES",
    "UNKNOWN_ITEM_TYPES",
    "arguments_dicts",
    "fragments_of",
    "json_values",
    "m_corrupt_fragment",
    "m_drop",
    "m_failed_terminal",
    "m_identity_swap",
    "m_programmatic_caller",
    "m_replay",
    "m_replay_renumbered",
    "m_retarget_delta",
    "m_swap",
    "m_swap_renumbered",
    "m_truncate",
    "m_unknown_event_type",
    "m_unknown_fields",
    "m_unknown_item_type",
    "mutated_streams",
    "random_model",
    "render",
    "renumber",
    "response_object",
    "schema_instances",
    "strict_tool",
    "turn_models",
    "unknown_fields",
    "valid_streams",
]

# ---------------------------------------------------------------------------
# Hypothesis strategies

_ids = st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E),
               min_size=1, max_size=12)
_names = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)
#: a call's name (the conformance kit may choose others: tool_names)
_call_names = tool_names(_names)
_scalars = (st.none() | st.booleans() | st.integers(-(2**53), 2**53)
            | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8))
json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=8,
)
arguments_dicts = st.dictionaries(st.text(max_size=8), json_values, max_size=4)


@st.composite
def fragments_of(draw: st.DrawFn, text: str) -> list[str]:
    """Split ``text`` into non-empty fragments at drawn cut points."""
    if not text:
        return []
    cuts = draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=8)) if len(
        text) > 1 else set()
    bounds = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


@st.composite
def turn_models(draw: st.DrawFn, *, min_calls: int = 0, max_items: int = 5) -> TurnModel:
    """A valid turn: distinct opaque ids (item ids never equal call ids)."""
    kinds = draw(st.lists(st.sampled_from(ITEM_KINDS), min_size=max(1, min_calls),
                          max_size=max_items))
    missing = min_calls - kinds.count("function_call")
    kinds += ["function_call"] * max(0, missing)
    ids = draw(st.lists(_ids, min_size=2 * len(kinds) + 1, max_size=2 * len(kinds) + 1,
                        unique=True))
    items: list[ItemModel] = []
    for index, kind in enumerate(kinds):
        if kind == "function_call":
            arguments = draw(arguments_dicts)
            text = json.dumps(arguments, ensure_ascii=draw(st.booleans()),
                              separators=draw(st.sampled_from([(",", ":"), (", ", ": ")])))
            items.append(ItemModel(
                kind, ids[2 * index], call_id=ids[2 * index + 1], name=draw(_call_names),
                arguments=arguments, fragments=draw(fragments_of(text)),
                direct_caller=draw(st.booleans())))
        else:
            text = draw(st.text(max_size=12))
            items.append(ItemModel(kind, ids[2 * index], text_fragments=draw(fragments_of(text))))
    return TurnModel(response_id=ids[-1], items=items)


@st.composite
def valid_streams(draw: st.DrawFn, *, min_calls: int = 0, drift: bool = False,
                  revision: str = PINNED_REVISION, realism: str = "hostile",
                  ) -> tuple[TurnModel, list[dict[str, Any]]]:
    """``(model, events)``: a model and one valid rendering of it at ``revision``.

    ``realism`` (:mod:`.realism`): every rendering validates against the openai types
    already (``hostile`` and ``wire`` are the same here: items interleaved, sequence
    numbers with gaps); ``sdk`` renders the API's order (``render(sequential=True)``:
    one item at a time, ``output_item.added`` with the call id, the whole name and
    ``arguments: ""``, then the argument deltas, then done; numbers 0, 1, 2 ...)."""
    check_level(realism)
    model = draw(turn_models(min_calls=min_calls))
    rng = draw(st.randoms(use_true_random=False))
    return model, render(model, rng, in_progress=draw(st.booleans()), drift=drift,
                         revision=revision, sequential=realism == "sdk")


@st.composite
def mutated_streams(draw: st.DrawFn, *, min_calls: int = 1, mutator: str | None = None,
                    revision: str = PINNED_REVISION, realism: str = "hostile",
                    ) -> tuple[TurnModel, Mutator, list[dict[str, Any]]]:
    """``(model, mutator, mutated events)``: the named mutator (any when ``None``)
    applied to a valid stream of ``revision`` and ``realism``; the ``none`` mutator
    when it does not apply."""
    model, events = draw(valid_streams(min_calls=min_calls, revision=revision,
                                       realism=realism))
    chosen = (MUTATORS_BY_NAME[mutator] if mutator is not None
              else draw(st.sampled_from(MUTATORS)))
    rng = draw(st.randoms(use_true_random=False))
    mutated = chosen.apply(events, rng)
    if mutated is None:
        mutated = copy.deepcopy(events)
        chosen = Mutator("none", lambda e, r: e, "ok")
    return model, chosen, mutated


# ---------------------------------------------------------------------------
# Schema-driven drift (hypothesis-jsonschema on the pinned draft-07 event schemas)

# Response snapshots: how many output items to draw. Lifecycle snapshots (created,
# queued, in_progress, completed) contribute only their unknown fields to the drift, so
# their output is drawn empty; a failing terminal is used whole, so its output may list
# items (a failed Response that lists function calls must still release nothing).
# Fewer items only narrow the draw: every instance is still an instance of the
# unmodified pinned schema (the tests check it with Draft7Validator).
_SCHEMA_OUTPUT_ITEMS = {FAILED: 1, INCOMPLETE: 1}


def _generation_schema(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    narrowed = copy.deepcopy(schema)
    response = narrowed.get("properties", {}).get("response")
    if isinstance(response, dict):
        output = response.get("properties", {}).get("output")
        if isinstance(output, dict):
            output["maxItems"] = min(output.get("maxItems", 8),
                                     _SCHEMA_OUTPUT_ITEMS.get(name, 0))
    return narrowed


def schema_instances(schemas: dict[str, dict[str, Any]],
                     ) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """``(event type, instance)``: an instance of one pinned event schema, drawn by
    ``hypothesis_jsonschema.from_schema``, with whatever unknown optional fields the
    schema allows (the drift). The event types are drawn about evenly."""
    from hypothesis_jsonschema import from_schema

    names = sorted(schemas)
    per_type: dict[str, st.SearchStrategy[Any]] = {
        name: from_schema(_generation_schema(name, schema))
        for name, schema in schemas.items()}
    # A wide integer folded onto the names spreads the draw evenly (sampled_from
    # favours its first elements).
    def instance_of(name: str) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
        return per_type[name].map(lambda instance: (name, instance))

    return st.integers(0, 2**20).map(lambda k: names[k % len(names)]).flatmap(instance_of)


# --- one call changed: its identity, its name or its arguments text, everywhere the
# stream carries it (added item, arguments.done, done item, terminal output), so that
# only the change itself is wrong.

_MISSING = object()


def _function_calls(events: list[dict[str, Any]]) -> list[str]:
    """Item ids of the function calls the stream adds (skipping fuzz-overwritten ones)."""
    out: list[str] = []
    for i in indexes(events, ITEM_ADDED):
        item = dict_field(events[i], "item")
        if (item is not None and item.get("type") == "function_call"
                and isinstance(item.get("id"), str) and item["id"] not in out):
            out.append(item["id"])
    return out


def _call_objects(events: list[dict[str, Any]], item_id: str) -> list[dict[str, Any]]:
    """Every object that carries call ``item_id``'s fields: the added and done items
    and its entry in a terminal's output."""
    objects: list[dict[str, Any]] = []
    for event in events:
        kind = event.get("type") if isinstance(event, dict) else None
        if kind in (ITEM_ADDED, ITEM_DONE):
            item = dict_field(event, "item")
            if item is not None and item.get("id") == item_id:
                objects.append(item)
        elif kind in (COMPLETED, FAILED, INCOMPLETE):
            response = dict_field(event, "response")
            output = response.get("output") if response is not None else None
            for raw in output if isinstance(output, list) else []:
                if isinstance(raw, dict) and raw.get("id") == item_id:
                    objects.append(raw)
    return objects


def _set_call_field(events: list[dict[str, Any]], item_id: str, name: str,
                    value: Any) -> None:
    """Set (or, with ``_MISSING``, delete) field ``name`` of call ``item_id`` wherever
    the stream carries it, ``arguments.done``'s ``name`` included."""
    targets = _call_objects(events, item_id)
    if name == "name":
        targets += [e for e in events if isinstance(e, dict) and e.get("type") == ARGS_DONE
                    and e.get("item_id") == item_id and "name" in e]
    for target in targets:
        if value is _MISSING:
            target.pop(name, None)
        else:
            target[name] = value


def _call_mutator(field_name: str, value: Any, *, shared: bool = False) -> Callable[
        [list[dict[str, Any]], random.Random], list[dict[str, Any]] | None]:
    def apply(events: list[dict[str, Any]], rng: random.Random,
              ) -> list[dict[str, Any]] | None:
        calls = _function_calls(events)
        if len(calls) < (2 if shared else 1):
            return None
        out = copy.deepcopy(events)
        first, *rest = rng.sample(calls, len(calls))
        if shared:  # the call takes another call's call_id
            other = next((o.get("call_id") for o in _call_objects(out, rest[0])), None)
            if not isinstance(other, str):
                return None
            _set_call_field(out, first, "call_id", other)
        else:
            _set_call_field(out, first, field_name, value)
        return out
    apply.__doc__ = (f"Give one function call {'another call' if shared else 'its'} "
                     f"{field_name} = {'shared' if shared else repr(value)} everywhere.")
    return apply


m_shared_call_id = _call_mutator("call_id", None, shared=True)
m_missing_call_id = _call_mutator("call_id", _MISSING)
m_empty_call_id = _call_mutator("call_id", "")
m_missing_name = _call_mutator("name", _MISSING)
m_empty_name = _call_mutator("name", "")


def _rewrite_arguments(events: list[dict[str, Any]], item_id: str, text: str | None,
                       rng: random.Random) -> list[dict[str, Any]] | None:
    """Call ``item_id``'s arguments become ``text`` (``None``: absent) in its deltas (cut
    anywhere), ``arguments.done``, done item and terminal output; renumbered."""
    done_at = [i for i in indexes(events, ARGS_DONE) if events[i].get("item_id") == item_id]
    if len(done_at) != 1:
        return None
    bind = {k: events[done_at[0]].get(k) for k in ("item_id", "output_index")}
    pieces: list[str] = []
    if text:
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randrange(3))))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    out: list[dict[str, Any]] = []
    for event in copy.deepcopy(events):
        if isinstance(event, dict) and event.get("item_id") == item_id:
            if event.get("type") == ARGS_DELTA:
                continue
            if event.get("type") == ARGS_DONE:
                out += [{"type": ARGS_DELTA, **bind, "delta": piece} for piece in pieces]
                if text is None:
                    event.pop("arguments", None)
                else:
                    event["arguments"] = text
        out.append(event)
    for target in _call_objects(out, item_id):
        if text is None:
            target.pop("arguments", None)
        elif target.get("status") != "in_progress":  # the added item keeps ""
            target["arguments"] = text
    return renumber(out)


def _arguments_mutator(kind: str) -> Callable[
        [list[dict[str, Any]], random.Random], list[dict[str, Any]] | None]:
    def apply(events: list[dict[str, Any]], rng: random.Random,
              ) -> list[dict[str, Any]] | None:
        calls = _function_calls(events)
        if not calls:
            return None
        item_id = rng.choice(calls)
        if kind == "missing":
            return _rewrite_arguments(events, item_id, None, rng)
        done = next((e for e in events if isinstance(e, dict) and e.get("type") == ARGS_DONE
                     and e.get("item_id") == item_id), {})
        try:
            base = json.loads(done.get("arguments", "{}"))
        except (TypeError, ValueError):
            base = {}
        if kind == "conflicting":
            # The added item already carries an arguments object, and the deltas
            # follow: the item's text would be both (the done forms keep the deltas').
            out = copy.deepcopy(events)
            for i in indexes(out, ITEM_ADDED):
                item = dict_field(out[i], "item")
                if item is not None and item.get("id") == item_id:
                    item["arguments"] = json.dumps({"x_added": rng.randrange(10)})
            return out
        bad = random_bad_arguments(kind, base if isinstance(base, dict) else {}, rng)
        return _rewrite_arguments(events, item_id, bad.text, rng)
    apply.__doc__ = f"One function call's arguments text: {kind.replace('_', ' ')}."
    return apply


def m_non_tool_terminal(events: list[dict[str, Any]], rng: random.Random,
                        ) -> list[dict[str, Any]] | None:
    """A ``response.completed`` that contradicts itself: a status other than
    ``completed``, or a non-null ``error`` / ``incomplete_details`` (the Response
    types' shapes)."""
    out = copy.deepcopy(events)
    last = out[-1] if out else None
    response = dict_field(last, "response")
    if last is None or response is None or last.get("type") != COMPLETED:
        return None
    choice = rng.randrange(3)
    if choice == 0:
        response["status"] = rng.choice(["cancelled", "failed", "incomplete", "in_progress",
                                         "queued"])
    elif choice == 1:
        response["error"] = {"code": "server_error", "message": "The model failed."}
    else:
        response["incomplete_details"] = {"reason": rng.choice(["max_output_tokens",
                                                                 "content_filter"])}
    return out


def m_event_after_terminal(events: list[dict[str, Any]], rng: random.Random,
                           ) -> list[dict[str, Any]] | None:
    """One more event after ``response.completed`` (nothing may follow the terminal)."""
    last = events[-1] if events else None
    response = dict_field(last, "response")
    if last is None or response is None or last.get("type") != COMPLETED:
        return None
    out = copy.deepcopy(events)
    output = response.get("output")
    # the late call takes a name the turn's own calls carry (a name the caller knows:
    # the point is its place after the terminal, not its name)
    names = [i["name"] for i in output if isinstance(i, dict) and i.get("type") == "function_call"
             and isinstance(i.get("name"), str)] if isinstance(output, list) else []
    late: dict[str, Any] = rng.choice([
        {"type": IN_PROGRESS, "response": {**copy.deepcopy(response), "status": "in_progress",
                                           "output": []}},
        {"type": ERROR, "code": "server_error", "message": "boom", "param": None},
        {"type": ITEM_ADDED, "output_index": len(output) if isinstance(output, list) else 0,
         "item": {"id": "late-item", "type": "function_call", "status": "in_progress",
                  "call_id": "late-call", "name": names[0] if names else "late",
                  "arguments": ""}},
    ])
    out.append(late)
    return renumber(out)


def m_conflicting_response_id(events: list[dict[str, Any]], rng: random.Random,
                              ) -> list[dict[str, Any]] | None:
    """A later Response snapshot (in_progress or the terminal) names another id."""
    candidates = [i for i in indexes(events, IN_PROGRESS, COMPLETED)
                  if isinstance((dict_field(events[i], "response") or {}).get("id"), str)]
    if not candidates:
        return None
    out = copy.deepcopy(events)
    response = out[rng.choice(candidates)]["response"]
    response["id"] = response["id"] + "-other"
    return out


#: The model's mutators (hypothesis-free, also the fuzz target's) and those that change
#: one call's identity, name or arguments, or the terminal's verdict.
MUTATORS: tuple[Mutator, ...] = (
    *MODEL_MUTATORS,
    Mutator("non_tool_terminal", m_non_tool_terminal, "error", ("ProtocolViolation",)),
    Mutator("event_after_terminal", m_event_after_terminal, "error", ("ProtocolViolation",)),
    Mutator("conflicting_response_id", m_conflicting_response_id, "error",
            ("ProtocolViolation",)),
    Mutator("shared_call_id", m_shared_call_id, "error", ("ProtocolViolation",)),
    Mutator("missing_call_id", m_missing_call_id, "error", ("ProtocolViolation",)),
    Mutator("empty_call_id", m_empty_call_id, "error", ("ProtocolViolation",)),
    Mutator("missing_name", m_missing_name, "error", ("ProtocolViolation",)),
    Mutator("empty_name", m_empty_name, "error", ("ProtocolViolation",)),
    Mutator("missing_arguments", _arguments_mutator("missing"), "error",
            ("ProtocolViolation",)),
    Mutator("conflicting_arguments", _arguments_mutator("conflicting"), "error",
            ("ProtocolViolation",)),
    Mutator("non_object_arguments", _arguments_mutator("non_object"), "error",
            ("ProtocolViolation",)),
    Mutator("non_finite_arguments", _arguments_mutator("non_finite"), "error",
            ("StrictJSONError",)),
    Mutator("duplicate_key_arguments", _arguments_mutator("duplicate_key"), "error",
            ("StrictJSONError",)),
    Mutator("non_strict_arguments", _arguments_mutator("non_strict"), "error",
            ("StrictJSONError", "LimitExceeded")),
)
MUTATORS_BY_NAME = {m.name: m for m in MUTATORS}
MUTATION_LABELS: dict[str, tuple[str, str]] = {
    **MODEL_MUTATION_LABELS,
    "non_tool_terminal": ("safety", "terminal"),
    "event_after_terminal": ("safety", "terminal"),
    # The terminal names another Response: a spliced stream (its calls unchanged).
    "conflicting_response_id": ("strictness", "drift"),
    **call_mutation_labels(without=frozenset({"invalid_json_arguments"})),
}
#: Mutators whose stream still names the model's calls unambiguously when it keeps its
#: ``response.completed`` (a reorder, a replay, a dropped or corrupted event, an
#: identity swap): a parser may release exactly those calls. Every other one changes
#: what a call is (its id, name or arguments) or the terminal's verdict.
SAME_CALLS: frozenset[str] = frozenset({
    "swap", "swap_renumbered", "replay", "replay_renumbered", "truncate", "drop",
    "corrupt_fragment", "identity_swap", "retarget_delta", "unknown_fields",
    "unknown_item_type", "unknown_event_type", "programmatic_caller",
    "conflicting_response_id",
})
