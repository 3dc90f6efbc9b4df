"""Why a finding is one: the rule in words, the event that makes the stream unsafe, a
diff of expected and got, a fix category, and the key that groups findings of one
root cause.

The verdict is never made here: it is the turn model's (:func:`pcfuzz.strategies.
conformance.check`). This module only *explains* a failing example, and for that it
asks this project's own parser what it makes of the stream, event by event: the
first event it rejects (with its rule, ``chunk frame not allowed in state 'done'``),
or, for a stream it accepts, the reasons it withholds the calls (``finish_reason is
'stop', not 'tool_calls'``). Findings are grouped by the invariant the adapter broke
and that explanation with its values taken out, not by the mutation that produced
the stream: one bug found by two mutations is one finding.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pcfuzz.conform.sandbox import Outcome
from pcfuzz.contracts.errors import ContractError
from pcfuzz.contracts.registry import entry

__all__ = ["ContractView", "Explanation", "contract_view", "describe_event", "diff_calls",
           "explain", "rule_text", "shape"]

#: The mutations of the valid families: their names say what the generator aimed at,
#: not what makes the stream unsafe; there the contract's own reason names the rule.
GENERIC_MUTATIONS = ("none", "calls_not_requested")

_AT = re.compile(r" \(at [^()]*(?:\([^()]*\)[^()]*)*\)$")
# a quoted value starts and ends next to no letter: "item's call_id 'x'" is one value
_QUOTED = re.compile(r"(?<![A-Za-z])'(?:[^'\\]|\\.)*'(?![A-Za-z])"
                     r"|(?<![A-Za-z])\"(?:[^\"\\]|\\.)*\"(?![A-Za-z])")
_GOT = re.compile(r"got \w+$")
_NUMBER = re.compile(r"(?<![A-Za-z_])-?\d+(?:\.\d+)?")


def shape(text: str) -> str:
    """``text`` with its values taken out (quoted strings, numbers, the trailing
    ``(at ...)``): what two findings of one root cause have in common."""
    text = _AT.sub("", text)
    text = _QUOTED.sub("<v>", text)
    return _NUMBER.sub("<n>", text)


def clean(message: str) -> str:
    """A contract error's message without its trailing ``(at ...)``."""
    return _AT.sub("", message)


# --------------------------------------------------------------------- the contract's view


@dataclass
class ContractView:
    """What this project's parser makes of a stream.

    ``outcome``: ``rejected`` (at event ``index``, or at the end when ``index`` is
    ``None``), ``withheld`` (parsed, no call released; ``reasons``), ``released``
    (``calls``) or ``unknown`` (the parser itself failed: reported, never trusted)."""

    outcome: str
    index: int | None = None
    error: str = ""
    message: str = ""
    where: str = ""
    reasons: list[str] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    status: str = ""
    #: the parser's line that rejected it (``_stream.py@512``): one rule each, mostly
    site: str = ""


def _site(exc: BaseException) -> str:
    """The innermost frame of the contracts package in ``exc``'s traceback."""
    import pcfuzz.contracts as contracts

    root = str(Path(contracts.__file__).resolve().parent)
    found = ""
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.startswith(root):
            found = f"{Path(name).name}@{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _stream(contract: str) -> Any:
    found = entry(contract)
    module = importlib.import_module(f"pcfuzz.contracts.{found.package}")
    return getattr(module, found.stream_class)()


