"""The OpenAI Responses event-stream model, without hypothesis: what the fuzz target
and the strategies share.

An independent model of the protocol: this module never imports the parser's tables
or helpers. A :class:`TurnModel` (ordered output items: reasoning, assistant messages
and function calls with ``call_id``, name and an arguments dict) is rendered into a
valid typed-SSE-projection event list with a random but legal interleaving of item
sub-events and random sequence-number gaps. Mutators produce the attack classes
(reorder, duplicate/replay, truncate, drop, corrupt a fragment, identity swaps,
unknown fields, unknown item/event types, programmatic callers, failed terminals),
each with what the parser must do with it.

The renderers take a :class:`random.Random`, so the atheris target drives them without
importing hypothesis (its start-up stays small); :mod:`.openai_responses` wraps them in
hypothesis strategies and re-exports everything here.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# The protocol as this model understands it (written independently of the parser).
CREATED = "response.created"
IN_PROGRESS = "response.in_progress"
ITEM_ADDED = "response.output_item.added"
ITEM_DONE = "response.output_item.done"
ARGS_DELTA = "response.function_call_arguments.delta"
ARGS_DONE = "response.function_call_arguments.done"
COMPLETED = "response.completed"
FAILED = "response.failed"
INCOMPLETE = "response.incomplete"
ERROR = "error"
ITEM_KINDS = ("function_call", "message", "reasoning")
#: The contract revisions this model renders, the pinned one first, and how their
#: shapes differ (written down from the SDK types, not read from the parser's tables):
#: openai 2.46.0 puts ``name`` on arguments.done, openai 3.57.0 has no such field.
PINNED_REVISION = "2026-07-21"
REVISIONS = ("2026-07-21", "2026-12-01")
ARGS_DONE_HAS_NAME = {"2026-07-21": True, "2026-12-01": False}
# Item types of the pinned SDK union that this model never renders as valid output.
OTHER_ITEM_TYPES = ("custom_tool_call", "computer_call", "mcp_call", "program",
                    "web_search_call", "local_shell_call", "shell_call")
UNKNOWN_ITEM_TYPES = ("function_call_v2", "tool_call", "Function_call", "")
UNKNOWN_EVENT_TYPES = ("response.function_call.started", "response.tool_call.delta",
                       "response.cancelled", "response.output_item.updated")
DRIFT_FIELD_NAMES = ("response_id", "obfuscation", "x_drift_note", "agent")


@dataclass
class ItemModel:
    """One output item of the model turn."""

    kind: str
    item_id: str
    call_id: str = ""
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    fragments: list[str] = field(default_factory=list)
    text_fragments: list[str] = field(default_factory=list)
    direct_caller: bool = False

    @property
    def arguments_text(self) -> str:
        return "".join(self.fragments)

    @property
    def text(self) -> str:
        return "".join(self.text_fragments)

    def done_item(self) -> dict[str, Any]:
        """The item's final form (done event and terminal output)."""
        if self.kind == "function_call":
            item: dict[str, Any] = {
                "id": self.item_id, "type": "function_call", "status": "completed",
                "call_id": self.call_id, "name": self.name,
                "arguments": self.arguments_text,
            }
            if self.direct_caller:
                item["caller"] = {"type": "direct"}
            return item
        if self.kind == "message":
            return {"id": self.item_id, "type": "message", "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": self.text,
                                 "annotations": [], "logprobs": []}]}
        return {"id": self.item_id, "type": "reasoning", "status": "completed",
                "summary": [{"type": "summary_text", "text": self.text}],
                "encrypted_content": f"opaque-{self.item_id}"}

    def added_item(self) -> dict[str, Any]:
        """The item as announced by ``response.output_item.added``."""
        item = self.done_item()
        item["status"] = "in_progress"
        if self.kind == "function_call":
            item["arguments"] = ""
        elif self.kind == "message":
            item["content"] = []
        else:
            item["summary"] = []
            item.pop("encrypted_content")
        return item


