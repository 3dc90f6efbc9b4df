"""Findings that explain themselves (issue 22 items 2 and 3): the rule in words, the
event that makes the stream unsafe (as this project's parser sees it), a diff that
names the call and the field, a fix category, and one key per root cause (not per
mutation). The verdict stays the turn model's; these only explain it.
"""

from __future__ import annotations

import sys
import types
from typing import Any
from unittest import mock

import pytest

from pcfuzz.conform import explain as why
from pcfuzz.conform.report import Finding
from pcfuzz.conform.sandbox import Outcome
from pcfuzz.strategies.conformance import Scenario

# ----------------------------------------------------------------- streams by hand


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}


def tool(arguments: str, **more: Any) -> dict[str, Any]:
    return {"tool_calls": [{"index": 0, "function": {"arguments": arguments}, **more}]}


def chat_turn(arguments: str, late: str | None = None) -> list[Any]:
    """One call c1 (f); ``late``: an argument fragment after the finish_reason."""
    frames = [chunk({"role": "assistant"}),
              chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                     "function": {"name": "f", "arguments": arguments}}]}),
              chunk(finish="tool_calls")]
    if late is not None:
        frames.append(chunk(tool(late)))
    return [*frames, "[DONE]"]


def anthropic_turn(stop_reason: str) -> list[Any]:
    def envelope(name: str, **data: Any) -> dict[str, Any]:
        return {"event": name, "data": {"type": name, **data}}

    return [
        envelope("message_start", message={
            "id": "m1", "type": "message", "role": "assistant", "content": [], "model": "x",
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}),
        envelope("content_block_start", index=0,
                 content_block={"type": "tool_use", "id": "t1", "name": "f", "input": {}}),
        envelope("content_block_delta", index=0,
                 delta={"type": "input_json_delta", "partial_json": "{}"}),
        envelope("content_block_stop", index=0),
        envelope("message_delta", delta={"stop_reason": stop_reason, "stop_sequence": None},
                 usage={"output_tokens": 2}),
        envelope("message_stop"),
    ]


def returned(*calls: dict[str, Any]) -> Outcome:
    return Outcome("returned", calls=list(calls))


def call(call_id: str = "c1", name: str = "f", **arguments: Any) -> dict[str, Any]:
    return {"call_id": call_id, "name": name, "arguments": arguments}


def scenario(contract: str, events: list[Any], *, family: str = "valid", mutation: str = "none",
             label: str = "valid", calls: list[dict[str, Any]] | None = None,
             expect: str = "calls") -> Scenario:
    return Scenario(contract, family, mutation, label, events, calls or [], expect=expect,
                    strict_expect=expect)


# ----------------------------------------------------------------- the contract's view


def test_shape_takes_the_values_out() -> None:
    assert why.shape("id 'a1' conflicts with \"b\" for index 12 (at event 2.choices[0])") == \
        "id <v> conflicts with <v> for index <n>"


def test_the_view_names_the_event_this_projects_parser_rejects() -> None:
    frames = [*chat_turn("{}"), chunk({"content": "late"})]
    view = why.contract_view("openai-chat", frames)
    assert (view.outcome, view.index, view.error) == ("rejected", 4, "ProtocolViolation")
    assert "nothing may follow [DONE]" in view.message and "(at" not in view.message


def test_the_view_of_a_turn_that_withholds_its_calls_gives_the_reason() -> None:
    view = why.contract_view("openai-chat", chat_turn("[]"))
    assert view.outcome == "withheld"
    assert view.reasons == ["tool_calls[0].function.arguments is JSON <list>, not an object"]


# ----------------------------------------------------------------- valid turns: the diff


def test_a_valid_turn_with_a_fragment_after_finish_reason_says_which_field_and_why() -> None:
    # the issue's `{"": null}` against `{}`: the accumulator stopped reading at the
    # finish_reason, and the argument fragment came after it
    frames = chat_turn("", late='{"": null}')
    assert why.contract_view("openai-chat", frames).outcome == "released"  # a valid stream
    case = scenario("openai-chat", frames, family="interleaved", calls=[call(**{"": None})])
    got = returned(call())
    explained = why.explain(case, got, "a complete, valid turn ...", strict=False)
    assert explained.key == "calls:argument mismatch: key missing:late fragment"
    assert explained.rule.startswith("a complete, valid turn must release exactly its calls")
    assert explained.diff[0] == "call 'c1' (f): arguments differ at $: key '' missing " \
                                "(expected null)"
    assert "fragment(s) at event(s) 3 come after finish_reason (event 2)" in \
        " ".join(explained.diff)
    assert explained.fix.startswith("join every argument fragment")