def contract_view(contract: str, events: list[Any]) -> ContractView:
    """Feed ``events`` one at a time to a fresh stream of this project's parser."""
    try:
        stream = _stream(contract)
        for index, event in enumerate(events):
            try:
                stream.feed(event)
            except ContractError as exc:
                return ContractView("rejected", index, type(exc).__name__, clean(str(exc)),
                                    exc.where or "", site=_site(exc))
        try:
            turn = stream.close()
        except ContractError as exc:
            return ContractView("rejected", None, type(exc).__name__, clean(str(exc)),
                                exc.where or "", site=_site(exc))
    except Exception as exc:  # noqa: BLE001 - an explanation never breaks a report
        return ContractView("unknown", message=f"{type(exc).__name__}: {exc}"[:300])
    status = getattr(turn, entry(contract).status_field, None)
    calls = [{"call_id": c.call_id, "name": c.name, "arguments": dict(c.arguments)}
             for c in turn.calls]
    if calls:
        return ContractView("released", calls=calls, status=str(status))
    reasons = [clean(r.reason) for r in getattr(turn, "recovery_calls", ())]
    specific = [r for r in reasons if r and not r.startswith("another call")]
    return ContractView("withheld", reasons=specific or reasons, status=str(status))


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def describe_event(contract: str, events: list[Any], index: int) -> str:
    """One event in a few words (its type, the fields that matter for tool calls)."""
    if not 0 <= index < len(events):
        return "the end of the stream"
    event = events[index]
    if not isinstance(event, dict):
        return json.dumps(event)[:60]
    if contract == "openai-chat":
        parts = []
        for choice in event.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            delta = _dict(choice.get("delta"))
            for tool in delta.get("tool_calls") or []:
                if isinstance(tool, dict):
                    fn = _dict(tool.get("function"))
                    bits = [k for k in ("id",) if k in tool] + [f"function.{k}" for k in fn]
                    parts.append(f"tool-call fragment (index {tool.get('index')!r}: "
                                 f"{', '.join(bits) or 'no fields'})")
            if choice.get("finish_reason") is not None:
                parts.append(f"finish_reason {choice['finish_reason']!r}")
        if "error" in event:
            parts.append("error frame")
        return "chunk: " + ("; ".join(parts) if parts else "no tool fields")
    data = event.get("data") if contract == "anthropic-messages" else event
    if not isinstance(data, dict):
        return str(event.get("event", "event"))[:60]
    key = "type" if contract == "anthropic-messages" else (entry(contract).event_key or "type")
    name = str(data.get(key, "?"))
    extra = [f"{k} {data[k]!r}" for k in ("index", "output_index", "sequence_number")
             if k in data and not isinstance(data[k], (dict, list))]
    kind = _dict(data.get("delta")).get("type")
    if kind is not None:
        extra.append(f"delta {kind!r}")
    return name + (f" ({', '.join(extra)})" if extra else "")


# --------------------------------------------------------------------- diffs


def _first_difference(want: Any, got: Any, path: str = "$") -> tuple[str, str] | None:
    """``(category, text)`` of the first difference of two JSON values (breadth
    first), or ``None``; the category has no values in it (it groups findings)."""
    stack = [(want, got, path)]
    while stack:
        a, b, where = stack.pop(0)
        if type(a) is not type(b):
            return (f"type {type(a).__name__} became {type(b).__name__}",
                    f"{where}: expected {_show(a)} ({type(a).__name__}), "
                    f"got {_show(b)} ({type(b).__name__})")
        if isinstance(a, dict):
            for k in sorted(set(a) | set(b)):
                if k not in b:
                    return "key missing", f"{where}: key {k!r} missing (expected {_show(a[k])})"
                if k not in a:
                    return "extra key", f"{where}: extra key {k!r} (got {_show(b[k])})"
                stack.append((a[k], b[k], f"{where}.{k}"))
        elif isinstance(a, list):
            if len(a) != len(b):
                return "list length", f"{where}: expected {len(a)} items, got {len(b)}"
            stack.extend((x, y, f"{where}[{n}]") for n, (x, y) in enumerate(zip(a, b, strict=True)))
        elif a != b:
            return (f"{type(a).__name__} value", f"{where}: expected {_show(a)}, got {_show(b)}")
    return None


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)[:80]