@dataclass
class TurnModel:
    """A model Response: id and ordered output items."""

    response_id: str
    items: list[ItemModel]

    def expected_calls(self) -> list[tuple[str, str, dict[str, Any], str, int]]:
        """``(call_id, name, arguments, item_id, output_index)`` of every function call."""
        return [(item.call_id, item.name, item.arguments, item.item_id, index)
                for index, item in enumerate(self.items) if item.kind == "function_call"]

    def function_names(self) -> list[str]:
        return sorted({item.name for item in self.items if item.kind == "function_call"})


def response_object(model: TurnModel, status: str, output: list[Any]) -> dict[str, Any]:
    """A Response object snapshot for lifecycle events."""
    return {"id": model.response_id, "object": "response", "created_at": 1784592000,
            "status": status, "error": None, "incomplete_details": None,
            "model": "fixture-model", "output": output, "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": []}


def _item_events(item: ItemModel, index: int, revision: str = PINNED_REVISION,
                 ) -> list[dict[str, Any]]:
    """The item's own lifecycle at ``revision``, in order, without sequence numbers."""
    bind = {"item_id": item.item_id, "output_index": index}
    events: list[dict[str, Any]] = [
        {"type": ITEM_ADDED, "output_index": index, "item": item.added_item()}]
    if item.kind == "function_call":
        events += [{"type": ARGS_DELTA, **bind, "delta": f} for f in item.fragments]
        done: dict[str, Any] = {"type": ARGS_DONE, **bind, "arguments": item.arguments_text}
        if ARGS_DONE_HAS_NAME[revision]:
            done["name"] = item.name
        events.append(done)
    elif item.kind == "message":
        part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        events.append({"type": "response.content_part.added", **bind, "content_index": 0,
                       "part": part})
        events += [{"type": "response.output_text.delta", **bind, "content_index": 0,
                    "delta": f, "logprobs": []} for f in item.text_fragments]
        events.append({"type": "response.output_text.done", **bind, "content_index": 0,
                       "text": item.text, "logprobs": []})
        events.append({"type": "response.content_part.done", **bind, "content_index": 0,
                       "part": {**part, "text": item.text}})
    else:
        part = {"type": "summary_text", "text": ""}
        events.append({"type": "response.reasoning_summary_part.added", **bind,
                       "summary_index": 0, "part": part})
        events += [{"type": "response.reasoning_summary_text.delta", **bind,
                    "summary_index": 0, "delta": f} for f in item.text_fragments]
        events.append({"type": "response.reasoning_summary_text.done", **bind,
                       "summary_index": 0, "text": item.text})
        events.append({"type": "response.reasoning_summary_part.done", **bind,
                       "summary_index": 0, "part": {**part, "text": item.text}})
    events.append({"type": ITEM_DONE, "output_index": index, "item": item.done_item()})
    return events


