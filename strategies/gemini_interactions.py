"""Hypothesis strategies for Gemini Interactions v1 event streams.

An independent model of the protocol: this module never imports the parser's tables
or helpers. A :class:`TurnModel` of one contract revision (steps of every v1 type of
that revision, function calls with arguments; at 2026-12-01 also the server-side steps
and the ``queued`` / ``requires_continuation`` statuses, and every hosted step in the
field sets of that revision's SDK types) is rendered to a valid
typed-SSE-projection event list with arbitrary int32 indexes, optional ``event_id``s,
optional status updates and optional usage fields. :data:`TERMINAL_OUTCOMES` says what
each terminal status does in each revision. Mutators produce the attack classes:
replays (same id, same payload / other payload), truncation, steps and statuses outside
the revision, v1beta-only shapes, absent ``arguments``.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from pcfuzz.strategies.call_mutation_labels import CALL_MUTATION_LABELS, call_mutation_labels
from pcfuzz.strategies.hostile_arguments import bad_arguments
from pcfuzz.strategies.realism import check_level
from pcfuzz.strategies.tool_names import tool_names

# The stable v1 Step discriminators, written down here independently of the parser.
V1_STEP_TYPES: tuple[str, ...] = (
    "user_input",
    "model_output",
    "thought",
    "function_call",
    "function_result",
    "code_execution_call",
    "code_execution_result",
    "url_context_call",
    "url_context_result",
    "google_search_call",
    "google_search_result",
    "file_search_call",
    "file_search_result",
    "google_maps_call",
    "google_maps_result",
)
HOSTED_STEP_TYPES = V1_STEP_TYPES[5:]
#: The contract revisions this model renders, the pinned one first, and what each adds
#: (written down from the google-genai types, not read from the parser's tables):
#: 3.6.1's Step union has six more server-side steps, its InteractionStatus ``queued``
#: (non-terminal) and ``requires_continuation`` (a continuation: nothing released).
PINNED_REVISION = "2026-07-21"
REVISIONS = ("2026-07-21", "2026-12-01")
LATER_HOSTED_STEP_TYPES: dict[str, tuple[str, ...]] = {
    "2026-07-21": (),
    "2026-12-01": ("processing_call", "processing_result", "retrieval_call",
                   "retrieval_result", "tool_search_call", "tool_search_result"),
}
NON_TERMINAL_STATUSES: dict[str, tuple[str, ...]] = {
    "2026-07-21": ("in_progress",),
    "2026-12-01": ("in_progress", "queued"),
}
CONTINUATION_STATUSES: dict[str, tuple[str, ...]] = {
    "2026-07-21": (),
    "2026-12-01": ("requires_continuation",),
}
_ALL_LATER_HOSTED = frozenset(t for types in LATER_HOSTED_STEP_TYPES.values() for t in types)
#: Whether ``revision`` renders the pinned hosted steps (``code_execution_*`` ...
#: ``google_maps_*``) in the field sets its SDK types define. 2026-12-01: google-genai
#: 3.6.1 (``<type>step.py``, ``<type>delta.py``); 2026-07-21 keeps an opaque rendering
#: (discriminator and id, a made-up ``payload`` delta: its SDK is not the installed one,
#: the named difference ``opaque-hosted-steps`` of ``sdk_oracles``).
TYPED_HOSTED_STEPS: dict[str, bool] = {"2026-07-21": False, "2026-12-01": True}
V1BETA_ONLY_STEP_TYPES = ("mcp_server_tool_call", "mcp_server_tool_result")
V1BETA_ONLY_DELTA_TYPES = ("mcp_server_tool_call", "retrieval_call", "retrieval_result")
TERMINAL_FAILURES = ("failed", "cancelled", "incomplete")
UNPINNED_STATUSES = ("budget_exceeded", "paused", "COMPLETED", "")
#: Statuses no shipped revision knows (the fail-closed probe of every revision).
UNKNOWN_STATUSES = ("paused", "COMPLETED", "")

#: What a terminal (``interaction.completed``) status means in each revision, written
#: down from the InteractionStatus docs of each pinned SDK (not from the parser):
#: ``release`` (the turn's function calls, only with at least one call), ``answer``
#: (accepted, only without calls), ``continuation`` (accepted, nothing released),
#: ``provider`` (the provider failed: ProviderError), ``unsupported`` (no meaning for
#: a terminal: UnsupportedProviderState), ``protocol`` (a non-terminal status used as
#: a terminal: ProtocolViolation). A status missing from a revision's table is
#: unknown there (UnsupportedProviderState naming the drift if a later revision knows it).
TERMINAL_OUTCOMES: dict[str, dict[str, str]] = {
    "2026-07-21": {
        "requires_action": "release", "completed": "answer", "failed": "provider",
        "cancelled": "provider", "incomplete": "provider", "in_progress": "protocol",
    },
    "2026-12-01": {
        "requires_action": "release", "completed": "answer", "failed": "provider",
        "cancelled": "provider", "incomplete": "provider", "in_progress": "protocol",
        "queued": "protocol", "requires_continuation": "continuation",
        "budget_exceeded": "provider", "idle": "unsupported",
    },
}
#: Every status some shipped revision knows: probing a revision with the others checks
#: that an older revision fails closed on a newer status.
ALL_KNOWN_STATUSES = tuple(sorted({s for t in TERMINAL_OUTCOMES.values() for s in t}))


def failure_statuses(revision: str) -> tuple[str, ...]:
    """Terminal statuses that are the provider's failure at ``revision`` (nothing runs)."""
    return tuple(s for s, m in TERMINAL_OUTCOMES[revision].items() if m == "provider")