def diff_calls(got: list[dict[str, Any]], want: list[dict[str, Any]]
               ) -> tuple[str, list[str]]:
    """``(kind, lines)``: ``kind`` is ``missing call``, ``extra call``, ``id
    mismatch``, ``name mismatch`` or ``argument mismatch: <category>`` (``same
    calls`` when none differs), ``lines`` one per difference, naming the call and the
    field."""
    by_id = {c["call_id"]: c for c in want}
    got_ids = {c["call_id"] for c in got}
    lines: list[str] = []
    kinds: list[str] = []
    unmatched_got = [c for c in got if c["call_id"] not in by_id]
    unmatched_want = [c for c in want if c["call_id"] not in got_ids]
    pairs = [(by_id[c["call_id"]], c) for c in got if c["call_id"] in by_id]
    # same name and arguments under another id: an id mismatch, not a missing call
    for w in list(unmatched_want):
        twin = next((g for g in unmatched_got if g["name"] == w["name"]
                     and _first_difference(w["arguments"], g["arguments"]) is None), None)
        if twin is not None:
            unmatched_want.remove(w)
            unmatched_got.remove(twin)
            kinds.append("id mismatch")
            lines.append(f"call {w['call_id']!r} ({w['name']}) came back with call_id "
                         f"{twin['call_id']!r}")
    for w in unmatched_want:
        kinds.append("missing call")
        lines.append(f"call {w['call_id']!r} ({w['name']}) is missing from the output")
    for g in unmatched_got:
        kinds.append("extra call")
        lines.append(f"call {g['call_id']!r} ({g['name']}) is not a call of the turn")
    seen: set[str] = set()
    for w, g in pairs:
        if w["call_id"] in seen:
            kinds.append("extra call")
            lines.append(f"call {w['call_id']!r} is released twice")
            continue
        seen.add(w["call_id"])
        if w["name"] != g["name"]:
            kinds.append("name mismatch")
            lines.append(f"call {w['call_id']!r}: name expected {w['name']!r}, "
                         f"got {g['name']!r}")
        difference = _first_difference(w["arguments"], g["arguments"])
        if difference is not None:
            kinds.append(f"argument mismatch: {difference[0]}")
            lines.append(f"call {w['call_id']!r} ({w['name']}): arguments differ at "
                         f"{difference[1]}")
    order = ("missing call", "extra call", "id mismatch", "name mismatch", "argument mismatch")
    kind = next((k for o in order for k in kinds if k.startswith(o)), "same calls")
    return kind, lines


def _chat_fragments(events: list[Any], call_id: str) -> tuple[list[int], int | None]:
    """Events carrying fragments of the Chat tool call ``call_id`` and the event
    with the first finish_reason."""
    index: Any = None
    finish: int | None = None
    frames: list[tuple[int, Any]] = []
    for n, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        for choice in event.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            if choice.get("finish_reason") is not None and finish is None:
                finish = n
            delta = _dict(choice.get("delta"))
            for tool in delta.get("tool_calls") or []:
                if isinstance(tool, dict):
                    frames.append((n, tool.get("index")))
                    if tool.get("id") == call_id and index is None:
                        index = tool.get("index")
    return [n for n, i in frames if i == index and index is not None], finish


def why_calls_differ(contract: str, events: list[Any], lines: list[str],
                     want: list[dict[str, Any]]) -> list[str]:
    """Where in the stream the differing calls come from (Chat: fragments after the
    finish_reason, which many accumulators stop reading at)."""
    notes = []
    for w in want:
        if not any(repr(w["call_id"]) in line for line in lines):
            continue
        if contract == "openai-chat":
            fragments, finish = _chat_fragments(events, w["call_id"])
            late = [n for n in fragments if finish is not None and n > finish]
            if fragments:
                notes.append(f"call {w['call_id']!r} arrives in {len(fragments)} fragment(s) "
                             f"at event(s) {', '.join(map(str, fragments))}")
            if late:
                notes.append(f"fragment(s) at event(s) {', '.join(map(str, late))} come after "
                             f"finish_reason (event {finish}): a valid stream may still send "
                             "tool-call fragments until [DONE]")
        else:
            mentions = [n for n, e in enumerate(events) if w["call_id"] in json.dumps(e)]
            if mentions:
                notes.append(f"call {w['call_id']!r} is named at event(s) "
                             f"{', '.join(map(str, mentions[:12]))}")
    return notes


