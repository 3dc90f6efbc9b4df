"""Responses turn snapshot from a surviving mutant: each call's
``raw_item_is_output_item`` is true for a parsed turn (its raw item is the output
entry at its ``output_index``) and false once the index no longer points at it
(``0 <= i < len`` flipped made every parsed call false)."""

from __future__ import annotations

import dataclasses

from test_openai_responses import fixture_events

from pcfuzz.contracts.openai_responses import parse_events


def test_a_parsed_calls_raw_item_is_the_output_item_at_its_index() -> None:
    turn = parse_events(fixture_events())
    flags = [c["raw_item_is_output_item"] for c in turn.snapshot()["calls"]]
    assert flags and all(flags), flags
    call = turn.calls[0]
    for index in (-1, len(turn.output), call.output_index + 1):
        moved = dataclasses.replace(turn, calls=(dataclasses.replace(call, output_index=index),))
        assert moved.snapshot()["calls"][0]["raw_item_is_output_item"] is False, index