def non_tool_statuses(revision: str) -> tuple[str, ...]:
    """Statuses ``revision`` knows that are neither ``requires_action`` nor a failure:
    as the terminal of a turn with calls, none releases them (a final answer, a
    continuation, no meaning, a non-terminal status)."""
    return tuple(s for s, m in TERMINAL_OUTCOMES[revision].items()
                 if m in ("answer", "continuation", "unsupported", "protocol"))


def unknown_statuses(revision: str) -> tuple[str, ...]:
    """Statuses ``revision`` does not know: no shipped revision's, or another
    revision's only (a later one's, under an older revision)."""
    others = sorted(set(ALL_KNOWN_STATUSES) - set(TERMINAL_OUTCOMES[revision]))
    return (*UNKNOWN_STATUSES, *others)


def step_types(revision: str) -> tuple[str, ...]:
    """The Step discriminators of ``revision``'s union."""
    return V1_STEP_TYPES + LATER_HOSTED_STEP_TYPES[revision]


def foreign_step_types(revision: str) -> tuple[str, ...]:
    """Step types outside ``revision``'s union: v1beta-only, unknown, and (for an older
    revision) the steps a later revision added."""
    later = tuple(sorted(_ALL_LATER_HOSTED - set(LATER_HOSTED_STEP_TYPES[revision])))
    return (*V1BETA_ONLY_STEP_TYPES, "mcp_tool_call", "computer_use_call", "FUNCTION_CALL",
            "function", *later)


def terminal_outcome(revision: str, status: str, n_calls: int) -> str:
    """What a terminal ``status`` does at ``revision`` for a turn with ``n_calls`` calls:
    ``accepted`` (released or not) or the name of the error class."""
    meaning = TERMINAL_OUTCOMES[revision].get(status)
    if meaning == "release":
        return "accepted" if n_calls else "ProtocolViolation"
    if meaning == "answer":  # a final answer must not leave calls unanswered
        return "UnsupportedProviderState" if n_calls else "accepted"
    if meaning == "continuation":
        return "accepted"
    if meaning == "provider":
        return "ProviderError"
    if meaning == "protocol":
        return "ProtocolViolation"
    return "UnsupportedProviderState"
INT32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)

_names = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)
#: a call's name (the conformance kit may choose others: tool_names)
_call_names = tool_names(_names)
opaque_ids = st.text(
    alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=12
)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
arguments_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=4)