# --------------------------------------------------------------------- rules and fixes

#: The event after which a stream of each contract is complete.
TERMINAL = {
    "openai-responses": "response.completed",
    "anthropic-messages": "message_stop",
    "gemini-interactions": "interaction.completed",
    "openai-chat": "[DONE]",
}
#: What the terminal says when the turn asks for its calls.
RELEASING = {
    "openai-responses": "the response's function calls completed",
    "anthropic-messages": "stop_reason 'tool_use'",
    "gemini-interactions": "status 'requires_action'",
    "openai-chat": "finish_reason 'tool_calls'",
}


@cache
def _rule_table() -> dict[tuple[str, str], str]:
    """``(contract, mutation) -> the rule in words``, from the strategies' rule table
    when this version has one (``pcfuzz.strategies.conformance_rules.RULES``: rows
    with ``contract``, ``mutation`` and ``rule``); empty otherwise."""
    try:
        module = importlib.import_module("pcfuzz.strategies.conformance_rules")
    except ImportError:
        return {}
    table: dict[tuple[str, str], str] = {}
    for row in getattr(module, "RULES", ()):
        contract, mutation, rule = (getattr(row, k, None) for k in ("contract", "mutation", "rule"))
        if isinstance(contract, str) and isinstance(mutation, str) and isinstance(rule, str):
            table.setdefault((contract, mutation), rule)
    return table


def rule_text(contract: str, mutation: str) -> str | None:
    """The rule a mutation exercises, in words, when the strategies name one."""
    if mutation in GENERIC_MUTATIONS:
        return None
    return _rule_table().get((contract, mutation))


def _withheld_category(reason: str) -> str:
    """``arguments`` (a call's arguments are not one JSON object) or ``terminal``
    (the terminal does not ask for the calls: another stop reason, a truncation)."""
    low = reason.lower()
    if "argument" in low or "not an object" in low or "json" in low:
        return "arguments"
    return "terminal"


def _view_rule(contract: str, view: ContractView) -> tuple[str, str]:
    """(rule, fix) from the contract's view of a stream no call may come out of."""
    terminal = TERMINAL.get(contract, "the terminal event")
    if view.outcome == "withheld":
        reason = view.reasons[0] if view.reasons else f"status {view.status}"
        category = _withheld_category(reason)
        if category == "arguments":
            return ("a call whose arguments are not one JSON object must not run, and a "
                    "turn never releases part of its calls",
                    "parse each call's joined arguments strictly; when one is not a JSON "
                    "object, release none of the turn's calls")
        if "truncat" in reason.lower():
            return ("a turn its provider cut short (a truncating stop reason) must release "
                    "no call", f"release calls only when the terminal says "
                    f"{RELEASING.get(contract, 'so')}, never after a truncation")
        return (f"a turn whose terminal does not ask for its calls (only "
                f"{RELEASING.get(contract, 'a tool-call terminal')} does) must release none",
                f"release calls only when the terminal says {RELEASING.get(contract, 'so')}")
    error = view.error
    message = view.message.lower()
    if error == "StreamTruncated":
        return (f"a stream that ends before {terminal} must release no call",
                f"gate on the terminal: release calls only once {terminal} has arrived")
    if error == "ProviderError":
        return ("a turn with an error event or a failed or incomplete terminal must release "
                "no call",
                "treat an error event, or a failed or incomplete terminal, as a failed turn: "
                "release nothing")
    if error == "StrictJSONError":
        return ("a call whose arguments are not one strict JSON object (no NaN or Infinity, "
                "no duplicate key, nothing after it) must not run",
                "parse arguments with a strict JSON reader and withhold the turn when one "
                "does not parse")
    if error == "LimitExceeded":
        return ("a stream past a size, depth or count limit must release no call",
                "bound what you accumulate and fail the turn past the bound")
    if error == "UnsupportedProviderState":
        return ("a stream in a state the parser does not implement must release no call",
                "fail closed on any state or shape you do not implement")
    if "done" in message and ("after" in message or "follow" in message):
        return (f"nothing may follow {terminal}: a stream with events after it must release "
                "no call", f"stop at {terminal} and fail the turn if anything follows it")
    if any(word in message for word in ("finish_reason", "stop_reason", "status")) and any(
            word in message for word in ("conflict", "changed", "differs", "first value")):
        return ("a turn whose terminal contradicts itself (a second, different finish "
                "reason, stop reason or status) must release no call",
                "keep the first terminal value; a different later one fails the turn")
    if re.search(r"\b(call_)?ids?\b", message):
        return ("one call, one id: a stream whose call ids conflict, change or repeat must "
                "release no call",
                "key each call by its position and its id together; a changed, shared or "
                "reused id fails the turn")
    return ("a stream the protocol does not allow must release no call",
            "reject the stream at the first event the protocol does not allow, instead of "
            "skipping or repairing it")


