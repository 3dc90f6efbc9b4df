"""``pcfuzz drift``: the installed official SDKs' types against a pinned revision.

For each contract, the SDK types are introspected (discriminator literals of the
event, item, block, delta and step unions; the status, stop-reason and
finish-reason enums; required versus optional fields of the events and items the
parser reads) and compared with the tables of the revision (default: the newest
shipped, ``pcfuzz.contracts.<provider>.REVISIONS``). Each difference is a row:

* ``new``: the SDK knows a value the revision does not. The parser fails closed on
  an unknown value, so a current stream carrying it is rejected: *execution*.
* ``removed``: the revision knows a value the SDK no longer lists (information).
* ``now optional`` / ``not in SDK``: a field the revision requires is optional in,
  or absent from, the SDK type. A current stream may lack it and be rejected:
  *execution*.
* ``now required``: a field the revision treats as optional (or does not read) is
  required by the SDK (information).
* ``kept required``: a field the SDK type makes optional that the revision keeps
  required on purpose, failing closed (:data:`KEPT_REQUIRED` gives each reason;
  information). The decision is a row of ``fixtures/CHANGELOG.md``.

``--strict`` exits 1 when any row could change execution. Exit 2: an SDK of the
``oracles`` extra is missing. The SDKs are imported only here and in
``pcfuzz.strategies.sdk_oracles``; ``contracts/`` never imports them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from pcfuzz.contracts.registry import NAMES as CONTRACTS
from pcfuzz.errors import UsageError
from pcfuzz.registry import contract as contract_info

__all__ = ["CONTRACTS", "EXECUTION_CHANGES", "KEPT_REQUIRED", "RUNNERS", "Change", "render_table",
           "report"]

EXECUTION_CHANGES = frozenset({"new", "now optional", "not in SDK"})

_FUNCTION_CALL_ITEM_KEPT = (
    "ResponseFunctionToolCall is also the input item type, where it may be omitted; an "
    "output item in a stream always has it, and the parser needs it: ")
#: (contract, axis) -> field -> why the revision keeps a field the SDK type makes
#: optional required (fail closed). Reported as ``kept required`` (information).
KEPT_REQUIRED: dict[tuple[str, str], dict[str, str]] = {
    ("openai-responses", "fields of function_call items"): {
        "id": _FUNCTION_CALL_ITEM_KEPT + "its argument events name it by item_id",
        "status": _FUNCTION_CALL_ITEM_KEPT + "only status completed proves the call finished",
    },
}


@dataclass(frozen=True)
class Change:
    """One row of the report."""

    contract: str
    axis: str
    change: str
    value: str
    execution: bool


def _set_changes(contract: str, axis: str, pinned: Iterable[str], sdk: Iterable[str],
                 ignore: Iterable[str] = ()) -> list[Change]:
    pinned_set, sdk_set, skip = set(pinned), set(sdk), set(ignore)
    rows = [Change(contract, axis, "new", v, True) for v in sorted(sdk_set - pinned_set - skip)]
    rows += [Change(contract, axis, "removed", v, False)
             for v in sorted(pinned_set - sdk_set - skip)]
    return rows


def _field_changes(contract: str, axis: str, pinned_required: Iterable[str],
                   model: type, ignore: Iterable[str] = ()) -> list[Change]:
    fields = model.model_fields  # type: ignore[attr-defined]
    sdk_required = {name for name, info in fields.items() if info.is_required()}
    aliases = {info.alias or name for name, info in fields.items()}
    rows: list[Change] = []
    skip = set(ignore)
    kept = KEPT_REQUIRED.get((contract, axis), {})
    for name in sorted(set(pinned_required) - skip):
        if name not in fields and name not in aliases:
            rows.append(Change(contract, axis, "not in SDK", name, True))
        elif name not in sdk_required:
            if name in kept:
                rows.append(Change(contract, axis, "kept required", name, False))
            else:
                rows.append(Change(contract, axis, "now optional", name, True))
    for name in sorted(sdk_required - set(pinned_required) - skip):
        rows.append(Change(contract, axis, "now required", name, False))
    return rows


def _annotation(model: type, field: str) -> Any:
    return model.model_fields[field].annotation  # type: ignore[attr-defined]


# ------------------------------------------------------------------ per contract


def _responses(revision: str) -> list[Change]:
    from openai.types.responses import (
        Response,
        ResponseFunctionToolCall,
        ResponseOutputItem,
        ResponseStreamEvent,
    )

    from pcfuzz.contracts.openai_responses import REVISIONS
    from pcfuzz.strategies.sdk_oracles import literal_values, variants

    t = REVISIONS[revision]
    c = "openai-responses"
    events = variants(ResponseStreamEvent, "type")
    rows = _set_changes(c, "event types", [*t.events, *t.unmodeled_events], events)
    rows += _set_changes(c, "output item types", [*t.items, *t.unmodeled_items],
                         variants(ResponseOutputItem, "type"))
    rows += _set_changes(c, "response statuses", t.response_statuses,
                         literal_values(Response, "status"))
    rows += _set_changes(c, "function_call item statuses", t.item_statuses,
                         literal_values(ResponseFunctionToolCall, "status"))
    for name, spec in sorted(t.events.items()):
        if name in events:
            rows += _field_changes(c, f"fields of {name}", spec.required, events[name],
                                   ignore=("type", "sequence_number"))
    rows += _field_changes(c, "fields of function_call items",
                           t.items["function_call"].required, ResponseFunctionToolCall,
                           ignore=("type",))
    return rows


def _anthropic(revision: str) -> list[Change]:
    from anthropic.types import (
        RawContentBlockDeltaEvent,
        RawContentBlockStartEvent,
        RawMessageStreamEvent,
        ToolUseBlock,
    )
    from anthropic.types.stop_reason import StopReason

    from pcfuzz.contracts.anthropic_messages import REVISIONS
    from pcfuzz.strategies.sdk_oracles import variants

    t = REVISIONS[revision]
    c = "anthropic-messages"
    rows = _set_changes(c, "event types", t.event_types,
                        variants(RawMessageStreamEvent, "type"),
                        # transport level in the SDK: its SSE loop drops pings and
                        # raises on error events before the typed union is consulted
                        ignore=("ping", "error"))
    rows += _set_changes(c, "content block types", [*t.blocks, *t.unsupported_blocks],
                         variants(_annotation(RawContentBlockStartEvent, "content_block"),
                                   "type"))
    rows += _set_changes(c, "delta types", t.deltas,
                         variants(_annotation(RawContentBlockDeltaEvent, "delta"), "type"))
    rows += _set_changes(c, "stop reasons", t.stop_reasons, _literals(StopReason))
    rows += _field_changes(c, "fields of tool_use blocks", t.blocks["tool_use"].required,
                           ToolUseBlock, ignore=("type",))
    return rows


def _gemini(revision: str) -> list[Change]:
    from google.genai.interactions import (
        FunctionCallStep,
        Interaction,
        InteractionSSEEvent,
        Step,
        StepDelta,
    )

    from pcfuzz.contracts.gemini_interactions import REVISIONS
    from pcfuzz.strategies.sdk_oracles import literal_values, variants

    t = REVISIONS[revision]
    c = "gemini-interactions"
    rows = _set_changes(c, "event types", t.event_fields,
                        variants(InteractionSSEEvent, "event_type"))
    rows += _set_changes(c, "interaction statuses", t.statuses,
                         literal_values(Interaction, "status"))
    rows += _set_changes(c, "step types", [*t.step_types, *t.v1beta_only_step_types],
                         variants(Step, "type"))
    # A delta of a v1beta-only step cannot be reached: the step's step.start already
    # failed closed. Its delta type (named as the step) is no drift of its own.
    pinned_deltas = {d for row in t.delta_types.values() for d in row}
    pinned_deltas |= t.v1beta_only_step_types
    rows += _set_changes(c, "step delta types", pinned_deltas,
                         variants(_annotation(StepDelta, "delta"), "type"))
    rows += _field_changes(c, "fields of function_call step.start",
                           t.stream_step_fields["client_call"], FunctionCallStep,
                           ignore=("type",))
    return rows


def _chat(revision: str) -> list[Change]:
    from openai.types.chat.chat_completion_chunk import (
        Choice,
        ChoiceDelta,
        ChoiceDeltaToolCall,
        ChoiceDeltaToolCallFunction,
    )

    from pcfuzz.contracts.openai_chat import REVISIONS
    from pcfuzz.strategies.sdk_oracles import literal_values

    t = REVISIONS[revision]
    c = "openai-chat"
    rows = _set_changes(c, "finish reasons", t.finish_reasons,
                        literal_values(Choice, "finish_reason"))
    for level, model in (("delta", ChoiceDelta), ("tool_delta", ChoiceDeltaToolCall),
                         ("function_delta", ChoiceDeltaToolCallFunction)):
        # closed levels: an unknown key fails, so a new SDK field is execution drift
        rows += _set_changes(c, f"{level} fields", t.levels[level],
                             model.model_fields)
    rows += _set_changes(c, "tool types", t.tool_types,
                         literal_values(ChoiceDeltaToolCall, "type"))
    return rows


def _literals(alias: Any) -> tuple[str, ...]:
    from typing import get_args

    return tuple(v for v in get_args(alias) if isinstance(v, str))


RUNNERS = {
    "openai-responses": _responses,
    "anthropic-messages": _anthropic,
    "gemini-interactions": _gemini,
    "openai-chat": _chat,
}


def report(contracts: Iterable[str], revision: str | None = None) -> dict[str, Any]:
    """The drift report as a JSON-ready dict."""
    from pcfuzz.strategies import sdk_oracles

    out: dict[str, Any] = {"sdk": {}, "contracts": {}, "execution_drift": False}
    for contract in contracts:
        dist = sdk_oracles.CONTRACT_SDK[contract]
        reason = sdk_oracles.missing(dist)
        if reason is not None:
            raise UsageError(reason)
        out["sdk"][dist] = sdk_oracles.sdk_version(dist)
        rev = revision or _default_revision(contract)
        shipped = _module(contract).REVISIONS
        if rev not in shipped:
            raise UsageError(f"{contract} ships no revision {rev!r}; known: "
                             f"{', '.join(sorted(shipped))}")
        rows = RUNNERS[contract](rev)
        out["contracts"][contract] = {"revision": rev, "sdk": dist,
                                      "changes": [asdict(r) for r in rows]}
        out["execution_drift"] = out["execution_drift"] or any(r.execution for r in rows)
    return out


def _module(contract: str) -> Any:
    return contract_info(contract).module()


def _default_revision(contract: str) -> str:
    return str(_module(contract).REVISION)


def render_table(data: dict[str, Any]) -> str:
    lines = ["SDKs: " + ", ".join(f"{k} {v}" for k, v in data["sdk"].items())]
    for contract, entry in data["contracts"].items():
        rows = entry["changes"]
        lines.append("")
        lines.append(f"{contract} (revision {entry['revision']} vs {entry['sdk']} "
                     f"{data['sdk'][entry['sdk']]}): {len(rows)} change(s)")
        if not rows:
            continue
        width = max(len(r["axis"]) for r in rows)
        cwidth = max(len(r["change"]) for r in rows)
        for r in rows:
            flag = "EXECUTION" if r["execution"] else "info"
            lines.append(f"  {r['axis']:<{width}}  {r['change']:<{cwidth}}  "
                         f"{flag:<9}  {r['value']}")
    lines.append("")
    lines.append("drift that could change execution: "
                 + ("yes" if data["execution_drift"] else "no"))
    return "\n".join(lines)