@dataclass
class StepModel:
    """One step of the model turn and how its events are rendered."""

    type: str
    index: int
    call_id: str = ""
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    fragments: list[str] = field(default_factory=list)
    initial_arguments: bool = True  # step.start carries "arguments": {} (or the full object)
    absent_argument_deltas: int = 0  # arguments_delta events without the "arguments" field
    text: str = ""
    revision: str = PINNED_REVISION

    def start_step(self) -> dict[str, Any]:
        if self.type == "function_call":
            step: dict[str, Any] = {"type": "function_call", "id": self.call_id, "name": self.name}
            if self.initial_arguments:
                step["arguments"] = {} if self.fragments else copy.deepcopy(self.arguments)
            return step
        if self.type == "thought":
            return {"type": "thought", "signature": "sig-" + self.call_id}
        if self.type in _ALL_LATER_HOSTED:
            return self._later_hosted_step()
        if self.type in HOSTED_STEP_TYPES and TYPED_HOSTED_STEPS[self.revision]:
            return self._typed_hosted_step()
        if self.type.endswith("_call"):
            return {"type": self.type, "id": "hosted-" + self.call_id}
        if self.type == "function_result":
            # ``result`` is required by the SDK type (a string, an object or content).
            return {"type": self.type, "call_id": "call-" + self.call_id, "result": self.text}
        if self.type.endswith("_result"):
            return {"type": self.type, "call_id": "hosted-" + self.call_id}
        return {"type": self.type}

    def deltas(self) -> list[dict[str, Any]]:
        if self.type == "function_call":
            out = [{"type": "arguments_delta", "arguments": f} for f in self.fragments]
            out.extend({"type": "arguments_delta"} for _ in range(self.absent_argument_deltas))
            return out
        if self.type in ("model_output", "user_input"):
            return [{"type": "text", "text": self.text}] if self.text else []
        if self.type == "thought":
            return [{"type": "thought_summary", "content": {"type": "text", "text": self.text}}]
        if self.type in _ALL_LATER_HOSTED:
            return [self._later_hosted_delta()]
        if self.type in HOSTED_STEP_TYPES and TYPED_HOSTED_STEPS[self.revision]:
            return [self._typed_hosted_delta()]
        if self.type in HOSTED_STEP_TYPES:
            return [{"type": self.type, "payload": self.text}]
        return []

    # The 2026-12-01 server-side steps, in the field sets google-genai 3.6.1 defines
    # (``google/genai/_gaos/types/interactions/<type>step.py`` and ``<type>delta.py``):
    # call steps carry ``id`` (``retrieval_call`` and ``tool_search_call`` also
    # ``arguments``), result steps ``call_id``; every step and delta may carry a
    # ``signature``; ``retrieval_call`` deltas require ``arguments`` ({queries}),
    # ``tool_search_call`` deltas may carry ``arguments`` ({function_names}),
    # ``retrieval_result`` deltas ``is_error``, ``tool_search_result`` ones ``result``.
    def _later_hosted_step(self) -> dict[str, Any]:
        if self.type.endswith("_call"):
            step: dict[str, Any] = {"type": self.type, "id": "hosted-" + self.call_id}
            if self.type == "retrieval_call":
                step["arguments"] = {"queries": [self.text]}
            elif self.type == "tool_search_call":
                step["arguments"] = {"function_names": [self.text]}
        else:
            step = {"type": self.type, "call_id": "hosted-" + self.call_id}
        if self.text:
            step["signature"] = "sig-" + self.call_id
        return step

    def _later_hosted_delta(self) -> dict[str, Any]:
        delta: dict[str, Any] = {"type": self.type}
        if self.type == "retrieval_call":
            delta["arguments"] = {"queries": [self.text]}
        elif self.type == "tool_search_call" and self.text:
            delta["arguments"] = {"function_names": [self.text]}
        elif self.type == "retrieval_result":
            delta["is_error"] = not self.text
        elif self.type == "tool_search_result" and self.text:
            delta["result"] = [{"type": "function", "name": "f_" + str(len(self.text))}]
        if len(self.text) % 2:
            delta["signature"] = "sig-" + self.text[:4]
        return delta

    # The pinned hosted steps in the field sets google-genai 3.6.1 defines
    # (``google/genai/_gaos/types/interactions/<type>step.py`` and ``<type>delta.py``):
    # call steps require ``id`` and (except ``file_search_call``, which has none, and
    # ``google_maps_call``, where it is optional) ``arguments``; result steps require
    # ``call_id`` and (except ``file_search_result``, which has none) ``result``; the
    # call deltas carry the same ``arguments`` (``google_maps_call``: optional,
    # ``file_search_call``: none), the result deltas a ``result`` (``code_execution``:
    # a string; the others a list; ``google_maps_result``: optional); ``is_error`` is
    # optional on code execution, URL context and search results; every step and
    # delta may carry a ``signature``.
    def _hosted_arguments(self) -> dict[str, Any] | None:
        if self.type == "code_execution_call":
            arguments: dict[str, Any] = {"code": self.text}
            if self.text:
                arguments["language"] = "python" if len(self.text) % 2 else "bash"
            return arguments
        if self.type == "url_context_call":
            return {"urls": ["https://example.com/" + self.text]}
        if self.type == "google_search_call":
            return {"queries": [self.text]}
        if self.type == "google_maps_call" and self.text:
            return {"queries": [self.text]}
        return None  # file_search_call (no arguments), google_maps_call (optional)

    def _hosted_result(self) -> Any:
        if self.type == "code_execution_result":
            return self.text
        if self.type == "url_context_result":
            return [{"url": "https://example.com/" + self.text,
                     "status": "success" if self.text else "error"}]
        if self.type == "google_search_result":
            return [{"search_suggestions": self.text}]
        if self.type == "file_search_result":
            return [{}] if self.text else []
        if self.type == "google_maps_result":
            return [{"widget_context_token": self.text}] if self.text else []
        return None

    def _typed_hosted_step(self) -> dict[str, Any]:
        if self.type.endswith("_call"):
            step: dict[str, Any] = {"type": self.type, "id": "hosted-" + self.call_id}
            arguments = self._hosted_arguments()
            if arguments is not None:
                step["arguments"] = arguments
            if self.type == "google_search_call" and self.text:
                step["search_type"] = "web_search"
        else:
            step = {"type": self.type, "call_id": "hosted-" + self.call_id}
            if self.type != "file_search_result":
                step["result"] = self._hosted_result()
            if self.type in _HOSTED_WITH_IS_ERROR and len(self.text) % 3 == 1:
                step["is_error"] = False
        if self.text:
            step["signature"] = "sig-" + self.call_id
        return step

    def _typed_hosted_delta(self) -> dict[str, Any]:
        delta: dict[str, Any] = {"type": self.type}
        if self.type.endswith("_call"):
            arguments = self._hosted_arguments()
            if arguments is not None:
                delta["arguments"] = arguments
        else:
            if self.type != "google_maps_result" or self.text:  # optional on maps only
                delta["result"] = self._hosted_result()
            if self.type in _HOSTED_WITH_IS_ERROR and len(self.text) % 3 == 2:
                delta["is_error"] = True
        if len(self.text) % 2:
            delta["signature"] = "sig-" + self.text[:4]
        return delta

    def snapshot_step(self) -> dict[str, Any]:
        """The complete step as a create/GET snapshot would hold it."""
        if self.type == "function_call":
            return {"type": "function_call", "id": self.call_id, "name": self.name,
                    "arguments": copy.deepcopy(self.arguments)}
        if self.type == "thought":
            return {"type": "thought", "signature": "sig-" + self.call_id,
                    "summary": [{"type": "text", "text": self.text}]}
        if self.type == "model_output":
            return {"type": "model_output", "content": [{"type": "text", "text": self.text}]}
        return self.start_step()


_HOSTED_WITH_IS_ERROR = frozenset({"code_execution_result", "url_context_result",
                                   "google_search_result"})