#: Rejections whose every instance is one missing gate (the terminal, the error check).
_ONE_CAUSE = ("StreamTruncated", "ProviderError")
#: What a strict JSON reader checks, one cause each (the words of the parser's message).
_JSON_CHECKS = (("duplicate", "duplicate key"), ("nan", "non-finite number"),
                ("infinity", "non-finite number"), ("surrogate", "encoding"),
                ("utf", "encoding"))


def _rejection_detail(view: ContractView) -> str:
    """What tells one rejection's cause from another's: nothing for a missing gate
    (every truncation, every provider error), the kind of check for strict JSON, else
    the parser's line and its message without values (a table-driven line serves
    several rules; :class:`pcfuzz.conform.search.Search` keeps at most a few shapes
    per line apart)."""
    if view.error in _ONE_CAUSE:
        return ""
    if view.error == "StrictJSONError":
        low = view.message.lower()
        return ":" + next((kind for word, kind in _JSON_CHECKS if word in low),
                          "incomplete or malformed JSON")
    return f":{view.site}:{shape(view.message)}"

_CONTAINED = {
    "escaped": ("an adapter says no by raising an Exception; it must not raise SystemExit, "
                "KeyboardInterrupt or another BaseException (that ends the process serving "
                "the turn)",
                "raise an Exception subclass (ValueError, your own error) to reject a stream"),
    "timeout": ("an adapter must return or raise for every stream, within the adapter "
                "timeout",
                "bound the adapter's work per stream (no loop that waits for more events)"),
    "died": ("an adapter must not end or crash the process that calls it",
             "never call os._exit/exit in a parser; reject the stream by raising"),
    "malformed": ("an adapter returns a list of {\"call_id\": str, \"name\": str, "
                  "\"arguments\": dict}, or raises",
                  "return plain dicts with exactly call_id, name and arguments (a JSON "
                  "object); raise to reject"),
}

_VALID_FIX = {
    "missing call": "keep every call of the turn: fragments are keyed by index or id and "
                    "calls may interleave",
    "extra call": "release only the turn's own calls, each once (no server-tool calls, no "
                  "duplicates from a redelivered event)",
    "id mismatch": "use the provider's call id field (call_id, id) as the call's id, not an "
                   "item id or an index",
    "name mismatch": "take the whole name: join name fragments in order, or read it from the "
                     "call's start event",
    "argument mismatch": "join every argument fragment of the call in stream order (until "
                         "the terminal) and parse the joined text once",
}


@dataclass
class Explanation:
    """Why one failing example fails (see the module docstring)."""

    key: str
    rule: str
    unsafe_at: str = ""
    diff: list[str] = field(default_factory=list)
    fix: str = ""
    contract: str = ""
    #: the finding's label when it is not the scenario's (a release before the
    #: terminal is safety in any scenario; the follow-up request's checks are named)
    label: str = ""
    #: what was expected, when the rule is not the scenario's expectation
    expected: str = ""