@pytest.mark.parametrize(("got", "kind", "line"), [
    ([], "missing call", "call 'c1' (f) is missing from the output"),
    ([call(), call("c2")], "extra call", "call 'c2' (f) is not a call of the turn"),
    ([call("item_1", a=1)], "id mismatch", "call 'c1' (f) came back with call_id 'item_1'"),
    ([call(name="g", a=1)], "name mismatch", "call 'c1': name expected 'f', got 'g'"),
    ([call(a=True)], "argument mismatch: type int became bool",
     "call 'c1' (f): arguments differ at $.a: expected 1 (int), got true (bool)"),
    ([call(a=2)], "argument mismatch: int value", "$.a: expected 1, got 2"),
    ([call(a=1, b=2)], "argument mismatch: extra key", "extra key 'b' (got 2)"),
])
def test_the_diff_names_the_call_and_the_field(got: list[dict[str, Any]], kind: str,
                                                line: str) -> None:
    found, lines = why.diff_calls(got, [call(a=1)])
    assert found == kind
    assert any(line in x for x in lines), lines


# ----------------------------------------------------------------- unsafe streams


def test_non_object_arguments_are_named_as_such_not_as_calls_not_requested() -> None:
    # the issue: "[valid] calls_not_requested" for a stream whose finish_reason is
    # tool_calls; the real problem is the arguments "[]"
    case = scenario("openai-chat", chat_turn("[]"), mutation="calls_not_requested",
                    label="safety", calls=[call()], expect="nothing")
    explained = why.explain(case, returned(call()), "calls_not_requested: ...", strict=False)
    assert explained.rule.startswith("a call whose arguments are not one JSON object must not run")
    assert "tool_calls[0].function.arguments is JSON <list>, not an object" in explained.unsafe_at
    assert explained.key.startswith("released:withheld:arguments:")
    assert "release none of the turn's calls" in explained.fix


def test_one_cause_found_by_two_mutations_has_one_key() -> None:
    # the issue: calls_not_requested (valid family) and stop_reason_swap (terminal
    # family) for one end_turn bug
    keys = set()
    for stop_reason, mutation, family in [("end_turn", "calls_not_requested", "valid"),
                                          ("stop_sequence", "stop_reason_swap", "terminal"),
                                          ("max_tokens", "stop_reason_swap", "terminal")]:
        case = scenario("anthropic-messages", anthropic_turn(stop_reason), family=family,
                        mutation=mutation, label="safety", expect="nothing")
        explained = why.explain(case, returned(call("t1")), "...", strict=False)
        assert "the turn as a whole" in explained.unsafe_at
        keys.add(explained.key)
    assert keys == {"released:withheld:terminal"}


def test_every_error_event_is_one_cause_whatever_its_text() -> None:
    keys = set()
    for error in ({"message": "overloaded"}, {"message": "x", "type": "server_error"}):
        frames = [chunk({"role": "assistant"}), {"error": error, "choices": []}, "[DONE]"]
        case = scenario("openai-chat", frames, family="terminal", mutation="error_frame",
                        label="safety", expect="nothing")
        explained = why.explain(case, returned(call()), "...", strict=False)
        assert explained.unsafe_at.startswith("event 1, chunk: error frame: ")
        keys.add(explained.key)
    assert keys == {"released:ProviderError"}


def test_a_stream_after_its_terminal_names_the_event_and_the_fix() -> None:
    frames = [*chat_turn("{}"), chunk({"content": "late"})]
    case = scenario("openai-chat", frames, family="terminal", mutation="frame_after_done",
                    label="safety", expect="nothing")
    explained = why.explain(case, returned(call()), "...", strict=False)
    assert explained.rule.startswith("nothing may follow [DONE]")
    assert explained.unsafe_at.startswith("event 4, chunk: no tool fields: chunk frame not "
                                          "allowed in state 'done'")
    assert explained.fix == "stop at [DONE] and fail the turn if anything follows it"