@dataclass
class TurnModel:
    """A model turn: what the parser must reconstruct from the rendered events."""

    interaction_id: str
    steps: list[StepModel]
    status: str
    usage: dict[str, int] | None
    with_event_ids: bool
    revision: str = PINNED_REVISION
    #: how realistic its rendering is (:mod:`.realism`): ``sdk`` renders one step at a
    #: time
    realism: str = "hostile"

    def function_calls(self) -> list[tuple[str, str, dict[str, Any]]]:
        return [(s.call_id, s.name, s.arguments) for s in self.steps if s.type == "function_call"]


@dataclass
class RenderedStream:
    """Events plus the expected observation: steps in step.start order."""

    model: TurnModel
    events: list[dict[str, Any]]
    start_order: list[StepModel]

    def expected_calls(self) -> list[tuple[str, str, dict[str, Any]]]:
        if self.model.status != "requires_action":
            return []
        return [(s.call_id, s.name, s.arguments) for s in self.start_order
                if s.type == "function_call"]


def _split(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=4))))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a] or [text]


@st.composite
def function_call_steps(draw: st.DrawFn, index: int, call_id: str,
                        realism: str = "hostile") -> StepModel:
    """A function_call step: arguments as deltas cut anywhere, or complete at step.start.
    At realism ``wire`` and ``sdk`` the step.start always carries ``arguments`` and
    every ``arguments_delta`` its ``arguments`` (google-genai 3.x requires both)."""
    arguments = draw(arguments_objects)
    style = draw(st.sampled_from(["deltas", "initial_only", "deltas_no_initial"]
                                 if realism == "hostile" else ["deltas", "initial_only"]))
    fragments: list[str] = []
    if style != "initial_only":
        fragments = _split(draw, json.dumps(arguments, ensure_ascii=draw(st.booleans())))
    return StepModel(
        type="function_call",
        index=index,
        call_id=call_id,
        name=draw(_call_names),
        arguments=arguments,
        fragments=fragments,
        initial_arguments=style != "deltas_no_initial",
        absent_argument_deltas=(draw(st.integers(0, 2)) if fragments and realism == "hostile"
                                else 0),
    )


@st.composite
def turn_models(draw: st.DrawFn, *, min_calls: int = 0, max_steps: int = 6,
                other_types: tuple[str, ...] | None = None,
                revision: str = PINNED_REVISION,
                allow_continuation: bool = True, realism: str = "hostile") -> TurnModel:
    """A turn with steps of ``revision``'s types; status follows from the calls (or, in
    a revision that has one and unless ``allow_continuation`` is false, is sometimes a
    continuation status: nothing released). ``realism`` (:mod:`.realism`): ``wire``
    gives every function_call's step.start and argument delta its ``arguments``;
    ``sdk`` also numbers the steps 0, 1, 2 ... in stream order and renders them one
    at a time."""
    check_level(realism)
    n_calls = draw(st.integers(min_calls, max(min_calls, 3)))
    kinds = other_types if other_types is not None else tuple(
        t for t in V1_STEP_TYPES if t != "function_call"
    ) + LATER_HOSTED_STEP_TYPES[revision]
    n_other = draw(st.integers(0, max(0, max_steps - n_calls))) if kinds else 0
    total = n_calls + n_other
    indexes = draw(st.lists(INT32, min_size=total, max_size=total, unique=True))
    ids = draw(st.lists(opaque_ids, min_size=total, max_size=total, unique=True))
    steps: list[StepModel] = []
    for i in range(n_calls):
        steps.append(draw(function_call_steps(indexes[i], ids[i], realism)))
    for i in range(n_calls, total):
        steps.append(StepModel(type=draw(st.sampled_from(kinds)), index=indexes[i],
                               call_id=ids[i], text=draw(st.text(max_size=10)),
                               revision=revision))
    steps = draw(st.permutations(steps))
    if realism == "sdk":
        for position, step in enumerate(steps):
            step.index = position
    usage = draw(st.none() | st.fixed_dictionaries({}, optional={
        "total_input_tokens": st.integers(0, 10**6),
        "total_output_tokens": st.integers(0, 10**6),
        "total_tokens": st.integers(0, 10**6),
    }))
    status = "requires_action" if n_calls else "completed"
    continuations = CONTINUATION_STATUSES[revision]
    if continuations and allow_continuation and draw(st.integers(0, 4)) == 0:
        status = draw(st.sampled_from(continuations))
    return TurnModel(
        interaction_id=draw(opaque_ids),
        steps=steps,
        status=status,
        usage=usage,
        with_event_ids=draw(st.booleans()),
        revision=revision,
        realism=realism,
    )


def _event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"event_type": kind, **fields}