def render(model: TurnModel, rng: random.Random, *, in_progress: bool = True,
           drift: bool = False, revision: str = PINNED_REVISION,
           sequential: bool = False) -> list[dict[str, Any]]:
    """Render ``model`` into a valid event list of the shapes of ``revision``.

    Item sub-events interleave at random; ``output_item.added`` events keep output
    order. Sequence numbers start anywhere and grow with random gaps. With ``drift``,
    unknown top-level fields are added to some events (they must be tolerated).
    With ``sequential`` (the conformance kit's ``sdk`` realism), the API's own order:
    one item at a time, each item's events done before the next item is added, and
    sequence numbers 0, 1, 2, ...
    """
    queues = [_item_events(item, index, revision) for index, item in enumerate(model.items)]
    positions = [0] * len(queues)
    added = 0
    body: list[dict[str, Any]] = []
    while True:
        ready = [i for i, queue in enumerate(queues)
                 if positions[i] < len(queue) and (positions[i] > 0 or i == added)]
        if not ready:
            break
        pick = ready[0] if sequential else rng.choice(ready)
        if positions[pick] == 0:
            added += 1
        body.append(queues[pick][positions[pick]])
        positions[pick] += 1
    events: list[dict[str, Any]] = [
        {"type": CREATED, "response": response_object(model, "in_progress", [])}]
    if in_progress:
        events.append({"type": IN_PROGRESS,
                       "response": response_object(model, "in_progress", [])})
    events += body
    events.append({"type": COMPLETED, "response": response_object(
        model, "completed", [item.done_item() for item in model.items])})
    seq = 0 if sequential else rng.randrange(0, 1000)
    for event in events:
        event["sequence_number"] = seq
        seq += 1 if sequential else rng.choice((1, 1, 1, 2, 3, 10, 997))
        if drift and rng.random() < 0.3:
            event[rng.choice(DRIFT_FIELD_NAMES)] = rng.choice(
                ("resp-drift", None, 7, {"note": "x"}, ["a"]))
    return copy.deepcopy(events)


