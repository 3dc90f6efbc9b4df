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
from typing import Any

from hypothesis import strategies as st

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
    MUTATION_LABELS,
    MUTATORS,
    MUTATORS_BY_NAME,
    OTHER_ITEM_TYPES,
    PINNED_REVISION,
    REVISIONS,
    UNKNOWN_EVENT_TYPES,
    UNKNOWN_ITEM_TYPES,
    ItemModel,
    Mutator,
    TurnModel,
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
                kind, ids[2 * index], call_id=ids[2 * index + 1], name=draw(_names),
                arguments=arguments, fragments=draw(fragments_of(text)),
                direct_caller=draw(st.booleans())))
        else:
            text = draw(st.text(max_size=12))
            items.append(ItemModel(kind, ids[2 * index], text_fragments=draw(fragments_of(text))))
    return TurnModel(response_id=ids[-1], items=items)


@st.composite
def valid_streams(draw: st.DrawFn, *, min_calls: int = 0, drift: bool = False,
                  revision: str = PINNED_REVISION,
                  ) -> tuple[TurnModel, list[dict[str, Any]]]:
    """``(model, events)``: a model and one valid rendering of it at ``revision``."""
    model = draw(turn_models(min_calls=min_calls))
    rng = draw(st.randoms(use_true_random=False))
    return model, render(model, rng, in_progress=draw(st.booleans()), drift=drift,
                         revision=revision)


@st.composite
def mutated_streams(draw: st.DrawFn, *, min_calls: int = 1, mutator: str | None = None,
                    revision: str = PINNED_REVISION,
                    ) -> tuple[TurnModel, Mutator, list[dict[str, Any]]]:
    """``(model, mutator, mutated events)``: the named mutator (any when ``None``)
    applied to a valid stream of ``revision``; the ``none`` mutator when it does not
    apply."""
    model, events = draw(valid_streams(min_calls=min_calls, revision=revision))
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