@st.composite
def rendered_streams(draw: st.DrawFn, /, model: TurnModel | None = None,
                     **kw: Any) -> RenderedStream:
    """Render a turn model to a valid, randomly interleaved event list."""
    if model is None:
        model = draw(turn_models(**kw))
    queues: list[list[tuple[StepModel, dict[str, Any]]]] = []
    for s in model.steps:
        q = [(s, _event("step.start", index=s.index, step=s.start_step()))]
        q += [(s, _event("step.delta", index=s.index, delta=d)) for d in s.deltas()]
        q.append((s, _event("step.stop", index=s.index)))
        queues.append(q)
    body: list[dict[str, Any]] = []
    start_order: list[StepModel] = []
    while any(queues):
        live = [q for q in queues if q]
        q = live[0] if model.realism == "sdk" else draw(st.sampled_from(live))
        step, ev = q.pop(0)
        if ev["event_type"] == "step.start":
            start_order.append(step)
        body.append(ev)
    for _ in range(draw(st.integers(0, 2))):
        pos = draw(st.integers(0, len(body)))
        body.insert(pos, _event("interaction.status_update", interaction_id=model.interaction_id,
                                status=draw(st.sampled_from([
                                    *NON_TERMINAL_STATUSES[model.revision], "completed",
                                    "requires_action", "failed",
                                    *CONTINUATION_STATUSES[model.revision]]))))
    terminal: dict[str, Any] = {"id": model.interaction_id, "status": model.status}
    if model.usage is not None:
        terminal["usage"] = model.usage
    events = [
        _event("interaction.created", interaction={
            "id": model.interaction_id,
            "status": draw(st.sampled_from(NON_TERMINAL_STATUSES[model.revision]))}),
        *body,
        _event("interaction.completed", interaction=terminal),
    ]
    if model.with_event_ids:
        for n, ev in enumerate(events):
            ev["event_id"] = f"e{n}"
    return RenderedStream(model=model, events=events, start_order=start_order)


# ------------------------------------------------------------------ mutators

#: What each mutator means for any parser (the conformance kit's labels; a test
#: checks that every mutator below has one): ``(label, family)``. ``safety``: the
#: stream is not a complete, unambiguous turn (an identical replay is the exception
#: the contract allows: nothing, or exactly the model's calls). ``strictness``: this
#: project's fail-closed policy for shapes outside the pinned v1 union.
#: ``with_status`` appears twice: with the revision's failure statuses
#: (:func:`failure_statuses`: safety) and with statuses it does not know
#: (:func:`unknown_statuses`: strictness).
MUTATION_LABELS: dict[str, tuple[str, str]] = {
    "replayed_same": ("safety", "replay"),
    "replayed_conflict": ("safety", "replay"),
    "truncated": ("safety", "truncation"),
    "with_foreign_step": ("strictness", "unknown"),
    "with_foreign_delta": ("strictness", "unknown"),
    "with_status:failures": ("safety", "terminal"),
    "with_status:unknown": ("strictness", "unknown"),
    **call_mutation_labels(),
    "non_tool_terminal": ("safety", "terminal"),
    "error_event": ("safety", "terminal"),
    "event_after_terminal": ("safety", "terminal"),
    "dropped_stop": ("safety", "overlap"),
    "reused_index": ("safety", "reused_index"),
    "swap": ("safety", "reorder"),
    "result_claims_call_id": ("safety", "id_confusion"),
    # A later event names another interaction: a spliced stream (its calls unchanged).
    "conflicting_response_id": ("strictness", "drift"),
}


@st.composite
def replayed_same(draw: st.DrawFn, rendered: RenderedStream) -> list[dict[str, Any]]:
    """Redeliver an event with an event_id, identical payload, at a later position."""
    events = copy.deepcopy(rendered.events)
    pos = draw(st.integers(0, len(events) - 1))
    later = draw(st.integers(pos + 1, len(events)))
    events.insert(later, copy.deepcopy(events[pos]))
    return events


@st.composite
def replayed_conflict(draw: st.DrawFn, rendered: RenderedStream) -> list[dict[str, Any]]:
    """Deliver a second event with an existing event_id and a different payload."""
    events = copy.deepcopy(rendered.events)
    pos = draw(st.integers(0, len(events) - 1))
    later = draw(st.integers(pos + 1, len(events)))
    other = copy.deepcopy(events[pos])
    nested = [k for k, v in other.items() if isinstance(v, dict)]
    if len(nested) > 0 and draw(st.booleans()):
        # a change deep in the payload (step / delta / interaction object)
        other[draw(st.sampled_from(sorted(nested)))]["x_conflict"] = draw(st.integers())
    else:
        other["x_conflict"] = draw(st.integers())
    events.insert(later, other)
    return events


@st.composite
def truncated(draw: st.DrawFn, rendered: RenderedStream) -> list[dict[str, Any]]:
    """Cut the stream anywhere before the terminal."""
    return copy.deepcopy(rendered.events[: draw(st.integers(0, len(rendered.events) - 1))])


@st.composite
def with_foreign_step(draw: st.DrawFn, rendered: RenderedStream) -> list[dict[str, Any]]:
    """Insert a step.start of a type outside the stream's revision's union (unknown,
    v1beta-only, or added by a later revision)."""
    events = copy.deepcopy(rendered.events)
    kind = draw(st.sampled_from(foreign_step_types(rendered.model.revision)))
    used = {e.get("index") for e in events}
    index = draw(INT32.filter(lambda i: i not in used))
    step = {"type": kind, "id": "x", "name": "n", "arguments": {}, "server_name": "s"}
    events.insert(draw(st.integers(1, len(events) - 1)),
                  _event("step.start", index=index, step=step))
    return events