def test_contained_outcomes_explain_themselves() -> None:
    case = scenario("openai-chat", chat_turn("{}"), calls=[call()])
    exited = Outcome("escaped", type="SystemExit", message="SystemExit(0)")
    assert why.explain(case, exited, "...", strict=False).key == "escaped:SystemExit"
    keys = {why.explain(case, Outcome("malformed", message=f"call 0: arguments must be a "
                                                            f"dict, got {kind}"),
                        "...", strict=False).key for kind in ("list", "NoneType")}
    assert keys == {"malformed:call <n>: arguments must be a dict, got <type>"}


def test_the_rule_comes_from_the_strategies_table_when_there_is_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    frames = [*chat_turn("{}"), chunk({"content": "late"})]
    case = scenario("openai-chat", frames, family="terminal", mutation="frame_after_done",
                    label="safety", expect="nothing")
    row = types.SimpleNamespace(contract="openai-chat", mutation="frame_after_done",
                                rule="no chunk may follow data: [DONE] (seed 002, 4.2)")
    table = types.ModuleType("pcfuzz.strategies.conformance_rules")
    table.RULES = (row,)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pcfuzz.strategies.conformance_rules", table)
    why._rule_table.cache_clear()
    try:
        assert why.explain(case, returned(call()), "...", strict=False).rule == row.rule
    finally:
        why._rule_table.cache_clear()


def test_the_finding_text_leads_with_the_rule() -> None:
    finding = Finding("openai-chat", "terminal", "frame_after_done", "safety", "invariant",
                      "no call released", "returned 1 call(s)", ["[DONE]"], None,
                      rule="nothing may follow [DONE]", unsafe_at="event 5, chunk: ...",
                      diff=["expected: none; got: one"], fix="stop at [DONE]",
                      output="adapter says hi\n", also={"[terminal] error_frame": 2})
    text = finding.text(1).splitlines()
    assert text[0] == "VIOLATION 1: nothing may follow [DONE]"
    assert text[1] == "  found by:  [terminal] frame_after_done (safety)"
    assert "  unsafe at: event 5, chunk: ..." in text
    assert "  fix:       stop at [DONE]" in text
    assert "    | adapter says hi" in text
    assert "  also found by: [terminal] error_frame (2 examples)" in text
    assert finding.headline() == "nothing may follow [DONE] [terminal/frame_after_done]"


def test_a_quote_inside_a_word_is_not_a_value() -> None:
    # an apostrophe in "item's" once made every message of this rule a cause of its
    # own: 492 findings for one bug of the Responses stream state
    assert why.shape("call_id differs from the added item's call_id '{B~xh#r'") == \
        why.shape("call_id differs from the added item's call_id \"'vo\"") == \
        "call_id differs from the added item's call_id <v>"


@pytest.mark.parametrize(("message", "kind"), [
    ("duplicate object key 'a'", "duplicate key"),
    ("NaN is not JSON", "non-finite number"),
    ("expected ',' or '}' in object", "incomplete or malformed JSON"),
])
def test_each_kind_of_strict_json_check_is_one_cause(message: str, kind: str) -> None:
    view = why.ContractView("rejected", 3, "StrictJSONError", message, site="x.py@1")
    case = scenario("openai-chat", chat_turn("{}"), family="arguments", mutation="m",
                    label="safety", expect="nothing")
    with mock.patch.object(why, "contract_view", return_value=view):
        explained = why.explain(case, returned(call()), "...", strict=False)
    assert explained.key == f"released:StrictJSONError:{kind}"


def test_one_parser_line_keeps_at_most_two_messages_apart() -> None:
    from pcfuzz.conform.search import Search

    search = Search(sandbox=None, contract="anthropic-messages")  # type: ignore[arg-type]
    keys = [search.canonical(f"released:ProtocolViolation:_stream.py@9:{kind} block <n>: id")
            for kind in ("web_fetch", "code_execution", "bash", "web_fetch", "web_search")]
    assert keys[0] != keys[1] and keys[3] == keys[0]
    assert keys[2] == keys[4] == "released:ProtocolViolation:_stream.py@9:*"
    assert search.canonical("released:StreamTruncated") == "released:StreamTruncated"
