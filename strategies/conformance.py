"""Conformance scenarios: this project's turn models and mutations, aimed at any parser.

A *scenario* is one stream (valid, or mutated by one of the named mutators of
``strategies/<provider>.py``) together with what ANY parser of that API must do with
it. The expectation comes from the turn model the strategy generated (what the
stream was rendered from) and the mutation's label, never from this project's
parser or its error classes:

* ``valid``: a complete turn; the parser must return exactly the turn's calls
  (ids, names, argument objects; order-insensitive) -- or none when the turn does
  not ask for any;
* ``safety``: the stream is not a complete, unambiguous tool-call turn (truncated,
  missing, early, failed or conflicting terminal, overlapping or reused blocks,
  conflicting replays, id confusion, broken arguments, a non-tool terminal);
  releasing any call is a violation, except where the stream still names the
  turn's calls unambiguously (an identical replay, a reorder): there, nothing or
  exactly the turn's calls;
* ``strictness``: this project's own fail-closed policy (unknown fields and types,
  usage regressions, envelope drift); checked only when asked for (``strict``).

Tool names: by default every generated call is named by an identifier
(``[A-Za-z_][A-Za-z0-9_]*``, at most 32 characters), the names an agent framework
registers; ``tool_names=[...]`` draws every call's name from that list (an agent
framework that runs only registered tools needs no second pass to learn them);
``tool_names=HOSTILE_NAMES`` keeps each strategies module's own names (arbitrary
Unicode for Chat Completions), for a hostile run. No mutation renames a call to a
name outside the list, except ``missing_name`` and ``empty_name``, whose point it is.

Realism (:mod:`pcfuzz.strategies.realism`): ``realism="sdk"`` (the default) draws
only streams the providers send, ``"wire"`` anything the official SDK types accept,
``"hostile"`` each strategies module's adversarial shapes; a mutated stream is drawn
on a base stream of the level, and every scenario records its level.

The labels live next to the mutators (``MUTATION_LABELS`` in each strategies
module), so the kit and the project's own property tests share one set of models
and mutations. The runner (``pcfuzz.conform.kit``) drives these strategies with
hypothesis, so a violation is shrunk to a minimal stream.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import strategies as st

from pcfuzz.contracts.registry import NAMES
from pcfuzz.strategies import anthropic_messages as am
from pcfuzz.strategies import gemini_interactions as gi
from pcfuzz.strategies import openai_chat as oc
from pcfuzz.strategies import openai_responses as orsp
from pcfuzz.strategies.realism import DEFAULT as DEFAULT_REALISM
from pcfuzz.strategies.realism import LEVELS as REALISM_LEVELS
from pcfuzz.strategies.realism import check_level
from pcfuzz.strategies.tool_names import identifiers, with_tool_names

__all__ = [
    "CONTRACTS",
    "REVISIONS",
    "LABELS",
    "EXPECTATIONS",
    "HOSTILE_NAMES",
    "DEFAULT_REALISM",
    "REALISM_LEVELS",
    "Scenario",
    "families",
    "family_labels",
    "scenarios",
    "mutation_labels",
    "mutation_scenarios",
    "name_strategy",
    "family_mutations",
    "check",
    "calls_equal",
    "normalize_calls",
    "MalformedOutput",
]

CONTRACTS: tuple[str, ...] = NAMES
#: The contract revision every scenario of a contract is drawn at: the newest one each
#: strategies module models (its own ``REVISIONS``, never the parser's tables), i.e.
#: the shapes the APIs serve today and the revision the parsers read by default. A
#: mutation labelled unknown is unknown in this revision (a test checks these equal
#: the parsers' default ``REVISION``).
REVISIONS: dict[str, str] = {
    "openai-responses": orsp.REVISIONS[-1],
    "anthropic-messages": am.REVISIONS[-1],
    "gemini-interactions": gi.REVISIONS[-1],
    "openai-chat": oc.REVISIONS[-1],
}
LABELS: tuple[str, ...] = ("valid", "safety", "strictness")
#: ``calls``: exactly the turn's calls; ``nothing``: no call released (raising or
#: returning ``[]``); ``nothing_or_calls``: either of the two.
EXPECTATIONS: tuple[str, ...] = ("calls", "nothing", "nothing_or_calls")

Call = dict[str, Any]


@dataclass(frozen=True)
class Scenario:
    """One stream and what any parser must do with it.

    ``expect`` is checked by default, ``strict_expect`` with ``strict``; ``None``
    means not checked in that mode. ``calls`` are the turn's calls as the model
    generated them (what a complete stream releases).
    """

    contract: str
    family: str
    mutation: str
    label: str
    events: list[Any]
    calls: list[Call] = field(default_factory=list)
    expect: str | None = "calls"
    strict_expect: str | None = "calls"
    #: the realism level of the stream (:mod:`pcfuzz.strategies.realism`): a mutated
    #: stream's is its base stream's
    realism: str = "hostile"

    def expectation(self, strict: bool) -> str | None:
        return self.strict_expect if strict else self.expect

    def to_json(self) -> dict[str, Any]:
        return {
            "contract": self.contract,
            "family": self.family,
            "mutation": self.mutation,
            "label": self.label,
            "expect": self.expect,
            "strict_expect": self.strict_expect,
            "calls": self.calls,
            "events": self.events,
            "realism": self.realism,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Scenario:
        return cls(
            contract=str(data["contract"]),
            family=str(data["family"]),
            mutation=str(data["mutation"]),
            label=str(data["label"]),
            events=list(data["events"]),
            calls=[dict(c) for c in data["calls"]],
            expect=data["expect"],
            strict_expect=data["strict_expect"],
            # saved before the levels existed: the generators were today's hostile ones
            realism=str(data.get("realism", "hostile")),
        )


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> Call:
    return {"call_id": call_id, "name": name, "arguments": arguments}


def _mutated(contract: str, name: str, label: str, family: str, events: list[Any],
             calls: list[Call], *, exact_ok: bool = False, exact_ok_strict: bool = False,
             ) -> Scenario:
    """A mutated stream: ``safety`` is checked always, ``strictness`` only if strict."""
    loose = "nothing_or_calls" if exact_ok else "nothing"
    tight = "nothing_or_calls" if exact_ok_strict else "nothing"
    return Scenario(contract, family, name, label, events, calls,
                    expect=loose if label == "safety" else None, strict_expect=tight)


def _valid(contract: str, family: str, events: list[Any], calls: list[Call],
           *, requested: bool) -> Scenario:
    """A complete stream; ``requested``: the turn asks for its calls to be executed
    (otherwise a turn with calls is a safety scenario: release nothing)."""
    if calls and not requested:
        return Scenario(contract, family, "calls_not_requested", "safety", events, calls,
                        expect="nothing", strict_expect="nothing")
    return Scenario(contract, family, "none", "valid", events, calls if requested else [])


# --------------------------------------------------------------------- anthropic


def _anthropic_calls(turn: am.TurnModel) -> list[Call]:
    return [
        _call(b.fields["id"], b.fields["name"], json.loads(b.stream_text) if b.stream_text else {})
        for b in turn.blocks
        if b.kind == "tool_use"
    ]


def _anthropic_valid(family: str, realism: str) -> st.SearchStrategy[Scenario]:
    def build(case: tuple[am.TurnModel, list[Any]]) -> Scenario:
        turn, events = case
        return _valid("anthropic-messages", family, events, _anthropic_calls(turn),
                      requested=turn.stop_reason == "tool_use")

    revision = REVISIONS["anthropic-messages"]
    if family == "interleaved":
        return am.valid_streams(stop_reason="tool_use", require_client=True,
                                revision=revision, realism=realism).filter(
            lambda c: len(_anthropic_calls(c[0])) >= 2).map(build)
    return am.valid_streams(revision=revision, realism=realism).map(build)


def _anthropic_mutation(name: str, realism: str) -> st.SearchStrategy[Scenario]:
    label, family = am.MUTATION_LABELS[name]
    return am.mutated_streams(name, tool_turn=True, revision=REVISIONS["anthropic-messages"],
                              realism=realism).map(
        lambda m: _mutated("anthropic-messages", name, label, family, m.events, []))


# --------------------------------------------------------------------- responses


def _responses_calls(model: orsp.TurnModel) -> list[Call]:
    return [_call(c[0], c[1], c[2]) for c in model.expected_calls()]


def _responses_valid(family: str, realism: str) -> st.SearchStrategy[Scenario]:
    return orsp.valid_streams(min_calls=2 if family == "interleaved" else 0,
                              revision=REVISIONS["openai-responses"], realism=realism).map(
        lambda c: _valid("openai-responses", family, c[1], _responses_calls(c[0]),
                         requested=True))


def _has_completed(events: list[Any]) -> bool:
    return any(isinstance(e, dict) and e.get("type") == orsp.COMPLETED for e in events)


def _responses_mutation(name: str, realism: str) -> st.SearchStrategy[Scenario]:
    label, family = orsp.MUTATION_LABELS[name]
    min_calls = 2 if name in ("retarget_delta", "shared_call_id") else 1

    def build(case: tuple[orsp.TurnModel, orsp.Mutator, list[Any]]) -> Scenario:
        model, mutator, events = case
        calls = _responses_calls(model)
        if mutator.name == "none":  # not applicable to this stream: a valid one
            return _valid("openai-responses", family, events, calls, requested=True)
        if mutator.expectation == "ok":  # tolerated: the exact calls
            return Scenario("openai-responses", family, name, label, events, calls,
                            expect="calls" if label == "safety" else None,
                            strict_expect="calls")
        # Without its completed terminal no stream may release anything; with it,
        # a reorder, replay or contradiction that still names the model's calls
        # may release exactly those (this project rejects them: --strict). A mutation
        # of what a call is (id, name, arguments) or of the terminal's verdict may not.
        exact_ok = _has_completed(events) and name in orsp.SAME_CALLS
        return _mutated("openai-responses", name, label, family, events, calls,
                        exact_ok=exact_ok,
                        exact_ok_strict=exact_ok and mutator.expectation == "either")

    return orsp.mutated_streams(min_calls=min_calls, mutator=name,
                                revision=REVISIONS["openai-responses"],
                                realism=realism).map(build)


# --------------------------------------------------------------------- gemini


def _gemini_calls(rendered: gi.RenderedStream) -> list[Call]:
    return [_call(*c) for c in rendered.expected_calls()]


def _gemini_valid(family: str, realism: str) -> st.SearchStrategy[Scenario]:
    return gi.rendered_streams(min_calls=2 if family == "interleaved" else 0,
                               revision=REVISIONS["gemini-interactions"],
                               realism=realism).map(
        lambda r: _valid("gemini-interactions", family, r.events, _gemini_calls(r),
                         requested=True))


@st.composite
def _gemini_mutated(draw: st.DrawFn, name: str, realism: str) -> Scenario:
    label, family = gi.MUTATION_LABELS[name]
    # A turn that asks for its calls (requires_action): the continuation status of a
    # later revision is non_tool_terminal's case, not every mutation's background.
    model = draw(gi.turn_models(min_calls=2 if name == "shared_call_id" else 1,
                                revision=REVISIONS["gemini-interactions"],
                                allow_continuation=False, realism=realism))
    if name.startswith("replayed"):
        model.with_event_ids = True
    rendered = draw(gi.rendered_streams(model))
    calls = _gemini_calls(rendered)
    mutator: Callable[[gi.RenderedStream], st.SearchStrategy[list[Any]]] = gi.MUTATORS[name]
    events = draw(mutator(rendered))
    same = name == "replayed_same"  # an identical redelivery: the contract dedupes it
    return _mutated("gemini-interactions", name, label, family, events, calls,
                    exact_ok=same, exact_ok_strict=same)


# --------------------------------------------------------------------- chat


def _chat_calls(model: oc.CompletionModel) -> list[Call]:
    return [_call(t.call_id, t.name, json.loads(t.arguments))
            for t in sorted(model.tools, key=lambda t: t.index) if t.arguments_is_object]


@st.composite
def _executable_chat_models(draw: st.DrawFn, min_tools: int = 1) -> oc.CompletionModel:
    """A completion that releases its calls: tools whose arguments are JSON objects,
    ``finish_reason`` ``tool_calls``."""
    model = draw(oc.completion_models())
    tools = draw(oc.tool_models().filter(lambda t: len(t) >= min_tools))
    tools = tuple(
        replace(t, arguments=json.dumps(draw(oc.json_objects), ensure_ascii=draw(st.booleans())),
                arguments_is_object=True)
        for t in tools
    )
    return replace(model, tools=tools, finish_reason="tool_calls")


def _chat_valid(family: str, realism: str) -> st.SearchStrategy[Scenario]:
    def build(rendered: oc.RenderedStream) -> Scenario:
        model = rendered.model
        calls = [_call(t.call_id, t.name, json.loads(t.arguments) if t.arguments_is_object
                       else {}) for t in sorted(model.tools, key=lambda t: t.index)]
        return _valid("openai-chat", family, rendered.frames, calls, requested=model.executable)

    revision = REVISIONS["openai-chat"]
    if family == "interleaved":
        return _executable_chat_models(min_tools=2).flatmap(
            lambda m: oc.rendered_streams(m, revision=revision, realism=realism)).map(build)
    return oc.rendered_streams(revision=revision, realism=realism).map(build)


def _chat_mutation(name: str, realism: str) -> st.SearchStrategy[Scenario]:
    label, family = oc.MUTATION_LABELS[name]
    models = _executable_chat_models(
        min_tools=2 if name in ("duplicate_tool_id", "shared_call_id") else 1)
    return oc.mutated_streams(kinds=(name,), models=models,
                              revision=REVISIONS["openai-chat"], realism=realism).map(
        lambda m: _mutated("openai-chat", name, label, family, m[1], []))


# --------------------------------------------------------------------- families

_LABEL_TABLES: dict[str, dict[str, tuple[str, str]]] = {
    "anthropic-messages": am.MUTATION_LABELS,
    "openai-responses": orsp.MUTATION_LABELS,
    "gemini-interactions": gi.MUTATION_LABELS,
    "openai-chat": oc.MUTATION_LABELS,
}
_VALID: dict[str, Callable[[str, str], st.SearchStrategy[Scenario]]] = {
    "anthropic-messages": _anthropic_valid,
    "openai-responses": _responses_valid,
    "gemini-interactions": _gemini_valid,
    "openai-chat": _chat_valid,
}
_MUTATION: dict[str, Callable[[str, str], st.SearchStrategy[Scenario]]] = {
    "anthropic-messages": _anthropic_mutation,
    "openai-responses": _responses_mutation,
    "gemini-interactions": _gemini_mutated,
    "openai-chat": _chat_mutation,
}
#: Families made of valid streams only (the correct-output checks).
VALID_FAMILIES: tuple[str, ...] = ("valid", "interleaved")


def family_mutations(contract: str, family: str, *, strict: bool = False) -> list[str]:
    """The mutations whose scenarios a family holds in this mode (safety ones only,
    unless ``strict``)."""
    return [name for name, (label, fam) in _LABEL_TABLES[contract].items()
            if fam == family and (strict or label == "safety")]


def families(contract: str, *, strict: bool = False) -> list[str]:
    """The scenario families of ``contract`` checked in this mode, in run order:
    ``valid``, ``interleaved``, then one per mutation family (``truncation``,
    ``terminal``, ``replay``, ...; the ``strictness`` ones only with ``strict``)."""
    out = list(VALID_FAMILIES)
    for label, fam in _LABEL_TABLES[contract].values():
        if fam not in out and (strict or label == "safety"):
            out.append(fam)
    return out


def family_labels(contract: str, family: str) -> list[str]:
    """The labels of the scenarios a family holds (for reports)."""
    if family in VALID_FAMILIES:
        labels = {"valid", "safety"}
    else:
        labels = set()
    labels |= {label for label, fam in _LABEL_TABLES[contract].values() if fam == family}
    return [label for label in LABELS if label in labels]


def mutation_labels(contract: str) -> dict[str, tuple[str, str]]:
    """Every mutation of ``contract``: its name -> ``(label, family)``."""
    return dict(_LABEL_TABLES[contract])


def mutation_scenarios(contract: str, mutation: str, *,
                       realism: str = DEFAULT_REALISM) -> st.SearchStrategy[Scenario]:
    """The scenarios of one mutation (a name of the contract's ``MUTATION_LABELS``),
    drawn on base streams of ``realism``."""
    if mutation not in _LABEL_TABLES.get(contract, {}):
        raise ValueError(f"{contract} has no mutation {mutation!r}")
    return _at(_MUTATION[contract](mutation, check_level(realism)), realism)


def _at(inner: st.SearchStrategy[Scenario], realism: str) -> st.SearchStrategy[Scenario]:
    """``inner``'s scenarios, marked with the level they were drawn at."""
    return inner.map(lambda s: replace(s, realism=realism))


#: ``tool_names=HOSTILE_NAMES``: each strategies module's own call names (arbitrary
#: Unicode for Chat Completions), not identifiers.
HOSTILE_NAMES = "hostile"


def name_strategy(tool_names: Sequence[str] | str | None) -> st.SearchStrategy[str] | None:
    """The call names of :func:`scenarios`' ``tool_names`` (``None``: the strategies
    modules' own)."""
    if tool_names == HOSTILE_NAMES:
        return None
    if tool_names is None:
        return identifiers
    if isinstance(tool_names, str) or not tool_names:
        raise ValueError(f"tool_names must be a non-empty list of names, got {tool_names!r}")
    return st.sampled_from(tuple(tool_names))


def scenarios(contract: str, family: str, *, strict: bool = False,
              mutations: Collection[str] | None = None, valid: bool = True,
              tool_names: Sequence[str] | str | None = None,
              realism: str = DEFAULT_REALISM) -> st.SearchStrategy[Scenario]:
    """Scenarios of one family (see :func:`families`).

    ``mutations``: only these of the family's mutations (default: all of them in
    this mode); ``valid=False`` leaves out the valid streams of the ``valid`` and
    ``interleaved`` families. ``tool_names``: the names every call is drawn from (a
    list; default: identifiers; :data:`HOSTILE_NAMES`: each module's own).
    ``realism``: how realistic the streams are (:mod:`pcfuzz.strategies.realism`:
    ``sdk``, the default, ``wire`` or ``hostile``); a mutation is drawn on a base
    stream of that level."""
    check_level(realism)
    if contract not in _LABEL_TABLES:
        raise ValueError(f"unknown contract {contract!r}; known: {', '.join(CONTRACTS)}")
    if family not in families(contract, strict=True):
        raise ValueError(f"{contract} has no scenario family {family!r}"
                         f" (known: {', '.join(families(contract, strict=True))})")
    names = name_strategy(tool_names)
    parts: list[st.SearchStrategy[Scenario]] = []
    if family in VALID_FAMILIES and valid:
        parts.append(_VALID[contract](family, realism))
    held = family_mutations(contract, family, strict=strict)
    if mutations is not None:
        stray = sorted(set(mutations) - set(held))
        if stray:
            raise ValueError(f"{contract} family {family!r} holds no mutation "
                             f"{', '.join(stray)} in this mode")
        held = [name for name in held if name in mutations]
    parts += [_MUTATION[contract](name, realism) for name in held]
    if not parts:
        raise ValueError(f"{contract} family {family!r} holds no scenario with this "
                         "selection")
    return with_tool_names(_at(st.one_of(parts), realism), names)


# --------------------------------------------------------------------- the oracle


class MalformedOutput(ValueError):
    """The adapter returned something that is not a list of calls."""


def normalize_calls(value: Any) -> list[Call]:
    """Check an adapter's return value: a list (or tuple) of
    ``{"call_id": str, "name": str, "arguments": dict}``; raise MalformedOutput."""
    if not isinstance(value, (list, tuple)):
        raise MalformedOutput(f"expected a list of calls, got {type(value).__name__}")
    out: list[Call] = []
    for n, call in enumerate(value):
        if not isinstance(call, dict) or set(call) != {"call_id", "name", "arguments"}:
            shown = sorted(call) if isinstance(call, dict) else type(call).__name__
            raise MalformedOutput(
                f"call {n}: expected a dict with exactly call_id, name, arguments, got {shown}")
        if type(call["call_id"]) is not str or type(call["name"]) is not str:
            raise MalformedOutput(f"call {n}: call_id and name must be str")
        if not isinstance(call["arguments"], dict):
            raise MalformedOutput(
                f"call {n}: arguments must be a dict, got {type(call['arguments']).__name__}")
        out.append({"call_id": call["call_id"], "name": call["name"],
                    "arguments": call["arguments"]})
    return out


def _same_json(a: Any, b: Any) -> bool:
    """JSON equality that tells ``True`` from ``1`` and ``1`` from ``1.0`` (key order
    does not matter). Iterative."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(x, dict):
            if set(x) != set(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif x != y:
            return False
    return True


def calls_equal(got: list[Call], want: list[Call]) -> bool:
    """The same calls, in any order."""
    if len(got) != len(want):
        return False
    left = sorted(got, key=lambda c: (c["call_id"], c["name"]))
    right = sorted(want, key=lambda c: (c["call_id"], c["name"]))
    return all(g["call_id"] == w["call_id"] and g["name"] == w["name"]
               and _same_json(g["arguments"], w["arguments"])
               for g, w in zip(left, right, strict=True))


EXPECTED_TEXT: dict[str, str] = {
    "calls": "exactly the turn's calls",
    "nothing": "no call released (raise, or return [])",
    "nothing_or_calls": "no call released, or exactly the turn's calls",
}


def check(scenario: Scenario, outcome: Any, *, strict: bool = False) -> str | None:
    """The violated invariant, or ``None``.

    ``outcome`` is what the adapter returned, or the exception it raised (a
    :class:`BaseException` instance: the parser rejected the stream).
    """
    expect = scenario.expectation(strict)
    if expect is None:
        return None
    if isinstance(outcome, BaseException):
        if expect == "calls":
            return "a complete, valid turn must release exactly its calls, but the parser rejected it"
        return None
    if expect == "calls" or not isinstance(outcome, (list, tuple)) or not outcome:
        try:
            got = normalize_calls(outcome)
        except MalformedOutput as exc:
            return f"the adapter must return a list of calls: {exc}"
        if expect != "calls":
            return None  # nothing released
        if not calls_equal(got, scenario.calls):
            return "a complete, valid turn must release exactly its calls (ids, names, arguments)"
        return None
    # Something was released where nothing may be: a violation whatever its shape (a
    # call without an id is released as much as one with an id).
    if expect == "nothing_or_calls":
        try:
            if calls_equal(normalize_calls(outcome), scenario.calls):
                return None
        except MalformedOutput:
            pass
    if scenario.label == "strictness":
        return f"this project's fail-closed policy rejects {scenario.mutation}, but calls were released"
    if expect == "nothing_or_calls":
        return (f"{scenario.mutation}: a stream that is not a complete valid turn may release "
                "nothing or exactly the turn's calls, but other calls were released")
    return (f"{scenario.mutation}: a stream that is not a complete valid tool-call turn must "
            "release no call, but calls were released")