def _unsafe_at(contract: str, events: list[Any], view: ContractView) -> str:
    if view.outcome == "rejected":
        if view.index is None:
            return (f"the end of the stream, after event {len(events) - 1}: "
                    f"{view.message} (this project's parser: {view.error})")
        return (f"event {view.index}, {describe_event(contract, events, view.index)}: "
                f"{view.message} (this project's parser: {view.error})")
    if view.outcome == "withheld":
        reasons = "; ".join(view.reasons[:3]) or f"status {view.status}"
        return (f"the turn as a whole (it completes, at event {len(events) - 1}), but its "
                f"calls are not to run: {reasons}")
    return ""


def explain(scenario: Any, outcome: Outcome, problem: str, *, strict: bool) -> Explanation:
    """The explanation of one failing example (``problem``: the oracle's text)."""
    contract = scenario.contract
    expect = scenario.expectation(strict)
    if outcome.kind in _CONTAINED:
        rule, fix = _CONTAINED[outcome.kind]
        detail = outcome.type if outcome.kind != "malformed" else _GOT.sub(
            "got <type>", shape(outcome.message))
        unsafe = ""
        if outcome.kind == "malformed" and expect != "calls":
            unsafe = _unsafe_at(contract, scenario.events,
                                contract_view(contract, scenario.events))
        return Explanation(f"{outcome.kind}:{detail}", rule, unsafe, [], fix)
    if outcome.kind == "raised" and expect == "calls":
        return Explanation(
            f"rejected-valid:{outcome.type}:{outcome.site}",
            "a complete, valid turn must release exactly its calls; the adapter rejected one",
            "", [f"the adapter raised {outcome.type} at {outcome.where}"] if outcome.where
            else [],
            "accept every valid turn: this stream is one the API sends (see the minimal "
            "stream), so the exception above is the parser's bug")
    got = outcome.calls or []
    if expect == "calls":
        kind, lines = diff_calls(got, scenario.calls)
        notes = why_calls_differ(contract, scenario.events, lines, scenario.calls)
        late = any("after finish_reason" in n for n in notes)
        fix = _VALID_FIX.get(kind.split(":")[0], "release exactly the turn's calls")
        return Explanation(f"calls:{kind}{':late fragment' if late else ''}",
                           "a complete, valid turn must release exactly its calls (ids, "
                           "names, argument objects with their JSON types)",
                           "", lines + notes, fix)
    view = contract_view(contract, scenario.events)
    if scenario.label == "strictness":
        rule = (rule_text(contract, scenario.mutation)
                or f"this project's fail-closed policy rejects {scenario.mutation}")
        return Explanation(f"strict:{scenario.mutation}", rule,
                           _unsafe_at(contract, scenario.events, view), [],
                           "fail closed on what you do not know (unknown fields and types)")
    by_view, fix = _view_rule(contract, view)
    if view.outcome == "rejected":
        key = f"released:{view.error}{_rejection_detail(view)}"
    elif view.outcome == "withheld":
        reason = view.reasons[0] if view.reasons else f"status {view.status}"
        category = _withheld_category(reason)
        # which check of the arguments is missing matters (empty, not an object,
        # duplicate key, NaN); any terminal that does not ask for the calls is one cause
        key = f"released:withheld:{category}" + (f":{shape(reason)}" if category == "arguments"
                                                  else "")
    elif view.outcome == "released":
        key = "released:other calls"
        by_view = ("a stream that is not a complete valid turn may release nothing or "
                   "exactly the turn's calls")
        fix = "release exactly the calls the stream names, or nothing"
    else:
        key = f"released:{scenario.mutation}"
        by_view = problem
    rule = rule_text(contract, scenario.mutation) or by_view
    # "expected nothing, got these calls" is the finding's own expected/got lines; a
    # diff only where the stream still names calls the adapter got wrong
    diff = diff_calls(got, view.calls)[1] if view.outcome == "released" else []
    return Explanation(key, rule, _unsafe_at(contract, scenario.events, view), diff, fix)
