"""Responses tests from surviving mutants: each call's ``raw_item_is_output_item`` is
true for a parsed turn (its raw item is the output entry at its ``output_index``) and
false once the index no longer points at it (``0 <= i < len`` flipped made every parsed
call false); the snapshot's ``output_is_response_output`` likewise; a part row with
an unknown action is rejected by name; a failed terminal's error is named even when
``incomplete_details`` is null; a text delta to a part of another type is rejected; an
item done naming no added item, and a table row leading to an unknown state, are
rejected by name."""

from __future__ import annotations

import dataclasses

import pytest
from _openai_responses import COMPLETED, MESSAGE_ADDED, fixture_events

from pcfuzz.contracts.errors import ProtocolViolation, ProviderError
from pcfuzz.contracts.openai_responses import REVISION, REVISIONS, parse_events
from pcfuzz.contracts.openai_responses._tables import check_tables


def test_a_parsed_calls_raw_item_is_the_output_item_at_its_index() -> None:
    turn = parse_events(fixture_events())
    flags = [c["raw_item_is_output_item"] for c in turn.snapshot()["calls"]]
    assert flags and all(flags), flags
    call = turn.calls[0]
    for index in (-1, len(turn.output), call.output_index + 1):
        moved = dataclasses.replace(turn, calls=(dataclasses.replace(call, output_index=index),))
        assert moved.snapshot()["calls"][0]["raw_item_is_output_item"] is False, index


def test_the_snapshot_says_whether_the_output_is_the_responses_own_list() -> None:
    """From a surviving mutant: ``response.get("output") is self.output`` flipped."""
    turn = parse_events(fixture_events())
    assert turn.snapshot()["output_is_response_output"] is True
    copied = dataclasses.replace(turn, output=list(turn.output))
    assert copied.snapshot()["output_is_response_output"] is False


def test_a_part_row_with_an_unknown_action_is_rejected_by_name() -> None:
    """From a surviving mutant: with the action guard off, a later check still failed
    the tables, but not for the reason: the message must name the action."""
    tables = REVISIONS[REVISION]
    name = "response.refusal.delta"
    broken = dataclasses.replace(tables, part_events={
        **tables.part_events, name: dataclasses.replace(tables.part_events[name],
                                                        action="append")})
    with pytest.raises(RuntimeError, match="unknown action 'append'"):
        check_tables(broken, REVISION)


def test_a_failed_terminal_names_its_error_when_incomplete_details_is_null() -> None:
    """From a surviving mutant: ``error or incomplete_details`` as ``and`` reported the
    details of a failed response (a dict error, null incomplete_details) as None."""
    events = fixture_events()
    assert events[COMPLETED]["type"] == "response.completed"
    events[COMPLETED]["type"] = "response.failed"
    response = events[COMPLETED]["response"]
    response.update(status="failed", incomplete_details=None,
                    error={"code": "server_error", "message": "the model crashed"})
    with pytest.raises(ProviderError, match="details 'server_error'"):
        parse_events(events)


def test_a_text_delta_to_a_refusal_part_is_rejected_by_part_type() -> None:
    """From a surviving mutant: with the part-type guard off, output_text deltas were
    appended to a refusal part (content_index names a part of another type)."""
    events = fixture_events()
    added = events[MESSAGE_ADDED + 1]
    assert added["type"] == "response.content_part.added"
    added["part"] = {"type": "refusal", "refusal": ""}
    with pytest.raises(ProtocolViolation, match="applies to a 'output_text' part, part 0 is "
                                                "'refusal'"):
        parse_events(events)


@pytest.mark.parametrize("index", [-1, 99])
def test_an_item_done_naming_no_added_item_is_rejected_by_its_index(index: int) -> None:
    """From a surviving mutant (the nightly's sample): with the range guard off, -1
    finished the last added item and 99 escaped as an IndexError."""
    events = fixture_events()
    done = next(i for i, e in enumerate(events) if e.get("type") == "response.output_item.done")
    events[done]["output_index"] = index
    with pytest.raises(ProtocolViolation, match=f"output_index {index} names no added item"):
        parse_events(events)


def test_a_transition_to_an_unknown_state_is_rejected_by_name() -> None:
    """From a surviving mutant (the nightly's sample): with the guard off, a row leading
    to a state the table does not have passed the import-time cross-check."""
    tables = REVISIONS[REVISION]
    state, row = next((s, r) for s, r in tables.transitions.items() if r)
    name, nxt = next(iter(row.items()))
    broken = dataclasses.replace(tables, transitions={
        **tables.transitions, state: {**row, name: "nowhere"}})
    with pytest.raises(RuntimeError, match="leads to unknown state 'nowhere'"):
        check_tables(broken, REVISION)
