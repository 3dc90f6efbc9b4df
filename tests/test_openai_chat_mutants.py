"""Chat tests from surviving mutants."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from _openai_chat import chunk

from pcfuzz.contracts.errors import ProtocolViolation
from pcfuzz.contracts.openai_chat import (
    DONE,
    REVISION,
    REVISIONS,
    ChatCompletionStream,
    EmptyCompletion,
    parse_completion,
    parse_events,
)
from pcfuzz.contracts.openai_chat import _stream as chat_stream


def test_the_only_whitespace_note_is_for_content_that_is_only_whitespace() -> None:
    """From a surviving mutant: ``type(content) is str and content`` turned into ``or``
    added "the content is only whitespace" to the message of an empty content too."""
    with pytest.raises(EmptyCompletion) as empty:
        parse_events([chunk({"role": "assistant", "content": ""}), chunk(finish="stop"), DONE])
    assert "only whitespace" not in str(empty.value), str(empty.value)
    with pytest.raises(EmptyCompletion, match="only whitespace and think blocks"):
        parse_events([chunk({"role": "assistant", "content": " \n "}), chunk(finish="stop"),
                      DONE])


@pytest.mark.parametrize("choice", [5, "x", None, [], [{"message": {}}], True])
def test_a_nonstreaming_choice_that_is_not_an_object_is_a_protocol_violation(choice: Any) -> None:
    """From a surviving mutant: the check that ``choices[0]`` is an object was turned
    off (``if False:``); the choice then reached the field reader, which fails with
    something that is not a ContractError (or, for a list, not at the choice)."""
    body = {"id": "chatcmpl-1", "object": "chat.completion", "choices": [choice]}
    with pytest.raises(ProtocolViolation, match="choice must be an object") as bad:
        parse_completion(body)
    assert bad.value.where == "body.choices[0]", bad.value.where


def _delta_chunk(delta: dict[str, Any]) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": delta}]}


def test_a_null_delta_field_takes_the_fast_path_exactly_where_the_table_allows_null() -> None:
    """From a surviving mutant: ``not spec[1]`` (null not allowed) turned into
    ``spec[1]`` sent every allowed null (``"content": null``, common in tool-call
    chunks) to the general path, and let a null the table forbids through the fast
    path, which then read it as an absent text instead of rejecting it."""
    stream = ChatCompletionStream()
    plan = stream._plan
    assert plan is not None
    stream.feed(_delta_chunk({"role": "assistant"}))
    stream._kinds = set()
    # content is nullable in the shipped tables: the fast path reads the null.
    assert stream._fast_chunk(plan, _delta_chunk({"content": None}), 1)
    # The same tables with content not nullable: the fast path must leave the chunk
    # to the general path, which rejects the null.
    tables = REVISIONS[REVISION]
    levels = dict(tables.levels)
    delta = dict(levels["delta"])
    content = delta["content"]
    assert content.nullable
    delta["content"] = dataclasses.replace(content, nullable=False)
    levels["delta"] = delta
    strict = dataclasses.replace(tables, levels=levels)
    strict_plan = chat_stream._plan_for(strict)
    assert strict_plan is not None and strict_plan.delta["content"][1] is False
    stream = ChatCompletionStream()
    stream.feed(_delta_chunk({"role": "assistant"}))
    before = stream.snapshot()
    stream._kinds = set()
    assert not stream._fast_chunk(strict_plan, _delta_chunk({"content": None}), 1)
    assert stream.snapshot() == before
