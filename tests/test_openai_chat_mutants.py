"""Chat tests from surviving mutants."""

from __future__ import annotations

from typing import Any

import pytest
from test_openai_chat import chunk

from pcfuzz.contracts.errors import ProtocolViolation
from pcfuzz.contracts.openai_chat import (
    DONE,
    EmptyCompletion,
    parse_completion,
    parse_events,
)


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