def renumber(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reassign strictly increasing sequence numbers (1, 2, ...) in list order."""
    out = copy.deepcopy(events)
    for number, event in enumerate(out, start=1):
        if isinstance(event, dict):
            event["sequence_number"] = number
    return out


# ---------------------------------------------------------------------------
# Plain random model (for the fuzz target and benchmarks)


def _split(text: str, rng: random.Random, max_parts: int) -> list[str]:
    if not text:
        return []
    cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1,
                                                     rng.randrange(0, max_parts))))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def random_model(rng: random.Random, *, max_items: int = 5, max_parts: int = 6) -> TurnModel:
    """A random valid :class:`TurnModel` drawn from ``rng``."""
    count = rng.randrange(1, max_items + 1)
    items: list[ItemModel] = []
    for index in range(count):
        kind = rng.choice(ITEM_KINDS)
        item_id = f"item-{index}-{rng.randrange(10**6)}"
        if kind == "function_call":
            arguments = {f"k{j}": rng.choice([j, "v\u00e9\"", True, None, [1, 2], {"n": j}])
                         for j in range(rng.randrange(0, 4))}
            text = json.dumps(arguments, separators=rng.choice([(",", ":"), (", ", ": ")]))
            items.append(ItemModel(
                kind, item_id, call_id=f"call-{index}-{rng.randrange(10**6)}",
                name=rng.choice(["lookup_order", "get_weather", "f"]), arguments=arguments,
                fragments=_split(text, rng, max_parts), direct_caller=rng.random() < 0.3))
        else:
            text = rng.choice(["Checking.", "Look up both orders.", "ok"])
            items.append(ItemModel(kind, item_id, text_fragments=_split(text, rng, max_parts)))
    return TurnModel(response_id=f"response-{rng.randrange(10**9)}", items=items)


# ---------------------------------------------------------------------------
# Mutators: (events, rng) -> mutated events, or None when not applicable.
# Each has an expectation: "error" (must raise), "either" (raise, or the exact model
# calls), "ok" (must parse to the exact model calls).


def indexes(events: list[dict[str, Any]], *types: str) -> list[int]:
    return [i for i, e in enumerate(events) if isinstance(e, dict) and e.get("type") in types]


def dict_field(event: Any, name: str) -> dict[str, Any] | None:
    value = event.get(name) if isinstance(event, dict) else None
    return value if isinstance(value, dict) else None


def m_swap(events: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]] | None:
    """Swap two events wholesale (their sequence numbers travel with them)."""
    if len(events) < 2:
        return None
    i, j = sorted(rng.sample(range(len(events)), 2))
    out = copy.deepcopy(events)
    out[i], out[j] = out[j], out[i]
    return out


def m_swap_renumbered(events: list[dict[str, Any]], rng: random.Random,
                      ) -> list[dict[str, Any]] | None:
    """Swap two events, then renumber: an order change that keeps sequence numbers legal."""
    swapped = m_swap(events, rng)
    return None if swapped is None else renumber(swapped)


def m_replay(events: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]] | None:
    """Deliver an earlier event again, later, with its original sequence number."""
    if not events:
        return None
    i = rng.randrange(len(events))
    j = rng.randrange(i + 1, len(events) + 1)
    out = copy.deepcopy(events)
    out.insert(j, copy.deepcopy(events[i]))
    return out


def m_replay_renumbered(events: list[dict[str, Any]], rng: random.Random,
                        ) -> list[dict[str, Any]] | None:
    """Deliver an earlier event again, later, then renumber (a replay with a fresh number)."""
    replayed = m_replay(events, rng)
    return None if replayed is None else renumber(replayed)


def m_truncate(events: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]] | None:
    """Cut the stream anywhere before the terminal."""
    if not events:
        return None
    return copy.deepcopy(events[: rng.randrange(0, len(events))])


def m_drop(events: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]] | None:
    """Drop one event."""
    if not events:
        return None
    out = copy.deepcopy(events)
    del out[rng.randrange(len(out))]
    return out


def m_corrupt_fragment(events: list[dict[str, Any]], rng: random.Random,
                       ) -> list[dict[str, Any]] | None:
    """Change one argument fragment (append, drop or replace a character)."""
    candidates = [i for i in indexes(events, ARGS_DELTA)
                  if isinstance(events[i].get("delta"), str)]
    if not candidates:
        return None
    out = copy.deepcopy(events)
    event = out[rng.choice(candidates)]
    delta = event["delta"]
    choice = rng.randrange(3)
    if choice == 0 or len(delta) < 1:
        event["delta"] = delta + rng.choice(["}", " ", "x", "\""])
    elif choice == 1:
        event["delta"] = delta[:-1]
    else:
        position = rng.randrange(len(delta))
        replacement = "#" if delta[position] != "#" else "$"
        event["delta"] = delta[:position] + replacement + delta[position + 1:]
    return out


def m_retarget_delta(events: list[dict[str, Any]], rng: random.Random,
                     ) -> list[dict[str, Any]] | None:
    """Mis-associate one non-empty argument fragment: address it to another call by
    ``(output_index, item_id)``, by ``item_id`` alone or by ``output_index`` alone."""
    calls = {}
    for i in indexes(events, ITEM_ADDED):
        item = dict_field(events[i], "item")
        # (indexes overwritten by the fuzz target with other JSON values are skipped:
        # they are no address to retarget, and a dict is not hashable)
        if (item is not None and item.get("type") == "function_call"
                and isinstance(item.get("id"), str)
                and type(events[i].get("output_index")) is int):
            calls[events[i]["output_index"]] = item["id"]
    deltas = [i for i in indexes(events, ARGS_DELTA)
              if isinstance(events[i].get("delta"), str) and events[i]["delta"]
              and type(events[i].get("output_index")) is int
              and events[i]["output_index"] in calls]
    if len(calls) < 2 or not deltas:
        return None
    out = copy.deepcopy(events)
    delta = out[rng.choice(deltas)]
    other = rng.choice([index for index in calls if index != delta["output_index"]])
    mode = rng.randrange(3)
    if mode in (0, 2):
        delta["output_index"] = other
    if mode in (0, 1):
        delta["item_id"] = calls[other]
    return out


def m_identity_swap(events: list[dict[str, Any]], rng: random.Random,
                    ) -> list[dict[str, Any]] | None:
    """Put a call's item id where its call_id belongs, or the reverse."""
    calls = [item for i in indexes(events, ITEM_DONE)
             if (item := dict_field(events[i], "item")) is not None
             and item.get("type") == "function_call"
             and isinstance(item.get("id"), str) and isinstance(item.get("call_id"), str)
             and item["id"] != item["call_id"]]
    if not calls:
        return None
    call = rng.choice(calls)
    item_id, call_id = call["id"], call["call_id"]
    out = copy.deepcopy(events)
    where = rng.randrange(4)
    for event in out:
        kind = event.get("type") if isinstance(event, dict) else None
        item = dict_field(event, "item")
        response = dict_field(event, "response")
        if where == 0 and kind == ITEM_DONE and item and item.get("id") == item_id:
            item["call_id"] = item_id
        elif where == 1 and kind == COMPLETED and response and isinstance(
                response.get("output"), list):
            for raw in response["output"]:
                if isinstance(raw, dict) and raw.get("id") == item_id:
                    raw["call_id"] = item_id
        elif where == 2 and kind in (ARGS_DELTA, ARGS_DONE) and event.get("item_id") == item_id:
            event["item_id"] = call_id
            break
        elif where == 3 and kind == ITEM_DONE and item and item.get("id") == item_id:
            item["id"] = call_id
    return out


def m_unknown_fields(events: list[dict[str, Any]], rng: random.Random,
                     ) -> list[dict[str, Any]] | None:
    """Add unknown optional top-level fields (e.g. ``response_id``): must be tolerated."""
    out = copy.deepcopy(events)
    for event in out:
        if rng.random() < 0.5:
            event[rng.choice(DRIFT_FIELD_NAMES)] = rng.choice(["resp-x", 1, None, {"a": [1]}])
    return out


def m_unknown_item_type(events: list[dict[str, Any]], rng: random.Random,
                        ) -> list[dict[str, Any]] | None:
    """Give one added item a type the pinned contract does not execute or does not know."""
    candidates = [i for i in indexes(events, ITEM_ADDED) if dict_field(events[i], "item")]
    if not candidates:
        return None
    out = copy.deepcopy(events)
    out[rng.choice(candidates)]["item"]["type"] = rng.choice(OTHER_ITEM_TYPES
                                                             + UNKNOWN_ITEM_TYPES)
    return out


def m_unknown_event_type(events: list[dict[str, Any]], rng: random.Random,
                         ) -> list[dict[str, Any]] | None:
    """Insert an event of an unknown type (renumbered so only its type is wrong)."""
    out = copy.deepcopy(events)
    out.insert(rng.randrange(min(1, len(out)), len(out) + 1),
               {"type": rng.choice(UNKNOWN_EVENT_TYPES), "output_index": 0})
    return renumber(out)


def m_programmatic_caller(events: list[dict[str, Any]], rng: random.Random,
                          ) -> list[dict[str, Any]] | None:
    """Make one function call programmatic or namespaced (unimplemented semantics)."""
    candidates = [i for i in indexes(events, ITEM_ADDED)
                  if (dict_field(events[i], "item") or {}).get("type") == "function_call"]
    if not candidates:
        return None
    out = copy.deepcopy(events)
    item = out[rng.choice(candidates)]["item"]
    if rng.random() < 0.5:
        item["caller"] = {"type": "program", "caller_id": "program-1"}
    else:
        item["namespace"] = "ns"
    return out


def m_failed_terminal(events: list[dict[str, Any]], rng: random.Random,
                      ) -> list[dict[str, Any]] | None:
    """Replace the terminal with failed/incomplete, or insert an ``error`` event before
    the terminal (after a ``response.completed`` it would be a trailing event, a
    ``ProtocolViolation`` rather than a provider error)."""
    out = copy.deepcopy(events)
    choice = rng.randrange(3)
    if choice == 2:
        ends_in_terminal = bool(out) and isinstance(out[-1], dict) and (
            out[-1].get("type") == COMPLETED)
        out.insert(rng.randrange(0, len(out) + (0 if ends_in_terminal else 1)),
                   {"type": ERROR, "code": "server_error", "message": "boom", "param": None})
        return renumber(out)
    last = out[-1] if out else None
    response = dict_field(last, "response")
    if last is None or response is None or last.get("type") != COMPLETED:
        return None
    last["type"] = FAILED if choice == 0 else INCOMPLETE
    response["status"] = "failed" if choice == 0 else "incomplete"
    return out


@dataclass(frozen=True)
class Mutator:
    name: str
    apply: Callable[[list[dict[str, Any]], random.Random], list[dict[str, Any]] | None]
    expectation: str  # "error" | "either" | "ok"
    error_names: tuple[str, ...] = ()  # expected ContractError subclass names, if fixed


MUTATORS: tuple[Mutator, ...] = (
    Mutator("swap", m_swap, "error", ("ProtocolViolation",)),
    Mutator("swap_renumbered", m_swap_renumbered, "either"),
    Mutator("replay", m_replay, "error", ("ProtocolViolation",)),
    Mutator("replay_renumbered", m_replay_renumbered, "either"),
    Mutator("truncate", m_truncate, "error", ("StreamTruncated",)),
    Mutator("drop", m_drop, "either"),
    Mutator("corrupt_fragment", m_corrupt_fragment, "error", ("ProtocolViolation",)),
    Mutator("identity_swap", m_identity_swap, "error", ("ProtocolViolation",)),
    Mutator("retarget_delta", m_retarget_delta, "error", ("ProtocolViolation",)),
    Mutator("unknown_fields", m_unknown_fields, "ok"),
    Mutator("unknown_item_type", m_unknown_item_type, "error",
            ("UnsupportedProviderState",)),
    Mutator("unknown_event_type", m_unknown_event_type, "error",
            ("UnsupportedProviderState",)),
    Mutator("programmatic_caller", m_programmatic_caller, "error",
            ("UnsupportedProviderState",)),
    Mutator("failed_terminal", m_failed_terminal, "error", ("ProviderError",)),
)
MUTATORS_BY_NAME = {m.name: m for m in MUTATORS}

#: What each mutator means for any parser (the conformance kit's labels; a test
#: checks every mutator has one): ``(label, family)``. ``safety``: the stream is not
#: a complete, unambiguous turn, so releasing anything but nothing (or, where the
#: mutator's expectation is ``either``, exactly the model's calls) is a violation.
#: ``strictness``: this project's own policy (unknown shapes; ``unknown_fields`` is
#: the tolerance side of it: the exact calls are required).
MUTATION_LABELS: dict[str, tuple[str, str]] = {
    "swap": ("safety", "reorder"),
    "swap_renumbered": ("safety", "reorder"),
    "replay": ("safety", "replay"),
    "replay_renumbered": ("safety", "replay"),
    "truncate": ("safety", "truncation"),
    "drop": ("safety", "truncation"),
    "corrupt_fragment": ("safety", "arguments"),
    "identity_swap": ("safety", "id_confusion"),
    "retarget_delta": ("safety", "interleaved"),
    "unknown_fields": ("strictness", "drift"),
    "unknown_item_type": ("strictness", "unknown"),
    "unknown_event_type": ("strictness", "unknown"),
    "programmatic_caller": ("strictness", "unknown"),
    "failed_terminal": ("safety", "terminal"),
}


# ---------------------------------------------------------------------------
# Tools for continuations (native strict function shape)


def strict_tool(name: str, properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """A native strict Responses function tool for ``name``."""
    props = properties if properties is not None else {"order_ref": {"type": "string"}}
    return {"type": "function", "name": name, "description": f"tool {name}",
            "parameters": {"type": "object", "properties": props,
                           "required": sorted(props), "additionalProperties": False},
            "strict": True}


def unknown_fields(instance: Any, properties: Any) -> dict[str, Any]:
    """The members of ``instance`` that ``properties`` (a schema's) does not declare."""
    if not isinstance(instance, dict) or not isinstance(properties, dict):
        return {}
    return {key: value for key, value in instance.items() if key not in properties}
