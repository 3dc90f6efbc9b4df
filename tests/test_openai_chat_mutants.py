"""Chat tests from surviving mutants."""

from __future__ import annotations

import pytest
from test_openai_chat import chunk

from pcfuzz.contracts.openai_chat import DONE, EmptyCompletion, parse_events


def test_the_only_whitespace_note_is_for_content_that_is_only_whitespace() -> None:
    """From a surviving mutant: ``type(content) is str and content`` turned into ``or``
    added "the content is only whitespace" to the message of an empty content too."""
    with pytest.raises(EmptyCompletion) as empty:
        parse_events([chunk({"role": "assistant", "content": ""}), chunk(finish="stop"), DONE])
    assert "only whitespace" not in str(empty.value), str(empty.value)
    with pytest.raises(EmptyCompletion, match="only whitespace and think blocks"):
        parse_events([chunk({"role": "assistant", "content": " \n "}), chunk(finish="stop"),
                      DONE])