def foreign_delta_types(revision: str) -> tuple[str, ...]:
    """Delta types ``revision`` does not know: v1beta-only, unknown, and a later
    revision's (``retrieval_call`` / ``retrieval_result`` are v1beta-only at 2026-07-21
    and the deltas of 2026-12-01's retrieval steps)."""
    known = set(LATER_HOSTED_STEP_TYPES[revision])
    later = sorted(_ALL_LATER_HOSTED - known - set(V1BETA_ONLY_DELTA_TYPES))
    return tuple(k for k in (*V1BETA_ONLY_DELTA_TYPES, "arguments", "text_delta", "thought",
                             "ARGUMENTS_DELTA", *later) if k not in known)


@st.composite
def with_foreign_delta(draw: st.DrawFn, rendered: RenderedStream) -> list[dict[str, Any]]:
    """Insert, right after some step.start, a delta of a type the stream's revision does
    not know (:func:`foreign_delta_types`)."""
    events = copy.deepcopy(rendered.events)
    starts = [i for i, e in enumerate(events) if e["event_type"] == "step.start"]
    pos = draw(st.sampled_from(starts))
    kind = draw(st.sampled_from(foreign_delta_types(rendered.model.revision)))
    events.insert(pos + 1, _event("step.delta", index=events[pos]["index"],
                                  delta={"type": kind, "arguments": "{}"}))
    return events


@st.composite
def with_status(draw: st.DrawFn, rendered: RenderedStream, statuses: tuple[str, ...]) -> list[dict[str, Any]]:
    """Replace the terminal status."""
    events = copy.deepcopy(rendered.events)
    events[-1]["interaction"]["status"] = draw(st.sampled_from(statuses))
    return events


# --- mutators of one function call, of the terminal and of the step lifecycle ---------


def _fresh_id(events: list[dict[str, Any]], tag: str) -> dict[str, str]:
    """An ``event_id`` for an inserted event when the stream carries ids (else none)."""
    if not any("event_id" in e for e in events):
        return {}
    used = {e.get("event_id") for e in events}
    n = 0
    while f"{tag}{n}" in used:
        n += 1
    return {"event_id": f"{tag}{n}"}


def _start_of(events: list[dict[str, Any]], index: int) -> int:
    return next(i for i, e in enumerate(events)
                if e["event_type"] == "step.start" and e["index"] == index)


def _calls(rendered: RenderedStream) -> list[StepModel]:
    return [s for s in rendered.start_order if s.type == "function_call"]


@st.composite
def _call_identity(draw: st.DrawFn, rendered: RenderedStream, name: str,
                   ) -> list[dict[str, Any]]:
    """One function_call step's ``id`` / ``name`` missing, empty, or another call's."""
    events = copy.deepcopy(rendered.events)
    calls = draw(st.permutations(_calls(rendered)))
    step = events[_start_of(events, calls[0].index)]["step"]
    if name == "shared_call_id":
        step["id"] = calls[1].call_id
    elif name.startswith("missing_"):
        del step["id" if name == "missing_call_id" else "name"]
    else:
        step["id" if name == "empty_call_id" else "name"] = ""
    return events


@st.composite
def _call_arguments(draw: st.DrawFn, rendered: RenderedStream, name: str,
                    ) -> list[dict[str, Any]]:
    """One function_call step's arguments: none at all, a start object and deltas, or
    a hostile text streamed as ``arguments_delta`` fragments (start ``{}``)."""
    call = draw(st.sampled_from(_calls(rendered)))
    events = copy.deepcopy(rendered.events)
    kept = [e for e in events
            if not (e["event_type"] == "step.delta" and e["index"] == call.index
                    and e["delta"].get("arguments") is not None)]
    at = _start_of(kept, call.index)
    start = kept[at]["step"]
    if name == "missing_arguments":
        start.pop("arguments", None)
        return kept
    if name == "conflicting_arguments":
        start["arguments"] = {**call.arguments, "x_start": draw(st.integers(0, 9))}
        text = json.dumps(call.arguments)
    else:
        start["arguments"] = {}
        text = draw(bad_arguments(name.removesuffix("_arguments"), call.arguments)).text
    for n, piece in enumerate(_split(draw, text)):
        kept.insert(at + 1 + n, _event("step.delta", index=call.index,
                                       delta={"type": "arguments_delta", "arguments": piece},
                                       **_fresh_id(kept, "args-")))
    return kept


@st.composite
def _non_tool_terminal(draw: st.DrawFn, rendered: RenderedStream) -> list[dict[str, Any]]:
    """A terminal status that does not ask for the calls (a final answer, a
    continuation, ...), sometimes after a status update that says ``requires_action``
    (updates never override the terminal)."""
    events = copy.deepcopy(rendered.events)
    events[-1]["interaction"]["status"] = draw(st.sampled_from(
        non_tool_statuses(rendered.model.revision)))
    if draw(st.booleans()):
        events.insert(draw(st.integers(1, len(events) - 1)), _event(
            "interaction.status_update", interaction_id=rendered.model.interaction_id,
            status="requires_action", **_fresh_id(events, "upd-")))
    return events


#: Error objects as the API streams them (google-genai's ``Error``: a ``code`` URI and a
#: ``message``, both optional in the type; a message always, so a minimal example is
#: an error that says something).
_ERRORS = st.fixed_dictionaries(
    {"message": st.sampled_from(["Internal error encountered.", "The model is overloaded."])},
    optional={"code": st.sampled_from(["https://ai.google.dev/errors/internal",
                                       "https://ai.google.dev/errors/unavailable"])})


