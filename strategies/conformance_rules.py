"""Every rule that makes a contract withhold or reject a call, and the kit scenario
that exercises it.

One row per rule and contract: the rule in words (what a finding shows), where it is
written (the seed or this project's docs), the mutation of the contract's
``MUTATION_LABELS`` (``strategies/<provider>.py``) whose scenarios exercise it, the
kit family that holds them, the label this project decided for it (``safety``: checked
by default; ``strictness``: only with ``--strict``; docs/conformance.md, "Rules"), and
what this project's own parser does with such a stream:

* ``rejected``: ``parse_events`` raises;
* ``withheld``: the turn parses and releases no call (recovery calls, or a terminal
  that does not ask for them);
* ``nothing``: either of the two, depending on the draw;
* ``nothing_or_calls``: nothing, or exactly the model's calls (the stream still names
  them unambiguously: an identical redelivery, a reorder the sequence numbers show).

The list was read from each contract's docs (``docs/<contract>.md``) and its
``_stream.py`` / ``_tables.py``; the scenarios' expectations still come from the turn
models and the labels, never from the parser. ``tests/test_conformance_rules.py``
fails when a row names a mutation the provider does not have, a safety row sits in a
family the kit does not run by default, a mutation is in no row, or this project's
parser does not do what the row says.

Not rows: rules about values the kit never gives an adapter (request-side checks,
continuation builders, caller argument types, limits), and what no contract can
detect (Chat has no sequence numbers: a replayed or reordered chunk is
indistinguishable from a new one, docs/openai_chat.md "Known limits"; the same holds
for a replayed or reordered content fragment in the other three, which the replay and
swap mutations leave out). Responses' ``unknown_fields`` is the tolerance side
(unknown optional fields must *not* change the calls): :data:`TOLERATED`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OUTCOMES", "Rule", "RULES", "TOLERATED", "rules_of"]

OUTCOMES: tuple[str, ...] = ("rejected", "withheld", "nothing", "nothing_or_calls")


@dataclass(frozen=True)
class Rule:
    """One rule of one contract and the scenario that exercises it."""

    contract: str
    rule: str
    mutation: str
    family: str
    label: str
    outcome: str
    reference: str


CHAT = "openai-chat"
RESP = "openai-responses"
ANTH = "anthropic-messages"
GEM = "gemini-interactions"

S001_2 = "seed 001, shared safety invariant 2 (arguments: a strict JSON object)"
S001_4 = "seed 001, shared safety invariant 4 (EOF, error, failed terminal, illegal sequence)"
S001_6 = "seed 001, shared safety invariant 6 (provider ids are opaque; one id, one call)"
S001_7 = "seed 001, shared safety invariant 7 (unknown shapes fail closed)"
S002_41 = "seed 002, 4.1 (SSE aggregation: final tool needs id, function type, name, arguments)"
S002_42 = "seed 002, 4.2 (success, truncation, error)"
S002_32 = "seed 002, 3.2 (one choice, index 0)"
CHAT_DOC = "docs/openai_chat.md"
RESP_DOC = "docs/openai_responses.md"
ANTH_DOC = "docs/anthropic_messages.md"
GEM_DOC = "docs/gemini_interactions.md"


def _r(contract: str, rule: str, mutation: str, family: str, label: str, outcome: str,
       reference: str) -> Rule:
    return Rule(contract, rule, mutation, family, label, outcome, reference)


RULES: tuple[Rule, ...] = (
    # ------------------------------------------------------------------ openai-chat
    _r(CHAT, "a tool call whose id never arrived is incomplete and never executed",
       "missing_call_id", "identity", "safety", "rejected", f"{S002_41}; {CHAT_DOC}, final tool"),
    _r(CHAT, "a tool call id must be a non-empty string (an empty one can never become valid)",
       "empty_call_id", "identity", "safety", "rejected", f"{S002_41}; {CHAT_DOC}, Decision 7"),
    _r(CHAT, "two tool calls of one turn may not share an id (one result per call)",
       "shared_call_id", "id_confusion", "safety", "rejected", f"{S002_41}; {S001_6}"),
    _r(CHAT, "a tool call id is an identity: a different id later for the same index fails "
       "(never concatenated)", "conflicting_tool_id", "id_confusion", "safety", "rejected",
       f"{S002_41}; {CHAT_DOC}, Decision 18"),
    _r(CHAT, "an index that repeats another call's id besides its own conflicts and duplicates",
       "duplicate_tool_id", "id_confusion", "safety", "rejected", S002_41),
    _r(CHAT, "a tool call without a name is incomplete and never executed",
       "missing_name", "identity", "safety", "rejected", S002_41),
    _r(CHAT, "a tool call whose name fragments join to an empty name is incomplete",
       "empty_name", "identity", "safety", "rejected", S002_41),
    _r(CHAT, "a tool call's type must be 'function' (a custom tool or a missing type fails)",
       "non_function_type", "drift", "strictness", "rejected",
       f"{S002_41}; {CHAT_DOC}, Decision 7"),
    _r(CHAT, "a tool call whose arguments never arrived (no string fragment) is incomplete",
       "missing_arguments", "arguments", "safety", "rejected", S002_41),
    _r(CHAT, "arguments must parse as a JSON object; otherwise no call of the turn runs "
       "(all of them become recovery calls)", "non_object_arguments", "arguments", "safety",
       "withheld", f"{S001_2}; {CHAT_DOC}, Terminal gate"),
    _r(CHAT, "arguments with NaN or Infinity are not strict JSON: no call of the turn runs",
       "non_finite_arguments", "arguments", "safety", "withheld", S001_2),
    _r(CHAT, "arguments with a duplicate key are not strict JSON: no call of the turn runs",
       "duplicate_key_arguments", "arguments", "safety", "withheld", S001_2),
    _r(CHAT, "arguments strict JSON refuses (an overflowing number, a lone surrogate escape, "
       "a BOM, a 1,001-digit number, 513 levels): no call of the turn runs",
       "non_strict_arguments", "arguments", "safety", "withheld",
       f"{S001_2}; docs/strict_json.md"),
    _r(CHAT, "arguments that are no JSON at all: no call of the turn runs",
       "invalid_json_arguments", "arguments", "safety", "withheld", S001_2),
    _r(CHAT, "only choice index 0 is read: calls under any other choice index fail",
       "choice_index", "choice", "safety", "rejected", f"{S002_32}; {CHAT_DOC}, Frames"),
    _r(CHAT, "more than one choice is a protocol failure, never silently cut to the first",
       "extra_choice", "drift", "strictness", "rejected", S002_32),
    _r(CHAT, "the choice index is the integer 0, not a boolean", "bool_choice_index", "drift",
       "strictness", "rejected", f"{CHAT_DOC}, Frames"),
    _r(CHAT, "calls are released only after [DONE]: EOF without it fails whatever arrived",
       "missing_done", "truncation", "safety", "rejected", S002_42),
    _r(CHAT, "a stream cut anywhere releases nothing", "truncated", "truncation", "safety",
       "rejected", f"{S002_42}; {S001_4}"),
    _r(CHAT, "calls are released only with finish_reason 'tool_calls' (stop, length, "
       "content_filter, function_call or none: nothing runs)", "non_tool_terminal", "terminal",
       "safety", "withheld", f"{CHAT_DOC}, Terminal gate"),
    _r(CHAT, "the first non-null finish_reason is fixed: a different later one fails",
       "conflicting_finish_reason", "terminal", "safety", "rejected", S002_41),
    _r(CHAT, "a top-level error object fails the stream at once, nothing salvaged",
       "error_frame", "terminal", "safety", "rejected", S002_42),
    _r(CHAT, "a top-level error key fails the stream even when its value is null, {} or a "
       "string", "degenerate_error_frame", "terminal", "strictness", "rejected", S002_42),
    _r(CHAT, "nothing may follow [DONE]", "frame_after_done", "terminal", "safety", "rejected",
       f"{CHAT_DOC}, Decision 16"),
    _r(CHAT, "the first non-null response id is fixed: a chunk of another completion fails",
       "conflicting_response_id", "drift", "strictness", "rejected", S002_41),
    _r(CHAT, "a delta role must be 'assistant'", "wrong_role", "drift", "strictness", "rejected",
       S002_41),
    _r(CHAT, "every frame is a chunk object or [DONE]", "non_object_frame", "drift",
       "strictness", "rejected", f"{CHAT_DOC}, Frames"),
    _r(CHAT, "an unknown delta field fails even when null (its merge rule is unknown)",
       "unknown_delta_field", "drift", "strictness", "rejected", f"{S002_41}; {S001_7}"),
    _r(CHAT, "an unknown tool-delta field fails", "unknown_tool_delta_field", "drift",
       "strictness", "rejected", S002_41),
    _r(CHAT, "a tool index is a non-negative integer, not a boolean", "bool_tool_index",
       "drift", "strictness", "rejected", S002_41),
    _r(CHAT, "a tool index beyond the int64 range fails", "tool_index_out_of_range", "drift",
       "strictness", "rejected", f"{CHAT_DOC}, Decision 19"),
    _r(CHAT, "every field has its JSON kind (a wrong type is a protocol violation)",
       "wrong_field_type", "drift", "strictness", "rejected", f"{CHAT_DOC}, Aggregation"),
    # ------------------------------------------------------------------ openai-responses
    _r(RESP, "a function call item needs a call_id (the result key)", "missing_call_id",
       "identity", "safety", "rejected", f"{RESP_DOC}, Output item types; {S001_6}"),
    _r(RESP, "a call_id must be a non-empty string", "empty_call_id", "identity", "safety",
       "rejected", f"{RESP_DOC}, Output item types"),
    _r(RESP, "two function calls may not share a call_id", "shared_call_id", "id_confusion",
       "safety", "rejected", S001_6),
    _r(RESP, "a function call item needs a name", "missing_name", "identity", "safety",
       "rejected", f"{RESP_DOC}, Output item types"),
    _r(RESP, "a function call name must be a non-empty string", "empty_name", "identity",
       "safety", "rejected", f"{RESP_DOC}, Output item types"),
    _r(RESP, "results bind by call_id, never the item id: an id swapped or changed between "
       "the added item, the done item and the terminal fails", "identity_swap",
       "id_confusion", "safety", "rejected", f"seed 001, OpenAI Responses; {RESP_DOC}"),
    _r(RESP, "argument fragments bind by (output_index, item_id): a fragment addressed to "
       "another call fails", "retarget_delta", "interleaved", "safety", "rejected",
       f"{RESP_DOC}, Rules"),
    _r(RESP, "a function call item carries its arguments string", "missing_arguments",
       "arguments", "safety", "rejected", f"{RESP_DOC}, Output item types"),
    _r(RESP, "the arguments text starts with the added item's arguments: a full object at "
       "added plus deltas contradicts arguments.done", "conflicting_arguments", "arguments",
       "safety", "rejected", f"{RESP_DOC}, Decision 6"),
    _r(RESP, "the deltas must join to arguments.done, the done item and the terminal output",
       "corrupt_fragment", "arguments", "safety", "rejected",
       "seed 001, OpenAI Responses (delta, done and terminal must agree)"),
    _r(RESP, "arguments must parse as a JSON object", "non_object_arguments", "arguments",
       "safety", "rejected", S001_2),
    _r(RESP, "arguments with NaN or Infinity are not strict JSON", "non_finite_arguments",
       "arguments", "safety", "rejected", S001_2),
    _r(RESP, "arguments with a duplicate key are not strict JSON", "duplicate_key_arguments",
       "arguments", "safety", "rejected", S001_2),
    _r(RESP, "arguments strict JSON refuses (overflow, lone surrogate, BOM, too long a "
       "number, too deep)", "non_strict_arguments", "arguments", "safety", "rejected",
       f"{S001_2}; docs/strict_json.md"),
    _r(RESP, "no call before response.completed: a stream cut anywhere releases nothing",
       "truncate", "truncation", "safety", "rejected", S001_4),
    _r(RESP, "every added item is done and listed in the terminal output (a lost event)",
       "drop", "truncation", "safety", "nothing_or_calls",
       "seed 001, OpenAI Responses (Item lifecycle)"),
    _r(RESP, "response.failed, response.incomplete and error release nothing",
       "failed_terminal", "terminal", "safety", "rejected", S001_4),
    _r(RESP, "a response.completed must say completed, with a null error and null "
       "incomplete_details", "non_tool_terminal", "terminal", "safety", "rejected",
       f"{RESP_DOC}, Decision 10, Response statuses"),
    _r(RESP, "nothing may follow response.completed", "event_after_terminal", "terminal",
       "safety", "rejected", f"{RESP_DOC}, Stream states"),
    _r(RESP, "sequence_number strictly increases: an event moved with its number fails",
       "swap", "reorder", "safety", "rejected", f"{RESP_DOC}, Rules"),
    _r(RESP, "events follow the stream and item lifecycle tables: a reorder with legal "
       "numbers fails unless the order is legal", "swap_renumbered", "reorder", "safety",
       "nothing_or_calls", f"{RESP_DOC}, Item lifecycle"),
    _r(RESP, "a repeated sequence_number (a replayed event) fails", "replay", "replay",
       "safety", "rejected", f"{RESP_DOC}, Rules"),
    _r(RESP, "an event delivered again with a fresh number breaks the item lifecycle (added "
       "or done twice)", "replay_renumbered", "replay", "safety", "nothing_or_calls",
       f"{RESP_DOC}, Item lifecycle"),
    _r(RESP, "every Response snapshot carries the created response's id (a spliced stream)",
       "conflicting_response_id", "drift", "strictness", "rejected", f"{RESP_DOC}, Decision 1"),
    _r(RESP, "unknown and known-but-unmodeled item types fail closed", "unknown_item_type",
       "unknown", "strictness", "rejected", S001_7),
    _r(RESP, "unknown and known-but-unmodeled event types fail closed", "unknown_event_type",
       "unknown", "strictness", "rejected", S001_7),
    _r(RESP, "programmatic callers and namespaces fail closed", "programmatic_caller",
       "unknown", "strictness", "rejected", f"{RESP_DOC}, Callers"),
    # ------------------------------------------------------------------ anthropic-messages
    _r(ANTH, "a tool_use block needs an id (the tool_use_id of its result)", "missing_call_id",
       "identity", "safety", "rejected", f"{ANTH_DOC}, Rules (required fields)"),
    _r(ANTH, "a tool_use id must be a non-empty string", "empty_call_id", "identity", "safety",
       "rejected", f"{ANTH_DOC}, Rules (required fields)"),
    _r(ANTH, "tool use ids are unique per message", "shared_call_id", "id_confusion", "safety",
       "rejected", f"{ANTH_DOC}, Rules (ids opaque, unique per message); {S001_6}"),
    _r(ANTH, "a tool_use block needs a name", "missing_name", "identity", "safety", "rejected",
       f"{ANTH_DOC}, Rules (required fields)"),
    _r(ANTH, "a tool_use name must be a non-empty string", "empty_name", "identity", "safety",
       "rejected", f"{ANTH_DOC}, Rules (required fields)"),
    _r(ANTH, "a server tool result may not name a client tool_use id",
       "server_result_claims_client_id", "id_confusion", "safety", "rejected",
       f"{ANTH_DOC}, Rules"),
    _r(ANTH, "a tool_use block starts with an input object", "missing_arguments", "arguments",
       "safety", "rejected", f"{ANTH_DOC}, Rules (required fields)"),
    _r(ANTH, "a non-empty start input and input_json_delta fragments contradict each other",
       "conflicting_arguments", "arguments", "safety", "rejected", f"{ANTH_DOC}, Rules"),
    _r(ANTH, "the input must be a JSON object (start input or streamed text)",
       "non_object_arguments", "arguments", "safety", "rejected", f"{ANTH_DOC}, Decisions"),
    _r(ANTH, "input with NaN or Infinity is not strict JSON", "non_finite_arguments",
       "arguments", "safety", "rejected", S001_2),
    _r(ANTH, "input with a duplicate key is not strict JSON", "duplicate_key_arguments",
       "arguments", "safety", "rejected", S001_2),
    _r(ANTH, "input strict JSON refuses (overflow, lone surrogate, BOM, too long a number, "
       "too deep)", "non_strict_arguments", "arguments", "safety", "rejected",
       f"{S001_2}; docs/strict_json.md"),
    _r(ANTH, "without eager input streaming, input that does not parse fails unless a "
       "truncation cut the last block", "invalid_json_without_eager", "arguments", "safety",
       "rejected", f"{ANTH_DOC}, Decisions (review)"),
    _r(ANTH, "incomplete input under eager streaming is a recovery call, never executed "
       "(a parser without eager streaming rejects it, or keeps a truncation's cut as a "
       "recovery call)", "eager_invalid_json", "arguments", "safety", "nothing",
       "seed 001, Anthropic Messages (eager input streaming)"),
    _r(ANTH, "a truncation (max_tokens, model_context_window_exceeded) sends the cut call "
       "and every sibling to recovery", "max_tokens_cuts_last_input", "terminal", "safety",
       "withheld", "seed 001, Anthropic Messages (truncated siblings)"),
    _r(ANTH, "executable only after message_stop: a stream cut anywhere releases nothing",
       "truncation", "truncation", "safety", "rejected", S001_4),
    _r(ANTH, "only stop_reason tool_use releases calls (every other or unknown reason: none)",
       "stop_reason_swap", "terminal", "safety", "withheld",
       "seed 001, Anthropic Messages (stop reasons)"),
    _r(ANTH, "the stop reason may repeat but never change", "stop_reason_changed", "terminal",
       "safety", "rejected", f"{ANTH_DOC}, Rules"),
    _r(ANTH, "an error event anywhere releases nothing", "error_event", "terminal", "safety",
       "rejected", f"{S001_4}; {ANTH_DOC}, Rules"),
    _r(ANTH, "nothing but ping and error may follow message_stop", "event_after_terminal",
       "terminal", "safety", "rejected", f"{ANTH_DOC}, Rules (event flow)"),
    _r(ANTH, "one open block at a time: a block starting while another is open fails",
       "block_overlap", "overlap", "safety", "rejected", f"{ANTH_DOC}, Rules (block index)"),
    _r(ANTH, "a block index is used once", "reused_index", "reused_index", "safety",
       "rejected", f"{ANTH_DOC}, Rules (block index)"),
    _r(ANTH, "a block index may not skip (a whole block never arrived)", "skipped_index",
       "lifecycle", "safety", "rejected", f"{ANTH_DOC}, Rules (block index)"),
    _r(ANTH, "every block is stopped before message_delta", "dropped_stop", "overlap",
       "safety", "rejected", f"{ANTH_DOC}, Rules (event flow)"),
    _r(ANTH, "message_start comes first, a delta needs its block started, message_stop "
       "needs a message_delta", "drop", "lifecycle", "safety", "rejected",
       f"{ANTH_DOC}, Rules (event flow)"),
    _r(ANTH, "replayed structural events (message_start, block start/stop, message_stop) "
       "fail", "replay", "replay", "safety", "rejected", f"{ANTH_DOC}, Rules"),
    _r(ANTH, "events follow the event-flow table: a reordered structural event fails",
       "swap", "reorder", "safety", "rejected", f"{ANTH_DOC}, Rules (event flow)"),
    _r(ANTH, "a delta is only for the open block", "delta_for_closed_block", "drift",
       "strictness", "rejected", f"{ANTH_DOC}, Rules"),
    _r(ANTH, "a delta type must fit its block", "delta_mismatch", "drift", "strictness",
       "rejected", f"{ANTH_DOC}, Rules"),
    _r(ANTH, "the SSE event name equals data.type; the envelope is closed", "envelope_drift",
       "drift", "strictness", "rejected", f"{ANTH_DOC}, Rules"),
    _r(ANTH, "the server-side-fallback beta block fails closed", "fallback_block", "unknown",
       "strictness", "rejected", "seed 001, Dynamic beta: server-side fallback"),
    _r(ANTH, "unknown block types fail closed", "unknown_block", "unknown", "strictness",
       "rejected", S001_7),
    _r(ANTH, "a client tool_use from a non-direct caller fails closed", "non_direct_caller",
       "unknown", "strictness", "rejected", f"{ANTH_DOC}, Rules"),
    _r(ANTH, "usage counters never go backwards", "usage_regression", "usage", "strictness",
       "rejected", f"{ANTH_DOC}, Rules"),
    _r(ANTH, "required usage counters are integers, not null", "null_required_usage", "usage",
       "strictness", "rejected", f"{ANTH_DOC}, Rules"),
    # ------------------------------------------------------------------ gemini-interactions
    _r(GEM, "a function_call step needs an id (its result's call_id)", "missing_call_id",
       "identity", "safety", "rejected", f"{GEM_DOC}, Rules; {S001_6}"),
    _r(GEM, "a function_call id must be a non-empty string", "empty_call_id", "identity",
       "safety", "rejected", f"{GEM_DOC}, Decision 32"),
    _r(GEM, "two function_call steps may not share an id", "shared_call_id", "id_confusion",
       "safety", "rejected", S001_6),
    _r(GEM, "a function_call step needs a name", "missing_name", "identity", "safety",
       "rejected", f"{GEM_DOC}, Decision 32"),
    _r(GEM, "a function_call name must be a non-empty string", "empty_name", "identity",
       "safety", "rejected", f"{GEM_DOC}, Decision 32"),
    _r(GEM, "a call answered by a streamed function_result is never released",
       "result_claims_call_id", "id_confusion", "safety", "rejected", f"{GEM_DOC}, Decision 23"),
    _r(GEM, "a function_call with neither a start arguments object nor deltas fails",
       "missing_arguments", "arguments", "safety", "rejected", f"{GEM_DOC}, Decision 5"),
    _r(GEM, "argument deltas after a non-empty start arguments object are ambiguous",
       "conflicting_arguments", "arguments", "safety", "rejected", f"{GEM_DOC}, Decision 5"),
    _r(GEM, "arguments must parse as a JSON object", "non_object_arguments", "arguments",
       "safety", "rejected", S001_2),
    _r(GEM, "arguments with NaN or Infinity are not strict JSON", "non_finite_arguments",
       "arguments", "safety", "rejected", S001_2),
    _r(GEM, "arguments with a duplicate key are not strict JSON", "duplicate_key_arguments",
       "arguments", "safety", "rejected", S001_2),
    _r(GEM, "arguments strict JSON refuses (overflow, lone surrogate, BOM, too long a number, "
       "too deep)", "non_strict_arguments", "arguments", "safety", "rejected",
       f"{S001_2}; docs/strict_json.md"),
    _r(GEM, "arguments that are no JSON fail at step.stop", "invalid_json_arguments",
       "arguments", "safety", "rejected", S001_2),
    _r(GEM, "a stream cut before interaction.completed releases nothing", "truncated",
       "truncation", "safety", "rejected", S001_4),
    _r(GEM, "failed, cancelled, incomplete (and, since 2026-12-01, budget_exceeded) "
       "terminals release nothing", "with_status:failures", "terminal", "safety", "rejected",
       f"{GEM_DOC}, Decision 3, Revisions"),
    _r(GEM, "only the terminal status requires_action releases calls; a status update "
       "never overrides it", "non_tool_terminal", "terminal", "safety", "nothing",
       "seed 001, Gemini Interactions (status_update; requires_action)"),
    _r(GEM, "an error event releases nothing", "error_event", "terminal", "safety",
       "rejected", S001_4),
    _r(GEM, "no new event after interaction.completed (only identical redeliveries)",
       "event_after_terminal", "terminal", "safety", "rejected", f"{GEM_DOC}, Decision 8"),
    _r(GEM, "every step is stopped before interaction.completed", "dropped_stop", "overlap",
       "safety", "rejected", f"{GEM_DOC}, Rules"),
    _r(GEM, "a step index is used once per stream", "reused_index", "reused_index", "safety",
       "rejected", f"{GEM_DOC}, Decision 4"),
    _r(GEM, "interaction.created first, interaction.completed last, each step's start, "
       "deltas and stop in order", "swap", "reorder", "safety", "rejected", f"{GEM_DOC}, Rules"),
    _r(GEM, "an identical replay under one event_id is idempotent", "replayed_same", "replay",
       "safety", "nothing_or_calls", "seed 001, Gemini Interactions (event_id)"),
    _r(GEM, "one event_id with another payload is a conflict", "replayed_conflict", "replay",
       "safety", "rejected", "seed 001, Gemini Interactions (event_id)"),
    _r(GEM, "every later event names the created interaction (a spliced stream)",
       "conflicting_response_id", "drift", "strictness", "rejected", f"{GEM_DOC}, Rules"),
    _r(GEM, "steps outside the revision's union (v1beta MCP, unknown, a later revision's) "
       "fail closed", "with_foreign_step", "unknown", "strictness", "rejected", S001_7),
    _r(GEM, "delta types outside the step's family fail", "with_foreign_delta", "unknown",
       "strictness", "rejected", f"{GEM_DOC}, Decision 6"),
    _r(GEM, "statuses the revision does not know fail closed", "with_status:unknown",
       "unknown", "strictness", "rejected", f"{S001_7}; {GEM_DOC}, Decision 2"),
)

#: Mutations that are no withholding rule: the tolerance side (the calls must stay
#: exactly the model's), with why.
TOLERATED: dict[tuple[str, str], str] = {
    (RESP, "unknown_fields"): "unknown optional fields are kept and change no call",
}


def rules_of(contract: str) -> tuple[Rule, ...]:
    """The rows of one contract, in table order."""
    return tuple(r for r in RULES if r.contract == contract)