@st.composite
def _error_event(draw: st.DrawFn, rendered: RenderedStream) -> list[dict[str, Any]]:
    """An ``error`` event anywhere before the terminal."""
    events = copy.deepcopy(rendered.events)
    events.insert(draw(st.integers(0, len(events) - 1)),
                  _event("error", error=draw(_ERRORS), **_fresh_id(events, "err-")))
    return events


@st.composite
def _event_after_terminal(draw: st.DrawFn, rendered: RenderedStream) -> list[dict[str, Any]]:
    """A new event after ``interaction.completed`` (an identical redelivery of an
    ``event_id`` is the one thing that may follow it)."""
    events = copy.deepcopy(rendered.events)
    used = {e.get("index") for e in events}
    late = draw(st.sampled_from([
        _event("step.start", index=draw(INT32.filter(lambda i: i not in used)),
               step={"type": "model_output"}),
        _event("interaction.status_update", interaction_id=rendered.model.interaction_id,
               status="requires_action"),
        _event("interaction.completed", interaction={"id": rendered.model.interaction_id,
                                                     "status": "requires_action"}),
    ]))
    events.append({**late, **_fresh_id(events, "late-")})
    return events


@st.composite
def _dropped_stop(draw: st.DrawFn, rendered: RenderedStream) -> list[dict[str, Any]]:
    """One ``step.stop`` never arrives: the step is open at the terminal."""
    events = copy.deepcopy(rendered.events)
    stops = [i for i, e in enumerate(events) if e["event_type"] == "step.stop"]
    del events[draw(st.sampled_from(stops))]
    return events


@st.composite
def _reused_index(draw: st.DrawFn, rendered: RenderedStream) -> list[dict[str, Any]]:
    """After a step stops, another step starts under its index (a second function
    call, or another step): the index no longer names one step."""
    events = copy.deepcopy(rendered.events)
    stops = [i for i, e in enumerate(events) if e["event_type"] == "step.stop"]
    at = draw(st.sampled_from(stops))
    index = events[at]["index"]
    taken = {s.call_id for s in rendered.model.steps}
    step = draw(st.sampled_from([
        {"type": "function_call", "id": draw(opaque_ids.filter(lambda i: i not in taken)),
         "name": draw(_call_names), "arguments": {}},
        {"type": "model_output"},
    ]))
    later = draw(st.integers(at + 1, len(events) - 1))
    events.insert(later, _event("step.stop", index=index, **_fresh_id(events, "reuse-stop-")))
    events.insert(later, _event("step.start", index=index, step=step,
                                **_fresh_id(events, "reuse-start-")))
    return events


def _swap_detectable(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether swapping ``a`` (earlier) and ``b`` breaks the stream for certain: the
    interaction's first or last event moves, or one step's own events change order
    (never two argument fragments of one step: other text, undetectable)."""
    kinds = {a["event_type"], b["event_type"]}
    if kinds & {"interaction.created", "interaction.completed"}:
        return True
    if "interaction.status_update" in kinds or a.get("index") != b.get("index"):
        return False
    return kinds != {"step.delta"}


@st.composite
def _swap(draw: st.DrawFn, rendered: RenderedStream) -> list[dict[str, Any]]:
    """Two events change places where the order is part of the contract."""
    events = copy.deepcopy(rendered.events)
    pairs = [(i, j) for i in range(len(events)) for j in range(i + 1, len(events))
             if _swap_detectable(events[i], events[j])]
    i, j = draw(st.sampled_from(pairs))
    events[i], events[j] = events[j], events[i]
    return events


@st.composite
def _result_claims_call_id(draw: st.DrawFn, rendered: RenderedStream,
                           ) -> list[dict[str, Any]]:
    """A streamed ``function_result`` step answering one of the turn's own calls
    (already answered: never to be released), before or after the call."""
    events = copy.deepcopy(rendered.events)
    call = draw(st.sampled_from(_calls(rendered)))
    used = {e.get("index") for e in events}
    index = draw(INT32.filter(lambda i: i not in used))
    at = draw(st.integers(1, len(events) - 1))
    events.insert(at, _event("step.stop", index=index, **_fresh_id(events, "res-stop-")))
    events.insert(at, _event("step.start", index=index, step={
        "type": "function_result", "call_id": call.call_id, "result": "ok"},
        **_fresh_id(events, "res-start-")))
    return events


@st.composite
def _conflicting_response_id(draw: st.DrawFn, rendered: RenderedStream,
                             ) -> list[dict[str, Any]]:
    """The terminal (or an inserted status update) names another interaction."""
    events = copy.deepcopy(rendered.events)
    other = rendered.model.interaction_id + "-other"
    if draw(st.booleans()):
        events[-1]["interaction"]["id"] = other
    else:
        events.insert(draw(st.integers(1, len(events) - 1)), _event(
            "interaction.status_update", interaction_id=other, status="in_progress",
            **_fresh_id(events, "upd-")))
    return events


_CALL_NAMES = tuple(name for name, (_, family) in CALL_MUTATION_LABELS.items()
                    if family != "arguments")
_ARGUMENT_NAMES = tuple(name for name, (_, family) in CALL_MUTATION_LABELS.items()
                        if family == "arguments")


def _by_name(name: str, mutator: Any) -> Any:
    return lambda rendered: mutator(rendered, name)


#: Every mutator by its label name: ``rendered -> strategy of events``. The stream must
#: come from :func:`turn_models` with at least one call (two for ``shared_call_id``);
#: ``replayed_*`` need ``with_event_ids``.
MUTATORS: dict[str, Any] = {
    "replayed_same": replayed_same,
    "replayed_conflict": replayed_conflict,
    "truncated": truncated,
    "with_foreign_step": with_foreign_step,
    "with_foreign_delta": with_foreign_delta,
    "with_status:failures": lambda r: with_status(r, failure_statuses(r.model.revision)),
    "with_status:unknown": lambda r: with_status(r, unknown_statuses(r.model.revision)),
    **{name: _by_name(name, _call_identity) for name in _CALL_NAMES},
    **{name: _by_name(name, _call_arguments) for name in _ARGUMENT_NAMES},
    "non_tool_terminal": _non_tool_terminal,
    "error_event": _error_event,
    "event_after_terminal": _event_after_terminal,
    "dropped_stop": _dropped_stop,
    "reused_index": _reused_index,
    "swap": _swap,
    "result_claims_call_id": _result_claims_call_id,
    "conflicting_response_id": _conflicting_response_id,
}

#: What each mutator's stream does under the revision it was drawn for, written from
#: this model (the rules of docs/gemini_interactions.md): the error class names it may
#: raise; ``non_tool_terminal`` and the ``with_status`` ones follow
#: :func:`terminal_outcome`.
EXPECTED_ERRORS: dict[str, tuple[str, ...]] = {
    "truncated": ("StreamTruncated",),
    "replayed_conflict": ("ProtocolViolation",),
    "with_foreign_step": ("UnsupportedProviderState",),
    "with_foreign_delta": ("UnsupportedProviderState",),
    **{name: ("ProtocolViolation",) for name in _CALL_NAMES},
    "missing_arguments": ("ProtocolViolation",),
    "conflicting_arguments": ("ProtocolViolation",),
    "non_object_arguments": ("ProtocolViolation",),
    "non_finite_arguments": ("StrictJSONError",),
    "duplicate_key_arguments": ("StrictJSONError",),
    "non_strict_arguments": ("StrictJSONError", "LimitExceeded"),
    "invalid_json_arguments": ("StrictJSONError",),
    "error_event": ("ProviderError",),
    "event_after_terminal": ("ProtocolViolation",),
    "dropped_stop": ("ProtocolViolation",),
    "reused_index": ("ProtocolViolation",),
    # a step's stop moved before its last fragment parses an incomplete text first
    "swap": ("ProtocolViolation", "StrictJSONError"),
    "result_claims_call_id": ("ProtocolViolation",),
    "conflicting_response_id": ("ProtocolViolation",),
}


def interaction_object(rendered: RenderedStream, origin: str,
                       user_input: dict[str, Any]) -> dict[str, Any]:
    """The non-streamed Interaction a create response / GET would return for this turn."""
    steps = [s.snapshot_step() for s in rendered.start_order]
    if origin == "get":
        steps = [copy.deepcopy(user_input), *steps]
    return {"id": rendered.model.interaction_id, "status": rendered.model.status, "steps": steps}


EVENT_TYPE_NAMES = ("interaction.created", "step.start", "step.delta", "step.stop",
                    "interaction.status_update", "interaction.completed", "error")


@st.composite
def loose_events(draw: st.DrawFn, revision: str = PINNED_REVISION) -> dict[str, Any]:
    """Roughly event-shaped dicts of ``revision``'s names: right names, arbitrary field
    values (garbage in)."""
    ev: dict[str, Any] = {"event_type": draw(st.sampled_from(EVENT_TYPE_NAMES) | st.text(max_size=8))}
    small_int = st.integers(-3, 3) | INT32
    fields = {
        "index": small_int | json_values,
        "event_id": st.sampled_from(["a", "b", "c"]) | json_values,
        "step": st.fixed_dictionaries(
            {"type": st.sampled_from(step_types(revision) + V1BETA_ONLY_STEP_TYPES)
             | json_values},
            optional={"id": st.sampled_from(["x", "y"]) | json_values, "name": _names | json_values,
                      "arguments": arguments_objects | json_values}),
        "delta": st.fixed_dictionaries(
            {"type": st.sampled_from(("arguments_delta", "text", "thought_summary",
                                      *V1BETA_ONLY_DELTA_TYPES,
                                      *LATER_HOSTED_STEP_TYPES[revision])) | json_values},
            optional={"arguments": st.sampled_from(['{"a":', '1}', "{}", "", "]"]) | json_values}),
        "interaction": st.fixed_dictionaries(
            {"id": st.just("i") | json_values},
            optional={"status": st.sampled_from((*ALL_KNOWN_STATUSES, *UNKNOWN_STATUSES))
                      | json_values,
                      "usage": st.dictionaries(st.sampled_from(("total_tokens", "x")), json_values),
                      "steps": st.lists(json_values, max_size=2)}),
        "interaction_id": st.just("i") | json_values,
        "status": st.sampled_from((*NON_TERMINAL_STATUSES[revision], "requires_action",
                                   "paused", *CONTINUATION_STATUSES[revision])) | json_values,
    }
    for key in draw(st.lists(st.sampled_from(sorted(fields)), unique=True, max_size=4)):
        ev[key] = draw(fields[key])
    return ev
